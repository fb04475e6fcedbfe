"""Where the experiment runner computes its cells: in this process (the default), in a local
process pool (``--workers N``) or on a Dask distributed cluster (``--executor dask``).

An executor only computes: it takes the cell function and the configs of the cells still to do
and yields ``(index, record, seconds)`` as cells finish. The runner (the client) writes every
record to the cache itself, atomically, so the cache stays the single source of completed cells
(a killed client resumes; a worker killed mid-cell loses only that cell, which is retried: Dask
reschedules it; the pool is recreated and its unfinished cells resubmitted, a bounded number of
times). A cell that keeps killing its workers (beyond Dask's ``allowed-failures``, or a pool
broken more than :data:`POOL_RESTARTS` times) ends the run with :class:`CellLostError` once
the other cells are in. Dask results are gathered as each cell completes and their futures
released at once, so a worker that dies later holds no finished result the scheduler would
recompute. Seeds and the device travel in each cell's config, so a cell gives the same record
wherever it runs.

Cells on ``cuda`` get one GPU per worker: a local pool or local Dask cluster starts one worker
per GPU (``gpus``), each with its own ``CUDA_VISIBLE_DEVICES``, so ``cuda`` in a cell is that
worker's GPU; on a Dask scheduler every cuda cell asks for the resource ``GPU=1``, so it runs only
on workers started with ``--resources GPU=1`` (one per GPU, see the README), one cell per GPU at a
time. Dask is an optional extra (``pip install approxtheory[distributed]``), imported here only
when asked for.

Trust boundary (Dask). Whoever can connect to a Dask scheduler can run code on every machine of
its cluster, the client's included (a task is code; a worker's reply is unpickled by Dask). So
by default the client connects only to a local cluster it starts or to a loopback scheduler
(``tcp://127.0.0.1``, ``tcp://localhost``, ``tcp://[::1]``); a scheduler elsewhere needs
``tls://`` with mutual authentication (:func:`check_scheduler`: a CA file, this client's
certificate and key, all from the cluster's own CA, as Dask's
``Security(require_encryption=True, ...)``), or an explicit ``insecure_scheduler=True``
(``--insecure-scheduler``) on a network the user trusts. Other schemes (``ucx://``, ``ws://``,
``inproc://``) are refused.

Plain data. On Dask a cell's result travels as JSON text (:func:`_plain_cell`, a ``str``, which
Dask sends as msgpack); the client accepts msgpack only (``deserializers=("msgpack",)``: a
pickled reply is refused, never unpickled) and checks the text's size and shape
(:func:`check_record`) before the runner uses or caches it; anything else is a
:class:`CellResultError` for that cell. A cell's own exception also comes back as plain data
(its type name and message; a typed :mod:`approxtheory.errors` class is raised again by name).
What Dask itself still pickles: the task (the cell function, by reference, and its config) the
client sends; and, from the scheduler to the client, the exception and traceback of a task that
failed in Dask's own machinery and Dask's ``ToPickle`` messages, which Dask unpickles
unconditionally: that is why the scheduler and workers must be trusted (loopback or TLS).
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator

from . import errors as _errors
from .errors import ApproxTheoryError, CellLostError, ConfigError

__all__ = [
    "EXECUTORS",
    "CellLostError",
    "CellResultError",
    "CellRun",
    "run_cell",
    "CELL_THREADS",
    "MAX_WORKERS",
    "MAX_CONNECT_TIMEOUT",
    "WORKER_BYTES",
    "MAX_RESULT_BYTES",
    "compute_cells",
    "check_executor",
    "check_scheduler",
    "check_record",
    "plain_record",
    "local_workers",
]

#: the executor names of ``--executor``
EXECUTORS = ("inprocess", "pool", "dask")

#: how many times a broken process pool is recreated before the run gives up
POOL_RESTARTS = 3

INSTALL_HINT = "pip install 'approxtheory[distributed]'"

#: the most worker processes ``--workers`` may ask for
MAX_WORKERS = 1024

#: the longest ``--connect-timeout`` in seconds (a longer wait is a hang, not a timeout)
MAX_CONNECT_TIMEOUT = 600.0

#: a lower bound of the memory of one local worker process (Python with torch and numpy
#: imported: about 220 MB measured), checked against the memory limit before any is started
WORKER_BYTES = 128 << 20

#: the largest cell result (its JSON text) the client accepts from a Dask worker
MAX_RESULT_BYTES = 64 << 20

#: the deepest nesting of lists and dicts a cell record may hold (a trace is a list of dicts)
MAX_RECORD_DEPTH = 8


class CellResultError(ApproxTheoryError):
    """What came back for a cell is not a plain record (JSON-compatible: a dict of str to
    str / int / float / bool / None / lists and dicts thereof, see :func:`check_record`): a
    pickled object, text that is not JSON, a wrong shape. The client neither uses nor caches it;
    the run ends with this error, one line, once the other cells are in (they are cached)."""


#: torch threads every cell computes with, in every executor: torch's CPU reductions differ
#: between thread counts (a trained cell's NMSE moves in the 8th digit, and a verdict near its
#: criterion can flip), so one fixed count makes a cell's record the same on any machine and
#: executor. Parallelism comes from running cells side by side (``--workers``, Dask).
CELL_THREADS = 1


def run_cell(fn: Callable[[dict], dict], cfg: dict) -> tuple[dict, float]:
    """Compute one cell (in whatever process runs it) with :data:`CELL_THREADS` torch threads
    (the caller's count is restored after): its record and its time in seconds."""
    from .resources import pinned_threads

    with pinned_threads(CELL_THREADS):  # the package's policy too (sup_error and the like)
        t1 = time.time()
        rec = fn(dict(cfg))
        return rec, round(time.time() - t1, 4)


_SCALARS = (str, int, float, bool, type(None))
#: keys the runner adds to a record itself: a cell's result must not set them
RESERVED_KEYS = ("cell", "seconds", "_sha256")


def _plain_value(v, depth: int) -> bool:
    if isinstance(v, _SCALARS):
        return True
    if depth >= MAX_RECORD_DEPTH:
        return False
    if type(v) is list:
        return all(_plain_value(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _plain_value(x, depth + 1) for k, x in v.items())
    return False


def check_record(rec, what: str = "the cell's result") -> dict:
    """``rec`` when it is a plain record, else :class:`CellResultError` naming what is wrong:
    a dict of str keys (none of :data:`RESERVED_KEYS`) to JSON values (str, int, float, bool,
    None, lists and dicts of them, at most :data:`MAX_RECORD_DEPTH` deep); a ``trace`` must be
    a list of dicts."""
    if type(rec) is not dict:
        raise CellResultError(f"{what} is not a record (a dict) but {type(rec).__name__}")
    for k, v in rec.items():
        if type(k) is not str:
            raise CellResultError(f"{what} has a key that is not a string ({type(k).__name__})")
        if k in RESERVED_KEYS:
            raise CellResultError(f"{what} sets {k!r}, which the runner writes itself")
        if not _plain_value(v, 1):
            raise CellResultError(
                f"{what}: {k!r} is not plain data (str, int, float, bool, None or lists and "
                f"dicts of them, at most {MAX_RECORD_DEPTH} deep; got {type(v).__name__})"
            )
    tr = rec.get("trace")
    if "trace" in rec and not (type(tr) is list and all(type(t) is dict for t in tr)):
        raise CellResultError(f"{what}: 'trace' must be a list of dicts")
    return rec


def plain_record(rec, what: str = "the cell's result") -> dict:
    """``rec`` as the cache stores it (a JSON round trip: tuples as lists, numpy scalars and
    other objects as their ``str``), checked by :func:`check_record`."""
    if type(rec) is not dict:
        raise CellResultError(f"{what} is not a record (a dict) but {type(rec).__name__}")
    try:
        plain = json.loads(json.dumps(rec, default=str))
    except (ValueError, TypeError, RecursionError) as e:  # a cycle, a key that is not a str
        raise CellResultError(f"{what} is not plain data ({type(e).__name__}: {e})") from None
    return check_record(plain, what)


def _check_seconds(s, what: str) -> float:
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not (math.isfinite(s) and s >= 0):
        raise CellResultError(f"{what}: its time is not a number of seconds (got {s!r})")
    return float(s)


def _plain_cell(fn: Callable[[dict], dict], cfg: dict) -> str:
    """On a Dask worker: the cell computed by :func:`run_cell`, returned as JSON text (plain
    data; numpy scalars and other objects as their ``str``, as the cache writes them): the
    record and its time, or the cell's exception as its type name and message."""
    try:
        rec, s = run_cell(fn, cfg)
        return json.dumps({"record": rec, "seconds": s}, default=str)
    except Exception as e:  # noqa: BLE001  (the client raises it again, typed, by name)
        err = {"type": type(e).__name__, "module": type(e).__module__, "message": str(e)[:4000]}
        return json.dumps({"error": err}, default=str)


def _raise_cell_error(err, cfg: dict):
    """A cell's exception sent back as plain data: an :mod:`approxtheory.errors` class (looked up
    by name, nothing is unpickled) or MemoryError again; anything else as RuntimeError."""
    if not (type(err) is dict and all(isinstance(err.get(k), str) for k in ("type", "message"))):
        raise CellResultError(f"the error sent back for cell {_cell_name(cfg)} is not plain data")
    name, msg = err["type"], err["message"]
    cls = getattr(_errors, name, None)
    if isinstance(cls, type) and issubclass(cls, ApproxTheoryError) and name in _errors.__all__:
        raise cls(msg)
    if name == "MemoryError":
        raise MemoryError(msg)
    raise RuntimeError(f"{name}: {msg} (in cell {_cell_name(cfg)} on a Dask worker)")


def _decode_result(payload, cfg: dict) -> tuple[dict, float]:
    """The record and time of a cell from the JSON text a Dask worker sent
    (:func:`_plain_cell`), checked: :class:`CellResultError` for anything else."""
    what = f"the result of cell {_cell_name(cfg)}"
    if type(payload) is not str:
        raise CellResultError(f"{what} is not JSON text but {type(payload).__name__}")
    if len(payload) > MAX_RESULT_BYTES:
        raise CellResultError(f"{what} is larger than {MAX_RESULT_BYTES >> 20} MiB")
    try:
        d = json.loads(payload)
    except (ValueError, RecursionError) as e:
        raise CellResultError(f"{what} is not JSON ({type(e).__name__})") from None
    if type(d) is dict and set(d) == {"error"}:
        _raise_cell_error(d["error"], cfg)
    if not (type(d) is dict and set(d) == {"record", "seconds"}):
        raise CellResultError(f"{what} is not a record with its time")
    return check_record(d["record"], what), _check_seconds(d["seconds"], what)


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_TRUST = (
    "whoever can connect to a Dask scheduler can run code on every machine of its cluster, "
    "this client included"
)


def check_scheduler(
    scheduler: str | None,
    tls: tuple[str, str, str] | None = None,
    insecure_scheduler: bool = False,
) -> str | None:
    """The scheduler address to connect to (``tcp://`` added when it has no scheme), after the
    trust boundary's checks (ConfigError, one line, else):

    * ``tcp://`` to a loopback host (127.0.0.0/8, ``localhost``, ``[::1]``): allowed;
    * ``tcp://`` elsewhere: refused, unless ``insecure_scheduler`` (``--insecure-scheduler``);
    * ``tls://``: needs ``tls = (CA file, certificate, key)``, readable files; the client then
      connects with ``Security(require_encryption=True, ...)`` (mutual authentication);
    * any other scheme (``ucx://``, ``ws://``, ``inproc://``): refused.

    ``scheduler=None`` (a local cluster) takes neither ``tls`` nor ``insecure_scheduler``."""
    if scheduler is None:
        if tls is not None:
            raise ConfigError(
                "--tls-ca-file, --tls-cert and --tls-key apply to --scheduler tls://HOST:PORT "
                "(a local cluster needs none)"
            )
        if insecure_scheduler:
            raise ConfigError("--insecure-scheduler applies to --scheduler tcp://HOST:PORT only")
        return None
    if not isinstance(scheduler, str) or not scheduler.strip() or "\x00" in scheduler:
        raise ConfigError(f"--scheduler must be an address tls://HOST:PORT (got {scheduler!r})")
    addr = scheduler.strip()
    scheme, sep, rest = addr.partition("://")
    if not sep:
        scheme, rest = "tcp", addr
    scheme = scheme.lower()
    if scheme not in ("tcp", "tls"):
        raise ConfigError(
            f"--scheduler {scheduler!r}: the scheme {scheme}:// is not supported (use tls://HOST:"
            "PORT with --tls-ca-file, --tls-cert and --tls-key, or tcp:// to a scheduler on "
            "this machine)"
        )
    if rest.startswith("["):
        host, _, port = rest[1:].partition("]")
        port = port[1:] if port.startswith(":") else ""
    else:
        host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
        raise ConfigError(
            f"--scheduler {scheduler!r} is not a Dask scheduler address: expected "
            f"{scheme}://HOST:PORT with a port from 1 to 65535"
        )
    norm = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{int(port)}"
    if tls is not None:
        if not (isinstance(tls, (tuple, list)) and len(tls) == 3):
            raise ConfigError("tls must be (CA file, certificate file, key file)")
        for flag, path in zip(("--tls-ca-file", "--tls-cert", "--tls-key"), tls):
            if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
                raise ConfigError(f"{flag} must be an existing regular file (got {path!r})")
            if not os.access(path, os.R_OK):
                raise ConfigError(f"{flag} is not readable (got {str(path)!r})")
    if scheme == "tls":
        if tls is None:
            raise ConfigError(
                f"--scheduler {norm} needs --tls-ca-file, --tls-cert and --tls-key (the "
                "cluster's CA certificate, and this client's certificate and key signed by it)"
            )
        if insecure_scheduler:
            raise ConfigError("--insecure-scheduler applies to tcp:// addresses, not tls://")
        return norm
    if tls is not None:
        raise ConfigError(
            f"--tls-ca-file, --tls-cert and --tls-key need a tls:// scheduler address (got {norm})"
        )
    if not _loopback(host) and not insecure_scheduler:
        raise ConfigError(
            f"--scheduler {norm} is not on this machine and tcp:// is neither encrypted nor "
            f"authenticated: {_TRUST}; use tls://HOST:PORT with --tls-ca-file, --tls-cert and "
            "--tls-key (the README's multi-node recipe), or --insecure-scheduler on a network "
            "where you trust everyone who can reach it"
        )
    return norm


def insecure_warning(scheduler: str) -> str:
    """The one line ``--insecure-scheduler`` prints: what it allows."""
    return (
        f"approxtheory: warning: --insecure-scheduler: connecting to {scheduler} without TLS; "
        f"anyone who can reach that address can run code on every machine of the cluster, "
        "this one included"
    )


def local_workers(workers: int | None, n_cells: int, default: int | None = None) -> int:
    """How many local worker processes (a pool, a local Dask cluster) compute ``n_cells`` cells:
    ``workers`` (or ``default``: one per core, as many as the memory limit holds at
    :data:`WORKER_BYTES` each), never more than the cells. An explicit count whose processes do
    not fit the memory limit is refused (ResourceLimitError) before any is started."""
    from .resources import format_bytes, max_bytes, require

    n_cells = max(1, int(n_cells))
    if workers is None:
        n = default or os.cpu_count() or 1
        lim = max_bytes()
        if lim is not None:
            n = min(n, max(1, lim // WORKER_BYTES))
        return min(n, n_cells)
    n = min(int(workers), n_cells)
    require(
        bytes=n * WORKER_BYTES,
        what=f"{n} local worker processes (at least {format_bytes(WORKER_BYTES)} each)",
    )
    return n


def check_executor(executor: str, workers: int | None, scheduler: str | None) -> None:
    """Refuse an unknown executor, a worker count below 1 or above :data:`MAX_WORKERS`, a
    scheduler address without Dask (or with a local worker count), or Dask not installed
    (ConfigError, one line)."""
    if executor not in EXECUTORS:
        from .errors import did_you_mean

        raise ConfigError(
            f"unknown executor {executor!r}{did_you_mean(executor, EXECUTORS)} "
            f"(known: {', '.join(EXECUTORS)})"
        )
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ConfigError(f"--workers must be at least 1 (got {workers})")
    if workers is not None and workers > MAX_WORKERS:
        raise ConfigError(f"--workers must be at most {MAX_WORKERS} (got {workers})")
    if workers is not None and executor == "inprocess":
        raise ConfigError("--workers applies to the pool and dask executors, not inprocess")
    if scheduler is not None and executor != "dask":
        raise ConfigError("--scheduler applies to --executor dask only")
    if scheduler is not None and workers is not None:
        raise ConfigError(
            "--workers sets the size of a local pool or cluster; a --scheduler has its own "
            "workers (start them with `dask worker`)"
        )
    port = scheduler.rpartition(":")[2] if isinstance(scheduler, str) else ""
    if port.isdigit() and not 0 < int(port) < 65536:
        raise ConfigError(f"--scheduler {scheduler!r}: the port must be 1..65535 (got {port})")
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(f"--executor dask needs Dask distributed: {INSTALL_HINT}") from None


class CellRun:
    """The cells being computed: iterate for ``(index, record, seconds)`` in completion order;
    ``info`` says where they run (``name``, ``workers``, ``scheduler``, and ``gpus`` for cuda
    cells), for the run JSON."""

    def __init__(self, it: Iterator[tuple[int, dict, float]], info: dict):
        self._it, self.info = it, info

    def __iter__(self) -> Iterator[tuple[int, dict, float]]:
        return self._it


def _cell_name(cfg: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in cfg.items())


def _cells(n: int) -> str:
    return f"{n} cell" + ("" if n == 1 else "s")


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _visible_gpus(gpus: int) -> list[str]:
    """The ids to give the workers in ``CUDA_VISIBLE_DEVICES``: this process's own visible list
    when it has one, else 0 .. gpus-1."""
    own = [g.strip() for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return own[:gpus] if own else [str(g) for g in range(gpus)]


def compute_cells(
    fn: Callable[[dict], dict],
    cfgs: list[dict],
    executor: str = "pool",
    workers: int | None = None,
    scheduler: str | None = None,
    connect_timeout: float = 10.0,
    gpus: int | None = None,
    tls: tuple[str, str, str] | None = None,
    insecure_scheduler: bool = False,
) -> CellRun:
    """Compute ``fn(cfg)`` for every config on ``executor``: a :class:`CellRun` of ``(index,
    record, seconds)`` in completion order, each cell once, every record checked to be plain
    data (:func:`check_record`). A Dask scheduler is reached (or a local cluster started) before
    this returns; its address passes the trust boundary of :func:`check_scheduler` (``tls``:
    the cluster's CA file, this client's certificate and key, for a ``tls://`` address;
    ``insecure_scheduler``: allow ``tcp://`` beyond loopback). ``gpus``: the GPUs of this
    machine for cells on ``cuda`` with a local pool or cluster (one worker per GPU unless
    ``workers`` says otherwise; worker k sees GPU k mod gpus only). Local workers are never
    more than the cells (:func:`local_workers`)."""
    check_executor(executor, workers, scheduler)
    if (
        isinstance(connect_timeout, bool)
        or not isinstance(connect_timeout, (int, float))
        or not 0 < connect_timeout <= MAX_CONNECT_TIMEOUT
    ):
        raise ConfigError(
            f"the connect timeout must be a number of seconds in (0, {MAX_CONNECT_TIMEOUT:g}] "
            f"(got {connect_timeout})"
        )
    if gpus is not None and (isinstance(gpus, bool) or gpus < 1):
        raise ConfigError(f"gpus must be at least 1 (got {gpus})")
    if executor == "dask":
        scheduler = check_scheduler(scheduler, tls, insecure_scheduler)
    elif tls is not None or insecure_scheduler:
        raise ConfigError("the TLS files and --insecure-scheduler apply to --executor dask only")
    cuda = any(c.get("device") == "cuda" for c in cfgs)
    info: dict = {"name": executor, "workers": workers, "scheduler": scheduler}
    if cuda and scheduler is None and executor != "inprocess" and gpus is not None:
        workers = workers or gpus
        info.update(workers=workers, gpus=gpus)
    else:
        gpus = None
    if executor == "inprocess":
        info["workers"] = 1
    if not cfgs:
        return CellRun(iter(()), info)
    if executor == "inprocess":
        cells = ((i, *run_cell(fn, cfg)) for i, cfg in enumerate(cfgs))
        return CellRun(_checked(cells, cfgs), info)
    if scheduler is None:  # a local pool or cluster: never more processes than cells
        workers = info["workers"] = local_workers(workers, len(cfgs))
    if executor == "pool":
        return CellRun(_checked(_pool(fn, cfgs, workers, gpus), cfgs), info)
    # connect now (a bad address fails before any progress is shown), compute when iterated
    client, cluster = _dask_connect(workers, scheduler, connect_timeout, gpus, tls)
    n_workers = len(client.scheduler_info(n_workers=-1)["workers"])
    info.update(workers=n_workers, scheduler=client.scheduler.address)
    if cluster is None and cuda:
        _require_gpu_workers(client, info["scheduler"])
    if cluster is not None:
        info["local_cluster"] = True
    # a cuda cell asks for GPU=1 where workers offer it: a remote scheduler (checked above) or
    # a local cluster started with one worker per GPU
    gpu_resource = cuda and (cluster is None or gpus is not None)
    return CellRun(_dask(client, cluster, fn, cfgs, gpu_resource), info)


def _checked(it: Iterator[tuple[int, dict, float]], cfgs: list[dict]):
    """The local executors' results, each record made plain data as on Dask."""
    for i, rec, s in it:
        what = f"the result of cell {_cell_name(cfgs[i])}"
        yield i, plain_record(rec, what), _check_seconds(s, what)


#: in a pool worker: where it says which cell it starts (a pipe, written at once, so the word
#: is out even when the cell then kills the process)
_STARTED = None


#: how often (seconds) a pool worker checks that the client that started it is still alive
PARENT_POLL_S = 0.25


def _watch_parent(parent: int) -> None:
    """In a pool worker: exit (at once, no cleanup) as soon as the client that started it is
    gone (killed, SIGTERM or SIGKILL: the worker is re-parented), so that no worker, and then no
    resource tracker, outlives it. Polls the parent pid; wall-clock time decides nothing else."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _init_pool_worker(started, gpu_queue, parent: int | None = None) -> None:
    """Pool initializer: keep the queue of started cells; with ``gpu_queue``, this worker sees
    one GPU only (set before anything initialises CUDA); with ``parent`` (the client's pid), a
    daemon thread ends this worker when the client is gone (:func:`_watch_parent`)."""
    global _STARTED
    _STARTED = started
    if parent is not None:
        if os.getppid() != parent:  # the client died while this worker was starting
            os._exit(1)
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if gpu_queue is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu_queue.get()


def _pool_cell(fn: Callable[[dict], dict], cfg: dict, i: int) -> tuple[dict, float]:
    if _STARTED is not None:
        _STARTED.put(i)
    return run_cell(fn, cfg)


def _pool(
    fn: Callable[[dict], dict], cfgs: list[dict], workers: int | None, gpus: int | None
) -> Iterator[tuple[int, dict, float]]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    todo = set(range(len(cfgs)))
    ctx = multiprocessing.get_context("spawn")  # no fork of a client holding threads
    restarts = 0
    suspects: set[int] | None = None  # the cells running at every break so far
    while todo:
        gpu_queue = None
        if gpus is not None:
            ids, gpu_queue = _visible_gpus(gpus), ctx.Queue()
            for k in range(min(workers or gpus, len(todo))):
                gpu_queue.put(ids[k % len(ids)])
        started_q = ctx.SimpleQueue()
        started: set[int] = set()
        n = min(workers or os.cpu_count() or 1, len(todo))  # after a break, only what is left
        pool = ProcessPoolExecutor(
            max_workers=n,
            mp_context=ctx,
            initializer=_init_pool_worker,
            initargs=(started_q, gpu_queue, os.getpid()),
        )
        broken = False
        try:
            pending = {pool.submit(_pool_cell, fn, cfgs[i], i): i for i in sorted(todo)}
            while pending and not broken:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                while not started_q.empty():
                    started.add(started_q.get())
                for fut in done:
                    i = pending.pop(fut)
                    try:
                        rec, s = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    todo.discard(i)
                    yield i, rec, s
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)
        if broken:
            while not started_q.empty():
                started.add(started_q.get())
            running = started & todo
            suspects = running if suspects is None else suspects & running
            restarts += 1
            if restarts > POOL_RESTARTS:
                named = sorted(suspects)
                raise CellLostError(
                    f"the process pool broke {_times(restarts)} (a worker died each time)"
                    + (
                        f" while {'cell' if len(named) == 1 else 'cells'} "
                        + "; ".join(_cell_name(cfgs[i]) for i in named[:3])
                        + (f"; ... ({len(named) - 3} more)" if len(named) > 3 else "")
                        + " ran"
                        if named
                        else ""
                    )
                    + f"; {_cells(len(todo))} not computed; the {len(cfgs) - len(todo)} "
                    "completed cells are cached and running the same command again resumes "
                    "from them"
                )


#: the only serialization the client accepts from the cluster: msgpack (plain data); a
#: pickled reply is refused (TypeError), never unpickled (see the module docstring)
CLIENT_DESERIALIZERS = ("msgpack",)


def _dask_connect(
    workers: int | None,
    scheduler: str | None,
    connect_timeout: float,
    gpus: int | None = None,
    tls: tuple[str, str, str] | None = None,
):
    """A Dask client of the scheduler at ``scheduler`` (checked by :func:`check_scheduler`; with
    ``tls``, mutual TLS as Dask's ``Security(require_encryption=True, ...)``), or of a new local
    cluster of ``workers`` single-threaded processes on 127.0.0.1 (with ``gpus``, worker k sees
    GPU k mod gpus only and offers the resource GPU=1), and the cluster to close (None for a
    remote scheduler). The client deserializes msgpack only (:data:`CLIENT_DESERIALIZERS`)."""
    from distributed import Client, LocalCluster

    cluster = None
    kw: dict = {"deserializers": CLIENT_DESERIALIZERS}
    try:
        if scheduler is None and gpus is not None:
            cluster = _gpu_cluster(workers or gpus, gpus)
            return Client(cluster, **kw), cluster
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                host="127.0.0.1",
            )
            return Client(cluster, **kw), cluster
        if tls is not None:
            from distributed.security import Security

            ca, cert, key = (str(p) for p in tls)
            kw["security"] = Security(
                require_encryption=True,
                tls_ca_file=ca,
                tls_client_cert=cert,
                tls_client_key=key,
            )
        return Client(scheduler, timeout=connect_timeout, **kw), None
    except (ValueError, OverflowError) as e:  # not an address (no port, a port beyond 65535)
        if cluster is not None or scheduler is None:
            raise
        raise ConfigError(
            f"--scheduler {scheduler!r} is not a Dask scheduler address "
            f"({str(e).splitlines()[0]}); expected tcp://HOST:PORT"
        ) from None
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ConfigError(
            f"cannot reach the Dask scheduler at {scheduler}: {type(e).__name__}: "
            + str(e).splitlines()[0]
            if scheduler
            else f"cannot start a local Dask cluster: {type(e).__name__}: {e}"
        ) from None


def _gpu_cluster(n_workers: int, gpus: int):
    """A local Dask cluster of ``n_workers`` single-threaded worker processes, worker k with
    ``CUDA_VISIBLE_DEVICES`` = the k-th GPU (mod gpus) and the resource GPU=1."""
    from distributed import Nanny, Scheduler, SpecCluster

    ids = _visible_gpus(gpus)
    spec = {
        f"gpu-{k}": {
            "cls": Nanny,
            "options": {
                "nthreads": 1,
                "resources": {"GPU": 1},
                "env": {"CUDA_VISIBLE_DEVICES": ids[k % len(ids)]},
                "host": "127.0.0.1",
            },
        }
        for k in range(n_workers)
    }
    sched = {"cls": Scheduler, "options": {"dashboard_address": None, "host": "127.0.0.1"}}
    return SpecCluster(workers=spec, scheduler=sched)


def _require_gpu_workers(client, address: str) -> None:
    """Cells on cuda need workers offering the resource GPU (else they would wait forever)."""
    ws = client.scheduler_info(n_workers=-1)["workers"].values()
    if not any(w.get("resources", {}).get("GPU", 0) >= 1 for w in ws):
        client.close()
        raise ConfigError(
            f"--device cuda on the Dask scheduler at {address} needs workers "
            "started with --resources GPU=1 (one worker per GPU, each with its own "
            "CUDA_VISIBLE_DEVICES); it has none"
        )


def _dask(client, cluster, fn: Callable[[dict], dict], cfgs: list[dict], gpu_resource: bool):
    import logging

    from distributed import KilledWorker, as_completed

    lost: list[int] = []
    bad: list[tuple[int, str]] = []
    # a refused (pickled) reply is this run's CellResultError, one line; not Dask's traceback
    proto_log = logging.getLogger("distributed.protocol.core")
    was_disabled, proto_log.disabled = proto_log.disabled, True
    try:
        extra = {"resources": {"GPU": 1}} if gpu_resource else {}
        futures = {
            client.submit(
                _plain_cell, fn, cfg, pure=False, key=f"cell-{i}-{time.time_ns()}", **extra
            ): i
            for i, cfg in enumerate(cfgs)
        }
        for fut in as_completed(list(futures)):
            i = futures.pop(fut)
            try:
                payload = fut.result()
            except KilledWorker:
                lost.append(i)
                continue
            except Exception as e:  # noqa: BLE001  (a reply refused by the msgpack-only client)
                bad.append((i, f"{type(e).__name__}: {e}"))
                continue
            finally:
                fut.release()  # a worker dying later holds nothing the scheduler would redo
            try:
                rec, s = _decode_result(payload, cfgs[i])
            except CellResultError as e:
                bad.append((i, str(e)))
                continue
            yield i, rec, s
        if bad:
            bad.sort()
            i, why = bad[0]
            raise CellResultError(
                f"{_cells(len(bad))} sent back something that is not a plain record, so it was "
                f"neither used nor cached: cell {_cell_name(cfgs[i])}: {why.splitlines()[0][:300]}"
                + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
                + f"; the {len(cfgs) - len(bad) - len(lost)} completed cells are cached. A "
                "worker that does this runs other code than this client's: check who can "
                f"reach the scheduler ({_TRUST})"
            )
        if lost:
            lost.sort()
            raise CellLostError(
                f"{_cells(len(lost))} lost: "
                + "; ".join(_cell_name(cfgs[i]) for i in lost[:3])
                + (f"; ... ({len(lost) - 3} more)" if len(lost) > 3 else "")
                + " (a Dask worker died while running it, more often than the scheduler retries:"
                " distributed.scheduler.allowed-failures); the "
                f"{len(cfgs) - len(lost)} completed cells are cached and running the same "
                "command again resumes from them"
            )
    finally:
        proto_log.disabled = was_disabled
        client.close()
        if cluster is not None:
            cluster.close()
