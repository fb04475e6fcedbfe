"""The argparse parser of every command: errors as one line and exit code 2."""

from __future__ import annotations

import argparse
import re

__all__ = ["Parser", "UsageError"]


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit code 2, and matches options exactly.

    ``allow_abbrev`` is off (argparse's prefix matching would run ``verify --profil quick`` as
    ``--profile quick``, so a typo could start a long job). Subparsers made by ``add_parser`` of
    an ``add_subparsers`` of this parser are of this class (argparse's default ``parser_class``
    is the parent's type), so they inherit both.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):  # noqa: D401 - argparse API
        # "argument --seed: must be ..." (from a _cliargs type) -> "--seed must be ..."
        m = re.fullmatch(
            r"argument (-[-\w]+)(?:/-[-\w]+)*: ((?:must|no such|is|cannot) .*)", message, flags=re.S
        )
        if m:
            message = f"{m.group(1)} {m.group(2)}"
        raise UsageError(f"{message} (see `{self.prog} --help`)")
