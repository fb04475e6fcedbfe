"""What IF-T1's check reads beside IF-K1's construction (:mod:`.rates`): the one-layer side,
symbolically, the predicted slope of the error in the knots N, and IF-T1's scope and formula
note."""

from __future__ import annotations

import math

import sympy as sp

from approxtheory import NotAPowerLawError, claim


def _k1_predicted_slope(cid) -> tuple[float, str]:
    """The predicted slope of the error against the knots N and where it is read from: N ~
    ε^{-a} parameters means error ~ N^{-1/a} (a from IF-T1's two-layer count or from IF-K1's
    parameter order)."""
    if cid == "IF-T1":
        a = -float(claim("IF-T1").exponent("epsilon", expr="N2_upper"))
        return -1.0 / a, "IF-T1's two-layer count C2 ε^-1"
    k1 = claim("IF-K1")
    try:
        a = float(k1.rate_exponent())
    except NotAPowerLawError:
        # a count that is no power law in ε is read by its limit: lim ε d log N/dε as ε -> 0
        # (0 for a logarithm: a count that grows slower than every power of 1/ε)
        name, sym = k1.rate
        a = -float(k1.asymptotic_exponent(sym.name, name, 0))
    # a count that does not grow like a power of 1/ε claims an error faster than every power
    # of N: no measured slope meets it
    order = sp.sstr(k1.expr(k1.rate[0]))
    if a > 0:
        return -1.0 / a, f"IF-K1's parameter order {order} (ε-exponent {-a:g})"
    return -math.inf, f"IF-K1's parameter order {order}, which grows slower than every power of 1/ε"


#: IF-T1's scope: the two-layer upper side measured, the one-layer lower bound's form only
T1_SCOPE = (
    "partial: the two-layer, one-head-per-layer O(ε^-1) upper side, on the digest's "
    "candidate separation task TASK-KTH(2) (construction IF-K1); of the one-layer "
    "lower bound ε^{-k(T)} only its form (k linear in T with a positive slope, the "
    "separation N1_lower/N2_upper) is checked, symbolically: the bound itself is not "
    "tested here (its empirical side on trained models is IF-E3)"
)
#: the formulas IF-T1's check reads (the bound its rows compare is IF-K1's)
T1_FORMULA_NOTE = (
    "reads N2_upper's ε-exponent (the two-layer count C2/ε, measured) and, "
    "symbolically, the primary N1_lower's ε-exponent k(T) (affine in T with a positive "
    "slope) and the separation (N1_lower/N2_upper); the one-layer lower bound itself, with "
    "its unknown slope a, is not measured (its empirical side is IF-E3); the bound compared "
    "is IF-K1's err_bound"
)


def _one_layer_law(t1) -> tuple[bool, str, dict | None]:
    """IF-T1's one-layer side, symbolically (what the theorem states of it, [A]: N1_lower =
    c1 ε^-k(T) with k(T) growing linearly in T; not a measurement): the ε-exponent k of the
    claim's N1_lower must be affine in T (d²k/dT² = 0) with a positive T-coefficient (under the
    symbols' assumptions), and the claim's separation must be N1_lower/N2_upper. Returns (ok,
    evidence, witness)."""
    T = t1.symbol("T")
    n1, n2, sep = (t1.expr(k) for k in ("N1_lower", "N2_upper", "separation"))
    try:
        k = sp.simplify(-t1.exponent("epsilon", "N1_lower"))
    except NotAPowerLawError:
        return (
            False,
            f"N1_lower = {sp.sstr(n1)} is not a power law in ε, so it has no exponent k(T) FAILS",
            {"N1_lower": sp.sstr(n1)},
        )
    curv = sp.simplify(sp.diff(k, T, 2))
    slope = sp.simplify(sp.diff(k, T))
    linear = curv == 0
    rising = bool(slope.is_positive)
    ratio = sp.simplify(sep - n1 / n2) == 0
    ok = linear and rising and ratio
    witness = None if ok else {"N1_lower": sp.sstr(n1), "k(T)": sp.sstr(k), "dk/dT": sp.sstr(slope)}
    return (
        ok,
        f"one-layer side (symbolic, the theorem's statement that k(T) grows linearly in T): "
        f"N1_lower = {sp.sstr(n1)}, its ε-exponent k(T) = {sp.sstr(k)}: d²k/dT² = "
        f"{sp.sstr(curv)}{'' if linear else ' (not linear in T) FAILS'}, dk/dT = "
        f"{sp.sstr(slope)}{' > 0' if rising else ' not provably positive FAILS'}; separation = "
        f"{sp.sstr(sep)} {'=' if ratio else '!='} N1_lower/N2_upper"
        f"{'' if ratio else ' FAILS'}",
        witness,
    )
