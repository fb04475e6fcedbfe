"""Checks of arXiv 2606.27449 (PR-*).

PR-N1/PR-N2 count on the project's shared model at toy size (d = 64, L = 4, RoPE, SwiGLU, biases)
and compare every layer with the catalogue's formulas. FLOPs are counted on the explicit
attention path (``return_attention=True``: QKᵀ and AV are matmuls ``FlopCounterMode`` sees; it
counts nothing for CPU ``scaled_dot_product_attention``), and the O(h T²) softmax work is counted
as the number of attention probabilities each layer computes."""

from __future__ import annotations

import dataclasses
import itertools
import time

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
not_checkable(
    "PR-E3",
    reason="needs 124M-757M models trained on FineWeb (3 seeds each) and the LM "
    "Evaluation Harness; the paper reports means without error bars, and gains of "
    "0.1-1.1 points are within about one standard error of benchmarks of 1.3k-2.4k "
    "items",
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
        + (f" except {mismatches[:4]}" if mismatches else "")
        + f"; whole-model counts {counts}"
        + ("" if equal else " DIFFER across schedules")
        + "; the digest's decoder LM (RMSNorm, tied embeddings, no biases) has N_model "
        "parameters (tying term V·d counted once, norms 2d per layer + d) in every toy "
        "schedule at V = 50 and at the paper's three scales at V = 50257, uniform and Table 4 "
        "alike"
        + (f" except {bad_whole[:4]}" if bad_whole else "")
        + ": "
        + ", ".join(f"{s} {n:,}" for s, (n, _) in reported.items())
        + (
            f" (Table 1 reports {off})"
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
        + (f" except {mismatches[:4]}" if mismatches else "")
        + "; F_layer summed over 6 symbolic head counts "
        + ("has no" if symbolic else "KEEPS a")
        + f" head count; forward+backward totals {totals}"
        + ("" if equal else " DIFFER across schedules")
        + "; Table 4 vs uniform at the paper's "
        + ", ".join(
            f"{k} (parameters {v['params'][0]:,}, fwd+bwd {v['fwd_bwd_flops'][0]:,})"
            for k, v in paper.items()
        )
        + f". Softmax work (probabilities per forward, = B·F_softmax/c of the "
        f"catalogue in every layer) does scale with h: {sm_tot}. Throughput of both "
        f"schedules and of an A/A control (uniform timed twice) is measured side by "
        f"side (fused SDPA path, float32, forward+backward, CPU, evidence only; the "
        f"paper's d_h = 384 schedules were 4-8% "
        f"slower on H100): see this run's figures",
        covered=f"4 schedules {SCHEDULES} at d = 64, L = 4, f = {FFN}, batch {B}, "
        f"T = {T} (full score matrix, causal mask applied after QKᵀ); Table 4's "
        f"{'/'.join(paper)} schedule(s) against their uniform baseline at the paper's "
        f"(d, L, h_base), f = int(8d/3), T = {PAPER_T}, batch 1 (meta device); "
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


@check("PR-S", mutants=RULE_MUTANTS)
def schedule_rules(ctx: Context, cid):
    c = claim("PR-S")
    if ctx.is_mutant("divisibility-dropped"):
        c = dataclasses.replace(c, regime=tuple(r for r in c.regime if not r.expr.has(sp.Mod)))
    table = {
        "small": (768, 12, 12, [3, 3, 6, 6, 8, 8] + [12] * 6),
        "medium": (1024, 24, 16, [4] * 3 + [8] * 3 + [16] * 18),
        "large": (1536, 24, 16, [6] * 3 + [12] * 3 + [16] * 18),
    }
    if ctx.is_mutant("medium-swapped"):
        s = table["medium"][3]
        s[2], s[3] = s[3], s[2]
    problems, dims = [], {}
    for name, (d, L, hb, sched) in table.items():
        for h in sched:
            if not c.in_regime(d=d, h_l=h, h_base=hb):
                problems.append(f"{name}: h={h}")
        if sched != sorted(sched) or sched[-1] != hb or len(sched) != L:
            problems.append(f"{name}: not monotone / does not end at h_base")
        if sum(h == hb for h in sched) < L / 2:
            problems.append(f"{name}: fewer than L/2 layers at h_base")
        runs = [len(list(g)) for _, g in itertools.groupby(sched)]
        if min(runs) < 2:
            problems.append(f"{name}: a head count held for a single layer")
        dims[name] = sorted(
            {int(c.evaluate("d_head", d=d, h_l=h, h_base=hb)) for h in set(sched)}, reverse=True
        )
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
        + " divisibility, monotonicity, ending at h_base, blocks of >= 2 layers and "
        "the >= L/2 rule"
        + ("; h = 5 at d = 768 is rejected" if rejects else "; h = 5 at d = 768 is NOT rejected")
        + (f"; problems: {problems}" if problems else "")
        + f". Per-head widths {dims}: the 'powers of two early' preference (rule 6) "
        "is a hardware preference the Small schedule itself does not follow (d_h = 96)",
        covered="Small/Medium/Large schedules of Table 4; rules 1-5",
        scope="full",
    )


# ------------------------------------------------------------------------- PR-E1 / PR-E2
PAIRED = "prism_paired"
LOSS_OFFSET = "prism-loss-offset"
DIST_OFFSET = "prism-distance-offset"


def _paired_rows(ctx: Context):
    from .headcount import _exp_rows

    raw, _, note = _exp_rows(PAIRED, ctx.profile)
    return (None if raw is None else [dict(r) for r in raw]), note


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
    would need (:func:`loss_verdict`)."""
    rows, note = _paired_rows(ctx)
    if rows is None:
        from .headcount import _not_run

        return _not_run(cid, PAIRED, ctx.profile, note)
    for r in rows:
        for k in ("d", "T", "steps", "batch", "seed"):
            r[k] = int(r[k])
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
    return Verdict(
        cid,
        p["verdict"],
        ev,
        covered=f"{PAIRED} ({ctx.profile}; {note}): d = {cfg['d']}, L = {len(sched['uniform'])}, "
        f"T = {cfg['T']}, {cfg['steps']} steps, batch {cfg['batch']}, {p['n']} paired seeds, "
        + ", ".join(f"{k} {sched[k]}" for k in ("uniform", "prism", "reversed", "wide"))
        + ", equal parameters",
        measured={"prism-uniform": {k: p[k] for k in ("mean", "lo", "hi", "sd", "needed")}},
        claimed={"effect_nats": p["effect"], "sign": "negative"},
        rows=table,
        plot={
            "x": "seed",
            "y": ["diff", "lo", "hi"],
            "group": "comparison",
            "title": f"{cid}: paired validation-loss differences (A - uniform)",
            "xlabel": "seed",
            "ylabel": "Δ validation loss (nats)",
            "logx": False,
            "logy": False,
        },
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
    prism_paired (:func:`distance_verdict`), with the uniform-wide control."""
    rows, note = _paired_rows(ctx)
    if rows is None:
        from .headcount import _not_run

        return _not_run(cid, PAIRED, ctx.profile, note)
    for r in rows:
        for k in ("d", "T", "steps", "batch", "seed"):
            r[k] = int(r[k])
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
        ev = _not_detectable(f, "ΔD_1 (Prism - uniform, widest-head layer)", " tokens")
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
    return Verdict(
        cid,
        res["verdict"],
        ev,
        covered=f"{PAIRED} ({ctx.profile}; {note}): D_l of every layer on {16} fixed validation "
        f"windows of T = {cfg['T']} (queries t >= T/2), {f['n']} paired seeds, Prism, reversed "
        "and uniform-wide against uniform",
        measured={
            "delta_D1": {k: f[k] for k in ("mean", "lo", "hi", "sd", "needed")},
            "wide_delta_D1": {k: w[k] for k in ("mean", "lo", "hi")},
        },
        claimed={"delta_D1": "negative", f"delta_D{res['base_layer']}": ">= 0"},
        rows=table,
        plot={
            "x": "layer",
            "y": ["delta_D", "lo", "hi"],
            "group": "comparison",
            "title": f"{cid}: ΔD_l = D_l(A) - D_l(uniform), mean and 95 % t-interval over seeds",
            "xlabel": "layer",
            "ylabel": "ΔD_l (tokens)",
            "logx": False,
            "logy": False,
        },
        witness=None
        if res["verdict"] != "inconsistent"
        else {"delta_D1": res["per_layer"][("prism", 1)]["diffs"]},
        scope=f"surrogate: a {cfg['steps']}-step character-level LM ({_size(rows)}) with "
        f"L = {len(res['schedules']['prism'])} (Prism {res['schedules']['prism']}) and "
        f"T = {cfg['T']} stands in for the paper's 12-24 layer models at T = 1024; the "
        "widest-head layer and the first layer at h_base are tested, the 'coincide late' part "
        "is reported only",
    )
