"""Benchmark: CPU seconds per trained model that passes the training-adequacy gate
(``approxtheory bench train --gated [--json]``).

The head-count cell (``headcount_phase_d4``'s: D = 4, h = D = 4 heads of width 8, encoder and
read-out hidden size N = 32, Gaussian tokens, the paper's §5.1 model) at T = 8 and 16, trained
twice per seed in the same process, alternating:

- **before**: the reference engine (the forward as written) and the 16,000-step recipe that
  reaches the paper's Table 2 magnitude (Adam lr 2e-3, batch 256, cosine to 0);
- **after**: the fast engine (``TrainConfig(engine="fast")``) and the decisive recipe (Adam lr
  2e-2, batch 256, 8000 steps, 800 warm-up, cosine to 0.02 lr by step 6000, then held).

Per model: process CPU seconds, final validation NMSE (float64), the loss tail ratio and the
gate (``proofs_check/_gate.py``: NMSE <= 1e-2, within 10x of Table 2 at (T, h = 4), last
quarter / third quarter >= 0.5). Per T: CPU per model, CPU per *gated* model (total CPU over
the models that passed; infinite when none did), their ratios before/after and the
min-over-seeds NMSE of each (the paper's statistic) with its ratio. The machine's load average
is printed before and after. ``fraction`` < 1 runs that fraction of each recipe's steps (to
test the plumbing; its figures are not the benchmark's).

Both arms run the experiment's own cell function; the cell builds its ``TrainConfig`` without
naming an engine, so each arm sets the config's default engine while it runs (and restores it).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from typing import Any

__all__ = ["bench_gated", "BEFORE", "AFTER", "GOAL", "MIN_FRACTION"]

GOAL = 3.0
BASE = {"D": 4, "heads": 4, "head_dim": 8, "hidden": 32, "collisions": 0}
BEFORE: dict[str, Any] = {"engine": "reference", "lr": 2e-3, "batch": 256, "steps": 16_000}
AFTER: dict[str, Any] = {
    "engine": "fast",
    "lr": 2e-2,
    "batch": 256,
    "steps": 8000,
    "warmup": 800,
    "decay": 6000,
    "min_lr": 0.02,
}


@contextlib.contextmanager
def _default_engine(engine: str):
    from ..train import TrainConfig

    kw = TrainConfig.__init__.__kwdefaults__
    assert kw is not None  # a keyword-only dataclass: every field has its default here
    old = kw["engine"]
    kw["engine"] = engine
    try:
        yield
    finally:
        kw["engine"] = old


def _scaled(arm: dict, fraction: float) -> dict:
    out = dict(arm)
    if fraction < 1:
        for k in ("steps", "warmup", "decay"):
            if k in out:
                out[k] = max(1, int(out[k] * fraction))
        if "decay" in out and out["decay"] <= out.get("warmup", 0):
            out["decay"] = out.get("warmup", 0) + 1
    return out


#: the smallest ``fraction`` that leaves each recipe a warm-up below its decay and both within
#: its steps (three steps of the shortest recipe)
MIN_FRACTION = 3 / min(arm["steps"] for arm in (BEFORE, AFTER))


def _gate(row: dict, T: int) -> tuple[bool, list]:
    from ..headcount_analysis import synthetic_table2
    from ..proofs_check._gate import PaperMagnitude, training_gate

    paper = {
        (r["T"], r["heads"]): PaperMagnitude(r["val_nmse_mean"], "Table 2")
        for r in synthetic_table2()
        if r["D"] == 4
    }
    g = training_gate([row], control=lambda r: True, describe="h = D = 4", paper=paper, by=("T",))
    return g.passed, g.failures


def _one(arm: dict, T: int, seed: int) -> dict:
    import approxtheory.experiments  # noqa: F401  (registers the experiments)

    from ..executors import run_cell
    from ..experiment import get

    cell = get("headcount_phase_d4").cell
    cfg = {**BASE, "T": T, "seed": seed, **{k: v for k, v in arm.items() if k != "engine"}}
    with _default_engine(arm["engine"]):
        t0 = time.process_time()
        rec, _ = run_cell(cell, cfg)
        cpu = time.process_time() - t0
    row = {**cfg, **rec}
    passed, why = _gate(row, T)
    q3, q4 = float(rec["loss_q3"]), float(rec["loss_q4"])
    return {
        "T": T,
        "seed": seed,
        "engine": arm["engine"],
        "steps": int(cfg["steps"]),
        "cpu_s": round(cpu, 2),
        "val_nmse": float(rec["val_nmse"]),
        "tail_ratio": q4 / q3 if q3 > 0 else math.nan,
        "gate": passed,
        "gate_failures": why,
    }


def _summary(rows: list, T: int) -> dict:
    out: dict = {"T": T}
    for arm in ("before", "after"):
        rs = [r for r in rows if r["T"] == T and r["arm"] == arm]
        cpu = sum(r["cpu_s"] for r in rs)
        ok = sum(r["gate"] for r in rs)
        out[arm] = {
            "models": len(rs),
            "passed_gate": ok,
            "cpu_per_model": cpu / len(rs),
            "cpu_per_gated_model": cpu / ok if ok else math.inf,
            "min_nmse": min(r["val_nmse"] for r in rs),
        }
    b, a = out["before"], out["after"]
    out["ratio_cpu_per_model"] = b["cpu_per_model"] / a["cpu_per_model"]
    out["ratio_cpu_per_gated_model"] = (
        b["cpu_per_gated_model"] / a["cpu_per_gated_model"]
        if math.isfinite(a["cpu_per_gated_model"])
        else math.nan
    )
    out["nmse_ratio_after_before"] = a["min_nmse"] / b["min_nmse"]
    return out


def bench_gated(Ts=(8, 16), seeds=(0, 1), fraction: float = 1.0, progress=None) -> dict:
    """The benchmark (module docstring): per model rows and per-T summaries. One torch thread
    per model (the runner's)."""
    from ..errors import ConfigError

    if not (isinstance(fraction, float) and MIN_FRACTION <= fraction <= 1):
        raise ConfigError(
            f"fraction must be a number from {MIN_FRACTION:g} (three steps of the shortest "
            f"recipe) to 1 (got {fraction!r})"
        )
    load0 = os.getloadavg()
    rows = []
    for T in Ts:
        for i, seed in enumerate(seeds):
            order = [("before", BEFORE), ("after", AFTER)]
            for arm, cfg in order if i % 2 == 0 else order[::-1]:
                r = {"arm": arm, **_one(_scaled(cfg, fraction), T, seed)}
                rows.append(r)
                if progress:
                    progress(r)
    summaries = [_summary(rows, T) for T in Ts]
    return {
        "before": BEFORE,
        "after": AFTER,
        "fraction": fraction,
        "rows": rows,
        "summaries": summaries,
        "goal": GOAL,
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }
