"""The eighth audit (12 false claims, 8 caught): its survivors.

- HC-L4: lipschitz = p·min(sqrt(n), 4) agrees with p·sqrt(n) for n <= 16, where the search
  looked (n <= 15); the extremal all-ones nets are now evaluated at n up to 2^14 at the pair
  that attains their constant p·sqrt(n): refuted.
- TO-T1: the error template without its sum over the M groups has the same H*; the check now
  prints the template it read and its scope says a factor free of H is not tested (the
  template's scale is not measurable), instead of a fixed text that restated the true one.
- IF-R1: the claim's I_global was read by predict_rate only; it is now held to the positions a
  global-aggregation head's output depends on (tests/test_false_claims_audit10.py).
- HC-T2c's widened regime (n >= T instead of n >= T·d) still survives: the check builds d = 1
  only, where both agree, and nothing here shows that a narrower head cannot memorise; its
  scope now says so.
"""

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import claim


def test_hc_l4_capped_lipschitz_constant_is_refuted_at_wide_inputs():
    c = claim("HC-L4")
    p, n = c.symbol("p"), c.symbol("n")
    assert _run("HC-L4").verdict == "verified-numeric"
    false = _with("HC-L4", lipschitz=p * sp.Min(sp.sqrt(n), 4))
    v = _run("HC-L4", false)
    assert v.verdict == "refuted", v.evidence
    assert v.witness["n"] > 16 and v.witness["extremal"]


def test_to_t1_prints_the_template_it_read():
    v = _run("TO-T1")
    assert v.verdict.startswith("verified"), v.evidence
    assert f"for the claim's error E(H) = {sp.sstr(claim('TO-T1').expr('error'))}" in v.evidence
    assert "a factor of E free of H" in v.scope


def test_if_r1_holds_i_global_to_a_global_aggregation_head():
    v = _run("IF-R1")
    assert v.verdict == "verified-numeric", v.evidence
    assert "I_global (the information-set size GIA charges) is held to" in v.scope
    assert "16 of T = 16 positions (I_global 16)" in v.evidence


def test_hc_t2c_scope_says_its_regime_is_not_built_on_the_other_side():
    v = _run("HC-T2c")
    assert v.verdict == "verified-numeric", v.evidence
    assert "its other side is not built" in v.scope
