"""The rules ``verify --mutants`` holds a passing verdict to: the declared mutants of its check
and the claim mutants generated from its formula (:mod:`approxtheory.catalogue.mutate`) are
run (``run(ctx, label, claim_mutant=None)``: the record of the check under that context, from
the cache or computed, :func:`approxtheory.verify._cached_or_run`), a mutant is caught only by
a refuted or inconsistent verdict, a check that raises on one is a defect, and a verdict a
required mutant survives is downgraded one step; :func:`mutant_summary` counts it all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

MUTANT_NOTE = (
    "[downgraded from {v}: none of the declared mutants ({names}) flips this check, "
    "so it cannot earn a {v} verdict] "
)

#: what a passing verdict becomes when a required mutant survives it: a verified verdict keeps
#: what its evidence shows (consistent with the claim); an empirical one, which was only ever
#: "consistent", says nothing about the claim when its check cannot fail
DOWNGRADE = {
    "verified-symbolic": "consistent-empirical",
    "verified-numeric": "consistent-empirical",
    "consistent-empirical": "not-checkable",
}


def _downgrade(rec: dict, note: str) -> None:
    """``rec``'s passing verdict downgraded in place (:data:`DOWNGRADE`), ``note`` first in its
    evidence."""
    rec["evidence"] = note + rec["evidence"]
    rec["downgraded_from"] = rec.get("downgraded_from") or rec["verdict"]
    rec["verdict"] = DOWNGRADE[rec["downgraded_from"]]  # one step from the check's verdict


def _mutant_result(reg, original: str, m: dict, **fields) -> dict:
    """One mutant's entry: the verdict it produced, whether that falsifies ``original`` (a
    change to refuted or inconsistent; :func:`approxtheory.proofs_check.flips`) and, when the
    check raised, the error: a defect of the check, never a catch."""
    out = {**fields, "verdict": m["verdict"], "flips": reg.flips(original, m["verdict"])}
    if m["verdict"] == "error":
        out["error"] = str(m.get("evidence", ""))[:300]
    return out


def apply_mutants(reg, run, c, rec: dict, ctx) -> dict:
    """Run the claim's declared mutants; name those that flip its verdict (``falsified_by``)
    and downgrade a verified verdict that none of them flips."""

    declared = reg.MUTANTS.get(c.id, {})
    results = []
    for name, what in declared.items():
        m = run(
            replace(ctx, mutant=name),
            f"{c.id}~{name}",
        )
        results.append(_mutant_result(reg, rec["verdict"], m, name=name, breaks=what))
    rec = dict(rec)
    rec["mutant_results"] = results
    rec["falsified_by"] = [r["name"] for r in results if r["flips"]]
    errors = [r["name"] for r in results if r["verdict"] == "error"]
    if errors:
        rec["mutant_errors"] = errors
    # a verified verdict needs a declared mutant that flips it; an empirical one needs one when
    # it declares any, or when its claim has no formula (no claim mutant can then test it)
    needs = rec["verdict"].startswith("verified") or bool(declared) or not c.expressions
    if rec["verdict"] in DOWNGRADE and needs and not rec["falsified_by"]:
        _downgrade(rec, MUTANT_NOTE.format(v=rec["verdict"], names=", ".join(declared) or "none"))
    return rec


#: a rate mutant that a bound this loose (claimed / worst case found) survives is not known to
#: be false, so its survival alone does not downgrade a verified verdict (the slack is reported)
LOOSE_SLACK = 2.0

CLAIM_MUTANT_NOTE = (
    "[downgraded from {v}: {why}, so this check cannot tell a false claim from a true one] "
)


def apply_claim_mutants(reg, run, c, rec: dict, ctx) -> dict:
    """Run the generated mutants of the claim itself (:mod:`approxtheory.catalogue.mutate`)
    against its check; record each one's verdict, whether it flipped and whether the check read
    the mutated formula; downgrade a verified verdict that survives the scale mutant (its bound
    put below the worst case the check found) or every rate mutant."""

    from .catalogue.mutate import claim_mutants, pivot_mutants
    from .catalogue.points import blind_spots, merge

    rec = dict(rec)
    if not c.expressions:
        rec["claim_mutants"] = []
        rec["claim_mutant_note"] = "the claim has no formula: no claim mutant to generate"
        return rec
    generated = claim_mutants(c, slack=rec.get("slack"), seed=ctx.seed)
    results: list[dict] = []
    read: set[str] = set()
    points: list[dict] = []

    def run_all(mutants) -> None:
        for m in mutants:
            r = run(
                replace(ctx, claim_mutant=m.name),
                f"{c.id}~claim~{m.name.replace(':', '_').replace('/', '_')}",
                claim_mutant=m,
            )
            results.append(
                {
                    **_mutant_result(reg, rec["verdict"], r, name=m.name, kind=m.kind, what=m.what),
                    "formula_read": bool(r.get("formula_read", False)),
                    "required": m.required,
                }
            )
            read.update(r.get("names_read", []))
            if r["verdict"] != "error":
                points.append(r.get("points_read") or {})

    run_all(generated)
    # the formula where the check read it: a symbol read at one value (or two read only in
    # proportion) is a blind spot; the pivot mutants agree with the claim at every point read
    spots = blind_spots(merge(points)) if points else []
    if spots:
        rec["blind_spots"] = [_spot_text(s) for s in spots]
        if rec["verdict"] in DOWNGRADE or rec.get("downgraded_from"):
            run_all(pivot_mutants(c, spots, slack=rec.get("slack")))
    rec["claim_mutants"] = results
    if results:  # what no run of the check read: a formula nothing tests
        rec["unread_expressions"] = [n for n in c.expressions if n not in read]
    errors = [f"claim {r['name']}" for r in results if r["verdict"] == "error"]
    if errors:
        rec["mutant_errors"] = list(rec.get("mutant_errors", [])) + errors
    if not results:
        rec["claim_mutant_note"] = (
            "no mutant could be generated from the formula (no power, product or exponential "
            "of a symbol, no regime condition)"
        )
    elif not any(r["formula_read"] for r in results):
        rec["claim_mutant_note"] = rec.get("formula_note") or (
            "the check read none of the mutated formulas (it does not read the catalogue's "
            "formula of this claim while it runs)"
        )
    rec["falsified_by"] = list(rec.get("falsified_by", [])) + [
        f"claim {r['name']}" for r in results if r["flips"]
    ]
    if (rec.get("downgraded_from") or rec["verdict"]) in DOWNGRADE:
        _downgrade_survived(c, rec, results)
    return rec


def _spot_text(spot: tuple) -> str:
    """A blind spot (:func:`approxtheory.catalogue.points.blind_spots`) in words."""
    if spot[0] == "fixed":
        return f"{spot[1]}: {spot[2]} read only at {spot[3]}"
    return f"{spot[1]}: {spot[2]}, {spot[3]} read only in the ratio {spot[4]}"


def _downgrade_survived(c, rec: dict, results: list[dict]) -> None:
    """A passing ``rec`` downgraded in place when a requirement survives (see
    :func:`apply_claim_mutants`): its required scale mutants, every rate mutant (one direction
    must flip), the paper's constants beside a fitted law (one must flip), every required
    regime mutant (a condition whose other side the check builds). A verdict whose scope says
    what it tests narrows this: ``direction only`` holds it to the sign mutant alone (where
    the check reads the formula; otherwise its declared mutants carry the direction),
    ``scaling only`` to the rate mutants; the others are then reported, not required."""
    scope = str(rec.get("scope", ""))
    if "direction only" in scope or "scaling only" in scope:
        _downgrade_narrowed(rec, results, scope)
        return
    why = []
    scale = [r for r in results if r["kind"] == "scale"]
    rate = [r for r in results if r["kind"] == "rate" and r["required"]]
    const = [r for r in results if r["kind"] == "const" and r["required"]]
    regime = [r for r in results if r["kind"] == "regime" and r["required"]]
    pivots: dict[str, list[dict]] = {}
    for r in results:
        if r["kind"] == "pivot" and r["required"]:
            pivots.setdefault(r["name"].split(":", 1)[1], []).append(r)
    required = [r for r in scale if r["required"]]
    if required and not any(r["flips"] for r in required):
        why.append(f"it still passes with the claim's formula {_scale_where(c, rec)}")
    if rate and not any(r["flips"] for r in rate):
        slack = rec.get("slack")
        if slack is None or slack < LOOSE_SLACK:
            why.append("it still passes with the claim's rate exponent moved either way")
        else:
            for r in rate:
                r["required"] = False
            rec["claim_mutant_note"] = (
                f"the rate mutants survived a bound loose by x{slack:.3g} on what the "
                f"check found (a loose bound is not made false by a rate shift; the scale "
                f"mutant is)"
            )
    flipped = [r for r in results if r["kind"] == "kind" and r["required"]]
    if flipped and not any(r["flips"] for r in flipped):
        why.append(f"it still passes with the bound's side flipped ({c.kind} read as the other)")
    if const and not any(r["flips"] for r in const):
        why.append("it still passes with the paper's numbers beside the fitted law doubled")
    for r in regime:
        if not r["flips"]:
            why.append(f"it still passes with {r['what']}")
    why += _pivots_survived(pivots)
    if why:
        _downgrade(rec, CLAIM_MUTANT_NOTE.format(v=rec["verdict"], why="; ".join(why)))


def _downgrade_narrowed(rec: dict, results: list[dict], scope: str) -> None:
    """:func:`_downgrade_survived` for a verdict whose scope says ``direction only`` (the sign
    mutant required) or ``scaling only`` (the rate mutants required); the others reported."""
    why = []
    if "direction only" in scope:
        what = "the effect's direction reversed"
        keep = [r for r in results if r["kind"] == "sign" and r["formula_read"]]
        if not keep and not rec.get("mutant_results"):
            why.append("its scope says direction only, but no mutant reverses the direction")
    else:
        what = "the claim's exponent moved either way"
        keep = [r for r in results if r["kind"] == "rate"]
        if not keep:
            why.append("its scope says scaling only, but no rate mutant could be made")
    for r in results:
        r["required"] = r in keep
    if keep and not any(r["flips"] for r in keep):
        why.append(f"it still passes with {what}")
    if why:
        _downgrade(rec, CLAIM_MUTANT_NOTE.format(v=rec["verdict"], why="; ".join(why)))


def _scale_where(c, rec: dict) -> str:
    """Where the surviving scale mutants put the claim's formula, in words. An upper bound must
    fail when put below the worst case found, a lower bound when put above it; for any other
    claim one of the two directions must fail (a formula with an unspecified constant is not
    made false by a factor: none is required)."""
    side = {"upper": "scale:", "construction": "scale:", "lower": "scale-up:"}.get(c.kind)
    if side is None:
        return "scaled past the room it found, either way"
    if rec.get("slack") is not None:
        return (
            f"{'above' if c.kind == 'lower' else 'below'} the worst case it found "
            f"(slack {rec['slack']:.3g})"
        )
    return f"{'doubled' if c.kind == 'lower' else 'halved'} (it reports no slack)"


def _pivots_survived(pivots: dict[str, list[dict]]) -> list[str]:
    """A reason per blind spot (``name:x``) none of whose pivot mutants flipped the verdict."""
    why = []
    for spot, ms in pivots.items():
        if not any(r["flips"] for r in ms):
            name, x = spot.split(":", 1)
            why.append(
                f"it still passes with {name}'s dependence on {x} changed (both ways) where it "
                f"does not look: it reads {x} at one value only"
                if "/" not in x
                else f"it still passes with {name}'s dependence on {x} changed (both ways) off "
                f"the one ratio it reads"
            )
    return why


def mutant_summary(records: Sequence[dict]) -> dict:
    """What ``verify --mutants`` caught, over the passing claims it ran, counted by the rules a
    verdict is held to: per claim, the declared mutants (one of them must flip), the rate
    mutants (one direction must flip), the required scale mutants and, for a verdict that tests
    the direction only, the sign mutant, each one requirement; caught k of n requirements, the
    ones that survived by claim, the checks that raised on a mutant (defects, never catches)
    and the verdicts downgraded because a requirement survived."""
    caught = total = 0
    surviving: dict[str, list[str]] = {}
    for r in records:
        groups: dict[str, list[dict]] = {}
        if r.get("mutant_results"):
            groups["declared"] = r["mutant_results"]
        for m in r.get("claim_mutants", []):
            if m.get("required"):  # each required regime mutant is its own requirement
                key = (
                    f"regime {m['name']}"
                    if m["kind"] == "regime"
                    else f"pivot {m['name'].split(':', 1)[1]}"  # one per blind spot
                    if m["kind"] == "pivot"
                    else m["kind"]
                )
                groups.setdefault(key, []).append(m)
        for kind, ms in groups.items():
            total += 1
            if any(m["flips"] for m in ms):
                caught += 1
            else:
                names = ", ".join(m["name"] for m in ms)
                surviving.setdefault(r["claim"], []).append(f"{kind} ({names})")
    return {
        "required_caught": caught,
        "required": total,
        "surviving": surviving,
        "errors": {r["claim"]: r["mutant_errors"] for r in records if r.get("mutant_errors")},
        # the claim's expressions that no mutant run of its check read (reported: a descriptive
        # count is not a prediction, but an unread bound is a formula nothing tests)
        "unread": {
            r["claim"]: r["unread_expressions"] for r in records if r.get("unread_expressions")
        },
        # where the checks look: a symbol read at one value, a pair read in one ratio
        "blind": {r["claim"]: r["blind_spots"] for r in records if r.get("blind_spots")},
        "downgraded": {
            r["claim"]: f"{r['downgraded_from']} -> {r['verdict']}"
            for r in records
            if r.get("downgraded_from")
        },
    }


def mutant_summary_line(summary: dict) -> str:
    """:func:`mutant_summary` as the one line ``verify --mutants`` prints."""
    line = f"mutants: required caught {summary['required_caught']}/{summary['required']}"
    if summary["surviving"]:
        line += "; surviving: " + "; ".join(
            f"{c}: {', '.join(ms)}" for c, ms in summary["surviving"].items()
        )
    if summary["errors"]:
        line += "; check errors on mutants (defects): " + "; ".join(
            f"{c}: {', '.join(ms)}" for c, ms in summary["errors"].items()
        )
    if summary.get("unread"):
        line += "; expressions no check run read: " + "; ".join(
            f"{c}: {', '.join(ns)}" for c, ns in summary["unread"].items()
        )
    if summary.get("blind"):
        line += "; formulas read at one value of a symbol: " + "; ".join(
            f"{c}: {', '.join(ns)}" for c, ns in summary["blind"].items()
        )
    if summary["downgraded"]:
        line += "; downgraded: " + ", ".join(f"{c} ({v})" for c, v in summary["downgraded"].items())
    return line
