"""The command line's help and option matching.

The parser tree of :func:`approxtheory.cli.build_parser` is walked: every option and positional of
every (sub)command has help text, every parser refuses abbreviated options (``allow_abbrev``
off, so ``verify --profil quick`` is an error rather than ``--profile quick``), and ``--help`` of
every command exits 0 with its usage.
"""

from __future__ import annotations

import argparse

import pytest

from approxtheory.cli import build_parser, main


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) for ``parser`` and every subparser below it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] == name:  # an alias shares its parser: walk it once
                    yield from _walk(sub, (*path, name))


TREE = list(_walk(build_parser()))
COMMANDS = [path for path, _ in TREE if path]


def _undocumented(parser: argparse.ArgumentParser) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue  # argparse writes their help
        if isinstance(action, argparse._SubParsersAction):
            # each choice needs a one-line help in the listing of its parent
            shown = {a.dest for a in action._choices_actions if a.help}
            missing += [f"{name} (subcommand)" for name in action.choices if name not in shown]
            continue
        if action.help is None or not str(action.help).strip():
            missing.append("/".join(action.option_strings) or action.dest)
    return missing


def test_the_tree_is_walked():
    """The walk reaches nested subcommands (claims eval, schedule prism, ...), not only the top."""
    assert ("claims", "eval") in COMMANDS and ("verify",) in COMMANDS
    assert ("construct",) in COMMANDS and ("schedule", "prism") in COMMANDS
    assert {("experiment", a) for a in ("list", "run", "plot")} <= set(COMMANDS)
    assert len(COMMANDS) >= 15


def test_every_option_has_help_text():
    missing = {" ".join(path) or "(top)": names for path, p in TREE if (names := _undocumented(p))}
    assert not missing, f"options without help text: {missing}"


def test_the_help_check_can_fail():
    p = argparse.ArgumentParser()
    p.add_argument("--documented", help="yes")
    p.add_argument("--bare")
    p.add_argument("thing")
    assert _undocumented(p) == ["--bare", "thing"]


def test_no_parser_accepts_abbreviations():
    lax = [" ".join(path) or "(top)" for path, p in TREE if p.allow_abbrev]
    assert not lax, f"parsers with allow_abbrev on: {lax}"


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--profil", "quick"],
        ["verify", "--prof=quick"],
        ["claims", "list", "--pape", "x"],
        ["experiment", "list", "--prof", "quick"],
        ["experiment", "run", "softmax_beta_sweep", "--prof", "quick"],
        ["experiment", "plot", "softmax_beta_sweep", "--ou", "x"],
        ["schedule", "compare", "uniform", "prism", "--see", "1"],
    ],
)
def test_an_abbreviated_option_is_not_matched(argv):
    """Parsed only (a matched ``verify --profil quick`` would start a verify run): the prefix is
    left over, which :func:`approxtheory.cli.main` refuses as unrecognized."""
    abbrev = [a for a in argv if a.startswith("--")][-1]
    _, extra = build_parser().parse_known_args(argv)
    assert abbrev in extra


def test_an_abbreviated_option_is_refused_in_one_line(capsys):
    assert main(["claims", "list", "--pape", "headcount"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unrecognized arguments: --pape headcount" in err
    assert main(["claims", "list", "--paper", "headcount"]) == 0  # the full name still works


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_of_every_command_exits_0(path, capsys):
    """``approxtheory PATH --help`` exits 0 with the command's usage on stdout and nothing on
    stderr (argparse's own help exits with SystemExit(0); a command that prints its own help,
    as ``construct`` does for its knobs, returns 0)."""
    try:
        rc = main([*path, "--help"])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    assert rc in (0, None), err
    assert err == ""
    assert f"usage: approxtheory {' '.join(path)}" in out
