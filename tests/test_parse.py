"""The safe value parser (approxtheory.parse): what it accepts, with values derived by hand, what it
refuses, with typed errors, and that it never evaluates its input as code."""

import decimal
import fractions
import math
import re

import pytest
import sympy as sp
from _helpers import within_peak
from hypothesis import given
from hypothesis import strategies as st

import approxtheory as at
from approxtheory.errors import ApproxTheoryError, InvalidValueError, ParseError, ValueRangeError
from approxtheory.parse import MAX_ABS, MAX_EXPONENT, MAX_LENGTH, parse_value, to_number


# --- accepted values, each derived by hand --------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("64", sp.Integer(64)),
        ("-7", sp.Integer(-7)),
        ("3/4", sp.Rational(3, 4)),
        ("0.1", sp.Rational(1, 10)),  # exact, not the binary float 0.1
        (".5", sp.Rational(1, 2)),
        ("3.", sp.Integer(3)),
        ("1e-3", sp.Rational(1, 1000)),
        ("2.5E+4", sp.Integer(25000)),
        ("2^10", sp.Integer(1024)),
        ("2**10", sp.Integer(1024)),
        ("2^-1", sp.Rational(1, 2)),
        ("-2^2", sp.Integer(-4)),  # power binds tighter than unary minus
        ("(-2)^2", sp.Integer(4)),
        ("2^3^2", sp.Integer(512)),  # right-associative: 2^(3^2)
        ("-(1/2)^2", sp.Rational(-1, 4)),
        ("1/3 + 1/6", sp.Rational(1, 2)),
        ("2*(3+4)/7", sp.Integer(2)),
        ("1 - 2 - 3", sp.Integer(-4)),  # left-associative
        ("12/2/3", sp.Integer(2)),  # left-associative
        ("--3", sp.Integer(3)),
        ("−3", sp.Integer(-3)),  # unicode minus
        ("  7  ", sp.Integer(7)),
        ("10**30", sp.Integer(10) ** 30),  # the largest magnitude allowed
        ("1e30", sp.Integer(10) ** 30),
        ("1e-30", sp.Rational(1, 10**30)),
        ("sqrt(9/4)", sp.Rational(3, 2)),  # rational result stays exact
        ("log(1)", sp.Integer(0)),
        ("exp(0)", sp.Integer(1)),
    ],
)
def test_accepts_exact_values(text, expected):
    v = parse_value(text)
    assert v == expected
    assert type(v) is type(expected) or (v.is_Rational and expected.is_Rational)
    assert not v.is_Float


@pytest.mark.parametrize(
    "text,expected",
    [
        ("pi", math.pi),
        ("e", math.e),
        ("sqrt(2)", math.sqrt(2)),
        ("log(2)", math.log(2)),
        ("exp(1)", math.e),
        ("2*pi", 2 * math.pi),
        ("π", math.pi),
        ("exp(-1/2)", math.exp(-0.5)),
    ],
)
def test_constants_and_functions_give_floats(text, expected):
    v = parse_value(text)
    assert v.is_Float
    assert abs(float(v) - expected) <= 1e-15 * abs(expected)


@pytest.mark.parametrize(
    "text,error,needle",
    [
        ("", ParseError, "empty"),
        ("x", ParseError, "unknown name 'x'"),
        ("T", ParseError, "unknown name"),
        ("E", ParseError, "write e for Euler"),
        ("True", ParseError, "unknown name"),
        ("2pi", ParseError, "unexpected 'pi'"),
        ("1,5", ParseError, "unexpected character ','"),
        ("2^^3", ParseError, "unexpected '^'"),
        ("(1+2", ParseError, "expected ')'"),
        ("sqrt 2", ParseError, "needs an argument"),
        ("__import__('os')", ParseError, "unexpected character"),
        ("1" * (MAX_LENGTH + 1), ParseError, f"at most {MAX_LENGTH}"),
        ("(" * 30 + "1" + ")" * 30, ParseError, "deep"),
        ("inf", InvalidValueError, "finite"),
        ("nan", InvalidValueError, "finite"),
        ("oo", InvalidValueError, "finite"),
        ("1/0", InvalidValueError, "division by zero"),
        ("1/(2-2)", InvalidValueError, "division by zero"),
        ("0^-1", InvalidValueError, "division by zero"),
        ("sqrt(-1)", InvalidValueError, "x >= 0"),
        ("log(0)", InvalidValueError, "x > 0"),
        ("10**31", ValueRangeError, "up to 10^30"),
        ("1e31", ValueRangeError, "up to 10^30"),
        ("-1e31", ValueRangeError, "up to 10^30"),
        ("1e999999999", ValueRangeError, "exponents from -1000 to 1000"),
        ("10**10**10", ValueRangeError, f"from -{MAX_EXPONENT} to {MAX_EXPONENT}"),
        ("2^101", ValueRangeError, f"from -{MAX_EXPONENT} to {MAX_EXPONENT}"),
        ("2^0.5", ValueRangeError, "use sqrt"),
        ("exp(1000)", ValueRangeError, "up to 10^30"),
        ("1e-101", ValueRangeError, "digits"),
    ],
)
def test_refuses_with_typed_error_saying_what_is_allowed(text, error, needle):
    with pytest.raises(error) as info:
        parse_value(text, "T")
    assert needle in str(info.value)
    assert str(info.value).startswith("T")  # names the value that was wrong
    assert isinstance(info.value, ApproxTheoryError)


@pytest.mark.parametrize(
    "text",
    [
        "10**10**10",
        "1e999999999",
        "9^9^9^9",
        "10^100^100",
        "(10^30)^100",
        "exp(exp(exp(10)))",
        "1e1000/1e-1000",
    ],
)
def test_huge_values_are_refused_quickly(text):
    with pytest.raises(ValueRangeError):
        _within_work_limit(parse_value, text)


#: the most memory one parse may allocate at its peak: the largest value the parser computes is a
#: power of operands within the limits (<= 10^3000, about 1.3 KB as an int); a parse that built
#: 10^(10^10) first would need gigabytes. Memory, not the clock: a loaded machine cannot fail it.
MAX_PARSE_BYTES = 8 * 2**20


def _within_work_limit(fn, *args):
    """``fn(*args)``, asserting that its peak of allocated memory stays under MAX_PARSE_BYTES."""
    return within_peak(MAX_PARSE_BYTES, lambda: fn(*args), f"parsing {args!r} ")


def test_the_work_limit_can_fail():
    with pytest.raises(AssertionError, match="allocated"):
        _within_work_limit(lambda n: 1 << n, 100_000_000)  # a 12.5 MB integer
    assert _within_work_limit(parse_value, "(10^30)^1") == 10**30


# --- the magnitude cap: one rule, compared exactly ----------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["1e30+1", "pi+1e30", "1e30+pi", "-1e30-pi", "e+10^30", "1e30*(1+1e-29)", "exp(69.08)"],
)
def test_just_above_the_cap_is_refused_exact_or_float(text):
    """|value| <= 10^30 compared exactly, whatever the value's kind: 10^30 + pi is refused like
    10^30 + 1 (a Float's log10 rounds to 30.0 and used to pass a 1e-9 slack)."""
    with pytest.raises(ValueRangeError, match=r"up to 10\^30"):
        parse_value(text)


@pytest.mark.parametrize(
    "text", ["1e30", "10^30", "-1e30", "1e30-pi", "pi*1e29", "1e30-1", "1e30-pi+pi"]
)
def test_at_or_below_the_cap_is_accepted(text):
    v = parse_value(text)
    assert abs(v) <= MAX_ABS


@given(st.integers(1, 10**6), st.sampled_from(["pi", "e", "sqrt(2)", "log(3)", "1", "1/7"]))
def test_anything_above_the_cap_is_refused(k, c):
    """10^30 plus or minus a positive amount of any kind: above the cap refused, below accepted
    (the sum keeps the amount: it is at least 1/7, beyond a 30-digit Float's round-off)."""
    with pytest.raises(ValueRangeError):
        parse_value(f"1e30+{k}*{c}")
    with pytest.raises(ValueRangeError):
        parse_value(f"-1e30-{k}*{c}")
    assert abs(parse_value(f"1e30-{k}*{c}")) < MAX_ABS


def test_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [
        f"__import__('os').system('touch {marker}')",
        f'__import__("pathlib").Path("{marker}").touch()',
        "().__class__.__bases__[0].__subclasses__()",
        f"open('{marker}', 'w')",
        "lambda: 1",
        "[1]",
        "{}",
        "1 if 1 else 2",
        "exec('1')",
        "eval('1')",
    ]
    for p in payloads:
        with pytest.raises(ParseError):
            parse_value(p)
        with pytest.raises(ParseError):
            to_number(p)
    assert not marker.exists()


# --- non-string values ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,expected",
    [
        (3, sp.Integer(3)),
        (fractions.Fraction(3, 4), sp.Rational(3, 4)),
        (decimal.Decimal("0.25"), sp.Rational(1, 4)),
        (sp.Rational(5, 2), sp.Rational(5, 2)),
        (10**30, sp.Integer(10) ** 30),
    ],
)
def test_to_number_keeps_exact_inputs_exact(value, expected):
    v = to_number(value)
    assert v == expected and v.is_Rational


def test_to_number_floats_and_sympy_numbers():
    assert to_number(0.5) == sp.Float(0.5) and to_number(0.5).is_Float
    assert to_number(sp.pi) is sp.pi  # a safe exact sympy number stays exact
    assert to_number(sp.sqrt(2)) == sp.sqrt(2)
    # a huge unevaluated power is not kept exact (re-evaluating it would not return)
    with pytest.raises(ValueRangeError):
        to_number(sp.Pow(10, 10**9, evaluate=False))


@pytest.mark.parametrize(
    "value,error,needle",
    [
        (True, InvalidValueError, "booleans are not numbers"),
        (False, InvalidValueError, "booleans are not numbers"),
        (float("nan"), InvalidValueError, "NaN"),
        (float("inf"), InvalidValueError, "finite"),
        (-float("inf"), InvalidValueError, "finite"),
        (sp.nan, InvalidValueError, "nan"),
        (sp.oo, InvalidValueError, "finite"),
        (sp.zoo, InvalidValueError, "finite"),
        (decimal.Decimal("NaN"), InvalidValueError, "finite"),
        (decimal.Decimal("1e999999999"), ValueRangeError, "exponent"),
        (1e31, ValueRangeError, "up to 10^30"),
        (10**31, ValueRangeError, "up to 10^30"),
        pytest.param(10**4000, ValueRangeError, "up to 10^30", id="10**4000"),
        (fractions.Fraction(1, 10**200), ValueRangeError, "digits"),
        (1 + 2j, InvalidValueError, "real"),
        (sp.I, InvalidValueError, "real"),
        (None, InvalidValueError, "must be a number"),
        ([1], InvalidValueError, "must be a number"),
        (sp.Symbol("x"), InvalidValueError, "must be a number"),
    ],
)
def test_to_number_refuses(value, error, needle):
    with pytest.raises(error, match=re.escape(needle)):
        to_number(value, "x")


def test_numpy_scalars():
    np = pytest.importorskip("numpy")
    assert to_number(np.int64(7)) == 7 and to_number(np.int64(7)).is_Integer
    assert to_number(np.float32(0.5)) == sp.Float(0.5)
    with pytest.raises(InvalidValueError, match="booleans"):
        to_number(np.bool_(True))
    with pytest.raises(InvalidValueError):
        to_number(np.float64("nan"))


# --- properties ----------------------------------------------------------------------------------
bounded_ints = st.integers(-MAX_ABS, MAX_ABS)


@given(bounded_ints)
def test_roundtrip_integers(n):
    assert parse_value(str(n)) == sp.Integer(n)
    assert parse_value(f"({n})") == sp.Integer(n)


@given(st.fractions(min_value=-(10**12), max_value=10**12, max_denominator=10**12))
def test_roundtrip_rationals(f):
    text = f"{f.numerator}/{f.denominator}"
    assert parse_value(text) == sp.Rational(f.numerator, f.denominator)
    assert parse_value(f"-({text})") == -sp.Rational(f.numerator, f.denominator)


@given(
    st.decimals(
        min_value=-(10**20), max_value=10**20, places=12, allow_nan=False, allow_infinity=False
    )
)
def test_roundtrip_decimals(d):
    expected = sp.Rational(*fractions.Fraction(d).as_integer_ratio())
    assert parse_value(str(d)) == expected
    assert to_number(d) == expected


@given(st.integers(-40, 40), st.integers(1, 9))
def test_scientific_notation(k, m):
    # m e k is m * 10^k exactly (|k| <= 40 and m < 10 stay within 10^30 only for k <= 29)
    text = f"{m}e{k}"
    if k <= 29 or (k == 30 and m == 1):
        assert parse_value(text) == sp.Integer(m) * sp.Rational(10) ** k
    else:
        with pytest.raises(ValueRangeError):
            parse_value(text)


@given(st.integers(-20, 20), st.integers(0, 12))
def test_integer_powers(b, n):
    assert parse_value(f"({b})^{n}") == sp.Integer(b) ** n
    assert parse_value(f"({b})**{n}") == sp.Integer(b) ** n


GRAMMAR_CHARS = "0123456789.eE+-*/^() piqrtlogx_" + "'\"[]{},;:!@#$%&|<>=~`\\"


@given(st.one_of(st.text(max_size=60), st.text(alphabet=GRAMMAR_CHARS, max_size=60)))
def test_random_strings_give_a_number_or_a_typed_error(text):
    try:
        v = parse_value(text)
    except ApproxTheoryError:
        return
    # anything accepted is a finite real sympy number within the limits
    assert isinstance(v, (sp.Integer, sp.Rational, sp.Float))
    assert abs(v) <= MAX_ABS


@given(
    st.recursive(
        st.integers(0, 10**6).map(str) | st.sampled_from(["pi", "e", "0.5", "1e-3", "1e30"]),
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^", "**"]), inner).map(
                lambda t: f"{t[0]}{t[1]}{t[2]}"
            ),
            inner.map(lambda s: f"({s})"),
            inner.map(lambda s: f"-{s}"),
            st.tuples(st.sampled_from(["sqrt", "log", "exp"]), inner).map(
                lambda t: f"{t[0]}({t[1]})"
            ),
        ),
        max_leaves=12,
    )
)
def test_random_expressions_are_quick_and_typed(text):
    try:
        v = _within_work_limit(parse_value, text)
    except ApproxTheoryError:
        return
    assert abs(v) <= MAX_ABS


def test_errors_are_exported():
    assert issubclass(at.errors.ParseError, at.InvalidValueError)
    assert issubclass(at.errors.ValueRangeError, at.InvalidValueError)
