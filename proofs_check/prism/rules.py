"""The schedule rules and Table 4 (PR-S), and Table 5, the ablation (PR-S4, PR-S5, PR-S6,
PR-A1, PR-A2): orderings the paper reports, read as ordinal relations."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import sympy as sp

from approxtheory import claim
from approxtheory.errors import RegimeError

from .._core import Context, Verdict, check
from ._common import _commas, _named, _seq

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


#: PR-S's cells on the other side of h_l <= h_base: the (d, L) at which every
#: schedule obeying rules 1-3 is enumerated, for every h_base | d (quick, full)
ENUMERATED = (((64, 3), (768, 3)), ((64, 4), (768, 3), (1024, 3), (1536, 3)))


def _divisors(d: int) -> list[int]:
    return [h for h in range(1, d + 1) if d % h == 0]


def _runs(sched) -> str:
    """A schedule as evidence text, runs of 3 or more written hxN: ``3,3,6,6,8,8,12x5,16``."""
    return ",".join(
        f"{h}x{n}" if n > 2 else ",".join([str(h)] * n)
        for h, n in ((h, len(list(g))) for h, g in itertools.groupby(sched))
    )


def _broken_rules(d: int, h_base: int, sched) -> list[str]:
    """The rules 1-3 (the paper's definition, §2.1) that ``sched`` breaks, read from the rules
    themselves (not from the claim)."""
    return [
        rule
        for rule, ok in (
            ("rule 1 (h_l | d)", all(d % h == 0 for h in sched)),
            ("rule 2 (h_1 <= ... <= h_L)", list(sched) == sorted(sched)),
            ("rule 3 (h_L = h_base)", sched[-1] == h_base),
        )
        if not ok
    ]


def _other_side(ctx: Context, c) -> dict:
    """Both sides of h_l <= h_base. Named: each Table 4 schedule with one layer raised to the
    next divisor of d above h_base (its last layer: rule 3 broken; its first h_base layer: rule
    2 broken). Enumerated: per (d, L) of :data:`ENUMERATED` and h_base | d, the head counts
    h | d that occur in some schedule obeying rules 1-3 (every one enumerated) against those the
    claim's regime admits. ``admitted``: the (d, h_base, h_l) the regime admits although no
    valid schedule has them (each with a schedule that breaks a rule); ``rejected``: the reverse
    (a valid schedule's head count outside the regime)."""
    named, admitted, rejected = [], [], []
    for name, (d, L, hb, sched) in TABLE4.items():
        up = min(h for h in _divisors(d) if h > hb)
        first = sched.index(hb)
        for where, i in (("last layer", L - 1), ("first h_base layer", first)):
            bad = list(sched)
            bad[i] = up
            named.append(
                {
                    "schedule": f"{name} with its {where} at {up} heads",
                    "d": d,
                    "h_base": hb,
                    "heads": _runs(bad),
                    "broken": _broken_rules(d, hb, bad),
                    "admitted": all(c.in_regime(d=d, h_l=h, h_base=hb) for h in bad),
                }
            )
    cells = 0
    for d, L in ctx.pick(*ENUMERATED):
        divs = _divisors(d)
        for hb in divs:
            valid = {
                h
                for pre in itertools.combinations_with_replacement(
                    [h for h in divs if h <= hb], L - 1
                )
                for h in (*pre, hb)
                if not _broken_rules(d, hb, (*pre, hb))
            }
            for h in divs:
                cells += 1
                inside = c.in_regime(d=d, h_l=h, h_base=hb)
                if inside and h not in valid:
                    example = (h,) * (L - 1) + (hb,)
                    admitted.append(
                        {
                            "d": d,
                            "L": L,
                            "h_base": hb,
                            "h_l": h,
                            "schedule": _runs(example),
                            "broken": _broken_rules(d, hb, example),
                        }
                    )
                elif not inside and h in valid:
                    rejected.append({"d": d, "L": L, "h_base": hb, "h_l": h})
    return {
        "named": named,
        "admitted": admitted,
        "rejected": rejected,
        "cells": cells,
        "grid": ", ".join(f"({d}, {L})" for d, L in ctx.pick(*ENUMERATED)),
    }


def _table4(ctx: Context) -> dict:
    table = {k: (d, L, hb, list(h)) for k, (d, L, hb, h) in TABLE4.items()}
    if ctx.is_mutant("medium-swapped"):
        s = table["medium"][3]
        s[2], s[3] = s[3], s[2]
    return table


def _table4_problems(ctx: Context, c) -> tuple[list[str], dict]:
    """Rules 1-3 and the reshape invariant h_l · d_head = d on the paper's three schedules (the
    declared mutant's transcription where active): (the problems, the per-head widths)."""
    problems, dims = [], {}
    for name, (d, L, hb, sched) in _table4(ctx).items():
        for h in sched:
            if not c.in_regime(d=d, h_l=h, h_base=hb):
                problems.append(f"{name}: h={h} outside the regime")
        if sched != sorted(sched) or sched[-1] != hb or len(sched) != L:
            problems.append(f"{name}: not monotone / does not end at h_base")
        widths = {}
        for h in sorted(set(sched)):
            if not c.in_regime(d=d, h_l=h, h_base=hb):
                continue  # reported above
            w = c.evaluate("d_head", d=d, h_l=h, h_base=hb)
            widths[h] = w
            if sp.nsimplify(w) * h != d:  # every matrix keeps its shape: h_l heads of d_head
                problems.append(f"{name}: h={h} heads of d_head={w} do not tile d={d}")
        dims[name] = sorted((float(w) for w in widths.values()), reverse=True)
    return problems, dims


def _wrong_side(side: dict) -> list[str]:
    """What the claim's regime gets wrong on the other side of h_l <= h_base
    (:func:`_other_side`): raised schedules it admits whole, head counts it admits that no valid
    schedule has, and valid head counts it rejects (3 of each at most)."""
    return (
        [
            f"the claim's regime admits every layer of {x['schedule']} ({x['heads']}; d = "
            f"{x['d']}, h_base = {x['h_base']}), which breaks {' and '.join(x['broken'])}"
            for x in side["named"]
            if x["admitted"]
        ]
        + [
            f"the claim's regime admits h_l = {x['h_l']} > h_base = {x['h_base']} at d = "
            f"{x['d']}, which no valid schedule of {x['L']} layers has (e.g. {x['schedule']} "
            f"breaks {' and '.join(x['broken'])})"
            for x in side["admitted"][:3]
        ]
        + [
            f"the claim's regime rejects h_l = {x['h_l']} at d = {x['d']}, h_base = "
            f"{x['h_base']}, which a valid schedule of {x['L']} layers has"
            for x in side["rejected"][:3]
        ]
    )


def _side_text(side: dict, n_in: int) -> str:
    """PR-S's text on the other side of h_l <= h_base (``n_in``: the raised schedules the
    regime admits whole)."""
    n_out = len(side["named"]) - n_in
    return (
        f"The other side of h_l <= h_base (built here): {len(side['named'])} Table 4 schedules "
        "with one layer raised to the next divisor of d above h_base ("
        + "; ".join(f"{x['schedule']}: {x['heads']}" for x in side["named"][::2])
        + "; and each with its first h_base layer raised instead) break rule 3 or rule 2; "
        f"{n_out} of them have a layer outside the claim's regime. Over every h_base | d and "
        f"h_l | d at (d, L) = {side['grid']} ({side['cells']} cells) the head counts that occur "
        "in some schedule obeying rules 1-3 (all enumerated) are "
        + (
            "exactly those the claim's regime admits"
            if not side["admitted"] and not side["rejected"]
            else f"NOT those the claim's regime admits ({len(side['admitted'])} admitted "
            f"outside, {len(side['rejected'])} rejected inside)"
        )
    )


@check("PR-S", mutants=RULE_MUTANTS)
def schedule_rules(ctx: Context, cid):
    """Rules 1-3 (the definition) on the paper's three schedules, and the reshape invariant
    h_l · d_head = d read from the catalogue's d_head (rules 4-6: PR-S4, PR-S5, PR-S6); the
    claim's regime on both sides of h_l <= h_base (:func:`_other_side`): schedules that break a
    rule must have a layer outside it, the head counts of valid schedules must be inside."""
    c = claim("PR-S")
    if ctx.is_mutant("divisibility-dropped"):
        c = dataclasses.replace(c, regime=tuple(r for r in c.regime if not r.expr.has(sp.Mod)))
    problems, dims = _table4_problems(ctx, c)
    try:
        c.evaluate(d=768, h_l=5, h_base=12)
        rejects = False
    except RegimeError:
        rejects = True
    side = _other_side(ctx, c)
    if any(not x["broken"] for x in side["named"]):  # the construction itself is wrong
        raise AssertionError(f"PR-S: a raised schedule obeys rules 1-3: {side['named']}")
    named_in = [x for x in side["named"] if x["admitted"]]
    wrong_side = _wrong_side(side)
    side_txt = _side_text(side, len(named_in))
    ok = not problems and rejects and not wrong_side
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        "the paper's three schedules (Table 4) "
        + ("satisfy" if not problems else "do NOT all satisfy")
        + " rules 1-3 (divisibility, monotonicity, ending at h_base) and h_l heads of the "
        "catalogue's d_head tile d in every layer"
        + ("; h = 5 at d = 768 is rejected" if rejects else "; h = 5 at d = 768 is NOT rejected")
        + (f"; problems: {'; '.join(problems)}" if problems else "")
        + f". Per-head widths {_named(dims)}. {side_txt}"
        + (f". Failed on the other side: {'; '.join(wrong_side)}" if wrong_side else ""),
        covered="Small/Medium/Large schedules of Table 4; rules 1-3 and d_head; the other side "
        "of h_l <= h_base: each Table 4 schedule with its last or its first h_base layer raised "
        f"to the next divisor of d, and every schedule obeying rules 1-3 at (d, L) = "
        f"{side['grid']} for every h_base | d ({side['cells']} (d, h_base, h_l) cells)",
        witness=(named_in + side["admitted"] + side["rejected"] or [None])[0],
        scope="partial: rules 1-3 (the definition) and the per-head width d / h_l on the "
        "paper's three Table 4 schedules, and the regime's h_l <= h_base on both sides (raised "
        "Table 4 schedules; every valid schedule enumerated at small L); the empirical design "
        "rules 4-6 are PR-S4, PR-S5, PR-S6",
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


def _claimed_sign(c, name: str) -> tuple[int, str]:
    """The sign a claim states as its expression ``name`` (a number: the sign of the validation
    loss of one row minus another's; the paper gives no loss values) and the expression as
    read (sp.sstr)."""
    e = c.expr(name)
    return int(sp.sign(sp.sympify(c.evaluate(name)))), sp.sstr(e)


def _claimed_relation(sign: int) -> str:
    """What :func:`compare` (a, b) must give when the claim says sign(loss_a - loss_b) =
    ``sign``: 'better' for -1, 'worse' for +1, 'undetermined' for 0 (no difference stated)."""
    return {-1: "better", 1: "worse"}.get(sign, "undetermined")


def _rank_text(want: str) -> str:
    """How a claimed relation reads in the evidence ('better', 'worse', or no difference)."""
    return want if want != "undetermined" else "neither better nor worse (no difference claimed)"


def _ordinal_verdict(results: list[tuple[str, str]], want: str = "better") -> tuple[str, list]:
    """consistent-empirical when every tested pair came out as claimed (``want``: the relation
    :func:`compare` must give, from the claim's sign), inconsistent on any pair the table
    orders the other way (or states both ways), not-checkable when the table decides none. A
    claim of no difference (``want`` 'undetermined') is contradicted by any pair the table
    orders, and never borne out (the table states no ties)."""
    bad = [
        (w, r)
        for w, r in results
        if r == "contradictory" or (r in ("better", "worse") and r != want)
    ]
    if bad:
        return "inconsistent", bad
    if want == "undetermined" or not any(r == want for _, r in results):
        return "not-checkable", []
    return "consistent-empirical", []


def _pairs_text(bad: list) -> str:
    """What contradicts an ordering claim as evidence text: ``a vs b: worse; ...`` (an entry is
    a (pair, relation) of :func:`_ordinal_verdict` or a sentence)."""
    return "; ".join(b if isinstance(b, str) else f"{b[0]}: {b[1]}" for b in bad)


ORDINAL_SCOPE = (
    "partial: direction only (the claim's loss sign; the paper gives no loss values): against "
    "the digest's summary of Table 5 (Small only, relations between schedules, no loss values "
    "and no s.d., 7 of its 8 rows named): whether the paper's own reported relations bear the "
    "claim out; whether the differences exceed seed noise is not in the digest"
)


#: the declared mutant of the ordinal checks: Table 5's relations read the wrong way round
#: (better and worse exchanged: a bookkeeping bug) must make each ordering claim inconsistent
REVERSED = {"relations-reversed": "Table 5's relations read the wrong way round (better <-> worse)"}


def _relations(ctx: Context) -> tuple:
    """Table 5's stated relations, reversed under the ``relations-reversed`` mutant."""
    if ctx.is_mutant("relations-reversed"):
        return tuple((b, a) for a, b in ABLATION_RELATIONS)
    return ABLATION_RELATIONS


def _table_text() -> str:
    return f"{len(ABLATION)} named rows, {len(set(ABLATION_RELATIONS))} stated relations"


def _single_layer_worse(relations) -> list[str]:
    """Same-start pairs of Table 5 in which a single-layer ramp (at least two pre-baseline head
    counts, each held one layer) ranks worse than a schedule whose every pre-baseline head count
    is held two layers or more: 'single-layer steps did worse' (digest §2.2 rule 4, §8)."""
    out = []
    for a, ra in ABLATION.items():
        ba = _pre_baseline_blocks(ra["heads"], ABLATION_HB)
        if not ba or min(ba) < 2:
            continue
        for b, rb in ABLATION.items():
            bb = _pre_baseline_blocks(rb["heads"], ABLATION_HB)
            if ra["heads"][0] == rb["heads"][0] and len(bb) >= 2 and max(bb) == 1:
                if compare(relations, a, b) == "better":
                    out.append(f"{b} (worse than {a})")
    return out


def _single_layer_text(lo: int, worse: list[str]) -> str:
    """PR-S4's text on the band's lower end against the single-layer ramps Table 5 ranks worse
    (:func:`_single_layer_worse`)."""
    if not worse:
        return ". Table 5 ranks no same-start single-layer ramp worse, so block_min is not held"
    return (
        f". Table 5 ranks same-start single-layer ramps worse ({'; '.join(worse)}), so the band "
        f"must exclude blocks of one layer (block_min > 1): block_min = {lo}"
        + (" excludes them" if lo > 1 else " ADMITS them")
    )


@check("PR-S4", mutants=REVERSED)
def rule_blocks(ctx: Context, cid):
    """Rule 4 against Table 5: every same-start pair of a blocked schedule (every pre-baseline
    head count held block_min to block_max layers, read from the claim) and a single-layer ramp
    must rank as the claim's loss sign says (blocked better for -1); Table 4's schedules must
    hold their blocks for block_min to block_max layers."""
    c = claim(cid)
    sign, read = _claimed_sign(c, "loss_sign_blocked_vs_ramp")
    lo, hi = int(c.evaluate("block_min")), int(c.evaluate("block_max"))
    want = _claimed_relation(sign)
    pairs = []
    for a, ra in ABLATION.items():
        for b, rb in ABLATION.items():
            ba = _pre_baseline_blocks(ra["heads"], ABLATION_HB)
            bb = _pre_baseline_blocks(rb["heads"], ABLATION_HB)
            if a == b or not ba or not bb or ra["heads"][0] != rb["heads"][0]:
                continue
            if lo <= min(ba) and max(ba) <= hi and max(bb) == 1 and len(bb) >= 2:
                pairs.append((f"{a} vs {b}", compare(_relations(ctx), a, b)))
    v, bad = _ordinal_verdict(pairs, want)
    t4 = {k: sorted(set(_pre_baseline_blocks(h, hb))) for k, (_, _, hb, h) in TABLE4.items()}
    off = {k: b for k, b in t4.items() if not b or min(b) < lo or max(b) > hi}
    if off and v != "inconsistent":
        v, bad = "inconsistent", [f"Table 4 {k} blocks {b}" for k, b in off.items()]
    worse = _single_layer_worse(_relations(ctx))
    if worse and lo <= 1 and v != "inconsistent":
        v, bad = "inconsistent", [f"block_min = {lo} admits single-layer blocks"]
    return Verdict(
        cid,
        v,
        f"the claim read: loss_sign_blocked_vs_ramp = {read} (the blocked schedule must rank "
        f"{_rank_text(want)}), blocks of block_min = {lo} to block_max = {hi} layers. "
        "Same-start pairs of a blocked schedule and a single-layer ramp in Table 5: "
        f"{'; '.join(f'{w}: blocked ranks {r}' for w, r in pairs) or 'none'}"
        + (f"; contradicted by {_pairs_text(bad)}" if bad else "")
        + _single_layer_text(lo, worse)
        + f". Table 4's pre-baseline blocks (layers per head count): {_named(t4, _commas)} "
        f"(rule: {lo} to {hi}). "
        "Evidence per pair: three seeds per row, no s.d. (the digest), so each 'better' is the "
        "paper's mean, not a tested difference",
        covered=f"Table 5 as the digest summarises it ({_table_text()}); Table 4",
        scope=ORDINAL_SCOPE + "; the block band is read from the claim too",
        rows=[{"pair": w, "blocked_ranks": r} for w, r in pairs],
    )


@check(
    "PR-S5",
    mutants={"first-stage-as-base": "h_base read as the schedule's first head count (a bug)"},
)
def rule_baseline_half(ctx: Context, cid):
    """Rule 5 on every schedule the paper gives whole (Table 4, Table 5's named rows): at
    least min_fraction_at_base (read from the claim) of the layers at h_base."""
    c = claim(cid)
    frac = sp.nsimplify(c.evaluate("min_fraction_at_base"))
    read = sp.sstr(c.expr("min_fraction_at_base"))
    rows, bad = [], []
    named = {f"Table 4 {k}": (hb, h) for k, (_, _, hb, h) in TABLE4.items()}
    named |= {f"Table 5 {k}": (ABLATION_HB, r["heads"]) for k, r in ABLATION.items() if r["whole"]}
    if ctx.is_mutant("first-stage-as-base"):
        named = {k: (h[0], h) for k, (_, h) in named.items()}
    for name, (hb, h) in named.items():
        at_base = sum(x == hb for x in h)
        need = frac * len(h)  # exact (a rational times an integer)
        rows.append({"schedule": name, "L": len(h), "at_h_base": at_base, "needed": float(need)})
        if at_base < need:
            bad.append(f"{name}: {at_base} of {len(h)} layers at h_base, fewer than {need}")
    least = min(sp.Rational(r["at_h_base"], r["L"]) for r in rows)
    tight = [str(r["schedule"]) for r in rows if sp.Rational(r["at_h_base"], r["L"]) == least]
    return Verdict(
        cid,
        "inconsistent" if bad else "consistent-empirical",
        f"the claim read: min_fraction_at_base = {read}. Layers at h_base: "
        + ", ".join(f"{r['schedule']} {r['at_h_base']}/{r['L']}" for r in rows)
        + (
            f"; below {read} of L: {'; '.join(bad)}"
            if bad
            else f" (the least fraction {least}, at {', '.join(tight)})"
        )
        + ". No schedule the paper ran breaks the rule, so its data cannot say whether "
        f"breaking it hurts: that needs a row with fewer than {read} of its layers at h_base "
        "(the digest lists 'schedules that never reach h_base' as untested)",
        covered=f"{len(rows)} schedules given whole (Table 4; Table 5 as the digest names them)",
        scope="partial: the paper's own schedules follow the rule; its benefit is untested "
        "by the paper (no row breaks it)",
        measured={"least_fraction_at_base": float(least)},
        claimed={"min_fraction_at_base": float(frac)},
        # the room the claimed least fraction has below the least fraction found
        slack=float(least / frac) if frac > 0 else None,
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


@check("PR-A1", mutants=REVERSED)
def ablation_all_progressive_beat_uniform(ctx: Context, cid):
    """Every progressive row of Table 5 against uniform, in the direction the claim's loss
    sign states (progressive better for -1)."""
    sign, read = _claimed_sign(claim(cid), "loss_sign_progressive_vs_uniform")
    want = _claimed_relation(sign)
    res = [
        (k, compare(_relations(ctx), k, "uniform"))
        for k in ABLATION
        if k != "uniform" and ABLATION[k]["progressive"]
    ]
    v, bad = _ordinal_verdict(res, want)
    return Verdict(
        cid,
        v,
        f"the claim read: loss_sign_progressive_vs_uniform = {read} (each progressive row "
        f"must rank {_rank_text(want)}). Each progressive row against uniform 12 x 12 in Table 5: "
        + "; ".join(f"{k} ranks {r}" for k, r in res)
        + (f"; contradicted: {_pairs_text(bad)}" if bad else "")
        + ". The eighth row is not named by the digest; effect sizes 'a few tenths of a percent' "
        "with no s.d.",
        covered=f"Table 5 as the digest summarises it ({_table_text()})",
        scope=ORDINAL_SCOPE,
        rows=[{"schedule": k, "against_uniform": r} for k, r in res],
    )


@check("PR-A2", mutants=REVERSED)
def ablation_start_width(ctx: Context, cid):
    """The start-width rows of Table 5 in order of h_1, each against the next wider one, in the
    direction the claim's loss sign states (+1: the loss grows with h_1, the narrower start
    ranks better)."""
    sign, read = _claimed_sign(claim(cid), "loss_sign_wider_start")
    want = _claimed_relation(-sign)  # compare(narrower, wider): sign(loss_narrower - loss_wider)
    starts = sorted((r["start"], k) for k, r in ABLATION.items() if "start" in r)
    res = [
        (f"h_1 = {s1} ({a}) vs h_1 = {s2} ({b})", compare(_relations(ctx), a, b))
        for (s1, a), (s2, b) in itertools.pairwise(starts)
    ]
    v, bad = _ordinal_verdict(res, want)
    return Verdict(
        cid,
        v,
        f"the claim read: loss_sign_wider_start = {read} (the narrower start must rank "
        f"{_rank_text(want)}). Start-width rows of Table 5 in order of h_1, the narrower "
        "start ranking: "
        + "; ".join(f"{w}: {r}" for w, r in res)
        + (f"; contradicted: {_pairs_text(bad)}" if bad else "")
        + ". Confounded: these rows also differ in their later stages (digest §10 item 5)",
        covered=f"Table 5 as the digest summarises it ({_table_text()})",
        scope=ORDINAL_SCOPE + "; the rows differ in more than h_1",
        rows=[{"pair": w, "narrower_start_ranks": r} for w, r in res],
    )
