"""The Dask trust boundary: the client connects only to a local cluster or a
loopback scheduler unless it is given TLS with mutual authentication (or ``--insecure-scheduler``);
with TLS a process without the cluster's certificate cannot connect (loopback, certificates made
here with ``openssl``); cell results travel as plain data (JSON text the client reads as msgpack,
never unpickles, and checks before it is used or cached), so a process that reaches the
scheduler and patches the workers' cell function cannot run code in the client that way; local
worker counts are capped at the cells and checked against the memory limit."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from approxtheory import executors
from approxtheory.errors import ConfigError, ResourceLimitError, ValueRangeError
from approxtheory.executors import (
    CellResultError,
    check_record,
    check_scheduler,
    compute_cells,
    local_workers,
)

CFGS = [{"x": x, "seed": 0, "device": "cpu"} for x in range(3)]


def square_cell(cfg: dict) -> dict:
    return {"y": cfg["x"] ** 2, "half": cfg["x"] / 2, "tag": f"x{cfg['x']}"}


def config_error_cell(cfg: dict) -> dict:
    raise ConfigError(f"x={cfg['x']} is not allowed here")


def buggy_cell(cfg: dict) -> dict:
    return {"y": 1 // (cfg["x"] - cfg["x"])}


# ------------------------------------------------------------------------ the address checks
@pytest.mark.parametrize(
    "address, want",
    [
        ("tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
        ("tcp://localhost:8786", "tcp://localhost:8786"),
        ("tcp://[::1]:8786", "tcp://[::1]:8786"),
        ("127.0.0.1:8786", "tcp://127.0.0.1:8786"),  # Dask's default scheme
        ("tcp://127.8.9.10:1", "tcp://127.8.9.10:1"),  # all of 127.0.0.0/8 is loopback
    ],
)
def test_loopback_tcp_schedulers_are_allowed(address, want):
    assert check_scheduler(address) == want


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"scheduler": "tcp://10.0.0.5:8786"}, "not on this machine"),
        ({"scheduler": "tcp://example.org:8786"}, "can run code on every machine"),
        ({"scheduler": "10.0.0.5:8786"}, "not on this machine"),
        ({"scheduler": "ucx://127.0.0.1:1"}, "the scheme ucx:// is not supported"),
        ({"scheduler": "ws://127.0.0.1:1"}, "the scheme ws:// is not supported"),
        ({"scheduler": "inproc://127.0.0.1/1/2"}, "not supported"),
        ({"scheduler": "tcp://127.0.0.1"}, "expected tcp://HOST:PORT"),
        ({"scheduler": "tcp://127.0.0.1:0"}, "a port from 1 to 65535"),
        ({"scheduler": "tcp://:8786"}, "expected tcp://HOST:PORT"),
        ({"scheduler": "tls://10.0.0.5:8786"}, "needs --tls-ca-file, --tls-cert and --tls-key"),
        ({"scheduler": None, "insecure_scheduler": True}, "--insecure-scheduler applies"),
        ({"scheduler": None, "tls": ("a", "b", "c")}, "apply to --scheduler tls://"),
        ({"scheduler": "tls://10.0.0.5:1", "tls": ("/nonexistent", "b", "c")}, "existing"),
    ],
)
def test_other_schedulers_are_refused_with_one_line(kw, words):
    with pytest.raises(ConfigError, match=words) as e:
        check_scheduler(**kw)
    assert "\n" not in str(e.value)


def test_insecure_scheduler_allows_a_remote_tcp_address_and_tls_needs_tls(tmp_path):
    assert check_scheduler("tcp://10.0.0.5:8786", insecure_scheduler=True) == "tcp://10.0.0.5:8786"
    files = []
    for name in ("ca.pem", "c.pem", "c.key"):
        (tmp_path / name).write_text("x")
        files.append(str(tmp_path / name))
    tls = tuple(files)
    assert check_scheduler("tls://10.0.0.5:8786", tls=tls) == "tls://10.0.0.5:8786"
    with pytest.raises(ConfigError, match="need a tls:// scheduler address"):
        check_scheduler("tcp://10.0.0.5:8786", tls=tls)
    with pytest.raises(ConfigError, match="not tls://"):
        check_scheduler("tls://10.0.0.5:8786", tls=tls, insecure_scheduler=True)


def _cli(args, capsys) -> tuple[int, str, str]:
    from approxtheory.cli import main

    code = main(["experiment", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--scheduler", "tcp://10.0.0.5:8786"], "whoever can connect to a Dask scheduler"),
        (["--scheduler", "ucx://127.0.0.1:1"], "the scheme ucx:// is not supported"),
        (["--scheduler", "tls://10.0.0.5:8786"], "needs --tls-ca-file"),
        (["--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1e308"], "(0, 600]"),
        (["--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "601"], "(0, 600]"),
        (["--workers", "99999999999999999999999"], "from 1 to 1024"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "has its own workers"),
        (["--tls-cert", "CERT"], "together (missing: --tls-ca-file, --tls-key)"),
        (["--insecure-scheduler"], "--insecure-scheduler applies to --scheduler tcp://"),
    ],
)
def test_cli_trust_boundary_is_one_line_exit_2(tmp_path, capsys, extra, words):
    pytest.importorskip("distributed")
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    extra = [str(cert) if a == "CERT" else a for a in extra]
    args = ["run", "softmax_beta_sweep", "--out", tmp_path / "o", "--executor", "dask", *extra]
    code, out, err = _cli(args, capsys)
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and err.startswith("approxtheory: error: "), err
    assert words in err, err
    assert not (tmp_path / "o" / "softmax_beta_sweep").exists()


@pytest.mark.filterwarnings("ignore")
def test_cli_insecure_scheduler_says_what_it_allows(tmp_path, capsys):
    pytest.importorskip("distributed")
    args = ["run", "softmax_beta_sweep", "--out", tmp_path, "--executor", "dask"]
    args += ["--scheduler", "tcp://127.0.0.1:1", "--insecure-scheduler", "--connect-timeout", "1"]
    code, _, err = _cli(args, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2, err
    assert lines[0].startswith("approxtheory: warning: --insecure-scheduler: connecting to ")
    assert "anyone who can reach that address can run code on every machine" in lines[0]
    assert lines[1].startswith("approxtheory: error: cannot reach the Dask scheduler")


def test_tls_flags_need_the_dask_executor(tmp_path, capsys):
    code, _, err = _cli(
        ["run", "softmax_beta_sweep", "--out", tmp_path, "--insecure-scheduler"], capsys
    )
    assert code == 2 and "apply to --executor dask --scheduler ADDRESS only" in err
    assert len(err.strip().splitlines()) == 1


# -------------------------------------------------------------------------- plain-data results
@pytest.mark.parametrize(
    "payload, words",
    [
        (b'{"record": {}, "seconds": 0}', "not JSON text but bytes"),
        ({"record": {"y": 1}, "seconds": 0.1}, "not JSON text but dict"),
        ("{not json", "is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "is not JSON"),  # nesting: no RecursionError escapes
        ('{"record": {"y": 1}}', "not a record with its time"),
        ('{"record": [1, 2], "seconds": 0}', r"is not a record \(a dict\) but list"),
        ('{"record": {"y": 1}, "seconds": -1}', "not a number of seconds"),
        ('{"record": {"y": 1}, "seconds": NaN}', "not a number of seconds"),
        ('{"record": {"cell": "x"}, "seconds": 0}', "sets 'cell'"),
        ('{"record": {"trace": 3}, "seconds": 0}', "'trace' must be a list of dicts"),
        ('{"error": 3}', "is not plain data"),
    ],
)
def test_a_result_that_is_not_a_plain_record_is_a_typed_error(payload, words):
    with pytest.raises(CellResultError, match=words):
        executors._decode_result(payload, CFGS[0])


def test_results_too_large_or_too_deep_are_refused(monkeypatch):
    monkeypatch.setattr(executors, "MAX_RESULT_BYTES", 100)
    with pytest.raises(CellResultError, match="larger than"):
        executors._decode_result(json.dumps({"record": {"y": "x" * 200}, "seconds": 0}), CFGS[0])
    deep: list = []
    for _ in range(executors.MAX_RECORD_DEPTH + 1):
        deep = [deep]
    with pytest.raises(CellResultError, match="not plain data"):
        check_record({"y": deep})


def test_plain_results_round_trip_and_errors_come_back_by_name():
    text = executors._plain_cell(square_cell, CFGS[2])
    assert executors._decode_result(text, CFGS[2])[0] == {"y": 4, "half": 1.0, "tag": "x2"}
    with pytest.raises(ConfigError, match="x=0 is not allowed here"):
        executors._decode_result(executors._plain_cell(config_error_cell, CFGS[0]), CFGS[0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        executors._decode_result(executors._plain_cell(buggy_cell, CFGS[0]), CFGS[0])
    # a name that is not one of approxtheory's typed errors is never looked up elsewhere
    evil = json.dumps({"error": {"type": "os.system", "module": "os", "message": "id"}})
    with pytest.raises(RuntimeError, match=r"os\.system: id"):
        executors._decode_result(evil, CFGS[0])


#: where the attack's payload leaves its mark when it runs (set on the workers by the patch)
_MARK = "/nonexistent/mark"


def _touch(path: str) -> None:
    Path(path).write_text("code of whoever reached the scheduler ran here")


class _Payload:
    """An object whose unpickling runs code (writes the marker): what a patched worker sends."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (_touch, (self.path,))


def _hostile_plain_cell(fn, cfg):
    return _Payload(_MARK)


_REAL_PLAIN_CELL = executors._plain_cell


def _patch_workers(on: bool, mark: str = "") -> None:
    """Run on each worker by another client of the scheduler: swap the cell wrapper."""
    global _MARK
    import approxtheory.executors as ex

    _MARK = mark
    ex._plain_cell = _hostile_plain_cell if on else _REAL_PLAIN_CELL


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    c = LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    )
    yield c
    c.close()


@pytest.mark.filterwarnings("ignore")
def test_dask_cells_give_their_records_and_typed_errors(cluster):
    run = compute_cells(square_cell, CFGS, executor="dask", scheduler=cluster.scheduler_address)
    got = sorted(run)
    assert [(i, r) for i, r, _ in got] == [(i, square_cell(c)) for i, c in enumerate(CFGS)]
    with pytest.raises(ConfigError, match="is not allowed here"):
        list(
            compute_cells(
                config_error_cell, CFGS[:1], executor="dask", scheduler=cluster.scheduler_address
            )
        )


@pytest.mark.filterwarnings("ignore")
def test_patched_workers_cannot_run_code_in_the_client(cluster, tmp_path):
    """The issue's attack: another process reaches the scheduler and patches the workers' cell
    wrapper so that a cell returns an object whose unpickling runs its code. A client that
    unpickles results runs it (shown first, with Dask's default client); the runner's client
    accepts msgpack only: the cells are a CellResultError, nothing ran, nothing is cached."""
    from distributed import Client

    mark = tmp_path / "pwned"
    attacker = Client(cluster.scheduler_address)
    try:
        attacker.run(_patch_workers, True, str(mark))
        # a default client (pickle accepted) runs the payload: the attack is real
        naive = Client(cluster.scheduler_address)
        try:
            naive.submit(executors._plain_cell, square_cell, CFGS[0], pure=False).result()
        finally:
            naive.close()
        assert mark.exists(), "the control attack did not run"
        mark.unlink()
        run = compute_cells(square_cell, CFGS, executor="dask", scheduler=cluster.scheduler_address)
        with pytest.raises(CellResultError) as e:
            list(run)
        assert not mark.exists(), "the payload ran in the runner's client"
        msg = str(e.value)
        assert "3 cells sent back something that is not a plain record" in msg and "\n" not in msg
        assert "check who can reach the scheduler" in msg
    finally:
        attacker.run(_patch_workers, False)
        attacker.close()


# ------------------------------------------------------------------------------ worker counts
def test_local_workers_are_capped_at_the_cells_and_the_memory_limit():
    from approxtheory.resources import limits

    assert local_workers(16, 1) == 1
    assert local_workers(None, 3, default=64) == 3
    with limits(max_bytes=str(4 * executors.WORKER_BYTES)):
        assert local_workers(None, 100, default=64) == 4  # the default fits the limit
        assert local_workers(4, 100) == 4
        with pytest.raises(ResourceLimitError, match="5 local worker processes"):
            local_workers(5, 100)
    with pytest.raises(ConfigError, match="at most 1024"):
        executors.check_executor("pool", 1025, None)


@pytest.mark.slow  # a spawned worker imports torch: about 10 s on the shared machine
def test_a_one_cell_pool_starts_one_worker():
    run = compute_cells(square_cell, CFGS[:1], executor="pool", workers=16)
    assert run.info["workers"] == 1 and [r for _, r, _ in run] == [square_cell(CFGS[0])]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_a_one_cell_dask_run_starts_one_worker():
    pytest.importorskip("distributed")
    run = compute_cells(square_cell, CFGS[:1], executor="dask", workers=16)
    assert run.info["workers"] == 1 and run.info["local_cluster"]
    assert [r for _, r, _ in run] == [square_cell(CFGS[0])]


def test_the_connect_timeout_is_bounded():
    with pytest.raises(ConfigError, match=r"\(0, 600\]"):
        compute_cells(square_cell, CFGS, executor="dask", connect_timeout=1e308)


def test_seeds_beyond_the_cell_cap_are_refused_before_listing(tmp_path, capsys):
    code, out, err = _cli(
        ["run", "softmax_beta_sweep", "--out", tmp_path, "--seeds", "30000000"], capsys
    )
    assert code == 2 and "from 1 to 100000" in err and len(err.strip().splitlines()) == 1
    code, out, err = _cli(
        ["run", "softmax_beta_sweep", "--out", tmp_path, "--seeds", "100000"], capsys
    )
    assert code == 2 and "900000 cells, more than the 100000" in err
    from approxtheory.experiment import cells, get

    exp = get("softmax_beta_sweep")
    old = exp.seeds
    exp.seeds = {**old, "quick": range(10**9)}  # a plugin's huge seed list: refused, not listed
    try:
        with pytest.raises(ValueRangeError, match="more than the 100000 one run takes"):
            cells(exp, "quick")
    finally:
        exp.seeds = old


# --------------------------------------------------------------------- TLS, mutual authentication
def _openssl(*args, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A cluster CA and a certificate it signs (for the scheduler, the workers and the client);
    a rogue self-signed certificate; with the openssl command line."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make test certificates")
    d = tmp_path_factory.mktemp("certs")
    key = ["-newkey", "rsa:2048", "-nodes"]

    def self_signed(name):
        out = ["-keyout", f"{name}.key", "-out", f"{name}.pem"]
        _openssl("req", "-x509", *key, "-days", "2", "-subj", f"/CN={name}", *out, cwd=d)

    self_signed("ca")
    _openssl("req", *key, "-subj", "/CN=node", "-keyout", "node.key", "-out", "node.csr", cwd=d)
    _openssl(
        "x509",
        "-req",
        "-days",
        "2",
        "-in",
        "node.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "node.pem",
        cwd=d,
    )
    self_signed("rogue")
    return d


@contextlib.contextmanager
def _tls_cluster(certs, processes: bool):
    """A one-worker Dask cluster on loopback that requires TLS, every role with the cluster's
    certificate; yields it and the (CA, certificate, key) files, and closes it."""
    pytest.importorskip("distributed")
    from distributed import LocalCluster
    from distributed.security import Security

    ca, cert, key = (str(certs / n) for n in ("ca.pem", "node.pem", "node.key"))
    sec = Security(
        require_encryption=True,
        tls_ca_file=ca,
        **{
            f"tls_{role}_{kind}": path
            for role in ("scheduler", "worker", "client")
            for kind, path in (("cert", cert), ("key", key))
        },
    )
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=processes,
        protocol="tls",
        host="127.0.0.1",
        security=sec,
        dashboard_address=None,
    )
    try:
        yield cluster, (ca, cert, key)
    finally:
        cluster.close()


@pytest.mark.filterwarnings("ignore")
def test_tls_scheduler_accepts_the_cluster_certificate_only(certs):
    """A scheduler with Security(require_encryption=True, ...) on loopback: the runner's client
    with the cluster's certificate computes the cells; with a certificate the cluster's CA did
    not sign, or none, or over tcp://, it cannot connect (a one-line ConfigError, at once: the
    handshake is refused, well within the timeout)."""
    pytest.importorskip("distributed")
    from distributed import Client

    with _tls_cluster(certs, processes=False) as (cluster, (ca, cert, key)):
        addr = cluster.scheduler_address
        assert addr.startswith("tls://127.0.0.1:")
        run = compute_cells(square_cell, CFGS, executor="dask", scheduler=addr, tls=(ca, cert, key))
        assert sorted((i, r) for i, r, _ in run) == [
            (i, square_cell(c)) for i, c in enumerate(CFGS)
        ]
        rogue = (str(certs / "rogue.pem"), str(certs / "rogue.key"))
        for files in ((ca, *rogue), (rogue[0], *rogue)):
            with pytest.raises(ConfigError, match="cannot reach the Dask scheduler at tls://"):
                compute_cells(
                    square_cell,
                    CFGS,
                    executor="dask",
                    scheduler=addr,
                    tls=files,
                    connect_timeout=20,
                )
        with pytest.raises(ConfigError, match="needs --tls-ca-file"):
            compute_cells(square_cell, CFGS, executor="dask", scheduler=addr)
        for bare in (addr, addr.replace("tls://", "tcp://")):  # Dask's own client, no certificate
            with pytest.raises(Exception):  # noqa: B017, PT011  (Dask's errors vary)
                Client(bare, timeout=20).close()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_cli_tls_run_matches_the_inprocess_csv(certs, tmp_path, capsys):
    """`experiment run ... --scheduler tls://... --tls-*` as a command: the in-process CSV."""
    base = ["run", "softmax_beta_sweep", "--set", "T=2", "--quiet", "--out"]
    with _tls_cluster(certs, processes=True) as (cluster, (ca, cert, key)):
        assert _cli([*base, tmp_path / "ref"], capsys)[0] == 0
        tls = ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        args = [
            *base,
            tmp_path / "d",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        ]
        code, out, err = _cli([*args, *tls], capsys)
        assert code == 0, err
    csv = "softmax_beta_sweep/quick.csv"
    assert (tmp_path / "d" / csv).read_bytes() == (tmp_path / "ref" / csv).read_bytes()
