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

from .catalogue import Claim, Comparison, claim, claims, compare
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
from .provenance import package_version

__version__ = package_version()  # from the package metadata; the version is in pyproject.toml

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
