"""Checks of arXiv 2609.01231 (ID-*): counts against numeric Jacobian ranks of the shared model's
attention layer, invariances, inert biases, conservation and rebalancing; the §7 remarks (the
lottery-ticket contrast ID-LT, the "50 % to 80-90 %" sentence ID-PUB, Fig. 1's column ID-F1),
Fig. 3's bias gradients (ID-F3), and the trained Fig. 4 sweep (ID-F4) and clearing control
(ID-CLR) on the identifiability_training cells.

Every check reports its slack (1 for an exact count or identity that holds) or, where it reads no
formula, says why (``formula_note``).

Every count, ratio and closed form is read from the catalogue (``claim(id).expr``); the checks
only measure and compare. Mutants are of two kinds: a broken *construction* (the layer measured has
a tied, missing or extra structure; the invariance or rebalancing is implemented with a plausible
bug) and a broken *formula* (a catalogue expression with a changed constant, a forgotten term or the
wrong symmetry group), which ``_ev`` applies to the expression it reads."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.identifiability import (
    AttentionConfig,
    bias_aliasing,
    build_layer,
    imbalance,
    rebalance,
    sylvester_projection,
    unidentified_dim,
)
from approxtheory.measure import fit_rate

from ._core import Context, Verdict, check, memo, slope_row


# ------------------------------------------------------------------------ formula mutants
def _ov_orthogonal(e):
    """C² -> C(C-1)/2: the orbit of O(C) instead of GL(C)."""
    return sp.expand((e - sp.sqrt(e)) / 2)


#: (mutant, claim, expression name) -> the broken expression, given the catalogue's one
# keyed by Context.mutant (None: no mutant, found nowhere)
FORMULA_MUTANTS: dict[tuple[str | None, str, str], Callable[[Any], Any]] = {
    ("qk-only-count", "ID-T4.5", "U"): lambda e: e / 2,
    ("qk-only-count", "ID-T4.5", "ratio"): lambda e: e / 2,
    ("orthogonal-ov", "ID-L4.6", "U"): _ov_orthogonal,
    ("value-bias-identified", "ID-B4.7.2", "U"): lambda e: (
        e
        - claim("ID-B4.7.2")
        .expr("U_value_bias")
        .subs(
            {
                claim("ID-B4.7.2").symbol("C"): claim("ID-B4.7.2").symbol("E")
                / claim("ID-B4.7.2").symbol("H")
            }
        )
    ),
    ("per-head-count", "ID-GQA4.9", "U"): lambda e: e.subs(
        claim("ID-GQA4.9").symbol("G"), claim("ID-GQA4.9").symbol("H")
    ),
    ("per-head-count", "ID-GQA4.9", "ratio"): lambda e: e.subs(
        claim("ID-GQA4.9").symbol("G"), claim("ID-GQA4.9").symbol("H")
    ),
    ("repeated-constant", "ID-P4.8", "U_qk_repeated_pair"): lambda e: e - 2,
    ("gqa-count", "ID-RG", "U"): lambda e: claim("ID-GQA4.9").expr("U"),
    ("gqa-count", "ID-RG", "ratio"): lambda e: claim("ID-GQA4.9").expr("ratio"),
    ("split-ratio", "ID-X4.8.1", "ratio"): lambda e: e.subs(
        claim("ID-X4.8.1").symbol("D"),
        claim("ID-X4.8.1").symbol("E") / claim("ID-X4.8.1").symbol("H"),
    ),
    ("half-ratio", "ID-SH3.2", "ratio"): lambda e: sp.Rational(1, 2),
    ("orthogonal-count", "ID-L4.1", "U"): _ov_orthogonal,
    ("count-constant", "ID-E4.1", "U"): lambda e: e - 1,
    ("uncapped", "ID-L4.1w", "U"): lambda e: claim("ID-L4.1w").symbol("D") ** 2,
    ("one-constraint-set", "ID-L4.2", "dof"): lambda e: (
        e + claim("ID-L4.2").symbol("D") * (claim("ID-L4.2").symbol("D") + 1) / 2
    ),
    ("trivial-excluded", "ID-L4.3", "null_dim"): lambda e: e - 1,
    ("rho-constant", "ID-S5.1", "rho_isotropic"): lambda e: 2 * e,
    ("sha-symmetry-dropped", "ID-EQ4.10", "U_sha"): lambda e: sp.Integer(0),
    ("mha-qk-only", "ID-EQ4.10", "P_mha"): lambda e: e / 2,
    ("decay-exponent", "ID-L5.1d", "decay_factor"): lambda e: sp.sqrt(e),
}


def _expr(ctx: Context, cid: str, name: str):
    """The catalogue's expression, broken if the context's mutant breaks it."""
    e = claim(cid).expr(name)
    f = FORMULA_MUTANTS.get((ctx.mutant, cid, name))
    return f(e) if f is not None else e


def _ev(ctx: Context, cid: str, name: str, **values):
    """The (possibly mutated) catalogue expression at exact integer values."""
    c = claim(cid)
    e = _expr(ctx, cid, name).subs({c.symbol(k): sp.Integer(v) for k, v in values.items()})
    return sp.nsimplify(sp.simplify(e))


#: the slack of an exact count or identity that holds (claimed / measured = 1: no room)
EXACT = 1.0


# ---------------------------------------------------------------- Jacobian-rank counts
CONFIGS = {
    "ID-T4.5": [AttentionConfig(8, h) for h in (1, 2, 4, 8)] + [AttentionConfig(8, 2, causal=True)],
    "ID-L4.6": [AttentionConfig(8, h) for h in (1, 2, 4)],
    "ID-B4.7.2": [AttentionConfig(8, h, bias=True) for h in (1, 2, 4)],
    "ID-GQA4.9": [
        AttentionConfig(8, 4, G=2),
        AttentionConfig(8, 4, G=1),
        AttentionConfig(8, 8, G=2),
        AttentionConfig(8, 8, G=1),
    ],
    "ID-P4.8": [
        AttentionConfig(8, 1, rope="full"),
        AttentionConfig(8, 2, rope="full"),
        AttentionConfig(8, 1, rope="repeated"),
        AttentionConfig(8, 1, rope="partial:4"),
    ],
    "ID-RG": [AttentionConfig(8, 4, G=2, rope="full"), AttentionConfig(8, 4, G=1, rope="full")],
    "ID-X4.8.1": [AttentionConfig(8, 2, fat=True), AttentionConfig(4, 4, fat=True)],
    "ID-SH3.2": [AttentionConfig(4, 1, no_output=True), AttentionConfig(6, 1, no_output=True)],
}

#: construction mutants: the layer actually built (and measured) for a configuration
CONSTRUCTION_MUTANTS: dict[str | None, Callable[[AttentionConfig], AttentionConfig]] = {
    # pairs of heads share one W_K and one W_V (a tied parameter), counted as independent heads
    "tied-kv": lambda c: dataclasses.replace(c, G=c.H // 2) if c.H >= 2 and c.groups == c.H else c,
    # the paper's §3.2 head: a square W_V without W_O, counted as a head with W_O
    "no-output": lambda c: dataclasses.replace(c, no_output=True) if c.H == 1 and not c.bias else c,
    "kv-untied": lambda c: dataclasses.replace(c, G=None),
    "rope-off": lambda c: dataclasses.replace(c, rope=None),
    "repeated-freq": lambda c: dataclasses.replace(c, rope="repeated") if c.rope == "full" else c,
    "split-heads": lambda c: dataclasses.replace(c, fat=False),
    "with-output": lambda c: dataclasses.replace(c, no_output=False),
}

TIED = "heads 2i and 2i+1 share one W_K and one W_V (a tied parameter), counted as independent"
RANK_MUTANTS = {
    "ID-T4.5": {
        "tied-kv": TIED,
        "qk-only-count": "the count keeps only the QK orbit: U = E²/H (constant 2 -> 1; "
        "the OV orbit's C² per head forgotten)",
    },
    "ID-L4.6": {
        "orthogonal-ov": "the OV orbit counted as O(C), C(C-1)/2 per head, not GL(C)",
        "no-output": "the H = 1 layer built with a square W_V and no W_O (the paper's "
        "§3.2 head), counted as a W_O W_V head",
    },
    "ID-B4.7.2": {
        "value-bias-identified": "the count leaves out the H·C value-bias entries aliased with b_O",
        "tied-kv": TIED,
    },
    "ID-GQA4.9": {
        "per-head-count": "symmetries counted per query head (G -> H in U and the "
        "ratio: the MHA count)",
        "kv-untied": "the layer built with one K/V per query head (no sharing)",
    },
    "ID-P4.8": {
        "rope-off": "the layer built without RoPE (GL(D) back in QK)",
        "repeated-freq": "the full-RoPE layers built with one repeated frequency pair",
        "repeated-constant": "the repeated-pair count D + 4 written D + 2",
    },
    "ID-RG": {
        "rope-off": "the layer built without RoPE",
        "kv-untied": "the layer built with one K/V per query head (no sharing)",
        "gqa-count": "the RoPE+GQA count taken as the GQA count G(D² + C²) (the paper's "
        "Llama-2 figures)",
    },
    "ID-X4.8.1": {
        "split-heads": "the layer built with D = E/H instead of fat heads D = E",
        "split-ratio": "the ratio D/(2E) evaluated at D = E/H (1/(2H)) for fat heads",
    },
    "ID-SH3.2": {
        "with-output": "the single head built with a W_O (4E² weights)",
        "half-ratio": "the abstract's 1/2 taken for the §3.2 head",
    },
}


@memo
def _rank(cfg, seed):
    return unidentified_dim(cfg, seed=seed)


def _predicted(ctx: Context, cid: str, cfg: AttentionConfig):
    """(U, P, ratio or None) for a configuration, from the catalogue's expressions."""
    E, H, G, D = cfg.E, cfg.H, cfg.groups, cfg.head_dim
    C = D
    ev = lambda name, c=cid, **v: _ev(ctx, c, name, **v)
    if cid in ("ID-T4.5", "ID-B4.7.2"):
        return ev("U", E=E, H=H), ev("P", E=E, H=H), ev("ratio", E=E, H=H)
    if cid in ("ID-GQA4.9", "ID-RG"):
        return ev("U", E=E, H=H, G=G), ev("P", E=E, H=H, G=G), ev("ratio", E=E, H=H, G=G)
    if cid == "ID-L4.6":  # per head: QK orbit (ID-L4.1) + OV orbit (this claim)
        return (
            H * (ev("U", "ID-L4.1", D=D) + ev("U", C=C)),
            H * (ev("P", "ID-L4.1", D=D, E=E) + ev("P", C=C, E=E)),
            None,
        )
    if cid == "ID-P4.8":
        if cfg.rope == "full":
            return ev("U", E=E, H=H), ev("P", E=E, H=H), ev("ratio", E=E, H=H)
        qk = (
            ev("U_qk_repeated_pair", D=D)
            if cfg.rope == "repeated"
            else ev("U_qk_partial", D=D, D_r=cfg.rope_dims)
        )
        return H * (qk + ev("U", "ID-L4.6", C=C)), ev("P", E=E, H=H), None
    if cid == "ID-X4.8.1":
        return ev("U", D=D, H=H), ev("P", D=D, E=E, H=H), ev("ratio", D=D, E=E)
    if cid == "ID-SH3.2":
        return ev("U", E=E), ev("P", E=E), ev("ratio", E=E)
    raise KeyError(cid)


def _describe(c: AttentionConfig) -> str:
    s = f"E={c.E} H={c.H}"
    s += f" G={c.groups}" if c.groups != c.H else ""
    s += " bias" if c.bias else ""
    s += " causal" if c.causal else ""
    s += f" rope={c.rope}" if c.rope else ""
    s += " fat" if c.fat else ""
    s += " no-W_O" if c.no_output else ""
    return s


def _aliasing(ctx: Context):
    cfgs = [CONSTRUCTION_MUTANTS.get(ctx.mutant, lambda c: c)(c) for c in CONFIGS["ID-B4.7.2"]]
    return [bias_aliasing(c, seed=ctx.seed) for c in cfgs]


def jacobian_rank(ctx: Context, cid):
    rows = []
    build = CONSTRUCTION_MUTANTS.get(ctx.mutant, lambda c: c)
    for cfg in CONFIGS[cid]:
        built = build(cfg)
        r = _rank(built, ctx.seed)
        U, P, ratio = _predicted(ctx, cid, cfg)
        meas_ratio = sp.Rational(r["measured"], r["total"])
        ok = U == r["measured"] and P == r["total"] and (ratio is None or ratio == meas_ratio)
        rows.append(
            {
                "config": _describe(cfg),
                "built": _describe(built),
                "E": cfg.E,
                "H": cfg.H,
                "G": cfg.groups,
                "P_claimed": int(P),
                "P_measured": r["total"],
                "U_claimed": int(U),
                "U_measured": r["measured"],
                "ratio_claimed": str(ratio) if ratio is not None else "",
                "ratio_measured": str(meas_ratio),
                "agrees": bool(ok),
                "gap": r["singular_value_gap"],
                "method": r["method"],
            }
        )
    bad = [r for r in rows if not r["agrees"]]
    ok = not bad
    extra = ""
    if cid == "ID-B4.7.2":  # the aliasing itself: b_K inert, b_V^h only through b_O
        al = _aliasing(ctx)
        worst = max(
            max(
                a["key_bias_output_change"],
                a["value_bias_aliasing_output_change"],
                a["key_bias_grad"],
            )
            for a in al
        )
        ok = ok and worst < 1e-10
        extra = (
            f"; replacing b_K, or moving δ_h into b_V^h and -Σ_h W_O^h δ_h into b_O, "
            f"changes the outputs by at most {worst:.1e} (criterion < 1e-10)"
        )
    if cid == "ID-T4.5":  # "never 0": the catalogue's ratio is positive for every H
        pos = _expr(ctx, cid, "ratio").is_positive
        ok = ok and bool(pos)
        extra = f"; the ratio {_expr(ctx, cid, 'ratio')} is positive for every H (never 0)"
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"the catalogue's unidentified count U, total P"
        f"{' and ratio' if any(r['ratio_claimed'] for r in rows) else ''} equal "
        f"P - rank(Jacobian) of the layer in {len(rows) - len(bad)}/{len(rows)} "
        f"configurations (singular-value gap >= {min(r['gap'] for r in rows):.1e})" + extra,
        covered="; ".join(f"{r['built']} ({r['method']})" for r in rows)
        + " — float64 Jacobian ranks on random sequences (dense: the full "
        "Jacobian's singular values; structured: the per-head certificate)",
        measured=[r["U_measured"] for r in rows],
        claimed=[r["U_claimed"] for r in rows],
        witness=bad[0] if bad else None,
        rows=rows,
        scope="partial: the count at "
        + "; ".join(r["config"] for r in rows)
        + " (one random draw of weights and inputs each)",
        slack=EXACT if ok else None,
    )


for _cid, _muts in RANK_MUTANTS.items():
    check(_cid, mutants=_muts)(jacobian_rank)


# ----------------------------------------------- the QK block of a layer, any D and E
@memo
def _qk_layer(E: int, D: int, seed: int, tie: bool = False, seq_len: int = 7) -> dict:
    """P - rank of the Jacobian of a one-head layer of the shared model (width E, query/key dim
    D, value dim E, no residual, float64) with respect to its query/key weights only, on random
    sequences. ``tie`` builds the layer with W_K tied to W_Q (one parameter)."""
    from torch.func import functional_call, jacrev

    from approxtheory.model import LayerSpec, ModelConfig, Transformer

    mc = ModelConfig(
        d_in=E,
        width=E,
        readout="tokens",
        residual=False,
        layers=[LayerSpec(heads=1, head_dim=D, value_dim=E)],
        d_out=E,
        attn_scale=1.0,
        embed_bias=False,
        head_bias=False,
    )
    m = Transformer(mc)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / math.sqrt(E))
        m.set_embedding(torch.eye(E, dtype=torch.float64))
        m.set_readout(torch.eye(E, dtype=torch.float64))
    a = m.attention(0)
    parts = [a.q.weight.detach().reshape(-1)] + ([] if tie else [a.k.weight.detach().reshape(-1)])
    theta = torch.cat(parts).clone()
    P = theta.numel()
    n_seq = max(12, -(-2 * P // (seq_len * E)))
    X = torch.randn(n_seq, seq_len, E, generator=g, dtype=torch.float64)

    def f(th):
        wq = th[: D * E].view(D, E)
        wk = wq if tie else th[D * E :].view(D, E)
        out = functional_call(
            m,
            {m.parameter_name(a.q.weight): wq, m.parameter_name(a.k.weight): wk},
            (X,),
            {"return_attention": True},
        )
        return out[0].reshape(-1)

    sv = torch.linalg.svdvals(jacrev(f)(theta).detach())
    rank = int((sv > 1e-8 * sv[0]).sum())
    gap = float(sv[rank - 1] / sv[rank]) if rank < len(sv) and sv[rank] > 0 else float("inf")
    return {"P": P, "rank": rank, "U": P - rank, "gap": gap}


def _qk_rows(ctx: Context, cid: str, grid):
    rows = []
    tie = ctx.mutant == "tied-qk"
    for D, E in grid:
        r = _qk_layer(E, D, ctx.seed, tie)
        vals = {"D": D} if cid == "ID-E4.1" else {"D": D, "E": E}
        U, P = _ev(ctx, cid, "U", **vals), _ev(ctx, cid, "P", **vals)
        # the claim's ratio too, where it states one (the primary expression of ID-L4.1/E4.1)
        has_ratio = "ratio" in claim(cid).expressions
        ratio = _ev(ctx, cid, "ratio", **vals) if has_ratio else None
        meas = sp.Rational(r["U"], r["P"])
        rows.append(
            {
                "D": D,
                "E": E,
                "U_claimed": int(U),
                "U_measured": r["U"],
                "P_claimed": int(P),
                "P_measured": r["P"],
                "ratio_claimed": str(ratio) if has_ratio else "",
                "ratio_measured": str(meas),
                "gap": r["gap"],
                "agrees": U == r["U"] and P == r["P"] and (ratio is None or ratio == meas),
            }
        )
    return rows


TIED_QK = "the layer built with W_K tied to W_Q (one shared parameter), counted as two"


@check("ID-E4.1", mutants={"tied-qk": TIED_QK, "count-constant": "the count 2D - 1 written 2D - 2"})
@check(
    "ID-L4.1w",
    mutants={
        "tied-qk": TIED_QK,
        "uncapped": "the D <= E count D² used at every D (no cap at the rank E of W_Kᵀ W_Q)",
    },
)
def qk_count(ctx: Context, cid):
    grid = (
        [(1, 1), (2, 1), (3, 1), (5, 1)]
        if cid == "ID-E4.1"
        else [(2, 4), (4, 4), (5, 3), (7, 5), (6, 2)]
    )
    rows = _qk_rows(ctx, cid, grid)
    bad = [r for r in rows if not r["agrees"]]
    wide = [r for r in rows if r["D"] > r["E"]]
    return Verdict(
        cid,
        "verified-numeric" if not bad else "refuted",
        f"P - rank of the layer's Jacobian in (W_Q, W_K) equals the catalogue's U (and "
        f"P = 2DE) in {len(rows) - len(bad)}/{len(rows)} cases, {len(wide)} of them "
        f"with D > E (singular-value gap >= {min(r['gap'] for r in rows):.1e})",
        covered="(D, E) = "
        + ", ".join(f"({r['D']},{r['E']})" for r in rows)
        + ": one-head layer of the shared model, float64, random weights and "
        "sequences",
        measured=[r["U_measured"] for r in rows],
        claimed=[r["U_claimed"] for r in rows],
        witness=bad[0] if bad else None,
        rows=rows,
        scope="partial: (D, E) = " + ", ".join(f"({r['D']},{r['E']})" for r in rows),
        slack=EXACT if not bad else None,
    )


# ------------------------------------------------------------------------- invariances
def _qk(m, h):
    a = m.attention(0)
    n = a.n
    return a.q.weight.detach()[h * n : (h + 1) * n].numpy().copy(), a.k.weight.detach()[
        h * n : (h + 1) * n
    ].numpy().copy()


TRANSPOSE = (
    "the key transform S^{-1} W_K instead of S^{-T} W_K (the transpose the paper's "
    "proof of Lemma 4.1 drops)"
)


@check(
    "ID-L4.1",
    mutants={
        "transpose-dropped": TRANSPOSE,
        "orthogonal-count": "the per-head count D² replaced by O(D)'s D(D-1)/2 (rotations only)",
    },
)
@check(
    "ID-B4.6",
    mutants={
        "transpose-dropped": TRANSPOSE,
        "bias-untransformed": "W_Q, W_K transformed but b_Q, b_K left as they were",
    },
)
def invariance(ctx: Context, cid):
    cfg = AttentionConfig(8, 2, bias=(cid == "ID-B4.6"))
    m = build_layer(cfg, seed=ctx.seed)
    X = torch.randn(4, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(ctx.seed))
    with torch.no_grad():
        y0 = m(X)
        a = m.attention(0)
        rng = np.random.default_rng(ctx.seed)
        for h in range(2):
            S = rng.standard_normal((4, 4)) + 3 * np.eye(4)
            Sk = np.linalg.inv(S) if ctx.is_mutant("transpose-dropped") else np.linalg.inv(S).T
            Wq, Wk = _qk(m, h)
            a.set_head(h, q=S @ Wq, k=Sk @ Wk)
            if cfg.bias and not ctx.is_mutant("bias-untransformed"):
                bq = a.q.bias[h * 4 : (h + 1) * 4].numpy().copy()
                bk = a.k.bias[h * 4 : (h + 1) * 4].numpy().copy()
                a.q.bias[h * 4 : (h + 1) * 4] = torch.from_numpy(S @ bq)
                a.k.bias[h * 4 : (h + 1) * 4] = torch.from_numpy(Sk @ bk)
        y1 = m(X)
        # control: transforming W_Q alone is not an invariance
        a.set_head(0, q=2 * _qk(m, 0)[0])
        y2 = m(X)
    d = float((y1 - y0).abs().max())
    ctrl = float((y2 - y0).abs().max())
    ok = d < 1e-10 and ctrl > 1e-3
    count, scope = "", "partial: E = 8, H = 2 with biases, one random S in GL(4) per head"
    if cid == "ID-L4.1":  # the orbit's dimension: the QK block of a layer
        rows = _qk_rows(ctx, "ID-L4.1", [(2, 5), (4, 8), (3, 3)])
        ok = ok and all(r["agrees"] for r in rows)
        count = "; per-head count " + ", ".join(
            f"(D,E)=({r['D']},{r['E']}): U {r['U_measured']} measured vs {r['U_claimed']}"
            for r in rows
        )
        scope = (
            "partial: the GL(D) action at E = 8, H = 2 (one random S per head) and the "
            "count D² of 2DE at (D, E) = (2,5), (4,8), (3,3)"
        )
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"(S W_Q, S^-T W_K){' with (S b_Q, S^-T b_K)' if cfg.bias else ''} leaves "
        f"outputs unchanged to {d:.1e} (criterion < 1e-10); control (W_Q alone) "
        f"changes them by {ctrl:.2f}" + count,
        covered="E = 8, H = 2, random S in GL(4)",
        measured=d,
        claimed=0.0,
        scope=scope,
        slack=EXACT if ok and cid == "ID-L4.1" else None,
        formula_note=""
        if cid == "ID-L4.1"
        else "reads no formula: an invariance (the outputs unchanged under the group action), "
        "measured as an output change; the claim has no expression",
    )


# ------------------------------------------------------------------------- rebalancing
UNEVEN = "the rebalanced pair returned as (1.1 W_Q, W_K / 1.1): Σ split unevenly"
ONE_SIDE = "the Procrustes rotation applied to W_Q only (a random orthogonal R on W_Q)"


def _rebalanced(ctx: Context, Wq, Wk, rng):
    q2, k2 = rebalance(Wq, Wk)
    if ctx.is_mutant("uneven-split"):
        q2, k2 = 1.1 * q2, k2 / 1.1
    if ctx.is_mutant("rotation-one-side"):
        R = np.linalg.qr(rng.standard_normal((Wq.shape[0],) * 2))[0]
        q2 = R @ q2
    return q2, k2


@check(
    "ID-L4.2",
    mutants={
        "uneven-split": UNEVEN,
        "rotation-one-side": ONE_SIDE,
        "one-constraint-set": "2DE + D - D(D+1)/2: only one set of "
        "orthonormality constraints subtracted",
    },
)
@check("ID-S5.2", mutants={"uneven-split": UNEVEN, "rotation-one-side": ONE_SIDE})
@check("ID-S5.2n", mutants={"uneven-split": UNEVEN, "rotation-one-side": ONE_SIDE})
def balanced_representative(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    D, E = 8, 32
    worst = {"M": 0.0, "beta": 0.0, "tau": 0.0, "norm": 0.0, "orbit_below": 0.0}
    n = ctx.pick(20, 200)
    for _ in range(n):
        Wq = rng.standard_normal((D, E)) * rng.uniform(0.2, 3)
        Wk = rng.standard_normal((D, E)) * rng.uniform(0.2, 3)
        M = Wk.T @ Wq
        q2, k2 = _rebalanced(ctx, Wq, Wk, rng)
        C0 = np.linalg.norm(imbalance(Wq, Wk))
        worst["M"] = max(worst["M"], np.linalg.norm(k2.T @ q2 - M) / np.linalg.norm(M))
        worst["beta"] = max(worst["beta"], np.linalg.norm(imbalance(q2, k2)) / C0)
        worst["tau"] = max(worst["tau"], abs(np.trace(imbalance(q2, k2))) / C0)
        nuc = 2 * np.linalg.norm(M, "nuc")
        norm = np.linalg.norm(q2) ** 2 + np.linalg.norm(k2) ** 2
        worst["norm"] = max(worst["norm"], abs(norm - nuc) / nuc)
        if cid == "ID-S5.2n":  # other points of the orbit are not smaller
            for scale in (0.1, 1.0):
                S = np.eye(D) + scale * rng.standard_normal((D, D))
                other = np.linalg.norm(S @ q2) ** 2 + np.linalg.norm(np.linalg.inv(S).T @ k2) ** 2
                worst["orbit_below"] = max(worst["orbit_below"], (norm - other) / nuc)
    tol_M, tol_b = 1e-12, 1e-10
    parts = {"M kept": worst["M"] < tol_M}
    if cid in ("ID-L4.2", "ID-S5.2"):
        parts["β = 0"] = worst["beta"] < tol_b
    if cid == "ID-S5.2":
        parts["τ = 0"] = worst["tau"] < tol_b
    if cid == "ID-S5.2n":
        parts["norm = 2||M||_*"] = worst["norm"] < tol_b
        parts["no orbit point below"] = worst["orbit_below"] < tol_b
    extra, scope = "", (f"partial: {n} random unbalanced pairs, D = 8, E = 32")
    if cid == "ID-L4.2":  # the degrees of freedom: the identified QK dimension of a layer
        rows = []
        for d, e in [(2, 5), (4, 8), (3, 3)]:
            r = _qk_layer(e, d, ctx.seed)
            dof = _ev(ctx, cid, "dof", D=d, E=e)
            rows.append((d, e, r["rank"], dof))
        parts["dof = rank"] = all(rk == dof for _, _, rk, dof in rows)
        extra = "; identified dimension (rank) vs dof: " + ", ".join(
            f"(D,E)=({d},{e}): {rk} vs {dof}" for d, e, rk, dof in rows
        )
        scope += "; dof at (D, E) = (2,5), (4,8), (3,3)"
    failed = [k for k, v in parts.items() if not v]
    return Verdict(
        cid,
        "verified-numeric" if not failed else "refuted",
        f"after rebalancing: relative change of W_Kᵀ W_Q {worst['M']:.1e} (< {tol_M}), "
        f"β/β₀ {worst['beta']:.1e}, |τ|/β₀ {worst['tau']:.1e}, ||W_Q||² + ||W_K||² "
        f"vs 2||M||_* {worst['norm']:.1e}"
        + (
            f", largest relative drop to another orbit point {worst['orbit_below']:.1e}"
            if cid == "ID-S5.2n"
            else ""
        )
        + f" (criteria < {tol_b})"
        + extra
        + (f". Failed: {', '.join(failed)}" if failed else ""),
        covered=f"{n} random unbalanced pairs, D = 8, E = 32",
        measured=worst["M"],
        claimed=0.0,
        scope=scope,
        slack=EXACT if cid == "ID-L4.2" and not failed else None,
        formula_note=""
        if cid == "ID-L4.2"
        else "reads no formula: properties of the rebalanced pair (M kept, β = τ = 0, norm "
        "= 2||M||_*) measured directly; the claim has no expression",
    )


# -------------------------------------------------------------- null directions, projection
def _dM(Wq, Wk):
    """The Jacobian of (W_Q, W_K) -> W_Kᵀ W_Q as an E² x 2DE matrix."""
    D, E = Wq.shape
    eye = np.eye(E)
    JQ = np.einsum("di,jk->ijdk", Wk, eye).reshape(E * E, D * E)  # W_Kᵀ dW_Q
    JK = np.einsum("ik,dj->ijdk", eye, Wq).reshape(E * E, D * E)  # dW_Kᵀ W_Q
    return np.concatenate([JQ, JK], axis=1)


@check(
    "ID-L4.3",
    mutants={
        "sign-flipped": "the directions (A W_Q, +Aᵀ W_K) (sign of the key part flipped)",
        "trivial-excluded": "the null dimension D² - 1: the trivial "
        "direction (W_Q, -W_K) (A = I) not counted",
    },
)
def null_directions(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    sign = 1.0 if ctx.is_mutant("sign-flipped") else -1.0
    rows = []
    for D, E in [(2, 5), (4, 8), (8, 16)]:
        Wq, Wk = rng.standard_normal((D, E)), rng.standard_normal((D, E))
        J = _dM(Wq, Wk)
        sv = np.linalg.svd(J, compute_uv=False)
        null = 2 * D * E - int((sv > 1e-10 * sv[0]).sum())
        # the D² directions (E_ij W_Q, ∓E_ijᵀ W_K) of the parametrization
        dirs = []
        for i in range(D):
            for j in range(D):
                A = np.zeros((D, D))
                A[i, j] = 1.0
                dirs.append(np.concatenate([(A @ Wq).ravel(), (sign * A.T @ Wk).ravel()]))
        N = np.array(dirs).T
        first = float(np.linalg.norm(J @ N) / (np.linalg.norm(J) * np.linalg.norm(N)))
        span = int(np.linalg.matrix_rank(N))
        claimed = _ev(ctx, cid, "null_dim", D=D)
        rows.append(
            {
                "D": D,
                "E": E,
                "null_dim": null,
                "claimed": int(claimed),
                "first_order": first,
                "span": span,
                "agrees": null == claimed and span == claimed and first < 1e-12,
            }
        )
    bad = [r for r in rows if not r["agrees"]]
    return Verdict(
        cid,
        "verified-numeric" if not bad else "refuted",
        "the null space of d(W_Kᵀ W_Q) has the catalogue's dimension and is spanned by "
        "{(A W_Q, -Aᵀ W_K)}: "
        + "; ".join(
            f"(D,E)=({r['D']},{r['E']}): null {r['null_dim']} vs {r['claimed']}, "
            f"span {r['span']}, first-order change {r['first_order']:.1e}"
            for r in rows
        )
        + " (criteria: equal, equal, < 1e-12)",
        covered="random full-rank (W_Q, W_K), (D, E) = (2,5), (4,8), (8,16)",
        measured=[r["null_dim"] for r in rows],
        claimed=[r["claimed"] for r in rows],
        witness=bad[0] if bad else None,
        scope="partial: one random full-rank pair at each (D, E) = (2,5), (4,8), (8,16)",
        slack=EXACT if not bad else None,
    )


def _projection(ctx: Context, Wq, Wk, dq, dk):
    """ρ of an update, by the library's projection, or by a plausibly broken one."""
    if ctx.is_mutant("paper-sign"):  # Cm = δW_Q W_Qᵀ + W_K δW_Kᵀ
        return sylvester_projection(Wq, Wk, dq, -dk)[1]
    if ctx.is_mutant("paper-indices"):  # Ã_ij = R_ij / (λ_Q,i + λ_K,j)
        lq, Uq = np.linalg.eigh(Wq @ Wq.T)
        lk, Uk = np.linalg.eigh(Wk @ Wk.T)
        R = Uk.T @ (dq @ Wq.T - Wk @ dk.T) @ Uq
        A = Uk @ (R / (lq[:, None] + lk[None, :])) @ Uq.T
        num = np.linalg.norm(A @ Wq) ** 2 + np.linalg.norm(A.T @ Wk) ** 2
        return float(num / (np.linalg.norm(dq) ** 2 + np.linalg.norm(dk) ** 2))
    return sylvester_projection(Wq, Wk, dq, dk)[1]


@check(
    "ID-S5.1",
    mutants={
        "paper-sign": "the projection's objective with the OCR'd sign: Cm = δW_Q W_Qᵀ + W_K δW_Kᵀ",
        "paper-indices": "the elementwise solve with the paper's printed (swapped) eigenvalue "
        "indices",
        "rho-constant": "the isotropic baseline 1/(2H) written 1/H",
    },
)
def projection(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    D, E = 8, 32
    Wq, Wk = rng.standard_normal((D, E)), rng.standard_normal((D, E))
    A = rng.standard_normal((D, D))
    rho_null = _projection(ctx, Wq, Wk, A @ Wq, -A.T @ Wk)
    G = rng.standard_normal((E, E))  # gradient of a loss of M = W_Kᵀ W_Q
    rho_grad = _projection(ctx, Wq, Wk, Wk @ G, Wq @ G.T)
    rhos = [
        _projection(ctx, Wq, Wk, rng.standard_normal((D, E)), rng.standard_normal((D, E)))
        for _ in range(ctx.pick(400, 4000))
    ]
    pred = float(_ev(ctx, cid, "rho_isotropic", E=E, H=E // D))
    mean = float(np.mean(rhos))
    se = float(np.std(rhos) / np.sqrt(len(rhos)))
    ok = abs(rho_null - 1) < 1e-10 and rho_grad < 1e-12 and abs(mean - pred) < 4 * se
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"ρ = 1 {'+' if rho_null >= 1 else '-'} {abs(rho_null - 1):.2g} for a step in the "
        f"subspace (criterion |ρ - 1| < 1e-10), {rho_grad:.1e} for a gradient step (< 1e-12), "
        f"mean {mean:.4f} ± {se:.4f} for isotropic steps vs the catalogue's {pred:.4g} (within "
        "4 standard errors)",
        covered=f"D = 8, E = 32, {len(rhos)} isotropic steps",
        measured=mean,
        claimed=pred,
        scope=f"partial: one random pair at D = 8, E = 32 (H = 4); {len(rhos)} isotropic steps",
        # an equality in the mean: claimed / measured (1 = exact)
        slack=pred / mean if ok and mean > 0 else None,
    )


# ------------------------------------------------------------------------- inert key bias
@check(
    "ID-F4.7",
    mutants={
        "rope-key-bias": "a layer with RoPE after the biased key projection: "
        "the rotated key bias is no longer a constant shift"
    },
)
def key_bias_inert(ctx: Context, cid):
    worst_out, worst_grad = 0.0, 0.0
    g = torch.Generator().manual_seed(ctx.seed)
    rope = "full" if ctx.is_mutant("rope-key-bias") else None
    for causal in (False, True):
        m = build_layer(AttentionConfig(8, 2, bias=True, causal=causal, rope=rope), seed=ctx.seed)
        X = torch.randn(4, 6, 8, dtype=torch.float64, generator=g)
        y0 = m(X)
        loss = (y0**2).sum()
        loss.backward()
        grad = m.attention(0).k.bias.grad
        assert grad is not None  # the backward pass above filled it
        worst_grad = max(worst_grad, float(grad.abs().max()))
        with torch.no_grad():
            m.attention(0).k.bias.add_(10 * torch.randn(8, dtype=torch.float64, generator=g))
            worst_out = max(worst_out, float((m(X) - y0).abs().max()))
    # the count: the inert entries of b_K (those the outputs' Jacobian in b_K does not see)
    counts = []
    for causal in (False, True):
        cfg = AttentionConfig(8, 2, bias=True, causal=causal, rope=rope)
        r = _bias_ranks(cfg, ctx.seed)["key"]
        counts.append((r["entries"] - r["rank"], int(_ev(ctx, cid, "U_key_bias", H=2, D=4))))
    ok_count = all(m == c for m, c in counts)
    ok = worst_out < 1e-10 and worst_grad < 1e-10 and ok_count
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"changing b_K by 10·N(0,1) moves outputs by {worst_out:.1e}; ∂L/∂b_K = "
        f"{worst_grad:.1e} (criteria < 1e-10); inert key-bias entries (entries - rank of the "
        f"outputs' Jacobian in b_K) "
        + ", ".join(f"{m} measured vs {c} claimed" for m, c in counts),
        covered="E = 8, H = 2, causal and not",
        measured=max(worst_out, worst_grad),
        claimed=0.0,
        scope="partial: E = 8, H = 2, causal and not, one random layer and b_K shift each",
        slack=EXACT if ok else None,
    )


# ------------------------------------------------------------------- single head equivalence
@check(
    "ID-EQ4.10",
    mutants={
        "sha-symmetry-dropped": "the single head's count without its QK orbit (U_sha = 0)",
        "mha-qk-only": "the MHA's weights counted from the QK blocks only (2HDE, constant 4 -> 2)",
    },
)
def single_head_equivalence(ctx: Context, cid):
    c = claim(cid)
    E, H, D, E0, D0, eta = (c.symbol(s) for s in ("E", "H", "D", "E_0", "D_0", "eta"))
    # identified = P - U, from the catalogue's counts (one source of truth)
    ident_sha = _expr(ctx, cid, "P_sha") - _expr(ctx, cid, "U_sha")
    ident_mha = (_expr(ctx, cid, "P_mha") - _expr(ctx, cid, "U_mha")).subs(D, E / H)
    # (a) equal widths: D0 = E0, solve for E0
    sols = [
        s
        for s in sp.solve(sp.Eq(ident_sha.subs(D0, E0), ident_mha), E0)
        if s.is_positive is not False
    ]
    ratio = sp.simplify(sols[0] / E) if len(sols) == 1 else None
    ok_a = (
        ratio is not None
        and sp.simplify(ratio - c.expr("E0_over_E")) == 0
        and sp.simplify(ratio.subs(H, 1)) == 1
    )
    # (b) fixed width: E0 = E, D0 = eta E; maximise the single head's side over eta in [0, 1]
    lhs = sp.simplify(ident_sha.subs({E0: E, D0: eta * E}) / E**2)
    rhs = sp.simplify(ident_mha / E**2)
    lhs_max = sp.maximum(lhs, eta, sp.Interval(0, 1))
    rhs_2 = rhs.subs(H, 2)
    increasing = sp.simplify(sp.diff(rhs, H)).is_positive
    ok_b = bool(lhs_max < rhs_2) and bool(increasing) and rhs.subs(H, 1) == lhs_max
    ok_stated = (
        sp.simplify(lhs - c.expr("fixed_width_lhs")) == 0
        and sp.simplify(rhs - c.expr("fixed_width_rhs")) == 0
    )
    ok = ok_a and ok_b and ok_stated
    verdict_b = (
        "so no single head matches for H >= 2 (equality at H = 1)"
        if ok_b
        else "so the impossibility does NOT follow from these counts"
    )
    r12 = float(c.evaluate("E0_over_E", H=12))
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        f"from the catalogue's counts (identified = P - U): equal widths need "
        f"E0/E = {ratio} (stated {c.expr('E0_over_E')}; 1 at H = 1); at fixed width "
        f"the single head's side {lhs} has maximum {lhs_max} on η ∈ [0, 1], the MHA's "
        f"side {rhs} is {rhs_2} at H = 2 and "
        f"{'increasing' if increasing else 'not increasing'} in H, {verdict_b}; "
        f"derived sides equal the paper's "
        f"printed ones: {ok_stated}. E0/E = {r12:.3f} at H = 12 (the paper's "
        f"'roughly 60% larger' matches neither this nor the parameter ratio "
        f"{r12**2:.3f})",
        covered="symbolic over η in [0,1], H >= 1",
        scope="full",
        slack=EXACT if ok else None,
    )


# ------------------------------------------------------------------------- conservation
def _flow_rows(ctx: Context):
    rows = []
    for causal in (False, True):
        bias = ctx.is_mutant("qk-bias")
        m = build_layer(AttentionConfig(8, 2, causal=causal, bias=bias), seed=ctx.seed)
        g = torch.Generator().manual_seed(ctx.seed + 1)
        X = torch.randn(6, 7, 8, dtype=torch.float64, generator=g)
        T = torch.randn(6, 7, 8, dtype=torch.float64, generator=g)
        loss = ((m(X) - T) ** 2).sum()
        loss.backward()
        a = m.attention(0)
        for h in range(a.h):
            sl = slice(h * a.n, (h + 1) * a.n)
            Wq, Wk = a.q.weight.detach()[sl].numpy(), a.k.weight.detach()[sl].numpy()
            assert a.q.weight.grad is not None and a.k.weight.grad is not None  # backward ran
            gq, gk = a.q.weight.grad[sl].numpy(), a.k.weight.grad[sl].numpy()
            if ctx.is_mutant("sign-flow"):
                gq, gk = np.sign(gq), np.sign(gk)
            # d/dt (W_Q W_Qᵀ - W_K W_Kᵀ) along dW/dt = -∇L
            dC = -(gq @ Wq.T + Wq @ gq.T) + (gk @ Wk.T + Wk @ gk.T)
            scale = np.linalg.norm(gq @ Wq.T) + np.linalg.norm(gk @ Wk.T)
            rows.append(
                {
                    "causal": causal,
                    "head": h,
                    "dC_dt": float(np.linalg.norm(dC)),
                    "relative": float(np.linalg.norm(dC) / scale),
                }
            )
    return rows


@check(
    "ID-L5.1",
    mutants={
        "qk-bias": "the layer with query/key biases (the paper's experiments): the W-only "
        "quantity is then not the conserved one",
        "sign-flow": "the flow of a sign-preconditioned (Adam-like) update instead of the gradient",
    },
)
def conservation_flow(ctx: Context, cid):
    rows = _flow_rows(ctx)
    worst = max(r["relative"] for r in rows)
    ok = worst < 1e-12
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"along -∇L of a squared loss, d/dt (W_Q W_Qᵀ - W_K W_Kᵀ) is {worst:.1e} "
        f"relative to its two cancelling terms (criterion < 1e-12), every head",
        covered="E = 8, H = 2 layers (causal and not), random target, float64",
        measured=worst,
        claimed=0.0,
        rows=rows,
        scope="partial: the flow's derivative at one random point of an E = 8, H = 2 "
        "layer (causal and not) for a squared loss",
        formula_note="reads no formula: a conservation law (a time derivative equal to 0), "
        "measured directly; the claim has no expression",
    )


@check(
    "ID-L5.1d",
    mutants={
        "sign-step": "gradient descent replaced by sign descent (an Adam-like elementwise "
        "normalised step)",
        "decay-exponent": "the weight-decay factor (1 - lr λ)² written (1 - lr λ)",
    },
)
def conservation_discrete(ctx: Context, cid):
    rng = np.random.default_rng(ctx.seed)
    D, E = 4, 8
    Wq0, Wk0 = rng.standard_normal((D, E)) * 0.5, rng.standard_normal((D, E)) * 0.5
    Tgt = rng.standard_normal((E, E)) * 0.3
    sign = ctx.is_mutant("sign-step")

    def step(Wq, Wk, lr, wd=0.0):
        G = Wk.T @ Wq - Tgt  # dL/dM for L = ½||M - Tgt||²
        gq, gk = Wk @ G, Wq @ G.T
        if sign:
            gq, gk = np.sign(gq), np.sign(gk)
        return (1 - lr * wd) * Wq - lr * gq, (1 - lr * wd) * Wk - lr * gk, G

    rows = []
    for lr in (1e-2, 3e-3, 1e-3, 3e-4):
        Wq, Wk = Wq0.copy(), Wk0.copy()
        C0 = imbalance(Wq, Wk)
        for _ in range(round(0.5 / lr)):  # fixed time horizon 0.5
            Wq, Wk, _ = step(Wq, Wk, lr)
        rows.append({"lr": lr, "drift": float(np.linalg.norm(imbalance(Wq, Wk) - C0))})
    fit = fit_rate([r["lr"] for r in rows], [r["drift"] for r in rows], seed=ctx.seed)
    c = claim(cid)
    p = float(c.exponent("lr", expr="horizon_drift"))
    tol = 0.1
    ok_rate = fit.ci_low >= p - tol
    # one step with weight decay: exactly C_1 = f C_0 + lr² (W_K G Gᵀ W_Kᵀ - W_Q Gᵀ G W_Qᵀ),
    # f the catalogue's decay factor
    lam, lr = 0.1, 0.01
    C0 = imbalance(Wq0, Wk0)
    Wq1, Wk1, G = step(Wq0, Wk0, lr, lam)
    factor = float(
        _expr(ctx, cid, "decay_factor").subs(
            {c.symbol("lr"): sp.Rational(1, 100), c.symbol("lambda"): sp.Rational(1, 10)}
        )
    )
    second_order = lr**2 * (Wk0 @ G @ G.T @ Wk0.T - Wq0 @ G.T @ G @ Wq0.T)
    err = float(np.abs(imbalance(Wq1, Wk1) - (factor * C0 + second_order)).max())
    ok_decay = err < 1e-12
    ok = ok_rate and ok_decay
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"gradient descent over a fixed time drifts like lr^{fit.slope:.2f} "
        f"[{fit.ci_low:.2f}, {fit.ci_high:.2f}]; criterion: the interval lies at or "
        f"above the catalogue's exponent {p:g} - {tol} (it must exclude slopes below "
        f"{p - tol:g}, e.g. 0: a drift that does not vanish with lr); one step with "
        f"weight decay equals (1 - lr λ)² C + lr²(W_K G Gᵀ W_Kᵀ - W_Q Gᵀ G W_Qᵀ) to "
        f"{err:.1e} (< 1e-12)",
        covered="D = 4, E = 8, lr in {1e-2..3e-4}, horizon 0.5",
        rows=rows,
        slopes=[slope_row(fit, "fixed-horizon drift", p)],
        plot={
            "x": "lr",
            "y": ["drift"],
            "title": "ID-L5.1d: imbalance drift",
            "xlabel": "learning rate",
            "ylabel": "||C_t - C_0||",
        },
        scope="partial: a loss ½||W_Kᵀ W_Q - T||² at D = 4, E = 8, four learning "
        "rates, horizon 0.5; one weight-decay step",
        # the weight-decay step is an exact identity (the rate part is an exponent: no slack)
        slack=EXACT if ok else None,
    )


# ------------------------------------------------------------------------- training (§5)
#: ID-E5's "ρ ≈ 0": a mean invariant fraction below this is zero up to rounding
RHO_ZERO = 1e-10

#: the paper's scale (digest §5), in the trained verdicts' scale records beside the run's
ID_PAPER = (
    "digest §5: 'relatively stock' nanoGPT (6 layers, E = 384, 6 heads of D = 64, dropout on) "
    "character-level on tiny-shakespeare, 5000 iterations, warm-up 100, cosine decay; SGD, SGD "
    "+ weight decay, AdamW, AdamW + rebalancing; Figs. 2-4 qualitative only (no losses, ρ "
    "levels or drifts given: digest ambiguity 9)"
)
#: the recipe known to train it (digest §5), said in a gated verdict
ID_RECIPE = (
    "The stock recipe (digest §5, config/train_shakespeare_char.py): AdamW, 5000 iterations, "
    "warm-up 100, cosine decay to 1e-4, beta2 0.99, grad clip 1.0"
)


def loss_tail(trace, keep) -> dict:
    """Per optimizer, the training loss's mean over the third and the last quarter of the logged
    steps (``loss_q3``, ``loss_q4``: the shared gate's plateau test) from the trace rows that
    ``keep`` selects."""
    by: dict = {}
    for t in trace:
        if keep(t) and "loss" in t:
            by.setdefault(t["optimizer"], []).append((float(t["step"]), float(t["loss"])))
    out = {}
    for opt, pts in by.items():
        pts.sort()
        last = pts[-1][0]
        q3 = [v for s_, v in pts if last / 2 <= s_ < 3 * last / 4]
        q4 = [v for s_, v in pts if s_ >= 3 * last / 4]
        if q3 and q4:
            out[opt] = {"loss_q3": float(np.mean(q3)), "loss_q4": float(np.mean(q4))}
    return out


def training_gate_rows(rows, trace, keep):
    """The shared gate (:func:`.tradeoffs.loss_gate`, a cross-entropy) on identifiability rows:
    control AdamW, the stock recipe whose loss the rebalanced run is compared with (its training
    does not depend on the claim), the loss tail read from the trace. Returns (gate, rows with
    the tail columns)."""
    from .tradeoffs import loss_gate, present_keys

    tails = loss_tail(trace, keep)
    # a row's own loss tail (the cell's, over every step) where it records one, else the trace's
    gated = [{**tails.get(r["optimizer"], {}), **r} for r in rows]
    gate = loss_gate(
        gated,
        control=lambda r: r["optimizer"] == "adamw",
        describe="AdamW (the stock recipe), per T",
        by=present_keys(gated, ("T",)),
        budget=ID_RECIPE,
    )
    return gate, gated


@check(
    "ID-E5",
    mutants={
        "wd-dropped": "the SGD+wd cell trains without weight decay (plain SGD under its label), "
        "so nothing separates it from SGD"
    },
)
def training_diagnostics(ctx: Context, cid):
    """Reads the quick cells of the identifiability_training experiment (150 steps per optimizer;
    through the runner and its cache, shared with ID-F4 and ID-CLR, when the run's seed is the
    experiment's; otherwise, and under a mutant, it runs them with the run's seed) and tests the
    paper's qualitative findings on them; a finding that fails makes the verdict
    ``inconsistent`` (trained evidence, no witness). First the shared training-adequacy gate
    (:func:`training_gate_rows`: AdamW's cross-entropy below ln V and its loss tail, read from
    the trace, plateaued); below it: not-checkable with the stock recipe."""
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.executors import run_cell
    from approxtheory.experiment import cells, get
    from approxtheory.experiments.identifiability_training import BASE_LR_SGD

    from ._core import experiment_rows

    exp = get("identifiability_training")
    compared = ("sgd", "sgd_wd", "adamw", "adamw_rebalance")  # the paper's cases 1-4

    def keep(cfg):  # not the control (ID-CLR) nor the learning-rate sweep (ID-F4)
        return cfg["optimizer"] in compared and float(cfg.get("lr_sgd", BASE_LR_SGD)) == BASE_LR_SGD

    rows, trace = [], []
    shared = None
    if ctx.mutant is None and ctx.seed in getattr(exp, "seeds", {}).get("quick", ()):
        shared = experiment_rows("identifiability_training", "quick")
    if shared is not None and shared[0] is not None:
        rows = [r for r in shared[0] if keep(r)]
        trace = [t for t in shared[1] if keep(t)]
    else:
        ctx.undecided(
            "identifiability_training (the quick cells of four optimizers) is not trained by the "
            "smoke pass; run `approxtheory verify --profile quick`"
        )
        for cfg in cells(exp, "quick"):
            if not keep(cfg):
                continue
            cfg = {**cfg, "seed": ctx.seed}  # the run's seed, not the experiment's default
            run = dict(cfg)
            if ctx.is_mutant("wd-dropped") and cfg["optimizer"] == "sgd_wd":
                run["optimizer"] = "sgd"
            res = run_cell(exp.cell, run)[0]  # the runner's fixed thread count
            rows.append({**cfg, **{k: v for k, v in res.items() if k != "trace"}})
            trace += [{"optimizer": cfg["optimizer"], **t} for t in res["trace"]]
    from .tradeoffs import gated_verdict, trained_scale

    name = "identifiability_training"
    gate, gated_rows = training_gate_rows(rows, trace, keep)
    scale = trained_scale([(name, gate)], {name: gated_rows}, "val_loss", {name: ID_PAPER})
    by = {row["optimizer"]: row for row in rows}
    drift = {}
    for opt in by:
        tr = [t for t in trace if t["optimizer"] == opt]
        drift[opt] = tr[-1]["beta_drift"]
    base = by["sgd"]["rho_baseline"]
    checks = {
        "SGD steps lie outside the invariant subspace (ρ ≈ 0)": by["sgd"]["mean_rho"] < RHO_ZERO,
        # SGD+wd must leave ρ ≈ 0 (the same 1e-10 as SGD's): a ρ a rounding error above
        # SGD's is not an ordering
        "ρ ordering SGD < SGD+wd < AdamW": max(by["sgd"]["mean_rho"], RHO_ZERO)
        < by["sgd_wd"]["mean_rho"]
        < by["adamw"]["mean_rho"],
        "SGD conserves β better than AdamW": drift["sgd"] < drift["adamw"],
        "rebalancing does not hurt the loss (within 5 %)": by["adamw_rebalance"]["val_loss"]
        <= 1.05 * by["adamw"]["val_loss"],
    }
    failed = [k for k, v in checks.items() if not v]
    verdict = "consistent-empirical" if not failed else "inconsistent"
    ev = (
        f"mean ρ: SGD {by['sgd']['mean_rho']:.1e}, SGD+wd {by['sgd_wd']['mean_rho']:.3f}, "
        f"AdamW {by['adamw']['mean_rho']:.3f} (reference 1/(2H) = {base:.3f}); β drift: "
        f"SGD {drift['sgd']:.1e}, AdamW {drift['adamw']:.1e}; val loss AdamW "
        f"{by['adamw']['val_loss']:.3f} vs rebalanced {by['adamw_rebalance']['val_loss']:.3f}"
        + (f". Failed: {'; '.join(failed)}" if failed else "")
        + ". AdamW stays well below the 1/(2H) reference here, while the paper reports "
        "it comes closest to it"
    )
    covered = (
        f"character-level model (pydoc topics), E = 32, H = 4, 2 layers, "
        f"{int(rows[0]['steps'])} steps per optimizer, one seed"
    )
    table = [{k: t[k] for k in ("optimizer", "step", "rho", "beta", "loss")} for t in trace]
    plot = {
        "x": "step",
        "y": ["rho"],
        "group": "optimizer",
        "logx": False,
        "title": "ID-E5: invariant fraction ρ per step",
        "xlabel": "step",
        "ylabel": "ρ",
    }
    gated = gated_verdict(
        cid,
        [(name, gate)],
        {name: gated_rows},
        covered,
        metric="val_loss",
        paper={name: ID_PAPER},
        measured=ev,
        rows=table,
        plot=plot,
    )
    if gated is not None:
        return gated
    return Verdict(
        cid,
        verdict,
        ev + ". AdamW passed the training-adequacy gate",
        covered=covered,
        scale=scale,
        rows=table,
        plot=plot,
        formula_note="reads no formula: qualitative orderings of trained runs (ID-S5.1 holds "
        "the 1/(2H) reference line)",
        scope=f"surrogate: a 2-layer E = 32, H = 4 character model on pydoc text, "
        f"{int(rows[0]['steps'])} steps per optimizer, one seed, stands in for "
        "nanoGPT (6 layers, E = 384) on tiny-shakespeare, 5000 steps",
    )


# ------------------------------------------------------ §7 remarks, Figs. 1, 3, 4, control
#: the layers whose identified fraction is measured for ID-LT and ID-PUB: ID-T4.5's (the memo of
#: their Jacobian ranks is shared)
FRACTION_CONFIGS = [AttentionConfig(8, h) for h in (1, 2, 4, 8)]

FORMULA_MUTANTS.update(
    {
        ("unidentified-as-identified", "ID-LT", "identified"): lambda e: 1 - e,
        ("tickets-keep-most", "ID-LT", "ticket_high"): lambda e: 1 - e,
        ("cubic-count", "ID-F1", "U_head_layer"): lambda e: e * claim("ID-F1").symbol("D"),
        ("query-bias-inert", "ID-F3", "identified_query_bias"): lambda e: sp.Integer(0),
        ("key-bias-identified", "ID-F3", "identified_key_bias"): lambda e: (
            claim("ID-F3").symbol("H") * claim("ID-F3").symbol("D")
        ),
        ("linear-drift", "ID-F4", "step_drift"): lambda e: claim("ID-F4").symbol("lr"),
    }
)


def _fraction_rows(ctx: Context, cid: str) -> list[dict]:
    """The measured identified fraction rank/P of each FRACTION_CONFIGS layer next to the
    catalogue's ``identified`` at its H."""
    rows = []
    for cfg in FRACTION_CONFIGS:
        r = _rank(cfg, ctx.seed)
        meas = sp.Rational(r["total"] - r["measured"], r["total"])
        claimed = _ev(ctx, cid, "identified", H=cfg.H, E=cfg.E)
        rows.append(
            {
                "E": cfg.E,
                "H": cfg.H,
                "P": r["total"],
                "U_measured": r["measured"],
                "identified_measured": str(meas),
                "identified_claimed": str(claimed),
                "agrees": bool(claimed == meas),
            }
        )
    return rows


def _min_over_heads(ctx: Context, cid: str):
    """min over real H >= 1 of the (possibly mutated) catalogue's identified fraction."""
    c = claim(cid)
    x = sp.Symbol("x", positive=True)
    e = _expr(ctx, cid, "identified").subs(c.symbol("H"), x)
    return sp.nsimplify(sp.minimum(e, x, sp.Interval(1, sp.oo)))


@check(
    "ID-LT",
    mutants={
        "unidentified-as-identified": "the identified fraction written as the unidentified "
        "one, 1/(2H)",
        "tickets-keep-most": "lottery tickets keeping 80-90 % of the weights (1 - 1/5)",
    },
)
def lottery_contrast(ctx: Context, cid):
    rows = _fraction_rows(ctx, cid)
    lo = _min_over_heads(ctx, cid)
    high = _ev(ctx, cid, "ticket_high")
    low = _ev(ctx, cid, "ticket_low")
    ok_counts = all(r["agrees"] for r in rows)
    ok_contrast = bool(lo > high)
    at6 = _ev(ctx, cid, "identified", H=6, E=384)
    ok = ok_counts and ok_contrast
    slack = float(lo / high) if high > 0 else None
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        "identified fraction rank/P measured at E = 8: "
        + ", ".join(f"H = {r['H']}: {r['identified_measured']}" for r in rows)
        + f" (catalogue: {', '.join(r['identified_claimed'] for r in rows)}; "
        f"{'all equal' if ok_counts else 'NOT equal'}); its minimum over H >= 1 is {lo} "
        f"(H = 1), {'above' if ok_contrast else 'NOT above'} the {float(high):.0%} that "
        f"lottery tickets keep at most, so the unidentified share (at most {1 - lo}) "
        f"{'cannot' if ok_contrast else 'can'} account for the {float(1 - high):.0%}-"
        f"{float(1 - low):.0%} that they prune; 'about 90 %' is H = 5 (9/10), the paper's "
        f"H = 6 model has {at6} = {float(at6):.1%}. Slack {slack:.2f} (smallest identified "
        f"fraction / largest ticket fraction)",
        covered="Jacobian ranks at E = 8, H in {1, 2, 4, 8}; the contrast symbolic over H >= 1",
        measured=[r["identified_measured"] for r in rows],
        claimed=[r["identified_claimed"] for r in rows],
        rows=rows,
        scope="partial: the identified fraction of one attention layer (measured at E = 8, "
        "H in {1, 2, 4, 8}; symbolic for H >= 1) against the paper's 10-20 % for lottery "
        "tickets, taken as stated (no pruning is run); the FFN and embeddings are not counted",
        slack=slack,
    )


def _published_heads(c) -> list[int]:
    """H in 1..128 that satisfy every condition of the claim's regime in H alone."""
    H = c.symbol("H")
    only_h = [r for r in c.regime if r.free_symbols <= {H}]
    return [h for h in range(1, 129) if all(r.holds({H: sp.Integer(h)}) for r in only_h)]


@check("ID-PUB")
def published_fraction(ctx: Context, cid):
    c = claim(cid)
    lo, hi = _ev(ctx, cid, "stated_low"), _ev(ctx, cid, "stated_high")
    heads = _published_heads(c)
    vals = {h: _ev(ctx, cid, "identified", H=h) for h in heads}
    outside = [h for h, v in vals.items() if not lo <= v <= hi]
    inside_any = [h for h in range(1, 129) if lo <= _ev(ctx, cid, "identified", H=h) <= hi]
    rows = _fraction_rows(ctx, cid)
    ok_counts = all(r["agrees"] for r in rows)
    h0 = heads[0] if heads else None
    # beyond the grid: the fraction only grows with H (so every H past the grid is like its end)
    Hs = c.symbol("H")
    increasing = bool(sp.simplify(sp.diff(_expr(ctx, cid, "identified"), Hs)).is_positive)
    ok = ok_counts and not outside and bool(heads)
    slack = float(hi / vals[h0]) if h0 is not None and vals[h0] > 0 else None
    witness = (
        {"H": outside[0], "identified": str(vals[outside[0]]), "stated_high": str(hi)}
        if outside
        else None
    )
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        f"the paper's own count gives an identified fraction {_expr(ctx, cid, 'identified')} "
        f"of "
        + ", ".join(f"{vals[h]} = {float(vals[h]):.2%} at H = {h}" for h in heads[:3])
        + f" ... {float(vals[heads[-1]]):.2%} at H = {heads[-1]} for the regime's "
        f"H >= {h0}; {len(outside)} of {len(heads)} lie outside the stated "
        f"{float(lo):.0%}-{float(hi):.0%}"
        + (
            f" (the range holds only for H in {inside_any[0]}..{inside_any[-1]}; 50 % is "
            f"H = 1), so the sentence contradicts Theorem 4.5's 1/(2H)"
            if outside and inside_any
            else ""
        )
        + f"; the fraction is {'increasing' if increasing else 'NOT increasing'} in H"
        + (" (H > 128 lies higher still)" if increasing else "")
        + f"; the count itself is measured: rank/P at E = 8, H = 8 is "
        f"{rows[-1]['identified_measured']} ({'equal to' if ok_counts else 'NOT'} the "
        f"catalogue's). Slack {slack:.3f} (stated upper end / identified fraction at H = {h0})",
        covered=f"H in {h0}..{heads[-1]} (the regime's published architectures); Jacobian "
        "ranks at E = 8, H in {1, 2, 4, 8}",
        # the identified fraction at the smallest published H against the stated upper end
        # (numbers, so that a refutation reads measured > claimed)
        measured=float(vals[h0]) if h0 is not None else None,
        claimed=float(hi),
        witness=witness,
        rows=rows,
        scope="full",
        slack=slack,
    )


@check("ID-F1", mutants={"cubic-count": "the per-head count written 2·d_p³"})
def fig1_column(ctx: Context, cid):
    D = claim(cid).symbol("D")
    U, col = _expr(ctx, cid, "U_head_layer"), _expr(ctx, cid, "column_digest")

    def exponent(e):
        p = sp.simplify(D * sp.diff(sp.log(e), D))
        return p if not p.has(D) else None

    pu, pc = exponent(U), exponent(col)
    # equal as numbers (a mutated copy may carry a Float factor: 2.0 is the exponent 2)
    ok = pu is not None and pc is not None and sp.simplify(pu - pc) == 0
    hl = sp.nsimplify(sp.simplify(col / U))
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        f"the catalogue's count per head and layer {U} scales like d_p^{pu}; the digest reads "
        f"the printed column as {col} (d_p^{pc}): {'the same' if ok else 'NOT the same'} "
        f"power of d_p. The column's size needs H·L = {hl} heads × layers (e.g. 8 × 16), "
        "which the paper does not state, so the column cannot be reconstructed from a stated "
        "configuration (digest §9.10); its values, the totals and the SQuAD scores are not in "
        "the digest",
        covered="the d_p-exponent of the count against the digest's reading of the column",
        measured=str(pc),
        claimed=str(pu),
        scope="partial: the column's d_p² scaling as the digest reads it (≈ 256·d_p²); the "
        "column's values, the totals, the (H, L) behind them and the 'most of the gain at "
        "smaller d_p' reading are unchecked: the table's numbers are not in the digest "
        "(checkable with them: each row's Unidentified against H·L·2·d_p²)",
    )


def _f3_configs(ctx: Context) -> list[AttentionConfig]:
    rope = "full" if ctx.is_mutant("rope-key-bias") else None
    return [AttentionConfig(8, 2, bias=True, causal=causal, rope=rope) for causal in (False, True)]


@memo
def _bias_ranks(cfg: AttentionConfig, seed: int):
    from approxtheory.identifiability import bias_ranks

    return bias_ranks(cfg, seed=seed)


@memo
def _bias_training(cfg: AttentionConfig, optimizer: str, seed: int):
    from approxtheory.identifiability import bias_gradients

    return tuple(bias_gradients(cfg, optimizer, seed=seed))


#: Fig. 3's "numerically zero": at or below this relative to ||∂L/∂W_Q|| (float64 rounding is
#: ~1e-16); "clearly nonzero": at or above F3_NONZERO at every step
F3_ZERO, F3_NONZERO = 1e-12, 1e-6


@check(
    "ID-F3",
    mutants={
        "query-bias-inert": "the query bias counted as inert as the key bias (0 identified)",
        "key-bias-identified": "the key bias counted as identified (H·D)",
        "rope-key-bias": "RoPE after the biased key projection: the rotated key bias acts",
    },
)
def bias_gradients_fig3(ctx: Context, cid):
    cfgs = _f3_configs(ctx)
    rank_rows = []
    for cfg in cfgs:
        r = _bias_ranks(cfg, ctx.seed)
        for part in ("query", "key"):
            claimed = _ev(ctx, cid, f"identified_{part}_bias", H=cfg.H, D=cfg.head_dim)
            rank_rows.append(
                {
                    "config": _describe(cfg),
                    "bias": part,
                    "rank": r[part]["rank"],
                    "claimed": int(claimed),
                    "relative_sigma_max": r[part]["relative_sigma_max"],
                    "agrees": r[part]["rank"] == claimed,
                }
            )
    steps = []
    for opt in ("sgd", "sgd_wd", "adamw"):
        steps += list(_bias_training(cfgs[0], opt, ctx.seed))
    # what the claim's counts predict for the training gradients: zero where nothing of the bias
    # is identified, nonzero at every step where something is
    expect = {
        part: int(_ev(ctx, cid, f"identified_{part}_bias", H=cfgs[0].H, D=cfgs[0].head_dim)) > 0
        for part in ("query", "key")
    }
    seen = {}
    for part in ("query", "key"):
        vals = [s[f"{part}_bias_grad"] for s in steps]
        seen[part] = (min(vals), max(vals), float(np.median(vals)))
    ok_grad = all(
        (seen[p][0] >= F3_NONZERO) if expect[p] else (seen[p][1] <= F3_ZERO) for p in seen
    )
    ok_rank = all(r["agrees"] for r in rank_rows)
    finite = all(math.isfinite(s["query_bias_grad"] + s["key_bias_grad"]) for s in steps)
    ok = ok_rank and ok_grad and finite
    q, k = seen["query"], seen["key"]
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        "Jacobian ranks of the outputs in b_Q / b_K: "
        + "; ".join(
            f"{r['config']} {r['bias']} {r['rank']} (claimed {r['claimed']})" for r in rank_rows
        )
        + f". Over {len(steps)} training steps (SGD, SGD+wd, AdamW; 30 each) "
        f"||∂L/∂b_Q|| / ||∂L/∂W_Q|| is {q[0]:.2f}-{q[1]:.2f} (median {q[2]:.2f}; criterion "
        f"{'>=' if expect['query'] else '<='} {F3_NONZERO if expect['query'] else F3_ZERO:g} "
        f"at every step) and ||∂L/∂b_K|| / ||∂L/∂W_Q|| at most {k[1]:.1e} (criterion "
        f"{'>= ' + format(F3_NONZERO, 'g') if expect['key'] else '<= ' + format(F3_ZERO, 'g')}"
        "). The query-bias gradient is clearly nonzero; 'small' is not tested (relative to "
        "the query weights' gradient it is not small here)",
        covered="E = 8, H = 2 biased layer, causal and not (ranks); 30 steps each of SGD "
        "(lr 0.05), SGD + wd 4e-4, AdamW (lr 1e-3, wd 0.1) on a random regression target",
        measured={"query": q[0], "key": k[1]},
        claimed={
            "query": "nonzero" if expect["query"] else "0",
            "key": "nonzero" if expect["key"] else "0",
        },
        rows=rank_rows,
        scope="surrogate: an E = 8, H = 2 biased attention layer (its bias Jacobian ranks, and "
        "30 training steps per optimizer on a random regression target) stands in for "
        "nanoGPT with bias=True on tiny-shakespeare (5000 steps)",
        slack=1.0 if ok_rank else None,
    )


def _trained(ctx: Context, cid: str):
    """The identifiability_training rows and trace of the run's profile, or a not-run verdict."""
    from ._core import experiment_rows, not_run

    name = "identifiability_training"
    rows, trace, secs, note = experiment_rows(name, ctx.profile)
    if rows is None:
        return None, None, not_run(cid, name, ctx.profile, note)
    return rows, trace, None


#: why ID-F4 and ID-CLR read the trained runs without the training-adequacy gate
UNGATED_WHY = (
    "the claim is about the optimiser's steps (their drift, the β they leave), which it states "
    "at any point of training; the gate guards claims about what a trained model computes"
)


@check("ID-F4", mutants={"linear-drift": "the per-step drift claimed O(lr), not O(lr²)"})
def lr_drift_fig4(ctx: Context, cid):
    """The per-step drift against the SGD rate (not gated: :data:`UNGATED_WHY`; the record
    carries the run's scale beside the paper's)."""
    rows, trace, nr = _trained(ctx, cid)
    if nr is not None:
        return nr
    c = claim(cid)
    x = c.symbol("lr")
    e = _expr(ctx, cid, "step_drift")
    p = float(sp.simplify(x * sp.diff(sp.log(e), x)))
    # the sweep: the SGD cells of the steps setting that covers the most rates
    per_steps: dict = {}
    for r in rows:
        if r["optimizer"] == "sgd":
            per_steps.setdefault(float(r["steps"]), []).append(r)
    steps_sweep = max(per_steps, key=lambda k: (len(per_steps[k]), -k))
    sgd = sorted(per_steps[steps_sweep], key=lambda r: float(r["lr_sgd"]))
    lrs = [float(r["lr_sgd"]) for r in sgd]
    heads = sorted(k[len("step_drift_") :] for k in sgd[0] if str(k).startswith("step_drift_"))
    first = min(float(t["step"]) for t in trace)
    t0 = {
        float(t["lr_sgd"]): t
        for t in trace
        if t["optimizer"] == "sgd"
        and float(t["step"]) == first
        and float(t.get("steps", steps_sweep)) == steps_sweep
    }
    out, slopes = [], []
    for hd in heads:
        d = [float(r["step_drift_" + hd]) for r in sgd]
        fit = fit_rate(lrs, d, seed=ctx.seed)
        d0 = [float(t0[lr]["drift_" + hd]) for lr in lrs]
        fit0 = fit_rate(lrs, d0, seed=ctx.seed)
        out.append(
            {
                "head": hd,
                "slope": fit.slope,
                "lo": fit.ci_low,
                "hi": fit.ci_high,
                # the interval above 0 (and 0 outside it beyond rounding: fit.contains)
                "falls": fit.ci_low > 0 and not fit.contains(0.0),
                "slope_step0": fit0.slope,
                "step0_matches": fit0.contains(p),
                "contains_claimed": fit.contains(p),
            }
        )
        slopes.append(slope_row(fit, f"{hd} (training mean)", p))
    falls = all(r["falls"] for r in out)
    order = all(r["step0_matches"] for r in out)
    finite = all(math.isfinite(r["slope"]) for r in out)
    ok = falls and order and finite
    layer_mean: dict[str, list[float]] = {}
    for hd in heads:
        li = hd.split("_")[0]
        layer_mean.setdefault(li, []).extend(float(r["step_drift_" + hd]) for r in sgd)
    lm = {li: float(np.mean(v)) for li, v in layer_mean.items()}
    plot_rows = [
        {"lr": float(r["lr_sgd"]), "head": hd, "step_drift": float(r["step_drift_" + hd])}
        for r in sgd
        for hd in heads
    ]
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        f"SGD at lr {', '.join(f'{v:g}' for v in lrs)}: the mean per-step drift "
        f"||C_(t+1) - C_t|| falls with lr in {sum(r['falls'] for r in out)}/{len(out)} "
        f"layer-heads (fitted exponents {min(r['slope'] for r in out):.2f}-"
        f"{max(r['slope'] for r in out):.2f}, every interval above 0 required); at the first "
        f"step (same weights and batch at every lr) the exponent is "
        f"{min(r['slope_step0'] for r in out):.3f}-{max(r['slope_step0'] for r in out):.3f}, "
        f"the catalogue's {p:g} inside every interval: {order}. Along training "
        f"{sum(r['contains_claimed'] for r in out)}/{len(out)} intervals contain {p:g} (not "
        f"decided: the rates train to different weights, so the mean drift need not follow "
        f"the per-step order). Mean drift per layer: "
        + ", ".join(f"{li} {v:.1e}" for li, v in lm.items())
        + (
            " (the first layer drifts least here, not most as the digest reads Fig. 4)"
            if len(lm) > 1 and min(lm, key=lambda li: lm[li]) == min(lm)
            else ""
        ),
        covered=f"identifiability_training {ctx.profile} SGD cells: {len(lrs)} rates, "
        f"{len(heads)} layer-heads, per-step drift on the logged steps, one seed",
        rows=plot_rows,
        slopes=slopes,
        plot={
            "x": "lr",
            "y": ["step_drift"],
            "group": "head",
            "title": "ID-F4: per-step drift of W_Q W_Qᵀ - W_K W_Kᵀ against the SGD rate",
            "xlabel": "learning rate",
            "ylabel": "mean ||C_(t+1) - C_t||",
        },
        scope=f"surrogate: the 2-layer E = 32, H = 4 character model, "
        f"{int(float(sgd[0]['steps']))} SGD steps per rate, one seed, stands in for nanoGPT "
        "(6 layers, 6 heads) on tiny-shakespeare, 5000 steps",
        formula_note="",
        scale=_ungated(rows),
    )


def _ungated(rows) -> dict:
    from .tradeoffs import ungated_scale

    return ungated_scale("identifiability_training", list(rows), UNGATED_WHY, "val_loss", ID_PAPER)


@check(
    "ID-CLR",
    mutants={
        "control-rebalances": "the control run rebalances too (the rebalanced run's trace "
        "under the control's label)"
    },
)
def clear_control(ctx: Context, cid):
    """The cleared-moments control against AdamW and the rebalanced run (not gated:
    :data:`UNGATED_WHY`; the record carries the run's scale beside the paper's)."""
    rows, trace, nr = _trained(ctx, cid)
    if nr is not None:
        return nr
    from approxtheory.experiments.identifiability_training import BASE_LR_SGD

    def tr(opt):
        return {
            float(t["step"]): t
            for t in trace
            if t["optimizer"] == opt and float(t["lr_sgd"]) == BASE_LR_SGD
        }

    ctrl_name = "adamw_rebalance" if ctx.is_mutant("control-rebalances") else "adamw_clear"
    adam, reb, ctrl = tr("adamw"), tr("adamw_rebalance"), tr(ctrl_name)
    by = {r["optimizer"]: r for r in rows if float(r["lr_sgd"]) == BASE_LR_SGD}
    every = int(float(by["adamw_clear"]["rebalance_every"]))
    after = sorted(s for s in ctrl if s >= every and s in adam and s in reb)
    closer = [
        abs(ctrl[s]["beta"] - adam[s]["beta"]) < abs(ctrl[s]["beta"] - reb[s]["beta"])
        for s in after
    ]
    ok = bool(after) and all(closer)
    last = after[-1] if after else max(ctrl)
    b = {k: float(v[last]["beta"]) for k, v in (("adamw", adam), ("ctrl", ctrl), ("reb", reb))}
    loss = {
        k: float(by[o]["val_loss"])
        for k, o in (("adamw", "adamw"), ("ctrl", ctrl_name), ("reb", "adamw_rebalance"))
    }
    rho = {
        k: float(by[o]["mean_rho"])
        for k, o in (("adamw", "adamw"), ("ctrl", ctrl_name), ("reb", "adamw_rebalance"))
    }
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        f"after the first clearing (step {every}) the control's imbalance β is closer to "
        f"AdamW's than to the rebalanced run's at {sum(closer)}/{len(closer)} logged steps "
        f"(criterion: all); at step {int(last)} β is {b['ctrl']:.3f} (AdamW {b['adamw']:.3f}, "
        f"rebalanced {b['reb']:.3f}). Not part of the claim's effect but reported: the "
        f"validation loss is {loss['ctrl']:.3f} (AdamW {loss['adamw']:.3f}, rebalanced "
        f"{loss['reb']:.3f}) and mean ρ {rho['ctrl']:.4f} (AdamW {rho['adamw']:.4f}, "
        f"rebalanced {rho['reb']:.4f}): on these the control sits with the rebalanced run, so "
        "at this budget the clearing, not the rebalance, is what moves them (one seed)",
        covered=f"identifiability_training {ctx.profile}: AdamW, AdamW + rebalancing and "
        f"AdamW + cleared moments every {every} steps, one seed",
        measured=b["ctrl"],
        claimed=f"like AdamW ({b['adamw']:.3f}), not like the rebalanced run ({b['reb']:.3f})",
        rows=[
            {"optimizer": o, "step": s, "beta": float(t["beta"])}
            for o, d in (("adamw", adam), (ctrl_name, ctrl), ("adamw_rebalance", reb))
            for s, t in sorted(d.items())
        ],
        plot={
            "x": "step",
            "y": ["beta"],
            "group": "optimizer",
            "logx": False,
            "title": "ID-CLR: imbalance β with cleared moments, rebalancing, neither",
            "xlabel": "step",
            "ylabel": "β",
        },
        scope="partial: the imbalance β (the quantity the rebalance acts on) of the 2-layer "
        "E = 32, H = 4 character model, one seed; the paper's τ is not logged; loss and ρ "
        "reported, not decided",
        formula_note="reads no formula: a comparison of three trained runs (the claim states "
        "no quantity)",
        scale=_ungated(rows),
    )
