"""Numeric verdicts use both sides: a grid cell's search value (a lower bound
on the supremum) never exceeds its certified upper bracket, and where one does the check fails
loudly instead of reporting a verdict; cells of softmax retrieval heads are bracketed at any T."""

from __future__ import annotations

import pytest

from approxtheory.constructions import Construction
from approxtheory.proofs_check._core import construction_grid


def test_softmax_retrieval_cells_are_two_sided_beyond_t16():
    rows, _ = construction_grid("softmax_retrieval", {"T": [64], "beta": [100.0]}, budget=64)
    (r,) = rows
    assert r["sup_error_upper"] is not None and r["certified"]
    assert r["sup_error"] <= r["sup_error_upper"] <= r["claimed_bound"]


def test_a_bracket_below_the_found_value_is_an_error_not_a_verdict(monkeypatch):
    real = Construction.certify

    def unsound(self, *a, **k):  # a planted unsound bracket: half of what it should be
        out = dict(real(self, *a, **k))
        out["sup_error_upper"] = out["sup_error_upper"] * 0.5
        return out

    monkeypatch.setattr(Construction, "certify", unsound)
    with pytest.raises(AssertionError, match="above the certified upper bracket"):
        construction_grid("softmax_retrieval", {"T": [64], "beta": [100.0]}, budget=64)


# ------------------------------------------------------------------ certified verdicts (item 2)
def _verdict_of(rows):
    """A verdict through the framework's finishing step (``_call``), as a check returns it."""
    from approxtheory.proofs_check._core import Context, Verdict, _call

    def fn(ctx, cid):
        return Verdict(cid, "verified-numeric", "checked", covered="a grid", rows=rows)

    return _call(fn, "TEST-CERTIFIED", Context())


def _planted_above(monkeypatch, factor=2.0):
    """Every bracket planted at ``factor`` x the claimed bound (sound: above the found value;
    not certified: above the claimed bound)."""

    def planted(self, *a, **k):
        return {"sup_error_upper": factor * self.claimed_bound, "sup_error_upper_reason": "planted"}

    monkeypatch.setattr(Construction, "certify", planted)


def test_all_cells_certified_say_certified():
    rows, _ = construction_grid("softmax_retrieval", {"T": [4, 64], "beta": [100.0]}, budget=32)
    v = _verdict_of(rows)
    c = v.certified
    assert c is not None and c["all"] and (c["cells"], c["of"], c["bracketed"]) == (2, 2, 2)
    assert c["gaps"] == [] and "certified in every cell" in v.covered
    assert [t["cell"] for t in c["table"]] == ["T=4, beta=100", "T=64, beta=100"]
    for t, r in zip(c["table"], rows):
        assert t["ok"] and t["found"] == r["sup_error"] and t["certified"] == r["sup_error_upper"]
        assert t["found"] <= t["certified"] <= t["claimed"] == r["claimed_bound"]


def test_a_planted_cell_above_the_claimed_bound_is_not_certified(monkeypatch):
    _planted_above(monkeypatch)
    rows, _ = construction_grid("softmax_retrieval", {"T": [64], "beta": [100.0]}, budget=32)
    (r,) = rows
    assert r["certified"] is False and r["sup_error_upper"] == 2 * r["claimed_bound"]
    v = _verdict_of(rows)
    c = v.certified
    assert c is not None and not c["all"] and (c["cells"], c["of"], c["bracketed"]) == (0, 1, 1)
    assert c["table"][0]["ok"] is False
    # the gap (found <= claimed < certified) is reported, in the field and the covered text
    (g,) = c["gaps"]
    assert g["found"] <= g["claimed"] < g["certified"] == r["sup_error_upper"]
    assert "gap at T=64, beta=100: found" in v.covered and "search-based only" in v.covered


def test_some_cells_search_only(monkeypatch):
    from approxtheory.proofs_check import _core

    monkeypatch.setattr(_core, "CERTIFY_CELLS_STRUCTURED", 1)  # only the first cell bracketed
    rows, _ = construction_grid("softmax_retrieval", {"T": [4, 8], "beta": [100.0]}, budget=32)
    c = _verdict_of(rows).certified
    assert c is not None and (c["cells"], c["of"], c["bracketed"]) == (1, 2, 1) and not c["all"]
    assert c["table"][1]["certified"] is None and c["table"][1]["ok"] is False


def test_no_bracket_no_certified_field():
    rows, _ = construction_grid(
        "softmax_retrieval", {"T": [4], "beta": [100.0]}, budget=32, certify=False
    )
    v = _verdict_of(rows)
    assert v.certified is None and "two-sided" not in v.covered


def test_searched_only_verdict_records_every_cell_as_search_based(monkeypatch):
    from approxtheory.proofs_check import _core

    monkeypatch.setitem(_core.MUTANTS, "TEST-CERTIFIED", {"m": "a mutant"})
    rows, _ = construction_grid(
        "softmax_retrieval", {"T": [4], "beta": [100.0]}, budget=32, certify=False
    )
    v = _verdict_of(rows)
    c = v.certified
    assert v.verdict == "verified-numeric"
    assert c["bracketed"] == 0 and c["cells"] == 0 and c["of"] == 1 and not c["all"]
    assert c["table"][0]["certified"] is None and c["table"][0]["ok"] is False
    assert "search-based in all 1 cells" in v.covered and "two-sided" not in v.covered
    from approxtheory.verify import _certified_ok

    assert _certified_ok(c)


def test_the_record_carries_the_certified_field_and_the_cache_checks_its_shape():
    from types import SimpleNamespace

    from approxtheory.verify import _certified_ok, _record

    rows, _ = construction_grid("softmax_retrieval", {"T": [4], "beta": [100.0]}, budget=32)
    v = _verdict_of(rows).to_dict()
    c = SimpleNamespace(id="X", paper="p", kind="upper", statement="s", provenance="d")
    rec = _record(c, v, "k")
    assert rec["certified"]["all"] is True and _certified_ok(rec["certified"])
    assert _certified_ok(None)
    bad = dict(rec["certified"], cells=5)  # more certified cells than cells
    assert not _certified_ok(bad)
    assert not _certified_ok(dict(rec["certified"], table="x"))
    assert not _certified_ok({"cells": 1})


# ------------------------------------------------------------------------- frontier (item 1)
def test_the_frontier_is_deterministic_and_sound():
    from approxtheory.bench.bracket import FrontierCase, run_frontier_case

    case = FrontierCase("hc_l9 ε=0.25", "hc_l9", "HC-L9", {"eps": 0.25})

    def strip(f):
        return {**f, "steps": [{k: v for k, v in s.items() if k != "seconds"} for s in f["steps"]]}

    a = run_frontier_case(case, boxes=300, Ts=(2, 4, 8))
    b = run_frontier_case(case, boxes=300, Ts=(2, 4, 8))
    assert strip(a) == strip(b)
    steps = a["steps"]
    assert steps and all(s["found"] <= s["certified"] for s in steps)
    assert all(s["work"] < 2 * 300 for s in steps)  # the box budget (the last round overshoots)
    ok = [s["T"] for s in steps if s["certifies"]]
    # the frontier is the last certified T before the first one that is not
    assert a["frontier_T"] == (ok[-1] if ok else None)
    assert all(s["certifies"] for s in steps[:-1])
    if not steps[-1]["certifies"]:
        assert "> claimed" in a["reason"]
    assert a["frontier_T"] == 2  # (1 - 1/2)/n_g = 0.125 closes in 61 boxes; T = 4 does not in 300


def test_a_frontier_stops_with_the_bracket_s_reason():
    """The causal truncation head (TO-C1) is bracketed now (exact at the root box),
    and the one-hot induction head (IF-K3) is enumerated up to the budget: its frontier stops
    at the last T enumerated, with the budget as the reason."""
    from approxtheory.bench.bracket import FrontierCase, bench_bracket, run_frontier_case

    res = bench_bracket(only="svd_truncation")
    assert res["rows"] == [] and res["frontier"] is None
    f = run_frontier_case(
        FrontierCase("svd_truncation k=1", "svd_truncation", "TO-C1", {"k": 1}),
        boxes=64,
        Ts=(4, 8),
    )
    assert f["frontier_T"] == 8 and all(s["found"] <= s["certified"] for s in f["steps"])
    f = run_frontier_case(
        FrontierCase("if_induction d=4", "if_induction", "IF-K3", {}), boxes=64, Ts=(4, 16)
    )
    assert f["frontier_T"] == 4 and "budget" in f["reason"]
