"""Audit 42c's false claims against TO-X1 (the bound's direction flipped) and IF-K3 (the read-out
count read at one vocabulary size): each must be refuted, and the true claim must still pass."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp
from _helpers import false_claim
from _helpers import run_quick as _verdict

from approxtheory import claim

PASSING = ("verified-symbolic", "verified-numeric", "consistent-empirical")


def test_to_x1_true_claim_passes():
    v = _verdict("TO-X1")
    assert v.verdict == "verified-numeric", v.evidence
    assert sp.sstr(claim("TO-X1").expr("max_weight")) in v.evidence
    assert v.slack == pytest.approx(1.0, abs=1e-9)


def test_to_x1_flipped_to_lower_bound_is_refuted():
    """'The largest weight is AT LEAST e^{2B}/(e^{2B}+L-1)': equal logits give 1/L below it."""
    false = dataclasses.replace(
        claim("TO-X1"),
        kind="lower",
        statement="With logits in [-B, B] over L tokens the largest attention weight is at "
        "least e^{2B}/(e^{2B} + L - 1).",
    )
    v = _verdict("TO-X1", false)
    assert v.verdict == "refuted", v.evidence
    assert "lower bound" in v.evidence and "FAILS" in v.evidence
    w = v.witness
    assert w is not None and len(set(w["logits"])) == 1  # the equal-logit row


def test_to_x1_exact_reading_is_refuted():
    """Read as the max weight itself (kind 'exact'), the equal-logit rows refute it too."""
    v = _verdict("TO-X1", dataclasses.replace(claim("TO-X1"), kind="exact"))
    assert v.verdict == "refuted", v.evidence


def test_if_k3_true_claim_passes():
    v = _verdict("IF-K3")
    assert v.verdict == "verified-numeric", v.evidence
    assert "readout_nonzero = d" in v.evidence
    for d in (2, 3, 4, 6):
        assert f"d = {d}: {d} against {d}" in v.evidence, v.evidence


@pytest.mark.parametrize(
    "formula",
    [sp.Integer(4), "d**2/4", "2**(d/2)"],
    ids=["four", "d2over4", "pow2"],
)
def test_if_k3_readout_equal_to_d_at_four_only_is_refuted(formula):
    """Every formula equal to d at d = 4 alone disagrees with the built count at d = 2, 3, 6."""
    d = claim("IF-K3").symbol("d")
    e = formula if isinstance(formula, sp.Basic) else sp.sympify(formula, locals={"d": d})
    v = _verdict("IF-K3", false_claim("IF-K3", readout_nonzero=e))
    assert v.verdict == "refuted", v.evidence
    assert sp.sstr(e) in v.evidence and "FAILS" in v.evidence
