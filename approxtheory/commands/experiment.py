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


def _cmd(args) -> int:
    from ..experiment import (
        all_experiments,
        cells,
        check_cells,
        get,
        plot_experiment,
        run_experiment,
    )

    _load_builtin()
    if args.action == "list":
        for e in all_experiments().values():
            n = {p: len(cells(e, p)) for p in e.grids}
            print(
                f"{e.name:<24} {e.description} [cells: "
                + ", ".join(f"{k} {v}" for k, v in n.items())
                + "]"
            )
        return 0
    if not args.name:
        raise ApproxTheoryError(
            f"experiment {args.action} needs a NAME (see `approxtheory experiment list`)"
        )
    for flag, given in (("--set", args.set), ("--scale", args.scale), ("--seeds", args.seeds)):
        if given is not None and args.action != "run":
            raise ApproxTheoryError(
                f"{flag} applies to `experiment run` only (got `experiment {args.action}`)"
            )
    if args.action == "run":
        from ..executors import check_executor

        executor = args.executor or ("pool" if args.workers is not None else "inprocess")
        check_executor(executor, args.workers, args.scheduler)
        exp = get(args.name)
        overrides = _parse_overrides(exp, args.profile, args.set or [], args.corpus, args.scale)
        seeds = exp.seeds
        if args.seeds is not None:  # seeds 0..N-1 for this run only (restored below)
            exp.seeds = {**seeds, args.profile: list(range(args.seeds))}
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
                scheduler=args.scheduler,
                connect_timeout=args.connect_timeout,
            )
        finally:
            exp.seeds = seeds
        print(
            f"{args.name}: {r['cells']} cells ({r['computed']} computed, {r['cached']} cached) "
            f"in {r['wall_s']:.1f} s -> {r['csv']}"
            + (f"; plots: {', '.join(r['plots'])}" if r["plots"] else "")
        )
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
    from .._cliargs import mem_size, out_dir, pos_int, positive_float, readable_file

    # a Path default is not run through out_dir: `experiment list` works in a read-only place
    p.add_argument("--out", default=Path("results"), metavar="DIR", type=out_dir)
    p.add_argument(
        "--corpus",
        metavar="PATH",
        type=readable_file,
        help="text file for experiments that train on a corpus (default: CPython's pydoc topics)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="override one grid parameter of the profile for `run` (repeatable; e.g. "
        "--set steps=50); parsed with the type of the values it replaces",
    )
    p.add_argument(
        "--scale",
        default=None,
        metavar="NAME",
        help="a size preset of the experiment's grid for `run` (prism_paired: small, medium, "
        "large = the Prism paper's models, for --device cuda; toy is the profiles' own); "
        "--set applies on top",
    )
    p.add_argument(
        "--seeds",
        type=pos_int,
        default=None,
        metavar="N",
        help="run seeds 0..N-1 instead of the profile's seeds (`run` only)",
    )
    p.add_argument(
        "--max-memory",
        type=mem_size,
        default=None,
        metavar="SIZE",
        help="refuse a run estimated to need more memory (e.g. 16G, 'unlimited'; "
        "default: APPROXTHEORY_MAX_BYTES or a quarter of this machine's memory)",
    )
    p.add_argument(
        "--executor",
        default=None,
        metavar="NAME",
        help="where `run` computes its cells: inprocess (default), pool (a local process pool; "
        "implied by --workers) or dask (Dask distributed: pip install 'approxtheory[distributed]')",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes of the pool or of the local Dask cluster (default: one per core)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="the Dask scheduler to run on (default: a local cluster); --executor dask only",
    )
    p.add_argument(
        "--connect-timeout",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the Dask scheduler (default 10)",
    )
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_cmd)
