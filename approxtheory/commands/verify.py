"""``approxtheory verify``: run every claim's check and write the report
(:func:`approxtheory.verify.run_verify`)."""

from __future__ import annotations

__all__ = ["register"]


def _cmd(args) -> int:
    from ..verify import run_verify
    from ._options import forward

    _check_options(args)
    if args.results_schema is not None:  # an empty value is a value (refused), not absence
        from ..catalogue import claim
        from ..proofs_check import CHECKS  # noqa: F401  (registers the checks and their schemas)
        from ..proofs_check._results import results_schema_of

        print(results_schema_of(claim(args.results_schema).id).describe())
        return 0
    return run_verify(
        **forward(
            args,
            "results",
            "profile",
            "only",
            "out",
            "fail_on",
            "seed",
            "mutants",
            "jobs",
            "retrain",
        ),
        progress=not args.quiet,
        use_cache=not args.no_cache,
    )


def _check_options(args) -> None:
    """Refuse options that would be ignored: everything of a run next to
    --results-schema (which prints and exits), and --retrain / --jobs N next to --results (the
    given rows are judged in this process; nothing is trained)."""
    from ..errors import ConfigError

    run = {
        "--only": args.only is not None,
        "--results": args.results is not None,
        "--mutants": args.mutants,
        "--retrain": args.retrain,
        "--no-cache": args.no_cache,
        "--fail-on": args.fail_on is not None,
        "--jobs": args.jobs != 1,
    }
    if args.results_schema is not None:
        given = [k for k, v in run.items() if v]
        if given:
            raise ConfigError(
                f"--results-schema only prints the columns and exits; {', '.join(given)} would "
                "be ignored (leave them out, or run `verify --only CLAIM --results CSV`)"
            )
    elif args.results is not None:
        given = [k for k in ("--retrain", "--jobs") if run[k]]
        if given:
            raise ConfigError(
                f"{' and '.join(given)} cannot be combined with --results (the given rows are "
                "judged in this process; nothing is trained)"
            )


def _jobs(text: str) -> int:
    """``--jobs``: a whole number in 1 .. max_jobs(), else argparse's one-line error (exit 2)."""
    import argparse

    from ..verify import max_jobs

    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= max_jobs():
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 1 to {max_jobs()} (got {text!r})"
        )
    return n


def register(p) -> None:
    p.add_argument(
        "--profile",
        default="quick",
        choices=["smoke", "quick", "full"],
        help="how much to run: smoke checks every claim cheaply (about a minute; what its small "
        "grids cannot decide is not-checkable, 'smoke profile: ...'; trained evidence only from "
        "cached cells), quick the default grids (trains the small networks), full the paper-"
        "sized grids (default: quick)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        metavar="ID_OR_PAPER",
        help="claim ids or papers (arXiv id or short name)",
    )
    from .._cliargs import SEED_HELP, out_dir, seed

    p.add_argument(
        "--out",
        default="report",
        metavar="DIR",
        type=out_dir,
        help="folder of the report, data, plots and the cache (default: report)",
    )
    from ..verify import max_jobs

    p.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help=f"check N claims at once, each in its own process (1..{max_jobs()}; the report is "
        "the same bytes for any N; default: 1)",
    )
    p.add_argument(
        "--fail-on", choices=["refuted"], default=None, help="exit 1 when a claim is refuted"
    )
    p.add_argument("--seed", type=seed, default=0, help=f"seed of the checks ({SEED_HELP})")
    p.add_argument("--no-cache", action="store_true", help="recompute every check")
    p.add_argument(
        "--retrain",
        action="store_true",
        help="compute the trained checks' decisive grids here instead of reading the cells "
        "shipped in experiments/results (CPU-hours; `experiment run NAME --profile decisive "
        "--dry-run` estimates each)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument(
        "--mutants",
        action="store_true",
        help="also run each passing check against its declared mutants (broken variants of "
        "what it measures) and the claim mutants generated from the claim's formula (rate "
        "exponent moved, bound scaled past the room found, a regime condition dropped, the "
        "bound kind flipped, and a pivot mutant for every formula the check read at one value "
        "of a symbol only: the formula times (X/x0)^(+-1/2), equal at the point read); a "
        "mutant is caught only when the verdict turns refuted or inconsistent (a check that "
        "raises on one is a defect, reported as such). A verdict a required mutant survives "
        "is downgraded one step (verified -> consistent-empirical -> not-checkable); the "
        "summary line counts required mutants caught k/n and names the survivors",
    )
    p.add_argument(
        "--results",
        metavar="CSV",
        help="apply one trained claim's criterion, training gate and scale record to a "
        "results CSV produced elsewhere (with --only CLAIM; no training, no cache)",
    )
    p.add_argument(
        "--results-schema",
        metavar="CLAIM",
        help="print the columns --results reads for CLAIM and exit",
    )
    p.set_defaults(func=_cmd)
