"""Audit survivors HC-L5, HC-P6 and HC-R2: false claims that kept their verdict are refuted now,
and the catalogue's claims keep theirs.

- HC-L5: L_i = λ_min r/4 (twice the paper's λ_min r/8) passed, because the random functions leave
  the constant room (a steeper direction than λ_min's, cubic terms, and secants on a grid that
  over-estimate the least slope by about 1/400). The check now also reads the claim's L_i at
  radial functions φ(|y|²) with Hessian λI and a negative quartic term: along every direction the
  exact least slope on [r/4, r/2] is at most λ r/4 - μ r³/16 < λ r/4, so a constant of 1/4 or
  more is violated at every small r (the tight constant is 1/4, not attained). The evidence
  prints the formula read, not a fixed "λ_min r/8".
- HC-P6: paper_max_k was checked one-sided (max k <= paper_max_k), so 3.6 passed. The maximum of
  HC-T2b's k over the paper's grid (n = 8, D = 4, s <= 3, T <= 128) is the claim's figure; the
  check now requires equality (up to float rounding) and prints both.
- HC-R2: the check compared only the signs of the T log T orders, never α. It now reads α from
  the claim's C_T = C_{d,D}·(rT)^(-αT) and requires, at several (d, D), an α_{d,D} > 0 that makes
  it the proof's α = 1/2, and that α has no symbol but α_{d,D}, d, D (α = 1, α = D/4 and an α
  with T in it are refuted).

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor).
"""

import functools

import sympy as sp
from _helpers import assert_verdict, run_quick
from _helpers import false_claim as _with
from _helpers import run_false as _false

from approxtheory import claim

_true = functools.cache(run_quick)


# ------------------------------------------------------------------------------------- HC-L5
def _l5_symbols():
    c = claim("HC-L5")
    return c.symbol("lambda_min"), c.symbol("r")


def test_hc_l5_true_constant_keeps_its_verdict_and_prints_what_it_read():
    v = _true("HC-L5")
    assert_verdict(v, "verified-numeric", "L_i = lambda_min*r/8 (read from the claim)")
    assert "leaves a factor 2" not in v.evidence, v.evidence
    radial = [r for r in v.rows if r["family"] == "radial"]
    # at the smallest r the radial functions' best slope is just under λ r/4, twice λ r/8
    assert radial and all(1.99 < r["ratio_at_smallest_r"] < 2 for r in radial), radial


def test_hc_l5_doubled_constant_is_refuted_by_the_radial_functions():
    lam, r = _l5_symbols()
    v = _false(_with("HC-L5", L_i=lam * r / 4))
    assert_verdict(
        v, "refuted", "L_i = lambda_min*r/4 (read from the claim)", "radial functions", ": 0 pass"
    )
    assert v.witness is not None and v.witness["family"] == "radial", v.witness


def test_hc_l5_a_constant_just_above_a_quarter_is_refuted_and_just_below_passes():
    lam, r = _l5_symbols()
    v = _false(_with("HC-L5", L_i=lam * r * sp.Rational(251, 1000)))
    assert v.verdict == "refuted", v.evidence
    # 0.249 < 1/4 is a true (weaker than tight) constant
    v = _false(_with("HC-L5", L_i=lam * r * sp.Rational(249, 1000)))
    assert v.verdict == "verified-numeric", v.evidence


# ------------------------------------------------------------------------------------- HC-P6
def test_hc_p6_true_maximum_keeps_its_verdict_and_prints_what_it_read():
    v = _true("HC-P6")
    assert_verdict(v, "verified-symbolic", "max k = 1.8 = the claim's paper_max_k = 9/5")


def test_hc_p6_doubled_paper_maximum_is_refuted():
    assert_verdict(
        _false(_with("HC-P6", paper_max_k=sp.Rational(18, 5))),
        "refuted",
        "max k = 1.8 != the claim's paper_max_k = 18/5",
        "Failed: paper maximum = paper_max_k = 18/5",
    )


def test_hc_p6_halved_paper_maximum_is_refuted():
    v = _false(_with("HC-P6", paper_max_k=sp.Rational(9, 10)))
    assert_verdict(v, "refuted", "paper_max_k = 9/10")


# ------------------------------------------------------------------------------------- HC-R2
def _r2_symbols():
    c = claim("HC-R2")
    return (c.symbol(x) for x in ("C_dD", "r", "T", "alpha_dD", "D"))


def test_hc_r2_true_remark_keeps_its_verdict_and_prints_alpha():
    v = _true("HC-R2")
    assert v.verdict == "verified-symbolic", v.evidence
    assert v.claimed == "-1/2", v.claimed
    assert "The claim's α read from C_T: alpha_dD, the proof's 1/2" in v.evidence, v.evidence
    # α = 1/2 written out is the proof's value: it passes too
    C, r, T, _, _ = _r2_symbols()
    v = _false(_with("HC-R2", C_T=C * (r * T) ** (-T / 2)))
    assert v.verdict == "verified-symbolic", v.evidence
    # a factor free of T and r is C_{d,D}'s business, not α's: not a false claim
    for factor in (sp.Rational(1, 2), 2):
        v = _false(_with("HC-R2", C_T=factor * claim("HC-R2").expr("C_T")))
        assert v.verdict == "verified-symbolic", (factor, v.evidence)


def test_hc_r2_alpha_one_is_refuted():
    C, r, T, _, _ = _r2_symbols()
    v = _false(_with("HC-R2", C_T=C * (r * T) ** (-T)))
    assert_verdict(v, "refuted", "α read from C_T: 1, NOT the proof's 1/2")


def test_hc_r2_alpha_depending_on_t_is_refuted():
    """α_{d,D}·T/(T + 1) and α_{d,D} + 1/T have the same T log T order as the true claim (the
    only thing the check used to compare), but α depends on T."""
    C, r, T, a, _ = _r2_symbols()
    for alpha in (a * T / (T + 1), a + 1 / T):
        v = _false(_with("HC-R2", C_T=C * (r * T) ** (-alpha * T)))
        assert v.verdict == "refuted", (alpha, v.evidence)
        read = v.evidence.split("α read from C_T: ")[1].split(", NOT the proof's 1/2")[0]
        assert sp.simplify(sp.sympify(read, locals={"T": T, "alpha_dD": a}) - alpha) == 0, read


def test_hc_r2_alpha_depending_on_d_and_D_wrongly_is_refuted_at_some_d_D():
    """α = D/4 is the proof's 1/2 at D = 2 only: the reading at several (d, D) refutes it."""
    C, r, T, _, D = _r2_symbols()
    v = _false(_with("HC-R2", C_T=C * (r * T) ** (-D * T / 4)))
    assert v.verdict == "refuted", v.evidence
    assert "(1, 1)" in v.evidence.split("NOT the proof's")[1], v.evidence
    assert "(8, 2)" not in v.evidence.split("NOT the proof's")[1], v.evidence
