"""Where a check reads a claim's formulas (approxtheory.catalogue.points) and the pivot mutants
that agree with the claim at every point read (approxtheory.catalogue.mutate.pivot_mutants):
a check that reads a formula at one value of a symbol cannot keep a verified verdict."""

from dataclasses import replace

import numpy as np
import pytest
import sympy as sp

from approxtheory import catalogue
from approxtheory.catalogue import claim
from approxtheory.catalogue._claim import Claim
from approxtheory.catalogue.mutate import pivot_mutants
from approxtheory.catalogue.points import blind_spots, merge, recording, summarize
from approxtheory.proofs_check import Context, Verdict


def test_evaluate_and_solve_for_are_recorded_with_their_values():
    c = claim("HC-T2b")
    with recording("HC-T2b") as log:
        c.evaluate(T=64, s=1, n=2, D=2)
        c.evaluate_float(T=128, s=1, n=4, D=2)
        c.solve_for("T", k=0, s=1, n=2, D=2)
        claim("HC-K1").evaluate(**{"S": 2, "T": 8, "beta": 10})  # another claim: not recorded
    s = summarize(log)
    assert list(s) == ["k"] and s["k"]["n"] == 3
    assert s["k"]["values"]["T"] == ["*"]  # solved for: varied by the solver
    assert s["k"]["fixed"] == {"D": "2", "s": "1"}
    assert s["k"]["values"]["n"] == ["2", "4"]


def test_subs_chains_and_lambdify_are_followed():
    c = claim("HC-T2b")
    T, s_, n, D = (c.symbol(x) for x in ("T", "s", "n", "D"))
    with recording("HC-T2b") as log:
        e = c.expr("k")
        f = sp.lambdify([T, n], e.subs(s_, 1).subs(D, 3))
        f(np.array([64.0, 128.0]), 2)
        unrelated = (T + 1).subs(T, 5)  # not derived from the claim: not recorded
    assert unrelated == 6
    got = summarize(log)["k"]
    assert got["fixed"] == {"D": "3", "n": "2", "s": "1"}
    assert got["values"]["T"] == ["128", "64"]


def test_the_patches_are_removed_on_leaving_also_on_an_error():
    before = (Claim.evaluate, Claim.expr, sp.Basic.subs, sp.lambdify)
    with pytest.raises(ZeroDivisionError):
        with recording("HC-T2b"):
            raise ZeroDivisionError
    assert (Claim.evaluate, Claim.expr, sp.Basic.subs, sp.lambdify) == before


def test_proportional_pairs_and_merge():
    log = [("U", {"D": 4, "D_r": 2, "H": 1}, None), ("U", {"D": 8, "D_r": 4, "H": 3}, None)]
    s = summarize(log)
    assert s["U"]["proportional"] == [["D", "D_r", "2"]]
    assert blind_spots(s) == [("proportional", "U", "D", "D_r", "2")]
    other = summarize([("U", {"D": 4, "D_r": 1, "H": 1}, None)])
    m = merge([s, other])
    assert m["U"]["proportional"] == [] and m["U"]["fixed"] == {}
    assert blind_spots(m) == []
    # a symbol fixed at two different values in two runs is varied
    a = summarize([("U", {"H": 1}, None)])
    b = summarize([("U", {"H": 2}, None)])
    assert merge([a, b])["U"]["fixed"] == {} and merge([a, a])["U"]["fixed"] == {"H": "1"}


def test_pivot_mutants_agree_where_read_and_differ_elsewhere():
    c = claim("ID-GQA4.9")
    spots = [("fixed", "ratio", "H", "2")]
    ms = pivot_mutants(c, spots)
    assert [m.name for m in ms] == ["pivot+:ratio:H", "pivot-:ratio:H"]
    assert all(m.kind == "pivot" and m.required for m in ms)
    for m in ms:
        assert m.claim.evaluate("ratio", G=1, H=2) == c.evaluate("ratio", G=1, H=2)
        assert m.claim.evaluate("ratio", G=1, H=4) != c.evaluate("ratio", G=1, H=4)
    loose = pivot_mutants(c, spots, slack=3.0)
    assert loose and not any(m.required for m in loose) and "loose" in loose[0].what


def _pipeline(fake_check, tmp_path, monkeypatch, cid, points):
    """A copy of ID-GQA4.9 under ``cid`` whose check reads its ratio at ``points`` (G, H)."""
    from approxtheory.verify import _Cache, _verify_claim

    c = replace(claim("ID-GQA4.9"), id=cid)
    monkeypatch.setitem(catalogue._REGISTRY, cid, c)

    def fn(ctx, cid_):
        cl = claim(cid_)
        ok = not ctx.is_mutant("broken")
        for G, H in points:  # the catalogue's own ratio is the reference
            want = claim("ID-GQA4.9").evaluate("ratio", G=G, H=H)
            ok &= cl.evaluate("ratio", G=G, H=H) == want
        return Verdict(cid_, "verified-numeric" if ok else "refuted", "ratio", scope="full")

    fake_check(cid, fn, mutants={"broken": "the comparison broken"})
    return _verify_claim(c, Context(), _Cache(tmp_path / ".cache", use=False), {}, True)


def test_a_check_reading_one_point_is_downgraded_by_the_pivot_mutants(
    fake_check, tmp_path, monkeypatch
):
    rec = _pipeline(fake_check, tmp_path, monkeypatch, "ZZ-ONEPT", [(1, 2)])
    assert "ratio: H read only at 2" in rec["blind_spots"]
    pivots = [m for m in rec["claim_mutants"] if m["kind"] == "pivot"]
    assert pivots and not any(m["flips"] for m in pivots)
    assert rec["verdict"] == "consistent-empirical"
    assert "reads H at one value only" in rec["evidence"]


def test_a_check_varying_every_symbol_has_no_blind_spot(fake_check, tmp_path, monkeypatch):
    rec = _pipeline(fake_check, tmp_path, monkeypatch, "ZZ-MANYPT", [(1, 2), (2, 4), (1, 3)])
    assert "blind_spots" not in rec
    assert not [m for m in rec["claim_mutants"] if m["kind"] == "pivot"]
    assert rec["verdict"] == "verified-numeric"


def test_the_report_cell_names_the_blind_spots():
    from approxtheory.report_page import mutant_notes

    notes = mutant_notes({"blind_spots": ["E0_over_E: H read only at 12"]})
    assert notes == [
        "read at one point only (pivot mutants made there): E0_over_E: H read only at 12"
    ]
    assert mutant_notes({}) == []
