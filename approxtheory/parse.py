"""Safe parsing of user-supplied numbers (CLI ``NAME=VALUE`` pairs and API keyword values).

A value string is read by a small hand-written tokenizer and recursive-descent parser; nothing a
user types is ever passed to ``eval``, ``sympify`` or ``parse_expr``. The grammar::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary)*
    unary   := ("+" | "-")* power
    power   := atom (("^" | "**") unary)?          # right-associative, binds tighter than "-"
    atom    := NUMBER | CONSTANT | FUNCTION "(" expr ")" | "(" expr ")"
    NUMBER  := 64 | 0.1 | .5 | 3. | 1e-3 | 2.5E+4   # decimal digits 0-9 only

* constants: ``pi`` (also ``π``) and ``e`` (Euler's number; lower case only, because ``E`` is a
  symbol of several claims). ``inf``/``oo``/``nan`` are refused: no claim symbol takes an infinite
  value (limits are :meth:`Claim.asymptotic_exponent`'s job).
* functions: ``sqrt``, ``log`` (natural logarithm) and ``exp``, one argument each.
* ``^`` and ``**`` both mean power; the exponent must be an integer with ``|n| <= 100``
  (:data:`MAX_EXPONENT`). ``-2^2`` is ``-4``, ``2^-1`` is ``1/2``, ``2^3^2`` is ``2^9``.

Exactness: integers, decimals and ``a/b`` give exact :class:`sympy.Integer`/``Rational`` values
(``"0.1"`` is exactly 1/10). ``pi``, ``e`` and the functions give a :class:`sympy.Float` with
:data:`FLOAT_DIGITS` significant digits unless the result is rational (``sqrt(9/4)`` is ``3/2``,
``log(1)`` is ``0``, ``exp(0)`` is ``1``); an expression with a Float in it gives a Float.

Limits (every violation raises a typed error whose message says what was wrong and what is
allowed; nothing large is ever computed first):

* a value string has at most :data:`MAX_LENGTH` characters and at most :data:`MAX_DEPTH` nested
  parentheses or powers;
* every value -- each literal, every intermediate result and the whole expression, exact or
  Float -- has magnitude at most :data:`MAX_ABS` (10^30), compared exactly: ``10**30`` and
  ``1e30`` are accepted; ``10**31``, ``1e999999999``, ``1e30+1`` and ``pi+1e30`` are not;
* an exact value's numerator and denominator have at most :data:`MAX_DIGITS` (100) digits;
* a decimal exponent (``1e-3``) has ``|exponent| <= 1000`` before the above apply;
* division by zero, ``sqrt`` of a negative number and ``log`` of a non-positive one are refused.

Errors: :class:`~approxtheory.errors.ParseError` (syntax, unknown names, too long/deep),
:class:`~approxtheory.errors.ValueRangeError` (sizes) and
:class:`~approxtheory.errors.InvalidValueError` (division by zero, domain errors, booleans,
NaN, infinities, non-real values); all derive from
:class:`~approxtheory.errors.ApproxTheoryError`.

Example::

    >>> from approxtheory.parse import parse_value
    >>> parse_value("3/4"), parse_value("2^10"), parse_value("1e-3"), parse_value("-(1/2)^2")
    (3/4, 1024, 1/1000, -1/4)
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
import re
from typing import Any, cast

import sympy as sp

from .errors import InvalidValueError, ParseError, ValueRangeError

__all__ = [
    "parse_value",
    "to_number",
    "check_number",
    "log10_abs",
    "MAX_LENGTH",
    "MAX_ABS",
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "MAX_DEPTH",
    "FLOAT_DIGITS",
    "CONSTANTS",
    "FUNCTIONS",
]

#: longest value string accepted
MAX_LENGTH = 200
#: largest magnitude of a value (and of every intermediate result while parsing)
MAX_ABS = 10**30
#: most digits in the numerator or the denominator of an exact value
MAX_DIGITS = 100
#: largest |n| of an exponent in ``a^n``
MAX_EXPONENT = 100
#: largest |n| of the decimal exponent of a literal such as ``1e-3``
MAX_LITERAL_EXPONENT = 1000
#: deepest nesting of parentheses, function calls and powers
MAX_DEPTH = 20
#: significant digits of a Float made from pi, e or a function
FLOAT_DIGITS = 30
#: most significant digits of a sympy Float passed in (its precision)
MAX_FLOAT_DIGITS = 1000

_MAX_LOG10 = math.log10(MAX_ABS)

CONSTANTS = ("pi", "e")
FUNCTIONS = ("sqrt", "log", "exp")
_NAME_ALIASES = {"π": "pi"}
_REFUSED_NAMES = {"inf", "infinity", "oo", "nan", "Infinity", "NaN", "Inf", "INF", "NAN"}

_ALLOWED = (
    "numbers such as 64, 0.1, 3/4, 1e-3; the constants pi and e; the functions sqrt, log "
    "and exp; + - * / ^ ** and parentheses"
)

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_π][A-Za-z_0-9]*)
  | (?P<op>\*\*|[-+*/^()−])
""",
    re.VERBOSE,
)


def _syntax(text: str, name: str, why: str) -> ParseError:
    return ParseError(
        f"{name} must be a real number such as 64, 0.1, 3/4, 1e-3 or log(2) "
        f"(got {text!r}: {why}); allowed: {_ALLOWED}"
    )


# ------------------------------------------------------------------------------------ sizes
def log10_abs(v) -> float:
    """log10 of |v| for a sympy number without computing anything large (``-inf`` for 0).

    Exact for Integers/Rationals via bit lengths (to within 1), read from the binary exponent
    for Floats, and from a 15-digit evalf otherwise.
    """
    if v.is_zero:
        return -math.inf
    if isinstance(v, sp.Rational):
        p, q = abs(int(v.p)), int(v.q)
        # log10(p/q) from the leading bits, never converting a huge int to float
        return _log10_int(p) - _log10_int(q)
    if isinstance(v, sp.Float):
        return _log10_mpf(v._mpf_)
    f = sp.Float(v.evalf(15), 15) if not v.is_Float else v
    if not isinstance(f, sp.Float):
        raise InvalidValueError(f"{sp.sstr(v)} is not a real number")
    return _log10_mpf(f._mpf_)


def _log10_int(n: int) -> float:
    b = n.bit_length()
    if b <= 1000:
        return math.log10(n)
    shift = b - 64
    return math.log10(n >> shift) + shift * math.log10(2)


def _log10_mpf(mpf) -> float:
    _sign, man, exp, bc = mpf
    if not man:
        if exp == 0:
            return -math.inf  # zero
        raise InvalidValueError("value is not finite")
    return (
        math.log10(man) + exp * math.log10(2)
        if bc <= 1000
        else _log10_int(man) + exp * math.log10(2)
    )


def _digits(n: int) -> int:
    n = abs(n)
    # number of decimal digits without str() of a possibly huge integer
    d = int(n.bit_length() * 0.30102999566398120) + 1
    return d if n >= 10 ** (d - 1) else d - 1


def check_number(v, name: str = "value", *, what: str | None = None):
    """Check a sympy Integer/Rational/Float against the size limits and return it.

    Raises :class:`ValueRangeError` when ``|v| > MAX_ABS`` or an exact numerator/denominator has
    more than ``MAX_DIGITS`` digits, :class:`InvalidValueError` when ``v`` is not finite.
    """
    label = what or name
    if isinstance(v, sp.Float):
        if not v.is_finite or v != v:
            raise InvalidValueError(f"{label} must be finite (got {sp.sstr(v)})")
        if v._prec > MAX_FLOAT_DIGITS * 3.33 + 10:
            raise ValueRangeError(
                f"{label} has a precision above {MAX_FLOAT_DIGITS} digits; "
                f"allowed: at most {MAX_FLOAT_DIGITS}"
            )
    if isinstance(v, sp.Rational):
        for part, which in ((v.p, "numerator"), (v.q, "denominator")):
            if (
                abs(int(part)).bit_length() > MAX_DIGITS * 3.33 + 4
                or _digits(int(part)) > MAX_DIGITS
            ):
                raise ValueRangeError(
                    f"{label} is too long an exact number (its {which} has more than "
                    f"{MAX_DIGITS} digits); allowed: exact values with at most {MAX_DIGITS} digits "
                    f"in numerator and denominator and magnitude at most 10^{int(_MAX_LOG10)}"
                )
    lg = log10_abs(v)
    # one rule for every value (a literal, an intermediate result, the whole expression; exact
    # or Float): |v| <= 10^30 compared exactly, so pi+1e30 is refused like 1e30+1. log10 first
    # screens out huge values cheaply; a Float/Rational comparison with an Integer is exact.
    if lg > _MAX_LOG10 + 1 or (lg >= _MAX_LOG10 - 1 and _exceeds_max_abs(v)):
        raise ValueRangeError(
            f"{label} is too large ({_fmt_size(v, lg)}); allowed: magnitudes up to "
            f"10^{int(_MAX_LOG10)}"
        )
    return v


def _exceeds_max_abs(v) -> bool:
    """Whether ``|v| > MAX_ABS`` exactly (``v`` a sympy number with ``|v|`` near 10^30)."""
    if isinstance(v, (sp.Rational, sp.Float)):
        return bool(abs(v) > sp.Integer(MAX_ABS))
    return bool(sp.Abs(v).evalf(FLOAT_DIGITS + 10) > sp.Integer(MAX_ABS))


def _fmt_size(v, lg: float) -> str:
    """``|v|`` for a message: 34 digits near the limit (so 10^30 + 1 does not read as 10^30)."""
    if abs(lg - _MAX_LOG10) <= 1:
        return f"|value| = {sp.sstr(sp.Float(abs(v).evalf(34), 34))}"
    return f"about 10^{_fmt_exp(lg)}"


def _fmt_exp(lg: float) -> str:
    return f"{lg:.0f}" if abs(lg) < 1e15 else f"{lg:.3g}"


# ------------------------------------------------------------------------------------ parser
class _Parser:
    def __init__(self, text: str, name: str):
        self.text = text
        self.name = name
        self.toks = self._tokenize(text)
        self.i = 0
        self.depth = 0

    # -- tokens
    def _tokenize(self, text: str) -> list[tuple[str, str, int]]:
        toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise self.err(f"unexpected character {text[pos]!r} at position {pos + 1}")
            kind = cast(str, m.lastgroup)  # every alternative of _TOKEN is a named group
            if kind != "ws":
                val = m.group()
                # normalised operator; error messages quote the text by position
                val = {"−": "-", "^": "**"}.get(val, val) if kind == "op" else val
                toks.append((kind, val, pos))
            pos = m.end()
        toks.append(("end", "", len(text)))
        return toks

    def err(self, why: str) -> ParseError:
        return _syntax(self.text, self.name, why)

    def raw(self, pos: int, val: str) -> str:
        """The token as typed (``^`` rather than its normalised ``**``)."""
        return "^" if self.text.startswith("^", pos) else val

    def peek(self):
        return self.toks[self.i]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, val: str):
        kind, v, pos = self.take()
        if v != val or kind != "op":
            found = "the end" if kind == "end" else repr(self.raw(pos, v))
            raise self.err(f"expected {val!r} at position {pos + 1}, found {found}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ParseError(
                f"{self.name}: {_short(self.text)} nests parentheses, functions or "
                f"powers more than {MAX_DEPTH} deep; allowed: at most {MAX_DEPTH}"
            )

    # -- grammar
    def parse(self):
        if self.peek()[0] == "end":
            raise self.err("empty value")
        v = self.expr()
        kind, val, pos = self.peek()
        if kind != "end":
            raise self.err(f"unexpected {self.raw(pos, val)!r} at position {pos + 1}")
        return v

    def expr(self):
        return self.chain(("+", "-"), self.term, self.add)

    def term(self):
        return self.chain(("*", "/"), self.unary, self.mul)

    def chain(self, ops, operand, combine):
        """``operand (op operand)*`` over the left-associative operators ``ops``."""
        v = operand()
        while self.peek()[1] in ops and self.peek()[0] == "op":
            op = self.take()[1]
            v = self.check(combine(op, v, operand()))
        return v

    @staticmethod
    def add(op, v, w):
        return v + w if op == "+" else v - w

    def mul(self, op, v, w):
        if op == "*":
            return v * w
        if w.is_zero:
            raise InvalidValueError(
                f"{self.name}: division by zero in {_short(self.text)}; "
                f"allowed: a divisor that is not 0"
            )
        return v / w

    def unary(self):
        sign = 1
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            if self.take()[1] == "-":
                sign = -sign
        v = self.power()
        return -v if sign < 0 else v

    def power(self):
        base = self.atom()
        if self.peek()[0] == "op" and self.peek()[1] == "**":
            self.take()
            self.enter()
            exp = self.unary()
            self.depth -= 1
            return self.pow(base, exp)
        return base

    def pow(self, base, exp):
        if not exp.is_Integer:
            raise ValueRangeError(
                f"{self.name}: exponent {sp.sstr(exp)} in {_short(self.text)} is not an integer; "
                f"allowed: integer exponents from -{MAX_EXPONENT} to {MAX_EXPONENT} "
                f"(use sqrt(x) for square roots)"
            )
        if abs(exp) > MAX_EXPONENT:
            raise ValueRangeError(
                f"{self.name}: exponent {sp.sstr(exp)} in {_short(self.text)} is too large; "
                f"allowed: integer exponents from -{MAX_EXPONENT} to {MAX_EXPONENT}"
            )
        if base.is_zero and exp < 0:
            raise InvalidValueError(
                f"{self.name}: division by zero (0 to a negative power) in "
                f"{_short(self.text)}; allowed: a non-zero base"
            )
        # the operands are within the limits, so this is at most ~10^4 digits: cheap
        return self.check(base**exp)

    def atom(self):
        kind, val, pos = self.take()
        if kind == "num":
            return self.number(val)
        if kind == "op" and val == "(":
            self.enter()
            v = self.expr()
            self.expect(")")
            self.depth -= 1
            return v
        if kind == "name":
            key = _NAME_ALIASES.get(val, val)
            if key in FUNCTIONS:
                if not (self.peek()[0] == "op" and self.peek()[1] == "("):
                    raise self.err(
                        f"function {key} needs an argument in parentheses, e.g. {key}(2)"
                    )
                self.take()
                self.enter()
                arg = self.expr()
                self.expect(")")
                self.depth -= 1
                return self.call(key, arg)
            if key == "pi":
                return sp.Float(sp.pi.evalf(FLOAT_DIGITS), FLOAT_DIGITS)
            if key == "e":
                return sp.Float(sp.E.evalf(FLOAT_DIGITS), FLOAT_DIGITS)
            if key in _REFUSED_NAMES or key.lower() in _REFUSED_NAMES:
                raise InvalidValueError(
                    f"{self.name} must be finite (got {_short(self.text)}); infinities and NaN "
                    f"are not values; allowed: {_ALLOWED}"
                )
            if key == "E":
                raise self.err("unknown name 'E' (write e for Euler's number)")
            raise self.err(f"unknown name {val!r}")
        if kind == "end":
            raise self.err("unexpected end of the value")
        raise self.err(f"unexpected {self.raw(pos, val)!r} at position {pos + 1}")

    def number(self, lit: str):
        m = re.fullmatch(r"([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?", lit)
        assert m is not None  # lit is a number token, which this pattern matches
        intpart, frac, expo = m.group(1) or "", m.group(2) or "", m.group(3)
        if abs(int(expo or 0)) > MAX_LITERAL_EXPONENT:
            raise ValueRangeError(
                f"{self.name}: the decimal exponent of {lit} is too large; allowed: magnitudes up "
                f"to 10^{int(_MAX_LOG10)} (e.g. 1e30) and exponents from -{MAX_LITERAL_EXPONENT} "
                f"to {MAX_LITERAL_EXPONENT}"
            )
        mant = int((intpart + frac) or "0")
        scale = int(expo or 0) - len(frac)
        v = (
            sp.Integer(mant) * sp.Integer(10) ** scale
            if scale >= 0
            else sp.Rational(mant, 10 ** (-scale))
        )
        return check_number(v, self.name, what=f"{self.name}={lit}")

    def call(self, fn: str, arg):
        if fn == "sqrt":
            if arg < 0:
                raise InvalidValueError(
                    f"{self.name}: sqrt of a negative number "
                    f"({sp.sstr(arg)}) in {_short(self.text)}; allowed: "
                    f"sqrt(x) with x >= 0"
                )
            v = sp.sqrt(arg)
            return self.check(v if v.is_Rational or v.is_Float else _float(v))
        if fn == "log":
            if arg <= 0:
                raise InvalidValueError(
                    f"{self.name}: log of a non-positive number "
                    f"({sp.sstr(arg)}) in {_short(self.text)}; allowed: "
                    f"log(x) with x > 0"
                )
            if arg == 1 and arg.is_Rational:
                return sp.Integer(0)
            return self.check(sp.log(_float(arg)))
        # exp: refuse before computing when the result would exceed MAX_ABS
        if arg > _MAX_LOG10 * math.log(10) + 1:
            raise ValueRangeError(
                f"{self.name}: exp({sp.sstr(arg)}) in {_short(self.text)} is "
                f"too large; allowed: magnitudes up to 10^{int(_MAX_LOG10)}"
            )
        if arg.is_zero and arg.is_Rational:
            return sp.Integer(1)
        return self.check(sp.exp(_float(arg)))

    def check(self, v):
        return check_number(v, self.name, what=f"{self.name} (in {_short(self.text)})")


def _float(v) -> sp.Float:
    return sp.Float(v.evalf(FLOAT_DIGITS), FLOAT_DIGITS)


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def parse_value(text: str, name: str = "value"):
    """Parse a user value string into a sympy Integer, Rational or Float.

    ``name`` (e.g. the symbol the value is for) prefixes error messages. Raises
    :class:`ParseError`, :class:`ValueRangeError` or :class:`InvalidValueError` (see the module
    docstring for the grammar and the limits). Never evaluates the string as code.
    """
    if not isinstance(text, str):
        raise InvalidValueError(f"{name}: parse_value takes a string (got {type(text).__name__})")
    s = text.strip()
    if len(s) > MAX_LENGTH:
        raise ParseError(
            f"{name}: value string too long ({len(s)} characters); allowed: at most {MAX_LENGTH}"
        )
    return _Parser(s, name).parse()


# ------------------------------------------------------------------------------------ any value
_SAFE_FUNCS = (sp.exp, sp.log, sp.Abs)


def to_number(value: Any, name: str = "value"):
    """Convert a user value to a sympy number, exactly where the input is exact.

    Accepts strings (via :func:`parse_value`), ints, :class:`fractions.Fraction`,
    :class:`decimal.Decimal`, floats, numpy scalars and sympy numbers. Exact inputs give
    Integer/Rational; floats give a Float. A sympy number such as ``pi`` or ``sqrt(2)`` is kept
    exact when it is a small expression of Integers, Rationals, ``pi``/``E``, ``exp``, ``log``,
    ``Abs`` and powers with small rational exponents; any other real sympy number is converted to
    a Float. Booleans, NaN, infinities, complex and non-numeric values are refused with
    :class:`InvalidValueError`; sizes beyond the limits with :class:`ValueRangeError`.
    """
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_", "bool8"):
        raise InvalidValueError(
            f"{name} must be a number; booleans are not numbers (got {value!r})"
        )
    if isinstance(value, str):
        return parse_value(value, name)
    if isinstance(value, sp.Basic):
        return _from_sympy(value, name)
    if isinstance(value, numbers.Integral):
        iv = int(value)
        if iv.bit_length() > 110 or abs(iv) > MAX_ABS:
            raise ValueRangeError(
                f"{name} is too large (an integer with {_digits(iv)} digits); "
                f"allowed: magnitudes up to 10^{int(_MAX_LOG10)}"
            )
        return sp.Integer(iv)
    if isinstance(value, fractions.Fraction):
        for part in (value.numerator, value.denominator):
            if abs(part).bit_length() > MAX_DIGITS * 3.33 + 4:
                raise ValueRangeError(
                    f"{name} is too long an exact number (more than {MAX_DIGITS} digits in "
                    f"numerator or denominator); allowed: at most {MAX_DIGITS} digits"
                )
        return check_number(sp.Rational(value.numerator, value.denominator), name)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InvalidValueError(f"{name} must be finite (got {value})")
        return parse_value(str(value), name)
    if isinstance(value, float):
        return _from_float(value, name)
    if isinstance(value, numbers.Real):  # numpy scalars and other registered reals
        try:
            f = float(value)
        except (TypeError, ValueError, OverflowError) as e:
            raise InvalidValueError(f"{name} must be a real number (got {value!r})") from e
        return _from_float(f, name)
    if isinstance(value, (complex, numbers.Complex)):
        raise InvalidValueError(f"{name} must be a real number (got {value!r})")
    raise InvalidValueError(
        f"{name} must be a number or a string such as '3/4' "
        f"(got {type(value).__name__} {_safe_repr(value)})"
    )


def _from_float(f: float, name: str):
    if f != f:
        raise InvalidValueError(f"{name} must be a number (got NaN)")
    if f in (math.inf, -math.inf):
        raise InvalidValueError(f"{name} must be finite (got {f})")
    if abs(f) > MAX_ABS:
        raise ValueRangeError(
            f"{name} is too large ({f:g}); allowed: magnitudes up to 10^{int(_MAX_LOG10)}"
        )
    return sp.Float(f)


def _from_sympy(v, name: str):
    if v in (sp.nan,) or v.has(sp.nan):
        raise InvalidValueError(f"{name} must be a number (got nan)")
    if v.has(sp.oo, -sp.oo, sp.zoo):
        raise InvalidValueError(f"{name} must be finite (got {_safe_repr(v)})")
    if not v.is_number:
        raise InvalidValueError(f"{name} must be a number (got {_safe_repr(v)})")
    if isinstance(v, (sp.Rational, sp.Float)):
        return check_number(v, name)
    if isinstance(v, sp.NumberSymbol):
        if not v.is_real:
            raise InvalidValueError(f"{name} must be a real number (got {v})")
        return v
    # a compound sympy number: keep it exact when its structure is small and safe, otherwise
    # use its numerical value; either way check its magnitude numerically first
    safe = _safe_structure(v)
    try:
        f = v.evalf(FLOAT_DIGITS)
    except Exception as e:  # noqa: BLE001 - sympy raises many kinds here
        raise InvalidValueError(f"{name} must be a real number (got {_safe_repr(v)})") from e
    if not isinstance(f, sp.Float):
        raise InvalidValueError(f"{name} must be a real number (got {_safe_repr(v)})")
    check_number(f, name)
    return v if safe else f


def _safe_structure(v) -> bool:
    count = 0
    for node in sp.preorder_traversal(v):
        count += 1
        if count > 100:
            return False
        if isinstance(node, (sp.Rational, sp.Float)):
            try:
                check_number(node)
            except InvalidValueError:
                return False
        elif isinstance(node, sp.NumberSymbol):
            continue
        elif isinstance(node, sp.Pow):
            e = node.exp
            if not (e.is_Rational and abs(e.p) <= MAX_EXPONENT and e.q <= MAX_EXPONENT):
                return False
        elif isinstance(node, (sp.Add, sp.Mul, *_SAFE_FUNCS)):
            continue
        elif node.is_Atom:
            if node is not sp.S.ImaginaryUnit:
                return False
        else:
            return False
    return True


def _safe_repr(v) -> str:
    try:
        r = repr(v)
    except Exception:  # noqa: BLE001 - a user object's repr may fail
        return "<unprintable>"
    return r if len(r) <= 80 else r[:77] + "..."
