"""Checks of arXiv 2510.06662 (HC-*)."""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.constructions import build
from approxtheory.measure import fit_rate

from ._core import (Context, Verdict, check, construction_grid, memo, not_checkable,
                    slope_row)

not_checkable("HC-T1", reason="density theorem: no rate or constant to measure; the D it needs is "
              "of order d·C(T, T/4)")
not_checkable("HC-Conj1", reason="conjecture about trained multi-layer models; its constants a_L, "
              "b_L are unspecified (a training experiment is needed)")
not_checkable("HC-P7", reason="heuristic attention-collision search on trained heads; not "
              "implemented yet")
not_checkable("HC-P8", "HC-P9", "HC-P10", reason="needs trained networks (the phase-transition "
              "experiments); the training experiments are not implemented yet")
not_checkable("HC-P11", reason="a refit of the paper's result tables, which are not shipped with "
              "the toolkit")


@check("HC-L1")
def min_is_lipschitz(ctx: Context, cid):
    """Lemma 1's key step: u -> min_{t in S} u_t is 1-Lipschitz in the sup-norm."""
    rng = np.random.default_rng(ctx.seed)
    n = ctx.pick(20000, 200000)
    U = rng.uniform(0, 1, (n, 16))
    V = U + rng.uniform(-0.1, 0.1, (n, 16)) * (rng.uniform(size=(n, 1)) < 0.5)
    ratio = np.abs(U.min(1) - V.min(1)) / np.maximum(np.abs(U - V).max(1), 1e-300)
    worst = float(ratio.max())
    ok = worst <= 1 + 1e-12
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"max |min u - min v| / ||u - v||_inf = {worst:.6f} (<= 1); the rest of the "
                   "lemma (Stone-Weierstrass, bump functions) is existential",
                   covered=f"{n} random pairs in [0,1]^16", measured=worst, claimed=1.0)


@check("HC-L2")
def order_statistics(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    T, m = 8, 2
    n = ctx.pick(200, 2000)
    worst = 0.0
    for _ in range(n):
        x = rng.uniform(0, 1, T)
        if rng.uniform() < 0.3:
            x[rng.integers(0, T, 3)] = x[0]          # ties
        srt = np.sort(x)
        v, w = srt[-m], srt[m - 1]
        for t in range(T):
            subsets = [A for A in itertools.combinations(range(T), m) if t in A]
            Y = max(min(x[u] for u in A) for A in subsets)
            Z = max(min(1 - x[u] for u in A) for A in subsets)
            c = claim("HC-L2")
            y_formula = float(c.evaluate("Y", x_t=sp.Float(x[t]), v_m=sp.Float(v)))
            z_formula = float(c.evaluate("one_minus_Z", x_t=sp.Float(x[t]), w_m=sp.Float(w)))
            worst = max(worst, abs(Y - y_formula), abs((1 - Z) - z_formula))
    ok = worst < 1e-12
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"brute force over all m-subsets agrees with min(x_t, v_m) and max(x_t, w_m); "
                   f"max deviation {worst:.2e}", covered=f"{n} random sequences, T = 8, m = 2, "
                   "with ties", measured=worst, claimed=0.0)


@check("HC-L3")
def smooth_selector(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    T, m = 16, 4
    expr = claim("HC-L3").expr("x_tilde")
    syms = [claim("HC-L3").symbol(s) for s in ("q", "Z", "Y", "w_m", "v_m")]
    f = sp.lambdify(syms, expr, "numpy")
    X = rng.uniform(0, 1, (ctx.pick(400, 4000), T))
    X[: len(X) // 4, 1] = X[: len(X) // 4, 0] + 1e-3          # near-ties
    srt = np.sort(X, axis=1)
    v, w = srt[:, -m][:, None], srt[:, m - 1][:, None]
    Y, Z = np.minimum(X, v), 1 - np.maximum(X, w)
    qs = [10.0, 100.0, 1e3, 1e4]
    rows = []
    for q in qs:
        with np.errstate(over="ignore", invalid="ignore"):
            # divide numerator and denominator by the larger weight (log-space) to avoid overflow
            a = q * (1 - Z - w) ** 2
            b = q * (Y - v) ** 2
            mx = np.maximum(a, b)
            xt = (np.exp(a - mx) * (1 - Z) + np.exp(b - mx) * Y) / (np.exp(a - mx) + np.exp(b - mx))
        err = float(np.abs(xt - X).max())
        rows.append({"q": q, "sup_error": err})
    # the closed form from the catalogue agrees with the stable evaluation at moderate q
    i, j = 0, 3
    direct = float(f(10.0, Z[i, j], Y[i, j], w[i, 0], v[i, 0]))
    errs = [r["sup_error"] for r in rows]
    decreasing = all(e2 <= e1 for e1, e2 in zip(errs, errs[1:]))
    fit = fit_rate(qs, [max(e, 1e-300) for e in errs])
    ok = decreasing and fit.slope < 0 and abs(direct - xt_at(10.0, Z[i, j], Y[i, j], w[i, 0],
                                                              v[i, 0])) < 1e-9
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"sup error falls with q: {', '.join(f'{e:.2e}' for e in errs)} at q = "
                   f"10..1e4 (log-log slope {fit.slope:.2f})", covered=f"{len(X)} sequences, "
                   f"T = {T}, m = {m}, with near-ties", measured=errs[-1], rows=rows,
                   plot={"x": "q", "y": ["sup_error"], "title": "HC-L3 smooth selector",
                         "xlabel": "q", "ylabel": "sup |x̃_q - x|"})


def xt_at(q, Z, Y, w, v):
    a, b = q * (1 - Z - w) ** 2, q * (Y - v) ** 2
    mx = max(a, b)
    return (np.exp(a - mx) * (1 - Z) + np.exp(b - mx) * Y) / (np.exp(a - mx) + np.exp(b - mx))


@check("HC-C1")
def corollary_arithmetic(ctx: Context, cid):
    """Under D1² + D2² <= T/50 and D1 < D2, the proof needs k > gamma with gamma <= max(D1, D2)."""
    c = claim("HC-C1")
    Dmax = ctx.pick(30, 80)
    worst = None
    for D1 in range(1, Dmax):
        for D2 in range(D1 + 1, Dmax + 1):
            T = 50 * (D1 ** 2 + D2 ** 2)           # smallest T allowed (k grows with T)
            k = c.evaluate(T=T, D1=D1, D2=D2)
            margin = k - D2
            if worst is None or margin < worst[0]:
                worst = (margin, D1, D2, T)
    ok = worst[0] > 0
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"k - max(D1, D2) >= {float(worst[0]):.3f} > 0 at the smallest allowed T "
                   f"(worst at D1={worst[1]}, D2={worst[2]}, T={worst[3]}); the step gamma <= "
                   "max(D1, D2) itself is only loosely justified by the paper",
                   covered=f"all 1 <= D1 < D2 <= {Dmax} at T = 50(D1²+D2²)",
                   measured=float(worst[0]), claimed=0.0)


@memo
def _k1_synthetic_grid(profile):
    quick = profile == "quick"
    return construction_grid(
        "hc_k1_synthetic",
        {"T": [4, 16, 64] if quick else [4, 8, 16, 32, 64, 128],
         "beta": [10.0, 100.0, 1000.0] if quick else [10.0, 30.0, 100.0, 300.0, 1e3, 1e4]},
        budget=256 if quick else 2048)[0]


@check("HC-T2a", "HC-P3")
def d_heads_no_T_blowup(ctx: Context, cid):
    rows = _k1_synthetic_grid(ctx.profile)
    Tmax = max(r["T"] for r in rows)
    sub = [r for r in rows if r["T"] == Tmax]
    fit = fit_rate([r["beta"] for r in sub], [r["sup_error"] for r in sub])
    pred = float(claim("HC-K1").asymptotic_exponent("beta", "err_bound", S=Tmax, T=Tmax))
    slopes = [slope_row(fit, f"sup error vs β (T={Tmax})", pred)]
    params = {r["params"] for r in rows}
    within = all(r["verdict"] == "within-bound" for r in rows)
    ok = len(params) == 1 and within
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"HC-K1's D-head model for Σ max a_iᵀx: {params.pop() if len(params) == 1 else params} "
                   f"parameters for every T; sup error within HC-K1's bound in every cell. The "
                   "rate exponent gamma comes from approximating f_i and F_0, which are exact here",
                   covered=f"T in {sorted({r['T'] for r in rows})}, beta in "
                           f"{sorted({r['beta'] for r in rows})}, adversarial search per cell",
                   rows=rows, slopes=slopes,
                   plot={"x": "beta", "y": ["sup_error"], "bound": "claimed_bound",
                                    "group": "T", "title": f"{cid}: D-head construction",
                                    "xlabel": "β", "ylabel": "sup error"})


@check("HC-T2b")
def t2b_arithmetic(ctx: Context, cid):
    c = claim("HC-T2b")
    T, D, n, s = (c.symbol(x) for x in "TDns")
    region = c.vacuous_region("T")
    ok1 = sp.simplify(region.rhs - (4 * D + 4 * n * s + 8 * s)) == 0
    ok2 = sp.simplify(sp.diff(c.expr("k"), T) - 1 / (4 * ((n + 1) * s + 1))) == 0
    cells = [(s_, T_) for s_ in (1, 2, 3) for T_ in (8, 16, 32, 64, 128)]
    ks = [float(c.evaluate(T=T_, s=s_, n=8, D=4)) for s_, T_ in cells]
    vac = sum(k <= 0 for k in ks)
    rows = [{"s": s_, "T": T_, "k": k} for (s_, T_), k in zip(cells, ks)]
    return Verdict(cid, "verified-symbolic" if ok1 and ok2 else "refuted",
                   f"exponent arithmetic proved: vacuous iff T <= 4D + 4ns + 8s, slope "
                   f"1/(4((n+1)s+1)) in T. The bound itself (a lower bound over all models) "
                   f"cannot be measured; at the paper's synthetic set-up (n=8, D=4) it is "
                   f"vacuous in {vac}/{len(ks)} cells and k <= {max(ks):.2f}",
                   covered="symbolic in T, D, n, s; numeric grid s in 1..3, T in 8..128",
                   rows=rows, plot={"x": "T", "y": ["k"], "group": "s", "logy": False,
                                    "title": "HC-T2b exponent k (n=8, D=4)", "xlabel": "T",
                                    "ylabel": "k"})


@memo
def _l9_grid(profile):
    quick = profile == "quick"
    return construction_grid(
        "hc_l9", {"T": [4, 16] if quick else [4, 16, 64],
                  "eps": [0.5, 0.2, 0.1, 0.05] if quick else [0.5, 0.2, 0.1, 0.05, 0.02, 0.01]},
        budget=256 if quick else 2048,
        extra=lambda c, m: {"inv_eps": 1 / c.knobs["eps"],
                            "dense_params": c.extra["dense_params"]})[0]


@check("HC-L9", "HC-P4", "HC-T2c")
def relu_max_network(ctx: Context, cid):
    rows = _l9_grid(ctx.profile)
    within = all(r["verdict"] == "within-bound" for r in rows)
    T0 = rows[0]["T"]
    sub = [r for r in rows if r["T"] == T0]
    fit = fit_rate([r["inv_eps"] for r in sub], [r["params"] for r in sub])
    dense = fit_rate([r["inv_eps"] for r in sub], [r["dense_params"] for r in sub])
    # O(T/ε) exactly: the nonzero count is an affine function of T·n_g, n_g, T (n_g = ⌈1/ε⌉);
    # a zero residual of that fit over the whole grid proves exponent 1 in n_g on the grid
    ng = np.array([round(1 / r["claimed_bound"]) for r in rows], dtype=float)
    Tt = np.array([r["T"] for r in rows], dtype=float)
    A = np.stack([Tt * ng, ng, Tt, np.ones_like(ng)], axis=1)
    y = np.array([r["params"] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    rate_ok = bool(np.abs(A @ coef - y).max() < 1e-6) and coef[0] > 0
    what = {"HC-T2c": "one head of width T·d (memorizing, HC-K2) + the 5-layer ReLU F̂: ",
            "HC-L9": "", "HC-P4": ""}[cid]
    return Verdict(cid, "verified-numeric" if within and rate_ok else "refuted",
                   f"{what}sup error <= 1/⌈1/ε⌉ in every cell; the nonzero weights are exactly "
                   f"{coef[0]:.0f}·T·n_g + {coef[1]:.0f}·n_g + {coef[2]:.0f}·T + {coef[3]:.0f} "
                   f"with n_g = ⌈1/ε⌉, i.e. O(T/ε) (claimed exponent 1 = 1+gamma with exact "
                   f"features; log-log slope in 1/ε at T = {T0}: {fit.slope:.2f}). Note: a dense net with the "
                   f"stated widths has (1/ε)^{dense.slope:.2f} weights; O(T/ε) holds only for "
                   "the sparse network",
                   covered=f"T in {sorted({r['T'] for r in rows})}, eps in "
                           f"{sorted({r['eps'] for r in rows})}",
                   rows=rows, plot={"x": "eps", "y": ["sup_error"], "bound": "claimed_bound",
                                    "group": "T", "title": f"{cid}: ReLU max network",
                                    "xlabel": "ε", "ylabel": "sup error"})


@check("HC-L4", "HC-P5")
def lipschitz_counting(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    worst = 0.0
    trials = ctx.pick(30, 200)
    for _ in range(trials):
        p, n = int(rng.integers(1, 32)), int(rng.integers(1, 16))
        U = torch.tensor(rng.uniform(-1, 1, (p, n)))
        b = torch.tensor(rng.uniform(-1, 1, p))
        V = torch.tensor(rng.uniform(-1, 1, (3, p)))
        f = lambda x: torch.relu(x @ U.T + b) @ V.T      # noqa: E731
        v1 = torch.tensor(rng.uniform(-2, 2, (64, n)), requires_grad=True)
        v2 = torch.tensor(rng.uniform(-2, 2, (64, n)), requires_grad=True)
        opt = torch.optim.Adam([v1, v2], lr=0.05)
        for _ in range(40):
            opt.zero_grad()
            r = (f(v1) - f(v2)).abs().amax(-1) / (v1 - v2).norm(dim=-1).clamp_min(1e-9)
            (-r.sum()).backward()
            opt.step()
        with torch.no_grad():
            r = (f(v1) - f(v2)).abs().amax(-1) / (v1 - v2).norm(dim=-1).clamp_min(1e-9)
        bound = float(claim("HC-L4").evaluate("lipschitz", p=p, n=n))
        worst = max(worst, float(r.max()) / bound)
    ok = worst <= 1 + 1e-9
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"largest |ΔF|_inf / (p sqrt(n) ||Δv||) found by gradient ascent: {worst:.3f}",
                   covered=f"{trials} random nets (entries in [-1,1], p <= 31, n <= 15), 64 "
                           "pairs each, 40 ascent steps", measured=worst, claimed=1.0)


@check("HC-L5")
def monotone_segment(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    worst = np.inf
    for _ in range(ctx.pick(50, 500)):
        d = int(rng.integers(1, 5))
        A = rng.standard_normal((d, d))
        H = A @ A.T + 0.1 * np.eye(d)
        lam = float(np.linalg.eigvalsh(H).min())
        r = float(rng.uniform(0.01, 1))
        v = rng.standard_normal(d); v /= np.linalg.norm(v)
        ts = np.linspace(r / 4, r / 2, 200)
        f = 0.5 * ts ** 2 * (v @ H @ v)                 # f(x* + t v) - z for a quadratic bowl
        slope = np.diff(f) / np.diff(ts)
        L = float(claim("HC-L5").evaluate("L_i", lambda_min=sp.Float(lam), r=sp.Float(r)))
        worst = min(worst, float(slope.min()) / L)
    ok = worst >= 1 - 1e-9
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"on quadratic bowls the slope along [r/4, r/2] is >= λ_min r/8 (min ratio "
                   f"{worst:.2f}); general C² f_i are covered only near their minimiser",
                   covered="random positive-definite quadratics, d <= 4", measured=worst,
                   claimed=1.0)


@check("HC-L6")
def outer_sensitivity(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    worst = np.inf
    for _ in range(ctx.pick(200, 2000)):
        D = int(rng.integers(1, 6))
        c = rng.uniform(-2, 2, D)
        z = rng.uniform(0, 1, D)
        F0 = lambda u: np.tanh(u @ c)                    # noqa: E731  a smooth outer map
        g = (1 - np.tanh(z @ c) ** 2) * c
        L0 = float(claim("HC-L6").evaluate("L_0", g_min=sp.Float(float(np.abs(g).min()))))
        delta = 1e-4
        for i in range(D):
            e = np.zeros(D); e[i] = delta
            worst = min(worst, abs(F0(z + e) - F0(z)) / (L0 * delta))
    ok = worst >= 1 - 1e-6
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"|F_0(z+δe_i) - F_0(z)| >= L_0|δ| for small δ (min ratio {worst:.3f})",
                   covered="random F_0(z) = tanh(c·z), D <= 5, δ = 1e-4", measured=worst,
                   claimed=1.0)


@check("HC-L7")
def basins(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    bad = 0
    n = ctx.pick(100, 1000)
    for _ in range(n):
        D, d = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        xs = rng.uniform(0, 1, (D, d))
        dmin = min(np.linalg.norm(xs[i] - xs[j]) for i in range(D) for j in range(i))
        R0 = float(claim("HC-L7").evaluate("R_0", delta_min=sp.Float(dmin)))
        # balls of radius R0 are disjoint: centres are >= 2 R0 apart
        bad += any(np.linalg.norm(xs[i] - xs[j]) < 2 * R0 - 1e-12
                   for i in range(D) for j in range(i))
    return Verdict(cid, "verified-numeric" if bad == 0 else "refuted",
                   f"balls of radius R_0 = δ_min/2 around distinct minimisers are disjoint in "
                   f"{n - bad}/{n} random configurations; the ε_0 margin is existential",
                   covered=f"{n} random sets of D <= 4 points in [0,1]^d")


@check("HC-L8")
def composition(ctx: Context, cid):
    from approxtheory.model import MLP
    g = torch.Generator().manual_seed(ctx.seed)
    a, b, c = MLP(3, [5], 4).double(), MLP(4, [6, 7], 2).double(), MLP(2, [8], 1).double()
    with torch.no_grad():                     # weights drawn from the run's seed, not torch's
        for p in [*a.parameters(), *b.parameters(), *c.parameters()]:
            p.copy_(torch.randn(p.shape, dtype=p.dtype, generator=g) / 2)
    la, lb, lc = [m for m in a if isinstance(m, torch.nn.Linear)], \
        [m for m in b if isinstance(m, torch.nn.Linear)], [m for m in c if isinstance(m, torch.nn.Linear)]
    merged = MLP(3, [5, 6, 7, 8], 1).double()
    lm = [m for m in merged if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        lm[0].weight.copy_(la[0].weight); lm[0].bias.copy_(la[0].bias)
        lm[1].weight.copy_(lb[0].weight @ la[1].weight)
        lm[1].bias.copy_(lb[0].weight @ la[1].bias + lb[0].bias)
        lm[2].weight.copy_(lb[1].weight); lm[2].bias.copy_(lb[1].bias)
        lm[3].weight.copy_(lc[0].weight @ lb[2].weight)
        lm[3].bias.copy_(lc[0].weight @ lb[2].bias + lc[0].bias)
        lm[4].weight.copy_(lc[1].weight); lm[4].bias.copy_(lc[1].bias)
        x = torch.randn(1000, 3, dtype=torch.float64, generator=g)
        diff = float((merged(x) - c(b(a(x)))).abs().max())
    ok = diff < 1e-12
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"2-, 3- and 2-layer nets merge into one 5-layer net with hidden widths "
                   f"(5, 6, 7, 8); max deviation {diff:.1e}", covered="1000 random inputs",
                   measured=diff, claimed=0.0)


@memo
def _k1_gate_grid(profile):
    quick = profile == "quick"
    rows, wit = construction_grid(
        "hc_k1", {"gate": [-1.0, -2.0],
                  "beta": [10.0, 100.0, 1000.0] if quick else [3.0, 10.0, 30.0, 100.0, 300.0,
                                                               1e3]},
        budget=256 if quick else 2048, fixed={"T": 8})
    return rows, wit


@check("HC-K1", "HC-P2")
def k1_construction(ctx: Context, cid):
    rows, wit = _k1_gate_grid(ctx.profile)
    paper = [r for r in rows if r["gate"] == -1.0]
    fixed = [r for r in rows if r["gate"] == -2.0]
    fit = fit_rate([r["beta"] for r in fixed], [r["sup_error"] for r in fixed])
    pred = float(claim("HC-K1").asymptotic_exponent("beta", "err_bound", S=4, T=8))
    slopes = [slope_row(fit, "sup error vs β (gate -2)", pred)]
    if any(r["verdict"] == "refuted" for r in paper):
        r = max(paper, key=lambda r: r["sup_error"] / r["claimed_bound"])
        fixed_ok = all(x["verdict"] == "within-bound" for x in fixed)
        return Verdict(cid, "refuted",
                       f"with the stated gate -1 the error reaches {r['sup_error']:.3g} against the "
                       f"claimed {r['claimed_bound']:.3g} (β = {r['beta']:g}, T = 8): an "
                       "out-of-set token with f = 0 ties with in-set tokens at f = 1, so the "
                       "T e^{-β} term is wrong. With gate -2 the bound "
                       f"{'holds in every cell' if fixed_ok else 'still fails'}",
                       covered="T = 8, S_1 = first half, S_2 = second half, β grid, gates -1 and "
                               "-2, adversarial search per cell",
                       measured=r["sup_error"], claimed=r["claimed_bound"],
                       witness=wit[(-1.0, r["beta"])], rows=rows, slopes=slopes,
                       plot={"x": "beta", "y": ["sup_error"], "bound": "claimed_bound",
                             "group": "gate", "title": f"{cid}: HC-K1 (gate -1 vs -2)",
                             "xlabel": "β", "ylabel": "sup error"})
    return Verdict(cid, "verified-numeric", "sup error within the bound for the stated gate",
                   rows=rows, plot={"x": "beta", "y": ["sup_error"], "bound": "claimed_bound",
                                    "group": "gate", "title": cid, "xlabel": "β",
                                    "ylabel": "sup error"})


@check("HC-K2", "HC-P1")
def memorization(ctx: Context, cid):
    rows = []
    g = torch.Generator().manual_seed(ctx.seed)
    for T in (4, 16, 64):
        c = build("hc_k2", T=T, d=2)
        X = torch.rand(256, T, 2, dtype=torch.float64, generator=g)
        with torch.no_grad():
            cls = c.model.hidden_states(X)[-1][:, -1]
        err = float((cls - X.reshape(256, -1) / T).abs().max())
        m = c.measure(budget=128)
        rows.append({"T": T, "attention_error": err, "readout_sup_error": m["sup_error"]})
    worst = max(max(r["attention_error"], r["readout_sup_error"]) for r in rows)
    ok = worst < 1e-12
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"attention output equals vec(X)/T and the linear read-out returns X; max "
                   f"deviation {worst:.1e}", covered="T in {4, 16, 64}, d = 2, random + "
                   "adversarial inputs", measured=worst, claimed=0.0, rows=rows,
                   plot={"x": "T", "y": ["attention_error", "readout_sup_error"],
                         "title": f"{cid}: memorizing head (exact up to round-off)",
                         "xlabel": "T", "ylabel": "max deviation (0 not shown)"})


@check("HC-P6")
def exponent_table(ctx: Context, cid):
    c = claim("HC-P6")
    hc = claim("HC-T2b")
    n, s = hc.symbol("n"), hc.symbol("s")
    ok = sp.simplify(c.expr("slope_in_T") - 1 / (4 * ((n + 1) * s + 1))) == 0
    ks = [float(hc.evaluate(T=T, s=s_, n=8, D=4)) for s_ in (1, 2, 3) for T in (8, 16, 32, 64,
                                                                                128)]
    ok = ok and max(ks) <= 1.8
    cpu = [float(hc.evaluate(T=T, s=1, n=2, D=2)) for T in (32, 64, 128)]
    return Verdict(cid, "verified-symbolic" if ok else "refuted",
                   f"slope 1/(4((n+1)s+1)) proved; paper set-up max k = {max(ks):.2f} <= 1.8; "
                   f"non-vacuous CPU regime n=2, D=2, s=1 gives k = {cpu} at T = 32, 64, 128",
                   covered="symbolic + the digest's tables")
