"""The :class:`Claim` object: one stated result of a paper as data plus sympy expressions.

A claim never restates a formula held elsewhere: the CLI, the docs, the checks and the plots all read
the expressions stored here.
"""

from __future__ import annotations

import fractions
import decimal
import numbers
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import sympy as sp

from ..errors import (
    InvalidValueError,
    MissingSymbolError,
    NotAPowerLawError,
    RegimeError,
    UnknownSymbolError,
)

__all__ = ["Claim", "Condition", "KINDS", "PROVENANCES", "PAPERS", "to_exact"]

KINDS = (
    "upper", "lower", "exact", "ratio", "rate", "lemma", "theorem", "conjecture", "empirical",
    "construction",
)
PROVENANCES = ("stated", "reconstructed", "derived", "conjecture")

#: arXiv id -> (short name, title)
PAPERS: dict[str, tuple[str, str]] = {
    "2510.06662": ("headcount", "The Effect of Attention Head Count on Transformer Approximation"),
    "2510.03784": ("tradeoffs", "Performance-Efficiency Tradeoffs in Transformers"),
    "2605.17930": ("infoflow", "InfoFlow: A Framework for Multi-Layer Transformer Analysis"),
    "2609.01231": ("identification", "Multi-Head Self Attention is a Parameter Identification Mechanism"),
    "2606.27449": ("prism", "Prism Transformer: Progressive Head Schedules"),
}

# Short names users may type for a symbol (keyword -> sympy symbol name).
ALIASES = {"eps": "epsilon", "ε": "epsilon", "β": "beta", "γ": "gamma", "δ": "delta", "η": "eta"}


@dataclass(frozen=True)
class Condition:
    """A condition of a claim's regime: a sympy boolean plus an optional human description.

    ``description`` is the requirement in words (e.g. ``H must divide E``).
    """

    expr: Any
    description: str | None = None

    @property
    def free_symbols(self) -> set:
        return set(self.expr.free_symbols)

    def text(self) -> str:
        return self.description or sp.sstr(self.expr)

    def holds(self, subs: Mapping) -> bool | None:
        """True/False when decidable with ``subs``; None when symbols are missing."""
        if not self.free_symbols <= set(subs):
            return None
        val = self.expr.subs(subs)
        if val in (sp.true, True):
            return True
        if val in (sp.false, False):
            return False
        val = sp.simplify(val)
        if val in (sp.true, True):
            return True
        if val in (sp.false, False):
            return False
        return None


def to_exact(value: Any, name: str = "value"):
    """Convert a user value to a sympy number, exactly where the input is exact.

    ints, Fractions, Decimals and decimal strings (``"0.1"``, ``"3/4"``, ``"1e-3"``) give exact
    rationals; Python floats stay floats (they are not exact inputs).
    """
    if isinstance(value, bool):
        raise InvalidValueError(f"{name} must be a number (got {value!r})")
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise InvalidValueError(f"{name} must be a number (got {value})")
        return value
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, fractions.Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, decimal.Decimal):
        return sp.Rational(str(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidValueError(f"{name} must be finite (got {value})")
        return sp.Float(value)
    if isinstance(value, numbers.Real):  # numpy scalars
        return to_exact(value.item() if hasattr(value, "item") else float(value), name)
    if isinstance(value, str):
        s = value.strip()
        try:
            return sp.Rational(s)
        except (TypeError, ValueError):
            pass
        try:
            v = sp.sympify(s, rational=True)
        except (sp.SympifyError, SyntaxError, TypeError, ValueError):
            v = None
        if v is None or not getattr(v, "is_number", False) or not v.is_real:
            raise InvalidValueError(
                f"{name} must be a real number such as 64, 0.1, 3/4, 1e-3 or log(2) (got {value!r})")
        return v
    raise InvalidValueError(f"{name} must be a number (got {value!r})")


def _fmt(v) -> str:
    return sp.sstr(v)


@dataclass(frozen=True)
class Claim:
    """One result of one paper, with its formulas as sympy objects.

    Example::

        >>> import approxtheory as at
        >>> c = at.claim("HC-T2b")
        >>> c.evaluate(T=64, s=1, n=2, D=2)
        5/2
        >>> c.vacuous_region("T")
        T <= 4*D + 4*n*s + 8*s
    """

    id: str
    paper: str
    section: str
    kind: str
    statement: str
    provenance: str
    expressions: Mapping[str, Any] = field(default_factory=dict)
    symbols: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    regime: tuple[Condition, ...] = ()
    vacuous_if: Any = None
    rate: tuple[str, Any] | None = None  # (expression name, precision symbol) of a parameter-count law
    notes: str = ""
    depends_on: tuple[str, ...] = ()
    primary: str | None = None

    # ----------------------------------------------------------------------------- basic queries
    @property
    def paper_name(self) -> str:
        return PAPERS[self.paper][0]

    @property
    def primary_name(self) -> str | None:
        if self.primary is not None:
            return self.primary
        return next(iter(self.expressions), None)

    @property
    def has_formula(self) -> bool:
        return bool(self.expressions)

    def expr(self, name: str | None = None):
        """The named expression (default: the primary one)."""
        if not self.expressions:
            raise MissingSymbolError(f"{self.id} has no formula ({self.kind}: {self.statement})")
        name = name or self.primary_name
        if name not in self.expressions:
            raise UnknownSymbolError(
                f"{self.id} has no expression {name!r}; it has: {', '.join(self.expressions)}")
        return self.expressions[name]

    def symbol(self, name: str | sp.Symbol):
        """The declared sympy symbol called ``name`` (aliases such as ``eps`` accepted)."""
        if isinstance(name, sp.Symbol):
            name = name.name
        name = ALIASES.get(name, name)
        if name not in self.symbols:
            allowed = ", ".join(sorted(self.symbols)) or "none"
            raise UnknownSymbolError(f"{self.id} has no symbol {name!r}; its symbols are: {allowed}")
        return self.symbols[name][0]

    # ----------------------------------------------------------------------------- evaluation
    def _subs(self, values: Mapping[str, Any], allow_expr_names: bool = False) -> dict:
        subs = {}
        for key, raw in values.items():
            name = ALIASES.get(key, key)
            if allow_expr_names and name in self.expressions and name not in self.symbols:
                continue
            sym = self.symbol(name)
            v = to_exact(raw, name)
            if sym.is_positive and not bool(v > 0):
                raise InvalidValueError(f"{name} must be positive (got {name}={_fmt(v)})")
            if sym.is_nonnegative and not bool(v >= 0):
                raise InvalidValueError(f"{name} must be non-negative (got {name}={_fmt(v)})")
            if sym.is_integer and not v.is_integer:
                raise InvalidValueError(f"{name} must be an integer (got {name}={_fmt(v)})")
            subs[sym] = v
        self._check_regime(subs)
        return subs

    def _check_regime(self, subs: Mapping) -> None:
        for cond in self.regime:
            if cond.holds(subs) is False:
                text = cond.text()
                order = sorted(cond.free_symbols,
                               key=lambda s: (text.find(s.name) if s.name in text else 99, s.name))
                got = ", ".join(f"{s.name}={_fmt(subs[s])}" for s in order)
                if cond.description:
                    raise RegimeError(f"{self.id}: {text} (got {got})")
                raise RegimeError(f"{self.id} applies only where {text} (got {got})")

    def in_regime(self, **values) -> bool:
        """True when the values satisfy every decidable regime condition."""
        try:
            self._subs(values)
        except RegimeError:
            return False
        return True

    def evaluate(self, expr: str | None = None, **values):
        """Evaluate the primary (or named) expression; exact inputs give exact results.

        Raises :class:`MissingSymbolError`, :class:`UnknownSymbolError`, :class:`InvalidValueError`
        or :class:`RegimeError` with a message naming what was wrong.
        """
        e = self.expr(expr)
        subs = self._subs(values)
        missing = sorted(s.name for s in e.free_symbols if s not in subs)
        if missing:
            raise MissingSymbolError(
                f"{self.id}: no value for {', '.join(missing)} (needed: "
                f"{', '.join(sorted(s.name for s in e.free_symbols))})")
        out = e.subs(subs)
        # numbers are already in canonical exact form; simplify() on large exponentials is slow
        return out if out.is_number else sp.simplify(out)

    def evaluate_float(self, expr: str | None = None, **values) -> float:
        return float(sp.N(self.evaluate(expr, **values), 17))

    def solve_for(self, symbol: str, expr: str | None = None, equals: Any = None, **values):
        """Solve ``expression == value`` for ``symbol``.

        The value is given as ``equals=`` or under the expression's name, e.g.
        ``claim("HC-T2b").solve_for("T", k=0, s=1, n=2, D=2) == [24]``. Returns the list of
        solutions compatible with the symbol's assumptions.
        """
        name = expr or self.primary_name
        e = self.expr(name)
        if equals is None:
            if name in values:
                equals = values.pop(name)
            else:
                equals = 0
        target = self.symbol(symbol)
        subs = self._subs({k: v for k, v in values.items() if k != symbol})
        rhs = to_exact(equals, name)
        # solve over the reals (an integer symbol such as T may be asked for a real threshold),
        # keeping the sign assumption
        x = sp.Dummy(target.name, positive=True) if target.is_positive else \
            sp.Dummy(target.name, real=True)
        eq = sp.Eq(e.subs(subs).subs(target, x), rhs)
        return [sp.simplify(s) for s in sp.solve(eq, x, dict=False)]

    def exponent(self, symbol: str, expr: str | None = None):
        """The power-law exponent p of the expression in ``symbol`` (expression ∝ symbol**p).

        For a parameter count ``C*eps**(-k)`` this is ``-k``; :meth:`rate_exponent` gives the
        exponent in 1/ε directly.
        """
        e = self.expr(expr)
        x = self.symbol(symbol)
        if not e.has(x):
            return sp.Integer(0)
        p = sp.simplify(x * sp.diff(sp.log(e), x))
        p = sp.simplify(sp.powsimp(sp.expand_log(p, force=True)))
        if p.has(x):
            raise NotAPowerLawError(
                f"{self.id}: {self.expr_name(expr)} = {sp.sstr(e)} is not a power law in {x.name}")
        return p

    def asymptotic_exponent(self, symbol: str, expr: str | None = None, at=sp.oo, **values):
        """lim x·d log(e)/dx as x -> ``at`` (oo or 0): the power-law exponent the expression
        approaches, e.g. -1 for HC-K1's (|S|-1)/(eβ) + T e^{-β} as β -> oo."""
        e = self.expr(expr)
        subs = self._subs(values)
        x = self.symbol(symbol)
        e = e.subs(subs)
        return sp.limit(sp.simplify(x * sp.diff(sp.log(e), x)), x, at)

    def expr_name(self, expr: str | None = None) -> str:
        return expr or self.primary_name or ""

    def rate_exponent(self):
        """Exponent a in a parameter-count law N(ε) ∝ (1/ε)^a, where the claim defines one."""
        if self.rate is None:
            raise NotAPowerLawError(f"{self.id} states no parameter-count rate in 1/epsilon")
        name, sym = self.rate
        return sp.simplify(-self.exponent(sym.name, expr=name))

    # ----------------------------------------------------------------------------- vacuity
    def is_vacuous(self, **values) -> bool:
        """True where the claim says nothing at these values (e.g. HC-T2b with k <= 0)."""
        if self.vacuous_if is None:
            return False
        subs = self._subs(values)
        missing = sorted(s.name for s in self.vacuous_if.free_symbols if s not in subs)
        if missing:
            raise MissingSymbolError(f"{self.id}: vacuity needs values for {', '.join(missing)}")
        v = sp.simplify(self.vacuous_if.subs(subs))
        return bool(v)

    def vacuous_region(self, symbol: str | None = None):
        """The region where the claim is vacuous, as a sympy condition (None if never vacuous).

        With ``symbol``, a condition that is linear in it is solved for it, e.g. HC-T2b's
        ``T <= 4*D + 4*n*s + 8*s``.
        """
        if self.vacuous_if is None:
            return None
        cond = self.vacuous_if
        if symbol is None:
            return cond
        x = self.symbol(symbol)
        if not isinstance(cond, sp.core.relational.Relational):
            return cond
        g = sp.simplify(cond.lhs - cond.rhs)
        slope = sp.simplify(sp.diff(g, x))
        if slope.has(x) or slope == 0:
            return cond
        boundary = sp.expand(sp.simplify(sp.solve(sp.Eq(g, 0), x)[0]))
        op = type(cond)
        if slope.is_positive:
            return op(x, boundary)
        if slope.is_negative:
            flip = {sp.Le: sp.Ge, sp.Lt: sp.Gt, sp.Ge: sp.Le, sp.Gt: sp.Lt}
            return flip.get(op, op)(x, boundary)
        return cond

    # ----------------------------------------------------------------------------- rendering
    def latex(self) -> str:
        """LaTeX of every expression of the claim, one ``name = ...`` per line."""
        lines = []
        for name, e in self.expressions.items():
            lhs = sp.latex(sp.Symbol(name))
            lines.append(f"{lhs} = {sp.latex(e)}")
        if self.vacuous_if is not None:
            lines.append(r"\text{vacuous where } " + sp.latex(self.vacuous_if))
        return r" \\ ".join(lines)

    def _repr_latex_(self) -> str:
        head = rf"\textbf{{{self.id}}}\ (\text{{{self.kind}, {self.provenance}}})"
        body = self.latex()
        if body:
            return rf"$\begin{{aligned}}&{head} \\ &" + body.replace(r" \\ ", r" \\ &") + \
                r"\end{aligned}$"
        return f"${head}$"

    def __repr__(self) -> str:
        return f"<Claim {self.id} ({self.kind}, {self.provenance}): {self.statement}>"

    def to_dict(self) -> dict:
        rate = None
        if self.rate is not None:
            try:
                rate = sp.sstr(self.rate_exponent())
            except NotAPowerLawError:
                rate = None
        return {
            "id": self.id,
            "paper": self.paper,
            "paper_name": self.paper_name,
            "section": self.section,
            "kind": self.kind,
            "statement": self.statement,
            "provenance": self.provenance,
            "expressions": {k: sp.sstr(v) for k, v in self.expressions.items()},
            "latex": {k: sp.latex(v) for k, v in self.expressions.items()},
            "primary": self.primary_name,
            "symbols": {n: {"description": d, "assumptions": _assumptions(s)}
                        for n, (s, d) in sorted(self.symbols.items())},
            "regime": [c.text() for c in self.regime],
            "vacuous_if": None if self.vacuous_if is None else sp.sstr(self.vacuous_if),
            "rate_exponent_in_inverse_epsilon": rate,
            "depends_on": list(self.depends_on),
            "notes": self.notes,
        }


def _assumptions(s) -> list[str]:
    return [a for a in ("positive", "nonnegative", "integer", "real") if getattr(s, f"is_{a}")
            and not (a == "real" and (s.is_positive or s.is_integer))
            and not (a == "nonnegative" and s.is_positive)]


def collect_symbols(table: Mapping[str, tuple[Any, str]], exprs: Iterable, conds: Iterable) \
        -> dict[str, tuple[Any, str]]:
    """The subset of a paper's symbol table used by the given expressions and conditions."""
    used = set()
    for e in exprs:
        used |= set(e.free_symbols)
    for c in conds:
        used |= set(c.free_symbols)
    out = {}
    for s in used:
        if s.name not in table or table[s.name][0] != s:
            raise RuntimeError(f"symbol {s!r} is not declared in its paper's symbol table")
        out[s.name] = table[s.name]
    return dict(sorted(out.items()))
