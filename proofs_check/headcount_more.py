"""Checks of arXiv 2510.06662 (HC-*) beyond the theorems of ``headcount.py``: the density
theorem's constructive instance, the conjecture on trained multi-layer models, and the remarks and
empirical transitions of the paper (issue 24, "the claims still missing")."""

from __future__ import annotations

from ._core import not_checkable

not_checkable(
    "HC-T1",
    reason="density theorem: no rate or constant to measure; the D it needs is "
    "of order d·C(T, T/4)",
)
not_checkable(
    "HC-Conj1",
    reason="conjecture about trained multi-layer models; its constants a_L, "
    "b_L are unspecified and no multi-layer training experiment exists here",
)
