"""The model's parts: :class:`MLP`, RoPE, :class:`Attention`, :class:`FeedForward`,
:class:`RMSNorm`, :class:`TiedReadout` and the :class:`Block` they make one layer of."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NoReturn

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import ConfigError
from .config import LayerSpec, ModelConfig, _is_int
from .weights import HeadWeights, _as_tensor, _write


def _act(name: str):
    return {"relu": nn.ReLU(), "gelu": nn.GELU(), "identity": nn.Identity()}[name]


class MLP(nn.Sequential):
    """Linear layers with ``activation`` between them: widths ``d_in -> *hidden -> d_out``.

    ``linear(i)`` is the i-th linear map (0 = the first; activations are not counted) and
    ``set_linear(i, weight=, bias=)`` writes it with shape checks."""

    def __init__(
        self,
        d_in: int,
        hidden: Sequence[int],
        d_out: int,
        activation: str = "relu",
        bias: bool = True,
    ):
        mods: list[nn.Module] = []
        dims = [d_in, *hidden, d_out]
        for i in range(len(dims) - 1):
            mods.append(nn.Linear(dims[i], dims[i + 1], bias=bias))
            if i < len(dims) - 2:
                mods.append(_act(activation))
        super().__init__(*mods)

    @property
    def linears(self) -> list[nn.Linear]:
        """The linear maps, in order."""
        return [m for m in self if isinstance(m, nn.Linear)]

    def linear(self, i: int = 0, what: str = "MLP") -> nn.Linear:
        lin = self.linears
        if (
            not isinstance(i, (int, np.integer))
            or isinstance(i, bool)
            or not -len(lin) <= i < len(lin)
        ):
            raise ConfigError(
                f"{what} has {len(lin)} linear map{'s' * (len(lin) != 1)}: linear "
                f"must be in [0, {len(lin)}) (got {i!r})"
            )
        return lin[i]

    def set_linear(self, i: int = 0, weight=None, bias=None, what: str = "MLP") -> None:
        """Write the i-th linear map's ``weight`` (out x in) and/or ``bias`` (out,)."""
        lin = self.linear(i, what)
        _write(lin.weight, weight, f"{what} linear {i} weight")
        if bias is not None:
            if lin.bias is None:
                raise ConfigError(
                    f"{what} linear {i} has no bias (the model was configured without one)"
                )
            _write(lin.bias, bias, f"{what} linear {i} bias")


def rope_frequencies(n_pairs: int, base: float, explicit: Sequence[float] | None = None):
    if explicit is not None:
        if len(explicit) < n_pairs:
            raise ConfigError(f"rope_freqs needs at least {n_pairs} values (got {len(explicit)})")
        return torch.tensor(list(explicit)[:n_pairs], dtype=torch.float64)
    return base ** (-torch.arange(n_pairs, dtype=torch.float64) * 2 / max(2 * n_pairs, 1))


def apply_rope(x, freqs, positions):
    """Rotate consecutive pairs (2i, 2i+1) of the first 2·len(freqs) dims. x: (B, h, T, d)."""
    n = freqs.numel()
    if n == 0:
        return x
    ang = positions[:, None].to(x.dtype) * freqs[None, :].to(x.dtype)  # (T, n)
    cos, sin = ang.cos(), ang.sin()
    xr = x[..., : 2 * n].reshape(*x.shape[:-1], n, 2)
    x0, x1 = xr[..., 0], xr[..., 1]
    rot = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).reshape(
        *x.shape[:-1], 2 * n
    )
    return torch.cat((rot, x[..., 2 * n :]), dim=-1)


class Attention(nn.Module):
    """Multi-head attention; W_Q, W_K ∈ R^{h·n×E} (rows of head i: i·n..(i+1)·n),
    W_O ∈ R^{E×h·c}."""

    freqs: torch.Tensor  # RoPE frequencies (a buffer; empty without RoPE)

    def __init__(self, cfg: ModelConfig, spec: LayerSpec):
        super().__init__()
        E = cfg.width
        # LayerSpec.__post_init__ fills value_dim and kv_groups in
        assert spec.value_dim is not None and spec.kv_groups is not None
        self.h, self.n, self.c, self.g = spec.heads, spec.head_dim, spec.value_dim, spec.kv_groups
        self.q = nn.Linear(E, self.h * self.n, bias=cfg.bias)
        self.k = nn.Linear(E, self.g * self.n, bias=cfg.bias)
        self.v = nn.Linear(E, self.g * self.c, bias=cfg.bias)
        self.o = nn.Linear(self.h * self.c, E, bias=cfg.bias)
        self.scale = cfg.attn_scale if cfg.attn_scale is not None else 1.0 / math.sqrt(self.n)
        rd = 0 if cfg.rope is None else (self.n if cfg.rope == "full" else int(cfg.rope))
        self.register_buffer(
            "freqs", rope_frequencies(rd // 2, cfg.rope_base, cfg.rope_freqs), persistent=False
        )

    def set_head(self, i: int, q=None, k=None, v=None, o=None):
        """Set head i's blocks: q, k of shape (n, E); v (c, E); o (E, c). For GQA, k and v set
        the KV head of head i's group."""
        if not _is_int(i) or not 0 <= i < self.h:
            raise ConfigError(f"head index must be in [0, {self.h}) (got {i!r})")
        gi = i // (self.h // self.g)
        with torch.no_grad():
            for name, blk, rows, w in (
                ("q", q, slice(i * self.n, (i + 1) * self.n), self.q),
                ("k", k, slice(gi * self.n, (gi + 1) * self.n), self.k),
                ("v", v, slice(gi * self.c, (gi + 1) * self.c), self.v),
            ):
                if blk is None:
                    continue
                t = _as_tensor(blk, w.weight)
                exp = tuple(w.weight[rows].shape)
                if tuple(t.shape) != exp:
                    raise ConfigError(
                        f"head {i} {name} block must have shape {exp} (got {tuple(t.shape)})"
                    )
                w.weight[rows] = t
            if o is not None:
                t = _as_tensor(o, self.o.weight)
                exp = tuple(self.o.weight[:, i * self.c : (i + 1) * self.c].shape)
                if tuple(t.shape) != exp:
                    raise ConfigError(
                        f"head {i} o block must have shape {exp} (got {tuple(t.shape)})"
                    )
                self.o.weight[:, i * self.c : (i + 1) * self.c] = t

    def head_weights(self, i: int) -> HeadWeights:
        """Copies of head i's blocks: q, k (n, E), v (c, E), o (E, c) (for GQA, k and v are its
        group's KV head)."""
        if not _is_int(i) or not 0 <= i < self.h:
            raise ConfigError(f"head index must be in [0, {self.h}) (got {i!r})")
        gi = i // (self.h // self.g)
        with torch.no_grad():
            return HeadWeights(
                q=self.q.weight[i * self.n : (i + 1) * self.n].clone(),
                k=self.k.weight[gi * self.n : (gi + 1) * self.n].clone(),
                v=self.v.weight[gi * self.c : (gi + 1) * self.c].clone(),
                o=self.o.weight[:, i * self.c : (i + 1) * self.c].clone(),
            )

    def _qkv(self, x, positions, n_query: int | None = None):
        """Queries of the last ``n_query`` tokens (all when None), keys and values of all."""
        B, T, _ = x.shape
        xq = x if n_query is None else x[:, T - n_query :]
        Tq = xq.shape[1]
        q = self.q(xq).view(B, Tq, self.h, self.n).transpose(1, 2)  # (B, h, Tq, n)
        k = self.k(x).view(B, T, self.g, self.n).transpose(1, 2)  # (B, g, T, n)
        v = self.v(x).view(B, T, self.g, self.c).transpose(1, 2)  # (B, g, T, c)
        if self.freqs.numel():
            q = apply_rope(q, self.freqs, positions[T - Tq :])
            k = apply_rope(k, self.freqs, positions)
        if self.g != self.h:
            rep = self.h // self.g
            k = k.repeat_interleave(rep, dim=1)  # (B, h, T, n)
            v = v.repeat_interleave(rep, dim=1)  # (B, h, T, c)
        return q, k, v

    #: compute a one-query layer in the factored form (:meth:`_one_query`); set by the training
    #: engine while it trains (``TrainConfig(engine="fast")``), off otherwise
    factored: bool = False

    def _one_query(self, x, mask):
        """The last token's attention output without the keys and values of every token, the
        same function as the projected form: the logits of head i are ``x_t · (W_K,iᵀ q_i)``
        (plus ``q_i · b_K,i``, the same for every t) and its output ``W_V,i (Σ_t a_t x_t) +
        b_V,i`` (the weights sum to 1). Per token it costs h·E multiply-adds twice instead of
        (g·n + g·c)·E: at the head-count cell (E = 32, h = 4, n = c = 8) 256 against 512, and
        no (B, h, T, n) key and value tensors (nor their gradients) exist. No RoPE (the caller
        checks)."""
        B, T, E = x.shape
        h, n, c, rep = self.h, self.n, self.c, self.h // self.g
        q = self.q(x[:, -1]).view(B, h, n)
        wk = self.k.weight.view(self.g, n, E)
        wv = self.v.weight.view(self.g, c, E)
        if rep != 1:
            wk, wv = wk.repeat_interleave(rep, dim=0), wv.repeat_interleave(rep, dim=0)
        u = torch.einsum("bhn,hne->bhe", q, wk) * self.scale  # (B, h, E)
        logits = torch.bmm(u, x.transpose(1, 2))  # (B, h, T)
        if self.k.bias is not None:
            bk = self.k.bias.view(self.g, n)
            bk = bk.repeat_interleave(rep, dim=0) if rep != 1 else bk
            logits = logits + (torch.einsum("bhn,hn->bh", q, bk) * self.scale)[..., None]
        if mask is not None:
            logits = logits.masked_fill(~mask[-1], float("-inf"))
        att = torch.softmax(logits, dim=-1)  # log-space: softmax subtracts the row max
        z = torch.bmm(att, x)  # (B, h, E)
        y = torch.einsum("bhe,hce->bhc", z, wv)  # (B, h, c)
        if self.v.bias is not None:
            bv = self.v.bias.view(self.g, c)
            y = y + (bv.repeat_interleave(rep, dim=0) if rep != 1 else bv)
        return self.o(y.reshape(B, 1, h * c)), None

    def forward(self, x, mask, positions, need_weights: bool = False, n_query: int | None = None):
        """Attention output for every token, or only for the last ``n_query`` tokens (the CLS
        read-out needs one row of the last layer: O(T) instead of O(T²), same values)."""
        if self.factored and n_query == 1 and not need_weights and not self.freqs.numel():
            return self._one_query(x, mask)
        B = x.shape[0]
        q, k, v = self._qkv(x, positions, n_query)
        T = q.shape[2]
        if mask is not None and n_query is not None:
            mask = mask[mask.shape[0] - n_query :]  # (Tq, T)
        if need_weights:
            # manual path: log-space softmax (torch.softmax subtracts the row max)
            logits = (q @ k.transpose(-2, -1)) * self.scale  # (B, h, T, T)
            if mask is not None:
                logits = logits.masked_fill(~mask, float("-inf"))
            att = torch.softmax(logits, dim=-1)
            y = att @ v  # (B, h, T, c)
        else:
            att = None
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)
        y = y.transpose(1, 2).reshape(B, T, self.h * self.c)  # (B, T, h·c)
        return self.o(y), att


class FeedForward(nn.Module):
    """FFN block: ReLU/GELU MLP of any depth, or a gated one (SwiGLU, bilinear = GLU with
    identity)."""

    def __init__(self, cfg: ModelConfig, hidden: Sequence[int]):
        super().__init__()
        E = cfg.width
        self.kind = cfg.ffn_kind
        if self.kind in ("swiglu", "bilinear"):
            if len(hidden) != 1:
                raise ConfigError(
                    f"ffn_kind={self.kind} takes exactly one hidden width (got {tuple(hidden)})"
                )
            self.w1 = nn.Linear(E, hidden[0], bias=cfg.ffn_bias)
            self.w3 = nn.Linear(E, hidden[0], bias=cfg.ffn_bias)
            self.w2 = nn.Linear(hidden[0], E, bias=cfg.ffn_bias)
        else:
            self.mlp = MLP(E, hidden, E, cfg.ffn_kind, bias=cfg.ffn_bias)

    @property
    def gated(self) -> bool:
        return self.kind in ("swiglu", "bilinear")

    def set_linear(self, i: int = 0, weight=None, bias=None, what: str = "FFN") -> None:
        """Write the i-th linear map of a ReLU/GELU FFN (see :meth:`MLP.set_linear`)."""
        if self.gated:
            raise ConfigError(
                f"{what} is gated (ffn_kind={self.kind}): set its w1, w3, w2 with set_gated_ffn"
            )
        self.mlp.set_linear(i, weight, bias, what)

    def set_gated(
        self, w1=None, w3=None, w2=None, b1=None, b3=None, b2=None, what: str = "FFN"
    ) -> None:
        """Write a gated FFN ``w2(act(w1 x) * w3 x)``: w1, w3 (hidden, E), w2 (E, hidden) and
        their biases."""
        if not self.gated:
            raise ConfigError(
                f"{what} is not gated (ffn_kind={self.kind}): set its linear maps with set_ffn"
            )
        for name, lin, w, b in (
            ("w1", self.w1, w1, b1),
            ("w3", self.w3, w3, b3),
            ("w2", self.w2, w2, b2),
        ):
            _write(lin.weight, w, f"{what} {name} weight")
            if b is not None:
                if lin.bias is None:
                    raise ConfigError(f"{what} {name} has no bias (ffn_bias=False)")
                _write(lin.bias, b, f"{what} {name} bias")

    def forward(self, x):
        if self.kind == "swiglu":
            return self.w2(F.silu(self.w1(x)) * self.w3(x))
        if self.kind == "bilinear":
            return self.w2(self.w1(x) * self.w3(x))
        return self.mlp(x)


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x²) + eps) · weight`` over the last dimension (a learned gain, no bias,
    no centring), computed in the input's dtype."""

    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _norm(cfg: ModelConfig) -> nn.Module:
    if cfg.rmsnorm:
        return RMSNorm(cfg.width, cfg.rms_eps)
    return nn.LayerNorm(cfg.width) if cfg.layernorm else nn.Identity()


class TiedReadout(nn.Module):
    """The read-out of a model with ``tie_embeddings=True``: ``h @ W_embed (+ bias)``, where
    ``W_embed`` (E x d_in) is the embedding's weight. It holds no weight of its own (one tensor,
    counted once, under ``embed``); only its optional bias is a parameter."""

    _embedding: nn.Linear  # the embedding's linear map (not registered here)

    def __init__(self, embedding: nn.Linear, d_out: int, bias: bool):
        super().__init__()
        # a reference, not a registered submodule: the weight belongs to the embedding
        object.__setattr__(self, "_embedding", embedding)
        if bias:
            self.bias = nn.Parameter(torch.zeros(d_out))
        else:
            self.register_parameter("bias", None)

    @property
    def weight(self) -> torch.Tensor:
        """The read-out matrix (d_out x E): the embedding's weight transposed (a view)."""
        return self._embedding.weight.t()

    def _refuse(self, what: str) -> NoReturn:
        raise ConfigError(
            f"{what} is tied to the embedding (tie_embeddings=True): write the shared matrix "
            f"with set_embedding (its transpose is the read-out)"
        )

    def linear(self, i: int = 0, what: str = "the read-out") -> nn.Linear:
        self._refuse(what)

    def set_linear(self, i: int = 0, weight=None, bias=None, what: str = "the read-out"):
        if weight is not None:
            self._refuse(what)
        if bias is not None:
            if self.bias is None:
                raise ConfigError(f"{what} has no bias (the model was configured without one)")
            _write(self.bias, bias, f"{what} bias")

    def forward(self, h):
        return F.linear(h, self._embedding.weight.t(), self.bias)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, spec: LayerSpec):
        super().__init__()
        self.cfg = cfg
        self.attn = Attention(cfg, spec)
        self.ln1 = _norm(cfg)
        self.ffn = FeedForward(cfg, spec.ffn_hidden) if spec.ffn_hidden else None
        self.ln2 = _norm(cfg) if self.ffn is not None else nn.Identity()

    def forward(self, x, mask, positions, need_weights=False, n_query: int | None = None):
        a, att = self.attn(self.ln1(x), mask, positions, need_weights, n_query)
        if n_query is not None:
            x = x[:, x.shape[1] - n_query :]
        x = x + a if self.cfg.residual else a
        if self.ffn is not None:
            f = self.ffn(self.ln2(x))
            x = x + f if self.cfg.ffn_residual else f
        return x, att


def set_factored(model: nn.Module, on: bool) -> list:
    """Switch the factored one-query attention (:meth:`Attention._one_query`) of every attention
    module of ``model`` to ``on``; returns the modules whose setting changed (to switch back)."""
    changed = []
    for m in model.modules():
        if isinstance(m, Attention) and m.factored != on:
            m.factored = on
            changed.append(m)
    return changed
