"""The claim catalogue: coverage of the digests, well-formed formulas, the papers' stated
properties (monotonicity, vacuity boundaries, exact ratios), and the hardened API (values parsed,
never evaluated; typed errors; no hangs)."""

import math
import re
from pathlib import Path

import pytest
import sympy as sp
from _helpers import within_peak
from hypothesis import given
from hypothesis import strategies as st

import approxtheory as at
from approxtheory.catalogue import KINDS, PAPERS, PROVENANCES
from approxtheory.parse import log10_abs

PAPERS_DIR = Path(__file__).resolve().parents[2] / "shared" / "papers"
DIGEST_IDS_FILE = Path(__file__).resolve().parent / "data" / "digest_claim_ids.txt"
DIGESTS = {
    "headcount.md": "HC",
    "tradeoffs.md": "TO",
    "infoflow.md": "IF",
    "identification.md": "ID",
}
#: a claim id as the digests write it: HC-T2a, HC-Conj1, ID-B4.7.2, ID-RG, TO-R (a group)
DIGEST_ID_PATTERN = r"\b{prefix}-[A-Za-z]+[0-9]*(?:\.[0-9]+)*[a-z]?\b"


def digest_claim_ids(text: str, prefix: str) -> set:
    """The claim ids a digest defines."""
    return set(re.findall(DIGEST_ID_PATTERN.format(prefix=prefix), text))


def write_digest_claim_ids(papers_dir: Path = PAPERS_DIR, out: Path = DIGEST_IDS_FILE) -> None:
    """Regenerate tests/data/digest_claim_ids.txt from the digests (keeps its comment header)."""
    header = [l for l in out.read_text(encoding="utf-8").splitlines() if l.startswith("#")]
    lines = list(header)
    for fname, prefix in DIGESTS.items():
        text = (papers_dir / fname).read_text(encoding="utf-8")
        lines += [f"{fname} {i}" for i in sorted(digest_claim_ids(text, prefix))]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def stored_digest_ids() -> dict:
    out: dict = {f: set() for f in DIGESTS}
    for line in DIGEST_IDS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            fname, cid = line.split()
            out[fname].add(cid)
    return out


def test_at_least_45_claims_covering_all_papers():
    cs = at.claims()
    assert len(cs) >= 45
    assert {c.paper for c in cs} == set(PAPERS)
    for c in cs:
        assert c.kind in KINDS and c.provenance in PROVENANCES
        assert c.statement and c.section


def test_prism_ids_required_by_the_issue():
    for cid in ["PR-N1", "PR-N2", "PR-S", "PR-E1", "PR-E2"]:
        assert at.claim(cid).paper == "2606.27449"


@pytest.mark.parametrize("fname", list(DIGESTS))
def test_every_id_defined_by_a_digest_is_a_claim(fname):
    # runs on a clean clone: the ids come from tests/data, not from ../shared
    ids = stored_digest_ids()[fname]
    assert len(ids) >= 3, f"{DIGEST_IDS_FILE} lists too few ids for {fname}"
    known = {c.id for c in at.claims()}
    # TO-R names the group of rules R1-R3, catalogued one by one
    missing = {i for i in ids if i not in known and i != "TO-R"}
    assert not missing, f"ids in {fname} without a claim: {sorted(missing)}"
    if "TO-R" in ids:
        assert {"TO-R1", "TO-R2", "TO-R3"} <= known


@pytest.mark.skipif(
    not PAPERS_DIR.exists(),
    reason="the papers' live digests are not next to this checkout "
    "(the ids stored in tests/data are checked instead)",
)
@pytest.mark.parametrize("fname", list(DIGESTS))
def test_stored_digest_ids_match_the_live_digests(fname):
    live = digest_claim_ids((PAPERS_DIR / fname).read_text(encoding="utf-8"), DIGESTS[fname])
    assert live == stored_digest_ids()[fname], (
        f"{DIGEST_IDS_FILE.name} is stale for {fname}; regenerate it (see its header)"
    )


def test_symbols_are_declared_and_expressions_use_only_them():
    for c in at.claims():
        declared = {s for s, _ in c.symbols.values()}
        for name, e in c.expressions.items():
            assert isinstance(e, sp.Basic), (c.id, name)
            assert e.free_symbols <= declared, (c.id, name)
        for r in c.regime:
            assert r.free_symbols <= declared


def _value_strategy(sym):
    """Values that respect the symbol's assumptions, small enough that exponentials such as
    TO-C1's exp(2 R^2 sigma)^2 stay far below the 10^4000 result limit."""
    if sym.is_integer:
        lo = 0 if sym.is_nonnegative and not sym.is_positive else 1
        return st.one_of(st.integers(lo, 6), st.integers(lo, 3000)).map(sp.Integer)
    fr = st.fractions(min_value=sp.Rational(1, 8), max_value=8, max_denominator=8)
    if sym.is_nonnegative and not sym.is_positive:
        fr = st.fractions(min_value=0, max_value=1, max_denominator=8)
    elif not sym.is_positive:
        fr = st.fractions(min_value=-5, max_value=5, max_denominator=8)
    return fr.map(lambda f: sp.Rational(f.numerator, f.denominator))


I = st.integers
frac = st.fractions(min_value=0, max_value=7, max_denominator=8).map(
    lambda f: sp.Rational(f.numerator, f.denominator)
)


def _hc_c1(draw):
    D1 = draw(I(1, 10))
    D2 = D1 + draw(I(1, 10))  # D1 < D2
    return dict(D1=D1, D2=D2, T=50 * (D1**2 + D2**2) + draw(I(0, 100)))  # D1²+D2² <= T/50


def _hc_t2c(draw):
    T, d = draw(I(1, 50)), draw(I(1, 10))
    return dict(T=T, d=d, n=T * d + draw(I(0, 10)))  # n >= T*d


def _hc_conj1(draw):
    L, h = draw(I(1, 5)), draw(I(1, 5))
    return dict(L=L, h=h, D=L * h + draw(I(1, 10)))  # L*h < D


def _hc_k1(draw):
    T = draw(I(1, 3000))
    return dict(beta=1 + draw(frac), T=T, S=draw(I(-(-T // 4), T)))  # T/4 <= S <= T, beta >= 1


def _if_t2(draw):
    T = draw(I(1, 3000))
    return dict(T=T, beta=(1 + draw(frac)) / T)  # beta*T >= 1


def _if_e3(draw):
    a = sp.Rational(draw(I(1, 100)), draw(I(1, 10)))
    b = draw(I(-50, 50))
    T = max(1, math.ceil((1 - b) / a)) + draw(I(0, 100))
    return dict(a=a, b=b, T=T)  # a*T + b >= 1 > 0


def _divides(big, small, lo=1, hi=16):
    def build(draw):
        h = draw(I(lo, hi))
        return {small: h, big: h * draw(I(1, 16))}

    return build


def _id_p48(draw):
    H = draw(I(1, 16))
    return dict(H=H, E=H * draw(I(1, 16)), D=2 * draw(I(1, 32)))  # H | E, D even


def _gqa(draw):
    G = draw(I(1, 8))
    H = G * draw(I(1, 8))
    return dict(G=G, H=H, E=H * draw(I(1, 8)))  # G | H | E


def _pr_s(draw):
    h = draw(I(1, 16))
    return dict(h_l=h, h_base=h + draw(I(0, 16)), d=h * draw(I(1, 64)))  # h_l | d, h_l <= h_base


def _id_pub(draw):
    H = 8 + draw(I(0, 120))
    return dict(H=H, E=H * draw(I(1, 16)))  # H | E, H >= 8 (published architectures)


def _at_least(name, other, lo_gap=0):
    def build(draw):
        v = draw(I(1, 50))
        return {other: v, name: v + draw(I(lo_gap, 50))}

    return build


#: values that satisfy each claim's regime by construction (no filtering): every claim with a
#: regime must have an entry, and the test asserts in_regime() of what it builds
REGIME_VALUES = {
    "TO-X3": lambda draw: dict(kappa=0, rho=0),  # position-only logits, i.i.d. isotropic values
    "HC-C1": _hc_c1,
    "HC-T2a": lambda draw: {**_at_least("h", "D")(draw), "n": 2},  # h >= D, n = 2
    "HC-T2b": _at_least("D", "s", lo_gap=1),  # s < D
    "HC-T2c": _hc_t2c,
    "HC-Conj1": _hc_conj1,
    "HC-K1": _hc_k1,
    "TO-X2": lambda draw: dict(L=2 + draw(I(0, 100))),  # L >= 2
    "IF-T2": _if_t2,
    "IF-T3": lambda draw: dict(k=2 + draw(I(0, 20))),  # k >= 2
    "IF-E3": _if_e3,
    "ID-L4.1": _at_least("E", "D"),
    "ID-L4.2": _at_least("E", "D"),  # D <= E
    "ID-L4.3": _at_least("E", "D"),
    "ID-X4.8.1": _at_least("E", "D"),
    "ID-T4.5": _divides("E", "H"),
    "ID-LT": _divides("E", "H"),
    "ID-PUB": _id_pub,
    "ID-F3": _at_least("E", "D"),  # D <= E
    "ID-B4.7.2": _divides("E", "H"),  # H | E
    "ID-S5.1": _divides("E", "H"),
    "ID-P4.8": _id_p48,
    "ID-GQA4.9": _gqa,
    "ID-RG": _gqa,
    "PR-N1": _divides("d", "h_l"),
    "PR-N2": _divides("d", "h_l"),  # h_l | d
    "PR-S": _pr_s,
}

FORMULA_CLAIMS = [c for c in at.claims() if c.expressions]


def test_every_claim_with_a_regime_has_a_value_builder():
    with_regime = {c.id for c in FORMULA_CLAIMS if c.regime}
    assert with_regime == set(REGIME_VALUES)


@pytest.mark.parametrize("c", FORMULA_CLAIMS, ids=lambda c: c.id)
@given(data=st.data())
def test_every_expression_evaluates_in_its_regime(c, data):
    values = REGIME_VALUES[c.id](data.draw) if c.id in REGIME_VALUES else {}
    values = {k: sp.Integer(v) if isinstance(v, int) else v for k, v in values.items()}
    for n, (s, _) in c.symbols.items():
        if n not in values:
            values[n] = data.draw(_value_strategy(s), label=n)
    assert c.in_regime(**values), values  # the builder is wrong, not filtered away
    for name, e in c.expressions.items():
        needed = {s.name: values[s.name] for s in e.free_symbols}
        try:
            v = c.evaluate(name, **needed)
        except at.errors.ValueRangeError:
            # refused as too large: only right if it is, by a 40-digit float evaluation (cheap:
            # float powers never build huge integers) against the documented 10^4000 limit
            approx = e.subs({s: sp.Float(values[s.name], 40) for s in e.free_symbols}).evalf(40)
            assert abs(approx) > sp.Float(10, 40) ** 3999, (name, values, approx)
            continue
        assert v.is_number, (name, v)
        f = sp.N(v)
        assert f.is_finite and not f.has(sp.nan), (name, v)


# --- HC-T2b: the paper's monotonicity and the vacuity boundary -----------------------------------
hc = at.claim("HC-T2b")
ints = st.integers


@given(T=ints(1, 2000), s=ints(1, 20), n=ints(1, 64), gap=ints(1, 20))
def test_hc_t2b_exponent_monotone(T, s, n, gap):
    D = s + gap  # s < D by construction
    k = lambda **kw: hc.evaluate(**{**dict(T=T, s=s, n=n, D=D), **kw})
    assert k(T=T + 1) > k()  # grows with T
    if hc.evaluate("T0", T=T, s=s, D=D) > 0:  # where the bound has content
        assert k(n=n + 1) < k()  # falls with the head width
        if s + 1 < D:
            assert k(s=s + 1) < k()  # falls with the head count


def test_hc_t2b_vacuity_boundary_symbolic():
    T, D, n, s = (hc.symbol(x) for x in "TDns")
    assert hc.vacuous_region("T") == sp.Le(T, 4 * D + 4 * n * s + 8 * s)
    assert hc.solve_for("T", k=0) == [4 * D + 4 * n * s + 8 * s]


@given(s=ints(1, 10), n=ints(1, 32), extra=ints(1, 10))
def test_hc_t2b_vacuity_boundary_numeric(s, n, extra):
    D = s + extra
    b = 4 * D + 4 * n * s + 8 * s
    assert hc.is_vacuous(T=b, s=s, n=n, D=D)
    assert hc.evaluate(T=b, s=s, n=n, D=D) == 0
    assert not hc.is_vacuous(T=b + 1, s=s, n=n, D=D)


def test_hc_t2b_issue_example_and_exponent():
    # k = (T/4 - s - D + 1)/((n+1)s + 1) - 1 = (16 - 1 - 2 + 1)/4 - 1 = 5/2 at T=64, s=1, n=2, D=2
    assert hc.evaluate(T=64, s=1, n=2, D=2) == sp.Rational(5, 2)
    # the paper's k written out here, not read from the catalogue: M_min = C eps^(-k), so the
    # rate exponent in 1/eps is k and the exponent of M_min in eps is -k
    T, D, n, s = (hc.symbol(x) for x in "TDns")
    k = (T / 4 - s - D + 1) / ((n + 1) * s + 1) - 1
    assert sp.simplify(hc.expr("k") - k) == 0
    assert sp.simplify(hc.rate_exponent() - k) == 0
    eps = hc.symbol("eps")
    assert sp.simplify(hc.exponent("epsilon", expr="M_min") + k) == 0
    assert hc.exponent("epsilon", expr="T0") == 0
    # slope of k in T is 1/(4((n+1)s+1)), derived in HC-P6 from the same expression
    assert sp.simplify(at.claim("HC-P6").expr("slope_in_T") - 1 / (4 * ((n + 1) * s + 1))) == 0
    assert eps.is_positive


def test_solve_for_gives_real_thresholds_for_integer_symbols():
    # k = 1/3 is reached between integers: the threshold is returned, not dropped.
    # At s=1, n=2, D=2: k = (T/4 - 2)/4 - 1 = T/16 - 3/2 = 1/3  <=>  T = 16 * 11/6 = 88/3;
    # at T = 30 (the next integer) k = 30/16 - 3/2 = 3/8 > 1/3
    assert hc.solve_for("T", k=sp.Rational(1, 3), s=1, n=2, D=2) == [sp.Rational(88, 3)]
    assert hc.evaluate(T=sp.Rational(88, 3).ceiling(), s=1, n=2, D=2) > sp.Rational(1, 3)


def test_hc_t2b_paper_examples_of_boundary():
    # digest: n=8, D=4 needs T > 56 (s=1), 96 (s=2), 136 (s=3); n=2,D=2,s=1: 24; n=1: 20
    for n, D, s, b in [(8, 4, 1, 56), (8, 4, 2, 96), (8, 4, 3, 136), (2, 2, 1, 24), (1, 2, 1, 20)]:
        assert hc.solve_for("T", k=0, n=n, D=D, s=s) == [b]


def test_hc_t2b_vacuous_for_papers_synthetic_setup():
    # digest: for n = 8, D = 4, s <= 3, T <= 128 the exponent is <= 1.8 and mostly <= 0
    ks = [hc.evaluate(T=T, s=s, n=8, D=4) for s in (1, 2, 3) for T in (8, 16, 32, 64, 128)]
    assert max(ks) <= sp.Rational(18, 10)
    assert sum(1 for k in ks if k <= 0) > len(ks) / 2


# --- identifiability ratios ----------------------------------------------------------------------
def test_identifiability_ratios_reduce_exactly():
    H, E, G = (at.claim("ID-GQA4.9").symbol(x) for x in "HEG")
    assert at.claim("ID-T4.5").expr("ratio") == 1 / (2 * H)
    assert sp.simplify(at.claim("ID-GQA4.9").expr("ratio") - G / (H * (H + G))) == 0
    assert sp.simplify(at.claim("ID-B4.7.2").expr("ratio") - (E + H) / (2 * H * (E + 1))) == 0
    assert sp.simplify(at.claim("ID-P4.8").expr("ratio") - (E + H) / (4 * E * H)) == 0
    assert sp.simplify(at.claim("ID-RG").expr("ratio") - G * (E + H) / (2 * E * H * (G + H))) == 0
    # G = H recovers 1/(2H); MQA gives 1/(H(H+1)); bias version is 1/2 at H = 1
    assert sp.simplify(at.claim("ID-GQA4.9").expr("ratio").subs(G, H) - 1 / (2 * H)) == 0
    assert sp.simplify(at.claim("ID-GQA4.9").expr("ratio").subs(G, 1) - 1 / (H * (H + 1))) == 0
    assert sp.simplify(at.claim("ID-B4.7.2").expr("ratio").subs(H, 1)) == sp.Rational(1, 2)


@given(H=ints(1, 16), m=ints(1, 16))
def test_identifiability_ratio_exact_rational(H, m):
    E = H * m
    v = at.claim("ID-T4.5").evaluate(E=E, H=H)
    assert v == sp.Rational(1, 2 * H)


def test_head_count_not_dividing_width_is_rejected():
    with pytest.raises(at.RegimeError, match=r"H must divide E \(got H=3, E=32\)"):
        at.claim("ID-T4.5").evaluate(E=32, H=3)


# --- Prism neutrality ----------------------------------------------------------------------------
@given(schedule=st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12]), min_size=1, max_size=12))
def test_pr_n1_parameter_count_independent_of_schedule(schedule):
    from approxtheory.catalogue import prism

    total = sum(prism.N_layer.subs(prism.h_l, h) for h in schedule)
    uniform = len(schedule) * prism.N_layer.subs(prism.h_l, prism.h_base)
    assert sp.simplify(total - uniform) == 0
    symbolic = [sp.Symbol(f"h{i}", positive=True) for i in range(len(schedule))]
    total_sym = sum(prism.N_layer.subs(prism.h_l, h) for h in symbolic)
    assert not any(total_sym.has(h) for h in symbolic)
    flops = sum(prism.F_layer.subs(prism.h_l, h) for h in symbolic)
    assert not any(flops.has(h) for h in symbolic)


# --- API behaviour -------------------------------------------------------------------------------
def test_unknown_id_suggests_close_ids():
    with pytest.raises(at.UnknownClaimError, match="HC-T2b"):
        at.claim("HC-T2")
    assert at.claim("hc-t2b") is hc


def test_evaluate_errors_are_typed_and_clear():
    with pytest.raises(at.MissingSymbolError, match="D"):
        hc.evaluate(T=64, s=1, n=2)
    with pytest.raises(at.UnknownSymbolError, match="its symbols are"):
        hc.evaluate(T=64, s=1, n=2, D=2, x=1)
    with pytest.raises(at.RegimeError, match="s < D"):
        hc.evaluate(T=64, s=3, n=2, D=2)
    with pytest.raises(at.InvalidValueError, match="epsilon must be positive"):
        at.claim("HC-T2a").evaluate(eps=-0.1, C=1, gamma=2)
    with pytest.raises(at.InvalidValueError, match="integer"):
        hc.evaluate(T=64.5, s=1, n=2, D=2)


def test_exact_inputs_give_exact_outputs():
    v = at.claim("HC-T2a").evaluate(epsilon="0.1", C=1, gamma=2)
    assert v == 100 and v.is_Integer
    v = at.claim("IF-T2").evaluate(beta=1, T=1)
    assert v == 1 and v.is_Integer
    assert at.claim("HC-T2a").evaluate(epsilon=0.5, C=1, gamma=1).is_Float


def test_exponent_and_rates():
    assert at.claim("HC-T2a").rate_exponent() == at.claim("HC-T2a").symbol("gamma")
    g = at.claim("HC-T2c").symbol("gamma")
    assert at.claim("HC-T2c").rate_exponent() == 1 + g
    assert at.claim("HC-L9").rate_exponent() == 1
    assert at.claim("IF-K1").rate_exponent() == 1
    with pytest.raises(at.NotAPowerLawError):
        at.claim("HC-K1").exponent("beta")


def test_compare_finds_where_lower_bound_overtakes_upper():
    cmp = at.compare("HC-T2a", "HC-T2b", "T", gamma=2, s=1, n=2, D=2)
    # by hand: HC-T2a's rate exponent is gamma = 2; HC-T2b's is k = (T/4 - s - D + 1)/((n+1)s+1)
    # - 1 = (T/4 - 2)/4 - 1 = T/16 - 3/2 at s=1, n=2, D=2. They cross where T/16 - 3/2 = 2, i.e.
    # T = 56; below it the upper bound's exponent 2 is larger, above it the lower bound's.
    assert cmp.crossings == (56,)
    assert [r[2] for r in cmp.regions] == ["a", "b"]
    assert cmp.regions[0][:2] == (0, 56) and cmp.regions[1][:2] == (56, sp.oo)
    # gamma = 7/2: T/16 - 3/2 = 7/2  <=>  T = 80
    assert at.compare("HC-T2a", "HC-T2b", "T", gamma="7/2", s=1, n=2, D=2).crossings == (80,)
    assert "crossings" in str(cmp)


def test_latex_and_jupyter_rendering():
    for c in at.claims():
        r = c._repr_latex_()
        assert r.startswith("$") and r.endswith("$") and c.id in r
    assert r"\frac{1}{2 H}" in at.claim("ID-T4.5").latex()


def test_to_dict_is_json_serialisable():
    import json

    for c in at.claims():
        d = json.loads(json.dumps(c.to_dict()))
        assert d["id"] == c.id and d["provenance"] in PROVENANCES


# --- hardened API: values are parsed, never evaluated; typed errors; nothing hangs ---------------
def test_string_values_are_parsed():
    # k = T/16 - 3/2 at s=1, n=2, D=2 (see above); T = 2^6 = 64 gives 5/2
    assert hc.evaluate(T="2^6", s="1", n="4/2", D="2") == sp.Rational(5, 2)
    # HC-T2a: C/eps^gamma = 1/(1/1000)^2 = 10^6, exactly
    v = at.claim("HC-T2a").evaluate(epsilon="1e-3", C=1, gamma="2")
    assert v == 10**6 and v.is_Integer


def test_injection_through_the_api_does_not_execute(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    for call in (
        lambda: hc.evaluate(T=payload, s=1, n=2, D=2),
        lambda: hc.evaluate_float(T=payload, s=1, n=2, D=2),
        lambda: hc.is_vacuous(T=payload, s=1, n=2, D=2),
        lambda: hc.in_regime(T=payload, s=1, n=2, D=2),
        lambda: hc.solve_for("T", k=payload, s=1, n=2, D=2),
        lambda: hc.solve_for("T", equals=payload, s=1, n=2, D=2),
        lambda: at.compare("HC-T2a", "HC-T2b", "T", gamma=payload, s=1, n=2, D=2),
        lambda: at.claim("HC-K1").asymptotic_exponent("beta", at=payload, S=3, T=10),
    ):
        with pytest.raises(at.errors.ParseError):
            call()
    assert not marker.exists()


@pytest.mark.parametrize("method", ["evaluate", "evaluate_float", "is_vacuous", "in_regime"])
def test_booleans_nan_and_infinity_are_rejected(method):
    f = getattr(hc, method)
    for bad, needle in [
        (True, "booleans are not numbers"),
        (False, "booleans are not numbers"),
        (float("nan"), "NaN"),
        (float("inf"), "finite"),
        ("nan", "finite"),
        (sp.nan, "nan"),
        (sp.oo, "finite"),
        (None, "must be a number"),
    ]:
        with pytest.raises(at.InvalidValueError, match=needle):
            f(T=bad, s=1, n=2, D=2)


def test_booleans_rejected_in_solve_for_and_compare():
    with pytest.raises(at.InvalidValueError, match="booleans"):
        hc.solve_for("T", k=True, s=1, n=2, D=2)
    with pytest.raises(at.InvalidValueError, match="booleans"):
        hc.solve_for("T", k=0, s=True, n=2, D=2)
    with pytest.raises(at.InvalidValueError, match="booleans"):
        at.compare("HC-T2a", "HC-T2b", "T", gamma=True, s=1, n=2, D=2)


def test_unknown_symbols_are_rejected_everywhere():
    for call in (
        lambda: hc.evaluate(T=64, s=1, n=2, D=2, zz=1),
        lambda: hc.evaluate_float(T=64, s=1, n=2, D=2, zz=1),
        lambda: hc.is_vacuous(T=64, s=1, n=2, D=2, zz=1),
        lambda: hc.in_regime(T=64, s=1, n=2, D=2, zz=1),
        lambda: hc.solve_for("T", k=0, s=1, n=2, D=2, zz=1),
        lambda: hc.solve_for("zz", k=0, s=1, n=2, D=2),
        lambda: at.claim("HC-T1").is_vacuous(zz=1),  # no vacuity condition: still checked
        lambda: at.claim("HC-K1").asymptotic_exponent("beta", S=3, T=10, zz=1),
        lambda: hc.evaluate(T=64, s=1, n=2, D=2, self=1),
        lambda: hc.evaluate(T=64, s=1, n=2, D=2, expr="nope"),
    ):
        with pytest.raises(at.UnknownSymbolError):
            call()


def test_compare_rejects_unknown_symbols_and_variables():
    with pytest.raises(at.UnknownSymbolError, match="'zz'"):
        at.compare("HC-T2a", "HC-T2b", "T", gamma=2, s=1, n=2, D=2, zz=3)
    with pytest.raises(at.UnknownSymbolError, match="'zz'"):
        at.compare("HC-T2a", "HC-T2b", "zz", gamma=2, s=1, n=2, D=2)
    with pytest.raises(at.UnknownSymbolError):
        at.compare("HC-T2a", "HC-T2b", 5, gamma=2, s=1, n=2, D=2)
    with pytest.raises(at.InvalidValueError, match="variable"):
        at.compare("HC-T2a", "HC-T2b", "T", gamma=2, s=1, n=2, D=2, T=5)
    with pytest.raises(at.MissingSymbolError, match="gamma"):
        at.compare("HC-T2a", "HC-T2b", "T", s=1, n=2, D=2)
    # keyword forms keep working; values for symbols named like the parameters (b) are values
    assert at.compare("HC-T2a", "HC-T2b", variable="T", gamma=2, s=1, n=2, D=2).crossings == (56,)


@pytest.mark.parametrize(
    "call,error",
    [
        # (1/10)^(-10^9) = 10^(10^9): sympy computed this exactly and never returned
        (
            lambda: at.claim("HC-T2a").evaluate(epsilon="0.1", C=1, gamma="1e9"),
            at.errors.ValueRangeError,
        ),
        (
            lambda: at.claim("HC-T2a").evaluate(epsilon=0.1, C=1, gamma=1e9),
            at.errors.ValueRangeError,
        ),
        (
            lambda: at.claim("HC-T2a").evaluate_float(epsilon="1/2", C=1, gamma=10**30),
            at.errors.ValueRangeError,
        ),
        # parsing itself: a giant power and a giant literal are refused before they are computed
        (lambda: hc.evaluate(T="10**10**10", s=1, n=2, D=2), at.errors.ValueRangeError),
        (lambda: hc.evaluate(T="1e999999999", s=1, n=2, D=2), at.errors.ValueRangeError),
        (lambda: hc.evaluate(T=10**10**4, s=1, n=2, D=2), at.errors.ValueRangeError),
        (lambda: hc.evaluate(T="1/0", s=1, n=2, D=2), at.InvalidValueError),
        # M_min = C eps^(-k) with k ~ T/16 = 6e28
        (
            lambda: hc.evaluate("M_min", T="10**30", s=1, n=2, D=2, C=1, epsilon="1/2"),
            at.errors.ValueRangeError,
        ),
        (
            lambda: at.compare(
                "HC-T2a", "HC-T2b", "T", "value", gamma=10**6, s=1, n=2, D=2, C=1, epsilon="0.1"
            ),
            at.errors.ValueRangeError,
        ),
    ],
    ids=[
        "T2a-gamma-1e9-string",
        "T2a-gamma-1e9-float",
        "T2a-gamma-1e30",
        "T-10**10**10",
        "T-1e999999999",
        "T-int-10**10**4",
        "T-1/0",
        "M_min-T-10**30",
        "compare-gamma-1e6",
    ],
)
def test_huge_values_are_refused_quickly(call, error):
    with pytest.raises(error):
        _within_work_limit(call)


#: the most memory one evaluation or solve in these tests may allocate at its peak. The values
#: they refuse would need gigabytes if computed (10^(10^10), 2^(10^30)); what they compute (a
#: 1506-digit power, sympy's solve) needs well under this. Memory, not the clock: a loaded
#: machine cannot fail it.
MAX_WORK_BYTES = 64 * 2**20


def _within_work_limit(call):
    """``call()``, asserting that its peak of allocated memory stays under MAX_WORK_BYTES."""
    return within_peak(MAX_WORK_BYTES, call)


def test_the_work_limit_can_fail():
    with pytest.raises(AssertionError, match="allocated"):
        _within_work_limit(lambda: 1 << (8 * MAX_WORK_BYTES + 8))


def test_large_values_evaluate_quickly_and_exactly():
    _within_work_limit(_large_values_evaluate_exactly)


def _large_values_evaluate_exactly():
    # k = T/16 - 3/2 with T = 10^30 (s=1, n=2, D=2): 10^30/16 = 625 * 10^26, minus 3/2
    assert hc.evaluate(T="10**30", s=1, n=2, D=2) == 625 * sp.Integer(10) ** 26 - sp.Rational(3, 2)
    assert hc.is_vacuous(T=10**30, s=1, n=2, D=2) is False
    # 2^2000 has 603 digits: computed exactly. C/eps^gamma = 1/(1/2)^2000 = 2^2000
    assert at.claim("HC-T2a").evaluate(epsilon="1/2", C=1, gamma=2000) == sp.Integer(2) ** 2000
    # 2^5000 (1506 digits) is beyond the exact-power budget: a Float, correct to 25 digits
    v = at.claim("HC-T2a").evaluate(epsilon="1/2", C=1, gamma=5000)
    assert v.is_Float
    assert abs(sp.N(sp.log(v) / sp.log(2), 40) - 5000) < sp.Float("1e-20")
    # a tiny result is fine: eps^gamma = 10^(-10^9) would be an exact 10^9-digit denominator
    w = at.claim("HC-T2a").evaluate(epsilon=10, C=1, gamma="1e9")
    assert w.is_Float and w > 0
    assert abs(log10_abs(w) + 10**9) < 1e-6  # log10(10^(-10^9)) = -10^9


def test_solve_for_with_large_exponents_returns():
    # M_min = C eps^(-k) = 5 with C = 1 gives eps = 5^(-1/k). At s=20, n=64, D=21, T=10^6:
    # (n+1)s+1 = 1301, T/4 - s - D + 1 = 250000 - 40 = 249960, k = 249960/1301 - 1 = 248659/1301.
    # sympy expanded eps^(248659/1301) into a polynomial and never returned.
    _within_work_limit(_solve_with_large_exponents)


def _solve_with_large_exponents():
    sols = hc.solve_for("epsilon", "M_min", M_min=5, C=1, T=10**6, s=20, n=64, D=21)
    assert len(sols) == 1
    assert sp.simplify(sols[0] - sp.Integer(5) ** sp.Rational(-1301, 248659)) == 0
    # C/eps^gamma = 100 with C = 1, gamma = 10^6: eps = 100^(-1/10^6)
    sols = at.claim("HC-T2a").solve_for("epsilon", M_suff=100, C=1, gamma=10**6)
    assert len(sols) == 1
    assert abs(float(sols[0]) - 100 ** (-1e-6)) < 1e-12


def test_solve_for_rejects_a_value_for_the_unknown():
    with pytest.raises(at.InvalidValueError, match="solve_for"):
        hc.solve_for("T", k=0, T=5, s=1, n=2, D=2)


def test_expression_names_must_be_strings():
    with pytest.raises(at.UnknownSymbolError):
        hc.evaluate(["k"], T=64, s=1, n=2, D=2)
    with pytest.raises(at.UnknownSymbolError):
        hc.symbol(3)


def test_readme_examples_still_work():
    c = at.claim("HC-T2b")
    assert c.evaluate(T=64, s=1, n=2, D=2) == sp.Rational(5, 2)
    assert c.solve_for("T", k=0, s=1, n=2, D=2) == [24]
    assert c.solve_for("T", expr="k", equals=0, s=1, n=2, D=2) == [24]
    assert c.evaluate(expr="T0", T=64, s=1, D=2) == 14  # 64/4 - 1 - 2 + 1
    assert at.claim("HC-K1").asymptotic_exponent("beta", S=3, T=10) == -1


# --- solve_for keeps to the claim's regime --------------------------------------
def test_solve_for_drops_roots_outside_the_regime_and_names_them():
    """IF-T2's (1 + ln(βT))/β = 1e-2 at T = 64 has two positive roots (β ≈ 0.00575 and β ≈ 1227);
    the small one has βT ≈ 0.37, outside the claim's regime βT >= 1."""
    c = at.claim("IF-T2")
    e = c.expr("err_attn")
    beta, T = c.symbol("beta"), c.symbol("T")
    roots = c.solve_for("beta", err_attn="1/100", T=64)
    assert len(roots) == 1 and abs(float(roots[0]) - 1227.13179333319) < 1e-6
    assert float(roots[0]) * 64 >= 1
    assert c.in_regime(beta=roots[0], T=64)
    assert len(roots.dropped) == 1
    ((small, why),) = roots.dropped
    assert why == "beta*T >= 1" and float(small) * 64 < 1
    # the dropped root does solve the equation: it is left out for the regime, not for accuracy
    for r in (roots[0], small):
        assert abs(float(e.subs({beta: r, T: 64})) - 1e-2) < 1e-12
    # and it is said: in the note and in the repr
    assert "beta*T >= 1" in roots.note and "0.00574" in roots.note
    assert "dropped" in repr(roots) and repr(roots).count("\n") == 0
    assert roots == [roots[0]]  # still compares as the list of kept roots


def test_solve_for_keeps_every_root_inside_the_regime():
    c = at.claim("IF-T2")
    roots = c.solve_for("beta", err_attn="1/10", T=1000)
    assert all(float(r) * 1000 >= 1 for r in roots)
    # where the regime cannot be decided (T has no value), nothing is dropped
    assert c.solve_for("beta", err_attn="1/100").dropped == ()
    # a claim whose regime the root meets: nothing dropped, a plain list's repr
    r = hc.solve_for("T", k=0, s=1, n=2, D=2)
    assert r == [24] and r.dropped == () and r.note is None and repr(r) == "[24]"


def test_a_catalogue_entry_with_an_unknown_or_missing_field_is_refused_by_name():
    from approxtheory.catalogue._build import SymbolTable

    P = SymbolTable("2510.06662")
    entry = dict(section="§1", kind="lemma", statement="s", provenance="stated")
    with pytest.raises(TypeError, match=r"X-1: unknown fields \['nots'\]; a claim is written"):
        P.claim("X-1", **entry, nots="")
    with pytest.raises(TypeError, match=r"unknown fields \['symbols'\]"):  # the table's own
        P.claim("X-1", **entry, symbols={})
    with pytest.raises(TypeError, match=r"X-1: missing fields \['provenance'\]"):
        P.claim("X-1", **{k: v for k, v in entry.items() if k != "provenance"})
    assert P.claim("X-1", **entry, depends_on=["HC-L1"]).depends_on == ("HC-L1",)
