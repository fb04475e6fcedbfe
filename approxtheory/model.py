"""One explicit transformer used by every construction and every training run.

Example::

    >>> import torch
    >>> from approxtheory.model import Transformer, ModelConfig, LayerSpec
    >>> cfg = ModelConfig(d_in=1, width=4, layers=[LayerSpec(heads=2, head_dim=2)], d_out=1)
    >>> m = Transformer(cfg)
    >>> m(torch.rand(3, 8, 1, dtype=torch.float64)).shape
    torch.Size([3, 1])

Layout (nanoGPT style, shapes in comments): tokens ``x`` of shape ``(B, T, d_in)`` go through the
encoder ``P_φ`` (an MLP of configurable depth over ``[x(t), onehot(t)]``) to the residual stream of
width E; a CLS token ``ĉ0`` is appended at position T+1 (the papers' read-out slot); each layer is
multi-head attention (its own head count, head width, value width, KV groups, RoPE) and an optional
feed-forward block; the read-out ``F̂`` maps the CLS state (or every token state) to the output.

The softmax runs over input tokens only by default (``cls_is_key=False``): the CLS token queries but
is not attended to, as in arXiv 2510.06662 eq. (4). Logits use ``attn_scale`` (default
1/sqrt(head_dim)); the constructions set it to 1 and put β into W_Q.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, asdict
from typing import Mapping, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .errors import ConfigError

__all__ = ["LayerSpec", "ModelConfig", "Transformer", "Attention", "FeedForward", "MLP"]

_ACTS = ("relu", "gelu", "identity")
_FFN_KINDS = ("relu", "gelu", "swiglu", "bilinear")


@dataclass
class LayerSpec:
    """One layer: attention with ``heads`` heads of query/key width ``head_dim`` (value width
    ``value_dim``, default ``head_dim``), ``kv_groups`` shared key/value heads (GQA/MQA; default one
    per head), and a feed-forward block with hidden widths ``ffn_hidden`` (empty: no FFN)."""

    heads: int
    head_dim: int
    value_dim: int | None = None
    kv_groups: int | None = None
    ffn_hidden: tuple[int, ...] = ()

    def __post_init__(self):
        for name in ("heads", "head_dim"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name} must be a positive integer (got {v!r})")
        if self.value_dim is None:
            self.value_dim = self.head_dim
        if self.value_dim < 1:
            raise ConfigError(f"value_dim must be a positive integer (got {self.value_dim})")
        if self.kv_groups is None:
            self.kv_groups = self.heads
        if self.kv_groups < 1 or self.heads % self.kv_groups:
            raise ConfigError(f"kv_groups must divide heads (got kv_groups={self.kv_groups}, "
                              f"heads={self.heads})")
        self.ffn_hidden = tuple(int(w) for w in self.ffn_hidden)
        if any(w < 1 for w in self.ffn_hidden):
            raise ConfigError(f"ffn_hidden widths must be positive (got {self.ffn_hidden})")


@dataclass
class ModelConfig:
    d_in: int
    width: int
    layers: list[LayerSpec]
    d_out: int = 1
    seq_len: int | None = None          # needed only for one-hot positions or learned positions
    positions: str = "none"             # "none", "onehot" (concatenated to x), "learned" (added)
    embed_hidden: tuple[int, ...] = ()  # encoder P_φ hidden widths (ReLU); () = linear
    embed_bias: bool = True
    head_hidden: tuple[int, ...] = ()   # read-out F̂ hidden widths
    head_activation: str = "relu"
    head_bias: bool = True
    readout: str = "cls"                # "cls" or "tokens"
    cls_is_key: bool = False
    causal: bool = False
    rope: str | int | None = None       # None, "full", or the number of rotated dims per head
    rope_base: float = 10000.0
    rope_freqs: tuple[float, ...] | None = None  # explicit per-pair frequencies (overrides base)
    bias: bool = False                  # biases on q, k, v, o
    residual: bool = True
    layernorm: bool = False             # pre-norm LayerNorm before attention and FFN
    ffn_kind: str = "relu"
    ffn_residual: bool = True
    ffn_bias: bool = True
    attn_scale: float | None = None     # None: 1/sqrt(head_dim)
    dtype: str = "float64"

    def __post_init__(self):
        self.layers = [l if isinstance(l, LayerSpec) else LayerSpec(**l) for l in self.layers]
        for name in ("d_in", "width", "d_out"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name} must be a positive integer (got {v!r})")
        if self.positions not in ("none", "onehot", "learned"):
            raise ConfigError(f"positions must be none, onehot or learned (got {self.positions!r})")
        if self.positions != "none" and (self.seq_len is None or self.seq_len < 1):
            raise ConfigError(f"positions={self.positions!r} needs seq_len (got {self.seq_len})")
        if self.readout not in ("cls", "tokens"):
            raise ConfigError(f"readout must be cls or tokens (got {self.readout!r})")
        if self.ffn_kind not in _FFN_KINDS:
            raise ConfigError(f"ffn_kind must be one of {', '.join(_FFN_KINDS)} "
                              f"(got {self.ffn_kind!r})")
        if self.head_activation not in _ACTS:
            raise ConfigError(f"head_activation must be one of {', '.join(_ACTS)}")
        if self.dtype not in ("float64", "float32"):
            raise ConfigError(f"dtype must be float64 or float32 (got {self.dtype!r})")
        for i, l in enumerate(self.layers):
            if self.rope is not None:
                rd = l.head_dim if self.rope == "full" else self.rope
                if not isinstance(rd, (int, np.integer)) or rd < 0 or rd > l.head_dim:
                    raise ConfigError(f"rope must be 'full' or a number of dims <= head_dim "
                                      f"(got {self.rope!r}, head_dim={l.head_dim} in layer {i})")
                if rd % 2:
                    raise ConfigError(f"RoPE needs an even number of rotated dims (got {rd} in "
                                      f"layer {i}, head_dim={l.head_dim})")
        if self.attn_scale is not None and not self.attn_scale > 0:
            raise ConfigError(f"attn_scale must be positive (got {self.attn_scale})")

    @property
    def torch_dtype(self):
        return torch.float64 if self.dtype == "float64" else torch.float32

    def to_dict(self) -> dict:
        d = asdict(self)
        return d


def _act(name: str):
    return {"relu": nn.ReLU(), "gelu": nn.GELU(), "identity": nn.Identity()}[name]


class MLP(nn.Sequential):
    """Linear layers with ``activation`` between them: widths ``d_in -> *hidden -> d_out``."""

    def __init__(self, d_in: int, hidden: Sequence[int], d_out: int, activation: str = "relu",
                 bias: bool = True):
        mods: list[nn.Module] = []
        dims = [d_in, *hidden, d_out]
        for i in range(len(dims) - 1):
            mods.append(nn.Linear(dims[i], dims[i + 1], bias=bias))
            if i < len(dims) - 2:
                mods.append(_act(activation))
        super().__init__(*mods)


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
        *x.shape[:-1], 2 * n)
    return torch.cat((rot, x[..., 2 * n:]), dim=-1)


class Attention(nn.Module):
    """Multi-head attention; W_Q, W_K ∈ R^{h·n×E} (rows of head i: i·n..(i+1)·n), W_O ∈ R^{E×h·c}."""

    def __init__(self, cfg: ModelConfig, spec: LayerSpec):
        super().__init__()
        E = cfg.width
        self.h, self.n, self.c, self.g = spec.heads, spec.head_dim, spec.value_dim, spec.kv_groups
        self.q = nn.Linear(E, self.h * self.n, bias=cfg.bias)
        self.k = nn.Linear(E, self.g * self.n, bias=cfg.bias)
        self.v = nn.Linear(E, self.g * self.c, bias=cfg.bias)
        self.o = nn.Linear(self.h * self.c, E, bias=cfg.bias)
        self.scale = cfg.attn_scale if cfg.attn_scale is not None else 1.0 / math.sqrt(self.n)
        rd = 0 if cfg.rope is None else (self.n if cfg.rope == "full" else int(cfg.rope))
        self.register_buffer("freqs", rope_frequencies(rd // 2, cfg.rope_base, cfg.rope_freqs),
                             persistent=False)

    def set_head(self, i: int, q=None, k=None, v=None, o=None):
        """Set head i's blocks: q, k of shape (n, E); v (c, E); o (E, c). For GQA, k and v set
        the KV head of head i's group."""
        if not 0 <= i < self.h:
            raise ConfigError(f"head index must be in [0, {self.h}) (got {i})")
        gi = i // (self.h // self.g)
        with torch.no_grad():
            for name, blk, rows, w in (("q", q, slice(i * self.n, (i + 1) * self.n), self.q),
                                       ("k", k, slice(gi * self.n, (gi + 1) * self.n), self.k),
                                       ("v", v, slice(gi * self.c, (gi + 1) * self.c), self.v)):
                if blk is None:
                    continue
                t = _as_tensor(blk, w.weight)
                exp = tuple(w.weight[rows].shape)
                if tuple(t.shape) != exp:
                    raise ConfigError(f"head {i} {name} block must have shape {exp} "
                                      f"(got {tuple(t.shape)})")
                w.weight[rows] = t
            if o is not None:
                t = _as_tensor(o, self.o.weight)
                exp = tuple(self.o.weight[:, i * self.c:(i + 1) * self.c].shape)
                if tuple(t.shape) != exp:
                    raise ConfigError(f"head {i} o block must have shape {exp} "
                                      f"(got {tuple(t.shape)})")
                self.o.weight[:, i * self.c:(i + 1) * self.c] = t

    def _qkv(self, x, positions, n_query: int | None = None):
        """Queries of the last ``n_query`` tokens (all when None), keys and values of all."""
        B, T, _ = x.shape
        xq = x if n_query is None else x[:, T - n_query:]
        Tq = xq.shape[1]
        q = self.q(xq).view(B, Tq, self.h, self.n).transpose(1, 2)  # (B, h, Tq, n)
        k = self.k(x).view(B, T, self.g, self.n).transpose(1, 2)   # (B, g, T, n)
        v = self.v(x).view(B, T, self.g, self.c).transpose(1, 2)   # (B, g, T, c)
        if self.freqs.numel():
            q = apply_rope(q, self.freqs, positions[T - Tq:])
            k = apply_rope(k, self.freqs, positions)
        if self.g != self.h:
            rep = self.h // self.g
            k = k.repeat_interleave(rep, dim=1)                      # (B, h, T, n)
            v = v.repeat_interleave(rep, dim=1)                      # (B, h, T, c)
        return q, k, v

    def forward(self, x, mask, positions, need_weights: bool = False,
                n_query: int | None = None):
        """Attention output for every token, or only for the last ``n_query`` tokens (the CLS
        read-out needs one row of the last layer: O(T) instead of O(T²), same values)."""
        B = x.shape[0]
        q, k, v = self._qkv(x, positions, n_query)
        T = q.shape[2]
        if mask is not None and n_query is not None:
            mask = mask[mask.shape[0] - n_query:]                      # (Tq, T)
        if need_weights:
            # manual path: log-space softmax (torch.softmax subtracts the row max)
            logits = (q @ k.transpose(-2, -1)) * self.scale           # (B, h, T, T)
            if mask is not None:
                logits = logits.masked_fill(~mask, float("-inf"))
            att = torch.softmax(logits, dim=-1)
            y = att @ v                                                # (B, h, T, c)
        else:
            att = None
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)
        y = y.transpose(1, 2).reshape(B, T, self.h * self.c)         # (B, T, h·c)
        return self.o(y), att


class FeedForward(nn.Module):
    """FFN block: ReLU/GELU MLP of any depth, or a gated one (SwiGLU, bilinear = GLU with identity)."""

    def __init__(self, cfg: ModelConfig, hidden: Sequence[int]):
        super().__init__()
        E = cfg.width
        self.kind = cfg.ffn_kind
        if self.kind in ("swiglu", "bilinear"):
            if len(hidden) != 1:
                raise ConfigError(f"ffn_kind={self.kind} takes exactly one hidden width "
                                  f"(got {tuple(hidden)})")
            self.w1 = nn.Linear(E, hidden[0], bias=cfg.ffn_bias)
            self.w3 = nn.Linear(E, hidden[0], bias=cfg.ffn_bias)
            self.w2 = nn.Linear(hidden[0], E, bias=cfg.ffn_bias)
        else:
            self.mlp = MLP(E, hidden, E, cfg.ffn_kind, bias=cfg.ffn_bias)

    def forward(self, x):
        if self.kind == "swiglu":
            return self.w2(F.silu(self.w1(x)) * self.w3(x))
        if self.kind == "bilinear":
            return self.w2(self.w1(x) * self.w3(x))
        return self.mlp(x)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, spec: LayerSpec):
        super().__init__()
        self.cfg = cfg
        self.attn = Attention(cfg, spec)
        self.ln1 = nn.LayerNorm(cfg.width) if cfg.layernorm else nn.Identity()
        self.ffn = FeedForward(cfg, spec.ffn_hidden) if spec.ffn_hidden else None
        self.ln2 = nn.LayerNorm(cfg.width) if (cfg.layernorm and self.ffn is not None) \
            else nn.Identity()

    def forward(self, x, mask, positions, need_weights=False, n_query: int | None = None):
        a, att = self.attn(self.ln1(x), mask, positions, need_weights, n_query)
        if n_query is not None:
            x = x[:, x.shape[1] - n_query:]
        x = x + a if self.cfg.residual else a
        if self.ffn is not None:
            f = self.ffn(self.ln2(x))
            x = x + f if self.cfg.ffn_residual else f
        return x, att


class Transformer(nn.Module):
    """The shared model. ``forward(x)`` takes ``(B, T, d_in)`` and returns ``(B, d_out)`` for a
    CLS read-out or ``(B, T, d_out)`` for per-token outputs; ``forward(x, return_attention=True)``
    also returns every layer's attention probabilities ``(B, h, T+1, T+1)`` from the manual path,
    whose outputs equal the fused path's."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        E = cfg.width
        d_embed_in = cfg.d_in + (cfg.seq_len if cfg.positions == "onehot" else 0)
        self.embed = MLP(d_embed_in, cfg.embed_hidden, E, "relu", bias=cfg.embed_bias)
        self.pos = nn.Parameter(torch.zeros(cfg.seq_len, E)) if cfg.positions == "learned" \
            else None
        self.cls = nn.Parameter(torch.zeros(E)) if cfg.readout == "cls" else None
        self.layers = nn.ModuleList([Block(cfg, s) for s in cfg.layers])
        self.head = MLP(E, cfg.head_hidden, cfg.d_out, cfg.head_activation, bias=cfg.head_bias)
        self.to(cfg.torch_dtype)

    # ----------------------------------------------------------------------------- weights
    def set_weights(self, weights: Mapping[str, object], strict: bool = False) -> None:
        """Set parameters by name (see ``dict(model.named_parameters())``) from numpy or torch
        arrays, with shape checks. ``strict=True`` requires every parameter to be given."""
        params = dict(self.named_parameters())
        for name, value in weights.items():
            if name not in params:
                close = [p for p in params if p.split(".")[-1] == name.split(".")[-1]][:4]
                raise ConfigError(f"no parameter named {name!r}" +
                                  (f"; similar: {', '.join(close)}" if close else ""))
            p = params[name]
            t = _as_tensor(value, p)
            if tuple(t.shape) != tuple(p.shape):
                raise ConfigError(f"{name} expects shape {tuple(p.shape)} (got {tuple(t.shape)})")
            with torch.no_grad():
                p.copy_(t)
        if strict:
            missing = sorted(set(params) - set(weights))
            if missing:
                raise ConfigError(f"strict=True but no value for: {', '.join(missing)}")

    def zero_(self) -> "Transformer":
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
        return self

    def count_params(self, parts: Sequence[str] | None = None) -> int:
        """Number of parameters, optionally only in the named top-level parts
        (``embed``, ``pos``, ``cls``, ``layers``, ``head``, or ``attn`` / ``ffn`` of all layers)."""
        total = 0
        for name, p in self.named_parameters():
            if parts is None:
                total += p.numel()
                continue
            segs = name.split(".")
            tags = {segs[0]} | ({segs[2]} if segs[0] == "layers" else set())
            if tags & set(parts):
                total += p.numel()
        return total

    # ----------------------------------------------------------------------------- forward
    def _mask(self, T_tot: int, device):
        cfg = self.cfg
        if cfg.cls_is_key and not cfg.causal:
            return None
        m = torch.ones(T_tot, T_tot, dtype=torch.bool, device=device)
        if cfg.causal:
            m = torch.tril(m)
        if self.cls is not None and not cfg.cls_is_key:
            m[:, -1] = False
            m[-1, -1] = cfg.cls_is_key  # CLS does not attend to itself either
        return m

    def embed_tokens(self, x):
        cfg = self.cfg
        B, T, _ = x.shape
        if cfg.positions != "none" and T != cfg.seq_len:
            raise ConfigError(f"this model was built for sequences of length {cfg.seq_len} "
                              f"(got T={T})")
        if cfg.positions == "onehot":
            eye = torch.eye(T, dtype=x.dtype, device=x.device).expand(B, T, T)
            x = torch.cat((x, eye), dim=-1)                            # (B, T, d_in + T)
        h = self.embed(x)                                              # (B, T, E)
        if self.pos is not None:
            h = h + self.pos
        return h

    def _input_stream(self, x):
        """Checked input -> residual stream with the CLS token appended, its mask and positions."""
        cfg = self.cfg
        if x.dim() != 3 or x.shape[-1] != cfg.d_in:
            raise ConfigError(f"input must have shape (batch, T, {cfg.d_in}) "
                              f"(got {tuple(x.shape)})")
        h = self.embed_tokens(x.to(cfg.torch_dtype))                   # (B, T, E)
        B, T, E = h.shape
        if self.cls is not None:
            h = torch.cat((h, self.cls.expand(B, 1, E)), dim=1)         # (B, T+1, E)
        positions = torch.arange(h.shape[1], device=h.device)
        return h, self._mask(h.shape[1], h.device), positions

    def forward(self, x, return_attention: bool = False):
        h, mask, positions = self._input_stream(x)
        atts = []
        for i, blk in enumerate(self.layers):
            # the CLS read-out uses only the CLS row of the last layer: compute just that row
            last_only = (self.cls is not None and not return_attention
                         and i == len(self.layers) - 1)
            h, att = blk(h, mask, positions, need_weights=return_attention,
                         n_query=1 if last_only else None)
            atts.append(att)
        out = self.head(h[:, -1] if self.cls is not None else h)      # (B, d_out) | (B, T, d_out)
        return (out, atts) if return_attention else out

    def hidden_states(self, x):
        """Residual stream after each layer: list of ``(B, T(+1), E)`` tensors."""
        h, mask, positions = self._input_stream(x)
        out = [h]
        for blk in self.layers:
            h, _ = blk(h, mask, positions)
            out.append(h)
        return out


def _as_tensor(value, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        t = value.detach()
    else:
        try:
            t = torch.as_tensor(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise ConfigError(f"weights must be numeric arrays ({e})") from None
    return t.to(dtype=like.dtype, device=like.device)
