"""Helpers shared by the head-count checks: the rate criterion and the claim memo key."""

from __future__ import annotations

from typing import Any

import sympy as sp

from approxtheory import claim
from approxtheory.errors import InvalidValueError, MissingSymbolError

# tolerance on fitted exponents (rate criteria): the interval must lie within this of the
# predicted exponent on the stated side
RATE_TOL = 0.1


def _fit_ok(fit, predicted: float, side: str, tol: float = RATE_TOL) -> bool:
    """The rate criterion: the whole interval lies at or below (``side='below'``), at or above
    (``'above'``) or within (``'within'``) ``tol`` of the predicted exponent."""
    if side == "below":
        return fit.ci_high <= predicted + tol
    if side == "above":
        return fit.ci_low >= predicted - tol
    return predicted - tol <= fit.ci_low and fit.ci_high <= predicted + tol


def _ckey(cid: str, names: tuple | None = None) -> tuple:
    """A memo key for what the catalogue currently says about ``cid`` (its expressions ``names``,
    all by default, and its regime): a memoised measurement that reads the claim while it runs
    takes this among its arguments, so that a replaced claim (a test's planted false claim) is
    not served a cached result (``memo`` itself keys on verify's claim-mutant override)."""
    c = claim(cid)
    ex: list[tuple[str, Any]] = list(dict.items(c.expressions))
    # (dict.items, not the mapping's own: the key is not marked as a read of the formulas)
    return (
        cid,
        tuple((k, sp.srepr(v)) for k, v in ex if names is None or k in names),
        tuple(sp.srepr(r.expr) for r in c.regime),
    )


def _claimed_number(cid: str, name: str, **values) -> tuple[float, str]:
    """The claim's expression ``name`` evaluated at ``values``, as a float (NaN where it is no
    real number, is undefined there or needs a symbol not given: a check then decides against
    it, never raises), and the expression as read (sp.sstr) for the evidence."""
    c = claim(cid)
    read = sp.sstr(c.expr(name))
    try:
        v = sp.N(c.evaluate(name, **values))
    except (InvalidValueError, MissingSymbolError) as e:
        return float("nan"), f"{read} (no number: {e})"
    return (float(v) if v.is_real else float("nan")), read
