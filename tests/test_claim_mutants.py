"""Claim mutants: false copies of a claim generated from its sympy tree, and what `verify
--mutants` does with them. The expected expressions here are written by hand from the
rules in approxtheory/catalogue/mutate.py, not computed by the code under test."""

import json
import os

import pytest
import sympy as sp

from approxtheory import claim
from approxtheory.catalogue import _REGISTRY, overriding
from approxtheory.catalogue.mutate import claim_mutants, shift_rate
from approxtheory.proofs_check import CHECKS, MUTANTS, Verdict, _core
from approxtheory.verify import run_verify


def _by_kind(ms):
    return {m.name.split(":")[0]: m for m in ms}


def test_rate_mutants_are_the_stated_ones():
    # HC-K1: T e^-beta + (|S| - 1)/(e beta): beta^-1 -> beta^-2 and e^-beta -> e^-2beta
    c = claim("HC-K1")
    b, T, S = (c.symbol(k) for k in ("beta", "T", "S"))
    ms = _by_kind(claim_mutants(c))
    assert (
        sp.simplify(
            ms["rate+"].claim.expr("err_bound") - (T * sp.exp(-2 * b) + (S - 1) / (sp.E * b**2))
        )
        == 0
    )
    assert (
        sp.simplify(
            ms["rate-"].claim.expr("err_bound")
            - (T * sp.exp(-b / 2) + (S - 1) / (sp.E * sp.sqrt(b)))
        )
        == 0
    )
    # HC-T2b: M_min = C eps^-k -> C eps^-(k + 1/2)
    c = claim("HC-T2b")
    eps = c.symbol("epsilon")
    # (the sign of k is not decidable symbolically, so the two mutants move it by +-1/2)
    ms = _by_kind(claim_mutants(c))
    ratios = {
        t: sp.simplify(ms[t].claim.expr("M_min") / c.expr("M_min")) for t in ("rate+", "rate-")
    }
    assert ratios == {"rate+": sp.sqrt(eps), "rate-": 1 / sp.sqrt(eps)}


def test_shift_rate_leaves_a_formula_without_the_symbol_alone():
    x, y = sp.symbols("x y", positive=True)
    assert shift_rate(y**2 + 1, x, +1) == y**2 + 1
    assert shift_rate(x * y, x, +1) == x**2 * y
    assert shift_rate(x**3, x, -1) == x ** sp.Rational(5, 2)


@pytest.mark.parametrize(("slack", "factor"), [(None, 0.5), (1.0, 0.5), (4.0, 0.125)])
def test_the_scale_mutant_sits_below_the_worst_case_found(slack, factor):
    c = claim("HC-K1c")  # an upper bound
    m = _by_kind(claim_mutants(c, slack=slack))["scale"]
    ratio = sp.simplify(m.claim.expr() / c.expr())
    assert float(ratio) == pytest.approx(factor)
    assert ("not known to be false" in m.what) == (slack is None)


def test_the_scale_mutant_of_a_lower_bound_goes_above():
    c = claim("HC-T2b")
    ms = _by_kind(claim_mutants(c, slack=3.0))
    assert float(sp.simplify(ms["scale-up"].claim.expr() / c.expr())) == pytest.approx(6.0)
    assert "above the worst case" in ms["scale-up"].what


def test_the_regime_mutant_is_seeded_and_drops_one_condition():
    c = claim("ID-GQA4.9")
    assert len(c.regime) > 1
    a = _by_kind(claim_mutants(c, seed=0))["regime"]
    b = _by_kind(claim_mutants(c, seed=0))["regime"]
    assert a.name == b.name and len(a.claim.regime) == len(c.regime) - 1


def test_a_claim_without_a_formula_has_no_mutants():
    bare = [c for c in _REGISTRY.values() if not c.expressions]
    assert bare and claim_mutants(bare[0]) == []


def test_overriding_restores_the_claim_also_on_an_exception():
    c = claim("ID-T4.5")
    m = claim_mutants(c)[0]
    with pytest.raises(RuntimeError), overriding(m.claim):
        assert claim("ID-T4.5") is m.claim
        raise RuntimeError("boom")
    assert claim("ID-T4.5") is c


def test_the_mutant_records_whether_its_formula_was_read():
    m = claim_mutants(claim("ID-T4.5"))[0]
    assert not m.read
    m.claim.expr("ratio")
    assert m.read


# ----------------------------------------------------------------- verify --mutants, end to end


@pytest.fixture
def replace_check(monkeypatch):
    """Put a throwaway check in place of a real claim's check (restored afterwards)."""

    def put(cid, fn, mutants):
        monkeypatch.setitem(CHECKS, cid, CHECKS[cid])
        monkeypatch.setitem(MUTANTS, cid, MUTANTS[cid])
        del CHECKS[cid]
        _core.check(cid, mutants=mutants)(fn)

    return put


def _measured_ratio(ctx, H):
    # the "measurement": the unidentified fraction of a head count, known exactly here
    return 1 / (2 * H)


def _run(tmp_path, cid):
    rc = run_verify(only=[cid], out=tmp_path, progress=False, mutants=True, use_cache=False)
    assert rc == 0
    data = json.loads((tmp_path / "verdicts.json").read_text(encoding="utf-8"))
    return data["verdicts"][0], (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_check_that_reads_the_claim_flips_on_its_mutants(tmp_path, replace_check):
    def honest(ctx, cid):
        c = claim(cid)
        worst = max(
            abs(_measured_ratio(ctx, H) - c.evaluate_float("ratio", H=H)) for H in (1, 2, 4, 8)
        )
        v = "verified-numeric" if worst < 1e-12 else "refuted"
        broken = ctx.is_mutant("off") and "refuted"
        return Verdict(cid, broken or v, f"max deviation {worst:.3g}", scope="full")

    replace_check("ID-T4.5", honest, {"off": "the measurement off by one head"})
    rec, report = _run(tmp_path, "ID-T4.5")
    assert rec["verdict"] == "verified-numeric", rec["evidence"]
    got = {m["name"].split(":")[0]: m for m in rec["claim_mutants"]}
    assert got["scale"]["flips"] and got["rate+"]["flips"] and got["rate-"]["flips"]
    assert all(m["formula_read"] for m in rec["claim_mutants"])
    assert "claim mutants flipped" in report


def test_a_check_with_a_hard_coded_formula_is_downgraded(tmp_path, replace_check):
    def restated(ctx, cid):  # restates 1/(2H) instead of reading the catalogue
        worst = max(abs(_measured_ratio(ctx, H) - 1 / (2 * H)) for H in (1, 2, 4, 8))
        v = "verified-numeric" if worst < 1e-12 else "refuted"
        return Verdict(cid, "refuted" if ctx.is_mutant("off") else v, "ok", scope="full")

    replace_check("ID-T4.5", restated, {"off": "the measurement off by one head"})
    rec, report = _run(tmp_path, "ID-T4.5")
    assert rec["verdict"] == "consistent-empirical"
    assert "cannot tell a false claim" in rec["evidence"]
    assert "read none of the mutated formulas" in rec["claim_mutant_note"]
    assert not any(m["flips"] for m in rec["claim_mutants"])


def test_a_loose_bound_shows_its_slack_and_the_scale_mutant_still_flips(tmp_path, replace_check):
    """A bound 10x above the worst case: the rate mutants survive a loose bound only in the
    direction that loosens it, and the scale mutant (bound / (2 slack)) is below the worst case."""

    def loose(ctx, cid):
        c = claim(cid)
        rows = []
        for H in (1, 2, 4, 8):
            bound = 10 * c.evaluate_float("ratio", H=H)
            rows.append({"H": H, "sup_error": _measured_ratio(ctx, H), "claimed_bound": bound})
        ok = all(r["sup_error"] <= r["claimed_bound"] for r in rows)
        v = "verified-numeric" if ok and not ctx.is_mutant("off") else "refuted"
        return Verdict(cid, v, "measured within ten times the ratio", rows=rows, scope="full")

    replace_check("ID-T4.5", loose, {"off": "the measurement off by one head"})
    rec, report = _run(tmp_path, "ID-T4.5")
    assert rec["slack"] == pytest.approx(10.0)
    got = {m["name"].split(":")[0]: m for m in rec["claim_mutants"]}
    assert got["scale"]["flips"]
    assert not got["rate+"]["flips"] and not got["rate-"]["flips"]  # not false: loose bound
    assert rec["verdict"] == "verified-numeric" and "loose by x10" in rec["claim_mutant_note"]
    assert "slack 10" in report


def test_a_tight_bound_that_survives_every_rate_mutant_is_downgraded(tmp_path, replace_check):
    """The same check on a bound with no room (slack 1) that only tests the bound at H = 1,
    where 1/(2H) and its rate mutants agree: it cannot see the rate."""

    def one_point(ctx, cid):
        c = claim(cid)
        rows = [{"H": 1, "sup_error": 0.5, "claimed_bound": c.evaluate_float("ratio", H=1)}]
        ok = rows[0]["sup_error"] <= rows[0]["claimed_bound"] * (1 + 1e-12)
        v = "verified-numeric" if ok and not ctx.is_mutant("off") else "refuted"
        return Verdict(cid, v, "H = 1 only", rows=rows, scope="full")

    replace_check("ID-T4.5", one_point, {"off": "the measurement off by one head"})
    rec, _ = _run(tmp_path, "ID-T4.5")
    assert rec["slack"] == pytest.approx(1.0)
    assert rec["verdict"] == "consistent-empirical"
    assert "rate exponent moved either way" in rec["evidence"]


def test_a_memoised_measurement_sees_the_overridden_claim():
    calls = []

    @_core.memo
    def bound_at(H):
        calls.append(H)
        return claim("ID-T4.5").evaluate_float("ratio", H=H)

    assert bound_at(4) == pytest.approx(1 / 8)
    assert bound_at(4) == pytest.approx(1 / 8) and calls == [4]  # memoised
    scaled = _by_kind(claim_mutants(claim("ID-T4.5")))["scale"]
    with overriding(scaled.claim):
        assert bound_at(4) == pytest.approx(1 / 16)  # not the true claim's cached value
    assert bound_at(4) == pytest.approx(1 / 8) and len(calls) == 2


def test_a_lemma_constant_may_fail_in_either_direction(tmp_path, replace_check):
    """HC-L7's R_0 is a radius within which the lemma holds: a larger radius is the false
    claim. A check that fails on the doubled radius (and not on the halved one) is not
    downgraded; the kind does not say the side, so either direction counts."""
    c0 = claim("HC-L7")
    assert c0.kind not in ("upper", "lower")
    true_radius = 0.5  # delta_min = 1

    def radius_check(ctx, cid):
        r = claim(cid).evaluate_float(c0.primary_name, delta_min=1)
        ok = r <= true_radius * (1 + 1e-12) and not ctx.is_mutant("off")
        return Verdict(cid, "verified-numeric" if ok else "refuted", f"R_0 {r}", scope="full")

    replace_check("HC-L7", radius_check, {"off": "the radius doubled in the check"})
    rec, _ = _run(tmp_path, "HC-L7")
    got = {m["name"].split(":")[0]: m["flips"] for m in rec["claim_mutants"]}
    assert got["scale-up"] and not got["scale"]
    assert "formula halved and doubled" not in rec["evidence"]


def test_a_claim_without_a_check_is_an_error_record_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.delitem(CHECKS, "ID-T4.5")
    rc = run_verify(only=["ID-T4.5"], out=tmp_path, progress=False, use_cache=False)
    rec = json.loads((tmp_path / "verdicts.json").read_text(encoding="utf-8"))["verdicts"][0]
    assert rc == 1 and rec["verdict"] == "error" and "no check is registered" in rec["evidence"]


def test_a_formula_with_an_unspecified_constant_has_no_required_scale_mutant():
    c = claim("HC-T2a")  # M_suff = C / eps^gamma, C = C_{d,D,T} unspecified
    scale = [m for m in claim_mutants(c, slack=1.5) if m.kind == "scale"]
    assert scale and not any(m.required for m in scale)
    assert all("unspecified constant C" in m.what for m in scale)


def test_a_claim_that_is_no_bound_is_scaled_past_its_room_both_ways():
    c = claim("HC-L7")  # a lemma's radius: the catalogue does not say its side
    ms = _by_kind(claim_mutants(c, slack=2.0))
    assert float(sp.simplify(ms["scale"].claim.expr() / c.expr())) == pytest.approx(0.25)
    assert float(sp.simplify(ms["scale-up"].claim.expr() / c.expr())) == pytest.approx(4.0)
    assert ms["scale"].required and ms["scale-up"].required
    up = _by_kind(claim_mutants(claim("HC-K1c"), slack=2.0))  # an upper bound
    assert up["scale"].required and not up["scale-up"].required


def test_a_claim_independent_memo_is_not_recomputed_under_an_override():
    calls = []

    @_core.memo
    def grid(n):  # a measurement that reads no claim
        calls.append(n)
        return [i * i for i in range(n)]

    @_core.memo
    def bound_of_grid(n):  # reads the catalogue on top of a memoised measurement
        return sum(grid(n)) * claim("ID-T4.5").evaluate_float("ratio", H=1)

    assert bound_of_grid(4) == pytest.approx(7.0)
    scaled = _by_kind(claim_mutants(claim("ID-T4.5")))["scale"]
    with overriding(scaled.claim):
        assert bound_of_grid(4) == pytest.approx(3.5)  # recomputed: it read the claim
        assert grid(4) == [0, 1, 4, 9]
    assert calls == [4]  # the measurement itself ran once
    assert bound_of_grid(4) == pytest.approx(7.0)


def test_a_record_without_slack_says_why(tmp_path, replace_check):
    def exact(ctx, cid):
        ok = claim(cid).evaluate_float("ratio", H=2) == 0.25 and not ctx.is_mutant("off")
        return Verdict(cid, "verified-numeric" if ok else "refuted", "exact", scope="full")

    replace_check("ID-T4.5", exact, {"off": "the measurement off by one head"})
    rec, report = _run(tmp_path, "ID-T4.5")
    assert rec["slack"] is None and "no room to measure" in rec["slack_note"]
    assert "no slack: an exact ratio" in report


def test_claim_mutants_are_the_same_under_any_string_hash():
    """The mutants' names and texts do not follow PYTHONHASHSEED (a set's iteration order):
    HC-P11's rate mutant named beta_fit or delta_fit by the hash before."""
    import subprocess
    import sys

    code = (
        "from approxtheory.catalogue import _REGISTRY, claim\n"
        "from approxtheory.catalogue.mutate import claim_mutants\n"
        "for cid in ('HC-P11', 'HC-X1', 'IF-T2', 'TO-T1'):\n"
        "    for m in claim_mutants(claim(cid)):\n"
        "        print(cid, m.name, m.what)\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (0, 1, 2, 3)
    }
    assert len(outs) == 1 and "HC-P11" in next(iter(outs))
