"""Checks of arXiv 2510.06662 (HC-*) beyond the theorems of ``headcount/``: the density
theorem's constructive instance, the conjecture on trained multi-layer models, and the remarks and
empirical transitions of the paper.

Every formula, constant and regime a check tests is read through ``claim(id)`` inside the check
call; memoised helpers take only claim-independent arguments (the measurement), and the
comparison with the claim happens outside them.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import sympy as sp

from approxtheory import claim
from approxtheory.headcount_analysis import synthetic_table2

from ._core import Context, Verdict, check, memo
from ._gate import TRAINED_NMSE as _GATE_NMSE
from ._gate import training_gate
from ._pipeline import Evidence, Run, trained_verdict
from ._rows import best_over_seeds
from .headcount._common import TABLE5_CELL
from .headcount._density import (
    T1_EPS,
    T1_T,
    T1_T_WIDE,
    _t1_detail,
    _t1_failures,
    _t1_instance,
    _t1_largest_m,
    _t1_symmetric,
    _t1_wide_instance,
)
from .headcount.trained import RECIPE_HINT
from .headcount.trained_more import real_table_rows as _table_rows

#: a stated margin: an NMSE "gap" between two groups of trained cells counts when it is at
#: least this factor (the same factor as headcount.py's MARGIN for HC-P8/HC-P10)
MARGIN = 3.0


# ------------------------------------------------------------------------------------ HC-T1


@check(
    "HC-T1",
    mutants={"feature-dropped": "the last subset's two minimum features read as 0 (a unit lost)"},
)
def density_instance(ctx: Context, cid):
    """The density theorem's constructive instance at T = 4 and T = 16, d = 1 (the proof of
    App. A.1 built and measured): the class's index-set size |S_i| >= S_min(T) is read from the
    catalogue at both lengths; with m = ⌈S_min⌉ < T the 2·C(T, m) subset-minimum features are
    built, X is rebuilt from them (Lemma 2, HC-L3's selector), and a polynomial F_0 of growing
    degree approximates a fixed continuous, non-symmetric F (at T = 16 the same F, of the first
    four tokens, and the same polynomials on the rebuilt tokens). Verified when at both lengths
    the sup error falls below ε = T1_EPS and decreases along the sequence; a construction that
    misses ε is "inconsistent" (the proof's construction failed, no certificate). With m >= T
    at either length every S_i is [T], every member is symmetric in the tokens, and
    ½ max |F(X) - F(σX)| > ε refutes density (a certificate)."""
    lengths = (T1_T, T1_T_WIDE)
    m_claims = {L: float(claim(cid).evaluate_float("S_min", T=L)) for L in lengths}
    ms = {L: max(1, math.ceil(m_claims[L] - 1e-12)) for L in lengths}
    read = ", ".join(f"S_min({L}) = {m_claims[L]:g}" for L in lengths)
    rng = np.random.default_rng(ctx.seed)
    full = [L for L in lengths if ms[L] >= L]
    if full:
        return _t1_symmetric(cid, full[0], rng, read, m_claims[full[0]], lengths)
    T, m = T1_T, ms[T1_T]
    drop = ctx.is_mutant("feature-dropped")
    narrow = _t1_instance(T, m, rng, ctx.seed, drop)
    rows, sups = narrow["rows"], narrow["sups"]
    # the second length: the same F and polynomials through the 2·C(16, m) features
    Tw = T1_T_WIDE
    wide = _t1_wide_instance(Tw, ms[Tw], ctx.seed, drop)
    sups_w = [r["sup_error"] for r in wide["rows"]]
    failed = _t1_failures(((T, sups), (Tw, sups_w)))
    ok = not failed
    # a construction that misses ε is no certificate against density (only the symmetry
    # obstruction above is): the verdict is then "inconsistent", not "refuted". The room the
    # claim has (at T = 4): the largest index-set size below T at which the same construction
    # still reaches ε (claim-independent, memoised), over the claimed one; a lower estimate,
    # since a construction that misses ε is no certificate
    m_max = _t1_largest_m(T, ctx.seed) if ok else None
    slack = m_max / max(m_claims[T], 1e-300) if m_max is not None else None
    worst = rows[-1] if sups[-1] >= sups_w[-1] else wide["rows"][-1]
    return Verdict(
        cid,
        "verified-numeric" if ok else "inconsistent",
        _t1_detail(read, m_claims, ms, narrow, wide, failed, m_max, slack),
        covered=f"T = {T}, d = 1: a 9^{T} grid, 20000 uniform and 2000 near-tied sequences; "
        f"T = {Tw}: a 4^4 grid on the first four tokens (the rest uniform), 500 uniform and "
        f"250 near-tied sequences ({wide['n']} in all); the polynomials fitted at T = {T} on "
        "8000 other uniform sequences",
        measured=max(sups[-1], sups_w[-1]),
        claimed=T1_EPS,
        witness=None if ok else worst["witness"],
        # the T = 16 instance first, the T = 4 one (the degree sequence the slack is read on) last
        rows=[{k: v for k, v in r.items() if k != "witness"} for r in wide["rows"] + rows],
        plot={
            "x": "degree",
            "y": ["sup_error"],
            "group": "T",
            "title": f"{cid}: constructive instances at T = {T}, {Tw} (sup error vs degree of F_0)",
            "xlabel": "total degree of the polynomial F_0",
            "ylabel": "sup |F - F_0(z̄)|",
            "logx": False,
        },
        slack=slack,
        scope=f"partial: one continuous, non-symmetric F at T = {T} and T = {Tw} (there a "
        "function of the first four tokens), d = 1, in the relaxed class of Lemma 1 (f_i = x "
        "and 1 - x, not regularised; Lemma 1's regularisation is not built); density for every "
        "continuous F is not a finite check",
    )


# --------------------------------------------------------------------------------- HC-Conj1
#: a trained cell's validation NMSE is at most this (the threshold IF-P3 uses): a verdict against
#: the conjecture needs the models it calls efficient to have trained
TRAINED_NMSE = _GATE_NMSE  # the shared gate's threshold (_gate.py)


#: the paper's own support for the conjecture (its Table 5 cell, :data:`.headcount._common.
#: TABLE5_CELL`): an efficient cell, so the claim's regime (the inefficient side) must leave it out
CONJ1_PAPER_CELL = TABLE5_CELL


def _conj1_paper_cell(c, rg: str) -> list[str]:
    """(c) of :func:`conj1_criterion`: the failure when the claim's regime holds at the paper's
    Table 5 cell (:data:`CONJ1_PAPER_CELL`) at any of its T, the inefficient side claimed for a
    cell the paper measured efficient."""
    inside = [T_ for T_ in (8, 16, 32, 64) if _regime_holds(c, {**CONJ1_PAPER_CELL, "T": T_})]
    if not inside:
        return []
    cell = ", ".join(f"{k} = {v}" for k, v in CONJ1_PAPER_CELL.items())
    return [
        f"(c) the paper's Table 5 cell ({cell}: NMSE ~1e-6, efficient) lies in the claim's "
        f"regime {rg} (at T = {', '.join(map(str, inside))}), the side it calls inefficient"
    ]


def _cell_width(r: dict) -> int:
    hd = int(float(r.get("head_dim") or 0))
    return hd or math.ceil(int(float(r["total_width"])) / int(float(r["heads"])))


def _regime_holds(c, values: dict) -> bool | None:
    """Whether every regime condition of claim ``c`` holds at ``values`` (symbol name -> number);
    None when a condition needs a symbol the cell does not give."""
    out = True
    for cond in c.regime:
        names = {sym.name for sym in cond.free_symbols}
        if not names <= set(values):
            return None
        got = cond.holds({sym: sp.Integer(values[sym.name]) for sym in cond.free_symbols})
        if got is None:
            return None
        out = out and got
    return out


def conj1_criterion(rows, c) -> dict:
    """HC-Conj1's decision rule on trained cells (min over seeds of the validation NMSE per
    (L, h, T)), with the cells split by the claim's regime (``c.regime``, read from the
    catalogue: L·h < D is the conjectured inefficient side): (a) at every T where both sides
    have cells, the best in-regime cell is at least MARGIN worse than the worst out-of-regime
    cell (the threshold is in L·h: adding a layer counts like adding heads); (b) where the grid
    has two or more T, every in-regime cell's NMSE grows from the smallest to the largest T, the
    direction of the claim's log_params_lower in T (read as the sign of its T-derivative); (c)
    the paper's own efficient cell (Table 5: L = 2, h = 2, D = 4) lies outside the regime."""
    best = best_over_seeds(rows, ("layers", "heads", "T"), cast=lambda v: int(float(v)))
    D = int(float(rows[0]["D"]))
    width = {(int(float(r["layers"])), int(float(r["heads"]))): _cell_width(r) for r in rows}
    side = {}
    for L_, h_, T_ in best:
        side[(L_, h_, T_)] = _regime_holds(
            c, {"L": L_, "h": h_, "D": D, "n": width[(L_, h_)], "T": T_}
        )
    Ts = sorted({T_ for _, _, T_ in best})
    # the regime as the claim writes it, for the failures' text
    rg = " and ".join(cd.text() for cd in c.regime).replace("*", "·") or "no regime"
    per_T, failed, decided = {}, [], False
    for T_ in Ts:
        inside = {k: v for k, v in best.items() if k[2] == T_ and side[k] is True}
        outside = {k: v for k, v in best.items() if k[2] == T_ and side[k] is False}
        if not inside or not outside:
            continue
        decided = True
        ratio = min(inside.values()) / max(outside.values())
        per_T[T_] = {"inside": inside, "outside": outside, "ratio": ratio}
        if not ratio >= MARGIN:
            failed.append(
                f"(a) T = {T_}: best cell with the regime's {rg} (NMSE "
                f"{min(inside.values()):.3g}) is only x{ratio:.2f} the worst without it "
                f"({max(outside.values()):.3g}); needs x{MARGIN:g}"
            )
    growth = None
    if len(Ts) >= 2 and c.expressions:
        e = c.expr("log_params_lower")
        direction = sp.diff(e, c.symbol("T"))
        # |log ε| is only nonnegative to sympy (0 at ε = 1): a nonnegative, not identically
        # zero derivative is the growing direction
        if direction.is_zero:
            sign = 0.0
        elif direction.is_nonnegative:
            sign = 1.0
        elif direction.is_nonpositive:
            sign = -1.0
        else:  # a direction sympy cannot sign: nothing to hold the cells to
            sign = math.nan
        growth = {}
        for L_, h_ in sorted(width):
            lo, hi = best.get((L_, h_, Ts[0])), best.get((L_, h_, Ts[-1]))
            if side.get((L_, h_, Ts[-1])) is True and lo is not None and hi is not None:
                growth[(L_, h_)] = hi / lo
                if (sign > 0 and not hi > lo) or (sign < 0 and not hi < lo):
                    failed.append(
                        f"(b) L = {L_}, h = {h_} ({rg}): NMSE does not "
                        f"{'grow' if sign > 0 else 'fall'} from T = {Ts[0]} to {Ts[-1]} "
                        f"({lo:.3g} -> {hi:.3g}) as log_params_lower does"
                    )
        if growth and not sign:  # T-free (0) or not signed (NaN): the cells' own direction
            failed += _conj1_flat(growth, sign, Ts)
    failed += _conj1_paper_cell(c, rg)
    return {
        "best": best,
        "side": side,
        "D": D,
        "Ts": Ts,
        "per_T": per_T,
        "growth": growth,
        "decided": decided,
        "ok": decided and not failed,
        "failed": failed,
    }


def _conj1_flat(growth: dict, sign: float, Ts: list) -> list[str]:
    """(b) where log_params_lower does not grow or fall in T: a T-free formula (sign 0) claims no
    change, which fails wherever the in-regime cells' NMSE ratios from the smallest T to the
    largest are not all 1 (:func:`~proofs_check.headcount._common.sign_direction`: no tie is
    measured, so it is never borne out); a direction sympy cannot sign (NaN) fails as such."""
    from .headcount._common import sign_direction

    ratios = ", ".join(f"L = {L_}, h = {h_}: x{g:.3g}" for (L_, h_), g in sorted(growth.items()))
    if math.isnan(sign):
        return [
            f"(b) log_params_lower's direction in T has no sign to hold the cells to ({ratios})"
        ]
    if sign_direction(list(growth.values()), sign) == "holds":
        return []
    return [
        f"(b) log_params_lower does not change with T, but the in-regime NMSE from T = {Ts[0]} "
        f"to {Ts[-1]} does ({ratios})"
    ]


def _conj1_gate(name: str, rows: list):
    """The shared gate on headcount_variants: control L·h >= D, per T."""
    D = int(rows[0]["D"])
    return training_gate(
        rows,
        control=lambda r: int(r.get("layers", 1)) * int(r["heads"]) >= D,
        describe=f"L·h >= D = {D}, per T",
        config=("layers", "heads"),
        budget=RECIPE_HINT,
    )


def _conj1_table(res: dict) -> list[dict]:
    """HC-Conj1's rows: the min-over-seeds NMSE per (L, h, T), with L·h and the regime side."""
    return [
        {
            "layers": L_,
            "heads": h_,
            "T": T_,
            "L_times_h": L_ * h_,
            "in_regime": bool(res["side"][(L_, h_, T_)]),
            "min_nmse": v,
        }
        for (L_, h_, T_), v in sorted(res["best"].items())
    ]


def _conj1_undecided(run: Run, res: dict, regime: str, cells: str, table: list):
    """HC-Conj1's not-checkable verdict when the regime does not split the cells at any T, or
    when none of the out-of-regime models trained and the rule fails; None otherwise."""
    ctx, cid, rows, note = run.ctx, run.cid, run.one, run.note
    (name,) = run.names
    steps = int(float(rows[0]["steps"]))
    seeds = len({int(float(r["seed"])) for r in rows})
    untrained = sorted(
        (k, v) for k, v in res["best"].items() if res["side"][k] is False and v > TRAINED_NMSE
    )
    outside_n = sum(1 for k in res["best"] if res["side"][k] is False)
    if not res["decided"]:
        text = (
            f"the claim's regime ({regime}) does not split the cells of {name} "
            f"({ctx.profile}) into both sides at any T ({cells}); a grid with cells on both "
            "sides of L·h = D would make it checkable"
        )
    elif untrained and len(untrained) == outside_n and not res["ok"]:
        # the gap the rule asks for is the out-of-regime models reaching a low error: a run in
        # which none of them trained cannot say the gap is absent (one that trained some at the
        # same budget can: the budget suffices, and an in-between cell that did not is evidence)
        text = (
            f"undecided at this budget ({steps} steps, {seeds} seed(s)): none of the "
            f"out-of-regime models, which the conjecture says are efficient, trained (NMSE > "
            f"{TRAINED_NMSE:g}: "
            + ", ".join(f"L={a} h={b} T={t}: {v:.3g}" for (a, b, t), v in untrained)
            + f"), so the missing gap (cells: {cells}) says nothing about the claim; the full "
            f"profile (`approxtheory experiment run {name} --profile full`) trains long enough "
            "to decide"
        )
    else:
        return None
    return Verdict(
        cid,
        "not-checkable",
        text,
        covered=f"{name} ({ctx.profile}; {note})",
        rows=table,
        scope="none",
        formula_note="reads the claim's regime only; a_L, b_L are unspecified",
    )


def _conj1_evidence(res: dict, rows: list, regime: str, cells: str) -> str:
    """HC-Conj1's decided verdict text: the cells, the in/out ratio per T, the growth over T in
    the regime, what failed, and a note when the budget stays far from the paper's NMSE."""
    steps = int(float(rows[0]["steps"]))
    seeds = len({int(float(r["seed"])) for r in rows})
    best_min = min(res["best"].values())
    return (
        f"min-over-seeds validation NMSE ({steps} steps, {seeds} seed(s)), D = {res['D']}, "
        f"regime {regime}: {cells}; "
        + "; ".join(
            f"T = {T_}: best in-regime / worst out-of-regime = x{d['ratio']:.2f} (needs "
            f">= x{MARGIN:g})"
            for T_, d in res["per_T"].items()
        )
        + (
            "; growth over T in the regime: "
            + ", ".join(f"L={a} h={b}: x{g:.2f}" for (a, b), g in res["growth"].items())
            if res["growth"]
            else "; (b) not tested (one T)"
        )
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        + (
            f". The best cell reaches NMSE {best_min:.3g} only (the paper's Table 5: ~1e-6): "
            "this budget may not reach the regime the conjecture speaks about"
            if best_min > 1e-2
            else ""
        )
    )


def _conj1_verdict(run: Run) -> Verdict:
    """:func:`conj1_criterion` with the regime read from the catalogue; the mutant drops the
    layer counts after the shared gate."""
    ctx, cid, rows, note = run.ctx, run.cid, run.one, run.note
    (name,) = run.names
    if ctx.is_mutant("layers-ignored"):
        for r in rows:
            r["layers"] = 1
    c = claim(cid)
    res = conj1_criterion(rows, c)
    regime = "; ".join(x.text() for x in c.regime) or "none"
    cells = ", ".join(
        f"L={L_} h={h_} T={T_}: {v:.3g}" + (" (in regime)" if res["side"][(L_, h_, T_)] else "")
        for (L_, h_, T_), v in sorted(res["best"].items())
    )
    table = _conj1_table(res)
    undecided = _conj1_undecided(run, res, regime, cells, table)
    if undecided is not None:
        return undecided
    return Verdict(
        cid,
        "consistent-empirical" if res["ok"] else "inconsistent",
        _conj1_evidence(res, rows, regime, cells),
        covered=f"{name} ({ctx.profile}; {note}): D = {res['D']}, L in "
        f"{sorted({k[0] for k in res['best']})}, h in {sorted({k[1] for k in res['best']})}, "
        f"T in {res['Ts']}; criterion: (a) in-regime cells >= x{MARGIN:g} worse than every "
        "out-of-regime cell at each T, (b) with two or more T, in-regime NMSE grows with T",
        measured={f"T={T_}": d["ratio"] for T_, d in res["per_T"].items()},
        rows=table,
        witness=None if res["ok"] else {"failed": res["failed"]},
        plot={
            "x": "L_times_h",
            "y": ["min_nmse"],
            "group": "layers",
            "title": f"{cid}: trained NMSE vs L·h (D = {res['D']}; L·h < D is the regime)",
            "xlabel": "L·h",
            "ylabel": "min-over-seeds NMSE",
            "logx": False,
        },
        slack=None,
        formula_note="reads the claim's regime (which cells have L·h < D) and, with two or "
        "more T, the sign of d(log_params_lower)/dT; a_L and b_L are unspecified, so the "
        "formula's value is never compared (its scale and ε-exponent are not testable here)",
        scope=f"surrogate: trained cells of {name} ({ctx.profile} profile) stand in for "
        "'efficient approximation'; the conjectured log-parameter law is not measured",
    )


#: HC-Conj1's evidence: headcount_variants, gated at L·h >= D per T (the configurations the
#: conjecture calls efficient); below the gate the criterion's reading is shown, not decided
CONJ1_EVIDENCE = Evidence(
    experiments=("headcount_variants",),
    gate=_conj1_gate,
    criterion=_conj1_verdict,
)


@check(
    "HC-Conj1",
    mutants={"layers-ignored": "the cells' layer counts read as 1 (the bookkeeping drops L)"},
    evidence=CONJ1_EVIDENCE,
)
def multilayer_conjecture(ctx: Context, cid):
    """headcount_variants (D = 3, fixed total width, one and two layers): :func:`conj1_criterion`
    with the regime read from the catalogue (:func:`_conj1_verdict`), past the shared
    training-adequacy gate (L·h >= D per T)."""
    return trained_verdict(ctx, cid, CONJ1_EVIDENCE)


# ------------------------------------------------------------------------------------ HC-N1
#: the width parameters of the head-count paper's symbol table (catalogue names): per-head
#: width n, total embedding width E = n·h, hidden width p of the two-layer FFN
N1_WIDTHS = ("n", "E", "p")


@check(
    "HC-N1",
    mutants={"total-width-enters": "k written with the total width E = n·s in place of n"},
)
def only_per_head_width(ctx: Context, cid):
    """Symbolic, on HC-T2b's k read from the catalogue: among the paper's width symbols only n
    occurs in k, and k falls as n grows wherever T0 > 0 (the non-vacuous side)."""
    from approxtheory.catalogue.headcount import SYMBOLS

    t2b = claim("HC-T2b")
    k = t2b.expr("k")
    T0 = t2b.expr("T0")
    n_, s_ = t2b.symbol("n"), t2b.symbol("s")
    widths = {w: SYMBOLS[w][0] for w in N1_WIDTHS}
    if ctx.is_mutant("total-width-enters"):
        k = k.subs(n_, widths["E"] / s_)
    entering = sorted(w for w, sym in widths.items() if sym in k.free_symbols)
    # sign of dk/dn where T0 > 0: write T = 4 (u + s + D - 1) with u = T0 > 0
    u = sp.Symbol("T0", positive=True)
    Tsym = t2b.symbol("T")
    T_of_u = sp.solve(sp.Eq(T0, u), Tsym)[0]
    dk = sp.simplify(sp.diff(k, n_).subs(Tsym, T_of_u)) if n_ in k.free_symbols else sp.S(0)
    falls = bool(dk.is_negative)
    ok = entering == ["n"] and falls
    in_E = sp.simplify(k.subs(n_, widths["E"] / s_))
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        f"HC-T2b's k = {sp.sstr(k)}: width symbols in it: {', '.join(entering) or 'none'} (of "
        f"{', '.join(N1_WIDTHS)}; only n required); dk/dn for T0 > 0: {sp.sstr(dk)} "
        f"({'negative: more' if falls else 'not negative: more'} per-head width "
        f"{'lowers' if falls else 'does not lower'} the exponent). "
        f"Rewritten with the total width E = n·s it reads {sp.sstr(in_E)}: at a fixed head count "
        "n and E carry the same information, so the statement is about the class's own "
        "parameters (h, n), not a separate effect of E",
        covered="symbolic: the free symbols of HC-T2b's k against the width symbols of the "
        "paper's symbol table; the sign of dk/dn for every T0 > 0",
        measured=entering,
        claimed=["n"],
        witness=None if ok else {"k": sp.sstr(k), "widths_in_k": entering},
        formula_note="the claim has no formula of its own: the check reads HC-T2b's k from the "
        "catalogue (a generated mutant of HC-T2b reaches this check only through that claim)",
        scope="full",
    )


# ------------------------------------------------------------------------------------ HC-R2
@memo
def _r2_collision(T0, spacing, cells, eps) -> tuple:
    """log ε_0: where (1/spacing)^T0 configurations equal ε^-cells cells (keyed by the
    formulas read from the catalogue, so a mutated claim gets its own entry)."""
    ell = sp.Symbol("ell", real=True)  # log ε
    log_conf = T0 * (sp.log(eps / spacing) - ell)  # log of (1/spacing)^T0 at ε = e^ell
    return tuple(sp.solve(sp.Eq(log_conf, -cells * ell), ell))


@memo
def _r2_order(logC, T):
    """lim log C/(T log T) as T -> oo (nan where sympy finds no limit)."""
    x = sp.Dummy("x", positive=True)
    try:
        return sp.simplify(
            sp.limit(sp.expand_log(logC, force=True).subs(T, x) / (x * sp.log(x)), x, sp.oo)
        )
    except (NotImplementedError, ValueError, TypeError):
        return sp.nan


#: (d, D) at which the claim's α_{d,D} is set against the proof's
R2_DD = ((1, 1), (1, 4), (2, 3), (3, 8), (8, 2))


def _r2_alpha(c, C_T, proof_alpha, stray: list) -> tuple:
    """The claim's α read from its C_T = C_{d,D}·(rT)^(-αT): minus the terms of log C_T with T or
    r in them over T log(rT) (a factor free of both, C_{d,D} or a number, is dropped); the (d, D)
    of R2_DD where no α_{d,D} > 0 makes it the proof's α (free symbols other than α_{d,D}, d, D:
    every (d, D) fails). ``stray`` gets that factor's symbols other than C_{d,D}, d, D."""
    T, r, a = c.symbol("T"), c.symbol("r"), c.symbol("alpha_dD")
    terms = sp.Add.make_args(sp.expand(sp.expand_log(sp.log(C_T), force=True)))
    log_c = sum((x for x in terms if x.has(T, r)), sp.S(0))
    # the factor free of T and r is the remark's C_{d,D}: a function of d, D only
    pre = sum((x for x in terms if not x.has(T, r)), sp.S(0))
    stray[:] = sorted(x.name for x in pre.free_symbols if x.name not in ("C_dD", "d", "D"))
    alpha = sp.cancel(-log_c / (T * (sp.log(r) + sp.log(T))))
    if any(x.name not in ("alpha_dD", "d", "D") for x in alpha.free_symbols):
        return alpha, list(R2_DD)
    bad = []
    for dD in R2_DD:
        at = {x: dict(zip("dD", dD))[x.name] for x in alpha.free_symbols if x.name in "dD"}
        gap = alpha.subs(at) - proof_alpha.subs(at)
        # α_{d,D} is the claim's free constant: some positive value of it must close the gap
        fits = bool(sp.solve(gap, a)) if a in gap.free_symbols else sp.simplify(gap) == 0
        if not fits:
            bad.append(dD)
    return alpha, bad


def _finite_negative(v) -> bool:
    return bool(v.is_finite is not False and v.is_negative is True and not v.has(sp.oo))


def _r2_failures(proof, claimed, bad: list, stray: list) -> list[str]:
    """Why HC-R2 fails, one phrase each (empty: verified): an order that is not finite and
    negative, a proof's α that depends on more than d and D, a claimed α that is not the
    proof's, a factor C_{d,D} with other symbols."""
    extra = sorted(x.name for x in proof.free_symbols if x.name not in ("d", "D"))
    return (
        (
            []
            if _finite_negative(proof)
            else [f"the proof's order {sp.sstr(proof)} is not finite and negative"]
        )
        + (
            []
            if _finite_negative(claimed)
            else [f"the remark's order {sp.sstr(claimed)} is not finite and negative"]
        )
        + (
            [
                f"the proof's α {sp.sstr(-proof)} depends on {', '.join(extra)}, but α_{{d,D}} "
                "depends on d and D only"
            ]
            if extra
            else []
        )
        + ([f"the claim's α is not the proof's at (d, D) = {bad}"] if bad else [])
        + ([f"C_{{d,D}} reads {', '.join(stray)} (it depends on d and D only)"] if stray else [])
    )


def _r2_text(C_T, claimed, proof, spacing, cells, n_sols, alpha, bad, stray) -> str:
    """HC-R2's evidence, saying what the limits show whether or not they agree."""
    extra = sorted(x.name for x in proof.free_symbols if x.name not in ("d", "D"))
    agree = _finite_negative(proof) and _finite_negative(claimed) and not extra and not bad
    return (
        f"lim log C/(T log T) as T -> oo: the remark's C_T = {sp.sstr(C_T)} gives "
        f"{sp.sstr(claimed)}; the proof's counting (grid spacing {sp.sstr(spacing)}, "
        f"{sp.sstr(cells)} as the cells' exponent of 1/ε, HC-T2b's k) gives the largest ε_0 "
        f"where the collision holds ({'unique' if n_sols == 1 else 'no unique solution'}) "
        f"and C = ε_0^k of order {sp.sstr(proof)} (both finite and negative required: the "
        f"constant falls like (rT)^(-αT), here with α = {sp.sstr(-proof)} from the proof, "
        + (f"which depends on {', '.join(extra)}" if extra else "free of n, s, r, L")
        + f"). The claim's α read from C_T: {sp.sstr(alpha)}, "
        + (
            f"NOT the proof's {sp.sstr(-proof)} for any α_{{d,D}} > 0 at (d, D) = "
            + ", ".join(f"({a}, {b})" for a, b in bad)
            if bad
            else f"the proof's {sp.sstr(-proof)} for some α_{{d,D}} > 0 at (d, D) = "
            + ", ".join(f"({a}, {b})" for a, b in R2_DD)
            + (
                ". So the remark fits the lower bound (2)"
                if agree
                else f", but only with an α_{{d,D}} that depends on {', '.join(extra)}"
                if extra
                else ""
            )
        )
        + f"; its factor free of T and r (C_{{d,D}}) reads {', '.join(stray) or 'd, D only'}"
        + (" (FAILED: C_{d,D} depends on d and D only)" if stray else "")
        + "; the derivation is this project's, on the digest's reconstructed grid"
    )


@check(
    "HC-R2",
    mutants={"T-dropped-from-exponent": "C_T written C_{d,D}·(rT)^(-α) (no T in the exponent)"},
)
def constant_remark(ctx: Context, cid):
    """Symbolic: the T-order of Remark (2)'s constant against the one the lower-bound proof's
    counting gives (§4.3, read from the catalogue: HC-R2's grid spacing and cell exponent,
    HC-T2b's k and T0). The proof's collision needs (1/spacing)^T0 configurations to exceed the
    ε^-cells_exponent cells; solving for the largest ε where it holds, ε_0, gives the constant
    C = ε_0^k of M >= C·ε^-k. Verified when lim log C/(T log T) as T -> oo is finite and negative
    for both (the remark's form (rT)^(-αT) has that order) and the proof's limit involves no
    symbol other than d, D (α_{d,D} depends only on d, D)."""
    c = claim(cid)
    t2b = claim("HC-T2b")
    C_T = c.expr("C_T")
    if ctx.is_mutant("T-dropped-from-exponent"):
        C_T = c.symbol("C_dD") * (c.symbol("r") * c.symbol("T")) ** (-c.symbol("alpha_dD"))
    spacing, cells = c.expr("grid_spacing"), c.expr("cells_exponent")
    k, T0 = t2b.expr("k"), t2b.expr("T0")
    T, eps = c.symbol("T"), c.symbol("epsilon")
    sols = _r2_collision(T0, spacing, cells, eps)
    proof = _r2_order(k * sols[0], T) if len(sols) == 1 else sp.nan
    claimed = _r2_order(sp.log(C_T), T)

    stray: list = []
    alpha, bad = _r2_alpha(c, C_T, -proof, stray) if proof.is_finite else (sp.nan, list(R2_DD))
    failed = _r2_failures(proof, claimed, bad, stray)
    ok = not failed
    return Verdict(
        cid,
        "verified-symbolic" if ok else "refuted",
        _r2_text(C_T, claimed, proof, spacing, cells, len(sols), alpha, bad, stray)
        + (". Failed: " + "; ".join(failed) if failed else ""),
        covered="symbolic: T -> oo limits of log C/(T log T) for the remark's form and for the "
        "constant implied by §4.3's counting (floors and the (-log ε)^s factor dropped)",
        measured=str(claimed),
        claimed=str(proof),
        witness=None
        if ok
        else {"claimed_order": str(claimed), "proof_order": str(proof), "alpha": str(alpha)},
        slack=None,
        scope="partial: the T-order of the constant (T log T, negative) and its attribution "
        "to the lower bound (2) via the digest's reconstructed counting; C_{d,D} and the "
        "validity range d, D << T << 1/ε are not tested",
    )


# ------------------------------------------------------------------------ HC-X1, HC-X2
#: the saturation criterion of the real-data transitions: the transition ĥ is the smallest
#: tabulated h from which every tabulated h' >= h has achieved at least X_TAU of the table's
#: error reduction at every T, f_T(h') = (err(1, T) - err(h', T)) / (err(1, T) - min_h err(h, T)).
#: The claim's h* must lie inside ĥ's interval (the data's own uncertainty) AND within X_NEAR
#: heads of ĥ on the means (the claim's "near"): both at once, no tolerance added to another.
#: X_TAU was fixed with the paper's tables in view (at 0.90 the point estimates are 8 and 10, at
#: 0.98 they are 12 and 13): a calibrated reading of "transition", stated so that it can reject
#: a table whose transition lies elsewhere
X_TAU, X_NEAR = 0.95, 1
#: claim -> (table of the shipped real-data CSV, the half-unit of its printed last digit as an
#: error in [0, 1]): MS MARCO Table 6 prints 3 decimals of accuracy, CIFAR Table 8 one decimal of
#: a percentage
X_TABLES = {"HC-X1": (6, 0.0005), "HC-X2": (8, 0.0005)}


def transition_interval(rows: list, half_unit: float, tau: float = X_TAU) -> dict:
    """ĥ from tidy rows ``{h, T, err, err_sd}`` (one per cell): the point estimate on the means
    and its interval from the cells' intervals err ± (std over seeds + rounding half-unit):
    ``lo`` (every f at its most favourable end) and ``hi`` (at its least favourable end); None
    where no tabulated h qualifies."""
    cells = {(int(r["h"]), int(r["T"])): r for r in rows}
    hs = sorted({h for h, _ in cells})
    Ts = sorted({T for _, T in cells})

    def iv(h, T):
        r = cells[(h, T)]
        w = float(r["err_sd"]) + half_unit
        return float(r["err"]), max(0.0, float(r["err"]) - w), min(1.0, float(r["err"]) + w)

    f: dict = {}
    for T in Ts:
        e1 = iv(hs[0], T)
        mins = [min(iv(h, T)[i] for h in hs) for i in range(3)]
        for h in hs:
            e = iv(h, T)
            point = (e1[0] - e[0]) / max(e1[0] - mins[0], 1e-300)
            lo = (e1[1] - e[2]) / max(e1[2] - mins[1], 1e-300)
            hi = (e1[2] - e[1]) / max(e1[1] - mins[2], 1e-300)
            f[(h, T)] = (point, lo, hi)

    def first(i):
        for j, h in enumerate(hs):
            if all(f[(x, T)][i] >= tau for x in hs[j:] for T in Ts):
                return h
        return None

    return {"point": first(0), "lo": first(2), "hi": first(1), "f": f, "hs": hs, "Ts": Ts}


def transition_verdict(cid: str, rows: list, half_unit: float, h_claim: float, what: str):
    res = transition_interval(rows, half_unit)
    lo, hi, pt = res["lo"], res["hi"], res["point"]
    if lo is None or pt is None:
        verdict, why = "inconsistent", "no tabulated h saturates (on the means or at the best end)"
    else:
        top = hi if hi is not None else math.inf
        inside, near = lo <= h_claim <= top, abs(h_claim - pt) <= X_NEAR
        verdict = "consistent-empirical" if inside and near else "inconsistent"
        why = (
            f"h* is {'inside' if inside else 'outside'} ĥ's interval [{lo}, "
            f"{hi if hi is not None else 'none'}] and {abs(h_claim - pt):g} head(s) from ĥ = {pt} "
            f"({'within' if near else 'beyond'} {X_NEAR}); both are required"
        )
    table = [
        {"heads": h, "T": T, "reduction_fraction": v[0], "lo": v[1], "hi": v[2]}
        for (h, T), v in sorted(res["f"].items())
    ]
    worst_T = {h: min(res["f"][(h, T)][0] for T in res["Ts"]) for h in res["hs"]}
    return Verdict(
        cid,
        verdict,
        f"{what}: transition ĥ = smallest tabulated h from which every h' >= h has at least "
        f"{X_TAU:g} of the table's error reduction at every T: ĥ = {pt} on the means, interval "
        f"[{lo}, {hi}] with err ± (std over seeds + rounding); the claim h* = {h_claim:g} "
        f"(read from the catalogue), 'near' = within {X_NEAR} head(s) of ĥ: {why}. Smallest "
        "fraction over T per h: "
        + ", ".join(f"{h}: {v:.3f}" for h, v in worst_T.items())
        + f". The threshold {X_TAU:g} was fixed with the paper's tables in view",
        covered=f"{what}: h in {res['hs']}, T in {res['Ts']}, mean ± std over seeds (the "
        "paper's; the seed count is not given, so the std is used as the interval)",
        measured={"point": pt, "lo": lo, "hi": hi},
        claimed=h_claim,
        rows=table,
        witness=None if verdict != "inconsistent" else {"h_hat": [lo, hi], "claimed": h_claim},
        plot={
            "x": "heads",
            "y": ["reduction_fraction"],
            "group": "T",
            "title": f"{cid}: fraction of the error reduction reached per h ({what})",
            "xlabel": "heads h",
            "ylabel": "(err(1) - err(h)) / (err(1) - min err)",
            "logx": False,
            "logy": False,
        },
        slack=None,
        scope=f"partial: the paper's own {what} (shipped CSV) under a stated saturation "
        "criterion; no model is trained here",
    )


@check(
    "HC-X1",
    "HC-X2",
    mutants={"heads-doubled": "each row read at 2h (total heads of two layers counted as h)"},
)
def real_data_transition(ctx: Context, cid):
    """The real-data transition against the paper's own table (:func:`transition_interval`)."""
    table, half = X_TABLES[cid]
    rows = _table_rows(table)
    if ctx.is_mutant("heads-doubled"):
        rows = [{**r, "h": 2 * r["h"]} for r in rows]
    h_claim = float(claim(cid).evaluate_float("h_transition"))
    what = {6: "MS MARCO Table 6 (training top-1)", 8: "CIFAR-10 Table 8 (training)"}[table]
    v = transition_verdict(cid, rows, half, h_claim, what)
    return _with_reversal(v, table, h_claim, ctx.is_mutant("heads-doubled"))


def _with_reversal(v: Verdict, table: int, h_claim: float, doubled: bool) -> Verdict:
    """Where the claim names the reversal score as its reading (HC-X2: Fig. 2d on Table 8), its
    h* must also be the first tabulated h with R(h) > 0, R as HC-P11 defines it (its
    reversal_term and reversal_weight, read from the catalogue): a second reading of the same
    table, with no tolerance. The transition verdict ``v`` with that reading added."""
    from approxtheory.headcount_analysis import real_data_tables

    from .headcount.trained_more import P11_TRANSITION, _p11_reversal

    if table not in P11_TRANSITION:
        return v
    tables = real_data_tables()
    present = {(table, int(r["h"])) for r in tables if r["table"] == table}
    R, why = _p11_reversal(claim("HC-P11"), tables, present, False)
    pos = sorted(h for (_, h), x in (R or {}).items() if x > 0)
    first = (2 * pos[0] if doubled else pos[0]) if pos else None
    equal = first is not None and first == h_claim
    text = (
        ". Reversal reading (Fig. 2d, R(h) as HC-P11 defines it): the first h with R > 0 is "
        + (f"{first}" if first is not None else f"none ({why or 'R > 0 nowhere'})")
        + f", {'equal to' if equal else 'NOT'} the claim's h* = {h_claim:g}"
    )
    if equal:
        return dataclasses.replace(v, evidence=v.evidence + text)
    return dataclasses.replace(
        v,
        verdict="inconsistent",
        evidence=v.evidence + text,
        witness={"first_h_R_positive": first, "claimed": h_claim},
    )


# ------------------------------------------------------------------------------------ HC-B1
#: the paper's Table 2 (validation NMSE, mean and std over seeds; D = 4, per-head width 8,
#: N = 32), h = D = 4 and h = 5, T = 8..128: ``{h: {T: (mean, std)}}`` from the shipped copy
#: (approxtheory/data/headcount_synthetic_table2.csv, read by headcount_analysis.synthetic_table2)
B1_D = 4
B1_TABLE2 = {
    h: {
        r["T"]: (r["val_nmse_mean"], r["val_nmse_std"])
        for r in synthetic_table2()
        if r["heads"] == h
    }
    for h in (4, 5)
}


def drop_then_rise(series: dict) -> dict:
    """Remark B.1.1's pattern on one h: ``series`` maps T to (mean, sd). On the means: the NMSE
    first drops (the second T below the first) and later rises above its running minimum, by
    less than MARGIN (slightly); on intervals (mean ± sd): the drop and the rise are each
    separated (the lower end above the other's upper end)."""
    Ts = sorted(series)
    m = [series[T][0] for T in Ts]
    sd = [series[T][1] for T in Ts]
    drop = m[1] < m[0]
    rise_at, run_min, j_min = None, m[0], 0
    for j in range(1, len(Ts)):
        if rise_at is None and m[j] > run_min and j_min > 0:
            rise_at = j
        if m[j] < run_min:
            run_min, j_min = m[j], j
    slight = rise_at is not None and m[rise_at] < MARGIN * min(m[:rise_at])
    means_ok = bool(drop and rise_at is not None and slight)
    sig_drop = m[0] - sd[0] > m[1] + sd[1]
    sig_rise = False
    if rise_at is not None:
        jm = int(np.argmin(m[:rise_at]))
        sig_rise = m[rise_at] - sd[rise_at] > m[jm] + sd[jm]
    return {
        "Ts": Ts,
        "drop": drop,
        "rise_at": Ts[rise_at] if rise_at is not None else None,
        "slight": slight,
        "means_ok": means_ok,
        "intervals_ok": bool(means_ok and sig_drop and sig_rise),
    }


@check(
    "HC-B1",
    mutants={"metric-flipped": "the table read as R² = 1 - NMSE (the metric's direction lost)"},
)
def drop_then_rise_table2(ctx: Context, cid):
    """Remark B.1.1 against the paper's Table 2 (:func:`drop_then_rise` for every tabulated
    h >= D): consistent when every h >= D shows the pattern on intervals."""
    claim(cid)  # the claim has no formula: its statement is the pattern tested
    data = B1_TABLE2
    if ctx.is_mutant("metric-flipped"):
        data = {h: {T: (1 - m_, sd_) for T, (m_, sd_) in s_.items()} for h, s_ in data.items()}
    res = {h: drop_then_rise(s_) for h, s_ in sorted(data.items()) if h >= B1_D}
    ok = bool(res) and all(r["intervals_ok"] for r in res.values())
    rows = [
        {"heads": h, "T": T, "nmse_mean": v[0], "nmse_sd": v[1]}
        for h, s_ in sorted(data.items())
        for T, v in sorted(s_.items())
    ]
    ev = "; ".join(
        f"h = {h}: means "
        + ", ".join(f"T={T}: {data[h][T][0]:.3g}±{data[h][T][1]:.2g}" for T in r["Ts"])
        + f" -> first drop {'yes' if r['drop'] else 'no'}, later rise "
        + (f"at T = {r['rise_at']}" if r["rise_at"] else "none")
        + f", on the means {'shown' if r['means_ok'] else 'not shown'}, on intervals "
        + ("shown" if r["intervals_ok"] else "not shown")
        for h, r in res.items()
    )
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        f"Table 2 (validation NMSE, mean ± std over seeds), h >= D = {B1_D}: {ev}. Criterion: "
        f"every h >= D drops from the first T to the second and later rises above its running "
        f"minimum by less than x{MARGIN:g}, each step separated on mean ± std"
        + (
            ""
            if ok
            else ". The std over seeds exceeds the mean in most cells, so no rise is "
            "separated; Fig. 3 (the remark's figure) is not tabulated"
        ),
        covered=f"the paper's Table 2 (transcribed), h in {sorted(res)}, T in "
        f"{next(iter(res.values()))['Ts'] if res else []}",
        measured={h: r["rise_at"] for h, r in res.items()},
        rows=rows,
        witness=None if ok else {h: r for h, r in res.items() if not r["intervals_ok"]},
        plot={
            "x": "T",
            "y": ["nmse_mean"],
            "group": "heads",
            "title": f"{cid}: the paper's Table 2 NMSE vs T (h >= D = {B1_D})",
            "ylabel": "validation NMSE (mean over seeds)",
        },
        formula_note="reads no formula: the remark is a qualitative pattern of the paper's "
        "measurements (no constant or exponent); its statement is the criterion",
        scope="partial: the paper's Table 2 (means and std over seeds, h = 4, 5); Fig. 3, the "
        "remark's own figure, is not tabulated, and no model is trained here",
    )
