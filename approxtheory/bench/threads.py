"""``approxtheory bench threads``: the project's own workloads at the package's default thread
policy (:func:`approxtheory.resources.threads`), at one thread and at all cores, each run as a
subprocess, in wall-clock and CPU seconds, with the machine's load average.

The workloads:

- ``construct``: ``approxtheory construct hc_k1 --gate -1 --json``;
- ``rate-test``: the IF-T2 rate test written by ``approxtheory new-test IF-T2`` (into a
  temporary folder, untimed), run by ``python -m pytest`` with ``--approxtheory-no-cache`` so
  every run measures (``budget``: its ``--approxtheory-budget``; default the plugin's).

The settings: ``default`` (no ``APPROXTHEORY_THREADS``, no ``OMP_NUM_THREADS``/
``MKL_NUM_THREADS``: what a user gets), ``1`` and ``all`` (``APPROXTHEORY_THREADS=1`` and
``=os.cpu_count()``). The settings are interleaved (one run of each per repetition, rotated),
so that a change of the machine's load falls on all of them; each figure is the median of the
repetitions. ``ratio`` is default / best, best being the faster of ``1`` and ``all`` (goal:
<= 1.1 in wall and in CPU time).

    >>> from approxtheory.bench.threads import bench_threads
    >>> import sys
    >>> r = bench_threads(repeat=1, commands={"noop": ([sys.executable, "-c", "pass"], None)})
    >>> [row["setting"] for row in r["rows"]]
    ['default', '1', 'all']
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import ApproxTheoryError, ConfigError
from ..resources import THREADS_ENV

__all__ = ["bench_threads", "WORKLOADS", "SETTINGS", "GOAL"]

#: the workloads, in the order they run
WORKLOADS = ("construct", "rate-test")
#: the thread settings compared
SETTINGS = ("default", "1", "all")
#: the goal: the default within this factor of the best setting, wall and CPU
GOAL = 1.1
#: environment variables that would set the thread count from outside the policy
_THREAD_VARS = (THREADS_ENV, "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _env(setting: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _THREAD_VARS}
    if setting != "default":
        env[THREADS_ENV] = str(os.cpu_count() or 1) if setting == "all" else setting
    return env


def _threads_of(setting: str) -> int:
    if setting == "all":
        return os.cpu_count() or 1
    if setting == "default":
        from ..resources import DEFAULT_THREADS

        return DEFAULT_THREADS
    return int(setting)


def _commands(workloads, workdir: Path, budget: int | None) -> dict:
    """argv and cwd of each workload (the rate test written into ``workdir`` first)."""
    py = sys.executable
    out: dict = {}
    for w in workloads:
        if w == "construct":
            out[w] = (
                [py, "-m", "approxtheory", "construct", "hc_k1", "--gate", "-1", "--json"],
                None,
            )
        elif w == "rate-test":
            test = workdir / "tests" / "test_IF_T2.py"
            r = subprocess.run(
                [py, "-m", "approxtheory", "new-test", "IF-T2", "--out", str(test)],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if r.returncode != 0:
                raise ApproxTheoryError(f"new-test IF-T2 failed: {r.stderr.strip()[-300:]}")
            argv = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--approxtheory-no-cache"]
            if budget is not None:
                argv.append(f"--approxtheory-budget={budget}")
            out[w] = ([*argv, "tests"], workdir)
        else:
            raise ConfigError(f"unknown workload {w!r}; known: {', '.join(WORKLOADS)}")
    return out


def _run(argv: list, cwd, env: dict, timeout: float) -> dict:
    """One run: wall and CPU seconds (user + system of the child and what it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise ApproxTheoryError(
                f"`{' '.join(map(str, argv[1:]))}` ran past {timeout:g} s (--timeout)"
            ) from None
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if rc != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise ApproxTheoryError(
                f"`{' '.join(map(str, argv[1:]))}` exited {rc}: {tail[0][:300]}"
            )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def bench_threads(
    workloads=WORKLOADS,
    repeat: int = 3,
    budget: int | None = None,
    timeout: float = 1800.0,
    progress: Callable[[dict], None] | None = None,
    commands: dict | None = None,
) -> dict:
    """Time each workload at each setting ``repeat`` times (settings interleaved, rotated each
    repetition); a row per workload and setting (medians, min and max, threads) and a summary
    per workload (default / best in wall and CPU time). ``commands`` replaces the workloads by
    ``{name: (argv, cwd)}`` (tests). ``progress`` gets each run as it finishes."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ConfigError(f"repeat must be a positive integer (got {repeat!r})")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        raise ConfigError(f"budget must be a positive integer or None (got {budget!r})")
    load0 = os.getloadavg()
    t_start = time.perf_counter()
    rows: list[dict] = []
    summaries: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="approxtheory-bench-threads-") as d:
        cmds = commands if commands is not None else _commands(tuple(workloads), Path(d), budget)
        for name, (argv, cwd) in cmds.items():
            runs: dict = {s: [] for s in SETTINGS}
            for i in range(repeat):
                order = SETTINGS[i % len(SETTINGS) :] + SETTINGS[: i % len(SETTINGS)]
                for s in order:
                    r = _run(argv, cwd, _env(s), timeout)
                    r.update(workload=name, setting=s, rep=i, load1=os.getloadavg()[0])
                    runs[s].append(r)
                    if progress is not None:
                        progress(r)
            mine = []
            for s in SETTINGS:
                walls = [r["wall_s"] for r in runs[s]]
                cpus = [r["cpu_s"] for r in runs[s]]
                mine.append(
                    {
                        "workload": name,
                        "setting": s,
                        "threads": _threads_of(s),
                        "wall_s": round(statistics.median(walls), 3),
                        "cpu_s": round(statistics.median(cpus), 3),
                        "wall_min_max": [round(min(walls), 3), round(max(walls), 3)],
                        "cpu_min_max": [round(min(cpus), 3), round(max(cpus), 3)],
                        "runs": len(walls),
                    }
                )
            rows += mine
            by = {r["setting"]: r for r in mine}
            summ: dict = {"workload": name}
            for key in ("wall_s", "cpu_s"):
                best = min(("1", "all"), key=lambda s: by[s][key])
                ratio = by["default"][key] / by[best][key] if by[best][key] > 0 else 1.0
                summ[key.replace("_s", "")] = {
                    "ratio": round(ratio, 3),
                    "best": best,
                    "meets_goal": ratio <= GOAL,
                }
            summ["meets_goal"] = summ["wall"]["meets_goal"] and summ["cpu"]["meets_goal"]
            summaries.append(summ)
    load1 = os.getloadavg()
    return {
        "rows": rows,
        "summaries": summaries,
        "repeat": repeat,
        "budget": budget,
        "cpus": os.cpu_count(),
        "default_threads": _threads_of("default"),
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in load1],
        "seconds": round(time.perf_counter() - t_start, 1),
        "goal": GOAL,
        "python": sys.version.split()[0],
    }
