"""``approxtheory bench sweep``: cells per second of the runner's executors (in-process, a local
process pool, a local Dask cluster) on a grid of short, pure cells, with the scheduling overhead
per cell: ``(wall - cell seconds / workers) / cells``, the time a cell costs beyond its own work
when the workers are kept busy (pool and cluster start-up included, as in a real sweep).

    >>> from approxtheory.bench.sweep import bench_sweep
    >>> r = bench_sweep(cells=4, cell_ms=1, executors=("inprocess",))
    >>> r["rows"][0]["cells"]
    4
"""

from __future__ import annotations

import time

from ..executors import compute_cells

__all__ = ["bench_sweep", "busy_cell"]


def busy_cell(cfg: dict) -> dict:
    """A short pure cell: ``cfg["ms"]`` milliseconds of arithmetic, then its index back."""
    t_end = time.perf_counter() + cfg["ms"] / 1000
    acc, k = 0, 0
    while time.perf_counter() < t_end:
        acc = (acc * 31 + k) % 1_000_003
        k += 1
    return {"i": cfg["i"], "ok": True}


def bench_sweep(
    cells: int = 64,
    cell_ms: float = 20.0,
    workers: int = 2,
    executors: tuple[str, ...] = ("inprocess", "pool", "dask"),
) -> dict:
    """Time ``cells`` cells of ``cell_ms`` ms on each executor; one row per executor (a row with
    ``skipped`` when Dask is not installed)."""
    cfgs = [{"i": i, "ms": cell_ms} for i in range(cells)]
    rows: list[dict] = []
    for name in executors:
        n_work = 1 if name == "inprocess" else workers
        if name == "dask":
            try:
                import distributed  # noqa: F401
            except ImportError:
                rows.append({"executor": name, "skipped": "Dask distributed not installed"})
                continue
        t0 = time.perf_counter()
        seen, cell_s = set(), 0.0
        for i, rec, s in compute_cells(
            busy_cell, cfgs, executor=name, workers=None if name == "inprocess" else workers
        ):
            assert rec["i"] == i and i not in seen
            seen.add(i)
            cell_s += s
        wall = time.perf_counter() - t0
        rows.append(
            {
                "executor": name,
                "workers": n_work,
                "cells": len(seen),
                "wall_s": round(wall, 3),
                "cells_per_s": round(len(seen) / wall, 2),
                "cell_s": round(cell_s, 3),
                "overhead_ms_per_cell": round(1000 * (wall - cell_s / n_work) / len(seen), 2),
            }
        )
    return {"cells": cells, "cell_ms": cell_ms, "workers": workers, "rows": rows}
