"""Verdicts, the check registry and the context a check runs in."""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

VERDICTS = (
    "verified-symbolic",
    "verified-numeric",
    "consistent-empirical",
    "inconsistent",
    "refuted",
    "vacuous-here",
    "not-checkable",
    "error",
)

#: verdicts that say the claim held; a mutant "flips" a check when it turns one into a FAILING one
PASSING = ("verified-symbolic", "verified-numeric", "consistent-empirical")
VERIFIED = ("verified-symbolic", "verified-numeric")
#: ``refuted``: a witness against what the paper proves (or states exactly); ``inconsistent``: a
#: trained network's measurement disagrees with the claim's stated prediction under the check's
#: stated criterion (weaker: training budget, seeds and scale can be to blame, not the proof)
FAILING = ("refuted", "inconsistent")

#: what a verdict speaks about: the whole claim, a named part of it, or the digest's stand-in for
#: it; ``none`` for verdicts that checked nothing (not-checkable, error)
SCOPES = ("full", "partial", "surrogate", "none")

#: ``smoke``: every claim cheaply (verify's one-minute pass): a check runs its quick grid unless
#: it gives a smaller one (``ctx.pick(quick, full, smoke=...)``); trained evidence is read from
#: cached cells only, and a claim the cheap pass cannot decide is not-checkable, with a reason
#: starting "smoke profile:" (:class:`SmokeUndecided`)
PROFILES = ("quick", "full", "smoke")

#: the prefix of every reason a smoke verdict gives for not deciding a claim
SMOKE_REASON = "smoke profile: "


class SmokeUndecided(Exception):
    """Raised by a check (or the framework, for untrained experiments) under the smoke profile
    where the cheap pass cannot decide the claim; the check's verdict is then not-checkable with
    the reason (prefixed :data:`SMOKE_REASON`), never a verdict the cheap grid does not
    support."""


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
    slopes: list = field(default_factory=list)  # fitted vs predicted exponents (rate claims)
    check: str = ""
    # "full", "partial: <the part checked>", "surrogate: <what stands in for the claim>" or
    # "none" (not-checkable, error); empty means the check did not say (an error in _call)
    scope: str = ""
    mutants: list = field(default_factory=list)  # declared mutants (names)
    # run-dependent figures (timings, throughput): shown in the report and timings.json, kept
    # out of verdicts.json so that reruns write the same bytes
    volatile: dict = field(default_factory=dict)
    falsified_by: list = field(default_factory=list)  # mutants that flip it (verify --mutants)
    # room the claim has on what the check found: claimed bound / worst case found for an upper
    # bound, worst case found / claimed bound for a lower bound (>= 1 when it holds, 1 = tight);
    # None when it means nothing for this check. Computed from the rows' ``claimed_bound`` and
    # ``sup_error`` columns when the check does not set it (see :func:`row_slack`)
    slack: float | None = None
    # why there is no slack where the claim has a formula (filled in by the framework from the
    # claim's kind when the check does not say)
    slack_note: str = ""
    # why a check reads no formula of the catalogue (then no claim mutant can reach it); empty
    # when it reads the claim's formulas
    formula_note: str = ""
    # a trained verdict's scale (proofs_check/_gate.py): per experiment, what was run (T, steps,
    # widths, seeds, best NMSE) and, per reference cell, what was reached against the paper's
    # figure; None for checks that train nothing
    scale: dict | None = None
    # both sides of a construction grid: None when no cell was bracketed, else
    # :func:`certified_summary` of the rows: ``cells`` (k, bracket at or below the claimed bound),
    # ``of`` (n, cells eligible for a bracket), ``bracketed`` (m, cells whose bracket was
    # computed), ``all`` (k == n: every cell certified), ``gaps`` (the bracketed cells where
    # found <= claimed < certified) and ``table`` (per cell: its knobs, found, certified,
    # claimed, ok)
    certified: dict | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS} (got {self.verdict!r})")
        if self.verdict in ("not-checkable", "error") and not self.scope:
            self.scope = "none"
        if self.scope and self.scope.split(":")[0].strip() not in (*SCOPES, "unstated"):
            raise ValueError(f"scope must start with one of {SCOPES} (got {self.scope!r})")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Context:
    """What a check runs under. ``mutant`` names a deliberately broken variant of what the check
    checks (declared with ``@check(..., mutants={...})``); a check applies it where it builds
    its object (``if ctx.mutant == "readout-x2": ...``) and must otherwise ignore it."""

    profile: str = "quick"
    seed: int = 0
    mutant: str | None = None
    #: the name of a generated mutant of the claim itself (``verify --mutants``): while the check
    #: runs, the catalogue returns the mutated claim for this id
    claim_mutant: str | None = None
    #: the smoke profile: ``profile`` is then "quick" (a check that gives no smoke value runs its
    #: quick grid; ``Context(profile="smoke")`` is read as this)
    smoke: bool = False

    def __post_init__(self):
        if self.profile == "smoke":
            object.__setattr__(self, "profile", "quick")
            object.__setattr__(self, "smoke", True)
        elif self.smoke and self.profile != "quick":
            raise ValueError(f"the smoke profile runs on the quick one (got {self.profile!r})")

    @property
    def full(self) -> bool:
        return self.profile == "full"

    @property
    def name(self) -> str:
        """The profile's name as the user gave it: quick, full or smoke."""
        return "smoke" if self.smoke else self.profile

    @property
    def grid(self) -> str:
        """The key of a per-profile table for a check that has a smoke entry in it: "smoke"
        under smoke, else the profile (a table with no smoke entry is read with ``profile``)."""
        return self.name

    def pick(self, quick, full, smoke=None):
        """The value for this profile: ``full`` on full, ``smoke`` on smoke when given (else the
        quick one), ``quick`` on quick."""
        if self.smoke and smoke is not None:
            return smoke
        return full if self.full else quick

    def is_mutant(self, name: str) -> bool:
        return self.mutant == name

    def undecided(self, reason: str):
        """Under smoke: end the check as not-checkable with ``reason`` (the cheap grid cannot
        decide the claim); under quick and full: does nothing."""
        if self.smoke:
            raise SmokeUndecided(reason)

    def progress(self, stage: str, i: int, n: int | None = None) -> None:
        """Say how far a long check is (``i`` of ``n`` in ``stage``: a search stage, training
        steps, grid cells) to whoever shows progress (``verify``'s bar); never changes a
        result, costs nothing when nobody listens."""
        hook = _PROGRESS_HOOK[0]
        if hook is not None:
            hook(stage, i, n)


#: the sub-progress listener (``verify`` sets it around a check when it shows a bar)
_PROGRESS_HOOK: list = [None]


def set_progress_hook(hook) -> None:
    """``hook(stage, i, n)`` receives every :meth:`Context.progress` call; None removes it."""
    _PROGRESS_HOOK[0] = hook


#: the context of the check running now (read by :func:`experiment_rows` under smoke)
_ACTIVE: list = []


def active_context() -> Context | None:
    return _ACTIVE[-1] if _ACTIVE else None


CHECKS: dict[str, Callable[[Context], Verdict]] = {}
#: claim id -> {mutant name: what it breaks}
MUTANTS: dict[str, dict[str, str]] = {}
#: claim id -> {"experiments": names, "constructions": names} that its check declares it reads
#: (``@check(..., experiments=(...), constructions=(...))``, names as registered); a check that
#: declares neither has no entry (:mod:`approxtheory.trail` then parses its source)
READS: dict[str, dict[str, tuple[str, ...]]] = {}


def check(
    *claim_ids: str,
    mutants: dict[str, str] | None = None,
    experiments: tuple[str, ...] | None = None,
    constructions: tuple[str, ...] | None = None,
    evidence: Any = None,
):
    """Register a check for one or more claims: ``fn(ctx, claim_id) -> Verdict``.

    ``mutants`` maps a name to a description of a deliberately broken variant (a perturbed
    weight, a changed constant or exponent, ...). Under ``Context(mutant=name)`` the check must
    run against that variant, and a correct check then fails (``refuted``). A check that
    declares no mutant cannot return ``verified-*``: it is downgraded to
    ``consistent-empirical`` with the reason. ``verify --mutants`` runs them and names the
    mutants that flip each verdict.

    ``experiments`` and ``constructions`` name (as registered) every experiment whose rows the
    check reads (:func:`experiment_rows`) and every construction it builds (``build(name)``,
    :func:`construction_grid`, or the model builder behind it): the declared joins that
    ``approxtheory claims show ID --trail`` reports (``tests/test_declared_joins.py`` checks
    at run time that a check reads nothing it does not declare).

    ``evidence``: a trained check's declared evidence (:class:`._pipeline.Evidence`, the one
    ``fn`` decides by): the experiments it reads are declared from it, stated once (an evidence
    whose experiments are a function of the context declares them with ``experiments``)."""
    if evidence is not None:
        if callable(evidence.experiments) and experiments is None:
            raise TypeError("@check evidence= naming its experiments per context: declare them")
        if not callable(evidence.experiments) and experiments is not None:
            raise TypeError("@check takes its experiments from evidence= or experiments=, not both")
        experiments = experiments if experiments is not None else evidence.experiments
    declared = None
    if experiments is not None or constructions is not None:
        declared = {
            "experiments": _names(experiments, "experiments"),
            "constructions": _names(constructions, "constructions"),
        }

    def deco(fn):
        for cid in claim_ids:
            if cid in CHECKS:
                raise RuntimeError(f"two checks for {cid}")
            CHECKS[cid] = functools.partial(_call, fn, cid)
            CHECKS[cid].source_fn = fn  # type: ignore[attr-defined]
            MUTANTS[cid] = dict(mutants or {})
            if declared is not None:
                READS[cid] = declared
        return fn

    return deco


def _names(names, what: str) -> tuple[str, ...]:
    """``@check``'s ``experiments=`` or ``constructions=`` as a tuple of names (a lone string
    is refused: it would be read as its characters)."""
    if names is None:
        return ()
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"@check {what}= takes a tuple of registered names (got {names!r})")
    return tuple(names)


NO_MUTANT_NOTE = (
    "[downgraded from {v}: no mutant shows that this check can fail, so it "
    "cannot earn a verified verdict] "
)


def _run_check(fn, cid, ctx) -> Verdict:
    """``fn(ctx, cid)`` with ``ctx`` active; the smoke pass's undecided check becomes the smoke
    profile's not-checkable verdict, naming the experiments it did not train."""
    _ACTIVE.append(ctx)
    skips = len(_SMOKE_SKIPS)
    try:
        v = fn(ctx, cid)
    except SmokeUndecided as e:
        if not ctx.smoke:  # pragma: no cover  (only smoke contexts raise it)
            raise
        why = str(e)
        v = Verdict(
            cid,
            "not-checkable",
            why if why.startswith(SMOKE_REASON) else SMOKE_REASON + why,
            covered="nothing decided: see the reason (the smoke profile's cheap pass)",
            scope="none",
        )
    finally:
        _ACTIVE.pop()
    untrained = sorted(set(_SMOKE_SKIPS[skips:]))
    del _SMOKE_SKIPS[skips:]
    if untrained and v.verdict == "not-checkable" and not v.evidence.startswith(SMOKE_REASON):
        v.evidence = (
            f"{SMOKE_REASON}{', '.join(untrained)} not trained by the smoke pass (cells cached "
            f"under ./{RESULTS_DIR} are read when complete; `approxtheory verify --profile "
            f"quick` trains them): " + v.evidence
        )
    return v


def _record_certified(v: Verdict, ctx) -> None:
    """The certified-bracket summary of ``v``'s rows (or of its searched error) on the verdict,
    and, where some cells are bracketed, what was certified in its coverage."""
    summary = certified_summary(v.rows)
    if summary is None and v.verdict == "verified-numeric" and (v.mutants or ctx.mutant):
        summary = searched_only(v)  # (a verdict with no mutant is downgraded below: no record)
    if summary is None:
        return
    v.certified = summary
    if summary["bracketed"] == 0:
        return
    k, n, m = summary["cells"], summary["of"], summary["bracketed"]
    v.covered = (v.covered + "; " if v.covered else "") + (
        f"two-sided in {m} of {n} cells: found <= sup <= certified, the "
        f"certified upper bracket (a sound bound over the whole input domain, not a search) at "
        f"or below the claimed bound in {k} of them (structured brackets, exact up to a "
        f"piece budget: softmax-over-box for one layer of softmax retrieval heads, a "
        f"ReLU read-out of one token per unit against a max/min target, the two-layer "
        f"second-largest construction (softmax deficits, which token is the max, 1-D "
        f"pieces of x_(2)), the two-layer pairwise maximum on the unit sphere (two softmax "
        f"deficits per term), or a 1-D piecewise-linear interpolant (its error is linear "
        f"between the union of its and the target's breakpoints; a smooth target's is "
        f"bounded by the interpolation remainder); at most {CERTIFY_CELLS_STRUCTURED} cells "
        f"per construction grid; else branch-and-bound for T <= 16, d <= 2, at most "
        f"{CERTIFY_CELLS} per grid, {CERTIFY_SECONDS} s each); "
        + (
            "certified in every cell"
            if summary["all"]
            else f"the other {n - k} cells are search-based only"
        )
    )
    for g in summary["gaps"]:
        v.covered += (
            f"; gap at {g['cell']}: found {g['found']:.4g} <= claimed {g['claimed']:.4g} < "
            f"certified {_g4(g['certified'])}"
        )


def _held_to_claim(v: Verdict, cid: str, ctx) -> None:
    """A passing verdict held to the claim's side, its slack (or why it has none), and the
    downgrade of a verified verdict with no mutant to consistent-empirical."""
    from approxtheory.catalogue import _REGISTRY

    c = _REGISTRY.get(cid)  # None for a check registered under an id of no claim (tests)
    if c is not None and v.verdict in PASSING:
        _hold_to_side(v, c.kind)
    if v.slack is None:
        v.slack = row_slack(v.rows, lower=c is not None and c.kind == "lower")
    elif not (isinstance(v.slack, (int, float)) and math.isfinite(v.slack)):
        v.slack = None  # NaN or inf says nothing about the room the claim has
    if v.slack is None and c is not None and c.expressions and not v.slack_note:
        v.slack_note = SLACK_NOTES.get(c.kind, SLACK_NOTES[""])
    if ctx.mutant is None and v.verdict in VERIFIED and not v.mutants:
        v.evidence = NO_MUTANT_NOTE.format(v=v.verdict) + v.evidence
        v.verdict = "consistent-empirical"


def _call(fn, cid, ctx):
    if ctx.mutant is not None and ctx.mutant not in MUTANTS.get(cid, {}):
        raise ValueError(
            f"{cid} declares no mutant {ctx.mutant!r} (declared: "
            f"{', '.join(MUTANTS.get(cid, {})) or 'none'})"
        )
    v = _run_check(fn, cid, ctx)
    v.claim = cid
    v.check = f"{fn.__module__}.{fn.__name__}"
    v.mutants = sorted(MUTANTS.get(cid, {}))
    if not v.scope:  # tests/test_mutants.py fails on any check that leaves it unstated
        v.scope = "unstated"
    _record_certified(v, ctx)
    _held_to_claim(v, cid, ctx)
    return v


#: why a record has no slack, by claim kind, where the check does not say
SLACK_NOTES = {
    "exact": "an exact formula, compared for equality: no room to measure",
    "ratio": "an exact ratio, compared for equality: no room to measure",
    "rate": "a rate: the fitted interval in the evidence says how close the exponent is",
    "empirical": "an empirical statement: the intervals in the evidence say how close",
    "conjecture": "a conjecture with unspecified constants: no bound to measure room against",
    "": "the check reports no worst case against the formula",
}


def side_violations(rows, kind: str) -> list[dict]:
    """The rows on the wrong side of a bound of this claim ``kind``: ``sup_error`` above
    ``claimed_bound`` beyond float64 round-off for an upper bound or a construction's
    guaranteed error, below it for a lower bound (the constructions' own comparison,
    :func:`approxtheory.constructions._base.verdict`); none for a kind with no side. Rows
    without both numbers finite are not read."""
    if kind not in ("upper", "construction", "lower"):
        return []
    from approxtheory.constructions._base import verdict

    side = "lower" if kind == "lower" else "upper"
    return [r for r, b, m in _bound_pairs(rows) if verdict(m, b, side) == "refuted"]


def _bound_pairs(rows):
    """(row, claimed_bound, sup_error) for the rows that carry both as finite numbers."""
    for r in rows:
        if not isinstance(r, dict):
            continue
        b_, m_ = r.get("claimed_bound"), r.get("sup_error")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (b_, m_)):
            continue
        b, m = float(b_), float(m_)  # type: ignore[arg-type]
        if math.isfinite(b) and math.isfinite(m):
            yield r, b, m


def claimed_number(c, name: str):
    """(value, the expression as read, why it has none): the finite real number claim ``c``
    states as its expression ``name`` (a sympy number); None where the claim states none or it
    is no finite real number. The one reader of a claim's stated constant, sign or count."""
    import sympy as sp

    if name not in c.expressions:
        return None, "-", f"the claim states no {name}"
    e = sp.sympify(c.expr(name))
    if not e.is_number or e.is_real is not True or e.is_finite is not True:
        return None, sp.sstr(e), f"{name} = {sp.sstr(e)} is no finite real number"
    return e, sp.sstr(e), ""


def claimed_sign(c, name: str) -> tuple[int | None, str, str]:
    """:func:`claimed_number` as a sign (-1, 0, 1): a direction or an ordering."""
    import sympy as sp

    e, read, why = claimed_number(c, name)
    return (None if e is None else int(sp.sign(e))), read, why


def _hold_to_side(v: Verdict, kind: str) -> None:
    """A passing verdict whose own rows sit on the wrong side of the claim's bound (its kind)
    turned into a failing one, with the first such row as witness: a check that compares in a
    direction of its own instead of the claim's is caught here (the ``kind:flip`` mutant)."""
    bad = side_violations(v.rows, kind)
    if not bad:
        return
    word = "below" if kind == "lower" else "above"
    r = bad[0]
    v.evidence = (
        f"the claim is a{'n' if kind[0] in 'aeiou' else ''} {kind} bound, but in {len(bad)} of "
        f"{len(v.rows)} rows the measured sup_error is {word} claimed_bound (first: "
        f"{r['sup_error']:.6g} vs {r['claimed_bound']:.6g}). " + v.evidence
    )
    v.verdict = "inconsistent" if v.verdict == "consistent-empirical" else "refuted"
    v.witness = r


def row_slack(rows, lower: bool = False) -> float | None:
    """The room a bound has on a check's rows: the least ``claimed_bound / sup_error`` over the
    rows with both finite and positive (``sup_error / claimed_bound`` for a lower bound); None
    when no row has both. 1 means the worst case found sits on the bound."""
    ratios = [m / b if lower else b / m for _, b, m in _bound_pairs(rows) if b > 0 and m > 0]
    return float(min(ratios)) if ratios else None


def flips(original: str, mutated: str) -> bool:
    """Whether a mutant's verdict falsifies a passing verdict."""
    return original in PASSING and mutated in FAILING


def not_checkable(*claim_ids: str, reason: str):
    def fn(ctx, cid):
        return Verdict(
            cid, "not-checkable", reason, covered="nothing: see the reason", scope="none"
        )

    fn.__name__ = "not_checkable_" + "_".join(
        c.replace("-", "_").replace(".", "_") for c in claim_ids
    )
    fn.__module__ = inspect.stack()[1].frame.f_globals.get("__name__", __name__)
    fn.__reason__ = reason  # type: ignore[attr-defined]
    return check(*claim_ids)(fn)


#: the packages whose source is part of every verify cache key (a check may call anything in
#: them; the experiments because checks of trained networks run experiments)
KEY_PACKAGES = ("approxtheory", "approxtheory.proofs_check", "approxtheory.experiments")

CACHE_SCHEME = "verify-cache-2"


def check_hash(cid: str, ctx: Context) -> str:
    """The cache key of a claim's verdict: everything the verdict depends on.

    The claim id, the check function and its not-checkable reason, every field of the context
    (profile, seed, any later setting), the fingerprint of the whole source of ``approxtheory``,
    ``approxtheory.proofs_check`` and ``approxtheory.experiments`` (any edit anywhere changes
    every key) and the library versions (torch, numpy, scipy, sympy, python, approxtheory), by
    :func:`approxtheory.provenance.cache_key`."""
    import json

    from approxtheory.provenance import cache_key

    fn = CHECKS[cid].source_fn  # type: ignore[attr-defined]
    fields = asdict(ctx)
    if not fields["smoke"]:  # quick and full keep the fields they had before smoke existed
        del fields["smoke"]
    import os

    from approxtheory.shipped import RETRAIN_ENV, store_digest

    return cache_key(
        CACHE_SCHEME,
        cid,
        f"{fn.__module__}.{fn.__name__}",
        getattr(fn, "__reason__", ""),
        json.dumps(fields, sort_keys=True),
        store_digest(),  # shipped trained cells: a verdict that read them follows them
        json.dumps(SHIPPED, sort_keys=True) + os.environ.get(RETRAIN_ENV, ""),
        packages=KEY_PACKAGES,
    )


def p1_interpolant_2d(f, n: int, X, Y):
    """The P1 interpolant of a map f of [0, 1]^2 on the Freudenthal triangulation with n x n
    nodes (each square cut along x = y), evaluated at the points (X, Y): Σ_nodes f(node) φ_node
    with the Courant hat φ = max(0, min of six affine maps), a fixed-size ReLU net per node (the
    grid-like approximant of the head-count and InfoFlow checks)."""
    import numpy as np

    h = 1.0 / (n - 1)
    g = np.linspace(0.0, 1.0, n)
    F = f(*np.meshgrid(g, g, indexing="ij"))
    i = np.minimum((X / h).astype(int), n - 2)
    j = np.minimum((Y / h).astype(int), n - 2)
    a, b = X / h - i, Y / h - j
    f00, f10, f01, f11 = F[i, j], F[i + 1, j], F[i, j + 1], F[i + 1, j + 1]
    upper = f00 + a * (f10 - f00) + b * (f11 - f10)  # the triangle a >= b
    lower = f00 + b * (f01 - f00) + a * (f11 - f01)
    return np.where(a >= b, upper, lower)


def beta_bound_plot(title: str, group: str = "T", **more) -> dict:
    """The plot of a constructed head's sup error against β beside the claimed bound, one curve
    per ``group`` (``more``: further settings, e.g. ``logx``)."""
    return {
        "x": "beta",
        "y": ["sup_error"],
        "bound": "claimed_bound",
        "group": group,
        "title": title,
        "xlabel": "β",
        "ylabel": "sup error",
        **more,
    }


def slope_row(fit, label: str, predicted: float) -> dict:
    """A fitted exponent with its interval next to the predicted one (for the slope plots)."""
    return {
        "label": label,
        "fitted": fit.slope,
        "lo": fit.ci_low,
        "hi": fit.ci_high,
        "predicted": predicted,
        "within_ci": fit.contains(predicted),
    }


def memo(fn):
    """Shared measurements used by several checks, computed once per run, aware of claim
    mutants (``verify --mutants``): a memoised call that read the catalogue (any
    :func:`~approxtheory.catalogue.claim` lookup, its own or in a memoised call it made) is
    computed afresh under each claim override, so it sees the mutated claim; one that read
    nothing is claim-independent and is served from the run's cache under any override (a grid
    of measurements is not recomputed for every claim mutant)."""
    from approxtheory.catalogue import lookups, note_lookup, override_token

    base: dict = {}  # key -> (value, read the catalogue?) computed with no override
    over: dict = {}  # key -> value under the current override token
    current = [0]

    @functools.wraps(fn)
    def wrapper(*a, **k):
        active = active_context()  # a smoke grid (no certified bracket) is never served to quick
        key = (a, tuple(sorted(k.items())), active is not None and active.smoke)
        tok = override_token()
        hit = base.get(key)
        if hit is not None and not hit[1]:
            return hit[0]
        if tok == 0:
            if hit is not None:
                note_lookup()  # a caller memoising on top of this one read the catalogue too
                return hit[0]
        else:
            if current[0] != tok:
                over.clear()
                current[0] = tok
            if key in over:
                note_lookup()
                return over[key]
        before = lookups()
        value = fn(*a, **k)
        read = lookups() != before
        if tok == 0 or not read:
            base[key] = (value, read)
        else:
            over[key] = value
        return value

    def cache_clear():
        base.clear()
        over.clear()

    wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
    wrapper.cache_size = lambda: len(base) + len(over)  # type: ignore[attr-defined]
    return wrapper


#: seconds of branch-and-bound per grid cell for the certified upper bracket, and the most
#: cells per grid it is attempted on (the first eligible ones in grid order); the structured
#: brackets (one layer of softmax retrieval heads, any T: approxtheory.bracket_softmax; a
#: separable ReLU read-out: approxtheory.bounds.relu; the two-layer second-largest construction
#: of IF-K1/IF-T1: approxtheory.bounds.kth) are exact up to a piece budget, no clock, on up to
#: CERTIFY_CELLS_STRUCTURED cells per grid
CERTIFY_SECONDS = 1.5
CERTIFY_CELLS = 4
CERTIFY_CELLS_STRUCTURED = 16


#: the columns :func:`construction_grid` writes after a cell's knobs (the knobs come first)
GRID_COLUMNS = ("params", "sup_error", "claimed_bound", "verdict", "sup_error_upper", "certified")


def _cell_label(row: dict) -> str:
    """A grid cell's knobs as ``T=64, beta=100``: the scalar columns before ``params`` (the
    knobs :func:`construction_grid` writes first), else every scalar column it does not write."""
    keys = list(row)
    knobs = keys[: keys.index("params")] if "params" in keys else keys
    parts = [
        f"{k}={row[k]:g}" if isinstance(row[k], float) else f"{k}={row[k]}"
        for k in knobs
        if k not in GRID_COLUMNS and isinstance(row[k], (int, float, str))
    ]
    return ", ".join(parts)


def _g4(x) -> str:
    return "inf (no finite bracket)" if x is None else f"{x:.4g}"


def _finite(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def certified_summary(rows) -> dict | None:
    """Both sides of a grid's cells, for the verdict record: None when no row was bracketed
    (no row has a ``sup_error_upper``), else ``cells`` (k: bracket at or below the claimed
    bound), ``of`` (n: rows with a ``certified`` column), ``bracketed`` (m: rows whose bracket
    was computed), ``all`` (k == n > 0), ``gaps`` (bracketed rows with found <= claimed <
    certified: the cell, found, certified, claimed) and ``table`` (one entry per row with a
    ``certified`` column: cell, found, certified (None: search only), claimed, ok)."""
    cells = [r for r in rows if isinstance(r, dict) and "certified" in r]
    tried = [r for r in cells if r.get("sup_error_upper") is not None]
    if not tried:
        return None
    table, gaps = [], []
    for r in cells:
        found, up = _finite(r.get("sup_error")), _finite(r.get("sup_error_upper"))
        claimed = _finite(r.get("claimed_bound"))
        ok = bool(r["certified"]) and r.get("sup_error_upper") is not None
        entry = {"cell": _cell_label(r), "found": found, "certified": up, "claimed": claimed}
        table.append({**entry, "ok": ok})
        if r.get("sup_error_upper") is not None and not ok:
            if found is not None and claimed is not None and found <= claimed:
                gaps.append(entry)
    k = sum(1 for e in table if e["ok"] is True)
    return {
        "cells": k,
        "of": len(cells),
        "bracketed": len(tried),
        "all": k == len(cells) > 0,
        "gaps": gaps,
        "table": table,
    }


def searched_only(v: Verdict) -> dict | None:
    """The ``certified`` record of a verdict that rests on searched sup errors with no bracket
    (rows with ``sup_error`` and ``claimed_bound``, none with ``sup_error_upper``): every cell
    search-based, so the report counts it as such; None for a verdict with no such rows (decided
    another way: exact counts, symbolic comparisons, fits). The verdict's ``covered`` says so."""
    table = []
    for r in v.rows:
        if not isinstance(r, dict):
            continue
        found, claimed = _finite(r.get("sup_error")), _finite(r.get("claimed_bound"))
        if found is None or claimed is None:
            continue
        table.append(
            {
                "cell": _cell_label(r),
                "found": found,
                "certified": None,
                "claimed": claimed,
                "ok": False,
            }
        )
    if not table:
        return None
    v.covered = (v.covered + "; " if v.covered else "") + (
        f"search-based in all {len(table)} cells: no certified bracket reaches this construction "
        "(its input domain, depth or size is outside the brackets' reach), so each sup error "
        "is the adversarial search's, a lower bound on the true one"
    )
    return {"cells": 0, "of": len(table), "bracketed": 0, "all": False, "gaps": [], "table": table}


def certified_frontier(rows, size: str = "T") -> dict | None:
    """The certified frontier of a grid's rows along the size knob ``size``: the largest value
    such that every row at or below it is certified (``certified`` true with a finite
    ``sup_error_upper``), with the sizes certified and those above it that are search-based;
    None when the rows have no such knob. ``frontier`` is None when the smallest size already
    has a cell that is not certified."""
    sized = [r for r in rows if isinstance(r, dict) and isinstance(r.get(size), (int, float))]
    if not sized:
        return None
    ok_at: dict = {}
    for r in sized:
        ok = bool(r.get("certified")) and _finite(r.get("sup_error_upper")) is not None
        ok_at[r[size]] = ok_at.get(r[size], True) and ok
    front = None
    for v in sorted(ok_at):
        if not ok_at[v]:
            break
        front = v
    return {
        "size": size,
        "frontier": front,
        "certified": sorted(v for v in ok_at if ok_at[v]),
        "search_based": sorted(v for v in ok_at if not ok_at[v]),
    }


def construction_grid(
    name: str,
    axes: dict,
    budget: int,
    fixed: dict | None = None,
    extra: Callable | None = None,
    mutate: Callable | None = None,
    certify: bool = True,
):
    """Build the construction ``name`` at every point of the grid ``axes`` (knob -> values),
    measure it, and return tidy rows plus the witness of every cell (keyed by the grid point).
    Each cell done is reported to the running check's :meth:`Context.progress`.

    ``mutate(construction)`` (for mutants) edits each built construction in place before it is
    measured, e.g. perturbs a weight; a memoised grid must then be keyed by the mutant too.

    ``certify`` (ignored under the smoke profile, which adds no bracket): for cells within the
    certified bracket's reach (box domain, T <= 16, d <= 2)
    whose measurement is within the bound, also compute the certified upper bracket
    (``CERTIFY_SECONDS`` of branch-and-bound) into the columns ``sup_error_upper`` and
    ``certified`` (the bracket is at or below the claimed bound); the verdict then says so."""
    from approxtheory.bounds import bracket_reach
    from approxtheory.constructions import build

    rows, witnesses = [], {}
    keys = list(axes)
    attempts = attempts_s = 0
    active = active_context()
    if active is not None and active.smoke:  # smoke: the search decides, no bracket is added
        certify = False
    n_cells, done = math.prod(len(v) for v in axes.values()), 0
    for combo in itertools.product(*axes.values()):
        point = dict(zip(keys, combo))
        c = build(name, **{**(fixed or {}), **point})
        if mutate is not None:
            mutate(c)
        m = c.measure(budget=budget)
        row = {
            **point,
            "params": c.params,
            "sup_error": m["sup_error"],
            "claimed_bound": c.claimed_bound,
            "verdict": m["verdict"],
        }
        if certify:
            row["sup_error_upper"], row["certified"] = None, False
            route, _why = bracket_reach(c.model, c.task)
            # exact and budgeted by work (pieces, inputs), not by the clock: the structured
            # bracket and the enumeration of a finite domain share the larger allowance
            structured = route in ("structured", "enumeration")
            small = route == "generic"
            eligible = m["verdict"] == "within-bound" and c.bound_kind == "upper"
            if eligible and (
                (structured and attempts_s < CERTIFY_CELLS_STRUCTURED)
                or (small and attempts < CERTIFY_CELLS)
            ):
                if structured:
                    attempts_s += 1
                else:
                    attempts += 1
                _certify_cell(name, point, c, m, row)
        if extra is not None:
            row.update(extra(c, m))
        rows.append(row)
        witnesses[combo] = m.get("witness")
        done += 1
        if active is not None:
            active.progress(f"{name} cells", done, n_cells)
    return rows, witnesses


def _certify_cell(name: str, point: dict, c, m: dict, row: dict) -> None:
    """The certified upper bracket of one cell into ``row`` (``sup_error_upper``,
    ``certified``), held against the search: the search's value is a lower bound on the
    supremum, the bracket an upper one; found above certified is a bug in one of them, never a
    verdict."""
    cert = c.certify(time_limit=CERTIFY_SECONDS, witness=m.get("witness"))
    up = cert["sup_error_upper"]
    row["sup_error_upper"] = up
    row["certified"] = bool(cert.get("certified"))
    if up is not None and math.isfinite(m["sup_error"]) and math.isfinite(up):
        atol, rtol = _tol(c)
        if m["sup_error"] > up + atol + rtol * abs(up):
            raise AssertionError(
                f"{name} at {point}: the search found {m['sup_error']:.12g} above "
                f"the certified upper bracket {up:.12g} (unsound bracket or search)"
            )


def _tol(c) -> tuple[float, float]:
    """The (atol, rtol) of the construction's model dtype."""
    from approxtheory.constructions import tolerance

    return tolerance(getattr(getattr(c.model, "cfg", None), "dtype", "float64"))


#: where `approxtheory experiment run` writes by default (relative to the working directory);
#: the checks reuse cached cells found there (copied, never written to)
RESULTS_DIR = "results"


def experiment_rows(name: str, profile: str) -> tuple:
    """An experiment's rows through the runner, for the checks that read trained results.

    Cells cached under ``results/<name>`` for the current source are copied into a temporary
    directory and reused; the quick profile is computed when not cached, the full profile only
    read from the cache. Returns (rows or None, trace rows, seconds, note); the trace rows are
    the run's ``<profile>.trace.csv`` where the experiment writes one, else (). While outside
    results are in use (``verify --results``, :mod:`._results`), their rows for ``name`` (None
    when they have none) stand in for the experiment, whatever the profile."""
    from ._results import active_results, results_note

    given = active_results()
    if given is not None:
        rows = given["groups"].get(name)
        return rows, (), 0.0, results_note() if rows else f"{name}: no row in the given results"
    ctx = active_context()
    if ctx is not None and ctx.smoke and profile == "quick":
        rows, trace, secs, note = _experiment_rows(name, profile, True)  # smoke trains nothing
        if rows is None:
            _SMOKE_SKIPS.append(name)
            note = f"the smoke pass trains nothing: {note}"
        return rows, trace, secs, note
    return _experiment_rows(name, profile)


#: the experiments a smoke check found untrained (read by :func:`_call`)
_SMOKE_SKIPS: list = []

#: where each experiment's rows came from in this process (the note of its last read)
_SOURCES: dict[str, str] = {}


def rows_source(name: str) -> str | None:
    """Where the rows of experiment ``name`` that this process read came from: the shipped
    decisive grid (how many cells, revision, recipe) or a profile's run; None if not read."""
    return _SOURCES.get(name)


#: how checks use the shipped trained cells (approxtheory.shipped): ``use`` read an
#: experiment's decisive grid from them when every cell is there and fresh; ``retrain`` compute
#: the decisive grid's missing and stale cells here (``verify --retrain``: CPU-hours)
SHIPPED = {"use": True, "retrain": False}
DECISIVE = "decisive"


def _decisive_rows(name: str, d) -> tuple[tuple | None, str]:
    """((rows, trace, note), "") of ``name``'s decisive grid when it has one and every cell is
    shipped and fresh (or, with ``retrain``, computed here); else (None, what was missing or
    stale)."""
    import os
    from pathlib import Path

    from approxtheory.experiment import get, run_experiment
    from approxtheory.report import read_csv
    from approxtheory.shipped import RETRAIN_ENV

    retrain = SHIPPED["retrain"] or os.environ.get(RETRAIN_ENV) == "1"
    if DECISIVE not in get(name).grids or not (SHIPPED["use"] or retrain):
        return None, "no decisive grid" if DECISIVE not in get(name).grids else "not read"
    r = run_experiment(
        name,
        profile=DECISIVE,
        out=d,
        progress=False,
        max_cells=None if retrain else 0,
        use_shipped=not retrain,
    )
    if not r["complete"]:
        missing = r["cells"] - r["cached"]
        return None, (
            f"decisive grid not shipped in full: {r.get('shipped', 0)} of {r['cells']} cells "
            f"shipped and fresh, {missing} missing"
            + (f" ({r['stale']} stale: their cell code changed since)" if r.get("stale") else "")
        )
    rows = tuple(dict(x) for x in read_csv(r["csv"]))
    tp = Path(d) / name / f"{DECISIVE}.trace.csv"
    trace = tuple(dict(x) for x in read_csv(tp)) if tp.exists() else ()
    how = (
        f"read {r['shipped']} shipped cell(s) of the decisive grid, {r['shipped_note']}"
        if r.get("shipped")
        else "the decisive grid from the local cache"
    )
    if r["computed"]:
        how = f"the decisive grid: {r['computed']} cell(s) computed here, {r['cached']} cached"
    return (rows, trace, how), ""


@functools.cache  # not `memo`: trained rows never depend on a claim override
def _experiment_rows(name: str, profile: str, read_only: bool = False) -> tuple:
    import shutil
    import tempfile
    import time
    from pathlib import Path

    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import get, run_experiment
    from approxtheory.report import read_csv

    t0 = time.time()
    if profile not in get(name).grids:
        return None, (), 0.0, f"{name} has no {profile} profile"
    active = active_context()
    if active is not None:  # the runner trains silently here: say what runs
        active.progress(f"{'reading' if read_only else 'training'} {name} ({profile})", 0)
    with tempfile.TemporaryDirectory() as d:
        cached = Path(RESULTS_DIR) / name / "cells"
        if cached.is_dir():
            shutil.copytree(cached, Path(d) / name / "cells")
        got, why = _decisive_rows(name, d)
        if got is not None:
            rows, trace, how = got
            _SOURCES[name] = how
            return rows, trace, time.time() - t0, how
        r = run_experiment(
            name,
            profile=profile,
            out=d,
            progress=False,
            max_cells=None if profile == "quick" and not read_only else 0,
        )
        note = f"{r['cached']} cell(s) from the cache, {r['computed']} computed" + (
            f"; {why}" if why not in ("no decisive grid", "not read") else ""
        )
        _SOURCES[name] = f"{profile} profile: {note}"
        if not r["complete"]:
            return None, (), time.time() - t0, note
        rows = tuple(dict(x) for x in read_csv(r["csv"]))
        tp = Path(d) / name / f"{profile}.trace.csv"
        trace = tuple(dict(x) for x in read_csv(tp)) if tp.exists() else ()
    return rows, trace, time.time() - t0, note


def not_run(cid: str, name: str, profile: str, note: str) -> Verdict:
    """The verdict of a check whose experiment's ``profile`` was neither run nor cached."""
    return Verdict(
        cid,
        "not-checkable",
        f"the {profile} profile of {name} was not run and is not cached for the current source "
        f"({note}); run `approxtheory experiment run {name} --profile {profile}` first (cells "
        f"are read from ./{RESULTS_DIR})",
        covered="nothing was trained",
        scope="none",
    )
