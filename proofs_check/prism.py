"""Checks of arXiv 2606.27449 (PR-*).

PR-N1/PR-N2 count on the project's shared model at toy size (d = 64, L = 4, RoPE, SwiGLU, biases)
and compare every layer with the catalogue's formulas. FLOPs are counted on the explicit
attention path (``return_attention=True``: QKᵀ and AV are matmuls ``FlopCounterMode`` sees; it
counts nothing for CPU ``scaled_dot_product_attention``), and the O(h T²) softmax work is counted
as the number of attention probabilities each layer computes."""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from typing import Any

import sympy as sp
import torch

from approxtheory import claim, schedules
from approxtheory.catalogue import prism as cat
from approxtheory.errors import RegimeError
from approxtheory.model import LayerSpec, ModelConfig, Transformer

from ._core import Context, Verdict, check, not_checkable

not_checkable(
    "PR-N3",
    reason="throughput is a property of the paper's hardware and kernels (8x H100, bf16, "
    "FlashAttention via SDPA, whose head-dim limit d_h <= 256 the digest suspects behind the "
    "d_h = 384 slowdown); CPU's SDPA kernel has no such limit, so a CPU ratio measures another "
    "kernel, and on a shared CPU an A/A control (the same model timed twice in the same "
    "interleaved rounds) can move by more than the 4-8 % at stake. A CPU toy measurement can "
    "neither confirm nor refute it: PR-N2 reports the measured Prism/uniform ratio next to its "
    "A/A control among its volatile figures (kept out of verdicts.json), and `approxtheory "
    "schedule compare A B --device cuda` measures it on a GPU",
)
D_MODEL, FFN = 64, 170
SCHEDULES = {
    "uniform": [4, 4, 4, 4],
    "prism": [1, 2, 4, 4],
    "reversed": [4, 4, 2, 1],
    "wide": [2, 2, 2, 2],
}
H_BASE = 4

NOT_RESCALED = "head-width-not-rescaled"
_NOT_RESCALED_WHAT = (
    "every layer keeps the baseline head width d/h_base = 16 whatever its head "
    "count, so h_l·d_h != d (the reshape bug a schedule must avoid)"
)


def _model(heads, mutant=None, dtype="float64"):
    def width(h):
        return D_MODEL // H_BASE if mutant == NOT_RESCALED else D_MODEL // h

    return Transformer(
        ModelConfig(
            d_in=8,
            width=D_MODEL,
            bias=True,
            ffn_kind="swiglu",
            ffn_bias=False,
            layers=[LayerSpec(h, width(h), ffn_hidden=(FFN,)) for h in heads],
            readout="tokens",
            causal=True,
            rope="full",
            d_out=8,
            dtype=dtype,
        )
    )


LM_VOCAB = 50
UNTIED = "untied-readout"


def _lm(heads, V: int, d: int = D_MODEL, f: int = FFN, mutant=None, device=None):
    """The digest's decoder LM (RMSNorm pre-norm + final, RoPE, SwiGLU, tied embeddings, no
    biases) over ``V`` tokens; the ``untied-readout`` mutant gives the read-out its own
    matrix."""
    cfg = ModelConfig(
        d_in=V,
        width=d,
        d_out=V,
        layers=[LayerSpec(h, d // h, ffn_hidden=(f,)) for h in heads],
        readout="tokens",
        causal=True,
        rope="full",
        rmsnorm=True,
        final_norm=True,
        tie_embeddings=mutant != UNTIED,
        ffn_kind="swiglu",
        ffn_bias=False,
        bias=False,
        embed_bias=False,
        head_bias=False,
        dtype="float32",
    )
    if device is None:
        return Transformer(cfg)
    with torch.device(device):
        return Transformer(cfg)


def _whole_models(ctx: Context, n_model) -> tuple[dict, list]:
    """Whole-model counts of the tied LM against N_model (tying term V·d, norms 2d per layer
    + d): the 4 toy schedules at V = 50 and the paper's three scales at V = 50257 with their
    Table 4 schedule and uniform baseline, built on the meta device (nothing allocated)."""
    from approxtheory.experiments import prism_paired as pp

    out, bad = {}, []
    cases: list[tuple[str, tuple[int, ...], int, int, int]] = [
        (f"toy {k}", tuple(h), LM_VOCAB, D_MODEL, FFN) for k, h in SCHEDULES.items()
    ]
    for scale, sc in pp.SCALES.items():
        for k in ("uniform", "prism"):
            cases.append(
                (f"{scale} {k}", pp.schedules_for(scale)[k], pp.PAPER_VOCAB, sc["d"], sc["ffn"])
            )
    for name, heads, V, d, f in cases:
        got = _lm(heads, V, d, f, ctx.mutant, device="meta").count_params()
        want = int(
            sp.simplify(
                n_model.subs({cat.V: V, cat.d: d, cat.L: len(heads), cat.f: f, cat.I_bias: 0})
            )
        )
        out[name] = got
        if got != want:
            bad.append(f"{name}: {got:,} parameters != N_model {want:,}")
    return out, bad


def _h_free(expr) -> bool:
    """Whether a per-layer expression summed over a schedule of 6 symbolic head counts is free
    of every head count."""
    hs = [sp.Symbol(f"h{i}", positive=True, integer=True) for i in range(6)]
    total = sp.simplify(sum(expr.subs(cat.h_l, h) for h in hs))
    return not any(total.has(h) for h in hs)


def _seq(xs) -> str:
    """A sequence of numbers as evidence text: ``256/128/96`` (``:g``)."""
    return "/".join(f"{x:g}" for x in xs)


def _commas(xs) -> str:
    """Head counts as evidence text: ``2,2,4,4`` (the paper's way of writing a schedule)."""
    return ",".join(str(x) for x in xs)


def _named(d: dict, fmt=_seq) -> str:
    """A name -> figure(s) map as evidence text: ``small 256/128/96, medium 256/128``."""
    return ", ".join(f"{k} {fmt(v)}" for k, v in d.items())


def _layer_params(m, i, part):
    return m.count_params([part], layer=i)


@check(
    "PR-N1",
    mutants={
        NOT_RESCALED: _NOT_RESCALED_WHAT,
        "per-head-output-block": "the formula counts W_O per head as a d_h x d_h block (h_l d_h² "
        "instead of h_l d_h d)",
        UNTIED: "the decoder LM's read-out has its own V x d matrix (tie_embeddings off): "
        "N_model's single V·d term no longer counts it",
    },
)
def parameter_neutrality(ctx: Context, cid):
    c = claim("PR-N1")
    n_attn, n_mlp, n_layer = c.expr("N_attn"), c.expr("N_mlp"), c.expr("N_layer")
    if ctx.is_mutant("per-head-output-block"):
        dh = cat.d / cat.h_l
        fix = cat.h_l * dh**2 - cat.h_l * dh * cat.d
        n_attn, n_layer = n_attn + fix, n_layer + fix
    symbolic = _h_free(n_layer)
    counts, mismatches = {}, []
    for name, heads in SCHEDULES.items():
        m = _model(heads, ctx.mutant)
        counts[name] = m.count_params()
        for i, h in enumerate(heads):
            vals = {cat.d: D_MODEL, cat.h_l: h, cat.I_bias: 1, cat.f: FFN}
            for part, expr in (("attn", n_attn), ("ffn", n_mlp)):
                want, got = sp.simplify(expr.subs(vals)), _layer_params(m, i, part)
                if want != got:
                    mismatches.append(f"{name} layer {i} (h={h}) {part}: {got} != {want}")
    whole, bad_whole = _whole_models(ctx, c.expr("N_model"))
    mismatches += bad_whole
    from approxtheory.experiments import prism_paired as pp

    reported = {s: (whole[f"{s} uniform"], sc["reported_params"]) for s, sc in pp.SCALES.items()}
    off = [
        f"{s}: {n:,} does not round to Table 1's {r / 1e6:.0f}M"
        for s, (n, r) in reported.items()
        if round(n / 1e6) * 1_000_000 != r
    ]
    equal = len(set(counts.values())) == 1
    ok = symbolic and equal and not mismatches
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        f"the per-layer formula summed over a schedule of 6 symbolic head counts "
        f"{'has no' if symbolic else 'KEEPS a'} head count (sympy); every layer of the "
        f"shared model has the attention (N_attn, I_bias = 1) and SwiGLU (N_mlp) "
        f"counts of the formula"
        + (f" except {'; '.join(mismatches[:4])}" if mismatches else "")
        + f"; whole-model counts {_named(counts, '{:,}'.format)}"
        + ("" if equal else " DIFFER across schedules")
        + "; the digest's decoder LM (RMSNorm, tied embeddings, no biases) has N_model "
        "parameters (tying term V·d counted once, norms 2d per layer + d) in every toy "
        "schedule at V = 50 and at the paper's three scales at V = 50257, uniform and Table 4 "
        "alike"
        + (f" except {'; '.join(bad_whole[:4])}" if bad_whole else "")
        + ": "
        + ", ".join(f"{s} {n:,}" for s, (n, _) in reported.items())
        + (
            f" (Table 1 reports otherwise: {'; '.join(off)})"
            if off
            else ", which round to Table 1's 124M, 354M and 757M (evidence; the rounding is "
            "Table 1's)"
        ),
        covered="symbolic (any schedule of 6 layers) + 4 schedules at d = 64, L = 4 "
        "(RoPE, SwiGLU without biases, attention biases; per-layer terms) + the tied decoder "
        "LM (RMSNorm, no biases; whole model) for the 4 toy schedules at V = 50 and the "
        "uniform and Table 4 schedules at (768, 12, 12), (1024, 24, 16), (1536, 24, 16), "
        "V = 50257, f = 2048 / 2731 / 4096 (meta device)",
        measured={**counts, **{f"LM {k}": v for k, v in whole.items()}},
        witness=mismatches[:4] or None,
        scope="full",
    )


ATTENTION_BLIND = "attention-blind"


def _flop_counts(heads, X, mutant):
    """Forward matmul FLOPs of every layer, forward+backward total, and the number of attention
    probabilities of every layer, on the explicit attention path."""
    from torch.utils.flop_counter import FlopCounterMode

    m = _model(heads, mutant)
    with FlopCounterMode(display=False) as fc:
        if mutant == ATTENTION_BLIND:  # CPU's fused SDPA: the counter sees no QKᵀ, no AV
            m(X)
        else:
            _, atts = m(X, return_attention=True)
    if mutant == ATTENTION_BLIND:
        _, atts = m(X, return_attention=True)
    per_module = fc.get_flop_counts()
    layer_fwd = [sum(per_module[f"Transformer.layers.{i}"].values()) for i in range(len(heads))]
    softmax = [a.numel() for a in atts]
    with FlopCounterMode(display=False) as fc:
        out, _ = m(X, return_attention=True)
        out.sum().backward()
    return layer_fwd, softmax, fc.get_total_flops()


def _throughput(seed: int, budget_s: float = 1.5) -> dict:
    """Forward+backward tokens/s of the uniform and Prism schedules on the fused (SDPA) path,
    float32, interleaved rounds, median per schedule. Evidence only: never part of a verdict."""
    B, T = 8, 128
    X = torch.randn(B, T, 8, generator=torch.Generator().manual_seed(seed))
    models = {k: _model(SCHEDULES[k], dtype="float32") for k in ("uniform", "prism")}
    models["uniform again"] = _model(SCHEDULES["uniform"], dtype="float32")  # A/A control
    times: dict[str, list[float]] = {k: [] for k in models}

    def step(m):
        m.zero_grad(set_to_none=True)
        m(X).sum().backward()

    for m in models.values():
        step(m)  # warm-up
    t_end = time.perf_counter() + budget_s
    while time.perf_counter() < t_end or min(len(v) for v in times.values()) < 3:
        for k, m in models.items():
            t0 = time.perf_counter()
            step(m)
            times[k].append(time.perf_counter() - t0)
        if min(len(v) for v in times.values()) >= 40:
            break
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    tps = {k: B * T / v for k, v in med.items()}
    return {
        "tokens_per_s": {k: round(v) for k, v in tps.items()},
        "ratio_prism_over_uniform": round(tps["prism"] / tps["uniform"], 3),
        "ratio_uniform_again_over_uniform": round(tps["uniform again"] / tps["uniform"], 3),
        "rounds": min(len(v) for v in times.values()),
        "batch": B,
        "T": T,
    }


PAPER_T = 16


def _paper_scales(ctx: Context, f_layer, mismatches: list) -> dict:
    """The paper's Table 4 schedules (quick: Small; full: all three) against their uniform
    baselines at the paper's widths, counted on the meta device (schedules.count): equal
    parameters and fwd+bwd FLOPs, and every layer's forward FLOPs = F_layer (as the check has
    it)."""
    out = {}
    for scale in ctx.pick(("small",), tuple(schedules.PAPER_SCALES)):
        d, L, hb = schedules.PAPER_SCALES[scale]
        pair = (schedules.uniform(d, L, hb), schedules.prism(d, L, hb))
        counts = [schedules.count(s, T=PAPER_T) for s in pair]
        for s, c in zip(pair, counts, strict=True):
            for i, h in enumerate(s.heads):
                vals = {cat.T: PAPER_T, cat.d: d, cat.f: c["ffn"], cat.h_l: h}
                want = sp.simplify(f_layer.subs(vals))
                if c["fwd_flops_per_layer"][i] != want:
                    mismatches.append(
                        f"{scale} {s.kind} layer {i} (h={h}) matmul FLOPs "
                        f"{c['fwd_flops_per_layer'][i]} != {want}"
                    )
        if counts[0]["params"]["total"] != counts[1]["params"]["total"]:
            mismatches.append(f"{scale}: parameters differ")
        if counts[0]["fwd_bwd_flops"] != counts[1]["fwd_bwd_flops"]:
            mismatches.append(f"{scale}: fwd+bwd FLOPs differ")
        out[scale] = {
            "heads": [list(s.heads) for s in pair],
            "params": [c["params"]["total"] for c in counts],
            "fwd_bwd_flops": [c["fwd_bwd_flops"] for c in counts],
            "softmax_scores": [c["softmax_scores"] for c in counts],
        }
    return out


@check(
    "PR-N2",
    mutants={
        NOT_RESCALED: _NOT_RESCALED_WHAT,
        "scores-full-width": "the formula counts each head's scores QKᵀ over the full width d "
        "instead of d_h (h_l·2T²d instead of h_l·2T²d_h)",
        ATTENTION_BLIND: "the forward FLOPs counted on the fused SDPA path, which "
        "FlopCounterMode does not see on CPU (a count blind to QKᵀ and AV)",
    },
)
def flop_neutrality(ctx: Context, cid):
    c = claim("PR-N2")
    f_layer, f_soft = c.expr("F_layer"), c.expr("F_softmax")
    if ctx.is_mutant("scores-full-width"):
        f_layer = f_layer + (cat.h_l - 1) * 2 * cat.T**2 * cat.d
    symbolic = _h_free(f_layer)
    B, T = 2, 32
    X = torch.randn(B, T, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(ctx.seed))
    per_layer, softmax, totals, mismatches = {}, {}, {}, []
    for name, heads in SCHEDULES.items():
        fwd, sm, tot = _flop_counts(heads, X, ctx.mutant)
        per_layer[name], softmax[name], totals[name] = fwd, sm, tot
        for i, h in enumerate(heads):
            vals = {cat.T: T, cat.d: D_MODEL, cat.f: FFN, cat.h_l: h, cat.c_sm: 1}
            want = B * sp.simplify(f_layer.subs(vals))
            if fwd[i] != want:
                mismatches.append(f"{name} layer {i} (h={h}) matmul FLOPs {fwd[i]} != {want}")
            want_sm = B * sp.simplify(f_soft.subs(vals))
            if sm[i] != want_sm:
                mismatches.append(f"{name} layer {i} (h={h}) softmax scores {sm[i]} != {want_sm}")
    paper = _paper_scales(ctx, f_layer, mismatches)
    equal = len(set(totals.values())) == 1
    ok = symbolic and equal and not mismatches
    thr = _throughput(ctx.seed)
    sm_tot = {k: sum(v) for k, v in softmax.items()}
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        "matmul FLOPs counted with the attention matmuls (explicit path, "
        "FlopCounterMode): every layer's forward count equals B·F_layer of the "
        "catalogue at its head count"
        + (f" except {'; '.join(mismatches[:4])}" if mismatches else "")
        + "; F_layer summed over 6 symbolic head counts "
        + ("has no" if symbolic else "KEEPS a")
        + f" head count; forward+backward totals {_named(totals, '{:,}'.format)}"
        + ("" if equal else " DIFFER across schedules")
        + "; Table 4 vs uniform at the paper's "
        + ", ".join(
            f"{k} (parameters {v['params'][0]:,}, fwd+bwd {v['fwd_bwd_flops'][0]:,})"
            for k, v in paper.items()
        )
        + f". Softmax work (probabilities per forward, = B·F_softmax/c of the "
        f"catalogue in every layer) does scale with h: {_named(sm_tot, '{:,}'.format)}. "
        f"Throughput of both schedules and of an A/A control (uniform timed twice) is "
        f"measured side by side (fused SDPA path, float32, forward+backward, CPU, evidence "
        f"only; the paper's d_h = 384 schedules were 4-8% slower on H100): see this run's "
        f"figures",
        covered=f"4 schedules (heads per layer) {_named(SCHEDULES, _commas)} at d = 64, L = 4, "
        f"f = {FFN}, batch {B}, T = {T} (full score matrix, causal mask applied after "
        f"QKᵀ); Table 4's {'/'.join(paper)} schedule(s) against their uniform baseline at the "
        f"paper's (d, L, h_base), f = int(8d/3), T = {PAPER_T}, batch 1 (meta device); "
        f"throughput: batch {thr['batch']}, T = {thr['T']}, "
        f"{thr['rounds']} interleaved rounds, median",
        measured={
            "fwd_flops_per_layer": per_layer,
            "fwd_bwd_total": totals,
            "softmax_scores_per_layer": softmax,
            "paper_scales": paper,
        },
        volatile={
            "throughput tokens/s": thr["tokens_per_s"],
            "Prism/uniform": thr["ratio_prism_over_uniform"],
            "A/A control (uniform again/uniform)": thr["ratio_uniform_again_over_uniform"],
        },
        witness=mismatches[:4] or None,
        scope="full",
    )


RULE_MUTANTS = {
    "divisibility-dropped": "the rule set without h_l | d (the regime condition removed)",
    "medium-swapped": "the Medium schedule transcribed with layers 3 and 4 swapped "
    "(4,4,8,4,8,8,16,...)",
}


#: the paper's three schedules (Table 4, transcribed from the digest): (d, L, h_base, heads)
TABLE4 = {
    "small": (768, 12, 12, (3, 3, 6, 6, 8, 8) + (12,) * 6),
    "medium": (1024, 24, 16, (4,) * 3 + (8,) * 3 + (16,) * 18),
    "large": (1536, 24, 16, (6,) * 3 + (12,) * 3 + (16,) * 18),
}


def _table4(ctx: Context) -> dict:
    table = {k: (d, L, hb, list(h)) for k, (d, L, hb, h) in TABLE4.items()}
    if ctx.is_mutant("medium-swapped"):
        s = table["medium"][3]
        s[2], s[3] = s[3], s[2]
    return table


@check("PR-S", mutants=RULE_MUTANTS)
def schedule_rules(ctx: Context, cid):
    """Rules 1-3 (the definition) on the paper's three schedules, and the reshape invariant
    h_l · d_head = d read from the catalogue's d_head (rules 4-6: PR-S4, PR-S5, PR-S6)."""
    c = claim("PR-S")
    if ctx.is_mutant("divisibility-dropped"):
        c = dataclasses.replace(c, regime=tuple(r for r in c.regime if not r.expr.has(sp.Mod)))
    problems, dims = [], {}
    for name, (d, L, hb, sched) in _table4(ctx).items():
        for h in sched:
            if not c.in_regime(d=d, h_l=h, h_base=hb):
                problems.append(f"{name}: h={h} outside the regime")
        if sched != sorted(sched) or sched[-1] != hb or len(sched) != L:
            problems.append(f"{name}: not monotone / does not end at h_base")
        widths = {}
        for h in sorted(set(sched)):
            w = c.evaluate("d_head", d=d, h_l=h, h_base=hb)
            widths[h] = w
            if sp.nsimplify(w) * h != d:  # every matrix keeps its shape: h_l heads of d_head
                problems.append(f"{name}: h={h} heads of d_head={w} do not tile d={d}")
        dims[name] = sorted((float(w) for w in widths.values()), reverse=True)
    try:
        c.evaluate(d=768, h_l=5, h_base=12)
        rejects = False
    except RegimeError:
        rejects = True
    ok = not problems and rejects
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        "the paper's three schedules (Table 4) "
        + ("satisfy" if not problems else "do NOT all satisfy")
        + " rules 1-3 (divisibility, monotonicity, ending at h_base) and h_l heads of the "
        "catalogue's d_head tile d in every layer"
        + ("; h = 5 at d = 768 is rejected" if rejects else "; h = 5 at d = 768 is NOT rejected")
        + (f"; problems: {'; '.join(problems)}" if problems else "")
        + f". Per-head widths {_named(dims)}",
        covered="Small/Medium/Large schedules of Table 4; rules 1-3 and d_head",
        scope="partial: rules 1-3 (the definition) and the per-head width d / h_l on the "
        "paper's three Table 4 schedules; the empirical design rules 4-6 are PR-S4, PR-S5, "
        "PR-S6",
    )


# ------------------------------------------------------------------ Table 5 (the ablation)
#: the Small-scale ablation (Table 5) as the digest summarises it (§8; d = 768, L = 12,
#: h_base = 12, 3 seeds, eight schedules): no loss values and no s.d., only the relations
#: below. ``heads``: the schedule where the digest gives it whole, else its stated prefix
#: (``whole`` False); ``start``: rows of the start-width comparison (h_1 = 3 > 4 > 6);
#: ``slowdown``: the measured throughput loss (0 = "identical tokens/s", None = not stated).
#: The eighth row is not named by the digest.
ABLATION: dict[str, dict[str, Any]] = {
    "uniform": dict(heads=(12,) * 12, whole=True, progressive=False, slowdown=0.0),
    "3,3,6,6,8,8,12x6": dict(
        heads=(3, 3, 6, 6, 8, 8) + (12,) * 6, whole=True, progressive=True, start=3, slowdown=0.0
    ),
    "2,2,4,4,8,8,12x6": dict(
        heads=(2, 2, 4, 4, 8, 8) + (12,) * 6, whole=True, progressive=True, slowdown=0.083
    ),
    "2,4,6,8,12x8": dict(
        heads=(2, 4, 6, 8) + (12,) * 8, whole=True, progressive=True, slowdown=0.043
    ),
    "3,6,8,...": dict(heads=(3, 6, 8), whole=False, progressive=True, slowdown=None),
    "h_1=4": dict(heads=(4,), whole=False, progressive=True, start=4, slowdown=None),
    "h_1=6": dict(heads=(6,), whole=False, progressive=True, start=6, slowdown=None),
}
ABLATION_D, ABLATION_HB = 768, 12
_PROGRESSIVE = [k for k, r in ABLATION.items() if r["progressive"]]
#: (better, worse): lower validation loss, as the digest states it (§8)
ABLATION_RELATIONS = (
    # "every progressive schedule beat uniform"
    *((k, "uniform") for k in _PROGRESSIVE),
    # "h_1 = 3 > h_1 = 4 > h_1 = 6"
    ("3,3,6,6,8,8,12x6", "h_1=4"),
    ("h_1=4", "h_1=6"),
    # "3,6,8,... is the weakest" (of the progressive rows)
    *((k, "3,6,8,...") for k in _PROGRESSIVE if k != "3,6,8,..."),
    # "best raw gain: 2,2,4,4,8,8,12x6 ... slightly better than Prism's"
    *((k0, k) for k0 in ["2,2,4,4,8,8,12x6"] for k in ABLATION if k != k0),
)


def better_than(relations) -> set:
    """The transitive closure of (better, worse) pairs."""
    closure = set(relations)
    while True:
        new = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not new:
            return closure
        closure |= new


def compare(relations, a: str, b: str) -> str:
    """'better' when the relations imply a beat b, 'worse' when b beat a, 'contradictory' when
    both, 'undetermined' when neither."""
    cl = better_than(relations)
    ab, ba = (a, b) in cl, (b, a) in cl
    return {(1, 0): "better", (0, 1): "worse", (1, 1): "contradictory"}.get(
        (int(ab), int(ba)), "undetermined"
    )


def _pre_baseline_blocks(heads, hb) -> list[int]:
    """Run lengths of the head counts before h_base (a prefix counts what it shows)."""
    pre = [h for h in heads if h != hb]
    return [len(list(g)) for _, g in itertools.groupby(pre)]


def _ordinal_verdict(results: list[tuple[str, str]]) -> tuple[str, list]:
    """consistent-empirical when every tested pair came out as claimed, inconsistent on any
    pair the table contradicts (or that it states both ways), not-checkable when the table
    decides none."""
    bad = [(w, r) for w, r in results if r in ("worse", "contradictory")]
    if bad:
        return "inconsistent", bad
    if not any(r == "better" for _, r in results):
        return "not-checkable", []
    return "consistent-empirical", []


def _pairs_text(bad: list) -> str:
    """What contradicts an ordering claim as evidence text: ``a vs b: worse; ...`` (an entry is
    a (pair, relation) of :func:`_ordinal_verdict` or a sentence)."""
    return "; ".join(b if isinstance(b, str) else f"{b[0]}: {b[1]}" for b in bad)


ORDINAL_NOTE = (
    "reads no formula: an ordering claim of the ablation (Table 5), which the paper states "
    "as relations between schedules, with no formula and (in the digest) no loss values"
)
ORDINAL_SCOPE = (
    "partial: against the digest's summary of Table 5 (Small only, relations between "
    "schedules, no loss values and no s.d., 7 of its 8 rows named): whether the paper's own "
    "reported relations bear the claim out; whether the differences exceed seed noise is not "
    "in the digest"
)


def _table_text() -> str:
    return f"{len(ABLATION)} named rows, {len(set(ABLATION_RELATIONS))} stated relations"


@check("PR-S4")
def rule_blocks(ctx: Context, cid):
    """Rule 4 against Table 5: every same-start pair of a blocked schedule (every pre-baseline
    head count held >= 2 layers) and a single-layer ramp must rank the blocked one better;
    Table 4's schedules hold their blocks for 2-4 layers."""
    pairs = []
    for a, ra in ABLATION.items():
        for b, rb in ABLATION.items():
            ba = _pre_baseline_blocks(ra["heads"], ABLATION_HB)
            bb = _pre_baseline_blocks(rb["heads"], ABLATION_HB)
            if a == b or not ba or not bb or ra["heads"][0] != rb["heads"][0]:
                continue
            if min(ba) >= 2 and max(bb) == 1 and len(bb) >= 2:
                pairs.append((f"{a} vs {b}", compare(ABLATION_RELATIONS, a, b)))
    v, bad = _ordinal_verdict(pairs)
    t4 = {k: sorted(set(_pre_baseline_blocks(h, hb))) for k, (_, _, hb, h) in TABLE4.items()}
    off = {k: b for k, b in t4.items() if not b or min(b) < 2 or max(b) > 4}
    if off and v == "consistent-empirical":
        v, bad = "inconsistent", [f"Table 4 {k} blocks {b}" for k, b in off.items()]
    return Verdict(
        cid,
        v,
        f"same-start pairs of a blocked schedule and a single-layer ramp in Table 5: "
        f"{'; '.join(f'{w}: blocked ranks {r}' for w, r in pairs) or 'none'}"
        + (f"; contradicted by {_pairs_text(bad)}" if bad else "")
        + f". Table 4's pre-baseline blocks (layers per head count): {_named(t4, _commas)} "
        "(rule: 2 to 4). "
        "Evidence per pair: three seeds per row, no s.d. (the digest), so each 'better' is the "
        "paper's mean, not a tested difference",
        covered=f"Table 5 as the digest summarises it ({_table_text()}); Table 4",
        scope=ORDINAL_SCOPE,
        formula_note=ORDINAL_NOTE,
        rows=[{"pair": w, "blocked_ranks": r} for w, r in pairs],
    )


@check("PR-S5")
def rule_baseline_half(ctx: Context, cid):
    """Rule 5 on every schedule the paper gives whole (Table 4, Table 5's named rows)."""
    rows, bad = [], []
    named = {f"Table 4 {k}": (hb, h) for k, (_, _, hb, h) in TABLE4.items()}
    named |= {f"Table 5 {k}": (ABLATION_HB, r["heads"]) for k, r in ABLATION.items() if r["whole"]}
    for name, (hb, h) in named.items():
        at_base = sum(x == hb for x in h)
        rows.append({"schedule": name, "L": len(h), "at_h_base": at_base})
        if at_base < len(h) / 2:
            bad.append(f"{name}: {at_base} of {len(h)} layers at h_base")
    return Verdict(
        cid,
        "inconsistent" if bad else "consistent-empirical",
        "layers at h_base: "
        + ", ".join(f"{r['schedule']} {r['at_h_base']}/{r['L']}" for r in rows)
        + (f"; below L/2: {'; '.join(bad)}" if bad else " (Small at exactly L/2)")
        + ". No schedule the paper ran breaks the rule, so its data cannot say whether "
        "breaking it hurts: that needs a row with fewer than L/2 layers at h_base (the digest "
        "lists 'schedules that never reach h_base' as untested)",
        covered=f"{len(rows)} schedules given whole (Table 4; Table 5 as the digest names them)",
        scope="partial: the paper's own schedules follow the rule; its benefit is untested "
        "by the paper (no row breaks it)",
        formula_note="reads no formula: a counting rule on schedules (the paper states no "
        "formula for it)",
        witness=bad or None,
        rows=rows,
    )


def _early_dims(heads, d: int, hb: int) -> list[int]:
    return sorted({d // h for h in heads if h != hb}, reverse=True)


def throughput_contradictions(rows: dict, slow_if) -> list[str]:
    """Rows of the ablation whose measured slowdown contradicts ``slow_if(early dims)``: a
    predicted-slow row at full speed, or a predicted-fast row that lost throughput (rows with
    no stated slowdown are skipped)."""
    out = []
    for name, r in rows.items():
        if r["slowdown"] is None:
            continue
        dims = _early_dims(r["heads"], ABLATION_D, ABLATION_HB)
        slow, measured = bool(slow_if(dims)), r["slowdown"] > 0
        if slow != measured:
            speed = f"slower by {100 * r['slowdown']:.1f} %" if measured else "full speed"
            predicted = "a slowdown" if slow else "full speed"
            out.append(
                f"{name} (early d_h {_seq(dims)}): {speed} although the reading predicts "
                f"{predicted}"
            )
    return out


def _not_pow2(dims) -> bool:
    return any(x & (x - 1) for x in dims)


def _above_256(dims) -> bool:
    return any(x > 256 for x in dims)


@check("PR-S6")
def rule_power_of_two(ctx: Context, cid):
    """Rule 6's stated reason (a non-power-of-two early head width costs throughput) against
    the throughput column of Table 5, next to the digest's reading (d_h > 256, the fused
    kernels' limit)."""
    paper = throughput_contradictions(ABLATION, _not_pow2)
    digest = throughput_contradictions(ABLATION, _above_256)
    t4 = {k: _early_dims(h, d, hb) for k, (d, _, hb, h) in TABLE4.items()}
    return Verdict(
        cid,
        "inconsistent" if paper else "consistent-empirical",
        "the rule's reason, 'a non-power-of-two early d_h is slower', against the ablation's "
        "throughput: "
        + (f"contradicted by {'; '.join(paper)}" if paper else "no row contradicts it")
        + "; the digest's reading, 'an early d_h above 256 (the fused kernels' limit) is "
        "slower': "
        + (
            f"contradicted by {'; '.join(digest)}"
            if digest
            else "consistent with every row that states a throughput"
        )
        + f". Early per-head widths of Table 4: {_named(t4)} (Small runs a d_h = 96 stage, Large's "
        "baseline is d_h = 96)",
        covered="the Table 5 rows with a stated throughput (the digest: 2,2,4,4,8,8 -8.3 %, "
        "2,4,6,8 -4.3 %, Prism and uniform identical tokens/s); Table 4",
        scope="partial: the rule's stated reason against the paper's own throughput figures "
        "(as the digest gives them); the preference itself is a design choice",
        formula_note="reads no formula: a rule about which head widths the paper's kernels "
        "ran at full speed (no formula in the paper)",
        witness=paper or None,
    )


@check("PR-A1")
def ablation_all_progressive_beat_uniform(ctx: Context, cid):
    res = [
        (k, compare(ABLATION_RELATIONS, k, "uniform"))
        for k in ABLATION
        if k != "uniform" and ABLATION[k]["progressive"]
    ]
    v, bad = _ordinal_verdict(res)
    return Verdict(
        cid,
        v,
        "each progressive row against uniform 12 x 12 in Table 5: "
        + "; ".join(f"{k} ranks {r}" for k, r in res)
        + (f"; contradicted: {_pairs_text(bad)}" if bad else "")
        + ". The eighth row is not named by the digest; effect sizes 'a few tenths of a percent' "
        "with no s.d.",
        covered=f"Table 5 as the digest summarises it ({_table_text()})",
        scope=ORDINAL_SCOPE,
        formula_note=ORDINAL_NOTE,
        rows=[{"schedule": k, "against_uniform": r} for k, r in res],
    )


@check("PR-A2")
def ablation_start_width(ctx: Context, cid):
    starts = sorted((r["start"], k) for k, r in ABLATION.items() if "start" in r)
    res = [
        (f"h_1 = {s1} ({a}) vs h_1 = {s2} ({b})", compare(ABLATION_RELATIONS, a, b))
        for (s1, a), (s2, b) in itertools.pairwise(starts)
    ]
    v, bad = _ordinal_verdict(res)
    return Verdict(
        cid,
        v,
        "start-width rows of Table 5 in order of h_1, the narrower start ranking: "
        + "; ".join(f"{w}: {r}" for w, r in res)
        + (f"; contradicted: {_pairs_text(bad)}" if bad else "")
        + ". Confounded: these rows also differ in their later stages (digest §10 item 5)",
        covered=f"Table 5 as the digest summarises it ({_table_text()})",
        scope=ORDINAL_SCOPE + "; the rows differ in more than h_1",
        formula_note=ORDINAL_NOTE,
        rows=[{"pair": w, "narrower_start_ranks": r} for w, r in res],
    )


# -------------------------------------------------------------- tokens per parameter (§3)
STEP_TOKENS_HALVED = "step-tokens-halved"


@check(
    "PR-TPP",
    mutants={
        STEP_TOKENS_HALVED: "the digest's tokens per step read as 2^17 / 2^17 / 2^18 (half): "
        "steps x batch tokens no longer reproduce the paper's token counts"
    },
)
def tokens_per_parameter(ctx: Context, cid):
    """The paper's token counts over its reported parameter counts (and over the exact counts
    of the digest's model, PR-N1) against the stated 25-30; the digest's steps x batch tokens
    against the token counts."""
    from approxtheory.experiments import prism_paired as pp

    c = claim(cid)
    lo, hi = float(c.evaluate("low")), float(c.evaluate("high"))
    rows, out_of_range, bad_tokens = [], [], []
    for scale, sc in pp.SCALES.items():
        bt = sc["batch_tokens"] // (2 if ctx.is_mutant(STEP_TOKENS_HALVED) else 1)
        tok = c.evaluate("tokens", S=sc["steps"], B_tok=bt)
        if round(float(tok) / 1e7) != round(sc["tokens"] / 1e7):  # the paper gives 2 decimals of B
            bad_tokens.append(f"{scale}: steps x batch tokens {int(tok):,} != {sc['tokens']:,}")
        n_exact = _lm(
            pp.schedules_for(scale)["uniform"], pp.PAPER_VOCAB, sc["d"], sc["ffn"], device="meta"
        ).count_params()
        r_rep = float(c.evaluate("tokens_per_param", D_tok=sc["tokens"], N=sc["reported_params"]))
        r_ex = float(c.evaluate("tokens_per_param", D_tok=sc["tokens"], N=n_exact))
        if not (math.isfinite(r_rep) and math.isfinite(r_ex)):
            out_of_range.append(f"{scale}: not finite")
        for r in (r_rep, r_ex):
            if not lo <= r <= hi:
                out_of_range.append(f"{scale}: {r:.2f} tokens per parameter")
        rows.append(
            {
                "scale": scale,
                "tokens": sc["tokens"],
                "reported_params": sc["reported_params"],
                "exact_params": n_exact,
                "tpp_reported": r_rep,
                "tpp_exact": r_ex,
            }
        )
    ok = not out_of_range and not bad_tokens
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        "tokens per parameter (paper's tokens / Table 1's parameters; / the digest's model's "
        "exact count): "
        + ", ".join(f"{r['scale']} {r['tpp_reported']:.2f} ({r['tpp_exact']:.2f})" for r in rows)
        + f" against the stated {lo:g}-{hi:g}"
        + (
            f": outside it ({', '.join(sorted(set(out_of_range)))})"
            if out_of_range
            else ": all inside"
        )
        + "; the digest's steps x batch tokens (11k / 40k / 40k steps of 2^18 / 2^18 / 2^19 "
        "tokens) "
        + (
            f"do NOT reproduce them: {'; '.join(bad_tokens)}"
            if bad_tokens
            else "reproduce the paper's token counts to their two decimals of B"
        ),
        covered="the paper's three scales (tokens 2.88B / 10.49B / 20.97B; parameters 124M / "
        "354M / 757M and the tied decoder LM's exact count on the meta device)",
        measured={r["scale"]: round(r["tpp_reported"], 3) for r in rows},
        claimed={"low": lo, "high": hi},
        witness=sorted(set(out_of_range)) or bad_tokens or None,
        rows=rows,
        scope="full",
    )


# ------------------------------------------------------------------ PR-E3 (standard errors)
#: the digest's item counts of the benchmarks it sizes (§6; HellaSwag is not sized there)
DOWNSTREAM_ITEMS = {"PIQA": 1800, "WinoGrande": 1300, "ARC-Easy": 2400}
#: the reported downstream gains, in accuracy points (digest §6: 0.1-1.1)
DOWNSTREAM_GAINS = (0.1, 1.1)
SE_GRID_N = (50, 1300, 1800, 2400, 10_000)
SE_GRID_P = (0.05, 0.3, 0.5, 0.7, 0.95)


def _binomial_sd(n: int, p: float) -> float:
    """The s.d. of an accuracy measured on n items, from the binomial distribution's
    probabilities (float64): sqrt(sum_k pmf(k) (k/n - p)²)."""
    import numpy as np
    from scipy import stats

    k = np.arange(n + 1, dtype=np.float64)
    pmf = stats.binom.pmf(k, n, p)
    return float(np.sqrt(np.sum(pmf * (k / n - p) ** 2)))


ITEMS_X10 = "items-x10"
VARIANCE_AS_SE = "variance-as-se"


@check(
    "PR-E3",
    mutants={
        ITEMS_X10: "the digest's item counts read ten times larger (HellaSwag-sized benchmarks): "
        "one SE falls to 0.3-0.4 points, so a 1-point gain is no longer within one SE",
        VARIANCE_AS_SE: "the formula's variance p(1-p)/n used as the standard error",
    },
)
def downstream_standard_errors(ctx: Context, cid):
    """The catalogue's SE against the binomial distribution on a grid of (n, p); then at the
    digest's item counts and p = 1/2: one SE >= 1 point, the accuracy band where it stays
    >= 1 point, and the reported 0.1-1.1-point gains against 1.96 SE of an unpaired
    difference."""
    import numpy as np

    c = claim(cid)
    e = c.expr("se")
    if ctx.is_mutant(VARIANCE_AS_SE):
        e = e**2
    f = sp.lambdify((cat.p_acc, cat.q_err, cat.n_items), e, "numpy")

    def se(p, n):  # q = 1 - p
        return f(p, 1 - p, n)

    items = {b: n * (10 if ctx.is_mutant(ITEMS_X10) else 1) for b, n in DOWNSTREAM_ITEMS.items()}
    grid, worst = [], 0.0
    for n in SE_GRID_N:
        for p in SE_GRID_P:
            got, want = float(se(p, n)), _binomial_sd(n, p)
            rel = abs(got - want) / want if math.isfinite(got) else math.inf
            worst = max(worst, rel)
            grid.append({"n": n, "p": p, "se_formula": got, "se_binomial": want, "rel_err": rel})
    formula_ok = worst <= 1e-9
    pts = {b: 100 * float(se(0.5, n)) for b, n in items.items()}
    ps = np.linspace(0.0005, 0.9995, 1999)
    bands = {}
    for b, n in items.items():
        vals = np.broadcast_to(np.asarray(se(ps, n), dtype=np.float64), ps.shape)
        inside = ps[100 * vals >= 1]
        bands[b] = (float(inside.min()), float(inside.max())) if inside.size else None
    one_se = all(math.isfinite(x) and x >= 1 for x in pts.values())
    z = {b: DOWNSTREAM_GAINS[1] / (math.sqrt(2) * x) for b, x in pts.items()}
    insignificant = all(v < 1.96 for v in z.values())
    slack = min(pts.values())  # one SE / the 1 point it must reach
    ok = formula_ok and one_se and insignificant
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"SE = sqrt(p q / n), q = 1 - p, of the catalogue against the binomial "
        f"distribution's s.d. of an accuracy on n items ({len(grid)} cells, n {SE_GRID_N}, "
        f"p {SE_GRID_P}): largest relative difference {worst:.2g}"
        + ("" if formula_ok else " (the formula is NOT the binomial standard error)")
        + ". At p = 1/2 one SE is "
        + ", ".join(f"{b} ({n} items) {pts[b]:.3f}" for b, n in items.items())
        + " points"
        + (
            " (>= 1 point: a 1-point gain is within one SE)"
            if one_se
            else " (BELOW 1 point somewhere: a 1-point gain is not within one SE)"
        )
        + "; it stays >= 1 point for accuracies in "
        + ", ".join(
            f"{b} [{v[0]:.3f}, {v[1]:.3f}]" if v else f"{b} nowhere" for b, v in bands.items()
        )
        + f". The largest reported gain, {DOWNSTREAM_GAINS[1]} points, is "
        + ", ".join(f"{v:.2f}" for v in z.values())
        + " standard errors of an unpaired difference (sqrt(2) SE) at the three benchmarks: "
        + (
            "below 1.96 everywhere, so not individually significant"
            if insignificant
            else "ABOVE 1.96 somewhere"
        )
        + ". Not covered: HellaSwag (the digest gives no item count), the paired difference "
        "on the same items (its SE needs the fraction of items the models disagree on, not "
        "reported), and the accuracies themselves",
        covered=f"{len(grid)} (n, p) cells of the formula; the digest's item counts "
        f"{_named(items, '{:,}'.format)} at p = 1/2; reported gains "
        f"{DOWNSTREAM_GAINS[0]:g} to {DOWNSTREAM_GAINS[1]:g} points",
        measured={"se_points_at_half": pts, "z_of_largest_gain": z, "bands": bands},
        claimed={"one_se_at_least_points": 1.0},
        rows=grid,
        slack=slack,
        scope="partial: the standard-error statement (the formula against the binomial "
        "distribution, the digest's item counts, the reported 0.1-1.1-point gains); the "
        "accuracies need the paper's 124M-757M models and the LM Evaluation Harness",
    )


# ---------------------------------------------------------- PR-E4 (Fig. 3 and milestones)
MILESTONE_CURVES = 24  # seeded decreasing baseline curves the milestone implication is tried on


def gap_profile(t, gap, t_noisy, t_plateau, rng):
    """The gap Prism - baseline as Fig. 3 describes it (digest §6): below ``t_noisy`` a gap of
    unknown sign (one draw per curve, uniform in [-3 |gap|, 3 |gap|]: the figure does not fix
    it), from ``t_noisy`` to ``t_plateau`` widening linearly in log t from gap/10 to ``gap``,
    then ``gap``."""
    import numpy as np

    lt = np.log(t)
    w = np.clip((lt - np.log(t_noisy)) / (np.log(t_plateau) - np.log(t_noisy)), 0.0, 1.0)
    g = gap * (0.1 + 0.9 * w)
    noisy = t < t_noisy
    g[noisy] = rng.uniform(-3, 3) * abs(gap)
    return g


def first_reach(t, loss, level):
    """The first t at which ``loss`` is at or below ``level`` (inf when never)."""
    import numpy as np

    hit = np.nonzero(loss <= level)[0]
    return float(t[hit[0]]) if hit.size else math.inf


@check("PR-E4")
def milestones_from_gap(ctx: Context, cid):
    """The milestone statement against Fig. 3's gap as the catalogue states it: on seeded
    decreasing baseline curves L_B(t) = E + A (t / 1e9)^-a and L_P = L_B + gap(t), every loss
    level the baseline first reaches after the noisy phase must be reached by Prism no later;
    levels reached in the noisy phase are reported (not implied)."""
    import numpy as np

    c = claim(cid)
    gap = float(c.evaluate("gap_plateau"))
    t_noisy, t_plat, t_end = (float(c.evaluate(k)) for k in ("t_noisy", "t_plateau", "t_end"))
    rng = np.random.default_rng(ctx.seed)
    t = np.geomspace(1e8, t_end, 4000)
    later_after, later_noisy, tried_after, tried_noisy, rows = 0, 0, 0, 0, []
    for i in range(MILESTONE_CURVES):
        E, A, a = rng.uniform(2.0, 3.5), rng.uniform(0.2, 1.5), rng.uniform(0.1, 0.5)
        lb = E + A * (t / 1e9) ** -a
        lp = lb + gap_profile(t, gap, t_noisy, t_plat, rng)
        for level in np.linspace(lb[-1], lb[0], 60)[1:-1]:
            tb, tp = first_reach(t, lb, level), first_reach(t, lp, level)
            if tb >= t_noisy:
                tried_after += 1
                later_after += tp > tb
            else:
                tried_noisy += 1
                later_noisy += tp > tb
        rows.append({"curve": i, "E": E, "A": A, "a": a, "gap_at_end": float(lp[-1] - lb[-1])})
    ok = later_after == 0 and tried_after > 0
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        f"Fig. 3's gap as stated (noisy below {t_noisy:.3g} tokens, widening to {gap:+.4g} "
        f"nats by {t_plat:.3g}, flat to {t_end:.4g}) added to {MILESTONE_CURVES} seeded "
        f"decreasing baseline curves: of {tried_after} loss levels the baseline first reaches "
        f"after the noisy phase, Prism reaches {later_after} later"
        + (
            " (the milestone statement follows from the figure there)"
            if ok
            else " (the milestone statement does NOT follow from the figure)"
        )
        + f"; of {tried_noisy} levels reached in the noisy phase, {later_noisy} are reached "
        "later by Prism under the gaps of either sign drawn there, so the figure does not "
        "support 'earlier' for them. The figure itself (its curve and seed band) has no "
        "numbers in the digest: checking it needs the paper's per-checkpoint validation "
        "losses of the three Large runs per model. Only the sign of the plateau enters the "
        "milestone consequence: any negative gap_plateau gives this verdict, so its value "
        f"({gap:+.4g}) is not tested here",
        covered=f"{MILESTONE_CURVES} curves x 58 levels, t from 1e8 to {t_end:.4g} tokens "
        "(4000 points, log-spaced); seed "
        f"{ctx.seed}",
        measured={
            "later_after_noisy": later_after,
            "levels_after_noisy": tried_after,
            "later_in_noisy": later_noisy,
            "levels_in_noisy": tried_noisy,
        },
        claimed={"gap_plateau": gap},
        witness=None if ok else {"later_after_noisy": later_after},
        rows=rows,
        scope="partial: the milestone statement (§3.4) as a consequence of Fig. 3's gap as "
        "the catalogue states it; the gap's measured values are not checked (no numbers)",
    )


# ------------------------------------------------------------------------- PR-E1 / PR-E2
PAIRED = "prism_paired"
LOSS_OFFSET = "prism-loss-offset"
DIST_OFFSET = "prism-distance-offset"


def _paired_rows(ctx: Context):
    from .headcount import _exp_rows

    raw, _, note = _exp_rows(PAIRED, ctx.profile)
    return (None if raw is None else [dict(r) for r in raw]), note


#: the paper's scale (digest §5-7), in every PR-E1 / PR-E2 record beside the run's
PR_PAPER = (
    "digest §5-7: 124M / 353M / 757M decoders on FineWeb (GPT-2 BPE), T = 1024, 2.88B / 10.49B "
    "/ 20.97B tokens (about 23-30 tokens per parameter), 0.25M-0.5M tokens per step, AdamW "
    "peak lr 6e-4 / 3e-4 / 2.5e-4, 3 seeds; Prism's validation loss lower by a few tenths of a "
    "percent (about 0.01 nats); Fig. 4: ΔD_1 of order -100 tokens at T = 1024"
)
#: the recipe known to train the toy model (digest §9), said in a gated verdict
PR_RECIPE = (
    "The digest's CPU recipe (§9): d = 64, L = 4, T = 64, batch 32, AdamW (0.9, 0.95), weight "
    "decay 0.1, clip 1.0, lr 3e-3, short warmup then cosine to 10 %, about 1200 steps (45-60 s "
    "per cell on two idle cores; the full profile); a paper-sized loss effect needs about 15 "
    "paired seeds"
)


def _paired_gate(rows: list):
    """The shared training-adequacy gate on prism_paired rows (:func:`.tradeoffs.loss_gate`, a
    cross-entropy): control the uniform schedule, the baseline every comparison is paired with
    (its training does not depend on the claim), per T; the paper's loss is no magnitude for a
    character-level toy (another tokenizer and corpus), so none is held."""
    from .tradeoffs import loss_gate, present_keys

    return loss_gate(
        rows,
        control=lambda r: r["schedule"] == "uniform",
        describe="the uniform schedule (the paired baseline), per T",
        by=present_keys(rows, ("T",)),
        budget=PR_RECIPE,
    )


def _gated_paired(cid: str, rows: list, gate, covered: str, ev: str, table, plot):
    """The gated not-checkable verdict of PR-E1 / PR-E2 (None when the gate passed)."""
    from .tradeoffs import gated_verdict

    return gated_verdict(
        cid,
        [(PAIRED, gate)],
        {PAIRED: rows},
        covered,
        metric="val_loss",
        paper={PAIRED: PR_PAPER},
        measured=ev,
        rows=table,
        plot=plot,
    )


def _paired_scale(rows: list, gate) -> dict:
    from .tradeoffs import trained_scale

    return trained_scale([(PAIRED, gate)], {PAIRED: rows}, "val_loss", {PAIRED: PR_PAPER})


def _fmt(st: dict, unit: str = "") -> str:
    return (
        f"mean {st['mean']:+.4g}{unit}, 95 % t-interval [{st['lo']:+.4g}, {st['hi']:+.4g}], "
        f"s.d. {st['sd']:.3g}, {st['neg']} of {st['n']} seeds negative"
    )


def loss_verdict(rows: list) -> dict:
    """PR-E1 on the rows of prism_paired: the paired difference val_loss(Prism) - val_loss
    (uniform) per seed against the paper's effect (0.3 % of the uniform loss) with the paired
    verdict of :func:`approxtheory.experiments.prism_paired.paired_verdict`, and the controls."""
    from approxtheory.experiments import prism_paired as pp

    pr = pp.paired_rows(rows, "val_loss")
    uni = [float(r["val_loss"]) for r in rows if r["schedule"] == "uniform"]
    effect = pp.PAPER_REL_EFFECT * sum(uni) / len(uni)
    out = {}
    for a, b in pp.COMPARISONS:
        diffs = [r["diff"] for r in pr if r["comparison"] == f"{a}-{b}"]
        out[a] = pp.paired_verdict(diffs, effect, -1) | {"diffs": diffs}
    return out


def schedules_of(rows: list) -> dict[str, tuple[int, ...]]:
    """The head schedule of each schedule name as the rows record it (``heads``), else the toy
    scale's."""
    from approxtheory.experiments import prism_paired as pp

    out: dict[str, tuple[int, ...]] = dict(pp.SCHEDULES)
    for r in rows:
        if r.get("heads"):
            out[r["schedule"]] = tuple(int(h) for h in str(r["heads"]).split(","))
    return out


def distance_verdict(rows: list) -> dict:
    """PR-E2 on the rows of prism_paired: per layer and seed ΔD_l = D_l(A) - D_l(uniform).
    Verdict on the widest-head layer (ΔD_1 < 0 predicted; effect: the paper's -100 tokens at
    T = 1024 as a fraction of the window), then the first layer at h_base (ΔD >= 0 predicted: an
    interval wholly below 0 makes it inconsistent)."""
    from approxtheory.experiments import prism_paired as pp

    T = int(rows[0]["T"])
    sched = schedules_of(rows)
    L = len(sched["uniform"])
    effect = pp.PAPER_D_FRACTION * T
    per_layer: dict = {}
    for a, _ in pp.COMPARISONS:
        for li in range(1, L + 1):
            diffs = [
                r["diff"]
                for r in pp.paired_rows(rows, f"D_{li}")
                if r["comparison"] == f"{a}-uniform"
            ]
            per_layer[(a, li)] = pp.paired_stats(diffs) | {"diffs": diffs}
    first = pp.paired_verdict(per_layer[("prism", 1)]["diffs"], effect, -1)
    base_layer = sched["prism"].index(sched["uniform"][0]) + 1
    ramp = per_layer[("prism", base_layer)]
    v = first["verdict"]
    if v == "consistent-empirical" and ramp["hi"] < 0:
        v = "inconsistent"
    wide = pp.paired_verdict(per_layer[("wide", 1)]["diffs"], effect, -1)
    return {
        "verdict": v,
        "first": first,
        "base_layer": base_layer,
        "ramp": ramp,
        "wide": wide,
        "per_layer": per_layer,
        "effect": effect,
        "T": T,
        "schedules": sched,
    }


def _size(rows: list) -> str:
    r = rows[0]
    scale = r.get("scale") or "toy"
    return f"scale {scale}, {int(float(r['params'])):,} parameters" if "params" in r else scale


def _not_detectable(res: dict, what: str, unit: str) -> str:
    return (
        f"no detectable effect at this scale: {what} {_fmt(res, unit)} includes 0; the "
        f"paper's effect size {res['effect']:.3g}{unit} would need about {res['needed']} "
        f"paired seeds at the measured spread (n = (2.8 s.d./effect)², 80 % power, two-sided "
        f"5 %); {res['n']} were run"
    )


@check(
    "PR-E1",
    mutants={
        LOSS_OFFSET: "every Prism cell's validation loss read 0.2 nats too high (a bookkeeping "
        "bug: another schedule's or an earlier step's loss)",
    },
)
def paired_loss(ctx: Context, cid):
    """Paired seeds of prism_paired (same initial weights, same batch order per seed): the
    Prism - uniform validation-loss difference, its t-interval and the seeds the paper's effect
    would need (:func:`loss_verdict`), after the shared training-adequacy gate on the uniform
    baseline (:func:`_paired_gate`; below it: not-checkable); the record's ``scale`` puts the
    run beside the paper's 124M-757M FineWeb models."""
    rows, note = _paired_rows(ctx)
    if rows is None:
        from .headcount import _not_run

        return _not_run(cid, PAIRED, ctx.profile, note)
    for r in rows:
        for k in ("d", "T", "steps", "batch", "seed"):
            r[k] = int(r[k])
    gate = _paired_gate(rows)  # the run as trained (the bookkeeping mutant comes after)
    raw = [dict(r) for r in rows]
    if ctx.is_mutant(LOSS_OFFSET):
        for r in rows:
            if r["schedule"] == "prism":
                r["val_loss"] = float(r["val_loss"]) + 0.2
    res = loss_verdict(rows)
    p = res["prism"]
    cfg = rows[0]
    sched = schedules_of(rows)
    table = [
        {"comparison": f"{a}-uniform", "seed": i, "diff": x, "lo": res[a]["lo"], "hi": res[a]["hi"]}
        for a in res
        for i, x in enumerate(res[a]["diffs"])
    ]
    controls = "; ".join(f"{a} - uniform: {_fmt(res[a], ' nats')}" for a in res if a != "prism")
    head = f"Prism - uniform validation loss per seed {[round(x, 4) for x in p['diffs']]}"
    if p["verdict"] == "not-checkable":
        ev = _not_detectable(p, "Prism - uniform", " nats") + f". Controls: {controls}"
    else:
        ev = (
            f"{head}: {_fmt(p, ' nats')} "
            + ("below 0 (Prism lower)" if p["hi"] < 0 else "")
            + ("above 0 (Prism higher)" if p["lo"] > 0 else "")
            + ("includes 0 although enough seeds were run" if p["lo"] <= 0 <= p["hi"] else "")
            + f" ({100 * p['mean'] / (p['effect'] / 0.003):+.2g} % of the uniform loss)"
            + f"; the paper's effect {p['effect']:.3g} nats (0.3 % of the uniform loss) needs "
            f"about {p['needed']} paired seeds at this spread. Controls: {controls}"
        )
    covered = (
        f"{PAIRED} ({ctx.profile}; {note}): d = {cfg['d']}, L = {len(sched['uniform'])}, "
        f"T = {cfg['T']}, {cfg['steps']} steps, batch {cfg['batch']}, {p['n']} paired seeds, "
        + ", ".join(f"{k} {_commas(sched[k])}" for k in ("uniform", "prism", "reversed", "wide"))
        + ", equal parameters"
    )
    plot = {
        "x": "seed",
        "y": ["diff", "lo", "hi"],
        "group": "comparison",
        "title": f"{cid}: paired validation-loss differences (A - uniform)",
        "xlabel": "seed",
        "ylabel": "Δ validation loss (nats)",
        "logx": False,
        "logy": False,
    }
    gated = _gated_paired(cid, raw, gate, covered, ev, table, plot)
    if gated is not None:
        return gated
    return Verdict(
        cid,
        p["verdict"],
        ev,
        covered=covered,
        scale=_paired_scale(raw, gate),
        measured={"prism-uniform": {k: p[k] for k in ("mean", "lo", "hi", "sd", "needed")}},
        claimed={"effect_nats": p["effect"], "sign": "negative"},
        rows=table,
        plot=plot,
        witness=None if p["verdict"] != "inconsistent" else p["diffs"],
        scope=f"surrogate: a {cfg['steps']}-step character-level LM on the shared model (the "
        "digest's decoder: RMSNorm, RoPE, SwiGLU, tied embeddings; "
        f"{_size(rows)}) stands in for the paper's 124M-757M FineWeb models; a short run "
        "measures the loss early in training, not at the paper's 23+ tokens per parameter",
    )


@check(
    "PR-E2",
    mutants={
        DIST_OFFSET: "every Prism cell's D_1 read T/2 tokens too far (e.g. the distance "
        "measured on the wrong query rows)",
    },
)
def attention_locality(ctx: Context, cid):
    """ΔD_l = D_l(A) - D_l(uniform) per layer and paired seed on the fixed validation windows of
    prism_paired (:func:`distance_verdict`), with the uniform-wide control, after the shared
    training-adequacy gate on the uniform baseline (:func:`_paired_gate`)."""
    rows, note = _paired_rows(ctx)
    if rows is None:
        from .headcount import _not_run

        return _not_run(cid, PAIRED, ctx.profile, note)
    for r in rows:
        for k in ("d", "T", "steps", "batch", "seed"):
            r[k] = int(r[k])
    gate = _paired_gate(rows)  # the run as trained (the bookkeeping mutant comes after)
    raw = [dict(r) for r in rows]
    if ctx.is_mutant(DIST_OFFSET):
        for r in rows:
            if r["schedule"] == "prism":
                r["D_1"] = float(r["D_1"]) + int(r["T"]) / 2
    res = distance_verdict(rows)
    f, w, ramp = res["first"], res["wide"], res["ramp"]
    table = [
        {
            "comparison": f"{a}-uniform",
            "layer": li,
            "delta_D": st["mean"],
            "lo": st["lo"],
            "hi": st["hi"],
        }
        for (a, li), st in sorted(res["per_layer"].items())
    ]
    if w["verdict"] == "consistent-empirical" and f["verdict"] == "consistent-empirical":
        which = (
            "the uniform-wide control is detectably more local in layer 1 too, so the data "
            "supports 'wide heads' at least as much as 'wide heads early'"
        )
    elif f["verdict"] == "consistent-empirical" and w["verdict"] == "inconsistent":
        which = (
            "the uniform-wide control is not more local in layer 1 (resolved), so the data "
            "points to 'wide heads early'"
        )
    else:
        which = (
            f"the control's interval includes 0 ({w['neg']} of {w['n']} seeds negative; about "
            f"{w['needed']} seeds would resolve the paper-sized effect): the data does not yet "
            "separate 'wide heads' from 'wide heads early'"
        )
    layers = "; ".join(
        f"layer {li}: ΔD {st['mean']:+.3g} [{st['lo']:+.3g}, {st['hi']:+.3g}]"
        for (a, li), st in sorted(res["per_layer"].items())
        if a == "prism"
    )
    if res["verdict"] == "not-checkable":
        ev = _not_detectable(f, "ΔD_1 (Prism - uniform, widest-head layer)", " tokens") + (
            f". What makes it checkable: at least {f['needed']} paired seeds at this spread "
            f"(the {ctx.profile} profile runs {f['n']}: a budget choice, as each extra seed "
            "trains 4 schedules); `approxtheory experiment run prism_paired --profile full` "
            "(8 paired seeds, d = 64, T = 64, 1200 steps) then `approxtheory verify --profile "
            "full --only PR-E2` decides it when the full run's spread needs at most 8. The "
            "digest's L = 8 pilot (uniform 4 x 8 against (1,1,2,2,4,4,4,4), the schedule that "
            "obeys rules 4-5; `--scale toy8`) does not fit the quick profile: measured 0.15 s "
            "per step at d = 64, T = 64, batch 32 on one shared core (0.072 s at L = 4), about "
            "3 min per 1200-step cell and 32 cells, and 2.6 s per 80-step quick-size cell "
            "(2.2 s at L = 4)"
        )
    else:
        ev = (
            f"ΔD_1 (Prism - uniform, h = {res['schedules']['prism'][0]} vs "
            f"{res['schedules']['uniform'][0]}) {_fmt(f, ' tokens')}"
            + (
                f" (includes 0 although {f['needed']} seeds resolve the paper-sized effect: "
                "it is absent here)"
                if f["lo"] <= 0 <= f["hi"]
                else ""
            )
            + f"; at the first layer at "
            f"h_base (layer {res['base_layer']}) ΔD {ramp['mean']:+.3g} "
            f"[{ramp['lo']:+.3g}, {ramp['hi']:+.3g}] (predicted >= 0)"
        )
    ev += (
        f". Prism per layer: {layers}. Uniform-wide control ΔD_1 {_fmt(w, ' tokens')}: {which}. "
        f"Paper's effect scaled to the window: {res['effect']:.3g} tokens at T = {res['T']} "
        f"(-100 at T = 1024)"
    )
    cfg = rows[0]
    covered = (
        f"{PAIRED} ({ctx.profile}; {note}): D_l of every layer on {16} fixed validation "
        f"windows of T = {cfg['T']} (queries t >= T/2), {f['n']} paired seeds, Prism, reversed "
        "and uniform-wide against uniform"
    )
    plot = {
        "x": "layer",
        "y": ["delta_D", "lo", "hi"],
        "group": "comparison",
        "title": f"{cid}: ΔD_l = D_l(A) - D_l(uniform), mean and 95 % t-interval over seeds",
        "xlabel": "layer",
        "ylabel": "ΔD_l (tokens)",
        "logx": False,
        "logy": False,
    }
    gated = _gated_paired(cid, raw, gate, covered, ev, table, plot)
    if gated is not None:
        return gated
    return Verdict(
        cid,
        res["verdict"],
        ev,
        covered=covered,
        scale=_paired_scale(raw, gate),
        measured={
            "delta_D1": {k: f[k] for k in ("mean", "lo", "hi", "sd", "needed")},
            "wide_delta_D1": {k: w[k] for k in ("mean", "lo", "hi")},
        },
        claimed={"delta_D1": "negative", f"delta_D{res['base_layer']}": ">= 0"},
        rows=table,
        plot=plot,
        witness=None
        if res["verdict"] != "inconsistent"
        else {"delta_D1": res["per_layer"][("prism", 1)]["diffs"]},
        scope=f"surrogate: a {cfg['steps']}-step character-level LM ({_size(rows)}) with "
        f"L = {len(res['schedules']['prism'])} (Prism {res['schedules']['prism']}) and "
        f"T = {cfg['T']} stands in for the paper's 12-24 layer models at T = 1024; the "
        "widest-head layer and the first layer at h_base are tested, the 'coincide late' part "
        "is reported only",
    )
