"""The claim catalogue: every result of the five papers as a queryable sympy object.

Example::

    >>> from approxtheory.catalogue import claim, claims
    >>> claim("HC-T2b").evaluate(T=64, s=1, n=2, D=2)
    5/2
    >>> len(claims(paper="2609.01231")) > 10
    True
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..errors import (
    ApproxTheoryError,
    InvalidValueError,
    MissingSymbolError,
    SolveError,
    UnknownClaimError,
    UnknownSymbolError,
    did_you_mean,
)
from . import headcount, identification, infoflow, prism, tradeoffs
from ._claim import (
    ALIASES,
    KINDS,
    PAPERS,
    PROVENANCES,
    Claim,
    Condition,
    _solve,
    _truth,
    substitute,
)

__all__ = [
    "Claim",
    "Condition",
    "claim",
    "claims",
    "compare",
    "Comparison",
    "KINDS",
    "PAPERS",
    "PROVENANCES",
    "paper_id",
    "overriding",
    "override_token",
    "lookups",
    "note_lookup",
]

_MODULES = (headcount, tradeoffs, infoflow, identification, prism)
_REGISTRY: dict[str, Claim] = {}
for _m in _MODULES:
    for _c in _m.CLAIMS:
        if _c.id in _REGISTRY:
            raise RuntimeError(f"duplicate claim id {_c.id}")
        _REGISTRY[_c.id] = _c


def paper_id(paper: str) -> str:
    """Normalise a paper reference: an arXiv id (``2510.06662``, ``arXiv:2510.06662v1``) or a
    short name (``headcount``)."""
    if not isinstance(paper, str):
        known = ", ".join(f"{a} ({s})" for a, (s, _) in PAPERS.items())
        raise ApproxTheoryError(
            f"a paper must be given as a string (got {paper!r}); known papers: {known}"
        )
    p = paper.strip()
    low = p.lower()
    if low.startswith("arxiv:"):
        p = p[6:]
        low = low[6:]
    if "v" in low and low.split("v")[0] in PAPERS:
        p = low.split("v")[0]
    if p in PAPERS:
        return p
    for arxiv, (short, _title) in PAPERS.items():
        if low == short:
            return arxiv
    known = ", ".join(f"{a} ({s})" for a, (s, _) in PAPERS.items())
    raise ApproxTheoryError(f"unknown paper {paper!r}; known papers: {known}")


_OVERRIDES = itertools.count(1)
_TOKEN = [0]


_LOOKUPS = [0]


def lookups() -> int:
    """How many claim lookups (:func:`claim`, :func:`claims`) this process has made: a memoised
    measurement compares it before and after to learn whether it read the catalogue."""
    return _LOOKUPS[0]


def note_lookup() -> None:
    """Count a lookup served from elsewhere (a memoised result that had read the catalogue)."""
    _LOOKUPS[0] += 1


def override_token() -> int:
    """0 when no claim is overridden, else a number unique to the active :func:`overriding`
    block (memoised measurements key on it)."""
    return _TOKEN[0]


@contextlib.contextmanager
def overriding(mutated: Claim):
    """Within the block, :func:`claim` and :func:`claims` return ``mutated`` for its id (a claim
    mutant of ``verify --mutants``, see :mod:`approxtheory.catalogue.mutate`); the catalogue's
    own claim is restored on leaving, also on an exception."""
    if mutated.id not in _REGISTRY:
        raise UnknownClaimError(
            f"unknown claim id {mutated.id!r}: only a claim of the catalogue can be overridden"
        )
    original, token = _REGISTRY[mutated.id], _TOKEN[0]
    _REGISTRY[mutated.id] = mutated
    _TOKEN[0] = next(_OVERRIDES)
    try:
        yield mutated
    finally:
        _REGISTRY[mutated.id] = original
        _TOKEN[0] = token


def claim(id: str) -> Claim:
    """The claim with this id (case-insensitive). Unknown ids raise :class:`UnknownClaimError`
    with the closest ids suggested."""
    _LOOKUPS[0] += 1
    if not isinstance(id, str):
        raise UnknownClaimError(f"claim id must be a string (got {id!r})")
    key = id.strip()
    if key in _REGISTRY:
        return _REGISTRY[key]
    upper = {k.upper(): k for k in _REGISTRY}
    if key.upper() in upper:
        return _REGISTRY[upper[key.upper()]]
    hint = (
        did_you_mean(key, _REGISTRY, n=4, cutoff=0.5, ignore_case=True)
        or "; run `approxtheory claims list` to see every id"
    )
    raise UnknownClaimError(f"unknown claim id {id!r}{hint}")


def claims(
    paper: str | None = None, kind: str | None = None, provenance: str | None = None
) -> list[Claim]:
    """All claims, optionally filtered by paper (arXiv id or short name), kind and provenance."""
    _LOOKUPS[0] += 1
    out = list(_REGISTRY.values())
    if paper is not None:
        pid = paper_id(paper)
        out = [c for c in out if c.paper == pid]
    if kind is not None:
        if not isinstance(kind, str) or kind not in KINDS:
            raise ApproxTheoryError(f"unknown kind {kind!r}; kinds are: {', '.join(KINDS)}")
        out = [c for c in out if c.kind == kind]
    if provenance is not None:
        if not isinstance(provenance, str) or provenance not in PROVENANCES:
            raise ApproxTheoryError(
                f"unknown provenance {provenance!r}; allowed: {', '.join(PROVENANCES)}"
            )
        out = [c for c in out if c.provenance == provenance]
    return out


@dataclass(frozen=True)
class Comparison:
    """Where one claim's quantity overtakes another's as ``variable`` grows."""

    a: str
    b: str
    variable: str
    quantity: str
    expr_a: Any
    expr_b: Any
    crossings: tuple
    regions: tuple  # ((lo, hi, winner), ...) winner in {"a", "b", "equal"}

    def __str__(self) -> str:
        parts = []
        for lo, hi, w in self.regions:
            who = {"a": f"{self.a} larger", "b": f"{self.b} larger", "equal": "equal"}[w]
            parts.append(f"{self.variable} in ({sp.sstr(lo)}, {sp.sstr(hi)}): {who}")
        cr = ", ".join(sp.sstr(c) for c in self.crossings) or "none"
        return (
            f"{self.quantity}: {self.a} = {sp.sstr(self.expr_a)} vs {self.b} = "
            f"{sp.sstr(self.expr_b)}; crossings at {self.variable} = {cr}; " + "; ".join(parts)
        )

    def overtakes_at(self):
        """The first crossing, or None."""
        return self.crossings[0] if self.crossings else None


def _quantity(c: Claim, quantity: str):
    if quantity == "exponent":
        return c.rate_exponent()
    if quantity == "value":
        return c.expr()
    return c.expr(quantity)


def compare(
    a: str | Claim,
    b: str | Claim,
    variable: str | None = None,
    quantity: str | None = None,
    /,
    **values,
) -> Comparison:
    """Find where one bound overtakes another as ``variable`` grows.

    ``quantity`` is ``"exponent"`` (each claim's rate exponent in 1/ε, the default), ``"value"``
    (the primary expressions) or an expression name common to both. ``variable`` and ``quantity``
    may also be given as keywords. Every other keyword is a value for a symbol of at least one of
    the two claims (numbers or strings such as ``"3/4"``, parsed by :mod:`approxtheory.parse`);
    a name that is a symbol of neither raises :class:`UnknownSymbolError`. Example: the h >= D
    upper bound of HC-T2a against the h < D lower bound of HC-T2b as T grows::

        >>> compare("HC-T2a", "HC-T2b", "T", gamma=2, s=1, n=2, D=2).crossings
        (56,)
    """
    if variable is None:
        variable = values.pop("variable", None)
    if quantity is None:
        quantity = values.pop("quantity", "exponent")
    ca = a if isinstance(a, Claim) else claim(a)
    cb = b if isinstance(b, Claim) else claim(b)
    variable = _check_compare(ca, cb, variable, quantity, values)
    ea, eb = _quantity(ca, quantity), _quantity(cb, quantity)

    def subs_for(c: Claim, e):
        vals = {k: v for k, v in values.items() if _has(c, k)}
        return substitute(e, c._subs(vals), what=f"{c.id}: {quantity}")

    ea, eb = subs_for(ca, ea), subs_for(cb, eb)
    xs = {s for s in (ea.free_symbols | eb.free_symbols) if s.name == variable}
    if not xs:
        raise ApproxTheoryError(
            f"neither {ca.id} nor {cb.id} depends on {variable!r} after substitution"
        )
    others = {s.name for s in (ea.free_symbols | eb.free_symbols)} - {variable}
    if others:
        raise MissingSymbolError(f"compare needs values for {', '.join(sorted(others))}")
    x = sp.Symbol(variable, positive=True)
    ea = ea.subs({s: x for s in xs})
    eb = eb.subs({s: x for s in xs})
    crossings, regions = _regions(ea - eb, x, f"compare {ca.id} with {cb.id} in {variable}")
    return Comparison(ca.id, cb.id, variable, quantity, ea, eb, crossings, regions)


def _check_compare(ca: Claim, cb: Claim, variable, quantity, values: dict) -> str:
    """:func:`compare`'s arguments checked against the two claims' symbols; the variable's
    symbol name (an alias resolved)."""
    both = ", ".join(sorted(set(ca.symbols) | set(cb.symbols))) or "none"
    if not isinstance(variable, str):
        raise UnknownSymbolError(
            f"compare needs the name of the variable as a string (got "
            f"{variable!r}); symbols of {ca.id} and {cb.id}: {both}"
        )
    variable = ALIASES.get(variable, variable)
    if not (_has(ca, variable) or _has(cb, variable)):
        raise UnknownSymbolError(
            f"neither {ca.id} nor {cb.id} has a symbol {variable!r}; their symbols are: {both}"
        )
    if not isinstance(quantity, str):
        raise UnknownSymbolError(
            f"quantity must be 'exponent', 'value' or an expression name (got {quantity!r})"
        )
    unknown = sorted(k for k in values if not (_has(ca, k) or _has(cb, k)))
    if unknown:
        raise UnknownSymbolError(
            f"neither {ca.id} nor {cb.id} has a symbol "
            f"{', '.join(repr(u) for u in unknown)}; their symbols are: "
            f"{both}"
        )
    if any(ALIASES.get(k, k) == variable for k in values):
        raise InvalidValueError(
            f"compare: {variable} is the variable and cannot also be given a "
            f"value; allowed: values for the other symbols"
        )
    return variable


def _regions(diff, x: sp.Symbol, what: str) -> tuple[tuple, tuple]:
    """The positive real roots of ``diff`` in ``x`` and, between consecutive ones (from 0 to
    infinity), which side is larger: ``(lo, hi, "a" | "b" | "equal")``."""
    try:
        sols = _solve(diff, x, what=what, simplify=True)
    except SolveError:
        sols = []
    crossings = tuple(sorted(s for s in sols if s.is_real and s.is_positive))
    pts = [sp.Integer(0), *crossings, sp.oo]
    regions = []
    for lo, hi in zip(pts[:-1], pts[1:]):
        mid = (lo + hi) / 2 if hi != sp.oo else (lo + 1) * 2
        v = sp.N(substitute(diff, {x: mid}, what=f"{what} at {x.name}={sp.sstr(mid)}"))
        if not v.is_real:
            raise ApproxTheoryError(
                f"{what}: the difference is not a real number at "
                f"{x.name}={sp.sstr(mid)} ({sp.sstr(v)})"
            )
        w = "equal" if v == 0 else ("a" if _truth(v > 0) else "b")
        regions.append((lo, hi, w))
    return crossings, tuple(regions)


def _has(c: Claim, name: str) -> bool:
    try:
        c.symbol(name)
        return True
    except ApproxTheoryError:
        return False
