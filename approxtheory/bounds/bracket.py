"""The branch-and-bound driver :func:`upper_bracket` and its result :class:`BracketResult`.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._validate import check_seed, pos_int
from ..errors import ConfigError
from ..resources import with_threads
from ._af import _DT, _TINY, _Unsupported
from ._inputs import _check_task, _nonfinite_weights, _pos_seconds, _require_forms

# ============================================================================== search
from ._result import BracketResult, _err, _err_from, _Lower, _roundoff_eps  # noqa: F401
from .error import _Ctx
from .finite import FINITE_DOMAINS, MAX_POINTS, enumerate_bracket

#: work per second of the deprecated ``time_limit``: ``time_limit = t`` becomes a budget of
#: ``ceil(BOXES_PER_SECOND · t)`` box evaluations (the generic path's rate on the 2-core
#: reference machine, measured on hc_l9 T = 3..4), so that old callers keep about the work
#: they had, decided by a count instead of the clock
BOXES_PER_SECOND = 400
#: the wall-clock safety net a deprecated ``time_limit = t`` still sets: ``10 t`` seconds
TIME_LIMIT_CAP_FACTOR = 10.0
#: the ReLU read-out bracket (:mod:`approxtheory.bounds.relu`) gets this many times
#: ``max_pieces`` 1-D piece evaluations (its pieces are far cheaper than a softmax head's)
RELU_PIECES_FACTOR = 8

_METHODS = ("auto", "structured", "generic")


@with_threads
def upper_bracket(
    model,
    task,
    *,
    max_splits: int = 2000,
    max_boxes: int | None = None,
    max_pieces: int = 1024,
    method: str = "auto",
    time_limit: float | None = None,
    wall_clock_cap: float | None = None,
    tol: float = 0.05,
    atol: float = 1e-9,
    lo=None,
    hi=None,
    points=None,
    batch: int = 16,
    branch_candidates: int = 6,
    seed: int = 0,
    max_points: int = MAX_POINTS,
) -> BracketResult:
    """Certified upper bound of ``sup_X ||model(X) - task.target(X)||_∞`` over the input box.

    The box is ``task.lo <= x(t)_k <= task.hi`` unless ``lo``/``hi`` (scalars or (T, d) arrays)
    restrict it. ``method``: ``"structured"`` (one attention-only layer of softmax retrieval
    heads against an affine generalized retrieval, at any T: :mod:`approxtheory.bracket_softmax`,
    budget ``max_pieces`` piece evaluations per head and side; or a separable ReLU read-out
    against a max: :mod:`approxtheory.bounds.relu`, ``RELU_PIECES_FACTOR·max_pieces`` pieces;
    or, on the unit sphere, the two-layer pairwise-max construction of IF-K2:
    :mod:`approxtheory.bounds.pairwise`, closed form, no search, over the whole sphere whatever
    lo/hi say; a model outside every structured scope gives ``upper=None`` and the reasons),
    ``"generic"`` (bound propagation
    with branch-and-bound, T <= 16-ish) or ``"auto"`` (structured where it applies, else
    generic).

    Budgets are deterministic work counts, never the clock: branch-and-bound stops when
    ``upper <= (1 + tol)·lower`` or ``upper <= atol``, after ``max_splits`` splits, or after
    ``max_boxes`` box evaluations (default 12000). ``time_limit`` is **deprecated**: it is
    converted to ``max_boxes = ceil(BOXES_PER_SECOND · time_limit)`` (when ``max_boxes`` is not
    given) and sets the safety net ``wall_clock_cap = 10 · time_limit``. ``wall_clock_cap``
    (seconds, default None: off) is only a safety net: if it stops the search the result has
    ``stop = "exhausted-by-time"`` and ``reproducible = False`` and ``upper`` is still the best
    *sound* bound so far. The bound is valid whenever the search stops.

    Non-finite input: NaN/inf weights, or a NaN/inf model output or target at an evaluated
    input, give ``upper = +inf``, ``unsound_input = True`` and ``stop = "unsound-input"``
    (never a finite number). ``points`` (n, T, d) or (T, d): extra inputs to evaluate for the
    lower bound (e.g. the witness of :func:`~approxtheory.measure.sup_error`), finite, clipped
    to the box; another shape is refused (ConfigError naming the expected one). ``seed`` seeds
    a local generator (the global torch and numpy RNG states are untouched). ``batch`` boxes are
    split per round, each along the best of its ``branch_candidates`` widest coordinates. See
    the module docstring for the method and the floating-point argument. Unsupported models or
    tasks give ``upper=None`` and a ``reason``.

    Domains: ``task.domain`` ``"box"`` (the above) or a finite one, ``"onehot"`` (one-hot
    tokens), bracketed by exhaustive enumeration when its ``d^T`` inputs are at most
    ``max_points`` (:mod:`approxtheory.bounds.finite`: exact up to the float64 evaluation's
    round-off; above the budget ``upper`` is None and ``stop`` says so). Any other domain, a
    budget <= 0, ``lo > hi`` or non-finite ends raise :class:`~approxtheory.errors.ConfigError`
    naming what is allowed."""
    t0 = time.perf_counter()
    max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap = _budget_args(
        max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap
    )
    max_points = pos_int("max_points", max_points)
    _check_options(method, tol, atol, batch, branch_candidates)
    domain, blo, bhi, P = _checked_inputs(model, task, lo, hi, seed, points)
    budget = _budget_record(max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap)
    opts = _SearchOpts(
        max_splits, max_boxes, wall_clock_cap, tol, atol, batch, branch_candidates, seed
    )
    sub = lo is not None or hi is not None  # a finite domain is enumerated inside lo/hi if given
    return _route(
        model, task, method, domain, (blo, bhi, P, sub), opts, max_pieces, max_points, t0, budget
    )


def _route(model, task, method, domain, box, opts, max_pieces, max_points, t0, budget):
    """The checked call of :func:`upper_bracket` routed: NaN/inf weights to +inf, a finite
    domain to enumeration, then the structured brackets (unless ``method="generic"``), else
    branch-and-bound. ``box``: (blo, bhi, P, sub) with ``sub`` whether lo/hi were given."""
    blo, bhi, P, sub = box
    bad_w = _nonfinite_weights(model)
    if bad_w:
        return _bad_weights(bad_w, t0, budget)
    if domain in FINITE_DOMAINS:
        return enumerate_bracket(
            model,
            task,
            max_points=max_points,
            lo=blo if sub else None,
            hi=bhi if sub else None,
            points=P,
        )
    tol, atol, seed = opts.tol, opts.atol, opts.seed
    sb = None
    if method != "generic" and domain == "sphere":
        sb = _pairwise(model, task, method, t0, budget)
    elif method != "generic" and domain == "box":
        sb = _box_structured(model, task, method, blo, bhi, tol, atol, max_pieces, t0, budget)
    if isinstance(sb, BracketResult):
        return sb
    if sb is not None:
        return _structured_result(model, task, sb, blo, bhi, P, seed, tol, atol, t0, budget)
    return _generic_bracket(model, task, blo, bhi, P, opts, t0, budget)


def _checked_inputs(model, task, lo, hi, seed, points):
    """The task, model, domain, box, seed and points checked in that order: (domain, blo, bhi,
    P) with the (T, d) float64 box and the extra points (None when not given)."""
    _check_task(task)
    _check_model(model)
    domain = _check_domain(task)
    T, d = task.T, task.d
    blo, bhi = _domain_box(task, lo, hi)
    check_seed(seed, 2**63 - 1, must="an integer from 0 to 2**63 - 1")
    P = _points_array(points, T, d)
    return domain, blo, bhi, P


def _bad_weights(bad_w: str, t0, budget) -> BracketResult:
    """NaN/inf weights: +inf and the reason, never a finite bound."""
    return BracketResult(
        math.inf,
        math.inf,
        None,
        seconds=time.perf_counter() - t0,
        reason=bad_w,
        stop="unsound-input",
        unsound_input=True,
        extra={"budget": budget},
    )


def _not_structured(why: str, t0, budget) -> BracketResult:
    """No bound under ``method="structured"``: no structured bracket applies (``why``)."""
    return BracketResult(
        None,
        None,
        None,
        seconds=time.perf_counter() - t0,
        reason=f"the structured bracket does not apply: {why}",
        method="structured",
        extra={"budget": budget},
    )


def _box_structured(model, task, method, blo, bhi, tol, atol, max_pieces, t0, budget):
    """The structured brackets of a box domain, tried in turn: one layer of softmax retrieval
    heads, a separable ReLU read-out, the two-layer second-largest construction. The first
    that applies gives its StructuredBracket; when none does, None under ``method="auto"``
    (branch-and-bound follows) or a BracketResult with no bound and the reasons."""
    from .. import bracket_softmax as bs
    from . import relu as br

    stol = min(max(tol, 1e-9), 0.01)
    try:
        return bs.structured_bracket(model, task, blo, bhi, tol=stol, max_pieces=max_pieces)
    except bs.Unsupported as e:
        why = str(e)
    # a separable two-hidden-layer ReLU read-out against a max (HC-L9): its own structured
    # bracket, RELU_PIECES_FACTOR·max_pieces 1-D pieces
    try:
        return br.relu_bracket(
            model, task, blo, bhi, tol=stol, atol=atol, max_pieces=RELU_PIECES_FACTOR * max_pieces
        )
    except bs.Unsupported as e:
        why_relu = str(e)
    # InfoFlow's two-layer second-largest construction (IF-K1): its own structured bracket,
    # RELU_PIECES_FACTOR·max_pieces 1-D pieces
    try:
        return _kth(model, task, blo, bhi, stol, atol, RELU_PIECES_FACTOR * max_pieces)
    except bs.Unsupported as e:
        why_relu = f"{why_relu}; two-layer second-largest bracket: {e}"
    if method != "structured":
        return None
    return _not_structured(f"{why} (ReLU read-out bracket: {why_relu})", t0, budget)


def _kth(model, task, blo, bhi, tol, atol, max_pieces):
    """The two-layer second-largest bracket (:mod:`approxtheory.bounds.kth`), or Unsupported."""
    from ..bracket_softmax import Unsupported
    from .kth import kth_bracket

    if int(task.d) != 1:
        raise Unsupported("scalar tokens (d = 1) are needed")
    return kth_bracket(model, task, blo, bhi, tol=tol, atol=atol, max_pieces=max_pieces)


def _pairwise(model, task, method, t0, budget):
    """The pairwise-max bracket on the unit sphere (:mod:`approxtheory.bounds.pairwise`): its
    StructuredBracket, None where it does not apply under ``method="auto"`` (the sphere's
    branch-and-bound follows), or a BracketResult with no bound and the reason under
    ``method="structured"``."""
    from ..bracket_softmax import Unsupported
    from .pairwise import pairwise_bracket

    try:
        return pairwise_bracket(model, task)
    except Unsupported as e:
        if method != "structured":
            return None
        return _not_structured(f"the two-layer pairwise-max bracket: {e}", t0, budget)


def _budget_args(max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap):
    """The validated work budget: (max_splits, max_boxes, max_pieces, time_limit,
    wall_clock_cap), the deprecated ``time_limit`` turned into a box count and a safety net."""
    max_splits = pos_int("max_splits", max_splits)
    time_limit = _pos_seconds("time_limit", time_limit)
    wall_clock_cap = _pos_seconds("wall_clock_cap", wall_clock_cap)
    if max_boxes is not None:
        max_boxes = pos_int("max_boxes", max_boxes)
    elif time_limit is not None:
        max_boxes = max(1, math.ceil(BOXES_PER_SECOND * time_limit))
    else:
        max_boxes = 12000
    if time_limit is not None and wall_clock_cap is None:
        wall_clock_cap = TIME_LIMIT_CAP_FACTOR * time_limit
    max_pieces = pos_int("max_pieces", max_pieces)
    return max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap


def _check_options(method, tol, atol, batch, branch_candidates) -> None:
    if method not in _METHODS:
        raise ConfigError(f"method must be one of {', '.join(_METHODS)} (got {method!r})")
    if not (isinstance(tol, (int, float)) and tol >= 0):
        raise ConfigError(f"tol must be >= 0 (got {tol!r})")
    if not (isinstance(atol, (int, float)) and atol >= 0):
        raise ConfigError(f"atol must be >= 0 (got {atol!r})")
    if not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ConfigError(f"batch must be a positive integer (got {batch!r})")
    if not isinstance(branch_candidates, (int, np.integer)) or branch_candidates < 1:
        raise ConfigError(
            f"branch_candidates must be a positive integer (got {branch_candidates!r})"
        )


#: the input domains the bracket accepts (``task.domain``), for the error message
DOMAINS = {
    "box": "lo <= x(t)_k <= hi (bound propagation and branch-and-bound)",
    "sphere": "unit-norm tokens (the two-layer pairwise-max construction in closed form, else "
    "branch-and-bound over a box cover of the sphere)",
    **FINITE_DOMAINS,
}


def _check_domain(task) -> str:
    """The task's domain, when the bracket supports it; ConfigError naming those it does."""
    domain = getattr(task, "domain", "box")
    if domain not in DOMAINS:
        raise ConfigError(
            f"the certified bracket does not support the domain {domain!r} of "
            f"{type(task).__name__}; supported domains: "
            + "; ".join(f"{k}: {v}" for k, v in DOMAINS.items())
        )
    return domain


#: where :func:`bracket_reach` sends a box-domain construction to branch-and-bound: T <= 16 and
#: d <= 2 (it closes in seconds there), or a per-token read-out (causal heads) with T·d <= 64
#: (one affine form per token; exact at the root box for position-only attention)
REACH_T, REACH_D, REACH_TOKENS_N = 16, 2, 64
#: the sphere's reach: T·d <= 32 (IF-K2's T = 8, d = 4 cells)
REACH_SPHERE_N = 32


def bracket_reach(model, task, max_points: int = MAX_POINTS) -> tuple[str | None, str]:
    """Which bracket applies to this construction, cheaply (nothing is bounded): ``(route,
    why)`` with route ``"structured"`` (one layer of softmax retrieval heads, any T, or a
    separable two-hidden-layer ReLU read-out against a max, :mod:`approxtheory.bounds.relu`, or
    the two-layer pairwise-max construction on the unit sphere,
    :mod:`approxtheory.bounds.pairwise`),
    ``"enumeration"`` (a finite domain within ``max_points`` inputs), ``"generic"`` (box
    branch-and-bound within reach: see ``REACH_*``) or None, ``why`` then saying why not (an
    unsupported domain, a finite domain above the budget with its frontier, a box too large)."""
    from ..bracket_softmax import structured_reason

    domain = getattr(task, "domain", "box")
    T, d = int(task.T), int(task.d)
    if domain in FINITE_DOMAINS:
        from .finite import domain_size, frontier_T

        N = domain_size(task)
        if N <= max_points:
            return "enumeration", f"exhaustive enumeration of the {N} inputs"
        return None, (
            f"not certified within the budget: the {domain} domain has d^T = {d}^{T} = {N} "
            f"inputs, above the enumeration budget of {max_points} (certified frontier at "
            f"d = {d}: T <= {frontier_T(d, max_points)}); search-based above it"
        )
    if domain not in DOMAINS:
        return None, (
            f"not computed: the certified bracket does not support the {domain} domain "
            f"(supported: {', '.join(DOMAINS)})"
        )
    if domain == "sphere":
        from .pairwise import pairwise_reason

        if pairwise_reason(model, task) is None:
            return (
                "structured",
                "a two-layer pairwise-max construction (softmax deficits per layer)",
            )
        if T * d <= REACH_SPHERE_N:
            return "generic", "branch-and-bound over a box cover of the sphere"
        return None, (
            f"not computed: the certified bracket on the unit sphere is computed for T·d <= "
            f"{REACH_SPHERE_N} (here T={T}, d={d}); search-based"
        )
    if structured_reason(model, task) is None:
        return "structured", "one layer of softmax retrieval heads"
    from .relu import relu_reason

    if domain == "box" and relu_reason(model, task) is None:
        return "structured", "a separable ReLU read-out against a max (1-D pieces)"
    from .kth import kth_reason

    if domain == "box" and d == 1 and kth_reason(model, task) is None:
        return "structured", "a two-layer second-largest construction (1-D pieces in x_(2))"
    tokens = getattr(getattr(model, "cfg", None), "readout", "cls") == "tokens"
    if (T <= REACH_T and d <= REACH_D) or (tokens and T * d <= REACH_TOKENS_N):
        return "generic", "bound propagation with branch-and-bound"
    return None, (
        f"not computed: the certified bracket is computed for one layer of softmax retrieval "
        f"heads at any T, else for box domains with T <= {REACH_T} and d <= {REACH_D} (T·d <= "
        f"{REACH_TOKENS_N} with a per-token read-out), finite domains of at most {max_points} "
        f"inputs (here T={T}, d={d}, {domain} domain)"
    )


def _check_model(model) -> None:
    if not (callable(model) and hasattr(model, "eval")):
        raise ConfigError(
            f"model must be a torch module such as approxtheory.model.Transformer (got "
            f"{type(model).__name__})"
        )


def _domain_box(task, lo, hi):
    """The (T, d) float64 box: the task's domain, or ``lo``/``hi`` inside it."""
    T, d = task.T, task.d
    dlo = task.lo if lo is None else lo
    dhi = task.hi if hi is None else hi
    try:
        blo = np.broadcast_to(np.asarray(dlo, dtype=np.float64), (T, d)).copy()
        bhi = np.broadcast_to(np.asarray(dhi, dtype=np.float64), (T, d)).copy()
    except (TypeError, ValueError):
        raise ConfigError(f"lo and hi must be scalars or arrays of shape ({T}, {d})") from None
    if not (np.isfinite(blo).all() and np.isfinite(bhi).all()):
        raise ConfigError("the domain bounds lo and hi must be finite")
    if (blo > bhi).any():
        raise ConfigError(f"domain lo must be <= hi (got lo={dlo}, hi={dhi})")
    if (lo is not None or hi is not None) and ((blo < task.lo).any() or (bhi > task.hi).any()):
        raise ConfigError(f"lo/hi must lie inside the task's domain [{task.lo}, {task.hi}]")
    return blo, bhi


def _points_array(points, T: int, d: int):
    """The extra lower-bound inputs as an (n, T, d) float64 array (None when not given)."""
    P = None
    if points is not None:
        try:
            P = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigError(
                f"points must be an array of shape (n, {T}, {d}) or ({T}, {d}) of reals"
            ) from None
        if P.shape == (T, d):
            P = P[None]
        if P.ndim != 3 or P.shape[1:] != (T, d):
            raise ConfigError(
                f"points must have shape (n, {T}, {d}) or ({T}, {d}), the task's (T, d) "
                f"(got {P.shape})"
            )
        if not np.isfinite(P).all():
            raise ConfigError("points must be finite (got NaN or inf)")
    return P


def _budget_record(max_splits, max_boxes, max_pieces, time_limit, wall_clock_cap) -> dict:
    budget = {"max_splits": max_splits, "max_boxes": max_boxes, "max_pieces": max_pieces}
    if time_limit is not None:
        budget["time_limit_deprecated"] = time_limit
    if wall_clock_cap is not None:
        budget["wall_clock_cap"] = wall_clock_cap
    return budget


@dataclass(frozen=True)
class _SearchOpts:
    """The branch-and-bound's validated stopping and branching options."""

    max_splits: int
    max_boxes: int
    wall_clock_cap: float | None
    tol: float
    atol: float
    batch: int
    branch_candidates: int
    seed: int


def _generic_bracket(model, task, blo, bhi, P, opts: _SearchOpts, t0, budget) -> BracketResult:
    """The generic path of :func:`upper_bracket`: bound propagation with branch-and-bound."""
    T, d = task.T, task.d
    _require_forms(model, 1, T, d, f"upper_bracket's affine forms on the (T={T}, d={d}) box")
    # a local generator: the caller's global torch RNG state is left alone (this draws the
    # stream torch.manual_seed(seed) gave the global one before, so results are unchanged)
    gen = torch.Generator().manual_seed(int(opts.seed))
    rng = np.random.default_rng(opts.seed)
    model.eval()
    low = _Lower(model, task)
    blo_t, bhi_t = torch.from_numpy(blo), torch.from_numpy(bhi)
    X0, e0 = _initial_points(task, low, blo, bhi, P, gen, rng)
    res: dict[str, Any] = dict(method="", boxes=0, splits=0)
    if low.nonfinite:
        return _unsound_eval(low, res, t0, "", budget)
    try:
        ctx = _Ctx(model, task)
    except _Unsupported as e:  # no lower bound is claimed before an input was evaluated
        return _unsupported(low, e, t0, "", low.value if low.X is not None else None)
    res["method"] = ctx.method
    if e0 is not None and X0 is not None:  # X0 is set whenever e0 is
        top = torch.argsort(e0, descending=True)[:8]
        low.ascend(X0[top], blo_t.expand(len(top), T, d), bhi_t.expand(len(top), T, d))
    try:
        ub0 = _bound_boxes(ctx, blo_t[None], bhi_t[None])
        _refine_lower(ctx, low, gen, blo_t[None], bhi_t[None], steps=60, n_starts=16)
        if low.nonfinite:
            return _unsound_eval(low, res, t0, ctx.method, budget)
    except _Unsupported as e:
        return _unsupported(low, e, t0, ctx.method, low.value)
    res["boxes"] = 1
    return _branch_and_bound(ctx, low, gen, (blo_t, bhi_t, ub0), res, opts, t0, budget)


def _unsupported(low, e, t0, method, lower) -> BracketResult:
    """No bound: the model has a layer the bound propagation does not support (``e``)."""
    return BracketResult(
        None,
        lower,
        None if low.X is None else low.X.numpy(),
        seconds=time.perf_counter() - t0,
        reason=str(e),
        method=method,
    )


def _initial_points(task, low, blo, bhi, P, gen, rng):
    """The first lower-bound inputs and their errors: the centre, random points, the task's
    structured inputs and the given points (errors None when the target is not evaluable)."""
    T, d = task.T, task.d
    blo_t, bhi_t = torch.from_numpy(blo), torch.from_numpy(bhi)
    X0 = None
    try:
        starts = [
            torch.from_numpy(0.5 * (blo + bhi))[None],
            blo_t + (bhi_t - blo_t) * torch.rand(256, T, d, dtype=_DT, generator=gen),
        ]
        if getattr(task, "domain", "box") in ("box", "sphere"):
            Xs = torch.from_numpy(np.clip(task.structured(rng, max_n=256), blo, bhi))
            starts.append(Xs)
        if P is not None:
            Pt = torch.from_numpy(P)
            starts.append(torch.maximum(torch.minimum(Pt, bhi_t), blo_t))
        X0 = torch.cat(starts)
        e0 = low.eval(X0)
    except Exception:  # noqa: BLE001  (the target may not be evaluable)
        e0 = None
    return X0, e0


def _box_ub(L, U):
    return torch.maximum(U, -L).amax(-1)  # (B,)


def _bound_boxes(ctx, Lo, Hi):
    """Upper bounds of the error on the boxes (B,). On the unit sphere each box is first
    shrunk, in place, to the hull of its part of the sphere, and a box that misses the sphere
    gets -inf (no input there: it is pruned)."""
    feas = None
    if getattr(ctx.task, "domain", "box") == "sphere":
        from .sphere import shrink_to_sphere

        Ls, Hs, feas = shrink_to_sphere(Lo, Hi)
        Lo.copy_(Ls)
        Hi.copy_(Hs)
    with torch.no_grad():
        L, U = ctx.bounds(Lo, Hi)
    ub = torch.nan_to_num(_box_ub(L, U), nan=math.inf)
    if feas is not None:
        ub = torch.where(feas, ub, torch.full_like(ub, -math.inf))
    return ub


def _refine_lower(ctx, low, gen, Lb, Hb, steps=40, n_starts=8):
    """Evaluate witnesses of the bound on these boxes (and jittered copies), then ascend
    from the best starts."""
    starts, slo, shi = (
        [0.5 * (Lb + Hb), Lb + (Hb - Lb) * torch.rand(Lb.shape, dtype=_DT, generator=gen)],
        [Lb, Lb],
        [Hb, Hb],
    )
    if ctx.coupled or not ctx.crown:
        with torch.no_grad():
            Xw = ctx.bounds(Lb, Hb, want_witness=True)[2]
        if Xw is not None:
            reps = len(Xw) // len(Lb)
            wl, wh = Lb.repeat(reps, 1, 1), Hb.repeat(reps, 1, 1)
            for k in range(4):
                jit = 0.0 if k == 0 else 0.02 * 0.3 ** (k - 1)
                Xj = Xw + jit * (wh - wl) * torch.randn(Xw.shape, dtype=_DT, generator=gen)
                starts.append(torch.maximum(torch.minimum(Xj, wh), wl))
                slo.append(wl)
                shi.append(wh)
    Xs, Ls, Hs = torch.cat(starts), torch.cat(slo), torch.cat(shi)
    e = low.eval(Xs)
    top = torch.argsort(e, descending=True)[:n_starts]
    low.ascend(Xs[top], Ls[top], Hs[top], steps=steps)


def _stop_reason(upper, heap, low, res, opts: _SearchOpts, t0) -> str | None:
    """Why the search stops now (None: it goes on), the checks in their order of precedence."""
    max_splits, max_boxes, wall_clock_cap = opts.max_splits, opts.max_boxes, opts.wall_clock_cap
    if upper <= opts.atol or (low.value > 0 and upper <= (1 + opts.tol) * low.value) or not heap:
        return "converged"
    if not math.isfinite(upper) and res["splits"] >= max_splits:
        return "budget exhausted without a finite bound"
    if res["splits"] >= max_splits:
        return f"split budget ({max_splits}) spent"
    if res["boxes"] >= max_boxes:
        return f"box budget ({max_boxes}) spent"
    if low.nonfinite:
        return "unsound-input"
    if wall_clock_cap is not None and time.perf_counter() - t0 > wall_clock_cap:
        return "exhausted-by-time"
    return None


@dataclass
class _Round:
    """One round's popped boxes and their candidate children (before they are bounded)."""

    nb: int
    kc: int
    Lo: torch.Tensor
    Hi: torch.Tensor
    smear: Any
    key: torch.Tensor
    cand: torch.Tensor
    mid: torch.Tensor
    Lc: torch.Tensor
    Hc: torch.Tensor


def _children(ctx, gen, items, branch_candidates) -> _Round:
    """Children of every popped box for each of its candidate split coordinates."""
    nb = len(items)
    T, d = items[0][2].shape
    ndim = T * d
    Lo = torch.stack([it[2] for it in items])  # (nb, T, d)
    Hi = torch.stack([it[3] for it in items])
    width = (Hi - Lo).reshape(nb, ndim)
    with torch.no_grad():
        sp, smear = ctx.split_points(Lo, Hi)
    # the generic path ranks its candidates by the split heuristic: fewer are enough
    kc = min(branch_candidates if smear is None else min(branch_candidates, 2), ndim)
    key = width if smear is None else smear
    cand = torch.argsort(
        key
        + 1e-9
        * key.amax(-1, keepdim=True).clamp_min(1e-300)
        * torch.rand(nb, ndim, dtype=_DT, generator=gen),
        -1,
        descending=True,
    )[:, :kc]  # (nb, kc)
    # children for every candidate split: (nb, kc, 2)
    Lc = Lo.reshape(nb, 1, 1, ndim).repeat(1, kc, 2, 1)
    Hc = Hi.reshape(nb, 1, 1, ndim).repeat(1, kc, 2, 1)
    mid = sp.reshape(nb, ndim).gather(1, cand)
    ar = torch.arange(nb)[:, None].expand(nb, kc)
    ak = torch.arange(kc)[None, :].expand(nb, kc)
    Hc[ar, ak, 0, cand] = mid
    Lc[ar, ak, 1, cand] = mid
    Lc = Lc.reshape(-1, T, d)
    Hc = Hc.reshape(-1, T, d)
    return _Round(nb, kc, Lo, Hi, smear, key, cand, mid, Lc, Hc)


def _best_children(r: _Round, items, ub):
    """Per popped box, the candidate split whose children bound lowest: (Lc, Hc, ubc)."""
    nb, kc, Lo, Hi, smear, key, cand, mid = r.nb, r.kc, r.Lo, r.Hi, r.smear, r.key, r.cand, r.mid
    T, d = Lo.shape[1:]
    ndim = T * d
    score = ub.amax(-1) + 1e-3 * ub.clamp_min(-1e300).sum(-1)  # -inf: a box off the sphere
    if smear is not None:  # near-ties go to the coordinate the heuristic prefers
        pub = torch.tensor([-it[0] for it in items], dtype=_DT)[:, None]
        pub = torch.where(torch.isfinite(pub), pub, ub.amax(-1))
        score = score - 0.02 * pub * key.gather(1, cand).clamp_min(0.0)
    # a split at an end of the coordinate's range (zero width) makes no progress
    inside = (
        (mid > Lo.reshape(nb, ndim).gather(1, cand))
        & (mid < Hi.reshape(nb, ndim).gather(1, cand))
        & (key.gather(1, cand) >= 0)
    )
    score = torch.where(
        inside | ~inside.any(-1, keepdim=True), score, torch.full_like(score, math.inf)
    )
    best = score.argmin(-1)  # (nb,)
    Lc = r.Lc.reshape(nb, kc, 2, T, d)[torch.arange(nb), best]  # (nb, 2, T, d)
    Hc = r.Hc.reshape(nb, kc, 2, T, d)[torch.arange(nb), best]
    ubc = ub[torch.arange(nb), best]  # (nb, 2)
    return Lc, Hc, ubc


def _branch_and_bound(ctx, low, gen, root, res, opts: _SearchOpts, t0, budget) -> BracketResult:
    """Split the boxes of largest bound, ``opts.batch`` per round, until a stop reason holds."""
    blo_t, bhi_t, ub0 = root
    T, d = blo_t.shape
    heap: list[tuple[float, int, torch.Tensor, torch.Tensor]] = []  # (-ub, counter, lo, hi)
    counter = 0
    pruned_max = -math.inf
    heapq.heappush(heap, (-float(ub0[0]), counter, blo_t, bhi_t))
    reason = None
    rounds = 0
    while True:
        open_max = -heap[0][0] if heap else -math.inf
        upper = max(open_max, pruned_max)
        reason = _stop_reason(upper, heap, low, res, opts, t0)
        if reason is not None:
            break
        rounds += 1
        nb = min(opts.batch, len(heap), opts.max_splits - res["splits"])
        items = [heapq.heappop(heap) for _ in range(nb)]
        r = _children(ctx, gen, items, opts.branch_candidates)
        try:
            ub = _bound_boxes(ctx, r.Lc, r.Hc).reshape(nb, r.kc, 2)
        except _Unsupported as e:
            return _unsupported(low, e, t0, ctx.method, low.value)
        res["boxes"] += nb * r.kc * 2
        Lc, Hc, ubc = _best_children(r, items, ub)
        res["splits"] += nb
        # lower bound: centres of the children, witnesses and ascent in the worst boxes
        low.eval((0.5 * (Lc + Hc)).reshape(-1, T, d))
        if rounds % 4 == 1:
            order = torch.argsort(ubc.reshape(-1), descending=True)[:4]
            _refine_lower(
                ctx, low, gen, Lc.reshape(-1, T, d)[order], Hc.reshape(-1, T, d)[order], steps=20
            )
        for i in range(nb):
            for s in range(2):
                u = float(ubc[i, s])
                if u <= low.value:
                    pruned_max = max(pruned_max, u)
                else:
                    counter += 1
                    heapq.heappush(heap, (-u, counter, Lc[i, s], Hc[i, s]))
        # boxes already in the heap below the new lower bound: drop lazily
        if heap and len(heap) > 4096:
            keep = [it for it in heap if -it[0] > low.value]
            for it in heap:
                if -it[0] <= low.value:
                    pruned_max = max(pruned_max, -it[0])
            heap = keep
            heapq.heapify(heap)
    open_max = -heap[0][0] if heap else -math.inf
    upper = max(open_max, pruned_max)
    return _search_result(low, res, ctx, upper, reason, len(heap), rounds, t0, budget)


def _search_result(low, res, ctx, upper, reason, n_open, rounds, t0, budget) -> BracketResult:
    """The branch-and-bound's result once it stopped (``n_open`` boxes still open)."""
    conv = reason == "converged"
    if low.nonfinite:
        return _unsound_eval(low, res, t0, ctx.method, budget)
    if not math.isfinite(upper):
        if upper == -math.inf:  # every box infeasible cannot happen; be safe
            upper = math.inf
        return BracketResult(
            None,
            *_search_record(low, res, n_open, t0),
            "no finite bound within the budget: " + str(reason),
            ctx.method,
            stop=str(reason),
        )
    upper = upper * (1 + 1e-12) + _TINY
    return BracketResult(
        upper,
        *_search_record(low, res, n_open, t0),
        None,
        ctx.method,
        conv,
        reason,
        extra={"rounds": rounds, "budget": budget},
        reproducible=reason != "exhausted-by-time",
    )


def _search_record(low, res, n_open, t0) -> tuple[float, Any, int, int, int, float]:
    """The search's fields of its result, in BracketResult's order: (lower, witness, boxes,
    splits, open_boxes, seconds)."""
    witness = None if low.X is None else low.X.numpy()
    return low.value, witness, res["boxes"], res["splits"], n_open, time.perf_counter() - t0


def _unsound_eval(low, res, t0, method, budget) -> BracketResult:
    """The model (or target) gave NaN/inf at an evaluated input: +inf, never a finite bound."""
    return BracketResult(
        math.inf,
        math.inf,
        None if low.X is None else low.X.numpy(),
        res.get("boxes", 0),
        res.get("splits", 0),
        0,
        time.perf_counter() - t0,
        f"the model or target is NaN/inf at {low.nonfinite} evaluated input(s) (witness)",
        method,
        stop="unsound-input",
        unsound_input=True,
        extra={"budget": budget},
    )


def _structured_result(model, task, sb, blo, bhi, P, seed, tol, atol, t0, budget):
    """BracketResult of the structured bracket: the lower side evaluates the model at the
    bracket's worst configurations, the given points and random inputs, then ascends."""
    T, d = blo.shape
    model.eval()
    low = _Lower(model, task)
    gen = torch.Generator().manual_seed(int(seed))
    blo_t, bhi_t = torch.from_numpy(blo), torch.from_numpy(bhi)
    starts = [torch.from_numpy(0.5 * (blo + bhi))[None]]
    if sb.witnesses:
        starts.append(torch.from_numpy(np.stack(sb.witnesses)))
    starts.append(blo_t + (bhi_t - blo_t) * torch.rand(16, T, d, dtype=_DT, generator=gen))
    try:  # the task's structured inputs (vertices, near-ties) where it has them
        Xs = task.structured(np.random.default_rng(seed), max_n=256)
        starts.append(torch.from_numpy(np.clip(np.asarray(Xs, dtype=np.float64), blo, bhi)))
    except Exception:  # noqa: BLE001  (optional: only more starts)
        pass
    if P is not None:
        starts.append(torch.maximum(torch.minimum(torch.from_numpy(P), bhi_t), blo_t))
    X0 = torch.cat(starts)
    e0 = low.eval(X0)
    if not low.nonfinite and not sb.stop.startswith("unsound"):
        top = torch.argsort(e0, descending=True)[:4]
        low.ascend(X0[top], blo_t.expand(len(top), T, d), bhi_t.expand(len(top), T, d), 20)
    res = {"boxes": sb.pieces, "splits": 0}
    if low.nonfinite or sb.stop.startswith("unsound"):
        if not low.nonfinite:
            low.nonfinite = 1
        return _unsound_eval(low, res, t0, "structured", budget)
    upper = float(sb.upper)
    # the model's own evaluation differs from the exact function by its dtype's round-off
    eps = _roundoff_eps(model)
    if upper < low.value - 1e3 * eps * max(1.0, low.value):
        # a sound bound is never below an evaluated error (the model's float64 round-off is
        # ~1e-15 relative): this is a bug, and the result says so instead of a number
        return BracketResult(
            None,
            low.value,
            None if low.X is None else low.X.numpy(),
            sb.pieces,
            seconds=time.perf_counter() - t0,
            reason=f"internal check failed: the structured bound {upper:.17g} is below the "
            f"error {low.value:.17g} at an evaluated input (no bound is given)",
            method="structured",
            stop="self-check failed",
            extra={"budget": budget},
        )
    upper = max(upper, low.value)
    conv = upper <= atol or (low.value > 0 and upper <= (1 + tol) * low.value)
    return BracketResult(
        upper,
        low.value,
        None if low.X is None else low.X.numpy(),
        sb.pieces,
        0,
        0,
        time.perf_counter() - t0,
        None,
        "structured",
        conv,
        sb.stop if len(sb.heads) <= 1 else sb.stop + " (per head; the heads' suprema are added)",
        extra={"heads": sb.heads, "classes": sb.classes, "budget": budget},
    )
