"""The command line's commands, the top layer below :mod:`approxtheory.cli`.

One module per command group; each has ``register(parser)`` (its arguments) and the handlers,
which parse, call the library (the modules below) and print. No library module imports this
package: the library holds no argparse code and no printing for the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

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

__all__ = ["COMMANDS", "Command", "register_all", "Parser", "UsageError"]


@dataclass(frozen=True)
class Command:
    """A top-level command: the line ``approxtheory --help`` gives it, the paragraph its own
    ``--help`` opens with (none: the usage alone), and the module whose ``register(parser)`` adds
    its arguments and handler."""

    name: str
    module: ModuleType
    help: str
    description: str | None = None
    add_help: bool = True


#: the commands, in the order ``approxtheory --help`` lists them
COMMANDS = (
    Command("claims", claims, "query the claim catalogue"),
    Command(
        "docs",
        docs,
        "regenerate docs/claims.md (and docs/findings/index.md) from the catalogue",
        "Regenerate the generated pages of the documentation: the claim catalogue (--out) and, "
        "where a committed verify run lies in findings/ beside it, the findings page and the "
        "catalogue's verdict column.",
    ),
    Command(
        "verify",
        verify,
        "check every claim and write a report (the main job)",
        "Run every claim's check and write DIR/report.md, DIR/report.html, DIR/verdicts.json, "
        "CSVs and plots.",
    ),
    Command(
        "construct",
        construct,
        "build a paper's construction and measure its error",
        "Build explicit weights realising a claim and measure the sup-norm error adversarially. "
        "`construct --list` names them; `construct NAME --help` lists a construction's knobs.",
        # its --help is its own: it lists the named construction's knobs
        add_help=False,
    ),
    Command(
        "new-test",
        new_test,
        "write a Hypothesis rate test for a claim, e.g. `new-test IF-T2`",
        "Write a runnable Hypothesis rate test for CLAIM: its construction, its knobs drawn by "
        "approxtheory.strategies, its exponent from the catalogue, its regime as assumptions; it "
        "passes on the shipped construction and fails on its check's mutants (pytest "
        "--approxtheory-mutant NAME).",
    ),
    Command(
        "experiment",
        experiment,
        "declarative experiments: list, run, plot",
        "list the experiments; run one (its grid of cells, cached, into OUT/NAME/PROFILE: a CSV "
        "and its plots); or plot a finished run again. `approxtheory experiment ACTION --help` "
        "shows each action's options.",
    ),
    Command(
        "export",
        export,
        "export a construction to TransformerLens or Hugging Face with a parity report",
        "Export a construction (or a `construct NAME --json` result, or a Hugging Face export) as "
        "a TransformerLens 4 native bridge (--to tl) or a Hugging Face model directory (--to hf, "
        "save_pretrained, safetensors), and with --check compare the (reloaded) export with the "
        "model on the search's worst input and on random inputs. Exit 1 when the parity check "
        "fails; 2 for bad input or an architecture the target cannot express.",
    ),
    Command(
        "identifiability",
        identifiability,
        "unidentified dimension of an attention layer: catalogue count vs Jacobian rank",
    ),
    Command("infoflow", infoflow, "the InfoFlow calculus: predicted rates of retrieval tasks"),
    Command("bench", bench, "benchmarks that print figures"),
    Command("schedule", schedule, "per-layer head schedules (Prism): generate, check, compare"),
    Command(
        "advise",
        advise,
        "a head and head-dim allocation per layer from the five papers, every decision cited",
    ),
)


def register_all(sub) -> None:
    """Add every command to the subparsers ``sub`` of the top-level parser."""
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.description, add_help=c.add_help)
        c.module.register(p)
