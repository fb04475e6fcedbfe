"""Helpers shared by the head-count checks: the rate criterion and the claim memo key."""

from __future__ import annotations

import dataclasses
from typing import Any

import sympy as sp

from approxtheory import claim
from approxtheory.errors import InvalidValueError, MissingSymbolError

# tolerance on fitted exponents (rate criteria): the interval must lie within this of the
# predicted exponent on the stated side
RATE_TOL = 0.1


def _fit_ok(fit, predicted: float, side: str, tol: float = RATE_TOL) -> bool:
    """The rate criterion: the whole interval lies at or below (``side='below'``), at or above
    (``'above'``) or within (``'within'``) ``tol`` of the predicted exponent."""
    if side == "below":
        return fit.ci_high <= predicted + tol
    if side == "above":
        return fit.ci_low >= predicted - tol
    return predicted - tol <= fit.ci_low and fit.ci_high <= predicted + tol


def _ckey(cid: str, names: tuple | None = None) -> tuple:
    """A memo key for what the catalogue currently says about ``cid`` (its expressions ``names``,
    all by default, and its regime): a memoised measurement that reads the claim while it runs
    takes this among its arguments, so that a replaced claim (a test's planted false claim) is
    not served a cached result (``memo`` itself keys on verify's claim-mutant override)."""
    c = claim(cid)
    ex: list[tuple[str, Any]] = list(dict.items(c.expressions))
    # (dict.items, not the mapping's own: the key is not marked as a read of the formulas)
    return (
        cid,
        tuple((k, sp.srepr(v)) for k, v in ex if names is None or k in names),
        tuple(sp.srepr(r.expr) for r in c.regime),
    )


#: the paper's Table 5 cell (digest l. 203, 415-416: a 2-layer model, D = 4, E = 32, NoPE: h = 2
#: already reaches ~1e-6 NMSE, flat in T): past the transition, efficient
TABLE5_CELL = {"L": 2, "h": 2, "D": 4, "n": 16}


def _claimed_number(cid: str, name: str, **values) -> tuple[float, str]:
    """The claim's expression ``name`` evaluated at ``values``, as a float (NaN where it is no
    real number, is undefined there or needs a symbol not given: a check then decides against
    it, never raises), and the expression as read (sp.sstr) for the evidence."""
    c = claim(cid)
    read = sp.sstr(c.expr(name))
    try:
        v = sp.N(c.evaluate(name, **values))
    except (InvalidValueError, MissingSymbolError) as e:
        return float("nan"), f"{read} (no number: {e})"
    return (float(v) if v.is_real else float("nan")), read


def sign_direction(ratios: list[float], sign: float) -> str:
    """The state of a claimed sign of ``b - a`` read from the ratios ``b / a`` (one per rank,
    size, ...): +1 holds when every ratio is >= 1 and is refuted when every one is < 1; -1 holds
    when every ratio is < 1 and is refuted when every one is >= 1; 0 (no change) is refuted
    when every ratio is on one side of 1, else mixed (never borne out: no tie is measured); a
    sign that is no number is refuted. Otherwise ``mixed``."""
    up, down = all(r >= 1 for r in ratios), all(r < 1 for r in ratios)
    if sign > 0:
        return "holds" if up else "refuted" if down else "mixed"
    if sign < 0:
        return "holds" if down else "refuted" if up else "mixed"
    if sign == 0:
        return "refuted" if down or all(r > 1 for r in ratios) else "mixed"
    return "refuted"


#: the (d, D) at which HC-T2c's M_suff is read with γ = HC-A3's γ_worst(d, D) > 0
T2C_GAMMA_CELLS = ((1, 1), (2, 1), (1, 2), (3, 1))


def _gamma_reading_text(g: dict, sharp: bool) -> str:
    at = f"(d, D) = ({g['d']}, {g['D']})" + ("" if g["T"] is None else f", T = {g['T']}")
    return f"{at}, γ = {g['gamma']:g}: M_suff {g['e_suff']:g}, width {g['e_width']:g}" + (
        f", M_sharp {g['e_sharp']:g}" if sharp else ""
    )


#: the lengths T at which an M_suff that depends on T is read by :func:`_t2c_gamma_readings`
#: (short ones too: a T-dependent exponent that covers the width's at the check's T can fall
#: below it at a shorter sequence)
GAMMA_TS = (1, 2, 4, 8, 32, 128)


def _t2c_gamma_readings(c):
    """A claim's M_suff (HC-T2c's, HC-T2a's) read at γ > 0: at each (d, D) of T2C_GAMMA_CELLS
    (and, when M_suff depends on T, at each T of GAMMA_TS), γ = HC-A3's
    γ_worst(d, D) (the class of Lipschitz f_i, F_0), the exponent of 1/ε in M_suff (ε -> 0)
    against that of HC-A3's FFN width C/δ^γ at the same γ. At T = 1 (F_0 = identity when
    D = 1) the target is one Lipschitz map of [0, 1]^max(d, D), whose ε-approximation by a
    bounded-depth ReLU net needs M log M >= c ε^-max(d, D) weights (VC dimension, Bartlett et
    al. 2019; Yarotsky 2017, Thm 4) [derived]: the width's exponent is a lower bound there, so a
    smaller exponent of M_suff is false. M_sharp's exponent is reported beside it. Returns the
    failures and the evidence text."""
    a3 = claim("HC-A3")
    rows = []
    t_sym = [x for x in c.expr("M_suff").free_symbols if x.name == "T"]
    sharp = "M_sharp" in c.expressions
    for d, D in T2C_GAMMA_CELLS:
        g = a3.evaluate("gamma_worst", d=d, D=D)
        e_width = -a3.asymptotic_exponent("epsilon", "width", 0, gamma=g)
        for T in GAMMA_TS if t_sym else (None,):
            # a T the claim may not declare (a false claim can bring one): put in by name
            at = (
                c
                if T is None
                else dataclasses.replace(
                    c,
                    expressions={
                        k: e.xreplace({t_sym[0]: sp.Integer(T)}) for k, e in c.expressions.items()
                    },
                )
            )
            e_suff = -at.asymptotic_exponent("epsilon", "M_suff", 0, gamma=g)
            e_sharp = -at.asymptotic_exponent("epsilon", "M_sharp", 0, gamma=g) if sharp else e_suff
            rows.append(
                {
                    "d": d,
                    "D": D,
                    "T": T,
                    "gamma": float(g),
                    "e_suff": float(e_suff),
                    "e_sharp": float(e_sharp),
                    "e_width": float(e_width),
                    "covers_width": bool(sp.simplify(e_suff - e_width) >= 0),
                }
            )
    text = (
        f"γ > 0, read symbolically at HC-A3's γ_worst = {sp.sstr(a3.expr('gamma_worst'))} "
        "(Lipschitz f_i, F_0; T = 1 reduces F to F_0∘f_1, a class that every longer "
        "sequence contains [derived]), where HC-A3's width "
        f"{sp.sstr(a3.expr('width'))} is also necessary up to a log (VC dimension "
        "O(M log M) of a bounded-depth ReLU net against the Lipschitz ball's ε^-max(d, D) "
        "[derived]), so M_suff's exponent must be at least the width's: "
        + ", ".join(_gamma_reading_text(g, sharp) for g in rows)
    )
    failed = [
        f"M_suff's exponent {g['e_suff']:g} < {g['e_width']:g} at γ = γ_worst(d={g['d']}, "
        f"D={g['D']}) = {g['gamma']:g}" + ("" if g["T"] is None else f", T = {g['T']}")
        for g in rows
        if not g["covers_width"]
    ]
    return failed, text
