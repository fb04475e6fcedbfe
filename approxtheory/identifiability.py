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

from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch

from .catalogue import claim
from .errors import ConfigError
from .model import LayerSpec, ModelConfig, Transformer

__all__ = ["AttentionConfig", "build_layer", "unidentified_dim", "predicted_unidentified_dim",
           "sylvester_projection", "rebalance", "imbalance"]

# Distinct, well-separated RoPE frequencies (the digest's numerical check used these).
ROPE_FREQS = (1.0, 0.37, 0.61, 0.23, 0.83, 0.17, 0.47, 0.71, 0.29, 0.53, 0.11, 0.93)


@dataclass(frozen=True)
class AttentionConfig:
    E: int
    H: int
    G: int | None = None           # KV groups (GQA); default H
    bias: bool = False
    causal: bool = False
    rope: str | None = None        # None, "full", "partial:N", "repeated"
    fat: bool = False              # head width E at any H

    def __post_init__(self):
        for name in ("E", "H"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a positive integer (got {v!r})")
        if not self.fat and self.E % self.H:
            raise ConfigError(f"H must divide E (got H={self.H}, E={self.E})")
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
                    raise ConfigError(f"partial RoPE needs a number: partial:N "
                                      f"(got {self.rope!r})") from None
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
    def rope_dims(self) -> int:
        if self.rope is None:
            return 0
        if str(self.rope).startswith("partial:"):
            return int(str(self.rope).split(":", 1)[1])
        return self.head_dim


def build_layer(cfg: AttentionConfig, seed: int = 0) -> Transformer:
    """One attention layer of the shared model (no FFN, no residual, per-token outputs)."""
    D = cfg.head_dim
    rope = None
    freqs = None
    if cfg.rope is not None:
        rope = cfg.rope_dims
        freqs = list(ROPE_FREQS[: max(1, rope // 2)])
        if cfg.rope == "repeated":
            freqs[1] = freqs[0]
    mc = ModelConfig(d_in=cfg.E, width=cfg.E, readout="tokens", residual=False,
                     layers=[LayerSpec(heads=cfg.H, head_dim=D, kv_groups=cfg.groups)],
                     d_out=cfg.E, causal=cfg.causal, bias=cfg.bias, rope=rope,
                     rope_freqs=tuple(freqs) if freqs else None, attn_scale=1.0,
                     embed_bias=False, head_bias=False)
    m = Transformer(mc)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        m.embed[0].weight.copy_(torch.eye(cfg.E))
        m.head[0].weight.copy_(torch.eye(cfg.E))
    return m


def _attn_params(m: Transformer):
    return {n: p for n, p in m.named_parameters() if n.startswith("layers.0.attn.")}


def unidentified_dim(cfg: AttentionConfig, n_seq: int = 12, seq_len: int = 7, seed: int = 0,
                     rtol: float = 1e-8) -> dict:
    """P - rank of the Jacobian of the layer's outputs w.r.t. its attention parameters."""
    from torch.func import functional_call, jacrev
    m = build_layer(cfg, seed)
    params = _attn_params(m)
    names = list(params)
    shapes = [params[n].shape for n in names]
    flat = torch.cat([params[n].detach().reshape(-1) for n in names])
    g = torch.Generator().manual_seed(seed + 1)
    X = torch.randn(n_seq, seq_len, cfg.E, generator=g, dtype=torch.float64)

    def f(theta):
        out, i = {}, 0
        for n, s in zip(names, shapes):
            k = int(np.prod(s))
            out[n] = theta[i:i + k].reshape(s)
            i += k
        # the manual attention path (same outputs as the fused one; vmap-friendly)
        return functional_call(m, out, (X,), {"return_attention": True})[0].reshape(-1)

    J = jacrev(f)(flat)
    sv = torch.linalg.svdvals(J.detach()).numpy()
    P = flat.numel()
    rank = int((sv > rtol * sv[0]).sum())
    gap = float(sv[rank - 1] / sv[rank]) if rank < len(sv) and sv[rank] > 0 else float("inf")
    pred = predicted_unidentified_dim(cfg)
    return {"total": P, "rank": rank, "measured": P - rank, "predicted": pred,
            "ratio": (P - rank) / P, "singular_value_gap": gap}


def predicted_unidentified_dim(cfg: AttentionConfig) -> int:
    """The catalogue's count for this configuration (derived/verified rows of the digest's
    table, with the paper's QK statements)."""
    E, H, G, D = cfg.E, cfg.H, cfg.groups, cfg.head_dim
    C = D
    if cfg.rope is None:
        qk_head = sp.Integer(D) ** 2
    elif cfg.rope == "full":
        qk_head = claim("ID-P4.8").evaluate("U_qk_head", D=D)
    elif cfg.rope == "repeated":
        qk_head = claim("ID-P4.8").evaluate("U_qk_repeated_pair", D=D)
    else:
        qk_head = claim("ID-P4.8").evaluate("U_qk_partial", D=D, D_r=cfg.rope_dims) \
            if cfg.rope_dims > 0 else sp.Integer(D) ** 2
    U = G * qk_head + G * C ** 2                # QK and OV symmetries, one per KV group
    if cfg.bias:
        # inert key biases (D per KV head) + value biases aliased with b_O (C per KV head)
        U += G * D + G * C
    return int(U)


# ---------------------------------------------------------------------------------- diagnostics
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
