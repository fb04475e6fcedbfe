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
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from .errors import CellLostError, ConfigError

__all__ = [
    "EXECUTORS",
    "CellLostError",
    "CellRun",
    "run_cell",
    "CELL_THREADS",
    "compute_cells",
    "check_executor",
]

#: the executor names of ``--executor``
EXECUTORS = ("inprocess", "pool", "dask")

#: how many times a broken process pool is recreated before the run gives up
POOL_RESTARTS = 3

INSTALL_HINT = "pip install 'approxtheory[distributed]'"


#: torch threads every cell computes with, in every executor: torch's CPU reductions differ
#: between thread counts (a trained cell's NMSE moves in the 8th digit, and a verdict near its
#: criterion can flip), so one fixed count makes a cell's record the same on any machine and
#: executor. Parallelism comes from running cells side by side (``--workers``, Dask).
CELL_THREADS = 1


def run_cell(fn: Callable[[dict], dict], cfg: dict) -> tuple[dict, float]:
    """Compute one cell (in whatever process runs it) with :data:`CELL_THREADS` torch threads
    (the caller's count is restored after): its record and its time in seconds."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(CELL_THREADS)
    try:
        t1 = time.time()
        rec = fn(dict(cfg))
        return rec, round(time.time() - t1, 4)
    finally:
        torch.set_num_threads(old)


def check_executor(executor: str, workers: int | None, scheduler: str | None) -> None:
    """Refuse an unknown executor, a worker count below 1, a scheduler address without Dask, or
    Dask not installed (ConfigError, one line)."""
    if executor not in EXECUTORS:
        from .errors import did_you_mean

        raise ConfigError(
            f"unknown executor {executor!r}{did_you_mean(executor, EXECUTORS)} "
            f"(known: {', '.join(EXECUTORS)})"
        )
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ConfigError(f"--workers must be at least 1 (got {workers})")
    if workers is not None and executor == "inprocess":
        raise ConfigError("--workers applies to the pool and dask executors, not inprocess")
    if scheduler is not None and executor != "dask":
        raise ConfigError("--scheduler applies to --executor dask only")
    port = scheduler.rpartition(":")[2] if scheduler is not None else ""
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
) -> CellRun:
    """Compute ``fn(cfg)`` for every config on ``executor``: a :class:`CellRun` of ``(index,
    record, seconds)`` in completion order, each cell once. A Dask scheduler is reached (or a
    local cluster started) before this returns. ``gpus``: the GPUs of this machine for cells on
    ``cuda`` with a local pool or cluster (one worker per GPU unless ``workers`` says otherwise;
    worker k sees GPU k mod gpus only)."""
    check_executor(executor, workers, scheduler)
    if not connect_timeout > 0 or connect_timeout == float("inf"):
        raise ConfigError(
            f"the connect timeout must be a positive number of seconds (got {connect_timeout})"
        )
    if gpus is not None and (isinstance(gpus, bool) or gpus < 1):
        raise ConfigError(f"gpus must be at least 1 (got {gpus})")
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
        return CellRun(((i, *run_cell(fn, cfg)) for i, cfg in enumerate(cfgs)), info)
    if executor == "pool":
        info["workers"] = workers or os.cpu_count() or 1
        return CellRun(_pool(fn, cfgs, workers, gpus), info)
    # connect now (a bad address fails before any progress is shown), compute when iterated
    client, cluster = _dask_connect(workers, scheduler, connect_timeout, gpus)
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


#: in a pool worker: where it says which cell it starts (a pipe, written at once, so the word
#: is out even when the cell then kills the process)
_STARTED = None


def _init_pool_worker(started, gpu_queue) -> None:
    """Pool initializer: keep the queue of started cells; with ``gpu_queue``, this worker sees
    one GPU only (set before anything initialises CUDA)."""
    global _STARTED
    _STARTED = started
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
            initargs=(started_q, gpu_queue),
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


def _dask_connect(
    workers: int | None, scheduler: str | None, connect_timeout: float, gpus: int | None = None
):
    """A Dask client of the scheduler at ``scheduler`` (or of a new local cluster of ``workers``
    single-threaded processes; with ``gpus``, worker k sees GPU k mod gpus only and offers the
    resource GPU=1) and the cluster to close (None for a remote scheduler)."""
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler is None and gpus is not None:
            cluster = _gpu_cluster(workers or gpus, gpus)
            return Client(cluster), cluster
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            return Client(cluster), cluster
        return Client(scheduler, timeout=connect_timeout), None
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
    from distributed import KilledWorker, as_completed

    lost: list[int] = []
    try:
        extra = {"resources": {"GPU": 1}} if gpu_resource else {}
        futures = {
            client.submit(
                run_cell, fn, cfg, pure=False, key=f"cell-{i}-{time.time_ns()}", **extra
            ): i
            for i, cfg in enumerate(cfgs)
        }
        for fut in as_completed(list(futures)):
            i = futures.pop(fut)
            try:
                rec, s = fut.result()
            except KilledWorker:
                lost.append(i)
                continue
            finally:
                fut.release()  # a worker dying later holds nothing the scheduler would redo
            yield i, rec, s
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
        client.close()
        if cluster is not None:
            cluster.close()
