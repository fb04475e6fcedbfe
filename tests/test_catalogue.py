"""The claim catalogue: coverage of the digests, well-formed formulas, the papers' stated
properties (monotonicity, vacuity boundaries, exact ratios)."""

import re
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import approxtheory as at
from approxtheory.catalogue import KINDS, PAPERS, PROVENANCES

PAPERS_DIR = Path(__file__).resolve().parents[2] / "shared" / "papers"


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


@pytest.mark.skipif(not PAPERS_DIR.exists(), reason="digests live in ../shared/papers")
@pytest.mark.parametrize("fname,prefix", [("headcount.md", "HC"), ("tradeoffs.md", "TO"),
                                          ("infoflow.md", "IF"), ("identification.md", "ID")])
def test_every_id_defined_by_a_digest_is_a_claim(fname, prefix):
    text = (PAPERS_DIR / fname).read_text(encoding="utf-8")
    ids = set(re.findall(rf"\b{prefix}-[A-Za-z]+[0-9][0-9.]*[0-9a-z]?\b", text))
    ids = {i.rstrip(".") for i in ids}
    known = {c.id for c in at.claims()}
    # TO-R names the group of rules R1-R3, catalogued one by one
    missing = {i for i in ids if i not in known and not (i == "TO-R")}
    assert not missing, f"ids in {fname} without a claim: {sorted(missing)}"
    if prefix == "TO":
        assert {"TO-R1", "TO-R2", "TO-R3"} <= known


def test_symbols_are_declared_and_expressions_use_only_them():
    for c in at.claims():
        declared = {s for s, _ in c.symbols.values()}
        for name, e in c.expressions.items():
            assert isinstance(e, sp.Basic), (c.id, name)
            assert e.free_symbols <= declared, (c.id, name)
        for r in c.regime:
            assert r.free_symbols <= declared


def _value_strategy(sym):
    """Small and large values alike, so that regimes such as n >= T*d or D1²+D2² <= T/50 are hit."""
    if sym.is_integer:
        lo = 0 if sym.is_nonnegative and not sym.is_positive else 1
        return st.one_of(st.integers(lo, 6), st.integers(lo, 3000)).map(sp.Integer)
    fr = st.fractions(min_value=sp.Rational(1, 8), max_value=50, max_denominator=8)
    if sym.is_nonnegative and not sym.is_positive:
        fr = st.fractions(min_value=0, max_value=1, max_denominator=8)
    elif not sym.is_positive:
        fr = st.fractions(min_value=-5, max_value=5, max_denominator=8)
    return fr.map(lambda f: sp.Rational(f.numerator, f.denominator))


FORMULA_CLAIMS = [c for c in at.claims() if c.expressions]


@pytest.mark.parametrize("c", FORMULA_CLAIMS, ids=lambda c: c.id)
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_every_expression_evaluates_in_its_regime(c, data):
    values = {n: data.draw(_value_strategy(s), label=n) for n, (s, _) in c.symbols.items()}
    assume(c.in_regime(**values))
    for name, e in c.expressions.items():
        needed = {s.name: values[s.name] for s in e.free_symbols}
        v = c.evaluate(name, **needed)
        assert v.is_number, (name, v)
        f = complex(sp.N(v))
        assert f == f, (name, v)  # not NaN


# --- HC-T2b: the paper's monotonicity and the vacuity boundary -----------------------------------
hc = at.claim("HC-T2b")
ints = st.integers


@given(T=ints(1, 2000), s=ints(1, 20), n=ints(1, 64), D=ints(2, 40))
def test_hc_t2b_exponent_monotone(T, s, n, D):
    assume(s < D)
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
    assert hc.evaluate(T=64, s=1, n=2, D=2) == sp.Rational(5, 2)
    k = hc.expr("k")
    assert sp.simplify(hc.rate_exponent() - k) == 0
    eps = hc.symbol("eps")
    assert sp.simplify(hc.exponent("epsilon", expr="M_min") + k) == 0
    assert hc.exponent("epsilon", expr="T0") == 0
    # slope of k in T is 1/(4((n+1)s+1)), derived in HC-P6 from the same expression
    n, s = hc.symbol("n"), hc.symbol("s")
    assert sp.simplify(at.claim("HC-P6").expr("slope_in_T") - 1 / (4 * ((n + 1) * s + 1))) == 0
    assert eps.is_positive


def test_solve_for_gives_real_thresholds_for_integer_symbols():
    # k = 1/3 is reached between integers: the threshold is returned, not dropped
    assert hc.solve_for("T", k=sp.Rational(1, 3), s=1, n=2, D=2) == [sp.Rational(88, 3)]
    assert hc.evaluate(T=sp.Rational(88, 3).ceiling(), s=1, n=2, D=2) > sp.Rational(1, 3)


def test_hc_t2b_paper_examples_of_boundary():
    # digest: n=8, D=4 needs T > 56 (s=1), 96 (s=2), 136 (s=3); n=2,D=2,s=1: 24; n=1: 20
    for (n, D, s, b) in [(8, 4, 1, 56), (8, 4, 2, 96), (8, 4, 3, 136), (2, 2, 1, 24),
                         (1, 2, 1, 20)]:
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
    assert sp.simplify(at.claim("ID-RG").expr("ratio")
                       - G * (E + H) / (2 * E * H * (G + H))) == 0
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
    # k(T) = gamma at the crossing, computed from the catalogue's own solve
    assert list(cmp.crossings) == hc.solve_for("T", k=2, s=1, n=2, D=2)
    assert cmp.regions[0][2] == "a" and cmp.regions[-1][2] == "b"
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
