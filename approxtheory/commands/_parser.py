"""The argparse parser of every command: errors as one line and exit code 2."""

from __future__ import annotations

import argparse
import re

__all__ = ["Parser", "UsageError"]


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse API
        # "argument --seed: must be ..." (from a _cliargs type) -> "--seed must be ..."
        m = re.fullmatch(
            r"argument (-[-\w]+)(?:/-[-\w]+)*: ((?:must|no such|is|cannot) .*)", message, flags=re.S
        )
        if m:
            message = f"{m.group(1)} {m.group(2)}"
        raise UsageError(f"{message} (see `{self.prog} --help`)")
