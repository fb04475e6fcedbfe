"""Helpers the per-paper modules use to declare symbols and claims (private)."""

from __future__ import annotations

import dataclasses
from typing import Any

import sympy as sp

from ._claim import KINDS, PAPERS, PROVENANCES, Claim, Condition, collect_symbols

__all__ = ["SymbolTable", "cond"]


def cond(expr, description: str | None = None, outside: str | None = None) -> Condition:
    """A regime condition; ``outside``: where the claim's check builds cells on the
    condition's other side (see :class:`Condition`)."""
    return Condition(expr, description, outside)


#: the fields a catalogue entry writes (its id, paper and symbols are the table's), and the
#: ones it must write
_WRITTEN = {f.name for f in dataclasses.fields(Claim)} - {"id", "paper", "symbols"}
_REQUIRED = ("section", "kind", "statement", "provenance")


class SymbolTable:
    """A paper's declared symbols: ``name -> (sympy Symbol with assumptions, description)``.

    Also the factory for that paper's claims, so that a claim can only use declared symbols.
    """

    def __init__(self, paper: str):
        if paper not in PAPERS:
            raise ValueError(f"unknown paper {paper}")
        self.paper = paper
        self.table: dict[str, tuple[Any, str]] = {}
        self.claims: list[Claim] = []

    def sym(self, name: str, description: str, **assumptions) -> sp.Symbol:
        # positive unless the declaration says otherwise (nonnegative, real, ...)
        if not {"positive", "nonnegative", "real", "negative", "nonpositive"} & set(assumptions):
            assumptions = {**assumptions, "positive": True}
        s = sp.Symbol(name, **assumptions)
        if name in self.table:
            raise ValueError(f"symbol {name} declared twice")
        self.table[name] = (s, description)
        return s

    def syms(self, spec: str, **assumptions):
        """Declare several symbols: ``'T:sequence length; n:per-head width'``."""
        out = []
        for part in spec.split(";"):
            name, desc = part.split(":", 1)
            out.append(self.sym(name.strip(), desc.strip(), **assumptions))
        return out

    def claim(self, id: str, **fields: Any) -> Claim:
        """Declare this paper's claim ``id``. ``fields`` are :class:`Claim`'s as the catalogue
        writes them (``section``, ``kind``, ``statement`` and ``provenance``; optionally
        ``expressions``, ``regime``, ``vacuous_if``, ``rate``, ``notes``, ``depends_on`` and
        ``primary``): a regime condition may be a plain sympy relation, and the claim's
        symbols are collected from its expressions, regime and ``vacuous_if``."""
        unknown = sorted(set(fields) - _WRITTEN)
        missing = [f for f in _REQUIRED if f not in fields]
        if unknown or missing:
            raise TypeError(
                f"{id}: "
                + (f"unknown fields {unknown}" if unknown else f"missing fields {missing}")
                + f"; a claim is written with {', '.join(_REQUIRED)} and optionally "
                + ", ".join(sorted(_WRITTEN - set(_REQUIRED)))
            )
        kind, provenance = fields.get("kind"), fields.get("provenance")
        if kind not in KINDS:
            raise ValueError(f"{id}: kind {kind!r} not in {KINDS}")
        if provenance not in PROVENANCES:
            raise ValueError(f"{id}: provenance {provenance!r} not in {PROVENANCES}")
        expressions = dict(fields.pop("expressions", None) or {})
        regime = tuple(
            r if isinstance(r, Condition) else Condition(r) for r in fields.pop("regime", ())
        )
        vacuous_if = fields.get("vacuous_if")
        extra = [vacuous_if] if vacuous_if is not None else []
        symbols = collect_symbols(self.table, list(expressions.values()) + extra, regime)
        depends_on = tuple(fields.pop("depends_on", ()))
        fields.update(
            expressions=expressions, symbols=symbols, regime=regime, depends_on=depends_on
        )
        c = Claim(id=id, paper=self.paper, **fields)
        self.claims.append(c)
        return c
