"""Checks of arXiv 2510.06662 (HC-*).

Every passing check declares mutants (``@check(..., mutants=...)``): broken variants of what it
checks (a construction with a perturbed weight or a missing unit, a formula with a changed
constant). Under ``ctx.mutant`` a check runs its normal logic on the broken variant; formulas are
always read from the catalogue (``claim(id).expr``) and a formula mutant edits that expression,
never the decision rule. Memoised measurements take the mutant among their arguments.
"""

from __future__ import annotations

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
    deltas = np.concatenate([np.logspace(-4, 0, 41), -np.logspace(-4, 0, 41)])
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
    qs = [10.0, 1e2, 1e3, 1e4, 1e5] if not ctx.full else [10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7]
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
    fit = fit_rate(qs, [max(e, 1e-300) for e in errs], seed=ctx.seed)
    decreasing = all(e2 < e1 for e1, e2 in zip(errs, errs[1:]))
    # uniform convergence: the sup falls with q and the fitted exponent's interval excludes 0
    ok = decreasing and fit.ci_high < 0
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error over the searched inputs: {', '.join(f'{e:.2e}' for e in errs)} "
        f"at q = {', '.join(f'{q:g}' for q in qs)}; log-log slope {fit.slope:.3f} "
        f"[{fit.ci_low:.3f}, {fit.ci_high:.3f}] (criterion: decreasing and the "
        "interval excludes 0). The worst inputs tie every middle rank (v_m = w_m) with "
        "the token at distance δ ~ q^(-1/2): error δ/(1+e^(qδ²)), so the convergence is "
        "uniform but only at rate q^(-1/2) [derived]",
        covered=f"T = {T}, m = {m}: {len(X)} sequences per q (random, near-ties, "
        "tied-middle-rank families on a δ log grid, both signs) + bounded "
        "refinement of δ",
        measured=errs[-1],
        witness=witnesses[-1],
        rows=rows,
        slopes=[slope_row(fit, "sup error vs q", -0.5)],
        plot={
            "x": "q",
            "y": ["sup_error"],
            "title": "HC-L3 smooth selector",
            "xlabel": "q",
            "ylabel": "sup |x̃_q - x|",
        },
        scope="full",
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
    size = c.regime[0].expr
    if ctx.is_mutant("size-constant-5"):
        size = size.subs(T, 10 * T)  # T/50 -> T/5
    T_min = sp.solve(sp.Eq(size.lhs, size.rhs), T)[0]  # the smallest T the condition allows
    kf = sp.lambdify([T, D1s, D2s], c.expr("k"), "math")
    tmin = sp.lambdify([D1s, D2s], T_min, "math")
    Dmax = ctx.pick(30, 80)
    worst = None
    for D1 in range(1, Dmax):
        for D2 in range(D1 + 1, Dmax + 1):
            Tm = math.ceil(tmin(D1, D2))  # k grows with T: the smallest T is worst
            margin = kf(Tm, D1, D2) - D2
            if worst is None or margin < worst[0]:
                worst = (margin, D1, D2, Tm)
    assert worst is not None  # Dmax >= 30: the loops run
    ok = worst[0] > 0
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"k - max(D1, D2) >= {float(worst[0]):.3f} at the smallest allowed T "
        f"(worst at D1={worst[1]}, D2={worst[2]}, T={worst[3]}); > 0 required",
        covered=f"all 1 <= D1 < D2 <= {Dmax} at the smallest T with {size}",
        measured=float(worst[0]),
        claimed=0.0,
        witness=list(worst[1:]),
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


@check("HC-K1", "HC-P2")
def k1_construction(ctx: Context, cid):
    """The paper's bound at the paper's gate -1 (and gate -2 for contrast)."""
    betas = ctx.pick([10.0, 100.0, 1000.0], [3.0, 10.0, 30.0, 100.0, 300.0, 1e3])
    rows = _k1_rows(ctx, [8], betas, [-1.0, -2.0])
    paper = [r for r in rows if r["gate"] == -1.0]
    fixed = [r for r in rows if r["gate"] == -2.0]
    fit = fit_rate([r["beta"] for r in fixed], [r["sup_error"] for r in fixed], seed=ctx.seed)
    pred = float(claim("HC-K1").asymptotic_exponent("beta", "err_bound", S=4, T=8))
    slopes = [slope_row(fit, "sup error vs β (gate -2)", pred)]
    table = [
        {k: r[k] for k in ("gate", "beta", "sup_error", "claimed_bound", "verdict")} for r in rows
    ]
    plot = {
        "x": "beta",
        "y": ["sup_error"],
        "bound": "claimed_bound",
        "group": "gate",
        "title": f"{cid}: HC-K1 (gate -1 vs -2)",
        "xlabel": "β",
        "ylabel": "sup error",
    }
    bad = [r for r in paper if r["verdict"] == "refuted"]
    fixed_ok = all(x["verdict"] == "within-bound" for x in fixed)
    if bad:
        r = max(bad, key=lambda r: r["sup_error"] / r["claimed_bound"])
        return Verdict(
            cid,
            "refuted",
            f"with the stated gate -1 the error reaches {r['sup_error']:.3g} against the "
            f"claimed {r['claimed_bound']:.3g} (β = {r['beta']:g}, T = 8): an "
            "out-of-set token with f = 0 ties with in-set tokens at f = 1, so the "
            "T e^{-β} term is wrong (the corrected bound as a function of the gate is "
            "HC-K1c). With gate -2 the stated bound "
            f"{'holds in every cell' if fixed_ok else 'still fails'}",
            covered="T = 8, S_1 = first half, S_2 = second half, β grid, gates -1 and "
            "-2, adversarial search per cell",
            measured=r["sup_error"],
            claimed=r["claimed_bound"],
            witness=r["witness"],
            rows=table,
            slopes=slopes,
            plot=plot,
            scope="full",
        )
    return Verdict(
        cid,
        "consistent-empirical",
        "sup error within the stated bound at gate -1 in every cell",
        rows=table,
        slopes=slopes,
        plot=plot,
        scope="full",
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
    """The derived bound as a function of the gate c, against the adversarial sup error (and the
    exact worst case over the vertices {0,1}^T, enumerated independently by search_bench) on a
    grid of c and β."""
    from approxtheory.search_bench import known_hc_k1_vertices

    kc = claim(cid)
    expr = kc.expr("err_bound")
    c_s = kc.symbol("c")
    if ctx.is_mutant("paper-normalisation"):
        expr = expr.subs(c_s, c_s - 1)
    if ctx.is_mutant("in-set-only"):
        expr = kc.expr("in_set")
    bound_of = sp.lambdify([kc.symbol(s) for s in ("S", "T", "beta", "c")], expr, "math")
    gates = ctx.pick([-1.0, -1.1, -1.5, -2.0], [-1.0, -1.02, -1.1, -1.25, -1.5, -2.0, -3.0])
    betas = ctx.pick([10.0, 100.0, 1000.0], [10.0, 30.0, 100.0, 300.0, 1000.0])
    T = 8
    rows = []
    for r in _k1_rows(ctx, [T], betas, gates):
        vertex, _ = known_hc_k1_vertices(T, r["beta"], r["gate"])
        sup = max(r["sup_error"], vertex)  # both are errors attained at real inputs
        bound = sum(
            abs(o) * bound_of(S, T, r["beta"], r["gate"])
            for o, S in zip(r["outer"], r["set_sizes"])
        )
        rows.append(
            {
                "gate": r["gate"],
                "beta": r["beta"],
                "sup_error": sup,
                "search": r["sup_error"],
                "vertex_worst": vertex,
                "derived_bound": bound,
                "vacuous": bool(kc.is_vacuous(c=r["gate"])),
                "holds": sup <= bound * (1 + 1e-9) + 1e-12,
            }
        )
    viol = [r for r in rows if not r["holds"]]
    rate_rows = [r for r in rows if r["gate"] == -2.0]
    fit = fit_rate(
        [r["beta"] for r in rate_rows], [r["sup_error"] for r in rate_rows], seed=ctx.seed
    )
    pred = float(kc.asymptotic_exponent("beta", "err_bound", S=T // 2, T=T, c=-2))
    rate_ok = _fit_ok(fit, pred, "below")
    nonvac = [r for r in rows if not r["vacuous"]]
    tight = max((r["sup_error"] / r["derived_bound"] for r in nonvac), default=float("nan"))
    ok = not viol and rate_ok
    if viol:
        w = max(viol, key=lambda r: r["sup_error"] / r["derived_bound"])
        msg = (
            f"the bound fails: sup error {w['sup_error']:.3g} > {w['derived_bound']:.3g} at "
            f"c = {w['gate']:g}, β = {w['beta']:g}"
        )
    else:
        msg = "sup error <= Σ_i |∂F_0/∂z_i| · bound in every cell"
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{msg}; vacuous (c >= -1) in {sum(r['vacuous'] for r in rows)}/{len(rows)} "
        f"cells; largest sup/bound where non-vacuous {tight:.2f}. Decay at c = -2: "
        f"β^{fit.slope:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}] against the "
        f"predicted {pred:g} (the interval must lie at or below {pred:g} + "
        f"{RATE_TOL}, excluding slower decay)",
        covered=f"T = 8 (S_i halves, D = 2), c in {gates}, β in {betas}; adversarial "
        "search per cell plus the exact vertex worst case",
        measured=max(r["sup_error"] for r in rows),
        rows=rows,
        witness=(
            _k1_cell(T, viol[0]["beta"], viol[0]["gate"], ctx.pick(256, 2048), ctx.seed)["witness"]
            if viol
            else None
        ),
        slopes=[slope_row(fit, "sup error vs β (c = -2)", pred)],
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "derived_bound",
            "group": "gate",
            "title": f"{cid}: error vs the gate-corrected bound",
            "xlabel": "β",
            "ylabel": "sup error",
        },
        scope="full",
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
    pT = [params[T].pop() if len(params[T]) == 1 else max(params[T]) for T in Ts]
    pfit = fit_rate(Ts, pT, seed=ctx.seed)
    linear = _fit_ok(pfit, 1.0, "below")
    ungated = build("hc_k1_synthetic", T=Ts[0], beta=10.0, D=2, d=1).params
    ok = all(reached.values()) and all(decays.values()) and eps_free and linear
    failed = (
        (
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
        f"F̂) {dict(zip(Ts, pT))}, the same at every β, i.e. every ε (exponent 0 in 1/ε "
        f"<= gamma); its log-log slope in T is {pfit.slope:.2f} [{pfit.ci_low:.2f}, "
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
        scope="partial: exact (affine) features and outer map, so gamma does not "
        "enter; checks that at a count independent of ε and linear in T (the "
        "positional table counted) the error falls below ε by β alone",
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


def _gapped_errors(T, beta, X, mutation):
    c = build("hc_k1", T=T, beta=beta, gate=-2.0)
    if mutation is not None:
        _K1_MUTATIONS[mutation](c)
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


@check(
    "HC-P3",
    mutants={
        "logit-scale-1/T": "attention logits divided by T (a sequence-length normalisation bug)",
        "value-scale": "W_V scaled by 1.02 (the readout is off by 2 %)",
    },
)
def beta_needed_vs_T(ctx: Context, cid):
    """β needed at fixed ε and minimum gap g, against T: the claim says log(T/ε)/g. Fitted as
    exp(g·β_needed) against T/ε on log-log axes, whose predicted slope is the exponent of T/ε in
    exp(g · beta_needed) (1)."""
    mutation = ctx.mutant
    c = claim(cid)
    T_s, _, g_s = c.symbol("T"), c.symbol("epsilon"), c.symbol("g")
    pred = float(sp.simplify(T_s * sp.diff(g_s * c.expr("beta_needed"), T_s)))
    g = 0.1
    Ts = ctx.pick([16, 32, 64], [16, 64, 256])
    epss = [1e-2, 1e-3, 1e-4]
    rows, wit = [], None
    for T in Ts:
        for eps in epss:
            b, w = _beta_needed(T, eps, g, ctx.seed, mutation)
            rows.append(
                {
                    "T": T,
                    "eps": eps,
                    "beta_needed": b,
                    "log_T_over_eps_over_g": math.log(T / eps) / g,
                }
            )
            if not math.isfinite(b) and wit is None:
                wit = w
    syn = {T: build("hc_k1_synthetic", T=T, beta=10.0, D=2, d=1).params for T in Ts}
    gated = {T: build("hc_k1", T=T, beta=10.0, gate=-2.0).params for T in Ts}
    finite = all(math.isfinite(r["beta_needed"]) for r in rows)
    if finite:
        fit = fit_rate(
            [r["T"] / r["eps"] for r in rows],
            [math.exp(g * r["beta_needed"]) for r in rows],
            seed=ctx.seed,
        )
        ok = _fit_ok(fit, pred, "within")
        fit_txt = (
            f"g·β_needed against log(T/ε): slope {fit.slope:.3f} [{fit.ci_low:.3f}, "
            f"{fit.ci_high:.3f}], predicted {pred:g}; the interval must lie within "
            f"{pred:g} ± {RATE_TOL} (excluding growth faster than log(T/ε)/g, e.g. a β "
            "needed polynomial in T, and a T-blind β)"
        )
        slopes = [slope_row(fit, "g·β_needed vs log(T/ε)", pred)]
    else:
        ok, slopes = False, []
        bad = [(r["T"], r["eps"]) for r in rows if not math.isfinite(r["beta_needed"])]
        fit_txt = f"no β <= 1e4 reaches ε at (T, ε) = {bad}"
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{fit_txt}. β_needed: "
        + ", ".join(f"T={r['T']}, ε={r['eps']:g}: {r['beta_needed']:.1f}" for r in rows)
        + f". Parameter count with S_i = [T] (no positional table) {syn} — "
        f"T-independent by construction, not a measurement; with the positional "
        f"table (gated, as measured here) {gated}, linear in T",
        covered=f"hc_k1 gate -2 (D = 2, d = 1), gap g = {g} in both sets, T in {Ts}, "
        f"ε in {epss}; per (T, ε) a bisection on β over "
        "structured and random gapped inputs",
        rows=rows,
        slopes=slopes,
        witness=wit,
        plot={
            "x": "T",
            "y": ["beta_needed"],
            "group": "eps",
            "logy": False,
            "title": f"{cid}: β needed at gap g = {g}",
            "xlabel": "T",
            "ylabel": "β needed",
        },
        scope="partial: β_needed(T, ε) at gap g on the gated D = 2 construction, "
        "fitted against log(T/ε)/g; the T-independent count holds by "
        "construction when S_i = [T] and is only reported",
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


@memo
def _l9_grid(profile, mutation=None):
    quick = profile == "quick"
    return construction_grid(
        "hc_l9",
        {
            "T": [4, 16] if quick else [4, 16, 64],
            "eps": [0.5, 0.2, 0.1] if quick else [0.5, 0.2, 0.1, 0.05, 0.02, 0.01],
        },
        budget=256 if quick else 2048,
        mutate=_L9_MUTATIONS[mutation] if mutation else None,
        extra=lambda c, m: {"inv_eps": 1 / c.knobs["eps"], "dense_params": c.extra["dense_params"]},
    )[0]


@check(
    "HC-L9",
    "HC-P4",
    "HC-T2c",
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
    rate_ok = _fit_ok(fit, 1.0, "below")
    # O(T/ε) exactly: the count is an affine function of T·n_g, n_g, T (n_g = ⌈1/ε⌉); a zero
    # residual of that fit over the whole grid proves exponent 1 in n_g on the grid
    ng = np.array([round(1 / r["claimed_bound"]) for r in rows], dtype=float)
    Tt = np.array([r["T"] for r in rows], dtype=float)
    A = np.stack([Tt * ng, ng, Tt, np.ones_like(ng)], axis=1)
    y = np.array([r["params"] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    affine_ok = bool(np.abs(A @ coef - y).max() < 1e-6) and coef[0] > 0
    ok = within and rate_ok and affine_ok
    what = {
        "HC-T2c": "one head of width T·d (memorizing, HC-K2) + HC-L9's ReLU F̂: ",
        "HC-L9": "",
        "HC-P4": "",
    }[cid]
    worst = max(rows, key=lambda r: r["sup_error"] / r["claimed_bound"])
    scope = {
        "HC-L9": "full",
        "HC-P4": "full",
        "HC-T2c": "partial: D = 1 with f = identity and F_0 = identity (gamma = 0): the "
        "memorizing head + HC-L9's network; the FFN approximations F1, F3 of "
        "f_i and F_0 are not built",
    }[cid]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{what}sup error <= 1/⌈1/ε⌉ in {'every' if within else 'not every'} cell "
        f"(worst ratio {worst['sup_error'] / worst['claimed_bound']:.3f}); the counted "
        f"weights are {'exactly' if affine_ok else 'NOT'} "
        f"{coef[0]:.0f}·T·n_g + {coef[1]:.0f}·n_g + {coef[2]:.0f}·T + {coef[3]:.0f} "
        f"with n_g = ⌈1/ε⌉; log-log slope in 1/ε at T = {T0}: {fit.slope:.2f} "
        f"[{fit.ci_low:.2f}, {fit.ci_high:.2f}] (claimed exponent 1 = 1 + gamma with "
        f"exact features; the interval must lie at or below 1 + {RATE_TOL}). A dense "
        "net of the stated widths would have O(T/ε²) weights: O(T/ε) holds for the "
        "sparse network",
        covered=f"T in {sorted({r['T'] for r in rows})}, eps in {sorted({r['eps'] for r in rows})}",
        rows=rows,
        slopes=[slope_row(fit, f"params vs 1/ε (T={T0})", 1.0)],
        witness=None if within else worst.get("witness"),
        plot={
            "x": "eps",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": f"{cid}: ReLU max network",
            "xlabel": "ε",
            "ylabel": "sup error",
        },
        scope=scope,
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
        f"(<= 1 required; the extremal all-ones nets make it tight), at {worst_net}",
        covered=f"{trials} nets (a third extremal, the rest random with entries in "
        "[-1,1]), p <= 31, n <= 15, 64 pairs each, 40 ascent steps",
        measured=worst,
        claimed=1.0,
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
        eps0 = 0.5 * min(gaps)
        margin_ok = eps0 > 1e-9
        rows.append({"config": j, "D": D, "d": d, "R_0": R0, "disjoint": disjoint, "eps_0": eps0})
        if not (disjoint and margin_ok):
            bad.append(rows[-1])
    ok = not bad
    e0 = [r["eps_0"] for r in rows]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"{n - len(bad)}/{n} configurations: balls of radius R_0 = δ_min/2 disjoint "
        f"and ε_0 > 0 (beyond round-off, 1e-9), ε_0 ranging {min(e0):.2g}..{max(e0):.2g}"
        + (f"; first failure {bad[0]}" if bad else ""),
        covered=f"{n} random sets of D <= 4 functions on [0,1]^d, d <= 2, each with a "
        "second local well; min over the complement of the ball by grid + "
        "sphere + SLSQP refinement",
        rows=rows,
        witness=bad[0] if bad else None,
        scope="partial: disjoint balls and a positive margin ε_0 for concrete f_i "
        "(d <= 2) with a second local well",
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
        rows.append({"T": T, "attention_error": err, "readout_sup_error": sup})
    worst = max(max(r["attention_error"], np.nan_to_num(r["readout_sup_error"])) for r in rows)
    ok = worst < 1e-12
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"attention output equals vec(X)/T and the linear read-out returns X; max "
        f"deviation {worst:.1e} (< 1e-12 required)",
        covered="T in {4, 16, 64}, d = 2: 256 random sequences per T; adversarial "
        "search of the read-out at T = 4, 16",
        measured=worst,
        claimed=0.0,
        rows=rows,
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
@check("HC-A3", mutants={"first-unit-missing": "the interpolant's first ReLU unit dropped"})
def ffn_exponent(ctx: Context, cid):
    """The worst-case γ = max(d, D) as an upper exponent, for d = D = 1: a two-layer ReLU net of
    width N interpolating a C² function on N knots; its sup error δ must fall at least like
    N^(-1/γ_worst) (width <= C/δ^γ)."""
    from approxtheory.model import MLP

    c = claim(cid)
    gamma_w = float(c.evaluate("gamma_worst", d=1, D=1))
    pred = -1 / gamma_w  # δ ~ N^(-1/γ) when the width grows like δ^(-γ)
    rng = np.random.default_rng(ctx.seed)
    Ns = [4, 8, 16, 32, 64, 128]
    xs = np.linspace(0, 1, 20001)
    funcs = []
    for _ in range(ctx.pick(4, 16)):
        a, w, ph, s2 = (
            rng.uniform(0.2, 0.5),
            rng.uniform(1, 8),
            rng.uniform(0, 6),
            rng.uniform(0.02, 0.2),
        )
        x0 = rng.uniform(0.2, 0.8)
        funcs.append(
            lambda x, a=a, w=w, ph=ph, s2=s2, x0=x0: (
                0.5 + a * np.sin(w * x + ph) * np.exp(-((x - x0) ** 2) / s2) / 1.5
            )
        )
    rows, slopes, fits = [], [], []
    for j, f in enumerate(funcs):
        deltas = []
        for N in Ns:
            knots = np.linspace(0, 1, N + 1)
            vals = f(knots)
            s = np.diff(vals) / np.diff(knots)  # slope on each cell
            net = MLP(1, [N], 1).double()
            lin = [m for m in net if isinstance(m, torch.nn.Linear)]
            with torch.no_grad():
                lin[0].weight.fill_(1.0)
                lin[0].bias.copy_(torch.tensor(-knots[:-1]))
                outw = np.concatenate([[s[0]], np.diff(s)])
                if ctx.is_mutant("first-unit-missing"):
                    outw[0] = 0.0
                lin[1].weight.copy_(torch.tensor(outw)[None])
                lin[1].bias.fill_(float(vals[0]))
                out = net(torch.tensor(xs)[:, None])[:, 0].numpy()
            delta = float(np.abs(out - f(xs)).max())
            deltas.append(delta)
            rows.append({"f": j, "N": N, "sup_error": delta})
        fit = fit_rate(Ns, [max(dl, 1e-300) for dl in deltas], seed=ctx.seed)
        fits.append(fit)
        slopes.append(slope_row(fit, f"sup error vs width (f{j})", pred))
    ok = all(_fit_ok(f, pred, "below") for f in fits)
    got = [f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]" for f in fits]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error δ vs width N, fitted exponent per function: {', '.join(got)}; "
        f"width <= C/δ^γ with γ_worst = max(d, D) = {gamma_w:g} means δ falls at "
        f"least like N^{pred:g}: each interval must lie at or below {pred:g} + "
        f"{RATE_TOL} (excluding slower decay). C² targets give ≈ -2 (piecewise-"
        "linear interpolation), i.e. γ ≈ 1/2",
        covered=f"{len(funcs)} random C^∞ functions on [0,1], widths {Ns}, sup over 20001 points",
        rows=rows,
        slopes=slopes,
        plot={
            "x": "N",
            "y": ["sup_error"],
            "group": "f",
            "title": f"{cid}: two-layer ReLU interpolant",
            "xlabel": "width N",
            "ylabel": "sup error",
        },
        scope="partial: γ_worst = max(d, D) as an upper exponent for d = D = 1 with "
        "an explicit two-layer ReLU interpolant; the Barron value γ = 2 and "
        "d > 1 are not tested",
    )


# ------------------------------------------------------------------ trained experiments (P7-P11)
#: a stated margin: a "drop" or "gap" of NMSE counts when it is at least this factor
MARGIN = 3.0


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
    min over seeds and in at least 2 of 3 (a majority of the) seeds; (b) for every h < D the
    NMSE grows from the smallest to the largest T; (c) for h >= D it grows by less than for every
    h < D. (b) and (c) need two T (else reported as not tested)."""
    best = _best(rows)
    hs = sorted({h for h, _ in best})
    Ts = sorted({T for _, T in best})
    Tmin, Tmax = Ts[0], Ts[-1]

    def drops_of(b):
        return {(h1, h2): math.log(b[(h1, Tmax)] / b[(h2, Tmax)]) for h1, h2 in zip(hs, hs[1:])}

    drops = drops_of(best)
    a_min = max(drops, key=drops.get) == (D - 1, D)
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
                f"(a) D = {D}: the largest drop at T = {Tmax} is not at h = {D - 1} -> {D} "
                f"(min over seeds: {a_min}; seeds: {sum(per_seed)}/{len(seeds)}, need {need})",
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
        "steps": int(rows[0]["steps"]),
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
    for D in (2, 4):
        name = f"headcount_phase_d{D}"
        raw, _, note = _exp_rows(name, ctx.profile)
        if raw is None:
            return _not_run(cid, name, ctx.profile, note)
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
    ok = all(res["ok"] for _, res in parts)
    ev = []
    for D, res in parts:
        Tmax = res["Ts"][-1]
        ev.append(
            f"D = {D} ({res['steps']} steps, {res['seeds']} seed(s), tested {res['tested']}): "
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
        ". ".join(ev) + ". Short runs may not reach the regime the paper describes (it gives "
        "no training budget)",
        covered=f"headcount_phase_d2 and headcount_phase_d4 ({ctx.profile}; "
        + "; ".join(notes)
        + "); criterion: (a) largest log-drop at h = D-1 -> D at the largest T (min over seeds "
        "and 2 of 3 seeds), (b) growth with T below D, (c) less growth at h >= D",
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
        covered=f"{name} ({ctx.profile}; {note}): D = {D}, h in {{{D - 1}, {D}}}, N in "
        f"{sorted({int(r['hidden']) for r in raw})}, T in {res['Ts']}; criterion: slope interval "
        "below 0 at h = D-1 and containing 0 at h = D, every T",
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
    rows = [dict(r) for r in raw]
    if ctx.is_mutant("layers-relabelled"):
        for r in rows:
            r["layers"] = 3 - int(r["layers"])
    D = int(rows[0]["D"])
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
        covered=f"{name} ({ctx.profile}; {note}): D = 3, E = 24 (per-head ⌈24/h⌉), "
        f"h in {sorted({h for _, h in res['g']})}, L in {{1, 2}}; margin x{MARGIN:g}",
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
def lower_regime_criterion(rows, D: int, n: int, s: int) -> dict:
    """HC-P6b's stated criterion (written before any result of headcount_lower_regime was seen):
    on the min over seeds of NMSE per (h, T), over the T where HC-T2b's k(T, s, n, D) > 0
    (``live``; at least two are needed, else ``decided`` is False): (a) h = s does not improve
    with T: NMSE(s, T_max) >= NMSE(s, T_live_min); (b) at T_max, h = D is at least MARGIN below
    h = s. The T with k <= 0 are reported as the control, not tested."""
    best = _best(rows)
    t2b = claim("HC-T2b")
    Ts = sorted({T for _, T in best})
    ks = {T: float(t2b.evaluate("k", T=T, s=s, n=n, D=D)) for T in Ts}
    live = [T for T in Ts if ks[T] > 0 and (s, T) in best and (D, T) in best]
    # a NaN or inf NMSE (min over seeds turns NaN into inf) fails the criterion; R(h) needs
    # finite errors and is then not reported
    all_finite = all(math.isfinite(v) for v in best.values())
    out: dict = {"best": best, "k": ks, "live": live, "Ts": Ts}
    out["R"] = _reversal(best) if all_finite else {}
    if len(live) < 2:
        return {**out, "decided": False, "ok": False, "failed": [], "effects": {}}
    t0, t1 = live[0], live[-1]
    vals = [best[(h, T)] for h in (s, D) for T in live]
    finite = all(math.isfinite(v) and v > 0 for v in vals)
    growth = best[(s, t1)] / best[(s, t0)] if finite else float("nan")
    gap = best[(s, t1)] / best[(D, t1)] if finite else float("nan")
    checks = [
        (f"NMSE finite and positive in every tested cell ({finite})", finite),
        (
            f"(a) h = {s}: NMSE(T = {t1}) / NMSE(T = {t0}) = {growth:.3g} (needs >= 1: no "
            f"improvement as k grows from {ks[t0]:.2f} to {ks[t1]:.2f})",
            finite and growth >= 1.0,
        ),
        (
            f"(b) T = {t1}: NMSE(h = {s}) / NMSE(h = {D}) = {gap:.3g} (needs >= {MARGIN:g})",
            finite and gap >= MARGIN,
        ),
    ]
    return {
        **out,
        "decided": True,
        "checks": checks,
        "ok": all(c for _, c in checks),
        "failed": [t for t, c in checks if not c],
        "effects": {"growth_h_s": growth, "gap_at_Tmax": gap},
        "growth_h_D": best[(D, t1)] / best[(D, t0)] if finite else float("nan"),
    }


@check(
    "HC-P6b",
    mutants={"heads-relabelled": "the one- and two-head results exchanged (a bookkeeping bug)"},
)
def lower_regime(ctx: Context, cid):
    """headcount_lower_regime (D = 2, n = 2, h = 1 against h = 2, T = 16..128):
    :func:`lower_regime_criterion`. The experiment has no quick profile (the regime needs
    T up to 128 and the two-head model of width 2 needs the full training budget); on
    ``--profile quick`` the check reads the full profile's cached cells if there are any and
    otherwise says which command produces them."""
    name = "headcount_lower_regime"
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import get

    used = ctx.profile if ctx.profile in get(name).grids else "full"
    raw, _, note = _exp_rows(name, used)
    if raw is None:
        return Verdict(
            cid,
            "not-checkable",
            f"{name} has no {ctx.profile} profile and its {used} profile is not cached for the "
            f"current source ({note}); run `approxtheory experiment run {name} --profile {used}` "
            f"(24 cells of 4000 steps, T up to 128; see README 'Head-count experiments') and "
            f"verify reads its cells from ./results",
            covered="nothing was trained",
            scope="none",
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
    cells = ", ".join(
        f"h={h} T={T}: {v:.3g}" for (h, T), v in sorted(res["best"].items(), key=lambda x: x[0])
    )
    kt = ", ".join(f"T={T}: {k:.2f}" for T, k in res["k"].items())
    covered = (
        f"{name} ({used} profile{'' if used == ctx.profile else ', read for ' + ctx.profile}; "
        f"{note}): D = {D}, n = {n}, h in {{{s}, {D}}}, T in {res['Ts']}, "
        f"{len({int(r['seed']) for r in rows})} seed(s), {int(rows[0]['steps'])} steps; "
        f"criterion: (a) h = {s} does not improve from the smallest to the largest T with k > 0, "
        f"(b) h = {D} at least x{MARGIN:g} lower at the largest T"
    )
    if not res["decided"]:
        return Verdict(
            cid,
            "not-checkable",
            f"fewer than two T with k > 0 in the grid (k: {kt}); min-over-seeds NMSE {cells}",
            covered=covered,
            rows=table,
            scope="none",
        )
    return Verdict(
        cid,
        "consistent-empirical" if res["ok"] else "inconsistent",
        f"HC-T2b's k at s = {s}, n = {n}, D = {D}: {kt} (k <= 0: control cells); min-over-seeds "
        f"NMSE {cells}; "
        + "; ".join(t for t, _ in res["checks"])
        + f"; h = {D} grows x{res['growth_h_D']:.3g} over the same T (reported); R(h): "
        + ", ".join(f"{h}: {v:.2f}" for h, v in res["R"].items())
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        + ". A qualitative reading of the lower bound (its constant depends on T; one trained "
        "model is not the minimum over models)",
        covered=covered,
        measured=res["effects"],
        rows=table,
        witness=None if res["ok"] else {"failed": res["failed"]},
        plot={
            "x": "T",
            "y": ["min_nmse"],
            "group": "heads",
            "title": f"{cid}: trained NMSE vs T where k > 0 (D = {D}, n = {n})",
            "xlabel": "T",
            "ylabel": "min-over-seeds NMSE",
        },
        scope=f"surrogate: one trained model per cell against the digest's reading of HC-T2b "
        f"in its non-vacuous regime (T with k > 0: {res['live']}); the bound itself is not "
        "tested",
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
    lies below 0 and δ's above 0 (same signs as the paper's α = -1.40, δ = 0.25); whether the
    paper's values lie inside the intervals is reported."""
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
    b_ok = fit.ci["alpha"][1] < 0 and fit.ci["delta"][0] > 0
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
            ("(b) the refit's α or δ has the wrong sign", b_ok),
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
        f"{'inside' if fit.contains('delta', d_paper) else 'outside'} the 95 % intervals"
        + (". Failed: " + "; ".join(failed) if failed else "")
        + ". The tables round accuracies to 0.1 %, so ties give R = 0",
        covered=f"{name} ({note}): the paper's Tables 6-9 (shipped CSV), R(h) per table; the "
        "refit on Table 6 without the paper's outliers (the paper fits with an MAE loss; here "
        "least squares)",
        measured={"alpha": fit.alpha, "delta": fit.delta},
        claimed={"alpha": a_paper, "delta": d_paper},
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
