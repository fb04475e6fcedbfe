"""Checks of arXiv 2609.01231 (ID-*): counts against numeric Jacobian ranks of the shared model's
attention layer, invariances, inert biases, conservation and rebalancing; the §7 remarks (the
lottery-ticket contrast ID-LT, the "50 % to 80-90 %" sentence ID-PUB, Fig. 1's column ID-F1),
Fig. 3's bias gradients (ID-F3), and the trained Fig. 4 sweep (ID-F4) and clearing control
(ID-CLR) on the identifiability_training cells.

Every check reports its slack (1 for an exact count or identity that holds) or, where it reads no
formula, says why (``formula_note``).

Every count, ratio and closed form is read from the catalogue (``claim(id).expr``); the checks
only measure and compare. Mutants are of two kinds: a broken *construction* (the layer measured has
a tied, missing or extra structure; the invariance or rebalancing is implemented with a plausible
bug) and a broken *formula* (a catalogue expression with a changed constant, a forgotten term or the
wrong symmetry group), which ``_ev`` applies to the expression it reads.

The checks live in one module per topic, imported here in the order they register (the order
of the report): :mod:`.counts` (Jacobian-rank counts, the QK block), :mod:`.invariances`
(invariances, rebalancing, null directions, the inert key bias, the single-head equivalence,
conservation), :mod:`.training` (§5, ID-E5) and :mod:`.remarks` (§7, Figs. 1, 3, 4, the
clearing control); :mod:`._common` holds the catalogue reader with the formula mutants that
they share."""

# the checks register in import order (the report's order): keep this order
# isort: off
from . import counts  # noqa: F401  ID-T4.5 ... ID-SH3.2, ID-L4.1w, ID-E4.1
from . import invariances  # noqa: F401  ID-B4.6 ... ID-L5.1d
from . import training  # noqa: F401  ID-E5
from . import remarks  # noqa: F401  ID-LT ... ID-CLR

# isort: on
from ._common import EXACT, FORMULA_MUTANTS
from .counts import (
    CONFIGS,
    CONSTRUCTION_MUTANTS,
    RANK_MUTANTS,
    TIED,
    TIED_QK,
    jacobian_rank,
    qk_count,
)
from .invariances import (
    ONE_SIDE,
    TRANSPOSE,
    UNEVEN,
    balanced_representative,
    conservation_discrete,
    conservation_flow,
    invariance,
    key_bias_inert,
    null_directions,
    projection,
    single_head_equivalence,
)
from .remarks import (
    F3_NONZERO,
    F3_ZERO,
    FRACTION_CONFIGS,
    UNGATED_WHY,
    bias_gradients_fig3,
    clear_control,
    fig1_column,
    lottery_contrast,
    lr_drift_fig4,
    published_fraction,
)
from .training import (
    ID_PAPER,
    ID_RECIPE,
    RHO_ZERO,
    loss_tail,
    training_diagnostics,
    training_gate_rows,
)

__all__ = [
    "EXACT",
    "FORMULA_MUTANTS",
    "CONFIGS",
    "CONSTRUCTION_MUTANTS",
    "RANK_MUTANTS",
    "TIED",
    "TIED_QK",
    "jacobian_rank",
    "qk_count",
    "ONE_SIDE",
    "TRANSPOSE",
    "UNEVEN",
    "balanced_representative",
    "conservation_discrete",
    "conservation_flow",
    "invariance",
    "key_bias_inert",
    "null_directions",
    "projection",
    "single_head_equivalence",
    "ID_PAPER",
    "ID_RECIPE",
    "RHO_ZERO",
    "loss_tail",
    "training_diagnostics",
    "training_gate_rows",
    "F3_NONZERO",
    "F3_ZERO",
    "FRACTION_CONFIGS",
    "UNGATED_WHY",
    "bias_gradients_fig3",
    "clear_control",
    "fig1_column",
    "lottery_contrast",
    "lr_drift_fig4",
    "published_fraction",
]
