"""Constructions of the tradeoffs digest (§5 C1, C3): the positional lag-extraction head with
bounded logits (checked against the surrogate floor TO-X2 and the weight cap TO-X1) and its
truncated-SVD compression (TO-C1)."""

from __future__ import annotations

import numpy as np
import sympy as sp
import torch

from ..catalogue import claim
from ..model import LayerSpec, ModelConfig, ResidualLayout, Transformer
from ..resources import array_bytes, model_bytes, sup_error_bytes
from ..tasks import LagExtraction, Task
from ._base import (
    Construction,
    Knob,
    Requirement,
    formula_value,
    positive_log_knob,
    register,
    seq_len_knob,
    unit_knob,
)


def _features(T: int, F: int) -> tuple[np.ndarray, np.ndarray]:
    """p_t = [cos(ω_i t), sin(ω_i t)]_{i=1..F} / sqrt(F), ω_i = 100^{-i/F}; ||p_t|| = 1."""
    t = np.arange(T)[:, None]
    w = 100.0 ** (-np.arange(1, F + 1) / F)[None, :]
    P = np.empty((T, 2 * F))
    P[:, 0::2] = np.cos(w * t)
    P[:, 1::2] = np.sin(w * t)
    return P / np.sqrt(F), w[0]


def _lag_config(T: int, F: int) -> ModelConfig:
    return ModelConfig(
        d_in=1,
        width=1 + 2 * F,
        seq_len=T,
        positions="onehot",
        readout="tokens",
        causal=True,
        attn_scale=1.0,
        layers=[LayerSpec(heads=1, head_dim=2 * F, value_dim=1)],
        d_out=1,
    )


def lag_model_bytes(T: int, F: int) -> int:
    """One lag head: the model (width E = 1 + 2F, encoder E x (1 + T)), its numpy encoder, the
    features (T x 2F) and A (2F x 2F)."""
    E = 1 + 2 * F
    return (
        model_bytes(_lag_config(T, F))
        + array_bytes(E, 1 + T)
        + array_bytes(T, 2 * F)
        + array_bytes(2 * F, 2 * F)
    )


def lag_head_bytes(T: int, F: int) -> int:
    """lag_head's build: one lag head plus the attention rows of one sequence: the one-hot input
    (T x (1 + T)), the logits and probabilities (T x T each) and the causal mask."""
    return lag_model_bytes(T, F) + array_bytes(T, 1 + T) + array_bytes(2, T, T) + T * T


def svd_truncation_bytes(T: int, F: int) -> int:
    """svd_truncation's build: two lag heads, M = W_Qᵀ W_K and its SVD factors (E x E each) and
    the embedded features (T x E)."""
    E = 1 + 2 * F
    return 2 * lag_model_bytes(T, F) + array_bytes(4, E, E) + array_bytes(T, E)


def _lag_head_estimate(T, k, F, B):
    return lag_head_bytes(T, F)


def _svd_truncation_estimate(T, k, F, B, r, decay):
    return svd_truncation_bytes(T, F)


def build_lag_model(T: int, k: int, F: int, B: float, c: float = 1.0, decay: float = 1.0):
    """Residual stream [x, p_t]; logits z_ts = p_tᵀ A p_s with A = block-diag(B_i R(ω_i k)), so
    z_ts = (1/F) Σ_i B_i cos(ω_i (t - s - k)), peaked at s = t - k (digest §5 C1). The block weights
    B_i ∝ decay^i sum to F·B, so |z_ts| <= B (bounded logits); decay = 1 is the digest's uniform
    choice, decay < 1 gives the QK circuit a decaying spectrum. Causal, per-token read-out
    c · Σ_s α_ts x_s. Returns the model and A."""
    P, w = _features(T, F)
    Bi = decay ** np.arange(F)
    Bi = B * F * Bi / Bi.sum()
    E = 1 + 2 * F
    A = np.zeros((2 * F, 2 * F))
    for i in range(F):
        th = w[i] * k
        A[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = Bi[i] * np.array(
            [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]
        )
    m = Transformer(_lag_config(T, F)).zero_()
    res = _lag_layout(F)
    inp = ResidualLayout(x=1, pos=T)  # the encoder reads [x(t), onehot(t)]
    enc = np.zeros((E, inp.width))
    enc[res.index("x"), inp.index("x")] = 1.0
    enc[res["pos"], inp["pos"]] = P.T  # onehot(t) -> p_t
    m.set_embedding(enc)
    q = np.zeros((2 * F, E))
    q[:, res["pos"]] = A.T  # q_t = Aᵀ p_t
    kk = np.zeros((2 * F, E))
    kk[:, res["pos"]] = np.eye(2 * F)
    m.set_head(0, 0, q=q, k=kk, v=res.vector(x=1.0)[None, :], o=res.vector(x=1.0)[:, None])
    _set_lag_readout(m, F, c)
    return m, A


def _lag_layout(F: int) -> ResidualLayout:
    """The lag head's residual stream: the token x and its positional features p_t."""
    return ResidualLayout(x=1, pos=2 * F)


def _set_lag_readout(m: Transformer, F: int, c: float) -> None:
    """Per-token read-out c · (attention output on x)."""
    m.set_readout(_lag_layout(F).vector(x=c)[None, :])


def _attention_rows(m: Transformer, T: int) -> np.ndarray:
    X = torch.zeros(1, T, 1, dtype=torch.float64)  # positional logits: content-independent
    with torch.no_grad():
        _, att = m(X, return_attention=True)
    return att[0][0, 0].numpy()  # (T, T)


@register(
    "lag_head",
    "TO-X2",
    "positional lag-k extraction head with logits bounded by B "
    "(digest §5 C1); its error for i.i.d. unit-variance tokens, with the best read-out, "
    "must stay above the floor q/(1+q), q = (L-1)e^{-4B} (TO-X2); weights obey TO-X1",
    estimate=_lag_head_estimate,
    requires=(
        Requirement(
            message="k must be < T // 2 (half of T, rounded down) so that every scored row "
            "has a target",
            holds=lambda k, T: k < T // 2,
        ),
    ),
    T=seq_len_knob(64, low=4),
    k=Knob(type=int, default=2, help="lag", low=0),
    F=Knob(type=int, default=8, help="frequency pairs (head dim 2F)", low=1),
    B=positive_log_knob(2.0, help="logit bound B"),
)
def lag_head(T, k, F, B):
    m, A = build_lag_model(T, k, F, B)
    att = _attention_rows(m, T)
    rows = np.arange(T // 2, T)
    a_t = att[rows, rows - k]
    sq = (att[rows] ** 2).sum(-1)
    c_best = float(a_t.mean() / sq.mean())  # best common read-out for these rows
    _set_lag_readout(m, F, c_best)
    x2, x1 = claim("TO-X2"), claim("TO-X1")
    floors = np.array(
        [formula_value(x2, "floor", L=int(t) + 1, B=sp.Rational(str(B))) for t in rows]
    )
    caps = np.array(
        [formula_value(x1, "max_weight", L=int(t) + 1, B=sp.Rational(str(B))) for t in rows]
    )
    task = LagExtraction(T, k)

    def measure(c, budget=4096, seed=0, **kw):
        from ..measure import sup_error

        # exact expected error per row for i.i.d. unit-variance tokens, read-out c:
        # (1 - c α_{t,t-k})² + c² Σ_{s≠t-k} α_ts²
        per_row = (1 - c_best * a_t) ** 2 + c_best**2 * (sq - a_t**2)
        i = int(np.argmin(per_row - floors))
        r = sup_error(c.model, c.task, budget=min(budget, 1024), seed=seed, **kw)
        cap_ok = bool((att[rows].max(-1) <= caps * (1 + 1e-12)).all())
        return {
            "measured": float(per_row.mean()),
            "measured_what": "mean over rows t >= T/2 "
            "of the exact relative MSE for i.i.d. unit-variance tokens",
            "sup_error": r.value,
            "witness": r.witness.tolist(),
            "closest_row": {
                "t": int(rows[i]),
                "error": float(per_row[i]),
                "floor": float(floors[i]),
            },
            "n_evals": r.n_evals,
            "TO-X1_weight_cap_holds": cap_ok,
            "max_weight_over_cap": float((att[rows].max(-1) / caps).max()),
        }

    # memory of measure(budget=...): the error search runs with at most 1024 sequences
    # (a function attribute, read with getattr by `approxtheory construct`)
    measure.estimate_bytes = (  # type: ignore[attr-defined]
        lambda budget: sup_error_bytes(m, task, min(budget, 1024))
    )

    return Construction(
        name="lag_head",
        claim="TO-X2",
        model=m,
        task=task,
        params=m.count_params(["layers"]),
        params_convention="attention weights of the head (4 blocks)",
        claimed_bound=float(floors.mean()),
        bound_kind="lower",
        bound_expr="mean over rows of " + sp.sstr(x2.expr("floor")),
        extra={"readout_c": c_best, "head_dim": 2 * F},
        measure_fn=measure,
    )


class ModelTarget(Task):
    """The output of a reference model as a target: measures |model - reference| adversarially."""

    name = "reference_model"
    per_token = True

    def __init__(self, reference: Transformer, base: Task):
        super().__init__(base.T, base.d)
        self.reference, self.base = reference, base
        self.lo, self.hi, self.domain = base.lo, base.hi, base.domain

    def _target(self, X):
        with torch.no_grad():
            return self.reference(X)[..., 0]


@register(
    "svd_truncation",
    "TO-C1",
    "truncated-SVD compression of the lag head's QK circuit to "
    "rank r: the logit change is <= σ_{r+1} R² and the output change <= |c| max|x| "
    "(e^{2σ_{r+1}R²} - 1) (TO-C1)",
    estimate=_svd_truncation_estimate,
    requires=(
        Requirement(message="r must be <= 2F (the head's rank)", holds=lambda r, F: r <= 2 * F),
        Requirement(message="k must be < T", holds=lambda k, T: k < T),
    ),
    T=seq_len_knob(32, low=4),
    k=Knob(type=int, default=2, help="lag", low=0),
    F=Knob(type=int, default=8, help="frequency pairs of the original head (rank 2F)", low=1),
    B=positive_log_knob(2.0, help="logit bound B of the original head"),
    r=Knob(type=int, default=8, help="kept rank", low=0),
    decay=unit_knob(0.3, "ratio of successive frequency weights B_i (spectrum decay)"),
)
def svd_truncation(T, k, F, B, r, decay):
    ref, _ = build_lag_model(T, k, F, B, decay=decay)
    m, _ = build_lag_model(T, k, F, B, decay=decay)
    head = m.head_weights(0, 0)  # the only head: W_Q, W_K whole
    Wq, Wk = head.q.numpy(), head.k.numpy()
    M = Wq.T @ Wk  # logits e_tᵀ M e_s, M = W_Qᵀ W_K (E x E)
    U, S, Vt = np.linalg.svd(M)
    Ur, Sr, Vr = U[:, :r], S[:r], Vt[:r]
    # W_Q' = (U_r Σ_r^{1/2})ᵀ, W_K' = (V_r Σ_r^{1/2})ᵀ, padded with zero rows to the head width
    Wq2 = np.zeros_like(Wq)
    Wk2 = np.zeros_like(Wk)
    Wq2[:r] = (Ur * np.sqrt(Sr)).T
    Wk2[:r] = (Vr.T * np.sqrt(Sr)).T
    m.set_head(0, 0, q=Wq2, k=Wk2)
    sigma = float(S[r]) if r < len(S) else 0.0
    xmax = float(np.sqrt(3.0))
    # R bounds the part of e_t that M acts on: M's rows and columns vanish on the x coordinate, so
    # only p_t counts and ||p_t|| = 1 (the bound holds with any R >= that norm).
    act = np.abs(M).sum(0) + np.abs(M).sum(1) > 0
    P_all, _ = _features(T, F)
    E_emb = np.concatenate([np.full((T, 1), xmax), P_all], axis=1)
    R = float(np.linalg.norm(E_emb[:, act], axis=1).max())
    c1 = claim("TO-C1")
    dlogit = formula_value(c1, "logit_change", sigma_r1=sigma, R=R) if sigma else 0.0
    factor = formula_value(c1, "weight_change_factor", sigma_r1=sigma, R=R) if sigma else 0.0
    c_out = 1.0
    bound = abs(c_out) * xmax * factor
    base = LagExtraction(T, k)
    task = ModelTarget(ref, base)

    def measure(c, budget=4096, seed=0, **kw):
        from ..measure import sup_error

        rng = np.random.default_rng(seed)
        Xs = torch.tensor(base.sample(min(budget, 2048), rng), dtype=torch.float64)
        # the logit change of the model as it stands (not of the intended truncation), so that
        # an edited or mis-built head is measured as it is
        qk = c.model.attention(0)
        with torch.no_grad():
            e = c.model.embed_tokens(Xs)
            M_now = qk.q.weight.T @ qk.k.weight
            dl = (e @ (torch.from_numpy(M) - M_now) @ e.transpose(1, 2)).abs()
        r_ = sup_error(c.model, c.task, budget=budget, seed=seed, **kw)
        return {
            "sup_error": r_.value,
            "witness": r_.witness.tolist(),
            "n_evals": r_.n_evals,
            "max_logit_change": float(dl.max()),
            "logit_change_bound": dlogit,
            "logit_bound_holds": bool(float(dl.max()) <= dlogit * (1 + 1e-9) + 1e-12),
        }

    # memory of measure(budget=...): the logit changes of min(budget, 2048) sequences (B x T x T,
    # twice: the product and its absolute value) next to the error search itself
    # (a function attribute, read with getattr by `approxtheory construct`)
    measure.estimate_bytes = lambda budget: (  # type: ignore[attr-defined]
        array_bytes(2, min(budget, 2048), T, T) + sup_error_bytes(m, task, budget)
    )

    return Construction(
        name="svd_truncation",
        claim="TO-C1",
        model=m,
        task=task,
        params=2 * r * (1 + 2 * F),
        params_convention="QK parameters after truncation (2 r E)",
        claimed_bound=bound,
        bound_kind="upper",
        bound_expr="|c| max|x| (" + sp.sstr(c1.expr("weight_change_factor")) + ")",
        extra={"singular_values": S.tolist(), "sigma_r1": sigma, "R": R},
        measure_fn=measure,
    )
