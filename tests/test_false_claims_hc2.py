"""Audit 42b, items 1-3 (HC-A3, HC-K2, HC-C1): false claims that agreed with the true one
wherever the check used to look are refuted now, and the catalogue's claims still pass.

- HC-A3: gamma_worst = Min(D, d) equals Max(D, d) at d = D = 1, the only point the check used to
  read; the check now also reads it at (d, D) = (1, 2) and (2, 1) against the 2-D grid-like rate.
- HC-K2: width = 2T equals T·d at d = 2, the only token dimension the check used to build; the
  check now builds d in {1, 2, 3} and requires claimed = built >= T·d in every cell.
- HC-C1: k read from HC-T2b with n = 0 instead of n = 2 is larger, so the one-sided margin
  passed it; the check now also requires the sympy identity with HC-T2b's k at s = D1, n = 2,
  D = D2.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor).
"""

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.proofs_check import Context, run_check
from approxtheory.proofs_check.headcount import memorization


# ------------------------------------------------------------------------------------ HC-A3
def _a3_symbols():
    c = claim("HC-A3")
    return c.symbol("d"), c.symbol("D")


def test_hc_a3_min_instead_of_max_is_refuted_by_the_2d_readings():
    d, D = _a3_symbols()
    false = _with("HC-A3", gamma_worst=sp.Min(D, d))
    # the false formula agrees with the claim at d = D = 1 (the point the check used to read)
    assert false.evaluate("gamma_worst", d=1, D=1) == claim("HC-A3").evaluate(
        "gamma_worst", d=1, D=1
    )
    v = _quick("HC-A3", false)
    assert v.verdict == "refuted", v.evidence
    assert "Min(D, d)" in v.evidence, v.evidence  # the formula read, not a fixed string
    assert "γ_worst(d=1, D=2) = 1" in v.evidence and "γ_worst(d=2, D=1) = 1" in v.evidence


def test_hc_a3_each_2d_reading_is_needed():
    """γ_worst = d fails only at (d, D) = (1, 2) (F_0 on [0,1]^2), γ_worst = D only at (2, 1)
    (the f_i on [0,1]^2): both readings are tested."""
    d, D = _a3_symbols()
    for expr, bad, good in ((d, "(d=1, D=2)", "(d=2, D=1)"), (D, "(d=2, D=1)", "(d=1, D=2)")):
        v = _quick("HC-A3", _with("HC-A3", gamma_worst=expr))
        assert v.verdict == "refuted", (expr, v.evidence)
        failed = v.evidence.split("Failed:")[1]
        assert f"γ_worst{bad}" in failed and f"γ_worst{good}" not in failed, (expr, failed)


def test_hc_a3_catalogue_claim_still_passes():
    v = _quick("HC-A3")
    assert v.verdict == "verified-numeric", v.evidence
    assert sp.sstr(claim("HC-A3").expr("gamma_worst")) in v.evidence
    assert "Failed" not in v.evidence
    assert v.claimed["gamma_worst(d=1, D=2)"] == 2 and v.claimed["gamma_worst(d=2, D=1)"] == 2
    # the grid-like 2-D rate needs γ close to 2 (N = n^2 hats, error ∝ h)
    assert 1.6 < v.measured["gamma_needed_2d"] <= 2.0
    rows_2d = [r for r in v.rows if str(r["target"]).startswith("2-D")]
    assert {r["N"] for r in rows_2d} == {n * n for n in memorization.A3_NODES_2D}


# ------------------------------------------------------------------------------------ HC-K2
def test_hc_k2_width_2t_is_refuted_away_from_d_2():
    T = claim("HC-K2").symbol("T")
    false = _with("HC-K2", width=2 * T)
    v = _quick("HC-K2", false)
    assert v.verdict == "refuted", v.evidence
    assert "2*T" in v.evidence, v.evidence
    # refuted at every cell with d != 2, and only there
    assert sorted(map(tuple, v.witness)) == sorted(
        (T_, d_) for T_, d_ in memorization.K2_CELLS if d_ != 2
    )
    with overriding(false):
        assert run_check("HC-P1", Context(profile="quick")).verdict == "refuted"


def test_hc_k2_width_larger_than_the_construction_is_refuted():
    """The claim describes the construction: a width above the built one (2·T·d) is refuted."""
    c = claim("HC-K2")
    v = _quick("HC-K2", _with("HC-K2", width=2 * c.expr("width")))
    assert v.verdict == "refuted", v.evidence


def test_hc_k2_catalogue_claim_still_passes_at_every_d():
    v = _quick("HC-K2")
    assert v.verdict == "verified-numeric", v.evidence
    assert {r["d"] for r in v.rows} == {1, 2, 3} and len({r["T"] for r in v.rows}) >= 2
    for r in v.rows:
        assert r["width_claimed"] == r["width_built"] == r["T"] * r["d"], r


# ------------------------------------------------------------------------------------ HC-C1
def _c1_symbols():
    c = claim("HC-C1")
    return c.symbol("T"), c.symbol("D1"), c.symbol("D2")


def test_hc_c1_k_read_with_another_n_is_refuted():
    T, D1, D2 = _c1_symbols()
    false = _with("HC-C1", k=(T / 4 - D1 - D2 + 1) / (D1 + 1) - 1)
    v = _quick("HC-C1", false)
    assert v.verdict == "refuted", v.evidence
    assert "NOT identical" in v.evidence, v.evidence
    assert v.measured > 0  # the margin alone would have passed it: the identity catches it
    assert sp.sstr(false.expr("k")) in v.evidence


def test_hc_c1_k_with_a_term_dropped_is_refuted():
    c = claim("HC-C1")
    v = _quick("HC-C1", _with("HC-C1", k=c.expr("k") + 1))  # the proof's "- 1" dropped
    assert v.verdict == "refuted" and "NOT identical" in v.evidence, v.evidence


def test_hc_c1_reads_hc_t2b_k():
    """A different HC-T2b k (the heads' width n + 2 in place of n + 1) no longer matches the
    corollary's k: the check reads HC-T2b, it does not restate it."""
    t2 = claim("HC-T2b")
    n = t2.symbol("n")
    other = _with("HC-T2b", k=t2.expr("k").subs(n, n + 1))
    v = _quick("HC-C1", other)
    assert v.verdict == "refuted" and "NOT identical" in v.evidence, v.evidence


def test_hc_c1_catalogue_claim_still_passes():
    v = _quick("HC-C1")
    assert v.verdict == "verified-numeric", v.evidence
    assert "identical (sympy)" in v.evidence and v.measured > 0
    assert sp.sstr(claim("HC-T2b").expr("k")) in v.evidence
