"""Checks of arXiv 2510.06662 (HC-*).

Every passing check declares mutants (``@check(..., mutants=...)``): broken variants of what it
checks (a construction with a perturbed weight or a missing unit, a formula with a changed
constant). Under ``ctx.mutant`` a check runs its normal logic on the broken variant; formulas are
always read from the catalogue (``claim(id).expr``) and a formula mutant edits that expression,
never the decision rule. Memoised measurements take the mutant among their arguments.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.constructions import build
from approxtheory.measure import errors, fit_rate

from ._core import (
    Context,
    Verdict,
    check,
    construction_grid,
    experiment_rows,
    memo,
    not_checkable,
    not_run,
    slope_row,
)
from ._gate import TRAINED_NMSE, PaperMagnitude, training_gate
from ._results import active_results, results_schema

# tolerance on fitted exponents (rate criteria): the interval must lie within this of the
# predicted exponent on the stated side
RATE_TOL = 0.1

not_checkable(
    "HC-TR1",
    reason="existential: the remark asserts that Heaviside-activation "
    "networks can match the lower bound but gives no construction to build or measure",
)
not_checkable(
    "HC-TR2",
    reason="the norm-growth condition is garbled in the source (O(T^(1/ε)) or "
    "O(T/ε)) and the remark gives no construction; nothing concrete to build",
)


def _fit_ok(fit, predicted: float, side: str, tol: float = RATE_TOL) -> bool:
    """The rate criterion: the whole interval lies at or below (``side='below'``), at or above
    (``'above'``) or within (``'within'``) ``tol`` of the predicted exponent."""
    if side == "below":
        return fit.ci_high <= predicted + tol
    if side == "above":
        return fit.ci_low >= predicted - tol
    return predicted - tol <= fit.ci_low and fit.ci_high <= predicted + tol


def _ckey(cid: str, names: tuple | None = None) -> tuple:
    """A memo key for what the catalogue currently says about ``cid`` (its expressions ``names``,
    all by default, and its regime): a memoised measurement that reads the claim while it runs
    takes this among its arguments, so that a replaced claim (a test's planted false claim) is
    not served a cached result (``memo`` itself keys on verify's claim-mutant override)."""
    c = claim(cid)
    ex: list[tuple[str, Any]] = list(dict.items(c.expressions))
    # (dict.items, not the mapping's own: the key is not marked as a read of the formulas)
    return (
        cid,
        tuple((k, sp.srepr(v)) for k, v in ex if names is None or k in names),
        tuple(sp.srepr(r.expr) for r in c.regime),
    )


# ------------------------------------------------------------------------------------ HC-L1
@check(
    "HC-L1",
    mutants={
        "topk-sum": "the selector returns the sum of the two smallest entries "
        "(a top-k sum instead of the k-th value)"
    },
)
def min_is_lipschitz(ctx: Context, cid):
    """Lemma 1's key step: u -> min_{t in S} u_t is 1-Lipschitz in the sup-norm."""
    rng = np.random.default_rng(ctx.seed)
    n = ctx.pick(20000, 200000)
    U = rng.uniform(0, 1, (n, 16))
    V = U + rng.uniform(-0.1, 0.1, (n, 16)) * (rng.uniform(size=(n, 1)) < 0.5)
    V[: n // 4] = U[: n // 4] + rng.choice([-0.05, 0.05], (n // 4, 1))  # shifts: equality case

    def sel(A):
        if ctx.is_mutant("topk-sum"):
            return np.sort(A, axis=1)[:, :2].sum(1)
        return A.min(1)

    ratio = np.abs(sel(U) - sel(V)) / np.maximum(np.abs(U - V).max(1), 1e-300)
    worst = float(ratio.max())
    ok = worst <= 1 + 1e-12
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"max |min u - min v| / ||u - v||_inf = {worst:.6f} (<= 1 required)",
        covered=f"{n} random pairs in [0,1]^16, a quarter of them constant shifts",
        measured=worst,
        claimed=1.0,
        scope="partial: the 1-Lipschitz step u -> min_S u; the Stone-Weierstrass, "
        "bump and diffeomorphism steps are existential and not checked",
    )


# ------------------------------------------------------------------------------------ HC-L2
@check(
    "HC-L2",
    mutants={
        "max-for-min": "Y = max(x_t, v_m) instead of min(x_t, v_m)",
        "rank-off-by-one": "v_m taken as the (m+1)-th largest value",
    },
)
def order_statistics(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    T, m = 8, 2
    n = ctx.pick(200, 2000)
    c = claim("HC-L2")
    xs, vs, ws = (c.symbol(k) for k in ("x_t", "v_m", "w_m"))
    y_expr, z_expr = c.expr("Y"), c.expr("one_minus_Z")
    if ctx.is_mutant("max-for-min"):
        y_expr = y_expr.replace(sp.Min, sp.Max)
    fy, fz = sp.lambdify([xs, vs], y_expr, "numpy"), sp.lambdify([xs, ws], z_expr, "numpy")
    rank = m + 1 if ctx.is_mutant("rank-off-by-one") else m
    worst = 0.0
    for _ in range(n):
        x = rng.uniform(0, 1, T)
        if rng.uniform() < 0.3:
            x[rng.integers(0, T, 3)] = x[0]  # ties
        srt = np.sort(x)
        v, w = srt[-rank], srt[m - 1]
        for t in range(T):
            subsets = [A for A in itertools.combinations(range(T), m) if t in A]
            Y = max(min(x[u] for u in A) for A in subsets)
            Z = max(min(1 - x[u] for u in A) for A in subsets)
            worst = max(worst, abs(Y - float(fy(x[t], v))), abs((1 - Z) - float(fz(x[t], w))))
    ok = worst < 1e-12
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"brute force over all m-subsets against Y = min(x_t, v_m) and 1 - Z = "
        f"max(x_t, w_m): max deviation {worst:.2e} (< 1e-12 required)",
        covered=f"{n} random sequences, T = 8, m = 2, with ties",
        measured=worst,
        claimed=0.0,
        scope="full",
    )


# ------------------------------------------------------------------------------------ HC-L3
def _stable_softmax_mix(expr, args):
    """A numpy evaluator of an expression of the form Σ_k e^{a_k} y_k / Σ_k e^{a_k} (the
    catalogue's smooth selector) that does not overflow: every exp(a_k) is replaced by
    exp(a_k - shift) with shift = max_k a_k (the ratio is unchanged). The exponents a_k are read
    off the expression itself."""
    exps = sorted(expr.atoms(sp.exp), key=sp.default_sort_key)
    shift = sp.Symbol("shift_")
    stable = expr.xreplace({e: sp.exp(e.args[0] - shift) for e in exps})
    f = sp.lambdify(list(args) + [shift], stable, "numpy")
    parts = [sp.lambdify(list(args), e.args[0], "numpy") for e in exps]

    def ev(*vals):
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.max(np.stack(np.broadcast_arrays(*[p(*vals) for p in parts])), axis=0)
            return f(*vals, a)

    return ev


def _l3_inputs(T, m, rng, n_rand):
    X = rng.uniform(0, 1, (n_rand, T))
    X[: n_rand // 4, 1] = X[: n_rand // 4, 0] + 1e-3  # near-ties
    fam = []
    deltas = np.concatenate([np.logspace(-6, 0, 61), -np.logspace(-6, 0, 61)])
    for c0 in np.linspace(0, 1, 11):
        for dl in deltas:
            x = np.full(T, c0)  # every middle rank tied at c0
            x[0] = np.clip(c0 + dl, 0, 1)
            fam.append(x)
            y = np.full(T, c0)  # extremes away, middle tied
            y[1 : m - 1] = 1.0
            y[m - 1 : 2 * m - 2] = 0.0
            y[0] = np.clip(c0 + dl, 0, 1)
            fam.append(y)
    return np.concatenate([X, np.array(fam)])


def _l3_errors(X, q, m, sel, fy, fz):
    srt = np.sort(X, axis=1)
    v, w = srt[:, -m][:, None], srt[:, m - 1][:, None]
    Y, one_minus_Z = fy(*np.broadcast_arrays(X, v)), fz(*np.broadcast_arrays(X, w))
    xt = sel(q, 1 - one_minus_Z, Y, w, v)
    return np.abs(xt - X).max(1)


def _l3_rate(c3) -> float | None:
    """The exponent of q in the catalogue selector's error on its worst-case family (every middle
    rank tied: v_m = w_m = c0, the token at c0 + δ, so Y = c0 and 1 - Z = c0 + δ), derived from
    the catalogue's x_tilde by scaling [derived]: the p that makes every exponential's argument
    free of q under δ = u q^(-p), kept only when error(q, u q^(-p)) · q^p is then free of q
    (the sup over u is then a constant times q^(-p)). None when the formula admits no such
    power law (e.g. an error floor)."""
    q, Y, Z, v, w = (c3.symbol(x) for x in ("q", "Y", "Z", "v_m", "w_m"))
    c0 = sp.Rational(1, 2)
    u, pp = sp.symbols("u p_", positive=True)
    delta = sp.Symbol("delta_", positive=True)
    err = c3.expr("x_tilde").subs({Y: c0, Z: 1 - c0 - delta, v: c0, w: c0}) - (c0 + delta)
    scaled = err.subs(delta, u * q ** (-pp))
    conds = []
    for ex in scaled.atoms(sp.exp):
        a = sp.expand(ex.args[0])
        if a == 0 or not a.has(q):
            continue
        k = sp.simplify(q * sp.diff(sp.log(a), q))
        if k.has(q):
            return None
        conds.append(k)
    if not conds:
        return None
    sols = sp.solve(conds[0], pp)
    if len(sols) != 1:
        return None
    p0 = sols[0]
    rest = sp.simplify(scaled.subs(pp, p0) * q**p0)
    if rest.has(q) or rest == 0:
        return None
    return -float(p0)


@check(
    "HC-L3",
    mutants={
        "exp-sign": "the selector's weights e^{-q(.)²} (sign of q flipped)",
        "swap-v-w": "the weights compare 1 - Z with v_m and Y with w_m",
    },
)
def smooth_selector(ctx: Context, cid):
    """Uniform convergence of the smooth selector, searched adversarially: besides random
    sequences, families with every middle rank tied (v_m = w_m) and the token at distance δ from
    them, δ on a log grid and refined, where the error is largest (~ q^(-1/2))."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(ctx.seed)
    T, m = 16, 4
    c3, c2 = claim("HC-L3"), claim("HC-L2")
    syms = [c3.symbol(s) for s in ("q", "Z", "Y", "w_m", "v_m")]
    expr = c3.expr("x_tilde")
    q_s, v_s, w_s = c3.symbol("q"), c3.symbol("v_m"), c3.symbol("w_m")
    if ctx.is_mutant("exp-sign"):
        expr = expr.subs(q_s, -q_s)
    if ctx.is_mutant("swap-v-w"):
        expr = expr.xreplace({v_s: w_s, w_s: v_s})
    sel = _stable_softmax_mix(expr, syms)
    fy = sp.lambdify([c2.symbol("x_t"), c2.symbol("v_m")], c2.expr("Y"), "numpy")
    fz = sp.lambdify([c2.symbol("x_t"), c2.symbol("w_m")], c2.expr("one_minus_Z"), "numpy")
    X = _l3_inputs(T, m, rng, ctx.pick(400, 4000))
    qs = [10.0**k for k in range(1, 10)] if not ctx.full else [10.0**k for k in range(1, 12)]
    rows, witnesses = [], []
    for q in qs:
        e = _l3_errors(X, q, m, sel, fy, fz)
        i = int(e.argmax())
        best, wit = float(e[i]), X[i]
        # refine the tied-middle-rank family around the best distance found
        c0, dl = float(np.median(wit)), float(wit[0] - np.median(wit))
        if dl != 0:
            sgn = np.sign(dl)

            def neg(a, c0=c0, sgn=sgn, q=q):
                x = np.full((1, T), c0)
                x[0, 0] = np.clip(c0 + sgn * a, 0, 1)
                return -float(_l3_errors(x, q, m, sel, fy, fz)[0])

            r = minimize_scalar(
                neg,
                bounds=(abs(dl) / 3, min(3 * abs(dl), 1.0)),
                method="bounded",
                options={"xatol": 1e-12},
            )
            if -r.fun > best:
                best = -r.fun
                wit = np.full(T, c0)
                wit[0] = np.clip(c0 + np.sign(dl) * r.x, 0, 1)
        rows.append({"q": q, "sup_error": best})
        witnesses.append(wit.tolist())
    errs = [r["sup_error"] for r in rows]
    pos = [max(e, 1e-300) for e in errs]
    fit = fit_rate(qs, pos, seed=ctx.seed)
    head = fit_rate(qs[:4], pos[:4], seed=ctx.seed)
    tail = fit_rate(qs[-4:], pos[-4:], seed=ctx.seed)
    pred = _l3_rate(c3)
    decreasing = all(e2 < e1 for e1, e2 in zip(errs, errs[1:]))
    # convergence, with a rate: (i) the sup falls with q; (ii) the last decades decay as fast
    # as the first (an error floor bends the curve: the tail's slope rises towards 0); (iii) the
    # whole grid's slope interval lies within the rate derived from the catalogue's formula
    no_floor = tail.ci_high <= head.slope + RATE_TOL
    rate_ok = pred is not None and _fit_ok(fit, pred, "within")
    ok = decreasing and no_floor and rate_ok and all(math.isfinite(e) for e in errs)
    failed = (
        ([] if decreasing else ["the sup error does not fall at every step of q"])
        + (
            []
            if no_floor
            else [
                f"the decay flattens (an error floor): tail slope interval up to "
                f"{tail.ci_high:.3f} > head slope {head.slope:.3f} + {RATE_TOL}"
            ]
        )
        + (
            ["no power law in q can be derived from the catalogue's selector"]
            if pred is None
            else ([] if rate_ok else [f"the slope interval is not within {pred:g} ± {RATE_TOL}"])
        )
    )
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error over the searched inputs: {', '.join(f'{e:.2e}' for e in errs)} "
        f"at q = {', '.join(f'{q:g}' for q in qs)}; log-log slope {fit.slope:.3f} "
        f"[{fit.ci_low:.3f}, {fit.ci_high:.3f}], first four q {head.slope:.3f}, last four "
        f"{tail.slope:.3f} [{tail.ci_low:.3f}, {tail.ci_high:.3f}]; the rate derived from the "
        f"catalogue's x_tilde on the tied-middle-rank family is "
        f"{'q^' + format(pred, 'g') if pred is not None else 'none'} [derived] (criterion: "
        f"decreasing, no flattening: last-four interval at or below first-four slope + "
        f"{RATE_TOL}, and the whole interval within the derived rate ± {RATE_TOL}). The worst "
        "inputs tie every middle rank (v_m = w_m) with the token at distance δ ~ q^(-1/2): "
        "error δ/(1+e^(qδ²)), so the convergence is uniform but only at rate q^(-1/2)"
        + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"T = {T}, m = {m}: {len(X)} sequences per q (random, near-ties, "
        "tied-middle-rank families on a δ log grid, both signs) + bounded "
        "refinement of δ",
        measured=errs[-1],
        witness=witnesses[-1],
        rows=rows,
        slopes=[slope_row(fit, "sup error vs q", pred if pred is not None else float("nan"))],
        slack=math.nan,  # a convergence statement: no bound to have room against
        plot={
            "x": "q",
            "y": ["sup_error"],
            "title": "HC-L3 smooth selector",
            "xlabel": "q",
            "ylabel": "sup |x̃_q - x|",
        },
        scope=f"partial: the catalogue's selector on T = {T}, m = {m}, q in [{qs[0]:g}, "
        f"{qs[-1]:g}]: sup error over searched inputs (not a proof of the supremum) falling at "
        "the rate derived from the formula, with no error floor; other T, m and the "
        "uniformity in T are not tested",
    )


# ------------------------------------------------------------------------------------ HC-C1
@check(
    "HC-C1",
    mutants={
        "size-constant-5": "the size condition read as D1² + D2² <= T/5 "
        "(the reconstructed '501 T' misread)"
    },
)
def corollary_arithmetic(ctx: Context, cid):
    """Under D1² + D2² <= T/50 and D1 < D2, the proof needs k > gamma with gamma <= max(D1, D2)."""
    c = claim("HC-C1")
    T, D1s, D2s = c.symbol("T"), c.symbol("D1"), c.symbol("D2")
    # the size condition is the regime's condition on T (read from the claim: a claim mutant
    # that drops it states the corollary at every T, and the smallest T is then 1)
    sizes = [r.expr for r in c.regime if T in r.free_symbols]
    size = sizes[0] if sizes else None
    if size is not None and ctx.is_mutant("size-constant-5"):
        size = size.subs(T, 10 * T)  # T/50 -> T/5
    if size is not None:
        T_min = sp.solve(sp.Eq(size.lhs, size.rhs), T)[0]  # the smallest T the condition allows
        tmin = sp.lambdify([D1s, D2s], T_min, "math")
    else:
        tmin = lambda D1, D2: 1  # noqa: E731
    kf = sp.lambdify([T, D1s, D2s], c.expr("k"), "math")
    Dmax = ctx.pick(30, 80)
    worst = None
    ratio = math.inf  # the least k / max(D1, D2): the room the corollary's arithmetic has
    for D1 in range(1, Dmax):
        for D2 in range(D1 + 1, Dmax + 1):
            Tm = max(1, math.ceil(tmin(D1, D2)))  # k grows with T: the smallest T is worst
            kv = kf(Tm, D1, D2)
            margin = kv - D2
            ratio = min(ratio, kv / D2)
            if worst is None or margin < worst[0]:
                worst = (margin, D1, D2, Tm)
    assert worst is not None  # Dmax >= 30: the loops run
    ok = worst[0] > 0
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"k - max(D1, D2) >= {float(worst[0]):.3f} at the smallest allowed T "
        f"(worst at D1={worst[1]}, D2={worst[2]}, T={worst[3]}); > 0 required",
        covered=f"all 1 <= D1 < D2 <= {Dmax} at the smallest T with "
        f"{size if size is not None else 'no size condition (T >= 1)'}",
        measured=float(worst[0]),
        claimed=0.0,
        witness=list(worst[1:]),
        slack=float(ratio) if ok and math.isfinite(ratio) else None,
        scope="partial: the corollary's arithmetic k > max(D1, D2) under the size "
        "condition; the step gamma <= max(D1, D2) (loosely justified by the "
        "paper) and the two bounds it combines are not tested",
    )


# ------------------------------------------------------------------------------ HC-K1 cells
_K1_MUTATIONS = {
    # W_V scaled: the readout is 1.02 × the softmax average
    "value-scale": lambda c: c.model.attention(0).v.weight.data.mul_(1.02),
    # attention logits divided by T (a sequence-length normalisation bug)
    "logit-scale-1/T": lambda c: c.model.attention(0).q.weight.data.div_(c.task.T),
}


@memo
def _k1_cell(
    T: int, beta: float, gate: float, budget: int, seed: int, mutation: str | None = None
) -> dict:
    """One HC-K1 (max first half + min second half, D = 2) cell, measured adversarially."""
    c = build("hc_k1", T=T, beta=beta, gate=gate)
    if mutation is not None:
        _K1_MUTATIONS[mutation](c)
    m = c.measure(budget=budget, seed=seed)
    return {
        "T": T,
        "beta": beta,
        "gate": gate,
        "params": c.params,
        "sup_error": m["sup_error"],
        "claimed_bound": c.claimed_bound,
        "verdict": m["verdict"],
        "witness": m["witness"],
        "set_sizes": [len(S) for S in c.task.sets],
        "outer": [float(x) for x in c.task.outer_affine[0]],
    }


def _k1_rows(ctx, Ts, betas, gates, mutation=None):
    budget = ctx.pick(256, 2048)
    return [_k1_cell(T, b, g, budget, ctx.seed, mutation) for g in gates for T in Ts for b in betas]


# ------------------------------------------------------------------ one HC-K1 head, any |S|
_HEAD_MUTATIONS = {
    "value-scale": lambda m: m.attention(0).v.weight.data.mul_(1.02),
}


def _head_model(T: int, S: int, beta: float, gate: float):
    """One HC-K1 head (D = 1, f = identity, F_0 = identity, min over S = the first S positions,
    gate ``gate`` outside S): its output is the head's read-out z̃ and the task's target is
    min_S f, so the error is |z̃ - min_S f| over f-values in [0, 1]^T."""
    from approxtheory.constructions.headcount import build_hc_k1_model
    from approxtheory.tasks import GeneralizedRetrieval

    task = GeneralizedRetrieval(
        T,
        1,
        affine=([[1.0]], [0.0]),
        outer_affine=([1.0], 0.0),
        mode="min",
        sets=[list(range(S))],
    )
    return build_hc_k1_model(task, beta, gate), task


def _head_inputs(T: int, S: int, beta: float, rng) -> np.ndarray:
    """f-values for one head: every vertex class of {0, 1}^T (k ones in S, m ones outside; the
    head is symmetric within S and outside it, so one representative per class), a structured
    interior family (the in-set minimum a, k in-set tokens at excess b ~ 1/β, log(k+1)/β, the
    out-of-set tokens at 0, at a + 1/β or at 1) and uniform samples."""
    X = []
    for k in range(S + 1):
        for m in range(T - S + 1):
            x = np.zeros(T)
            x[:k] = 1.0
            x[S : S + m] = 1.0
            X.append(x)
    ks = sorted({int(k) for k in np.unique(np.geomspace(1, max(S - 1, 1), 8).round())})
    js = np.geomspace(0.5, 4.0, 13)
    for a in (0.0, 0.25, 0.5, 0.75, 1.0):
        for k in ks if S > 1 else [0]:
            bs = [j / beta for j in js] + [j * math.log(k + 1) / beta for j in (0.8, 1.0, 1.25)]
            for b in bs:
                for w in (0.0, max(a - 1 / beta, 0.0), min(a + 1 / beta, 1.0), 1.0):
                    x = np.ones(T)
                    x[0] = a
                    x[1 : 1 + k] = min(a + b, 1.0)
                    x[S:] = w
                    X.append(x)
    X.append(np.zeros(T))
    out = np.concatenate([np.array(X), rng.uniform(0, 1, (200, T))])
    return out[..., None]


@memo
def _head_cell(
    T: int, S: int, beta: float, gate: float, budget: int, seed: int, mutation: str | None = None
) -> dict:
    """The worst error found for one HC-K1 head: the largest over the inputs of
    :func:`_head_inputs` and an adversarial search (measure.sup_error, ``budget``). No claim is
    read here (the bounds are compared by the checks)."""
    from approxtheory.measure import sup_error

    model, task = _head_model(T, S, beta, gate)
    if mutation is not None:
        _HEAD_MUTATIONS[mutation](model)
    rng = np.random.default_rng([seed, T, S])
    X = _head_inputs(T, S, beta, rng)
    e = errors(model, task, X)
    i = int(e.argmax())
    best, wit, src = float(e[i]), X[i].ravel().tolist(), "structured"
    if budget:
        r = sup_error(model, task, budget=budget, seed=seed)
        if r.value > best:
            best, wit, src = float(r.value), np.asarray(r.witness).ravel().tolist(), "search"
    return {
        "T": T,
        "S": S,
        "beta": beta,
        "gate": gate,
        "sup_error": best,
        "witness": wit,
        "by": src,
    }


def _head_grid(ctx, Ts, fracs, betas, gates, mutation=None, budget=None):
    """Cells of :func:`_head_cell` over T, |S| = frac·T, β and the gate."""
    b = ctx.pick(0, 1024) if budget is None else budget
    return [
        dict(_head_cell(T, int(round(f * T)), beta, g, b, ctx.seed, mutation))
        for g in gates
        for T in Ts
        for f in fracs
        for beta in betas
    ]


def _head_bound(c, expr_name: str, subs: dict):
    """A per-head bound of claim ``c`` as a float function of the cell (the catalogue's
    expression, evaluated in float64; an overflow is +inf)."""
    e = c.expr(expr_name)
    names = sorted(x.name for x in e.free_symbols)
    f = sp.lambdify([c.symbol(x) for x in names], e, "math")

    def at(cell):
        vals = {k: cell[v] for k, v in subs.items() if k in names}
        try:
            return float(f(*[vals[x] for x in names]))
        except OverflowError:
            return math.inf

    return at


#: the sizes of S_i swept (the regime's extremes |S| = T/4 and larger sets)
S_FRACS = (0.25, 0.5, 0.75)


@check("HC-K1")
def k1_construction(ctx: Context, cid):
    """The paper's per-head bound (|S|-1)/(eβ) + T e^(-β) at the paper's gate (the catalogue's
    ``gate``, -1), one head of HC-K1 with |S| in {T/4, T/2, 3T/4} and several T; gate -2 for
    contrast (reported)."""
    c = claim(cid)
    paper_gate = float(c.expr("gate"))
    Ts = ctx.pick([8, 16, 32], [8, 16, 32, 64])
    betas = ctx.pick([10.0, 100.0, 1000.0], [3.0, 10.0, 30.0, 100.0, 300.0, 1e3])
    bound = _head_bound(c, "err_bound", {"S": "S", "T": "T", "beta": "beta"})
    rows = []
    for r in _head_grid(ctx, Ts, S_FRACS, betas, [paper_gate, -2.0]):
        b = bound(r)
        rows.append(
            {
                **{k: r[k] for k in ("gate", "T", "S", "beta", "sup_error")},
                "claimed_bound": b,
                "holds": r["sup_error"] <= b * (1 + 1e-9) + 1e-12,
                "witness": r["witness"],
            }
        )
    paper = [r for r in rows if r["gate"] == paper_gate]
    fixed = [r for r in rows if r["gate"] != paper_gate]
    bad = [r for r in paper if not r["holds"]]
    fixed_ok = all(r["holds"] for r in fixed)
    table = [{k: v for k, v in r.items() if k != "witness"} for r in rows]
    plot = {
        "x": "beta",
        "y": ["sup_error"],
        "bound": "claimed_bound",
        "group": "gate",
        "title": f"{cid}: one HC-K1 head (gate {paper_gate:g} vs -2)",
        "xlabel": "β",
        "ylabel": "sup error",
    }
    covered = (
        f"one HC-K1 head (D = 1, exact f), T in {Ts}, |S| in {{T/4, T/2, 3T/4}}, β in {betas}, "
        f"gates {paper_gate:g} (the paper's) and -2; per cell every vertex class of {{0,1}}^T, "
        "a structured interior family, 200 random inputs (+ an adversarial search on the full "
        "profile; the family reaches >= 98 % of it, tests/test_checks_headcount.py)"
    )
    if bad:
        r = max(bad, key=lambda r: r["sup_error"] / r["claimed_bound"])
        return Verdict(
            cid,
            "refuted",
            f"with the stated gate {paper_gate:g} the per-head error exceeds the bound in "
            f"{len(bad)}/{len(paper)} cells; worst {r['sup_error']:.3g} against the claimed "
            f"{r['claimed_bound']:.3g} (T = {r['T']}, |S| = {r['S']}, β = {r['beta']:g}): an "
            "out-of-set token with f = 0 ties with in-set tokens at f = 1, so the T e^{-β} "
            "term is wrong (the corrected bound as a function of the gate is HC-K1c). With "
            f"gate -2 the stated bound {'holds in every cell' if fixed_ok else 'still fails'}",
            covered=covered,
            measured=r["sup_error"],
            claimed=r["claimed_bound"],
            witness=r["witness"],
            rows=table,
            plot=plot,
            scope="partial: one head's read-out error against the stated per-head bound on a "
            "grid of (T, |S|, β) at the paper's gate; a refutation needs one cell",
        )
    return Verdict(
        cid,
        "consistent-empirical",
        f"the per-head error is within the stated bound at gate {paper_gate:g} in every cell",
        covered=covered,
        rows=table,
        plot=plot,
        scope="partial: one head's read-out error against the stated per-head bound on a grid "
        "of (T, |S|, β) at the paper's gate",
    )


@check(
    "HC-P2",
    mutants={
        "value-scale": "W_V scaled by 1.02 (the read-out is off by 2 %)",
        "gate-minus-1": "the heads built with the paper's gate -1 instead of the corrected -2",
    },
)
def p2_single_head(ctx: Context, cid):
    """The digest's P2 with the corrected gate: one HC-K1 head (exact f) at gate -2, where
    HC-K1c's bound is at most the stated (|S|-1)/(eβ) + T e^(-β) (read from HC-K1: HC-P2 has no
    formula of its own), over the digest's β in {10, 30, 100, 300, 1000} and T in {8, 32, 128}
    (quick: T <= 32), |S| in {T/2, T} (|S| = T: no out-of-set token, the gate plays no role).
    Criterion: (a) sup error <= the bound in every cell; (b) "scales like 1/β in the worst case":
    per (T, |S|) the log-log slope of the sup error in β has its interval within the bound's
    asymptotic exponent (-1) ± RATE_TOL, which an error floor and a faster decay both fail."""
    k1 = claim("HC-K1")
    gate = -1.0 if ctx.is_mutant("gate-minus-1") else -2.0
    mutation = "value-scale" if ctx.is_mutant("value-scale") else None
    Ts = ctx.pick([8, 32], [8, 32, 128])
    betas = [10.0, 30.0, 100.0, 300.0, 1000.0]
    bound = _head_bound(k1, "err_bound", {"S": "S", "T": "T", "beta": "beta"})
    rows = []
    for r in _head_grid(ctx, Ts, (0.5, 1.0), betas, [gate], mutation):
        b = bound(r)
        rows.append(
            {
                **{k: r[k] for k in ("T", "S", "beta", "sup_error")},
                "claimed_bound": b,
                "holds": r["sup_error"] <= b * (1 + 1e-9) + 1e-12,
            }
        )
    bad = [r for r in rows if not r["holds"]]
    fits, slopes, rate_bad = {}, [], []
    for T in Ts:
        for S in sorted({r["S"] for r in rows if r["T"] == T}):
            sub = [r for r in rows if r["T"] == T and r["S"] == S]
            pred = float(k1.asymptotic_exponent("beta", "err_bound", S=S, T=T))
            fit = fit_rate([r["beta"] for r in sub], [max(r["sup_error"], 1e-300) for r in sub])
            fits[(T, S)] = fit
            slopes.append(slope_row(fit, f"sup error vs β (T={T}, |S|={S})", pred))
            if not _fit_ok(fit, pred, "within"):
                rate_bad.append((T, S))
    ok = not bad and not rate_bad
    slack = min(r["claimed_bound"] / r["sup_error"] for r in rows if r["sup_error"] > 0)
    failed = ([f"bound exceeded in {len(bad)} cell(s)"] if bad else []) + (
        [f"sup error does not scale like 1/β at (T, |S|) = {rate_bad}"] if rate_bad else []
    )
    w = max(rows, key=lambda r: r["sup_error"] / r["claimed_bound"])
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"gate {gate:g}: sup error <= HC-K1's (|S|-1)/(eβ) + T e^(-β) in "
        f"{len(rows) - len(bad)}/{len(rows)} cells (largest sup/bound {1 / slack:.3f} at T = "
        f"{w['T']}, |S| = {w['S']}, β = {w['beta']:g}); slope in β per (T, |S|): "
        + ", ".join(
            f"({T}, {S}): {f.slope:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]"
            for (T, S), f in fits.items()
        )
        + f" (each interval within -1 ± {RATE_TOL}). At the paper's gate -1 with |S| < T the "
        "bound fails (HC-K1's verdict)" + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"one HC-K1 head (D = 1, exact f), gate {gate:g}, T in {Ts}, |S| in {{T/2, T}}, "
        f"β in {betas}; per cell every vertex class, a structured interior family, 200 random "
        "inputs (+ an adversarial search on the full profile)",
        measured=max(r["sup_error"] for r in rows),
        rows=rows,
        slopes=slopes,
        slack=slack,
        witness=None if ok else {"failed": failed},
        formula_note="reads HC-K1's err_bound: HC-P2 has no formula of its own in the catalogue",
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": f"{cid}: one HC-K1 head at the corrected gate",
            "xlabel": "β",
            "ylabel": "sup error",
        },
        scope="partial: the digest's P2 at the corrected gate -2 (where HC-K1c's bound is at "
        "most the stated one) on one head with |S| in {T/2, T}; at the paper's gate -1 the "
        "prediction fails for |S| < T (HC-K1)",
    )


@check(
    "HC-K1c",
    mutants={
        "paper-normalisation": "out-of-set weight not normalised by the minimiser's: "
        "(T-|S|) e^(βc) in place of (T-|S|) e^(β(1+c)) (the paper's slip)",
        "in-set-only": "the out-of-set term dropped: (|S|-1)/(eβ) alone",
    },
)
def k1_gate_bound(ctx: Context, cid):
    """The derived per-head bound as a function of the gate c, against one head's worst error
    (every vertex class of {0,1}^T, a structured interior family, random inputs and an
    adversarial search) over the regime's extremes: |S| in {T/4, T/2, 3T/4}, several T, a grid
    of c and β. Criterion: the bound holds in every cell, and at c = -2 the error decays in β at
    least as fast as the bound's asymptotic exponent (per (T, |S|), interval at or below it +
    RATE_TOL)."""
    kc = claim(cid)
    expr = kc.expr("err_bound")
    c_s = kc.symbol("c")
    if ctx.is_mutant("paper-normalisation"):
        expr = expr.subs(c_s, c_s - 1)
    if ctx.is_mutant("in-set-only"):
        expr = kc.expr("in_set")
    names = sorted(x.name for x in expr.free_symbols)
    bound_f = sp.lambdify([kc.symbol(x) for x in names], expr, "math")
    gates = ctx.pick([-1.0, -1.1, -1.5, -2.0], [-1.0, -1.02, -1.1, -1.25, -1.5, -2.0, -3.0])
    betas = ctx.pick([10.0, 100.0, 1000.0], [10.0, 30.0, 100.0, 300.0, 1000.0])
    Ts = ctx.pick([8, 16, 32], [8, 16, 32, 64])
    rows = []
    for r in _head_grid(ctx, Ts, S_FRACS, betas, gates):
        vals = {"S": r["S"], "T": r["T"], "beta": r["beta"], "c": r["gate"]}
        try:
            bound = float(bound_f(*[vals[x] for x in names]))
        except OverflowError:
            bound = math.inf
        rows.append(
            {
                **{k: r[k] for k in ("gate", "T", "S", "beta", "sup_error")},
                "claimed_bound": bound,
                "vacuous": bool(kc.is_vacuous(c=r["gate"])),
                "holds": r["sup_error"] <= bound * (1 + 1e-9) + 1e-12,
                "witness": r["witness"],
            }
        )
    viol = [r for r in rows if not r["holds"]]
    fits, slopes, rate_bad = {}, [], []
    for T in Ts:
        for S in sorted({r["S"] for r in rows if r["T"] == T}):
            sub = [r for r in rows if r["gate"] == -2.0 and r["T"] == T and r["S"] == S]
            pred = float(kc.asymptotic_exponent("beta", "err_bound", S=S, T=T, c=-2))
            fit = fit_rate([r["beta"] for r in sub], [max(r["sup_error"], 1e-300) for r in sub])
            fits[(T, S)] = fit
            slopes.append(slope_row(fit, f"sup error vs β (c = -2, T={T}, |S|={S})", pred))
            if not _fit_ok(fit, pred, "below"):
                rate_bad.append((T, S))
    finite = [r for r in rows if math.isfinite(r["claimed_bound"]) and r["sup_error"] > 0]
    slack = min(r["claimed_bound"] / r["sup_error"] for r in finite) if finite else math.nan
    nonvac = [r for r in finite if not r["vacuous"]]
    tight = max((r["sup_error"] / r["claimed_bound"] for r in nonvac), default=float("nan"))
    ok = not viol and not rate_bad
    if viol:
        w = max(viol, key=lambda r: r["sup_error"] / r["claimed_bound"])
        msg = (
            f"the bound fails in {len(viol)}/{len(rows)} cells: worst sup error "
            f"{w['sup_error']:.3g} > {w['claimed_bound']:.3g} at T = {w['T']}, |S| = {w['S']}, "
            f"c = {w['gate']:g}, β = {w['beta']:g}"
        )
    else:
        msg = f"one head's sup error <= the bound in all {len(rows)} cells"
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{msg}; vacuous (c >= -1) in {sum(r['vacuous'] for r in rows)}/{len(rows)} "
        f"cells; largest sup/bound where non-vacuous {tight:.2f} (slack over all cells "
        f"{slack:.3g}). Decay in β at c = -2 per (T, |S|): "
        + ", ".join(
            f"({T}, {S}): {f.slope:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]"
            for (T, S), f in fits.items()
        )
        + f" (each interval at or below the bound's exponent + {RATE_TOL})"
        + (f"; too slow at {rate_bad}" if rate_bad else ""),
        covered=f"one HC-K1 head (D = 1, exact f), T in {Ts}, |S| in {{T/4, T/2, 3T/4}}, c in "
        f"{gates}, β in {betas}; per cell every vertex class of {{0,1}}^T, a structured "
        "interior family, 200 random inputs (+ an adversarial search on the full profile)",
        measured=max(r["sup_error"] for r in rows),
        rows=[{k: v for k, v in r.items() if k != "witness"} for r in rows],
        witness=max(viol, key=lambda r: r["sup_error"] / r["claimed_bound"])["witness"]
        if viol
        else None,
        slopes=slopes,
        slack=slack,
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "gate",
            "title": f"{cid}: one head's error vs the gate-corrected bound",
            "xlabel": "β",
            "ylabel": "sup error",
        },
        scope="partial: one head's read-out error |z̃ - min_S f| over f-values in [0, 1]^T "
        "(the statement is per head; F_0's weighting is linear) on a grid of T, |S| in "
        "{T/4, T/2, 3T/4}, c and β, searched (vertex classes exact, interior searched)",
    )


# ------------------------------------------------------------------------- HC-T2a and HC-P3
@check(
    "HC-T2a",
    mutants={
        "gate-minus-1": "the construction built with the paper's gate -1",
        "value-scale": "W_V scaled by 1.02 (the readout is off by 2 %)",
    },
)
def d_heads_gated(ctx: Context, cid):
    """The gated D-head construction (gate -2, S_i = halves) with the positional table counted:
    for every T the error falls below ε by raising β alone (β is not a parameter), the count does
    not depend on ε, and it grows only linearly in T (the table)."""
    gate = -1.0 if ctx.is_mutant("gate-minus-1") else -2.0
    mutation = "value-scale" if ctx.is_mutant("value-scale") else None
    Ts = ctx.pick([8, 16, 32], [8, 16, 32, 64])
    betas = ctx.pick([10.0, 100.0, 1000.0], [10.0, 100.0, 1000.0, 1e4])
    eps = 0.01
    rows = _k1_rows(ctx, Ts, betas, [gate], mutation)
    table = [{k: r[k] for k in ("T", "beta", "params", "sup_error")} for r in rows]
    best_err = {T: min(r["sup_error"] for r in rows if r["T"] == T) for T in Ts}
    reached = {T: best_err[T] <= eps for T in Ts}
    fits, decays = {}, {}
    pred_beta = float(claim("HC-K1c").asymptotic_exponent("beta", "err_bound", S=4, T=8, c=-2))
    for T in Ts:
        sub = [r for r in rows if r["T"] == T]
        fits[T] = fit_rate(
            [r["beta"] for r in sub], [max(r["sup_error"], 1e-300) for r in sub], seed=ctx.seed
        )
        decays[T] = _fit_ok(fits[T], pred_beta, "below")
    params = {T: {r["params"] for r in rows if r["T"] == T} for T in Ts}
    eps_free = all(len(p) == 1 for p in params.values())
    # the claim's M_suff = C/ε^γ, read from the catalogue: with exact features γ = 0, and the
    # count found (the same at every β, i.e. every ε: exponent 0 in 1/ε) must grow no faster
    # than M_suff's exponent in 1/ε at γ = 0 (+ RATE_TOL)
    ct = claim(cid)
    e_s, g_s = ct.symbol("epsilon"), ct.symbol("gamma")
    m_expr = ct.expr("M_suff")
    expo = float(sp.simplify(-e_s * sp.diff(sp.log(m_expr), e_s)).subs(g_s, 0))
    count_expo = 0.0 if eps_free else math.inf
    expo_ok = count_expo <= expo + RATE_TOL
    in_reg = bool(ct.in_regime(h=2, D=2))
    pT = [params[T].pop() if len(params[T]) == 1 else max(params[T]) for T in Ts]
    pfit = fit_rate(Ts, pT, seed=ctx.seed)
    linear = _fit_ok(pfit, 1.0, "below")
    ungated = build("hc_k1_synthetic", T=Ts[0], beta=10.0, D=2, d=1).params
    ok = all(reached.values()) and all(decays.values()) and eps_free and linear and expo_ok
    ok = ok and in_reg
    failed = (
        (
            [
                f"the count's exponent in 1/ε ({count_expo:g}) exceeds M_suff's "
                f"({expo:g}) + {RATE_TOL}"
            ]
            if not expo_ok
            else []
        )
        + (["h = D = 2 is outside the claim's regime"] if not in_reg else [])
        + (
            [f"ε = {eps} not reached at T = {[T for T in Ts if not reached[T]]}"]
            if not all(reached.values())
            else []
        )
        + (
            [f"error does not decay like β^{pred_beta:g} at T = {[T for T in Ts if not decays[T]]}"]
            if not all(decays.values())
            else []
        )
        + (["count depends on β"] if not eps_free else [])
        + ([f"count grows faster than T (slope {pfit.ci_high:.2f})"] if not linear else [])
    )
    wit = max(rows, key=lambda r: r["sup_error"] if r["beta"] == max(betas) else -1)["witness"]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"gate {gate:g}: parameter count (encoder with the positional gate table + "
        f"F̂) {dict(zip(Ts, pT))}, the same at every β, i.e. every ε (exponent 0 in 1/ε, "
        f"against M_suff = {sp.sstr(m_expr)}'s {expo:g} at γ = 0 + {RATE_TOL}); its log-log "
        f"slope in T is {pfit.slope:.2f} [{pfit.ci_low:.2f}, "
        f"{pfit.ci_high:.2f}] (must lie at or below 1 + {RATE_TOL}: the table is "
        f"O(DT), no exponential T; without the table, S_i = [T], it is {ungated}). "
        f"Sup error at the largest β per T: "
        f"{', '.join(f'{best_err[T]:.2e}' for T in Ts)}"
        f" (<= {eps} required); decay in β per T: "
        f"{', '.join(f'{fits[T].slope:.2f}' for T in Ts)} (interval at or below "
        f"{pred_beta:g} + {RATE_TOL}). Exact features make gamma play no role; the "
        "proof's HC-K1 step needs a gate below -1 (HC-K1c)"
        + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"hc_k1 (D = 2, d = 1, max first half + min second half), gate "
        f"{gate:g}, T in {Ts}, β in {betas}, adversarial search per cell",
        rows=table,
        witness=None if ok else wit,
        slopes=[slope_row(pfit, "params vs T (gated)", 1.0)]
        + [slope_row(fits[T], f"sup error vs β (T={T})", pred_beta) for T in Ts],
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "group": "T",
            "title": f"{cid}: gated D-head construction (gate {gate:g})",
            "xlabel": "β",
            "ylabel": "sup error",
        },
        slack=math.nan,  # C_{d,D,T} is unspecified: no room to measure
        scope="partial: h = D = 2 heads of per-head width n = 2 (the theorem is stated for "
        "n = 2), exact (affine) features and outer map, so γ = 0; checks that at a count "
        "independent of ε and linear in T (the positional table counted) the error falls "
        "below ε by β alone; h > D (extra heads switched off) is the digest's inference "
        "[derived] and is not tested",
    )


def _gapped_inputs(T: int, g: float, rng, n_rand: int) -> np.ndarray:
    """Inputs of hc_k1's task (max over the first half + min over the second) whose retrieved
    values beat the rest of their set by at least g: structured (the others at gap exactly m·g or
    at the far end, both sets varied independently, so one head's error is not cancelled by the
    other's) and random gaps."""
    half = T // 2
    X = []
    mults = [1.0, 1.5, 3.0, None]
    for u in np.linspace(g, 1.0, 5):
        for v in np.linspace(0.0, 1.0 - g, 5):
            for m1 in mults:
                for m2 in mults:
                    x = np.empty(T)
                    x[:half] = 0.0 if m1 is None else max(u - m1 * g, 0.0)
                    x[half:] = 1.0 if m2 is None else min(v + m2 * g, 1.0)
                    x[0], x[half] = u, v
                    X.append(x)
    for _ in range(n_rand):
        u, v = rng.uniform(g, 1), rng.uniform(0, 1 - g)
        x = np.empty(T)
        x[:half] = np.clip(u - g - rng.exponential(rng.choice([0.01, 0.1, 1.0]), half), 0, None)
        x[half:] = np.clip(v + g + rng.exponential(rng.choice([0.01, 0.1, 1.0]), T - half), None, 1)
        x[0], x[half] = u, v
        X.append(x)
    return np.array(X)[..., None]


@memo
def _gapped_base(T, mutation):
    """hc_k1 at gate -2 built once per T with β = 1 (the construction puts β only in W_Q, as
    W_Q ĉ0 = (β, 0) per head), mutated, with its W_Q kept to be rescaled for every β."""
    c = build("hc_k1", T=T, beta=1.0, gate=-2.0)
    if mutation is not None:
        _K1_MUTATIONS[mutation](c)
    return c, c.model.attention(0).q.weight.detach().clone()


def _gapped_errors(T, beta, X, mutation):
    c, q1 = _gapped_base(T, mutation)
    with torch.no_grad():
        c.model.attention(0).q.weight.copy_(q1 * beta)
    return errors(c.model, c.task, X)


@memo
def _beta_needed(
    T: int, eps: float, g: float, seed: int, mutation: str | None, lo: float = 1.0, hi: float = 1e4
) -> tuple[float, list]:
    """The smallest β (to 0.1 % in log β) at which the worst error over gapped inputs is <= ε.
    The bisection runs on the worst candidates found at β = 10, 100, 1000; the final β is then
    checked on the whole input set (and the bisection redone with its worst inputs if needed).
    Returns (β, witness); β = inf when even β = hi does not reach ε."""
    rng = np.random.default_rng([seed, T])
    X = _gapped_inputs(T, g, rng, 100)
    top = _gapped_errors(T, hi, X, mutation)
    if top.max() > eps:
        return math.inf, X[int(top.argmax())].ravel().tolist()
    cand: set = set()
    for b in (10.0, 100.0, 1000.0):
        cand |= set(np.argsort(_gapped_errors(T, b, X, mutation))[-8:].tolist())
    for _ in range(5):
        C = X[sorted(cand)]
        a, b = math.log(lo), math.log(hi)
        while b - a > 1e-3:
            mid = (a + b) / 2
            if _gapped_errors(T, math.exp(mid), C, mutation).max() <= eps:
                b = mid
            else:
                a = mid
        full = _gapped_errors(T, math.exp(b), X, mutation)
        if full.max() <= eps:
            return math.exp(b), X[int(full.argmax())].ravel().tolist()
        cand |= set(np.argsort(full)[-8:].tolist())
    raise RuntimeError("β bisection did not settle on the whole input set")


def _fit_plane(u, v, y, seed: int = 0, n_boot: int = 2000, level: float = 0.95) -> dict:
    """y = a·u + b·v + c by least squares, with residual-bootstrap intervals for a and b (the
    small-sample correction of :func:`approxtheory.measure.fit_rate`): the slope in u is then
    estimated from the variation of u at fixed v, and vice versa."""
    A = np.stack([np.asarray(u, float), np.asarray(v, float), np.ones(len(u))], axis=1)
    y = np.asarray(y, dtype=np.float64)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    fitted = A @ coef
    resid = (y - fitted) * math.sqrt(len(y) / max(len(y) - 3, 1))
    rng = np.random.default_rng(seed)
    boots = np.array(
        [
            np.linalg.lstsq(A, fitted + rng.choice(resid, len(y)), rcond=None)[0][:2]
            for _ in range(n_boot)
        ]
    )
    q = (1 - level) / 2
    out = {}
    for i, name in enumerate(("u", "v")):
        lo, hi = np.quantile(boots[:, i], [q, 1 - q])
        out[name] = (float(coef[i]), float(min(lo, coef[i])), float(max(hi, coef[i])))
    return out


@check(
    "HC-P3",
    mutants={
        "logit-scale-1/T": "attention logits divided by T (a sequence-length normalisation bug)",
        "value-scale": "W_V scaled by 1.02 (the readout is off by 2 %)",
    },
)
def beta_needed_vs_T(ctx: Context, cid):
    """β needed at fixed ε and minimum gap g, against T and ε separately: the claim says
    β_needed = log(T/ε)/g (read from the catalogue). Fitted as g·β_needed = a·log T + b·log ε
    + const over the (T, ε) grid, so that a is estimated at fixed ε and b at fixed T; the
    predicted a and b are the claim's d(g·β_needed)/d log T and d(g·β_needed)/d log ε (1 and
    -1). Each interval must lie within its prediction ± RATE_TOL (a T-blind β_needed predicts
    a = 0 and fails; so does a β needed polynomial in T)."""
    mutation = ctx.mutant
    c = claim(cid)
    T_s, e_s, g_s = c.symbol("T"), c.symbol("epsilon"), c.symbol("g")
    gb = g_s * c.expr("beta_needed")
    g = 0.1
    # T >= 32: the measured β_needed carries log(|S| - 1) = log(T/2 - 1), whose slope in log T
    # is T/(T - 2); the claim's log T is its large-T form (at T = 16 the slope is still 1.14)
    Ts = ctx.pick([32, 48, 64, 96], [32, 64, 128, 256])
    epss = [1e-2, 1e-3, 1e-4]

    def dlog(x):
        dd = sp.simplify(x * sp.diff(gb, x))
        vals = {float(dd.subs({T_s: T, e_s: e, g_s: g})) for T in Ts for e in epss}
        return float(np.mean(sorted(vals))), (max(vals) - min(vals))

    pred_T, spread_T = dlog(T_s)
    pred_e, spread_e = dlog(e_s)
    rows, wit = [], None
    for T in Ts:
        for eps in epss:
            b, w = _beta_needed(T, eps, g, ctx.seed, mutation)
            rows.append(
                {
                    "T": T,
                    "eps": eps,
                    "beta_needed": b,
                    "claimed_beta_needed": float(c.evaluate("beta_needed", T=T, epsilon=eps, g=g)),
                }
            )
            if not math.isfinite(b) and wit is None:
                wit = w
    syn = {T: build("hc_k1_synthetic", T=T, beta=10.0, D=2, d=1).params for T in Ts}
    gated = {T: build("hc_k1", T=T, beta=10.0, gate=-2.0).params for T in Ts}
    finite = all(math.isfinite(r["beta_needed"]) for r in rows)
    slopes = []
    if finite:
        pl = _fit_plane(
            [math.log(r["T"]) for r in rows],
            [math.log(r["eps"]) for r in rows],
            [g * r["beta_needed"] for r in rows],
            seed=ctx.seed,
        )
        (aT, aT_lo, aT_hi), (ae, ae_lo, ae_hi) = pl["u"], pl["v"]
        ok_T = pred_T - RATE_TOL <= aT_lo and aT_hi <= pred_T + RATE_TOL
        ok_e = pred_e - RATE_TOL <= ae_lo and ae_hi <= pred_e + RATE_TOL
        ok = ok_T and ok_e
        fit_txt = (
            f"g·β_needed = a·log T + b·log ε + const: a = {aT:.3f} [{aT_lo:.3f}, {aT_hi:.3f}] "
            f"(at fixed ε; the claim's {pred_T:.3g}), b = {ae:.3f} [{ae_lo:.3f}, {ae_hi:.3f}] "
            f"(at fixed T; the claim's {pred_e:.3g}); each interval must lie within its "
            f"prediction ± {RATE_TOL}"
            + ("" if ok_T else ". Failed: the T-dependence")
            + ("" if ok_e else ". Failed: the ε-dependence")
        )
        for lab, (v, lo, hi), pr in (
            ("a (log T)", pl["u"], pred_T),
            ("b (log ε)", pl["v"], pred_e),
        ):
            slopes.append(
                {
                    "label": f"g·β_needed vs {lab}",
                    "fitted": v,
                    "lo": lo,
                    "hi": hi,
                    "predicted": pr,
                    "within_ci": lo <= pr <= hi,
                }
            )
    else:
        ok = False
        bad = [(r["T"], r["eps"]) for r in rows if not math.isfinite(r["beta_needed"])]
        fit_txt = "no β <= 1e4 reaches ε at " + ", ".join(f"T = {T}, ε = {e:g}" for T, e in bad)
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{fit_txt}. β_needed (measured / the claim's log(T/ε)/g): "
        + ", ".join(
            f"T={r['T']}, ε={r['eps']:g}: {r['beta_needed']:.1f} / {r['claimed_beta_needed']:.1f}"
            for r in rows
        )
        + f". Parameter count with S_i = [T] (no positional table) {syn} — "
        f"T-independent by construction, not a measurement; with the positional "
        f"table (gated, as measured here) {gated}, linear in T"
        + (
            f". The claim's log-derivatives vary over the grid by {spread_T:.2g} (T) and "
            f"{spread_e:.2g} (ε); their means are used"
            if max(spread_T, spread_e) > 1e-12
            else ""
        ),
        covered=f"hc_k1 gate -2 (D = 2, d = 1), gap g = {g} in both sets, T in {Ts}, "
        f"ε in {epss}; per (T, ε) a bisection on β over "
        "structured and random gapped inputs",
        rows=rows,
        slopes=slopes,
        witness=wit,
        slack=math.nan,  # β_needed is a growth law ("about"), not a bound: its rate is tested
        plot={
            "x": "T",
            "y": ["beta_needed"],
            "group": "eps",
            "logy": False,
            "title": f"{cid}: β needed at gap g = {g}",
            "xlabel": "T",
            "ylabel": "β needed",
        },
        scope="partial: β_needed(T, ε) at gap g on the gated D = 2 construction, its "
        "dependence on T (at fixed ε) and on ε (at fixed T) against the claim's log(T/ε)/g; "
        "the T-independent count holds by construction when S_i = [T] and is only reported",
    )


# ------------------------------------------------------------------------ HC-T2b and HC-TR3
def _phase_cells(profile: str) -> list[dict]:
    """The (T, s) cells where this toolkit trains models with fewer heads than features (the
    headcount_phase experiment: D = 2, per-head width n = 8, h < D)."""
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import get, grid_values

    grid = grid_values(get("headcount_phase"), profile)
    return [{"T": T, "s": h, "n": 8, "D": 2} for h in grid["heads"] if h < 2 for T in grid["T"]]


@check("HC-T2b", "HC-TR3")
def lower_bound_vacuity(ctx: Context, cid):
    """A lower bound over all models cannot be measured; what can be said is where it is
    vacuous (k <= 0). The checked cells are those where models are trained here."""
    c = claim(cid)
    t2b = claim("HC-T2b")
    cells = _phase_cells(ctx.profile)
    expo = "k" if cid == "HC-T2b" else "k_5layer"
    for r in cells:
        r["k"] = float(t2b.evaluate("k", **{k: r[k] for k in ("T", "s", "n", "D")}))
        r["exponent"] = float(c.evaluate(expo, **{k: r[k] for k in ("T", "s", "n", "D")}))
        r["vacuous"] = bool(c.is_vacuous(**{k: r[k] for k in ("T", "s", "n", "D")}))
    paper = [(s_, T_) for s_ in (1, 2, 3) for T_ in (8, 16, 32, 64, 128)]
    pk = [float(t2b.evaluate("k", T=T_, s=s_, n=8, D=4)) for s_, T_ in paper]
    pvac = sum(t2b.is_vacuous(T=T_, s=s_, n=8, D=4) for s_, T_ in paper)
    where = (
        f"in the paper's synthetic set-up (n = 8, D = 4, s <= 3, T <= 128) k <= 0 in "
        f"{pvac}/{len(paper)} cells and k <= {max(pk):.2f} elsewhere"
    )
    cells_txt = ", ".join(f"T={r['T']} s={r['s']}: {r['exponent']:.2f}" for r in cells)
    if all(r["vacuous"] for r in cells):
        return Verdict(
            cid,
            "vacuous-here",
            f"the exponent is <= 0 in every cell where models are trained here "
            f"(headcount_phase, D = 2, n = 8, h = 1: {cells_txt}), so the bound says "
            f"nothing there; {where}. The bound itself (a minimum over all models) "
            "is not tested anywhere",
            covered=f"{len(cells)} headcount_phase cells + the paper's 15 cells",
            rows=cells,
            scope="partial: where the exponent is <= 0 (vacuous) in the cells models "
            "are trained in; the lower bound itself is not tested",
        )
    live = [r for r in cells if not r["vacuous"]]
    return Verdict(
        cid,
        "not-checkable",
        f"non-vacuous in {len(live)} trained cell(s) ({cells_txt}), but a minimum of "
        f"the parameter count over all models cannot be measured; {where}",
        covered=f"{len(cells)} headcount_phase cells",
        rows=cells,
        scope="none",
    )


# ------------------------------------------------------------------------------------ HC-P6
@check(
    "HC-P6",
    mutants={
        "k-T-over-2": "HC-T2b's k with T/2 in place of T/4",
        "k-denominator-ns": "HC-T2b's k with denominator n·s + 1 in place of (n+1)s + 1",
    },
)
def exponent_table(ctx: Context, cid):
    """The digest's stated forms (slope, vacuity boundary, paper maximum, worked examples) against
    what follows from HC-T2b's k."""
    c = claim(cid)
    hc = claim("HC-T2b")
    T, D, n, s = (hc.symbol(x) for x in "TDns")
    k = hc.expr("k")
    if ctx.is_mutant("k-T-over-2"):
        k = k.subs(T, 2 * T)
    if ctx.is_mutant("k-denominator-ns"):
        k = hc.expr("T0") / (n * s + 1) - 1
    slope_ok = sp.simplify(sp.diff(k, T) - c.expr("slope_in_T")) == 0
    boundary = sp.solve(sp.Eq(k, 0), T)
    bound_ok = len(boundary) == 1 and sp.simplify(boundary[0] - c.expr("vacuity_boundary")) == 0
    kf = sp.lambdify([T, D, n, s], k, "math")
    ks = [kf(T_, 4, 8, s_) for s_ in (1, 2, 3) for T_ in (8, 16, 32, 64, 128)]
    max_ok = max(ks) <= float(c.expr("paper_max_k"))
    # the digest's worked examples (§3 HC-T2b, §6 P6): T thresholds and k values
    thresholds = {(8, 4, 1): 56, (8, 4, 2): 96, (8, 4, 3): 136, (2, 2, 1): 24, (1, 2, 1): 20}
    ex_ok = all(abs(kf(Tb, D_, n_, s_)) < 1e-12 for (n_, D_, s_), Tb in thresholds.items())
    cpu = {32: 0.5, 64: 2.5, 128: 6.5}
    cpu_ok = all(abs(kf(T_, 2, 2, 1) - v) < 1e-12 for T_, v in cpu.items())
    ok = slope_ok and bound_ok and max_ok and ex_ok and cpu_ok
    failed = [
        name
        for name, good in (
            ("slope", slope_ok),
            ("vacuity boundary", bound_ok),
            ("paper maximum <= 1.8", max_ok),
            ("threshold examples", ex_ok),
            ("CPU k values", cpu_ok),
        )
        if not good
    ]
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        f"from HC-T2b's k: dk/dT = {sp.simplify(sp.diff(k, T))}, k = 0 at T = "
        f"{boundary}; paper set-up max k = {max(ks):.2f}; the digest's thresholds "
        f"(T > 56, 96, 136; 24; 20) and CPU values k = 0.5, 2.5, 6.5 "
        f"{'agree' if ex_ok and cpu_ok else 'disagree'}"
        + (f". Failed: {', '.join(failed)}" if failed else ""),
        covered="symbolic in T, D, n, s + the digest's worked examples",
        scope="full",
    )


# ------------------------------------------------------------------------ HC-L9, P4, T2c
_L9_MUTATIONS = {
    # h2's clip at 2/n_g instead of 1/n_g: each level contributes up to twice its step
    "clip-2/n_g": lambda c: c.model.readout_linear(1).bias.data.mul_(2.0),
    # the params counted as all weights of the dense layers (a counting bug)
    "dense-count": lambda c: setattr(c, "params", c.extra["dense_params"]),
}


def _l9_grid(profile, mutation=None):
    """HC-L9's grid (the construction reads HC-L9's n_g and bound from the catalogue: the memo is
    keyed by what the catalogue says about HC-L9)."""
    return _l9_grid_memo(profile, mutation, _ckey("HC-L9", ("err_bound", "width2", "width_bound")))


@memo
def _l9_grid_memo(profile, mutation, _key):
    quick = profile == "quick"
    return construction_grid(
        "hc_l9",
        {
            "T": [4, 16] if quick else [4, 16, 64],
            "eps": [0.5, 0.2, 0.1] if quick else [0.5, 0.2, 0.1, 0.05, 0.02, 0.01],
        },
        budget=256 if quick else 2048,
        mutate=_L9_MUTATIONS[mutation] if mutation else None,
        extra=lambda c, m: {
            "inv_eps": 1 / c.knobs["eps"],
            "n_g": c.extra["n_g"],
            "dense_params": c.extra["dense_params"],
        },
    )[0]


@check(
    "HC-L9",
    "HC-P4",
    mutants={
        "clip-2/n_g": "h2 clips at 2/n_g instead of 1/n_g",
        "dense-count": "the parameter count includes the zero weights of the dense layers",
    },
)
def relu_max_network(ctx: Context, cid):
    rows = _l9_grid(ctx.profile, ctx.mutant)
    within = all(r["verdict"] == "within-bound" for r in rows)
    T0 = rows[0]["T"]
    sub = [r for r in rows if r["T"] == T0]
    fit = fit_rate([r["inv_eps"] for r in sub], [r["params"] for r in sub], seed=ctx.seed)
    # the claimed count exponent in 1/ε: HC-L9's params_order (T/ε), read from the catalogue
    expo = float(claim("HC-L9").rate_exponent())
    rate_ok = _fit_ok(fit, expo, "below")
    # O(T/ε) exactly: the count is an affine function of T·n_g, n_g, T (n_g = ⌈1/ε⌉); a zero
    # residual of that fit over the whole grid proves exponent 1 in n_g on the grid
    ng = np.array([r["n_g"] for r in rows], dtype=float)
    Tt = np.array([r["T"] for r in rows], dtype=float)
    A = np.stack([Tt * ng, ng, Tt, np.ones_like(ng)], axis=1)
    y = np.array([r["params"] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    affine_ok = bool(np.abs(A @ coef - y).max() < 1e-6) and coef[0] > 0
    ok = within and rate_ok and affine_ok
    worst = max(rows, key=lambda r: r["sup_error"] / r["claimed_bound"])
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error <= 1/⌈1/ε⌉ in {'every' if within else 'not every'} cell "
        f"(worst ratio {worst['sup_error'] / worst['claimed_bound']:.3f}); the counted "
        f"weights are {'exactly' if affine_ok else 'NOT'} "
        f"{coef[0]:.0f}·T·n_g + {coef[1]:.0f}·n_g + {coef[2]:.0f}·T + {coef[3]:.0f} "
        f"with n_g = ⌈1/ε⌉; log-log slope in 1/ε at T = {T0}: {fit.slope:.2f} "
        f"[{fit.ci_low:.2f}, {fit.ci_high:.2f}] (the claimed exponent of params_order: "
        f"{expo:g}; the interval must lie at or below it + {RATE_TOL}). A dense "
        "net of the stated widths would have O(T/ε²) weights: O(T/ε) holds for the "
        "sparse network",
        covered=f"T in {sorted({r['T'] for r in rows})}, eps in {sorted({r['eps'] for r in rows})}",
        rows=rows,
        slopes=[slope_row(fit, f"params vs 1/ε (T={T0})", expo)],
        witness=None if within else worst.get("witness"),
        formula_note="reads HC-L9's formulas (HC-P4 has none of its own)" if cid == "HC-P4" else "",
        plot={
            "x": "eps",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": f"{cid}: ReLU max network",
            "xlabel": "ε",
            "ylabel": "sup error",
        },
        scope="full",
    )


@check(
    "HC-T2c",
    mutants={
        "clip-2/n_g": "h2 clips at 2/n_g instead of 1/n_g",
        "dense-count": "the parameter count includes the zero weights of the dense layers",
    },
)
def memorizing_regime(ctx: Context, cid):
    """Theorem 2(3) on its simplest instance: one head of width n = T·d (HC-K2's memorizing
    head, d = 1) followed by HC-L9's ReLU network F̂ for D = 1, f = identity, F_0 = identity,
    where the FFN approximations of f_i and F_0 are exact (γ = 0). The claim's M_suff is read
    from the catalogue: the count of the built network must grow in 1/ε no faster than M_suff's
    exponent at γ = 0 (per T, the slope interval at or below it + RATE_TOL), every cell must
    ε-approximate (sup error < ε, Definition 1) and satisfy the regime n >= T·d."""
    c = claim(cid)
    g_s = c.symbol("gamma")
    eps_s = c.symbol("epsilon")
    m_expr = c.expr("M_suff")
    # exponent of 1/ε in M_suff at γ = 0 (exact features), from the catalogue's formula
    expo = float(sp.simplify(-eps_s * sp.diff(sp.log(m_expr), eps_s)).subs(g_s, 0))
    sharp = float(sp.simplify(-eps_s * sp.diff(sp.log(c.expr("M_sharp")), eps_s)).subs(g_s, 0))
    raw = _l9_grid(ctx.profile, ctx.mutant)
    rows, regime_bad = [], []
    for r in raw:
        n_width = r["T"] * 1  # the head's width is T·d with d = 1
        in_reg = bool(c.in_regime(n=n_width, T=r["T"], d=1))
        if not in_reg:
            regime_bad.append(r["T"])
        rows.append(
            {
                "T": r["T"],
                "eps": r["eps"],
                "inv_eps": r["inv_eps"],
                "params": r["params"],
                "head_width": n_width,
                "sup_error": r["sup_error"],
                "eps_approximates": bool(r["sup_error"] < r["eps"]),
                "in_regime": in_reg,
            }
        )
    approx_ok = all(r["eps_approximates"] for r in rows)
    Ts = sorted({r["T"] for r in rows})
    fits = {}
    for T in Ts:
        sub = [r for r in rows if r["T"] == T]
        fits[T] = fit_rate([r["inv_eps"] for r in sub], [r["params"] for r in sub], seed=ctx.seed)
    rate_ok = all(_fit_ok(f, expo, "below") for f in fits.values())
    ok = approx_ok and rate_ok and not regime_bad
    worst = max(rows, key=lambda r: r["sup_error"] / r["eps"])
    missed = [(r["T"], r["eps"]) for r in rows if not r["eps_approximates"]]
    failed = (
        ([] if approx_ok else [f"sup error >= ε at {missed}"])
        + (
            []
            if rate_ok
            else [
                f"the count grows faster than (1/ε)^{expo:g} at T = "
                f"{[T for T in Ts if not _fit_ok(fits[T], expo, 'below')]}"
            ]
        )
        + ([f"regime n >= T·d fails at T = {regime_bad}"] if regime_bad else [])
    )
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"M_suff = {sp.sstr(m_expr)}: exponent of 1/ε at γ = 0 is {expo:g} (the sharp form "
        f"M_sharp gives {sharp:g}). Counted weights of the built network per T against 1/ε: "
        + ", ".join(
            f"T={T}: slope {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]" for T, f in fits.items()
        )
        + f" (each interval must lie at or below {expo:g} + {RATE_TOL}); sup error < ε in "
        f"{sum(r['eps_approximates'] for r in rows)}/{len(rows)} cells (largest sup/ε "
        f"{worst['sup_error'] / worst['eps']:.3f}); head width n = T·d in every cell. The "
        "constant C_{d,D,T} is unspecified, so no slack is reported (a rescaled M_suff says "
        "the same)" + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"hc_l9 (HC-K2's head of width T, d = 1, + HC-L9's F̂), T in {Ts}, ε in "
        f"{sorted({r['eps'] for r in rows})}, adversarial search per cell",
        measured={f"T={T}": f.slope for T, f in fits.items()},
        claimed=expo,
        rows=rows,
        slopes=[slope_row(f, f"params vs 1/ε (T={T})", expo) for T, f in fits.items()],
        witness=None if ok else {"failed": failed, "worst_cell": worst},
        slack=math.nan,  # C is unspecified: no room to measure (None in the record)
        plot={
            "x": "eps",
            "y": ["sup_error"],
            "group": "T",
            "title": f"{cid}: memorizing head + ReLU max network",
            "xlabel": "ε",
            "ylabel": "sup error",
        },
        scope="partial: D = 1 with f = identity and F_0 = identity, so γ = 0 (exact "
        "features): the memorizing head (width n = T·d, d = 1) and HC-L9's ReLU max network, "
        "i.e. the 1/ε of M_suff's exponent 1 + γ; the FFN approximations F1, F3 of f_i and "
        "F_0 (the γ part) are not built, and the 5-layer composition is HC-L8's check",
    )


# ------------------------------------------------------------------------- HC-L4 and HC-P5
@check(
    "HC-L4",
    "HC-P5",
    mutants={
        "bound-without-sqrt-n": "the Lipschitz constant written p instead of p·sqrt(n)",
        "weights-up-to-2": "the nets' entries bounded by 2 instead of 1 (bound not enforced)",
    },
)
def lipschitz_counting(ctx: Context, cid):
    """|F(v1) - F(v2)|_inf <= p sqrt(n) ||v1 - v2||_2 for two-layer nets with entries <= 1: random
    nets and the extremal ones (all entries ±1, where it is tight), with pairs found by gradient
    ascent on the ratio."""
    rng = np.random.default_rng(ctx.seed)
    scale = 2.0 if ctx.is_mutant("weights-up-to-2") else 1.0
    expr = claim("HC-L4").expr("lipschitz")
    if ctx.is_mutant("bound-without-sqrt-n"):
        expr = expr.subs(claim("HC-L4").symbol("n"), 1)
    bound_of = sp.lambdify([claim("HC-L4").symbol("p"), claim("HC-L4").symbol("n")], expr, "math")
    worst, worst_net = 0.0, None
    trials = ctx.pick(18, 200)
    gen = torch.Generator().manual_seed(ctx.seed)
    for i in range(trials):
        p, n = int(rng.integers(1, 32)), int(rng.integers(1, 16))
        if i % 3 == 0:  # extremal: all entries at the bound, bias 0
            U = torch.full((p, n), scale, dtype=torch.float64)
            b = torch.zeros(p, dtype=torch.float64)
            V = torch.full((3, p), scale, dtype=torch.float64)
        else:
            U = torch.tensor(rng.uniform(-scale, scale, (p, n)))
            b = torch.tensor(rng.uniform(-scale, scale, p))
            V = torch.tensor(rng.uniform(-scale, scale, (3, p)))
        f = lambda x, U=U, b=b, V=V: torch.relu(x @ U.T + b) @ V.T  # noqa: E731
        v1 = (torch.rand(64, n, dtype=torch.float64, generator=gen) * 4 - 1).requires_grad_()
        v2 = (torch.rand(64, n, dtype=torch.float64, generator=gen) * 4 - 1).requires_grad_()
        opt = torch.optim.Adam([v1, v2], lr=0.05)
        for _ in range(40):
            opt.zero_grad()
            r = (f(v1) - f(v2)).abs().amax(-1) / (v1 - v2).norm(dim=-1).clamp_min(1e-9)
            (-r.sum()).backward()
            opt.step()
        with torch.no_grad():
            r = (f(v1) - f(v2)).abs().amax(-1) / (v1 - v2).norm(dim=-1).clamp_min(1e-9)
        ratio = float(r.max()) / bound_of(p, n)
        if ratio > worst:
            worst, worst_net = ratio, {"p": p, "n": n, "extremal": i % 3 == 0}
    ok = worst <= 1 + 1e-9
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"largest |ΔF|_inf / (p sqrt(n) ||Δv||) found by gradient ascent: {worst:.4f} "
        f"(<= 1 required; the extremal all-ones nets make it tight), at " + _net_text(worst_net),
        covered=f"{trials} nets (a third extremal, the rest random with entries in "
        "[-1,1]), p <= 31, n <= 15, 64 pairs each, 40 ascent steps",
        measured=worst,
        claimed=1.0,
        # room of the bound p·sqrt(n) on the largest ratio found (1 = tight, the extremal nets)
        slack=1 / worst if worst > 0 else math.nan,
        witness=None if ok else worst_net,
        scope=(
            "partial: the Lipschitz inequality |ΔF| <= p sqrt(n) ||Δv||; the width "
            "count Ω(B/(A sqrt(n))) follows by division"
        )
        if cid == "HC-L4"
        else "full",
    )


# ------------------------------------------------------------------------------------ HC-L5
def _random_c2(d, rng, isotropic=False):
    """A non-quadratic C^∞ function with f(0) = 0, ∇f(0) = 0 and Hessian H at 0:
    ½ yᵀHy + κ (aᵀy)³ + μ (yᵀy)² + ρ (1 - cos(bᵀy) - (bᵀy)²/2)."""
    if isotropic:
        H = (0.5 + rng.uniform()) * np.eye(d) + 0.01 * np.diag(rng.uniform(size=d))
    else:
        A = rng.standard_normal((d, d))
        H = A @ A.T + 0.1 * np.eye(d)
    a, b = rng.standard_normal(d), rng.standard_normal(d)
    kappa, mu, rho = rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0, 1)

    def f(Y):  # Y: (..., d)
        quad = 0.5 * np.einsum("...i,ij,...j->...", Y, H, Y)
        ay, by, yy = Y @ a, Y @ b, (Y * Y).sum(-1)
        return quad + kappa * ay**3 + mu * yy**2 + rho * (1 - np.cos(by) - by**2 / 2)

    return f, H


@check(
    "HC-L5",
    mutants={
        "segment-from-minimiser": "the segment taken as t in [0, r/2] (starting at the minimiser)",
        "constant-1": "L_i = λ_min·r (constant 1 in place of 1/8)",
    },
)
def monotone_segment(ctx: Context, cid):
    """For non-quadratic C² functions: for each r on a log grid, is there a unit direction v with
    |f(x) - f(y)| >= L_i ||x - y|| and f > z on {x* + t v : t in [r/4, r/2]}? R is the largest
    grid r below which every r passes; the lemma needs R > 0."""
    rng = np.random.default_rng(ctx.seed)
    c = claim(cid)
    L_expr = c.expr("L_i")
    lam_s, r_s = c.symbol("lambda_min"), c.symbol("r")
    if ctx.is_mutant("constant-1"):
        L_expr = L_expr * 8
    Lf = sp.lambdify([lam_s, r_s], L_expr, "math")
    t_lo = 0.0 if ctx.is_mutant("segment-from-minimiser") else 0.25
    rs = np.logspace(-4, 0, 25)
    nf = ctx.pick(40, 400)
    rows: list[dict[str, Any]] = []
    fails: list[int] = []
    for i in range(nf):
        d = int(rng.integers(1, 4))
        f, H = _random_c2(d, rng, isotropic=(i % 4 == 0))
        lam = float(np.linalg.eigvalsh(H).min())
        ev = np.linalg.eigh(H)[1].T
        dirs = np.concatenate([ev, -ev, rng.standard_normal((8, d))])
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        R, ratio_small = 0.0, None
        for r in rs:
            ts = np.linspace(t_lo * r, r / 2, 201)
            vals = f(ts[None, :, None] * dirs[:, None, :])  # (dirs, t)
            slopes = np.abs(np.diff(vals, axis=1)) / np.diff(ts)[None, :]
            mono = (np.sign(np.diff(vals, axis=1)) == np.sign(np.diff(vals, axis=1))[:, :1]).all(1)
            L = Lf(lam, r)
            good = mono & (slopes.min(1) >= L) & (vals > 0).all(1)
            if ratio_small is None:
                ratio_small = float((slopes.min(1) / L).max())
            if not good.any():
                break
            R = float(r)
        rows.append({"f": i, "d": d, "lambda_min": lam, "R": R, "ratio_at_smallest_r": ratio_small})
        if R == 0.0:
            fails.append(i)
    ok = not fails
    Rs = [r["R"] for r in rows]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{nf - len(fails)}/{nf} functions have a monotone segment with slope >= "
        f"L_i = λ_min r/8 for every grid r below R (R > 0 required); R ranges "
        f"{min(Rs):.2g}..{max(Rs):.2g} (median {np.median(Rs):.2g}); best slope/L_i "
        f"at r = 1e-4: min {min(r['ratio_at_smallest_r'] for r in rows):.2f} (the "
        "constant 1/8 leaves a factor 2 near the minimiser)",
        covered=f"{nf} random non-quadratic C^∞ functions (quadratic + cubic + quartic "
        "+ cosine terms, a quarter near-isotropic), d <= 3, r on a log grid "
        "1e-4..1, eigen- and random directions",
        rows=rows,
        witness=rows[fails[0]] if fails else None,
        # room of the lower bound L_i on the slope found (slope / L_i at r = 1e-4, least over
        # the functions; a lower bound: worst case found / claimed)
        slack=min(r["ratio_at_smallest_r"] for r in rows),
        scope="partial: the slope constant L_i = λ_min r/8 and f > z on the segment "
        "near the minimiser, for concrete C² functions; R is found per "
        "function on a grid",
    )


# ------------------------------------------------------------------------------------ HC-L6
@check(
    "HC-L6",
    mutants={
        "L0-without-half": "L_0 = min_i |∂_i F_0(z)| (the ½ dropped)",
        "max-not-min": "L_0 = ½ max_i |∂_i F_0(z)|",
    },
)
def outer_sensitivity(ctx: Context, cid):
    """For non-linear C¹ outer maps and the full range of δ (log grid 1e-6..1, both signs, inside
    [0,1]^D): r_0 is the largest |δ| below which every grid δ satisfies |F_0(z+δe_i) - F_0(z)| >=
    L_0|δ|; the lemma needs r_0 > 0."""
    rng = np.random.default_rng(ctx.seed)
    c = claim(cid)
    expr = c.expr("L_0")
    if ctx.is_mutant("L0-without-half"):
        expr = expr * 2
    L0f = sp.lambdify([c.symbol("g_min")], expr, "math")
    deltas = np.logspace(-6, 0, 40)
    n_maps = ctx.pick(100, 2000)
    rows, fails, skipped = [], [], 0
    for j in range(n_maps):
        D = int(rng.integers(1, 6))
        cc = torch.tensor(rng.uniform(-2, 2, D))
        a = torch.tensor(rng.uniform(-1, 1, D))
        w = torch.tensor(rng.uniform(1, 6, D))
        bb = float(rng.uniform(-1, 1))
        F0 = lambda u, cc=cc, a=a, w=w, bb=bb: (  # noqa: E731
            torch.tanh(u @ cc) + (a * torch.sin(w * u)).sum(-1) + bb * u.sum(-1) ** 3
        )
        z = torch.tensor(rng.uniform(0.1, 0.9, D), requires_grad=True)
        F0(z).backward()
        assert z.grad is not None
        grad = z.grad.detach().abs().numpy()
        if grad.min() < 0.05:  # Assumption 2.4: no vanishing partial
            skipped += 1
            continue
        agg = grad.max() if ctx.is_mutant("max-not-min") else grad.min()
        L0 = L0f(float(agg))
        zd = z.detach()
        # every (coordinate, sign, δ) at once; perturbations leaving [0,1]^D are not tested
        sd = torch.tensor(np.concatenate([deltas, -deltas]))  # (2K,)
        P = zd + sd[None, :, None] * torch.eye(D, dtype=torch.float64)[:, None, :]  # (D, 2K, D)
        with torch.no_grad():
            ratio = ((F0(P) - F0(zd)).abs() / (L0 * sd.abs())).numpy()  # (D, 2K)
        inside = ((P >= 0) & (P <= 1)).all(-1).numpy()
        ok_at = np.where(inside, ratio >= 1, True).reshape(D, 2, -1).all((0, 1))  # per |δ|
        n_ok = int(np.argmin(ok_at)) if not ok_at.all() else len(deltas)
        r0 = float(deltas[n_ok - 1]) if n_ok else None
        below = np.abs(sd.numpy()) <= (r0 or 0)
        min_ratio = float(np.where(inside & below[None], ratio, np.inf).min())
        rows.append(
            {"map": j, "D": D, "L_0": L0, "r_0": r0 or 0.0, "min_ratio_below_r0": min_ratio}
        )
        if r0 is None:
            fails.append(j)
    ok = bool(rows) and not fails
    r0s = [r["r_0"] for r in rows]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{len(rows) - len(fails)}/{len(rows)} outer maps satisfy |F_0(z+δe_i) - "
        f"F_0(z)| >= L_0|δ| for every grid δ below r_0 > 0; r_0 ranges "
        f"{min(r0s):.2g}..{max(r0s):.2g} (median {np.median(r0s):.2g}), so r_0 is a "
        f"real restriction; {skipped} maps skipped for a partial below 0.05 "
        "(Assumption 2.4)",
        covered=f"{n_maps} random F_0 = tanh(c·z) + Σ a_i sin(w_i z_i) + b (Σz)³, "
        "D <= 5, δ on a log grid 1e-6..1, both signs",
        rows=rows,
        witness=rows[[r["map"] for r in rows].index(fails[0])] if fails else None,
        # room of the lower bound L_0|δ| on the change found (least ratio below r_0)
        slack=min((r["min_ratio_below_r0"] for r in rows), default=math.nan),
        scope="partial: the sensitivity inequality with L_0 = ½ min|∂_i F_0| for "
        "concrete non-linear C¹ maps; r_0 is found per map on a grid",
    )


# ------------------------------------------------------------------------------------ HC-L7
def _basin_functions(D, d, rng, tied):
    """f_i(x) = ||x - x_i||²(||x - y_i||² + η)/scale: a C^∞ function on [0,1]^d with its global
    minimum 0 at x_i and a second, shallower well near y_i (η > 0); η = 0 makes y_i a second
    global minimiser."""
    while True:  # minimisers at least 0.1 apart (Assumption 2.2, with room)
        xs = rng.uniform(0.1, 0.9, (D, d))
        dmin = min(np.linalg.norm(xs[i] - xs[k]) for i in range(D) for k in range(i))
        if dmin >= 0.1:
            break
    ys = np.empty((D, d))
    for i in range(D):  # the second well outside the ball B(x_i, dmin/2)
        while True:
            ys[i] = rng.uniform(0, 1, d)
            if np.linalg.norm(ys[i] - xs[i]) >= dmin / 2 + 0.05:
                break
    eta = 0.0 if tied else 0.05
    return xs, ys, eta


@check(
    "HC-L7",
    mutants={
        "R0-without-half": "R_0 = min_{i≠j} ||x^(i) - x^(j)|| (the ½ dropped)",
        "second-global-minimiser": "each f_i has a second global minimiser "
        "(its shallow well as deep as the main one)",
    },
)
def basins(ctx: Context, cid):
    """For concrete f_i with a second local well: the balls B(x^(i), R_0) are disjoint and the
    margin ε_0 = ½ min_i (min_{x ∉ B_i} f_i - z_i) is positive (found by a grid over the
    complement of the ball, its boundary sphere, and local refinement), so f_i > z_i + ε_0
    outside B_i."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(ctx.seed)
    c = claim(cid)
    expr = c.expr("R_0")
    if ctx.is_mutant("R0-without-half"):
        expr = expr * 2
    R0f = sp.lambdify([c.symbol("delta_min")], expr, "math")
    # ε_0 = ½ min_i (min_{x ∉ B_i} f_i - z_i), read from the catalogue where it states it (its
    # one free symbol is that least excess)
    eps0_of = None
    if "eps_0" in c.expressions:
        e0 = c.expr("eps_0")
        (gap_s,) = sorted(e0.free_symbols, key=lambda x: x.name) or (sp.Dummy(),)
        eps0_of = sp.lambdify([gap_s], e0, "math")
    tied = ctx.is_mutant("second-global-minimiser")
    n = ctx.pick(20, 200)
    rows, bad = [], []
    for j in range(n):
        D, d = int(rng.integers(2, 5)), int(rng.integers(1, 3))
        xs, ys, eta = _basin_functions(D, d, rng, tied)
        dmin = min(np.linalg.norm(xs[i] - xs[k]) for i in range(D) for k in range(i))
        R0 = R0f(float(dmin))
        disjoint = all(
            np.linalg.norm(xs[i] - xs[k]) >= 2 * R0 - 1e-12 for i in range(D) for k in range(i)
        )
        grid = (
            np.linspace(0, 1, 20001)[:, None]
            if d == 1
            else np.stack(np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201)), -1).reshape(
                -1, 2
            )
        )
        gaps = []
        for i in range(D):

            def f(X, i=i, xs=xs, ys=ys, eta=eta):
                X = np.atleast_2d(X)
                return ((X - xs[i]) ** 2).sum(-1) * (((X - ys[i]) ** 2).sum(-1) + eta)

            z = float(f(xs[i])[0])
            ang = rng.standard_normal((2000, d))
            sphere = xs[i] + R0 * ang / np.linalg.norm(ang, axis=1, keepdims=True)
            pts = np.concatenate([grid, sphere, ys[i][None]])
            pts = pts[
                ((pts >= 0) & (pts <= 1)).all(1) & (np.linalg.norm(pts - xs[i], axis=1) >= R0)
            ]
            if not len(pts):  # the ball covers the whole box
                gaps.append(math.inf)
                continue
            vals = f(pts)
            best = float(vals.min())
            for s0 in pts[np.argsort(vals)[:3]]:  # refine, staying outside the ball
                res = minimize(
                    lambda x: float(f(x)[0]),
                    s0,
                    bounds=[(0, 1)] * d,
                    constraints=[
                        {
                            "type": "ineq",
                            "fun": lambda x, xs=xs, i=i, R0=R0: np.linalg.norm(x - xs[i]) - R0,
                        }
                    ],
                    method="SLSQP",
                )
                if res.success and np.linalg.norm(res.x - xs[i]) >= R0 - 1e-12:
                    best = min(best, float(f(res.x)[0]))
            gaps.append(best - z)
        gap = min(gaps)
        if eps0_of is not None:
            eps0 = float(eps0_of(gap)) if math.isfinite(gap) else math.inf
        else:
            eps0 = 0.5 * gap  # reported only: the catalogue states no eps_0 formula
        # f_i > z_i + ε_0 outside B_i: the least excess over every searched point (grid, the
        # ball's sphere, the refined minima) against ε_0, strictly (beyond round-off)
        excess = min(gaps)
        margin = excess - eps0 if math.isfinite(excess) else math.inf
        margin_ok = eps0 > 1e-9 and margin > 1e-9 * max(1.0, abs(excess))
        rows.append(
            {
                "config": j,
                "D": D,
                "d": d,
                "R_0": R0,
                "disjoint": disjoint,
                "min_excess": excess,
                "eps_0": eps0,
                "margin": margin,
            }
        )
        if not (disjoint and margin_ok):
            bad.append(rows[-1])
    ok = not bad
    e0 = [r["eps_0"] for r in rows]
    ratio = min((r["min_excess"] / r["eps_0"] for r in rows if r["eps_0"] > 0), default=math.nan)
    value_txt = (
        f"f_i - z_i > ε_0 = {sp.sstr(c.expr('eps_0'))} (the catalogue's) at every searched point "
        f"outside B_i, strictly (margin > 1e-9 relative); least excess / ε_0 = {ratio:.3g}"
        if eps0_of is not None
        else "ε_0 > 0 with ε_0 = ½ min_i (min_{x ∉ B_i} f_i - z_i) as the digest defines it: the "
        "catalogue states no eps_0 formula, so its value (the ½) is not tested"
    )
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{n - len(bad)}/{n} configurations: balls of radius R_0 = δ_min/2 disjoint "
        f"and {value_txt}; ε_0 ranging {min(e0):.2g}..{max(e0):.2g}"
        + (f"; first failure {bad[0]}" if bad else "")
        + ". R_0 is tight (R_0 × 2 makes the balls meet); a smaller R_0 or ε_0 is a weaker, "
        "true statement, so no slack is reported",
        slack=math.nan,
        covered=f"{n} random sets of D <= 4 functions on [0,1]^d, d <= 2, each with a "
        "second local well; min over the complement of the ball by grid + "
        "sphere + SLSQP refinement",
        rows=rows,
        witness=bad[0] if bad else None,
        scope="partial: disjoint balls of radius R_0 and f_i > z_i + ε_0 outside them for "
        "concrete f_i (d <= 2) with a second local well"
        + ("" if eps0_of is not None else " (ε_0's value untested: no catalogue formula)"),
    )


# ------------------------------------------------------------------------------------ HC-L8
@check(
    "HC-L8",
    mutants={
        "bias-not-propagated": "the merged layer's bias omits W_b·b_a",
        "missing-unit": "one hidden unit of the 3-layer part dropped",
    },
)
def composition(ctx: Context, cid):
    from approxtheory.model import MLP

    g = torch.Generator().manual_seed(ctx.seed)
    a, b, c = MLP(3, [5], 4).double(), MLP(4, [6, 7], 2).double(), MLP(2, [8], 1).double()
    with torch.no_grad():  # weights drawn from the run's seed, not torch's
        for p in [*a.parameters(), *b.parameters(), *c.parameters()]:
            p.copy_(torch.randn(p.shape, dtype=p.dtype, generator=g) / 2)
    la, lb, lc = (
        [m for m in a if isinstance(m, torch.nn.Linear)],
        [m for m in b if isinstance(m, torch.nn.Linear)],
        [m for m in c if isinstance(m, torch.nn.Linear)],
    )
    merged = MLP(3, [5, 6, 7, 8], 1).double()
    lm = [m for m in merged if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        lm[0].weight.copy_(la[0].weight)
        lm[0].bias.copy_(la[0].bias)
        lm[1].weight.copy_(lb[0].weight @ la[1].weight)
        lm[1].bias.copy_(
            lb[0].bias
            if ctx.is_mutant("bias-not-propagated")
            else lb[0].weight @ la[1].bias + lb[0].bias
        )
        lm[2].weight.copy_(lb[1].weight)
        lm[2].bias.copy_(lb[1].bias)
        if ctx.is_mutant("missing-unit"):
            lm[2].weight[0].zero_()
            lm[2].bias[0] = -1e3
        lm[3].weight.copy_(lc[0].weight @ lb[2].weight)
        lm[3].bias.copy_(lc[0].weight @ lb[2].bias + lc[0].bias)
        lm[4].weight.copy_(lc[1].weight)
        lm[4].bias.copy_(lc[1].bias)
        x = torch.randn(1000, 3, dtype=torch.float64, generator=g)
        diff = float((merged(x) - c(b(a(x)))).abs().max())
    ok = diff < 1e-12
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"2-, 3- and 2-layer nets merge into one 5-layer net with hidden widths "
        f"(5, 6, 7, 8); max deviation {diff:.1e} (< 1e-12 required)",
        covered="1000 random inputs, one random triple of nets",
        measured=diff,
        claimed=0.0,
        scope="full",
    )


# ------------------------------------------------------------------------- HC-K2 and HC-P1
@check(
    "HC-K2",
    "HC-P1",
    mutants={
        "value-perturbed": "W_V scaled by 1 + 1e-6",
        "position-block-missing": "the encoder's block for position 1 is dropped (a missing unit)",
    },
)
def memorization(ctx: Context, cid):
    k2 = claim("HC-K2")
    rows = []
    g = torch.Generator().manual_seed(ctx.seed)
    for T in (4, 16, 64):
        c = build("hc_k2", T=T, d=2)
        with torch.no_grad():
            if ctx.is_mutant("value-perturbed"):
                c.model.attention(0).v.weight.mul_(1 + 1e-6)
            if ctx.is_mutant("position-block-missing"):
                c.model.embedding_linear(0).weight[:2].zero_()
        X = torch.rand(256, T, 2, dtype=torch.float64, generator=g)
        with torch.no_grad():
            cls = c.model.hidden_states(X)[-1][:, -1]
        err = float((cls - X.reshape(256, -1) / T).abs().max())
        # the adversarial search of the read-out where it is cheap (T <= 16; at T = 64 the
        # attention identity above covers the same map on random inputs)
        sup = c.measure(budget=128, seed=ctx.seed)["sup_error"] if T <= 16 else float("nan")
        # HC-K2's width and attention error, read from the catalogue: the built head's width
        # (measured, the CLS state's size) must be at most the claimed one, and the claimed one
        # at least the T·d numbers memorised (a continuous map of [0,1]^{Td} into fewer
        # dimensions is not injective, invariance of domain, so no read-out recovers X)
        w_claim = k2.evaluate_float("width", T=T, d=2)
        e_claim = k2.evaluate_float("attention_error")
        rows.append(
            {
                "T": T,
                "attention_error": err,
                "readout_sup_error": sup,
                "width_built": int(cls.shape[-1]),
                "width_claimed": w_claim,
                "numbers_memorised": T * 2,
                "claimed_attention_error": e_claim,
            }
        )
    worst = max(max(r["attention_error"], np.nan_to_num(r["readout_sup_error"])) for r in rows)
    e_claim = rows[0]["claimed_attention_error"]
    width_ok = all(
        r["width_built"] <= r["width_claimed"] + 1e-9
        and r["width_claimed"] >= r["numbers_memorised"] - 1e-9
        for r in rows
    )
    ok = worst <= e_claim + 1e-12 and width_ok
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"attention output equals vec(X)/T and the linear read-out returns X; max "
        f"deviation {worst:.1e} (<= the claimed {e_claim:g} + 1e-12 round-off); width built "
        + ", ".join(f"T={r['T']}: {r['width_built']}" for r in rows)
        + " against the claimed "
        + ", ".join(f"{r['width_claimed']:g}" for r in rows)
        + f" ({'consistent' if width_ok else 'NOT consistent'}: built <= claimed, claimed >= "
        "T·d, the numbers memorised)",
        covered="T in {4, 16, 64}, d = 2: 256 random sequences per T; adversarial "
        "search of the read-out at T = 4, 16",
        measured=worst,
        claimed=e_claim,
        rows=rows,
        slack=math.nan,  # an exact identity: no room to measure
        formula_note="reads HC-K2's formulas (HC-P1 has none of its own)" if cid == "HC-P1" else "",
        plot={
            "x": "T",
            "y": ["attention_error", "readout_sup_error"],
            "title": f"{cid}: memorizing head (exact up to round-off)",
            "xlabel": "T",
            "ylabel": "max deviation (0 not shown)",
        },
        scope="full"
        if cid == "HC-P1"
        else "partial: the memorizing attention (e_t ⊗ x, zero query -> vec(X)/T) and its "
        "linear read-out; F1-F3 of the 5-layer F̂ are checked under HC-L9 / HC-L8",
    )


# ------------------------------------------------------------------------------------ HC-A3
def _interpolant_error(f, N: int, xs: np.ndarray, drop_first: bool = False) -> float:
    """The sup error on ``xs`` of the two-layer ReLU net of width N that interpolates f on the N+1
    uniform knots of [0, 1] (unit j = ReLU(x - j/N), output weights the slope changes)."""
    from approxtheory.model import MLP

    knots = np.linspace(0, 1, N + 1)
    vals = f(knots)
    sl = np.diff(vals) / np.diff(knots)  # slope on each cell
    net = MLP(1, [N], 1).double()
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        lin[0].weight.fill_(1.0)
        lin[0].bias.copy_(torch.tensor(-knots[:-1]))
        outw = np.concatenate([[sl[0]], np.diff(sl)])
        if drop_first:
            outw[0] = 0.0
        lin[1].weight.copy_(torch.tensor(outw)[None])
        lin[1].bias.fill_(float(vals[0]))
        out = net(torch.tensor(xs)[:, None])[:, 0].numpy()
    return float(np.abs(out - f(xs)).max())


def _dist_to_lattice(x, period):
    return np.abs(x - period * np.round(x / period))


@check("HC-A3", mutants={"first-unit-missing": "the interpolant's first ReLU unit dropped"})
def ffn_exponent(ctx: Context, cid):
    """Assumption 3's exponents for d = D = 1 with an explicit two-layer ReLU net of width N (the
    interpolant on N+1 knots): its sup error δ(N) must fall at least like N^(-1/γ) (width <=
    C/δ^γ), per target, each slope interval at or below -1/γ + RATE_TOL, with γ read from the
    catalogue:

    * ``gamma_barron`` on C^∞ targets (finite Barron norm);
    * ``gamma_worst = max(d, D)`` on Lipschitz, non-smooth targets: |x - a|, max/min of shifted
      coordinates, triangle waves of modulus L (kinks at multiples of 1/3, never on the
      power-of-two knots, so the kink error is exactly ∝ 1/N), and the worst-case tooth family
      f_N = L·dist(x - 1/(6N), Z/(2N)): its 2N - 1 whole teeth (height L/(4N)) outnumber the
      N - 1 interior breakpoints of any width-N net, so some tooth is fitted by an affine piece
      and the error is >= L/(8N) [derived, breakpoint counting]: no width-N net does better than
      ∝ 1/N there, and γ < max(d, D) = 1 is false.
      The interpolant's error is checked to be at least that lower bound in every cell."""
    c = claim(cid)
    g_worst = float(c.evaluate("gamma_worst", d=1, D=1))
    g_barron = float(c.evaluate("gamma_barron"))
    drop = ctx.is_mutant("first-unit-missing")
    rng = np.random.default_rng(ctx.seed)
    Ns = [4, 8, 16, 32, 64, 128]
    xs = np.linspace(0, 1, 20001)
    smooth = []
    for _ in range(ctx.pick(4, 16)):
        a, w, ph, s2 = (
            rng.uniform(0.2, 0.5),
            rng.uniform(1, 8),
            rng.uniform(0, 6),
            rng.uniform(0.02, 0.2),
        )
        x0 = rng.uniform(0.2, 0.8)
        smooth.append(
            lambda x, a=a, w=w, ph=ph, s2=s2, x0=x0: (
                0.5 + a * np.sin(w * x + ph) * np.exp(-((x - x0) ** 2) / s2) / 1.5
            )
        )
    third = 1.0 / 3.0
    lip: list[tuple[str, Any]] = []
    for j in range(ctx.pick(3, 24)):
        L = rng.uniform(0.5, 2.0)
        kind = j % 3
        if kind == 0:
            a = third if j % 2 == 0 else 2 * third
            lip.append(("abs", lambda x, L=L, a=a: L * np.abs(x - a) / 2))
        elif kind == 1:
            lip.append(
                (
                    "max-min",
                    lambda x, L=L: L * (np.maximum(x, third) + np.minimum(x, 2 * third)) / 4,
                )
            )
        else:
            per = 2 * third if j % 2 == 0 else third
            lip.append(("triangle", lambda x, L=L, per=per: L * _dist_to_lattice(x, per)))
    rows, fits_s, fits_l, fits_t = [], [], [], []
    for j, f in enumerate(smooth):
        ds = [_interpolant_error(f, N, xs, drop) for N in Ns]
        rows += [{"target": f"smooth{j}", "N": N, "sup_error": dl} for N, dl in zip(Ns, ds)]
        fits_s.append(fit_rate(Ns, [max(dl, 1e-300) for dl in ds], seed=ctx.seed))
    for j, (name, f) in enumerate(lip):
        ds = [_interpolant_error(f, N, xs, drop) for N in Ns]
        rows += [{"target": f"{name}{j}", "N": N, "sup_error": dl} for N, dl in zip(Ns, ds)]
        fits_l.append(fit_rate(Ns, [max(dl, 1e-300) for dl in ds], seed=ctx.seed))
    below_lb = []
    for j in range(ctx.pick(1, 6)):
        L = rng.uniform(0.5, 2.0)
        ds = []
        for N in Ns:
            M = 2 * N  # teeth; shifted by a third of a tooth, so every knot has the same phase
            dl = _interpolant_error(
                lambda x, M=M, L=L: L * _dist_to_lattice(x - 1.0 / (3 * M), 1.0 / M), N, xs, drop
            )
            lb = L / (4 * M)
            if dl < lb * (1 - 1e-9):
                below_lb.append((j, N))
            ds.append(dl)
            rows.append({"target": f"tooth{j}", "N": N, "sup_error": dl, "lower_bound": lb})
        fits_t.append(fit_rate(Ns, [max(dl, 1e-300) for dl in ds], seed=ctx.seed))
    thr_b, thr_w = -1 / g_barron, -1 / g_worst
    ok_s = all(_fit_ok(f, thr_b, "below") for f in fits_s)
    ok_l = all(_fit_ok(f, thr_w, "below") for f in fits_l + fits_t)
    ok = ok_s and ok_l and not below_lb
    # room on the primary exponent (gamma_barron): claimed γ / the γ the slowest smooth target
    # needs (-1/slope); on gamma_worst the same ratio for the Lipschitz targets (reported)
    need_s = max(-1 / f.slope for f in fits_s) if all(f.slope < 0 for f in fits_s) else math.inf
    need_l = (
        max(-1 / f.slope for f in fits_l + fits_t)
        if all(f.slope < 0 for f in fits_l + fits_t)
        else math.inf
    )
    slack = g_barron / need_s if math.isfinite(need_s) else math.nan
    slack_w = g_worst / need_l if math.isfinite(need_l) else math.nan

    def fmt(fs):
        return ", ".join(f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]" for f in fs)

    failed = (
        ([] if ok_s else [f"a C^∞ target decays slower than N^{thr_b:g}"])
        + ([] if ok_l else [f"a Lipschitz target decays slower than N^{thr_w:g}"])
        + ([f"interpolant below the counting lower bound at {below_lb}"] if below_lb else [])
    )
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error δ of the width-N interpolant vs N, fitted exponent per target. C^∞ targets "
        f"(γ_barron = {g_barron:g}: each interval at or below {thr_b:g} + {RATE_TOL}): "
        f"{fmt(fits_s)}. Lipschitz non-smooth targets (γ_worst = max(d, D) = {g_worst:g}: at or "
        f"below {thr_w:g} + {RATE_TOL}): {fmt(fits_l)}; worst-case tooth family: {fmt(fits_t)} "
        f"(interpolant >= the breakpoint-counting lower bound L/(8N) in "
        f"{'every' if not below_lb else 'not every'} cell, so the best width-N net is also "
        f"∝ 1/N there). γ needed: {need_s:.3g} on C^∞ targets (slack of γ_barron "
        f"{slack:.3g}), {need_l:.3g} on Lipschitz ones (slack of γ_worst {slack_w:.3g}: tight)"
        + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"{len(smooth)} random C^∞ functions, {len(lip)} Lipschitz kinked functions "
        f"(|x - a|, max/min, triangle waves), {len(fits_t)} tooth families f_N on [0,1], widths "
        f"{Ns}, sup over 20001 points",
        rows=rows,
        slopes=[slope_row(f, f"C^∞ target {j}", thr_b) for j, f in enumerate(fits_s)]
        + [slope_row(f, f"Lipschitz target {j}", thr_w) for j, f in enumerate(fits_l)]
        + [slope_row(f, f"tooth family {j}", thr_w) for j, f in enumerate(fits_t)],
        slack=slack,
        measured={"gamma_needed_smooth": need_s, "gamma_needed_lipschitz": need_l},
        claimed={"gamma_barron": g_barron, "gamma_worst": g_worst},
        plot={
            "x": "N",
            "y": ["sup_error"],
            "group": "target",
            "title": f"{cid}: two-layer ReLU interpolant",
            "xlabel": "width N",
            "ylabel": "sup error",
        },
        scope="partial: d = D = 1 with an explicit two-layer ReLU interpolant: γ_barron as an "
        "upper exponent on C^∞ targets and γ_worst = max(d, D) on Lipschitz targets, where the "
        "tooth family makes it tight (breakpoint counting); d > 1 and the Barron class "
        "beyond smooth 1-D functions are not tested",
    )


# ------------------------------------------------------------------ trained experiments (P7-P11)
#: a stated margin: a "drop" or "gap" of NMSE counts when it is at least this factor
MARGIN = 3.0

#: what is known to reach the paper's magnitude on this task (issue 26: an independent
#: re-implementation, D = 4, T = 16, N = 32, per-head width 8, 2 seeds): said in a gated verdict
RECIPE_HINT = (
    "Known to reach the paper's magnitude (docs/findings/headcount-recipe.md, measured here): "
    "Adam lr 2e-3, cosine, 16,000 steps of batch 256, N = 32, per-head width 8 gave h = D = 4 "
    "min-over-seeds NMSE 5.9e-5, 2.9e-5, 5.3e-5, 4.9e-5 at T = 8, 16, 32, 64 (Table 2: 6.1e-5, "
    "4.4e-5, 4.8e-5, 8.8e-6), at 95, 220, 435, 1590 s of one CPU thread per cell"
)


_TRAINED_COLUMNS = {
    "seed": ("int", "the training seed (several seeds per configuration: min over seeds)"),
    "hidden": ("int", "encoder / read-out MLP hidden size N"),
    "head_dim": ("int", "per-head width n"),
    "total_width": ("int", "total attention width E (fixed-width variants)"),
    "layers": ("int", "attention layers L"),
    "steps": ("int", "training steps (reported, not used by the criterion)"),
    "params": ("int", "parameter count (reported)"),
}
results_schema(
    "HC-P8",
    required={
        "D": ("int", "the task's intrinsic dimension D (Σ_{i<=D} max_t a_iᵀx(t)); D >= 2"),
        "heads": ("int", "attention heads h of the one-layer model"),
        "T": ("int", "sequence length"),
        "val_nmse": ("metric", "validation NMSE = MSE / Var(y) of the trained model"),
    },
    optional=_TRAINED_COLUMNS,
    defaults={"seed": 0},
    route=lambda r: f"headcount_phase_d{r['D']}" if r["D"] >= 2 else _bad_d(r["D"]),
    doc="trained one-layer models on the synthetic D-retrieval task, one row per (D, h, T, "
    "seed); each D is judged by HC-P8's criterion and the training-adequacy gate (the paper's "
    "Table 2 magnitudes apply at D = 4)",
)
results_schema(
    "HC-P9",
    required={
        "D": ("int", "the task's intrinsic dimension D"),
        "heads": ("int", "attention heads h (the criterion reads h = D-1 and h = D)"),
        "T": ("int", "sequence length"),
        "hidden": ("int", "MLP hidden size N (the swept parameter)"),
        "val_nmse": ("metric", "validation NMSE"),
    },
    optional={
        **_TRAINED_COLUMNS,
        "mlp_params": ("int", "MLP parameter count (the slope's x; default: hidden)"),
    },
    defaults={"seed": 0, "head_dim": 8},
    route=lambda r: "headcount_width",
    doc="an N sweep at h = D-1 and h = D: the log-log slope of NMSE in the MLP size per T",
)
results_schema(
    "HC-P10",
    required={
        "D": ("int", "the task's intrinsic dimension D (the variants use D = 3)"),
        "heads": ("int", "attention heads h per layer"),
        "T": ("int", "sequence length"),
        "val_nmse": ("metric", "validation NMSE"),
    },
    optional=_TRAINED_COLUMNS,
    defaults={"seed": 0, "layers": 1},
    route=lambda r: "headcount_variants",
    doc="fixed-total-width variants with one and two layers (L·h against D)",
)


def _net_text(net: dict | None) -> str:
    """The net a Lipschitz search's largest ratio came from, as evidence text."""
    if not net:
        return "no net (no ratio above 0)"
    kind = "extremal all-ones" if net["extremal"] else "random"
    return f"p = {net['p']}, n = {net['n']} ({kind} net)"


def _bad_d(D: int):
    raise ValueError(f"D = {D}: the task needs D >= 2")


def table2_magnitudes(D: int) -> dict:
    """The paper's Table 2 mean validation NMSE at D per (T, h), as gate magnitudes (empty where
    the table has no such configuration: it is D = 4 only)."""
    from approxtheory.headcount_analysis import synthetic_table2

    return {
        (r["T"], r["heads"]): PaperMagnitude(
            r["val_nmse_mean"], f"Table 2, D = {D}, h = {r['heads']}, T = {r['T']}, mean"
        )
        for r in synthetic_table2()
        if r["D"] == D
    }


def _heads_at_least(r, D: int) -> bool:
    return int(r["heads"]) >= D


def _run_figures(rows) -> dict:
    """What a trained run was: its grid's T, steps, hidden sizes, widths, parameters, seeds."""
    keys = ("T", "steps", "hidden", "head_dim", "total_width", "layers", "params")
    grid = {k: sorted({int(r[k]) for r in rows if k in r}) for k in keys}
    out: dict[str, Any] = {k: v for k, v in grid.items() if v}
    out["seeds"] = len({int(r["seed"]) for r in rows if "seed" in r})
    fin = [float(r["val_nmse"]) for r in rows if math.isfinite(float(r["val_nmse"]))]
    out["best_val_nmse"] = min(fin) if fin else None
    return out


def gated_verdict(cid, gates: list, rows_by: dict, covered: str) -> Verdict | None:
    """The not-checkable verdict of a trained check whose gates did not all pass (None when they
    did): what was reached, the paper's magnitude, the known recipe (RECIPE_HINT)."""
    failed = [(name, g) for name, g in gates if not g.passed]
    if not failed:
        return None
    from .tradeoffs import run_text

    run = "; ".join(f"{name}: {run_text(_run_figures(rows_by[name]))}" for name, _ in failed)
    return Verdict(
        cid,
        "not-checkable",
        " ".join(f"[{name}] {g.reason()}" for name, g in failed) + f" (ran: {run})",
        covered=covered + "; gated: the criterion was not applied",
        scope="none",
        scale=scale_record(gates, rows_by),
    )


def scale_record(gates: list, rows_by: dict) -> dict:
    """A trained verdict's ``scale``: per experiment, what was run and, per reference cell,
    what was reached against the paper's figure."""
    return {
        name: {"run": _run_figures(rows_by[name]), "reference": g.reference, "cells": g.scale()}
        for name, g in gates
    }


def _exp_rows(name: str, profile: str) -> tuple:
    """(rows or None, seconds, note) of an experiment through the runner
    (:func:`._core.experiment_rows`; kept as the one name the head-count, InfoFlow and Prism
    checks read rows through, so tests can substitute rows)."""
    rows, _trace, secs, note = experiment_rows(name, profile)
    return rows, secs, note


_not_run = not_run


def _best(rows, key="val_nmse", by=("heads", "T")) -> dict:
    """min over seeds of ``key`` per ``by`` (the paper's Fig. 1 statistic)."""
    best: dict = {}
    for r in rows:
        k = tuple(int(r[b]) for b in by)
        best[k] = min(best.get(k, math.inf), float(r[key]))
    return best


def _reversal(best: dict) -> dict:
    from approxtheory.headcount_analysis import reversal_scores

    return reversal_scores([{"heads": h, "T": T, "err": v} for (h, T), v in best.items()], "err")


def phase_criterion(rows, D: int) -> dict:
    """HC-P8's stated criterion on one experiment's rows (digest §6 P8): (a) at the largest T
    the largest log-drop of NMSE between consecutive h is from h = D-1 to h = D, for the
    min over seeds (there strictly the largest and at least a factor MARGIN) and in at least 2
    of 3 (a majority of the) seeds; (b) for every h < D the
    NMSE grows from the smallest to the largest T; (c) for h >= D it grows by less than for every
    h < D. (b) and (c) need two T (else reported as not tested)."""
    best = _best(rows)
    hs = sorted({h for h, _ in best})
    Ts = sorted({T for _, T in best})
    Tmin, Tmax = Ts[0], Ts[-1]

    def drops_of(b):
        return {(h1, h2): math.log(b[(h1, Tmax)] / b[(h2, Tmax)]) for h1, h2 in zip(hs, hs[1:])}

    drops = drops_of(best)
    # the drop at D - 1 -> D must be the strictly largest and a drop that counts (at least a
    # factor MARGIN): a smooth decline in h with no transition (ties, or small steady drops)
    # must fail. Calibrated: the paper's Table 2 passes at every tabulated T (its 3 -> 4 log-drop
    # is 2.4-5.0 and the largest), see tests/test_gate.py
    jump = drops.get((D - 1, D), -math.inf)
    others = [v for k, v in drops.items() if k != (D - 1, D)]
    a_min = jump > max(others, default=-math.inf) and jump >= math.log(MARGIN)
    seeds = sorted({int(r["seed"]) for r in rows})
    per_seed = []
    for sd in seeds:
        b = _best([r for r in rows if int(r["seed"]) == sd])
        dr = drops_of(b)
        per_seed.append(max(dr, key=dr.get) == (D - 1, D))
    need = max(1, math.ceil(2 * len(seeds) / 3))
    a = a_min and sum(per_seed) >= need
    growth = {h: best[(h, Tmax)] / best[(h, Tmin)] for h in hs}
    two_T = len(Ts) >= 2
    b_ok = all(growth[h] > 1 for h in hs if h < D) if two_T else None
    below = [growth[x] for x in hs if x < D]
    c_ok = all(growth[h] < min(below) for h in hs if h >= D) if two_T and below else None
    failed = [
        t
        for t, good in (
            (
                f"(a) D = {D}: the largest drop at T = {Tmax} is not at h = {D - 1} -> {D}, "
                f"strictly and by at least a factor {MARGIN:g} (min over seeds: {a_min}, log-drop "
                f"{jump:.2f}; seeds: {sum(per_seed)}/{len(seeds)}, need {need})",
                a,
            ),
            (f"(b) D = {D}: NMSE does not grow with T below D", b_ok is not False),
            (f"(c) D = {D}: NMSE grows as much with T at h >= D", c_ok is not False),
        )
        if not good
    ]
    return {
        "best": best,
        "hs": hs,
        "Ts": Ts,
        "drops": drops,
        "growth": growth,
        "effect": drops.get((D - 1, D), float("nan")),
        "ok": not failed,
        "failed": failed,
        "tested": "(a), (b), (c)" if two_T else "(a) only (one T)",
        "R": _reversal(best),
        "steps": int(rows[0].get("steps", 0)),
        "seeds": len(seeds),
    }


@check(
    "HC-P8",
    mutants={
        "heads-relabelled": "the results' head counts read in reverse order (a bookkeeping bug)"
    },
)
def phase_transition(ctx: Context, cid):
    """Trained one-layer models on Σ max a_iᵀx with D = 2 (headcount_phase_d2) and D = 4
    (headcount_phase_d4): :func:`phase_criterion` for each D; consistent when both pass."""
    parts, table, witness, notes = [], [], {}, []
    gates, rows_by = [], {}
    given = active_results()
    # outside results (verify --results) decide on the D they hold; our own runs on D = 2 and 4
    Ds = sorted(int(n.rsplit("d", 1)[1]) for n in given["groups"]) if given else (2, 4)
    for D in Ds:
        name = f"headcount_phase_d{D}"
        raw, _, note = _exp_rows(name, ctx.profile)
        if raw is None:
            return _not_run(cid, name, ctx.profile, note)
        # the gate reads the run as it was trained (a bookkeeping mutant is applied after it)
        gates.append(
            (
                name,
                training_gate(
                    raw,
                    control=functools.partial(_heads_at_least, D=D),
                    describe=f"h >= D = {D}, one layer, per T",
                    paper=table2_magnitudes(D),
                    budget=RECIPE_HINT,
                ),
            )
        )
        rows_by[name] = raw
        rows = [dict(r) for r in raw]
        if ctx.is_mutant("heads-relabelled"):
            hs = sorted({int(r["heads"]) for r in rows})
            for r in rows:
                r["heads"] = hs[-1] + hs[0] - int(r["heads"])
        res = phase_criterion(rows, D)
        parts.append((D, res))
        table += [
            {"D": D, "heads": h, "T": T, "min_nmse": v} for (h, T), v in sorted(res["best"].items())
        ]
        if not res["ok"]:
            witness[f"D={D}"] = {
                "failed": res["failed"],
                "min_nmse": {f"h={h},T={T}": v for (h, T), v in sorted(res["best"].items())},
            }
        notes.append(note)
    covered = (
        " and ".join(f"headcount_phase_d{D}" for D in Ds)
        + f" ({ctx.profile}; "
        + "; ".join(notes)
        + "); criterion: (a) largest log-drop at h = D-1 -> D at the largest T (min over seeds "
        "and 2 of 3 seeds), (b) growth with T below D, (c) less growth at h >= D"
    )
    gated = gated_verdict(cid, gates, rows_by, covered)
    if gated is not None:
        return gated
    ok = all(res["ok"] for _, res in parts)
    ev = []
    for D, res in parts:
        Tmax = res["Ts"][-1]
        ev.append(
            f"D = {D} ({res['steps'] or 'unstated'} steps, {res['seeds']} seed(s), "
            f"tested {res['tested']}): "
            f"min-over-seeds NMSE "
            + ", ".join(f"h={h} T={T}: {v:.3g}" for (h, T), v in sorted(res["best"].items()))
            + f"; log-drops at T = {Tmax}: "
            + ", ".join(f"{a}->{b}: {v:.2f}" for (a, b), v in res["drops"].items())
            + f"; effect size (log-drop {D - 1}->{D}) {res['effect']:.2f}; growth over T: "
            + ", ".join(f"h={h}: x{v:.2f}" for h, v in res["growth"].items())
            + "; R(h): "
            + (", ".join(f"{h}: {v:.2f}" for h, v in res["R"].items()) or "one T only")
            + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        )
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        ". ".join(ev) + ". Both runs passed the training-adequacy gate (h = D trained to "
        "within its bounds)",
        covered=covered,
        scale=scale_record(gates, rows_by),
        measured={f"D={D}": res["effect"] for D, res in parts},
        rows=table,
        witness=None if ok else witness,
        plot={
            "x": "T",
            "y": ["min_nmse"],
            "group": "heads",
            "title": f"{cid}: trained NMSE vs T (D = 2 and 4)",
            "xlabel": "T",
            "ylabel": "min-over-seeds NMSE",
        },
        scope=f"surrogate: scaled-down Fig. 1a ({ctx.profile} profile: "
        + ", ".join(f"D = {D}: h {res['hs']}, T {res['Ts']}" for D, res in parts)
        + ") on this toolkit's orthogonal-a_i task",
    )


# ------------------------------------------------------------------------------------ HC-P9
def width_criterion(rows, D: int, mutant: str | None = None) -> dict:
    """Per T: the log-log slope of min-over-seeds NMSE in the MLP parameter count with its 95 %
    bootstrap interval (fit_rate) at h = D-1 and h = D. Criterion (issue 10): the interval
    excludes 0 (lies below 0) at h = D-1 and includes 0 at h = D, for every T."""
    # outside results may give N only: its log-log slope is read in N then
    rows = [r if "mlp_params" in r else {**r, "mlp_params": r["hidden"]} for r in rows]
    best = _best(rows, by=("heads", "T", "mlp_params"))
    Ts = sorted({T for _, T, _ in best})
    fits, ok, failed = {}, True, []
    for T in Ts:
        for h in (D - 1, D):
            pts = sorted((p, v) for (hh, TT, p), v in best.items() if hh == h and TT == T)
            fit = fit_rate([p for p, _ in pts], [v for _, v in pts], seed=T * 10 + h)
            fits[(h, T)] = fit
        lo_fit, hi_fit = fits[(D - 1, T)], fits[(D, T)]
        if mutant == "heads-swapped":
            lo_fit, hi_fit = hi_fit, lo_fit
        below = lo_fit.ci_high < 0
        flat = hi_fit.contains(0.0)
        if not below:
            failed.append(
                f"T = {T}: slope interval at h = D-1 [{lo_fit.ci_low:.2f}, "
                f"{lo_fit.ci_high:.2f}] does not lie below 0"
            )
        if not flat:
            failed.append(
                f"T = {T}: slope interval at h = D [{hi_fit.ci_low:.2f}, "
                f"{hi_fit.ci_high:.2f}] excludes 0"
            )
        ok = ok and below and flat
    return {"fits": fits, "ok": ok, "failed": failed, "Ts": Ts, "best": best}


@check(
    "HC-P9",
    mutants={"heads-swapped": "the fits at h = D-1 and h = D exchanged (a bookkeeping bug)"},
)
def width_scaling(ctx: Context, cid):
    """headcount_width (D = 2): :func:`width_criterion`; next to the slopes, the theory's
    exponents (NMSE ~ ε² ~ M^(-2/γ) with HC-A3's Barron γ at h = D, M^(-2/k) with HC-T2b's k at
    h = D - 1 where k > 0; vacuous where k <= 0)."""
    name = "headcount_width"
    raw, _, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    D = int(raw[0]["D"])
    n = int(raw[0]["head_dim"])
    covered = (
        f"{name} ({ctx.profile}; {note}): D = {D}, h in {{{D - 1}, {D}}}, N in "
        f"{sorted({int(r['hidden']) for r in raw})}, T in {sorted({int(r['T']) for r in raw})}; "
        "criterion: slope interval below 0 at h = D-1 and containing 0 at h = D, every T"
    )
    gates = [
        (
            name,
            training_gate(
                raw,
                control=lambda r: int(r["heads"]) == D,
                describe=f"h = D = {D}, per T (min over N and seeds)",
                paper=table2_magnitudes(D),
                budget=RECIPE_HINT,
            ),
        )
    ]
    gated = gated_verdict(cid, gates, {name: raw}, covered)
    if gated is not None:
        return gated
    res = width_criterion(raw, D, ctx.mutant)
    gamma = float(claim("HC-A3").evaluate("gamma_barron"))
    slopes = []
    for (h, T), fit in sorted(res["fits"].items()):
        pred: float | None
        if h >= D:
            pred = -2 / gamma
        else:
            k = float(claim("HC-T2b").evaluate("k", T=T, s=h, n=n, D=D))
            pred = -2 / k if k > 0 else None  # vacuous: the lower bound predicts nothing
        row = slope_row(fit, f"h={h} T={T}", pred if pred is not None else float("nan"))
        row["vacuous"] = pred is None
        slopes.append(row)
    rows = [
        {"heads": h, "T": T, "mlp_params": p, "min_nmse": v}
        for (h, T, p), v in sorted(res["best"].items())
    ]
    return Verdict(
        cid,
        "consistent-empirical" if res["ok"] else "inconsistent",
        "log-log slopes of NMSE in the MLP parameter count: "
        + "; ".join(
            f"h={h} T={T}: {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"
            for (h, T), f in sorted(res["fits"].items())
        )
        + f". HC-T2b's exponent at h = D-1 = {D - 1}, n = {n}: "
        + ", ".join(
            f"T={T}: k = {float(claim('HC-T2b').evaluate('k', T=T, s=D - 1, n=n, D=D)):.2f}"
            for T in res["Ts"]
        )
        + " (k <= 0: the lower bound is vacuous there and predicts no slope)"
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else ""),
        covered=covered,
        scale=scale_record(gates, {name: raw}),
        measured={f"h={h},T={T}": f.slope for (h, T), f in res["fits"].items()},
        rows=rows,
        slopes=slopes,
        witness=None if res["ok"] else {"failed": res["failed"]},
        plot={
            "x": "mlp_params",
            "y": ["min_nmse"],
            "group": "heads",
            "title": f"{cid}: NMSE vs MLP parameters (D = {D})",
            "xlabel": "MLP parameters",
            "ylabel": "min-over-seeds NMSE",
        },
        scope=f"surrogate: scaled-down Fig. 1b ({ctx.profile} profile, D = {D}); the theory's "
        "exponents are drawn for comparison only (the lower bound is vacuous at these T)",
    )


# ------------------------------------------------------------------------------------ HC-P10
def variants_criterion(rows, D: int) -> dict:
    """HC-P10 on D = 3 with fixed total width: (i) one layer: NMSE drops by at least MARGIN from
    h = D-1 to h = D; (ii) two layers: at h = ⌈D/2⌉ (L·h >= D) the NMSE is at least MARGIN below
    the one-layer NMSE at the same h (L·h < D); (iii) where the grid has it (full profile), two
    layers drop by at least MARGIN from h = ⌈D/2⌉-1 to ⌈D/2⌉."""
    best = _best(rows, by=("layers", "heads", "T"))
    Tmax = max(T for _, _, T in best)
    g = {(L, h): v for (L, h, T), v in best.items() if T == Tmax}
    h2 = math.ceil(D / 2)
    i_eff = math.log(g[(1, D - 1)] / g[(1, D)])
    ii_eff = math.log(g[(1, h2)] / g[(2, h2)])
    checks = [
        (
            f"(i) one layer: log-drop h = {D - 1} -> {D} = {i_eff:.2f} (needs >= log {MARGIN:g})",
            i_eff >= math.log(MARGIN),
        ),
        (
            f"(ii) h = {h2}: log(NMSE 1 layer / 2 layers) = {ii_eff:.2f} (needs >= log {MARGIN:g})",
            ii_eff >= math.log(MARGIN),
        ),
    ]
    if (2, h2 - 1) in g:
        iii = math.log(g[(2, h2 - 1)] / g[(2, h2)])
        checks.append(
            (
                f"(iii) two layers: log-drop h = {h2 - 1} -> {h2} = {iii:.2f} "
                f"(needs >= log {MARGIN:g})",
                iii >= math.log(MARGIN),
            )
        )
    return {
        "g": g,
        "Tmax": Tmax,
        "checks": checks,
        "ok": all(c for _, c in checks),
        "effects": {"i": i_eff, "ii": ii_eff},
    }


@check(
    "HC-P10",
    mutants={"layers-relabelled": "the one- and two-layer results exchanged (a bookkeeping bug)"},
)
def variants(ctx: Context, cid):
    """headcount_variants (D = 3, fixed total width E = 24): :func:`variants_criterion`."""
    name = "headcount_variants"
    raw, _, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    D = int(raw[0]["D"])
    h2 = math.ceil(D / 2)
    covered = (
        f"{name} ({ctx.profile}; {note}): D = {D}, E = 24 (per-head ⌈24/h⌉), "
        f"h in {sorted({int(r['heads']) for r in raw})}, L in {{1, 2}}; margin x{MARGIN:g}"
    )
    gates = [
        (
            name,
            training_gate(
                raw,
                control=lambda r: int(r["layers"]) * int(r["heads"]) >= D,
                describe=f"L·h >= D = {D} (one layer at h >= {D}, two at h >= {h2}), per T",
                config=("layers", "heads"),
                budget=RECIPE_HINT,
            ),
        )
    ]
    gated = gated_verdict(cid, gates, {name: raw}, covered)
    if gated is not None:
        return gated
    rows = [dict(r) for r in raw]
    if ctx.is_mutant("layers-relabelled"):
        for r in rows:
            r["layers"] = 3 - int(r["layers"])
    res = variants_criterion(rows, D)
    table = [{"layers": L, "heads": h, "min_nmse": v} for (L, h), v in sorted(res["g"].items())]
    bad = [t for t, c in res["checks"] if not c]
    return Verdict(
        cid,
        "consistent-empirical" if res["ok"] else "inconsistent",
        f"min-over-seeds NMSE at T = {res['Tmax']}: "
        + ", ".join(f"L={L} h={h}: {v:.3g}" for (L, h), v in sorted(res["g"].items()))
        + "; "
        + "; ".join(t for t, _ in res["checks"])
        + (". Failed: " + "; ".join(bad) if bad else ""),
        covered=covered,
        scale=scale_record(gates, {name: raw}),
        measured=res["effects"],
        rows=table,
        witness=None if res["ok"] else {"failed": bad},
        plot={
            "x": "heads",
            "y": ["min_nmse"],
            "group": "layers",
            "title": f"{cid}: D = 3, fixed width: NMSE vs h per layer count",
            "xlabel": "heads h",
            "ylabel": "min-over-seeds NMSE",
            "logx": False,
        },
        scope="surrogate: Tables 3-5's variants scaled down (D = 3 with fixed width and two "
        f"layers; {ctx.profile} profile); the D = 4 fixed-width table is not rerun",
    )


# ----------------------------------------------------------------------------------- HC-P6b
#: HC-P6b's training-adequacy gate: an h = D model counts as trained when its validation NMSE is
#: at most this (the threshold IF-P3 and HC-Conj1 use); a T with no trained h = D model leaves
#: the run undecided, never evidence against the claim (issue 26)
P6B_TRAINED_NMSE = TRAINED_NMSE  # the shared gate's threshold (_gate.py)


def _p6b_seeds(rows, h: int, T: int) -> list[float]:
    """The NMSE of every seed of cell (h, T), sorted (a NaN reads as inf: a failure)."""
    out = []
    for r in rows:
        if int(r["heads"]) == h and int(r["T"]) == T:
            v = float(r["val_nmse"])
            out.append(v if math.isfinite(v) else math.inf)
    return sorted(out)


def lower_regime_criterion(rows, D: int, n: int, s: int) -> dict:
    """HC-P6b's stated decision rule (written before the quick profile's result was seen; the
    same rule on every profile). Over the T where HC-T2b's k(T, s, n, D) > 0 (``live``, at
    least two, else ``decided`` is False), with T0 / T1 the smallest / largest live T:

    0. every value finite and positive in the tested cells (NaN / inf / 0 fail: ``inconsistent``);
    1. gate, per model: an h = D model counts as trained when its NMSE <= P6B_TRAINED_NMSE;
       the others are reported and left out (an optimisation failure is not an approximation
       result; the paper's own statistic is the min over seeds). Every live T needs at least
       one trained h = D model, else ``gated`` (undecided at this budget: the run says nothing
       about the separation);
    2. (a) h = s does not improve with T, with every seed: the sorted per-seed NMSE at T1 is >=
       that at T0 rank by rank (holds); < at every rank (refuted); else mixed;
    3. (b) at T1, h = D is at least MARGIN below h = s for every pair of seeds (trained h = D
       models only): min over seeds of NMSE(s, T1) >= MARGIN x max of NMSE(D, T1) (holds);
       max(s) < MARGIN x min(D) (no pair has it: refuted); else mixed.

    ``outcome``: "consistent" (both hold), "inconsistent" (a non-finite cell or a refuted
    part), "gated", "mixed" (the seeds disagree; undecided), "undecided" (< 2 live T). The
    T with k <= 0 are the control, reported and not tested. ``slack``: the room the claim
    has, min of (a)'s worst rank ratio and (b)'s worst pair ratio / MARGIN (>= 1 when both
    hold)."""
    best = _best(rows)
    t2b = claim("HC-T2b")
    Ts = sorted({T for _, T in best})
    ks = {T: float(t2b.evaluate("k", T=T, s=s, n=n, D=D)) for T in Ts}
    live = [T for T in Ts if ks[T] > 0 and (s, T) in best and (D, T) in best]
    all_finite = all(math.isfinite(v) for v in best.values())
    out: dict = {"best": best, "k": ks, "live": live, "Ts": Ts, "checks": [], "slack": None}
    out["R"] = _reversal(best) if all_finite else {}
    base = {"decided": False, "ok": False, "failed": [], "effects": {}, "gate": []}
    if len(live) < 2:
        return {**out, **base, "outcome": "undecided"}
    t0, t1 = live[0], live[-1]
    cells = {(h, T): _p6b_seeds(rows, h, T) for h in (s, D) for T in live}
    finite = all(0 < v < math.inf for vs in cells.values() for v in vs)
    if not finite:
        bad = [
            f"h={h} T={T}" for (h, T), vs in cells.items() if not all(0 < v < math.inf for v in vs)
        ]
        t = f"NMSE finite and positive in every tested cell (not in {', '.join(bad)})"
        return {
            **out,
            **base,
            "decided": True,
            "outcome": "inconsistent",
            "checks": [(t, False)],
            "failed": [t],
        }
    untrained = [(T, v) for T in live for v in cells[(D, T)] if v > P6B_TRAINED_NMSE]
    trained = {T: [v for v in cells[(D, T)] if v <= P6B_TRAINED_NMSE] for T in live}
    gate = [(T, cells[(D, T)]) for T in live]
    base["untrained"] = untrained
    if not all(trained.values()):
        return {**out, **base, "outcome": "gated", "gate": gate}
    cells.update({(D, T): trained[T] for T in live})
    a0, a1 = cells[(s, t0)], cells[(s, t1)]
    m = min(len(a0), len(a1))
    # with unequal seed counts the ranks compared are the m smallest of each
    ranks = [a1[j] / a0[j] for j in range(m)]
    a_state = (
        "holds"
        if all(r >= 1 for r in ranks)
        else ("refuted" if all(r < 1 for r in ranks) else "mixed")
    )
    b_D = cells[(D, t1)]
    worst_gap, best_gap = min(a1) / max(b_D), max(a1) / min(b_D)
    b_state = "holds" if worst_gap >= MARGIN else ("refuted" if best_gap < MARGIN else "mixed")
    checks = [
        (
            f"(a) h = {s}: per-seed NMSE(T = {t1}) / NMSE(T = {t0}), rank by rank: "
            + ", ".join(f"{r:.3g}" for r in ranks)
            + f" (needs >= 1 at every rank: no improvement as k grows from {ks[t0]:.2f} to "
            f"{ks[t1]:.2f}; {a_state})",
            a_state,
        ),
        (
            f"(b) T = {t1}: NMSE(h = {s}) / NMSE(h = {D}) over every pair of seeds in "
            f"[{worst_gap:.3g}, {best_gap:.3g}] (needs >= {MARGIN:g} for every pair; {b_state})",
            b_state,
        ),
    ]
    states = (a_state, b_state)
    outcome = (
        "consistent"
        if states == ("holds", "holds")
        else "inconsistent"
        if "refuted" in states
        else "mixed"
    )
    growth_D = min(cells[(D, t1)]) / min(cells[(D, t0)])
    return {
        **out,
        "decided": True,
        "outcome": outcome,
        "checks": [(t, st == "holds") for t, st in checks],
        "states": {"a": a_state, "b": b_state},
        "ok": outcome == "consistent",
        "failed": [t for t, st in checks if st == "refuted"],
        "mixed": [t for t, st in checks if st == "mixed"],
        "gate": gate,
        "untrained": untrained,
        "effects": {"growth_h_s_worst_rank": min(ranks), "gap_at_Tmax_worst_pair": worst_gap},
        "slack": min(min(ranks), worst_gap / MARGIN),
        "growth_h_D": growth_D,
    }


@check(
    "HC-P6b",
    mutants={"heads-relabelled": "the one- and two-head results exchanged (a bookkeeping bug)"},
)
def lower_regime(ctx: Context, cid):
    """headcount_lower_regime (D = 2, n = 2, h = 1 against h = 2; quick: T = 32, 64; full:
    T = 16..128): :func:`lower_regime_criterion`, with its training-adequacy gate (the two-head
    models must reach NMSE <= P6B_TRAINED_NMSE at every T with k > 0, else not-checkable,
    undecided at this budget). HC-T2b's k is read through the catalogue inside the call."""
    name = "headcount_lower_regime"
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import get

    formula_note = (
        "reads HC-T2b's k(T, s, n, D) from the catalogue to choose the T where the bound is "
        "not vacuous; HC-P6b itself has no formula (its x3 margin and regime D = 2, n = 2, "
        "s = 1 are in its statement)"
    )
    used = ctx.profile if ctx.profile in get(name).grids else "full"
    raw, _, note = _exp_rows(name, used)
    sc = (
        None
        if raw is None
        else scale_record(
            [
                (
                    name,
                    training_gate(
                        raw,
                        control=functools.partial(_heads_at_least, D=2),
                        describe="h >= D = 2 (n = 2), per T",
                        budget=RECIPE_HINT,
                    ),
                )
            ],
            {name: raw},
        )
    )
    if raw is None:
        return Verdict(
            cid,
            "not-checkable",
            f"{name}'s {used} profile was neither computed nor cached for the current source "
            f"({note}); run `approxtheory experiment run {name} --profile {used}` and verify "
            f"reads its cells from ./results",
            covered="nothing was trained",
            scope="none",
            formula_note=formula_note,
            scale=sc,
        )
    rows = [dict(r) for r in raw]
    if ctx.is_mutant("heads-relabelled"):
        hs = sorted({int(r["heads"]) for r in rows})
        for r in rows:
            r["heads"] = hs[-1] + hs[0] - int(r["heads"])
    D, n = int(rows[0]["D"]), int(rows[0]["head_dim"])
    s = D - 1
    res = lower_regime_criterion(rows, D, n, s)
    table = [
        {"heads": h, "T": T, "k": res["k"][T], "min_nmse": v}
        for (h, T), v in sorted(res["best"].items())
    ]
    seeds = len({int(r["seed"]) for r in rows})
    steps = int(rows[0]["steps"])
    per_seed = "; ".join(
        f"h={h} T={T}: " + ", ".join(f"{v:.3g}" for v in _p6b_seeds(rows, h, T))
        for (h, T) in sorted(res["best"])
    )
    kt = ", ".join(f"T={T}: {k:.2f}" for T, k in res["k"].items())
    covered = (
        f"{name} ({used} profile{'' if used == ctx.profile else ', read for ' + ctx.profile}; "
        f"{note}): D = {D}, n = {n}, h in {{{s}, {D}}}, T in {res['Ts']}, {seeds} seed(s), "
        f"{steps} steps, hidden {int(float(rows[0].get('hidden', 0)))}; gate: an h = {D} model "
        f"is trained at NMSE <= {P6B_TRAINED_NMSE:g}, every T with k > 0 needs one (the others "
        f"are left out); criterion with every seed: (a) h = {s} "
        f"does not improve from the smallest to the largest T with k > 0, (b) h = {D} at least "
        f"x{MARGIN:g} lower at the largest T"
    )
    common: dict[str, Any] = dict(covered=covered, rows=table, formula_note=formula_note)
    head = (
        f"HC-T2b's k at s = {s}, n = {n}, D = {D}: {kt} (k <= 0: control cells); per-seed "
        f"NMSE {per_seed}"
    )
    if res["outcome"] == "undecided":
        return Verdict(
            cid,
            "not-checkable",
            f"fewer than two T with k > 0 in the grid; {head}; a grid with two T > "
            f"{4 * D + 4 * n * s + 8 * s} would decide",
            scope="none",
            **common,
            scale=sc,
        )
    if res["outcome"] == "gated":
        return Verdict(
            cid,
            "not-checkable",
            f"undecided at this budget ({steps} steps, {seeds} seed(s)): at T = "
            + ", ".join(str(T) for T, vs in res["gate"] if min(vs) > P6B_TRAINED_NMSE)
            + f" no h = {D} model trained to the gate (NMSE <= {P6B_TRAINED_NMSE:g}; not trained: "
            + ", ".join(f"T={T}: {v:.3g}" for T, v in res["untrained"])
            + ")"
            + f", so a missing separation says nothing about the claim; {head}; the full "
            f"profile's 4000 steps at hidden 32 (`approxtheory experiment run {name} --profile "
            f"full`, ~20 s of one thread per cell) train most two-head seeds below the gate "
            f"(measured: see {name} in experiments/headcount_trained.py) and would decide",
            scope="none",
            **common,
            scale=sc,
        )
    if res["outcome"] == "mixed":
        return Verdict(
            cid,
            "not-checkable",
            f"undecided: the seeds disagree ({'; '.join(res['mixed'])}); {head}; more seeds "
            "narrow it, but a flat one-head NMSE (ratios near 1) can stay on both sides of 1",
            scope="none",
            **common,
            scale=sc,
        )
    verdict = "consistent-empirical" if res["outcome"] == "consistent" else "inconsistent"
    return Verdict(
        cid,
        verdict,
        f"{head}; "
        + "; ".join(t for t, _ in res["checks"])
        + (
            f"; h = {D} min-over-seeds grows x{res['growth_h_D']:.3g} over the same T (reported)"
            if "growth_h_D" in res
            else ""
        )
        + ("; R(h): " + ", ".join(f"{h}: {v:.2f}" for h, v in res["R"].items()) if res["R"] else "")
        + (
            f"; h = {D} models below the gate (NMSE > {P6B_TRAINED_NMSE:g}), left out: "
            + ", ".join(f"T={T}: {v:.3g}" for T, v in res["untrained"])
            if res.get("untrained")
            else ""
        )
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        + (
            f". Slack (room the claim has, min of (a) and (b)/{MARGIN:g}): {res['slack']:.3g}"
            if res["slack"] is not None
            else ""
        )
        + ". A qualitative reading of the lower bound (its constant depends on T; one trained "
        "model is not the minimum over models)",
        measured=res["effects"],
        witness=None if res["ok"] else {"failed": res["failed"]},
        slack=res["slack"],
        plot={
            "x": "T",
            "y": ["min_nmse"],
            "group": "heads",
            "title": f"{cid}: trained NMSE vs T where k > 0 (D = {D}, n = {n})",
            "xlabel": "T",
            "ylabel": "min-over-seeds NMSE",
        },
        scope=f"surrogate: trained models ({used} profile, {seeds} seed(s), {steps} steps) "
        f"against the digest's reading of HC-T2b in its non-vacuous regime (T with k > 0: "
        f"{res['live']}); the bound itself is not tested",
        **common,
        scale=sc,
    )


# ------------------------------------------------------------------------------------ HC-P7
@check(
    "HC-P7",
    mutants={"models-swapped": "the random-head and two-head results exchanged (bookkeeping)"},
)
def attention_collisions(ctx: Context, cid):
    """headcount_collisions (max + min, d = 1, Δ = 0.5): the demanded Lipschitz constant
    L = Δ / min ||A(X1) - A(X2)|| of F̂. Criterion (digest §6 P7): (a) for random single heads
    the log-log slope of the median L in T has a 95 % interval above 0 (grows with T); (b) for
    the two-head construction L stays bounded: max/min over T <= 2. The trained heads of
    headcount_phase_d2 (h = 1 against h = 2) are reported next to them."""
    import numpy as np

    name = "headcount_collisions"
    raw, _, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    rows = [dict(r) for r in raw]
    if ctx.is_mutant("models-swapped"):
        for r in rows:
            r["model"] = "two-head" if r["model"] == "random-1-head" else "random-1-head"
    med: dict = {}
    for r in rows:
        med.setdefault((r["model"], int(r["T"])), []).append(float(r["lipschitz"]))
    med = {k: float(np.median(v)) for k, v in med.items()}
    Ts = sorted({T for _, T in med})
    rnd = [med[("random-1-head", T)] for T in Ts]
    two = [med[("two-head", T)] for T in Ts]
    fit = fit_rate(Ts, rnd, seed=0)
    a = fit.ci_low > 0
    b = max(two) / min(two) <= 2.0
    trained = []
    tr, _, tnote = _exp_rows("headcount_phase_d2", ctx.profile)
    if tr is not None:
        trained = sorted(
            (int(r["heads"]), int(r["T"]), float(r["collision_lipschitz"]))
            for r in tr
            if r.get("collision_lipschitz") not in (None, "")
        )
    table = [{"model": m, "T": T, "lipschitz": v} for (m, T), v in sorted(med.items())]
    table += [{"model": f"trained h={h}", "T": T, "lipschitz": v} for h, T, v in trained]
    failed = [
        t
        for t, g_ in (
            ("(a) random heads: L does not grow with T", a),
            ("(b) two-head construction: L not bounded over T", b),
        )
        if not g_
    ]
    return Verdict(
        cid,
        "consistent-empirical" if a and b else "inconsistent",
        "median demanded L over seeds: random single head "
        + ", ".join(f"T={T}: {v:.3g}" for T, v in zip(Ts, rnd))
        + f" (log-log slope {fit.slope:.2f} [{fit.ci_low:.2f}, {fit.ci_high:.2f}]); two-head "
        + ", ".join(f"T={T}: {v:.3g}" for T, v in zip(Ts, two))
        + f" (max/min {max(two) / min(two):.2f}); trained (headcount_phase_d2, D = 2): "
        + (", ".join(f"h={h} T={T}: {v:.3g}" for h, T, v in trained) or "not available")
        + (". Failed: " + "; ".join(failed) if failed else "")
        + ". A heuristic search: L is a lower estimate of the demand",
        covered=f"{name} ({ctx.profile}; {note}): T in {Ts}, random heads of width 2; "
        "random sampling of spread-out inputs plus local minimisation from the closest pairs",
        measured={"slope_random": fit.slope, "two_head_ratio": max(two) / min(two)},
        rows=table,
        slopes=[slope_row(fit, "random head: L vs T", 0.0)],
        witness=None if a and b else {"failed": failed},
        plot={
            "x": "T",
            "y": ["lipschitz"],
            "group": "model",
            "title": f"{cid}: Lipschitz constant demanded of F̂",
            "xlabel": "T",
            "ylabel": "Δ / min distance",
        },
        scope="surrogate: the digest's heuristic (a search, not a proof of HC-T2b's count) on "
        "max + min with random and constructed heads; trained heads reported only",
    )


# ------------------------------------------------------------------------------------ HC-P11
#: the transition the paper reads off each table (digest §5.2-5.3); R(h) is claimed for CIFAR
#: training accuracy (Fig. 2d, Table 8): positive for h >= 10
P11_TRANSITION = {8: 10}
#: the MS MARCO fit: Table 6 without the outliers the paper drops (h = 1, 12, 14, 16)
P11_FIT_HEADS = (2, 4, 6, 8)


@check(
    "HC-P11",
    mutants={
        "T-reversed": "the error tables read with the T axis reversed (a bookkeeping bug)",
    },
)
def real_data(ctx: Context, cid):
    """The paper's real-data tables (shipped): R(h) per table (headcount_real_data) and the refit
    of the catalogue's error law to Table 6. Criterion: (a) in Table 8 the smallest h with
    R(h) > 0 is the paper's transition (h = 10) and R(h) = 0 below it; (b) the refit's α interval
    and δ intervals (95 %, from the fit's covariance) both contain the claim's α and δ
    (``alpha_paper``, ``delta_paper``, read from the catalogue: -1.40 and 0.25)."""
    from approxtheory.headcount_analysis import fit_error_law, real_data_tables, reversal_score

    name = "headcount_real_data"
    raw, _, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    c = claim(cid)
    a_paper, d_paper = float(c.evaluate("alpha_paper")), float(c.evaluate("delta_paper"))
    tables = real_data_tables()
    R = {(int(r["table"]), int(r["h"])): float(r["R"]) for r in raw if int(r["present"])}
    if ctx.is_mutant("T-reversed"):
        R = {}
        for t in (6, 7, 8, 9):
            for hh in sorted({r["h"] for r in tables if r["table"] == t}):
                errs = sorted(
                    (r["T"], r["err"]) for r in tables if r["table"] == t and r["h"] == hh
                )
                R[(t, hh)] = reversal_score({T: e for (T, _), (_, e) in zip(errs, reversed(errs))})
    a_ok = True
    for t, h0 in P11_TRANSITION.items():
        pos = [hh for (tt, hh), v in R.items() if tt == t and v > 0]
        a_ok = a_ok and bool(pos) and min(pos) == h0
    fit_rows = [r for r in tables if r["table"] == 6 and r["h"] in P11_FIT_HEADS]
    if ctx.is_mutant("T-reversed"):
        Ts6 = sorted({r["T"] for r in fit_rows})
        rev = dict(zip(Ts6, reversed(Ts6)))
        fit_rows = [{**r, "T": rev[r["T"]]} for r in fit_rows]
    fit = fit_error_law(
        [r["h"] for r in fit_rows], [r["T"] for r in fit_rows], [r["err"] for r in fit_rows]
    )
    # (b) the paper's constants, not their signs: both 95 % intervals contain them
    b_ok = fit.contains("alpha", a_paper) and fit.contains("delta", d_paper)
    signs = fit.ci["alpha"][1] < 0 and fit.ci["delta"][0] > 0
    ok = a_ok and b_ok
    rows = [{"table": t, "heads": hh, "R": v} for (t, hh), v in sorted(R.items())]
    lines = []
    for t in (6, 7, 8, 9):
        pos = [hh for (tt, hh), v in sorted(R.items()) if tt == t and v > 0]
        lines.append(f"Table {t}: R > 0 at h = {pos or 'none'}")
    failed = [
        t
        for t, g_ in (
            ("(a) Table 8: R(h) does not turn positive at h = 10", a_ok),
            (
                f"(b) the refit's 95 % intervals do not contain the claim's α = {a_paper:g} "
                f"and δ = {d_paper:g}",
                b_ok,
            ),
        )
        if not g_
    ]
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        "; ".join(lines)
        + f". Refit of c·T^β·exp(α h/T^δ) to Table 6 (h in {list(P11_FIT_HEADS)}, least squares "
        f"on log err, {fit.n_points} points): α = {fit.alpha:.2f} [{fit.ci['alpha'][0]:.2f}, "
        f"{fit.ci['alpha'][1]:.2f}], δ = {fit.delta:.3f} [{fit.ci['delta'][0]:.3f}, "
        f"{fit.ci['delta'][1]:.3f}], β = {fit.beta:.2f}, c = {fit.c:.3g}, log-RMSE "
        f"{fit.rmse_log:.3f}; the paper's α = {a_paper:.2f} is "
        f"{'inside' if fit.contains('alpha', a_paper) else 'outside'} and δ = {d_paper:.2f} "
        f"{'inside' if fit.contains('delta', d_paper) else 'outside'} the 95 % intervals "
        f"(required: both inside); signs {'agree' if signs else 'differ'}. The law's scale c is "
        "fitted, so no slack is reported"
        + (". Failed: " + "; ".join(failed) if failed else "")
        + ". The tables round accuracies to 0.1 %, so ties give R = 0",
        covered=f"{name} ({note}): the paper's Tables 6-9 (shipped CSV), R(h) per table; the "
        "refit on Table 6 without the paper's outliers (the paper fits with an MAE loss; here "
        "least squares)",
        measured={"alpha": fit.alpha, "delta": fit.delta},
        claimed={"alpha": a_paper, "delta": d_paper},
        slack=math.nan,  # the law's c and β are fitted: no bound, no room
        rows=rows,
        witness=None if ok else {"failed": failed},
        plot={
            "x": "heads",
            "y": ["R"],
            "group": "table",
            "title": f"{cid}: weighted reversal score R(h) of the paper's tables",
            "xlabel": "heads h",
            "ylabel": "R(h)",
            "logx": False,
            "logy": False,
        },
        scope="partial: R(h) from the paper's own tables and a refit of its MS MARCO law; no "
        "real-data model is trained here",
    )
