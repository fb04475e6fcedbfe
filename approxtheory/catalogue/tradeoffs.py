"""Claims of *Performance-Efficiency Tradeoffs in Transformers: An Approximation Theory Perspective*
(arXiv 2510.03784; its v1 was titled *Allocation of Parameters in Transformers*, see
:data:`TITLES`).

Source: ``shared/papers/tradeoffs.md``. The body of the paper was not available to the digest: the
paper-level claims are known from the abstract [A], the public reviews [R] and third-party summaries
[S]. Provenance follows the catalogue scheme:

* every formula here is the digest's own: the templates (**[DER]**: TO-T1's error template, TO-C1's
  truncation procedure) and the surrogates X1-X4 (**[X]**) are ``derived``; so are TO-T1, TO-T2 and
  TO-C1, whose only formulas are those stand-ins (the paper's Eq. (3), Theorem 5.1 and Corollary
  5.1 were not recovered), so no label there is stronger than its source;
* the allocation rules and the logit-growth observation, known only from reviews and summaries,
  are ``reconstructed``.
"""

from __future__ import annotations

import sympy as sp

from ._build import SymbolTable, cond
from ._claim import FORMER_TITLES

P = SymbolTable("2510.03784")

#: the paper's titles by arXiv version (digest header and §1: v2 was a "replace" that retitled it;
#: the abstracts of both match in substance)
TITLES = {
    "v2": "Performance-Efficiency Tradeoffs in Transformers: An Approximation Theory Perspective",
    **FORMER_TITLES["2510.03784"],  # the one place the v1 title is written (_claim.py)
}
_TITLE_NOTE = f" (arXiv v1 title: {TITLES['v1']!r}; current title: {TITLES['v2']!r}.)"

H = P.sym("H", "number of heads")
Dbud = P.sym("D", "attention budget D = Σ_m H_m d_m")
a = P.sym("a", "head-count error coefficient")
b = P.sym("b", "head-dim error coefficient")
al = P.sym("alpha", "head-count error exponent")
be = P.sym("beta", "head-dim error exponent")
M = P.sym("M", "number of source tokens / head groups", integer=True)
B = P.sym("B", "logit bound |z_s| <= B")
L = P.sym("L", "number of visible tokens (sequence length)", integer=True)
sigma = P.sym("sigma", "per-coordinate standard deviation of the values")
delta = P.sym("delta", "sup-norm logit perturbation")
s_r1 = P.sym("sigma_r1", "σ_{r+1}(M_QK), first discarded singular value")
R = P.sym("R", "bound on token norms ||e_t|| <= R")
sv = P.sym("sigma_v", "standard deviation of the values")
r = P.sym("r", "kept rank", integer=True)
d = P.sym("d", "head dimension", integer=True)
kappa = P.sym(
    "kappa",
    "how much the attention logits depend on the token values (0: position-only logits)",
    nonnegative=True,
)
rho = P.sym(
    "rho",
    "departure of the values from i.i.d.-across-positions with covariance σ² I (0: i.i.d. "
    "isotropic values; > 0: e.g. a position-dependent value mean)",
    nonnegative=True,
)

# TO-T1 template: E = M (a (H/M)^-α + b (D/H)^-β); the optimum solves dE/dH = 0.
E_T1 = M * (a * (H / M) ** (-al) + b * (Dbud / H) ** (-be))
H_star = (al * a * M**al / (be * b)) ** (1 / (al + be)) * Dbud ** (be / (al + be))

q = (L - 1) * sp.exp(-4 * B)
a_star = sp.exp(2 * B) / (sp.exp(2 * B) + L - 1)

P.claim(
    "TO-T1",
    section="§4, Eq. (3)",
    kind="theorem",
    provenance="derived",
    statement="Under a budget D = Σ H_m d_m, extraction error trades head count against head "
    "dimension; the optimal head count H* balances the two terms.",
    expressions={"H_star": H_star, "error": E_T1, "d_star": Dbud / H_star},
    notes="Formulas are the digest's [DER] template E = Σ_m [a H_m^-α + b d_m^-β] (symmetric "
    "groups); the paper's Eq. (3) was not recovered, hence 'derived'. The paper's Eq. (3) "
    "predicts 32 heads where its Fig. 2 shows 8 best (a reviewer's remark)." + _TITLE_NOTE,
)
P.claim(
    "TO-T2",
    section="§5 Theorem 5.1",
    kind="theorem",
    provenance="derived",
    statement="Softmax saturation: with bounded logits, increasing the head dimension gives "
    "diminishing returns, more so for long sequences.",
    expressions={"rms_gain_bound": sigma * sp.sqrt(2 * sp.exp(2 * B) / L)},
    notes="Formula is the digest's surrogate X3 [X] (hence 'derived'); the paper's statement was "
    "not recovered. Whether the effect strengthens with L depends on L versus e^{4B} "
    "(digest §10).",
    depends_on=("TO-X3",),
)
P.claim(
    "TO-C1",
    section="§5 Corollary 5.1",
    kind="construction",
    provenance="derived",
    statement="A low-rank (truncated SVD) version of a head exists; the logit change is at most "
    "σ_{r+1} R², and the output weights change by a factor at most e^{2δ} - 1.",
    expressions={
        "logit_change": s_r1 * R**2,
        "weight_change_factor": sp.exp(2 * s_r1 * R**2) - 1,
        "mse_bound": sv**2 * (sp.exp(2 * s_r1 * R**2) - 1) ** 2 * sp.exp(2 * B) / L,
    },
    notes="The procedure is the digest's [DER] truncated SVD of the QK circuit and the bounds are "
    "its [X] consequences of X4 (hence 'derived'); the paper's Corollary 5.1 was not "
    "recovered. mse_bound assumes position-only logits bounded by B and i.i.d. values.",
    depends_on=("TO-X4",),
)
P.claim(
    "TO-P2",
    section="digest §8 P2 (abstract [A])",
    kind="empirical",
    provenance="reconstructed",
    statement="In trained one-head models the test error flattens in the head dimension d, and "
    "the relative gain G(T) = [E(d_lo, T) - E(d_hi, T)] / E(d_lo, T) of a larger head "
    "dimension is smaller at long sequences than at short ones, provided the trained logits "
    "stay bounded as T grows.",
    notes="The abstract [A] claims diminishing returns of head dimension 'particularly for long "
    "sequences' under bounded logits (Theorem 5.1, not recovered); the trained-model protocol "
    "(one head, lag copy, G(T)) is the digest's P2, hence 'reconstructed'. Its falsifier: G(T) "
    "increasing in T while the logits stay bounded. The direction depends on T versus e^{4B} "
    "(digest §10).",
    depends_on=("TO-T2", "TO-E5"),
)
P.claim(
    "TO-R1",
    section="§4 / abstract",
    kind="empirical",
    provenance="reconstructed",
    statement="Early layers need enough attention width to extract information; split it between "
    "heads and head dimension by the TO-T1 balance (grouped heads).",
    expressions={"loss_sign_edge_minus_balanced": sp.Integer(1)},
    notes="The abstract [A] gives the thesis; the Eq. (3) balance and the grouped heads are known "
    "only from reviews [R] and summaries [S], hence 'reconstructed'. "
    "loss_sign_edge_minus_balanced (read by the check) is the sign of the loss at the better "
    "edge split of a fixed width (all head dimension or all heads) minus the loss at the "
    "balanced split (+1: the balanced split is better); only the direction is stated, no loss "
    "values (the paper's Fig. 2 finds 8 heads best where Eq. (3) predicts 32).",
    depends_on=("TO-T1",),
)
P.claim(
    "TO-R2",
    section="§5 / abstract",
    kind="empirical",
    provenance="reconstructed",
    statement="Later layers can run with smaller head dimension and be compressed by per-head SVD "
    "truncation.",
    expressions={
        "dloss_sign_later_minus_first": sp.Integer(-1),
        "loss_sign_front_minus_back": sp.Integer(-1),
    },
    notes="'Smaller head dimension in later layers' is the abstract's [A]; the per-head SVD "
    "truncation is known only from reviews [R] and summaries [S], hence 'reconstructed'. Read "
    "by the check: dloss_sign_later_minus_first, the sign of the loss increase from "
    "SVD-truncating a later layer's heads minus that from truncating the first layer's (-1: "
    "later layers compress more cheaply), and loss_sign_front_minus_back, the sign of the loss "
    "of a schedule giving early layers the larger head dimension minus that of its mirror "
    "image at equal total width (-1: later layers can run with smaller head dimension); only "
    "the directions are stated, no loss values.",
    depends_on=("TO-C1", "TO-T2"),
)
P.claim(
    "TO-R3",
    section="summaries [S]",
    kind="empirical",
    provenance="reconstructed",
    statement="Under a parameter cut, cutting head dimension hurts less than cutting head count.",
    expressions={"loss_sign_dimcut_minus_countcut": sp.Integer(-1)},
    notes="loss_sign_dimcut_minus_countcut (read by the check) is the sign of the loss after "
    "cutting head dimension minus the loss after cutting head count at the same parameter cut "
    "(-1: cutting head dimension hurts less); only the sign is stated, no loss values.",
)
P.claim(
    "TO-X1",
    section="digest §4 X1",
    kind="upper",
    provenance="derived",
    statement="With logits in [-B, B] over L tokens no attention weight exceeds "
    "e^{2B}/(e^{2B} + L - 1).",
    expressions={"max_weight": a_star},
)
P.claim(
    "TO-X2",
    section="digest §4 X2",
    kind="lower",
    provenance="derived",
    statement="Positional retrieval of one token with bounded logits has a relative error floor "
    "q/(1+q), q = (L-1)e^{-4B}, for every head dimension.",
    expressions={"floor": q / (1 + q), "floor_unit_readout": (1 - a_star) ** 2 * L / (L - 1)},
    regime=[cond(sp.Ge(L, 2), "L >= 2")],
)
P.claim(
    "TO-X3",
    section="digest §4 X3",
    kind="upper",
    provenance="derived",
    statement="Two bounded-logit heads with position-only logits and the same value map, on "
    "values i.i.d. across positions with covariance σ² I, differ in output by at most "
    "2σ² e^{2B}/L in mean square (per value coordinate).",
    expressions={"mse_difference": 2 * sigma**2 * sp.exp(2 * B) / L},
    regime=[
        cond(
            sp.Eq(kappa, 0),
            "position-only logits: the logits do not depend on the token values (kappa = 0)",
        ),
        cond(
            sp.Eq(rho, 0),
            "values i.i.d. across positions with covariance σ² I (rho = 0); the bound is per "
            "value coordinate",
        ),
    ],
    notes="Digest X3 [X]: E||o - o'||² = σ² Σ_s (α_s - α'_s)² needs both assumptions of the "
    "regime; with value-dependent logits (two heads z = ±B sign(v)) or a position-dependent "
    "value mean the difference does not decay in L.",
)
P.claim(
    "TO-X4",
    section="digest §4 X4",
    kind="upper",
    provenance="derived",
    statement="A logit perturbation of sup-norm δ changes the softmax by at most e^{2δ} - 1 in "
    "ℓ1, and every weight by a factor in [e^{-2δ}, e^{2δ}].",
    expressions={"l1_change": sp.exp(2 * delta) - 1, "weight_ratio": sp.exp(2 * delta)},
    notes="weight_ratio: every weight changes by a factor in [e^{-2δ}, e^{2δ}] (digest X4).",
)
P.claim(
    "TO-E5",
    section="App. Fig. 10 (reviewer 3) [R]",
    kind="empirical",
    provenance="reconstructed",
    statement="The attention logit norms of trained models grow with the sequence length L, which "
    "strains the bounded-logit assumption of Theorem 5.1.",
    expressions={"logit_range_sign_longer_minus_shorter": sp.Integer(1)},
    notes="Known only from a reviewer's description of the paper's Fig. 10 (digest §2, §6 E5, "
    "P5); the models, the norm and the lengths were not recovered. "
    "logit_range_sign_longer_minus_shorter (read by the check) is the sign of the trained logit "
    "norm at a longer L minus at a shorter one (+1: the norms grow with L); only the direction "
    "is stated, no values.",
)

CLAIMS = P.claims
SYMBOLS = P.table
