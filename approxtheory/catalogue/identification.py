"""Claims of *Multi-Head Self Attention is a Parameter Identification Mechanism* (arXiv 2609.01231).

Source: ``shared/papers/identification.md``. [paper] -> ``stated``; [derived]/[verified] full-layer
counts -> ``derived``. Symbols: E model width, H heads, D query/key head dim, C value head dim,
G KV groups.
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


# ---- generic per-head counts (the one place these formulas live) ----------------------------------
U_qk_head = D**2                       # GL(D) orbit
P_qk_head = 2 * D * E
U_ov_head = C**2                       # GL(C) orbit
P_mha = H * 2 * E * (D + C)            # Q, K, V, O blocks of all heads
U_mha = H * (D**2 + C**2)
P_bias = 2 * H * D + H * C + E         # b_Q, b_K, b_V per head, shared b_O (C = D = E/H -> 4E)
U_bias = H * D + H * C                 # inert key bias + value biases aliased with b_O
P_gqa = (H + G) * D * E + (H + G) * C * E
U_gqa = G * D**2 + G * C**2
U_rope = H * (D + C**2)
U_rope_gqa = G * D + G * C**2

P.claim(
    "ID-L4.1", section="§4.2 Lemma 4.1", kind="lemma", provenance="stated",
    statement="The QK product W_Kᵀ W_Q is invariant under (S W_Q, S^{-T} W_K), S in GL(D): D² "
              "unidentified of 2DE query/key weights per head.",
    expressions={"ratio": _ratio(U_qk_head, P_qk_head), "U": U_qk_head, "P": P_qk_head},
    regime=[D_le_E],
)
P.claim(
    "ID-E4.1", section="§4.1 Example", kind="exact", provenance="stated",
    statement="With E = 1 only the scalar W_Kᵀ W_Q matters: 2D - 1 of 2D query/key numbers are "
              "unidentified.",
    expressions={"ratio": (2 * D - 1) / (2 * D), "U": 2 * D - 1, "P": 2 * D},
)
P.claim(
    "ID-L4.2", section="§4.3 Lemma 4.2", kind="lemma", provenance="stated",
    statement="A balanced SVD representative exists; counting it leaves 2DE - D² degrees of "
              "freedom.",
    expressions={"dof": P_qk_head - U_qk_head},
    regime=[D_le_E],
)
P.claim(
    "ID-L4.3", section="§4.3 Lemma 4.3, Cor. 4.4-4.5", kind="lemma", provenance="stated",
    statement="The directional derivative of W_Kᵀ W_Q vanishes on a D²-dimensional subspace "
              "{(A W_Q, -Aᵀ W_K)} of weight directions (full-rank W_Q, W_K).",
    expressions={"null_dim": U_qk_head},
    regime=[D_le_E],
)
P.claim(
    "ID-T4.5", section="§4.5 Theorem 4.5", kind="ratio", provenance="stated",
    statement="Heads improve identification: with D = C = E/H the unidentified fraction of an MHA "
              "layer is 1/(2H), never 0.",
    expressions={"ratio": _ratio(U_mha, P_mha, split), "U": sp.simplify(U_mha.subs(split)),
                 "P": sp.simplify(P_mha.subs(split)),
                 "ratio_general": _ratio(U_mha, P_mha),
                 "ratio_single_head_no_WO": sp.Rational(1, 3)},
    regime=[divides_E],
    notes="The paper's §3.2 single head (square W_V, no W_O) has ratio 1/3, not 1/2 [derived]; "
          "identified fractions: H = 6 -> 11/12 (the paper's 'about 83%' is a slip).",
)
P.claim(
    "ID-L4.6", section="§4.6 Lemma 4.6", kind="lemma", provenance="stated",
    statement="W_O W_V is invariant under (W_O T^{-1}, T W_V), T in GL(C): C² unidentified per head.",
    expressions={"U": U_ov_head},
)
P.claim(
    "ID-B4.6", section="§4.6", kind="lemma", provenance="stated",
    statement="With biases, (W_Q, b_Q) -> S(W_Q, b_Q) and (W_K, b_K) -> S^{-T}(W_K, b_K) leaves the "
              "logits unchanged.",
)
P.claim(
    "ID-F4.7", section="§4.7 Fact 4.7, §4.7.1", kind="exact", provenance="stated",
    statement="Softmax is shift invariant, so the key bias b_K has no effect on the outputs and "
              "∂L/∂b_K ≡ 0, with or without a causal mask: D inert entries per head.",
    expressions={"U_key_bias": H * D},
)
P.claim(
    "ID-B4.7.2", section="§4.7.2", kind="ratio", provenance="derived",
    statement="Value biases act only through Σ_h W_O^h b_V^h + b_O: with all biases the "
              "unidentified fraction is (E+H)/(2H(E+1)).",
    expressions={"ratio": _ratio(U_mha + U_bias, P_mha + P_bias, split),
                 "U": sp.expand((U_mha + U_bias).subs(split)),
                 "P": sp.expand((P_mha + P_bias).subs(split)),
                 "U_value_bias": H * C},
    regime=[divides_E],
    notes="The paper states the bias part (2E); the full count is [derived, verified].",
)
P.claim(
    "ID-X4.8.1", section="§4.8.1", kind="ratio", provenance="stated",
    statement="For general head dim D (C = D) the unidentified fraction is D/(2E); fat heads "
              "(D = E) give 1/2 for any H.",
    expressions={"ratio": _ratio(U_mha, P_mha, {C: D})},
    regime=[D_le_E],
)
P.claim(
    "ID-P4.8", section="§4.8 RoPE", kind="ratio", provenance="derived",
    statement="RoPE with distinct frequencies shrinks the QK symmetry from GL(D) to a "
              "D-dimensional commuting group; full layer fraction (E+H)/(4EH).",
    expressions={"ratio": _ratio(U_rope, P_mha, split), "U": sp.expand(U_rope.subs(split)),
                 "U_qk_head": D, "U_qk_repeated_pair": D + 4,
                 "U_qk_partial": Dr + (D - Dr) ** 2},
    regime=[divides_E, cond(sp.Eq(sp.Mod(D, 2), 0), "the head dim D must be even for RoPE")],
    notes="Paper: QK part D² -> D [stated]. Full-layer counts, the repeated-pair (+4 per "
          "repeated 2x2 pair) and partial-RoPE counts are [derived, verified].",
)
P.claim(
    "ID-GQA4.9", section="§4.9 GQA", kind="ratio", provenance="derived",
    statement="GQA with G KV groups ties the symmetries per group: unidentified fraction "
              "G/(H(H+G)); MQA (G = 1) gives 1/(H(H+1)).",
    expressions={"ratio": _ratio(U_gqa, P_gqa, split), "U": sp.expand(U_gqa.subs(split)),
                 "P": sp.expand(P_gqa.subs(split)), "U_qk": G * D**2},
    regime=[divides_E, G_divides_H],
    notes="The paper counts QK only (G D² vs H D²); the full-layer count is [derived, verified].",
)
P.claim(
    "ID-RG", section="§4.9 RoPE+GQA", kind="ratio", provenance="derived",
    statement="RoPE with GQA: unidentified G·D + G·C², fraction G(E+H)/(2EH(G+H)).",
    expressions={"ratio": _ratio(U_rope_gqa, P_gqa, split),
                 "U": sp.expand(U_rope_gqa.subs(split)), "U_qk": G * D},
    regime=[divides_E, G_divides_H],
    notes="The paper's Llama-2-70B figures (131,072 vs 1,048,576) are G·D² vs H·D², i.e. GQA "
          "alone; with RoPE its QK count would be G·D.",
)
P.claim(
    "ID-EQ4.10", section="§4.10", kind="exact", provenance="stated",
    statement="A single head matches an H-head MHA's identified parameter count only with width "
              "E0 = E sqrt(2 - 1/H); at fixed width it is impossible for H >= 2.",
    expressions={"E0_over_E": sp.sqrt(2 - 1 / H), "E0": sp.ceiling(E * sp.sqrt(2 - 1 / H)),
                 "fixed_width_lhs": 1 + 2 * eta - eta**2, "fixed_width_rhs": 2 * (2 - 1 / H)},
    notes="E0/E ≈ 1.384 for H = 12 (parameter ratio ≈ 1.917); the paper's 'roughly 60% larger' "
          "matches neither.",
)
P.claim(
    "ID-L5.1", section="§5 Lemma 5.1", kind="lemma", provenance="stated",
    statement="Along gradient flow W_Q W_Qᵀ - W_K W_Kᵀ is conserved; discrete GD drifts O(lr²) per "
              "step, and weight decay multiplies it by (1 - lr λ)² per step.",
    expressions={"decay_factor": (1 - lr * lam) ** 2},
    notes="With QK biases the conserved quantity is [W|b][W|b]ᵀ differences [derived].",
)
P.claim(
    "ID-S5.1", section="§5.1", kind="exact", provenance="stated",
    statement="Projecting an update on the invariant subspace solves A P + Q A = Cm; the fraction "
              "ρ is 0 for a pure gradient step and 1/(2H) on average for an isotropic step.",
    expressions={"rho_isotropic": sp.simplify((D / (2 * E)).subs(split))},
    regime=[divides_E],
    notes="Signs and indices as corrected by the digest (+Aᵀ W_K; row index with K eigenvalues).",
)
P.claim(
    "ID-S5.2", section="§5.2.2", kind="exact", provenance="stated",
    statement="Rebalancing moves (W_Q, W_K) to the balanced point of its orbit without changing "
              "W_Kᵀ W_Q; β = τ = 0 after it and ||W_Q||² + ||W_K||² = 2||M||_*.",
)
P.claim(
    "ID-E5", section="§5 Figs. 2-4", kind="empirical", provenance="stated",
    statement="SGD keeps ρ far below 1/(2H) and conserves β; AdamW steps overlap the invariant "
              "subspace and break conservation; rebalancing restores it without hurting loss.",
    depends_on=("ID-S5.1", "ID-S5.2", "ID-L5.1"),
)

CLAIMS = P.claims
SYMBOLS = P.table
