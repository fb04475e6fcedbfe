"""Counts against numeric Jacobian ranks of the shared model's attention layer (ID-T4.5,
ID-L4.6, ID-B4.7.2, ID-GQA4.9, ID-P4.8, ID-RG, ID-X4.8.1, ID-SH3.2) and of the QK block of
a layer at any D and E (ID-E4.1, ID-L4.1w)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.identifiability import (
    AttentionConfig,
    bias_aliasing,
    build_layer,
    unidentified_dim,
)

from .._core import Context, Verdict, check, memo
from ._common import EXACT, _ev, _expr

# ---------------------------------------------------------------- Jacobian-rank counts
#: the configurations each count is measured at: every free symbol of the counts it reads (U, P,
#: ratio, the QK counts; E, H, G, the head width D = C, RoPE's D_r) takes at least two values,
#: and no two of them move only in proportion (a formula checked at one E passes any
#: false one that agrees there, e.g. 16E/H for 2E²/H at E = 8; one checked only at D_r = D/2
#: passes D_r + D_r² for D_r + (D - D_r)²); the E = 4 and E = 6 layers cost hundredths of a
#: second each
CONFIGS = {
    "ID-T4.5": [AttentionConfig(8, h) for h in (1, 2, 4, 8)]
    + [AttentionConfig(8, 2, causal=True), AttentionConfig(4, 2), AttentionConfig(6, 3)]
    # value width C apart from the head width D: the general ratio (C² + D²)/(2E(C + D))
    + [
        AttentionConfig(8, 2, value_dim=2),
        AttentionConfig(8, 2, value_dim=6),
        AttentionConfig(6, 3, value_dim=1),
        AttentionConfig(8, 4, value_dim=3),
    ],
    # E = 6 beside 4 and 8, and value widths C apart from the head width D (a count in C·D or
    # C·E/H agrees with C² only where C = D = E/H)
    "ID-L4.6": [AttentionConfig(8, h) for h in (1, 2, 4)]
    + [AttentionConfig(4, 2), AttentionConfig(6, 2), AttentionConfig(6, 3)]
    + [AttentionConfig(8, 2, value_dim=2), AttentionConfig(6, 3, value_dim=3)],
    "ID-B4.7.2": [AttentionConfig(8, h, bias=True) for h in (1, 2, 4)]
    + [AttentionConfig(4, 2, bias=True)],
    "ID-GQA4.9": [
        AttentionConfig(8, 4, G=2),
        AttentionConfig(8, 4, G=1),
        AttentionConfig(8, 8, G=2),
        AttentionConfig(8, 8, G=1),
        AttentionConfig(4, 2, G=1),
        # head widths 3 and 4 beside 1 and 2 (a count quadratic in D is pinned at three D)
        AttentionConfig(12, 4, G=1),
        AttentionConfig(16, 4, G=2),
    ],
    "ID-P4.8": [
        AttentionConfig(8, 1, rope="full"),
        AttentionConfig(8, 2, rope="full"),
        AttentionConfig(8, 1, rope="repeated"),
        AttentionConfig(8, 1, rope="partial:4"),
        AttentionConfig(4, 1, rope="full"),
        AttentionConfig(8, 2, rope="repeated"),
        AttentionConfig(8, 2, rope="partial:2"),
        # D_r apart from D/2 (at D = 8: D_r = 2 and 6 beside 4): a partial count that agrees
        # with the true one on the line D_r = D/2 alone (D_r + D_r² for D_r + (D - D_r)²) is
        # refuted; about half a second each
        AttentionConfig(8, 1, rope="partial:2"),
        AttentionConfig(8, 1, rope="partial:6"),
    ],
    "ID-RG": [
        AttentionConfig(8, 4, G=2, rope="full"),
        AttentionConfig(8, 4, G=1, rope="full"),
        AttentionConfig(8, 2, G=1, rope="full"),
        AttentionConfig(4, 2, G=1, rope="full"),
        # G = 2 with head width D = 4: a count in D^G or G^D agrees with G·D only at D = G = 2
        AttentionConfig(16, 4, G=2, rope="full"),
    ],
    # fat heads (D = E) and split ones (D = E/H): D and E vary apart
    "ID-X4.8.1": [
        AttentionConfig(8, 2, fat=True),
        AttentionConfig(4, 4, fat=True),
        AttentionConfig(8, 2),
        AttentionConfig(6, 3),
    ],
    # three widths: a count quadratic in E is pinned only by three (a line through E = 4, 6
    # agrees with E² there)
    "ID-SH3.2": [AttentionConfig(E, 1, no_output=True) for E in (4, 6, 8)],
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


class _Logits(torch.nn.Module):
    """The attention logits of a layer of the shared model (its own ``_qkv``: the projections,
    RoPE and the GQA key sharing), ``(B, H, T, T)``."""

    def __init__(self, attn):
        super().__init__()
        self.a = attn

    def forward(self, x, positions):
        q, k, _ = self.a._qkv(x, positions)
        return (q @ k.transpose(-2, -1)) * self.a.scale


@memo
def _qk_block(cfg: AttentionConfig, seed: int, seq_len: int = 7) -> dict:
    """The unidentified dimension of a layer's QK block on its own: P - rank of the Jacobian of
    the attention logits w.r.t. W_Q and W_K only (V, O and any biases held fixed), on random
    sequences, float64. Per KV group of a GQA layer the heads share one W_K, so the symmetry is
    one GL(D) per group (G·D²), not per head."""
    from torch.func import functional_call, jacrev

    m = build_layer(cfg, seed)
    a = m.attention(0)
    wrap = _Logits(a)
    wq, wk = a.q.weight.detach(), a.k.weight.detach()
    nq = wq.numel()
    theta = torch.cat([wq.reshape(-1), wk.reshape(-1)]).clone()
    P = theta.numel()
    # at least twice as many logits as parameters
    n_seq = max(4, -(-2 * P // (cfg.H * seq_len * seq_len)))
    g = torch.Generator().manual_seed(seed + 1)
    X = torch.randn(n_seq, seq_len, cfg.E, generator=g, dtype=theta.dtype)
    positions = torch.arange(seq_len)

    def f(th):
        w = {"a.q.weight": th[:nq].view_as(wq), "a.k.weight": th[nq:].view_as(wk)}
        return functional_call(wrap, w, (X, positions)).reshape(-1)

    sv = torch.linalg.svdvals(jacrev(f)(theta).detach())
    rank = int((sv > 1e-8 * sv[0]).sum())
    gap = float(sv[rank - 1] / sv[rank]) if rank < len(sv) and sv[rank] > 0 else float("inf")
    return {"P": P, "U": P - rank, "gap": gap}


@memo
def _value_bias_block(cfg: AttentionConfig, seed: int, seq_len: int = 5) -> dict:
    """The unidentified dimension of a biased layer's value and output biases on their own:
    (entries of b_V and b_O) - rank of the Jacobian of the layer's outputs w.r.t. them (the
    weights and the query/key biases held fixed), on random sequences, float64."""
    from torch.autograd.functional import jacobian
    from torch.func import functional_call

    m = build_layer(cfg, seed)
    a = m.attention(0)
    names = {id(p): n for n, p in m.named_parameters()}
    bv, bo = a.v.bias.detach(), a.o.bias.detach()
    nv, no = names[id(a.v.bias)], names[id(a.o.bias)]
    theta = torch.cat([bv.reshape(-1), bo.reshape(-1)]).clone()
    g = torch.Generator().manual_seed(seed + 2)
    X = torch.randn(4, seq_len, cfg.E, generator=g, dtype=theta.dtype)

    def f(th):
        w = {nv: th[: bv.numel()].view_as(bv), no: th[bv.numel() :].view_as(bo)}
        return functional_call(m, w, (X,)).reshape(-1)

    # row by row (jacrev's vmap has no batching rule for the CPU attention kernel's backward)
    sv = torch.linalg.svdvals(jacobian(f, theta).detach())
    rank = int((sv > 1e-8 * sv[0]).sum())
    return {"P": theta.numel(), "U": theta.numel() - rank, "value_entries": bv.numel()}


def _predicted_qk(ctx: Context, cid: str, cfg: AttentionConfig):
    """The catalogue's unidentified count of the layer's QK block (None where the claim states
    none): ID-GQA4.9's and ID-RG's U_qk (per KV group), ID-P4.8's per-head QK counts (full,
    repeated-pair, partial RoPE) times H."""
    # every value the configuration fixes, for every symbol the claim has (a formula that reads
    # another symbol than the true one, e.g. H for G, is evaluated, not left symbolic)
    at = {"E": cfg.E, "H": cfg.H, "G": cfg.groups, "D": cfg.head_dim, "C": cfg.head_dim}
    at["D_r"] = cfg.rope_dims
    at = {k: v for k, v in at.items() if k in claim(cid).symbols}
    if cid in ("ID-GQA4.9", "ID-RG"):
        return _ev(ctx, cid, "U_qk", **at)
    if cid == "ID-P4.8":
        name = {"full": "U_qk_head", "repeated": "U_qk_repeated_pair"}.get(
            str(cfg.rope), "U_qk_partial"
        )
        return cfg.H * _ev(ctx, cid, name, **at)
    return None


def _predicted(ctx: Context, cid: str, cfg: AttentionConfig):
    """(U, P, ratio or None) for a configuration, from the catalogue's expressions."""
    E, H, G, D = cfg.E, cfg.H, cfg.groups, cfg.head_dim
    C = cfg.value_width  # the value width: the head width D unless set apart
    ev = lambda name, c=cid, **v: _ev(ctx, c, name, **v)
    if cid == "ID-T4.5" and cfg.value_width != D:  # only the general ratio speaks of C != D
        return None, None, ev("ratio_general", C=cfg.value_width, D=D, E=E)
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
        return ev("U", D=D, E=E, H=H), ev("P", D=D, E=E, H=H), ev("ratio", D=D, E=E, H=H)
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
    s += f" C={c.value_width}" if c.value_dim is not None else ""
    s += " no-W_O" if c.no_output else ""
    return s


def _aliasing(ctx: Context):
    cfgs = [CONSTRUCTION_MUTANTS.get(ctx.mutant, lambda c: c)(c) for c in CONFIGS["ID-B4.7.2"]]
    return [bias_aliasing(c, seed=ctx.seed) for c in cfgs]


def _bias_aliasing_text(ctx: Context, cid) -> tuple[bool, str]:
    """ID-B4.7.2's aliasing itself (b_K inert, b_V^h only through b_O) and the value biases'
    own share, U_value_bias: whether both hold, and the sentence saying so."""
    al = _aliasing(ctx)
    worst = max(
        max(
            a["key_bias_output_change"],
            a["value_bias_aliasing_output_change"],
            a["key_bias_grad"],
        )
        for a in al
    )
    ok = worst < 1e-10
    extra = (
        f"; replacing b_K, or moving δ_h into b_V^h and -Σ_h W_O^h δ_h into b_O, "
        f"changes the outputs by at most {worst:.1e} (criterion < 1e-10)"
    )
    # the value biases' own share: b_V and b_O alone, against U_value_bias = C·H
    build = CONSTRUCTION_MUTANTS.get(ctx.mutant, lambda c: c)
    vb = []
    for cfg in CONFIGS[cid]:
        q = _value_bias_block(build(cfg), ctx.seed)
        claimed_vb = _ev(ctx, cid, "U_value_bias", C=cfg.head_dim, H=cfg.H)
        vb.append((_describe(cfg), q["U"], claimed_vb))
    vb_bad = [v for v in vb if v[1] != v[2]]
    ok = ok and not vb_bad
    extra += (
        f"; the value and output biases alone leave U_value_bias = "
        f"{_expr(ctx, cid, 'U_value_bias')} unidentified (P - rank of the outputs' Jacobian "
        f"in b_V, b_O) in {len(vb) - len(vb_bad)}/{len(vb)} configurations ("
        + ", ".join(f"{d}: {u} vs {c}" for d, u, c in vb)
        + ")"
    )
    return ok, extra


def _ratio_text(ctx: Context, cid, rows: list[dict]) -> tuple[bool, str]:
    """ID-T4.5's "never 0" (the catalogue's ratio is positive for every H) and the value-width
    rows read against ratio_general."""
    pos = _expr(ctx, cid, "ratio").is_positive
    ok = bool(pos)
    extra = f"; the ratio {_expr(ctx, cid, 'ratio')} is positive for every H (never 0)"
    gen = [r for r in rows if r["U_claimed"] == ""]
    extra += (
        f"; at value width C != D ({', '.join(r['config'] for r in gen)}) the measured "
        f"ratio is compared with ratio_general = {_expr(ctx, cid, 'ratio_general')} "
        f"({', '.join(r['ratio_measured'] + ' vs ' + r['ratio_claimed'] for r in gen)})"
    )
    return ok, extra


def _count_text(v):
    """A claimed count for a row: the integer, else the formula's value as text (a count left
    with a free symbol, or not an integer, is a finding of the row, never an exception)."""
    v = sp.sympify(v)
    return int(v) if v.is_Integer else sp.sstr(v)


def _qk_formulas(ctx: Context, cid) -> str:
    """The QK counts the check read, as the (possibly mutated) catalogue writes them."""
    if cid != "ID-P4.8":
        return f"U_qk = {sp.sstr(_expr(ctx, cid, 'U_qk'))}"
    names = ("U_qk_head", "U_qk_repeated_pair", "U_qk_partial")
    return (
        "per-head QK counts ("
        + ", ".join(f"{n} = {sp.sstr(_expr(ctx, cid, n))}" for n in names)
        + ") x H"
    )


def _rank_row(ctx: Context, cid, cfg, built) -> dict:
    """One configuration of :func:`jacobian_rank`: the layer's measured P - rank(Jacobian) and
    P against the catalogue's U, P and ratio, and where the claim counts the QK block on its
    own, that block's count measured on its own."""
    r = _rank(built, ctx.seed)
    U, P, ratio = _predicted(ctx, cid, cfg)
    meas_ratio = sp.Rational(r["measured"], r["total"])
    layer_ok = (U is None or U == r["measured"]) and (P is None or P == r["total"])
    layer_ok = layer_ok and (ratio is None or ratio == meas_ratio)
    U_qk = _predicted_qk(ctx, cid, cfg)
    qk = {}
    if U_qk is not None:  # the QK block's own count, measured on its own
        q = _qk_block(built, ctx.seed)
        claimed = int(U_qk) if U_qk.is_Integer else sp.sstr(U_qk)
        qk = {"U_qk_claimed": claimed, "U_qk_measured": q["U"], "gap_qk": q["gap"]}
    ok = layer_ok and (U_qk is None or U_qk == qk["U_qk_measured"])
    return {
        "config": _describe(cfg),
        "built": _describe(built),
        "E": cfg.E,
        "H": cfg.H,
        "G": cfg.groups,
        "P_claimed": "" if P is None else _count_text(P),
        "P_measured": r["total"],
        "U_claimed": "" if U is None else _count_text(U),
        "U_measured": r["measured"],
        "ratio_claimed": str(ratio) if ratio is not None else "",
        "ratio_measured": str(meas_ratio),
        **qk,
        "layer_agrees": bool(layer_ok),
        "agrees": bool(ok),
        "gap": r["singular_value_gap"],
        "method": r["method"],
    }


def _qk_text(ctx: Context, cid, rows) -> str:
    """The QK block's own count against the catalogue's, for the evidence ("" where the claim
    counts no QK block)."""
    qk_rows = [r for r in rows if "U_qk_claimed" in r]
    if not qk_rows:
        return ""
    qk_bad = [r for r in qk_rows if r["U_qk_claimed"] != r["U_qk_measured"]]
    return (
        f"; the QK block's own unidentified dimension (P - rank of the logits' Jacobian in "
        f"W_Q, W_K alone) equals the catalogue's "
        f"{_qk_formulas(ctx, cid)} in "
        f"{len(qk_rows) - len(qk_bad)}/{len(qk_rows)} configurations ("
        + ", ".join(f"{r['config']}: {r['U_qk_measured']} vs {r['U_qk_claimed']}" for r in qk_rows)
        + f"; gap >= {min(r['gap_qk'] for r in qk_rows):.1e})"
    )


def _other_side(ctx: Context, cid, rows) -> tuple[bool, str]:
    """What a claim adds beside its configurations: ID-X4.8.1's layers outside its regime,
    ID-B4.7.2's bias aliasing, ID-T4.5's ratio; (True, "") for the others."""
    if cid == "ID-X4.8.1":
        ok_x, extra, _ = _x481_other_side(ctx, cid)
        return ok_x, extra
    if cid == "ID-B4.7.2":
        return _bias_aliasing_text(ctx, cid)
    if cid == "ID-T4.5":
        ok_r, text_r = _ratio_text(ctx, cid, rows)
        ok_o, text_o = _t45_other_side(ctx, cid)
        return ok_r and ok_o, text_r + text_o
    return True, ""


#: ID-T4.5's (E, H) on the other side of its regime "H divides E": no whole head width D = E/H
T45_OUTSIDE = ((8, 3), (6, 4))


def _t45_other_side(ctx: Context, cid) -> tuple[bool, str]:
    """ID-T4.5 where H does not divide E (:data:`T45_OUTSIDE`): there D = C = E/H is no whole
    head width, and the claim's U = 2E²/H need not be a whole number of weights. Wherever the
    claim's regime admits such an (E, H), its U must be a count (an integer); the others are
    reported as the regime's other side."""
    c = claim(cid)
    said, bad = [], []
    for E, H in T45_OUTSIDE:
        U, why = _claimed_at(ctx, cid, "U", E=E, H=H)
        admitted = bool(c.in_regime(E=E, H=H))
        said.append(
            f"(E, H) = ({E}, {H}): U = {_shown(U, why)}" + (" admitted" if admitted else "")
        )
        if admitted and why:
            bad.append(f"(E, H) = ({E}, {H}): {why}")
    if bad:
        return False, (
            "; the claim's regime admits H not dividing E, where no head width is E/H and U is "
            f"not a count of weights: {'; '.join(bad)}"
        )
    return True, (
        "; the regime's other side (H not dividing E, no whole head width E/H, outside the "
        f"claim's regime): {', '.join(said)}"
    )


def _count_verdict(cid, ok: bool, bad: list, rows: list, evidence: str, **kw) -> Verdict:
    """A count check's verdict: verified where ``ok``, the measured and claimed U per row, the
    first disagreeing row as the witness, exact slack where it holds (``covered``, ``scope``
    in ``kw``)."""
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        evidence,
        measured=[r["U_measured"] for r in rows],
        claimed=[r["U_claimed"] for r in rows],
        witness=bad[0] if bad else None,
        rows=rows,
        slack=EXACT if ok else None,
        **kw,
    )


def jacobian_rank(ctx: Context, cid):
    build = CONSTRUCTION_MUTANTS.get(ctx.mutant, lambda c: c)
    rows = [_rank_row(ctx, cid, cfg, build(cfg)) for cfg in CONFIGS[cid]]
    bad = [r for r in rows if not r["agrees"]]
    qk_text = _qk_text(ctx, cid, rows)
    ok_other, extra = _other_side(ctx, cid, rows)
    ok = not bad and ok_other
    return _count_verdict(
        cid,
        ok,
        bad,
        rows,
        f"the catalogue's unidentified count U, total P"
        f"{' and ratio' if any(r['ratio_claimed'] for r in rows) else ''} equal "
        f"P - rank(Jacobian) of the layer in "
        f"{sum(r['layer_agrees'] for r in rows)}/{len(rows)} "
        f"configurations (singular-value gap >= {min(r['gap'] for r in rows):.1e})"
        + qk_text
        + extra,
        covered="; ".join(f"{r['built']} ({r['method']})" for r in rows)
        + " — float64 Jacobian ranks on random sequences (dense: the full "
        "Jacobian's singular values; structured: the per-head certificate)",
        scope="partial: the count at "
        + "; ".join(r["config"] for r in rows)
        + " (one random draw of weights and inputs each)",
    )


#: ID-X4.8.1's layers on the other side of its regime D <= E: one head of width D > E (value
#: width C = D), where W_Kᵀ W_Q and W_O W_V have rank at most E and 2(2DE - E²) < 2D² weights
#: are unidentified
X481_OUTSIDE = [(3, 2), (4, 3)]


def _x481_other_side(ctx: Context, cid) -> tuple[bool, str, list]:
    """ID-X4.8.1's U at the one-head layers of :data:`X481_OUTSIDE` (measured by
    :func:`_head_layer`): wherever the claim's regime admits one, its U must equal the
    measurement; the others are reported as the regime's other side. Returns (ok, text, cells)."""
    c = claim(cid)
    cells = []
    for D, E in X481_OUTSIDE:
        r = _head_layer(E, D, ctx.seed)
        U, why = _claimed_at(ctx, cid, "U", D=D, E=E, H=1)
        admitted = bool(c.in_regime(D=D, E=E, H=1))
        agrees = not why and U == r["U"]
        cells.append({"D": D, "E": E, "U": r["U"], "claimed": _shown(U, why), "in": admitted})
        cells[-1]["bad"] = admitted and not agrees
    bad = [x for x in cells if x["bad"]]
    say = ", ".join(f"(D,E)=({x['D']},{x['E']}): U {x['U']} vs {x['claimed']}" for x in cells)
    if bad:
        b = bad[0]
        text = (
            f"; the claim's regime admits (D,E)=({b['D']},{b['E']}) (D > E, one head of value "
            f"width D), where the layer leaves {b['U']} weights unidentified, not "
            f"{b['claimed']} ({say})"
        )
    else:
        text = (
            "; the regime's other side (D > E, one head of value width D, built here, outside "
            f"the claim's regime): {say}, below 2D²H, so the regime is needed"
        )
    return not bad, text, cells


for _cid, _muts in RANK_MUTANTS.items():
    check(_cid, mutants=_muts)(jacobian_rank)


# ----------------------------------------------- the QK block of a layer, any D and E
def _one_head(E: int, D: int, C: int, g):
    """A one-head layer of the shared model (width E, query/key dim D, value dim C, no residual,
    identity embedding and read-out, float64), its weights drawn from ``g``."""
    from approxtheory.model import LayerSpec, ModelConfig, Transformer

    mc = ModelConfig(
        d_in=E,
        width=E,
        readout="tokens",
        residual=False,
        layers=[LayerSpec(heads=1, head_dim=D, value_dim=C)],
        d_out=E,
        attn_scale=1.0,
        embed_bias=False,
        head_bias=False,
    )
    m = Transformer(mc)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / math.sqrt(E))
        m.set_embedding(torch.eye(E, dtype=torch.float64))
        m.set_readout(torch.eye(E, dtype=torch.float64))
    return m


@memo
def _head_layer(E: int, D: int, seed: int, seq_len: int = 7) -> dict:
    """P - rank of the Jacobian of a one-head layer (:func:`_one_head`, value width C = D) in all
    four of W_Q, W_K, W_V, W_O, on random sequences: the layer's unidentified count at any D and
    E (for D > E both products have rank at most E)."""
    from torch.func import functional_call, jacrev

    g = torch.Generator().manual_seed(seed)
    m = _one_head(E, D, D, g)
    a = m.attention(0)
    ws = [a.q.weight, a.k.weight, a.v.weight, a.o.weight]
    names = [m.parameter_name(w) for w in ws]
    theta = torch.cat([w.detach().reshape(-1) for w in ws]).clone()
    P = theta.numel()
    n_seq = max(12, -(-2 * P // (seq_len * E)))
    X = torch.randn(n_seq, seq_len, E, generator=g, dtype=torch.float64)
    cuts = np.cumsum([0] + [w.numel() for w in ws])

    def f(th):
        params = {
            n: th[cuts[i] : cuts[i + 1]].view_as(w) for i, (n, w) in enumerate(zip(names, ws))
        }
        # the attention weights returned too: the explicit softmax path, whose backward
        # batches under jacrev (the fused CPU kernel's does not)
        return functional_call(m, params, (X,), {"return_attention": True})[0].reshape(-1)

    sv = torch.linalg.svdvals(jacrev(f)(theta).detach())
    rank = int((sv > 1e-8 * sv[0]).sum())
    gap = float(sv[rank - 1] / sv[rank]) if rank < len(sv) and sv[rank] > 0 else float("inf")
    return {"P": P, "U": P - rank, "gap": gap}


@memo
def _qk_layer(E: int, D: int, seed: int, tie: bool = False, seq_len: int = 7) -> dict:
    """P - rank of the Jacobian of a one-head layer of the shared model (width E, query/key dim
    D, value dim E, no residual, float64) with respect to its query/key weights only, on random
    sequences. ``tie`` builds the layer with W_K tied to W_Q (one parameter)."""
    from torch.func import functional_call, jacrev

    g = torch.Generator().manual_seed(seed)
    m = _one_head(E, D, E, g)
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


def _as_number(v):
    """A configuration's value as a sympy number, parsing nothing: a sympy number, an integer or
    a float (these come from the check's own configurations; anything else is refused)."""
    if isinstance(v, sp.Number):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return sp.Integer(int(v))
    if isinstance(v, (float, np.floating)):
        return sp.Float(float(v))
    raise TypeError(f"a configuration value must be a number (got {type(v).__name__})")


def _claimed_at(ctx: Context, cid: str, name: str, integer: bool = True, **values):
    """The (possibly mutated) catalogue expression ``name`` with every free symbol given its
    value by name (a false claim may bring a symbol the catalogue's claim does not declare):
    ``(value, "")``, or ``(value, why)`` when a symbol is left free or the value is not a finite
    real number (not an integer, with ``integer``). A formula's value never raises here: what
    it gives is a finding (``why``), reported with the value."""
    e = _expr(ctx, cid, name)
    free = {s.name: s for s in getattr(e, "free_symbols", ())}
    at = ", ".join(f"{k} = {v}" for k, v in values.items())
    left = sorted(k for k in free if k not in values)
    if left:
        return e, f"{name} = {sp.sstr(e)} leaves {', '.join(left)} free at {at}"
    try:
        v = sp.nsimplify(
            sp.simplify(sp.sympify(e).xreplace({free[k]: _as_number(values[k]) for k in free}))
        )
    except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        return e, f"{name} = {sp.sstr(e)} cannot be evaluated at {at} ({exc})"
    if not (getattr(v, "is_number", False) and v.is_finite and v.is_real):
        return v, f"{name} = {sp.sstr(e)} is {sp.sstr(v)} at {at}, not a finite real number"
    if integer and not v.is_integer:
        return v, f"{name} = {sp.sstr(e)} is {sp.sstr(v)} at {at}, not an integer count"
    return v, ""


def _shown(v, why: str):
    """A claimed count for a row: the integer, else the formula's value as text."""
    return int(v) if not why else sp.sstr(v)


def _qk_rows(ctx: Context, cid: str, grid):
    rows = []
    tie = ctx.mutant == "tied-qk"
    # the claim's ratio too, where it states one (the primary expression of ID-L4.1/E4.1)
    has_ratio = "ratio" in claim(cid).expressions
    for D, E in grid:
        r = _qk_layer(E, D, ctx.seed, tie)
        # every free symbol of the formulas is given its value (E too: ID-E4.1's E = 1)
        U, why_u = _claimed_at(ctx, cid, "U", D=D, E=E)
        P, why_p = _claimed_at(ctx, cid, "P", D=D, E=E)
        ratio, why_r = (
            _claimed_at(ctx, cid, "ratio", integer=False, D=D, E=E) if has_ratio else (None, "")
        )
        why = "; ".join(w for w in (why_u, why_p, why_r) if w)
        meas = sp.Rational(r["U"], r["P"])
        rows.append(
            {
                "D": D,
                "E": E,
                "U_claimed": _shown(U, why_u),
                "U_measured": r["U"],
                "P_claimed": _shown(P, why_p),
                "P_measured": r["P"],
                "ratio_claimed": sp.sstr(ratio) if has_ratio else "",
                "ratio_measured": str(meas),
                "gap": r["gap"],
                "agrees": not why
                and bool(U == r["U"] and P == r["P"] and (ratio is None or ratio == meas)),
                "why": why,
            }
        )
    return rows


TIED_QK = "the layer built with W_K tied to W_Q (one shared parameter), counted as two"


#: ID-E4.1 is stated at E = 1; its formulas are also read at these (D, E) with E > 1, where the
#: measured count is ID-L4.1w's 2DE - E² (reported, not tested: outside the statement)
E41_OTHER_E = [(2, 2), (3, 2), (4, 3)]


def _qk_cell(r) -> str:
    return f"(D,E)=({r['D']},{r['E']}): U {r['U_measured']} measured vs {r['U_claimed']}"


@check("ID-E4.1", mutants={"tied-qk": TIED_QK, "count-constant": "the count 2D - 1 written 2D - 2"})
@check(
    "ID-L4.1w",
    mutants={
        "tied-qk": TIED_QK,
        "uncapped": "the D <= E count D² used at every D (no cap at the rank E of W_Kᵀ W_Q)",
    },
)
def qk_count(ctx: Context, cid):
    e41 = cid == "ID-E4.1"
    # ID-L4.1w: D - E odd as well as even, on both sides of D = E
    grid = (
        [(1, 1), (2, 1), (3, 1), (5, 1)]
        if e41
        else [(2, 4), (4, 4), (5, 3), (7, 5), (6, 2), (3, 2), (4, 1), (3, 4)]
    )
    rows = _qk_rows(ctx, cid, grid)
    bad = [r for r in rows if not r["agrees"]]
    wide = [r for r in rows if r["D"] > r["E"]]
    evidence = (
        f"P - rank of the layer's Jacobian in (W_Q, W_K) equals the catalogue's U = "
        f"{sp.sstr(_expr(ctx, cid, 'U'))} (and P = {sp.sstr(_expr(ctx, cid, 'P'))}) in "
        f"{len(rows) - len(bad)}/{len(rows)} cases, {len(wide)} of them with D > E "
        f"(singular-value gap >= {min(r['gap'] for r in rows):.1e})"
    )
    if bad:
        b = bad[0]
        evidence += f"; NOT at (D,E)=({b['D']},{b['E']}): " + (
            b["why"]
            or f"U {b['U_measured']} of P {b['P_measured']} measured, claimed U "
            f"{b['U_claimed']} of P {b['P_claimed']} (ratio {b['ratio_claimed'] or '-'})"
        )
    scope = "partial: (D, E) = " + ", ".join(f"({r['D']},{r['E']})" for r in rows)
    if e41:
        other = _qk_rows(ctx, cid, E41_OTHER_E)
        evidence += (
            "; every symbol of the formulas is given its value (E = 1: the claim is stated "
            "with E = 1); at E > 1, outside the statement (reported, not tested) "
            + ", ".join(map(_qk_cell, other))
        )
        scope += "; E > 1 reported at " + ", ".join(f"({r['D']},{r['E']})" for r in other)
    return _count_verdict(
        cid,
        not bad,
        bad,
        rows,
        evidence,
        covered="(D, E) = "
        + ", ".join(f"({r['D']},{r['E']})" for r in rows)
        + ": one-head layer of the shared model, float64, random weights and "
        "sequences",
        scope=scope,
    )
