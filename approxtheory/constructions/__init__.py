"""Explicit weights that realise the papers' constructions, each citing the claim it realises and
stating the paper's error bound for it.

Example::

    >>> from approxtheory.constructions import build, names
    >>> c = build("hc_k1_synthetic", T=16, beta=200.0)
    >>> c.claim, c.params == build("hc_k1_synthetic", T=64, beta=200.0).params
    ('HC-K1', True)
    >>> r = c.measure(budget=512)
    >>> r["verdict"]
    'within-bound'

A construction is a pure function of its knobs returning a :class:`Construction` (model, task,
parameter count by the paper's convention, claimed bound); measuring is separate (``.measure``).
"""

from . import headcount, infoflow, tradeoffs  # noqa: F401  (registers the constructions)
from ._base import (
    REGISTRY,
    Construction,
    Knob,
    Registered,
    Requirement,
    build,
    names,
    tolerance,
    verdict,
)
from .headcount import build_hc_k1_model, build_softmax_retrieval_model
from .tradeoffs import build_lag_model

__all__ = [
    "Construction",
    "Knob",
    "Registered",
    "Requirement",
    "REGISTRY",
    "build",
    "names",
    "tolerance",
    "verdict",
    "describe",
    "build_hc_k1_model",
    "build_softmax_retrieval_model",
    "build_lag_model",
]


def describe(name: str) -> dict:
    """Claim, summary, knobs (type, default, help, choices or range) and the requirements between
    knobs of a construction."""
    entry = REGISTRY[name]
    return {
        "name": name,
        "claim": entry.claim,
        "summary": entry.summary,
        "knobs": {
            k: {
                "type": v.type.__name__,
                "default": v.default,
                "help": v.help,
                **({"choices": list(v.choices)} if v.choices else {}),
                **{f: getattr(v, f) for f in ("low", "high") if getattr(v, f) is not None},
                **{f: True for f in ("exclude_low", "exclude_high", "log") if getattr(v, f)},
            }
            for k, v in entry.knobs.items()
        },
        "requires": [{"knobs": list(r.knob_names), "message": r.message} for r in entry.requires],
    }
