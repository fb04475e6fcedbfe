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

import dataclasses
import itertools
import json
import math
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import provenance
from .errors import (
    ApproxTheoryError,
    ConfigError,
    DeviceUnavailableError,
    InvalidValueError,
    ValueRangeError,
)
from .io import (
    atomic_write_checked_json,
    atomic_write_json,
    json_roundtrip,
    read_at_most,
    read_checked_json,
    safe_dir,
)

__all__ = [
    "Experiment",
    "Param",
    "one_of",
    "int_range",
    "float_range",
    "held_recipe",
    "MAX_CELLS",
    "OVERRIDE_SPAN",
    "count_cells",
    "check_value",
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

#: the most cells one run may have (grid points times seeds), checked before they are listed
MAX_CELLS = 100_000

#: a number ``--set`` gives a parameter that its experiment declares no :class:`Param` for, in an
#: experiment without a time estimate (``cell.check``), may be at most this many times the
#: largest value of that parameter in its profiles (so ``--set steps=1000000000`` is refused
#: before it starts, not run for a year)
OVERRIDE_SPAN = 100


@dataclass(frozen=True)
class Param:
    """The values one grid parameter may take, declared by its experiment (``Experiment.params``)
    and checked for every cell of a run, ``--set`` and ``--scale`` values included, before
    anything starts (the profiles' own values when the experiment registers): ``choices`` (the
    only values allowed), else a number from ``lo`` to ``hi`` (bounds included; ``integer``:
    whole numbers only). Build them with :func:`one_of`, :func:`int_range`, :func:`float_range`.
    """

    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    integer: bool = False

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        kind = "an integer" if self.integer else "a number"
        return f"{kind} from {self.lo:g} to {self.hi:g}"

    def allows(self, value) -> bool:
        if self.choices:
            return any(type(value) is type(c) and value == c for c in self.choices) or (
                # an int grid value typed as float by --set (or the other way) is still the value
                not isinstance(value, bool)
                and isinstance(value, (int, float))
                and any(
                    not isinstance(c, bool) and isinstance(c, (int, float)) and value == c
                    for c in self.choices
                )
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.integer and not isinstance(value, int):
            return False
        lo = -math.inf if self.lo is None else self.lo
        hi = math.inf if self.hi is None else self.hi
        return math.isfinite(value) and lo <= value <= hi


def one_of(*values) -> Param:
    """A parameter that takes only these values (names, table numbers, flags)."""
    if not values:
        raise ConfigError("one_of needs at least one value")
    return Param(choices=tuple(values))


def int_range(lo: int, hi: int) -> Param:
    """An integer parameter from ``lo`` to ``hi`` (bounds included)."""
    if not lo <= hi:
        raise ConfigError(f"int_range needs lo <= hi (got {lo}, {hi})")
    return Param(lo=lo, hi=hi, integer=True)


def held_recipe(lr: float, steps: int, batch: int | None = None, **extra) -> dict:
    """A decisive profile's training recipe as grid values: Adam at ``lr`` for ``steps``, a
    tenth of them warm-up, a cosine decay to 0.02·lr by three quarters of them, then held (the
    training-adequacy gate's plateau test reads the last quarter at the final rate); ``batch``
    where the cell does not fix it; ``extra`` keys as given."""
    out = {"lr": [lr], **({"batch": [batch]} if batch is not None else {}), "steps": [steps]}
    out.update(warmup=[steps // 10], decay=[steps * 3 // 4], min_lr=[0.02])
    return {**out, **{k: [v] for k, v in extra.items()}}


def float_range(lo: float, hi: float) -> Param:
    """A real parameter from ``lo`` to ``hi`` (bounds included, both finite)."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ConfigError(f"float_range needs finite lo <= hi (got {lo}, {hi})")
    return Param(lo=lo, hi=hi)


@dataclass
class Experiment:
    name: str
    description: str
    grids: dict  # profile -> {param: [values]}, or a list of such grids (see profile_grids)
    cell: Callable[[dict], dict]  # pure: config -> record (numbers)
    seeds: dict = field(default_factory=lambda: {"quick": [0], "full": [0, 1, 2]})
    plot: Callable[[list, Path], list] | None = None
    claims: tuple = ()
    #: what each grid parameter may take ({name: Param}); see :func:`check_value`
    params: dict = field(default_factory=dict)
    #: library modules the cell's numbers depend on besides the model, the training loop and the
    #: tasks (:data:`approxtheory.shipped.CELL_CODE`): part of a shipped cell's code fingerprint
    code: tuple = ()


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


def _all_values(exp: Experiment, key: str) -> list:
    return [v for prof in exp.grids for v in grid_values(exp, prof).get(key, [])]


def check_value(exp: Experiment, key: str, value) -> None:
    """Refuse a value of grid parameter ``key`` that ``exp`` does not allow: outside its
    declared :class:`Param` (InvalidValueError for a choice, ValueRangeError for a range); for a
    number without a declaration, in an experiment without a time estimate (``cell.check``),
    more than :data:`OVERRIDE_SPAN` times the largest value of its profiles (ValueRangeError)."""
    spec = exp.params.get(key)
    if spec is not None:
        if not spec.allows(value):
            cls = InvalidValueError if spec.choices else ValueRangeError
            raise cls(f"{exp.name}: {key} must be {spec.describe()} (got {value!r})")
        return
    if getattr(exp.cell, "check", None) is not None:
        return  # the experiment's own check estimates the time and memory of every cell
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    nums = [
        abs(v)
        for v in _all_values(exp, key)
        if not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
    ]
    if not nums:
        return
    cap = OVERRIDE_SPAN * max(nums)
    if not (math.isfinite(value) and abs(value) <= cap):
        raise ValueRangeError(
            f"{exp.name}: {key}={value!r} is beyond what the runner allows for it: at most "
            f"{cap:g} in magnitude ({OVERRIDE_SPAN} times the largest value in its profiles; "
            f"{exp.name} declares no range or time estimate for {key})"
        )


def _check_params(exp: Experiment) -> None:
    if not isinstance(exp.params, dict) or not all(
        isinstance(v, Param) for v in exp.params.values()
    ):
        raise ConfigError(f"experiment {exp.name!r}: params must be {{name: Param}}")
    for prof in exp.grids:
        for key, values in grid_values(exp, prof).items():
            spec = exp.params.get(key)
            if spec is None:
                continue
            bad = [v for v in values if not spec.allows(v)]
            if bad:
                raise ConfigError(
                    f"experiment {exp.name!r}, profile {prof!r}: {key} = {bad[0]!r} is not "
                    f"{spec.describe()} (its declared Param)"
                )


def register_experiment(exp: Experiment) -> Experiment:
    """Add ``exp`` to the registry (an experiment module calls this when it is imported).

    Registering the same cell function again (a module reloaded) replaces the entry; another
    experiment of the same name, or the same module imported under a second name (the built-in
    experiments as ``experiments`` besides ``approxtheory.experiments``), raises ConfigError."""
    _check_grids(exp)
    _check_params(exp)
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


def count_cells(
    exp: Experiment, profile: str, overrides: dict | None = None, n_seeds: int | None = None
) -> int:
    """How many cells :func:`cells` lists at most (before two sub-grids' shared cells are
    merged), computed without listing them; ``n_seeds`` instead of the profile's seeds."""
    seeds = len(exp.seeds.get(profile, [0])) if n_seeds is None else int(n_seeds)
    n = 0
    for grid in profile_grids(exp, profile):
        m = 1
        for k, vs in grid.items():
            m *= 1 if k in (overrides or {}) else len(vs)
        n += m
    return n * seeds


def cells(
    exp: Experiment, profile: str, device: str = "cpu", overrides: dict | None = None
) -> list[dict]:
    """The cells (config dicts) of ``exp``'s ``profile``: every sub-grid's product (with
    ``overrides`` replacing a parameter's values everywhere) times the seeds; a cell that two
    sub-grids share appears once. Every override is checked (:func:`check_value`) and a run of
    more than :data:`MAX_CELLS` cells is refused (ValueRangeError) before any is listed."""
    subs = profile_grids(exp, profile)
    for k in overrides or {}:
        if k not in subs[0]:
            raise ApproxTheoryError(
                f"{exp.name} has no parameter {k!r} to override (has: {', '.join(subs[0])})"
            )
        check_value(exp, k, overrides[k])  # type: ignore[index]
    n = count_cells(exp, profile, overrides)
    if n > MAX_CELLS:
        raise ValueRangeError(
            f"{exp.name} --profile {profile} would have {n} cells, more than the {MAX_CELLS} "
            "one run takes; use fewer seeds or grid values"
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
    """The cached record of a cell, or None (a miss) when the file is missing, not a regular
    file (a FIFO, a device, a symlink), too large, unreadable, not strict JSON, nested too deep
    (all read by :func:`approxtheory.io.read_json_entry`, which never blocks), does not match
    its digest, or is not a plain record of this cell (another key, a config field missing or
    different, a value that is not plain data, no result, a time that is not a number)."""
    from .executors import CellResultError, check_record

    rec = read_checked_json(path)
    if not isinstance(rec, dict) or rec.get("cell") != key:
        return None
    if any(k not in rec or rec[k] != v for k, v in cfg.items()):
        return None
    secs = rec.get("seconds", 0.0)
    if isinstance(secs, bool) or not isinstance(secs, (int, float)) or not secs >= 0:
        return None
    try:
        check_record({k: v for k, v in rec.items() if k not in ("cell", *_TIMING)})
    except CellResultError:
        return None
    if len(set(rec) - set(cfg) - {"cell", "trace", *_TIMING}) == 0:  # no result at all
        return None
    return rec


class _CacheWriter:
    """Writes cell entries; an entry that cannot be written or replaced (a directory in its
    place, a read-only folder, a full disk) is skipped with one warning line on stderr for the
    run (the first failure; the cell's record is still used) and the run goes on."""

    def __init__(self, folder: Path):
        self.folder, self.failed = folder, 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self._warn(folder, e)

    def _warn(self, path: Path, e: OSError) -> None:
        self.failed += 1
        if self.failed == 1:
            why = e.strerror or type(e).__name__
            print(
                f"approxtheory: warning: cannot write the cell cache at {path} ({why}); cells "
                "that cannot be cached are computed and used but not stored (this run goes on; "
                "further failures are not reported)",
                file=sys.stderr,
            )

    def write(self, path: Path, rec: dict) -> None:
        try:
            atomic_write_checked_json(path, rec)
        except OSError as e:
            self._warn(path, e)


def _record(cfg: dict, key: str, rec: dict, seconds: float) -> dict:
    """A computed cell's record as the cache stores it (normalised as it reads back, so fresh
    and cached records are equal); the cell's own result checked to be plain data, setting none
    of the runner's keys (:func:`approxtheory.executors.plain_record`)."""
    from .executors import plain_record

    return json_roundtrip({**cfg, **plain_record(rec), "cell": key, "seconds": seconds})


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
    tls: tuple[str, str, str] | None = None,
    insecure_scheduler: bool = False,
    ship: bool = False,
    use_shipped: bool = True,
) -> dict:
    """Run (or resume) an experiment; returns a summary with paths and counts.

    Cells shipped with the repository (:mod:`approxtheory.shipped`) whose cell code is the
    current code are read like cached ones (``use_shipped=False``: ignored, recomputed); stale
    ones (another code fingerprint) are counted and recomputed when the run computes. ``ship``:
    every finished cell (computed, cached or read) is also written to the store, to be committed.

    ``max_cells`` stops after computing that many new cells (a controlled interruption).
    ``executor`` computes the missing cells in this process (``"inprocess"``), a local process
    pool of ``workers`` processes (``"pool"``) or on Dask distributed (``"dask"``: the scheduler
    at ``scheduler``, else a local cluster of ``workers`` processes; a scheduler beyond loopback
    needs ``tls`` = (CA file, certificate, key) with a ``tls://`` address, or
    ``insecure_scheduler=True``); see :mod:`approxtheory.executors`. Every executor gives the
    same records and CSV. A cache entry that cannot be written is skipped with a warning."""
    exp = get(name)
    plan = _RunPlan(
        name=name,
        profile=profile,
        device=device,
        out=out,
        progress=progress,
        max_cells=max_cells,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        connect_timeout=connect_timeout,
        tls=tls,
        insecure_scheduler=insecure_scheduler,
        ship=ship,
        use_shipped=use_shipped,
    )
    _check_run(plan)
    todo = cells(exp, profile, device, overrides)
    plan = dataclasses.replace(plan, gpus=_local_gpus(device, scheduler))
    root, cache = _experiment_dirs(out, name)
    t0 = time.time()
    records: list[dict]
    computed, cached, records = 0, 0, []
    where = {"name": "inprocess", "workers": 1, "scheduler": None}
    store = _Store(exp, plan)
    if executor != "inprocess":
        computed, cached, records, where = _run_elsewhere(exp, todo, root, cache, plan, store)
    computed, cached = _run_inprocess(
        exp, todo, root, cache, plan, records, (computed, cached), store
    )
    tally = _Tally(records, computed, cached, where, t0, store.summary())
    return _write_run(exp, plan, root, todo, tally)


class _Store:
    """The run's view of the shipped cells: reads them on a cache miss (fresh ones only), counts
    the fresh and stale ones, and with ``ship`` writes every finished cell."""

    def __init__(self, exp: Experiment, plan: _RunPlan):
        self.exp, self.use, self.ship = exp, plan.use_shipped, plan.ship
        self.fresh: list[dict] = []
        self.stale = 0
        self.served: set[str] = set()  # cell keys read from the store (fresh there already)

    def read(self, cfg: dict, key: str) -> dict | None:
        if not self.use:
            return None
        from . import shipped

        got = shipped.read_cell(self.exp, cfg)
        if got.status == "stale":
            self.stale += 1
            return None
        if got.status != "fresh" or got.record is None:
            return None
        self.fresh.append(got.meta or {})
        self.served.add(key)
        secs = (got.meta or {}).get("seconds")
        secs = float(secs) if isinstance(secs, (int, float)) and secs >= 0 else 0.0
        return json_roundtrip({**cfg, **got.record, "cell": key, "seconds": secs})

    def write(self, cfg: dict, rec: dict) -> None:
        if self.ship:
            from . import shipped

            shipped.write_cell(self.exp, cfg, rec, float(rec.get("seconds", 0.0)))

    def write_cached(self, cfg: dict, rec: dict) -> None:
        """A cell read from a cache, shipped unless the store already holds it fresh (a
        shipped cell keeps the revision it was computed at): one served by :meth:`read` is not
        read again."""
        if not self.ship or rec.get("cell") in self.served:
            return
        from . import shipped

        if shipped.read_cell(self.exp, cfg).status != "fresh":
            self.write(cfg, rec)

    def summary(self) -> dict:
        from . import shipped

        out: dict = {"shipped": len(self.fresh), "stale": self.stale}
        if self.fresh:
            out["shipped_note"] = shipped.describe(self.fresh)
        return out


#: the fields of a :class:`_RunPlan` that say where its cells are computed, named as
#: :func:`approxtheory.executors.compute_cells` takes them
_EXECUTOR_OPTIONS = (
    "executor",
    "workers",
    "scheduler",
    "connect_timeout",
    "gpus",
    "tls",
    "insecure_scheduler",
)


@dataclass(frozen=True)
class _RunPlan:
    """How :func:`run_experiment` runs an experiment's cells (its arguments, see there; ``gpus``:
    the local GPUs, one worker each, None on CPU or a remote cluster)."""

    name: str
    profile: str
    device: str
    out: str | Path
    progress: bool
    max_cells: int | None
    executor: str
    workers: int | None
    scheduler: str | None
    connect_timeout: float
    tls: tuple[str, str, str] | None = None
    insecure_scheduler: bool = False
    gpus: int | None = None
    ship: bool = False
    use_shipped: bool = True

    def executor_options(self) -> dict:
        """The keyword arguments of :func:`approxtheory.executors.compute_cells` this plan
        sets (where and how its cells are computed)."""
        return {n: getattr(self, n) for n in _EXECUTOR_OPTIONS}


@dataclass(frozen=True)
class _Tally:
    """A run's cells at the end: their records, how many were computed and read from the
    cache, where they were computed (:attr:`executors.CellRun.info`) and when the run began."""

    records: list[dict]
    computed: int
    cached: int
    where: dict
    t0: float
    store: dict = field(default_factory=dict)


def _check_run(plan: _RunPlan) -> None:
    """ApproxTheoryError / ConfigError for a device, executor, scheduler, TLS or ``max_cells``
    that :func:`run_experiment` does not take."""
    from .executors import check_executor, check_scheduler

    executor, max_cells, device = plan.executor, plan.max_cells, plan.device
    if device not in ("cpu", "cuda"):
        raise ApproxTheoryError(f"device must be cpu or cuda (got {device!r})")
    check_executor(executor, plan.workers, plan.scheduler)
    if executor == "dask":
        check_scheduler(plan.scheduler, plan.tls, plan.insecure_scheduler)
    elif plan.tls is not None or plan.insecure_scheduler:
        raise ConfigError("the TLS files and --insecure-scheduler apply to --executor dask only")
    if max_cells is not None and (
        isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 0
    ):
        raise ConfigError(f"max_cells must be a non-negative integer or None (got {max_cells!r})")


def _local_gpus(device: str, scheduler: str | None) -> int | None:
    """The local GPU count for ``--device cuda`` without a scheduler (a local pool or cluster:
    one worker per GPU), else None (a remote cluster's GPUs are the workers' own)."""
    gpus = None
    if device == "cuda" and scheduler is None:
        import torch

        if not torch.cuda.is_available():
            raise DeviceUnavailableError(
                "--device cuda asked for, but torch sees no CUDA device (use --device cpu, or "
                "--executor dask --scheduler ADDRESS for a cluster with GPU workers)"
            )
        gpus = torch.cuda.device_count()
    return gpus


def _experiment_dirs(out, name: str) -> tuple[Path, _CacheWriter]:
    """The experiment's folder under ``out`` and the writer of its cell cache."""
    # writes stay under --out: a symlinked sub-folder leading out of it is refused (ConfigError)
    Path(out).mkdir(parents=True, exist_ok=True)
    root = safe_dir(out, name)
    cells_dir = root / "cells"
    try:
        cells_dir = safe_dir(out, f"{name}/cells")
    except OSError:  # a file in its place: the cache writer warns once and the run goes on
        pass
    return root, _CacheWriter(cells_dir)


def _run_inprocess(
    exp: Experiment,
    todo,
    root: Path,
    cache: _CacheWriter,
    plan: _RunPlan,
    records: list[dict],
    counts: tuple[int, int],
    store: _Store,
) -> tuple[int, int]:
    """With the in-process executor: the cells of ``todo`` read from the cache or computed here
    (at most ``max_cells`` new ones), appended to ``records``; the counts (computed, cached).
    Another executor's counts pass through unchanged."""
    from .progress import progress_bar

    executor, max_cells = plan.executor, plan.max_cells
    computed, cached = counts
    for cfg in progress_bar(
        todo if executor == "inprocess" else [],
        desc=f"{plan.name} ({plan.profile})",
        unit="cell",
        disable=not plan.progress or executor != "inprocess",
        file=sys.stderr,
    ):
        key = cell_hash(exp, cfg)
        path = root / "cells" / f"{key}.json"
        rec = _cached_cell(path, key, json_roundtrip(cfg)) or store.read(cfg, key)
        if rec is not None:
            records.append(rec)
            cached += 1
            store.write_cached(cfg, rec)
            continue
        if max_cells is not None and computed >= max_cells:
            continue
        from .executors import run_cell

        rec, seconds = run_cell(exp.cell, cfg)
        rec = _record(cfg, key, rec, seconds)
        # a per-step trace goes to a long-format CSV next to the per-cell one; written as soon
        # as it is done (a kill loses nothing); overwrites an unreadable file; keeps key order
        cache.write(path, rec)
        store.write(cfg, rec)
        records.append(rec)
        computed += 1
    return computed, cached


def _write_run(exp: Experiment, plan: _RunPlan, root: Path, todo, tally: _Tally) -> dict:
    """The run's CSV (and trace CSV), its ``PROFILE.json`` and plots; the summary."""
    from .report import write_csv

    name, profile, device, out = plan.name, plan.profile, plan.device, plan.out
    records, computed, cached, where = tally.records, tally.computed, tally.cached, tally.where
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
        "wall_s": round(time.time() - tally.t0, 3),
        **tally.store,
        "cell_seconds": round(sum(r.get("seconds", 0) for r in records), 3),
    }
    atomic_write_json(root / f"{profile}.json", run)
    plots = plot_experiment(name, profile, out) if complete and exp.plot else []
    return {**run, "csv": str(csv_path), "plots": [str(p) for p in plots]}


def _run_elsewhere(
    exp: Experiment,
    todo: list[dict],
    root: Path,
    cache: _CacheWriter,
    plan: _RunPlan,
    store: _Store,
) -> tuple[int, int, list[dict], dict]:
    """The cells of ``todo`` read from the cache, the missing ones computed on ``executor`` and
    written by this process (the client) as each returns; (computed, cached, records, where they
    ran: :attr:`executors.CellRun.info`)."""
    from .executors import compute_cells
    from .progress import progress_bar

    max_cells = plan.max_cells
    records: list[dict] = []
    missing: list[tuple[dict, str, Path]] = []
    for cfg in todo:
        key = cell_hash(exp, cfg)
        path = root / "cells" / f"{key}.json"
        rec = _cached_cell(path, key, json_roundtrip(cfg)) or store.read(cfg, key)
        if rec is not None:
            records.append(rec)
            store.write_cached(cfg, rec)
        elif max_cells is None or len(missing) < max_cells:
            missing.append((cfg, key, path))
    cached = len(records)
    results = compute_cells(  # a bad scheduler address fails here, before the bar shows
        exp.cell,
        [dict(m[0]) for m in missing],
        **plan.executor_options(),
    )
    bar = progress_bar(
        [],
        desc=f"{plan.name} ({plan.profile}, {plan.executor})",
        unit="cell",
        disable=not plan.progress,
        file=sys.stderr,
        total=len(todo),
        initial=cached,
    )
    try:
        for i, rec, seconds in results:
            cfg, key, path = missing[i]
            rec = _record(cfg, key, rec, seconds)
            cache.write(path, rec)
            store.write(cfg, rec)
            records.append(rec)
            bar.update(1)
    finally:
        bar.close()
    return len(records) - cached, cached, records, results.info


#: the largest results CSV ``experiment plot`` reads
MAX_CSV_BYTES = 256 << 20


def _read_results_csv(path: Path, columns: list[str]) -> list[dict]:
    """The rows of a results CSV the runner wrote (numbers as floats, as
    :func:`approxtheory.report.read_csv` gives them), read safely: a regular file only (a FIFO or
    device is refused, never waited on), at most :data:`MAX_CSV_BYTES`, UTF-8, well-formed, with
    every one of ``columns`` and as many fields in each row as in the header; anything else is
    InvalidValueError naming the file."""
    import csv
    import io

    where = f"the results file {path}"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)  # OSError (missing, no permission): the CLI's one line
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidValueError(f"{where} is not a regular file")
        if st.st_size > MAX_CSV_BYTES:
            raise InvalidValueError(
                f"{where} is larger than {MAX_CSV_BYTES >> 20} MiB; the runner writes far "
                "smaller ones"
            )
        data = read_at_most(fd, MAX_CSV_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CSV_BYTES:
        raise InvalidValueError(f"{where} is larger than {MAX_CSV_BYTES >> 20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidValueError(f"{where} is not UTF-8 text (byte {e.start})") from None
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        header = next(reader, None)
        body = list(reader)
    except csv.Error as e:
        raise InvalidValueError(f"{where} is not a well-formed CSV ({e})") from None
    if not header:
        raise InvalidValueError(f"{where} is empty (no header)")
    lacking = [c for c in columns if c not in header]
    if lacking:
        raise InvalidValueError(
            f"{where} lacks the column(s) {', '.join(lacking)} that the runner writes (it has "
            f"{', '.join(header[:8])}{', ...' if len(header) > 8 else ''}); run the experiment "
            "again to rewrite it"
        )
    if len(set(header)) != len(header):
        raise InvalidValueError(f"{where} repeats a column in its header")
    out = []
    for n, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InvalidValueError(
                f"{where}: line {n} has {len(row)} fields, the header {len(header)}"
            )
        d: dict[str, float | str] = {}
        for k, v in zip(header, row):
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
        out.append(d)
    if not out:
        raise InvalidValueError(f"{where} has no rows")
    return out


def plot_experiment(name: str, profile: str = "quick", out: str | Path = "results") -> list:
    """Regenerate an experiment's plots from its CSV (never from memory). A CSV that is not
    one the runner wrote (not a regular file, too large, not UTF-8, malformed, without the grid's
    columns, or without what the plot needs: the plot function fails on it) is
    InvalidValueError, never a hang."""
    exp = get(name)
    csv_path = Path(out) / name / f"{profile}.csv"
    if not os.path.lexists(csv_path):
        raise ApproxTheoryError(
            f"no results at {csv_path}; run `approxtheory experiment run "
            f"{name} --profile {profile}` first"
        )
    if exp.plot is None:
        return []
    params = list(profile_grids(exp, profile)[0])
    rows = _read_results_csv(csv_path, [*params, "seed", "device", "cell"])
    trace_path = Path(out) / name / f"{profile}.trace.csv"
    kw = {"trace": _read_results_csv(trace_path, [*params, "seed"])} if trace_path.exists() else {}
    try:
        return exp.plot(rows, safe_dir(out, f"{name}/plots-{profile}"), **kw)
    except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError) as e:
        # the plot reads nothing but these files (a column missing, a value of the wrong kind)
        raise InvalidValueError(
            f"cannot plot the results at {csv_path} ({type(e).__name__}: {e}): they do not "
            f"hold what the plot of {name} needs (a file or cache entry this version of the "
            f"runner did not write?); run `approxtheory experiment run {name} --profile "
            f"{profile}` again after removing {csv_path.parent}"
        ) from None


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
