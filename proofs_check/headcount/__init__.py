"""Checks of arXiv 2510.06662 (HC-*), one module per kind of claim (in registration order):
:mod:`.lemmas` (HC-TR1/TR2, HC-L1-L3, HC-C1), :mod:`.k1` (one HC-K1 head: HC-K1, HC-P2, HC-K1c),
:mod:`.theorem2` (HC-T2a, HC-P3, HC-T2b/TR3, HC-P6), :mod:`.relu` (HC-L9/P4, HC-T2c),
:mod:`.lemmas_lower` (HC-L4/P5, HC-L5-L8), :mod:`.memorization` (HC-K2/P1, HC-A3),
:mod:`.trained` (what the trained checks share; HC-P8, HC-P9, HC-P10) and :mod:`.trained_more`
(HC-P6b, HC-P7, HC-P11); the paper's remaining claims are in :mod:`..headcount_more`. Shared
helpers of the package are in :mod:`._common`, HC-T1's construction (checked in
:mod:`..headcount_more`) in :mod:`._density`; experiment rows are read through
:func:`approxtheory.proofs_check._rows.exp_rows`.

Every passing check declares mutants (``@check(..., mutants=...)``): broken variants of what it
checks (a construction with a perturbed weight or a missing unit, a formula with a changed
constant). Under ``ctx.mutant`` a check runs its normal logic on the broken variant; formulas are
always read from the catalogue (``claim(id).expr``) and a formula mutant edits that expression,
never the decision rule. Memoised measurements take the mutant among their arguments.
"""

from __future__ import annotations

# the import order is the checks' registration order (the report's order): keep it
# isort: off
from . import _common  # noqa: F401
from . import lemmas  # noqa: F401  (HC-TR1, HC-TR2, HC-L1, HC-L2, HC-L3, HC-C1)
from . import k1  # noqa: F401  (HC-K1, HC-P2, HC-K1c)
from . import theorem2  # noqa: F401  (HC-T2a, HC-P3, HC-T2b/TR3, HC-P6)
from . import relu  # noqa: F401  (HC-L9/P4, HC-T2c)
from . import lemmas_lower  # noqa: F401  (HC-L4/P5, HC-L5, HC-L6, HC-L7, HC-L8)
from . import memorization  # noqa: F401  (HC-K2/P1, HC-A3)
from . import trained  # noqa: F401  (HC-P8, HC-P9, HC-P10)
from . import trained_more  # noqa: F401  (HC-P6b, HC-P7, HC-P11)
# isort: on

from ._common import RATE_TOL

# private helpers the tests read by the old path (approxtheory.proofs_check.headcount)
from .k1 import S_FRACS, _head_inputs, _head_model  # noqa: F401
from .theorem2 import _beta_needed, _gapped_inputs  # noqa: F401
from .trained import (
    MARGIN,
    RECIPE_HINT,
    phase_criterion,
    table2_magnitudes,
    variants_criterion,
    width_criterion,
)
from .trained_more import P6B_TRAINED_NMSE, P11_FIT_HEADS, P11_TRANSITION, lower_regime_criterion

__all__ = [
    "MARGIN",
    "P6B_TRAINED_NMSE",
    "P11_FIT_HEADS",
    "P11_TRANSITION",
    "RATE_TOL",
    "RECIPE_HINT",
    "S_FRACS",
    "lower_regime_criterion",
    "phase_criterion",
    "table2_magnitudes",
    "variants_criterion",
    "width_criterion",
]
