"""Claims of *Prism Transformer: Progressive Head Schedules* (arXiv 2606.27449).

Source: ``shared/papers/prism.md`` (written from a machine-converted copy of the full text).
Provenance follows the catalogue scheme: what the paper states is ``stated``; formulas the digest
derived (the whole-model parameter count from tied embeddings, RMSNorm and SwiGLU, which the digest
infers from the reported sizes; the per-head FLOP table; the softmax term the paper ignores) are
``derived``, and a claim takes the label of its weakest part. The counts are written over a
per-layer head count h_l that does not appear in them: PR-N1/PR-N2 are the statement that it
cannot.

PR-S is the paper's definition of a schedule (rules 1-3); the design rules of §2.2 (PR-S4, PR-S5,
PR-S6) are empirical rules the paper draws from its Small ablation, catalogued as ``empirical``
next to the ablation's own claims (PR-A1, PR-A2). PR-E3 carries the digest's standard-error
arithmetic (derived), PR-E4 Fig. 3 and the milestone statement, PR-TPP the tokens per parameter.
"""

from __future__ import annotations

import sympy as sp

from ._build import SymbolTable, cond

P = SymbolTable("2606.27449")

d = P.sym("d", "model width d_model", integer=True)
L = P.sym("L", "number of layers", integer=True)
V = P.sym("V", "vocabulary size", integer=True)
f = P.sym("f", "SwiGLU hidden width", integer=True)
T = P.sym("T", "sequence length", integer=True)
h_l = P.sym("h_l", "head count of layer l", integer=True)
h_base = P.sym("h_base", "baseline head count", integer=True)
I_bias = P.sym(
    "I_bias", "1 if the projections carry biases, else 0", nonnegative=True, integer=True
)
c_sm = P.sym("c", "elementwise softmax cost per score")
p_acc = P.sym("p", "accuracy on a benchmark (a fraction)")
q_err = P.sym("q", "error rate on a benchmark, 1 - p")
n_items = P.sym("n", "items in a benchmark", integer=True)
T_tok = P.sym("D_tok", "training tokens")
N_par = P.sym("N", "model parameters")
n_steps = P.sym("S", "optimizer steps", integer=True)
B_tok = P.sym("B_tok", "tokens per optimizer step", integer=True)

d_h = d / h_l  # per-head width at layer l
# Per-layer parameters: Q, K, V, O (d x d each) + biases, SwiGLU, two RMSNorms.  h_l enters only
# through the reshape: every tensor has the same shape at any head count.
N_attn = h_l * (3 * d * d_h) + h_l * d_h * d + 4 * d * I_bias
N_mlp = 3 * d * f
N_norm = 2 * d
N_layer = N_attn + N_mlp + N_norm
N_model = V * d + L * N_layer + d
# Matmul FLOPs of one layer for one sequence (multiply-add = 2 FLOPs, full score matrix).
F_layer = 6 * T * d**2 + h_l * 2 * T**2 * d_h + h_l * 2 * T**2 * d_h + 2 * T * d**2 + 6 * T * d * f
F_softmax = c_sm * h_l * T**2

P.claim(
    "PR-N1",
    section="§2, §4 (parameter formula)",
    kind="exact",
    provenance="derived",
    statement="The parameter count does not depend on the head schedule: N = V d + L(4d² + 4d "
    "I_bias + 3 d f + 2d) + d whatever (h_1, ..., h_L).",
    expressions={
        "N_model": sp.expand(N_model),
        "N_layer": sp.expand(N_layer),
        "N_attn": sp.expand(N_attn),
        "N_mlp": N_mlp,
        "N_norm": N_norm,
    },
    regime=[
        cond(
            sp.Eq(sp.Mod(d, h_l), 0),
            "h_l must divide d",
            outside="the check also counts a layer with h_l = 3 at d = 64, where no integer "
            "head width gives h_l·d_h = d and heads of width 21 or 22 do not have 4d² + 4d "
            "attention weights",
        )
    ],
    notes="Stated by the paper: same parameters whatever the schedule, and N_attn = 4d² + "
    "4d I_bias (§2, §4). Derived by the digest: the per-head split of N_attn, and tied "
    "embeddings, RMSNorm and SwiGLU (3 d f) inferred from the reported sizes, so the "
    "formula as a whole is derived.",
)
P.claim(
    "PR-N2",
    section="§4 FLOP table",
    kind="exact",
    provenance="derived",
    statement="Matmul FLOPs do not depend on the head schedule: only the O(h T²) elementwise "
    "softmax work scales with the head count.",
    expressions={"F_layer": sp.expand(F_layer), "F_softmax": F_softmax},
    regime=[cond(sp.Eq(sp.Mod(d, h_l), 0), "h_l must divide d")],
    notes="Stated by the paper: same matmul FLOPs (§1, §4). Derived by the digest: the per-head "
    "FLOP table (full score matrix, multiply-add = 2 FLOPs, SwiGLU 6 T d f) and the "
    "softmax term c h_l T², which the paper ignores; it is smaller in Prism's early "
    "wide-head layers.",
)
P.claim(
    "PR-N3",
    section="§1, §6, ablation (§8 of the digest)",
    kind="empirical",
    provenance="stated",
    statement="Prism trains at the same measured throughput (tokens/s, wall-clock) as the "
    "baseline; schedules with d_h = 384 early heads were 4.3-8.3% slower.",
    depends_on=("PR-N2",),
    notes="Measured on 8x H100 with FlashAttention (SDPA) in bf16. The paper blames 'not a power "
    "of two'; the digest's reading [derived] is the d_h > 256 fused-kernel limit.",
)
P.claim(
    "PR-S",
    section="§2.1",
    kind="exact",
    provenance="stated",
    statement="A valid schedule (the paper's definition, rules 1-3) has h_l | d for every layer, "
    "h_1 <= ... <= h_L and h_L = h_base; layer l then has h_l heads of width d_h = d / h_l, so "
    "h_l d_h = d and every weight matrix keeps its shape.",
    expressions={"d_head": d_h},
    regime=[
        cond(sp.Eq(sp.Mod(d, h_l), 0), "h_l must divide d"),
        cond(
            sp.Le(h_l, h_base),
            "h_l <= h_base",
            outside="the check builds schedules with a layer above h_base (Table 4's with its "
            "last or first h_base layer raised, and every rule-abiding schedule enumerated)",
        ),
    ],
    notes="A definition: what it asserts beyond itself is that the paper's own schedules "
    "(Table 4) satisfy it. The design rules of §2.2 are empirical and catalogued apart "
    "(PR-S4, PR-S5, PR-S6).",
)
P.claim(
    "PR-S4",
    section="§2.2 rule 4, ablation (Table 5)",
    kind="empirical",
    provenance="stated",
    statement="Design rule 4 (staircase smoothness): hold each head count for a block of 2-4 "
    "consecutive layers; single-layer steps did worse in the Small ablation.",
    expressions={
        "loss_sign_blocked_vs_ramp": sp.Integer(-1),
        "block_min": sp.Integer(2),
        "block_max": sp.Integer(4),
    },
    primary="loss_sign_blocked_vs_ramp",
    notes="An empirical rule the paper draws from its Small-scale ablation (3 seeds, no s.d. "
    "reported), not a theorem. The digest's summary of Table 5 has two same-start pairs: "
    "3,3,6,6,8,8,12x6 against the single-layer ramp 3,6,8,... (the weakest progressive row) "
    "and 2,2,4,4,8,8,12x6 (the best raw gain) against 2,4,6,8,12x8. Machine-readable content "
    "(read by the check): loss_sign_blocked_vs_ramp, the sign of the validation loss of a "
    "blocked schedule minus that of the single-layer ramp with the same start (-1: blocked is "
    "better; the paper gives no loss values, so only the sign is stated), and the block band "
    "block_min to block_max (2 to 4 layers).",
)
P.claim(
    "PR-S5",
    section="§2.2 rule 5",
    kind="empirical",
    provenance="stated",
    statement="Design rule 5 (baseline preservation): at least L/2 layers use h_base.",
    expressions={"min_fraction_at_base": sp.Rational(1, 2)},
    notes="An empirical design rule, not a theorem; the digest lists 'schedules that never "
    "reach h_base' among what the ablation did not test, so no reported row breaks it. "
    "min_fraction_at_base is the rule's number (read by the check): the least fraction of the "
    "L layers that run at h_base.",
)
P.claim(
    "PR-S6",
    section="§2.2 rule 6, ablation (Table 5)",
    kind="empirical",
    provenance="stated",
    statement="Design rule 6 (hardware preference): early-stage per-head widths should be powers "
    "of two (d_h in {256, 128}); the d_h = 384 schedules (h = 2 at d = 768) cost 4.3-8.3 % "
    "throughput because 384 is not a power of two.",
    notes="An empirical rule from the ablation's throughput column. The digest's reading "
    "[derived]: the slowdown is the fused attention kernels' d_h <= 256 limit, not "
    "power-of-two alignment (the d_h = 96 stages ran at full speed).",
)
P.claim(
    "PR-A1",
    section="Table 5 (ablation; digest §8)",
    kind="empirical",
    provenance="stated",
    statement="Every progressive schedule of the Small ablation (eight schedules, 3 seeds) "
    "reached a lower validation loss than uniform 12 x 12.",
    expressions={"loss_sign_progressive_vs_uniform": sp.Integer(-1)},
    notes="The digest reports the ablation as relations (no loss values, no s.d.): every "
    "progressive row beat uniform by a few tenths of a percent of the loss. "
    "loss_sign_progressive_vs_uniform (read by the check) is the sign of a progressive row's "
    "validation loss minus uniform's (-1: every progressive row is better); only the sign is "
    "stated.",
)
P.claim(
    "PR-A2",
    section="Table 5 (ablation; digest §8)",
    kind="empirical",
    provenance="stated",
    statement="Among the start-width variants of the Small ablation a narrower start is better: "
    "h_1 = 3 beats h_1 = 4, which beats h_1 = 6.",
    expressions={"loss_sign_wider_start": sp.Integer(1)},
    notes="Confounded (digest §10 item 5): the 'higher h_start' rows also change their later "
    "stages, so the ordering is not an effect of h_1 alone. loss_sign_wider_start (read by the "
    "check) is the sign of the validation loss of a start-width row minus that of the next "
    "narrower one (+1: the loss grows with h_1, a narrower start is better); only the sign is "
    "stated.",
)
P.claim(
    "PR-TPP",
    section="training setup (digest §5, §10 item 2)",
    kind="empirical",
    provenance="stated",
    statement="Every model is trained on 25-30 tokens per parameter (2.88B / 10.49B / 20.97B "
    "tokens for the 124M / 354M / 757M models).",
    expressions={
        "tokens_per_param": T_tok / N_par,
        "tokens": n_steps * B_tok,
        "low": sp.Integer(25),
        "high": sp.Integer(30),
    },
    primary="tokens_per_param",
    notes="The token counts are the paper's; tokens = steps x batch tokens with 2^18 / 2^18 / "
    "2^19 tokens per step and 11k / 40k / 40k steps is the digest's derivation (it "
    "reproduces them). The digest notes (§10 item 2) that Small is about 23.",
)
P.claim(
    "PR-E1",
    section="§6, Tables 1-2",
    kind="empirical",
    provenance="stated",
    statement="At equal parameters a progressive schedule reaches lower validation loss than the "
    "uniform one (by a few tenths of a percent at 124M-757M).",
    depends_on=("PR-N1", "PR-N2"),
)
P.claim(
    "PR-E3",
    section="§6, Table 3",
    kind="empirical",
    provenance="derived",
    statement="Zero-shot downstream accuracy (LM Evaluation Harness: HellaSwag, PIQA, WinoGrande, "
    "ARC-Easy) of Prism is at least the baseline's at every scale (differences 0.1-1.1 "
    "points, means of 3 seeds; one BLiMP entry slightly lower), and at these benchmarks' "
    "sizes (PIQA about 1.8k, WinoGrande about 1.3k, ARC-E about 2.4k items) one standard "
    "error of an accuracy near 50 %, SE = sqrt(p q / n) with q = 1 - p, is at least 1 "
    "point, so the gains are not individually significant.",
    expressions={
        "se": sp.sqrt(p_acc * q_err) / sp.sqrt(n_items),
        "one_se_at_least_points": sp.Integer(1),
        "gain_low_points": sp.Rational(1, 10),
        "gain_high_points": sp.Rational(11, 10),
        "items_PIQA": sp.Integer(1800),
        "items_WinoGrande": sp.Integer(1300),
        "items_ARC_Easy": sp.Integer(2400),
    },
    depends_on=("PR-E1",),
    notes="Stated by the paper: the accuracy means (no error bars). Derived by the digest "
    "(§6, §10 item 6): the item counts' standard error and the 'not individually "
    "significant' reading, the weakest part, hence the label. The standard error is of one "
    "accuracy measured on n items (binomial sampling of the items); a paired difference on "
    "the same items has a standard error set by the fraction of items the two models "
    "disagree on, which the paper does not report. Read by the check: gain_low_points and "
    "gain_high_points, the stated range of the gains in accuracy points; "
    "one_se_at_least_points, the least size of one standard error the statement gives; "
    "items_<benchmark> (- written _), the stated item counts of the sized benchmarks.",
)
P.claim(
    "PR-E2",
    section="§7, Figure 4",
    kind="empirical",
    provenance="stated",
    statement="Attention distance is more local in the early wide-head layers (ΔD_l < 0), flips "
    "positive in the middle layers and coincides late.",
    expressions={"delta_distance_sign_early": sp.Integer(-1)},
    notes="delta_distance_sign_early (read by the check) is the sign of ΔD_l = D_l(Prism) - "
    "D_l(uniform) in the early wide-head layers (-1: more local); the check reads the middle "
    "layers' 'flips positive' as the opposite sign there. Figure 4's values are not in the "
    "digest beyond about -100 tokens early at T = 1024.",
)

P.claim(
    "PR-E4",
    section="§3.4, Figure 3",
    kind="empirical",
    provenance="stated",
    statement="Large-model training dynamics: the validation-loss gap Prism - baseline is noisy "
    "below about 1B tokens, widens from 1B to 10B tokens and then plateaus near -0.008 nats "
    "(to the end of training, 20.97B tokens) with a shrinking seed band; Prism reaches the "
    "minimal validation-loss milestones earlier.",
    expressions={
        "gap_plateau": sp.Rational(-8, 1000),
        "t_noisy": sp.Integer(10**9),
        "t_plateau": sp.Integer(10**10),
        "t_end": sp.Integer(20_970_000_000),
    },
    primary="gap_plateau",
    depends_on=("PR-E1",),
    notes="Figure 3 carries no numbers in the digest beyond the axis ranges and the plateau "
    "value; the milestone statement (§3.4) is asserted without numbers (digest §10 item "
    "10). It follows from the figure for every loss level the baseline first reaches after "
    "the noisy phase, and says nothing about levels reached before it.",
)

CLAIMS = P.claims
SYMBOLS = P.table
