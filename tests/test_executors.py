"""The runner's executors (issue 15): a process pool and Dask distributed give the same records
and the same CSV (bytes) as the in-process run; a worker killed mid-cell has its cell retried and
every cell is computed once; the cache is shared; bad input is one line, exit 2. Loopback only."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from approxtheory import experiment
from approxtheory.errors import ConfigError

NAME = "_executor_test"
#: a marker file: the cell x=3 kills its own (worker) process the first time it runs
KILL_ENV = "APPROXTHEORY_TEST_KILL_MARKER"
#: with this set to the cache folder, the cell x=3 first waits until the client has written the
#: cells its worker finished (their results are gathered), then dies
KILL_LATE_ENV = "APPROXTHEORY_TEST_KILL_LATE"
#: with this set, the cell x=3 kills its worker every time it runs
KILL_ALWAYS_ENV = "APPROXTHEORY_TEST_KILL_ALWAYS"

#: (x, seed) of the cells this process finished
_DONE_HERE: list[tuple[int, int]] = []


def _wait_written(cells_dir: Path, done: list, timeout: float = 60.0) -> None:
    """Until every cell of ``done`` is in the cache folder, then one more second (for the
    client's release of those results to reach the scheduler)."""
    t_end = time.time() + timeout
    while time.time() < t_end:
        have = set()
        for p in cells_dir.glob("*.json"):
            try:
                r = json.loads(p.read_text())
                have.add((r["x"], r["seed"]))
            except (OSError, ValueError, KeyError):
                pass
        if set(done) <= have:
            break
        time.sleep(0.05)
    time.sleep(0.5)


def cheap_cell(cfg: dict) -> dict:
    """A cheap, pure cell; with ``KILL_ENV`` set, cell x=3 kills its worker once (every time
    for seed 0 with ``KILL_ALWAYS_ENV``) and every finished cell appends its (x, seed) to a log."""
    marker = os.environ.get(KILL_ENV)
    always = os.environ.get(KILL_ALWAYS_ENV) and cfg["seed"] == 0
    if marker and cfg["x"] == 3 and (always or not Path(marker).exists()):
        if os.environ.get(KILL_LATE_ENV):
            _wait_written(Path(os.environ[KILL_LATE_ENV]), _DONE_HERE)
        Path(marker).write_text("killed once")
        os._exit(1)
    import random

    r = random.Random(cfg["seed"] * 1000 + cfg["x"])
    rec = {"y": cfg["x"] ** 2 + cfg["seed"], "noise": round(r.random(), 12), "dev": cfg["device"]}
    if marker:
        with open(Path(marker).with_suffix(".runs"), "a") as f:
            f.write(json.dumps([cfg["x"], cfg["seed"]]) + "\n")
        _DONE_HERE.append((cfg["x"], cfg["seed"]))
    return rec


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


def _run_json(root: Path) -> dict:
    return json.loads((root / NAME / "quick.json").read_text())


def _same_as_inprocess(tmp_path: Path, **kw) -> dict:
    """The records and CSV bytes of the in-process run; the executor only in the run JSON (with
    the other run-dependent fields: timings, git); returns that entry."""
    ref = _run(tmp_path / "ref")
    got = _run(tmp_path / "got", **kw)
    assert got["computed"] == got["cells"] == ref["cells"] == 12
    assert Path(got["csv"]).read_bytes() == Path(ref["csv"]).read_bytes()
    assert _records(tmp_path / "got") == _records(tmp_path / "ref")
    assert _run_json(tmp_path / "ref")["executor"] == {
        "name": "inprocess",
        "workers": 1,
        "scheduler": None,
    }
    where = _run_json(tmp_path / "got")["executor"]
    assert where == got["executor"] and where["name"] == kw["executor"]
    again = _run(tmp_path / "got", **kw)  # the cache is the source of completed cells
    assert again["computed"] == 0 and again["cached"] == 12
    return where


def test_pool_gives_the_inprocess_records_and_csv(exp, tmp_path):
    where = _same_as_inprocess(tmp_path, executor="pool", workers=2)
    assert where == {"name": "pool", "workers": 2, "scheduler": None}


@pytest.mark.filterwarnings("ignore")
def test_dask_gives_the_inprocess_records_and_csv(exp, tmp_path, dask_cluster):
    addr = dask_cluster.scheduler_address
    where = _same_as_inprocess(tmp_path, executor="dask", scheduler=addr)
    assert where == {"name": "dask", "workers": 2, "scheduler": addr}


def _count_writes(monkeypatch) -> list[str]:
    """Every cache write of the runner (the client), by path."""
    writes: list[str] = []
    real = experiment.atomic_write_checked_json

    def counting(path, obj):
        writes.append(str(path))
        return real(path, obj)

    monkeypatch.setattr(experiment, "atomic_write_checked_json", counting)
    return writes


def _kill_one(tmp_path: Path, monkeypatch, late: bool, **kw) -> list:
    """One worker dies mid-cell (x=3, seed 0 or 1, whichever runs first): every cell completes
    and is written to the cache exactly once, by the client, with the records and CSV of the
    in-process run. Returns the log of finished cells ((x, seed), one line per computation)."""
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ENV, str(marker))  # inherited by the worker processes
    if late:
        monkeypatch.setenv(KILL_LATE_ENV, str(tmp_path / "out" / NAME / "cells"))
    writes = _count_writes(monkeypatch)
    got = _run(tmp_path / "out", **kw)
    assert marker.exists(), "the kill never happened"
    assert got["complete"] and got["computed"] == got["cells"] == 12
    files = sorted(str(p) for p in (tmp_path / "out" / NAME / "cells").glob("*.json"))
    assert len(files) == 12 and sorted(writes) == files  # each cell written once
    runs = [
        tuple(json.loads(line)) for line in marker.with_suffix(".runs").read_text().splitlines()
    ]
    assert len(set(runs)) == 12
    monkeypatch.delenv(KILL_ENV)
    monkeypatch.delenv(KILL_LATE_ENV, raising=False)
    clean = _run(tmp_path / "clean")
    assert Path(got["csv"]).read_bytes() == Path(clean["csv"]).read_bytes()
    assert _records(tmp_path / "out") == _records(tmp_path / "clean")
    return runs


@pytest.mark.slow
def test_pool_retries_the_cell_of_a_killed_worker(exp, tmp_path, monkeypatch):
    """The pool: the killed cell is recomputed; here (the other cells done before the kill)
    nothing else is."""
    runs = _kill_one(tmp_path, monkeypatch, late=True, executor="pool", workers=2)
    assert len(runs) == 12, runs


@pytest.mark.filterwarnings("ignore")
def test_dask_retries_the_cell_of_a_killed_worker(exp, tmp_path, monkeypatch):
    """Dask, the worker dying after the client gathered its earlier results: only the killed
    cell is computed again (those results were released, so the scheduler redoes nothing)."""
    pytest.importorskip("distributed")
    runs = _kill_one(tmp_path, monkeypatch, late=True, executor="dask", workers=2)
    assert len(runs) == 12, runs


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_dask_worker_killed_before_its_results_are_gathered(exp, tmp_path, monkeypatch):
    """Dask, the worker dying at once (results it finished a moment before not yet gathered):
    the scheduler may recompute those too, and still every cell is written once."""
    pytest.importorskip("distributed")
    _kill_one(tmp_path, monkeypatch, late=False, executor="dask", workers=2)


def _kill_always(tmp_path: Path, monkeypatch) -> None:
    """The cell x=3, seed 0 kills its worker every time it runs."""
    monkeypatch.setenv(KILL_ENV, str(tmp_path / "killed"))
    monkeypatch.setenv(KILL_ALWAYS_ENV, "1")


def _lost_then_resumed(tmp_path: Path, monkeypatch, msg: str, **kw) -> None:
    """The error is one line naming the killing cell and how many cells are cached; they are,
    and a rerun (the cell fixed) computes the rest only."""
    assert "\n" not in msg and "x=3, seed=0, device=cpu" in msg, msg
    m = re.search(
        r"the (\d+) completed cells are cached and running the same command again "
        r"resumes from them",
        msg,
    )
    assert m, msg
    done = int(m.group(1))
    assert 0 < done < 12
    assert len(list((tmp_path / "out" / NAME / "cells").glob("*.json"))) == done
    monkeypatch.delenv(KILL_ALWAYS_ENV)
    monkeypatch.delenv(KILL_ENV)
    again = _run(tmp_path / "out", **kw)
    assert again["computed"] == 12 - done and again["cached"] == done and again["complete"]


@pytest.mark.slow
def test_pool_broken_too_often_is_one_typed_error(exp, tmp_path, monkeypatch):
    from approxtheory import executors

    monkeypatch.setattr(executors, "POOL_RESTARTS", 1)
    _kill_always(tmp_path, monkeypatch)
    with pytest.raises(executors.CellLostError) as err:
        _run(tmp_path / "out", executor="pool", workers=2)
    assert "the process pool broke 2 times" in str(err.value)
    _lost_then_resumed(tmp_path, monkeypatch, str(err.value), executor="pool", workers=2)


@pytest.mark.filterwarnings("ignore")
def test_cli_dask_cell_killing_its_workers_is_one_line_exit_2(
    exp, tmp_path, monkeypatch, capsys, dask_cluster
):
    """Beyond Dask's allowed-failures the KilledWorker is one line (exit 2, as for the other
    faults of the environment), not a traceback."""
    pytest.importorskip("distributed")  # its config defaults in before dask.config.set
    import dask

    from approxtheory.cli import main

    _kill_always(tmp_path, monkeypatch)
    args = ["experiment", "run", NAME, "--quiet", "--out", str(tmp_path / "out")]
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        code = main([*args, "--executor", "dask", "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("approxtheory: error: "), err
    assert "a Dask worker died while running it" in err and out == ""
    addr = dask_cluster.scheduler_address  # the rerun on the shared cluster
    _lost_then_resumed(tmp_path, monkeypatch, err.strip(), executor="dask", scheduler=addr)


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
