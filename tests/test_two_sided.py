"""Numeric verdicts use both sides (issue 30 item 2): a grid cell's search value (a lower bound
on the supremum) never exceeds its certified upper bracket, and where one does the check fails
loudly instead of reporting a verdict; cells of softmax retrieval heads are bracketed at any T."""

from __future__ import annotations

import pytest

from approxtheory.constructions import Construction
from approxtheory.proofs_check._core import construction_grid


def test_softmax_retrieval_cells_are_two_sided_beyond_t16():
    rows, _ = construction_grid("softmax_retrieval", {"T": [64], "beta": [100.0]}, budget=64)
    (r,) = rows
    assert r["sup_error_upper"] is not None and r["certified"]
    assert r["sup_error"] <= r["sup_error_upper"] <= r["claimed_bound"]


def test_a_bracket_below_the_found_value_is_an_error_not_a_verdict(monkeypatch):
    real = Construction.certify

    def unsound(self, *a, **k):  # a planted unsound bracket: half of what it should be
        out = dict(real(self, *a, **k))
        out["sup_error_upper"] = out["sup_error_upper"] * 0.5
        return out

    monkeypatch.setattr(Construction, "certify", unsound)
    with pytest.raises(AssertionError, match="above the certified upper bracket"):
        construction_grid("softmax_retrieval", {"T": [64], "beta": [100.0]}, budget=64)
