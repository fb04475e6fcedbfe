"""Checks of arXiv 2606.27449 (PR-*), one module per topic, imported here in the order they
register (the order of the report):

- :mod:`.neutrality`: parameter and FLOP neutrality of a head schedule (PR-N1, PR-N2) on the
  shared model at toy size, and the throughput claim PR-N3 (not checkable on a CPU);
- :mod:`.rules`: the schedule rules and Table 4 (PR-S), Table 5's ablation (PR-S4, PR-S5,
  PR-S6, PR-A1, PR-A2);
- :mod:`.reported`: the paper's reported numbers re-derived without training (PR-TPP, PR-E3,
  PR-E4);
- :mod:`.paired`: the trained paired runs of prism_paired (PR-E1, PR-E2);

:mod:`._common` holds the toy models and the evidence-text helpers they share."""

# the checks register in import order (the report's order): keep this order
# isort: off
from . import neutrality  # noqa: F401  PR-N3, PR-N1, PR-N2
from . import rules  # noqa: F401  PR-S, PR-S4, PR-S5, PR-S6, PR-A1, PR-A2
from . import reported  # noqa: F401  PR-TPP, PR-E3, PR-E4
from . import paired  # noqa: F401  PR-E1, PR-E2

# isort: on
from ._common import (
    D_MODEL,
    FFN,
    H_BASE,
    LM_VOCAB,
    NOT_RESCALED,
    SCHEDULES,
    UNTIED,
)
from .neutrality import (
    ATTENTION_BLIND,
    PAPER_T,
    flop_neutrality,
    parameter_neutrality,
)
from .paired import (
    DIST_OFFSET,
    LOSS_OFFSET,
    PAIRED,
    PR_PAPER,
    PR_RECIPE,
    attention_locality,
    distance_verdict,
    loss_verdict,
    paired_loss,
    schedules_of,
)
from .reported import (
    ITEMS_X10,
    MILESTONE_CURVES,
    SE_GRID_N,
    SE_GRID_P,
    STEP_TOKENS_HALVED,
    VARIANCE_AS_SE,
    downstream_standard_errors,
    first_reach,
    gap_profile,
    milestones_from_gap,
    tokens_per_parameter,
)
from .rules import (
    ABLATION,
    ABLATION_D,
    ABLATION_HB,
    ABLATION_RELATIONS,
    ORDINAL_SCOPE,
    RULE_MUTANTS,
    TABLE4,
    ablation_all_progressive_beat_uniform,
    ablation_start_width,
    better_than,
    compare,
    rule_baseline_half,
    rule_blocks,
    rule_power_of_two,
    schedule_rules,
    throughput_contradictions,
)

__all__ = [
    "D_MODEL",
    "FFN",
    "SCHEDULES",
    "H_BASE",
    "NOT_RESCALED",
    "LM_VOCAB",
    "UNTIED",
    "parameter_neutrality",
    "ATTENTION_BLIND",
    "PAPER_T",
    "flop_neutrality",
    "RULE_MUTANTS",
    "TABLE4",
    "schedule_rules",
    "ABLATION",
    "ABLATION_D",
    "ABLATION_HB",
    "ABLATION_RELATIONS",
    "better_than",
    "compare",
    "ORDINAL_SCOPE",
    "rule_blocks",
    "rule_baseline_half",
    "throughput_contradictions",
    "rule_power_of_two",
    "ablation_all_progressive_beat_uniform",
    "ablation_start_width",
    "STEP_TOKENS_HALVED",
    "tokens_per_parameter",
    "SE_GRID_N",
    "SE_GRID_P",
    "ITEMS_X10",
    "VARIANCE_AS_SE",
    "downstream_standard_errors",
    "MILESTONE_CURVES",
    "gap_profile",
    "first_reach",
    "milestones_from_gap",
    "PAIRED",
    "LOSS_OFFSET",
    "DIST_OFFSET",
    "PR_PAPER",
    "PR_RECIPE",
    "loss_verdict",
    "schedules_of",
    "distance_verdict",
    "paired_loss",
    "attention_locality",
]
