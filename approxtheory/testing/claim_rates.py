"""Rate assertions against the catalogue: :func:`assert_claim_rate` and the exponent it reads."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ApproxTheoryError, InvalidValueError
from .rates import PowerLawFit, _checked, _e, _is_number, _line, _real, assert_rate


def _bound_slope(c, expr: str | None, over: str, sizes: np.ndarray, values: dict) -> float:
    """The claimed expression's own log-log slope over the grid (least squares)."""
    bound = np.array(
        [c.evaluate_float(expr, **{**values, over: float(s)}) for s in sizes], dtype=np.float64
    )
    if not (np.isfinite(bound).all() and (bound > 0).all()):
        raise InvalidValueError(
            f"{c.id}: {c.expr_name(expr)} is not finite and positive on the grid "
            f"({over} {sizes.min():g}..{sizes.max():g}); pass tol= explicitly"
        )
    return _line(np.log(sizes), np.log(bound))[0]


#: (claim id, id of the Claim object, symbol, expression, point) -> (the Claim, its exponent
#: with the other symbols left free): sympy's limit costs about a second, and a rate test asks
#: for it at every drawn case (the Claim is kept so that its id is not reused)
_SYMBOLIC_EXPONENTS: dict[tuple, tuple[Any, Any]] = {}


def _asymptotic_exponent(c, sym: str, expr, at, at_zero: bool, values: dict) -> float:
    """``c.asymptotic_exponent(sym, expr, at, **values)`` as a float, computed once per claim
    with the other symbols left free and substituted here; where the free form has no finite
    value at ``values``, or disagrees with the expression's own log-log slope far out (beyond
    the share a slowly varying factor can take, a special value such as a vanishing term), the
    exact limit at ``values`` is computed instead."""
    import sympy as sp

    from ..catalogue._claim import substitute

    key = (c.id, id(c), sym, expr, str(at))
    if key not in _SYMBOLIC_EXPONENTS:
        try:
            free = c.asymptotic_exponent(sym, expr, at)
        except ApproxTheoryError:
            free = None
        _SYMBOLIC_EXPONENTS[key] = (c, free)
    free = _SYMBOLIC_EXPONENTS[key][1]
    if free is not None:
        try:
            v = substitute(free, {c.symbol(k): sp.sympify(float(x)) for k, x in values.items()})
            p = float(v) if v.is_number else math.nan
            far = (1e-12, 1e-13) if at_zero else (1e12, 1e13)
            e1, e2 = (c.evaluate_float(expr, **{**values, sym: x}) for x in far)
            slope = math.log(e2 / e1) / math.log(far[1] / far[0])
            if math.isfinite(p) and abs(slope - p) <= 0.05:
                return p
        except (ApproxTheoryError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            pass
    return float(c.asymptotic_exponent(sym, expr, at, **values))


def assert_claim_rate(
    claim_id: str,
    sizes: Sequence[float],
    errors: Sequence[float],
    *,
    over: str,
    values: Mapping[str, Any] | None = None,
    expr: str | None = None,
    at: Any = "oo",
    tol: float | None = None,
    confidence: float = 0.95,
    what: str = "error",
    kind: str | None = None,
    _terms: Callable[..., dict] | None = None,
) -> PowerLawFit:
    """Assert that measured ``errors`` over ``sizes`` of the symbol ``over`` follow the rate the
    catalogue states for ``claim_id``: the asymptotic exponent ``p`` of its expression (``expr``,
    the primary one by default) in ``over`` as ``over -> at`` (∞ by default; ``at=0`` for a
    precision ε), at ``values`` of its other symbols.

    The claim's kind (or ``kind``, the kind of bound the expression is, e.g. a construction's
    ``bound_kind``) sets the side: an upper bound's errors must decay at least as fast
    (``at_most=p`` as ``over -> ∞``, ``at_least=p`` as ``over -> 0``), a lower bound's no faster,
    any other kind at the rate (``exponent=p``). ``tol`` defaults to the share of the
    expression's slowly varying factor over the grid: its own log-log slope there minus ``p``
    (``ln(βT)`` for IF-T2), as ``verify``'s rate criterion; this needs values for all its
    symbols. Every grid point must lie in the claim's regime
    (:class:`~approxtheory.errors.RegimeError`).

    >>> betas = [10.0, 100.0, 1000.0, 10000.0]
    >>> fit = assert_claim_rate("IF-T2", betas, [0.06 / b for b in betas], over="beta",
    ...                         values={"T": 4})
    >>> round(fit.slope, 3)
    -1.0
    """
    # _terms: what reads the catalogue, with _claim_rate_terms's arguments (Measured's caches it)
    read = _claim_rate_terms if _terms is None else _terms
    terms = read(claim_id, sizes, errors, over, values, expr, at, tol, kind, what)
    return _assert_claim_terms(terms, sizes, errors, confidence, what)


def _claim_rate_terms(claim_id, sizes, errors, over, values, expr, at, tol, kind, what) -> dict:
    """What :func:`assert_claim_rate` reads from the catalogue, as plain values: the side
    (``at_most``, ``at_least`` or ``exponent``), the exponent, ``tol``, the symbol, the message
    prefix and note, and the regime error where a size lies outside the claim's regime (a
    deterministic function of the arguments and the catalogue's code: :class:`Measured` caches
    it, keyed without ``errors``: they are only checked here, as :func:`assert_rate` checks
    them). Bad arguments raise here."""
    from ..catalogue import claim

    if not isinstance(claim_id, str):
        raise InvalidValueError(f"claim_id must be a claim id string (got {claim_id!r})")
    c = claim(claim_id)
    if not isinstance(over, str):
        raise InvalidValueError(f"over must be a symbol name (got {over!r})")
    sym = c.symbol(over).name
    vals = dict(values or {})
    if any(c.symbol(name).name == sym for name in vals):
        raise InvalidValueError(
            f"{c.id}: values= must not give {sym}, the symbol the rate is measured over"
        )
    if kind is None:
        kind = c.kind
    elif not isinstance(kind, str):
        raise InvalidValueError(f"kind must be a string such as upper or lower (got {kind!r})")
    x, _ = _checked(sizes, errors, sym, what)
    for s in x:
        if not c.in_regime(**{**vals, sym: float(s)}):
            conds = "; ".join(cond.text() for cond in c.regime)
            return {
                "symbol": sym,
                "regime_error": f"{c.id}: {sym}={s:g} lies outside the claim's regime "
                f"({conds}); allowed: sizes where it applies",
            }
    at_zero = str(at).strip() in ("0", "0.0") or (_is_number(at) and float(at) == 0.0)
    p = _asymptotic_exponent(c, sym, expr, at, at_zero, vals)
    if not math.isfinite(p):
        raise InvalidValueError(f"{c.id}: the asymptotic exponent in {sym} is {p}: no rate")
    if tol is None:
        own = _bound_slope(c, expr, sym, x, vals)
        if kind == "upper":
            tol = max(0.0, own - p) if not at_zero else max(0.0, p - own)
        elif kind == "lower":
            tol = max(0.0, p - own) if not at_zero else max(0.0, own - p)
        else:
            tol = abs(own - p)
    else:
        tol = _real("tol", tol)  # as assert_rate refuses it
    name = c.expr_name(expr)
    if kind == "upper":
        side = "at_least" if at_zero else "at_most"
        note = f" ({c.id}'s upper bound {name} ~ {sym}^{_e(p)})"
    elif kind == "lower":
        side = "at_most" if at_zero else "at_least"
        note = f" ({c.id}'s lower bound {name} ~ {sym}^{_e(p)})"
    else:
        side = "exponent"
        note = f" ({c.id}'s {name} ~ {sym}^{_e(p)})"
    return {
        "regime_error": None,
        "side": side,
        "exponent": float(p),
        "tol": float(tol),
        "symbol": sym,
        "prefix": f"{c.id}: ",
        "note": note,
    }


def _assert_claim_terms(terms: dict, sizes, errors, confidence, what) -> PowerLawFit:
    from ..errors import RegimeError

    _checked(sizes, errors, terms["symbol"], what)  # as assert_claim_rate checks them
    if terms["regime_error"] is not None:
        raise RegimeError(terms["regime_error"])
    return assert_rate(
        sizes,
        errors,
        **{terms["side"]: terms["exponent"]},
        tol=terms["tol"],
        confidence=confidence,
        over=terms["symbol"],
        what=what,
        _prefix=terms["prefix"],
        _claim_note=terms["note"],
    )
