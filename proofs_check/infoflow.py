"""Checks of arXiv 2605.17930 (IF-*).

Rate criterion (IF-T2, IF-K1, IF-T1): a claimed upper bound decays like x^p (p from the catalogue)
up to a slowly varying factor (ln(βT) for IF-T2, the attention floor for IF-K1). The fitted slope's
whole 95% interval must lie at or below ``p + tol``, where ``tol`` is that factor's share over the
grid: the claimed bound's own log-log slope there minus p (also from the catalogue). The interval
must therefore exclude every decay slower than the bound's own, e.g. β^{-1/2} or the flat x^0 of an
error floor; an interval that merely touches p is not enough.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
import torch

from approxtheory import claim
from approxtheory.measure import fit_rate

from ._core import (
    Context,
    Verdict,
    check,
    construction_grid,
    memo,
    not_checkable,
    slope_row,
)
from ._gate import TRAINED_NMSE
from ._results import results_schema

not_checkable(
    "IF-T3",
    reason="lower bound over all one-layer models with an unresolved rate "
    "([A] says exponential in T, [Q2] writes Ω(ε^{-(k-1)/n})); needs the paper",
)
not_checkable(
    "IF-T4",
    reason="a lower bound over all decoders (not measurable), and no honest matching upper "
    "construction exists for its exponent |I|d/E (from the secondary summary [Q2]): the one "
    "decoder built here (IF-R3's: an SPA mixture whose encoder keeps the tokens apart, read "
    "back linearly, then a grid interpolant) costs ε^-(|I|d) whatever E, above |I|d/E for "
    "every E >= 2; a decoder at ε^-(|I|d/E) for generic Lipschitz targets of the |I|d token "
    "coordinates would beat the ε^-(|I|d) that any network with continuously selected weights "
    "needs (DeVore-Howard-Micchelli), so it would need discontinuous weight selection (bit "
    "extraction in deep narrow networks) or a restricted target class, which the digest does "
    "not give. Checkable with the paper's definition of the coupled state and of the target "
    "and decoder classes the bound ranges over (then a decoder attaining ε^-(|I|d/E), or its "
    "proof)",
)


def _decay_fit(x, y, bound, predicted: float, bound_exponent: float | None = None):
    """Fit y ~ x^slope and the tolerance of the rate criterion: the claimed bound's own log-log
    slope over the same grid minus its asymptotic exponent ``bound_exponent`` (never negative;
    the slowly varying factor's share). ``bound_exponent`` defaults to ``predicted`` (the rate
    is the bound's own, IF-T2, IF-K2); where the rate comes from another expression (IF-K1's
    parameter order against its error bound) the tolerance must not move with the prediction."""
    fit = fit_rate(x, y)
    bound_slope = float(np.polyfit(np.log(x), np.log(bound), 1)[0])
    base = predicted if bound_exponent is None else bound_exponent
    tol = max(0.0, bound_slope - base)
    return fit, tol, fit.ci_high <= predicted + tol


# ------------------------------------------------------------------------------- IF-T2


def _retrieval_mutation(mutant):
    """IF-T2's mutants, applied to the built softmax head (W_Q = [0, β], W_V = [1, 0])."""
    if mutant == "value-gain":
        return lambda c: c.model.attention(0).v.weight.data.mul_(1.05)
    if mutant == "beta-dropped":
        return lambda c: c.model.attention(0).q.weight.data.clamp_(max=1.0)
    return None


#: IF-T2's grid per profile
T2_AXES = {
    "quick": {"T": [4, 64, 1024], "beta": [10.0, 100.0, 1e3, 1e4]},
    "full": {
        "T": [4, 16, 64, 256, 1024],
        "beta": [10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4],
    },
    # smoke: T = 1024 left out (three lengths stay, for IF-R1's fit in T)
    "smoke": {"T": [4, 16, 64], "beta": [10.0, 100.0, 1e3, 1e4]},
}


@memo
def _retrieval_grid(profile, mutant=None):
    quick = profile != "full"  # quick and smoke
    return construction_grid(
        "softmax_retrieval",
        T2_AXES[profile],
        budget=256 if quick else 1024,
        mutate=_retrieval_mutation(mutant),
        # every weight of the head (attention, encoder, CLS, read-out): IF-R1's size count
        extra=lambda c, m: {"weights": int(c.model.count_params())},
    )[0]


@check(
    "IF-T2",
    mutants={
        "value-gain": "the value weight of the head is 1.05 instead of 1: the head returns 1.05 x "
        "the softmax average (a perturbed weight)",
        "beta-dropped": "W_Q carries 1 instead of β: the inverse temperature is never applied",
    },
)
def max_retrieval(ctx: Context, cid):
    c = claim("IF-T2")
    rows = _rebound(
        _retrieval_grid(ctx.grid, ctx.mutant),
        lambda r: c.evaluate_float("err_attn", beta=r["beta"], T=r["T"]),
    )
    within = all(r["verdict"] == "within-bound" for r in rows)
    slopes, fits, rate_ok = [], [], True
    for T in sorted({r["T"] for r in rows}):
        sub = [r for r in rows if r["T"] == T]
        pred = float(c.asymptotic_exponent("beta", "err_attn", T=T))
        fit, tol, ok = _decay_fit(
            [r["beta"] for r in sub],
            [r["sup_error"] for r in sub],
            [r["claimed_bound"] for r in sub],
            pred,
        )
        rate_ok &= ok
        fits.append(
            f"T={T}: β^{fit.slope:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}] vs "
            f"<= {pred:+.0f} + {tol:.3f}{'' if ok else ' FAILS'}"
        )
        slopes.append(slope_row(fit, f"sup error vs β (T={T})", pred))
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    ok = within and rate_ok
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        slopes=slopes,
        scope="full",
        evidence=(
            f"max - softmax average <= (1 + ln(βT))/β in "
            f"{'every cell' if within else f'{len(rows) - len(bad)}/{len(rows)} cells'}; "
            f"rate (the slope's 95% interval must lie at or below the predicted exponent "
            f"plus the ln(βT) factor's share of the bound's own slope over the grid, so it "
            f"excludes any slower decay such as β^-1/2): " + "; ".join(fits)
        ),
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("T", "beta", "sup_error", "claimed_bound")},
        covered=f"T in {sorted({r['T'] for r in rows})}, β in "
        f"{sorted({r['beta'] for r in rows})}, adversarial search",
        rows=rows,
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": "IF-T2: softmax max retrieval",
            "xlabel": "β",
            "ylabel": "sup error",
        },
    )


# ------------------------------------------------------------------------ IF-K1, IF-T1


def _second_largest_mutation(mutant):
    """IF-K1's mutants, applied to the built two-layer construction (digest §4.1)."""
    if mutant == "no-self-exclusion":
        # layer 1's query rows 1..T carry -M p_t: without them token t may retrieve itself
        return lambda c: c.model.attention(0).q.weight.data[1:].zero_()
    if mutant == "readout-gain":
        # the interpolant's slope changes c_j scaled by 1.05: an error floor 0.05 |f(u) - f(0)|
        return lambda c: c.model.readout_linear(1).weight.data.mul_(1.05)
    return None


#: IF-K1's softmax inverse temperature (the digest's §4.1 check) and grid per profile
K1_BETA = 1e4
K1_AXES = {
    "quick": {"T": [4, 16, 64], "N": [8, 32, 128]},
    "full": {"T": [4, 16, 64, 256], "N": [8, 16, 32, 64, 128, 256, 512]},
    "smoke": {"T": [4, 16], "N": [8, 32, 128]},  # T = 64 (70 % of the quick grid's time) left out
}


@memo
def _second_largest_grid(profile, mutant=None):
    quick = profile != "full"  # quick and smoke
    return construction_grid(
        "if_second_largest",
        K1_AXES[profile],
        budget=256 if quick else 1024,
        fixed={"beta": K1_BETA},
        mutate=_second_largest_mutation(mutant),
    )[0]


@check(
    "IF-K1",
    "IF-T1",
    mutants={
        "no-self-exclusion": "layer 1 loses its positional self-exclusion (-M<p_t, p_s>): "
        "each token may retrieve itself, so the construction computes the largest value",
        "readout-gain": "the read-out interpolant's output weights are 1.05 x the slope "
        "changes: an error floor that does not shrink with the knots N",
    },
)
def two_layer_second_largest(ctx: Context, cid):
    from approxtheory.constructions.infoflow import _F

    k1 = claim("IF-K1")
    Lf = sp.Rational(str(_F["sin"][1]))
    rows = _rebound(
        _second_largest_grid(ctx.grid, ctx.mutant),
        lambda r: k1.evaluate_float("err_bound", L_f=Lf, beta=K1_BETA, T=r["T"], N=r["N"]),
    )
    within = all(r["verdict"] == "within-bound" for r in rows)
    # error vs knots N: N ~ ε^{-a} parameters means error ~ N^{-1/a}
    if cid == "IF-T1":
        a = -float(claim("IF-T1").exponent("epsilon", expr="N2_upper"))
        source = "IF-T1's two-layer count C2 ε^-1"
    else:
        a = float(claim("IF-K1").rate_exponent())
        source = "IF-K1's O(ε^-1) parameter order"
    pred = -1.0 / a
    slope_rows, parts, rate_ok = [], [], True
    for T in sorted({r["T"] for r in rows}):
        sub = [r for r in rows if r["T"] == T]
        fit, tol, ok = _decay_fit(
            [r["N"] for r in sub],
            [r["sup_error"] for r in sub],
            [r["claimed_bound"] for r in sub],
            pred,
            float(k1.asymptotic_exponent("N", "err_bound", L_f=Lf, beta=K1_BETA, T=T)),
        )
        rate_ok &= ok
        parts.append(
            f"T={T}: N^{fit.slope:.2f} [{fit.ci_low:.2f}, {fit.ci_high:.2f}] vs <= "
            f"{pred:+.0f} + {tol:.3f}{'' if ok else ' FAILS'}"
        )
        slope_rows.append(slope_row(fit, f"sup error vs N (T={T})", pred))
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    verdict = "verified-numeric" if within and rate_ok else "refuted"
    where = (
        "within the bound in every cell"
        if within
        else f"outside the bound in {len(bad)}/{len(rows)} cells"
    )
    scope = (
        (
            "partial: the two-layer, one-head-per-layer O(ε^-1) upper side, on the digest's "
            "candidate separation task TASK-KTH(2) (construction IF-K1); the one-layer lower "
            "bound ε^{-k(T)} is not tested here (its empirical side on trained models is "
            "IF-E3)"
        )
        if cid == "IF-T1"
        else "full"
    )
    if cid == "IF-T1":
        # the rows' bound is IF-K1's err_bound, not a formula of IF-T1: kept under another name
        # so that it is not read as IF-T1's slack
        rows = [
            {("IF-K1_bound" if k == "claimed_bound" else k): v for k, v in r.items()} for r in rows
        ]
    return Verdict(
        cid,
        verdict,
        f"two layers, one head each, compute f(2nd largest) {where}; "
        f"rate from {source} (predicted slope {pred:+.0f}; the 95% interval must lie "
        f"at or below it plus the attention floor's share of the bound's own slope, "
        f"so it excludes N^-1/2 (an ε^-2 count) and a flat floor): " + "; ".join(parts),
        covered=f"T in {sorted({r['T'] for r in rows})}, N in "
        f"{sorted({r['N'] for r in rows})}, β = 1e4, f = sin 6u + "
        "0.5|u-0.3|, adversarial search",
        slopes=slope_rows,
        scope=scope,
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("T", "N", "sup_error", "claimed_bound")},
        rows=rows,
        formula_note="reads only N2_upper's ε-exponent (the two-layer count C2/ε): the primary "
        "N1_lower, the one-layer lower bound with an unknown slope a, is not tested here (its "
        "empirical side is IF-E3); the bound compared is IF-K1's err_bound"
        if cid == "IF-T1"
        else "",
        plot={
            "x": "N",
            "y": ["sup_error"],
            "bound": "IF-K1_bound" if cid == "IF-T1" else "claimed_bound",
            "group": "T",
            "title": f"{cid}: 2nd largest, two layers",
            "xlabel": "knots N (∝ parameters)",
            "ylabel": "sup error",
        },
    )


# ------------------------------------------------------------------------------- IF-K2


def _pairwise_mutation(mutant):
    """IF-K2's mutants, applied to the built pairwise-max construction (digest §4.2)."""
    if mutant == "bilinear-transposed":

        def fn(c):
            d = c.task.d
            w3 = c.model.feed_forward(0).w3.weight.data  # rows i*d..: A_i, columns x
            for i, A in enumerate(c.task.A):
                w3[i * d : (i + 1) * d, :d] = torch.from_numpy(A.T.copy())

        return fn
    if mutant == "query-sign":
        return lambda c: c.model.attention(0).q.weight.data.neg_()
    if mutant == "value-floor":
        # layer 2 returns 1.001 x the softmax average: an error floor 0.001 |F| that no β removes
        return lambda c: c.model.attention(1).v.weight.data.mul_(1.001)
    return None


#: random unit-norm inputs per IF-K2 cell for the typical (not worst-case) error, the kind of
#: figure the digest's numerical check reports
K2_RANDOM = 4096


def _pairwise_random_error(c, m):
    from approxtheory.measure import errors

    X = c.task.sample(K2_RANDOM, np.random.default_rng(1))
    return {"random_max_error": float(np.max(errors(c.model, c.task, X)))}


def _pairwise_axes(profile):
    """IF-K2's grid: (D, T) -> the β values measured there. Quick: the rate is decided at T = 8
    (five β over four decades: the search reaches 60-100 % of the worst case, a noise that a
    shorter span turns into the slope), T = 64 adds three β for the bound (its three-point slope
    is reported, not decided). Smoke: the T = 8 cells only (the rate is decided there)."""
    if profile == "smoke":
        return {(D, 8): [1e2, 1e3, 1e4, 1e5, 1e6] for D in (1, 2)}
    if profile == "quick":
        return {
            (D, T): [1e2, 1e3, 1e4, 1e5, 1e6] if T == 8 else [1e3, 1e4, 1e5]
            for D in (1, 2)
            for T in (8, 64)
        }
    # full: every (D, T) of the digest's §7 item 3 range (T <= 256, D <= 3) decided on 5 β
    betas = [1e2, 1e3, 1e4, 1e5, 1e6]
    return {(D, T): betas for D in (1, 2, 3) for T in (8, 64, 256)}


#: the fewest β values on which IF-K2's rate is decided (three-point slopes are reported only:
#: the search's noise from one β to the next makes their interval unreliable)
K2_RATE_POINTS = 5


@memo
def _pairwise_grid(profile, mutant=None):
    """The claim-independent measurements of IF-K2's construction: sup error (adversarial
    search), the largest error over K2_RANDOM random inputs, parameters. The claimed bound is
    read from the catalogue by the check, not here (a claim mutant must reach it)."""
    rows = []
    for (D, T), betas in _pairwise_axes(profile).items():
        cells, _ = construction_grid(
            "if_pairwise_max",
            {"D": [D], "T": [T], "beta": betas},
            budget=128 if profile != "full" else 1024,
            mutate=_pairwise_mutation(mutant),
            extra=_pairwise_random_error,
            certify=False,
        )
        rows += cells
    return tuple(rows)


def _rebound(rows, bound) -> list:
    """Rows with ``claimed_bound`` and ``verdict`` recomputed now from ``bound(row)`` (a value
    read from the catalogue while the check runs), so that a memoised measurement meets the
    claim as it is now."""
    from approxtheory.constructions._base import verdict

    out = []
    for r in rows:
        r = dict(r)
        r["claimed_bound"] = float(bound(r))
        r["verdict"] = verdict(r["sup_error"], r["claimed_bound"], "upper")
        if r.get("sup_error_upper") is not None:
            r["certified"] = verdict(r["sup_error_upper"], r["claimed_bound"], "upper") in (
                "within-bound",
                "below-tolerance",
            )
        out.append(r)
    return out


def one_softmax_tie_error(T: int) -> float:
    """β x the error of one softmax average over T scores at its worst tied configuration (one
    score at the maximum, T - 1 at gap y/β): max over y of (T-1) y e^-y / (1 + (T-1) e^-y); no β
    left in it. A derived reference, not a claim: two retrievals in a row err by about twice it."""
    y = np.linspace(1e-3, 60.0, 600001)
    return float(np.max((T - 1) * y * np.exp(-y) / (1 + (T - 1) * np.exp(-y))))


@check(
    "IF-K2",
    mutants={
        "bilinear-transposed": "FFN 1 forms r_iᵀ A_iᵀ x(t) instead of r_iᵀ A_i x(t) "
        "(A_i transposed)",
        "query-sign": "layer 1's query is -β A_i x(t): each token retrieves the argmin key",
        "value-floor": "layer 2's value weights x 1.001: an error floor 0.001 |F| that does not "
        "shrink with β (the bound still holds at β <= 3e4; the rate test must fail)",
    },
)
def two_layer_pairwise(ctx: Context, cid):
    c = claim("IF-K2")
    rows = _rebound(
        _pairwise_grid(ctx.grid, ctx.mutant),
        lambda r: c.evaluate_float("err_bound", D=r["D"], beta=r["beta"], T=r["T"]),
    )
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    slopes, fits, rate_ok, decided = [], [], True, 0
    for D, T in sorted({(r["D"], r["T"]) for r in rows}):
        sub = sorted((r for r in rows if r["D"] == D and r["T"] == T), key=lambda r: r["beta"])
        pred = float(c.asymptotic_exponent("beta", "err_bound", D=D, T=T))
        fit, tol, ok = _decay_fit(
            [r["beta"] for r in sub],
            [r["sup_error"] for r in sub],
            [r["claimed_bound"] for r in sub],
            pred,
        )
        dec = len(sub) >= K2_RATE_POINTS
        decided += dec
        if dec:
            rate_ok &= ok
        fits.append(
            f"D={D}, T={T}: β^{fit.slope:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}] vs <= "
            f"{pred:+.0f} + {tol:.3f}"
            + ("" if not dec else "" if ok else " FAILS")
            + ("" if dec else f" ({len(sub)} β: reported, not decided)")
        )
        slopes.append(slope_row(fit, f"sup error vs β (D={D}, T={T})", pred))
    # the digest's own quantitative prediction (§7 item 3, claim IF-K2p) at its stated β
    p = claim("IF-K2p")
    b0 = float(p.evaluate("beta_stated"))
    pred_err = p.evaluate_float("err_pred", beta=b0)
    at_b0 = [r for r in rows if r["beta"] == b0]
    digest = ""
    if at_b0:
        worst = max(at_b0, key=lambda r: r["sup_error"])
        over = [r for r in at_b0 if r["sup_error"] > pred_err]
        ties = {T: one_softmax_tie_error(T) for T in sorted({r["T"] for r in at_b0})}
        digest = (
            f" DISAGREEMENT with the digest's §7 item 3 (IF-K2p: <= {pred_err:.0e} at β = "
            f"{b0:.0e} for T <= {p.evaluate('T_max')}, D <= {p.evaluate('D_max')}): sup error at "
            f"β = {b0:.0e} is "
            + ", ".join(
                f"{r['sup_error']:.2e} (D={r['D']}, T={r['T']})"
                for r in sorted(at_b0, key=lambda r: (r["D"], r["T"]))
            )
            + f", above it in {len(over)}/{len(at_b0)} cells (worst "
            f"x{worst['sup_error'] / pred_err:.1f}). The maxima over {K2_RANDOM} random "
            "unit-norm inputs there are "
            + ", ".join(
                f"{r['random_max_error']:.1e}"
                for r in sorted(at_b0, key=lambda r: (r["D"], r["T"]))
            )
            + ", the size of the digest's own figures (2.7e-5 at D = 1, T = 8; 4.3e-5 at D = 3, "
            "T = 256): the digest's number is a typical-input error, not the sup-norm error it "
            "calls it; the construction is the digest's own (§4.2, exact bilinear FFN). "
            "Reference (derived here): one softmax over T scores errs by up to g(T)/β at its "
            "tied configuration, "
            + ", ".join(f"g({T}) = {g:.3f}" for T, g in ties.items())
            + ", so two retrievals per term err by up to about 2 g(T)/β = "
            + ", ".join(f"{2 * g / b0:.2e} (T={T})" for T, g in ties.items())
            + f" at β = {b0:.0e}, above {pred_err:.0e} for every T >= 8: the prediction "
            "cannot hold for a sup norm."
        )
    within = not bad
    ok = within and rate_ok and decided > 0
    slack = min(r["claimed_bound"] / r["sup_error"] for r in rows if r["sup_error"] > 0)
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"Σ_i max_{{s,t}} x(s)ᵀA_i x(t) with D heads per layer: sup error within IF-K2's "
        f"err_bound in {len(rows) - len(bad)}/{len(rows)} cells (slack {slack:.3g}: the bound "
        f"is that many times the worst case found, loose by its ln(βT)); rate in β (the "
        f"slope's 95% interval must lie at or below the catalogue's asymptotic exponent of "
        f"err_bound plus the ln(βT) factor's share of the bound's own slope over the grid, so "
        f"an error floor or a slower decay fails): " + "; ".join(fits) + "." + digest,
        covered="; ".join(
            f"D={D}, T={T}: β in {betas}" for (D, T), betas in _pairwise_axes(ctx.grid).items()
        )
        + f"; d = 4, unit-norm tokens, adversarial search (budget "
        f"{128 if ctx.profile == 'quick' else 1024}), {K2_RANDOM} random inputs per cell",
        rows=rows,
        slopes=slopes,
        slack=slack,
        scope=f"partial: D in {sorted({r['D'] for r in rows})}, T in "
        f"{sorted({r['T'] for r in rows})}, d = 4, one seeded draw of the A_i (spectral norm "
        f"1/2, scores in [-1/2, 1/2]), unit-norm tokens; the sup is estimated by adversarial "
        f"search (a lower bound on it); the rate decided where a (D, T) has >= "
        f"{K2_RATE_POINTS} β values",
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("D", "T", "beta", "sup_error", "claimed_bound")},
        plot={
            "x": "beta",
            "y": ["sup_error", "random_max_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": "IF-K2: pairwise max (sup error and random-input max)",
            "xlabel": "β",
            "ylabel": "error",
        },
    )


@check(
    "IF-K2p",
    mutants={
        "value-floor": "layer 2's value weights x 1.001 (IF-K2's mutant): an error floor at "
        "β = 1e4 of about 5e-4 per term",
    },
)
def pairwise_digest_prediction(ctx: Context, cid):
    """The digest's §7 item 3 at its stated β, on IF-K2's measured cells (D <= D_max,
    T <= T_max)."""
    p = claim("IF-K2p")
    b0 = float(p.evaluate("beta_stated"))
    T_max, D_max = int(p.evaluate("T_max")), int(p.evaluate("D_max"))
    rows = [
        r
        for r in _rebound(
            _pairwise_grid(ctx.grid, ctx.mutant),
            lambda r: p.evaluate_float("err_pred", beta=r["beta"]),
        )
        if r["beta"] == b0 and r["T"] <= T_max and r["D"] <= D_max
    ]
    if not rows:
        return Verdict(
            cid,
            "not-checkable",
            f"IF-K2's {ctx.grid} grid has no cell at β = {b0:g} with T <= {T_max}, D <= "
            f"{D_max}; a grid with one makes it checkable",
            scope="none",
        )
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    worst = max(rows, key=lambda r: r["sup_error"])
    slack = min(r["claimed_bound"] / r["sup_error"] for r in rows if r["sup_error"] > 0)
    ties = {T: one_softmax_tie_error(T) for T in sorted({r["T"] for r in rows})}
    return Verdict(
        cid,
        "refuted" if bad else "verified-numeric",
        f"at β = {b0:g} the construction's sup error is "
        + ", ".join(
            f"{r['sup_error']:.2e} (D={r['D']}, T={r['T']})"
            for r in sorted(rows, key=lambda r: (r["D"], r["T"]))
        )
        + f" against the predicted {worst['claimed_bound']:.0e}: "
        + (
            f"above it in {len(bad)}/{len(rows)} cells (worst x{1 / slack:.2f}). "
            if bad
            else f"within it in every cell (slack {slack:.3g}). "
        )
        + f"The maxima over {K2_RANDOM} random unit-norm inputs are "
        + ", ".join(
            f"{r['random_max_error']:.1e}" for r in sorted(rows, key=lambda r: (r["D"], r["T"]))
        )
        + ", the size of the digest's 2.7e-5 / 4.3e-5: its check measured typical inputs, "
        "not the sup. Derived reference: one softmax over T scores errs by up to g(T)/β at its "
        "tied configuration ("
        + ", ".join(f"g({T}) = {g:.3f}" for T, g in ties.items())
        + "), two retrievals per term by about twice that, above 1/β for T >= 8.",
        covered=f"IF-K2's cells at β = {b0:g}: D in {sorted({r['D'] for r in rows})}, T in "
        f"{sorted({r['T'] for r in rows})} (the claim: T <= {T_max}, D <= {D_max}), "
        "adversarial search",
        rows=rows,
        slack=slack,
        witness=None
        if not bad
        else {k: worst[k] for k in ("D", "T", "beta", "sup_error", "claimed_bound")},
        scope="full"
        if bad or ctx.profile == "full"
        else f"partial: T in {sorted({r['T'] for r in rows})}, D in "
        f"{sorted({r['D'] for r in rows})} of the claim's T <= {T_max}, D <= {D_max}",
    )


# ------------------------------------------------------------------------------- IF-K3
#: IF-K3's grid: T -> β / T values (the error depends on β/(4T)); d = 4 one-hot tokens
K3_AXES: dict[str, dict[str, list]] = {
    "quick": {"T": [4, 8], "beta_per_T": [25.0, 50.0, 100.0]},
    "full": {"T": [4, 8, 16, 32], "beta_per_T": [12.5, 25.0, 50.0, 75.0, 100.0]},
}
K3_VOCAB = 4


def _induction_mutation(mutant):
    """IF-K3's mutants, applied to the built induction construction."""
    if mutant == "no-ramp":
        # layer 2's position ramp removed: several earlier matches tie, their next tokens mix
        return lambda c: c.model.attention(1).q.weight.data[K3_VOCAB].zero_()
    if mutant == "value-floor":
        # layer 2's values x 1.001: an error floor 1e-3 that no β removes
        return lambda c: c.model.attention(1).v.weight.data.mul_(1.001)
    if mutant == "no-null":
        # the CLS "no match" key removed: an input without an earlier match returns a mixture
        def fn(c):
            k = c.model.attention(1).k.weight.data
            k[K3_VOCAB + 1, -2] = 0.0  # the offset row's CLS-flag column (cls is width-2)

        return fn
    return None


@memo
def _induction_grid(profile, mutant=None):
    """Sup error of the induction construction per (T, β) (claim-independent). The domain is
    one-hot sequences, so the search is random draws, the task's structured inputs, near-tie
    families and the discrete coordinate-wise search; gradient ascent is skipped (each step
    projects back to one-hot tokens: on this domain it costs seconds and finds nothing the
    discrete search does not)."""
    from approxtheory.constructions.infoflow import if_induction

    rows = []
    mutate = _induction_mutation(mutant)
    for T in K3_AXES[profile]["T"]:
        for bt in K3_AXES[profile]["beta_per_T"]:
            c = if_induction(T=T, d=K3_VOCAB, beta=T * bt)
            if mutate is not None:
                mutate(c)
            m = c.measure(budget=64 if profile == "quick" else 512, local_steps=0)
            rows.append(
                {
                    "T": T,
                    "beta": T * bt,
                    "params": c.params,
                    "readout_nonzero": c.extra["readout_nonzero"],
                    "sup_error": m["sup_error"],
                    "claimed_bound": c.claimed_bound,
                    "verdict": m["verdict"],
                }
            )
    return tuple(rows)


@check(
    "IF-K3",
    mutants={
        "no-ramp": "layer 2 loses its position ramp: several earlier matches tie and the head "
        "returns the mean of the tokens after them, not the token after the latest",
        "no-null": "layer 2 loses the CLS no-match key: a last token without an earlier "
        "occurrence returns a mixture of tokens instead of 0",
        "value-floor": "layer 2's value weights x 1.001: an error floor 1e-3 that does not "
        "shrink with β (the rate test must fail)",
    },
)
def induction_head_construction(ctx: Context, cid):
    c = claim("IF-K3")
    rows = _rebound(
        _induction_grid(ctx.profile, ctx.mutant),
        lambda r: c.evaluate_float("err_bound", beta=r["beta"], T=r["T"]),
    )
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    b = c.symbol("beta")
    fits, rate_ok = [], True
    for T in sorted({r["T"] for r in rows}):
        sub = sorted((r for r in rows if r["T"] == T), key=lambda r: r["beta"])
        e = c.expr("err_bound").subs(c.symbol("T"), T)
        # the claimed decay: ln(err_bound) ~ -κ β as β -> oo; the bound's own slope over the
        # grid minus -κ is the tolerance (the e^{-β} correction's share; never negative)
        kappa = -float(sp.limit(sp.diff(sp.log(e), b), b, sp.oo))
        x = np.array([r["beta"] for r in sub])
        scale = float(x.max())  # fit_rate fits logs: log(exp(β/scale)) = β/scale
        fit = fit_rate(np.exp(x / scale).tolist(), [r["sup_error"] for r in sub])
        with np.errstate(divide="ignore"):  # a claim mutant's bound may underflow to 0
            bslope = float(np.polyfit(x, np.log([r["claimed_bound"] for r in sub]), 1)[0])
        # decided against the half rate -κ/2 (the next slower candidate): the interval must lie
        # below the midpoint -3κ/4 plus the bound's own slowdown over the grid
        tol = max(0.0, bslope + kappa)
        lo, hi = fit.ci_low / scale, fit.ci_high / scale
        ok = hi < -0.75 * kappa + tol
        rate_ok &= ok
        fits.append(
            f"T={T}: ln(error) slope in β {fit.slope / scale:.5f} [{lo:.5f}, {hi:.5f}] against "
            f"the claimed -{kappa:.5f}, decided below -3κ/4 + {tol:.1e} = "
            f"{-0.75 * kappa + tol:.5f}{'' if ok else ' FAILS'}"
        )
    want = int(c.evaluate("readout_nonzero", d=K3_VOCAB))
    counts = sorted({int(r["readout_nonzero"]) for r in rows})
    params_ok = counts == [want]
    ok = not bad and rate_ok and params_ok
    slack = min(r["claimed_bound"] / r["sup_error"] for r in rows if r["sup_error"] > 0)
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"the constructed induction head (two layers, PE; d = {K3_VOCAB} one-hot tokens) is "
        f"within IF-K3's err_bound in {len(rows) - len(bad)}/{len(rows)} cells (slack "
        f"{slack:.3g}: the bound counts all T other keys at the smallest gap, the worst input "
        f"has one there); rate (the fitted slope of ln(sup error) against β, 95% interval, "
        f"closer to the bound's own exponent -κ = -1/(4T) than to the half rate -κ/2, so an "
        f"error floor or a slower decay fails): " + "; ".join(fits) + f"; read-out non-zero "
        f"weights {'/'.join(map(str, counts))} for every T against the claimed {want} "
        "(T-independent)",
        covered=f"T in {K3_AXES[ctx.profile]['T']}, β/T in "
        f"{K3_AXES[ctx.profile]['beta_per_T']}, d = {K3_VOCAB}, adversarial search over "
        "one-hot sequences (with the task's structured inputs: several matches, none, runs)",
        rows=rows,
        slack=slack,
        scope="full",
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("T", "beta", "sup_error", "claimed_bound")},
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": "IF-K3: constructed induction head",
            "xlabel": "β",
            "ylabel": "sup error",
            "logx": False,
        },
    )


# ------------------------------------------------------------------------------- IF-E1

#: the digest's test of IF-E1 (§7 item 7): mean CLS weight on each of positions 1-3, and the
#: largest mean total weight allowed on the other positions
SPA_BAND = (0.30, 0.37)
SPA_REST = 0.02
#: the measured fields of an infoflow_spa_weights row
SPA_FIELDS = ("seed", "nmse", *(f"w{t}" for t in range(1, 11)), "rest", "rest_max", "w123_sd")


def spa_criterion(rows) -> list:
    """The seeds whose mean CLS weights miss the digest's test (each of positions 1-3 in
    SPA_BAND and less than SPA_REST in total on the rest)."""
    lo, hi = SPA_BAND
    return [
        int(r["seed"])
        for r in rows
        if not (
            all(lo <= float(r[f"w{t}"]) <= hi for t in (1, 2, 3)) and float(r["rest"]) < SPA_REST
        )
    ]


def _shift_positions(rows) -> list:
    """The ``positions-shifted`` mutant: each row's CLS weight of position t read from position
    t + 1 (cyclically; a bookkeeping bug), the rest recomputed from the shifted weights."""
    out = []
    for r in rows:
        r = dict(r)
        w = [float(r[f"w{t}"]) for t in range(1, 11)]
        w = w[1:] + w[:1]
        r.update({f"w{t}": w[t - 1] for t in range(1, 11)})
        r["rest"] = r["rest_max"] = sum(w[3:])
        out.append(r)
    return out


@check(
    "IF-E1",
    mutants={
        "positions-shifted": "the CLS weight of position t read from position t + 1 (a "
        "bookkeeping bug in the per-position table)",
        "target-off-by-one": "the task sums x(2) + x(3) + x(4) (an off-by-one in the target)",
    },
)
def specific_position_aggregation(ctx: Context, cid):
    """infoflow_spa_weights through the runner; the ``target-off-by-one`` mutant retrains its
    variant with the same cell function, grid settings and seeds. The shared gate first (control:
    the model itself, the configuration the paper says learns the task: its validation NMSE
    finite and at most TRAINED_NMSE; the paper's value is not given); the mutant
    ``no-positional-encoding`` of earlier sessions is replaced by ``positions-shifted``: a model
    without positions cannot learn the target at all, so the gate now (rightly) calls it
    untrained, which shows nothing about the criterion."""
    from approxtheory.experiment import get, grid_values
    from approxtheory.experiments.infoflow_trained import spa_cell

    from ._gate import training_gate
    from .headcount import _exp_rows, _not_run
    from .tradeoffs import gated_verdict, trained_scale

    name = "infoflow_spa_weights"
    exp = get(name)
    grid = grid_values(exp, ctx.profile)
    if ctx.mutant != "target-off-by-one":
        raw, secs, note = _exp_rows(name, ctx.profile)
        if raw is None:
            return _not_run(cid, name, ctx.profile, note)
        rows = [dict(r) for r in raw]
    else:
        note, secs = f"mutant {ctx.mutant}: retrained", 0.0
        rows = [
            {
                "seed": s,
                **spa_cell(
                    {
                        "variant": ctx.mutant,
                        "lr": grid["lr"][0],
                        "steps": grid["steps"][0],
                        "seed": s,
                    }
                ),
            }
            for s in exp.seeds[ctx.profile]
        ]
    steps = int(grid["steps"][0])
    # the gate reads the run as trained (the bookkeeping mutant is applied after it)
    gate_rows = [{**r, "T": 10, "steps": steps} for r in rows]
    gate = training_gate(
        gate_rows,
        control=lambda r: True,
        describe="the one-layer, one-head model with positions (the paper's, which learns it)",
        config=(),
        metric="nmse",
        budget=IF_RECIPE,
    )
    scale = trained_scale([(name, gate)], {name: gate_rows}, "nmse", IF_PAPER)
    if ctx.is_mutant("positions-shifted"):
        rows = _shift_positions(rows)
    third = float(claim("IF-E1").evaluate("weight_per_position"))
    lo, hi = SPA_BAND
    fails = spa_criterion(rows)
    desc = "; ".join(
        f"seed {int(r['seed'])}: CLS weights on positions 1-3 = "
        f"{float(r['w1']):.3f}/{float(r['w2']):.3f}/{float(r['w3']):.3f} (claimed {third:.3f} "
        f"each; s.d. across inputs <= {float(r['w123_sd']):.3f}), on the other 7 = "
        f"{float(r['rest']):.4f} (max over inputs {float(r['rest_max']):.4f}), validation NMSE "
        f"{float(r['nmse']):.1e}"
        for r in rows
    )
    table = [
        {"seed": int(r["seed"]), "position": t, "weight": float(r[f"w{t}"])}
        for r in rows
        for t in range(1, 11)
    ]
    seeds = [int(r["seed"]) for r in rows]
    covered = (
        f"{name} ({ctx.profile}; {note}): one layer, one head (E = 16, head width 8), "
        f"learned positions, T = 10, d = 2, the shared loop with AdamW lr {grid['lr'][0]} (the "
        f"paper: 1e-3 for 2000 epochs), weight decay 1e-2, cosine, batch 128, {steps} steps, "
        f"seeds {seeds}"
    )
    plot = {
        "x": "position",
        "y": ["weight"],
        "group": "seed",
        "title": f"{cid}: mean CLS attention per position (claimed 1/3 on 1-3)",
        "xlabel": "position",
        "ylabel": "mean CLS weight",
        "logx": False,
        "logy": False,
    }
    gated = gated_verdict(
        cid,
        [(name, gate)],
        {name: gate_rows},
        covered,
        metric="nmse",
        paper=IF_PAPER,
        measured=desc,
        rows=table,
        plot=plot,
    )
    if gated is not None:
        gated.volatile = {"seconds": secs}
        return gated
    return Verdict(
        cid,
        "inconsistent" if fails else "consistent-empirical",
        f"{desc}. The digest's test: each of positions 1-3 in [{lo}, {hi}] and < "
        f"{SPA_REST} in total on the rest (means over 1024 fresh inputs)"
        + (f"; fails for seeds {', '.join(map(str, fails))}" if fails else ""),
        covered=covered,
        scale=scale,
        measured=[
            {k: int(r["seed"]) if k == "seed" else float(r[k]) for k in SPA_FIELDS} for r in rows
        ],
        claimed={"w1..w3": third, "rest": 0.0},
        witness=None if not fails else rows[seeds.index(fails[0])],
        rows=table,
        plot=plot,
        scope=f"partial: the CLS attention pattern after {steps} training steps per seed "
        f"({ctx.profile} profile); the paper's 2000 epochs and its (unreported) validation MSE "
        "are not reproduced",
        volatile={"seconds": secs},
    )


#: how far (in the exponent) the fitted growth of the weight count may sit from the claimed one
R1_EXPONENT_TOL = 0.1


def _z(x: float) -> str:
    """``x`` to 3 decimals, without a sign on zero."""
    return f"{round(x, 3) + 0.0:.3f}"


def _law_exponent_at(expr, name: str, values: dict):
    """The power-law exponent of ``expr`` in the symbol called ``name`` (0 when ``expr`` has no
    such symbol), with the other symbols set by name from ``values``; None when it is not a
    number there (not a power law, or a symbol left unset)."""
    x = next((s for s in expr.free_symbols if s.name == name), None)
    if x is None:
        return 0.0
    p = sp.simplify(x * sp.diff(sp.log(expr), x))
    p = p.subs({s: values[s.name] for s in p.free_symbols if s.name in values})
    p = sp.simplify(p)
    return float(p) if p.is_number and p.is_real else None


def _within(fit, a: float | None, tol: float) -> bool:
    """The fitted slope's whole 95% interval lies within ``tol`` of the exponent ``a`` (False
    when the claim's exponent could not be read)."""
    return a is not None and a - tol <= fit.ci_low and fit.ci_high <= a + tol


@check(
    "IF-R1",
    mutants={
        "beta-dropped": "the MPR head's W_Q carries 1 instead of β: precision is no longer bought "
        "with β, so the error does not fall to ε at fixed size",
        "value-gain": "the MPR head's value weight is 1.05: an error floor that no β removes",
    },
)
def mpr_charge(ctx: Context, cid):
    c = claim("IF-R1")
    rows = _rebound(
        _retrieval_grid(ctx.grid, ctx.mutant),
        lambda r: c.evaluate_float("err_mpr", beta=r["beta"], T=r["T"]),
    )
    for r in rows:
        # the precision the claim says β buys at fixed size: ε = err_mpr(β, T)
        r["epsilon"] = r["claimed_bound"]
    bad = [r for r in rows if r["verdict"] != "within-bound"]
    from approxtheory.constructions import build

    width = int(build("softmax_retrieval", T=4, beta=10.0).model.cfg.width)
    n_mpr = c.expr("N_mpr")
    fits, slopes, rate_ok = [], [], True
    for T in sorted({r["T"] for r in rows}):
        sub = sorted((r for r in rows if r["T"] == T), key=lambda r: -r["epsilon"])
        # the claimed growth of the size in 1/ε: N_mpr ∝ ε^-a (a = 0: free), at this head's
        # token dimension d = 1, width E and length T
        e = _law_exponent_at(n_mpr, "epsilon", {"d": 1, "E": width, "T": T, "I_size": 1})
        a = None if e is None else 0.0 - e
        fit = fit_rate([1 / r["epsilon"] for r in sub], [r["weights"] for r in sub])
        ok = _within(fit, a, R1_EXPONENT_TOL)
        rate_ok &= ok
        fits.append(
            f"T={T}: weights ~ (1/ε)^{_z(fit.slope)} [{_z(fit.ci_low)}, {_z(fit.ci_high)}] "
            f"against the claimed {'undecidable' if a is None else f'{a:g}'} ± "
            f"{R1_EXPONENT_TOL:g} over ε = {sub[0]['epsilon']:.3g}..{sub[-1]['epsilon']:.3g}"
            f"{'' if ok else ' FAILS'}"
        )
        slopes.append(slope_row(fit, f"weights vs 1/ε (T={T})", 0.0 if a is None else a))
    # the size against T at each β: N_mpr's T-exponent (0: the MPR cost does not grow with T)
    t_parts, t_ok = [], True
    aT = _law_exponent_at(n_mpr, "T", {"d": 1, "E": width, "epsilon": 0.1, "I_size": 1})
    if len({r["T"] for r in rows}) < 3:  # a grid cut in a test: no fit in T
        t_parts.append("not fitted (fewer than 3 lengths)")
    for beta in sorted({r["beta"] for r in rows}) if not t_parts else ():
        sub = sorted((r for r in rows if r["beta"] == beta), key=lambda r: r["T"])
        fit = fit_rate([r["T"] for r in sub], [r["weights"] for r in sub])
        ok = _within(fit, aT, R1_EXPONENT_TOL)
        t_ok &= ok
        t_parts.append(
            f"β={beta:g}: T^{_z(fit.slope)} [{_z(fit.ci_low)}, {_z(fit.ci_high)}]"
            f"{'' if ok else ' FAILS'}"
        )
    nonfinite = [r for r in rows if not math.isfinite(r["sup_error"])]
    ok = not bad and rate_ok and t_ok and not nonfinite
    weights = sorted({r["weights"] for r in rows})
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"the MPR charge: one max-position-retrieval head (IF-T2's softmax head at CLS, width "
        f"{width}, {weights} weights in all, attention included) has adversarial sup error at "
        f"or below ε = err_mpr(β, T) in {len(rows) - len(bad)}/{len(rows)} cells, so its "
        f"precision is bought with β alone; its weight count against 1/ε (the claimed "
        f"ε-exponent of N_mpr, decided when the fitted 95% interval lies within ± "
        f"{R1_EXPONENT_TOL:g} of it): " + "; ".join(fits) + "; against T (N_mpr's T-exponent "
        f"{aT!s:.4}): "
        + "; ".join(t_parts)
        + ". The residual is an identity (no parameters at all); GIA's and SPA's charges "
        "(IF-T4's decoding cost) are not tested here.",
        covered=f"T in {sorted({r['T'] for r in rows})}, β in "
        f"{sorted({r['beta'] for r in rows})} (ε = err_mpr from "
        f"{max(r['epsilon'] for r in rows):.3g} down to {min(r['epsilon'] for r in rows):.3g}), "
        "adversarial search; IF-T2's grid, measured once for both",
        rows=rows,
        slopes=slopes,
        scope="partial: the MPR charge (free): a fixed-size max-position-retrieval head reaches "
        "every ε = err_mpr(β) with a weight count flat in 1/ε and in T; the residual's charge "
        "(an identity) is free by construction, and the GIA/SPA charges at IF-T4's cost are "
        "not tested (IF-T4 is a lower bound over all decoders)",
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("T", "beta", "sup_error", "claimed_bound")},
        plot={
            "x": "beta",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "T",
            "title": "IF-R1: the MPR head at fixed size, sup error vs β",
            "xlabel": "β",
            "ylabel": "sup error",
        },
    )


# ------------------------------------------------------------------------------- IF-R2
#: IF-R2's grids: knots per axis (m = 1: N ReLU units, the digest's interpolant; m = 2: the
#: n x n nodes of a Freudenthal triangulation, one fixed-size ReLU hat per node)
R2_KNOTS = {1: [8, 16, 32, 64, 128, 256, 512], 2: [5, 9, 17, 33, 65]}
#: points per axis of the dense evaluation grid for m = 2 (contains every cell centre)
R2_EVAL_2D = 257


def _interp_1d(f, knots, u):
    """The digest's m = 1 interpolant (constructions.infoflow._interpolant: f(0) + Σ_j c_j
    ReLU(u - u_j), N ReLU units) of f on ``knots`` uniform knots, evaluated at u."""
    from approxtheory.constructions.infoflow import _interpolant

    uj, c, f0 = _interpolant(f, knots)
    return f0 + np.maximum(u[:, None] - uj[None, :], 0.0) @ c


def _interp_2d(f, n, X, Y):
    """The P1 interpolant of f on the Freudenthal triangulation of [0,1]^2 with n x n nodes
    (each square cut along x = y), evaluated on the grid X, Y; equal to Σ_nodes f(node) φ_node
    with the Courant hat φ = max(0, min of six affine maps), a fixed ReLU network per node."""
    h = 1.0 / (n - 1)
    g = np.linspace(0.0, 1.0, n)
    F = f(*np.meshgrid(g, g, indexing="ij"))
    i = np.minimum((X / h).astype(int), n - 2)
    j = np.minimum((Y / h).astype(int), n - 2)
    a, b = X / h - i, Y / h - j
    f00, f10, f01, f11 = F[i, j], F[i + 1, j], F[i, j + 1], F[i + 1, j + 1]
    upper = f00 + a * (f10 - f00) + b * (f11 - f10)
    lower = f00 + b * (f01 - f00) + a * (f11 - f01)
    return np.where(a >= b, upper, lower)


def _r2_targets(m: int, n: int, mutant=None):
    """1-Lipschitz targets (Euclidean norm) for the knot count n: ``adversarial`` (the distance
    to the nearest node: the interpolant is 0, the error the largest such distance, the worst
    case over the class for this interpolant), ``zigzag`` (a seeded 1-Lipschitz piecewise-linear
    ridge with 4096 pieces, finer than every grid) and ``smooth``."""
    rng = np.random.default_rng(7)
    h = 1.0 / (n - 1)
    slopes = rng.choice([-1.0, 1.0], 4096)
    brk = np.linspace(0.0, 1.0, 4097)
    vals = np.concatenate([[0.0], np.cumsum(slopes * np.diff(brk))])
    w = np.array([0.6, 0.8])

    def zig(t):
        return np.interp(t, brk, vals)

    gain = 2.0 if mutant == "steeper-targets" else 1.0
    if m == 1:
        return {
            "adversarial": lambda u: gain * np.abs(u - h * np.round(u / h)),
            "zigzag": lambda u: gain * zig(u),
            "smooth": lambda u: gain * np.sin(u),
        }, brk
    return {
        "adversarial": lambda x, y: (
            gain * np.hypot(x - h * np.round(x / h), y - h * np.round(y / h))
        ),
        "zigzag": lambda x, y: gain * zig(np.clip(w[0] * x + w[1] * y, 0, 1)),
        "smooth": lambda x, y: gain * np.sin(w[0] * x + w[1] * y),
    }, None


@memo
def _r2_measure(mutant=None):
    """Sup errors of the interpolants on the 1-Lipschitz targets (claim-independent). m = 1:
    exact (the error is piecewise linear between the knots and the targets' breakpoints, so its
    maximum over [0, 1] sits on one of them; the smooth target's is taken there too, near its
    interval maxima); m = 2: the maximum over a 257 x 257 grid that contains every cell centre
    (where the adversarial target's error is largest)."""
    rows = []
    for m, ns in R2_KNOTS.items():
        for n in ns:
            targets, brk = _r2_targets(m, n, mutant)
            for name, f in targets.items():
                if m == 1:
                    knots = np.linspace(0.0, 1.0, n)
                    mids = (knots[:-1] + knots[1:]) / 2
                    u = np.unique(np.concatenate([knots, mids, brk]))
                    err = float(np.max(np.abs(_interp_1d(f, n, u) - f(u))))
                    units = n
                else:
                    g = np.linspace(0.0, 1.0, R2_EVAL_2D)
                    X, Y = np.meshgrid(g, g, indexing="ij")
                    err = float(np.max(np.abs(_interp_2d(f, n, X, Y) - f(X, Y))))
                    units = n * n
                rows.append({"m": m, "knots": n, "units": units, "target": name, "sup_error": err})
    return tuple(rows)


def _exact_maps_error() -> dict:
    """The exactly representable maps of IF-R2 as fixed ReLU networks (min(a, b) = a - ReLU(a
    - b), max(a, b) = a + ReLU(b - a), a sum and a linear map: one or no unit each), their
    largest error on 10^4 seeded inputs in [-1, 1]^2."""
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (2, 10000))
    relu = lambda z: np.maximum(z, 0.0)  # noqa: E731
    nets = {
        "min": (a - relu(a - b), np.minimum(a, b)),
        "max": (a + relu(b - a), np.maximum(a, b)),
        "sum": (relu(a + b) - relu(-a - b), a + b),
        "linear": (relu(0.3 * a - 2 * b) - relu(2 * b - 0.3 * a), 0.3 * a - 2 * b),
    }
    return {k: float(np.max(np.abs(x - y))) for k, (x, y) in nets.items()}


def _window(a: float) -> tuple[float, float]:
    """The interval of error slopes (error ~ units^slope) that decides for the exponent a over
    its neighbours a -+ 1/2: between the midpoints of -1/a and -1/(a -+ 1/2)."""
    lo = -math.inf if a - 0.5 <= 0 else (-1 / a - 1 / (a - 0.5)) / 2
    return lo, (-1 / a - 1 / (a + 0.5)) / 2


@check(
    "IF-R2",
    mutants={
        "steeper-targets": "the test targets are 2-Lipschitz while the bound is evaluated with "
        "L_f = 1 (the adversarial one then exceeds L_f/N)",
        "knots-halved": "the interpolant is built with half the knots the count says (the "
        "bound L_f/N is then met only with twice the units)",
    },
)
def lipschitz_readout_cost(ctx: Context, cid):
    c = claim("IF-R2")
    raw = _r2_measure("steeper-targets" if ctx.is_mutant("steeper-targets") else None)
    rows, bad = [], []
    for r in raw:
        r = dict(r)
        if r["m"] == 1:
            used = max(2, r["knots"] // 2) if ctx.is_mutant("knots-halved") else r["knots"]
            if used != r["knots"]:
                half = (
                    next(
                        x
                        for x in raw
                        if x["m"] == 1 and x["knots"] == used and x["target"] == r["target"]
                    )
                    if used in R2_KNOTS[1]
                    else None
                )
                if half is not None:
                    r["sup_error"] = half["sup_error"]
            # the digest's count: about L_f/ε knots, i.e. sup error <= ε where knots_1d(ε) = N
            (e,) = c.solve_for("epsilon", "knots_1d", equals=r["knots"], L_f=1)
            r["claimed_bound"] = float(e)
            r["verdict"] = "within-bound" if r["sup_error"] <= r["claimed_bound"] else "refuted"
            if r["verdict"] != "within-bound":
                bad.append(r)
        rows.append(r)
    fits, slopes, rate_ok = [], [], True
    for m in sorted(R2_KNOTS):
        sub = [r for r in rows if r["m"] == m]
        units = sorted({r["units"] for r in sub})
        worst = [max(r["sup_error"] for r in sub if r["units"] == u) for u in units]
        a = float(c.rate_exponent().subs(c.symbol("m"), m))
        fit = fit_rate(units, worst)
        lo, hi = _window(a)
        ok = lo < fit.ci_low and fit.ci_high < hi
        rate_ok &= ok
        fits.append(
            f"m={m}: worst error ~ units^{fit.slope:.3f} [{fit.ci_low:.3f}, {fit.ci_high:.3f}] "
            f"against -1/{a:g} = {-1 / a:.3f} (decided inside ({lo:.3f}, {hi:.3f}), the midpoints "
            f"towards the exponents {a:g} -+ 1/2){'' if ok else ' FAILS'}"
        )
        slopes.append(slope_row(fit, f"worst sup error vs units (m={m})", -1 / a))
    exact = _exact_maps_error()
    e0 = c.exponent("epsilon", "N_exact")
    exact_ok = e0 == 0 and all(v <= 4 * np.finfo(np.float64).eps for v in exact.values())
    ok = not bad and rate_ok and exact_ok
    ones = [r for r in rows if r["m"] == 1]
    slack = min(r["claimed_bound"] / r["sup_error"] for r in ones if r["sup_error"] > 0)
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"m = 1: the digest's interpolant with N knots (N ReLU units) has sup error within "
        f"L_f/N (knots_1d = L_f/ε solved for ε) on the 1-Lipschitz targets in "
        f"{len(ones) - len(bad)}/{len(ones)} cells (slack {slack:.3g}, the tightest at the "
        f"adversarial target, the distance to the knots, whose error is h/2). Rate of "
        "N_lipschitz = C5 ε^-m (the worst error over the targets against the units, N ~ ε^-m "
        "meaning error ~ N^(-1/m)): "
        + "; ".join(fits)
        + f". Exact maps (N_exact, ε-exponent {e0}): fixed ReLU networks with largest errors "
        + ", ".join(f"{k} {v:.1e}" for k, v in exact.items())
        + ". C5 is unknown, so only the exponent of N_lipschitz and the m = 1 constant of "
        "knots_1d are tested.",
        covered=f"m = 1: N in {R2_KNOTS[1]} (exact sup over [0, 1]); m = 2: n x n nodes, n in "
        f"{R2_KNOTS[2]} (max over a {R2_EVAL_2D}^2 grid); targets adversarial, zigzag (4096 "
        "pieces), smooth; L_f = 1",
        rows=rows,
        slopes=slopes,
        slack=slack,
        scope="partial: the upper side for m = 1, 2 (uniform piecewise-linear interpolants, "
        "the worst case over 1-Lipschitz targets for them) and the exact maps; that no ReLU "
        "network does better (the lower side of Θ) is not tested: it is a theorem over all "
        "networks and depends on depth and on continuous parameter selection",
        witness=None
        if not bad
        else {k: bad[0][k] for k in ("m", "knots", "target", "sup_error", "claimed_bound")},
        plot={
            "x": "units",
            "y": ["sup_error"],
            "bound": "claimed_bound",
            "group": "target",
            "title": "IF-R2: Lipschitz read-out, sup error vs units (m = 1 and 2)",
            "xlabel": "ReLU units (m = 1) / nodes (m = 2)",
            "ylabel": "sup error",
        },
    )


# ------------------------------------------------------------------------------- IF-R3
#: IF-R3's cases (|I|, d): the decoder must read m = |I|·d coordinates apart from the mixture
R3_CASES = ((1, 1), (2, 1), (1, 2))
#: tokens per sequence (the SPA head averages the first |I|) and the head's inverse temperature
R3_T, R3_BETA = 4, 50.0


def _spa_mixture(X, size: int, slots: bool = True):
    """One SPA head over the first ``size`` positions (scores β·[s < size]: positional, content
    free): the softmax average of the values x̂(s) = x(s) in its own block of E = T d
    coordinates (the encoder φ(x(s), s) with the position, ``slots``) or, without slots, every
    token in the same d coordinates (E = d). Returns (z, weights, E)."""
    B, T, d = X.shape
    sc = R3_BETA * (np.arange(T) < size)
    w = np.exp(sc - sc.max())
    w /= w.sum()
    if slots:
        return (w[None, :, None] * X).reshape(B, T * d), w, T * d
    return np.einsum("t,btd->bd", w, X), w, d


def _spa_read(z, w, size: int, d: int, slots: bool = True, gain: float = 1.0):
    """The decoder's first (linear) layer: the |I| tokens read back from the mixture, block p of
    z divided by the known weight w_p (with slots); without slots the one average is all it
    has, so every token is read as it. Returns (B, |I| d) in [0, 1] (clipped)."""
    if slots:
        u = np.concatenate([z[:, p * d : (p + 1) * d] / w[p] for p in range(size)], axis=1)
    else:
        u = np.concatenate([z / (w[:size].sum())] * size, axis=1)
    return np.clip(gain * u, 0.0, 1.0)


@memo
def _r3_measure(mutant=None):
    """Sup errors of the SPA-mixture decoder (claim-independent): per case (|I|, d) and knot
    count n, the mixture of the first |I| of T tokens, read back linearly, then IF-R2's
    interpolant of the target on the n-node grid of [0, 1]^m (m = |I|d), against the target of
    the true tokens, on IF-R2's 1-Lipschitz targets and evaluation points (m = 1: exact; m = 2:
    a 257^2 grid with every cell centre); the other T - |I| tokens are seeded uniform draws."""
    rng = np.random.default_rng(11)
    slots = mutant != "no-slots"
    gain = 1.05 if mutant == "read-gain" else 1.0
    rows = []
    for size, d in R3_CASES:
        m = size * d
        for n in R2_KNOTS[m]:
            targets, brk = _r2_targets(m, n)
            if m == 1:
                knots = np.linspace(0.0, 1.0, n)
                pts = np.unique(np.concatenate([knots, (knots[:-1] + knots[1:]) / 2, brk]))[:, None]
            else:
                g = np.linspace(0.0, 1.0, R2_EVAL_2D)
                pts = np.stack([a.ravel() for a in np.meshgrid(g, g, indexing="ij")], axis=1)
            X = rng.uniform(0.0, 1.0, (len(pts), R3_T, d))
            X[:, :size, :] = pts.reshape(len(pts), size, d)
            z, w, E = _spa_mixture(X, size, slots)
            u = _spa_read(z, w, size, d, slots, gain)
            for name, f in targets.items():
                if m == 1:
                    err = np.abs(_interp_1d(f, n, u[:, 0]) - f(pts[:, 0]))
                else:
                    err = np.abs(_interp_2d(f, n, u[:, 0], u[:, 1]) - f(pts[:, 0], pts[:, 1]))
                rows.append(
                    {
                        "I_size": size,
                        "d": d,
                        "m": m,
                        "E": E,
                        "knots": n,
                        "units": n**m,
                        "target": name,
                        "sup_error": float(np.max(err)),
                    }
                )
    return tuple(rows)


@check(
    "IF-R3",
    mutants={
        "no-slots": "the encoder puts every token in the same d coordinates: the mixture is one "
        "average of the |I| tokens, which the decoder cannot read apart (an error floor)",
        "read-gain": "the decoder's linear read of the mixture is 1.05 x the inverse of the SPA "
        "weight: an error floor that no knot count removes",
    },
)
def mixture_decode_cost(ctx: Context, cid):
    c = claim("IF-R3")
    rows = [dict(r) for r in _r3_measure(ctx.mutant)]
    law = c.expr("N_decode")
    fits, slopes, ok = [], [], True
    for size, d in R3_CASES:
        sub = [r for r in rows if (r["I_size"], r["d"]) == (size, d)]
        units = sorted({r["units"] for r in sub})
        worst = [max(r["sup_error"] for r in sub if r["units"] == u) for u in units]
        for r in sub:  # the plotted series: the worst error over the targets, per case
            r["case"] = f"|I|={size}, d={d}"
            r["worst_error"] = worst[units.index(r["units"])]
        e = _law_exponent_at(law, "epsilon", {"I_size": size, "d": d, "E": sub[0]["E"]})
        finite = all(math.isfinite(x) and x > 0 for x in worst)
        if e is None or not finite or not -e > 0:
            ok = False
            fits.append(
                f"|I|={size}, d={d}: claimed exponent {e} or errors "
                f"{', '.join(f'{x:.3g}' for x in worst)} not decidable FAILS"
            )
            continue
        a = 0.0 - e
        fit = fit_rate(units, worst)
        lo, hi = _window(a)
        good = lo < fit.ci_low and fit.ci_high < hi
        ok &= good
        fits.append(
            f"|I|={size}, d={d} (m = {size * d}): worst error ~ units^{fit.slope:.3f} "
            f"[{fit.ci_low:.3f}, {fit.ci_high:.3f}] against -1/{a:g} = {-1 / a:.3f} (decided "
            f"inside ({lo:.3f}, {hi:.3f}), the midpoints towards {a:g} -+ 1/2)"
            f"{'' if good else ' FAILS'}"
        )
        slopes.append(slope_row(fit, f"worst sup error vs units (|I|={size}, d={d})", -1 / a))
    return Verdict(
        cid,
        "verified-numeric" if ok else "refuted",
        f"the matching upper construction: one SPA head averages the first |I| of T = {R3_T} "
        f"tokens (β = {R3_BETA:g}; the encoder puts each token in its own block, E = T d), the "
        "decoder reads the |I| tokens back linearly (a fixed layer of |I|d x E weights) and "
        "interpolates the target on an n-node grid of [0, 1]^{|I|d} (IF-R2's interpolants, n^m "
        "units); its count N ~ ε^-a means the worst error over 1-Lipschitz targets falls like "
        "units^(-1/a), a = N_decode's ε-exponent: "
        + "; ".join(fits)
        + ". The decoding cost is then the plain Lipschitz count |I|d, as claimed; that no "
        "decoder does better (the lower bound) is not tested. Without the positional slots "
        "(the 'no-slots' mutant: the mixture is one average of the tokens) no decoder of this "
        "form converges.",
        covered="(|I|, d) = "
        + ", ".join(f"({a}, {b})" for a, b in R3_CASES)
        + f", T = {R3_T}; knots per axis {', '.join(map(str, R2_KNOTS[1]))} (m = 1, exact sup "
        f"over [0, 1]) and {', '.join(map(str, R2_KNOTS[2]))} (m = 2, max over a "
        f"{R2_EVAL_2D}^2 grid); IF-R2's adversarial, zigzag and smooth 1-Lipschitz targets",
        rows=rows,
        slopes=slopes,
        slack=None,
        scope="partial: the matching upper construction (the lower bound itself is not "
        "testable): an SPA mixture whose tokens the encoder keeps in separate coordinates, "
        "decoded at ε^-(|I|d) parameters for |I| d <= 2",
        witness=None,
        plot={
            "x": "units",
            "y": ["worst_error"],
            "group": "case",
            "title": "IF-R3: decoding an SPA mixture, worst sup error over the targets",
            "xlabel": "ReLU units / grid nodes",
            "ylabel": "sup error",
        },
    )


# ------------------------------------------------------------------------------- IF-R4
#: (α_1, α_2, C_1, C_2) cases of IF-R4: either step dominant, the dominated one with a far
#: larger constant (where a pre-asymptotic fit would pick it), equal exponents, a free step
R4_CASES = (
    (2, sp.Rational(1, 2), 1, 100),
    (sp.Rational(1, 2), 2, 10**6, 1),
    (sp.Rational(3, 2), sp.Rational(3, 2), 1, 1),
    (3, 0, 1, 10**6),
    (sp.Rational(7, 10), sp.Rational(3, 10), 10**3, 1),
)
#: ε values of the numeric confirmation (small enough that the dominant step wins every case)
R4_EPS = [sp.Rational(1, 10**k) for k in (30, 40, 50, 60, 70)]


@check(
    "IF-R4",
    mutants={
        "mean-rule": "the rule composes by the mean of the exponents, (α_1 + α_2)/2, instead of "
        "reading the claim's alpha_total",
    },
)
def composition_rule(ctx: Context, cid):
    c = claim("IF-R4")
    rows, bad = [], []
    for a1, a2, C1, C2 in R4_CASES:
        vals = {"alpha1": a1, "alpha2": a2}
        if ctx.is_mutant("mean-rule"):
            claimed = (sp.sympify(a1) + a2) / 2
        else:
            claimed = c.evaluate("alpha_total", **vals)
        lim = -c.asymptotic_exponent("epsilon", "N_total", 0, C_1=C1, C_2=C2, **vals)
        Ns = [c.evaluate_float("N_total", epsilon=e, C_1=C1, C_2=C2, **vals) for e in R4_EPS]
        fit = fit_rate([float(1 / e) for e in R4_EPS], Ns)
        agree = sp.simplify(lim - claimed) == 0 and fit.contains(float(claimed))
        row = {
            "alpha1": float(a1),
            "alpha2": float(a2),
            "C_1": float(C1),
            "C_2": float(C2),
            "alpha_claimed": float(claimed),
            "alpha_limit": float(lim),
            "fitted": fit.slope,
            "fitted_lo": fit.ci_low,
            "fitted_hi": fit.ci_high,
            "agree": bool(agree),
        }
        rows.append(row)
        if not agree:
            bad.append(row)
    return Verdict(
        cid,
        "refuted" if bad else "verified-symbolic",
        "N_total = C_1 ε^-α_1 + C_2 ε^-α_2: its exponent as ε -> 0 (sympy's limit of "
        "-ε dlogN/dε) equals the claim's alpha_total, and the log-log slope of N_total against "
        "1/ε at ε = 1e-30..1e-70 has alpha_total in its interval, in "
        f"{len(rows) - len(bad)}/{len(rows)} cases: "
        + "; ".join(
            f"(α = {r['alpha1']:g}, {r['alpha2']:g}; C = {r['C_1']:g}, {r['C_2']:g}): limit "
            f"{r['alpha_limit']:g}, claimed {r['alpha_claimed']:g}, fitted {r['fitted']:.4f}"
            for r in rows
        )
        + ". The calculus (approxtheory.infoflow.predict_rate) composes with sympy's Max, the "
        "same rule, written there, not read from this claim.",
        covered=f"{len(R4_CASES)} cases: either step dominant, the dominated step with a "
        "constant up to 1e6 x larger, equal exponents, a free (α = 0) step",
        rows=rows,
        witness=bad[0] if bad else None,
        slack=None,
        scope="full",
    )


# ------------------------------------------------------------------------- IF-P1, IF-P2
# The InfoFlow calculus (approxtheory.infoflow, the digest's §5.2 reconstruction) against the
# results it is said to recover. Qualitative criterion, from the claims' own wording: an exponent
# is "T-independent" when it has no T, "grows with T" when it is linear in T with a positive
# slope (HC-T2b's k, IF-T1's k(T) = aT + b); IF-T1's two-layer exponent is compared exactly.


def _linear_in_T(e, T) -> bool:
    e = sp.sympify(e)
    return bool(e.has(T) and sp.diff(e, T, 2) == 0 and sp.diff(e, T).is_positive)


#: the token and embedding widths at which IF-P2's plot evaluates the predicted exponents
PLOT_DE = {"d": 1, "E": 8}


def _if_mutant_law(mutant):
    """A decode law that does not grow with the block size (the mutant ``gia-constant``)."""
    from approxtheory.infoflow import DECODE_LAWS, DecodeLaw

    if mutant == "gia-constant":
        return [DecodeLaw("mutant", lambda size, d, E: d / E, "mutant", "none")]
    return list(DECODE_LAWS.values())


@check(
    "IF-P1",
    mutants={
        "gia-constant": "the decode law ignores the block size (ε^-(d/E) for any |I|): global "
        "aggregation no longer costs more as T grows",
        "heads-shared": "the scheduler lets one head host any number of retrievals (D x the "
        "heads): nothing ever falls back",
    },
)
def infoflow_recovers_head_count(ctx: Context, cid):
    from approxtheory.infoflow import Arch, T, make_task, predict_rate

    a, b = claim("HC-T2a"), claim("HC-T2b")
    a_exp, b_exp = a.rate_exponent(), b.rate_exponent()
    rows, bad = [], []
    for law in _if_mutant_law(ctx.mutant):
        for D in range(1, ctx.pick(5, 7)):
            for h in range(1, D + 3):
                heads = h * D if ctx.is_mutant("heads-shared") else h
                p = predict_rate(Arch((heads,)), make_task("gdr", D=D), decode_law=law)
                if a.in_regime(h=h, D=D):
                    theorem, agree = "HC-T2a", not p.depends_on_T and not a_exp.has(T)
                else:
                    assert b.in_regime(s=h, D=D)
                    hc = b_exp.subs(b.symbol("s"), h).subs(b.symbol("D"), D)
                    theorem = "HC-T2b"
                    agree = _linear_in_T(hc, T) and _linear_in_T(p.dominant.exponent, T)
                th_exp = a_exp if theorem == "HC-T2a" else hc
                row = {
                    "decode_law": law.name,
                    "D": D,
                    "h": h,
                    "h_minus_D": h - D,
                    "theorem": theorem,
                    "alpha": str(p.alpha),
                    "depends_on_T": p.depends_on_T,
                    # the plot's 0/1 columns: does each exponent contain T?
                    "calculus_T_dependent": int(p.depends_on_T),
                    "theorem_T_dependent": int(sp.sympify(th_exp).has(T)),
                    "dominant": p.dominant.describe(),
                    "agree": agree,
                }
                rows.append(row)
                if not agree:
                    bad.append(row)
    return Verdict(
        cid,
        "refuted" if bad else "verified-symbolic",
        f"one layer, h heads, generalized D-retrieval: the calculus predicts a T-free exponent "
        f"exactly where HC-T2a applies (h >= D; its rate ε^-{a_exp} has no T) and an exponent "
        f"linear in T with positive slope exactly where HC-T2b applies (h < D; its k = {b_exp}) "
        f"in {len(rows) - len(bad)}/{len(rows)} cells",
        covered=f"D in 1..{ctx.pick(4, 6)}, h in 1..D+2, one layer, decode laws "
        f"{', '.join(sorted({r['decode_law'] for r in rows}))}",
        witness=bad[0] if bad else None,
        rows=rows,
        plot={
            "x": "h_minus_D",
            "y": ["calculus_T_dependent", "theorem_T_dependent"],
            "group": "decode_law",
            "title": f"{cid}: does the exponent grow with T? (1 = yes; calculus vs HC-T2a/b)",
            "xlabel": "h - D (heads minus retrievals; HC-T2a from 0)",
            "ylabel": "exponent depends on T (0/1)",
            "logx": False,
            "logy": False,
        },
        scope="surrogate: the project's reconstruction of the InfoFlow calculus "
        "(approxtheory.infoflow, digest §5.2 [DER]) stands in for the paper's framework, which "
        "the digest did not see; compared: whether its exponent depends on T (T-free against "
        "linear in T with a positive slope) where HC-T2a/HC-T2b apply; the constants are not "
        "compared (the calculus charges ε^-D for a Lipschitz F_0 where HC-T2a has γ, and a "
        "slope d/E where HC-T2b has 1/(4((n+1)s+1)))",
    )


@check(
    "IF-P2",
    mutants={
        "gia-constant": "the decode law ignores the block size (ε^-(d/E) for any |I|): one layer "
        "no longer pays with T",
        "readout-quadratic": "KTH(2)'s read-out f is charged as a Lipschitz map of 2 variables "
        "(ε^-2) instead of 1",
    },
)
def infoflow_recovers_depth_separation(ctx: Context, cid):
    import dataclasses

    from approxtheory.infoflow import Arch, Readout, T, make_task, predict_rate

    t1 = claim("IF-T1")
    one_layer = -t1.exponent("epsilon", expr="N1_lower")  # k(T) = aT + b
    two_layer = -t1.exponent("epsilon", expr="N2_upper")  # 1
    kth = make_task("kth", k=2)
    if ctx.is_mutant("readout-quadratic"):
        kth = dataclasses.replace(kth, readout=Readout(("top",), 2, "mutant"))
    ind = make_task("ind")
    rows, bad = [], []

    archs: list = []  # the plot's x: architectures in the order first seen

    def record(p, task, arch, law, claimed, agree):
        if arch.label() not in archs:
            archs.append(arch.label())
        alpha = sp.sympify(p.alpha)
        widths = {x: PLOT_DE[x.name] for x in alpha.free_symbols if x.name in PLOT_DE}
        at = {t: float(alpha.subs({T: t, **widths})) for t in (8, 64)}
        row = {
            "task": task.name,
            "arch": arch.label(),
            "arch_index": archs.index(arch.label()),
            "series": f"{task.name}, {law.name} law",
            "decode_law": law.name,
            "claimed": claimed,
            "alpha": str(p.alpha),
            "alpha_at_T8": at[8],
            "alpha_at_T64": at[64],
            "dominant": p.dominant.describe(),
            "agree": agree,
        }
        rows.append(row)
        if not agree:
            bad.append(row)

    for law in _if_mutant_law(ctx.mutant):
        for pe in (False, True):
            for h in (1, 2, 4):
                arch = Arch((h,), pos_enc=pe)
                p = predict_rate(arch, kth, decode_law=law)
                ok = _linear_in_T(p.dominant.exponent, T) and _linear_in_T(one_layer, T)
                record(p, kth, arch, law, f"IF-T1 one layer: ε^-({one_layer})", ok)
        arch = Arch((1, 1), pos_enc=True)
        p = predict_rate(arch, kth, decode_law=law)
        record(p, kth, arch, law, f"IF-T1 two layers: ε^-({two_layer})", p.alpha == two_layer)
        for h in (1, 2, 4):
            arch = Arch((h,), pos_enc=True)
            p = predict_rate(arch, ind, decode_law=law)
            record(
                p, ind, arch, law, "one layer grows with T", _linear_in_T(p.dominant.exponent, T)
            )
        arch = Arch((1, 1), pos_enc=True)
        p = predict_rate(arch, ind, decode_law=law)
        record(p, ind, arch, law, "two layers T-independent", not p.depends_on_T)
    return Verdict(
        cid,
        "refuted" if bad else "verified-symbolic",
        "the calculus reproduces the depth separation: induction (TASK-IND) is T-free with two "
        "layers (1, 1) + PE and linear in T with one layer; TASK-KTH(2) costs ε^-(linear in T) "
        f"with one layer like IF-T1's ε^-({one_layer}) and exactly IF-T1's ε^-({two_layer}) "
        f"with (1, 1) + PE; {len(rows) - len(bad)}/{len(rows)} cells agree",
        covered="TASK-IND and TASK-KTH(2); one layer with 1, 2, 4 heads (KTH(2) with and without "
        "PE), two layers (1, 1) + PE; decode laws "
        f"{', '.join(sorted({r['decode_law'] for r in rows}))}",
        witness=bad[0] if bad else None,
        rows=rows,
        plot={
            "x": "arch_index",
            "y": ["alpha_at_T8", "alpha_at_T64"],
            "group": "series",
            "title": f"{cid}: predicted exponent at T = 8 and 64 "
            f"({', '.join(f'{k} = {v}' for k, v in PLOT_DE.items())}) per architecture",
            "xlabel": "architecture: " + ", ".join(f"{i} = {a}" for i, a in enumerate(archs)),
            "ylabel": "predicted exponent alpha (cost ~ eps^-alpha)",
            "logx": False,
            "logy": False,
        },
        scope="surrogate: the project's reconstruction of the InfoFlow calculus "
        "(approxtheory.infoflow, digest §5.2 [DER]) stands in for the paper's framework; the "
        "induction separation is compared as T-free against linear in T (Sanford et al. as "
        "quoted by [Q1]), KTH(2) against IF-T1's exponents (IF-T1's task is a candidate, the "
        "digest's ambiguity 2); no trained network",
    )


# ------------------------------------------------------------------------- IF-P3, IF-P4
#: stated criteria (digest §7 items 5 and 6): a predicted T-dependent configuration's NMSE at
#: least GAP_P3 x the T-free one's (IF-P3); NMSE at the largest T at least GROWTH_P4 x the smallest
#: T's and above FLOOR_P4 at the largest T for every size (IF-P4); both on bootstrap intervals
GAP_P3, GROWTH_P4, FLOOR_P4 = 10.0, 5.0, 0.5
#: IF-P3's regime (issue 26): the paper's own gaps are "two to three orders of magnitude" only
#: for D <= P3_MAX_D (at T = 64; digest §6.1), "about one order" at D = 5 and "a few times" at
#: D = 6, so the head threshold is decided for D <= P3_MAX_D only (D above it: reported, not
#: decided; the paper's D = 5 and D = 6 would fail GAP_P3 on any interval, see
#: tests/test_gate_papers.py); at the paper's T (>= P3_PAPER_T) the statement's "orders of
#: magnitude" is held to GAP_P3_PAPER, at the shorter T the project runs to the digest's reduced
#: prediction GAP_P3 (§7 item 5: "at least 10x", T = 16)
P3_MAX_D, P3_PAPER_T, GAP_P3_PAPER = 4, 64, 100.0
#: an efficient configuration's NMSE above this is far from the paper's 1e-4..1e-3: undertrained
TRAINED_P3 = TRAINED_NMSE  # the shared gate's threshold (_gate.py)
#: a run whose NMSE is at least this ended at the constant predictor's level (NMSE 1 predicts
#: the mean): training collapsed; the IF-P3 evidence counts such runs
COLLAPSED = 0.9

#: the paper's recipe (digest §6), said in a gated InfoFlow verdict
IF_RECIPE = (
    "The paper's recipe (digest §6, [Q1]): AdamW lr 1e-3, weight decay 1e-2, cosine annealing, "
    "best validation NMSE over training, several seeds; §6.1 at d = 4, T = 64; batch size and "
    "training length not stated (§6.4: 2000 epochs)"
)
#: what the paper reports per trained InfoFlow experiment (digest §6, §7)
IF_PAPER = {
    "infoflow_pmax_heads": "§6.1: TASK-PMAX(D), d = 4, T = 64, D in 2..6, AdamW lr 1e-3, wd "
    "1e-2: (D, D) best validation NMSE of order 1e-4 to 1e-3; one head fewer in either layer: "
    "two to three orders of magnitude worse for D <= 4, about one order at D = 5, a few times "
    "at D = 6",
    "infoflow_tri_growth": "§6.2: TASK-TRI, d = 2, (2,2)/E = 24, (4,4)/E = 24, (4,4)/E = 48, T "
    "in {3, 8, 16, 32, 64}: NMSE of order 1e-3 at T = 3, of order 0.1 at T = 8, close to 1 at "
    "T >= 16, whatever the size",
    "infoflow_spa_weights": "§6.4: one layer, one head, positions, T = 10, x ~ N(0, I_2), "
    "AdamW 1e-3, 2000 epochs: CLS weights about 1/3 on positions 1-3, about 0 elsewhere; the "
    "validation MSE is not given",
    "infoflow_kth_depth": "no paper figure (digest §7 item 4, the digest's prediction): the "
    "two-layer (1, 1) model below NMSE 1e-2 at T in {4, 8, 16, 32} (Adam lr 1e-3, batch 256, "
    "3000 steps); one layer at least 10x worse at T = 32",
    "infoflow_pmax_depth": "no paper figure (digest §7 item 4 on TASK-PMAX(1), the digest's "
    "candidate separation task)",
}
#: the paper's (D, D) magnitude (digest §6.1: "order 1e-4 to 1e-3"; its upper end) at T = 64
P3_PAPER_NMSE = 1e-3


def _nonfinite(rows, fields, label) -> list:
    """One failure message per row whose measured ``fields`` hold NaN or inf (a measurement
    that failed is a failure of the criterion, never a pass nor an undecided run)."""
    out = []
    for r in rows:
        bad = [f for f in fields if f in r and not np.isfinite(float(r[f]))]
        if bad:
            out.append(f"{label(r)}: non-finite {', '.join(f'{f} = {r[f]}' for f in bad)}")
    return out


def _best_rows(rows, by) -> dict:
    """Per ``by`` key, the row with the smallest val_nmse over seeds (the paper's best NMSE)."""
    best: dict = {}
    for r in rows:
        k = tuple(int(r[b]) for b in by)
        if k not in best or float(r["val_nmse"]) < float(best[k]["val_nmse"]):
            best[k] = r
    return best


def _training_text(raw) -> str:
    """The training steps and width E of infoflow_pmax_heads rows: "16000 steps", or per D where
    the profile trains the D values for different numbers of steps ("steps 16000 (D = 2), 32000
    (D = 3)"); the width is named the same way where the rows carry one ("E = 32" or "E 32
    (D = 2), 48 (D = 3)")."""

    def per_d(key: str, one: str, label: str) -> str | None:
        by: dict = {}
        for r in raw:
            if key in r:
                by.setdefault(int(r["D"]), set()).add(int(r[key]))
        allv = sorted({v for vs in by.values() for v in vs})
        if not allv:
            return None
        if len(allv) == 1:
            return one.format(allv[0])
        return f"{label} " + ", ".join(
            f"{'/'.join(map(str, sorted(vs)))} (D = {D})" for D, vs in sorted(by.items())
        )

    parts = [per_d("steps", "{} steps", "steps"), per_d("E", "E = {}", "E")]
    return ", ".join(p for p in parts if p)


def _nm(r) -> tuple[float, float, float]:
    return float(r["val_nmse"]), float(r["nmse_lo"]), float(r["nmse_hi"])


def _with_intervals(rows, by) -> list:
    """``rows`` with an NMSE interval on every row: a row without its bootstrap interval
    (``nmse_lo``, ``nmse_hi``; results from elsewhere, ``verify --results``, may carry only
    ``val_nmse``) gets the range over the seeds of its configuration (``by``), so a decision is
    still on an interval (a single seed: a point, and the evidence shows it)."""
    rows = [dict(r) for r in rows]
    span: dict = {}
    for r in rows:
        k = tuple(r.get(b) for b in by)
        v = float(r["val_nmse"])
        lo, hi = span.get(k, (v, v))
        span[k] = (min(lo, v), max(hi, v))
    for r in rows:
        lo, hi = span[tuple(r.get(b) for b in by)]
        r.setdefault("nmse_lo", lo)
        r.setdefault("nmse_hi", hi)
    return rows


results_schema(
    "IF-P3",
    required={
        "D": ("int", "the task's dimension D (p-max over D coordinates); the regime is D <= 4"),
        "h1": ("int", "heads of the first attention layer"),
        "h2": ("int", "heads of the second attention layer"),
        "T": ("int", "sequence length (the paper's: 64)"),
        "val_nmse": ("metric", "validation NMSE of the trained two-layer model"),
    },
    optional={
        "seed": ("int", "the training seed (the interval is the range over seeds)"),
        "nmse_lo": ("metric", "lower end of a 95 % interval of val_nmse"),
        "nmse_hi": ("metric", "upper end of a 95 % interval of val_nmse"),
        "steps": ("int", "training steps (reported)"),
    },
    defaults={"seed": 0},
    route=lambda r: "infoflow_pmax_heads",
    doc="trained two-layer models per (D, h1, h2, T): predict_rate says which head pairs are "
    "T-free; the gap NMSE(deficient) / NMSE(efficient) is judged on intervals, with the "
    "training-adequacy gate on the efficient pairs",
)


def p3_gates(rows) -> dict:
    """IF-P3's training-adequacy gate per D (the shared gate, proofs_check/_gate.py): control
    the configurations with h1 >= D and h2 >= D (those the claim says are efficient: a set, so
    that were the threshold one head later, a (D+1, D+1) model, where run, still trains and the
    criterion can say inconsistent), per T where the rows have it, held to the paper's (D, D)
    magnitude :data:`P3_PAPER_NMSE` (digest §6.1, reported at T = 64; a T-free configuration
    does no worse at a shorter T)."""
    from ._gate import PaperMagnitude, training_gate
    from .tradeoffs import present_keys

    mag = PaperMagnitude(
        P3_PAPER_NMSE,
        "digest §6.1 ([Q1],[Q2]): (D, D) best validation NMSE of order 1e-4 to 1e-3 (its upper "
        "end) at d = 4, T = 64",
    )
    out = {}
    for D in sorted({int(r["D"]) for r in rows}):
        rD = [r for r in rows if int(r["D"]) == D]
        by = present_keys(rD, ("T",))
        Ts = sorted({int(r["T"]) for r in rD}) if by else []
        paper = {(T, D, D): mag for T in Ts} if by else {(D, D): mag}
        out[D] = training_gate(
            rD,
            control=lambda r: int(r["h1"]) >= int(r["D"]) and int(r["h2"]) >= int(r["D"]),
            describe=f"h1 >= D and h2 >= D at D = {D} (the configurations IF-P3 says are "
            "efficient)" + (", per T" if by else ""),
            by=by,
            config=("h1", "h2"),
            paper=paper,
            budget=IF_RECIPE,
        )
    return out


def p3_criterion(rows, mutant: str | None = None) -> dict:
    """IF-P3 on infoflow_pmax_heads rows, per (D, T): predict_rate says which (h1, h2) are
    T-free (efficient) and which T-dependent; within the regime D <= P3_MAX_D, consistent when
    for every T-dependent configuration the 95 % interval of NMSE(deficient) / NMSE(efficient)
    lies at or above the gap (GAP_P3_PAPER at T >= P3_PAPER_T, the statement's "orders of
    magnitude" where the paper measured it; GAP_P3 at the shorter T, the digest's reduced run).
    D above P3_MAX_D: the ratios are reported, not decided (``outside``): the paper's own D = 5
    and D = 6 gaps (about 10x and a few times) would fail, so the statement's regime is
    D <= P3_MAX_D (issue 26; it was stated for every D).
    The claim is for every D, so one D decides against it: a D that passed the training gate
    (:func:`p3_gates`) and whose gap fails is listed in ``refuted`` (a witness, whatever the
    other D show); a D below the gate is listed in ``undertrained`` (it can neither confirm nor
    refute). Rule stated in session 7 before the seeds-3..5 run; the gate and the regime in
    session 8 (issue 26).
    ``heads-relabelled`` (mutant): the efficient configuration's row and a deficient one's
    exchanged (a bookkeeping bug)."""
    from approxtheory.infoflow import Arch, make_task, predict_rate

    from .tradeoffs import present_keys

    rows = _with_intervals(rows, ("D", "T", "h1", "h2"))
    nonfinite = _nonfinite(
        rows,
        ("val_nmse", "nmse_lo", "nmse_hi"),
        lambda r: f"D = {r['D']} ({r['h1']},{r['h2']}) seed {r.get('seed')}",
    )
    gates = p3_gates(rows)
    has_T = bool(present_keys(rows, ("T",)))
    best = _best_rows(rows, ("D", "T", "h1", "h2") if has_T else ("D", "h1", "h2"))
    n_g = 2 if has_T else 1
    out, table, failed, undertrained, refuted, outside = {}, [], list(nonfinite), [], [], []
    for g in sorted({k[:n_g] for k in best}):
        D, T = g[0], (g[1] if has_T else None)
        where = f"D = {D}" + (f", T = {T}" if has_T else "")
        cfgs = sorted(k for k in best if k[:n_g] == g)
        pred = {k: predict_rate(Arch((k[-2], k[-1])), make_task("pmax", D=D)) for k in cfgs}
        eff = [k for k in cfgs if not pred[k].depends_on_T]
        dep = [k for k in cfgs if pred[k].depends_on_T]
        if not eff or not dep:
            failed.append(f"{where}: no T-free or no T-dependent configuration to compare")
            continue
        # the reference is the smallest efficient configuration (D, D) where run: were the
        # threshold one head later, (D, D) would be as bad as the deficient ones even beside a
        # trained (D+1, D+1), and the criterion must see it
        dd = [k for k in eff if (k[-2], k[-1]) == (D, D)]
        e = dd[0] if dd else min(eff, key=lambda k: float(best[k]["val_nmse"]))
        rowsD = {k: best[k] for k in cfgs}
        if mutant == "heads-relabelled":
            rowsD[e], rowsD[dep[0]] = rowsD[dep[0]], rowsD[e]
        en, elo, ehi = _nm(rowsD[e])
        # the gate reads the models as run (the mutant relabels only the comparison; an
        # untrained row in its place would otherwise read as undecided)
        cell = gates[D].cells.get(f"T = {T}" if has_T else "")
        trained = cell is not None and not cell["failures"]
        in_regime = D <= P3_MAX_D
        gap = GAP_P3_PAPER if T is not None and T >= P3_PAPER_T else GAP_P3
        if not trained and D not in undertrained:
            undertrained.append(D)
        if not in_regime and D not in outside:
            outside.append(D)
        for k in cfgs:
            n, lo, hi = _nm(rowsD[k])
            row = {
                "D": D,
                **({"T": T} if has_T else {}),
                "config": f"({k[-2]},{k[-1]})",
                "config_index": cfgs.index(k),
                "predicted_T_dependent": pred[k].depends_on_T,
                "predicted_alpha": str(pred[k].alpha),
                "nmse": n,
                "nmse_lo": lo,
                "nmse_hi": hi,
                "in_regime": in_regime,
                "gap_needed": gap if in_regime else None,
            }
            if k in dep:
                ratio, rlo, rhi = n / en, lo / ehi, hi / elo
                row.update(ratio=ratio, ratio_lo=rlo, ratio_hi=rhi)
                if not in_regime:
                    table.append(row)
                    continue
                out[(D, k[-2], k[-1]) if not has_T else (D, T, k[-2], k[-1])] = (ratio, rlo, rhi)
                if not rlo >= gap:  # NaN fails
                    msg = (
                        f"{where}: ({k[-2]},{k[-1]}) / ({e[-2]},{e[-1]}) NMSE ratio {ratio:.3g} "
                        f"[{rlo:.3g}, {rhi:.3g}] not at or above {gap:g}"
                    )
                    failed.append(msg)
                    if trained:
                        refuted.append(msg)
            table.append(row)
    effect = min((v[0] for v in out.values()), default=float("nan"))
    return {
        "ratios": out,
        "rows": table,
        "failed": failed,
        "ok": not failed and bool(out),
        "effect": effect,
        "undertrained": undertrained,
        "refuted": refuted,
        "outside": outside,
        "gates": gates,
        "nonfinite": nonfinite,
        "collapsed": [
            f"D = {r['D']} ({r['h1']},{r['h2']}) seed {r.get('seed')}"
            for r in rows
            if float(r["val_nmse"]) >= COLLAPSED
        ],
    }


@functools.cache  # claim-independent: a property of the task alone
def tri_target_var(T: int, n: int = 1000) -> float:
    """var(y) of TASK-TRI at length T (d = 2, the §6.2 tokens), on ``n`` draws of a fixed local
    generator: NMSE's denominator, which falls fast with T (the minimum over T³ triples
    concentrates near 0), so an NMSE near 1 at large T is also a small absolute error."""
    from approxtheory.tasks import TriangleCenter

    task = TriangleCenter(int(T), d=2)
    X = task.sample(n, np.random.default_rng(40_000 + int(T)))
    return float(np.var(task.target(X)))


def p4_criterion(rows, mutant: str | None = None) -> dict:
    """IF-P4 on infoflow_tri_growth rows: predict_rate says TRI's exponent depends on T for
    every (h1, h2); consistent when for every size the 95 % interval of NMSE(T_max) / NMSE(T_min)
    lies at or above GROWTH_P4 and NMSE(T_max)'s interval lies above FLOOR_P4 (more heads or
    width do not fix it). ``T-relabelled`` (mutant): the T values read in reverse order.

    Beside each NMSE (the paper's statistic, on which the claim is stated and decided), the
    target's variance per T (the row's ``target_var`` where the experiment records it, else
    :func:`tri_target_var`) and the absolute RMSE = sqrt(NMSE · var y) (issue 26: var y falls
    by about 3000x from T = 3 to T = 32, so "NMSE -> 1" is partly the denominator's fall;
    reported, not decided: the claim is about NMSE)."""
    from approxtheory.infoflow import Arch, make_task, predict_rate

    rows = _with_intervals(rows, ("h1", "h2", "E", "T"))
    nonfinite = _nonfinite(
        rows,
        ("val_nmse", "nmse_lo", "nmse_hi"),
        lambda r: f"({r['h1']},{r['h2']})/E={r['E']} T={r['T']} seed {r.get('seed')}",
    )
    Ts = sorted({int(r["T"]) for r in rows})
    if mutant == "T-relabelled":
        for r in rows:
            r["T"] = Ts[-1] + Ts[0] - int(r["T"])
    best = _best_rows(rows, ("h1", "h2", "E", "T"))
    sizes = sorted({k[:3] for k in best})
    table, failed, growth = [], list(nonfinite), {}
    for sz in sizes:
        p = predict_rate(Arch(sz[:2]), make_task("tri"))
        label = f"({sz[0]},{sz[1]})/E={sz[2]}"
        for T in Ts:
            b = best[sz + (T,)]
            n, lo, hi = _nm(b)
            var = float(b["target_var"]) if "target_var" in b else tri_target_var(T)
            table.append(
                {
                    "size": label,
                    "T": T,
                    "nmse": n,
                    "nmse_lo": lo,
                    "nmse_hi": hi,
                    "target_var": var,
                    "rmse": math.sqrt(n * var) if n >= 0 and var >= 0 else math.nan,
                    "predicted_T_dependent": p.depends_on_T,
                }
            )
        n0, lo0, hi0 = _nm(best[sz + (Ts[0],)])
        n1, lo1, hi1 = _nm(best[sz + (Ts[-1],)])
        g = (n1 / n0, lo1 / hi0, hi1 / lo0)
        growth[label] = g
        if p.depends_on_T:
            if not g[1] >= GROWTH_P4:  # NaN fails
                failed.append(
                    f"{label}: NMSE(T={Ts[-1]}) / NMSE(T={Ts[0]}) = {g[0]:.3g} "
                    f"[{g[1]:.3g}, {g[2]:.3g}] not at or above {GROWTH_P4:g}"
                )
            if not lo1 > FLOOR_P4:
                failed.append(
                    f"{label}: NMSE(T={Ts[-1]}) = {n1:.3g} [{lo1:.3g}, {hi1:.3g}] not above "
                    f"{FLOOR_P4:g}"
                )
        elif not g[2] < GROWTH_P4:
            failed.append(f"{label}: predicted T-free, yet NMSE grows x{g[0]:.3g}")
    effect = min((v[0] for v in growth.values()), default=float("nan"))
    return {
        "growth": growth,
        "rows": table,
        "failed": failed,
        "ok": not failed and len(Ts) >= 2,
        "effect": effect,
        "Ts": Ts,
        "sizes": sizes,
        "nonfinite": nonfinite,
    }


def _t_label(r) -> str:
    return f" T = {r['T']}" if "T" in r else ""


@check(
    "IF-P3",
    mutants={
        "heads-relabelled": "the (D, D) model's result filed under a deficient configuration and "
        "vice versa (a bookkeeping bug)"
    },
)
def pmax_head_threshold(ctx: Context, cid):
    """infoflow_pmax_heads: :func:`p3_criterion` (its per-D training gate :func:`p3_gates` and
    its regime D <= P3_MAX_D); the scale record names the paper's d = 4, T = 64 figures."""
    from .headcount import _exp_rows, _not_run
    from .tradeoffs import trained_scale

    name = "infoflow_pmax_heads"
    raw, secs, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    res = p3_criterion(raw, ctx.mutant)
    ok = res["ok"]
    steps = _training_text(raw)
    T_ = sorted({int(r["T"]) for r in raw if "T" in r})
    gates = res["gates"]
    scale = trained_scale(
        [(f"{name} D = {D}", g) for D, g in gates.items()],
        {f"{name} D = {D}": [r for r in raw if int(r["D"]) == D] for D in gates},
        paper={f"{name} D = {D}": IF_PAPER[name] for D in gates},
    )
    ev = (
        "NMSE per (h1, h2) (best over seeds, 95 % bootstrap interval over validation "
        "sequences): "
        + "; ".join(
            f"D = {r['D']}{_t_label(r)} {r['config']} (predicted "
            f"{'T-dependent' if r['predicted_T_dependent'] else 'T-free'}): "
            f"{r['nmse']:.3g} [{r['nmse_lo']:.3g}, {r['nmse_hi']:.3g}]"
            + (
                f", ratio {r['ratio']:.3g} [{r['ratio_lo']:.3g}, {r['ratio_hi']:.3g}]"
                if "ratio" in r
                else ""
            )
            for r in res["rows"]
        )
        + f". Effect size (smallest deficient/efficient NMSE ratio in the regime): "
        f"{res['effect']:.3g}, criterion >= {GAP_P3:g} on the interval's lower end (>= "
        f"{GAP_P3_PAPER:g}, 'orders of magnitude', at T >= {P3_PAPER_T}); regime D <= "
        f"{P3_MAX_D} (the paper's own gaps are about 10x at D = 5 and a few times at D = 6)"
        + (
            f"; D = {res['outside']} outside the regime: reported, not decided"
            if res["outside"]
            else ""
        )
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
    )
    in_regime = [D for D in gates if D <= P3_MAX_D]
    untrained = [D for D in res["undertrained"] if D <= P3_MAX_D]
    undecided = (bool(untrained) or not in_regime) and not res["nonfinite"] and not res["refuted"]
    collapsed = (
        f"{len(res['collapsed'])} of {len(raw)} runs ended at the constant "
        f"predictor's level (NMSE >= {COLLAPSED:g}: {', '.join(res['collapsed'])}). "
        if res["collapsed"]
        else ""
    )
    reasons = " ".join(f"[D = {D}] {gates[D].reason()}" for D in untrained)
    if untrained and res["refuted"]:
        # one trained D against the claim decides it; the untrained D is named, not judged
        ev = (
            f"DECIDED by the trained D: D = {untrained} did not pass the training gate "
            f"({steps}), so that D is neither confirmation nor refutation ({reasons}); a "
            f"trained D refutes: {'; '.join(res['refuted'])}. {ev}"
        )
    if undecided:
        # an undecided run is neither a confirmation nor a refutation: not-checkable
        ev = (
            "CANNOT DECIDE at this budget: "
            + (
                f"no D of the run lies in the regime D <= {P3_MAX_D}. "
                if not in_regime
                else f"the T-free models of D = {untrained} ({steps}) did not pass the "
                f"training-adequacy gate, so the gap measures training, not the head "
                f"threshold: {reasons}; "
                + (
                    "run the full profile (README). "
                    if ctx.profile == "quick"
                    else "this run's schedule did not train it; the paper's recipe is above. "
                )
            )
            + collapsed
            + f"Measured anyway: {ev}"
        )
    elif collapsed:
        # a decided run names its collapsed seeds too (the statistic is best over seeds)
        ev = f"{ev}. Seeds: {collapsed}".rstrip()
    return Verdict(
        cid,
        "not-checkable" if undecided else "consistent-empirical" if ok else "inconsistent",
        ev,
        covered=f"{name} ({ctx.profile}; {note}); T = {T_}, {steps}; predictions from "
        "predict_rate (T-free or T-dependent per configuration)",
        scale=scale,
        measured={
            f"D={k[0]}," + (f"T={k[1]}," if len(k) == 4 else "") + f"({k[-2]},{k[-1]})": v[0]
            for k, v in res["ratios"].items()
        },
        claimed=f"ratio >= {GAP_P3:g} (>= {GAP_P3_PAPER:g} at T >= {P3_PAPER_T}) where "
        f"predict_rate says T-dependent, D <= {P3_MAX_D}",
        rows=res["rows"],
        witness=None
        if ok or undecided
        else {"failed": res["failed"], **({"refuted": res["refuted"]} if res["refuted"] else {})},
        plot={
            "x": "config_index",
            "y": ["nmse", "nmse_lo", "nmse_hi"],
            "group": "D",
            "title": f"{cid}: trained NMSE per (h1, h2) (index order in the CSV)",
            "xlabel": "configuration: 0 = (D-1, D), 1 = (D, D-1), 2 = (D, D)",
            "ylabel": "NMSE",
            "logx": False,
        },
        formula_note="reads no formula: IF-P3's heads_needed = D enters through predict_rate's "
        "split of the configurations into T-free and T-dependent (the calculus's schedule), "
        "and the criterion is the stated NMSE ratio GAP_P3",
        scope="none"
        if undecided
        else f"surrogate: scaled-down §6.1 ({ctx.profile} profile: D = "
        f"{sorted({r['D'] for r in res['rows']})}, T = {T_}, d = 4, unit-norm tokens)",
        volatile={"seconds": secs},
    )


not_checkable(
    "IF-P3b",
    reason="a trend of the trained NMSE gap over D = 2..6 at T = 64 (§6.1); the quick profile of "
    "infoflow_pmax_heads trains one D (D = 2, T = 8), so it has no trend, and its full "
    "profile (`approxtheory experiment run infoflow_pmax_heads "
    "--profile full`) trains D = 2 and 3 at T = 16 only, whose (3, 3) model did not reach 1e-2 "
    "(session 7: ratios 1.13-6.4). Checkable with a full-profile sub-grid over D = 2..6 (T = 64, "
    "the paper's) whose (D, D) models train: then the gap ratios' intervals per D, falling in D",
)


@check(
    "IF-P3c",
    mutants={
        "control-short": "the control built as (D+1, D-1) (a head short in layer 2, a "
        "bookkeeping bug): no longer a control",
    },
)
def pmax_extra_head_control(ctx: Context, cid):
    """The (D+1, D+1) control on the calculus: predict_rate gives it the same T-free rate as
    (D, D) for every D; the trained control is not run (no such cell in infoflow_pmax_heads)."""
    from approxtheory.infoflow import Arch, T, make_task, predict_rate

    rows, bad = [], []
    for D in range(2, ctx.pick(6, 7)):  # the paper's D = 2..6 (quick: 2..5)
        task = make_task("pmax", D=D)
        base = predict_rate(Arch((D, D)), task)
        h2 = D - 1 if ctx.is_mutant("control-short") else D + 1
        ctrl = predict_rate(Arch((D + 1, h2)), task)
        agree = (not ctrl.depends_on_T) and sp.simplify(ctrl.alpha - base.alpha) == 0
        row = {
            "D": D,
            "alpha_DD": str(base.alpha),
            "alpha_control": str(ctrl.alpha),
            "control": f"({D + 1},{h2})",
            "control_T_dependent": ctrl.depends_on_T,
            "agree": bool(agree),
        }
        rows.append(row)
        if not agree:
            bad.append(row)
    assert not any(sp.sympify(r["alpha_DD"]).has(T) for r in rows)
    return Verdict(
        cid,
        "refuted" if bad else "verified-symbolic",
        "the calculus predicts the (D+1, D+1) control's rate equal to (D, D)'s, both T-free, "
        f"in {len(rows) - len(bad)}/{len(rows)} cases: "
        + "; ".join(
            f"D = {r['D']}: {r['control']} ε^-({r['alpha_control']}) vs (D, D) ε^-({r['alpha_DD']})"
            for r in rows
        )
        + ". The trained control is not run: infoflow_pmax_heads has no (D+1, D+1) cell (its "
        "'drop' axis is none/layer1/layer2); a cell with drop 'extra' in its full profile would "
        "make the empirical half checkable",
        covered=f"D in 2..{ctx.pick(5, 6)}, TASK-PMAX(D), predict_rate (decode law dE)",
        rows=rows,
        witness=bad[0] if bad else None,
        formula_note="reads no formula: the claim has none (a prediction about configurations); "
        "the calculus reads IF-R1/IF-R2/IF-T4's laws",
        scope="surrogate: the project's reconstruction of the InfoFlow calculus predicts the "
        "control; no trained (D+1, D+1) model",
    )


#: the length at which the paper's TRI models succeed (digest §6.2: NMSE of order 1e-3 at T = 3)
P4_CONTROL_T, P4_PAPER_NMSE = 3, 1e-3


def p4_gate(rows):
    """IF-P4's training-adequacy gate (the shared gate): control every size at T =
    P4_CONTROL_T, the length at which the paper's models learn TRI (NMSE of order 1e-3, digest
    §6.2; the digest's §7 item 6 'NMSE(T=3) < 1e-2'), held to that magnitude; at the longer T
    the claim itself is that no recipe succeeds, so no level is asked there."""
    from ._gate import PaperMagnitude, training_gate

    mag = PaperMagnitude(P4_PAPER_NMSE, "digest §6.2 ([Q1]): TRI NMSE of order 1e-3 at T = 3")
    sizes = {(int(r["h1"]), int(r["h2"]), int(r["E"])) for r in rows}
    return training_gate(
        rows,
        control=lambda r: int(r["T"]) == P4_CONTROL_T,
        describe=f"every model size at T = {P4_CONTROL_T} (where the paper's models learn TRI)",
        by=("T",),
        config=("h1", "h2", "E"),
        paper={(P4_CONTROL_T, *sz): mag for sz in sizes},
        budget=IF_RECIPE,
    )


@check(
    "IF-P4",
    mutants={"T-relabelled": "the results' T values read in reverse order (a bookkeeping bug)"},
)
def triangle_center_growth(ctx: Context, cid):
    """infoflow_tri_growth: :func:`p4_gate`, then :func:`p4_criterion` (NMSE decides; the
    absolute RMSE and the target's variance per T are reported beside it)."""
    from .headcount import _exp_rows, _not_run
    from .tradeoffs import gated_verdict, trained_scale

    name = "infoflow_tri_growth"
    raw, secs, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    gate = p4_gate(raw)
    res = p4_criterion(raw, ctx.mutant)
    ok = res["ok"]
    steps = int(raw[0]["steps"])
    ev = (
        "NMSE vs T (best over seeds, 95 % bootstrap interval; beside it the absolute RMSE and "
        "the target's variance var y): "
        + "; ".join(
            f"{r['size']} T={r['T']}: {r['nmse']:.3g} [{r['nmse_lo']:.3g}, {r['nmse_hi']:.3g}] "
            f"(RMSE {r['rmse']:.3g}, var y {r['target_var']:.3g})"
            for r in res["rows"]
        )
        + f". predict_rate: exponent depends on T for every size. Effect size (smallest growth "
        f"NMSE(T={res['Ts'][-1]})/NMSE(T={res['Ts'][0]})): {res['effect']:.3g}, criterion >= "
        f"{GROWTH_P4:g} and NMSE(T_max) > {FLOOR_P4:g} on the intervals"
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
        + ". The target's variance falls with T, so part of NMSE -> 1 is the denominator's "
        "fall: the RMSE is reported, the claim is decided on NMSE (the paper's statistic)"
    )
    covered = f"{name} ({ctx.profile}; {note}); T = {res['Ts']}, {steps} steps, sizes " + ", ".join(
        f"({a},{b})/E={e}" for a, b, e in res["sizes"]
    )
    plot = {
        "x": "T",
        "y": ["nmse"],
        "group": "size",
        "title": f"{cid}: trained NMSE vs T on TASK-TRI",
        "xlabel": "T",
        "ylabel": "NMSE",
    }
    gated = gated_verdict(
        cid,
        [(name, gate)],
        {name: list(raw)},
        covered,
        paper=IF_PAPER,
        measured=ev,
        rows=res["rows"],
        plot=plot,
    )
    if gated is not None and not res["nonfinite"]:
        gated.volatile = {"seconds": secs}
        return gated
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        ev,
        covered=covered,
        scale=trained_scale([(name, gate)], {name: list(raw)}, paper=IF_PAPER),
        measured={k: v[0] for k, v in res["growth"].items()},
        claimed=f"growth >= {GROWTH_P4:g} and NMSE(T_max) > {FLOOR_P4:g} for every size",
        rows=res["rows"],
        witness=None if ok else {"failed": res["failed"]},
        plot=plot,
        formula_note="reads no formula: comparisons = T³ is not a quantity a trained NMSE can be "
        "compared with; the criterion is the stated growth and floor rule (GROWTH_P4, FLOOR_P4)",
        scope=f"surrogate: scaled-down §6.2 ({ctx.profile} profile: T = {res['Ts']}, d = 2)",
        volatile={"seconds": secs},
    )


# ------------------------------------------------------------------------------- IF-E2
#: the digest's test of IF-E2 (§7 item 8), judged on 95 % bootstrap intervals: the argmax
#: probe's error ratio (trained / init) below E2_ARGMAX, the runner-up's within E2_SECOND
E2_ARGMAX, E2_SECOND = 0.9, (0.9, 1.1)


def e2_gates(rows) -> dict:
    """IF-E2's training-adequacy gate per D (the shared gate): control the (D, D) models (the
    model the probe judges, §7 item 8's 'model from item 5'), held to the paper's (D, D)
    magnitude (:data:`P3_PAPER_NMSE`, digest §6.1)."""
    from ._gate import PaperMagnitude, training_gate
    from .tradeoffs import present_keys

    mag = PaperMagnitude(
        P3_PAPER_NMSE, "digest §6.1: (D, D) best validation NMSE of order 1e-4 to 1e-3 (T = 64)"
    )
    out = {}
    for D in sorted({int(r["D"]) for r in rows}):
        rD = [r for r in rows if int(r["D"]) == D]
        by = present_keys(rD, ("T",))
        Ts = sorted({int(r["T"]) for r in rD}) if by else []
        out[D] = training_gate(
            rD,
            control=lambda r: int(r["h1"]) == int(r["h2"]) == int(r["D"]),
            describe=f"the (D, D) models at D = {D} (the probe's)",
            by=by,
            config=("h1", "h2"),
            paper={(T, D, D): mag for T in Ts} if by else {(D, D): mag},
            budget=IF_RECIPE,
        )
    return out


def e2_criterion(rows, mutant: str | None = None) -> dict:
    """IF-E2 on infoflow_pmax_heads rows with probe columns: per D, the (D, D) model (the model
    of §7 item 5; predict_rate's T-free configuration) of the seed with the smallest NMSE (the
    paper's best model) is judged: its argmax ratio's interval lies below E2_ARGMAX and its
    runner-up ratio's interval inside E2_SECOND. A D whose (D, D) models do not pass the shared
    training-adequacy gate (:func:`e2_gates`: NMSE finite, at most TRAINED_NMSE, within the
    gate's factor of the paper's 1e-3, a plateaued tail where recorded) is not trained enough to
    speak (``undertrained``: its judged model is only reported); the other rows are reported.
    ``targets-swapped`` (mutant): the argmax and runner-up measurements exchanged (a
    bookkeeping bug)."""
    fields = tuple(f"probe_{a}_{b}" for a in ("argmax", "second") for b in ("ratio", "lo", "hi"))
    nonfinite = _nonfinite(
        rows,
        ("val_nmse", *fields),
        lambda r: f"D = {r['D']} ({r['h1']},{r['h2']}) seed {r.get('seed')}",
    )
    table, failed, undertrained = [], list(nonfinite), []
    gates = e2_gates(rows)
    best: dict = {}
    for r in rows:
        D = int(r["D"])
        if int(r["h1"]) == int(r["h2"]) == D and (
            D not in best or float(r["val_nmse"]) < float(best[D]["val_nmse"])
        ):
            best[D] = r
    for r in sorted(rows, key=lambda r: (int(r["D"]), int(r["h1"]), int(r["h2"]), int(r["seed"]))):
        a = tuple(float(r[f"probe_argmax_{k}"]) for k in ("ratio", "lo", "hi"))
        b = tuple(float(r[f"probe_second_{k}"]) for k in ("ratio", "lo", "hi"))
        if mutant == "targets-swapped":
            a, b = b, a
        D, h1, h2 = int(r["D"]), int(r["h1"]), int(r["h2"])
        row: dict = {
            "D": D,
            "config": f"({h1},{h2})",
            "seed": int(r["seed"]),
            "nmse": float(r["val_nmse"]),
            "argmax_ratio": a[0],
            "argmax_lo": a[1],
            "argmax_hi": a[2],
            "second_ratio": b[0],
            "second_lo": b[1],
            "second_hi": b[2],
            "judged": r is best.get(D),
        }
        table.append(row)
        if not row["judged"]:
            continue
        if not gates[D].passed:
            undertrained.append(f"D = {D} seed {row['seed']}: NMSE {row['nmse']:.3g}")
        if not a[2] < E2_ARGMAX:  # NaN fails
            failed.append(
                f"D = {D} seed {row['seed']}: argmax ratio {a[0]:.3f} [{a[1]:.3f}, {a[2]:.3f}] "
                f"not below {E2_ARGMAX}"
            )
        if not (E2_SECOND[0] <= b[1] and b[2] <= E2_SECOND[1]):
            failed.append(
                f"D = {D} seed {row['seed']}: runner-up ratio {b[0]:.3f} [{b[1]:.3f}, "
                f"{b[2]:.3f}] not inside [{E2_SECOND[0]}, {E2_SECOND[1]}]"
            )
    judged = [r for r in table if r["judged"]]
    return {
        "rows": table,
        "failed": failed,
        "gates": gates,
        "undertrained": undertrained,
        "nonfinite": nonfinite,
        "ok": bool(judged) and not failed,
        "effect": min((r["argmax_ratio"] for r in judged), default=float("nan")),
    }


@check(
    "IF-E2",
    mutants={
        "targets-swapped": "the argmax probe's and the runner-up probe's results exchanged (a "
        "bookkeeping bug)"
    },
)
def argmax_probe(ctx: Context, cid):
    """infoflow_pmax_heads (its probe columns): :func:`e2_criterion`."""
    from approxtheory.experiments.infoflow_trained import PROBE_DEFAULTS

    from .headcount import _exp_rows, _not_run
    from .tradeoffs import run_text

    name = "infoflow_pmax_heads"
    raw, secs, note = _exp_rows(name, ctx.profile)
    if raw is None:
        return _not_run(cid, name, ctx.profile, note)
    res = e2_criterion(raw, ctx.mutant)
    r0 = {**PROBE_DEFAULTS, **{k: raw[0][k] for k in PROBE_DEFAULTS if k in raw[0]}}
    protocol = (
        f"protocol ours (the sources give none): layer {int(float(r0['probe_layer']))} "
        f"post-attention state (residual + attention) of the "
        f"{r0['probe_query']} queries, targets x(s1) and x(s2) for the largest and "
        f"second-largest attention score per head over the T input tokens (own position "
        f"{'allowed' if str(r0['probe_self']).lower() in ('1', '1.0', 'true') else 'excluded'}"
        "), least squares "
        f"with intercept fitted on {int(float(r0['probe_n'])) // 2} sequences and measured on "
        f"as many fresh ones; ratio = relative error trained / at the same seed's "
        f"initialisation, mean over heads, 95 % bootstrap over the held-out sequences "
        f"(defaults: {run_text(PROBE_DEFAULTS)})"
    )
    ev = (
        "probe ratios (trained / init): "
        + "; ".join(
            f"D = {r['D']} {r['config']} seed {r['seed']} (NMSE {r['nmse']:.3g}): argmax "
            f"{r['argmax_ratio']:.3f} [{r['argmax_lo']:.3f}, {r['argmax_hi']:.3f}], runner-up "
            f"{r['second_ratio']:.3f} [{r['second_lo']:.3f}, {r['second_hi']:.3f}]"
            for r in res["rows"]
        )
        + f". Criterion (digest §7 item 8) on the (D, D) models: argmax interval below "
        f"{E2_ARGMAX}, runner-up interval inside [{E2_SECOND[0]}, {E2_SECOND[1]}]. {protocol}"
    )
    covered = f"{name} ({ctx.profile}; {note}); {_training_text(raw)}"
    plot = {
        "x": "argmax_ratio",
        "y": ["second_ratio"],
        "group": "config",
        "title": f"{cid}: runner-up vs argmax probe ratio (trained / init)",
        "xlabel": "argmax ratio",
        "ylabel": "runner-up ratio",
        "logx": False,
        "logy": False,
    }
    from .tradeoffs import trained_scale

    gates = res["gates"]
    scale = trained_scale(
        [(f"{name} D = {D}", g) for D, g in gates.items()],
        {f"{name} D = {D}": [r for r in raw if int(r["D"]) == D] for D in gates},
        paper={f"{name} D = {D}": IF_PAPER[name] for D in gates},
    )
    if res["undertrained"] and not res["nonfinite"]:
        return Verdict(
            cid,
            "not-checkable",
            "the (D, D) models are not trained at this budget ("
            + "; ".join(res["undertrained"])
            + "; "
            + " ".join(f"[D = {D}] {g.reason()}" for D, g in gates.items() if not g.passed)
            + f"), so the probe cannot speak for trained models; measured anyway: {ev}. Run the "
            f"full profile of {name} (README)",
            covered=covered + "; gated: the criterion was not applied",
            rows=res["rows"],
            plot=plot,
            scope="none",
            scale=scale,
            volatile={"seconds": secs},
        )
    ok = res["ok"]
    return Verdict(
        cid,
        "consistent-empirical" if ok else "inconsistent",
        ev
        + f". Effect size (smallest argmax ratio): {res['effect']:.3g}"
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else ""),
        covered=covered,
        measured={f"{r['config']} seed {r['seed']}": r["argmax_ratio"] for r in res["rows"]},
        claimed=f"argmax < {E2_ARGMAX}, runner-up in {list(E2_SECOND)}",
        scale=scale,
        rows=res["rows"],
        witness=None if ok else {"failed": res["failed"]},
        plot=plot,
        scope=f"surrogate: the §6.3 probe with our protocol on PMAX(D) two-layer models "
        f"({ctx.profile} profile, D = {sorted({r['D'] for r in res['rows']})})",
        volatile={"seconds": secs},
    )


# ------------------------------------------------------------------------------- IF-E3
#: the stated criterion of IF-E3 (written before any result was read): per task, the
#: one-layer fitted slope of NMSE against parameters at the largest T minus that at the smallest
#: T (the flattening), and the same for two layers; consistent when for every task the one-layer
#: flattening's 95 % interval lies above 0 and the interval of (one-layer flattening - two-layer
#: flattening) lies above 0. Intervals of differences: the conservative sums of the fits'
#: intervals. The two-layer models must pass the shared training-adequacy gate at every T (the
#: digest's §7 item 4: "the two-layer (1,1) model's NMSE stays below 1e-2 for T in {4, ..., 32}";
#: :func:`e3_gate`), else their slopes measure training, not a rate: not-checkable.
E3_TRAINED = TRAINED_NMSE  # the shared gate's threshold (_gate.py)
E3_EXPERIMENTS = {"kth": "infoflow_kth_depth", "pmax": "infoflow_pmax_depth"}


def e3_gate(rows):
    """IF-E3's training-adequacy gate on one task's rows (the shared gate): control the
    two-layer models (those IF-T1's upper bound says approximate at a T-free rate), at every T
    (digest §7 item 4), the min over hidden sizes and seeds."""
    from ._gate import training_gate

    return training_gate(
        rows,
        control=lambda r: int(r["layers"]) == 2,
        describe="the two-layer models (one head per layer), per T, any hidden size",
        by=("T",),
        config=("layers",),
        budget=IF_RECIPE,
    )


def e3_criterion(rows_by_task: dict, mutant: str | None = None) -> dict:
    """IF-E3 on the depth experiments' rows (``{task: rows}``), by :func:`depth_fits`.
    ``depth-relabelled`` (mutant): the one-layer and two-layer rows exchanged."""
    from approxtheory.experiments.infoflow_trained import depth_fits

    table, failed, notes, effect, nonfinite = [], [], [], {}, []
    gates = {}
    for task, rows in rows_by_task.items():
        rows = [dict(r) for r in rows]
        bad = _nonfinite(
            rows,
            ("val_nmse",),
            lambda r, task=task: (
                f"{task} L={r['layers']} T={r['T']} params {r['params']} seed {r.get('seed')}"
            ),
        )
        nonfinite += bad
        failed += bad
        # the gate reads the two-layer models as run (a mutant relabels the comparison only;
        # relabelled untrained rows would otherwise hide it as undecided)
        gates[task] = gate = e3_gate(rows)
        if mutant == "depth-relabelled":
            for r in rows:
                r["layers"] = {1: 2, 2: 1}.get(int(r["layers"]), int(r["layers"]))
        # a non-finite row is a failure (above) and no point of a rate: fitted without it
        finite = [r for r in rows if math.isfinite(float(r["val_nmse"]))]
        fits = {(int(f["layers"]), int(f["T"])): f for f in depth_fits(finite)}
        table += [{**f, "curve": f"{f['task']} L={f['layers']}"} for f in fits.values()]
        Ts = sorted({k[1] for k in fits})
        if len(Ts) < 2 or any((L, T) not in fits for L in (1, 2) for T in Ts):
            got = ", ".join(f"L = {L}, T = {T}" for L, T in sorted(fits)) or "none"
            failed.append(f"{task}: needs both depths at two or more T (got {got})")
            continue
        T0, T1 = Ts[0], Ts[-1]
        label = fits[(1, T0)]["task"]
        f10, f11, f20, f21 = fits[(1, T0)], fits[(1, T1)], fits[(2, T0)], fits[(2, T1)]
        if not (f11["depends_on_T"] and not f21["depends_on_T"]):
            failed.append(f"{label}: predict_rate does not separate the depths here")

        def change(a, b):  # b's slope - a's slope, conservative interval
            return (
                b["slope"] - a["slope"],
                b["slope_lo"] - a["slope_hi"],
                b["slope_hi"] - a["slope_lo"],
            )

        d1, d2 = change(f10, f11), change(f20, f21)
        gap = (d1[0] - d2[0], d1[1] - d2[2], d1[2] - d2[1])
        effect[label] = {"one_layer": d1, "two_layers": d2, "difference": gap, "Ts": (T0, T1)}
        if not d1[1] > 0:  # NaN fails
            failed.append(
                f"{label}: one-layer slope change T={T0}->{T1} {d1[0]:+.3f} "
                f"[{d1[1]:+.3f}, {d1[2]:+.3f}] not above 0"
            )
        if not gap[1] > 0:
            failed.append(
                f"{label}: one-layer minus two-layer slope change {gap[0]:+.3f} "
                f"[{gap[1]:+.3f}, {gap[2]:+.3f}] not above 0"
            )
        if not gate.passed:
            notes.append(
                f"{label}: the two-layer models did not pass the training-adequacy gate ("
                + "; ".join(gate.failures)
                + ")"
            )
    return {
        "gates": gates,
        "rows": table,
        "failed": failed,
        "undertrained": notes,
        "nonfinite": nonfinite,
        "effect": effect,
        "ok": not failed and bool(effect),
    }


@check(
    "IF-E3",
    mutants={
        "depth-relabelled": "the one-layer and two-layer results exchanged (a bookkeeping bug)"
    },
)
def depth_separation_trained(ctx: Context, cid):
    """infoflow_kth_depth and infoflow_pmax_depth: :func:`e3_criterion`."""
    from .headcount import _exp_rows, _not_run

    by_task, notes, secs = {}, [], 0.0
    for task, name in E3_EXPERIMENTS.items():
        raw, s, note = _exp_rows(name, ctx.profile)
        if raw is None:
            return _not_run(cid, name, ctx.profile, note)
        by_task[task], secs = raw, secs + s
        notes.append(f"{name}: {note}, {int(raw[0]['steps'])} steps")
    res = e3_criterion(by_task, ctx.mutant)
    ok = res["ok"]

    def ps(f):
        p = f["predicted_slope"]
        return "none (α = 0)" if p is None else f"{p:+.3f}"

    ev = (
        "fitted slope of best NMSE vs parameters (95 % interval) next to predict_rate's -2/α: "
        + "; ".join(
            f"{f['task']} L={f['layers']} T={f['T']}: {f['slope']:+.3f} "
            f"[{f['slope_lo']:+.3f}, {f['slope_hi']:+.3f}] vs {ps(f)} (α = {f['alpha']:.3g}, "
            f"best NMSE {f['best_nmse']:.3g})"
            for f in res["rows"]
        )
        + ". Slope change (largest T minus smallest): "
        + "; ".join(
            f"{k} one layer {v['one_layer'][0]:+.3f} [{v['one_layer'][1]:+.3f}, "
            f"{v['one_layer'][2]:+.3f}], two layers {v['two_layers'][0]:+.3f}, difference "
            f"(effect size) {v['difference'][0]:+.3f} [{v['difference'][1]:+.3f}, "
            f"{v['difference'][2]:+.3f}]"
            for k, v in res["effect"].items()
        )
        + ". Criterion: the one-layer change and the difference both above 0 on their intervals"
        + (". Failed: " + "; ".join(res["failed"]) if res["failed"] else "")
    )
    from .tradeoffs import trained_scale

    names = dict(E3_EXPERIMENTS)
    scale = trained_scale(
        [(names[t], g) for t, g in res["gates"].items()],
        {names[t]: list(by_task[t]) for t in res["gates"]},
        paper=IF_PAPER,
    )
    undecided = bool(res["undertrained"]) and not res["nonfinite"]
    if undecided:
        # an undecided run is neither a confirmation nor a refutation: not-checkable
        ev = (
            "CANNOT DECIDE at this budget: "
            + "; ".join(res["undertrained"])
            + f" (the digest expects below {E3_TRAINED:g} at every T), so the slopes measure "
            "training, not a rate; "
            + " ".join(
                f"[{names[t]}] {g.reason()}" for t, g in res["gates"].items() if not g.passed
            )
            + " "
            + (
                "run the full profiles (README). "
                if ctx.profile == "quick"
                else "the full profiles do not train them either (README). "
            )
            + f"Measured anyway: {ev}"
        )
    return Verdict(
        cid,
        "not-checkable" if undecided else "consistent-empirical" if ok else "inconsistent",
        ev,
        covered="; ".join(notes) + "; one head per layer, E = 8, predictions from predict_rate",
        scale=scale,
        measured={k: v["difference"][0] for k, v in res["effect"].items()},
        claimed="one-layer slope flattens with T, more than the two-layer slope",
        rows=res["rows"],
        witness=None if ok or undecided else {"failed": res["failed"]},
        plot={
            "x": "T",
            "y": ["slope", "slope_lo", "slope_hi"],
            "group": "curve",
            "title": f"{cid}: fitted slope of NMSE vs parameters against T (KTH(2), PMAX(1))",
            "xlabel": "T",
            "ylabel": "slope",
            "logy": False,
        },
        formula_note="reads no formula: the catalogue's slopes -2/k(T) have an unknown slope a, "
        "so the criterion is the sign of the slope change with T; predict_rate's -2/α is "
        "reported beside each fit",
        scope="none"
        if undecided
        else f"surrogate: trained one- vs two-layer models ({ctx.profile} profile) on the "
        "digest's two candidate separation tasks, KTH(2) and PMAX(1); IF-T1's lower bound "
        "holds for every one-layer model, this measures a few trained ones",
        volatile={"seconds": secs},
    )
