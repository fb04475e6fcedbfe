"""The runner's executors (issue 15): a process pool and Dask distributed give the same records
and the same CSV (bytes) as the in-process run; a worker killed mid-cell has its cell retried and
every cell is computed once; the cache is shared; bad input is one line, exit 2. Loopback only."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from approxtheory import experiment
from approxtheory.errors import ConfigError

NAME = "_executor_test"
#: a marker file: the cell x=3 kills its own (worker) process the first time it runs
KILL_ENV = "APPROXTHEORY_TEST_KILL_MARKER"


def cheap_cell(cfg: dict) -> dict:
    """A cheap, pure cell; with ``KILL_ENV`` set, cell x=3 kills its worker once."""
    marker = os.environ.get(KILL_ENV)
    if marker and cfg["x"] == 3 and not Path(marker).exists():
        Path(marker).write_text("killed once")
        os._exit(1)
    if marker:
        with open(Path(marker).with_suffix(".runs"), "a") as f:
            f.write(json.dumps([cfg["x"], cfg["seed"]]) + "\n")
    import random

    r = random.Random(cfg["seed"] * 1000 + cfg["x"])
    return {"y": cfg["x"] ** 2 + cfg["seed"], "noise": round(r.random(), 12), "dev": cfg["device"]}


@pytest.fixture
def exp(monkeypatch):
    experiment.load_plugins()  # before patching the registry (see test_packaging)
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    e = experiment.register_experiment(
        experiment.Experiment(
            name=NAME,
            description="cheap cells for the executor tests",
            grids={"quick": {"x": [1, 2, 3, 4, 5, 6]}, "full": {"x": [1, 2]}},
            cell=cheap_cell,
            seeds={"quick": [0, 1], "full": [0]},
        )
    )
    yield e


def _records(root: Path) -> list[dict]:
    recs = [json.loads(p.read_text()) for p in sorted((root / NAME / "cells").glob("*.json"))]
    return sorted(
        ({k: v for k, v in r.items() if k not in ("seconds", "_sha256")} for r in recs),
        key=lambda r: r["cell"],
    )


def _run(out: Path, **kw) -> dict:
    return experiment.run_experiment(NAME, out=out, progress=False, **kw)


@pytest.fixture(scope="module")
def dask_cluster():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    yield cluster
    cluster.close()


def _same_as_inprocess(tmp_path: Path, **kw) -> None:
    ref = _run(tmp_path / "ref")
    got = _run(tmp_path / "got", **kw)
    assert got["computed"] == got["cells"] == ref["cells"] == 12
    assert Path(got["csv"]).read_bytes() == Path(ref["csv"]).read_bytes()
    assert _records(tmp_path / "got") == _records(tmp_path / "ref")
    again = _run(tmp_path / "got", **kw)  # the cache is the source of completed cells
    assert again["computed"] == 0 and again["cached"] == 12


def test_pool_gives_the_inprocess_records_and_csv(exp, tmp_path):
    _same_as_inprocess(tmp_path, executor="pool", workers=2)


@pytest.mark.filterwarnings("ignore")
def test_dask_gives_the_inprocess_records_and_csv(exp, tmp_path, dask_cluster):
    _same_as_inprocess(tmp_path, executor="dask", scheduler=dask_cluster.scheduler_address)


def _kill_one(tmp_path: Path, monkeypatch, **kw) -> None:
    """One worker dies mid-cell: every cell still ends in the cache, written once by the client
    (``computed`` counts the writes). A cell may be computed twice: the results a dead worker
    held (Dask) or a broken pool had in flight are lost and recomputed, never written twice."""
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV, str(marker))  # inherited by the worker processes
    got = _run(tmp_path / "out", **kw)
    assert marker.exists(), "the kill never happened"
    assert got["complete"] and got["computed"] == got["cells"] == 12
    runs = [
        tuple(json.loads(line)) for line in marker.with_suffix(".runs").read_text().splitlines()
    ]
    assert len(set(runs)) == 12
    assert len(list((tmp_path / "out" / NAME / "cells").glob("*.json"))) == 12
    monkeypatch.delenv(KILL_ENV)
    clean = _run(tmp_path / "clean")
    assert Path(got["csv"]).read_bytes() == Path(clean["csv"]).read_bytes()
    assert _records(tmp_path / "out") == _records(tmp_path / "clean")


def test_pool_retries_the_cell_of_a_killed_worker(exp, tmp_path, monkeypatch):
    _kill_one(tmp_path, monkeypatch, executor="pool", workers=2)


@pytest.mark.filterwarnings("ignore")
def test_dask_retries_the_cell_of_a_killed_worker(exp, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    _kill_one(tmp_path, monkeypatch, executor="dask", workers=2)


@pytest.mark.filterwarnings("ignore")
def test_a_killed_client_resumes_from_the_shared_cache(exp, tmp_path, dask_cluster):
    kw = {"executor": "dask", "scheduler": dask_cluster.scheduler_address}
    first = _run(tmp_path, max_cells=5, **kw)
    assert first["computed"] == 5 and not first["complete"]
    rest = _run(tmp_path, **kw)
    assert rest["computed"] == 7 and rest["cached"] == 5 and rest["complete"]
    assert len(list((tmp_path / NAME / "cells").glob("*.json"))) == 12


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"executor": "pool", "workers": 0}, "--workers must be at least 1"),
        ({"executor": "ray"}, "unknown executor 'ray'"),
        ({"executor": "inprocess", "workers": 2}, "not inprocess"),
        ({"executor": "pool", "scheduler": "tcp://127.0.0.1:1"}, "--executor dask only"),
    ],
)
def test_bad_executor_input_is_a_config_error(exp, tmp_path, kw, words):
    with pytest.raises(ConfigError, match=words):
        _run(tmp_path, **kw)
    assert not (tmp_path / NAME / "quick.csv").exists()


@pytest.mark.filterwarnings("ignore")
def test_an_unreachable_scheduler_is_a_config_error(exp, tmp_path):
    pytest.importorskip("distributed")
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        _run(tmp_path, executor="dask", scheduler="tcp://127.0.0.1:1", connect_timeout=1)


def test_without_dask_the_dask_executor_says_how_to_install(exp, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    with pytest.raises(ConfigError, match=r"pip install 'approxtheory\[distributed\]'"):
        _run(tmp_path, executor="dask")


@pytest.mark.parametrize(
    "args",
    [
        ("--workers", "0"),
        ("--executor", "nope"),
        ("--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1"),
    ],
)
@pytest.mark.filterwarnings("ignore")
def test_cli_bad_executor_input_is_one_line_exit_2(tmp_path, capsys, args):
    from approxtheory.cli import main

    if "dask" in args:
        pytest.importorskip("distributed")
    code = main(["experiment", "run", "softmax_beta_sweep", "--out", str(tmp_path), *args])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("approxtheory: error: "), err
    assert out == ""


@pytest.mark.filterwarnings("ignore")
def test_cli_dask_run_writes_the_default_csv(exp, tmp_path, capsys, dask_cluster):
    from approxtheory.cli import main

    base = ["experiment", "run", NAME, "--quiet", "--out"]
    assert main([*base, str(tmp_path / "ref")]) == 0
    addr = dask_cluster.scheduler_address
    assert main([*base, str(tmp_path / "d"), "--executor", "dask", "--scheduler", addr]) == 0
    assert "12 computed" in capsys.readouterr().out
    csv = f"{NAME}/quick.csv"
    assert (tmp_path / "d" / csv).read_bytes() == (tmp_path / "ref" / csv).read_bytes()


def test_bench_sweep_counts_every_cell_once():
    from approxtheory.sweep_bench import bench_sweep

    r = bench_sweep(cells=6, cell_ms=1, executors=("inprocess",))
    (row,) = r["rows"]
    assert row["cells"] == 6 and row["cells_per_s"] > 0 and row["overhead_ms_per_cell"] >= -1


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_bench_sweep_cli_json(capsys):
    from approxtheory.cli import main

    assert main(["bench", "sweep", "--json", "--cells", "8", "--cell-ms", "1"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert [row["executor"] for row in r["rows"]] == ["inprocess", "pool", "dask"]
    assert all(row.get("cells") == 8 or "skipped" in row for row in r["rows"])
