"""The :class:`Claim` object: one stated result of a paper as data plus sympy expressions.

A claim never restates a formula held elsewhere: the CLI, the docs, the checks and the plots all
read the expressions stored here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ..errors import (
    ApproxTheoryError,
    InvalidValueError,
    MissingSymbolError,
    NotAPowerLawError,
    RegimeError,
    SolveError,
    UnknownSymbolError,
    ValueRangeError,
)
from ..parse import log10_abs, to_number

__all__ = [
    "Claim",
    "Condition",
    "KINDS",
    "PROVENANCES",
    "PROVENANCE_MEANING",
    "PAPERS",
    "FORMER_TITLES",
    "to_exact",
    "substitute",
    "MAX_EXACT_DIGITS",
    "MAX_RESULT_LOG10",
    "Roots",
]

#: an exact power whose result would have more digits than this (estimated from the sizes of base
#: and exponent before anything is computed) is computed in floating point instead
MAX_EXACT_DIGITS = 1000
#: results, and powers computed on the way, above 10**MAX_RESULT_LOG10 in magnitude are refused
#: (below Python's 4300-digit limit for printing an int)
MAX_RESULT_LOG10 = 4000
_MAX_EXACT_BITS = int(MAX_RESULT_LOG10 * 3.3219) + 4
#: digits of a Float power computed instead of an exact one (plus the exponent's digits)
_FLOAT_POW_DIGITS = 30
#: exponents of the unknown that ``solve_for``/``compare`` hand to sympy as they are; larger or
#: non-rational ones are replaced by a positive placeholder symbol first (sympy would otherwise
#: expand x**(1249/7) into a polynomial of degree 1249 and never finish)
_SMALL_EXPONENT = 4

KINDS = (
    "upper",
    "lower",
    "exact",
    "ratio",
    "rate",
    "lemma",
    "theorem",
    "conjecture",
    "empirical",
    "construction",
)
PROVENANCES = ("stated", "reconstructed", "derived", "conjecture")

#: The one provenance scheme of the catalogue (every paper module applies it; a claim takes the
#: label of its weakest part, and a label is never stronger than its source).
PROVENANCE_MEANING = {
    "stated": "the paper states it (its own text, equation or table, as the digest quotes it)",
    "reconstructed": "a claim of the paper rebuilt from secondary sources (reviews, summaries, "
    "the authors' code, garbled or OCR'd text) because the paper's own statement "
    "is not available in the digest",
    "derived": "derived by the digest or by this project (the digests' [DER], [X], [I] marks; "
    "corrected forms; stand-ins for a theorem)",
    "conjecture": "a conjecture, of the paper or of the digest",
}

#: arXiv id -> (short name, title)
PAPERS: dict[str, tuple[str, str]] = {
    "2510.06662": ("headcount", "The Effect of Attention Head Count on Transformer Approximation"),
    "2510.03784": ("tradeoffs", "Performance-Efficiency Tradeoffs in Transformers"),
    "2605.17930": ("infoflow", "InfoFlow: A Framework for Multi-Layer Transformer Analysis"),
    "2609.01231": (
        "identification",
        "Multi-Head Self Attention is a Parameter Identification Mechanism",
    ),
    "2606.27449": ("prism", "Prism Transformer: Progressive Head Schedules"),
}

#: arXiv id -> earlier titles of the paper (version: title), shown beside the current one: a
#: reader who knows the paper by its first title finds it
FORMER_TITLES: dict[str, dict[str, str]] = {
    "2510.03784": {"v1": "Allocation of Parameters in Transformers"},
}

# Short names users may type for a symbol (keyword -> sympy symbol name).
ALIASES = {"eps": "epsilon", "ε": "epsilon", "β": "beta", "γ": "gamma", "δ": "delta", "η": "eta"}


class Roots(list):
    """What :meth:`Claim.solve_for` returns: the roots (a list, equal to a plain list of them)
    inside the claim's regime, and in :attr:`dropped` the ones it left out, each with the regime
    condition it violates.

    ``IF-T2``'s ``(1 + ln(βT))/β = 1e-2`` at ``T = 64`` has two roots; β ≈ 0.0057 gives
    βT ≈ 0.37 < 1, outside the claim's regime ``beta*T >= 1``, so only β ≈ 1227 is returned and
    the other is named in ``dropped`` (and in the repr, so that it is never silently lost).
    """

    def __init__(self, roots: Iterable = (), dropped: Iterable[tuple[Any, str]] = ()):
        super().__init__(roots)
        #: ``((root, condition), ...)``: the roots outside the regime and the condition each fails
        self.dropped: tuple[tuple[Any, str], ...] = tuple(dropped)

    @property
    def note(self) -> str | None:
        """One line naming the dropped roots and the conditions they violate (None if none)."""
        if not self.dropped:
            return None
        return "dropped outside the regime: " + "; ".join(
            f"{_approx(r)} (violates {c})" for r, c in self.dropped
        )

    def __repr__(self) -> str:
        base = list.__repr__(self)
        return base if not self.dropped else f"{base}  # {self.note}"

    def __reduce__(self):
        return (Roots, (list(self), self.dropped))


def _approx(r) -> str:
    """A root for a message: exact form, with its value to 6 digits when that is not plain."""
    text = sp.sstr(r)
    if r.is_Float or r.is_Rational or not getattr(r, "is_number", False):
        return text
    try:
        return f"{text} ≈ {sp.sstr(sp.N(r, 6))}"
    except (TypeError, ValueError, ArithmeticError):
        return text


@dataclass(frozen=True)
class Condition:
    """A condition of a claim's regime: a sympy boolean plus an optional human description.

    ``description`` is the requirement in words (e.g. ``H must divide E``). ``outside`` (None
    for most conditions) says where the project's check of the claim builds cells on the
    condition's other side (e.g. HC-T2a's ``h >= D``: one-head networks at D = 2): the claim
    mutants that drop or widen such a condition are then required to flip the verdict
    (:mod:`approxtheory.catalogue.mutate`); for any other condition they are only reported.
    """

    expr: Any
    description: str | None = None
    outside: str | None = None

    @property
    def free_symbols(self) -> set:
        return set(self.expr.free_symbols)

    def text(self) -> str:
        """The condition as written in the source, else its sympy form."""
        return self.description or sp.sstr(self.expr)

    def holds(self, subs: Mapping) -> bool | None:
        """True/False when decidable with ``subs``; None when symbols are missing."""
        if not self.free_symbols <= set(subs):
            return None
        val = substitute(self.expr, subs, what=f"the condition {self.text()}")
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

    Kept for compatibility; see :func:`approxtheory.parse.to_number` (strings are parsed by the
    safe parser of :mod:`approxtheory.parse`, never evaluated).
    """
    return to_number(value, name)


# --------------------------------------------------------------------------- guarded evaluation
def _too_large(what: str, lg: float) -> ValueRangeError:
    mag = f"{lg:.0f}" if lg < 1e15 else f"{lg:.3g}"
    return ValueRangeError(
        f"{what} would be about 10^{mag}, too large to evaluate; allowed: results up to "
        f"10^{MAX_RESULT_LOG10} (use smaller values)"
    )


def _exact_pow_digits(b, e) -> float:
    """Estimated digits of the exact b**e (e Rational), without computing it."""
    if b.is_Rational:
        if b.is_zero or abs(b) == 1:
            return 0.0
        # digits of the larger of numerator and denominator (b is not 0 or +-1, so > 0)
        size = max(
            math.log10(abs(int(b.p)))
            if abs(int(b.p)).bit_length() < 1000
            else abs(int(b.p)).bit_length() * 0.302,
            math.log10(int(b.q)) if int(b.q).bit_length() < 1000 else int(b.q).bit_length() * 0.302,
        )
        return abs(int(e.p)) / int(e.q) * size if abs(int(e.p)).bit_length() < 1000 else math.inf
    # an exact irrational base (sqrt(2), pi, ...): sympy may expand sqrt(2)**n into 2**(n/2)
    return math.inf if abs(e) > MAX_EXACT_DIGITS else 0.0


def _pow(b, e, what: str):
    if (
        b.is_number
        and e.is_number
        and e.is_Rational
        and not b.is_Float
        and _exact_pow_digits(b, e) > MAX_EXACT_DIGITS
    ):
        prec = _FLOAT_POW_DIGITS + len(str(abs(int(e.p)))) + len(str(int(e.q)))
        out = sp.Pow(sp.Float(b.evalf(prec), prec), e)
        if out.is_Float:
            lg = log10_abs(out)
            if lg > MAX_RESULT_LOG10:
                raise _too_large(what, lg)
        return out
    out = sp.Pow(b, e)
    if out.is_Float and log10_abs(out) > MAX_RESULT_LOG10:
        raise _too_large(what, log10_abs(out))
    return out


def substitute(expr, subs: Mapping, what: str = "the value"):
    """``expr.subs(subs)`` that never computes a huge exact number.

    The expression is rebuilt bottom-up; a power whose exact value would have more than
    :data:`MAX_EXACT_DIGITS` digits (estimated from its base and exponent before computing) is
    computed in floating point, and a Float above ``10**MAX_RESULT_LOG10`` raises
    :class:`ValueRangeError` naming ``what``. Sympy's own ``subs`` would compute e.g.
    ``(1/10)**(-10**9)`` exactly and not return.
    """
    subs = dict(subs)
    if not subs:
        return expr

    def rec(e):
        if e in subs:
            return subs[e]
        if e.is_Atom or not e.args:
            return e
        args = [rec(a) for a in e.args]
        if all(a is b for a, b in zip(args, e.args)):
            return e
        if isinstance(e, sp.Pow):
            return _pow(args[0], args[1], what)
        out = e.func(*args)
        if isinstance(out, sp.Float) and log10_abs(out) > MAX_RESULT_LOG10:
            raise _too_large(what, log10_abs(out))
        if (
            isinstance(out, sp.Rational)
            and max(abs(int(out.p)).bit_length(), int(out.q).bit_length()) > _MAX_EXACT_BITS
        ):
            raise (
                _too_large(what, log10_abs(out))
                if log10_abs(out) > MAX_RESULT_LOG10
                else ValueRangeError(
                    f"{what} would be an exact number with more than "
                    f"{MAX_RESULT_LOG10} digits; allowed: up to {MAX_RESULT_LOG10} "
                    f"digits (pass float values for a floating-point result)"
                )
            )
        return out

    return rec(expr)


def _check_result(v, what: str):
    """Refuse undefined, infinite and too-large results; return ``v``."""
    if not isinstance(v, sp.Basic) or not v.is_number:
        return v
    if v.has(sp.nan):
        raise InvalidValueError(f"{what} is undefined at these values (got nan)")
    if v.has(sp.zoo, sp.oo, -sp.oo):
        raise InvalidValueError(
            f"{what} is infinite at these values (a division by zero); "
            f"allowed: values where it is finite"
        )
    if isinstance(v, sp.Rational):
        for part in (v.p, v.q):
            if abs(int(part)).bit_length() > _MAX_EXACT_BITS:
                raise ValueRangeError(
                    f"{what} is an exact number with more than {MAX_RESULT_LOG10} digits; "
                    f"allowed: up to {MAX_RESULT_LOG10} digits (pass float values for a "
                    f"floating-point result)"
                )
    try:
        lg = log10_abs(v)
    except InvalidValueError:
        try:
            lg = log10_abs(sp.Abs(v))
        except InvalidValueError:
            return v  # not numerically evaluable: nothing large was computed
    if lg > MAX_RESULT_LOG10:
        raise _too_large(what, lg)
    return v


def _truth(rel) -> bool | None:
    if rel in (sp.true, True):
        return True
    if rel in (sp.false, False):
        return False
    return None


def _limit_point(at):
    if at in (sp.oo, math.inf) or (
        isinstance(at, str) and at.strip() in ("oo", "inf", "+oo", "+inf", "infinity")
    ):
        return sp.oo
    if at in (-sp.oo, -math.inf) or (
        isinstance(at, str) and at.strip() in ("-oo", "-inf", "-infinity")
    ):
        return -sp.oo
    return to_number(at, "at")


def _is_small_exponent(p) -> bool:
    return p.is_Rational and abs(p.p) <= _SMALL_EXPONENT and p.q <= _SMALL_EXPONENT


def _solve(expr, x, what: str, simplify: bool = False) -> list:
    """Real-or-positive solutions of ``expr == 0`` for ``x``, never handing sympy a power of
    ``x`` with a large or non-rational numeric exponent (sympy turns x**(1249/7) into a
    polynomial of degree 1249 and does not return): such exponents are replaced by positive
    placeholder symbols, solved for symbolically, and substituted back with :func:`substitute`."""
    placeholders: dict = {}

    def is_big_power(node):
        return (
            isinstance(node, sp.Pow)
            and node.base.has(x)
            and node.exp.is_number
            and not _is_small_exponent(node.exp)
        )

    def to_placeholder(node):
        p = node.exp
        key = abs(p)
        if key not in placeholders:
            placeholders[key] = sp.Dummy("p", positive=True)
        rho = placeholders[key]
        neg = _truth(sp.Lt(p, 0))
        return node.base ** (-rho if neg else rho)

    expr = expr.replace(is_big_power, to_placeholder)
    if simplify:
        expr = sp.simplify(expr)
    try:
        sols = sp.solve(sp.Eq(expr, 0), x, dict=False)
    except NotImplementedError as err:
        raise SolveError(
            f"{what}: sympy cannot solve this equation in closed form; allowed: "
            f"equations sympy solves (try giving values for more symbols)"
        ) from err
    back = {rho: key for key, rho in placeholders.items()}
    return [substitute(s, back, what=what) if back else s for s in sols]


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
    rate: tuple[str, Any] | None = (
        None  # (expression name, precision symbol) of a parameter-count law
    )
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
        if name is not None and not isinstance(name, str):
            raise UnknownSymbolError(
                f"{self.id}: an expression name must be a string (got "
                f"{type(name).__name__}); it has: {', '.join(self.expressions)}"
            )
        name = name or self.primary_name
        if name is None or name not in self.expressions:
            raise UnknownSymbolError(
                f"{self.id} has no expression {name!r}; it has: {', '.join(self.expressions)}"
            )
        return self.expressions[name]

    def symbol(self, name: str | sp.Symbol):
        """The declared sympy symbol called ``name`` (aliases such as ``eps`` accepted)."""
        if isinstance(name, sp.Symbol):
            name = name.name
        allowed = ", ".join(sorted(self.symbols)) or "none"
        if not isinstance(name, str):
            raise UnknownSymbolError(
                f"{self.id}: a symbol name must be a string (got "
                f"{type(name).__name__}); its symbols are: {allowed}"
            )
        name = ALIASES.get(name, name)
        if name not in self.symbols:
            raise UnknownSymbolError(
                f"{self.id} has no symbol {name!r}; its symbols are: {allowed}"
            )
        return self.symbols[name][0]

    # ----------------------------------------------------------------------------- evaluation
    def _subs(self, values: Mapping[str, Any], allow_expr_names: bool = False) -> dict:
        """Check and convert user values: ``{name: value}`` -> ``{Symbol: sympy number}``.

        Every name must be a symbol of the claim (:class:`UnknownSymbolError`); every value is
        converted by :func:`approxtheory.parse.to_number` (strings parsed, never evaluated;
        booleans, NaN and infinities refused) and checked against its symbol's assumptions.
        """
        subs: dict = {}
        keys: dict = {}
        for key, raw in values.items():
            name = ALIASES.get(key, key)
            if allow_expr_names and name in self.expressions and name not in self.symbols:
                continue
            sym = self.symbol(name)
            if sym in subs:
                raise InvalidValueError(
                    f"{self.id}: {sym.name} given twice (as {keys[sym]} and "
                    f"{key}); allowed: one value per symbol"
                )
            keys[sym] = key
            v = to_number(raw, name)
            if sym.is_positive and not _truth(sp.Gt(v, 0)):
                raise InvalidValueError(f"{name} must be positive (got {name}={_fmt(v)})")
            if sym.is_nonnegative and not _truth(sp.Ge(v, 0)):
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
                order = sorted(
                    cond.free_symbols,
                    key=lambda s: (text.find(s.name) if s.name in text else 99, s.name),
                )
                got = ", ".join(f"{s.name}={_fmt(subs[s])}" for s in order)
                if cond.description:
                    raise RegimeError(f"{self.id}: {text} (got {got})")
                raise RegimeError(f"{self.id} applies only where {text} (got {got})")

    def in_regime(self, /, **values) -> bool:
        """True when the values satisfy every decidable regime condition.

        Bad values (unknown symbols, non-numbers, ...) raise their typed errors; only a
        :class:`RegimeError` turns into ``False``.
        """
        try:
            self._subs(values)
        except RegimeError:
            return False
        return True

    def evaluate(self, expr: str | None = None, /, **values):
        """Evaluate the primary (or named) expression; exact inputs give exact results.

        Values may be numbers or strings (``"3/4"``, ``"1e-3"``, ``"2^10"``, parsed by
        :mod:`approxtheory.parse`). Exact powers too large to compute exactly are computed in
        floating point; results above ``10**MAX_RESULT_LOG10`` raise :class:`ValueRangeError`.

        Raises :class:`MissingSymbolError`, :class:`UnknownSymbolError`, :class:`InvalidValueError`
        (and its subclasses) or :class:`RegimeError` with a message naming what was wrong.
        """
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        e = self.expr(expr)
        subs = self._subs(values)
        missing = sorted(s.name for s in e.free_symbols if s not in subs)
        if missing:
            raise MissingSymbolError(
                f"{self.id}: no value for {', '.join(missing)} (needed: "
                f"{', '.join(sorted(s.name for s in e.free_symbols))})"
            )
        what = f"{self.id}: {self.expr_name(expr)}"
        out = substitute(e, subs, what=what)
        # numbers are already in canonical exact form; simplify() on large exponentials is slow
        out = out if out.is_number else sp.simplify(out)
        return _check_result(out, what)

    def evaluate_float(self, expr: str | None = None, /, **values) -> float:
        """Like :meth:`evaluate`, as a float (17 significant digits)."""
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        return float(sp.N(self.evaluate(expr, **values), 17))

    def solve_for(self, symbol: str, expr: str | None = None, equals: Any = None, /, **values):
        """Solve ``expression == value`` for ``symbol``.

        The value is given as ``equals=`` or under the expression's name, e.g.
        ``claim("HC-T2b").solve_for("T", k=0, s=1, n=2, D=2) == [24]``. Returns the list of
        solutions compatible with the symbol's assumptions (sign and reality; an integer symbol
        gets its real thresholds) and with the claim's regime: a root at which a regime condition
        is decidably false (e.g. IF-T2's ``beta*T >= 1``) is left out and named, with the
        condition, in the result's :attr:`Roots.dropped` (and its repr). A condition that cannot
        be decided (a symbol without a value) keeps the root.
        """
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        if equals is None and "equals" in values and "equals" not in self.symbols:
            equals = values.pop("equals")
        name = self.expr_name(expr)
        e = self.expr(expr)
        if equals is None:
            if name in values and name not in self.symbols:
                equals = values.pop(name)
            else:
                equals = 0
        target = self.symbol(symbol)
        other = [k for k in values if k in self.expressions and k not in self.symbols]
        if other:  # solve_for("T", M_min=1e6): the value of another expression, given as a symbol
            o = other[0]
            raise UnknownSymbolError(
                f"{self.id}: {o!r} is an expression of this claim, not a symbol, and "
                f"solve_for solves {name!r} unless told otherwise; to solve {o} == "
                f"{values[o]!r} for {target.name}, name the expression: "
                f"solve_for({target.name!r}, {o!r}, {values[o]!r}, ...) or "
                f"solve_for({target.name!r}, expr={o!r}, equals={values[o]!r}, ...)"
            )
        given = {k for k in values if ALIASES.get(k, k) == target.name}
        if given:
            raise InvalidValueError(
                f"{self.id}: solve_for({target.name!r}) was also given a value for "
                f"{target.name}; allowed: values for the other symbols only"
            )
        subs = self._subs(values)
        rhs = to_number(equals, name)
        what = f"{self.id}: {name}"
        # solve over the reals (an integer symbol such as T may be asked for a real threshold),
        # keeping the sign assumption
        x = (
            sp.Dummy(target.name, positive=True)
            if target.is_positive
            else sp.Dummy(target.name, real=True)
        )
        lhs = substitute(e, subs, what=what).subs(target, x)
        sols = _solve(
            lhs - rhs, x, what=f"{self.id}: solving {name} = {_fmt(rhs)} for {target.name}"
        )
        out, dropped = [], []
        for sol in sols:
            if (
                sol.is_real is False
                or (target.is_positive and sol.is_positive is False)
                or (target.is_nonnegative and sol.is_negative)
            ):
                continue
            root = _check_result(
                sol if sol.has(sp.Float) or sp.count_ops(sol) > 60 else sp.simplify(sol), what
            )
            violated = self._violated_at(subs, target, root)
            if violated is None:
                out.append(root)
            else:
                dropped.append((root, violated))
        return Roots(out, dropped)

    def _violated_at(self, subs: Mapping, target, root) -> str | None:
        """The text of the first regime condition decidably false with ``target = root`` (None
        when every condition holds or cannot be decided there)."""
        if not self.regime or not getattr(root, "is_number", False):
            return None
        at = {**subs, target: root}
        for cond in self.regime:
            if target not in cond.free_symbols:
                continue  # the other values were checked by _subs already
            try:
                holds = cond.holds(at)
            except (ApproxTheoryError, TypeError):  # too large to decide: keep the root
                holds = None
            if holds is False:
                return cond.text()
        return None

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
                f"{self.id}: {self.expr_name(expr)} = {sp.sstr(e)} is not a power law in {x.name}"
            )
        return p

    def asymptotic_exponent(self, symbol: str, expr: str | None = None, at=sp.oo, /, **values):
        """lim x·d log(e)/dx as x -> ``at`` (oo or 0): the power-law exponent the expression
        approaches, e.g. -1 for HC-K1's (|S|-1)/(eβ) + T e^{-β} as β -> oo.

        ``at`` is ``sp.oo``, ``"oo"``/``"inf"``/``float("inf")`` or a finite number (parsed like
        every value; a string is never evaluated)."""
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        if "at" in values and "at" not in self.symbols:
            at = values.pop("at")
        e = self.expr(expr)
        x = self.symbol(symbol)
        if any(ALIASES.get(k, k) == x.name for k in values):
            raise InvalidValueError(
                f"{self.id}: asymptotic_exponent({x.name!r}) was also given "
                f"a value for {x.name}; allowed: values for the other symbols"
            )
        point = _limit_point(at)
        subs = self._subs(values)
        e = substitute(e, subs, what=f"{self.id}: {self.expr_name(expr)}")
        try:
            return sp.limit(sp.simplify(x * sp.diff(sp.log(e), x)), x, point)
        except (NotImplementedError, ValueError, TypeError) as err:
            # sympy's limit gives up on some expressions (Min, Max, Heaviside, ...)
            raise NotAPowerLawError(
                f"{self.id}: no asymptotic exponent of {self.expr_name(expr)} in {x.name} as "
                f"{x.name} -> {point} in closed form (sympy: {type(err).__name__})"
            ) from None

    def expr_name(self, expr: str | None = None) -> str:
        """The expression name ``expr`` refers to (the primary one when ``None``)."""
        return expr or self.primary_name or ""

    def rate_exponent(self):
        """Exponent a in a parameter-count law N(ε) ∝ (1/ε)^a, where the claim defines one."""
        if self.rate is None:
            raise NotAPowerLawError(f"{self.id} states no parameter-count rate in 1/epsilon")
        name, sym = self.rate
        return sp.simplify(-self.exponent(sym.name, expr=name))

    # ----------------------------------------------------------------------------- vacuity
    def is_vacuous(self, /, **values) -> bool:
        """True where the claim says nothing at these values (e.g. HC-T2b with k <= 0)."""
        if self.vacuous_if is None:
            # still check the values: a bad value is an error, not a silent False
            self._subs(values)
            return False
        subs = self._subs(values)
        missing = sorted(s.name for s in self.vacuous_if.free_symbols if s not in subs)
        if missing:
            raise MissingSymbolError(f"{self.id}: vacuity needs values for {', '.join(missing)}")
        v = substitute(self.vacuous_if, subs, what=f"{self.id}: the vacuity condition")
        t = _truth(v)
        if t is None:
            t = _truth(sp.simplify(v))
        if t is None:
            raise InvalidValueError(
                f"{self.id}: cannot decide the vacuity condition "
                f"{sp.sstr(self.vacuous_if)} at these values"
            )
        return t

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
            return (
                rf"$\begin{{aligned}}&{head} \\ &"
                + body.replace(r" \\ ", r" \\ &")
                + r"\end{aligned}$"
            )
        return f"${head}$"

    def __repr__(self) -> str:
        return f"<Claim {self.id} ({self.kind}, {self.provenance}): {self.statement}>"

    def to_dict(self) -> dict:
        """The claim as JSON-ready plain values (what ``claims show --json`` prints)."""
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
            "symbols": {
                n: {"description": d, "assumptions": _assumptions(s)}
                for n, (s, d) in sorted(self.symbols.items())
            },
            "regime": [c.text() for c in self.regime],
            "vacuous_if": None if self.vacuous_if is None else sp.sstr(self.vacuous_if),
            "rate_exponent_in_inverse_epsilon": rate,
            "depends_on": list(self.depends_on),
            "notes": self.notes,
        }


def _assumptions(s) -> list[str]:
    return [
        a
        for a in ("positive", "nonnegative", "integer", "real")
        if getattr(s, f"is_{a}")
        and not (a == "real" and (s.is_positive or s.is_integer))
        and not (a == "nonnegative" and s.is_positive)
    ]


def collect_symbols(
    table: Mapping[str, tuple[Any, str]], exprs: Iterable, conds: Iterable
) -> dict[str, tuple[Any, str]]:
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
