"""``approxtheory export NAME_OR_RESULT --to tl|hf [--out DIR] [--check] [--json]``: a construction
or a saved model as a TransformerLens bridge or a Hugging Face model directory, with a parity
report (:mod:`approxtheory.interop`)."""

from __future__ import annotations

__all__ = ["register"]


def _cmd(args) -> int:
    import json

    from ..interop import check_source, export, resolve, result_witness
    from ._options import forward

    check_source(args.source)  # an unknown name first, before what the options lack
    if args.out is None and not args.check:
        from ..errors import ConfigError

        raise ConfigError("give --out DIR (to write the export), --check (to compare it), or both")
    src = resolve(args.source)
    ex = export(
        src,
        **forward(args, "to", "out", "check", "seed", "budget"),
        n_random=args.random,
        worst=result_witness(args.source),
    )
    rep = ex.report
    if args.json:
        print(
            json.dumps(
                {
                    "source": args.source,
                    "target": args.to,
                    "out": None if ex.path is None else str(ex.path),
                    "parity": None if rep is None else rep.to_dict(),
                },
                indent=2,
            )
        )
    else:
        where = f" -> {ex.path}" if ex.path is not None else " (not written: no --out)"
        print(f"exported {args.source} to {args.to}{where}")
        if rep is not None:
            print(f"  target: {rep.architecture}")
            worst = (
                "none (no search witness)"
                if rep.max_abs_diff_worst is None
                else f"{rep.max_abs_diff_worst:.3g} on {rep.n_worst} worst input(s)"
            )
            print(
                f"  parity ({rep.dtype}, tolerance {rep.tolerance:g} x max(1, output scale "
                f"{rep.output_scale:.3g}) = {rep.allowed:.3g}): max |diff| {worst}; "
                f"{rep.max_abs_diff_random:.3g} on {rep.n_random} random inputs (seed {rep.seed})"
            )
            if rep.sup_error is not None:
                line = (
                    f"  sup error: measured {rep.sup_error:.12g}, through the "
                    f"{'reloaded ' if rep.reloaded else ''}export at the witness "
                    f"{rep.sup_error_target:.12g}"
                )
                if rep.sup_error_reloaded_search is not None:
                    line += f", search on the reloaded model {rep.sup_error_reloaded_search:.12g}"
                print(line)
            print(f"  outside the target: {', '.join(rep.outside) or 'nothing'}")
            for n in rep.notes:
                print(f"  note: {n}")
            print(f"  parity: {'PASS' if rep.passed else 'FAIL'}")
    return 0 if rep is None or rep.passed else 1


def register(p) -> None:
    from .._cliargs import SEED_HELP, count, int_between, out_dir, seed

    p.add_argument(
        "source",
        metavar="NAME_OR_RESULT",
        help="a construction name (see `construct --list`), a `construct NAME --json` file, or "
        "a directory written by `export --to hf`",
    )
    p.add_argument(
        "--to",
        required=True,
        choices=["tl", "hf"],
        help="tl: TransformerLens native bridge; hf: Hugging Face transformers model directory",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        type=out_dir,
        help="directory to write the export into (created; files replaced atomically)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="compare the export (reloaded from --out where given) with the model: parity "
        "report, and the sup error at the search's witness",
    )
    p.add_argument(
        "--budget",
        type=count,
        default=512,
        help="random sequences of the error search that finds the worst input [default 512]",
    )
    p.add_argument(
        "--random",
        type=int_between(1, 100_000),
        default=64,
        help="random inputs the parity check compares on, 1 to 100000 [default 64]",
    )
    p.add_argument(
        "--seed", type=seed, default=0, help=f"seed of the search and the inputs: {SEED_HELP}"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd)
