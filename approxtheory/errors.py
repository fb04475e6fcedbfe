"""Typed errors. Every error a user can cause derives from :class:`ApproxTheoryError`.

The CLI turns any of these into one line on stderr and exit code 2; the Python API raises them
with a message that says what was wrong and what is allowed.
"""

from __future__ import annotations

__all__ = [
    "ApproxTheoryError",
    "UnknownClaimError",
    "UnknownSymbolError",
    "MissingSymbolError",
    "InvalidValueError",
    "ParseError",
    "ValueRangeError",
    "RegimeError",
    "NotAPowerLawError",
    "SolveError",
    "ConfigError",
    "DeviceUnavailableError",
    "ResourceLimitError",
    "CellLostError",
    "did_you_mean",
]


class ApproxTheoryError(ValueError):
    """Base class of every error caused by bad input."""


class UnknownClaimError(ApproxTheoryError, KeyError):
    """A claim id that the catalogue does not define."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownSymbolError(ApproxTheoryError):
    """A value was given for a symbol the claim does not use."""


class MissingSymbolError(ApproxTheoryError):
    """A symbol needed for evaluation has no value."""


class InvalidValueError(ApproxTheoryError):
    """A value violates its symbol's assumptions (e.g. a non-positive epsilon)."""


class ParseError(InvalidValueError):
    """A value string that is not a number expression the parser accepts (bad syntax, an unknown
    name, a disallowed construct, too long or too deeply nested). See :mod:`approxtheory.parse`."""


class ValueRangeError(InvalidValueError):
    """A value, or a result computed from values, beyond the sizes the toolkit handles (e.g. an
    integer above 10^30, an exponent above 100 in a value string, a result above 10^4000)."""


class RegimeError(ApproxTheoryError):
    """The values lie outside the regime where the claim applies (e.g. HC-T2b with s >= D)."""


class NotAPowerLawError(ApproxTheoryError):
    """``exponent`` was asked of an expression that is not a power law in that symbol."""


class SolveError(ApproxTheoryError):
    """``solve_for``/``compare`` met an equation sympy cannot solve in closed form."""


class ConfigError(ApproxTheoryError):
    """An architecture, task or construction knob outside its valid range."""


class DeviceUnavailableError(ConfigError):
    """A device was asked for (``cuda``) that torch cannot see on this machine."""


class ResourceLimitError(ApproxTheoryError):
    """Work refused before allocating: its estimated memory (or time) exceeds the limit.

    ``needed`` and ``limit`` are in bytes (``kind == "memory"``) or seconds (``kind == "time"``);
    the message names the estimate, the limit and how to raise it (see
    :mod:`approxtheory.resources`)."""

    def __init__(
        self, message: str, *, needed=None, limit=None, kind: str = "memory", what: str = ""
    ):
        super().__init__(message)
        self.needed, self.limit, self.kind, self.what = needed, limit, kind, what


class CellLostError(ApproxTheoryError):
    """A cell's worker died more often than the executor retries (a cell that runs out of
    memory, a node that keeps failing). The environment is at fault, as for ``MemoryError``: the
    CLI prints one line and exits 2. The cells completed before are in the cache; running the
    same command again resumes from them (see :mod:`approxtheory.executors`)."""


def did_you_mean(
    name: object, known, *, n: int = 3, cutoff: float = 0.6, ignore_case: bool = False
) -> str:
    """The "; did you mean a, b?" hint for an unknown ``name`` among ``known`` (the closest
    ``n`` by :func:`difflib.get_close_matches`), or ``""`` when nothing is close. With
    ``ignore_case`` names are compared case-insensitively and suggested in their known spelling.

    >>> did_you_mean("hc_k11", ["hc_k1", "hc_k2", "lag_head"])
    '; did you mean hc_k1, hc_k2?'
    >>> did_you_mean("hc-t2x", ["HC-T2a", "HC-K1"], ignore_case=True)
    '; did you mean HC-T2a?'
    >>> did_you_mean("zzz", ["hc_k1"])
    ''
    """
    import difflib

    known = [str(k) for k in known]
    if ignore_case:
        spelled = {k.upper(): k for k in known}
        close = [
            spelled[c]
            for c in difflib.get_close_matches(str(name).upper(), list(spelled), n=n, cutoff=cutoff)
        ]
    else:
        close = difflib.get_close_matches(str(name), known, n=n, cutoff=cutoff)
    return f"; did you mean {', '.join(close)}?" if close else ""


def require_installed_name(name: str, installed: str, what: str) -> None:
    """ImportError unless a package bundled under ``approxtheory`` is imported by its installed
    name (``name`` is its ``__name__``): imported under a second name (``import experiments``
    from the repository's root), everything it registers would register twice."""
    if name != installed:
        raise ImportError(
            f"{what} are the package {installed}; import that, not {name!r} (install the project: "
            "pip install -e .)"
        )
