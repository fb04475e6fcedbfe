"""Per-claim checks, one module per paper. Every claim of the catalogue has a check that returns
a :class:`Verdict`: ``verified-symbolic``, ``verified-numeric``, ``consistent-empirical``,
``inconsistent`` (a trained network's measurement disagrees with a stated prediction),
``refuted`` (with the witness), ``vacuous-here`` or ``not-checkable`` (with the reason).

Example::

    >>> from approxtheory.proofs_check import run_check, Context
    >>> run_check("HC-P6", Context()).verdict
    'verified-symbolic'

Installed as ``approxtheory.proofs_check`` from the top-level folder ``proofs_check/`` (see
``[tool.setuptools.package-dir]`` in pyproject.toml); there is no top-level ``proofs_check``.
"""

from approxtheory.errors import require_installed_name

# e.g. `import proofs_check` from the repo root
require_installed_name(__name__, "approxtheory.proofs_check", "the checks")

from . import (  # noqa: E402, F401
    headcount,
    headcount_more,
    identification,
    infoflow,
    prism,
    tradeoffs,
)
from ._core import (  # noqa: E402
    CHECKS,
    FAILING,
    MUTANTS,
    PASSING,
    PROFILES,
    READS,
    SCOPES,
    VERDICTS,
    VERIFIED,
    Context,
    Verdict,
    check_hash,
    flips,
)

__all__ = [
    "CHECKS",
    "MUTANTS",
    "READS",
    "PROFILES",
    "VERDICTS",
    "PASSING",
    "VERIFIED",
    "FAILING",
    "SCOPES",
    "Context",
    "Verdict",
    "check_hash",
    "flips",
    "run_check",
    "missing_checks",
]


def run_check(claim_id: str, ctx: Context | None = None) -> Verdict:
    from approxtheory import claim

    c = claim(claim_id)
    return CHECKS[c.id](ctx or Context())


def missing_checks() -> list[str]:
    from approxtheory import claims

    return [c.id for c in claims() if c.id not in CHECKS]
