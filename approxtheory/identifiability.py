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
           "sylvester_projection", "rebalance", "imbalance", "bias_aliasing", "rebalance_model",
           "register"]

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
    no_output: bool = False        # the paper's §3.2 single head: square W_V, no W_O (H = 1)

    def __post_init__(self):
        for name in ("E", "H"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a positive integer (got {v!r})")
        if not self.fat and self.E % self.H:
            raise ConfigError(f"H must divide E (got H={self.H}, E={self.E})")
        if self.no_output and (self.H != 1 or self.G not in (None, 1) or self.bias):
            raise ConfigError("the head without an output matrix is the paper's single head: "
                              f"it needs H = 1 and no biases (got H={self.H}, bias={self.bias})")
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
                     layers=[LayerSpec(heads=cfg.H, head_dim=D, kv_groups=cfg.groups,
                                       value_dim=cfg.E if cfg.no_output else D)],
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
        if cfg.no_output:
            m.layers[0].attn.o.weight.copy_(torch.eye(cfg.E))   # W_O fixed: not a parameter
    return m


def _attn_params(m: Transformer, cfg: AttentionConfig | None = None):
    skip = {"layers.0.attn.o.weight"} if cfg is not None and cfg.no_output else set()
    return {n: p for n, p in m.named_parameters() if n.startswith("layers.0.attn.")
            and n not in skip}


def unidentified_dim(cfg: AttentionConfig, n_seq: int = 12, seq_len: int = 7, seed: int = 0,
                     rtol: float = 1e-8) -> dict:
    """P - rank of the Jacobian of the layer's outputs w.r.t. its attention parameters."""
    from torch.func import functional_call, jacrev
    m = build_layer(cfg, seed)
    params = _attn_params(m, cfg)
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
        qk_head = claim("ID-P4.8").evaluate("U_qk_partial", D=D, D_r=cfg.rope_dims) \
            if cfg.rope_dims > 0 else sp.Integer(D) ** 2
    U = G * qk_head + G * C ** 2                # QK and OV symmetries, one per KV group
    if cfg.bias:
        # inert key biases (D per KV head) + value biases aliased with b_O (C per KV head)
        U += G * D + G * C
    return int(U)


# ---------------------------------------------------------------------------------- diagnostics
def bias_aliasing(cfg: AttentionConfig, seed: int = 0) -> dict:
    """Demonstrate the inert key bias and the value/output bias aliasing (ID-F4.7, ID-B4.7.2):
    max output change when b_K is replaced at random, and when δ_h is added to each b_V^h and
    Σ_h W_O^h δ_h subtracted from b_O; plus the largest |∂L/∂b_K| for a random loss."""
    if not cfg.bias:
        raise ConfigError("bias aliasing needs a configuration with biases (bias=True)")
    m = build_layer(cfg, seed)
    a = m.layers[0].attn
    g = torch.Generator().manual_seed(seed + 7)
    X = torch.randn(4, 6, cfg.E, generator=g, dtype=torch.float64)
    y0 = m(X)
    (y0 ** 2).sum().backward()
    grad_bk = float(a.k.bias.grad.abs().max())
    with torch.no_grad():
        y0 = y0.detach()
        a.k.bias.add_(10 * torch.randn(a.k.bias.shape, generator=g, dtype=torch.float64))
        key = float((m(X) - y0).abs().max())
        delta = torch.randn(a.v.bias.shape, generator=g, dtype=torch.float64)
        a.v.bias.add_(delta)
        rep = a.h // a.g
        full = delta.view(a.g, a.c).repeat_interleave(rep, dim=0).reshape(-1)   # per query head
        a.o.bias.sub_(a.o.weight @ full)
        value = float((m(X) - y0).abs().max())
    return {"key_bias_output_change": key, "key_bias_grad": grad_bk,
            "value_bias_aliasing_output_change": value}


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
    a = m.layers[layer].attn
    if a.g != a.h:
        raise ConfigError("rebalancing per head needs one KV head per query head (no GQA)")
    if a.freqs.numel():
        raise ConfigError("rebalancing with RoPE changes the function (the symmetry group is "
                          "smaller); not supported")
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


def _cmd(args) -> int:
    import json
    cfg = AttentionConfig(E=args.E, H=args.H, G=args.G, bias=args.bias, causal=args.causal,
                          rope=args.rope, fat=args.fat, no_output=args.no_output)
    r = unidentified_dim(cfg, seed=args.seed)
    r["config"] = {"E": cfg.E, "H": cfg.H, "G": cfg.groups, "bias": cfg.bias,
                   "causal": cfg.causal, "rope": cfg.rope, "fat": cfg.fat,
                   "no_output": cfg.no_output, "head_dim": cfg.head_dim}
    r["predicted_ratio"] = r["predicted"] / r["total"]
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"attention layer E={cfg.E} H={cfg.H} G={cfg.groups} head_dim={cfg.head_dim}"
          f"{' bias' if cfg.bias else ''}{' causal' if cfg.causal else ''}"
          f"{' rope=' + cfg.rope if cfg.rope else ''}{' fat' if cfg.fat else ''}"
          f"{' no-W_O' if cfg.no_output else ''}")
    print(f"  total parameters:       {r['total']}")
    print(f"  predicted unidentified: {r['predicted']}")
    print(f"  measured unidentified:  {r['measured']}  (P - rank of the Jacobian)")
    print(f"  ratio:                  {r['ratio']:.6f}")
    print(f"  singular-value gap:     {r['singular_value_gap']:.2e}")
    print("  " + ("predicted = measured" if r["predicted"] == r["measured"] else
                  "MISMATCH between prediction and measurement"))
    return 0


def register(sub) -> None:
    p = sub.add_parser("identifiability", help="unidentified dimension of an attention layer: "
                                               "catalogue count vs Jacobian rank")
    p.add_argument("--E", type=int, default=8, help="model width")
    p.add_argument("--H", type=int, default=2, help="heads")
    p.add_argument("--G", type=int, default=None, help="KV groups (GQA; default H)")
    p.add_argument("--bias", action="store_true")
    p.add_argument("--rope", default=None, help="full, partial:N or repeated")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--fat", action="store_true", help="head width E at any H")
    p.add_argument("--no-output", action="store_true",
                   help="the paper's single head: square W_V, no W_O (H = 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd)
