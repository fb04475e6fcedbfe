"""Checks of arXiv 2510.03784 (TO-*).

The body of the paper was not available to the digest, so the paper-level claims TO-T1, TO-T2 and
TO-C1 are checked through the digest's stand-ins (its [DER] templates and [X] surrogates): their
verdicts say ``surrogate: ...`` and name the stand-in. X1-X4 are the digest's own derivations and
are checked as stated. Every passing check declares mutants (a changed exponent or constant in a
catalogue formula, a head whose logit bound leaks, a truncation with swapped factors, a training
run that never updates its attention) that must flip it to ``refuted``.

Every formula, constant and regime is read from the catalogue inside the check call (memoised
helpers measure only what no claim changes), so a false copy of the claim (``verify --mutants``,
or a test's monkeypatched registry) is what the check compares with. The bound checks search the
worst case inside the claim's regime (TO-C1: position-only heads built to attain the logit bound;
TO-X3: every vertex pair of logit vectors; TO-X4: the extremal splits) and report the slack
(claimed bound / worst case found; for TO-X2's floor, worst case / floor); a regime condition
missing from the claim widens TO-X3's search. The trained checks state their decision rules
(:data:`R1_CRITERION`, :data:`P2_CRITERION`, :data:`E5_CRITERION`) and decide on intervals over
seeds or validation sequences, after the shared training-adequacy gate (proofs_check/_gate.py):
a run whose control configurations did not train is ``not-checkable`` with what was
reached and the known recipe, and every trained verdict carries a ``scale`` record (what was
run beside what the paper reports: here the paper's body was not available, so no magnitude is
held and the record says so).

The checks are split by what they are about, one sub-module per group, imported here in the
order the checks register (the report's order): :mod:`.derivations` (TO-T1, TO-X1, TO-X3, TO-X4),
:mod:`.heads` (TO-X2, TO-T2, TO-C1), :mod:`.logits` (TO-E5), :mod:`.trained` (TO-R1, TO-R2,
TO-R3, TO-P2); their small shared helpers are in :mod:`._common`, and TO-C1's reading of its
worst cases against the bounds in :mod:`._c1_bounds`. The trained checks TO-R1,
TO-R2, TO-R3 and TO-P2 declare their evidence and decide through the one trained-verdict
pipeline (:mod:`approxtheory.proofs_check._pipeline`), which reads their rows through
:mod:`approxtheory.proofs_check._rows` (a test substitutes rows by patching ``_rows.exp_rows``
and ``_rows.exp_trace``); the gate and scale helpers are the shared
:mod:`approxtheory.proofs_check._trained_verdicts`, imported from there (never through this
package). The other rows readers (``_trained`` of :mod:`.heads`, ``_train_heads`` of
:mod:`.logits`) are deliberately not re-exported: a test patches them in the sub-module whose
check calls them.
"""

from __future__ import annotations

from . import derivations, heads, logits, trained  # noqa: F401  (registers the checks, in order)
from .derivations import balance_rule, head_difference, logit_perturbation, weight_cap
from .heads import p1_best, retrieval_floor, saturation, svd_truncation
from .logits import _E5 as _E5  # read by tests (the E5 protocol)
from .logits import E5_CRITERION, E5_PAPER, E5_RECIPE, e5_criterion, logit_growth
from .logits import _forced_range as _forced_range  # read by tests (X2's floor inverted)
from .trained import (
    P2_CRITERION,
    R1_CRITERION,
    TO_PAPER,
    TO_RECIPE,
    budget_split,
    budget_split_verdict,
    cut_order,
    cut_order_verdict,
    fit_template_now,
    layer_allocation,
    layer_allocation_verdict,
    trained_saturation,
    trained_saturation_verdict,
)

__all__ = [
    "E5_CRITERION",
    "E5_PAPER",
    "E5_RECIPE",
    "P2_CRITERION",
    "R1_CRITERION",
    "TO_PAPER",
    "TO_RECIPE",
    "balance_rule",
    "budget_split",
    "budget_split_verdict",
    "cut_order",
    "cut_order_verdict",
    "e5_criterion",
    "fit_template_now",
    "head_difference",
    "layer_allocation",
    "layer_allocation_verdict",
    "logit_growth",
    "logit_perturbation",
    "p1_best",
    "retrieval_floor",
    "saturation",
    "svd_truncation",
    "trained_saturation",
    "trained_saturation_verdict",
    "weight_cap",
]
