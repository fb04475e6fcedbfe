"""The command line's commands, the top layer below :mod:`approxtheory.cli`.

One module per command group; each has ``register(sub)`` (its argparse wiring) and the handlers,
which parse, call the library (the modules below) and print. No library module imports this
package: the library holds no argparse code and no printing for the command line.
"""

from __future__ import annotations

from . import (
    advise,
    bench,
    claims,
    construct,
    docs,
    experiment,
    export,
    identifiability,
    infoflow,
    new_test,
    schedule,
    verify,
)
from ._parser import Parser, UsageError

__all__ = ["GROUPS", "register_all", "Parser", "UsageError"]

#: the command groups in the order ``approxtheory --help`` lists them
GROUPS = (
    claims,
    docs,
    verify,
    construct,
    new_test,
    experiment,
    export,
    identifiability,
    infoflow,
    bench,
    schedule,
    advise,
)


def register_all(sub) -> None:
    """Add every command group to the subparsers ``sub`` of the top-level parser."""
    for group in GROUPS:
        group.register(sub)
