"""Hypothesis strategies for tasks, architectures and construction knobs, in the style of
``hypothesis.extra.numpy``: every argument takes a value or a strategy.

Example::

    >>> from hypothesis import given, settings
    >>> from approxtheory import strategies as ats
    >>> @settings(max_examples=20)
    ... @given(ats.retrieval_inputs(T=8, margin=0.1))
    ... def test(X):
    ...     top2 = sorted(X[:, 0])[-2:]
    ...     assert top2[1] - top2[0] >= 0.1
    >>> test()

Retrieval strategies control the **logit margin** — the gap between the top score and the rest —
because a softmax head's error is governed by it: without control, rates are invisible.

The strategies draw *values* (the margin, the top value, the slack of every other entry, the top
position, the feature vectors), never a seed that numpy expands into an array, so a failing case
shrinks: the margin toward its lower bound, the other entries toward a near-tie with the top one,
the top position toward 0.

An impossible argument raises :class:`hypothesis.errors.InvalidArgument`, saying what was wrong
and what is allowed: at once where the argument is a plain value, when the value is drawn where
it is a strategy (hypothesis's own convention). So does a size beyond what a strategy draws, before
anything is generated: ``T``, ``d``, ``D``, ``heads``, ``head_dim``, ``kv_groups``, ``d_in``,
``width`` and every FFN width at most 4096, ``layers`` at most 256, at most 16 FFN widths, and at
most 2^20 entries in one drawn array (``T·d`` inputs, ``D·d`` features, ``D·d²`` matrices).

The package, by what is drawn: :mod:`~approxtheory.strategies.inputs` (retrieval inputs, max
tasks, β), :mod:`~approxtheory.strategies.architectures` (layer specs, architectures) and
:mod:`~approxtheory.strategies.knobs` (construction knobs), over the shared limits and
validators of :mod:`~approxtheory.strategies.common`; the public names are re-exported here.
"""

from __future__ import annotations

from .architectures import architectures, layer_specs
from .common import minimal
from .inputs import betas, margins, max_tasks, retrieval_inputs
from .knobs import construction_knobs

__all__ = [
    "retrieval_inputs",
    "margins",
    "max_tasks",
    "architectures",
    "layer_specs",
    "construction_knobs",
    "betas",
    "minimal",
]
