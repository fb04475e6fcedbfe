"""Trained and shipped evidence beyond P8-P10: HC-P6b (the lower regime), HC-P7 (attention
collisions), HC-P11 (the paper's real-data tables)."""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

import numpy as np
import sympy as sp

from approxtheory import claim
from approxtheory.measure import fit_rate

from .. import _rows
from .._core import (
    Context,
    Verdict,
    check,
    slope_row,
)
from .._gate import TRAINED_NMSE, training_gate
from .._pipeline import Evidence, Run, trained_verdict
from ._common import _claimed_number, sign_direction
from .trained import RECIPE_HINT, _best, _heads_at_least, _reversal

# ----------------------------------------------------------------------------------- HC-P6b
#: HC-P6b's training-adequacy gate: an h = D model counts as trained when its validation NMSE is
#: at most this (the threshold IF-P3 and HC-Conj1 use); a T with no trained h = D model leaves
#: the run undecided, never evidence against the claim
P6B_TRAINED_NMSE = TRAINED_NMSE  # the shared gate's threshold (_gate.py)


def _p6b_seeds(rows, h: int, T: int) -> list[float]:
    """The NMSE of every seed of cell (h, T), sorted (a NaN reads as inf: a failure)."""
    out = []
    for r in rows:
        if int(r["heads"]) == h and int(r["T"]) == T:
            v = float(r["val_nmse"])
            out.append(v if math.isfinite(v) else math.inf)
    return sorted(out)


def p6b_claimed() -> tuple[float, float, str]:
    """HC-P6b's direction and margin as the claim states them: the sign of the one-head NMSE at
    a larger T minus a smaller one (nmse_sign_one_head_in_T) and the least NMSE(h = s) /
    NMSE(h = D) at the largest T (min_ratio_one_head_over_D); NaN where a value is no number;
    and the expressions as read (for the evidence)."""
    sign, r1 = _claimed_number("HC-P6b", "nmse_sign_one_head_in_T")
    ratio, r2 = _claimed_number("HC-P6b", "min_ratio_one_head_over_D")
    sign = sign if math.isnan(sign) else float(np.sign(sign))
    return sign, ratio, f"nmse_sign_one_head_in_T = {r1}, min_ratio_one_head_over_D = {r2}"


def _p6b_direction(ranks: list[float], sign: float) -> tuple[str, str]:
    """(a)'s state for the claimed sign of NMSE(h = s, T1) - NMSE(h = s, T0), from the per-rank
    ratios NMSE(T1) / NMSE(T0), and what it needs (text). +1 (does not fall): holds when every
    ratio is >= 1, refuted when every one is < 1; -1 (falls): holds when every ratio is < 1,
    refuted when every one is >= 1; 0 (no change): refuted when every ratio is on one side of
    1, else mixed (never borne out: no tie is measured); no number: refuted."""
    state = sign_direction(ranks, sign)
    if sign > 0:
        return state, ">= 1 at every rank: no "
    if sign < 0:
        return state, "< 1 at every rank: an "
    if sign == 0:
        return state, "= 1 at every rank: no change, no "
    return state, "a claimed sign (the claim's value is no number) to judge the "


def _p6b_nonfinite(cells: dict) -> str | None:
    """Step 0 of :func:`lower_regime_criterion`: the failed check's text when a tested cell
    holds a NaN, an inf or a 0 (None when every value is finite and positive)."""
    if all(0 < v < math.inf for vs in cells.values() for v in vs):
        return None
    bad = [f"h={h} T={T}" for (h, T), vs in cells.items() if not all(0 < v < math.inf for v in vs)]
    return f"NMSE finite and positive in every tested cell (not in {', '.join(bad)})"


def _p6b_reversed(cells: dict, live: list, trained: dict, D: int, s: int) -> str | None:
    """Step 1's exception: the recipe trains this task at T (an h = s model is below the gate)
    while no h = D model is. The separation is then reversed, which the claim forbids, not an
    untrained run: the failed check's text (None when no T shows it)."""
    reversed_ = [
        (T, min(cells[(s, T)]), min(cells[(D, T)]))
        for T in live
        if not trained[T] and min(cells[(s, T)]) <= P6B_TRAINED_NMSE
    ]
    if not reversed_:
        return None
    return "reversed separation: " + "; ".join(
        f"T = {T}: an h = {s} model trained to {vs:.3g} (<= the gate "
        f"{P6B_TRAINED_NMSE:g}) while the best h = {D} model is at {vD:.3g}"
        for T, vs, vD in reversed_
    )


def _p6b_separation(cells: dict, ks: dict, t0: int, t1: int, D: int, s: int, claimed) -> dict:
    """Steps 2 and 3 of :func:`lower_regime_criterion` on the gated cells: (a) h = s's per-seed
    NMSE from t0 to t1 rank by rank in the claim's direction, (b) h = D at least the claim's
    margin below h = s at t1 for every pair of seeds; each part's state and text, the outcome,
    the effects and the slack."""
    sign, margin = claimed
    a0, a1 = cells[(s, t0)], cells[(s, t1)]
    m = min(len(a0), len(a1))
    # with unequal seed counts the ranks compared are the m smallest of each
    ranks = [a1[j] / a0[j] for j in range(m)]
    a_state, a_need = _p6b_direction(ranks, sign)
    b_D = cells[(D, t1)]
    worst_gap, best_gap = min(a1) / max(b_D), max(a1) / min(b_D)
    b_state = (
        "refuted"
        if math.isnan(margin) or best_gap < margin
        else ("holds" if worst_gap >= margin else "mixed")
    )
    checks = [
        (
            f"(a) h = {s}: per-seed NMSE(T = {t1}) / NMSE(T = {t0}), rank by rank: "
            + ", ".join(f"{r:.3g}" for r in ranks)
            + f" (needs {a_need}improvement as k grows from {ks[t0]:.2f} to "
            f"{ks[t1]:.2f}; {a_state})",
            a_state,
        ),
        (
            f"(b) T = {t1}: NMSE(h = {s}) / NMSE(h = {D}) over every pair of seeds in "
            f"[{worst_gap:.3g}, {best_gap:.3g}] (needs >= {margin:g} for every pair; {b_state})",
            b_state,
        ),
    ]
    states = (a_state, b_state)
    outcome = (
        "consistent"
        if states == ("holds", "holds")
        else "inconsistent"
        if "refuted" in states
        else "mixed"
    )
    return {
        "outcome": outcome,
        "checks": checks,
        "states": {"a": a_state, "b": b_state},
        "effects": {"growth_h_s_worst_rank": min(ranks), "gap_at_Tmax_worst_pair": worst_gap},
        "slack": min(
            [min(r**sign for r in ranks)] * (sign in (1.0, -1.0))
            + [worst_gap / margin] * (margin > 0),
            default=None,
        ),
    }


def _p6b_inconsistent(out: dict, base: dict, t: str, mark, **extra) -> dict:
    """:func:`lower_regime_criterion`'s result when a step fails outright: decided,
    inconsistent, with the failed check ``t`` (marked ``mark``) as its one check."""
    return {
        **out,
        **base,
        "decided": True,
        "outcome": "inconsistent",
        "checks": [(t, mark)],
        "failed": [t],
        **extra,
    }


def lower_regime_criterion(
    rows, D: int, n: int, s: int, claimed: tuple[float, float] | None = None
) -> dict:
    """HC-P6b's stated decision rule (written before the quick profile's result was seen; the
    same rule on every profile). Over the T where HC-T2b's k(T, s, n, D) > 0 (``live``, at
    least two, else ``decided`` is False), with T0 / T1 the smallest / largest live T:

    0. every value finite and positive in the tested cells (NaN / inf / 0 fail: ``inconsistent``);
    1. gate, per model: an h = D model counts as trained when its NMSE <= P6B_TRAINED_NMSE;
       the others are reported and left out (an optimisation failure is not an approximation
       result; the paper's own statistic is the min over seeds). Every live T needs at least
       one trained h = D model, else ``gated`` (undecided at this budget: the run says nothing
       about the separation) -- unless an h = s model at that T is below the gate: the recipe
       trains the task there and the fewer heads won, a reversed separation (``inconsistent``);
    2. (a) h = s does not improve with T, with every seed: the sorted per-seed NMSE at T1 is >=
       that at T0 rank by rank (holds); < at every rank (refuted); else mixed;
    3. (b) at T1, h = D is at least M below h = s for every pair of seeds (trained h = D
       models only): min over seeds of NMSE(s, T1) >= M x max of NMSE(D, T1) (holds);
       max(s) < M x min(D) (no pair has it: refuted); else mixed.

    The direction of (a) and the margin M of (b) are the claim's (``claimed`` = (sign, M),
    read by :func:`p6b_claimed` unless given): nmse_sign_one_head_in_T (+1: as above; see
    :func:`_p6b_direction` for -1 and 0) and min_ratio_one_head_over_D (M = 3).

    ``outcome``: "consistent" (both hold), "inconsistent" (a non-finite cell or a refuted
    part), "gated", "mixed" (the seeds disagree; undecided), "undecided" (< 2 live T). The
    T with k <= 0 are the control, reported and not tested. ``slack``: the room the claim
    has, min of (a)'s worst rank ratio and (b)'s worst pair ratio / M (>= 1 when both
    hold)."""
    sign, margin = claimed if claimed is not None else p6b_claimed()[:2]
    best = _best(rows)
    t2b = claim("HC-T2b")
    Ts = sorted({T for _, T in best})
    ks = {T: float(t2b.evaluate("k", T=T, s=s, n=n, D=D)) for T in Ts}
    live = [T for T in Ts if ks[T] > 0 and (s, T) in best and (D, T) in best]
    all_finite = all(math.isfinite(v) for v in best.values())
    out: dict = {"best": best, "k": ks, "live": live, "Ts": Ts, "checks": [], "slack": None}
    out["R"] = _reversal(best) if all_finite else {}
    base = {"decided": False, "ok": False, "failed": [], "effects": {}, "gate": []}
    if len(live) < 2:
        return {**out, **base, "outcome": "undecided"}
    t0, t1 = live[0], live[-1]
    cells = {(h, T): _p6b_seeds(rows, h, T) for h in (s, D) for T in live}
    # step 0
    t = _p6b_nonfinite(cells)
    if t is not None:
        return _p6b_inconsistent(out, base, t, False)
    # step 1
    untrained = [(T, v) for T in live for v in cells[(D, T)] if v > P6B_TRAINED_NMSE]
    trained = {T: [v for v in cells[(D, T)] if v <= P6B_TRAINED_NMSE] for T in live}
    gate = [(T, cells[(D, T)]) for T in live]
    base["untrained"] = untrained
    if not all(trained.values()):
        t = _p6b_reversed(cells, live, trained, D, s)
        if t is not None:
            return _p6b_inconsistent(out, base, t, "refuted", gate=gate)
        return {**out, **base, "outcome": "gated", "gate": gate}
    # steps 2 and 3
    cells.update({(D, T): trained[T] for T in live})
    sep = _p6b_separation(cells, ks, t0, t1, D, s, (sign, margin))
    checks = sep["checks"]
    return {
        **out,
        "decided": True,
        "outcome": sep["outcome"],
        "checks": [(t, st == "holds") for t, st in checks],
        "states": sep["states"],
        "ok": sep["outcome"] == "consistent",
        "failed": [t for t, st in checks if st == "refuted"],
        "mixed": [t for t, st in checks if st == "mixed"],
        "gate": gate,
        "untrained": untrained,
        "effects": sep["effects"],
        "slack": sep["slack"],
        "margin": margin,
        "growth_h_D": min(cells[(D, t1)]) / min(cells[(D, t0)]),
    }


#: what HC-P6b reads of the catalogue (its verdicts' formula_note)
P6B_FORMULA_NOTE = (
    "reads HC-T2b's k(T, s, n, D) from the catalogue to choose the T where the bound is "
    "not vacuous, and HC-P6b's own nmse_sign_one_head_in_T and min_ratio_one_head_over_D "
    "(the direction of (a), the margin of (b)); its regime D = 2, n = 2, s = 1 is in its "
    "statement"
)


def _p6b_profile(ctx: Context, name: str) -> str:
    """The profile headcount_lower_regime is read at: the run's, where the experiment has it,
    else full."""
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import get

    return ctx.profile if ctx.profile in get(name).grids else "full"


def _p6b_gate(name: str, rows: list):
    return training_gate(
        rows,
        control=functools.partial(_heads_at_least, D=2),
        describe="h >= D = 2 (n = 2), per T",
        budget=RECIPE_HINT,
    )


def _p6b_grid(rows: list) -> dict:
    """The headcount_lower_regime grid read off its rows: D, n, s = D - 1, seeds, steps."""
    D = int(rows[0]["D"])
    return {
        "D": D,
        "n": int(rows[0]["head_dim"]),
        "s": D - 1,
        "seeds": len({int(r["seed"]) for r in rows}),
        "steps": int(rows[0]["steps"]),
    }


def _p6b_covered(ctx: Context, run: Run, rows: list, res: dict, margin: float) -> str:
    """What an HC-P6b verdict covered: the run read, the grid, the gate and the criterion."""
    (name,) = run.names
    used, note = run.profiles[name], run.note
    g = _p6b_grid(rows)
    D, n, s = g["D"], g["n"], g["s"]
    return (
        f"{name} ({used} profile{'' if used == ctx.profile else ', read for ' + ctx.profile}; "
        f"{note}): D = {D}, n = {n}, h in {{{s}, {D}}}, T in {res['Ts']}, {g['seeds']} seed(s), "
        f"{g['steps']} steps, hidden {int(float(rows[0].get('hidden', 0)))}; gate: an h = {D} "
        f"model is trained at NMSE <= {P6B_TRAINED_NMSE:g}, every T with k > 0 needs one (the "
        f"others are left out); criterion with every seed: (a) h = {s}'s NMSE from the smallest "
        f"to the largest T with k > 0 in the claim's direction, (b) h = {D} at least the claim's "
        f"x{margin:g} lower at the largest T"
    )


def _p6b_head(rows: list, res: dict, read: str) -> str:
    """The opening every HC-P6b verdict text shares: the claim read, HC-T2b's k per T and the
    per-seed NMSE of every cell."""
    g = _p6b_grid(rows)
    per_seed = "; ".join(
        f"h={h} T={T}: " + ", ".join(f"{v:.3g}" for v in _p6b_seeds(rows, h, T))
        for (h, T) in sorted(res["best"])
    )
    kt = ", ".join(f"T={T}: {k:.2f}" for T, k in res["k"].items())
    return (
        f"the claim read: {read}. HC-T2b's k at s = {g['s']}, n = {g['n']}, D = {g['D']}: {kt} "
        f"(k <= 0: control cells); per-seed "
        f"NMSE {per_seed}"
    )


def _p6b_undecided(cid: str, name: str, rows: list, res: dict, head: str, common: dict):
    """HC-P6b's not-checkable verdict when the criterion is undecided (fewer than two T with
    k > 0), gated (an h = D model short of the gate) or mixed (the seeds disagree); None when
    it decided."""
    g = _p6b_grid(rows)
    D, n, s, steps, seeds = g["D"], g["n"], g["s"], g["steps"], g["seeds"]
    if res["outcome"] == "undecided":
        text = (
            f"fewer than two T with k > 0 in the grid; {head}; a grid with two T > "
            f"{4 * D + 4 * n * s + 8 * s} would decide"
        )
    elif res["outcome"] == "gated":
        text = (
            f"undecided at this budget ({steps} steps, {seeds} seed(s)): at T = "
            + ", ".join(str(T) for T, vs in res["gate"] if min(vs) > P6B_TRAINED_NMSE)
            + f" no h = {D} model trained to the gate (NMSE <= {P6B_TRAINED_NMSE:g}; not trained: "
            + ", ".join(f"T={T}: {v:.3g}" for T, v in res["untrained"])
            + ")"
            + f", so a missing separation says nothing about the claim; {head}; the full "
            f"profile's 4000 steps at hidden 32 (`approxtheory experiment run {name} --profile "
            f"full`, ~20 s of one thread per cell) train most two-head seeds below the gate "
            f"(measured: see {name} in experiments/headcount_trained.py) and would decide"
        )
    elif res["outcome"] == "mixed":
        text = (
            f"undecided: the seeds disagree ({'; '.join(res['mixed'])}); {head}; more seeds "
            "narrow it, but a flat one-head NMSE (ratios near 1) can stay on both sides of 1"
        )
    else:
        return None
    return Verdict(cid, "not-checkable", text, scope="none", **common)


def _p6b_decided_text(res: dict, head: str, D: int, margin: float) -> str:
    """HC-P6b's decided verdict text: both parts' checks, the h = D growth, R(h), the models
    left out below the gate, what failed and the slack."""
    return (
        f"{head}; "
        + "; ".join(t for t, _ in res["checks"])
        + (
            f"; h = {D} min-over-seeds grows x{res['growth_h_D']:.3g} over the same T (reported)"
            if "growth_h_D" in res
            else ""
        )
        + ("; R(h): " + ", ".join(f"{h}: {v:.2f}" for h, v in res["R"].items()) if res["R"] else "")
        + (
            f"; h = {D} models below the gate (NMSE > {P6B_TRAINED_NMSE:g}), left out: "
            + ", ".join(f"T={T}: {v:.3g}" for T, v in res["untrained"])
            if res.get("untrained")
            else ""
        )
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        + (
            f". Slack (room the claim has, min of (a) and (b)/{margin:g}): {res['slack']:.3g}"
            if res["slack"] is not None
            else ""
        )
        + ". A qualitative reading of the lower bound (its constant depends on T; one trained "
        "model is not the minimum over models)"
    )


def _p6b_verdict(run: Run) -> Verdict:
    """:func:`lower_regime_criterion` on the rows read, with its own per-model gate (undecided,
    gated and mixed are not-checkable); the mutant relabels the rows after the shared gate."""
    ctx, cid, rows = run.ctx, run.cid, run.one
    (name,) = run.names
    used = run.profiles[name]
    if ctx.is_mutant("heads-relabelled"):
        hs = sorted({int(r["heads"]) for r in rows})
        for r in rows:
            r["heads"] = hs[-1] + hs[0] - int(r["heads"])
    g = _p6b_grid(rows)
    D, n, s = g["D"], g["n"], g["s"]
    sign, margin, read = p6b_claimed()
    res = lower_regime_criterion(rows, D, n, s, (sign, margin))
    table = [
        {"heads": h, "T": T, "k": res["k"][T], "min_nmse": v}
        for (h, T), v in sorted(res["best"].items())
    ]
    common: dict[str, Any] = dict(
        covered=_p6b_covered(ctx, run, rows, res, margin),
        rows=table,
        formula_note=P6B_FORMULA_NOTE,
    )
    head = _p6b_head(rows, res, read)
    undecided = _p6b_undecided(cid, name, rows, res, head, common)
    if undecided is not None:
        return undecided
    verdict = "consistent-empirical" if res["outcome"] == "consistent" else "inconsistent"
    return Verdict(
        cid,
        verdict,
        _p6b_decided_text(res, head, D, margin),
        measured=res["effects"],
        witness=None if res["ok"] else {"failed": res["failed"]},
        slack=res["slack"],
        plot={
            "x": "T",
            "y": ["min_nmse"],
            "group": "heads",
            "title": f"{cid}: trained NMSE vs T where k > 0 (D = {D}, n = {n})",
            "ylabel": "min-over-seeds NMSE",
        },
        scope=f"surrogate: direction only (the claim's sign of the one-head NMSE in T; the "
        f"paper gives no NMSE values), with the claim's x{margin:g} gap at the largest T; "
        f"trained models ({used} profile, {g['seeds']} seed(s), {g['steps']} steps) against "
        f"the digest's reading of HC-T2b in its non-vacuous regime (T with k > 0: "
        f"{res['live']}); the bound itself is not tested",
        **common,
    )


#: HC-P6b's evidence: headcount_lower_regime at the run's profile where it has one (else full),
#: gated at h >= D = 2 per T; below the gate the criterion's reading is shown, not decided
P6B_EVIDENCE = Evidence(
    experiments=("headcount_lower_regime",),
    gate=_p6b_gate,
    criterion=_p6b_verdict,
    profile=_p6b_profile,
)


@check(
    "HC-P6b",
    mutants={"heads-relabelled": "the one- and two-head results exchanged (a bookkeeping bug)"},
    evidence=P6B_EVIDENCE,
)
def lower_regime(ctx: Context, cid):
    """headcount_lower_regime (D = 2, n = 2, h = 1 against h = 2; quick: T = 32, 64; full:
    T = 16..128): :func:`lower_regime_criterion` (:func:`_p6b_verdict`), past the shared
    training-adequacy gate (h >= D = 2 per T) and with its own (the two-head models must reach
    NMSE <= P6B_TRAINED_NMSE at every T with k > 0, else not-checkable, undecided at this
    budget). HC-T2b's k is read through the catalogue inside the call."""
    return trained_verdict(ctx, cid, P6B_EVIDENCE)


# ------------------------------------------------------------------------------------ HC-P7
@check(
    "HC-P7",
    mutants={"models-swapped": "the random-head and two-head results exchanged (bookkeeping)"},
    experiments=("headcount_collisions", "headcount_phase_d2"),
)
def attention_collisions(ctx: Context, cid):
    """headcount_collisions (max + min, d = 1, Δ = 0.5): the demanded Lipschitz constant
    L = Δ / min ||A(X1) - A(X2)|| of F̂. Criterion (digest §6 P7): (a) for random single heads
    the log-log slope of the median L in T has a 95 % interval above 0 (grows with T); (b) for
    the two-head construction L stays bounded: max/min over T <= 2. The trained heads of
    headcount_phase_d2 (h = 1 against h = 2) are reported next to them."""

    name = "headcount_collisions"
    raw, _, note = _rows.exp_rows(name, ctx.profile)
    if raw is None:
        return _rows.not_run(cid, name, ctx.profile, note)
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
    tr, _, tnote = _rows.exp_rows("headcount_phase_d2", ctx.profile)
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
            "ylabel": "Δ / min distance",
        },
        scope="surrogate: the digest's heuristic (a search, not a proof of HC-T2b's count) on "
        "max + min with random and constructed heads; trained heads reported only",
    )


# ------------------------------------------------------------------------------------ HC-P11
#: table -> the claim whose transition h* R(h) must turn positive at (digest §5.3: R(h) is
#: claimed for CIFAR training accuracy, Fig. 2d, Table 8, whose transition HC-X2 states)
P11_TRANSITION = {8: "HC-X2"}
#: the MS MARCO fit: Table 6 without the outliers the paper drops (h = 1, 12, 14, 16)
P11_FIT_HEADS = (2, 4, 6, 8)
#: the error law's constants in fitting order, with their initial values (log c for c_fit); a
#: constant of another name starts at P11_P0_OTHER
P11_P0 = {"c_fit": 0.0, "beta_fit": 0.0, "alpha_fit": -1.0, "delta_fit": 0.3}
P11_P0_OTHER = 0.1


def claim_reversal(c):
    """R(h) as the claim defines it: ``(fn, [])`` with ``fn(errs)`` for the errors of one head
    count in T order, the claim's ``reversal_term`` summed over the pairs T1 < T2 divided by its
    ``reversal_weight`` (0 where the weight is not positive); ``(None, reason)`` where a formula
    has a symbol that is not its errors."""
    from .lemmas_lower import _by_name

    term, left_t = _by_name(c.expr("reversal_term"), ("e_1", "e_2"))
    weight, left_w = _by_name(c.expr("reversal_weight"), ("e_max", "e_min"))
    if term is None or weight is None:
        return None, f"free symbol(s) {', '.join(left_t + left_w)} in the reversal score"

    def R(errs: list) -> float:
        w = weight(e_max=max(errs), e_min=min(errs))
        if not w > 0:
            return 0.0
        pairs = [(a, b) for i, a in enumerate(errs) for b in errs[i + 1 :]]
        return sum(term(e_1=a, e_2=b) for a, b in pairs) / w

    return R, []


def _fit_claim_law(law, h, T, err, level: float = 0.95):
    """The claim's ``error_law`` fitted to errors ``err`` at (h, T) by least squares on log err,
    every free symbol but h and T a constant (c_fit as log c): ``{"p", "ci", "rmse_log", "n"}``
    keyed by the constants' names, or a string saying why the law cannot be fitted."""
    import warnings

    from scipy import stats
    from scipy.optimize import OptimizeWarning, curve_fit

    free = {x.name: x for x in law.free_symbols}
    hs, Ts = (free.get(nm, sp.Symbol(nm)) for nm in ("h", "T"))
    order = list(P11_P0)
    consts = sorted(
        (x for nm, x in free.items() if nm not in ("h", "T")),
        key=lambda x: (order.index(x.name) if x.name in order else len(order), x.name),
    )
    logc = sp.Symbol("logc", real=True)
    params = [logc if x.name == "c_fit" else x for x in consts]
    y = np.log(np.asarray(err, float))
    if len(params) >= len(y):
        return f"{len(params)} constants for {len(y)} points"
    log_law = sp.expand_log(
        sp.log(law.subs({x: sp.exp(logc) for x in consts if x.name == "c_fit"})), force=True
    )
    fn = sp.lambdify([hs, Ts, *params], log_law, "numpy")
    X = np.vstack([np.asarray(h, float), np.asarray(T, float)])

    def f(X, *p):
        return np.broadcast_to(np.asarray(fn(X[0], X[1], *p), float), X[0].shape)

    p0 = [P11_P0.get(x.name, P11_P0_OTHER) for x in consts]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", OptimizeWarning)
            popt, pcov = curve_fit(f, X, y, p0=p0, maxfev=20000)
    except (RuntimeError, ValueError, TypeError) as e:  # no fit: the claim's law, not a bug
        return f"the fit fails ({type(e).__name__}: {e})"
    resid = y - f(X, *popt)
    q = float(stats.t.ppf(0.5 + level / 2, max(1, len(y) - len(params))))
    se = np.sqrt(np.clip(np.diag(pcov), 0, None))
    out: dict = {"p": {}, "ci": {}, "rmse_log": float(np.sqrt(np.mean(resid**2))), "n": len(y)}
    for x, v, sd in zip(consts, popt, se):
        lo, hi = float(v - q * sd), float(v + q * sd)
        if x.name == "c_fit":  # fitted as log c
            v, lo, hi = math.exp(v), math.exp(lo), math.exp(hi)
        out["p"][x.name], out["ci"][x.name] = float(v), (lo, hi)
    return out


def _p11_reversal(c, tables: list, present: set, reverse_T: bool):
    """R per (table, h) of the paper's tables (``present``: the experiment's cells), with the
    claim's R (:func:`claim_reversal`), the T axis reversed under the mutant; or a reason."""
    R_of, why = claim_reversal(c)
    if R_of is None:
        return None, why
    R = {}
    for t, hh in sorted(present):
        errs = [
            e
            for _, e in sorted(
                (r["T"], r["err"]) for r in tables if (r["table"], r["h"]) == (t, hh)
            )
        ]
        R[(t, hh)] = R_of(errs[::-1] if reverse_T else errs)
    return R, ""


def _p11_transition(R: dict) -> tuple[bool, list]:
    """(a): per table of P11_TRANSITION, the smallest h with R(h) > 0 is the transition h* read
    from that table's claim (``h_transition``); the lines that say so."""
    ok, lines = True, []
    for t, cid_x in P11_TRANSITION.items():
        ex = claim(cid_x).expressions.get("h_transition")
        h0 = float(ex) if ex is not None and sp.sympify(ex).is_number else None
        pos = [hh for (tt, hh), v in R.items() if tt == t and v > 0]
        good = h0 is not None and bool(pos) and min(pos) == h0
        ok = ok and good
        lines.append(
            f"Table {t}: the first h with R > 0 is {min(pos) if pos else 'none'}, {cid_x}'s "
            f"transition h* = {sp.sstr(ex)} (read from the catalogue): "
            + ("equal" if good else "not equal")
        )
    return ok, lines


def _p11_fit_text(fit, law, a_paper: float, d_paper: float) -> tuple[bool, str]:
    """(b) on the refit of the claim's law: the 95 % intervals of alpha_fit and delta_fit are
    finite and contain the claim's alpha_paper and delta_paper; the text that says so."""
    head = f"Refit of the claim's error_law {sp.sstr(law)} to Table 6 (h in {list(P11_FIT_HEADS)}"
    if isinstance(fit, str):
        return False, f"{head}): {fit}"
    ci, p = fit["ci"], fit["p"]
    missing = [nm for nm in ("alpha_fit", "delta_fit") if nm not in p]
    if missing:
        return False, f"{head}): the law has no {', '.join(missing)} to compare"

    def inside(nm, v):
        return all(map(math.isfinite, ci[nm])) and ci[nm][0] <= v <= ci[nm][1]

    ok = inside("alpha_fit", a_paper) and inside("delta_fit", d_paper)
    others = ", ".join(
        f"{nm} = {v:.3g}" for nm, v in p.items() if nm not in ("alpha_fit", "delta_fit")
    )
    return ok, (
        f"{head}, least squares on log err, {fit['n']} points): α = {p['alpha_fit']:.2f} "
        f"[{ci['alpha_fit'][0]:.2f}, {ci['alpha_fit'][1]:.2f}], δ = {p['delta_fit']:.3f} "
        f"[{ci['delta_fit'][0]:.3f}, {ci['delta_fit'][1]:.3f}], {others}, log-RMSE "
        f"{fit['rmse_log']:.3f}; the paper's α = {a_paper:.2f} is "
        f"{'inside' if inside('alpha_fit', a_paper) else 'outside'} and δ = {d_paper:.2f} "
        f"{'inside' if inside('delta_fit', d_paper) else 'outside'} the 95 % intervals "
        "(required: both inside, finite)"
    )


def _p11_rows(name: str, profile: str) -> tuple:
    """The rows of ``name`` (:func:`_rows.exp_rows`) computed with the catalogue's own HC-P11,
    whatever claim is swapped in: its cells compute R(h) with that claim's formulas
    (approxtheory.headcount_analysis, which holds them in a functools.cache), and the runner
    keeps an experiment's rows for the whole process, so rows computed under a replaced claim
    would depend on which claim ran first. The formula cache is emptied before and after."""
    from approxtheory import headcount_analysis
    from approxtheory.catalogue import headcount, overriding

    own = next(c for c in headcount.CLAIMS if c.id == "HC-P11")
    with overriding(own) if claim("HC-P11") is not own else contextlib.nullcontext():
        headcount_analysis._p11.cache_clear()
        try:
            return _rows.exp_rows(name, profile)
        finally:
            headcount_analysis._p11.cache_clear()


@check(
    "HC-P11",
    mutants={
        "T-reversed": "the error tables read with the T axis reversed (a bookkeeping bug)",
    },
    experiments=("headcount_real_data",),
)
def real_data(ctx: Context, cid):
    """The paper's real-data tables (shipped): R(h) per table with the claim's reversal_term and
    reversal_weight on the experiment's cells (headcount_real_data), and the refit of the claim's
    error_law to Table 6. Criterion: (a) in Table 8 the smallest h with R(h) > 0 is HC-X2's
    transition h* (read from the catalogue) and R(h) = 0 below it; (b) the refit's α and δ
    intervals (95 %, from the fit's covariance) both contain the claim's α and δ
    (``alpha_paper``, ``delta_paper``, read from the catalogue: -1.40 and 0.25)."""
    from approxtheory.headcount_analysis import real_data_tables

    name = "headcount_real_data"
    raw, _, note = _p11_rows(name, ctx.profile)
    if raw is None:
        return _rows.not_run(cid, name, ctx.profile, note)
    c = claim(cid)
    a_paper, d_paper = float(c.evaluate("alpha_paper")), float(c.evaluate("delta_paper"))
    tables = real_data_tables()
    present = {(int(r["table"]), int(r["h"])) for r in raw if int(r["present"])}
    shipped = {(int(r["table"]), int(r["h"])): float(r["R"]) for r in raw if int(r["present"])}
    R, why_R = _p11_reversal(c, tables, present, ctx.is_mutant("T-reversed"))
    a_ok, a_lines = _p11_transition(R) if R is not None else (False, [why_R])
    fit_rows = [r for r in tables if r["table"] == 6 and r["h"] in P11_FIT_HEADS]
    if ctx.is_mutant("T-reversed"):
        Ts6 = sorted({r["T"] for r in fit_rows})
        rev = dict(zip(Ts6, reversed(Ts6)))
        fit_rows = [{**r, "T": rev[r["T"]]} for r in fit_rows]
    law = c.expr("error_law")
    hs, Ts, errs = ([r[k] for r in fit_rows] for k in ("h", "T", "err"))
    fit = _fit_claim_law(law, hs, Ts, errs)
    b_ok, fit_txt = _p11_fit_text(fit, law, a_paper, d_paper)
    ok = a_ok and b_ok
    R = R or {}
    rows = [{"table": t, "heads": hh, "R": v} for (t, hh), v in sorted(R.items())]
    pos = {t: [hh for (tt, hh), v in sorted(R.items()) if tt == t and v > 0] for t in (6, 7, 8, 9)}
    lines = [f"Table {t}: R > 0 at h = {pos[t] or 'none'}" for t in pos]
    same = sum(
        abs(R[k] - shipped[k]) <= 1e-9 * max(1.0, abs(shipped[k])) for k in R if k in shipped
    )
    failed = [
        t
        for t, g_ in (
            (f"(a) R(h) does not turn positive at the transition of {P11_TRANSITION}", a_ok),
            ("(b) the refit of the claim's law does not give the claim's α and δ", b_ok),
        )
        if not g_
    ]
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        "; ".join(lines)
        + f" (R from the claim's reversal_term and reversal_weight; {same}/{len(R)} equal to "
        f"{name}'s). (a) " + "; ".join(a_lines) + f". (b) {fit_txt}. The law's constants are "
        "fitted, so no slack is reported"
        + (". Failed: " + "; ".join(failed) if failed else "")
        + ". The tables round accuracies to 0.1 %, so ties give R = 0",
        covered=f"{name} ({note}): the paper's Tables 6-9 (shipped CSV), R(h) per table; the "
        "refit on Table 6 without the paper's outliers (the paper fits with an MAE loss; here "
        "least squares)",
        measured=None if isinstance(fit, str) else fit["p"],
        claimed={"alpha": a_paper, "delta": d_paper},
        slack=math.nan,  # the law's c and β are fitted: no bound, no room
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


def real_table_rows(table: int) -> list:
    """Tidy rows ``{h, T, err, err_sd}`` of one of the paper's shipped real-data tables (the std
    over seeds as an error in [0, 1]); HC-X1, HC-X2 read them."""
    from approxtheory.headcount_analysis import real_data_tables

    out = []
    for r in real_data_tables():
        if r["table"] == table:
            scale = 100.0 if r["metric"].endswith("percent") else 1.0
            out.append({"h": r["h"], "T": r["T"], "err": r["err"], "err_sd": r["std"] / scale})
    return out
