"""The runner's executors: a process pool and Dask distributed give the same records
and the same CSV (bytes) as the in-process run; a worker killed mid-cell has its cell retried and
every cell is computed once; the cache is shared; bad input is one line, exit 2. Loopback only."""

from __future__ import annotations

import json
import os
import re
import shutil
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
    assert "the process pool broke 2 times (a worker died each time) while cell x=3" in str(
        err.value
    )
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
        ("--executor", "dask", "--scheduler", "tcp://127.0.0.1"),
        ("--executor", "dask", "--scheduler", "tcp://127.0.0.1:99999"),
        ("--executor", "dask", "--connect-timeout", "-1"),
        ("--workers", "2", "--scheduler", "tcp://127.0.0.1:1"),
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


def test_cli_without_dask_says_how_to_install_one_line_exit_2(tmp_path, capsys, monkeypatch):
    from approxtheory.cli import main

    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    args = ["experiment", "run", "softmax_beta_sweep", "--out", str(tmp_path)]
    assert main([*args, "--executor", "dask"]) == 2
    out, err = capsys.readouterr()
    assert err == (
        "approxtheory: error: --executor dask needs Dask distributed: "
        "pip install 'approxtheory[distributed]'\n"
    )
    assert out == "" and not (tmp_path / "softmax_beta_sweep").exists()


@pytest.mark.filterwarnings("ignore")
def test_cli_dask_run_writes_the_default_csv(exp, tmp_path, capsys):
    from approxtheory.cli import main

    base = ["experiment", "run", NAME, "--quiet", "--out"]
    assert main([*base, str(tmp_path / "ref")]) == 0
    # the command: no --scheduler, so a local cluster (one worker per core)
    assert main([*base, str(tmp_path / "d"), "--executor", "dask"]) == 0
    assert "12 computed" in capsys.readouterr().out
    csv = f"{NAME}/quick.csv"
    assert (tmp_path / "d" / csv).read_bytes() == (tmp_path / "ref" / csv).read_bytes()


def test_bench_sweep_counts_every_cell_once():
    from approxtheory.bench.sweep import bench_sweep

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


# ------------------------------------------------------------- cuda cells: one GPU per worker


def gpu_probe_cell(cfg: dict) -> dict:
    """What a cuda cell's worker sees: its CUDA_VISIBLE_DEVICES, its process and, on Dask, the
    GPU resource left while this cell holds it."""
    time.sleep(0.05)
    rec = {"visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}
    try:
        from distributed import get_worker

        rec["gpu_left"] = get_worker().state.available_resources.get("GPU")
    except (ImportError, ValueError):
        pass
    return rec


def _one_gpu_per_worker(run, ids: set) -> list[dict]:
    got = sorted(run, key=lambda t: t[0])
    assert [i for i, _, _ in got] == list(range(8))
    recs = [r for _, r, _ in got]
    by_pid: dict = {}
    for r in recs:
        by_pid.setdefault(r["pid"], set()).add(r["visible"])
    assert all(len(v) == 1 for v in by_pid.values()), by_pid  # a worker keeps its GPU
    seen = [next(iter(v)) for v in by_pid.values()]
    assert len(seen) == len(set(seen)) and set(seen) <= ids, by_pid  # no GPU shared
    return recs


CUDA_CFGS = [{"i": i, "seed": 0, "device": "cuda"} for i in range(8)]


@pytest.mark.slow
def test_pool_cuda_cells_get_one_gpu_per_worker(monkeypatch):
    from approxtheory.executors import compute_cells

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")  # this machine's GPUs, as torch sees them
    run = compute_cells(gpu_probe_cell, CUDA_CFGS, executor="pool", gpus=2)
    assert run.info == {"name": "pool", "workers": 2, "scheduler": None, "gpus": 2}
    _one_gpu_per_worker(run, {"5", "7"})


@pytest.mark.filterwarnings("ignore")
def test_dask_cuda_cells_get_one_gpu_per_worker_and_hold_it(monkeypatch):
    pytest.importorskip("distributed")
    from approxtheory.executors import compute_cells

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    run = compute_cells(gpu_probe_cell, CUDA_CFGS, executor="dask", gpus=2)
    assert run.info["workers"] == 2 and run.info["gpus"] == 2 and run.info["local_cluster"]
    recs = _one_gpu_per_worker(run, {"0", "1"})
    assert all(r["gpu_left"] == 0 for r in recs)  # each cell holds its worker's GPU=1


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_dask_local_cluster_without_gpus_does_not_wait_for_a_gpu_resource():
    """cuda cells on a plain local cluster (no ``gpus``: the API used directly) run there,
    instead of waiting forever for a GPU resource no worker offers."""
    pytest.importorskip("distributed")
    import threading

    from approxtheory.executors import compute_cells

    got: list = []
    run = compute_cells(gpu_probe_cell, CUDA_CFGS[:2], executor="dask", workers=1)
    t = threading.Thread(target=lambda: got.extend(run), daemon=True)
    t.start()
    t.join(timeout=120)
    assert not t.is_alive() and len(got) == 2


@pytest.mark.filterwarnings("ignore")
def test_dask_cuda_cells_need_gpu_workers(dask_cluster):
    from approxtheory.executors import compute_cells

    with pytest.raises(ConfigError, match="needs workers started with --resources GPU=1"):
        compute_cells(
            gpu_probe_cell, CUDA_CFGS, executor="dask", scheduler=dask_cluster.scheduler_address
        )


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
def test_cli_cuda_without_cuda_is_one_line_exit_2(tmp_path, capsys, executor):
    import torch

    from approxtheory.cli import main

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    args = ["experiment", "run", "softmax_beta_sweep", "--out", str(tmp_path), "--device", "cuda"]
    code = main([*args, "--executor", executor])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert err.startswith("approxtheory: error: --device cuda asked for, but torch sees no CUDA")
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------- the README's multi-node recipe, loopback


README = Path(__file__).parent.parent / "README.md"


def _recipe() -> list[str]:
    """The command lines of the README's first recipe, the TLS one: the cluster's CA
    and a certificate it signs (three openssl lines), the scheduler, a worker, the run."""
    section = README.read_text().split("### Sweeps on several machines", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [
        ln.split("  #", 1)[0].strip()
        for ln in block.splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    assert [ln.split()[:2] for ln in lines] == [
        ["openssl", "req"],
        ["openssl", "req"],
        ["openssl", "x509"],
        ["dask", "scheduler"],
        ["dask", "worker"],
        ["approxtheory", "experiment"],
    ], lines
    assert all("tls://HEAD:8786" in ln for ln in lines[4:]), lines
    assert all(
        "--tls-ca-file ca.pem --tls-cert node.pem --tls-key node.key" in ln for ln in lines[3:]
    )
    return lines


def _fingerprint() -> str:
    from approxtheory import provenance

    provenance.source_fingerprint.cache_clear()
    return provenance.source_fingerprint(experiment.KEY_PACKAGES)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc, timeout: float = 60.0) -> None:
    import socket

    t_end = time.time() + timeout
    while time.time() < t_end:
        assert proc.poll() is None, "the scheduler exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


@pytest.mark.slow  # about 80 s on the shared 2-core machine: certificates, 3 processes, 3 CLIs
@pytest.mark.filterwarnings("ignore")
def test_readme_multi_node_recipe_on_loopback(tmp_path, capsys):
    """The README's TLS recipe as written (HEAD = 127.0.0.1, a free port): the certificates made
    by its openssl lines, the scheduler and two workers started with the `dask` CLI, then
    `approxtheory experiment run ... --executor dask --scheduler tls://127.0.0.1:PORT --tls-*`
    as a command: the CSV of the in-process run. Without the certificate the same command is
    refused (one line, exit 2), and tcp:// to that port cannot connect."""
    pytest.importorskip("distributed")
    import shlex
    import subprocess

    from approxtheory.cli import main

    port = _free_port()
    small = "softmax_beta_sweep --set T=16"  # 3 cells of the quick profile
    bindir = Path(sys.executable).parent

    def argv(line: str) -> list[str]:
        line = line.replace("HEAD", "127.0.0.1").replace("8786", str(port))
        line = line.replace("headcount_phase --profile full", small)
        words = shlex.split(line)
        exe = shutil.which(words[0]) if words[0] == "openssl" else str(bindir / words[0])
        return [exe, *words[1:]]

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command")
    *make_certs, sched, worker, run = _recipe()
    assert "headcount_phase --profile full" in run
    certs = tmp_path / "certs"
    certs.mkdir()
    for line in make_certs:
        subprocess.run(argv(line), cwd=certs, check=True, capture_output=True, timeout=120)
    before = _fingerprint()  # the in-process run first, with the source as it is now
    ref = ["experiment", "run", *small.split(), "--quiet", "--out", str(tmp_path / "ref")]
    assert main(ref) == 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = []
    log = (tmp_path / "dask.log").open("w")
    try:
        kw = {"stdout": log, "stderr": log, "env": env, "cwd": certs}
        procs.append(subprocess.Popen(argv(sched), **kw))
        _wait_for_port(port, procs[0])
        for _ in range(2):
            procs.append(subprocess.Popen(argv(worker), **kw))
        cmd = [*argv(run), "--quiet", "--out", str(tmp_path / "d")]
        run_kw = {"capture_output": True, "text": True, "env": env, "cwd": certs, "timeout": 300}
        out = subprocess.run(cmd, **run_kw)
        assert out.returncode == 0, out.stderr
        assert "3 cells (3 computed, 0 cached)" in out.stdout, out.stdout
        no_cert = cmd[: cmd.index("--tls-ca-file")] + ["--out", str(tmp_path / "n")]
        out = subprocess.run(no_cert, **run_kw)
        assert out.returncode == 2 and "needs --tls-ca-file" in out.stderr, out.stderr
        plain = [a.replace("tls://", "tcp://") for a in no_cert] + ["--connect-timeout", "20"]
        out = subprocess.run(plain, **run_kw)
        assert out.returncode == 2 and "cannot reach the Dask scheduler" in out.stderr, out.stderr
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()
    csv = "softmax_beta_sweep/quick.csv"
    got, want = (tmp_path / "d" / csv).read_bytes(), (tmp_path / "ref" / csv).read_bytes()
    if _fingerprint() == before:
        assert got == want
    else:  # the source changed while the test ran (a shared work tree): so did the cell keys
        drop = [ln.rsplit(b",", 1)[0] for ln in want.splitlines()]
        assert want.splitlines()[0].endswith(b",cell")
        assert [ln.rsplit(b",", 1)[0] for ln in got.splitlines()] == drop
    where = json.loads((tmp_path / "d" / "softmax_beta_sweep" / "quick.json").read_text())
    assert where["executor"] == {
        "name": "dask",
        "workers": where["executor"]["workers"],
        "scheduler": f"tls://127.0.0.1:{port}",
    }
    assert where["executor"]["workers"] in (1, 2)  # the second may still be joining


# ----------------------------------------------------- orphans: the pool dies with its client


def sleepy_cell(cfg: dict) -> dict:
    """Says which process runs it (a file named by its pid), then sleeps far longer than the
    test waits: only a worker that notices its client is gone ends."""
    Path(cfg["dir"], f"{os.getpid()}.pid").write_text("")
    time.sleep(3600)
    return {}


_ORPHAN_CLIENT = """
import sys
sys.path.insert(0, {tests!r})
from approxtheory.executors import compute_cells
from test_executors import sleepy_cell
cfgs = [{{"i": i, "dir": {d!r}}} for i in range(2)]
for _ in compute_cells(sleepy_cell, cfgs, executor="pool", workers=2):
    pass
"""


def _children(pid: int) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                status = (d / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie has exited (PID 1 may not reap it here)


@pytest.mark.slow  # two spawned workers import torch: 10-30 s on the shared machine
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_killed_pool_client_leaves_no_workers_or_resource_tracker(tmp_path, sig):
    """SIGTERM or SIGKILL of a client running a pool: its worker processes (busy in a cell) and
    multiprocessing's resource tracker all exit (the workers watch their parent; the tracker
    ends when the last of them is gone), none is left running under PID 1."""
    import signal
    import subprocess

    code = _ORPHAN_CLIENT.format(tests=str(Path(__file__).parent), d=str(tmp_path))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    client = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.DEVNULL)
    try:
        t_end = time.time() + 240
        while len(list(tmp_path.glob("*.pid"))) < 2 and time.time() < t_end:
            assert client.poll() is None, "the client exited early"
            time.sleep(0.2)
        workers = {int(p.stem) for p in tmp_path.glob("*.pid")}
        assert len(workers) == 2, "the cells never started"
        kids = _children(client.pid)
        assert workers <= kids and len(kids) >= 3, kids  # the workers and the resource tracker
        client.send_signal(getattr(signal, sig))
        client.wait(timeout=60)
        t_end = time.time() + 60  # the workers poll every 0.25 s: a real orphan stays
        while any(_alive(p) for p in kids) and time.time() < t_end:
            time.sleep(0.2)
        left = sorted(p for p in kids if _alive(p))
        for p in left:  # do not leave them to the next test either
            os.kill(p, signal.SIGKILL)
        assert not left, f"still running after the client's {sig}: {left}"
    finally:
        if client.poll() is None:
            client.kill()
