"""Benchmarks produce well-formed figures (no timing is asserted here)."""

import json

from approxtheory.bench.model import bench_model, bench_planted


def test_bench_model_rows_and_equal_outputs():
    rows = bench_model(Ts=(8,), hs=(1, 2), batch=16, reps=1)
    for r in rows:
        for key in ("T", "h", "model_seq_per_s", "reference_seq_per_s", "ratio"):
            assert key in r
        assert r["max_abs_diff"] < 1e-12  # same computation as the raw SDPA reference
    json.dumps(rows)


def test_bench_search_is_json_serialisable():
    s = bench_planted(max_budget=16)
    d = json.loads(json.dumps(s))
    assert d["true_sup"] > 0 and d["rows"]


def test_bench_search_rows_and_json(capsys):
    from approxtheory.cli import main

    rc = main(["bench", "search", "--json", "--only", "hc_l9 T=4 ε=0.1", "--threads", "1"])
    out = capsys.readouterr().out
    res = json.loads(out)
    assert rc == 0 and len(res["rows"]) == 1
    row = res["rows"][0]
    assert abs(row["known"] - 0.75 / 10) < 1e-15 and row["ratio"] >= 0.95
    assert row["upper"] is None or row["upper"] >= row["found"]


def test_bench_bracket_frontier_json(capsys):
    """``bench bracket --frontier --json``: a frontier section (a case the bracket does not
    support reports None with its reason, never a weaker claim); without the flag it is null."""
    from approxtheory.bench.bracket import FRONTIER_BOXES
    from approxtheory.cli import main

    rc = main(["bench", "bracket", "--json", "--frontier", "--only", "lag_head", "--threads", "1"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["rows"] == []
    (f,) = res["frontier"]
    # causal heads are bracketed now; TO-X2 is a floor, which an upper bracket cannot certify
    assert f["claim"] == "TO-X2" and f["frontier_T"] is None and "lower bound" in f["reason"]
    assert f["budget_boxes"] == FRONTIER_BOXES
    rc = main(["bench", "bracket", "--json", "--only", "lag_head", "--threads", "1"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["frontier"] is None
    main(["bench", "bracket", "--frontier", "--only", "lag_head", "--threads", "1"])
    assert "frontier lag_head" in capsys.readouterr().out
