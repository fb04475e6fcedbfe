"""``approxtheory construct NAME [--KNOB VALUE ...] [--budget N] [--search-seed S] [--json]`` and
``approxtheory construct --list`` (the constructions are :mod:`approxtheory.constructions`)."""

from __future__ import annotations

import argparse
import json

from .. import _cliargs
from ..errors import ConfigError

__all__ = ["register"]

# options shared by every construction, with their range checks (see approxtheory._cliargs)
# ``--seed`` is the search's seed unless the construction has a knob called ``seed`` (the seed of
# its weights, e.g. hc_k1_synthetic's a_i): then ``--seed`` sets that knob, and ``--search-seed``
# (accepted everywhere) is the search's.
_GLOBAL = {
    "--budget": _cliargs.count,
    "--search-seed": _cliargs.seed,
    "--seed": _cliargs.seed,
    "--max-memory": _cliargs.mem_size,
    "--threads": _cliargs.threads,
}


def _parse_knobs(name: str, argv: list[str]):
    from ..constructions import REGISTRY

    spec = REGISTRY[name].knobs
    knobs = {}
    glob = {"json": False, "budget": 4096, "seed": 0, "max_memory": None, "threads": None}
    search_seed_from: str | None = None  # which option set the search's seed
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--json":
            glob["json"] = True
            i += 1
            continue
        if a == "--no-upper":
            glob["no_upper"] = True
            i += 1
            continue
        if not a.startswith("--"):
            raise ConfigError(f"unexpected argument {a!r}; knobs are given as --NAME VALUE")
        key, _, val = a[2:].partition("=")
        if not val:
            if i + 1 >= len(argv):
                raise ConfigError(f"--{key} needs a value")
            val = argv[i + 1]
            i += 1
        i += 1
        if "--" + key in _GLOBAL and not (key == "seed" and "seed" in spec):
            name_ = "seed" if key == "search-seed" else key.replace("-", "_")
            if name_ == "seed":
                if search_seed_from not in (None, key):
                    raise ConfigError(
                        f"--seed and --search-seed both set the search's seed for {name} "
                        "(it has no seed knob); give one of them"
                    )
                search_seed_from = key
            glob[name_] = _cliargs.check(_GLOBAL["--" + key], "--" + key, val)
            continue
        key = key.replace("-", "_")
        if key not in spec:
            raise ConfigError(
                f"{name} has no knob --{key}; its knobs are: {', '.join('--' + k for k in spec)}"
            )
        knobs[key] = val
    return knobs, glob


def _require_measure(c, budget: int) -> None:
    """Refuse a measurement whose memory exceeds the limit, before it starts: the construction's
    own estimate (``measure_fn.estimate_bytes(budget)``) or that of ``measure.sup_error``."""
    from ..resources import require, sup_error_bytes

    est = getattr(c.measure_fn, "estimate_bytes", None)
    need = est(budget) if est is not None else sup_error_bytes(c.model, c.task, budget)
    require(bytes=need, what=f"measuring {c.name} with --budget {budget} (T={c.task.T})")


def _print_usage() -> None:
    print(
        "usage: approxtheory construct NAME [--KNOB VALUE ...] [--budget N] [--search-seed S]\n"
        "                              [--max-memory SIZE] [--threads N] [--no-upper] [--json]\n"
        "       approxtheory construct --list [--json]\n"
        "       approxtheory construct NAME --help\n\n"
        "Build explicit weights realising a claim, measure the sup-norm error adversarially "
        "(found)\nand, where a certified bracket applies, bound it from above (certified)."
    )


def _cmd(args) -> int:
    from ..constructions import REGISTRY, build

    if getattr(args, "help_", False) and not args.name:
        _print_usage()
        return 0
    if args.list or not args.name:
        if args.name is None and not args.list:
            raise ConfigError("name a construction, or use --list to see them")
        _print_list(args)
        return 0
    if args.name not in REGISTRY:
        build(args.name)  # raises with a suggestion
    if getattr(args, "help_", False) or "-h" in args.options or "--help" in args.options:
        _print_knobs(args.name)
        return 0
    knobs, glob = _parse_knobs(args.name, args.options)
    use_json = glob["json"] or args.json
    from ..resources import limits, memory_option, using_threads

    with limits(max_bytes=glob["max_memory"]), memory_option(True), using_threads(glob["threads"]):
        c = build(args.name, **knobs)  # refuses oversized knobs before allocating
        _require_measure(c, glob["budget"])
        rep = c.report(
            budget=glob["budget"], seed=glob["seed"], upper=not glob.get("no_upper", False)
        )
    if use_json:
        print(json.dumps(rep, indent=2, default=str))
        return 0
    _print_report(rep)
    return 0


def _print_list(args) -> None:
    """``construct --list``: every construction, its claim, summary and knobs (or JSON)."""
    from ..constructions import describe, names

    rows = [describe(n) for n in names()]
    if "--json" in args.options or args.json:
        print(json.dumps(rows, indent=2, default=str))
    else:
        for r in rows:
            knobs = " ".join(f"--{k} {v['default']}" for k, v in r["knobs"].items())
            print(f"{r['name']:<18} {r['claim']:<7} {r['summary']}")
            print(f"{'':<26} knobs: {knobs}")


def _print_knobs(name: str) -> None:
    """``construct NAME --help``: the construction's knobs and the options every one takes."""
    from ..constructions import describe

    d = describe(name)
    print(f"approxtheory construct {name}: {d['summary']} (claim {d['claim']})")
    for k, v in d["knobs"].items():
        ch = f" (one of {', '.join(v['choices'])})" if "choices" in v else ""
        print(f"  --{k} {v['type'].upper()}  {v['help']}{ch} [default {v['default']}]")
    for r in d["requires"]:
        print(f"  requires: {r['message']}")
    print("  --budget N  random sequences for the error search [default 4096]")
    print(f"  --search-seed S  seed of the error search: {_cliargs.SEED_HELP} [default 0]")
    if "seed" not in d["knobs"]:
        print("  --seed S    the same as --search-seed")
    print(
        "  --max-memory SIZE  refuse work estimated to need more memory (e.g. 16G) "
        "[default: APPROXTHEORY_MAX_BYTES or a quarter of this machine's memory]"
    )
    print(
        "  --threads N  torch threads [default: APPROXTHEORY_THREADS, else 1 (measured "
        "fastest: `approxtheory bench threads`)]"
    )
    print("  --json      machine-readable output")
    print(
        "  --no-upper  skip the certified upper bracket (T <= 16, d <= 2 by branch-and-"
        "bound; any T for one-layer softmax retrieval heads)"
    )


def _print_report(rep: dict) -> None:
    """A construction's report in words: claim, knobs, parameters, claimed and measured error,
    the certified bracket and the verdict."""
    print(
        f"{rep['construction']} realises {rep['claim']}  knobs: "
        + ", ".join(f"{k}={v}" for k, v in rep["knobs"].items())
    )
    print(f"  parameters ({rep['params_convention']}): {rep['params']}")
    kind = {"upper": "claimed bound", "lower": "claimed floor", "exact": "claimed error"}
    print(f"  {kind[rep['bound_kind']]}: {rep['claimed_bound']:.6g}   [{rep['bound_expr']}]")
    print(
        f"  measured: {rep['measured']:.6g}   (sup error {rep['sup_error']:.6g}, "
        f"{rep['n_evals']} evaluations)"
    )
    if rep.get("sup_error_upper") is not None:
        print(
            f"  certified upper bracket: {rep['sup_error_upper']:.6g}   "
            f"({rep['sup_error_upper_reason']})"
        )
    else:
        print(f"  certified upper bracket: none ({rep.get('sup_error_upper_reason')})")
    if rep.get("certified"):
        print(f"  certified: {rep['certified']}")
    print(f"  verdict: {rep['verdict']}")
    if rep["verdict"] == "refuted":
        print(f"  witness: {rep['witness']}")


def register(p) -> None:
    p.add_argument("name", nargs="?", help="the construction (see --list)")
    p.add_argument("--list", action="store_true", help="list the constructions")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-h", "--help", action="store_true", dest="help_", help="show this help")
    p.add_argument(
        "options",
        nargs=argparse.REMAINDER,
        help="the construction's knobs as --KNOB VALUE, and --budget, --search-seed, "
        "--max-memory, --threads, --no-upper (`construct NAME --help` lists them)",
    )
    p.set_defaults(func=_cmd)
