"""Two-layer, one-head-per-layer constructions of the InfoFlow digest (§4.1, §4.2), realising the
O(ε^{-1}) upper side of IF-T1 (claims IF-K1, IF-K2)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..model import LayerSpec, ModelConfig, ResidualLayout, Transformer
from ..resources import array_bytes, model_bytes
from ..tasks import KthLargest, PairwiseMax
from ._base import (
    Construction,
    Knob,
    claimed_upper,
    nonzero_weights,
    positive_log_knob,
    register,
    seq_len_knob,
)

_F = {
    "identity": (lambda u: u, 1.0),
    # the digest's test function f(u) = sin 6u + 0.5|u - 0.3|, Lipschitz constant 6.5
    "sin": (lambda u: (6 * u).sin() + 0.5 * (u - 0.3).abs(), 6.5),
}


def _interpolant(f_np, N: int):
    """Piecewise-linear interpolant of f on [0, 1] with N knots u_j = j/(N-1) as N ReLU units:
    f̂(u) = f(0) + Σ_j c_j ReLU(u - u_j), c_j the slope change at u_j."""
    u = np.linspace(0.0, 1.0, N)
    fu = f_np(u)
    slopes = np.diff(fu) / np.diff(u)
    c = np.concatenate([[slopes[0]], np.diff(slopes), [0.0]])
    return u, c, fu[0]


def _embed_with_positions(
    m: Transformer, res: ResidualLayout, inp: ResidualLayout, token: str, T: int
) -> None:
    """The encoder of a construction with one-hot positions: block ``token`` of the input
    ``inp`` copied to the residual stream's block of that name, onehot(t) to its ``pos``
    coordinates, the constant ``one`` set."""
    enc = np.zeros((res.width, inp.width))
    enc[res[token], inp[token]] = np.eye(inp.size(token))
    for t in range(T):
        enc[res.index("pos", t), inp.index("pos", t)] = 1.0
    m.set_embedding(enc, res.vector(one=1.0))


def _second_largest_config(T: int, N: int) -> ModelConfig:
    E = T + 5
    return ModelConfig(
        d_in=1,
        width=E,
        seq_len=T,
        positions="onehot",
        attn_scale=1.0,
        layers=[
            LayerSpec(heads=1, head_dim=T + 1, value_dim=1, ffn_hidden=(2,)),
            LayerSpec(heads=1, head_dim=1, value_dim=1),
        ],
        head_hidden=(N,),
        d_out=1,
    )


def second_largest_bytes(T: int, N: int) -> int:
    """IF-K1's build: the model (width T+5, query/key blocks (T+1) x (T+5)) and its numpy
    blocks: the encoder, W_Q, W_K and the read-out's first layer."""
    E = T + 5
    return (
        model_bytes(_second_largest_config(T, N))
        + array_bytes(E, 1 + T)
        + array_bytes(2, T + 1, E)
        + array_bytes(N, E)
    )


def _if_second_largest_estimate(T, beta, N, f):
    return second_largest_bytes(T, N)


def _pairwise_config(d: int, D: int) -> ModelConfig:
    E = d + D * d + D + 2
    return ModelConfig(
        d_in=d,
        width=E,
        attn_scale=1.0,
        ffn_kind="bilinear",
        ffn_bias=False,
        layers=[
            LayerSpec(heads=D, head_dim=d, value_dim=d, ffn_hidden=(D * d,)),
            LayerSpec(heads=D, head_dim=1, value_dim=1),
        ],
        d_out=1,
    )


def pairwise_bytes(d: int, D: int) -> int:
    """IF-K2's build: the model (width E = d + Dd + D + 2) and the numpy FFN blocks (3 x Dd x E)
    and the task's A_i (D x d x d)."""
    E = d + D * d + D + 2
    return model_bytes(_pairwise_config(d, D)) + array_bytes(3, D * d, E) + array_bytes(D, d, d)


def _if_pairwise_max_estimate(T, d, D, beta, seed, tied=0):
    return pairwise_bytes(d, D)


@register(
    "if_second_largest",
    "IF-K1",
    "f(2nd largest) with two layers of one head each: layer 1 "
    "retrieves max_{s≠t} g_s (positional self-exclusion), FFN 1 forms min(g_t, m_{-t}), "
    "layer 2 takes the max at CLS, F̂ interpolates f with N knots (digest §4.1)",
    estimate=_if_second_largest_estimate,
    T=seq_len_knob(8, low=2),
    beta=positive_log_knob(1e4),
    N=Knob(type=int, default=128, help="knots of the read-out interpolant (FFN width)", low=2),
    f=Knob(
        type=str,
        default="sin",
        help="read-out function: identity or sin (sin 6u + 0.5|u-0.3|)",
        choices=tuple(_F),
    ),
)
def if_second_largest(T, beta, N, f):
    # Residual stream per token: [g, p (one-hot, T), 1, slot_m, slot_v, slot_out]; CLS: const 1.
    res = ResidualLayout(g=1, pos=T, one=1, slot_m=1, slot_v=1, slot_out=1)
    inp = ResidualLayout(g=1, pos=T)  # the encoder reads [g, onehot(t)]
    E = res.width
    M = 2 * beta + 50.0  # self-exclusion penalty: e^{-(M - β)} is negligible
    m = Transformer(_second_largest_config(T, N)).zero_()
    _embed_with_positions(m, res, inp, "g", T)
    m.set_cls(res.vector(one=1.0))
    # Layer 1: score(t, s) = β g_s - M <p_t, p_s>; value g_s -> slot_m.
    head = ResidualLayout(score=1, pos=T)  # layer 1's query/key coordinates
    q = np.zeros((head.width, E))
    q[head.index("score"), res.index("one")] = beta
    k = np.zeros((head.width, E))
    k[head.index("score"), res.index("g")] = 1.0
    for t in range(T):
        q[head.index("pos", t), res.index("pos", t)] = -M
        k[head.index("pos", t), res.index("pos", t)] = 1.0
    m.set_head(0, 0, q=q, k=k, v=res.vector(g=1.0)[None, :], o=res.vector(slot_m=1.0)[:, None])
    # FFN 1: slot_v += ReLU(g) - ReLU(g - m) = min(g, m_{-t}) for g in [0, 1]  (exact)
    hid = ResidualLayout(g=1, g_minus_m=1)
    W1 = np.zeros((hid.width, E))
    W1[hid.index("g"), res.index("g")] = 1.0
    W1[hid.index("g_minus_m"), res.index("g")] = 1.0
    W1[hid.index("g_minus_m"), res.index("slot_m")] = -1.0
    W2 = np.zeros((E, hid.width))
    W2[res.index("slot_v"), hid.index("g")] = 1.0
    W2[res.index("slot_v"), hid.index("g_minus_m")] = -1.0
    m.set_ffn(0, W1, np.zeros(hid.width))
    m.set_ffn(0, W2, np.zeros(E), linear=1)
    # Layer 2 (CLS query): score β v_t, value v_t -> slot_out; max_t min(g_t, max_{s≠t} g_s)
    # is exactly the second largest g.
    m.set_head(
        1,
        0,
        q=res.vector(one=beta)[None, :],
        k=res.vector(slot_v=1.0)[None, :],
        v=res.vector(slot_v=1.0)[None, :],
        o=res.vector(slot_out=1.0)[:, None],
    )
    # F̂: interpolant of f on slot_out
    f_t, Lf = _F[f]
    import torch

    u, c, f0 = _interpolant(lambda a: f_t(torch.from_numpy(a)).numpy(), N)
    H1 = np.zeros((N, E))
    H1[:, res.index("slot_out")] = 1.0
    m.set_readout(H1, -u)
    m.set_readout(c[None, :], [f0], linear=1)
    return claimed_upper(
        "if_second_largest",
        "IF-K1",
        model=m,
        task=KthLargest(T, 2, f=f_t, f_name=f),
        params=m.count_params(["head", "ffn"]),
        params_convention="FFN + read-out parameters (attention free); the "
        "positional encoder adds O(T)",
        at={"L_f": sp.Rational(str(Lf)), "beta": beta, "T": T, "N": N},
        extra={"L_f": Lf, "M": M, "width": E},
    )


@register(
    "if_pairwise_max",
    "IF-K2",
    "Σ_i max_{s,t} x(s)ᵀA_i x(t) with D heads in each of two "
    "layers: layer 1 retrieves the argmax key per token, a bilinear FFN forms the score, "
    "layer 2 takes the max at CLS (digest §4.2)",
    estimate=_if_pairwise_max_estimate,
    T=seq_len_knob(8),
    d=Knob(type=int, default=4, help="token dimension", low=1),
    D=Knob(type=int, default=1, help="number of terms (heads per layer)", low=1),
    beta=positive_log_knob(1e3),
    seed=Knob(type=int, default=0, help="seed of the A_i (>= 0)", low=0),
    tied=Knob(
        type=int,
        default=0,
        help="1: every A_i equal to A_1 (the D terms err together, so the sup error is D times "
        "one term's: the task family's case that tests a bound's D-dependence); 0: independent",
        low=0,
        high=1,
    ),
)
def if_pairwise_max(T, d, D, beta, seed, tied=0):
    task = PairwiseMax(T, d=d, D=D, seed=seed)
    if tied:
        task = PairwiseMax(T, d=d, A=np.repeat(task.A[:1], D, axis=0))
    # Residual stream: [x (d), r_1..r_D (d each), u_1..u_D, const, out]
    res = ResidualLayout(x=d, r=(D, d), u=D, one=1, out=1)
    E = res.width
    m = Transformer(_pairwise_config(d, D)).zero_()
    enc = np.zeros((E, d))
    enc[res["x"], :] = np.eye(d)
    m.set_embedding(enc, res.vector(one=1.0))
    m.set_cls(res.vector(one=1.0))
    prod = ResidualLayout(prod=(D, d)).grid("prod")  # FFN unit prod[i, j]: r_i[j] (A_i x)[j]
    r = res.grid("r")  # r[i, j]: coordinate j of r_i
    W1 = np.zeros((prod.size, E))
    W3 = np.zeros((prod.size, E))
    W2 = np.zeros((E, prod.size))
    for i, A in enumerate(task.A):
        # Layer 1, head i: q_t = β A_i x(t), k_s = x(s): score β x(s)ᵀ A_i x(t); value x(s) -> r_i
        q = np.zeros((d, E))
        q[:, res["x"]] = beta * A
        k = np.zeros((d, E))
        k[:, res["x"]] = np.eye(d)
        v = np.zeros((d, E))
        v[:, res["x"]] = np.eye(d)
        o = np.zeros((E, d))
        o[res.block("r", i), :] = np.eye(d)
        m.set_head(0, i, q=q, k=k, v=v, o=o)
        # FFN 1 (bilinear): u_i = Σ_j r_i[j] (A_i x)[j] = r_iᵀ A_i x(t)  (exact)
        for j in range(d):
            W1[prod[i, j], r[i, j]] = 1.0
            W3[prod[i, j], res["x"]] = A[j]
            W2[res.index("u", i), prod[i, j]] = 1.0
        # Layer 2, head i (CLS query): score β u_i(t), value u_i(t) -> out (heads add up)
        k2 = np.zeros((1, E))
        k2[0, res.index("u", i)] = 1.0
        m.set_head(
            1, i, q=res.vector(one=beta)[None, :], k=k2, v=k2.copy(), o=res.vector(out=1.0)[:, None]
        )
    m.set_gated_ffn(0, w1=W1, w3=W3, w2=W2)
    m.set_readout(res.vector(out=1.0)[None, :])
    return claimed_upper(
        "if_pairwise_max",
        "IF-K2",
        model=m,
        task=task,
        params=m.count_params(["ffn", "head"]),
        params_convention="FFN + read-out parameters (attention free)",
        at={"D": D, "beta": beta, "T": T},
        extra={"width": E, "readout_nonzero": nonzero_weights(m.head)},
    )


# ------------------------------------------------------------------- induction head (IF-K3)
#: the construction's score offsets (claim IF-K3's bound is derived for them): a position ramp
#: of total height 1/4 (the latest of several matches wins by 1/(4T)) and the CLS "no match"
#: key at 1/2 (between every non-match, at most 1/4, and every match, at least 1); M penalises
#: the two positions that cannot be the token after a match
IND_RAMP, IND_NULL, IND_PENALTY = 0.25, 0.5, 4.0


def _induction_config(T: int, d: int) -> ModelConfig:
    E = 4 * d + T + 2
    return ModelConfig(
        d_in=d,
        width=E,
        seq_len=T,
        positions="onehot",
        attn_scale=1.0,
        cls_is_key=True,
        layers=[
            LayerSpec(heads=2, head_dim=T + 1, value_dim=d),
            LayerSpec(heads=1, head_dim=d + 2, value_dim=d),
        ],
        d_out=d,
    )


def induction_bytes(T: int, d: int) -> int:
    """IF-K3's build: the model (width E = 4d + T + 2) and its numpy blocks: the encoder
    (E x (d + T)), layer 1's three (T + 1) x E query/key blocks and two E x d / d x E value and
    output blocks, layer 2's two (d + 2) x E blocks and the read-out."""
    E = 4 * d + T + 2
    return (
        model_bytes(_induction_config(T, d))
        + array_bytes(E, d + T)
        + array_bytes(3, T + 1, E)
        + array_bytes(4, d, E)
        + array_bytes(2, d + 2, E)
        + array_bytes(d, E)
    )


def _if_induction_estimate(T, d, beta):
    return induction_bytes(T, d)


@register(
    "if_induction",
    "IF-K3",
    "induction head with two layers and positional encoding: layer 1 copies the previous "
    "token into every token and the last token into CLS (SPA), layer 2 matches them at CLS "
    "and returns the token after the latest earlier match, 0 if none (MPR; digest §5.3 W8)",
    estimate=_if_induction_estimate,
    T=seq_len_knob(8, low=3),
    d=Knob(type=int, default=4, help="vocabulary size (one-hot token dimension)", low=2),
    beta=positive_log_knob(
        200.0, help="softmax inverse temperature β (the error falls like T e^{-β/(4T)})"
    ),
)
def if_induction(T: int, d: int = 4, beta: float = 1e3) -> Construction:
    """IF-K3's induction head (digest §5.3 W8: SPA then MPR), two layers with positional
    encoding: layer 1 copies the previous token into every token (and the last token into CLS),
    layer 2 matches the last token against the copies at CLS and returns the token after the
    latest match (CLS itself, value 0, when there is none). Registered for `approxtheory
    construct` as ``if_induction`` (defaults T = 8, d = 4, β = 200: claimed bound 0.0154);
    proofs_check.infoflow builds it directly on its (T, β) grid."""
    from ..errors import ConfigError

    if T < 3 or d < 2 or not beta > 0:
        raise ConfigError(f"if_induction needs T >= 3, d >= 2, beta > 0 (got {T}, {d}, {beta})")

    from ..tasks import Induction

    # Residual stream per token: [x (d), p (one-hot, T), prev (d), last (d), out (d), cls, one]
    res = ResidualLayout(x=d, pos=T, prev=d, last=d, out=d, cls=1, one=1)
    inp = ResidualLayout(x=d, pos=T)  # the encoder reads [x, onehot(t)]
    E = res.width
    m = Transformer(_induction_config(T, d)).zero_()
    _embed_with_positions(m, res, inp, "x", T)
    m.set_cls(res.vector(cls=1.0, one=1.0))
    xv = np.zeros((d, E))
    xv[:, res["x"]] = np.eye(d)
    _set_induction_copies(m, res, T, d, beta, xv)
    _set_induction_match(m, res, T, d, beta, xv)
    ro = np.zeros((d, E))
    ro[:, res["out"]] = np.eye(d)
    m.set_readout(ro)
    return claimed_upper(
        "if_induction",
        "IF-K3",
        model=m,
        task=Induction(T, d),
        params=m.count_params(["ffn", "head"]),
        params_convention="FFN + read-out parameters (attention and the positional encoder "
        "free, as in the digest's counting)",
        at={"beta": beta, "T": T},
        extra={"width": E, "readout_nonzero": nonzero_weights(m.head)},
    )


def _set_induction_copies(m, res: ResidualLayout, T: int, d: int, beta: float, xv) -> None:
    """IF-K3's layer 1 (SPA): head A copies the previous token into every token's ``prev``,
    head B the last token into CLS's ``last``; ``xv`` reads a token's x as the value."""
    E = res.width
    # layer-1 query/key coordinates: T positions and a CLS coordinate
    hk = ResidualLayout(pos=T, cls=1)
    k1 = np.zeros((hk.width, E))
    for t in range(T):
        k1[hk.index("pos", t), res.index("pos", t)] = 1.0
    k1[hk.index("cls"), res.index("cls")] = 1.0
    # head A (previous token): token t queries position t-1; CLS queries itself (value 0)
    qa = np.zeros((hk.width, E))
    for t in range(1, T):
        qa[hk.index("pos", t - 1), res.index("pos", t)] = beta
    qa[hk.index("cls"), res.index("cls")] = beta
    oa = np.zeros((E, d))
    oa[res["prev"], :] = np.eye(d)
    m.set_head(0, 0, q=qa, k=k1, v=xv, o=oa)
    # head B (last token): CLS queries position T-1; tokens query nothing (their `last` unused)
    qb = np.zeros((hk.width, E))
    qb[hk.index("pos", T - 1), res.index("cls")] = beta
    ob = np.zeros((E, d))
    ob[res["last"], :] = np.eye(d)
    m.set_head(0, 1, q=qb, k=k1, v=xv, o=ob)


def _set_induction_match(m, res: ResidualLayout, T: int, d: int, beta: float, xv) -> None:
    """IF-K3's layer 2 (MPR, CLS query): score β(<last, prev(s)> + ramp·s/T - M[s in {0, T-1}])
    for token s (s 0-based), β·null for CLS; value x(s) (CLS: 0) -> out."""
    E = res.width
    h2 = ResidualLayout(match=d, ramp=1, offset=1)
    q2 = np.zeros((h2.width, E))
    q2[h2["match"], res["last"]] = beta * np.eye(d)
    q2[h2.index("ramp"), res.index("one")] = beta * IND_RAMP
    q2[h2.index("offset"), res.index("one")] = beta
    k2 = np.zeros((h2.width, E))
    k2[h2["match"], res["prev"]] = np.eye(d)
    for t in range(T):
        k2[h2.index("ramp"), res.index("pos", t)] = t / T
    for t in (0, T - 1):
        k2[h2.index("offset"), res.index("pos", t)] = -IND_PENALTY
    k2[h2.index("offset"), res.index("cls")] = IND_NULL
    o2 = np.zeros((E, d))
    o2[res["out"], :] = np.eye(d)
    m.set_head(1, 0, q=q2, k=k2, v=xv, o=o2)
