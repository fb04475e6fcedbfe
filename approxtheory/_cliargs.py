"""Reusable argparse ``type=`` functions that validate ranges (private).

Each takes the option's text and returns the parsed value or raises
:class:`argparse.ArgumentTypeError`, which the CLI reports as one line,
``approxtheory: error: --seed must be an integer >= 0 (got '-1')``, and exit code 2. The same
checks serve hand-parsed options (``construct``'s knobs) through :func:`check`; the options many
commands share, worded alike, are added by :mod:`approxtheory.commands._options`.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from .errors import ConfigError

__all__ = [
    "int_at_least",
    "int_between",
    "integer",
    "nonneg_int",
    "pos_int",
    "seed",
    "threads",
    "count",
    "finite_float",
    "positive_float",
    "out_dir",
    "out_file",
    "readable_file",
    "mem_size",
    "check",
]

_Err = argparse.ArgumentTypeError


def _int(text) -> int:
    s = str(text).strip()
    try:
        return int(s, 10)
    except ValueError:
        raise _Err(f"must be an integer (got {text!r})") from None


def int_at_least(lo: int):
    """An integer >= ``lo`` (``must be a positive integer`` when ``lo == 1``)."""

    def parse(text) -> int:
        v = _int(text)
        if v < lo:
            what = "a positive integer" if lo == 1 else f"an integer >= {lo}"
            raise _Err(f"must be {what} (got {text!r})")
        return v

    parse.__name__ = "integer" if lo <= 0 else "positive integer" if lo == 1 else f"int>={lo}"
    return parse


def int_between(lo: int, hi: int):
    """An integer from ``lo`` to ``hi`` (both included)."""

    def parse(text) -> int:
        v = _int(text)
        if not lo <= v <= hi:
            raise _Err(f"must be an integer from {lo} to {hi} (got {text!r})")
        return v

    parse.__name__ = f"integer {lo}..{hi}"
    return parse


def integer(text) -> int:
    """Any integer."""
    return _int(text)


nonneg_int = int_at_least(0)
pos_int = int_at_least(1)
MAX_SEED = 2**32 - 1  # every generator seeded from it (numpy, torch, with offsets) takes it
#: the help text of every ``--seed`` option says the range
SEED_HELP = f"an integer from 0 to {MAX_SEED} = 2^32-1, the range numpy and torch seeding accept"


def seed(text) -> int:
    """--seed: an integer from 0 to :data:`MAX_SEED` (2^32 - 1: numpy's legacy seeding and every
    torch generator accept it, with the small offsets the checks add)."""
    v = nonneg_int(text)
    if v > MAX_SEED:
        raise _Err(
            f"must be an integer from 0 to {MAX_SEED} (2^32-1, the range numpy and torch "
            f"seeding accept) (got {text!r})"
        )
    return v


#: the most threads ``--threads`` accepts: 256, or four per CPU on a machine with more than 64
#: (OpenMP aborts the process when it cannot start the threads asked for, e.g. 5000)
MAX_THREADS = max(256, 4 * (os.cpu_count() or 1))
THREADS_HELP = f"from 1 to {MAX_THREADS}"


def threads(text) -> int:
    """--threads: an integer from 1 to :data:`MAX_THREADS`."""
    v = pos_int(text)
    if v > MAX_THREADS:
        raise _Err(f"must be an integer from 1 to {MAX_THREADS} (got {text!r})")
    return v


count = pos_int  # --reps, --budget and other counts: int >= 1


def finite_float(text) -> float:
    try:
        v = float(str(text).strip())
    except ValueError:
        raise _Err(f"must be a number (got {text!r})") from None
    if not math.isfinite(v):
        raise _Err(f"must be a finite number (got {text!r})")
    return v


def positive_float(text) -> float:
    v = finite_float(text)
    if not v > 0:
        raise _Err(f"must be a positive number (got {text!r})")
    return v


def _nearest_existing(p: Path) -> Path:
    p = p.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _writable_dir(d: Path) -> bool:
    if not os.access(d, os.W_OK | os.X_OK):
        return False
    try:
        return not (os.statvfs(d).f_flag & os.ST_RDONLY)
    except (AttributeError, OSError):  # no statvfs (Windows)
        return True


def _check_creatable(d: Path, text) -> None:
    """Directory ``d`` exists, or can be created: its nearest existing ancestor must be a writable
    directory."""
    if "\x00" in str(text):  # no file name holds one (os functions raise ValueError)
        raise _Err(f"must not contain a NUL byte (got {text!r})")
    anc = _nearest_existing(d)
    if not anc.is_dir():
        raise _Err(f"cannot be created: {str(anc)!r} is a file, not a directory (got {text!r})")
    if not _writable_dir(anc):
        raise _Err(f"is not writable: {str(anc)!r} is read-only (got {text!r})")


def out_dir(text) -> str:
    """An output directory: not an existing file, and its nearest existing parent is a writable
    directory (it is created when needed)."""
    if not str(text).strip():
        raise _Err("must be a directory path (got '')")
    p = Path(text)
    _check_link(p, text)
    if p.exists() and not p.is_dir():
        raise _Err(f"must be a directory, but {text!r} is an existing file")
    _check_creatable(p, text)
    return str(text)


def _check_link(p: Path, text) -> None:
    """Refuse a symbolic link that leads nowhere (dangling, or a loop): creating the folder
    there fails, and only after the work."""
    try:
        broken = p.is_symlink() and not p.exists()
    except (OSError, ValueError):  # a name too long, a NUL byte: _check_creatable says which
        return
    if broken:
        try:
            target = os.readlink(p)
        except OSError:
            target = "?"
        raise _Err(
            f"is a symbolic link that leads nowhere (to {target[:80]!r}: dangling or a loop); "
            f"remove it or give another path (got {text!r})"
        )


def out_file(text) -> str:
    """An output file: not an existing directory; its directory exists or can be created under a
    writable one."""
    if not str(text).strip():
        raise _Err("must be a file path (got '')")
    p = Path(text)
    if p.is_dir():
        raise _Err(f"must be a file, but {text!r} is a directory")
    if p.exists() and not p.is_file():  # an atomic write would replace a device node (/dev/null)
        raise _Err(f"must be a regular file (got {text!r})")
    _check_creatable(p.absolute().parent, text)
    return str(text)


def readable_file(text) -> str:
    """An existing, readable regular file."""
    p = Path(text)
    if not p.exists():
        raise _Err(f"no such file (got {text!r})")
    if not p.is_file():
        raise _Err(f"must be a regular file (got {text!r})")
    if not os.access(p, os.R_OK):
        raise _Err(f"is not readable (got {text!r})")
    return str(text)


def mem_size(text):
    """A memory size for ``--max-memory``: ``8G``, ``512M``, bytes (1 to 2^64), or
    ``unlimited``."""
    from .resources import parse_size

    try:
        parse_size(text, "size")
    except ConfigError as e:  # "size must be ..." -> "--max-memory must be ..."
        raise _Err(str(e).removeprefix("size ")) from None
    return str(text)


def check(parse, option: str, text):
    """Apply a type function to a hand-parsed option; a bad value raises :class:`ConfigError`
    worded like argparse's (``--budget must be a positive integer (got '0')``)."""
    try:
        return parse(text)
    except _Err as e:
        raise ConfigError(f"{option} {e}") from None
