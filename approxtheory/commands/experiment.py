"""``approxtheory experiment list|run|plot``: the declarative experiments (the runner is
:mod:`approxtheory.experiment`, the built-in experiments :mod:`approxtheory.experiments`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ApproxTheoryError

__all__ = ["register"]


def _load_builtin() -> None:
    from .. import experiments  # noqa: F401  (registers the built-in experiments)


def _override_value(key: str, text: str, like: list):
    """``--set KEY=TEXT`` parsed with the type of the profile's values for KEY; a number must be
    positive when every value it replaces is (sizes, counts, rates)."""
    from .. import _cliargs

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
        return _cliargs.check(
            _cliargs.positive_float if positive else _cliargs.finite_float, opt, text
        )
    return text


def _bounded_int(lo: int, hi: int):
    from .. import _cliargs

    def parse(text) -> int:
        v = _cliargs.int_at_least(lo)(text)
        if v > hi:
            raise _cliargs._Err(f"must be an integer from {lo} to {hi} (got {text!r})")
        return v

    parse.__name__ = "integer"
    return parse


def _workers(text) -> int:
    from ..executors import MAX_WORKERS

    return _bounded_int(1, MAX_WORKERS)(text)


def _seeds(text) -> int:
    from ..experiment import MAX_CELLS

    return _bounded_int(1, MAX_CELLS)(text)


def _connect_timeout(text) -> float:
    from .. import _cliargs
    from ..executors import MAX_CONNECT_TIMEOUT

    v = _cliargs.positive_float(text)
    if v > MAX_CONNECT_TIMEOUT:
        raise _cliargs._Err(
            f"must be a number of seconds in (0, {MAX_CONNECT_TIMEOUT:g}] (got {text!r})"
        )
    return v


def _scale_preset(exp, scale: str) -> dict:
    """The grid overrides of ``--scale NAME``: the experiment's cell function declares them as
    ``cell.scales = {name: {param: value}}``."""
    presets = getattr(exp.cell, "scales", None)
    if not presets:
        raise ApproxTheoryError(f"{exp.name} has no scales (--scale applies to prism_paired)")
    if scale not in presets:
        raise ApproxTheoryError(
            f"unknown scale {scale!r} for {exp.name} (allowed: {', '.join(presets)})"
        )
    return dict(presets[scale])


def _parse_overrides(
    exp, profile: str, items, corpus: str | None = None, scale: str | None = None
) -> dict | None:
    """``--scale NAME`` (a preset), then ``--set NAME=VALUE`` (repeatable, on top of it) and
    ``--corpus PATH`` -> the overrides of the profile's grid, each ``--set`` parsed with the type
    of the values it replaces."""
    from ..experiment import grid_values

    grid = grid_values(exp, profile)  # raises for an unknown profile
    preset = _scale_preset(exp, scale) if scale is not None else {}
    out = {}
    for it in items:
        key, eq, text = it.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ApproxTheoryError(f"--set takes NAME=VALUE (got {it!r}; e.g. --set steps=50)")
        if key not in grid:
            raise ApproxTheoryError(
                f"{exp.name} has no parameter {key!r} to override (has: {', '.join(grid)})"
            )
        if key in out:
            raise ApproxTheoryError(f"--set {key} given twice")
        out[key] = _override_value(key, text, list(grid[key]))
    if corpus is not None:
        if "corpus" in out:
            raise ApproxTheoryError("the corpus is given twice (--corpus and --set corpus=...)")
        out["corpus"] = corpus
    out = {**preset, **out}
    return out or None


#: the options of `experiment run` only, as (flag, attribute): refused with list and plot
_RUN_ONLY = (
    ("--set", "set"),
    ("--scale", "scale"),
    ("--seeds", "seeds"),
    ("--corpus", "corpus"),
    ("--executor", "executor"),
    ("--workers", "workers"),
    ("--scheduler", "scheduler"),
    ("--connect-timeout", "connect_timeout"),
    ("--tls-ca-file", "tls_ca_file"),
    ("--tls-cert", "tls_cert"),
    ("--tls-key", "tls_key"),
    ("--insecure-scheduler", "insecure_scheduler"),
)


def _ran_line(name: str, r: dict) -> str:
    """The one line ``experiment run`` prints when done."""
    shipped = (f", {r['shipped']} of them shipped" if r.get("shipped") else "") + (
        f", {r['stale']} shipped cell(s) stale (cell code changed)" if r.get("stale") else ""
    )
    return (
        f"{name}: {r['cells']} cells ({r['computed']} computed, {r['cached']} cached{shipped}) "
        f"in {r['wall_s']:.1f} s -> {r['csv']}"
        + (f"; plots: {', '.join(r['plots'])}" if r["plots"] else "")
    )


#: options a dry run cannot honour (it writes and computes nothing, here)
_NOT_DRY = (
    ("--ship", "ship"),
    ("--executor", "executor"),
    ("--workers", "workers"),
    ("--scheduler", "scheduler"),
    ("--device", None),
)


def _dry_run(args, exp, overrides) -> int:
    """``experiment run --dry-run``: the plan and its estimated CPU time (nothing is written)."""
    import sys

    from ..experiment import count_cells
    from ..experiment_plan import plan_run
    from ..resources import format_seconds

    for flag, attr in _NOT_DRY:
        given = args.device != "cpu" if attr is None else getattr(args, attr, None)
        if given not in (None, False):
            raise ApproxTheoryError(
                f"--dry-run computes and writes nothing, here, so it takes no {flag}"
                + (
                    f" (got --device {args.device}; the estimate is this CPU's)"
                    if attr is None
                    else ""
                )
            )
    seeds = exp.seeds
    if args.seeds is not None:
        exp.seeds = {**seeds, args.profile: list(range(args.seeds))}
    try:
        count_cells(exp, args.profile, overrides)
        say = None if args.quiet else (lambda t: print(f"  {t}", file=sys.stderr, flush=True))
        plan = plan_run(
            args.name, args.profile, args.out, overrides, not args.retrain, progress=say
        )
    finally:
        exp.seeds = seeds
    if args.json:
        import json

        print(json.dumps(plan, indent=2))
        return 0
    print(
        f"{args.name} --profile {args.profile}: {plan['cells']} cells: {plan['cached']} in the "
        f"local cache ({args.out}), {plan['shipped']} shipped and fresh, {plan['stale']} shipped "
        f"but stale (cell code changed), {plan['compute'] + plan['stale']} to compute"
    )
    for g in plan["groups"]:
        print(f"  {g['cells']:>3} x [{g['group']}]: ~{format_seconds(g['seconds'])} ({g['how']})")
    print(
        f"estimated CPU time of the cells to compute, one thread each: "
        f"~{format_seconds(plan['estimated_cpu_seconds'])}"
    )
    return 0


def _tls(args):
    """``(CA file, certificate, key)`` from --tls-ca-file, --tls-cert, --tls-key: all three or
    none."""
    given = [args.tls_ca_file, args.tls_cert, args.tls_key]
    if not any(given):
        return None
    if not all(given):
        missing = [f for f, v in zip(("--tls-ca-file", "--tls-cert", "--tls-key"), given) if not v]
        raise ApproxTheoryError(
            f"TLS needs --tls-ca-file, --tls-cert and --tls-key together (missing: "
            f"{', '.join(missing)})"
        )
    return (args.tls_ca_file, args.tls_cert, args.tls_key)


def _cmd(args) -> int:
    from ..experiment import plot_experiment

    _check_action(args)
    if args.action == "list":
        return _cmd_list()
    if not args.name:
        raise ApproxTheoryError(
            f"experiment {args.action} needs a NAME (see `approxtheory experiment list`)"
        )
    if args.action == "run":
        return _cmd_run(args)
    paths = plot_experiment(args.name, _plotted_profile(args), args.out)
    print("\n".join(str(p) for p in paths) or "this experiment has no plots")
    return 0


def _check_action(args) -> None:
    """Refuse a missing action, a run-only option given to another action and ``list NAME``
    (loading the built-in experiments first)."""
    if args.action is None:
        raise ApproxTheoryError(
            "`experiment` needs an action: list, run or plot (see `approxtheory experiment --help`)"
        )
    _load_builtin()
    for flag, attr in _RUN_ONLY:
        given = getattr(args, attr, None)
        if given not in (None, False) and args.action != "run":
            raise ApproxTheoryError(
                f"{flag} applies to `experiment run` only (got `experiment {args.action}`)"
            )
    if args.action == "list" and args.name:
        raise ApproxTheoryError(
            f"`experiment list` takes no NAME (got {args.name!r}); see `approxtheory experiment "
            "list` for every experiment"
        )


def _cmd_list() -> int:
    """``experiment list``: every experiment with its description and cells per profile."""
    from ..experiment import all_experiments, cells

    for e in all_experiments().values():
        n = {p: len(cells(e, p)) for p in e.grids}
        print(
            f"{e.name:<24} {e.description} [cells: "
            + ", ".join(f"{k} {v}" for k, v in n.items())
            + "]"
        )
    return 0


def _executor(args):
    """``(executor, tls, scheduler)`` of ``experiment run``, each checked: the TLS files and
    --insecure-scheduler apply to Dask only, the scheduler address only to Dask."""
    from ..executors import check_executor, check_scheduler

    executor = args.executor or ("pool" if args.workers is not None else "inprocess")
    check_executor(executor, args.workers, args.scheduler)
    tls = _tls(args)
    if executor != "dask" and (tls is not None or args.insecure_scheduler):
        raise ApproxTheoryError(
            "--tls-ca-file, --tls-cert, --tls-key and --insecure-scheduler apply to "
            "--executor dask --scheduler ADDRESS only"
        )
    scheduler = (
        check_scheduler(args.scheduler, tls, args.insecure_scheduler)
        if executor == "dask"
        else None
    )
    return executor, tls, scheduler


def _run_seeds(args, exp, overrides) -> None:
    """With ``--seeds N``: set the experiment's seeds of this profile to 0..N-1 (the caller
    restores them), after refusing a grid of more cells than one run takes."""
    from ..experiment import MAX_CELLS, count_cells

    n_cells = count_cells(exp, args.profile, overrides, n_seeds=args.seeds)
    if n_cells > MAX_CELLS:  # before listing the seeds
        raise ApproxTheoryError(
            f"--seeds {args.seeds}: {args.name} --profile {args.profile} would have "
            f"{n_cells} cells, more than the {MAX_CELLS} one run takes"
        )
    exp.seeds = {**exp.seeds, args.profile: list(range(args.seeds))}


def _cmd_run(args) -> int:
    """``experiment run NAME``: check, then compute the grid (or only plan it with --dry-run)."""
    import sys

    from ..executors import insecure_warning
    from ..experiment import check_cells, get, run_experiment

    executor, tls, scheduler = _executor(args)
    exp = get(args.name)
    overrides = _parse_overrides(exp, args.profile, args.set or [], args.corpus, args.scale)
    if args.dry_run:
        return _dry_run(args, exp, overrides)
    seeds = exp.seeds
    if args.seeds is not None:  # seeds 0..N-1 for this run only (restored below)
        _run_seeds(args, exp, overrides)
    if scheduler is not None and args.insecure_scheduler:
        print(insecure_warning(scheduler), file=sys.stderr)
    try:
        check_cells(args.name, args.profile, args.device, overrides)
        r = run_experiment(
            args.name,
            profile=args.profile,
            device=args.device,
            out=args.out,
            progress=not args.quiet,
            overrides=overrides,
            executor=executor,
            workers=args.workers,
            scheduler=scheduler,
            connect_timeout=10.0 if args.connect_timeout is None else args.connect_timeout,
            tls=tls,
            insecure_scheduler=args.insecure_scheduler,
            ship=args.ship,
            use_shipped=not args.retrain,
        )
    finally:
        exp.seeds = seeds
    print(_ran_line(args.name, r))
    return 0


def _plotted_profile(args) -> str:
    """``experiment plot``'s profile: the one given, else the profile whose results are in
    OUT/NAME (the newest when there are several, named on stderr with the others), else
    quick (whose missing results the redraw then reports)."""
    import os
    import sys

    from ..experiment import get

    if args.profile is not None:
        return args.profile
    get(args.name)  # an unknown experiment: its own one-line error
    folder = Path(args.out) / args.name
    found = []
    for prof in ("quick", "full", "decisive"):
        try:
            found.append((os.stat(folder / f"{prof}.csv").st_mtime, prof))
        except OSError:
            pass
    if not found:
        return "quick"
    found.sort(reverse=True)
    if len(found) > 1:
        print(
            f"experiment plot: results of the profiles {', '.join(p for _t, p in found)} are in "
            f"{folder}; redrawing {found[0][1]} (the newest; --profile picks another)",
            file=sys.stderr,
        )
    return found[0][1]


#: which actions use each option (the others parse it hidden: a run-only option is then
#: refused in one line by :func:`_cmd`, an option a listing or a redraw ignores is accepted as
#: it always was)
_USED_BY = {
    "name": ("run", "plot"),
    "--profile": ("run", "plot"),
    "--out": ("run", "plot"),
}
_ACTIONS = {
    "list": (
        "the experiments and their cell counts",
        "list every experiment (built-in and plug-in) with its description and the number of "
        "cells of each of its profiles",
    ),
    "run": (
        "compute an experiment's grid",
        "run one experiment: its grid of cells (cached per cell) into OUT/NAME/PROFILE, a CSV "
        "and its plots",
    ),
    "plot": (
        "redraw the plots of a finished run",
        "redraw the plots of a finished run from its CSV in OUT/NAME/PROFILE",
    ),
}
#: per-action help of the options whose meaning depends on the action
_HELP = {
    ("run", "name"): "the experiment to run (see `approxtheory experiment list`)",
    ("plot", "name"): "the experiment whose run to redraw (see `approxtheory experiment list`)",
    ("run", "--profile"): "which of the experiment's grids to run (default quick)",
    ("plot", "--profile"): "which profile's run to redraw (default: the one in OUT/NAME, the "
    "newest when there are several)",
    ("run", "--out"): "the results folder: `run` writes DIR/NAME/PROFILE (default results)",
    ("plot", "--out"): "the results folder: `plot` reads DIR/NAME/PROFILE (default results)",
}


def _add_options(p, action: str) -> None:
    """The options of ``experiment ACTION``: those the action uses with their help text, every
    other one hidden (``help=SUPPRESS``)."""
    add = _option_adder(p, action)
    _add_grid_options(add)
    _add_executor_options(add)
    _add_run_flags(add)


def _option_adder(p, action: str):
    """``add(*flags, **kw)``: ``p.add_argument`` with the help of ``experiment ACTION`` (the
    action's own where it has one; hidden where the action does not use the option)."""
    import argparse

    def add(*flags, **kw):
        key = flags[0]
        if (action, key) == ("plot", "--profile"):
            kw["default"] = None  # the profile that was run (_plotted_profile)
        if action in _USED_BY.get(key, ("run",)):
            kw["help"] = _HELP.get((action, key), kw["help"])
        else:
            kw["help"] = argparse.SUPPRESS
        p.add_argument(*flags, **kw)

    return add


def _add_grid_options(add) -> None:
    """NAME and the options of what to compute: profile, device, folder, corpus, grid overrides,
    seeds, memory cap."""
    from .._cliargs import mem_size, out_dir, readable_file

    add(
        "name",
        nargs="?",
        metavar="NAME",
        help="the experiment (see `approxtheory experiment list`)",
    )
    add(
        "--profile",
        default="quick",
        choices=["quick", "full", "decisive"],
        help="which of the experiment's grids (default quick; decisive: the grid a trained "
        "claim's criterion needs, whose cells are shipped in experiments/results)",
    )
    add(
        "--device",
        default="cpu",
        choices=["cpu", "cuda"],
        help="the torch device the cells compute on (default cpu)",
    )
    # a Path default is not run through out_dir: `experiment list` works in a read-only place
    add(
        "--out",
        default=Path("results"),
        metavar="DIR",
        type=out_dir,
        help="the results folder (default results)",
    )
    add(
        "--corpus",
        metavar="PATH",
        type=readable_file,
        help="text file for experiments that train on a corpus (default: CPython's pydoc topics)",
    )
    add(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="override one grid parameter of the profile (repeatable; e.g. --set steps=50); "
        "parsed with the type of the values it replaces",
    )
    add(
        "--scale",
        default=None,
        metavar="NAME",
        help="a size preset of the experiment's grid (prism_paired: small, medium, large = the "
        "Prism paper's models, for --device cuda; toy is the profiles' own); --set applies on "
        "top",
    )
    add(
        "--seeds",
        type=_seeds,
        default=None,
        metavar="N",
        help="run seeds 0..N-1 instead of the profile's seeds",
    )
    add(
        "--max-memory",
        type=mem_size,
        default=None,
        metavar="SIZE",
        help="refuse a run estimated to need more memory (e.g. 16G, 'unlimited'; "
        "default: APPROXTHEORY_MAX_BYTES or a quarter of this machine's memory)",
    )


def _add_executor_options(add) -> None:
    """The options of where the cells compute: executor, workers, Dask scheduler and its TLS."""
    from .._cliargs import readable_file

    add(
        "--executor",
        default=None,
        metavar="NAME",
        help="where the cells compute: inprocess (default), pool (a local process pool; "
        "implied by --workers) or dask (Dask distributed: pip install 'approxtheory[distributed]')",
    )
    add(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="worker processes of the pool or of the local Dask cluster (default: one per core; "
        "never more than the cells to compute)",
    )
    add(
        "--scheduler",
        default=None,
        metavar="tls://HOST:PORT",
        help="the Dask scheduler to run on (default: a local cluster); --executor dask only. "
        "tcp:// only on this machine (127.0.0.1, localhost, [::1]) unless --insecure-scheduler; "
        "elsewhere tls:// with --tls-ca-file, --tls-cert and --tls-key",
    )
    add(
        "--tls-ca-file",
        type=readable_file,
        default=None,
        metavar="PATH",
        help="the cluster's CA certificate (PEM), for a tls:// scheduler",
    )
    add(
        "--tls-cert",
        type=readable_file,
        default=None,
        metavar="PATH",
        help="this client's certificate (PEM, signed by the cluster's CA), for a tls:// scheduler",
    )
    add(
        "--tls-key",
        type=readable_file,
        default=None,
        metavar="PATH",
        help="this client's private key (PEM), for a tls:// scheduler",
    )
    add(
        "--insecure-scheduler",
        action="store_true",
        help="allow a tcp:// scheduler beyond this machine, unencrypted and unauthenticated: "
        "whoever can connect to it can run code on every machine of the cluster, this one "
        "included",
    )
    add(
        "--connect-timeout",
        type=_connect_timeout,
        default=None,
        metavar="SECONDS",
        help="how long to wait for the Dask scheduler (default 10, at most 600)",
    )


def _add_run_flags(add) -> None:
    """The flags of ``experiment run``: shipping, retraining, dry run, JSON, quiet."""
    add(
        "--ship",
        action="store_true",
        help="also write every finished cell to the shipped store experiments/results/NAME/ "
        "(one small JSON per cell, to be committed; verify reads them on every profile)",
    )
    add(
        "--retrain",
        action="store_true",
        help="ignore the shipped cells: compute every cell that is not in the local cache",
    )
    add(
        "--dry-run",
        action="store_true",
        help="train nothing: list the cells (cached, shipped, stale, to compute) and the CPU time "
        "the ones to compute are estimated to take here (each group of cells timed for a few "
        "steps)",
    )
    add("--json", action="store_true", help="with --dry-run: the plan as JSON on stdout")
    add("--quiet", action="store_true", help="no progress bar on stderr")


def register(p) -> None:
    # metavar None: the usage shows {list,run,plot} and an unknown action is refused as
    # "argument action: invalid choice: ..." (as when the action was a positional choice)
    acts = p.add_subparsers(dest="action", title="actions")
    for action, (short, description) in _ACTIONS.items():
        a = acts.add_parser(action, help=short, description=description, allow_abbrev=False)
        _add_options(a, action)
    p.set_defaults(func=_cmd)
