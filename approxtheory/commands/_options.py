"""Options several commands declare the same way, and :func:`forward`, which hands parsed
options to the library unchanged (argparse wiring lives in the commands layer; the parsers of
the values are :mod:`approxtheory._cliargs`')."""

from __future__ import annotations

from .._cliargs import SEED_HELP, THREADS_HELP, seed, threads

__all__ = ["add_json", "add_seed", "add_threads", "forward"]


def add_json(p) -> None:
    """The ``--json`` flag: machine-readable output."""
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_threads(p, default: int, note: str = "") -> None:
    """``--threads``: torch threads from 1 to :data:`MAX_THREADS` (``default``; ``note`` is said
    after it in the help)."""
    p.add_argument(
        "--threads",
        type=threads,
        default=default,
        help=f"torch threads, {THREADS_HELP} (default {default}{note})",
    )


def add_seed(p, of: str) -> None:
    """``--seed`` (default 0), the seed ``of`` what, with the range :func:`seed` accepts."""
    p.add_argument("--seed", type=seed, default=0, help=f"seed of {of}: {SEED_HELP}")


def forward(args, *names: str) -> dict:
    """``{name: args.name}`` for each of ``names``: the options a command hands to the library
    unchanged, as keyword arguments of the same names."""
    return {n: getattr(args, n) for n in names}
