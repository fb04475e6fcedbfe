"""The experiment registry and runner shared by ``verify`` and every experiment.

The runner imports no experiment: an experiment module registers itself
(:func:`register_experiment`) when it is imported. The built-in ones live in
:mod:`approxtheory.experiments` (the folder ``experiments/``), imported by the layers above (the
commands, the checks); other distributions contribute theirs through the entry-point group
``approxtheory.experiments`` (a module that registers experiments when imported), which
:func:`load_plugins` imports on the first lookup. The project declares its own built-ins in that
group too, so ``run_experiment("softmax_beta_sweep")`` works without importing them first.

An experiment is declarative: a grid of cells per profile (``quick``/``full``), seeds, and a pure
cell function (config in, record out). The runner caches every cell by a key covering everything
the cell depends on (:func:`cell_hash`: the experiment, the cell's config, the whole source of
``approxtheory`` and ``approxtheory.experiments`` and the library versions); a cell file that
cannot be read or is not a record of that cell is a miss and is recomputed; a killed run resumes
where it stopped; results are a tidy CSV plus one JSON per run (schema version, config, seeds,
library versions, git revision, timings). Timings stay out of the CSV (they are in the cell files
and the run JSON), so a cached, resumed or fresh run writes the same CSV. Plots are regenerated
from the CSV only.

Example::

    >>> from approxtheory.experiment import run_experiment
    >>> import approxtheory.experiments      # registers the built-in experiments
    >>> res = run_experiment("softmax_beta_sweep", profile="quick", out="results")  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import provenance
from .errors import ApproxTheoryError, ConfigError, DeviceUnavailableError
from .io import atomic_write_checked_json, atomic_write_json, json_roundtrip, read_checked_json

__all__ = [
    "Experiment",
    "EXPERIMENTS",
    "ENTRY_POINT_GROUP",
    "register_experiment",
    "load_plugins",
    "all_experiments",
    "get",
    "run_experiment",
    "plot_experiment",
    "cells",
    "profile_grids",
    "grid_values",
    "check_cells",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1


@dataclass
class Experiment:
    name: str
    description: str
    grids: dict  # profile -> {param: [values]}, or a list of such grids (see profile_grids)
    cell: Callable[[dict], dict]  # pure: config -> record (numbers)
    seeds: dict = field(default_factory=lambda: {"quick": [0], "full": [0, 1, 2]})
    plot: Callable[[list, Path], list] | None = None
    claims: tuple = ()


EXPERIMENTS: dict[str, Experiment] = {}

#: the entry-point group of modules that register experiments when imported
ENTRY_POINT_GROUP = "approxtheory.experiments"


def _origin(exp: Experiment) -> str:
    return f"{getattr(exp.cell, '__module__', '?')}.{getattr(exp.cell, '__qualname__', '?')}"


def profile_grids(exp: Experiment, profile: str) -> list[dict]:
    """The sub-grids of ``exp``'s ``profile``: one ``{param: [values]}`` grid, or several (a list,
    as scikit-learn's ParameterGrid takes) whose cells are the union of their products, for a
    profile whose settings differ between parts (e.g. more steps for the larger D). Every sub-grid
    has the same parameters in the same order. Raises ApproxTheoryError for an unknown profile."""
    if profile not in exp.grids:
        raise ApproxTheoryError(
            f"{exp.name} has no profile {profile!r} (has: {', '.join(exp.grids)})"
        )
    g = exp.grids[profile]
    return [dict(x) for x in g] if isinstance(g, list | tuple) else [dict(g)]


def grid_values(exp: Experiment, profile: str) -> dict:
    """``{param: [values]}`` over every sub-grid of the profile (each value once, in order of
    first appearance): what ``--set`` types its value from, what a check reads as the grid."""
    out: dict = {}
    for g in profile_grids(exp, profile):
        for k, vs in g.items():
            seen = out.setdefault(k, [])
            seen.extend(v for v in vs if v not in seen)
    return out


def _check_grids(exp: Experiment) -> None:
    for prof, g in exp.grids.items():
        if not all(isinstance(x, dict) for x in (g if isinstance(g, list | tuple) else [g])):
            raise ConfigError(
                f"experiment {exp.name!r}: profile {prof!r} must be a {{parameter: [values]}} "
                f"grid or a list of them (got {g!r})"
            )
        subs = profile_grids(exp, prof)
        if not subs:
            raise ConfigError(f"experiment {exp.name!r}: profile {prof!r} has an empty grid list")
        for sub in subs:
            if list(sub) != list(subs[0]):
                raise ConfigError(
                    f"experiment {exp.name!r}: the sub-grids of profile {prof!r} have different "
                    f"parameters ({', '.join(subs[0])} vs {', '.join(sub)})"
                )
            bad = [k for k, v in sub.items() if not isinstance(v, list | tuple) or not v]
            if bad:
                raise ConfigError(
                    f"experiment {exp.name!r}, profile {prof!r}: {', '.join(bad)} must be a "
                    f"non-empty list of values"
                )


def register_experiment(exp: Experiment) -> Experiment:
    """Add ``exp`` to the registry (an experiment module calls this when it is imported).

    Registering the same cell function again (a module reloaded) replaces the entry; another
    experiment of the same name, or the same module imported under a second name (the built-in
    experiments as ``experiments`` besides ``approxtheory.experiments``), raises ConfigError."""
    _check_grids(exp)
    old = EXPERIMENTS.get(exp.name)
    if old is not None and _origin(old) != _origin(exp):
        raise ConfigError(
            f"experiment {exp.name!r} is registered twice: by {_origin(old)} and "
            f"by {_origin(exp)} (import the built-in experiments as "
            f"approxtheory.experiments only)"
        )
    EXPERIMENTS[exp.name] = exp
    return exp


_plugins_loaded = False


def load_plugins() -> None:
    """Import, once per process, every module of the entry-point group ``approxtheory.experiments``
    of the installed distributions (the project's own first); each registers its experiments.
    A module that fails to import raises ConfigError naming it."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    eps = sorted(
        entry_points(group=ENTRY_POINT_GROUP),
        key=lambda ep: (not ep.value.startswith("approxtheory."), ep.name),
    )
    for ep in eps:
        try:
            ep.load()
        except Exception as e:
            raise ConfigError(
                f"the experiments of entry point {ep.name!r} ({ep.value}) failed "
                f"to load: {type(e).__name__}: {e}"
            ) from e


def all_experiments() -> dict[str, Experiment]:
    """Every registered experiment by name (the installed plugins loaded first)."""
    load_plugins()
    return dict(EXPERIMENTS)


def get(name: str) -> Experiment:
    load_plugins()
    if name not in EXPERIMENTS:
        from .errors import did_you_mean

        raise ApproxTheoryError(
            f"unknown experiment {name!r}{did_you_mean(name, EXPERIMENTS)} "
            f"(known: {', '.join(EXPERIMENTS) or 'none'})"
        )
    return EXPERIMENTS[name]


def cells(
    exp: Experiment, profile: str, device: str = "cpu", overrides: dict | None = None
) -> list[dict]:
    """The cells (config dicts) of ``exp``'s ``profile``: every sub-grid's product (with
    ``overrides`` replacing a parameter's values everywhere) times the seeds; a cell that two
    sub-grids share appears once."""
    subs = profile_grids(exp, profile)
    for k in overrides or {}:
        if k not in subs[0]:
            raise ApproxTheoryError(
                f"{exp.name} has no parameter {k!r} to override (has: {', '.join(subs[0])})"
            )
    out: list[dict] = []
    seen: set = set()
    for grid in subs:
        grid = {**grid, **{k: [v] for k, v in (overrides or {}).items()}}
        keys = list(grid)
        for combo in itertools.product(*(grid[k] for k in keys)):
            for seed in exp.seeds.get(profile, [0]):
                cfg = {**dict(zip(keys, combo)), "seed": seed, "device": device}
                tag = json.dumps(cfg, sort_keys=True, default=str)
                if tag not in seen:
                    seen.add(tag)
                    out.append(cfg)
    return out


#: the packages whose source is part of every cell's cache key (a cell may call anything in them)
KEY_PACKAGES = ("approxtheory", "approxtheory.experiments")

CACHE_SCHEME = "cell-cache-2"


def cell_hash(exp: Experiment, config: dict) -> str:
    """A cell's cache key: the experiment, the config (grid point, seed, device), the
    fingerprint of the whole source of ``approxtheory`` and ``approxtheory.experiments`` (the
    cell function's code included) and the library versions (:func:`provenance.cache_key`)."""
    return provenance.cache_key(
        CACHE_SCHEME,
        exp.name,
        json.dumps(config, sort_keys=True, default=str),
        packages=KEY_PACKAGES,
    )


_TIMING = ("seconds",)  # per-cell timing: kept in the cell file and the run JSON, not the CSV


def _cached_cell(path: Path, key: str, cfg: dict) -> dict | None:
    """The cached record of a cell, or None (a miss) when the file is missing, unreadable, not
    JSON, does not match its digest, or is not a record of this cell (another key, a config
    field missing or different, no result)."""
    rec = read_checked_json(path)
    if not isinstance(rec, dict) or rec.get("cell") != key:
        return None
    if any(k not in rec or rec[k] != v for k, v in cfg.items()):
        return None
    if "trace" in rec and not (
        isinstance(rec["trace"], list) and all(isinstance(t, dict) for t in rec["trace"])
    ):
        return None
    if len(set(rec) - set(cfg) - {"cell", "trace", *_TIMING}) == 0:  # no result at all
        return None
    return rec


def run_experiment(
    name: str,
    profile: str = "quick",
    device: str = "cpu",
    out: str | Path = "results",
    progress: bool = True,
    max_cells: int | None = None,
    overrides: dict | None = None,
    executor: str = "inprocess",
    workers: int | None = None,
    scheduler: str | None = None,
    connect_timeout: float = 10.0,
) -> dict:
    """Run (or resume) an experiment; returns a summary with paths and counts.

    ``max_cells`` stops after computing that many new cells (a controlled interruption).
    ``executor`` computes the missing cells in this process (``"inprocess"``), a local process
    pool of ``workers`` processes (``"pool"``) or on Dask distributed (``"dask"``: the scheduler
    at ``scheduler``, else a local cluster of ``workers`` processes); see
    :mod:`approxtheory.executors`. Every executor gives the same records and CSV."""
    from .executors import check_executor
    from .report import write_csv

    exp = get(name)
    if device not in ("cpu", "cuda"):
        raise ApproxTheoryError(f"device must be cpu or cuda (got {device!r})")
    check_executor(executor, workers, scheduler)
    gpus = None
    if device == "cuda" and scheduler is None:  # a remote cluster's GPUs are the workers' own
        import torch

        if not torch.cuda.is_available():
            raise DeviceUnavailableError(
                "--device cuda asked for, but torch sees no CUDA device (use --device cpu, or "
                "--executor dask --scheduler ADDRESS for a cluster with GPU workers)"
            )
        gpus = torch.cuda.device_count()  # a local pool or cluster: one worker per GPU
    todo = cells(exp, profile, device, overrides)
    root = Path(out) / name
    (root / "cells").mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    records: list[dict]
    computed, cached, records = 0, 0, []
    from .progress import progress_bar

    where = {"name": "inprocess", "workers": 1, "scheduler": None}
    if executor != "inprocess":
        computed, cached, records, where = _run_elsewhere(
            exp,
            todo,
            root,
            name,
            profile,
            progress,
            max_cells,
            executor,
            workers,
            scheduler,
            connect_timeout,
            gpus,
        )
    for cfg in progress_bar(
        todo if executor == "inprocess" else [],
        desc=f"{name} ({profile})",
        unit="cell",
        disable=not progress or executor != "inprocess",
        file=sys.stderr,
    ):
        key = cell_hash(exp, cfg)
        path = root / "cells" / f"{key}.json"
        rec = _cached_cell(path, key, json_roundtrip(cfg))
        if rec is not None:
            records.append(rec)
            cached += 1
            continue
        if max_cells is not None and computed >= max_cells:
            continue
        from .executors import run_cell

        rec, seconds = run_cell(exp.cell, cfg)
        # normalised as it reads back from the file, so fresh and cached records are equal
        rec = json_roundtrip({**cfg, **rec, "cell": key, "seconds": seconds})
        # a per-step trace goes to a long-format CSV next to the per-cell one; written as soon
        # as it is done (a kill loses nothing); overwrites an unreadable file; keeps key order
        atomic_write_checked_json(path, rec)
        records.append(rec)
        computed += 1
    complete = len(records) == len(todo)
    keys = list(todo[0]) if todo else []
    records.sort(key=lambda r: tuple((str(type(r[k])), r[k]) for k in keys))
    flat = [{k: v for k, v in r.items() if k not in ("trace", *_TIMING)} for r in records]
    csv_path = write_csv(root / f"{profile}.csv", flat)
    trace = [{**{k: r[k] for k in keys}, **t} for r in records for t in r.get("trace", [])]
    if trace:
        write_csv(root / f"{profile}.trace.csv", trace)
    run = {
        "schema_version": SCHEMA_VERSION,
        "experiment": name,
        "profile": profile,
        "device": device,
        "description": exp.description,
        "grid": exp.grids[profile],
        "seeds": exp.seeds.get(profile, [0]),
        "claims": list(exp.claims),
        "libraries": provenance.libraries(),
        "git": provenance.git_revision(),
        "cells": len(todo),
        "computed": computed,
        "cached": cached,
        "complete": complete,
        # where the cells were computed: run-dependent like the timings, so here and not in the
        # CSV or the cell files (every executor writes the same CSV)
        "executor": where,
        "wall_s": round(time.time() - t0, 3),
        "cell_seconds": round(sum(r.get("seconds", 0) for r in records), 3),
    }
    atomic_write_json(root / f"{profile}.json", run)
    plots = plot_experiment(name, profile, out) if complete and exp.plot else []
    return {**run, "csv": str(csv_path), "plots": [str(p) for p in plots]}


def _run_elsewhere(
    exp: Experiment,
    todo: list[dict],
    root: Path,
    name: str,
    profile: str,
    progress: bool,
    max_cells: int | None,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    connect_timeout: float,
    gpus: int | None,
) -> tuple[int, int, list[dict], dict]:
    """The cells of ``todo`` read from the cache, the missing ones computed on ``executor`` and
    written by this process (the client) as each returns; (computed, cached, records, where they
    ran: :attr:`executors.CellRun.info`)."""
    from .executors import compute_cells
    from .progress import progress_bar

    records: list[dict] = []
    missing: list[tuple[dict, str, Path]] = []
    for cfg in todo:
        key = cell_hash(exp, cfg)
        path = root / "cells" / f"{key}.json"
        rec = _cached_cell(path, key, json_roundtrip(cfg))
        if rec is not None:
            records.append(rec)
        elif max_cells is None or len(missing) < max_cells:
            missing.append((cfg, key, path))
    cached = len(records)
    results = compute_cells(  # a bad scheduler address fails here, before the bar shows
        exp.cell,
        [dict(m[0]) for m in missing],
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        connect_timeout=connect_timeout,
        gpus=gpus,
    )
    bar = progress_bar(
        [],
        desc=f"{name} ({profile}, {executor})",
        unit="cell",
        disable=not progress,
        file=sys.stderr,
        total=len(todo),
        initial=cached,
    )
    try:
        for i, rec, seconds in results:
            cfg, key, path = missing[i]
            rec = json_roundtrip({**cfg, **rec, "cell": key, "seconds": seconds})
            atomic_write_checked_json(path, rec)
            records.append(rec)
            bar.update(1)
    finally:
        bar.close()
    return len(records) - cached, cached, records, results.info


def plot_experiment(name: str, profile: str = "quick", out: str | Path = "results") -> list:
    """Regenerate an experiment's plots from its CSV (never from memory)."""
    from .report import read_csv

    exp = get(name)
    csv_path = Path(out) / name / f"{profile}.csv"
    if not csv_path.exists():
        raise ApproxTheoryError(
            f"no results at {csv_path}; run `approxtheory experiment run "
            f"{name} --profile {profile}` first"
        )
    if exp.plot is None:
        return []
    trace_path = Path(out) / name / f"{profile}.trace.csv"
    kw = {"trace": read_csv(trace_path)} if trace_path.exists() else {}
    return exp.plot(read_csv(csv_path), Path(out) / name / f"plots-{profile}", **kw)


def check_cells(
    name: str, profile: str = "quick", device: str = "cpu", overrides: dict | None = None
) -> dict:
    """Validate every cell of a run before it starts and refuse it when it does not fit.

    A cell function may carry ``cell.check(config)``: it raises a typed error for a bad config
    and returns ``{"bytes": ..., "seconds": ...}`` (either optional), the memory one cell needs
    and a lower bound of its time. Cells run one after another: the run needs the largest
    cell's memory and the sum of their times (checked with :func:`approxtheory.resources.require`).
    """
    from .resources import require

    exp = get(name)
    todo = cells(exp, profile, device, overrides)
    check = getattr(exp.cell, "check", None)
    need, seconds = 0, 0.0
    if check is not None:
        for cfg in todo:
            e = check(dict(cfg)) or {}
            need = max(need, int(e.get("bytes", 0)))
            seconds += float(e.get("seconds", 0.0))
    set_ = ", ".join(f"{k}={v}" for k, v in (overrides or {}).items())
    require(
        bytes=need,
        seconds=seconds if check is not None else None,
        what=f"experiment {name} --profile {profile} ({len(todo)} cells"
        + (f"; {set_}" if set_ else "")
        + ")",
    )
    return {"cells": len(todo), "bytes": need, "seconds": seconds}
