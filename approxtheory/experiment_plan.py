"""What an experiment run would do, before it trains anything (``experiment run --dry-run``):
its cells as cached, shipped, stale or to compute, and the CPU time of those to compute,
measured on this machine by timing a few steps of each group of cells."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .experiment import Experiment, _cached_cell, cell_hash, cells, get
from .io import json_roundtrip

__all__ = ["plan_run", "PROBE_STEPS"]

#: the step counts a dry run times a cell at, per group of cells that differ only in seed and
#: steps: the cost per step is the difference over the steps between, the rest is per cell
PROBE_STEPS = (20, 80)
#: schedule keys a probe drops (they are fractions of the full step count; the cell's defaults
#: then apply, at the same cost per step)
_SCHEDULE_KEYS = ("warmup", "decay", "min_lr")


def _probe_seconds(exp: Experiment, cfg: dict) -> float:
    """CPU seconds of one cell at ``cfg`` (one torch thread, as the runner computes cells)."""
    from .executors import run_cell

    t0 = time.process_time()
    run_cell(exp.cell, cfg)
    return time.process_time() - t0


def plan_run(
    name: str,
    profile: str = "quick",
    out: str | Path = "results",
    overrides: dict | None = None,
    use_shipped: bool = True,
    progress=None,
) -> dict:
    """What ``run_experiment`` would do, before it trains anything: every cell, whether it is
    in the local cache under ``out``, shipped and fresh, shipped but stale, or to compute; and
    the estimated CPU seconds of the cells to compute on this machine. The estimate is measured
    here: for each group of cells that differ only in ``seed`` and ``steps``, one cell of the
    group is run at :data:`PROBE_STEPS` steps (schedule keys dropped) and the per-step cost and
    the per-cell rest extrapolated to the cell's steps; an experiment without a ``steps``
    parameter has one cell of each group run in full. ``progress(text)`` is told each probe."""
    from . import shipped

    exp = get(name)
    todo = cells(exp, profile, "cpu", overrides)
    root = Path(out) / name
    status: list[str] = []
    for cfg in todo:
        key = cell_hash(exp, cfg)
        if _cached_cell(root / "cells" / f"{key}.json", key, json_roundtrip(cfg)) is not None:
            status.append("cached")
            continue
        got = shipped.read_cell(exp, cfg) if use_shipped else shipped.ShippedCell("missing")
        status.append({"fresh": "shipped", "stale": "stale"}.get(got.status, "compute"))
    groups: dict[str, list[dict]] = {}
    for cfg, st in zip(todo, status):
        if st in ("compute", "stale"):
            ident = {k: v for k, v in cfg.items() if k not in ("seed", "steps", *_SCHEDULE_KEYS)}
            groups.setdefault(json.dumps(ident, sort_keys=True, default=str), []).append(cfg)
    estimates = []
    warm = False
    for members in groups.values():
        first = members[0]
        if "steps" in first:
            base = {k: v for k, v in first.items() if k not in _SCHEDULE_KEYS}
            a, b = PROBE_STEPS
            if progress:
                progress(f"timing {a} and {b} steps of {_short(base)}")
            if not warm:  # the first cell of a process pays for imports and first calls
                _probe_seconds(exp, {**base, "steps": a})
                warm = True
            ta = _probe_seconds(exp, {**base, "steps": a})
            tb = _probe_seconds(exp, {**base, "steps": b})
            per_step = max(0.0, (tb - ta) / (b - a))
            rest = max(0.0, ta - a * per_step)
            secs = [rest + per_step * int(c["steps"]) for c in members]
            how = f"{per_step * 1e3:.2f} ms/step + {rest:.2f} s per cell"
        else:
            if progress:
                progress(f"running one cell of {_short(first)}")
            one = _probe_seconds(exp, first)
            secs = [one] * len(members)
            how = f"{one:.2f} s per cell (one cell run)"
        estimates.append(
            {"group": _short(first), "cells": len(members), "seconds": sum(secs), "how": how}
        )
    counts = {k: status.count(k) for k in ("cached", "shipped", "stale", "compute")}
    return {
        "experiment": name,
        "profile": profile,
        "cells": len(todo),
        **counts,
        "groups": estimates,
        "estimated_cpu_seconds": sum(e["seconds"] for e in estimates),
    }


def _short(cfg: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in ("seed", "device"))
