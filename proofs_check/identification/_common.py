"""The catalogue expressions the ID checks read, with the formula mutants that break them
(``_expr``, ``_ev``), and the slack of an exact count that holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

from approxtheory import claim

from .._core import Context, claimed_number, claimed_sign


# ------------------------------------------------------------------------ formula mutants
def _ov_orthogonal(e):
    """C² -> C(C-1)/2: the orbit of O(C) instead of GL(C)."""
    return sp.expand((e - sp.sqrt(e)) / 2)


#: (mutant, claim, expression name) -> the broken expression, given the catalogue's one
# keyed by Context.mutant (None: no mutant, found nowhere)
FORMULA_MUTANTS: dict[tuple[str | None, str, str], Callable[[Any], Any]] = {
    ("qk-only-count", "ID-T4.5", "U"): lambda e: e / 2,
    ("qk-only-count", "ID-T4.5", "ratio"): lambda e: e / 2,
    ("orthogonal-ov", "ID-L4.6", "U"): _ov_orthogonal,
    ("value-bias-identified", "ID-B4.7.2", "U"): lambda e: (
        e
        - claim("ID-B4.7.2")
        .expr("U_value_bias")
        .subs(
            {
                claim("ID-B4.7.2").symbol("C"): claim("ID-B4.7.2").symbol("E")
                / claim("ID-B4.7.2").symbol("H")
            }
        )
    ),
    ("per-head-count", "ID-GQA4.9", "U"): lambda e: e.subs(
        claim("ID-GQA4.9").symbol("G"), claim("ID-GQA4.9").symbol("H")
    ),
    ("per-head-count", "ID-GQA4.9", "ratio"): lambda e: e.subs(
        claim("ID-GQA4.9").symbol("G"), claim("ID-GQA4.9").symbol("H")
    ),
    ("per-head-count", "ID-GQA4.9", "U_qk"): lambda e: e.subs(
        claim("ID-GQA4.9").symbol("G"), claim("ID-GQA4.9").symbol("H")
    ),
    ("repeated-constant", "ID-P4.8", "U_qk_repeated_pair"): lambda e: e - 2,
    ("gqa-count", "ID-RG", "U"): lambda e: claim("ID-GQA4.9").expr("U"),
    ("gqa-count", "ID-RG", "U_qk"): lambda e: claim("ID-GQA4.9").expr("U_qk"),
    ("gqa-count", "ID-RG", "ratio"): lambda e: claim("ID-GQA4.9").expr("ratio"),
    ("split-ratio", "ID-X4.8.1", "ratio"): lambda e: e.subs(
        claim("ID-X4.8.1").symbol("D"),
        claim("ID-X4.8.1").symbol("E") / claim("ID-X4.8.1").symbol("H"),
    ),
    ("half-ratio", "ID-SH3.2", "ratio"): lambda e: sp.Rational(1, 2),
    ("orthogonal-count", "ID-L4.1", "U"): _ov_orthogonal,
    ("count-constant", "ID-E4.1", "U"): lambda e: e - 1,
    ("uncapped", "ID-L4.1w", "U"): lambda e: claim("ID-L4.1w").symbol("D") ** 2,
    ("one-constraint-set", "ID-L4.2", "dof"): lambda e: (
        e + claim("ID-L4.2").symbol("D") * (claim("ID-L4.2").symbol("D") + 1) / 2
    ),
    ("trivial-excluded", "ID-L4.3", "null_dim"): lambda e: e - 1,
    ("rho-constant", "ID-S5.1", "rho_isotropic"): lambda e: 2 * e,
    ("sha-symmetry-dropped", "ID-EQ4.10", "U_sha"): lambda e: sp.Integer(0),
    ("mha-qk-only", "ID-EQ4.10", "P_mha"): lambda e: e / 2,
    ("decay-exponent", "ID-L5.1d", "decay_factor"): lambda e: sp.sqrt(e),
}


def _expr(ctx: Context, cid: str, name: str):
    """The catalogue's expression, broken if the context's mutant breaks it."""
    e = claim(cid).expr(name)
    f = FORMULA_MUTANTS.get((ctx.mutant, cid, name))
    return f(e) if f is not None else e


def _ev(ctx: Context, cid: str, name: str, **values):
    """The (possibly mutated) catalogue expression at exact integer values."""
    c = claim(cid)
    e = _expr(ctx, cid, name).subs({c.symbol(k): sp.Integer(v) for k, v in values.items()})
    return sp.nsimplify(sp.simplify(e))


#: the slack of an exact count or identity that holds (claimed / measured = 1: no room)
EXACT = 1.0


def _claimed_sign(cid: str, name: str) -> tuple[int | None, str, str]:
    """The sign claim ``cid`` states as its expression ``name`` (:func:`claimed_sign`)."""
    return claimed_sign(claim(cid), name)


def _claimed_real(cid: str, name: str) -> tuple[float | None, str, str]:
    """The real constant claim ``cid`` states as ``name`` (:func:`claimed_number`), a float."""
    e, read, why = claimed_number(claim(cid), name)
    return (None if e is None else float(e)), read, why
