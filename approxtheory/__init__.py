"""approxtheory: the approximation theory of transformers as things a researcher can run.

Example::

    >>> import approxtheory as at
    >>> at.claim("HC-T2b").evaluate(T=64, s=1, n=2, D=2)
    5/2
    >>> at.claim("ID-T4.5").expr("ratio")
    1/(2*H)

Every formula lives in the claim catalogue (:mod:`approxtheory.catalogue`); the CLI, the docs, the
checks and the plots read it from there.
"""

from .errors import (
    ApproxTheoryError,
    ConfigError,
    InvalidValueError,
    MissingSymbolError,
    NotAPowerLawError,
    ParseError,
    RegimeError,
    ResourceLimitError,
    SolveError,
    UnknownClaimError,
    UnknownSymbolError,
    ValueRangeError,
)

#: the re-exports of the claim catalogue, loaded on first use (PEP 562): importing the package,
#: or a light submodule of it (the pytest plugin, ``approxtheory.errors``), does not load sympy
#: and the catalogue
_CATALOGUE = ("Claim", "Comparison", "claim", "claims", "compare")


def __getattr__(name: str):
    if name in _CATALOGUE:
        from . import catalogue

        value = getattr(catalogue, name)
    elif name == "__version__":
        from .provenance import package_version

        value = package_version()  # from the package metadata; the version is in pyproject.toml
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Claim",
    "Comparison",
    "claim",
    "claims",
    "compare",
    "ApproxTheoryError",
    "ConfigError",
    "InvalidValueError",
    "MissingSymbolError",
    "NotAPowerLawError",
    "ParseError",
    "RegimeError",
    "ResourceLimitError",
    "SolveError",
    "UnknownClaimError",
    "UnknownSymbolError",
    "ValueRangeError",
    "__version__",
]
