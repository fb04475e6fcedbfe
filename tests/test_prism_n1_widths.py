"""PR-N1's per-layer terms are read at every counted model's own sizes: N_attn at d = 64 and 96
with biases (I_bias = 1) and at d = 64, 768, 1024, 1536 without; N_mlp at f = 170, 256, 2048,
2731, 4096. Before, N_attn and N_mlp were compared layer by layer at d = 64 only, so a bias term
equal to 4d at d = 64 alone, with N_layer and N_model changed to match, kept the verdict."""

import sympy as sp
from _helpers import false_claim, run_quick

from approxtheory.catalogue import prism as cat

d, f, I_bias, V, L = cat.d, cat.f, cat.I_bias, cat.V, cat.L


def composed(n_attn, n_mlp=None):
    """PR-N1 with N_attn (and N_mlp) replaced, N_layer and N_model recomposed from them, so the
    catalogue's own composition identities still hold."""
    n_mlp = 3 * d * f if n_mlp is None else n_mlp
    n_layer = n_attn + n_mlp + 2 * d
    return false_claim(
        "PR-N1", N_attn=n_attn, N_mlp=n_mlp, N_layer=n_layer, N_model=V * d + L * n_layer + d
    )


def test_a_bias_count_true_only_at_d_64_is_refuted():
    # the four projections' biases counted as 4·64 (the toy width) rather than 4d
    v = run_quick("PR-N1", composed(4 * d**2 + 256 * I_bias))
    assert v.verdict == "refuted", v.evidence
    assert any("d=96 biased" in w and "attn" in w for w in v.witness), v.witness


def test_the_same_counts_written_otherwise_stay_verified():
    v = run_quick("PR-N1", composed(4 * d * (d + I_bias), sp.Integer(3) * f * d))
    assert v.verdict == "verified-symbolic", v.evidence
