"""Claims of *Prism Transformer: Progressive Head Schedules* (arXiv 2606.27449).

Source: ``shared/papers/prism.md``. The counts are written over a per-layer head count h_l that does
not appear in them: PR-N1/PR-N2 are the statement that it cannot.
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
I_bias = P.sym("I_bias", "1 if the projections carry biases, else 0", nonnegative=True, integer=True)
c_sm = P.sym("c", "elementwise softmax cost per score")

d_h = d / h_l                                                   # per-head width at layer l
# Per-layer parameters: Q, K, V, O (d x d each) + biases, SwiGLU, two RMSNorms.  h_l enters only
# through the reshape: every tensor has the same shape at any head count.
N_attn = h_l * (3 * d * d_h) + h_l * d_h * d + 4 * d * I_bias
N_layer = N_attn + 3 * d * f + 2 * d
N_model = V * d + L * N_layer + d
# Matmul FLOPs of one layer for one sequence (multiply-add = 2 FLOPs, full score matrix).
F_layer = 6 * T * d**2 + h_l * 2 * T**2 * d_h + h_l * 2 * T**2 * d_h + 2 * T * d**2 + 6 * T * d * f
F_softmax = c_sm * h_l * T**2

P.claim(
    "PR-N1", section="§2, §4 (parameter formula)", kind="exact", provenance="stated",
    statement="The parameter count does not depend on the head schedule: N = V d + L(4d² + 4d "
              "I_bias + 3 d f + 2d) + d whatever (h_1, ..., h_L).",
    expressions={"N_model": sp.expand(N_model), "N_layer": sp.expand(N_layer),
                 "N_attn": sp.expand(N_attn)},
    regime=[cond(sp.Eq(sp.Mod(d, h_l), 0), "h_l must divide d")],
    notes="Tied embeddings, RMSNorm and SwiGLU are the digest's inference from the reported sizes.",
)
P.claim(
    "PR-N2", section="§4 FLOP table", kind="exact", provenance="stated",
    statement="Matmul FLOPs do not depend on the head schedule: only the O(h T²) elementwise "
              "softmax work scales with the head count.",
    expressions={"F_layer": sp.expand(F_layer), "F_softmax": F_softmax},
    regime=[cond(sp.Eq(sp.Mod(d, h_l), 0), "h_l must divide d")],
    notes="The softmax term is ignored by the paper [derived]; it is smaller in Prism's early "
          "wide-head layers.",
)
P.claim(
    "PR-S", section="§2.1-2.2", kind="exact", provenance="stated",
    statement="A valid schedule has h_l | d for every layer, h_1 <= ... <= h_L, and h_L = h_base "
              "(design rules: blocks of >= 2 layers, >= L/2 layers at h_base).",
    expressions={"d_head": d_h},
    regime=[cond(sp.Eq(sp.Mod(d, h_l), 0), "h_l must divide d"),
            cond(sp.Le(h_l, h_base), "h_l <= h_base")],
)
P.claim(
    "PR-E1", section="§6, Tables 1-2", kind="empirical", provenance="stated",
    statement="At equal parameters a progressive schedule reaches lower validation loss than the "
              "uniform one (by a few tenths of a percent at 124M-757M).",
    depends_on=("PR-N1", "PR-N2"),
)
P.claim(
    "PR-E2", section="§7, Figure 4", kind="empirical", provenance="stated",
    statement="Attention distance is more local in the early wide-head layers (ΔD_l < 0), flips "
              "positive in the middle layers and coincides late.",
)

CLAIMS = P.claims
SYMBOLS = P.table
