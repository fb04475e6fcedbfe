"""The ReLU max network and the memorizing regime: HC-L9 and HC-P4, HC-T2c."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from approxtheory import claim
from approxtheory.measure import fit_rate

from .._core import (
    Context,
    Verdict,
    check,
    construction_grid,
    memo,
    slope_row,
)
from ._common import RATE_TOL, _ckey, _fit_ok, _t2c_gamma_readings

# ------------------------------------------------------------------------ HC-L9, P4, T2c
_L9_MUTATIONS = {
    # h2's clip at 2/n_g instead of 1/n_g: each level contributes up to twice its step
    "clip-2/n_g": lambda c: c.model.readout_linear(1).bias.data.mul_(2.0),
    # the params counted as all weights of the dense layers (a counting bug)
    "dense-count": lambda c: setattr(c, "params", c.extra["dense_params"]),
}


def _l9_grid(profile, mutation=None):
    """HC-L9's grid (the construction reads HC-L9's bound and width_bound from the catalogue: the
    memo is keyed by what the catalogue says about HC-L9)."""
    return _l9_grid_memo(profile, mutation, _ckey("HC-L9", ("err_bound", "width_bound")))


@memo
def _l9_grid_memo(profile, mutation, _key):
    quick = profile == "quick"
    return construction_grid(
        "hc_l9",
        {
            "T": [4, 16] if quick else [4, 16, 64],
            "eps": [0.5, 0.2, 0.1] if quick else [0.5, 0.2, 0.1, 0.05, 0.02, 0.01],
        },
        budget=256 if quick else 2048,
        mutate=_L9_MUTATIONS[mutation] if mutation else None,
        extra=lambda c, m: {
            "inv_eps": 1 / c.knobs["eps"],
            "n_g": c.extra["n_g"],
            "dense_params": c.extra["dense_params"],
            # the read-out's hidden widths as built
            "width1": (c.extra["widths"] + [0])[0],
            "width2": (c.extra["widths"] + [0, 0])[1],
            "hidden_layers": len(c.extra["widths"]),
        },
    )[0]


def _l9_affine(rows: list) -> tuple[np.ndarray, bool]:
    """O(T/ε) exactly: the count is an affine function of T·n_g, n_g, T (n_g = ⌈1/ε⌉); a zero
    residual of that fit over the whole grid proves exponent 1 in n_g on the grid. The fitted
    coefficients and whether the fit is exact (with a positive T·n_g term)."""
    ng = np.array([r["n_g"] for r in rows], dtype=float)
    Tt = np.array([r["T"] for r in rows], dtype=float)
    A = np.stack([Tt * ng, ng, Tt, np.ones_like(ng)], axis=1)
    y = np.array([r["params"] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return coef, bool(np.abs(A @ coef - y).max() < 1e-6) and coef[0] > 0


def _l9_t_slopes(rows: list, l9) -> list[tuple]:
    """The T-dependence: per ε, the log-log slope of the counted weights against T, which must
    lie at or below params_order's exponent of T (T -> ∞ at that ε, read from the catalogue) +
    RATE_TOL (the built count reads every input, so no count uniform in T exists). Rows
    (ε, slope, exponent, ok)."""
    t_rows = []
    for e in sorted({r["eps"] for r in rows}):
        sub_e = sorted((r for r in rows if r["eps"] == e), key=lambda r: r["T"])
        lt = np.log([r["T"] for r in sub_e])
        lp = np.log([r["params"] for r in sub_e])
        slope_t = float(np.polyfit(lt, lp, 1)[0])
        t_expo = float(
            l9.asymptotic_exponent("T", "params_order", sp.oo, epsilon=sp.Rational(str(e)))
        )
        t_rows.append((e, slope_t, t_expo, slope_t <= t_expo + RATE_TOL))
    return t_rows


def _l9_wrong_widths(rows: list, l9) -> list[str]:
    """The cells whose built hidden widths differ from the catalogue's width1, width2, or whose
    sum exceeds width_bound, one phrase each."""
    wrong = []
    for r in rows:
        at = {"T": r["T"], "epsilon": sp.Rational(str(r["eps"]))}
        want = [int(l9.evaluate(k, **at)) for k in ("width1", "width2")]
        bound = int(l9.evaluate("width_bound", **at))
        got = [r["width1"], r["width2"]] if r["hidden_layers"] == 2 else None
        if got != want or bound < sum(got or want):
            wrong.append(
                f"T={r['T']}, ε={r['eps']:g}: built widths "
                f"{got if got is not None else str(r['hidden_layers']) + ' hidden layers'}, "
                f"claimed {want} (width_bound {bound})"
            )
    return wrong


#: the mutants HC-L9 / HC-P4 and HC-T2c share: both read the ReLU max network's grid
_L9_MUTANTS = {
    "clip-2/n_g": "h2 clips at 2/n_g instead of 1/n_g",
    "dense-count": "the parameter count includes the zero weights of the dense layers",
}


@check(
    "HC-L9",
    "HC-P4",
    mutants=_L9_MUTANTS,
    constructions=("hc_l9",),
)
def relu_max_network(ctx: Context, cid):
    rows = _l9_grid(ctx.profile, ctx.mutant)
    within = all(r["verdict"] == "within-bound" for r in rows)
    T0 = rows[0]["T"]
    sub = [r for r in rows if r["T"] == T0]
    fit = fit_rate([r["inv_eps"] for r in sub], [r["params"] for r in sub], seed=ctx.seed)
    # the claimed count exponent in 1/ε: HC-L9's params_order (T/ε), read from the catalogue
    expo = float(claim("HC-L9").rate_exponent())
    rate_ok = _fit_ok(fit, expo, "below")
    coef, affine_ok = _l9_affine(rows)
    l9 = claim("HC-L9")
    t_rows = _l9_t_slopes(rows, l9)
    t_ok = all(r[3] for r in t_rows)
    # the widths: the built network's hidden widths against the catalogue's width1, width2 in
    # every cell, and their sum within width_bound
    wrong = _l9_wrong_widths(rows, l9)
    widths_ok = not wrong
    w_text = sp.sstr(l9.expr("width1")), sp.sstr(l9.expr("width2"))
    ok = within and rate_ok and affine_ok and widths_ok and t_ok
    worst = max(rows, key=lambda r: r["sup_error"] / r["claimed_bound"])
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"sup error <= 1/⌈1/ε⌉ in {'every' if within else 'not every'} cell "
        f"(worst ratio {worst['sup_error'] / worst['claimed_bound']:.3f}); the counted "
        f"weights are {'exactly' if affine_ok else 'NOT'} "
        f"{coef[0]:.0f}·T·n_g + {coef[1]:.0f}·n_g + {coef[2]:.0f}·T + {coef[3]:.0f} "
        f"with n_g = ⌈1/ε⌉; log-log slope in 1/ε at T = {T0}: {fit.slope:.2f} "
        f"[{fit.ci_low:.2f}, {fit.ci_high:.2f}] (the claimed exponent of params_order: "
        f"{expo:g}; the interval must lie at or below it + {RATE_TOL}); against T at fixed ε "
        f"the slopes {'are' if t_ok else 'are NOT all'} at or below params_order = "
        f"{sp.sstr(l9.expr('params_order'))}'s exponent of T + {RATE_TOL} ("
        + ", ".join(f"ε={e:g}: {sl:.2f} vs {te:g}" for e, sl, te, _ in t_rows)
        + f"); the built hidden "
        f"widths {'equal' if widths_ok else 'do NOT equal'} width1 = {w_text[0]} and width2 = "
        f"{w_text[1]} in {len(rows) - len(wrong)}/{len(rows)} cells, their sum within "
        f"width_bound = {sp.sstr(l9.expr('width_bound'))}"
        + (f" ({'; '.join(wrong[:3])})" if wrong else "")
        + ". A dense "
        "net of the stated widths would have O(T/ε²) weights: O(T/ε) holds for the "
        "sparse network",
        covered=f"T in {sorted({r['T'] for r in rows})}, eps in {sorted({r['eps'] for r in rows})}",
        rows=rows,
        slopes=[slope_row(fit, f"params vs 1/ε (T={T0})", expo)],
        witness=None if within else worst.get("witness"),
        formula_note="reads HC-L9's formulas (HC-P4 has none of its own)" if cid == "HC-P4" else "",
        plot={
            "x": "eps",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": f"{cid}: ReLU max network",
            "xlabel": "ε",
            "ylabel": "sup error",
        },
        scope="full",
    )


#: HC-T2c's regime read against HC-T2b's lower bound: one head (s = 1) of width n against
#: D = 2 features, at widths n below and at T·d
T2C_SIDE_CELLS = tuple(
    (d, T, n) for d in (1, 2) for T in (64, 1024) for n in sorted({d, 2 * d, T * d // 2, T * d})
)


def _t2c_regime_side(c) -> tuple[list, str]:
    """HC-T2c's regime against the catalogue's lower bound HC-T2b: at each (d, T, n) of
    T2C_SIDE_CELLS the claim's regime admits, one head (s = 1) of width n against D = 2
    features needs M >= ε^-k with HC-T2b's k; the claimed M_suff's exponent at γ = HC-A3's
    γ_worst(d, D) must not be below k there (a sufficient count cannot undercut a necessary
    one). Returns the admitted cells where it does, and the text."""
    t2b, a3 = claim("HC-T2b"), claim("HC-A3")
    D = 2
    admitted, bad, outside = [], [], []
    for d, T, n in T2C_SIDE_CELLS:
        k = float(t2b.evaluate("k", s=1, n=n, D=D, T=T))
        if not c.in_regime(n=n, T=T, d=d):
            outside.append((d, T, n, k))
            continue
        g = a3.evaluate("gamma_worst", d=d, D=D)
        e = float(-c.asymptotic_exponent("epsilon", "M_suff", 0, gamma=g))
        admitted.append((d, T, n, k, e))
        if k > e:
            bad.append((d, T, n, k, e))
    if bad:
        d, T, n, k, e = bad[0]
        return bad, (
            f"; the claim's regime admits one head of width n = {n} < T·d = {T * d} (d = {d}, "
            f"T = {T}), where HC-T2b's lower bound needs ε^-{k:.3g} against D = {D} features, "
            f"above M_suff's exponent {e:g} at γ_worst: the regime is too wide ({len(bad)} such "
            "cells)"
        )
    worst = max(outside, key=lambda x: x[3]) if outside else None
    return bad, (
        f"; against HC-T2b's lower bound (one head, D = {D} features): in the {len(admitted)} "
        "admitted cells its exponent k stays at or below M_suff's"
        + (
            f"; outside the regime (n < T·d) it reaches k = {worst[3]:.3g} at d = {worst[0]}, "
            f"T = {worst[1]}, n = {worst[2]}: the regime is needed"
            if worst
            else ""
        )
    )


def _t2c_rows(c, raw: list) -> tuple[list[dict], list]:
    """HC-T2c's cells from HC-L9's grid: per (T, ε) the count, the head's width n = T·d (d = 1),
    whether the cell ε-approximates (sup error < ε, Definition 1) and is in the claim's regime;
    and the T outside the regime."""
    rows, regime_bad = [], []
    for r in raw:
        n_width = r["T"] * 1  # the head's width is T·d with d = 1
        if not (in_reg := bool(c.in_regime(n=n_width, T=r["T"], d=1))):
            regime_bad.append(r["T"])
        rows.append(
            {
                "T": r["T"],
                "eps": r["eps"],
                "inv_eps": r["inv_eps"],
                "params": r["params"],
                "head_width": n_width,
                "sup_error": r["sup_error"],
                "eps_approximates": bool(r["sup_error"] < r["eps"]),
                "in_regime": in_reg,
            }
        )
    return rows, regime_bad


def _t2c_failures(rows, fits, expos, regime_bad, gamma_bad, side_bad, side_text) -> list[str]:
    """What HC-T2c fails on, one phrase each (empty: verified): a cell missing ε, a count
    growing faster than M_suff's exponent or M_sharp's at γ = 0 (``expos``: the two
    exponents), the regime, the γ readings, the regime's other side."""
    approx_ok = all(r["eps_approximates"] for r in rows)
    missed = [(r["T"], r["eps"]) for r in rows if not r["eps_approximates"]]
    fast = {
        name: (e, [T for T, f in fits.items() if not _fit_ok(f, e, "below")])
        for name, e in zip(("M_suff", "M_sharp"), expos)
    }
    return (
        ([] if approx_ok else [f"sup error >= ε at {missed}"])
        + [
            f"the count grows faster than (1/ε)^{e:g} ({name}'s exponent at γ = 0) at T = {Ts}"
            for name, (e, Ts) in fast.items()
            if Ts
        ]
        + ([f"regime n >= T·d fails at T = {regime_bad}"] if regime_bad else [])
        + gamma_bad
        + ([side_text.lstrip("; ")] if side_bad else [])
    )


@check(
    "HC-T2c",
    mutants=_L9_MUTANTS,
    constructions=("hc_l9",),
)
def memorizing_regime(ctx: Context, cid):
    """Theorem 2(3) on its simplest instance: one head of width n = T·d (HC-K2's memorizing
    head, d = 1) followed by HC-L9's ReLU network F̂ for D = 1, f = identity, F_0 = identity,
    where the FFN approximations of f_i and F_0 are exact (γ = 0). The claim's M_suff is read
    from the catalogue: the count of the built network must grow in 1/ε no faster than M_suff's
    exponent at γ = 0 (per T, the slope interval at or below it + RATE_TOL), nor than M_sharp's
    (Remark (3)'s sharper form: at γ < 1 its exponent is still the ReLU max network's 1), every
    cell must ε-approximate (sup error < ε, Definition 1) and satisfy the regime n >= T·d. The γ
    part is read symbolically (``_t2c_gamma_readings``): at γ = HC-A3's γ_worst(d, D) in 1, 2, 3
    M_suff's exponent must be at least that of HC-A3's width, a lower bound there, so a formula
    that agrees with M_suff only at γ = 0 (C/ε, C/ε^(1+γ/2)) fails."""
    c = claim(cid)
    g_s, eps_s, m_expr = c.symbol("gamma"), c.symbol("epsilon"), c.expr("M_suff")
    # exponent of 1/ε in M_suff at γ = 0 (exact features), from the catalogue's formula
    expo = float(sp.simplify(-eps_s * sp.diff(sp.log(m_expr), eps_s)).subs(g_s, 0))
    sharp = float(sp.simplify(-eps_s * sp.diff(sp.log(c.expr("M_sharp")), eps_s)).subs(g_s, 0))
    (gamma_bad, gamma_text), (side_bad, side_text) = _t2c_gamma_readings(c), _t2c_regime_side(c)
    rows, regime_bad = _t2c_rows(c, _l9_grid(ctx.profile, ctx.mutant))
    Ts = sorted({r["T"] for r in rows})
    fits = {}
    for T in Ts:
        sub = [r for r in rows if r["T"] == T]
        fits[T] = fit_rate([r["inv_eps"] for r in sub], [r["params"] for r in sub], seed=ctx.seed)
    worst = max(rows, key=lambda r: r["sup_error"] / r["eps"])
    failed = _t2c_failures(rows, fits, (expo, sharp), regime_bad, gamma_bad, side_bad, side_text)
    ok = not failed
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"M_suff = {sp.sstr(m_expr)}: exponent of 1/ε at γ = 0 is {expo:g} (the sharp form "
        f"M_sharp gives {sharp:g}; the built network realises γ = 0, so its count bounds "
        "both from below). Counted weights of the built network per T against 1/ε: "
        + ", ".join(
            f"T={T}: slope {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]" for T, f in fits.items()
        )
        + f" (each interval must lie at or below {expo:g} + {RATE_TOL} and at or below M_sharp's "
        f"{sharp:g} + {RATE_TOL}). "
        + gamma_text
        + ("" if side_bad else side_text)
        + f"; sup error < ε in "
        f"{sum(r['eps_approximates'] for r in rows)}/{len(rows)} cells (largest sup/ε "
        f"{worst['sup_error'] / worst['eps']:.3f}); head width n = T·d in every cell. The "
        "constant C_{d,D,T} is unspecified, so no slack is reported (a rescaled M_suff says "
        "the same)" + (". Failed: " + "; ".join(failed) if failed else ""),
        covered=f"hc_l9 (HC-K2's head of width T, d = 1, + HC-L9's F̂), T in {Ts}, ε in "
        f"{sorted({r['eps'] for r in rows})}, adversarial search per cell",
        measured={f"T={T}": f.slope for T, f in fits.items()},
        claimed=expo,
        rows=rows,
        slopes=[slope_row(f, f"params vs 1/ε (T={T})", expo) for T, f in fits.items()],
        witness=None if ok else {"failed": failed, "worst_cell": worst},
        slack=math.nan,  # C is unspecified: no room to measure (None in the record)
        plot={
            "x": "eps",
            "y": ["sup_error"],
            "group": "T",
            "title": f"{cid}: memorizing head + ReLU max network",
            "xlabel": "ε",
            "ylabel": "sup error",
        },
        scope="partial: D = 1 with f = identity and F_0 = identity, so γ = 0 (exact "
        "features): the memorizing head (width n = T·d, d = 1) and HC-L9's ReLU max network, "
        "i.e. the 1/ε of M_suff's exponent 1 + γ; the FFN approximations F1, F3 of f_i and "
        "F_0 (the γ part) are not built: M_suff's γ-dependence is read symbolically against "
        "HC-A3's width at γ_worst, a derived lower bound; the 5-layer composition is HC-L8's "
        "check. The regime n >= T·d is met in every cell; its other side is not built (that a "
        "head narrower than T·d cannot memorise is a lower bound no construction here shows) "
        "but read against the catalogue's lower bound HC-T2b at widths n < T·d",
    )
