"""Where a training step's CPU goes: ``approxtheory bench train --gated --explain [--json]``.

The gated benchmark (:mod:`approxtheory.bench.gated`) reports the whole saving per gated model;
this profile splits it. Each arm (``before``: the reference engine, ``after``: the fast engine)
trains the benchmark's head-count cell for ``steps`` steps under :mod:`torch.profiler` (CPU
activity, one thread), and the operators' *self* CPU time is summed per step into groups:

- ``matmul``: mm, addmm, bmm, matmul, linear (the arithmetic the model size sets);
- ``softmax``: softmax and its backward (the attention weights);
- ``elementwise``: activations, adds, multiplies, copies, reductions (per-element work);
- ``optimizer``: Adam's updates (the ``_foreach`` kernels and the fused step);
- ``data``: sampling the batch (randn, normal, uniform, the task's target);
- ``other``: everything else, mostly the dispatcher's per-operator cost (views, reshapes,
  autograd bookkeeping), which grows with the number of operators, not with their size.

Per arm: the process CPU per step without the profiler (the figure the ratio uses), and
milliseconds of self time per step and per group under it (the difference between training
``2 * steps`` and ``steps`` steps, so the build and the validation pass drop out), operator
calls per step, and the median self time per call (small calls mean the step is overhead-bound,
not arithmetic-bound).
Then the decomposition of the gated ratio: (before steps / after steps) x (before ms per step /
after ms per step) x (after gate pass rate / before gate pass rate); the first two factors are
measured here, the gate's from ``bench train --gated``. The profiler adds its own cost per
operator, so absolute times are above the unprofiled ones; the shares and the ratio between the
arms are what it is for.
"""

from __future__ import annotations

import os
import statistics
import time

from .gated import AFTER, BASE, BEFORE, _default_engine

__all__ = ["explain_steps", "GROUPS", "group_of"]

#: operator-name fragments per group, tried in this order (the first that matches wins)
GROUPS = (
    ("softmax", ("softmax",)),
    ("matmul", ("::mm", "addmm", "bmm", "matmul", "linear", "einsum", "baddbmm")),
    ("optimizer", ("_foreach", "adam", "lerp", "addcdiv", "addcmul")),
    ("data", ("randn", "normal", "uniform", "rand", "bernoulli", "multinomial")),
    (
        "elementwise",
        (
            "relu",
            "gelu",
            "threshold",
            "add",
            "sub",
            "mul",
            "div",
            "pow",
            "sqrt",
            "exp",
            "log",
            "sum",
            "mean",
            "copy_",
            "fill_",
            "zero_",
            "clamp",
            "max",
            "min",
            "where",
            "neg",
            "abs",
        ),
    ),
)


def group_of(name: str) -> str:
    """The group of an operator name (see the module docstring)."""
    low = name.lower()
    for group, parts in GROUPS:
        if any(p in low for p in parts):
            return group
    return "other"


def _profile_arm(arm: dict, T: int, steps: int, seed: int, profiled: bool = True) -> dict:
    """One arm's cell trained for ``steps`` steps under the profiler: self CPU (microseconds)
    per group, operator calls, self time per call of each operator, and the CPU seconds."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    import approxtheory.experiments  # noqa: F401  (registers the experiments)

    from ..executors import run_cell
    from ..experiment import get

    cell = get("headcount_phase_d4").cell
    recipe = {k: v for k, v in arm.items() if k != "engine"}
    # the arm's recipe at `steps` steps: warm-up and decay scaled with it
    scale = steps / recipe["steps"]
    recipe["steps"] = steps
    for k in ("warmup", "decay"):
        if k in recipe:
            recipe[k] = max(1, int(recipe[k] * scale))
    if "decay" in recipe and recipe["decay"] <= recipe.get("warmup", 0):
        recipe["decay"] = recipe.get("warmup", 0) + 1
    cfg = {**BASE, "T": T, "seed": seed, **recipe}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _default_engine(arm["engine"]):
            if not profiled:
                t0 = time.process_time()
                run_cell(cell, cfg)
                return {"cpu_s": time.process_time() - t0}
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                t0 = time.process_time()
                run_cell(cell, cfg)
                cpu = time.process_time() - t0
    finally:
        torch.set_num_threads(threads)
    groups: dict[str, float] = {}
    calls, per_call = 0, []
    for ev in prof.key_averages():
        self_us = float(ev.self_cpu_time_total)
        g = group_of(ev.key)
        groups[g] = groups.get(g, 0.0) + self_us
        calls += int(ev.count)
        if ev.count:
            per_call.append(self_us / ev.count)
    return {"groups_us": groups, "calls": calls, "per_call": per_call, "cpu_s": cpu}


def _per_step(arm: dict, T: int, steps: int, seed: int) -> dict:
    """One arm's per-step figures: the difference between ``2 * steps`` and ``steps`` steps
    trained (so the build, the validation pass and the profiler's start are not counted)."""
    short, long = (_profile_arm(arm, T, n, seed) for n in (steps, 2 * steps))
    # the process CPU per step without the profiler (its per-operator cost left out)
    bare = [_profile_arm(arm, T, n, seed, profiled=False)["cpu_s"] for n in (steps, 2 * steps)]
    names = sorted(set(short["groups_us"]) | set(long["groups_us"]))
    groups = {
        g: max(0.0, long["groups_us"].get(g, 0.0) - short["groups_us"].get(g, 0.0)) / 1e3 / steps
        for g in names
    }
    total = sum(groups.values())
    return {
        "engine": arm["engine"],
        "T": T,
        "cpu_ms_per_step": max(0.0, bare[1] - bare[0]) * 1e3 / steps,
        "profiled_ms_per_step": total,
        "groups_ms_per_step": groups,
        "shares": {g: v / total for g, v in groups.items()} if total else {},
        "calls_per_step": (long["calls"] - short["calls"]) / steps,
        "median_us_per_call": statistics.median(long["per_call"]) if long["per_call"] else 0.0,
        "cpu_s_profiled": round(short["cpu_s"] + long["cpu_s"], 3),
    }


def explain_steps(Ts=(8, 16), steps: int = 200, seed: int = 0) -> dict:
    """Both arms profiled at each T (module docstring), with the step-count factor of the
    recipes and the per-step factor measured here."""
    from ..errors import ConfigError

    if not (isinstance(steps, int) and not isinstance(steps, bool) and 10 <= steps <= 20_000):
        raise ConfigError(f"steps must be an integer from 10 to 20000 (got {steps!r})")
    out = []
    for T in Ts:
        b = _per_step(BEFORE, T, steps, seed)
        a = _per_step(AFTER, T, steps, seed)
        out.append(
            {
                "T": T,
                "before": b,
                "after": a,
                "step_count_factor": BEFORE["steps"] / AFTER["steps"],
                "per_step_factor": b["cpu_ms_per_step"] / a["cpu_ms_per_step"]
                if a["cpu_ms_per_step"] > 0
                else float("nan"),
            }
        )
    return {
        "steps_profiled": steps,
        "seed": seed,
        "rows": out,
        "load": [round(x, 2) for x in os.getloadavg()],
    }
