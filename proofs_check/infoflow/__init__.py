"""Checks of arXiv 2605.17930 (IF-*), one module per kind of evidence, imported in the order the
checks register (the report's order):

- :mod:`.rates`: the lower bounds not checkable here (IF-T3, IF-T4) and the built constructions'
  error rates (IF-T2, IF-K1, IF-T1, IF-K2, IF-K2p; the rate criterion is stated there);
- :mod:`.induction`: IF-K3, the built induction head;
- :mod:`.trained_spa`: IF-E1, the trained specific position aggregation;
- :mod:`.costs`: the calculus' charges on built networks and its composition rule (IF-R1..IF-R4);
- :mod:`.calculus`: the calculus recovers the head-count and depth results (IF-P1, IF-P2);
- :mod:`.trained_heads`: trained head thresholds and the triangle-centre growth (IF-P3, IF-P3b,
  IF-P3c, IF-P4);
- :mod:`.trained_probes`: the trained argmax probe and depth separation (IF-E2, IF-E3);
- :mod:`._trained`: what the trained checks share (the paper's recipe and reported results);
  each trained check declares its Evidence for the shared pipeline (proofs_check/_pipeline.py).

The names other code and the tests read from ``approxtheory.proofs_check.infoflow`` are
re-exported here; a test that patches one patches it in the sub-module that uses it.
"""

from . import rates, induction, trained_spa, costs, calculus, trained_heads, trained_probes  # noqa: I001
from ._trained import IF_PAPER, IF_RECIPE, P3_PAPER_NMSE, _training_text
from .calculus import infoflow_recovers_depth_separation, infoflow_recovers_head_count
from .costs import composition_rule, lipschitz_readout_cost, mixture_decode_cost, mpr_charge
from .induction import induction_head_construction
from .rates import (
    K1_AXES,
    T2_AXES,
    _decay_fit,
    _pairwise_grid,
    _pairwise_mutation,
    _retrieval_grid,
    _retrieval_mutation,
    _second_largest_grid,
    _second_largest_mutation,
    max_retrieval,
    one_softmax_tie_error,
    pairwise_digest_prediction,
    two_layer_pairwise,
    two_layer_second_largest,
)
from .trained_heads import (
    GAP_P3,
    GAP_P3_PAPER,
    p3_criterion,
    p3_gates,
    p4_criterion,
    p4_gate,
    pmax_extra_head_control,
    pmax_head_threshold,
    tri_target_var,
    triangle_center_growth,
)
from .trained_probes import (
    argmax_probe,
    depth_separation_trained,
    e2_criterion,
    e2_gates,
    e3_criterion,
    e3_gate,
)
from .trained_spa import (
    SPA_BAND,
    SPA_FIELDS,
    SPA_REST,
    spa_criterion,
    specific_position_aggregation,
)

__all__ = [
    "GAP_P3",
    "GAP_P3_PAPER",
    "IF_PAPER",
    "IF_RECIPE",
    "K1_AXES",
    "P3_PAPER_NMSE",
    "SPA_BAND",
    "SPA_FIELDS",
    "SPA_REST",
    "T2_AXES",
    "_decay_fit",
    "_pairwise_grid",
    "_pairwise_mutation",
    "_retrieval_grid",
    "_retrieval_mutation",
    "_second_largest_grid",
    "_second_largest_mutation",
    "_training_text",
    "argmax_probe",
    "calculus",
    "composition_rule",
    "costs",
    "induction",
    "depth_separation_trained",
    "e2_criterion",
    "e2_gates",
    "e3_criterion",
    "e3_gate",
    "induction_head_construction",
    "infoflow_recovers_depth_separation",
    "infoflow_recovers_head_count",
    "lipschitz_readout_cost",
    "max_retrieval",
    "mixture_decode_cost",
    "mpr_charge",
    "one_softmax_tie_error",
    "p3_criterion",
    "p3_gates",
    "p4_criterion",
    "p4_gate",
    "pairwise_digest_prediction",
    "pmax_extra_head_control",
    "pmax_head_threshold",
    "rates",
    "spa_criterion",
    "specific_position_aggregation",
    "trained_heads",
    "trained_probes",
    "trained_spa",
    "tri_target_var",
    "triangle_center_growth",
    "two_layer_pairwise",
    "two_layer_second_largest",
]
