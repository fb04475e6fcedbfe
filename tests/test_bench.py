"""Benchmarks produce well-formed figures (no timing is asserted here)."""

import json

import pytest

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


def test_bench_threads_settings_and_summary(tmp_path):
    """``bench threads`` runs each setting as a subprocess with its thread environment (none of
    the thread variables for ``default``), interleaved; medians and default/best per workload."""
    import ast
    import os
    import sys

    from approxtheory.bench.threads import SETTINGS, bench_threads

    log = tmp_path / "env.txt"
    code = (
        "import os, sys; open(sys.argv[1], 'a').write("
        "repr((os.environ.get('APPROXTHEORY_THREADS'), os.environ.get('OMP_NUM_THREADS'))) + '\\n')"
    )
    seen = []
    res = bench_threads(
        repeat=2,
        commands={"probe": ([sys.executable, "-c", code, str(log)], None)},
        progress=seen.append,
    )
    json.loads(json.dumps(res))
    assert [(r["workload"], r["setting"]) for r in res["rows"]] == [("probe", s) for s in SETTINGS]
    assert [r["setting"] for r in seen] == ["default", "1", "all", "1", "all", "default"]
    envs = [ast.literal_eval(line) for line in log.read_text().splitlines()]
    cpus = str(os.cpu_count() or 1)
    assert envs == [
        (None, None),
        ("1", None),
        (cpus, None),
        ("1", None),
        (cpus, None),
        (None, None),
    ]
    for r in res["rows"]:
        assert r["runs"] == 2 and r["wall_s"] > 0 and r["cpu_s"] >= 0
    (s,) = res["summaries"]
    assert s["wall"]["best"] in ("1", "all") and s["wall"]["ratio"] > 0
    assert len(res["load_before"]) == 3 and res["cpus"] == os.cpu_count()


def test_bench_threads_a_failing_run_is_one_line(capsys):
    import sys

    from approxtheory.bench.threads import bench_threads
    from approxtheory.errors import ApproxTheoryError

    with pytest.raises(ApproxTheoryError, match="exited 1: boom"):
        bench_threads(
            repeat=1,
            commands={"bad": ([sys.executable, "-c", "import sys; sys.exit('boom')"], None)},
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["--repeat", "0"],
        ["--repeat", "x"],
        ["--workload", "nope"],
        ["--budget", "0"],
        ["--timeout", "-1"],
    ],
)
def test_bench_threads_bad_input_one_line_exit_2(argv, capsys):
    from approxtheory.cli import main

    rc = main(["bench", "threads", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("approxtheory: error: "), err


@pytest.mark.slow
def test_bench_threads_construct_table(capsys):
    """The real workload, once per setting: the table, default/best and the load average."""
    from approxtheory.cli import main

    assert main(["bench", "threads", "--workload", "construct", "--repeat", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "construct: default/best wall" in out and "load average (1, 5, 15 min)" in out
    assert out.count("\nconstruct  ") == 3
