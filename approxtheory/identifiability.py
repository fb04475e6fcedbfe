"""Identifiability of one attention layer of the shared model (arXiv 2609.01231).

Example::

    >>> from approxtheory.identifiability import AttentionConfig, unidentified_dim
    >>> r = unidentified_dim(AttentionConfig(E=8, H=4, G=2))
    >>> r["measured"] == r["predicted"]
    True

``unidentified_dim`` measures P - rank(∂F/∂θ) with F the stacked float64 outputs of the layer on
generic inputs (Jacobian by ``torch.func.jacrev``, rank from the singular-value gap);
``predicted_unidentified_dim`` reads the count from the catalogue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch

from ._validate import SEED_MAX, check_real, check_seed, pos_int
from .catalogue import claim
from .errors import ConfigError
from .model import LayerSpec, ModelConfig, Transformer

__all__ = [
    "AttentionConfig",
    "build_layer",
    "unidentified_dim",
    "predicted_unidentified_dim",
    "sylvester_projection",
    "rebalance",
    "imbalance",
    "bias_aliasing",
    "rebalance_model",
    "structured_unidentified_dim",
    "dense_unidentified_dim",
    "attention_param_count",
    "bias_ranks",
    "bias_gradients",
    "dense_estimate",
    "structured_estimate",
]

# Distinct, well-separated RoPE frequencies (the digest's numerical check used these).
ROPE_FREQS = (1.0, 0.37, 0.61, 0.23, 0.83, 0.17, 0.47, 0.71, 0.29, 0.53, 0.11, 0.93)


@dataclass(frozen=True)
class AttentionConfig:
    """One multi-head attention layer whose parameter identifiability is computed: width ``E``,
    ``H`` heads, ``G`` key/value groups (GQA; ``None`` = ``H``), QKV/output biases, causal mask,
    RoPE variant (``None``, ``"full"``, ``"partial:N"``, ``"repeated"``), fat heads (width ``E`` per
    head) and the paper's §3.2 single head without ``W_O``. Invalid combinations raise
    :class:`~approxtheory.errors.ConfigError`.
    """

    E: int
    H: int
    G: int | None = None  # KV groups (GQA); default H
    bias: bool = False
    causal: bool = False
    rope: str | None = None  # None, "full", "partial:N", "repeated"
    fat: bool = False  # head width E at any H
    no_output: bool = False  # the paper's §3.2 single head: square W_V, no W_O (H = 1)
    value_dim: int | None = None  # per-head value width C (default: the head width D)

    def __post_init__(self):
        for name in ("E", "H"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name} must be a positive integer (got {v!r})")
        if self.G is not None and (not isinstance(self.G, int) or isinstance(self.G, bool)):
            raise ConfigError(f"G must be a positive integer or None (got {self.G!r})")
        for name in ("bias", "causal", "fat", "no_output"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False (got {getattr(self, name)!r})")
        if self.rope is not None and not isinstance(self.rope, str):
            raise ConfigError(
                f"rope must be None, 'full', 'partial:N' or 'repeated' (got {self.rope!r})"
            )
        if not self.fat and self.E % self.H:
            raise ConfigError(f"H must divide E (got H={self.H}, E={self.E})")
        if self.value_dim is not None and (
            not isinstance(self.value_dim, int)
            or isinstance(self.value_dim, bool)
            or self.value_dim < 1
            or self.no_output
        ):
            raise ConfigError(
                "value_dim must be None or a positive integer, and not with no_output "
                f"(got {self.value_dim!r})"
            )
        if self.no_output and (self.H != 1 or self.G not in (None, 1) or self.bias):
            raise ConfigError(
                "the head without an output matrix is the paper's single head: "
                f"it needs H = 1 and no biases (got H={self.H}, bias={self.bias})"
            )
        G = self.H if self.G is None else self.G
        if not isinstance(G, int) or G < 1 or self.H % G:
            raise ConfigError(f"G must divide H (got G={G}, H={self.H})")
        if self.rope is not None:
            D = self.head_dim
            if self.rope not in ("full", "repeated") and not str(self.rope).startswith("partial:"):
                raise ConfigError(f"rope must be full, partial:N or repeated (got {self.rope!r})")
            if D % 2:
                raise ConfigError(f"RoPE needs an even head width (got {D})")
            if str(self.rope).startswith("partial:"):
                try:
                    r = int(str(self.rope).split(":", 1)[1])
                except ValueError:
                    raise ConfigError(
                        f"partial RoPE needs a number: partial:N (got {self.rope!r})"
                    ) from None
                if r < 0 or r > D or r % 2:
                    raise ConfigError(f"partial RoPE dims must be even and <= {D} (got {r})")
            if self.rope == "repeated" and D < 4:
                raise ConfigError(f"a repeated frequency pair needs head width >= 4 (got {D})")

    @property
    def groups(self) -> int:
        return self.H if self.G is None else self.G

    @property
    def head_dim(self) -> int:
        return self.E if self.fat else self.E // self.H

    @property
    def value_width(self) -> int:
        """C, each head's value width: E for the head without W_O, else ``value_dim`` or D."""
        if self.no_output:
            return self.E
        return self.head_dim if self.value_dim is None else self.value_dim

    @property
    def rope_dims(self) -> int:
        if self.rope is None:
            return 0
        if str(self.rope).startswith("partial:"):
            return int(str(self.rope).split(":", 1)[1])
        return self.head_dim


def _layer_config(cfg: AttentionConfig) -> ModelConfig:
    D = cfg.head_dim
    rope = None
    freqs = None
    if cfg.rope is not None:
        rope = cfg.rope_dims
        freqs = list(ROPE_FREQS[: max(1, rope // 2)])
        if cfg.rope == "repeated":
            freqs[1] = freqs[0]
    mc = ModelConfig(
        d_in=cfg.E,
        width=cfg.E,
        readout="tokens",
        residual=False,
        layers=[
            LayerSpec(
                heads=cfg.H,
                head_dim=D,
                kv_groups=cfg.groups,
                value_dim=cfg.value_width,
            )
        ],
        d_out=cfg.E,
        causal=cfg.causal,
        bias=cfg.bias,
        rope=rope,
        rope_freqs=tuple(freqs) if freqs else None,
        attn_scale=1.0,
        embed_bias=False,
        head_bias=False,
    )
    return mc


def build_layer(cfg: AttentionConfig, seed: int = 0) -> Transformer:
    """One attention layer of the shared model (no FFN, no residual, per-token outputs)."""
    _check_cfg(cfg)
    _check_seed(seed)
    mc = _layer_config(cfg)
    from .resources import require_model

    require_model(mc, what=f"the attention layer E={cfg.E} H={cfg.H}")
    m = Transformer(mc)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        # std 1/sqrt(E): logits stay O(sqrt(head_dim)) at any width, so the softmax is not
        # saturated and the Jacobian's rank is numerically visible
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) / math.sqrt(cfg.E))
        m.set_embedding(torch.eye(cfg.E))
        m.set_readout(torch.eye(cfg.E))
        if cfg.no_output:
            m.attention(0).o.weight.copy_(torch.eye(cfg.E))  # W_O fixed: not a parameter
    return m


def _attn_params(m: Transformer, cfg: AttentionConfig | None = None):
    fixed = m.attention(0).o.weight if cfg is not None and cfg.no_output else None
    return {n: p for n, p in m.attention_parameters(0).items() if p is not fixed}


def _check_cfg(cfg) -> None:
    if not isinstance(cfg, AttentionConfig):
        raise ConfigError(f"cfg must be an AttentionConfig (got {type(cfg).__name__})")


def _check_seed(seed) -> None:
    # torch.manual_seed(seed + 7) must not overflow
    check_seed(seed, must="an integer >= 0", above=f"an integer from 0 to {SEED_MAX}")


def _check_args(cfg, seed, rtol, n_seq=None, seq_len=1) -> None:
    """Typed errors for the measurement's arguments (booleans are not integers here)."""
    _check_cfg(cfg)
    _check_seed(seed)
    check_real(
        "rtol",
        rtol,
        0,
        1,
        lo_open=True,
        hi_open=True,
        must="a number in (0, 1): the relative singular-value threshold of the rank",
    )
    if n_seq is not None:
        pos_int("n_seq", n_seq, must="a positive integer or None")
    if seq_len is not None:
        pos_int("seq_len", seq_len)


def attention_param_count(cfg: AttentionConfig) -> int:
    """P, the attention parameters the Jacobian is taken with respect to (no allocation)."""
    E, H, G, D = cfg.E, cfg.H, cfg.groups, cfg.head_dim
    C = cfg.value_width
    P = E * (H * D + G * D + G * C) + (0 if cfg.no_output else H * C * E)
    if cfg.bias:
        P += H * D + G * D + G * C + (0 if cfg.no_output else E)
    return P


def _dense_sizes(cfg, n_seq, seq_len):
    P = attention_param_count(cfg)
    if n_seq is None:
        n_seq = max(12, -(-int(1.25 * P) // (seq_len * cfg.E)))
    rows_per_seq = seq_len * cfg.E
    block = min(n_seq, max(1, 2048 // rows_per_seq)) * rows_per_seq
    return P, n_seq, n_seq * rows_per_seq, block


def dense_estimate(cfg: AttentionConfig, n_seq: int | None = None, seq_len: int = 7) -> dict:
    """Memory (bytes) and a lower bound of the time (s) of :func:`dense_unidentified_dim`: the
    layer, the float64 Jacobian (outputs x P) and one block of it; the SVD's ~4·rows·P² flops."""
    from .resources import FLOPS_PER_SECOND, array_bytes, model_bytes

    P, n_seq, rows, block = _dense_sizes(cfg, n_seq, seq_len)
    b = model_bytes(_layer_config(cfg)) + array_bytes(rows, P) + array_bytes(block, P)
    m, n = max(rows, P), min(rows, P)
    return {"bytes": b, "seconds": 4.0 * m * n * n / FLOPS_PER_SECOND, "outputs": rows, "P": P}


def structured_estimate(cfg: AttentionConfig, seq_len: int = 8) -> dict:
    """Memory (bytes) of :func:`structured_unidentified_dim`: the layer, the inputs, the attention
    probabilities, K (NL x HE) and its complete QR factor (NL x NL), then the larger of one head's
    query/key Jacobian with jacrev's batched intermediates and the E x E x 2DE blocks of
    ``_dprod``."""
    from .resources import array_bytes, model_bytes

    E, H, D = cfg.E, cfg.H, cfg.head_dim
    C = D
    need = H * E + 2 * -(-(2 * D * E) // C)
    n_seq = -(-need // seq_len)
    NL = n_seq * seq_len
    out = C * max(NL - H * E, 0)
    base = (
        model_bytes(_layer_config(cfg))
        + array_bytes(NL, E)
        + array_bytes(H, NL, seq_len)
        + array_bytes(NL, H * E)
        + array_bytes(NL, NL)
    )
    jm = array_bytes(out, 2 * D * E)
    head = max(jm + array_bytes(out, NL, seq_len), jm + array_bytes(6, E, E, D, E))
    return {"bytes": base + head, "rows": NL}


def unidentified_dim(
    cfg: AttentionConfig,
    n_seq: int | None = None,
    seq_len: int = 7,
    seed: int = 0,
    rtol: float = 1e-8,
    method: str = "auto",
) -> dict:
    """P - rank of the Jacobian of the layer's outputs w.r.t. its attention parameters.

    ``method="dense"`` forms the whole Jacobian and takes its singular values (the baseline);
    ``"structured"`` certifies the same rank from small per-head blocks (see
    :func:`structured_unidentified_dim`); ``"auto"`` uses the structured method where it applies.
    """
    _check_args(cfg, seed, rtol, n_seq, seq_len)
    if method not in ("auto", "dense", "structured"):
        raise ConfigError(f"method must be auto, dense or structured (got {method!r})")
    if method != "dense" and structured_applies(cfg):
        r = structured_unidentified_dim(cfg, seed=seed, rtol=rtol)
        if r is not None or method == "structured":
            if r is None:
                raise ConfigError(
                    "the structured certificate did not close for this draw; use the dense "
                    "method (--method dense)"
                )
            return r
    elif method == "structured":
        raise ConfigError(
            "the structured method needs no biases, no RoPE, no GQA, a W_O and "
            "H·head_dim <= E; use the dense method (--method dense)"
        )
    return dense_unidentified_dim(cfg, n_seq=n_seq, seq_len=seq_len, seed=seed, rtol=rtol)


def dense_unidentified_dim(
    cfg: AttentionConfig,
    n_seq: int | None = None,
    seq_len: int = 7,
    seed: int = 0,
    rtol: float = 1e-8,
) -> dict:
    """The baseline: the full Jacobian (``torch.func.jacrev``) and its singular values."""
    from torch.func import functional_call

    from .resources import require

    _check_args(cfg, seed, rtol, n_seq, seq_len)
    est = dense_estimate(cfg, n_seq, seq_len)
    require(
        bytes=est["bytes"],
        seconds=est["seconds"],
        what=f"the dense Jacobian ({est['outputs']} outputs x P={est['P']} parameters, "
        f"float64) of the layer E={cfg.E} H={cfg.H}",
    )
    m = build_layer(cfg, seed)
    params = _attn_params(m, cfg)
    P_total = sum(p.numel() for p in params.values())
    if n_seq is None:  # enough outputs (with a margin) for the rank to be visible
        n_seq = max(12, -(-int(1.25 * P_total) // (seq_len * cfg.E)))
    names, shapes, flat = flat_params(params)
    g = torch.Generator().manual_seed(seed + 1)
    X = torch.randn(n_seq, seq_len, cfg.E, generator=g, dtype=torch.float64)

    def f(theta, Xc):
        out = unflatten(theta, names, shapes)
        # the manual attention path (same outputs as the fused one; vmap-friendly)
        return functional_call(m, out, (Xc,), {"return_attention": True})[0].reshape(-1)

    P = flat.numel()
    sv = jacobian_singular_values(f, flat, X, seq_len * cfg.E, P, chunk_size=1024)
    rank = int((sv > rtol * sv[0]).sum())
    gap = float(sv[rank - 1] / sv[rank]) if rank < len(sv) and sv[rank] > 0 else float("inf")
    return _rank_record(cfg, P, rank, gap, "dense")


def flat_params(params: dict):
    """``(names, shapes, flat)``: the parameters in order and their values as one vector."""
    names = list(params)
    shapes = [params[n].shape for n in names]
    flat = torch.cat([params[n].detach().reshape(-1) for n in names])
    return names, shapes, flat


def unflatten(theta: torch.Tensor, names, shapes) -> dict:
    """The parameters ``names`` (of ``shapes``) read in order from the flat vector ``theta``."""
    out, i = {}, 0
    for n, s in zip(names, shapes):
        k = int(np.prod(s))
        out[n] = theta[i : i + k].reshape(s)
        i += k
    return out


def jacobian_singular_values(f, flat, X, per_seq: int, n_cols: int, chunk_size: int):
    """The singular values of the Jacobian of ``f(theta, X_chunk)`` (flattened outputs,
    ``per_seq`` per sequence of ``X``) with respect to ``theta`` at ``flat`` (``n_cols``
    entries).

    Sequences are independent: J is built block by block into one preallocated float64 array,
    then its singular values are taken in place (LAPACK gesdd without vectors), so the memory
    is about one copy of J."""
    import scipy.linalg
    from torch.func import jacrev

    J = np.empty((X.shape[0] * per_seq, n_cols), dtype=np.float64, order="F")
    step = max(1, 2048 // per_seq)
    for i in range(0, X.shape[0], step):
        Xc = X[i : i + step]
        Jc = jacrev(lambda th, Xc=Xc: f(th, Xc), chunk_size=chunk_size)(flat)
        J[i * per_seq : (i + len(Xc)) * per_seq] = Jc.detach().numpy()
        del Jc
    sv = scipy.linalg.svd(
        J, compute_uv=False, overwrite_a=True, check_finite=False, lapack_driver="gesdd"
    )
    del J
    return sv


#: the smallest ratio of consecutive singular values that certifies a rank (:func:`gap_rank`)
MIN_GAP = 1e3


def gap_rank(sv, n_cols: int, min_gap: float = MIN_GAP) -> tuple[int, tuple[float, float, float]]:
    """The rank at the largest ratio of consecutive singular values (descending ``sv``).

    Values below the noise floor ε·max(shape)·σ_max are floored there, so a full-rank matrix has
    its gap against the floor. Returns (rank, (σ_r, σ_{r+1}, ratio)); the caller certifies only
    when ratio >= ``min_gap``."""
    s = np.asarray(sv, dtype=np.float64)
    if s.size == 0 or not s[0] > 0:
        return 0, (0.0, 0.0, 0.0)
    floor = np.finfo(np.float64).eps * max(len(s), n_cols) * s[0]
    ext = np.concatenate([s, np.zeros(max(0, n_cols - len(s)) + 1)])[: max(len(s), n_cols) + 1]
    below = np.maximum(ext[1:], floor)
    above = ext[:-1]
    ok = above > floor
    ratios = np.where(ok, above / below, 0.0)
    r = int(np.argmax(ratios)) + 1
    return r, (float(above[r - 1]), float(ext[r]), float(ratios[r - 1]))


def _rank_record(cfg: AttentionConfig, P: int, rank: int, gap: float, method: str) -> dict:
    """The measured unidentified dimension ``P - rank`` beside the catalogue's prediction."""
    pred = predicted_unidentified_dim(cfg)
    return {
        "total": P,
        "rank": rank,
        "measured": P - rank,
        "predicted": pred,
        "ratio": (P - rank) / P,
        "singular_value_gap": gap,
        "method": method,
    }


def structured_applies(cfg: AttentionConfig) -> bool:
    return (
        not cfg.bias
        and cfg.rope is None
        and cfg.groups == cfg.H
        and not cfg.no_output
        and cfg.value_width == cfg.head_dim
        and cfg.H * cfg.head_dim <= cfg.E
    )


def _rank(A: torch.Tensor, rtol: float):
    sv = torch.linalg.svdvals(A)
    r = int((sv > rtol * sv[0]).sum())
    gap = float(sv[r - 1] / sv[r]) if r < len(sv) and sv[r] > 0 else float("inf")
    return r, gap


def structured_unidentified_dim(
    cfg: AttentionConfig, seed: int = 0, seq_len: int = 8, rtol: float = 1e-8
) -> dict | None:
    """The same rank as the dense Jacobian, certified from small per-head blocks.

    In row form the layer is Y = Σ_h A_h(X; W_Q^h, W_K^h) X W_V^hᵀ W_O^hᵀ. With K = [A_h X]_h
    (NL x HE, all sequences stacked) of full column rank, the value/output part
    dN_h = d(W_O^h W_V^h) ↦ Σ_h A_h X dN_hᵀ is injective, so it contributes exactly
    Σ_h rank d(W_O W_V) (small E² x 2CE blocks). Projecting onto the complement of col(K) and
    reading each head's coordinates through the full-column-rank W_O = [W_O^1 ... W_O^H] separates
    the query/key parts head by head: their contribution is Σ_h rank of the Jacobian of
    (I - Π) A_h X W_V^hᵀ with respect to (W_Q^h, W_K^h) (C(NL - HE) x 2DE). That sum is a lower
    bound on rank(J); Σ_h [rank d(W_Kᵀ W_Q) + rank d(W_O W_V)] is an upper bound. When the two
    agree the rank is certified; otherwise None (use the dense method).
    """
    from .resources import require

    _check_args(cfg, seed, rtol, None, seq_len)
    if cfg.bias or cfg.rope is not None or cfg.groups != cfg.H:
        raise ConfigError(
            "the structured certificate needs no biases, no RoPE and no GQA "
            f"(got bias={cfg.bias}, rope={cfg.rope}, G={cfg.groups}, H={cfg.H}); "
            "use dense_unidentified_dim"
        )
    require(
        bytes=structured_estimate(cfg, seq_len)["bytes"],
        what=f"the structured rank certificate of the layer E={cfg.E} H={cfg.H}",
    )
    E, H, C = cfg.E, cfg.H, cfg.head_dim
    m = build_layer(cfg, seed)
    W = _head_weights(m, cfg)
    P = sum(p.numel() for p in _attn_params(m, cfg).values())
    X, mask = _structured_inputs(cfg, seed, seq_len)
    A = [_probs(X, mask, W[0][h], W[1][h]) for h in range(H)]
    _check_reconstruction(m, X, A, W)
    K = torch.cat([(A[h] @ X).reshape(-1, E) for h in range(H)], dim=1)  # (NL, HE)
    rK, _ = _rank(K, rtol)
    rO, _ = _rank(m.attention(0).o.weight.detach(), rtol)
    if rK < H * E or rO < H * C:
        return None
    lower, upper, gaps = _head_rank_bounds(cfg, X, mask, W, K, rtol)
    if lower != upper:
        return None
    return _rank_record(cfg, P, lower, float(min(gaps)), "structured")


def _head_weights(m: Transformer, cfg: AttentionConfig):
    """The layer's per-head (W_Q, W_K, W_V, W_O): (H, D, E) x 3 and W_O as (H, E, C)."""
    E, H, D = cfg.E, cfg.H, cfg.head_dim
    C = D
    a = m.attention(0)
    Wq = a.q.weight.detach().view(H, D, E)
    Wk = a.k.weight.detach().view(H, D, E)
    Wv = a.v.weight.detach().view(H, C, E)
    Wo = a.o.weight.detach().view(E, H, C).permute(1, 0, 2)  # (H, E, C)
    return Wq, Wk, Wv, Wo


def _structured_inputs(cfg: AttentionConfig, seed: int, seq_len: int):
    """The seeded input sequences (enough rows for the HE columns of K, with a margin) and the
    causal mask (None when the layer is not causal)."""
    E, H, D = cfg.E, cfg.H, cfg.head_dim
    C = D
    need = H * E + 2 * -(-(2 * D * E) // C)  # rows: HE + margin
    n_seq = -(-need // seq_len)
    g = torch.Generator().manual_seed(seed + 1)
    X = torch.randn(n_seq, seq_len, E, generator=g, dtype=torch.float64)
    mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool)) if cfg.causal else None
    return X, mask


def _probs(X, mask, wq, wk):
    """One head's attention probabilities (N, L, L) on the sequences X (no biases)."""
    lg = (X @ wq.T) @ (X @ wk.T).transpose(1, 2)  # (N, L, L)
    if mask is not None:
        lg = lg.masked_fill(~mask, float("-inf"))
    return torch.softmax(lg, dim=-1)


def _check_reconstruction(m: Transformer, X, A, W) -> None:
    """Self-check: the per-head reconstruction against the shared model's forward."""
    _, _, Wv, Wo = W
    with torch.no_grad():
        y = sum((A[h] @ X @ Wv[h].T) @ Wo[h].T for h in range(len(A)))
        y_model = m(X)
    if not torch.allclose(y, y_model, atol=1e-10, rtol=1e-10):
        raise RuntimeError(
            "structured identifiability: layer reconstruction disagrees with the model"
        )


def _head_rank_bounds(cfg: AttentionConfig, X, mask, W, K, rtol: float):
    """Per head, the query/key rank after projecting off col(K) plus the value/output rank
    (summed: the lower bound) and the two product ranks (summed: the upper bound), with the
    singular-value gaps of the blocks measured: (lower, upper, gaps)."""
    from torch.func import jacrev

    E, H, D = cfg.E, cfg.H, cfg.head_dim
    C = D
    Wq, Wk, Wv, Wo = W
    Qfull, _ = torch.linalg.qr(K, mode="complete")
    Qperp = Qfull[:, H * E :]  # basis of col(K)^⊥
    lower, upper, gaps = 0, 0, []
    for h in range(H):
        Vx = X @ Wv[h].T  # (N, L, C)

        def zproj(theta, h=h, Vx=Vx):
            wq, wk = theta[: D * E].view(D, E), theta[D * E :].view(D, E)
            z = (_probs(X, mask, wq, wk) @ Vx).reshape(-1, C)  # (NL, C)
            return (Qperp.T @ z).reshape(-1)

        theta = torch.cat([Wq[h].reshape(-1), Wk[h].reshape(-1)])
        Jm = jacrev(zproj)(theta)  # (C (NL-HE), 2DE)
        rm, gm = _rank(Jm, rtol)
        gaps.append(gm)
        # upper bounds: d(W_Kᵀ W_Q) and d(W_O W_V) as explicit E² x 2DE matrices
        JM = _dprod(Wk[h], Wq[h], E, D)
        JN = _dprod(Wo[h].T.contiguous(), Wv[h], E, C)
        rM, _ = _rank(JM, rtol)
        rN, gn = _rank(JN, rtol)
        gaps.append(gn)
        lower += rm + rN
        upper += rM + rN
    return lower, upper, gaps


def _dprod(B: torch.Tensor, A: torch.Tensor, E: int, D: int) -> torch.Tensor:
    """Jacobian of (A, B) ↦ Bᵀ A for A, B of shape (D, E), in compressed row coordinates.

    In the orthonormal bases T = [row(B), row(B)^⊥] and S = [row(A), row(A)^⊥] of R^E,
    Tᵀ(Bᵀ dA + dBᵀ A)S vanishes outside its first D rows and first D columns, so only those
    2DE - D² coordinates are kept: a (2DE - D²) x 2DE matrix with the rank of the full E² x 2DE
    one, several times cheaper to decompose."""
    eye = torch.eye(E, dtype=torch.float64)
    JA = torch.einsum("di,jk->ijdk", B, eye).reshape(E, E, D * E)
    JB = torch.einsum("ik,dj->ijdk", eye, A).reshape(E, E, D * E)
    J = torch.cat([JA, JB], dim=2)  # (E, E, 2DE)
    if D >= E:  # nothing to compress: keep every coordinate
        return J.reshape(E * E, -1)
    T = _completed_basis(B, E, D, 0)
    S = _completed_basis(A, E, D, 1)
    Jt = torch.einsum("ia,ijp,jb->abp", T, J, S)  # Tᵀ (.) S
    top = Jt[:D].reshape(D * E, -1)
    left = Jt[D:, :D].reshape((E - D) * D, -1)
    return torch.cat([top, left], dim=0)


def _completed_basis(M: torch.Tensor, E: int, D: int, seed: int) -> torch.Tensor:
    """An orthonormal basis of R^E whose first D vectors span row(M) (M: (D, E)), completed by
    seeded random directions."""
    return torch.linalg.qr(
        torch.cat(
            [
                M.T,
                torch.randn(
                    E, E - D, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)
                ),
            ],
            dim=1,
        )
    )[0]


def predicted_unidentified_dim(cfg: AttentionConfig) -> int:
    """The catalogue's count for this configuration (derived/verified rows of the digest's
    table, with the paper's QK statements)."""
    G, D = cfg.groups, cfg.head_dim
    C = D
    if cfg.no_output:
        # QK symmetry GL(D) only: a square W_V without W_O has no OV symmetry
        return int(sp.Integer(D) ** 2)
    if cfg.rope is None:
        qk_head = sp.Integer(D) ** 2
    elif cfg.rope == "full":
        qk_head = claim("ID-P4.8").evaluate("U_qk_head", D=D)
    elif cfg.rope == "repeated":
        qk_head = claim("ID-P4.8").evaluate("U_qk_repeated_pair", D=D)
    else:
        qk_head = (
            claim("ID-P4.8").evaluate("U_qk_partial", D=D, D_r=cfg.rope_dims)
            if cfg.rope_dims > 0
            else sp.Integer(D) ** 2
        )
    U = G * qk_head + G * C**2  # QK and OV symmetries, one per KV group
    if cfg.bias:
        # inert key biases + value biases aliased with b_O (C per KV head). Under RoPE the key
        # bias is rotated with the key's position, so only its unrotated D - D_r entries stay
        # inert (measured: Llama GQA + RoPE + biases, and the shared layer)
        U += G * (D - cfg.rope_dims) + G * C
    return int(U)


# ---------------------------------------------------------------------------------- diagnostics
def bias_aliasing(cfg: AttentionConfig, seed: int = 0) -> dict:
    """Demonstrate the inert key bias and the value/output bias aliasing (ID-F4.7, ID-B4.7.2):
    max output change when b_K is replaced at random, and when δ_h is added to each b_V^h and
    Σ_h W_O^h δ_h subtracted from b_O; plus the largest |∂L/∂b_K| for a random loss."""
    if not cfg.bias:
        raise ConfigError("bias aliasing needs a configuration with biases (bias=True)")
    m = build_layer(cfg, seed)
    a = m.attention(0)
    g = torch.Generator().manual_seed(seed + 7)
    X = torch.randn(4, 6, cfg.E, generator=g, dtype=torch.float64)
    y0 = m(X)
    (y0**2).sum().backward()
    assert a.k.bias.grad is not None  # the backward pass above filled it
    grad_bk = float(a.k.bias.grad.abs().max())
    with torch.no_grad():
        y0 = y0.detach()
        a.k.bias.add_(10 * torch.randn(a.k.bias.shape, generator=g, dtype=torch.float64))
        key = float((m(X) - y0).abs().max())
        delta = torch.randn(a.v.bias.shape, generator=g, dtype=torch.float64)
        a.v.bias.add_(delta)
        rep = a.h // a.g
        full = delta.view(a.g, a.c).repeat_interleave(rep, dim=0).reshape(-1)  # per query head
        a.o.bias.sub_(a.o.weight @ full)
        value = float((m(X) - y0).abs().max())
    return {
        "key_bias_output_change": key,
        "key_bias_grad": grad_bk,
        "value_bias_aliasing_output_change": value,
    }


def bias_ranks(cfg: AttentionConfig, seed: int = 0, seq_len: int = 6, rtol: float = 1e-8) -> dict:
    """The identified dimension of the query bias and of the key bias (ID-F3, ID-F4.7): the rank
    of the Jacobian of the layer's float64 outputs on random sequences with respect to b_Q alone
    and to b_K alone (singular values above ``rtol``·σ_max; an all-zero Jacobian has rank 0).
    Returns the ranks, the entry counts and each Jacobian's largest singular value."""
    from torch.func import functional_call, jacrev

    if not cfg.bias:
        raise ConfigError("bias ranks need a configuration with biases (bias=True)")
    m = build_layer(cfg, seed)
    a = m.attention(0)
    g = torch.Generator().manual_seed(seed + 11)
    n_seq = max(4, -(-2 * a.q.bias.numel() // (seq_len * cfg.E)))
    X = torch.randn(n_seq, seq_len, cfg.E, generator=g, dtype=torch.float64)
    svs = {}
    for part, param in (("query", a.q.bias), ("key", a.k.bias)):
        name = m.parameter_name(param)

        def f(b, name=name):
            # the explicit attention path (return_attention): SDPA has no batched backward
            return functional_call(m, {name: b}, (X,), {"return_attention": True})[0].reshape(-1)

        svs[part] = (torch.linalg.svdvals(jacrev(f)(param.detach().clone()).detach()), param)
    # one scale for both: the larger Jacobian's top singular value (b_K's may be all zero)
    scale = max(float(sv[0]) for sv, _ in svs.values())
    return {
        part: {
            "rank": int((sv > rtol * scale).sum()) if scale > 0 else 0,
            "entries": param.numel(),
            "sigma_max": float(sv[0]),
            "relative_sigma_max": float(sv[0]) / scale if scale > 0 else 0.0,
        }
        for part, (sv, param) in svs.items()
    }


def bias_gradients(
    cfg: AttentionConfig, optimizer: str, steps: int = 30, lr: float = 0.05, seed: int = 0
) -> list[dict]:
    """Train the biased layer ``cfg`` (float64) for ``steps`` steps on a fixed random regression
    target (squared loss) with ``optimizer`` (sgd, sgd_wd: weight decay 4e-4, adamw: lr 1e-3,
    weight decay 0.1) and record, per step, ||∂L/∂b_Q|| / ||∂L/∂W_Q|| and ||∂L/∂b_K|| /
    ||∂L/∂W_Q|| (the digest's Fig. 3 quantities, relative to the query weights' gradient)."""
    if not cfg.bias:
        raise ConfigError("bias gradients need a configuration with biases (bias=True)")
    m = build_layer(cfg, seed)
    a = m.attention(0)
    g = torch.Generator().manual_seed(seed + 13)
    X = torch.randn(8, 6, cfg.E, generator=g, dtype=torch.float64)
    Y = torch.randn(8, 6, cfg.E, generator=g, dtype=torch.float64)
    params = list(m.attention_parameters(0).values())
    opt: torch.optim.Optimizer
    if optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1)
    elif optimizer in ("sgd", "sgd_wd"):
        opt = torch.optim.SGD(params, lr=lr, weight_decay=4e-4 if optimizer == "sgd_wd" else 0.0)
    else:
        raise ConfigError(f"optimizer must be sgd, sgd_wd or adamw (got {optimizer!r})")
    rows = []
    for step in range(steps):
        opt.zero_grad()
        loss = ((m(X) - Y) ** 2).mean()
        loss.backward()
        assert a.q.weight.grad is not None and a.q.bias.grad is not None  # backward ran
        assert a.k.bias.grad is not None
        gw = float(a.q.weight.grad.norm())
        rows.append(
            {
                "optimizer": optimizer,
                "step": step,
                "loss": float(loss.detach()),
                "query_bias_grad": float(a.q.bias.grad.norm()) / gw,
                "key_bias_grad": float(a.k.bias.grad.norm()) / gw,
            }
        )
        opt.step()
    return rows


def imbalance(Wq: np.ndarray, Wk: np.ndarray) -> np.ndarray:
    """W_Q W_Qᵀ - W_K W_Kᵀ (D x D), conserved under gradient flow (ID-L5.1)."""
    return Wq @ Wq.T - Wk @ Wk.T


def sylvester_projection(Wq, Wk, dWq, dWk):
    """Project an update onto the invariant directions {(A W_Q, -Aᵀ W_K)} (digest §5.1, with its
    sign and index corrections): solve A P + Q A = Cm, P = W_Q W_Qᵀ, Q = W_K W_Kᵀ,
    Cm = δW_Q W_Qᵀ - W_K δW_Kᵀ. Returns (A, ρ)."""
    P, Q = Wq @ Wq.T, Wk @ Wk.T
    Cm = dWq @ Wq.T - Wk @ dWk.T
    lq, Uq = np.linalg.eigh(P)
    lk, Uk = np.linalg.eigh(Q)
    R = Uk.T @ Cm @ Uq
    At = R / (lk[:, None] + lq[None, :])
    A = Uk @ At @ Uq.T
    num = np.linalg.norm(A @ Wq) ** 2 + np.linalg.norm(A.T @ Wk) ** 2
    den = np.linalg.norm(dWq) ** 2 + np.linalg.norm(dWk) ** 2
    return A, float(num / den)


def rebalance(Wq, Wk):
    """Move (W_Q, W_K) to the balanced point of its orbit, keeping M = W_Kᵀ W_Q (digest §5.2)."""
    Qq, Rq = np.linalg.qr(Wq.T)
    Qk, Rk = np.linalg.qr(Wk.T)
    Um, S, Vmt = np.linalg.svd(Rk @ Rq.T)
    qbar = np.sqrt(S)[:, None] * (Vmt @ Qq.T)
    kbar = np.sqrt(S)[:, None] * (Um.T @ Qk.T)
    U, _, Zt = np.linalg.svd(Wq @ qbar.T + Wk @ kbar.T)
    Z = U @ Zt
    return Z @ qbar, Z @ kbar


def rebalance_model(m: Transformer, layer: int = 0) -> float:
    """Rebalance every head's (W_Q, W_K) of ``layer`` in place (float64); returns the largest
    relative change of any head's W_Kᵀ W_Q. The function the model computes is unchanged."""
    a = m.attention(layer)
    if a.g != a.h:
        raise ConfigError("rebalancing per head needs one KV head per query head (no GQA)")
    if a.freqs.numel():
        raise ConfigError(
            "rebalancing with RoPE changes the function (the symmetry group is "
            "smaller); not supported"
        )
    worst = 0.0
    for h in range(a.h):
        sl = slice(h * a.n, (h + 1) * a.n)
        Wq = a.q.weight.detach()[sl].double().numpy().copy()
        Wk = a.k.weight.detach()[sl].double().numpy().copy()
        if a.q.bias is not None:
            raise ConfigError("rebalancing with query/key biases is not supported")
        q2, k2 = rebalance(Wq, Wk)
        M = Wk.T @ Wq
        worst = max(worst, float(np.linalg.norm(k2.T @ q2 - M) / np.linalg.norm(M)))
        a.set_head(h, q=q2, k=k2)
    return worst
