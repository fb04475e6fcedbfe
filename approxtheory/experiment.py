"""The experiment runner shared by ``verify`` and every experiment.

An experiment is declarative: a grid of cells per profile (``quick``/``full``), seeds, and a pure
cell function (config in, record out). The runner caches every cell by a key covering everything
the cell depends on (:func:`cell_hash`: the experiment, the cell's config, the whole source of
``approxtheory`` and ``experiments`` and the library versions); a cell file that cannot be read or
is not a record of that cell is a miss and is recomputed; a killed run resumes where it stopped;
results are a tidy CSV plus one JSON per run (schema version, config, seeds, library versions, git
revision, timings). Timings stay out of the CSV (they are in the cell files and the run JSON), so
a cached, resumed or fresh run writes the same CSV. Plots are regenerated from the CSV only.

Example::

    >>> from approxtheory.experiment import run_experiment
    >>> res = run_experiment("softmax_beta_sweep", profile="quick", out="results")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .errors import ApproxTheoryError
from . import provenance
from .io import atomic_write_checked_json, atomic_write_json, json_roundtrip, read_checked_json

__all__ = ["Experiment", "EXPERIMENTS", "register_experiment", "run_experiment",
           "plot_experiment", "cells", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


@dataclass
class Experiment:
    name: str
    description: str
    grids: dict                       # profile -> {param: [values]}
    cell: Callable[[dict], dict]      # pure: config -> record (numbers)
    seeds: dict = field(default_factory=lambda: {"quick": [0], "full": [0, 1, 2]})
    plot: Callable[[list, Path], list] | None = None
    claims: tuple = ()


EXPERIMENTS: dict[str, Experiment] = {}


def register_experiment(exp: Experiment) -> Experiment:
    EXPERIMENTS[exp.name] = exp
    return exp


def _load_all():
    import experiments  # noqa: F401  (registers the project's experiments)


def get(name: str) -> Experiment:
    _load_all()
    if name not in EXPERIMENTS:
        import difflib
        close = difflib.get_close_matches(name, EXPERIMENTS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ApproxTheoryError(f"unknown experiment {name!r}{hint} (known: "
                                f"{', '.join(EXPERIMENTS) or 'none'})")
    return EXPERIMENTS[name]


def cells(exp: Experiment, profile: str, device: str = "cpu",
          overrides: dict | None = None) -> list[dict]:
    if profile not in exp.grids:
        raise ApproxTheoryError(f"{exp.name} has no profile {profile!r} (has: "
                                f"{', '.join(exp.grids)})")
    grid = dict(exp.grids[profile])
    for k, v in (overrides or {}).items():
        if k not in grid:
            raise ApproxTheoryError(f"{exp.name} has no parameter {k!r} to override (has: "
                                    f"{', '.join(grid)})")
        grid[k] = [v]
    keys = list(grid)
    out = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        for seed in exp.seeds.get(profile, [0]):
            out.append({**dict(zip(keys, combo)), "seed": seed, "device": device})
    return out


#: the packages whose source is part of every cell's cache key (a cell may call anything in them)
KEY_PACKAGES = ("approxtheory", "experiments")

CACHE_SCHEME = "cell-cache-2"


def cell_hash(exp: Experiment, config: dict) -> str:
    """A cell's cache key: the experiment, the config (grid point, seed, device), the
    fingerprint of the whole source of ``approxtheory`` and ``experiments`` (the cell function's
    code included) and the library versions."""
    h = hashlib.sha256()
    for part in (CACHE_SCHEME, exp.name, json.dumps(config, sort_keys=True, default=str),
                 provenance.source_fingerprint(KEY_PACKAGES),
                 json.dumps(provenance.libraries(), sort_keys=True)):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


_TIMING = ("seconds",)     # per-cell timing: kept in the cell file and the run JSON, not the CSV


def _cached_cell(path: Path, key: str, cfg: dict) -> dict | None:
    """The cached record of a cell, or None (a miss) when the file is missing, unreadable, not
    JSON, does not match its digest, or is not a record of this cell (another key, a config
    field missing or different, no result)."""
    rec = read_checked_json(path)
    if not isinstance(rec, dict) or rec.get("cell") != key:
        return None
    if any(k not in rec or rec[k] != v for k, v in cfg.items()):
        return None
    if "trace" in rec and not (isinstance(rec["trace"], list) and
                               all(isinstance(t, dict) for t in rec["trace"])):
        return None
    if len(set(rec) - set(cfg) - {"cell", "trace", *_TIMING}) == 0:   # no result at all
        return None
    return rec


def run_experiment(name: str, profile: str = "quick", device: str = "cpu",
                   out: str | Path = "results", progress: bool = True,
                   max_cells: int | None = None, overrides: dict | None = None) -> dict:
    """Run (or resume) an experiment; returns a summary with paths and counts.

    ``max_cells`` stops after computing that many new cells (a controlled interruption)."""
    from .report import write_csv
    exp = get(name)
    if device not in ("cpu", "cuda"):
        raise ApproxTheoryError(f"device must be cpu or cuda (got {device!r})")
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ApproxTheoryError("--device cuda asked for, but torch sees no CUDA device")
    todo = cells(exp, profile, device, overrides)
    root = Path(out) / name
    (root / "cells").mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    computed, cached, records = 0, 0, []
    from tqdm import tqdm
    for cfg in tqdm(todo, desc=f"{name} ({profile})", unit="cell", disable=not progress,
                    file=sys.stderr):
        key = cell_hash(exp, cfg)
        path = root / "cells" / f"{key}.json"
        rec = _cached_cell(path, key, json_roundtrip(cfg))
        if rec is not None:
            records.append(rec)
            cached += 1
            continue
        if max_cells is not None and computed >= max_cells:
            continue
        t1 = time.time()
        rec = exp.cell(dict(cfg))
        # normalised as it reads back from the file, so fresh and cached records are equal
        rec = json_roundtrip({**cfg, **rec, "cell": key, "seconds": round(time.time() - t1, 4)})
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
    run = {"schema_version": SCHEMA_VERSION, "experiment": name, "profile": profile,
           "device": device, "description": exp.description, "grid": exp.grids[profile],
           "seeds": exp.seeds.get(profile, [0]), "claims": list(exp.claims),
           "libraries": provenance.libraries(), "git": provenance.git_revision(),
           "cells": len(todo),
           "computed": computed, "cached": cached, "complete": complete,
           "wall_s": round(time.time() - t0, 3),
           "cell_seconds": round(sum(r.get("seconds", 0) for r in records), 3)}
    atomic_write_json(root / f"{profile}.json", run)
    plots = plot_experiment(name, profile, out) if complete and exp.plot else []
    return {**run, "csv": str(csv_path), "plots": [str(p) for p in plots]}


def plot_experiment(name: str, profile: str = "quick", out: str | Path = "results") -> list:
    """Regenerate an experiment's plots from its CSV (never from memory)."""
    from .report import read_csv
    exp = get(name)
    csv_path = Path(out) / name / f"{profile}.csv"
    if not csv_path.exists():
        raise ApproxTheoryError(f"no results at {csv_path}; run `approxtheory experiment run "
                                f"{name} --profile {profile}` first")
    if exp.plot is None:
        return []
    trace_path = Path(out) / name / f"{profile}.trace.csv"
    kw = {"trace": read_csv(trace_path)} if trace_path.exists() else {}
    return exp.plot(read_csv(csv_path), Path(out) / name / f"plots-{profile}", **kw)


def _override_value(key: str, text: str, like: list):
    """``--set KEY=TEXT`` parsed with the type of the profile's values for KEY; a number must be
    positive when every value it replaces is (sizes, counts, rates)."""
    from . import _cliargs
    opt = f"--set {key}"
    if like and all(isinstance(v, bool) for v in like):
        t = text.strip().lower()
        if t not in ("true", "false", "1", "0", "yes", "no"):
            raise ApproxTheoryError(f"{opt} must be true or false (got {text!r})")
        return t in ("true", "1", "yes")
    numbers = [v for v in like if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if like and len(numbers) == len(like):
        positive = all(v > 0 for v in numbers)
        if all(isinstance(v, int) for v in numbers):
            return _cliargs.check(_cliargs.pos_int if positive else _cliargs.integer, opt, text)
        return _cliargs.check(_cliargs.positive_float if positive else _cliargs.finite_float,
                              opt, text)
    return text


def _parse_overrides(exp: Experiment, profile: str, items, corpus: str | None = None) -> dict:
    """``--set NAME=VALUE`` (repeatable) and ``--corpus PATH`` -> the overrides of the profile's
    grid, each parsed with the type of the values it replaces."""
    if profile not in exp.grids:
        raise ApproxTheoryError(f"{exp.name} has no profile {profile!r} (has: "
                                f"{', '.join(exp.grids)})")
    grid = exp.grids[profile]
    out = {}
    for it in items:
        key, eq, text = it.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ApproxTheoryError(f"--set takes NAME=VALUE (got {it!r}; e.g. --set steps=50)")
        if key not in grid:
            raise ApproxTheoryError(f"{exp.name} has no parameter {key!r} to override (has: "
                                    f"{', '.join(grid)})")
        if key in out:
            raise ApproxTheoryError(f"--set {key} given twice")
        out[key] = _override_value(key, text, list(grid[key]))
    if corpus is not None:
        if "corpus" in out:
            raise ApproxTheoryError("the corpus is given twice (--corpus and --set corpus=...)")
        out["corpus"] = corpus
    return out or None


def check_cells(name: str, profile: str = "quick", device: str = "cpu",
                overrides: dict | None = None) -> dict:
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
    require(bytes=need, seconds=seconds if check is not None else None,
            what=f"experiment {name} --profile {profile} ({len(todo)} cells"
                 + (f"; {set_}" if set_ else "") + ")")
    return {"cells": len(todo), "bytes": need, "seconds": seconds}


def _cmd(args) -> int:
    if args.action == "list":
        _load_all()
        for e in EXPERIMENTS.values():
            n = {p: len(cells(e, p)) for p in e.grids}
            print(f"{e.name:<24} {e.description} [cells: " +
                  ", ".join(f"{k} {v}" for k, v in n.items()) + "]")
        return 0
    if not args.name:
        raise ApproxTheoryError(f"experiment {args.action} needs a NAME (see `approxtheory "
                                "experiment list`)")
    if args.set and args.action != "run":
        raise ApproxTheoryError(f"--set applies to `experiment run` only (got `experiment "
                                f"{args.action}`)")
    if args.action == "run":
        overrides = _parse_overrides(get(args.name), args.profile, args.set or [], args.corpus)
        check_cells(args.name, args.profile, args.device, overrides)
        r = run_experiment(args.name, profile=args.profile, device=args.device, out=args.out,
                           progress=not args.quiet, overrides=overrides)
        print(f"{args.name}: {r['cells']} cells ({r['computed']} computed, {r['cached']} cached) "
              f"in {r['wall_s']:.1f} s -> {r['csv']}" +
              (f"; plots: {', '.join(r['plots'])}" if r["plots"] else ""))
        return 0
    paths = plot_experiment(args.name, args.profile, args.out)
    print("\n".join(str(p) for p in paths) or "this experiment has no plots")
    return 0


def register(sub) -> None:
    p = sub.add_parser("experiment", help="declarative experiments: list, run, plot")
    p.add_argument("action", choices=["list", "run", "plot"])
    p.add_argument("name", nargs="?")
    p.add_argument("--profile", default="quick", choices=["quick", "full"])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    from ._cliargs import mem_size, out_dir, readable_file
    # a Path default is not run through out_dir: `experiment list` works in a read-only place
    p.add_argument("--out", default=Path("results"), metavar="DIR", type=out_dir)
    p.add_argument("--corpus", metavar="PATH", type=readable_file,
                   help="text file for experiments that train on a corpus (default: CPython's "
                        "pydoc topics)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override one grid parameter of the profile for `run` (repeatable; e.g. "
                        "--set steps=50); parsed with the type of the values it replaces")
    p.add_argument("--max-memory", type=mem_size, default=None, metavar="SIZE",
                   help="refuse a run estimated to need more memory (e.g. 16G, 'unlimited'; "
                        "default: APPROXTHEORY_MAX_BYTES or a quarter of this machine's memory)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd)
