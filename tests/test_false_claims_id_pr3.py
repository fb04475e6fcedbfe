"""Audit 42c, items 5-8 (ID-F1, ID-F4.7, ID-L4.2, PR-N1): false claims that agreed with the true
one wherever the check used to look are caught now, and the catalogue's claims still pass.

- ID-F1: U_head_layer = D² has the d_p-exponent 2 of the true 2D², the only thing the check used
  to compare; the per-head count is now measured (Jacobian rank deficit of an E = 8 layer over
  H) at d_p = 2, 4, 8.
- ID-F4.7: U_key_bias = 2D equals D·H at H = 2, the only head count the check used to build;
  the inert key-bias count is now measured at (H, D) = (2, 4), (4, 2), (3, 4).
- ID-L4.2: the regime D <= E dropped; the check now measures the identified QK dimension at
  (D, E) = (3, 2), (4, 3) too, where it is E², and refutes a claim whose regime admits them.
- PR-N1: the regime "h_l must divide d" dropped; the check now counts a layer with h_l = 3 at
  d = 64 (no integer head width) and refutes a claim whose regime admits it.

Each test writes the auditor's false claim, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile.
"""

import dataclasses

import sympy as sp
from _helpers import assert_verdict
from _helpers import false_claim as _with
from _helpers import run_quick as _quick

from approxtheory import claim


def _drop_regime(cid, needle):
    c = claim(cid)
    keep = tuple(r for r in c.regime if needle not in r.description)
    assert len(keep) == len(c.regime) - 1, (cid, [r.description for r in c.regime])
    return dataclasses.replace(c, regime=keep)


# ------------------------------------------------------------------------------------- ID-F1
def test_id_f1_true_count_is_measured_and_passes():
    assert_verdict(
        _quick("ID-F1"),
        "consistent-empirical",
        "8 vs 8 at d_p = 2, 32 vs 32 at d_p = 4, 128 vs 128 at d_p = 8",
        "2*D**2",
        "H·L = 128",
    )


def test_id_f1_qk_orbit_only_count_is_inconsistent():
    D = claim("ID-F1").symbol("D")
    v = _quick("ID-F1", _with("ID-F1", U_head_layer=D**2))
    assert_verdict(v, "inconsistent", "D**2 is measured", "8 vs 4 at d_p = 2 (NOT equal)")
    assert v.witness["U_head_measured"] == "8" and v.witness["U_head_claimed"] == "4"


def test_id_f1_doubled_count_is_inconsistent():
    """4D² (a count scaled by 2) has the column's power of d_p too: only the measured count
    catches it."""
    D = claim("ID-F1").symbol("D")
    v = _quick("ID-F1", _with("ID-F1", U_head_layer=4 * D**2))
    assert_verdict(v, "inconsistent", "the same power of d_p", "32 vs 64 at d_p = 4 (NOT equal)")


# ----------------------------------------------------------------------------------- ID-F4.7
def test_id_f47_true_count_passes_at_every_head_split():
    v = _quick("ID-F4.7")
    assert v.verdict == "verified-numeric", v.evidence
    for hd, n in (("(2, 4)", 8), ("(4, 2)", 8), ("(3, 4)", 12)):
        assert f"{n} measured vs {n} claimed at (H, D) = {hd}" in v.evidence, v.evidence
    assert "D*H" in v.evidence


def test_id_f47_count_two_d_is_refuted():
    D = claim("ID-F4.7").symbol("D")
    v = _quick("ID-F4.7", _with("ID-F4.7", U_key_bias=2 * D))
    assert_verdict(
        v,
        "refuted",
        "2*D",
        "8 measured vs 4 claimed at (H, D) = (4, 2) (NOT equal)",
        "12 measured vs 8 claimed at (H, D) = (3, 4) (NOT equal)",
    )


def test_id_f47_count_in_h_alone_is_refuted():
    """4H equals D·H at D = 4 (both E = 8, H = 2 and E = 12, H = 3): only (4, 2) catches it."""
    H = claim("ID-F4.7").symbol("H")
    v = _quick("ID-F4.7", _with("ID-F4.7", U_key_bias=4 * H))
    assert v.verdict == "refuted", v.evidence
    assert v.witness == {"H": 4, "D": 2, "inert_measured": 8, "claimed": "16"}


# ----------------------------------------------------------------------------------- ID-L4.2
def test_id_l42_true_claim_passes_and_reports_the_other_side():
    assert_verdict(
        _quick("ID-L4.2"),
        "verified-numeric",
        "outside it (reported, not tested) (D,E)=(3,2): 4 vs 3, (D,E)=(4,3): 9 vs 8",
    )


def test_id_l42_regime_dropped_is_refuted():
    assert_verdict(
        _quick("ID-L4.2", _drop_regime("ID-L4.2", "D <= E")),
        "refuted",
        "the claim's regime admits (D,E)=(3,2) (D > E)",
        "identified dimension is 4, not 3",
    )


def test_id_l42_regime_widened_is_refuted():
    c = claim("ID-L4.2")
    D, E = c.symbol("D"), c.symbol("E")
    widened = [dataclasses.replace(c.regime[0], expr=sp.Le(D, E + 1))]
    assert_verdict(
        _quick("ID-L4.2", _with("ID-L4.2", regime=widened)), "refuted", "(D,E)=(3,2) (D > E)"
    )


def test_id_l42_regime_mutants_are_required():
    assert claim("ID-L4.2").regime[0].outside


# ------------------------------------------------------------------------------------- PR-N1
def test_pr_n1_true_claim_passes_and_reports_the_non_dividing_head_count():
    assert_verdict(
        _quick("PR-N1"),
        "verified-symbolic",
        "at d = 64, h_l = 3 no integer head width",
        "16,381 or 17,158 attention weights",
        "excludes it (reported, not tested)",
    )


def test_pr_n1_regime_dropped_is_refuted():
    v = _quick("PR-N1", _drop_regime("PR-N1", "h_l must divide d"))
    assert_verdict(v, "refuted", "not N_attn = 4*I_bias*d + 4*d**2 = 16640", "ADMITS the cell")
    assert v.witness[0]["counted"] == {21: 16381, 22: 17158}


def test_pr_n1_regime_mutants_are_required():
    assert claim("PR-N1").regime[0].outside
