"""Claim mutants: false copies of a claim, generated from its sympy tree.

A declared mutant of a check (a perturbed weight, a relabelled head) shows that the check's code
path can fail. A *claim mutant* shows more: that the check tells a false claim from a true one.
:func:`claim_mutants` makes a small, stated, deterministic set of copies of a claim, each chosen to
be false whenever the claim is tight:

``rate+`` / ``rate-``
    the exponent of the claim's rate symbol moved away from / towards zero: an exponent ``e``
    with ``|e| <= 1`` is doubled / halved (``beta**-1 -> beta**-2`` / ``beta**(-1/2)``), a larger
    one moves by 1/2 (``eps**-k -> eps**-(k + 1/2)`` / ``eps**-(k - 1/2)``; a symbolic exponent
    whose sign sympy cannot decide moves by +1/2 / -1/2); a bare factor ``x``
    counts as ``x**1``; in ``exp(a)`` the rate symbol's term of ``a`` is doubled / halved. Both
    directions are made because which one is stronger depends on whether the symbol is large
    (``beta``, ``T``) or small (``eps``) in the regime and on the side of the bound; a check that
    reads the rate must flip on at least one.
``scale`` / ``scale-up``
    the primary expression multiplied by ``1/(2 * slack)`` / ``2 * slack``: for an upper (lower)
    bound the first (second) then sits below (above) the worst case the check itself found, so
    it is false by the check's own measurement (the other direction, by 2 or 1/2, is reported,
    not required); for a claim that is no bound (an exact formula, a lemma's constant whose side
    the catalogue does not say) either direction past the room found is false, and one of the
    two must flip. ``slack`` is the room the claim has on what the check found (claimed / worst
    case for an upper bound); when the check reports none, the factors are 1/2 and 2 and the
    record says that the mutant is not known to be false. A formula that carries a constant the
    claim leaves unspecified (described in the catalogue as such: ``C_{d,D,T}``, ``c1``, ...) is
    not made false by a factor: its scale mutants are reported, not required.
``sign`` (empirical claims)
    the primary number with its sign turned: the effect's direction reversed. A check whose
    verdict says it tests the direction only (its scope says ``direction only``) must flip on it,
    and its scale mutants are then reported, not required.
``const`` (empirical claims whose law is fitted)
    each of the paper's own numbers stated beside a fitted law (a formula carrying a fitted
    constant: HC-P11's ``alpha_paper``, ``delta_paper``) doubled; one must flip.
``kind:flip`` (bounds)
    the side of the bound flipped: an upper bound or a construction's guaranteed error read as a
    lower bound, a lower bound as an upper one, the formula unchanged. False wherever the check
    found the claim strictly inside its bound (slack > 1 + 1e-3), and then required: a check
    that compares in a hard-coded direction instead of the claim's kind survives it. Every
    check's rows that carry ``claimed_bound`` and ``sup_error`` are held to the claim's side by
    the runner (:func:`approxtheory.proofs_check._core.side_violations`).
``regime``
    one condition of the regime dropped (the seeded choice among them): the claim is then stated
    where the paper does not state it; reported, not required to flip (a check that sweeps only
    the stated regime cannot see it). A condition that declares ``outside`` (see
    :class:`~approxtheory.catalogue._claim.Condition`: the claim's check builds cells on its
    other side, e.g. HC-T2a's ``h >= D`` with one-head networks at D = 2) is always dropped
    (``regime:drop<i>``) and, when it is an inequality, widened by one unit
    (``regime:widen<i>``: ``h >= D`` -> ``h >= D - 1``, ``s < D`` -> ``s < D + 1``); both
    are required to flip.

A mutant's copy carries its expressions in a :class:`TracingMapping`, so the runner can tell
whether the check read the mutated formula at all.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import sympy as sp

from ._claim import Claim, Condition

__all__ = [
    "ClaimMutant",
    "TracingMapping",
    "claim_mutants",
    "pivot_mutants",
    "rate_symbol",
    "shift_rate",
    "REQUIRED_KINDS",
    "FLIPPED_KIND",
]

#: the mutant kinds a verified verdict must flip on (``rate``: at least one direction)
REQUIRED_KINDS = ("rate", "scale")

#: claim kinds whose primary formula is an upper bound (a construction's: the error or size it
#: guarantees); ``lower`` is the other side; any other kind is a formula with no side
UPPER_KINDS = ("upper", "construction")

#: rate symbols in order of preference when a claim declares no ``rate``
_PREFERRED = ("epsilon", "beta", "T", "N", "H", "h", "s", "L", "n", "E", "D", "d")


class TracingMapping(dict):
    """A dict that records whether any value was read (``read`` becomes True)."""

    read = False

    def _mark(self, *keys):
        self.read = True
        names = self.__dict__.setdefault("names", set())
        names.update(keys)

    def __getitem__(self, key):
        self._mark(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._mark(key)
        return super().get(key, default)

    def values(self):
        self._mark(*super().keys())
        return super().values()

    def items(self):
        self._mark(*super().keys())
        return super().items()

    def __iter__(self) -> Iterator:
        # iterating the names (``", ".join(c.expressions)``) reads no formula
        return super().__iter__()


@dataclass(frozen=True)
class ClaimMutant:
    """A false copy of a claim: ``name`` (stable, used in cache keys), ``kind`` (``rate``,
    ``scale``, ``regime``), ``what`` (the change in words) and the mutated ``claim``."""

    name: str
    kind: str
    what: str
    claim: Claim
    #: whether a check that passes must fail on it (see :data:`REQUIRED_KINDS`); False for the
    #: weaker direction of a bound and for a formula scaled by an unspecified constant
    required: bool = True

    @property
    def names_read(self) -> frozenset:
        """The names of the expressions read since the copy was made."""
        return frozenset(getattr(self.claim.expressions, "__dict__", {}).get("names", ()))

    @property
    def read(self) -> bool:
        """Whether the mutated expressions were read since the copy was made."""
        ex = self.claim.expressions
        return bool(getattr(ex, "read", False))


def _is_formula(e) -> bool:
    return isinstance(e, sp.Expr) and not isinstance(
        e, (sp.core.relational.Relational, sp.logic.boolalg.Boolean)
    )


def rate_symbol(c: Claim, expr=None) -> sp.Symbol | None:
    """The symbol whose exponent the rate mutants move: the claim's declared ``rate`` symbol,
    else the first of epsilon, beta, T, N, H, h, s, L, n, E, D, d (then any other, by name) that
    occurs in the formula in a power, a product or an exponential."""
    if expr is None:
        name = c.rate[0] if c.rate else c.primary_name
        expr = c.expressions.get(name) if name is not None else None
    if expr is None or not _is_formula(expr):
        return None
    if c.rate is not None:
        sym = c.rate[1]
        if isinstance(sym, sp.Symbol) and sym in expr.free_symbols:
            return sym
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    order = [s for p in _PREFERRED for s in free if s.name == p] + [
        s for s in free if s.name not in _PREFERRED
    ]
    for s in order:
        if shift_rate(expr, s, +1) != expr:
            return s
    return None


def _move(e, direction: int):
    """The exponent ``e`` moved away from zero (direction +1) or towards it (-1)."""
    e = sp.sympify(e)
    if e.is_number:
        if e == 0:
            return e
        if abs(e) <= 1:
            return e * 2 if direction > 0 else e / 2
        sign = 1 if e > 0 else -1
        return e + sign * direction * sp.Rational(1, 2)
    if e.is_negative or (e.is_positive is None and e.could_extract_minus_sign()):
        sign = -1
    else:  # positive, or a sign sympy cannot decide: +1/2 for rate+, -1/2 for rate-
        sign = 1
    return e + sign * direction * sp.Rational(1, 2)


def shift_rate(expr, x: sp.Symbol, direction: int):
    """``expr`` with the exponent of ``x`` moved (see the module docstring); ``expr`` itself
    when ``x`` occurs in no power, product or exponential."""

    def rec(node):
        if node == x:
            return sp.Pow(x, _move(1, direction), evaluate=True)
        if node.is_Atom or x not in node.free_symbols:
            return node
        if (
            isinstance(node, sp.Pow)
            and x in node.base.free_symbols
            and (x not in node.exp.free_symbols)
        ):
            if node.base == x:
                return sp.Pow(x, _move(node.exp, direction))
            return sp.Pow(rec(node.base), node.exp)
        if isinstance(node, sp.exp):
            a = node.args[0]
            if a.is_polynomial(x) and sp.degree(a, x) == 1:
                coef = a.coeff(x, 1)
                factor = 2 if direction > 0 else sp.Rational(1, 2)
                return sp.exp(a + (factor - 1) * coef * x)
            return sp.exp(rec(a))
        if isinstance(node, sp.Mul):
            return sp.Mul(*[rec(a) for a in node.args])
        return node.func(*[rec(a) for a in node.args])

    try:
        out = rec(expr)
    except (TypeError, ValueError, sp.PolynomialError):
        return expr
    return out


#: how the catalogue describes a constant the claim leaves unspecified (C_{d,D,T}, c1, a_L, ...)
_UNSPECIFIED = re.compile(
    r"unspecified|conjectured constant|^constant of|T-free factor|of the fitted|\(unknown\)", re.I
)


def unspecified_constant(c: Claim, expr) -> str | None:
    """The name of a factor of ``expr`` that the claim leaves unspecified (a symbol the catalogue
    describes as an unspecified constant): scaling such a formula is not a false claim."""
    factors = sp.Mul.make_args(expr)
    for f in factors:
        base = f.base if isinstance(f, sp.Pow) else f
        if isinstance(base, sp.Symbol) and base.name in c.symbols:
            if _UNSPECIFIED.search(c.symbols[base.name][1] or ""):
                return base.name
    return None


def _free_exponent(c: Claim, expr, x) -> str | None:
    """The fitted or unspecified symbol (:data:`_UNSPECIFIED`) in the exponent of ``x`` in
    ``expr``, if any."""
    # sorted: a set's order follows the string hash (PYTHONHASHSEED), and the mutant's text
    # must be the same on every run
    for p in sorted(expr.atoms(sp.Pow), key=sp.srepr):
        if p.base == x:
            for s in sorted(p.exp.free_symbols, key=lambda s: s.name):
                if s.name in c.symbols and _UNSPECIFIED.search(c.symbols[s.name][1] or ""):
                    return s.name
    return None


def _fmt_factor(f: float) -> str:
    return f"{f:.4g}"


def _const_mutants(base: dict, primary: str, copy) -> list[ClaimMutant]:
    """The paper's own numbers beside a fitted law (HC-P11's alpha = -1.40, delta = 0.25), each
    doubled; a check that compares its fit with them must flip on one."""
    return [
        ClaimMutant(
            f"const:{name}:x2",
            "const",
            f"{name}: {sp.sstr(value)} -> {sp.sstr(2 * value)} (the paper's number beside the "
            f"fitted {primary}, doubled)",
            copy({**base, name: 2 * value}),
        )
        for name, value in base.items()
        if name != primary and isinstance(value, sp.Number) and value != 0
    ]


def _sign_mutant(base: dict, primary: str, copy) -> ClaimMutant:
    """An empirical claim's number with its sign turned (the effect's direction reversed);
    required only of a verdict that says it tests the direction only."""
    pexpr = base[primary]
    return ClaimMutant(
        "sign:neg",
        "sign",
        f"{primary}: {sp.sstr(pexpr)} -> {sp.sstr(-pexpr)} (the effect's direction reversed)",
        copy({**base, primary: -pexpr}),
        required=False,
    )


def _regime_mutants(c: Claim, base: dict, copy, seed: int) -> list[ClaimMutant]:
    """One regime condition dropped (a seeded choice), reported; every condition whose other
    side the check builds (Condition.outside) dropped and widened, required."""
    out: list[ClaimMutant] = []
    if c.regime:
        i = random.Random(f"{c.id}:{seed}").randrange(len(c.regime))
        built = [j for j, r in enumerate(c.regime) if r.outside]
        for j in sorted({i, *built}):
            kept = tuple(r for k, r in enumerate(c.regime) if k != j)
            out.append(
                ClaimMutant(
                    f"regime:drop{j}",
                    "regime",
                    f"regime condition {c.regime[j].text()!r} dropped"
                    + (
                        f" (the check builds its other side: {c.regime[j].outside})"
                        if j in built
                        else ""
                    ),
                    copy(base, regime=kept),
                    required=j in built,
                )
            )
        for j in built:
            wide = widen(c.regime[j].expr)
            if wide is None:
                continue
            moved = Condition(wide, f"{sp.sstr(wide)} (widened by one unit)")
            out.append(
                ClaimMutant(
                    f"regime:widen{j}",
                    "regime",
                    f"regime condition {c.regime[j].text()!r} widened to {sp.sstr(wide)} (the "
                    f"check builds its other side: {c.regime[j].outside})",
                    copy(
                        base, regime=tuple(moved if k == j else r for k, r in enumerate(c.regime))
                    ),
                )
            )
    return out


def claim_mutants(c: Claim, slack: float | None = None, seed: int = 0) -> list[ClaimMutant]:
    """The generated mutants of claim ``c`` (empty for a claim without a formula); ``slack`` is
    the room the check found (see the module docstring), ``seed`` picks the dropped regime
    condition."""
    out: list[ClaimMutant] = []
    if not c.expressions:
        return out
    base = dict(c.expressions)
    primary = c.primary_name
    if primary is None:
        return out

    def copy(exprs: dict, **kw) -> Claim:
        return replace(c, expressions=TracingMapping(exprs), **kw)

    out += _rate_mutants(c, base, primary, copy)
    pexpr = base.get(primary)
    scalable = pexpr is not None and _is_formula(pexpr) and pexpr != 0
    if scalable:
        out += _scale_mutants(c, base, primary, slack, copy)
    if scalable and c.kind == "empirical":
        out.append(_sign_mutant(base, primary, copy))
    out += _kind_mutant(c, slack, copy)
    out += _regime_mutants(c, base, copy, seed)
    return out


def _rate_mutants(c: Claim, base: dict, primary: str, copy) -> list[ClaimMutant]:
    """``rate+`` / ``rate-``: both directions on the rate expression (the declared rate's, else
    the primary one)."""
    out: list[ClaimMutant] = []
    rate_name: str = c.rate[0] if c.rate and c.rate[0] in base else primary
    rexpr = base.get(rate_name)
    x = rate_symbol(c, rexpr) if rexpr is not None else None
    if x is None:
        return out
    # an exponent that is itself a fitted or unspecified symbol absorbs any shift
    fitted = _free_exponent(c, rexpr, x)
    for direction, tag in ((+1, "rate+"), (-1, "rate-")):
        new = shift_rate(rexpr, x, direction)
        if new != rexpr:
            out.append(
                ClaimMutant(
                    f"{tag}:{x.name}",
                    "rate",
                    f"{rate_name}: {sp.sstr(rexpr)} -> {sp.sstr(new)} (exponent of "
                    f"{x.name} moved {'away from' if direction > 0 else 'towards'} zero, "
                    f"or by {'+' if direction > 0 else '-'}1/2 where its sign is not "
                    f"decidable symbolically)"
                    + (
                        f"; not a false claim: the exponent carries the fitted or "
                        f"unspecified {fitted}, which absorbs the shift"
                        if fitted
                        else ""
                    ),
                    copy({**base, rate_name: new}),
                    required=fitted is None,
                )
            )
    return out


def _scale_mutants(
    c: Claim, base: dict, primary: str, slack: float | None, copy
) -> list[ClaimMutant]:
    """``scale`` / ``scale-up``: the primary expression below and above the worst case found
    (and, for an empirical claim whose law carries an unspecified constant, ``const``)."""
    out: list[ClaimMutant] = []
    pexpr = base[primary]
    # a construction's formula is the error bound (or size) it guarantees: an upper bound
    lower, upper = c.kind == "lower", c.kind in UPPER_KINDS
    known = slack is not None and slack > 0 and slack == slack and slack != float("inf")
    room = float(slack) if known and slack is not None else 1.0
    free = unspecified_constant(c, pexpr)
    for tag, factor, false_side in (
        ("scale", 0.5 if lower else 1.0 / (2.0 * room), not lower),
        ("scale-up", 2.0 if upper else 2.0 * room, not upper),
    ):
        if free is not None:
            where = (
                f"not a false claim: the formula carries the unspecified constant {free}, "
                f"which absorbs any factor"
            )
        elif (lower or upper) and false_side and known:
            where = (
                f"{'above' if lower else 'below'} the worst case the check found (slack {room:.4g})"
            )
        elif false_side and known:
            where = f"past the room the check found in this direction (slack {room:.4g})"
        elif false_side:
            where = "the check reports no slack, so this mutant is not known to be false"
        else:
            where = "the weaker direction of the bound (a true claim if the bound is)"
        out.append(
            ClaimMutant(
                f"{tag}:x{_fmt_factor(factor)}",
                "scale",
                f"{primary} multiplied by {_fmt_factor(factor)}: {where}",
                copy({**base, primary: sp.Float(factor, 6) * pexpr}),
                # a rate claim ("scales like lr^2") states no constant: a factor keeps it
                required=free is None and false_side and c.kind != "rate",
            )
        )
    if free is not None and c.kind == "empirical":
        out += _const_mutants(base, primary, copy)
    return out


#: the kind a bound's side flips to (see ``kind:flip`` in the module docstring)
FLIPPED_KIND = {"upper": "lower", "construction": "lower", "lower": "upper"}

#: how far inside its bound a claim must sit for the flipped side to be false by the check's
#: own measurement
STRICT_SLACK = 1.0 + 1e-3


def _kind_mutant(c: Claim, slack: float | None, copy) -> list[ClaimMutant]:
    """The bound's side flipped (``kind:flip``), for a claim whose kind has a side; required
    where the check found the claim strictly inside its bound."""
    new = FLIPPED_KIND.get(c.kind)
    if new is None:
        return []
    strict = slack is not None and slack == slack and slack > STRICT_SLACK
    return [
        ClaimMutant(
            "kind:flip",
            "kind",
            f"the bound's side flipped: {c.kind} -> {new} (the formula unchanged); "
            + (
                f"false where the check found the claim inside its bound (slack {slack:.4g})"
                if strict
                else "not known to be false: the check reports no room inside the bound"
            ),
            copy(dict(c.expressions), kind=new),
            required=strict,
        )
    ]


def widen(expr):
    """An inequality moved by one unit in its permissive direction (``a >= b`` -> ``a >= b - 1``,
    ``a < b`` -> ``a < b + 1``); None for any other condition."""
    rel = sp.core.relational
    if isinstance(expr, (rel.GreaterThan, rel.StrictGreaterThan)):
        return expr.func(expr.lhs, expr.rhs - 1)
    if isinstance(expr, (rel.LessThan, rel.StrictLessThan)):
        return expr.func(expr.lhs, expr.rhs + 1)
    return None


def describe(mutants: list[ClaimMutant]) -> list[dict[str, Any]]:
    """The mutants as records (name, kind, what)."""
    return [{"name": m.name, "kind": m.kind, "what": m.what} for m in mutants]


def _pivot_factor(spot: tuple, c: Claim, sign: int):
    """``(X / x0)**(sign/2)`` for a symbol read at one value x0, ``(a / (r b))**(sign/2)`` for a
    pair read only in the ratio r: 1 at every point the check read."""
    half = sp.Rational(sign, 2)
    if spot[0] == "fixed":
        x, x0 = c.symbol(spot[2]), sp.nsimplify(spot[3], rational=True)
        return None if x0 == 0 else (x / x0) ** half
    a, b, r = c.symbol(spot[2]), c.symbol(spot[3]), sp.nsimplify(spot[4], rational=True)
    return None if r == 0 else (a / (r * b)) ** half


def pivot_mutants(c: Claim, spots: list, slack: float | None = None) -> list[ClaimMutant]:
    """False copies of ``c`` that agree with it at every point its check read: for each blind
    spot (:func:`approxtheory.catalogue.points.blind_spots`) the expression multiplied by
    ``(X / x0)**(±1/2)`` (X read only at x0) or ``(a / (r b))**(±1/2)`` (a and b read only in the
    ratio r), i.e. a wrong dependence on X that coincides with the claim where the check looked.
    One of the two directions must flip (``pivot``), unless the formula carries an unspecified
    constant (which may depend on X) or the bound is loose by :data:`LOOSE` or more on what the
    check found (as for the rate mutants); then they are reported."""
    out: list[ClaimMutant] = []
    base = dict(c.expressions)
    for spot in spots:
        name = spot[1]
        expr = base.get(name)
        if expr is None or not _is_formula(expr):
            continue
        free = unspecified_constant(c, expr)
        loose = slack is not None and slack == slack and slack >= LOOSE
        what_x = (
            f"{spot[2]} (read only at {spot[2]} = {spot[3]})"
            if spot[0] == "fixed"
            else f"{spot[2]}/{spot[3]} (read only at {spot[2]}/{spot[3]} = {spot[4]})"
        )
        tag = spot[2] if spot[0] == "fixed" else f"{spot[2]}/{spot[3]}"
        for sign in (+1, -1):
            f = _pivot_factor(spot, c, sign)
            if f is None:
                continue
            note = ""
            if free is not None:
                note = f"; not required: the formula carries the unspecified constant {free}"
            elif loose:
                note = f"; not required: the bound is loose (slack {slack:.3g})"
            out.append(
                ClaimMutant(
                    f"pivot{'+' if sign > 0 else '-'}:{name}:{tag}",
                    "pivot",
                    f"{name} multiplied by {sp.sstr(f)}: the same value where the check read "
                    f"it, a different dependence on {what_x}{note}",
                    replace(c, expressions=TracingMapping({**base, name: expr * f})),
                    required=free is None and not loose,
                )
            )
    return out


#: the room (claimed / worst case) past which a bound's rate and pivot mutants are not known
#: to be false (approxtheory.mutant_rules.LOOSE_SLACK)
LOOSE = 2.0
