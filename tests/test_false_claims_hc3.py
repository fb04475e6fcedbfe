"""Audit 42c, items 1-2 (HC-T2c, HC-L9): false claims that agreed with the true one wherever the
check used to look are refuted now, and the catalogue's claims still pass.

- HC-T2c: M_suff = C/ε equals C/ε^(1+γ) at γ = 0, the only γ the check used to read (its built
  network has exact features); the check now also reads M_suff's exponent of 1/ε at γ = HC-A3's
  γ_worst(d, D) in 1, 2, 3, where HC-A3's width exponent is a (derived) lower bound.
- HC-L9: params_order = 1/ε has the same exponent of 1/ε as T/ε, the only one the check used to
  read; the check now also compares the built count's slope against T at each ε with
  params_order's exponent of T.

Each test writes the auditor's false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check on the quick profile: the verdict
must be ``refuted`` (not an error, not a survivor).
"""

import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_quick as _quick

from approxtheory import claim


# ----------------------------------------------------------------------------------- HC-T2c
def _t2c_symbols():
    c = claim("HC-T2c")
    return c.symbol("C"), c.symbol("epsilon"), c.symbol("gamma")


def test_hc_t2c_gamma_dropped_is_refuted_at_gamma_worst():
    C, eps, _ = _t2c_symbols()
    false = _with("HC-T2c", M_suff=C / eps)
    v = _quick("HC-T2c", false)
    assert v.verdict == "refuted", v.evidence
    assert "M_suff = C/epsilon" in v.evidence, v.evidence  # the formula read, not a fixed string
    failed = v.evidence.split("Failed:")[1]
    # γ_worst(1, 1) = 1 is no counterexample (exponent 1 >= 1); 2 and 3 are
    assert "γ_worst(d=2, D=1) = 2" in failed and "γ_worst(d=3, D=1) = 3" in failed, failed
    assert "γ_worst(d=1, D=1)" not in failed, failed
    # the γ = 0 part still passes: the false formula agrees with the claim there
    assert "the count grows faster" not in failed, failed


def test_hc_t2c_half_gamma_is_refuted_only_at_gamma_3():
    """C/ε^(1+γ/2) covers the width's exponent at γ <= 2 and falls short at γ = 3: the reading at
    (d, D) = (3, 1) is needed."""
    C, eps, g = _t2c_symbols()
    v = _quick("HC-T2c", _with("HC-T2c", M_suff=C / eps ** (1 + g / 2)))
    assert v.verdict == "refuted", v.evidence
    failed = v.evidence.split("Failed:")[1]
    assert "γ_worst(d=3, D=1) = 3" in failed and "γ_worst(d=2, D=1)" not in failed, failed


def test_hc_t2c_sharp_form_and_catalogue_claim_pass():
    """The sharp form C/ε^max(1, γ) is a true (stronger) statement, and the catalogue's M_suff
    keeps its verdict."""
    C, eps, g = _t2c_symbols()
    v = _quick("HC-T2c")
    assert v.verdict == "verified-numeric", v.evidence
    assert sp.sstr(claim("HC-T2c").expr("M_suff")) in v.evidence
    v = _quick("HC-T2c", _with("HC-T2c", M_suff=C / eps ** sp.Max(1, g)))
    assert v.verdict == "verified-numeric", v.evidence


# ------------------------------------------------------------------------------------ HC-L9
def test_hc_l9_t_dropped_is_refuted_by_the_t_slopes():
    eps = claim("HC-L9").symbol("epsilon")
    v = _quick("HC-L9", _with("HC-L9", params_order=1 / eps))
    assert v.verdict == "refuted", v.evidence
    assert "params_order = 1/epsilon's exponent of T" in v.evidence, v.evidence
    assert "are NOT all at or below" in v.evidence, v.evidence


def test_hc_l9_sqrt_t_is_refuted():
    """A count O(sqrt(T)/ε) agrees in its 1/ε exponent and grows in T, but too slowly."""
    c = claim("HC-L9")
    T, eps = c.symbol("T"), c.symbol("epsilon")
    v = _quick("HC-L9", _with("HC-L9", params_order=sp.sqrt(T) / eps))
    assert v.verdict == "refuted", v.evidence


def test_hc_l9_and_hc_p4_keep_their_verdicts():
    for cid in ("HC-L9", "HC-P4"):
        v = _quick(cid)
        assert v.verdict == "verified-numeric", (cid, v.evidence)
        assert "T/epsilon's exponent of T" in v.evidence, (cid, v.evidence)
