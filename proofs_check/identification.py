"""Checks of arXiv 2609.01231 (ID-*): counts against numeric Jacobian ranks of the shared model's
attention layer, invariances, inert biases, conservation and rebalancing."""

from __future__ import annotations

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.identifiability import (AttentionConfig, build_layer, imbalance, rebalance,
                                          sylvester_projection, unidentified_dim)
from approxtheory.measure import fit_rate

from ._core import Context, Verdict, check, memo


CONFIGS = {
    "ID-T4.5": [AttentionConfig(8, h) for h in (1, 2, 4, 8)] + [AttentionConfig(8, 2, causal=True)],
    "ID-L4.6": [AttentionConfig(8, h) for h in (1, 2, 4)],
    "ID-B4.7.2": [AttentionConfig(8, h, bias=True) for h in (1, 2, 4)],
    "ID-GQA4.9": [AttentionConfig(8, 4, G=2), AttentionConfig(8, 4, G=1), AttentionConfig(8, 8, G=2),
                  AttentionConfig(8, 8, G=1)],
    "ID-P4.8": [AttentionConfig(8, 1, rope="full"), AttentionConfig(8, 2, rope="full"),
                AttentionConfig(8, 1, rope="repeated"), AttentionConfig(8, 1, rope="partial:4")],
    "ID-RG": [AttentionConfig(8, 4, G=2, rope="full"), AttentionConfig(8, 4, G=1, rope="full")],
    "ID-X4.8.1": [AttentionConfig(8, 2, fat=True), AttentionConfig(4, 4, fat=True)],
}


@memo
def _rank(cfg):
    return unidentified_dim(cfg)


@check(*CONFIGS)
def jacobian_rank(ctx: Context, cid):
    rows = []
    for cfg in CONFIGS[cid]:
        r = _rank(cfg)
        rows.append({"E": cfg.E, "H": cfg.H, "G": cfg.groups, "bias": cfg.bias,
                     "causal": cfg.causal, "rope": cfg.rope or "none", "fat": cfg.fat,
                     "total": r["total"], "predicted": r["predicted"], "measured": r["measured"],
                     "gap": r["singular_value_gap"], "method": r["method"]})
    ok = all(r["predicted"] == r["measured"] for r in rows)
    # the closed-form ratio of the claim at the first configuration
    c = claim(cid)
    formula = ""
    if "ratio" in c.expressions and not CONFIGS[cid][0].fat and cid != "ID-P4.8":
        cfg = CONFIGS[cid][0]
        vals = {"E": cfg.E, "H": cfg.H}
        if "G" in c.symbols:
            vals["G"] = cfg.groups
        if "D" in c.symbols and cid == "ID-X4.8.1":
            vals["D"] = cfg.head_dim
        ratio = c.evaluate("ratio", **vals)
        meas = sp.Rational(rows[0]["measured"], rows[0]["total"])
        ok = ok and ratio == meas
        formula = f"; ratio {ratio} from the catalogue equals the measured {meas}"
    bad = [r for r in rows if r["predicted"] != r["measured"]]
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"unidentified dimension = P - rank(Jacobian) matches the count in "
                   f"{len(rows) - len(bad)}/{len(rows)} configurations (singular-value gap >= "
                   f"{min(r['gap'] for r in rows):.1e}){formula}",
                   covered="; ".join(f"E={r['E']} H={r['H']} G={r['G']} bias={r['bias']} "
                                     f"rope={r['rope']} fat={r['fat']} ({r['method']})"
                                     for r in rows) +
                           " — float64 Jacobian ranks on random sequences (dense: the full "
                           "Jacobian's singular values; structured: the per-head certificate)",
                   measured=[r["measured"] for r in rows], claimed=[r["predicted"] for r in rows],
                   witness=bad[0] if bad else None, rows=rows)


def _qk(m, h):
    a = m.layers[0].attn
    n = a.n
    return a.q.weight.detach()[h * n:(h + 1) * n].numpy().copy(), \
        a.k.weight.detach()[h * n:(h + 1) * n].numpy().copy()


@check("ID-L4.1", "ID-B4.6")
def invariance(ctx: Context, cid):
    cfg = AttentionConfig(8, 2, bias=(cid == "ID-B4.6"))
    m = build_layer(cfg, seed=ctx.seed)
    X = torch.randn(4, 6, 8, dtype=torch.float64,
                    generator=torch.Generator().manual_seed(ctx.seed))
    with torch.no_grad():
        y0 = m(X)
        a = m.layers[0].attn
        rng = np.random.default_rng(ctx.seed)
        for h in range(2):
            S = rng.standard_normal((4, 4)) + 3 * np.eye(4)
            Wq, Wk = _qk(m, h)
            a.set_head(h, q=S @ Wq, k=np.linalg.inv(S).T @ Wk)
            if cfg.bias:
                bq = a.q.bias[h * 4:(h + 1) * 4].numpy().copy()
                bk = a.k.bias[h * 4:(h + 1) * 4].numpy().copy()
                a.q.bias[h * 4:(h + 1) * 4] = torch.from_numpy(S @ bq)
                a.k.bias[h * 4:(h + 1) * 4] = torch.from_numpy(np.linalg.inv(S).T @ bk)
        y1 = m(X)
        # control: transforming W_Q alone is not an invariance
        a.set_head(0, q=2 * _qk(m, 0)[0])
        y2 = m(X)
    d = float((y1 - y0).abs().max())
    ctrl = float((y2 - y0).abs().max())
    ok = d < 1e-10 and ctrl > 1e-3
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"(S W_Q, S^-T W_K){' with (S b_Q, S^-T b_K)' if cfg.bias else ''} leaves "
                   f"outputs unchanged to {d:.1e}; control (W_Q alone) changes them by {ctrl:.2f}",
                   covered="E = 8, H = 2, random S in GL(4)", measured=d, claimed=0.0)


@check("ID-E4.1")
def trivial_example(ctx: Context, cid):
    c = claim("ID-E4.1")
    D = c.symbol("D")
    ok = sp.simplify(c.expr("ratio") - (2 * D - 1) / (2 * D)) == 0
    cfg_rank = _rank(AttentionConfig(1, 1))
    # E = 1: QK has 2 numbers (D = 1), one identified product; OV likewise
    return Verdict(cid, "verified-symbolic" if ok and cfg_rank["measured"] == 2 else "refuted",
                   f"ratio (2D-1)/(2D); at E = D = 1 the Jacobian rank leaves "
                   f"{cfg_rank['measured']} of {cfg_rank['total']} unidentified (QK and OV)",
                   covered="symbolic + E = 1 Jacobian")


@check("ID-L4.2", "ID-S5.2")
def balanced_representative(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    worst_M, worst_b = 0.0, 0.0
    for _ in range(ctx.pick(20, 200)):
        D, E = 8, 32
        Wq = rng.standard_normal((D, E)) * rng.uniform(0.2, 3)
        Wk = rng.standard_normal((D, E)) * rng.uniform(0.2, 3)
        M = Wk.T @ Wq
        q2, k2 = rebalance(Wq, Wk)
        dM = np.linalg.norm(k2.T @ q2 - M) / np.linalg.norm(M)
        beta = np.linalg.norm(imbalance(q2, k2))
        nuc = 2 * np.linalg.norm(M, "nuc")
        norm = np.linalg.norm(q2) ** 2 + np.linalg.norm(k2) ** 2
        worst_M = max(worst_M, dM)
        worst_b = max(worst_b, beta / np.linalg.norm(imbalance(Wq, Wk)), abs(norm - nuc) / nuc)
    ok = worst_M < 1e-12 and worst_b < 1e-10
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"rebalancing keeps W_Kᵀ W_Q (relative change {worst_M:.1e}), zeroes the "
                   f"imbalance and reaches ||W_Q||² + ||W_K||² = 2||M||_* (max rel. deviation "
                   f"{worst_b:.1e})", covered="random unbalanced pairs, D = 8, E = 32",
                   measured=worst_M, claimed=0.0)


@check("ID-L4.3", "ID-S5.1")
def null_directions(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    D, E = 8, 32
    Wq, Wk = rng.standard_normal((D, E)), rng.standard_normal((D, E))
    A = rng.standard_normal((D, D))
    dq, dk = A @ Wq, -A.T @ Wk
    first_order = np.linalg.norm(Wk.T @ dq + dk.T @ Wq)
    _, rho_null = sylvester_projection(Wq, Wk, dq, dk)
    G = rng.standard_normal((E, E))                    # gradient of a loss of M = W_Kᵀ W_Q
    _, rho_grad = sylvester_projection(Wq, Wk, Wk @ G, Wq @ G.T)
    rhos = [sylvester_projection(Wq, Wk, rng.standard_normal((D, E)),
                                 rng.standard_normal((D, E)))[1] for _ in range(ctx.pick(400, 4000))]
    pred = float(claim("ID-S5.1").evaluate("rho_isotropic", E=E, H=E // D))
    mean = float(np.mean(rhos))
    se = float(np.std(rhos) / np.sqrt(len(rhos)))
    ok = first_order < 1e-10 and abs(rho_null - 1) < 1e-10 and rho_grad < 1e-12 and \
        abs(mean - pred) < 4 * se
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"(A W_Q, -Aᵀ W_K) leaves W_Kᵀ W_Q unchanged to first order ({first_order:.1e}); "
                   f"ρ = {rho_null:.12f} for a null step, {rho_grad:.1e} for a gradient step, mean "
                   f"{mean:.4f} ± {se:.4f} for isotropic steps (predicted D/(2E) = {pred})",
                   covered=f"D = 8, E = 32, {len(rhos)} isotropic steps", measured=mean,
                   claimed=pred)


@check("ID-F4.7")
def key_bias_inert(ctx: Context, cid):
    worst_out, worst_grad = 0.0, 0.0
    g = torch.Generator().manual_seed(ctx.seed)
    for causal in (False, True):
        m = build_layer(AttentionConfig(8, 2, bias=True, causal=causal), seed=ctx.seed)
        X = torch.randn(4, 6, 8, dtype=torch.float64, generator=g)
        y0 = m(X)
        loss = (y0 ** 2).sum()
        loss.backward()
        worst_grad = max(worst_grad, float(m.layers[0].attn.k.bias.grad.abs().max()))
        with torch.no_grad():
            m.layers[0].attn.k.bias.add_(10 * torch.randn(8, dtype=torch.float64, generator=g))
            worst_out = max(worst_out, float((m(X) - y0).abs().max()))
    ok = worst_out < 1e-10 and worst_grad < 1e-10
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"changing b_K by 10·N(0,1) moves outputs by {worst_out:.1e}; ∂L/∂b_K = "
                   f"{worst_grad:.1e}", covered="E = 8, H = 2, causal and not",
                   measured=max(worst_out, worst_grad), claimed=0.0)


@check("ID-EQ4.10")
def single_head_equivalence(ctx: Context, cid):
    c = claim("ID-EQ4.10")
    H, eta = c.symbol("H"), c.symbol("eta")
    lhs_max = sp.maximum(c.expr("fixed_width_lhs"), eta, sp.Interval(0, 1))
    rhs_min = c.expr("fixed_width_rhs").subs(H, 2)
    ok = lhs_max == 2 and rhs_min == 3 and sp.diff(c.expr("fixed_width_rhs"), H).is_positive
    r12 = float(c.evaluate("E0_over_E", H=12))
    return Verdict(cid, "verified-symbolic" if ok else "refuted",
                   f"at fixed width the single head's identified count (max 2 at η = 1) never "
                   f"reaches the MHA's (3 at H = 2, increasing in H); E0/E = {r12:.3f} at H = 12 "
                   "(the paper's 'roughly 60% larger' matches neither this nor the parameter "
                   f"ratio {r12 ** 2:.3f})", covered="symbolic over η in [0,1], H >= 2")


@check("ID-L5.1")
def conservation(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    D, E = 4, 8
    Wq0, Wk0 = rng.standard_normal((D, E)) * 0.5, rng.standard_normal((D, E)) * 0.5
    Tgt = rng.standard_normal((E, E)) * 0.3
    rows = []
    for lr in (1e-2, 3e-3, 1e-3, 3e-4):
        Wq, Wk = Wq0.copy(), Wk0.copy()
        C0 = imbalance(Wq, Wk)
        for _ in range(int(round(0.5 / lr))):            # fixed time horizon 0.5
            G = Wk.T @ Wq - Tgt                           # dL/dM for L = ½||M - Tgt||²
            Wq, Wk = Wq - lr * (Wk @ G), Wk - lr * (Wq @ G.T)
        rows.append({"lr": lr, "drift": float(np.linalg.norm(imbalance(Wq, Wk) - C0))})
    fit = fit_rate([r["lr"] for r in rows], [r["drift"] for r in rows])
    # one gradient step with weight decay: exactly C_1 = (1 - lr λ)² C_0 + lr² (W_K G Gᵀ W_Kᵀ -
    # W_Q Gᵀ G W_Qᵀ), i.e. the decay factor of the catalogue plus the O(lr²) discretisation term
    lam, lr = 0.1, 0.01
    Wq, Wk = Wq0.copy(), Wk0.copy()
    C0 = imbalance(Wq, Wk)
    G = Wk.T @ Wq - Tgt
    Wq1 = (1 - lr * lam) * Wq - lr * (Wk @ G)
    Wk1 = (1 - lr * lam) * Wk - lr * (Wq @ G.T)
    factor = float(claim("ID-L5.1").evaluate("decay_factor", lr=sp.Rational(1, 100),
                                             **{"lambda": sp.Rational(1, 10)}))
    second_order = lr ** 2 * (Wk @ G @ G.T @ Wk.T - Wq @ G.T @ G @ Wq.T)
    ok_decay = np.allclose(imbalance(Wq1, Wk1), factor * C0 + second_order, atol=1e-12)
    ok = 0.8 <= fit.slope <= 1.2 and ok_decay
    return Verdict(cid, "verified-numeric" if ok else "refuted",
                   f"gradient descent over a fixed time drifts like lr^{fit.slope:.2f} "
                   f"[{fit.ci_low:.2f}, {fit.ci_high:.2f}] (flow: conserved; per step O(lr²)); "
                   f"weight decay scales the imbalance by (1 - lr λ)²",
                   covered="D = 4, E = 8, lr in {1e-2..3e-4}, horizon 0.5", rows=rows,
                   plot={"x": "lr", "y": ["drift"], "title": "ID-L5.1: imbalance drift",
                         "xlabel": "learning rate", "ylabel": "||C_t - C_0||"})


@check("ID-E5")
def training_diagnostics(ctx: Context, cid):
    """Runs the identifiability_training experiment (quick: 150 steps per optimizer) and tests
    the paper's qualitative findings on it."""
    import tempfile
    from approxtheory.experiment import run_experiment
    with tempfile.TemporaryDirectory() as d:
        r = run_experiment("identifiability_training", profile="quick", out=d,
                           progress=False)
        from approxtheory.report import read_csv
        rows = read_csv(r["csv"])
        trace = read_csv(str(r["csv"]).replace(".csv", ".trace.csv"))
    by = {row["optimizer"]: row for row in rows}
    drift = {}
    for opt in by:
        tr = [t for t in trace if t["optimizer"] == opt]
        drift[opt] = tr[-1]["beta_drift"]
    base = by["sgd"]["rho_baseline"]
    checks = {
        "SGD steps lie outside the invariant subspace (ρ ≈ 0)": by["sgd"]["mean_rho"] < 1e-10,
        "ρ ordering SGD < SGD+wd < AdamW": by["sgd"]["mean_rho"] < by["sgd_wd"]["mean_rho"]
        < by["adamw"]["mean_rho"],
        "SGD conserves β better than AdamW": drift["sgd"] < drift["adamw"],
        "rebalancing does not hurt the loss (within 5 %)":
            by["adamw_rebalance"]["val_loss"] <= 1.05 * by["adamw"]["val_loss"],
    }
    failed = [k for k, v in checks.items() if not v]
    verdict = "consistent-empirical" if not failed else "refuted"
    return Verdict(cid, verdict,
                   f"mean ρ: SGD {by['sgd']['mean_rho']:.1e}, SGD+wd {by['sgd_wd']['mean_rho']:.3f}, "
                   f"AdamW {by['adamw']['mean_rho']:.3f} (reference 1/(2H) = {base:.3f}); β drift: "
                   f"SGD {drift['sgd']:.1e}, AdamW {drift['adamw']:.1e}; val loss AdamW "
                   f"{by['adamw']['val_loss']:.3f} vs rebalanced {by['adamw_rebalance']['val_loss']:.3f}"
                   + (f". Failed: {'; '.join(failed)}" if failed else "") +
                   ". AdamW stays well below the 1/(2H) reference here, while the paper reports "
                   "it comes closest to it",
                   covered=f"character-level model (pydoc topics), E = 32, H = 4, 2 layers, "
                           f"{int(rows[0]['steps'])} steps per optimizer, one seed",
                   rows=[{k: t[k] for k in ("optimizer", "step", "rho", "beta", "loss")}
                         for t in trace],
                   plot={"x": "step", "y": ["rho"], "group": "optimizer", "logx": False,
                         "title": "ID-E5: invariant fraction ρ per step", "xlabel": "step",
                         "ylabel": "ρ"})
