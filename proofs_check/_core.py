"""Verdicts, the check registry and the context a check runs in."""

from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

VERDICTS = ("verified-symbolic", "verified-numeric", "consistent-empirical", "refuted",
            "vacuous-here", "not-checkable", "error")

PROFILES = ("quick", "full")


@dataclass
class Verdict:
    """The outcome of checking one claim.

    ``covered`` says what the check actually covered (ranges, sample counts, search budget);
    ``rows`` are tidy measurement records (written to CSV); ``plot`` says how to draw them (the
    report draws plots from the CSV only)."""

    claim: str
    verdict: str
    evidence: str
    covered: str = ""
    measured: Any = None
    claimed: Any = None
    witness: Any = None
    rows: list = field(default_factory=list)
    plot: dict | None = None
    slopes: list = field(default_factory=list)   # fitted vs predicted exponents (rate claims)
    check: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS} (got {self.verdict!r})")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Context:
    profile: str = "quick"
    seed: int = 0

    @property
    def full(self) -> bool:
        return self.profile == "full"

    def pick(self, quick, full):
        return full if self.full else quick


CHECKS: dict[str, Callable[[Context], Verdict]] = {}


def check(*claim_ids: str):
    """Register a check for one or more claims: ``fn(ctx, claim_id) -> Verdict``."""
    def deco(fn):
        for cid in claim_ids:
            if cid in CHECKS:
                raise RuntimeError(f"two checks for {cid}")
            CHECKS[cid] = functools.partial(_call, fn, cid)
            CHECKS[cid].source_fn = fn  # type: ignore[attr-defined]
        return fn
    return deco


def _call(fn, cid, ctx):
    v = fn(ctx, cid)
    v.claim = cid
    v.check = f"{fn.__module__}.{fn.__name__}"
    return v


def not_checkable(*claim_ids: str, reason: str):
    def fn(ctx, cid):
        return Verdict(cid, "not-checkable", reason, covered="nothing: see the reason")
    fn.__name__ = "not_checkable_" + "_".join(c.replace("-", "_").replace(".", "_")
                                              for c in claim_ids)
    fn.__module__ = inspect.stack()[1].frame.f_globals.get("__name__", __name__)
    fn.__reason__ = reason
    return check(*claim_ids)(fn)


#: the packages whose source is part of every verify cache key (a check may call anything in
#: them; ``experiments`` because checks of trained networks run experiments)
KEY_PACKAGES = ("approxtheory", "proofs_check", "experiments")

CACHE_SCHEME = "verify-cache-2"


def check_hash(cid: str, ctx: Context) -> str:
    """The cache key of a claim's verdict: everything the verdict depends on.

    The claim id, the check function and its not-checkable reason, every field of the context
    (profile, seed, any later setting), the fingerprint of the whole source of ``approxtheory``,
    ``proofs_check`` and ``experiments`` (any edit anywhere changes every key) and the library
    versions (torch, numpy, scipy, sympy, python, approxtheory)."""
    import json
    from approxtheory.provenance import libraries, source_fingerprint
    fn = CHECKS[cid].source_fn  # type: ignore[attr-defined]
    h = hashlib.sha256()
    for part in (CACHE_SCHEME, cid, f"{fn.__module__}.{fn.__name__}",
                 getattr(fn, "__reason__", ""),
                 json.dumps(asdict(ctx), sort_keys=True),
                 source_fingerprint(KEY_PACKAGES),
                 json.dumps(libraries(), sort_keys=True)):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def slope_row(fit, label: str, predicted: float) -> dict:
    """A fitted exponent with its interval next to the predicted one (for the slope plots)."""
    return {"label": label, "fitted": fit.slope, "lo": fit.ci_low, "hi": fit.ci_high,
            "predicted": predicted, "within_ci": fit.contains(predicted)}


# shared measurements used by several checks, computed once per run
memo = functools.lru_cache(maxsize=None)


def construction_grid(name: str, axes: dict, budget: int, fixed: dict | None = None,
                      extra: Callable | None = None):
    """Build the construction ``name`` at every point of the grid ``axes`` (knob -> values),
    measure it, and return tidy rows plus the witness of every cell (keyed by the grid point)."""
    from approxtheory.constructions import build
    rows, witnesses = [], {}
    keys = list(axes)
    for combo in itertools.product(*axes.values()):
        point = dict(zip(keys, combo))
        c = build(name, **{**(fixed or {}), **point})
        m = c.measure(budget=budget)
        row = {**point, "params": c.params, "sup_error": m["sup_error"],
               "claimed_bound": c.claimed_bound, "verdict": m["verdict"]}
        if extra is not None:
            row.update(extra(c, m))
        rows.append(row)
        witnesses[combo] = m.get("witness")
    return rows, witnesses
