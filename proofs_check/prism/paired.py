"""The trained paired runs of prism_paired (PR-E1: the validation-loss difference; PR-E2: the
attention distance per layer), through the trained-verdict pipeline (:mod:`.._pipeline`): the
shared training-adequacy gate on the uniform baseline, then the paired criterion."""

from __future__ import annotations

from approxtheory import claim

from .._core import Context, Verdict, check, claimed_sign
from .._pipeline import Evidence, Run, trained_verdict
from ._common import _commas

# ------------------------------------------------------------------------- PR-E1 / PR-E2
PAIRED = "prism_paired"
LOSS_OFFSET = "prism-loss-offset"
DIST_OFFSET = "prism-distance-offset"


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


def _typed(rows) -> list:
    """A copy of prism_paired rows with the run's integer columns as integers."""
    out = [dict(r) for r in rows]
    for r in out:
        for k in ("d", "T", "steps", "batch", "seed"):
            r[k] = int(r[k])
    return out


def _paired_gate(name: str, rows: list) -> list:
    """The shared training-adequacy gate on prism_paired rows as trained
    (:func:`.._trained_verdicts.loss_gate`, a cross-entropy): control the uniform schedule, the
    baseline every comparison is paired with (its training does not depend on the claim), per
    T; the paper's loss is no magnitude for a character-level toy (another tokenizer and
    corpus), so none is held. One part, the typed rows (what the scale record reads)."""
    from .._trained_verdicts import loss_gate

    typed = _typed(rows)
    gate = loss_gate(
        typed,
        control=lambda r: r["schedule"] == "uniform",
        describe="the uniform schedule (the paired baseline), per T",
        budget=PR_RECIPE,
    )
    return [(name, gate, typed)]


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


def distance_verdict(rows: list, sign: int = -1) -> dict:
    """PR-E2 on the rows of prism_paired: per layer and seed ΔD_l = D_l(A) - D_l(uniform).
    Verdict on the widest-head layer (ΔD_1 of the claimed sign ``sign``, the catalogue's
    delta_distance_sign_early; effect: the paper's -100 tokens at T = 1024 as a fraction of the
    window), then the first layer at h_base (the statement's flip: an interval wholly on the
    early side makes it inconsistent). A claimed sign 0 (no early difference) is contradicted
    by any resolved ΔD_1 and never borne out (not-checkable otherwise)."""
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
    first = pp.paired_verdict(per_layer[("prism", 1)]["diffs"], effect, sign or -1)
    if sign == 0:
        resolved = first["lo"] > 0 or first["hi"] < 0
        first = {**first, "verdict": "inconsistent" if resolved else "not-checkable"}
    base_layer = sched["prism"].index(sched["uniform"][0]) + 1
    ramp = per_layer[("prism", base_layer)]
    v = first["verdict"]
    if v == "consistent-empirical" and ((ramp["hi"] < 0) if sign < 0 else (ramp["lo"] > 0)):
        v = "inconsistent"
    wide = pp.paired_verdict(per_layer[("wide", 1)]["diffs"], effect, sign or -1)
    return {
        "verdict": v,
        "sign": sign,
        "first": first,
        "base_layer": base_layer,
        "ramp": ramp,
        "wide": wide,
        "per_layer": per_layer,
        "effect": effect,
        "T": T,
        "schedules": sched,
    }


#: PR-E2's catalogue field: the claimed sign of ΔD_l in the early wide-head layers (-1: Prism's
#: attention there is more local than the uniform baseline's)
E2_SIGN = "delta_distance_sign_early"


_claimed_sign = claimed_sign  # the shared reader of a claim's stated sign


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


def _loss_criterion(run: Run) -> Verdict:
    """PR-E1's criterion on the rows read (:func:`loss_verdict`; the bookkeeping mutant acts
    here, after the gate)."""
    ctx, cid, note = run.ctx, run.cid, run.note
    rows = _typed(run.one)
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
        "ylabel": "Δ validation loss (nats)",
        "logx": False,
        "logy": False,
    }
    return Verdict(
        cid,
        p["verdict"],
        ev,
        covered=covered,
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


def _paired_evidence(criterion) -> Evidence:
    """A prism_paired check's evidence: gated on the uniform baseline (:func:`_paired_gate`,
    a cross-entropy), then ``criterion``; the paper's scale :data:`PR_PAPER` beside the run's."""
    return Evidence((PAIRED,), _paired_gate, criterion, paper={PAIRED: PR_PAPER}, metric="val_loss")


#: PR-E1's evidence: prism_paired, gated on the uniform baseline, the paired loss criterion
E1_EVIDENCE = _paired_evidence(_loss_criterion)


@check(
    "PR-E1",
    mutants={
        LOSS_OFFSET: "every Prism cell's validation loss read 0.2 nats too high (a bookkeeping "
        "bug: another schedule's or an earlier step's loss)",
    },
    evidence=E1_EVIDENCE,
)
def paired_loss(ctx: Context, cid):
    """Paired seeds of prism_paired (same initial weights, same batch order per seed): the
    Prism - uniform validation-loss difference, its t-interval and the seeds the paper's effect
    would need (:func:`loss_verdict`), after the shared training-adequacy gate on the uniform
    baseline (:func:`_paired_gate`; below it: not-checkable); the record's ``scale`` puts the
    run beside the paper's 124M-757M FineWeb models."""
    return trained_verdict(ctx, cid, E1_EVIDENCE)


def _flip_side(sign: int) -> str:
    """Where the statement's flip puts ΔD at the first layer at h_base for an early ``sign``."""
    return {-1: ">= 0", 1: "<= 0"}.get(sign, "anything (no early difference claimed)")


def _locality_evidence(res: dict, profile: str) -> str:
    """PR-E2's evidence text from :func:`distance_verdict`'s result: ΔD_1 against 0 (or why
    no effect is detectable at this scale and what would decide it), the first layer at
    h_base, every layer of Prism, and what the uniform-wide control says (``profile``: the
    run's, named in the not-checkable text)."""
    f, w, ramp = res["first"], res["wide"], res["ramp"]
    side = "more" if (res["sign"] or -1) < 0 else "less"
    if w["verdict"] == "consistent-empirical" and f["verdict"] == "consistent-empirical":
        which = (
            f"the uniform-wide control is detectably {side} local in layer 1 too, so the data "
            "supports 'wide heads' at least as much as 'wide heads early'"
        )
    elif f["verdict"] == "consistent-empirical" and w["verdict"] == "inconsistent":
        which = (
            f"the uniform-wide control is not {side} local in layer 1 (resolved), so the data "
            "points to 'wide heads early'"
        )
    elif w["lo"] <= 0 <= w["hi"]:
        which = (
            f"the control's interval includes 0 ({w['neg']} of {w['n']} seeds negative; about "
            f"{w['needed']} seeds would resolve the paper-sized effect): the data does not yet "
            "separate 'wide heads' from 'wide heads early'"
        )
    else:
        which = (
            f"the control's interval excludes 0 ({w['neg']} of {w['n']} seeds negative), as "
            "does Prism's"
            if f["lo"] > 0 or f["hi"] < 0
            else f"the control's interval excludes 0 ({w['neg']} of {w['n']} seeds negative)"
        )
    layers = "; ".join(
        f"layer {li}: ΔD {st['mean']:+.3g} [{st['lo']:+.3g}, {st['hi']:+.3g}]"
        for (a, li), st in sorted(res["per_layer"].items())
        if a == "prism"
    )
    if res["verdict"] == "not-checkable":
        ev = _not_detectable(f, "ΔD_1 (Prism - uniform, widest-head layer)", " tokens") + (
            f". What makes it checkable: at least {f['needed']} paired seeds at this spread "
            f"(the {profile} profile runs {f['n']}: a budget choice, as each extra seed "
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
            f"[{ramp['lo']:+.3g}, {ramp['hi']:+.3g}] (predicted {_flip_side(res['sign'])})"
        )
    ev += (
        f". Prism per layer: {layers}. Uniform-wide control ΔD_1 {_fmt(w, ' tokens')}: {which}. "
        f"Paper's effect scaled to the window: {res['effect']:.3g} tokens at T = {res['T']} "
        f"(-100 at T = 1024)"
    )
    return ev


def _locality_criterion(run: Run) -> Verdict:
    """PR-E2's criterion on the rows read (:func:`distance_verdict` with the claim's sign; the
    bookkeeping mutant acts here, after the gate)."""
    ctx, cid, note = run.ctx, run.cid, run.note
    sign, read, _ = _claimed_sign(claim(cid), E2_SIGN)
    if sign is None:  # the check body decides a claim without a direction before the run
        raise RuntimeError(f"{cid}: the criterion was reached without a claimed direction")
    rows = _typed(run.one)
    if ctx.is_mutant(DIST_OFFSET):
        for r in rows:
            if r["schedule"] == "prism":
                r["D_1"] = float(r["D_1"]) + int(r["T"]) / 2
    res = distance_verdict(rows, sign)
    f, w = res["first"], res["wide"]
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
    ev = f"the claim read: {E2_SIGN} = {read}. " + _locality_evidence(res, ctx.profile)
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
        "ylabel": "ΔD_l (tokens)",
        "logx": False,
        "logy": False,
    }
    return Verdict(
        cid,
        res["verdict"],
        ev,
        covered=covered,
        measured={
            "delta_D1": {k: f[k] for k in ("mean", "lo", "hi", "sd", "needed")},
            "wide_delta_D1": {k: w[k] for k in ("mean", "lo", "hi")},
        },
        claimed={
            E2_SIGN: sign,
            "delta_D1": {-1: "negative", 1: "positive"}.get(sign, "0"),
            f"delta_D{res['base_layer']}": _flip_side(sign),
        },
        rows=table,
        plot=plot,
        witness=None
        if res["verdict"] != "inconsistent"
        else {"delta_D1": res["per_layer"][("prism", 1)]["diffs"]},
        scope=f"surrogate: direction only (the claim's sign of ΔD_l early, and the flip at "
        f"h_base); a {cfg['steps']}-step character-level LM ({_size(rows)}) with "
        f"L = {len(res['schedules']['prism'])} (Prism {res['schedules']['prism']}) and "
        f"T = {cfg['T']} stands in for the paper's 12-24 layer models at T = 1024; the "
        "widest-head layer and the first layer at h_base are tested, the 'coincide late' part "
        "is reported only",
    )


#: PR-E2's evidence: prism_paired, gated on the uniform baseline, the per-layer distance criterion
E2_EVIDENCE = _paired_evidence(_locality_criterion)


@check(
    "PR-E2",
    mutants={
        DIST_OFFSET: "every Prism cell's D_1 read T/2 tokens too far (e.g. the distance "
        "measured on the wrong query rows)",
    },
    evidence=E2_EVIDENCE,
)
def attention_locality(ctx: Context, cid):
    """ΔD_l = D_l(A) - D_l(uniform) per layer and paired seed on the fixed validation windows of
    prism_paired (:func:`distance_verdict`), with the uniform-wide control, after the shared
    training-adequacy gate on the uniform baseline (:func:`_paired_gate`)."""
    sign, read, why = _claimed_sign(claim(cid), E2_SIGN)
    if sign is None:  # no direction to compare: decided without the run
        return Verdict(
            cid,
            "inconsistent",
            f"the claim read: {E2_SIGN} = {read}; it states no usable direction: {why}",
            scope="partial: direction only (the claim's sign); no direction to compare",
        )
    return trained_verdict(ctx, cid, E2_EVIDENCE)
