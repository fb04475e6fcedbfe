"""ID-P4.8 and ID-LT: false claims that agreed with the true one wherever the check used to look
(partial RoPE only at D_r = D/2; the identified fraction only at E = 8) are refuted now, and the
catalogue's claims still pass. An E-dependent fraction is a refutation with its reason, not a
TypeError.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor). The check is also run on the configurations
it used to measure alone.
"""

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick
from test_mutants_regime import count_points, unvaried

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.identifiability import AttentionConfig
from approxtheory.proofs_check import PASSING
from approxtheory.proofs_check.identification import counts, remarks


# ---------------------------------------------------------------------------------- ID-P4.8
def _old_p48(cfg):
    """The partial-RoPE layers the check used to measure alone had D_r = D/2."""
    return not str(cfg.rope).startswith("partial:") or 2 * cfg.rope_dims == cfg.head_dim


def test_id_p48_a_partial_count_agreeing_at_d_r_half_d_is_refuted(monkeypatch):
    c = claim("ID-P4.8")
    D, Dr = c.symbol("D"), c.symbol("D_r")
    # D_r + D_r² equals D_r + (D - D_r)² wherever D_r = D/2
    false = _with("ID-P4.8", U_qk_partial=Dr + Dr**2)
    assert (
        sp.simplify((false.expressions["U_qk_partial"] - c.expr("U_qk_partial")).subs(D, 2 * Dr))
        == 0
    )
    partial = [x for x in counts.CONFIGS["ID-P4.8"] if str(x.rope).startswith("partial:")]
    assert {(x.head_dim, x.rope_dims) for x in partial} >= {(8, 2), (8, 4), (8, 6)}

    v = _quick("ID-P4.8")
    assert v.verdict == "verified-numeric", v.evidence
    assert all(r["agrees"] for r in v.rows)
    # the formula read is printed, not a fixed restatement
    assert f"U_qk_partial = {sp.sstr(c.expr('U_qk_partial'))}" in v.evidence
    assert "E=8 H=1 rope=partial:6: 10 vs 10" in v.evidence

    with overriding(false):
        w = _quick("ID-P4.8")
        with monkeypatch.context() as mp:
            mp.setitem(
                counts.CONFIGS, "ID-P4.8", [x for x in counts.CONFIGS["ID-P4.8"] if _old_p48(x)]
            )
            old = _quick("ID-P4.8")
    assert old.verdict in PASSING  # what the D_r = D/2 layers let through
    assert w.verdict == "refuted", w.evidence
    assert f"U_qk_partial = {sp.sstr(Dr + Dr**2)}" in w.evidence
    assert "E=8 H=1 rope=partial:2: 38 vs 6" in w.evidence
    assert "E=8 H=1 rope=partial:6: 10 vs 42" in w.evidence
    bad = {r["config"] for r in w.rows if not r["agrees"]}
    assert bad == {"E=8 H=1 rope=partial:2", "E=8 H=1 rope=partial:6"}
    assert w.witness["U_qk_measured"] == 38 and w.witness["U_qk_claimed"] == 6


def test_the_varied_symbols_test_flags_symbols_varied_only_in_proportion():
    # the old ID-P4.8 layers vary D and D_r, but always with D_r = D/2
    old = [x for x in counts.CONFIGS["ID-P4.8"] if _old_p48(x)]
    assert unvaried(count_points("ID-P4.8", old)) == [("ID-P4.8", "U_qk_partial", "D", "D_r")]
    assert unvaried(count_points("ID-P4.8")) == []
    # one E alone for ID-T4.5: E is not varied
    e8 = [x for x in counts.CONFIGS["ID-T4.5"] if x.E == 8 and x.value_dim is None]
    assert ("ID-T4.5", "U", "E") in unvaried(count_points("ID-T4.5", e8))
    # hand-made point sets: on one line through the origin, and not
    assert unvaried({("X", "f"): [{"a": 1, "b": 2}, {"a": 2, "b": 4}, {"a": 3, "b": 6}]}) == [
        ("X", "f", "a", "b")
    ]
    assert unvaried({("X", "f"): [{"a": 1, "b": 2}, {"a": 2, "b": 3}]}) == []


# ------------------------------------------------------------------------------------- ID-LT
def test_id_lt_an_e_dependent_fraction_agreeing_at_e8_is_refuted_not_an_error(monkeypatch):
    c = claim("ID-LT")
    E, H = c.symbol("E"), c.symbol("H")
    # 1 - 4/(EH) equals (H - 1/2)/H at E = 8 alone
    false = _with("ID-LT", identified=1 - 4 / (E * H))
    assert sp.simplify((false.expressions["identified"] - c.expr("identified")).subs(E, 8)) == 0
    assert {x.E for x in remarks.FRACTION_CONFIGS} >= {4, 8, 16}

    v = _quick("ID-LT")
    assert v.verdict == "verified-symbolic", v.evidence
    assert f"the claim's identified = {sp.sstr(c.expr('identified'))}" in v.evidence
    assert "E = 4, H = 2: 3/4" in v.evidence and "E = 16, H = 4: 7/8" in v.evidence
    assert "its minimum over H >= 1 is 1/2 (H = 1)" in v.evidence
    assert "'about 90 %' is H = 5 (9/10)" in v.evidence
    assert v.slack == 2.5

    with overriding(false):
        w = _quick("ID-LT")
        with monkeypatch.context() as mp:
            mp.setattr(
                remarks, "FRACTION_CONFIGS", [x for x in remarks.FRACTION_CONFIGS if x.E == 8]
            )
            old = _quick("ID-LT")
    # at E = 8 alone every row agrees; only the E-dependence (no minimum over H alone) refutes
    assert old.verdict == "refuted", old.evidence
    assert all(r["agrees"] for r in old.rows)
    assert w.verdict == "refuted", w.evidence
    assert f"identified fraction {sp.sstr(1 - 4 / (E * H))} depends on E besides H" in w.evidence
    assert "NOT all equal" in w.evidence
    bad = [(r["E"], r["H"]) for r in w.rows if not r["agrees"]]
    assert bad == [(4, 2), (16, 2), (16, 4)]
    assert w.witness["E"] == 4 and w.witness["identified_claimed"] == "1/2"


def test_id_lt_other_symbols_and_undecidable_minima_never_crash():
    c = claim("ID-LT")
    E, H = c.symbol("E"), c.symbol("H")
    # E enters but cancels: the same fraction, still verified
    same = (E * H - E / 2) / (E * H)
    with overriding(_with("ID-LT", identified=same)):
        assert _quick("ID-LT").verdict == "verified-symbolic"
    # an E-dependence that the E = 8 rows cannot see, and one bounded away from the tickets
    for false in (1 - 4 / (E * H), 1 - 1 / (E + H), (H - sp.Rational(1, 2)) / H + (E - 8) / E**2):
        with overriding(_with("ID-LT", identified=false)):
            w = _quick("ID-LT")
        assert w.verdict == "refuted", (false, w.evidence)
        assert "depends on E besides H" in w.evidence
    # a true fraction written so that sympy finds no minimum: undecided, neither passed nor
    # refuted (every measured row agrees)
    hidden = sp.Max(sp.Rational(1, 2), 1 - 1 / (2 * H))
    with overriding(_with("ID-LT", identified=hidden)):
        u = _quick("ID-LT")
    assert u.verdict == "not-checkable" and u.scope == "none", u.evidence
    assert all(r["agrees"] for r in u.rows)
    assert f"identified fraction {sp.sstr(hidden)} has no minimum" in u.evidence


def test_id_pub_reads_the_extended_fraction_rows():
    v = _quick("ID-PUB")
    assert v.verdict == "refuted"  # the catalogue's own finding (the stated range is wrong)
    assert "rank/P at E = 8, H = 8 is 15/16 (equal to the catalogue's)" in v.evidence
    assert "E = 16, H in {2, 4}" in v.covered


def test_fraction_configs_vary_e_and_h_apart():
    pts = [(x.E, x.H) for x in remarks.FRACTION_CONFIGS]
    assert len({e for e, _ in pts}) >= 3 and len({h for _, h in pts}) >= 2
    assert any(a[0] * b[1] != a[1] * b[0] for a in pts for b in pts)
    # E varies at a fixed H (H = 2: E = 4, 8, 16)
    assert {e for e, h in pts if h == 2} == {4, 8, 16}
    assert AttentionConfig(16, 4) in remarks.FRACTION_CONFIGS
