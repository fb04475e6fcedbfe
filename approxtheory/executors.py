"""Where the experiment runner computes its cells: in this process (the default), in a local
process pool (``--workers N``) or on a Dask distributed cluster (``--executor dask``).

An executor only computes: it takes the cell function and the configs of the cells still to do
and yields ``(index, record, seconds)`` as cells finish. The runner (the client) writes every
record to the cache itself, atomically, so the cache stays the single source of completed cells
(a killed client resumes; a worker killed mid-cell loses only that cell, which is retried: Dask
reschedules it; the pool is recreated and its unfinished cells resubmitted, a bounded number of
times). Seeds and the device travel in each cell's config, so a cell gives the same record
wherever it runs. Dask is an optional extra (``pip install approxtheory[distributed]``),
imported here only when asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from .errors import ConfigError

__all__ = ["EXECUTORS", "run_cell", "compute_cells", "check_executor"]

#: the executor names of ``--executor``
EXECUTORS = ("inprocess", "pool", "dask")

#: how many times a broken process pool is recreated before the run gives up
POOL_RESTARTS = 3

INSTALL_HINT = "pip install 'approxtheory[distributed]'"


def run_cell(fn: Callable[[dict], dict], cfg: dict) -> tuple[dict, float]:
    """Compute one cell (in whatever process runs it): its record and its time in seconds."""
    t1 = time.time()
    rec = fn(dict(cfg))
    return rec, round(time.time() - t1, 4)


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
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(f"--executor dask needs Dask distributed: {INSTALL_HINT}") from None


def compute_cells(
    fn: Callable[[dict], dict],
    cfgs: list[dict],
    executor: str = "pool",
    workers: int | None = None,
    scheduler: str | None = None,
    connect_timeout: float = 10.0,
) -> Iterator[tuple[int, dict, float]]:
    """Compute ``fn(cfg)`` for every config on ``executor``: an iterator of ``(index, record,
    seconds)`` in completion order, each cell once. A Dask scheduler is reached (or a local
    cluster started) before this returns."""
    check_executor(executor, workers, scheduler)
    if not cfgs:
        return iter(())
    if executor == "inprocess":
        return ((i, *run_cell(fn, cfg)) for i, cfg in enumerate(cfgs))
    if executor == "pool":
        return _pool(fn, cfgs, workers)
    # connect now (a bad address fails before any progress is shown), compute when iterated
    client, cluster = _dask_connect(workers, scheduler, connect_timeout)
    return _dask(client, cluster, fn, cfgs)


def _pool(
    fn: Callable[[dict], dict], cfgs: list[dict], workers: int | None
) -> Iterator[tuple[int, dict, float]]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    todo = set(range(len(cfgs)))
    ctx = multiprocessing.get_context("spawn")  # no fork of a client holding threads
    restarts = 0
    while todo:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        broken = False
        try:
            pending = {pool.submit(run_cell, fn, cfgs[i]): i for i in sorted(todo)}
            while pending and not broken:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
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
            restarts += 1
            if restarts > POOL_RESTARTS:
                raise ConfigError(
                    f"the process pool broke {restarts} times (a worker died); "
                    f"{len(todo)} cells not computed (they resume on the next run)"
                )


def _dask_connect(workers: int | None, scheduler: str | None, connect_timeout: float):
    """A Dask client of the scheduler at ``scheduler`` (or of a new local cluster of ``workers``
    single-threaded processes) and the cluster to close (None for a remote scheduler)."""
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            return Client(cluster), cluster
        return Client(scheduler, timeout=connect_timeout), None
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ConfigError(
            f"cannot reach the Dask scheduler at {scheduler}: {type(e).__name__}: "
            + str(e).splitlines()[0]
            if scheduler
            else f"cannot start a local Dask cluster: {type(e).__name__}: {e}"
        ) from None


def _dask(client, cluster, fn: Callable[[dict], dict], cfgs: list[dict]):
    from distributed import as_completed

    try:
        futures = {
            client.submit(run_cell, fn, cfg, pure=False, key=f"cell-{i}-{time.time_ns()}"): i
            for i, cfg in enumerate(cfgs)
        }
        for fut in as_completed(futures):
            rec, s = fut.result()
            yield futures[fut], rec, s
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
