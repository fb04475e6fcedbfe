"""The sixth audit (42e) of the headcount checks: HC-X2 and HC-P11 survived a false claim, HC-L7
and HC-L6 crashed on one.

- HC-X2: h_transition = 14 (the digest's 10) passed, because h* ± 1 only had to meet the
  interval of the estimated transition, itself widened by std + rounding ([10, 13] for Table 8).
  The claim's h* must now lie inside that interval AND within one head of the estimate on the
  means (HC-X1 the same code). HC-P11 reads HC-X2's h* instead of a hard-coded 10.
- HC-P11: the check fitted a law of its own and never read error_law; it now fits the claim's
  error_law (its constants by least squares on log err) and computes R(h) with the claim's
  reversal_term and reversal_weight. c·T^β·exp(α h·T^δ) fits with δ < 0: the paper's δ = 0.25
  is outside the interval.
- HC-L7: eps_0 = d·Δ_out/2 raised ValueError (one free symbol assumed); every symbol the lemma
  knows (Δ_out, δ_min, d, D) is given its value per configuration, and a symbol it does not
  know refutes the claim with a reason.
- HC-L6: L_0 = √D·g_min/2 raised TypeError (L_0 lambdified over g_min only); each map's D is
  passed in the same way.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` or ``inconsistent`` (not an error, not a survivor).
"""

import functools

import sympy as sp
from _helpers import assert_verdict, run_quick
from _helpers import false_claim as _with
from _helpers import run_false as _false

from approxtheory import claim

_true = functools.cache(run_quick)


def _named(name):
    """A fresh symbol called ``name`` (as an auditor writes it, not the catalogue's object)."""
    return sp.Symbol(name, positive=True, integer=name in ("d", "D"))


# ------------------------------------------------------------------------------- HC-X1, HC-X2
def test_hc_x_true_transitions_keep_their_verdict_and_print_both_requirements():
    for cid, h in (("HC-X1", 12), ("HC-X2", 10)):
        assert_verdict(
            _true(cid),
            "consistent-empirical",
            f"the claim h* = {h} (read from the catalogue)",
            "h* is inside ĥ's interval",
            "both are required",
        )


def test_hc_x2_transition_at_14_is_inconsistent():
    v = _false(_with("HC-X2", h_transition=sp.Integer(14)))
    assert_verdict(v, "inconsistent", "the claim h* = 14", "h* is outside ĥ's interval")


def test_hc_x2_transition_at_8_or_13_is_inconsistent():
    v = _false(_with("HC-X2", h_transition=sp.Integer(8)))
    assert v.verdict == "inconsistent", v.evidence
    # 13 lies in the widened interval, but is 2 heads from the estimate on the means
    v = _false(_with("HC-X2", h_transition=sp.Integer(13)))
    assert v.verdict == "inconsistent", v.evidence
    assert "beyond 1" in v.evidence, v.evidence


def test_hc_x1_transition_one_table_step_away_is_inconsistent():
    for h in (8, 16):
        v = _false(_with("HC-X1", h_transition=sp.Integer(h)))
        assert v.verdict == "inconsistent", (h, v.evidence)


# ------------------------------------------------------------------------------------- HC-P11
def test_hc_p11_true_claim_keeps_its_verdict_and_reads_the_catalogue():
    v = _true("HC-P11")
    assert v.verdict == "consistent-empirical", v.evidence
    assert "HC-X2's transition h* = 10 (read from the catalogue): equal" in v.evidence
    law = sp.sstr(claim("HC-P11").expr("error_law"))
    assert f"Refit of the claim's error_law {law}" in v.evidence, v.evidence
    assert "the paper's α = -1.40 is inside and δ = 0.25 inside" in v.evidence, v.evidence
    # R computed with the claim's formulas equals the experiment's on every cell
    n = len(v.rows)
    assert n > 0 and f"{n}/{n} equal to headcount_real_data's" in v.evidence, v.evidence


def test_hc_p11_law_with_t_delta_multiplying_is_inconsistent():
    c = claim("HC-P11")
    a, d, h, T = (c.symbol(x) for x in ("alpha_fit", "delta_fit", "h", "T"))
    law = c.expressions["error_law"]
    false_law = law.subs(sp.exp(a * h / T**d), sp.exp(a * h * T**d))
    assert false_law != law
    v = _false(_with("HC-P11", error_law=false_law))
    assert v.verdict == "inconsistent", v.evidence
    assert "δ = 0.25 outside the 95 % intervals" in v.evidence, v.evidence
    assert v.measured["delta_fit"] < 0, v.measured


def test_hc_p11_reversed_reversal_term_is_inconsistent():
    """R summed over the pairs where the error FALLS with T: positive already at small h."""
    c = claim("HC-P11")
    e1, e2 = c.symbol("e_1"), c.symbol("e_2")
    v = _false(_with("HC-P11", reversal_term=sp.Max(e2 - e1, 0)))
    assert_verdict(
        v, "inconsistent", "HC-X2's transition h* = 10 (read from the catalogue): not equal"
    )


def test_hc_p11_reads_hc_x2s_transition():
    v = _false(_with("HC-X2", h_transition=sp.Integer(14)), "HC-P11")
    assert_verdict(
        v, "inconsistent", "HC-X2's transition h* = 14 (read from the catalogue): not equal"
    )


def test_hc_p11_law_with_a_symbol_of_no_meaning_is_inconsistent_not_an_error():
    c = claim("HC-P11")
    v = _false(_with("HC-P11", error_law=c.expr("error_law").subs(c.symbol("alpha_fit"), -1)))
    assert_verdict(v, "inconsistent", "has no alpha_fit to compare")


# -------------------------------------------------------------------------------------- HC-L7
def test_hc_l7_true_claim_keeps_its_verdict():
    assert_verdict(_true("HC-L7"), "verified-numeric", "ε_0 = Delta_out/2 (the catalogue's)")


def test_hc_l7_eps0_with_a_dimension_factor_is_refuted():
    D_out = claim("HC-L7").symbol("Delta_out")
    v = assert_verdict(
        _false(_with("HC-L7", eps_0=_named("d") * D_out / 2)), "refuted", "ε_0 = Delta_out*d/2"
    )
    assert v.witness is not None and v.witness["d"] == 2 and v.witness["margin"] <= 0, v.witness


def test_hc_l7_formulas_with_a_symbol_the_lemma_lacks_or_too_large_are_refuted():
    c = claim("HC-L7")
    v = _false(_with("HC-L7", eps_0=c.symbol("Delta_out") / _named("q")))
    assert_verdict(v, "refuted", "free symbol(s) q")
    # the radius D·δ_min/2 makes the balls meet at every D >= 2
    v = _false(_with("HC-L7", R_0=_named("D") * c.symbol("delta_min") / 2))
    assert v.verdict == "refuted", v.evidence


# -------------------------------------------------------------------------------------- HC-L6
def test_hc_l6_true_claim_keeps_its_verdict():
    assert_verdict(_true("HC-L6"), "verified-numeric", "L_0 = g_min/2 (read from the claim")


def test_hc_l6_l0_with_sqrt_d_is_refuted():
    g = claim("HC-L6").symbol("g_min")
    v = _false(_with("HC-L6", L_0=sp.sqrt(_named("D")) * g / 2))
    assert v.verdict == "refuted", v.evidence
    # √D/2 > 1 only at D = 5 among the maps' D <= 5: a failing map has D >= 4
    assert v.witness is not None and v.witness["D"] >= 4, v.witness


def test_hc_l6_l0_with_a_symbol_the_lemma_lacks_is_refuted():
    g = claim("HC-L6").symbol("g_min")
    assert_verdict(_false(_with("HC-L6", L_0=g / _named("k"))), "refuted", "free symbol(s) k")
