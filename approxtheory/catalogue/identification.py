"""Claims of *Multi-Head Self Attention is a Parameter Identification Mechanism* (arXiv 2609.01231).

Source: ``shared/papers/identification.md``. Provenance, by the digest's source tags:

* [paper] -> ``stated``: the paper states it (its text is in the digest);
* [paper + code] -> ``reconstructed``: the paper's claim, with its procedure or equations completed
  or corrected from the author's public fork (a secondary source): ID-S5.1, ID-S5.2;
* [derived], [verified], [code only] -> ``derived``: the digest's own derivations (full-layer counts
  with biases, GQA, RoPE; the §3.2 head's 1/3; D > E counts; discrete gradient descent; the
  minimum norm of the balanced point).

A claim mixing a stated part with a derived one carries the weaker label, or is split (ID-L5.1 /
ID-L5.1d, ID-S5.2 / ID-S5.2n). Symbols: E model width, H heads, D query/key head dim, C value
head dim, G KV groups.
"""

from __future__ import annotations

import sympy as sp

from ._build import SymbolTable, cond

P = SymbolTable("2609.01231")

E = P.sym("E", "model width (embedding dimension)", integer=True)
H = P.sym("H", "number of heads", integer=True)
G = P.sym("G", "number of KV groups (GQA)", integer=True)
D = P.sym("D", "query/key head dimension", integer=True)
C = P.sym("C", "value/output head dimension", integer=True)
Dr = P.sym("D_r", "number of rotated dimensions (partial RoPE)", integer=True)
E0 = P.sym("E_0", "width of the single-head comparison layer")
D0 = P.sym("D_0", "query/key dim of the single-head comparison layer")
eta = P.sym("eta", "D_0/E of the single-head comparison layer")
lr = P.sym("lr", "learning rate")
lam = P.sym("lambda", "weight-decay rate")

divides_E = cond(sp.Eq(sp.Mod(E, H), 0), "H must divide E")
G_divides_H = cond(sp.Eq(sp.Mod(H, G), 0), "G must divide H")
D_le_E = cond(sp.Le(D, E), "D <= E")
split = {D: E / H, C: E / H}


def _ratio(U, Ptot, subs=None):
    r = U / Ptot
    return sp.simplify(r.subs(subs)) if subs else sp.simplify(r)


# ---- generic per-head counts (the one place these formulas live) ---------------------------------
U_qk_head = D**2  # GL(D) orbit
P_qk_head = 2 * D * E
U_ov_head = C**2  # GL(C) orbit
P_mha = H * 2 * E * (D + C)  # Q, K, V, O blocks of all heads
U_mha = H * (D**2 + C**2)
P_bias = 2 * H * D + H * C + E  # b_Q, b_K, b_V per head, shared b_O (C = D = E/H -> 4E)
U_bias = H * D + H * C  # inert key bias + value biases aliased with b_O
P_gqa = (H + G) * D * E + (H + G) * C * E
U_gqa = G * D**2 + G * C**2
U_rope = H * (D + C**2)
U_rope_gqa = G * D + G * C**2
# any D (also D > E): the identified QK dimension is the rank of d(W_Kᵀ W_Q),
# 2 m E - m², m = min(D, E)
_m = sp.Min(D, E)
U_qk_any = P_qk_head - (2 * _m * E - _m**2)

P.claim(
    "ID-L4.1",
    section="§4.2 Lemma 4.1",
    kind="lemma",
    provenance="stated",
    statement="The QK product W_Kᵀ W_Q is invariant under (S W_Q, S^{-T} W_K), S in GL(D): D² "
    "unidentified of 2DE query/key weights per head.",
    expressions={"ratio": _ratio(U_qk_head, P_qk_head), "U": U_qk_head, "P": P_qk_head},
    regime=[
        cond(
            sp.Le(D, E),
            "D <= E",
            outside="the check also measures the QK block at (D, E) = (3, 2), (4, 3), where "
            "D > E and fewer than D² weights are unidentified (ID-L4.1w)",
        )
    ],
)
P.claim(
    "ID-E4.1",
    section="§4.1 Example",
    kind="exact",
    provenance="stated",
    statement="With E = 1 only the scalar W_Kᵀ W_Q matters: 2D - 1 of 2D query/key numbers are "
    "unidentified.",
    expressions={"ratio": (2 * D - 1) / (2 * D), "U": 2 * D - 1, "P": 2 * D},
    notes="The paper's example has D > E (= 1); the general D > E count is ID-L4.1w.",
)
P.claim(
    "ID-L4.1w",
    section="§3 table (D > E) [derived]",
    kind="exact",
    provenance="derived",
    statement="For any head dim D, the query/key weights of a head leave 2DE - 2mE + m² "
    "unidentified, m = min(D, E): D² for D <= E, 2DE - E² for D >= E (the product "
    "W_Kᵀ W_Q has rank at most E).",
    expressions={"U": U_qk_any, "P": P_qk_head, "ratio": U_qk_any / P_qk_head},
    notes="Digest §3: 'If D > E, the QK count becomes U = 2DE - E² [derived, verified]'; the "
    "paper only remarks that D > E introduces unidentified interactions on purpose. At "
    "E = 1 it is ID-E4.1's 2D - 1.",
)
P.claim(
    "ID-L4.2",
    section="§4.3 Lemma 4.2",
    kind="lemma",
    provenance="stated",
    statement="A balanced SVD representative exists; counting it leaves 2DE - D² degrees of "
    "freedom.",
    expressions={"dof": P_qk_head - U_qk_head},
    regime=[
        cond(
            sp.Le(D, E),
            "D <= E",
            outside="the check also measures the identified QK dimension at (D, E) = (3, 2), "
            "(4, 3), where D > E and it is E², not 2DE - D²",
        )
    ],
)
P.claim(
    "ID-L4.3",
    section="§4.3 Lemma 4.3, Cor. 4.4-4.5",
    kind="lemma",
    provenance="stated",
    statement="The directional derivative of W_Kᵀ W_Q vanishes on a D²-dimensional subspace "
    "{(A W_Q, -Aᵀ W_K)} of weight directions (full-rank W_Q, W_K).",
    expressions={"null_dim": U_qk_head},
    regime=[
        cond(
            sp.Le(D, E),
            "D <= E",
            outside="the check also measures the null space at (D, E) = (3, 2), (4, 3), (4, 2), "
            "where D > E and it has fewer than D² dimensions",
        )
    ],
)
P.claim(
    "ID-T4.5",
    section="§4.5 Theorem 4.5",
    kind="ratio",
    provenance="stated",
    statement="Heads improve identification: with D = C = E/H the unidentified fraction of an MHA "
    "layer is 1/(2H), never 0.",
    expressions={
        "ratio": _ratio(U_mha, P_mha, split),
        "U": sp.simplify(U_mha.subs(split)),
        "P": sp.simplify(P_mha.subs(split)),
        "ratio_general": _ratio(U_mha, P_mha),
    },
    regime=[divides_E],
    notes="The paper's §3.2 single head (square W_V, no W_O) has ratio 1/3, not 1/2 (ID-SH3.2, "
    "derived); identified fractions: H = 6 -> 11/12 (the paper's 'about 83%' is a slip).",
)
_U_sh = U_qk_head.subs(D, E)  # QK orbit only: a square W_V alone has no symmetry
_P_sh = P_qk_head.subs(D, E) + E**2
P.claim(
    "ID-SH3.2",
    section="§3.2 single head [derived]",
    kind="ratio",
    provenance="derived",
    statement="The paper's own single head (D = E, square W_V, no W_O) leaves E² of its 3E² "
    "weights unidentified: ratio 1/3, not the abstract's 1/2.",
    expressions={"ratio": sp.simplify(_U_sh / _P_sh), "U": _U_sh, "P": _P_sh},
    notes="Digest §3 and §9.1 [derived from the paper's own counts]; its §4.10 comparison layer "
    "is this head.",
)
P.claim(
    "ID-L4.6",
    section="§4.6 Lemma 4.6",
    kind="lemma",
    provenance="stated",
    statement="W_O W_V is invariant under (W_O T^{-1}, T W_V), T in GL(C): "
    "C² unidentified per head.",
    expressions={"U": U_ov_head, "P": 2 * C * E},
)
P.claim(
    "ID-B4.6",
    section="§4.6",
    kind="lemma",
    provenance="stated",
    statement="With biases, (W_Q, b_Q) -> S(W_Q, b_Q) and (W_K, b_K) -> S^{-T}(W_K, b_K) "
    "leaves the logits unchanged.",
    expressions={
        "key_power": sp.Integer(-1),
        "query_bias_power": sp.Integer(1),
        "key_bias_power": sp.Integer(-1),
    },
    notes="The action as data (read by the check): W_Q -> S W_Q, b_Q -> S^query_bias_power "
    "b_Q, W_K -> (Sᵀ)^key_power W_K, b_K -> (Sᵀ)^key_bias_power b_K; the statement's S and "
    "S^{-T} are the powers 1 and -1 (each bias transformed with its weight).",
)
P.claim(
    "ID-F4.7",
    section="§4.7 Fact 4.7, §4.7.1",
    kind="exact",
    provenance="stated",
    statement="Softmax is shift invariant, so the key bias b_K has no effect on the outputs and "
    "∂L/∂b_K ≡ 0, with or without a causal mask: D inert entries per head.",
    expressions={"U_key_bias": H * D},
)
P.claim(
    "ID-B4.7.2",
    section="§4.7.2",
    kind="ratio",
    provenance="derived",
    statement="Value biases act only through Σ_h W_O^h b_V^h + b_O: with all biases the "
    "unidentified fraction is (E+H)/(2H(E+1)).",
    expressions={
        "ratio": _ratio(U_mha + U_bias, P_mha + P_bias, split),
        "U": sp.expand((U_mha + U_bias).subs(split)),
        "P": sp.expand((P_mha + P_bias).subs(split)),
        "U_value_bias": H * C,
    },
    regime=[divides_E],
    notes="The paper states the bias part (2E); the full count is [derived, verified].",
)
P.claim(
    "ID-X4.8.1",
    section="§4.8.1",
    kind="ratio",
    provenance="stated",
    statement="For general head dim D (C = D) the unidentified fraction is D/(2E); fat heads "
    "(D = E) give 1/2 for any H.",
    expressions={
        "ratio": _ratio(U_mha, P_mha, {C: D}),
        "U": sp.expand(U_mha.subs(C, D)),
        "P": sp.expand(P_mha.subs(C, D)),
    },
    regime=[
        cond(
            sp.Le(D, E),
            "D <= E",
            outside="the check builds one-head layers at (D, E) = (3, 2), (4, 3), where D > E "
            "and 2(2DE - E²) < 2D² weights per head are unidentified",
        )
    ],
)
P.claim(
    "ID-P4.8",
    section="§4.8 RoPE",
    kind="ratio",
    provenance="derived",
    statement="RoPE with distinct frequencies shrinks the QK symmetry from GL(D) to a "
    "D-dimensional commuting group; full layer fraction (E+H)/(4EH).",
    expressions={
        "ratio": _ratio(U_rope, P_mha, split),
        "U": sp.expand(U_rope.subs(split)),
        "P": sp.expand(P_mha.subs(split)),
        "U_qk_head": D,
        "U_qk_repeated_pair": D + 4,
        "U_qk_partial": Dr + (D - Dr) ** 2,
    },
    regime=[divides_E, cond(sp.Eq(sp.Mod(D, 2), 0), "the head dim D must be even for RoPE")],
    notes="Paper: QK part D² -> D [stated]. Full-layer counts, the repeated-pair (+4 per "
    "repeated 2x2 pair) and partial-RoPE counts are [derived, verified].",
)
P.claim(
    "ID-GQA4.9",
    section="§4.9 GQA",
    kind="ratio",
    provenance="derived",
    statement="GQA with G KV groups ties the symmetries per group: unidentified fraction "
    "G/(H(H+G)); MQA (G = 1) gives 1/(H(H+1)).",
    expressions={
        "ratio": _ratio(U_gqa, P_gqa, split),
        "U": sp.expand(U_gqa.subs(split)),
        "P": sp.expand(P_gqa.subs(split)),
        "U_qk": G * D**2,
    },
    regime=[divides_E, G_divides_H],
    notes="The paper counts QK only (G D² vs H D²); the full-layer count is [derived, verified].",
)
P.claim(
    "ID-RG",
    section="§4.9 RoPE+GQA",
    kind="ratio",
    provenance="derived",
    statement="RoPE with GQA: unidentified G·D + G·C², fraction G(E+H)/(2EH(G+H)).",
    expressions={
        "ratio": _ratio(U_rope_gqa, P_gqa, split),
        "U": sp.expand(U_rope_gqa.subs(split)),
        "P": sp.expand(P_gqa.subs(split)),
        "U_qk": G * D,
    },
    regime=[divides_E, G_divides_H],
    notes="The paper's Llama-2-70B figures (131,072 vs 1,048,576) are G·D² vs H·D², i.e. GQA "
    "alone; with RoPE its QK count would be G·D.",
)
P.claim(
    "ID-EQ4.10",
    section="§4.10",
    kind="exact",
    provenance="stated",
    statement="A single head matches an H-head MHA's identified parameter count only with width "
    "E0 = E sqrt(2 - 1/H); at fixed width it is impossible for H >= 2.",
    expressions={
        "E0_over_E": sp.sqrt(2 - 1 / H),
        "E0": sp.ceiling(E * sp.sqrt(2 - 1 / H)),
        "fixed_width_lhs": 1 + 2 * eta - eta**2,
        "fixed_width_rhs": 2 * (2 - 1 / H),
        # the counts the statement is made of (the generic blocks above): the single
        # head of width E0, QK dim D0 and a square W_V (no W_O); the MHA with C = D
        "P_sha": P_qk_head.subs({D: D0, E: E0}) + E0**2,
        "U_sha": U_qk_head.subs(D, D0),
        "P_mha": sp.expand(P_mha.subs(C, D)),
        "U_mha": sp.expand(U_mha.subs(C, D)),
    },
    notes="E0_over_E, E0 and the fixed-width sides are the paper's printed forms; P/U are the "
    "counts they should follow from (identified = P - U, D0 = eta E0, D = E/H; D0 <= E0). "
    "E0/E ≈ 1.384 for H = 12 (parameter ratio ≈ 1.917); the paper's 'roughly 60% larger' "
    "matches neither.",
)
P.claim(
    "ID-L5.1",
    section="§5 Lemma 5.1",
    kind="lemma",
    provenance="stated",
    statement="Along gradient flow of any loss of a bias-free attention layer, W_Q W_Qᵀ - W_K W_Kᵀ "
    "is conserved for every head.",
    expressions={"key_gram_coefficient": sp.Integer(-1)},
    notes="key_gram_coefficient (read by the check) is c of the conserved matrix W_Q W_Qᵀ + "
    "c W_K W_Kᵀ: the statement's difference is c = -1. With QK biases the conserved quantity "
    "is [W|b][W|b]ᵀ differences [derived]; the "
    "discrete-step and weight-decay behaviour is ID-L5.1d.",
)
P.claim(
    "ID-L5.1d",
    section="§5 Lemma 5.1 (discrete) [derived]",
    kind="rate",
    provenance="derived",
    statement="Gradient descent changes W_Q W_Qᵀ - W_K W_Kᵀ by exactly lr²(W_K G Gᵀ W_Kᵀ - "
    "W_Q Gᵀ G W_Qᵀ) per step (G = ∂L/∂(W_Kᵀ W_Q)), so its drift over a fixed time is "
    "O(lr); weight decay λ multiplies it by (1 - lr λ)² per step.",
    expressions={"decay_factor": (1 - lr * lam) ** 2, "horizon_drift": lr},
    notes="Digest §4 ID-L5.1 'Discrete gradient descent [derived, verified]'; the paper only "
    "describes the weight-decay effect as compressive.",
)
P.claim(
    "ID-S5.1",
    section="§5.1",
    kind="exact",
    provenance="reconstructed",
    statement="Projecting an update on the invariant subspace solves A P + Q A = Cm; the fraction "
    "ρ is 1 for a step in the subspace, 0 for a pure gradient step and 1/(2H) on "
    "average for an isotropic step (the paper's reference line).",
    expressions={"rho_isotropic": sp.simplify((D / (2 * E)).subs(split))},
    regime=[divides_E],
    notes="[paper + code]: the printed objective's sign and the elementwise solution's indices "
    "are corrected from the author's fork (+Aᵀ W_K; row index with K eigenvalues); the "
    "isotropic mean is the fork's 'null baseline' [verified in the digest].",
)
P.claim(
    "ID-S5.2",
    section="§5.2.2",
    kind="exact",
    provenance="reconstructed",
    statement="Rebalancing moves (W_Q, W_K) to a balanced point of its orbit without changing "
    "W_Kᵀ W_Q: β = τ = 0 after it.",
    expressions={
        "product_ratio": sp.Integer(1),
        "beta_ratio": sp.Integer(0),
        "tau_ratio": sp.Integer(0),
    },
    notes="The statement as data (read by the check): W_Kᵀ W_Q after rebalancing = "
    "product_ratio x W_Kᵀ W_Q before (1: unchanged); β and τ after it = beta_ratio, tau_ratio "
    "x β before (0: balanced). [paper + code]: the procedure (QR, SVD of R_K R_Qᵀ, Σ^{1/2} "
    "split, Procrustes "
    "orientation) is the paper's §5.2.2 completed from the author's fork; the minimum "
    "norm of the balanced point is ID-S5.2n [derived].",
)
P.claim(
    "ID-S5.2n",
    section="§5.2 [derived]",
    kind="exact",
    provenance="derived",
    statement="The balanced point has the smallest ||W_Q||² + ||W_K||² on its orbit, equal to "
    "2||W_Kᵀ W_Q||_* (twice the nuclear norm).",
    expressions={"norm_over_nuclear": sp.Integer(2)},
    notes="Digest §5.2 'Additional property [derived, verified]'. norm_over_nuclear: the "
    "balanced point's ||W_Q||² + ||W_K||² over ||W_Kᵀ W_Q||_*.",
)
P.claim(
    "ID-E5",
    section="§5 Figs. 2-4",
    kind="empirical",
    provenance="stated",
    statement="SGD keeps ρ far below 1/(2H) and conserves β; AdamW steps overlap the invariant "
    "subspace and break conservation; rebalancing restores it without hurting loss.",
    expressions={
        "rho_sign_sgd_minus_reference": sp.Integer(-1),
        "rho_sign_adamw_minus_sgd": sp.Integer(1),
        "drift_sign_adamw_minus_sgd": sp.Integer(1),
        "loss_sign_rebalanced_minus_adamw": sp.Integer(0),
    },
    notes="The statement's orderings as signs (read by the check; Figs. 2-4 give no values): "
    "SGD's ρ below the 1/(2H) reference (-1), AdamW's ρ above SGD's (+1: its steps overlap the "
    "invariant subspace), AdamW's β drift above SGD's (+1: it breaks conservation), the "
    "rebalanced run's validation loss minus AdamW's 0 (not hurt: no difference).",
    depends_on=("ID-S5.1", "ID-S5.2", "ID-L5.1"),
)

# ---- claims of the paper's §5 figures and §7 remarks ---------------------------------------------
_identified = sp.simplify(1 - _ratio(U_mha, P_mha, split))  # 1 - 1/(2H)
P.claim(
    "ID-F1",
    section="§7 Fig. 1 (Bhojanapalli et al. 2020 re-tabulated)",
    kind="empirical",
    provenance="stated",
    statement="Bhojanapalli et al.'s SQuAD ablation of the head size d_p in {32, 64, 128, 256}, "
    "re-tabulated with an 'Unidentified' column (a fraction of a percent to several percent "
    "of the parameters): most of the gain comes with the better-identified, smaller d_p.",
    expressions={
        # the count the column should follow, per head and layer (the generic per-layer block
        # above with D = C = d_p, divided by H): the column is H·L times it
        "U_head_layer": sp.expand(U_mha.subs(C, D) / H),
        # the digest's reading of the printed column (§7, §9.10): its values are about 256 d_p²
        "column_digest": 256 * D**2,
    },
    notes="Digest §7 and §9.10: the column's values scale like d_p² (≈ 256·d_p²) and their "
    "percentages match the stated totals, but the (H, L) behind them is not given and the "
    "column cannot be reconstructed from 2·H·L·d_p² at a stated configuration (it needs "
    "H·L = 128). The table's values and the SQuAD scores are not in the digest (the figure "
    "pages were not available).",
)
P.claim(
    "ID-LT",
    section="§7 lottery-ticket contrast",
    kind="ratio",
    provenance="stated",
    statement="By this count about 90 % of a plain MHA layer's parameters are identified "
    "('meaningful'), while lottery tickets keep 10-20 % of the weights: lack of "
    "identification alone cannot explain lottery tickets.",
    expressions={
        "identified": _identified,
        "ticket_low": sp.Rational(1, 10),
        "ticket_high": sp.Rational(1, 5),
    },
    regime=[divides_E],
    notes="The identified fraction is 1 - ID-T4.5's ratio; at its smallest (H = 1) it is 1/2, "
    "so the unidentified share (at most 1/2) can never reach the 80-90 % that the tickets "
    "prune. 'About 90 %' is H = 5 (9/10); the paper's H = 6 model has 11/12.",
)
P.claim(
    "ID-PUB",
    section="§4.5 text",
    kind="ratio",
    provenance="stated",
    statement="'50 % to 80-90 %' of the attention parameters are identified in published "
    "architectures.",
    expressions={
        "identified": _identified,
        "stated_low": sp.Rational(1, 2),
        "stated_high": sp.Rational(9, 10),
    },
    regime=[divides_E, cond(sp.Ge(H, 8), "published architectures: H >= 8 heads")],
    notes="Digest §9.2: with H >= 8 the paper's own formula gives >= 93.75 % (15/16); the "
    "stated range holds only for H <= 5 (50 % is H = 1). The paper's nanoGPT (H = 6) has "
    "11/12, Llama-2-70B (H = 64) 127/128 (GQA: more).",
)
P.claim(
    "ID-F3",
    section="§5 Fig. 3",
    kind="empirical",
    provenance="stated",
    statement="For every optimizer the key-bias gradient is numerically zero, while the "
    "query-bias gradient is small but clearly nonzero: b_K has no effect, b_Q acts through "
    "W_Kᵀ b_Q (all H·D of its entries identified at full-rank W_K).",
    expressions={"identified_query_bias": H * D, "identified_key_bias": sp.Integer(0)},
    regime=[
        cond(
            sp.Le(D, E),
            "D <= E",
            outside="the check also measures the biases' identified dimensions at (E, H, D) = "
            "(3, 2, 4), (2, 1, 3), where D > E and H·E entries of b_Q are identified, not H·D",
        )
    ],
    notes="The counts are the dimensions of the paper's §4.6-4.7 statements (b_Q acts only "
    "through W_Kᵀ b_Q, b_K not at all; ID-F4.7's D inert entries per head) at full-rank W_K. "
    "The paper's runs are nanoGPT with bias=True [code]; the curves' values are not in the "
    "digest.",
)
P.claim(
    "ID-F4",
    section="§5 Fig. 4 (case 5: SGD learning-rate sweep)",
    kind="rate",
    provenance="stated",
    statement="The per-step drift ||C_{t+1} - C_t|| of C = W_Q W_Qᵀ - W_K W_Kᵀ falls with the "
    "learning rate in every layer and head (a discretization error, roughly lr²).",
    expressions={"step_drift": lr**2},
    notes="Case 5 [paper]: 'Discretization error should scale roughly with lr²' at lr in "
    "{0.5, 0.25, 0.125, 0.0625}. At fixed weights the per-step change is exactly "
    "lr²(gq gqᵀ - gk gkᵀ) for a bias-free head (ID-L5.1d); along training the gradients "
    "differ between the rates. The digest also reads Fig. 4 as 'larger in early layers'.",
)
P.claim(
    "ID-CLR",
    section="§5.2 control run",
    kind="empirical",
    provenance="stated",
    statement="A control run that clears the AdamW state (both moments) without rebalancing "
    "behaves like plain AdamW, so the rebalanced run's effect comes from the rebalance.",
    expressions={"beta_closer_sign": sp.Integer(-1)},
    notes="Digest §5.2 item 6 and §6 results [paper]; the clearing itself is [code] (the fork "
    "deletes the moments of the fused c_attn.weight). No curve values are given: "
    "beta_closer_sign (read by the check) is the sign of |β_control - β_AdamW| - "
    "|β_control - β_rebalanced| after the first clearing (-1: the control behaves like plain "
    "AdamW, not like the rebalanced run); only the direction is stated.",
    depends_on=("ID-S5.2",),
)

CLAIMS = P.claims
SYMBOLS = P.table
