"""Constructions of arXiv 2510.06662 (headcount digest §4): HC-K1, its synthetic instance, HC-K2,
HC-L9, and the single-head softmax retrieval head (also IF-T2 / HC-P2).

Conventions: the residual stream is the paper's x̂ ∈ R^E; logits are ``(W_Q ĉ0)ᵀ(W_K x̂)`` with
``attn_scale = 1`` so that β lives in W_Q; the softmax runs over the T input tokens only (the CLS
token queries but is not a key), eq. (4)-(5).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
import torch

from ..catalogue import claim
from ..errors import ConfigError
from ..model import LayerSpec, ModelConfig, ResidualLayout, Transformer
from ..resources import array_bytes, model_bytes
from ..tasks import GeneralizedRetrieval, MaxPlusMin, Memorize, ScalarMax, SyntheticMaxSum
from ._base import (
    Construction,
    Knob,
    Requirement,
    formula_value,
    nonzero_weights,
    positive_log_knob,
    register,
    seq_len_knob,
    unit_knob,
)

# One position of the tasks' index sets S_i, built in Python: list(range(T)) (an 8-byte slot and a
# 28-byte int), the set that dedups it (>= 26 bytes an entry) and the sorted list (8 bytes).
_PY_INDEX_BYTES = 70


def _k1_config(T: int, D: int, d: int, gated: bool) -> ModelConfig:
    E = 2 * D
    return ModelConfig(
        d_in=d,
        width=E,
        layers=[LayerSpec(heads=D, head_dim=2)],
        d_out=1,
        seq_len=T if gated else None,
        positions="onehot" if gated else "none",
        attn_scale=1.0,
        residual=True,
    )


def k1_bytes(T: int, D: int, d: int, gated: bool) -> int:
    """HC-K1's build: the model (E = 2D), the numpy encoder E x (d [+ T]) and the task's D index
    sets of T positions."""
    return (
        model_bytes(_k1_config(T, D, d, gated))
        + array_bytes(2 * D, d + (T if gated else 0))
        + _PY_INDEX_BYTES * D * T
    )


def _hc_k1_estimate(T, beta, gate, sets, h):
    return k1_bytes(T, 2, 1, gated=sets == "split")


def _hc_k1_synthetic_estimate(T, beta, D, d, seed, h):
    return k1_bytes(T, D, d, gated=False)


def _memorizing_config(T: int, d: int, head_hidden=(), d_out=1) -> ModelConfig:
    E = T * d
    return ModelConfig(
        d_in=d,
        width=E,
        layers=[LayerSpec(heads=1, head_dim=E)],
        d_out=d_out,
        seq_len=T,
        positions="onehot",
        embed_hidden=(E,),
        head_hidden=head_hidden,
        attn_scale=1.0,
    )


def hc_k2_bytes(T: int, d: int) -> int:
    """HC-K2's build: the model of width E = T·d (its weight matrices are E x E) plus two E x E
    numpy temporaries (an identity and the scaled read-out)."""
    E = T * d
    return model_bytes(_memorizing_config(T, d, d_out=E)) + array_bytes(2, E, E)


def _hc_k2_estimate(T, d):
    return hc_k2_bytes(T, d)


def _grid_levels(eps: float) -> int:
    from fractions import Fraction

    f = Fraction(str(eps))
    return -(-f.denominator // f.numerator)  # ceil(1/eps), exactly as the catalogue


def hc_l9_bytes(T: int, eps: float) -> int:
    """HC-L9's build: the model with read-out widths T·n_g and 2·n_g (n_g = ⌈1/ε⌉; the T·n_g x
    2·n_g layer makes it grow like T/ε²) plus the numpy copies of its two big layers."""
    ng = _grid_levels(eps)
    return (
        model_bytes(_memorizing_config(T, 1, head_hidden=(T * ng, 2 * ng), d_out=1))
        + array_bytes(T * ng, T)
        + array_bytes(2 * ng, T * ng)
    )


def _hc_l9_estimate(T, eps):
    return hc_l9_bytes(T, eps)


def _softmax_retrieval_estimate(T, beta):
    return _PY_INDEX_BYTES * T  # the task's index set; the model has 11 parameters


def _paper_params(model: Transformer) -> int:
    """HC convention (§1.4): only the encoder P_φ and the read-out F̂ count, not W_Q, W_K, W_V,
    W_O (nor the CLS vector)."""
    return model.count_params(["embed", "head"])


def build_hc_k1_model(task: GeneralizedRetrieval, beta: float, gate: float = -1.0) -> Transformer:
    """HC-K1 (proof of Theorem 2(1), digest §4.1): h = D heads of width n = 2, E = 2D.

    Block i of the embedding (coordinates 2i, 2i+1) is ``x̂^(i)(t) = (f_i(x(t)), r_i(t))`` with the
    position gate ``r_i(t) = 0`` for t in S_i and ``gate`` (the paper: -1) otherwise. The features
    are exact (affine) here, as the digest suggests for testing, so the only error is softmax's.

    Head i: ``W_{Q,i} ĉ0 = (β, 0)``; ``W_{K,i}`` has rows ``(∓1, +1)`` on block i, so the score is
    ``ρ_i(t) = β(∓f_i(x(t)) + r_i(t))`` (minus for min-retrieval, plus for the max form);
    ``W_{V,i} = I_2`` on block i and ``W_O = I`` (block diagonal). The read-out of the CLS slot is
    ``ĉ0 + W_O(...)``, so block i's first coordinate is ``1 + z̃_i`` with ``z̃_i = Σ_t σ[ρ_i](t)
    f_i(x(t))`` (eqs. 14-16), and F̂ subtracts ĉ0 and applies the affine F_0.
    """
    if task.affine is None or task.outer_affine is None:
        raise ConfigError(
            "hc_k1 realises tasks with affine features f_i and an affine outer map "
            "exactly; this task has non-affine parts"
        )
    W, b = task.affine
    c, c0 = task.outer_affine
    D, d, T = task.D, task.d, task.T
    E = 2 * D
    gated = any(len(S) < T for S in task.sets)
    m = Transformer(_k1_config(T, D, d, gated)).zero_()
    sign = -1.0 if task.mode == "min" else 1.0
    res = ResidualLayout.interleaved(D, value=1, gate=1)  # block i: (f_i(x(t)), r_i(t))
    inp = ResidualLayout(x=d, pos=T if gated else 0)  # the encoder reads [x(t), onehot(t)]
    head = ResidualLayout(score=1, unused=1)  # a head's query/key coordinates
    val = ResidualLayout(value=1, gate=1)  # a head's value coordinates
    enc_W = np.zeros((res.width, inp.width))
    enc_b = np.zeros(res.width)
    for i in range(D):
        enc_W[res.index("value", i), inp["x"]] = W[i]  # f_i(x) = W_i·x + b_i
        enc_b[res.index("value", i)] = b[i]
        if gated:
            inside = set(task.sets[i])  # (a set: T membership tests, not T^2)
            for t in range(T):  # r_i(t) from the one-hot position
                enc_W[res.index("gate", i), inp.index("pos", t)] = 0.0 if t in inside else gate
    m.set_embedding(enc_W, enc_b)
    m.set_cls(res.vector(value=1.0))  # ĉ0 carries a 1 that W_{Q,i} reads
    for i in range(D):
        value_i, gate_i = res.index("value", i), res.index("gate", i)
        q = np.zeros((head.width, E))
        q[head.index("score"), value_i] = beta
        k = np.zeros((head.width, E))
        k[head.index("score"), value_i] = sign
        k[head.index("score"), gate_i] = 1.0
        v = np.zeros((val.width, E))
        o = np.zeros((E, val.width))
        v[val.index("value"), value_i] = 1.0
        v[val.index("gate"), gate_i] = 1.0
        o[value_i, val.index("value")] = 1.0
        o[gate_i, val.index("gate")] = 1.0
        m.set_head(0, i, q=q, k=k, v=v, o=o)
    # F̂: drop ĉ0's constant from each block's first coordinate, then the affine F_0
    head_W = np.zeros((1, E))
    head_W[0, res["value"]] = c
    m.set_readout(head_W, [c0 - float(np.sum(c))])
    return m


def _k1_bound(task, beta) -> tuple[float, str]:
    """Σ_i |∂F_0/∂z_i| · ((|S_i|-1)/(eβ) + T e^{-β}), from the catalogue's HC-K1 err_bound."""
    k1 = claim("HC-K1")
    c, _ = task.outer_affine
    total = 0.0
    for i, S in enumerate(task.sets):
        total += abs(c[i]) * formula_value(k1, "err_bound", S=len(S), T=task.T, beta=beta)
    return total, "sum_i |c_i| * (" + sp.sstr(k1.expr("err_bound")) + ")"


def _k1_gate_bound(task, beta, gate) -> tuple[float, str]:
    """Σ_i |∂F_0/∂z_i| · ((|S_i|-1)/(eβ) + (T-|S_i|) e^{β(1+c)}): the gate-corrected bound of
    HC-K1c [derived] at the construction's gate c (the paper's HC-K1 bound is the claimed one)."""
    from ..errors import ValueRangeError

    kc = claim("HC-K1c")
    c, _ = task.outer_affine
    try:
        total = sum(
            abs(c[i]) * formula_value(kc, "err_bound", S=len(S), T=task.T, beta=beta, c=gate)
            for i, S in enumerate(task.sets)
        )
    except ValueRangeError:  # a gate above -1 at large β: the bound is astronomically big
        total = float("inf")
    return total, "sum_i |c_i| * (" + sp.sstr(kc.expr("err_bound")) + ")"


#: the paper's gate value (HC-K1's 'gate' expression)
PAPER_GATE = float(claim("HC-K1").expr("gate"))


def _heads_requirement(holds, D: str = "D") -> Requirement:
    return Requirement(
        message=f"HC-K1 uses one head per feature: h must equal {D} (with fewer heads see "
        "HC-T2b's lower bound)",
        holds=holds,
    )


#: the largest attention logit the HC-K1 weights may give: |β·(∓f_i(x) + c)| <= β(1 + |c|) for
#: features in [0, 1] must stay far below float64's largest number (1.8e308), so that the logits,
#: the softmax's shifts by their maximum and the sums over T are finite (a gate of 1e308 at
#: β = 100 overflowed to inf, the output to NaN, and the report said "refuted")
MAX_LOGIT = 1e300


def _finite_logits_requirement() -> Requirement:
    return Requirement(
        message="hc_k1's attention logits beta*(±f_i(x) + gate) must be finite in float64: "
        f"beta*(1 + |gate|) must be at most {MAX_LOGIT:g}",
        holds=lambda beta, gate: beta * (1.0 + abs(gate)) <= MAX_LOGIT,
    )


#: HC-K1's inverse temperature: its bound holds for β >= 1
_K1_BETA = Knob(
    type=float, default=100.0, help="softmax inverse temperature β (>= 1)", low=1, log=True
)


def _check_beta_regime(beta):
    if beta < 1:
        raise ConfigError(f"beta must be >= 1 for HC-K1's bound (got beta={beta})")


@register(
    "hc_k1",
    "HC-K1",
    "D heads of width 2, one per feature, position-gated (digest §4.1); "
    "default task: max over the first half + min over the second half (D = 2)",
    estimate=_hc_k1_estimate,
    requires=(_heads_requirement(lambda h: h == 2, D="D = 2"), _finite_logits_requirement()),
    T=seq_len_knob(8, low=4),
    beta=_K1_BETA,
    gate=Knob(
        type=float,
        default=PAPER_GATE,
        help="position-gate value c = r_i(t) outside S_i (paper: -1, where its bound "
        "fails; HC-K1c gives the bound as a function of c)",
    ),
    sets=Knob(
        type=str,
        default="split",
        help="S_i: 'split' (halves) or 'all' (every position)",
        choices=("split", "all"),
    ),
    h=Knob(type=int, default=2, help="number of heads; HC-K1 uses exactly h = D = 2", low=1),
)
def hc_k1(T, beta, gate, sets, h):
    _check_beta_regime(beta)
    task: GeneralizedRetrieval
    if sets == "all":
        task = MaxPlusMin(T)
    else:
        half = T // 2
        task = GeneralizedRetrieval(
            T,
            1,
            affine=([[-1.0], [1.0]], [1.0, 0.0]),
            outer_affine=([-1.0, 1.0], 1.0),
            mode="min",
            sets=[list(range(half)), list(range(half, T))],
        )
        task.name = "max_first_half_plus_min_second_half"
    model = build_hc_k1_model(task, beta, gate)
    bound, expr = _k1_bound(task, beta)
    gate_bound, gate_expr = _k1_gate_bound(task, beta, gate)
    return _k1_construction(
        "hc_k1",
        model,
        task,
        (bound, expr),
        extra={
            "heads": task.D,
            "head_dim": 2,
            "width": 2 * task.D,
            "gate": gate,
            "gate_bound": gate_bound,
            "gate_bound_expr": gate_expr + f" at c = {gate:g} (HC-K1c)",
        },
    )


def _k1_construction(
    name: str, model: Transformer, task, bound: tuple[float, str], extra: dict, note: str = ""
) -> Construction:
    """An HC-K1 construction: its bound (value and text, :func:`_k1_bound`), parameters by the
    paper's convention (``note`` added to the convention's text)."""
    return Construction(
        name=name,
        claim="HC-K1",
        model=model,
        task=task,
        params=_paper_params(model),
        params_convention="encoder + F̂ (attention not counted, §1.4)" + note,
        claimed_bound=bound[0],
        bound_kind="upper",
        bound_expr=bound[1],
        extra=extra,
    )


@register(
    "hc_k1_synthetic",
    "HC-K1",
    "direct instance of HC-K1 for y = Σ_i max_t a_iᵀx(t) (D = 4, d = 4): no gate, F̂ is the sum",
    estimate=_hc_k1_synthetic_estimate,
    requires=(_heads_requirement(lambda h, D: h in (0, D)),),  # h = 0 means D
    T=seq_len_knob(16),
    beta=_K1_BETA,
    D=Knob(type=int, default=4, help="number of features (heads)", low=1),
    d=Knob(type=int, default=4, help="token dimension", low=1),
    seed=Knob(type=int, default=0, help="seed of the a_i (>= 0)", low=0),
    h=Knob(type=int, default=0, help="number of heads (0: D); HC-K1 uses exactly h = D", low=0),
)
def hc_k1_synthetic(T, beta, D, d, seed, h):
    _check_beta_regime(beta)
    task = SyntheticMaxSum(T, d=d, D=D, seed=seed)
    model = build_hc_k1_model(task, beta)
    return _k1_construction(
        "hc_k1_synthetic",
        model,
        task,
        _k1_bound(task, beta),
        extra={"heads": D, "width": 2 * D},
        note="; identical for every T",
    )


def _memorizing_attention(T: int, d: int, head_hidden=(), d_out=1) -> Transformer:
    """HC-K2 (digest §4.2): P_φ(x, t) = e_t ⊗ x(t) ∈ R^{Td}, ĉ0 = 0 and W_Q = 0, so every logit is
    0, the weights are uniform 1/T and, with W_V = W_O = I, the CLS state is exactly vec(X)/T.

    The encoder realises e_t ⊗ x with one ReLU layer: unit (t', j) = ReLU(x_j + onehot_{t'}(t) - 1),
    which is x_j when t = t' and 0 otherwise, for x in [0, 1]."""
    E = T * d
    m = Transformer(_memorizing_config(T, d, head_hidden, d_out)).zero_()
    res = ResidualLayout(tokens=(T, d))  # sub-block t holds x(t): e_t ⊗ x(t)
    inp = ResidualLayout(x=d, pos=T)  # the encoder reads [x(t), onehot(t)]
    W1 = np.zeros((res.width, inp.width))
    for t in range(T):  # unit (t, j) = ReLU(x_j + onehot_t(t) - 1)
        W1[res.block("tokens", t), inp["x"]] = np.eye(d)
        W1[res.block("tokens", t), inp.index("pos", t)] = 1.0
    m.set_embedding(W1, -np.ones(E))
    m.set_embedding(np.eye(E), np.zeros(E), linear=1)
    m.set_head(0, 0, v=np.eye(E), o=np.eye(E))  # W_Q = W_K = 0: uniform weights
    return m


@register(
    "hc_k2",
    "HC-K2",
    "single head of width T·d memorizes the sequence: the attention "
    "output is vec(X)/T and a linear read-out returns X (HC-P1)",
    estimate=_hc_k2_estimate,
    T=seq_len_knob(16),
    d=Knob(type=int, default=2, help="token dimension", low=1),
)
def hc_k2(T, d):
    m = _memorizing_attention(T, d, d_out=T * d)
    m.set_readout(weight=T * np.eye(T * d), bias=np.zeros(T * d))
    task = Memorize(T, d)
    return Construction(
        name="hc_k2",
        claim="HC-K2",
        model=m,
        task=task,
        params=_paper_params(m),
        params_convention="encoder + F̂ (attention not counted, §1.4)",
        claimed_bound=0.0,
        bound_kind="exact",
        bound_expr="attention_error = 0 (float64 round-off allowed: 1e-12)",
        extra={"width": T * d},
    )


@register(
    "hc_l9",
    "HC-L9",
    "HC-K2's memorizing head followed by HC-L9's ReLU max network "
    "(widths T⌈1/ε⌉ and 2⌈1/ε⌉): max_t x(t) to within 1/⌈1/ε⌉",
    estimate=_hc_l9_estimate,
    T=seq_len_knob(8),
    eps=unit_knob(0.1, "target precision ε (the grid has ⌈1/ε⌉ levels)", log=True),
)
def hc_l9(T, eps):
    l9 = claim("HC-L9")
    # n_g = ⌈1/ε⌉ from ε itself (not from the catalogue's widths: its check compares the widths
    # built here with the catalogue's width1 and width2)
    ng = _grid_levels(eps)
    m = _memorizing_attention(T, 1, head_hidden=(T * ng, 2 * ng), d_out=1)
    # HC-L9 (App. A.3): h1(t, i) = ReLU(x_t - i/n_g); the attention output is x/T, so read T·u_t.
    res = ResidualLayout(tokens=T)  # the CLS state: u_t = x_t / T
    h1 = ResidualLayout(unit=(T, ng)).grid("unit")  # h1[t, i]: ReLU(T·u_t - i/n_g)
    h2 = ResidualLayout.interleaved(ng, up=1, down=1)  # (ReLU(S_j), ReLU(S_j - 1/n_g)) per j
    W1 = np.zeros((h1.size, res.width))
    b1 = np.zeros(h1.size)
    for t in range(T):
        for i in range(ng):
            W1[h1[t, i], res.index("tokens", t)] = T
            b1[h1[t, i]] = -i / ng
    # S_j = Σ_t h1(t, j); h2 = (ReLU(S_j), ReLU(S_j - 1/n_g));
    # output Σ_j ReLU(S_j) - ReLU(S_j - 1/n_g)
    W2 = np.zeros((h2.width, h1.size))
    b2 = np.zeros(h2.width)
    for j in range(ng):
        for t in range(T):
            W2[h2.index("up", j), h1[t, j]] = 1.0
            W2[h2.index("down", j), h1[t, j]] = 1.0
        b2[h2.index("down", j)] = -1.0 / ng
    W3 = np.zeros((1, h2.width))
    W3[0, h2["up"]] = 1.0
    W3[0, h2["down"]] = -1.0
    m.set_readout(W1, b1)
    m.set_readout(W2, b2, linear=1)
    m.set_readout(W3, [0.0], linear=2)
    bound = formula_value(l9, "err_bound", epsilon=sp.Rational(str(eps)))
    nonzero = nonzero_weights(m.head)
    linears = [x for x in m.head.modules() if isinstance(x, torch.nn.Linear)]
    return Construction(
        name="hc_l9",
        claim="HC-L9",
        model=m,
        task=ScalarMax(T),
        params=nonzero,
        params_convention="nonzero weights of the ReLU max network F̂ (the "
        "network is sparse; a dense net of these widths has O(T/ε²) weights)",
        claimed_bound=bound,
        bound_kind="upper",
        bound_expr=sp.sstr(l9.expr("err_bound")),
        extra={
            "n_g": ng,
            # the hidden widths of the read-out as built (every linear map but the last)
            "widths": [x.out_features for x in linears[:-1]],
            "dense_params": m.count_params(["head"]),
            "width_bound": int(l9.evaluate("width_bound", T=T, epsilon=sp.Rational(str(eps)))),
        },
    )


def build_softmax_retrieval_model(T: int, beta: float) -> Transformer:
    """One head, scalar tokens: x̂(t) = (x(t), 0), ĉ0 = (0, 1); W_Q ĉ0 = β, W_K x̂(t) = x(t), value
    x(t), so the CLS state is Σ_t softmax(βx)_t x(t), the soft version of max_t x(t) (IF-T2)."""
    cfg = ModelConfig(
        d_in=1, width=2, layers=[LayerSpec(heads=1, head_dim=1)], d_out=1, attn_scale=1.0
    )
    m = Transformer(cfg).zero_()
    res = ResidualLayout(x=1, one=1)
    m.set_embedding(res.vector(x=1.0)[:, None])  # x̂(t) = (x(t), 0)
    m.set_cls(res.vector(one=1.0))  # ĉ0 = (0, 1)
    m.set_readout(res.vector(x=1.0)[None, :])  # read the retrieved x
    # one query/key/value coordinate: W_Q ĉ0 = β, W_K x̂(t) = x(t), value x(t) back onto x
    m.set_head(
        0,
        0,
        q=res.vector(one=beta)[None, :],
        k=res.vector(x=1.0)[None, :],
        v=res.vector(x=1.0)[None, :],
        o=res.vector(x=1.0)[:, None],
    )
    return m


@register(
    "softmax_retrieval",
    "IF-T2",
    "one softmax head retrieving max_t x(t) (scalar tokens "
    "in [0, 1]); error <= (1 + ln(βT))/β, ~1/β at near-ties (HC-P2)",
    estimate=_softmax_retrieval_estimate,
    requires=(
        Requirement(message="IF-T2's bound needs beta*T >= 1", holds=lambda beta, T: beta * T >= 1),
    ),
    T=seq_len_knob(8),
    beta=positive_log_knob(100.0),
)
def softmax_retrieval(T, beta):
    m = build_softmax_retrieval_model(T, beta)
    c = claim("IF-T2")
    bound = formula_value(c, "err_attn", beta=beta, T=T)
    k1 = claim("HC-K1")
    extra = {
        "hc_k1_bound": formula_value(k1, "err_bound", S=T, T=T, beta=beta) if beta >= 1 else None
    }
    return Construction(
        name="softmax_retrieval",
        claim="IF-T2",
        model=m,
        task=ScalarMax(T),
        params=0,
        params_convention="no FFN parameters (attention is free, §1.4)",
        claimed_bound=bound,
        bound_kind="upper",
        bound_expr=sp.sstr(c.expr("err_attn")),
        extra=extra,
    )
