"""Argument validation of the Python API, in one place (private): whole numbers and real
numbers in a range, each refused with a :class:`~approxtheory.errors.ConfigError` that names
the argument, what it must be and what it got.

The message is ``f"{name} must be {must} (got {v!r})"``; ``must`` defaults to the range
(``an integer >= 0``, ``an integer from 1 to 8``), and a caller that documents its range in
other words passes them (``must="a whole number from 1 to 8"``)::

    >>> from approxtheory._validate import check_int
    >>> check_int("batch", 4, 1)
    4
    >>> check_int("batch", 0, 1)
    Traceback (most recent call last):
    ...
    approxtheory.errors.ConfigError: batch must be an integer >= 1 (got 0)

Booleans are never numbers here (``True`` is refused where ``1`` is accepted); numpy integers
and floats count unless ``numpy=False``. Text given on the command line is parsed by
:mod:`approxtheory._cliargs`, which raises argparse's error type instead.
"""

from __future__ import annotations

import math

from .errors import ConfigError

__all__ = ["is_int", "is_real", "check_int", "pos_int", "check_seed", "check_real", "SEED_MAX"]

#: the largest seed numpy's legacy seeding and every torch generator accept (2^32 - 1)
SEED_MAX = 2**32 - 1


def is_int(v, numpy: bool = True) -> bool:
    """``v`` is a whole number and not a bool (numpy integers count when ``numpy``)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if not numpy:
        return False
    import numpy as np

    return isinstance(v, np.integer)


def is_real(v, numpy: bool = True) -> bool:
    """``v`` is an int or a float and not a bool (numpy numbers count when ``numpy``)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    if not numpy:
        return False
    import numpy as np

    return isinstance(v, (np.integer, np.floating))


def _range(lo, hi) -> str:
    if lo is None:
        return "an integer" if hi is None else f"an integer <= {hi}"
    return f"an integer >= {lo}" if hi is None else f"an integer from {lo} to {hi}"


def check_int(
    name: str,
    v,
    lo: int | None = None,
    hi: int | None = None,
    *,
    must: str | None = None,
    above: str | None = None,
    numpy: bool = True,
    plain: bool = False,
) -> int:
    """``v`` as an ``int`` when it is a whole number in ``lo..hi`` (either end may be None),
    else ``ConfigError(f"{name} must be {must} (got {v!r})")``; ``above``, when given, is what
    the message says instead of ``must`` for a whole number above ``hi``; ``plain``: a whole
    number out of range is shown as the plain ``int`` (``0``, not ``np.int64(0)``)."""
    if plain and is_int(v, numpy):
        v = int(v)
    if not is_int(v, numpy) or (lo is not None and v < lo):
        raise ConfigError(f"{name} must be {must or _range(lo, hi)} (got {v!r})")
    if hi is not None and v > hi:
        raise ConfigError(f"{name} must be {above or must or _range(lo, hi)} (got {v!r})")
    return int(v)


def pos_int(name: str, v, hi: int | None = None, *, must: str = "a positive integer", **kw) -> int:
    """``v`` as an ``int`` when it is a whole number >= 1 (and <= ``hi``), else
    ``ConfigError(f"{name} must be a positive integer (got {v!r})")`` (see :func:`check_int`
    for ``above``, ``numpy`` and ``plain``)."""
    return check_int(name, v, 1, hi, must=must, **kw)


def check_seed(
    v, hi: int = SEED_MAX, *, name: str = "seed", must: str | None = None, above: str | None = None
) -> int:
    """``v`` as an ``int`` when it is a whole number from 0 to ``hi`` (default
    :data:`SEED_MAX`), else a ConfigError (see :func:`check_int`)."""
    return check_int(name, v, 0, hi, must=must, above=above)


def check_real(
    name: str,
    v,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    must: str = "a finite number",
    numpy: bool = True,
) -> float:
    """``v`` as a ``float`` when it is a finite real number in the interval from ``lo`` to
    ``hi`` (either end may be None; ``lo_open`` / ``hi_open`` leave that end out), else
    ``ConfigError(f"{name} must be {must} (got {v!r})")``."""
    try:
        ok = is_real(v, numpy) and math.isfinite(v)
    except OverflowError:  # an int too large for a float
        ok = False
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    if not ok:
        raise ConfigError(f"{name} must be {must} (got {v!r})")
    return float(v)
