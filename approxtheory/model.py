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

Opt-in, off by default (a model without them is what it always was): ``rmsnorm`` (pre-norm
:class:`RMSNorm` instead of LayerNorm), ``final_norm`` (one more norm before the read-out) and
``tie_embeddings`` (the read-out is the embedding's matrix transposed, one parameter tensor:
:class:`TiedReadout`), which with ``rope``, ``ffn_kind="swiglu"`` and ``causal`` make the decoder
LM of the Prism paper (see ``approxtheory.experiments.prism_paired``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple, NoReturn, cast

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .errors import ConfigError

__all__ = [
    "LayerSpec",
    "ModelConfig",
    "Transformer",
    "Attention",
    "Block",
    "FeedForward",
    "MLP",
    "HeadWeights",
    "ResidualLayout",
    "RMSNorm",
    "TiedReadout",
]

_ACTS = ("relu", "gelu", "identity")
_FFN_KINDS = ("relu", "gelu", "swiglu", "bilinear")
_BOOL_FIELDS = (
    "embed_bias",
    "head_bias",
    "cls_is_key",
    "causal",
    "bias",
    "residual",
    "layernorm",
    "ffn_residual",
    "ffn_bias",
    "rmsnorm",
    "final_norm",
    "tie_embeddings",
)


def _is_int(v) -> bool:
    """An integer that is not a bool (numpy integers count; 2.0, "2" and True do not)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _pos_int(name: str, v) -> int:
    if not _is_int(v) or v < 1:
        raise ConfigError(f"{name} must be a positive integer (got {v!r})")
    return int(v)


def _widths(name: str, v) -> tuple[int, ...]:
    """A sequence of positive integers (hidden widths) as a tuple of ints."""
    if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__iter__"):
        raise ConfigError(
            f"{name} must be a sequence of positive integers (hidden widths; () for none) "
            f"(got {v!r})"
        )
    v = tuple(v)
    if any(not _is_int(w) or w < 1 for w in v):
        raise ConfigError(f"{name} widths must be positive integers (got {tuple(v)!r})")
    return tuple(int(w) for w in v)


def _finite_real(v) -> bool:
    return (
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_))
        and math.isfinite(float(v))
    )


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
        self.heads = _pos_int("heads", self.heads)
        self.head_dim = _pos_int("head_dim", self.head_dim)
        self.value_dim = (
            self.head_dim if self.value_dim is None else _pos_int("value_dim", self.value_dim)
        )
        self.kv_groups = (
            self.heads if self.kv_groups is None else _pos_int("kv_groups", self.kv_groups)
        )
        if self.heads % self.kv_groups:
            raise ConfigError(
                f"kv_groups must divide heads (got kv_groups={self.kv_groups}, heads={self.heads})"
            )
        self.ffn_hidden = _widths("ffn_hidden", self.ffn_hidden)


def _layer_specs(layers) -> list[LayerSpec]:
    """``layers`` as a list of LayerSpecs (mappings of LayerSpec's fields are converted)."""
    if isinstance(layers, (str, bytes, Mapping, LayerSpec)) or not hasattr(layers, "__iter__"):
        raise ConfigError(
            f"layers must be a list of LayerSpecs (or mappings of their fields) (got {layers!r})"
        )
    out = []
    for i, s in enumerate(layers):
        if isinstance(s, LayerSpec):
            out.append(s)
            continue
        if not isinstance(s, Mapping):
            raise ConfigError(
                f"layer {i} must be a LayerSpec or a mapping of its fields (got {s!r})"
            )
        fields = {"heads", "head_dim", "value_dim", "kv_groups", "ffn_hidden"}
        unknown = sorted(map(str, set(s) - fields))
        missing = sorted({"heads", "head_dim"} - set(s))
        if unknown or missing:
            raise ConfigError(
                f"layer {i}: "
                + "; ".join(
                    ([f"unknown field(s) {', '.join(unknown)}"] if unknown else [])
                    + ([f"missing {', '.join(missing)}"] if missing else [])
                )
                + f" (LayerSpec's fields: {', '.join(sorted(fields))})"
            )
        out.append(LayerSpec(**s))
    return out


#: the option fields' allowed values (validated in ``ModelConfig.__post_init__``)
Positions = Literal["none", "onehot", "learned"]
Readout = Literal["cls", "tokens"]
Activation = Literal["relu", "gelu", "identity"]
FFNKind = Literal["relu", "gelu", "swiglu", "bilinear"]
DType = Literal["float64", "float32"]
Norm = Literal["none", "layernorm", "rmsnorm"]


@dataclass
class ModelConfig:
    """The one model's architecture: every construction and every training run is a
    ``ModelConfig`` turned into a :class:`Transformer`.

    Sizes: ``d_in`` input features per token, ``width`` the residual stream E, ``layers`` one
    :class:`LayerSpec` per layer (heads, head width, value width, KV groups, FFN widths; layers
    may differ), ``d_out`` outputs, ``seq_len`` T (needed for one-hot or learned positions and
    for RoPE tables only).

    Encoder and read-out: ``positions`` ("none"; "onehot": onehot(t) concatenated to x;
    "learned": a learned table added), ``embed_hidden`` / ``embed_bias`` (the encoder MLP's hidden
    widths; () is linear), ``head_hidden`` / ``head_activation`` / ``head_bias`` (the read-out
    MLP), ``readout`` ("cls": the CLS slot's state; "tokens": every token's), ``cls_is_key``
    (whether tokens may attend to the CLS slot), ``tie_embeddings`` (read-out = embedding^T).

    Attention: ``causal``, ``rope`` (None, "full", or rotated dims per head), ``rope_base`` /
    ``rope_freqs``, ``bias`` (biases on q, k, v, o), ``attn_scale`` (None: 1/sqrt(head_dim);
    the constructions use 1 and put beta into W_Q).

    Blocks: ``residual``, ``ffn_kind`` ("relu", "gelu", "swiglu", "bilinear"), ``ffn_residual``,
    ``ffn_bias``; one pre-norm, named by :attr:`norm` ("none", "layernorm" or "rmsnorm"; set
    through the two flags ``layernorm`` / ``rmsnorm``, which are exclusive), ``rms_eps``,
    ``final_norm`` (one more norm of the same kind before the read-out).

    ``dtype``: "float64" (every measured error) or "float32" (training at scale).
    :meth:`decoder_lm` is the named preset for the Prism paper's decoder LM.

    Every field is validated on construction (a :class:`~approxtheory.errors.ConfigError` says
    what was wrong and what is allowed)."""

    d_in: int
    width: int
    layers: list[LayerSpec]
    d_out: int = 1
    seq_len: int | None = None  # needed only for one-hot positions or learned positions
    positions: Positions = "none"  # "none", "onehot" (concatenated to x), "learned" (added)
    embed_hidden: tuple[int, ...] = ()  # encoder P_φ hidden widths (ReLU); () = linear
    embed_bias: bool = True
    head_hidden: tuple[int, ...] = ()  # read-out F̂ hidden widths
    head_activation: Activation = "relu"
    head_bias: bool = True
    readout: Readout = "cls"  # "cls" or "tokens"
    cls_is_key: bool = False
    causal: bool = False
    rope: str | int | None = None  # None, "full", or the number of rotated dims per head
    rope_base: float = 10000.0
    rope_freqs: tuple[float, ...] | None = None  # explicit per-pair frequencies (overrides base)
    bias: bool = False  # biases on q, k, v, o
    residual: bool = True
    layernorm: bool = False  # pre-norm LayerNorm before attention and FFN
    ffn_kind: FFNKind = "relu"
    ffn_residual: bool = True
    ffn_bias: bool = True
    attn_scale: float | None = None  # None: 1/sqrt(head_dim)
    dtype: DType = "float64"
    # opt-in (the defaults leave every model as it was): pre-norm RMSNorm instead of LayerNorm,
    # a final norm (of the same kind) before the read-out, and a read-out tied to the embedding
    rmsnorm: bool = False  # pre-norm RMSNorm (gain, no bias) before attention and FFN
    rms_eps: float = 1e-6  # RMSNorm's ε: x / sqrt(mean(x²) + ε) · g
    final_norm: bool = False  # one more norm after the last layer (needs layernorm or rmsnorm)
    tie_embeddings: bool = False  # read-out weight = the embedding's weight, transposed

    @property
    def norm(self) -> Norm:
        """The pre-norm kind: "none", "layernorm" or "rmsnorm" (the two flags are exclusive)."""
        return "rmsnorm" if self.rmsnorm else "layernorm" if self.layernorm else "none"

    @classmethod
    def decoder_lm(
        cls, vocab: int, width: int, layers: list, seq_len: int, **overrides
    ) -> ModelConfig:
        """The Prism paper's decoder LM (arXiv 2606.27449): token in, token out (``readout``
        "tokens"), causal, RoPE on every head dim, pre-norm RMSNorm plus a final one, SwiGLU
        FFNs, tied embeddings, no biases anywhere, float32. ``layers`` gives each layer's heads,
        head width and FFN width; ``overrides`` replace any field (e.g. ``tie_embeddings=False``).
        """
        fields: dict[str, Any] = dict(
            d_in=vocab,
            width=width,
            layers=layers,
            d_out=vocab,
            seq_len=seq_len,
            readout="tokens",
            causal=True,
            rope="full",
            rmsnorm=True,
            final_norm=True,
            tie_embeddings=True,
            ffn_kind="swiglu",
            ffn_bias=False,
            bias=False,
            embed_bias=False,
            head_bias=False,
            dtype="float32",
        )
        fields.update(overrides)
        return cls(**fields)

    def __repr__(self) -> str:
        """One line: the sizes, the layers (heads x head_dim, value width and KV groups where
        they differ, the FFN widths; runs of equal layers as ``N*[...]``) and only the fields
        that differ from their defaults. ``dataclasses.asdict(cfg)`` gives every field."""
        from dataclasses import MISSING, fields

        runs: list[list] = []
        for spec in self.layers:
            text = f"{spec.heads}x{spec.head_dim}"
            if spec.value_dim not in (None, spec.head_dim):
                text += f" v{spec.value_dim}"
            if spec.kv_groups not in (None, spec.heads):
                text += f" kv{spec.kv_groups}"
            if spec.ffn_hidden:
                text += f" ffn{','.join(map(str, spec.ffn_hidden))}"
            if runs and runs[-1][0] == text:
                runs[-1][1] += 1
            else:
                runs.append([text, 1])
        layers = ", ".join(f"{n}*[{t}]" if n > 1 else f"[{t}]" for t, n in runs)
        parts = [f"d_in={self.d_in}", f"width={self.width}", f"layers={layers}"]
        for f in fields(self):
            if f.name in ("d_in", "width", "layers"):
                continue
            v = getattr(self, f.name)
            default = f.default if f.default is not MISSING else None
            if isinstance(default, tuple) and isinstance(v, (list, tuple)):
                v = tuple(v)
            if v != default or f.name == "d_out":
                parts.append(f"{f.name}={v!r}")
        text = f"ModelConfig({', '.join(parts)})"
        return text if len(text) <= 300 else text[:296] + "...)"

    def __post_init__(self):
        self.layers = _layer_specs(self.layers)
        for name in ("d_in", "width", "d_out"):
            setattr(self, name, _pos_int(name, getattr(self, name)))
        for name in _BOOL_FIELDS:
            v = getattr(self, name)
            if not isinstance(v, (bool, np.bool_)):
                raise ConfigError(f"{name} must be True or False (got {v!r})")
            setattr(self, name, bool(v))
        if not isinstance(self.positions, str) or self.positions not in (
            "none",
            "onehot",
            "learned",
        ):
            raise ConfigError(f"positions must be none, onehot or learned (got {self.positions!r})")
        if self.seq_len is not None:
            if not _is_int(self.seq_len) or self.seq_len < 1:
                raise ConfigError(
                    f"seq_len must be None or a positive integer (got {self.seq_len!r})"
                )
            self.seq_len = int(self.seq_len)
        if self.positions != "none" and self.seq_len is None:
            raise ConfigError(f"positions={self.positions!r} needs seq_len (got {self.seq_len})")
        self.embed_hidden = _widths("embed_hidden", self.embed_hidden)
        self.head_hidden = _widths("head_hidden", self.head_hidden)
        if not isinstance(self.readout, str) or self.readout not in ("cls", "tokens"):
            raise ConfigError(f"readout must be cls or tokens (got {self.readout!r})")
        if not isinstance(self.ffn_kind, str) or self.ffn_kind not in _FFN_KINDS:
            raise ConfigError(
                f"ffn_kind must be one of {', '.join(_FFN_KINDS)} (got {self.ffn_kind!r})"
            )
        if not isinstance(self.head_activation, str) or self.head_activation not in _ACTS:
            raise ConfigError(
                f"head_activation must be one of {', '.join(_ACTS)} (got {self.head_activation!r})"
            )
        if not isinstance(self.dtype, str) or self.dtype not in ("float64", "float32"):
            raise ConfigError(f"dtype must be float64 or float32 (got {self.dtype!r})")
        if self.rope is not None and not (
            (isinstance(self.rope, str) and self.rope == "full") or _is_int(self.rope)
        ):
            raise ConfigError(
                f"rope must be None, 'full' or a number of rotated dims per head "
                f"(got {self.rope!r})"
            )
        if _is_int(self.rope):
            self.rope = int(cast(int, self.rope))
        if not _finite_real(self.rope_base) or not self.rope_base > 0:
            raise ConfigError(
                f"rope_base must be a finite number > 0 (RoPE's frequencies are "
                f"rope_base^(-2i/d)) (got {self.rope_base!r})"
            )
        if self.rope_freqs is not None:
            freqs = self.rope_freqs
            if isinstance(freqs, (str, bytes, Mapping)) or not hasattr(freqs, "__iter__"):
                raise ConfigError(
                    f"rope_freqs must be None or a sequence of finite numbers (got {freqs!r})"
                )
            freqs = tuple(freqs)
            if not all(_finite_real(f) for f in freqs):
                raise ConfigError(
                    f"rope_freqs must be finite numbers (one per rotated pair) (got {freqs!r})"
                )
            self.rope_freqs = tuple(float(f) for f in freqs)
        for i, spec in enumerate(self.layers):
            if self.rope is not None:
                rd = spec.head_dim if self.rope == "full" else cast(int, self.rope)
                if not _is_int(rd) or rd < 0 or rd > spec.head_dim:
                    raise ConfigError(
                        f"rope must be 'full' or a number of dims <= head_dim "
                        f"(got {self.rope!r}, head_dim={spec.head_dim} in layer {i})"
                    )
                if rd % 2:
                    raise ConfigError(
                        f"RoPE needs an even number of rotated dims (got {rd} in "
                        f"layer {i}, head_dim={spec.head_dim})"
                    )
                if self.rope_freqs is not None and len(self.rope_freqs) < rd // 2:
                    raise ConfigError(
                        f"rope_freqs needs at least {rd // 2} values (one per rotated pair of "
                        f"layer {i}) (got {len(self.rope_freqs)})"
                    )
        if self.attn_scale is not None:
            if not _finite_real(self.attn_scale) or not self.attn_scale > 0:
                raise ConfigError(
                    f"attn_scale must be None (1/sqrt(head_dim)) or a finite number > 0 "
                    f"(got {self.attn_scale!r})"
                )
            self.attn_scale = float(self.attn_scale)
        if self.rmsnorm and self.layernorm:
            raise ConfigError("layernorm and rmsnorm are exclusive: pick one pre-norm")
        if self.final_norm and not (self.layernorm or self.rmsnorm):
            raise ConfigError(
                "final_norm needs a norm kind: set layernorm=True or rmsnorm=True as well"
            )
        eps = self.rms_eps
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < math.inf:
            raise ConfigError(f"rms_eps must be a finite number > 0 (got {eps!r})")
        if self.tie_embeddings:
            why = [
                msg
                for bad, msg in (
                    (self.embed_hidden != (), f"embed_hidden=() (got {self.embed_hidden})"),
                    (self.head_hidden != (), f"head_hidden=() (got {self.head_hidden})"),
                    (
                        self.positions == "onehot",
                        "positions other than onehot (the embedding "
                        "would read d_in + seq_len columns)",
                    ),
                    (
                        self.d_out != self.d_in,
                        f"d_out == d_in (got d_in={self.d_in}, d_out={self.d_out})",
                    ),
                )
                if bad
            ]
            if why:
                raise ConfigError(
                    "tie_embeddings=True reads out with the embedding's one linear map "
                    "transposed, so it needs " + "; ".join(why)
                )

    @property
    def torch_dtype(self):
        return torch.float64 if self.dtype == "float64" else torch.float32

    def to_dict(self) -> dict:
        d = asdict(self)
        return d


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

    def forward(self, x, mask, positions, need_weights: bool = False, n_query: int | None = None):
        """Attention output for every token, or only for the last ``n_query`` tokens (the CLS
        read-out needs one row of the last layer: O(T) instead of O(T²), same values)."""
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


class Transformer(nn.Module):
    """The shared model. ``forward(x)`` takes ``(B, T, d_in)`` and returns ``(B, d_out)`` for a
    CLS read-out or ``(B, T, d_out)`` for per-token outputs; ``forward(x, return_attention=True)``
    also returns every layer's attention probabilities ``(B, h, T+1, T+1)`` from the manual path,
    whose outputs equal the fused path's.

    The input is a torch tensor or a real numpy array (converted to a tensor of the model's
    dtype: the output is a torch tensor either way); anything else is a ConfigError. Building
    the model first checks that its parameters fit the memory limit
    (:func:`approxtheory.resources.require_model`): a ResourceLimitError before allocating."""

    def __init__(self, cfg: ModelConfig):
        if not isinstance(cfg, ModelConfig):
            raise ConfigError(f"Transformer takes a ModelConfig (got {type(cfg).__name__})")
        from .resources import require_model

        # refuse a model whose parameters cannot fit before allocating any of them
        require_model(
            cfg, what=f"the model's parameters (width {cfg.width}, {len(cfg.layers)} layers)"
        )
        super().__init__()
        self.cfg = cfg
        E = cfg.width
        seq_len = cfg.seq_len or 0  # ModelConfig checks it is set (>= 1) when positions are used
        d_embed_in = cfg.d_in + (seq_len if cfg.positions == "onehot" else 0)
        self.embed = MLP(d_embed_in, cfg.embed_hidden, E, "relu", bias=cfg.embed_bias)
        self.pos = nn.Parameter(torch.zeros(seq_len, E)) if cfg.positions == "learned" else None
        self.cls = nn.Parameter(torch.zeros(E)) if cfg.readout == "cls" else None
        self.layers = nn.ModuleList([Block(cfg, s) for s in cfg.layers])
        self.ln_f: nn.Module | None = _norm(cfg) if cfg.final_norm else None
        self.head: MLP | TiedReadout
        if cfg.tie_embeddings:
            self.head = TiedReadout(self.embed.linear(0), cfg.d_out, cfg.head_bias)
        else:
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
                raise ConfigError(
                    f"no parameter named {name!r}"
                    + (f"; similar: {', '.join(close)}" if close else "")
                )
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

    # ------------------------------------------------------------------ the editing surface
    # Named, shape-checked access to every part of the model; constructions and analyses use
    # these instead of parameter paths ("embed.0.weight") or reaching into ``layers[i]``.
    def _layer_index(self, layer: int) -> int:
        L = len(self.layers)
        if (
            not isinstance(layer, (int, np.integer))
            or isinstance(layer, bool)
            or not -L <= layer < L
        ):
            raise ConfigError(f"layer must be in [0, {L}) for this {L}-layer model (got {layer!r})")
        return int(layer) % L

    def block(self, layer: int) -> Block:
        """Layer ``layer``'s block (attention + optional FFN); negative counts from the end."""
        return cast(Block, self.layers[self._layer_index(layer)])

    def attention(self, layer: int) -> Attention:
        """Layer ``layer``'s multi-head attention (W_Q, W_K, W_V, W_O as ``.q .k .v .o``)."""
        return self.block(layer).attn

    def feed_forward(self, layer: int) -> FeedForward:
        """Layer ``layer``'s feed-forward block; ConfigError if the layer has none."""
        ffn = self.block(layer).ffn
        if ffn is None:
            raise ConfigError(
                f"layer {self._layer_index(layer)} has no feed-forward block "
                f"(its LayerSpec has ffn_hidden=())"
            )
        return ffn

    def set_head(self, layer: int, head: int, *, q=None, k=None, v=None, o=None) -> None:
        """Set head ``head`` of layer ``layer``: q, k of shape (head_dim, E), v (value_dim, E),
        o (E, value_dim); None leaves a block as it is (see :meth:`Attention.set_head`)."""
        self.attention(layer).set_head(head, q=q, k=k, v=v, o=o)

    def head_weights(self, layer: int, head: int) -> HeadWeights:
        """Copies of the q, k, v, o blocks of head ``head`` in layer ``layer``."""
        return self.attention(layer).head_weights(head)

    def embedding_linear(self, linear: int = 0) -> nn.Linear:
        """The encoder P_φ's ``linear``-th linear map (0: the one reading ``[x(t), onehot(t)]``)."""
        return self.embed.linear(linear, "the embedding")

    def set_embedding(self, weight=None, bias=None, *, linear: int = 0) -> None:
        """Write the encoder's ``linear``-th linear map: weight (out, in), bias (out,). The first
        map reads ``[x(t), onehot(t)]`` (d_in + seq_len columns with one-hot positions)."""
        self.embed.set_linear(linear, weight, bias, "the embedding")

    def set_cls(self, vector) -> None:
        """Write the CLS token ĉ0 (shape (E,))."""
        if self.cls is None:
            raise ConfigError("this model has no CLS token (readout='tokens')")
        _write(self.cls, vector, "the CLS vector")

    def set_positions(self, matrix) -> None:
        """Write the learned position embeddings (shape (seq_len, E))."""
        if self.pos is None:
            raise ConfigError(
                f"this model has no learned positions (positions={self.cfg.positions!r})"
            )
        _write(self.pos, matrix, "the learned positions")

    def readout_linear(self, linear: int = 0) -> nn.Linear:
        """The read-out F̂'s ``linear``-th linear map (0: the one reading the residual stream)."""
        return self.head.linear(linear, "the read-out")

    def set_readout(self, weight=None, bias=None, *, linear: int = 0) -> None:
        """Write the read-out F̂'s ``linear``-th linear map: weight (out, in), bias (out,)."""
        self.head.set_linear(linear, weight, bias, "the read-out")

    def set_ffn(self, layer: int, weight=None, bias=None, *, linear: int = 0) -> None:
        """Write the ``linear``-th linear map of layer ``layer``'s ReLU/GELU FFN: weight
        (out, in), bias (out,) (for gated FFNs see :meth:`set_gated_ffn`)."""
        self.feed_forward(layer).set_linear(
            linear, weight, bias, f"layer {self._layer_index(layer)}'s FFN"
        )

    def set_gated_ffn(
        self, layer: int, *, w1=None, w3=None, w2=None, b1=None, b3=None, b2=None
    ) -> None:
        """Write layer ``layer``'s gated FFN ``w2(act(w1 x) * w3 x)`` (ffn_kind swiglu or
        bilinear): w1, w3 (hidden, E), w2 (E, hidden), biases b1, b3 (hidden,), b2 (E,)."""
        self.feed_forward(layer).set_gated(
            w1, w3, w2, b1, b3, b2, f"layer {self._layer_index(layer)}'s FFN"
        )

    def parameter_name(self, param: torch.Tensor) -> str:
        """The registered name of ``param`` (a parameter of this model), e.g. for
        ``torch.func.functional_call``:
        ``{model.parameter_name(model.attention(0).q.weight): w}``."""
        for name, p in self.named_parameters():
            if p is param:
                return name
        raise ConfigError("not a parameter of this model")

    def attention_parameters(self, layer: int) -> dict[str, nn.Parameter]:
        """Layer ``layer``'s attention parameters by their registered names (for optimisers and
        ``functional_call``)."""
        attn = self.attention(layer)
        ids = {id(p) for p in attn.parameters()}
        return {n: p for n, p in self.named_parameters() if id(p) in ids}

    def zero_(self) -> Transformer:
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
        return self

    def count_params(self, parts: Sequence[str] | None = None, layer: int | None = None) -> int:
        """Number of parameters, optionally only in the named top-level parts
        (``embed``, ``pos``, ``cls``, ``layers``, ``head``, or ``attn`` / ``ffn`` of all layers),
        or only in layer ``layer`` (with ``parts``: that layer's ``attn`` / ``ffn``)."""
        if layer is not None:
            li = self._layer_index(layer)
        total = 0
        for name, p in self.named_parameters():
            segs = name.split(".")
            if layer is not None and (segs[0] != "layers" or int(segs[1]) != li):
                continue
            if parts is None:
                total += p.numel()
                continue
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
            raise ConfigError(
                f"this model was built for sequences of length {cfg.seq_len} (got T={T})"
            )
        if cfg.positions == "onehot":
            eye = torch.eye(T, dtype=x.dtype, device=x.device).expand(B, T, T)
            x = torch.cat((x, eye), dim=-1)  # (B, T, d_in + T)
        h = self.embed(x)  # (B, T, E)
        if self.pos is not None:
            h = h + self.pos
        return h

    def _input_stream(self, x):
        """Checked input -> residual stream with the CLS token appended, its mask and positions."""
        cfg = self.cfg
        x = _as_input(x)
        if x.dim() != 3 or x.shape[-1] != cfg.d_in:
            raise ConfigError(
                f"input must have shape (batch, T, {cfg.d_in}) (got {tuple(x.shape)})"
            )
        h = self.embed_tokens(x.to(cfg.torch_dtype))  # (B, T, E)
        B, T, E = h.shape
        if self.cls is not None:
            h = torch.cat((h, self.cls.expand(B, 1, E)), dim=1)  # (B, T+1, E)
        positions = torch.arange(h.shape[1], device=h.device)
        return h, self._mask(h.shape[1], h.device), positions

    def forward(self, x, return_attention: bool = False):
        h, mask, positions = self._input_stream(x)
        atts = []
        for i, blk in enumerate(self.layers):
            # the CLS read-out uses only the CLS row of the last layer: compute just that row
            last_only = self.cls is not None and not return_attention and i == len(self.layers) - 1
            h, att = blk(
                h, mask, positions, need_weights=return_attention, n_query=1 if last_only else None
            )
            atts.append(att)
        h = h[:, -1] if self.cls is not None else h
        if self.ln_f is not None:
            h = self.ln_f(h)
        out = self.head(h)  # (B, d_out) | (B, T, d_out)
        return (out, atts) if return_attention else out

    def hidden_states(self, x):
        """Residual stream after each layer: list of ``(B, T(+1), E)`` tensors."""
        h, mask, positions = self._input_stream(x)
        out = [h]
        for blk in self.layers:
            h, _ = blk(h, mask, positions)
            out.append(h)
        return out


def _as_input(x) -> torch.Tensor:
    """The model's input as a real tensor: a torch tensor as it is, a numpy array converted
    (``torch.from_numpy``); anything else, or a complex, string or object array, a ConfigError."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise ConfigError(
                f"input must be a real-valued torch tensor or numpy array of shape "
                f"(batch, T, d_in) (got a numpy array of dtype {x.dtype})"
            )
        x = torch.tensor(np.asarray(x, dtype=np.float64))  # a copy, in native byte order
    elif not isinstance(x, torch.Tensor):
        raise ConfigError(
            f"input must be a torch tensor (or a numpy array) of shape (batch, T, d_in) "
            f"(got {type(x).__name__})"
        )
    if x.is_complex():
        raise ConfigError(f"input must be real-valued (got a tensor of dtype {x.dtype})")
    return x


def _write(param: torch.Tensor, value, what: str) -> None:
    """Copy ``value`` into ``param`` (no-op for None), or ConfigError naming the expected shape."""
    if value is None:
        return
    t = _as_tensor(value, param)
    if tuple(t.shape) != tuple(param.shape):
        raise ConfigError(f"{what} must have shape {tuple(param.shape)} (got {tuple(t.shape)})")
    with torch.no_grad():
        param.copy_(t)


class HeadWeights(NamedTuple):
    """One attention head's blocks: q, k (head_dim, E), v (value_dim, E), o (E, value_dim)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    o: torch.Tensor


class ResidualLayout:
    """Names for coordinate blocks of a vector space, as tracr names basis directions: the
    residual stream (width E), a head's query/key space, the encoder's input ``[x, onehot(t)]``.

    Blocks are laid out in keyword order; a size ``(count, size)`` is ``count`` sub-blocks of
    ``size`` (one per head, per position, ...). :meth:`interleaved` repeats a group of blocks
    (block i of each name next to each other). A construction then writes what it means::

        >>> lay = ResidualLayout(value=1, score=1, pos=3)
        >>> lay.width, lay["pos"], lay.index("score"), lay.index("pos", 2)
        (5, slice(2, 5, None), 1, 4)
        >>> lay.vector(score=1.0)
        array([0., 1., 0., 0., 0.])
        >>> per_head = ResidualLayout(x=2, r=(3, 2), u=3)       # r: 3 sub-blocks of width 2
        >>> per_head.block("r", 1), per_head.index("u", 2), per_head.grid("r").tolist()
        (slice(4, 6, None), 10, [[2, 3], [4, 5], [6, 7]])
        >>> feat = ResidualLayout.interleaved(3, value=1, gate=1)   # value_0, gate_0, value_1, ...
        >>> feat["value"], feat.index("gate", 2)
        (slice(0, 5, 2), 5)
    """

    def __init__(self, **blocks: int | tuple[int, int]):
        self._coords: dict[str, np.ndarray] = {}
        self._sub: dict[str, int] = {}
        parsed = {name: self._parse(name, size) for name, size in blocks.items()}
        _require_coords(sum(count * sub for count, sub in parsed.values()))
        at = 0
        for name, (count, sub) in parsed.items():
            self._coords[name] = np.arange(at, at + count * sub, dtype=np.int64)
            self._sub[name] = sub
            at += count * sub
        self._width = at

    @staticmethod
    def _parse(name, size) -> tuple[int, int]:
        """(number of sub-blocks, sub-block size): an int s is s sub-blocks of 1."""
        pair = size if isinstance(size, tuple) and len(size) == 2 else (size, 1)
        if (
            isinstance(size, tuple)
            and len(size) != 2
            or any(
                not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0 for v in pair
            )
        ):
            raise ConfigError(
                f"block {name} must have a size >= 0 or (count, size) with "
                f"integers >= 0 (got {size!r})"
            )
        return int(pair[0]), int(pair[1])

    @classmethod
    def interleaved(cls, count: int, **blocks: int) -> ResidualLayout:
        """``count`` copies of the group of blocks, one after another: with ``value=1, gate=1``
        the coordinates are value_0, gate_0, value_1, gate_1, ...; ``block(name, i)`` is copy i."""
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
            raise ConfigError(f"count must be an integer >= 0 (got {count!r})")
        lay = cls()
        group = 0
        offsets = {}
        for name, size in blocks.items():
            if isinstance(size, tuple):
                raise ConfigError(
                    f"interleaved block {name} must have a single size (got {size!r})"
                )
            n, _ = cls._parse(name, size)
            offsets[name] = (group, n)
            group += n
        _require_coords(int(count) * group)
        copies = np.arange(int(count), dtype=np.int64)[:, None] * group
        for name, (off, n) in offsets.items():
            # copy c's coordinates c·group + off + j (j < n), copy after copy
            lay._coords[name] = (copies + off + np.arange(n, dtype=np.int64)[None, :]).ravel()
            lay._sub[name] = n
        lay._width = int(count) * group
        return lay

    @property
    def width(self) -> int:
        """Total number of coordinates."""
        return self._width

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._coords)

    def __contains__(self, name) -> bool:
        return name in self._coords

    def _get(self, name: str) -> np.ndarray:
        if name not in self._coords:
            from .errors import did_you_mean

            raise ConfigError(
                f"no block {name!r} in this layout{did_you_mean(name, self._coords)} "
                f"(blocks: {', '.join(self._coords) or 'none'})"
            )
        return self._coords[name]

    def size(self, name: str) -> int:
        """Number of coordinates of block ``name``."""
        return int(self._get(name).size)

    def count(self, name: str) -> int:
        """Number of sub-blocks of block ``name``."""
        c = self._get(name)
        return int(c.size // self._sub[name]) if self._sub[name] else 0

    def __getitem__(self, name: str) -> slice | np.ndarray:
        """Block ``name``'s coordinates: a slice (an index array if they are not evenly
        spaced), usable to index numpy arrays and tensors."""
        return _as_slice(self._get(name))

    def indices(self, name: str) -> np.ndarray:
        """Block ``name``'s coordinates as an integer array."""
        return self._get(name).copy()

    def grid(self, name: str) -> np.ndarray:
        """Block ``name``'s coordinates as a (sub-blocks, sub-block size) integer array:
        ``grid("r")[i, j]`` is coordinate j of sub-block i."""
        c = self._get(name)
        sub = self._sub[name]
        return c.reshape(c.size // sub if sub else 0, sub)

    def index(self, name: str, i: int = 0) -> int:
        """The i-th coordinate of block ``name`` (the block's only one by default)."""
        c = self._get(name)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < c.size:
            raise ConfigError(
                f"block {name} has {c.size} coordinate{'s' * (c.size != 1)}: "
                f"index must be in [0, {c.size}) (got {i!r})"
            )
        return int(c[i])

    def block(self, name: str, i: int) -> slice | np.ndarray:
        """The i-th sub-block of block ``name`` (for a ``(count, size)`` block: ``size``
        coordinates; for a plain block: its i-th coordinate, as a length-1 slice)."""
        c = self._get(name)
        sub = self._sub[name]
        n = c.size // sub if sub else 0
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < n:
            raise ConfigError(
                f"block {name} has {n} sub-block{'s' * (n != 1)}: index must be "
                f"in [0, {n}) (got {i!r})"
            )
        return _as_slice(c[i * sub : (i + 1) * sub])

    def vector(self, **values) -> np.ndarray:
        """A zero vector of this width with the named blocks set (a scalar fills a block)."""
        out = np.zeros(self._width)
        for name, v in values.items():
            out[self[name]] = v
        return out

    def __repr__(self) -> str:
        parts = []
        for name, c in self._coords.items():
            sub = self._sub[name]
            parts.append(
                f"{name}={c.size}"
                if sub == 1 or c.size == sub or not c.size
                else f"{name}=({c.size // sub}, {sub})"
            )
        return f"ResidualLayout({', '.join(parts)}; width={self._width})"


def _require_coords(n: int) -> None:
    """Refuse a layout of ``n`` coordinates (int64 index arrays) that cannot fit, before
    allocating it."""
    from .resources import array_bytes, require

    require(bytes=array_bytes(n), what=f"a ResidualLayout of {n} coordinates")


def _as_slice(c: np.ndarray) -> slice | np.ndarray:
    if c.size == 0:
        return slice(0, 0)
    if c.size == 1:
        return slice(int(c[0]), int(c[0]) + 1)
    step = int(c[1] - c[0])
    if step > 0 and np.array_equal(c, np.arange(c[0], c[-1] + 1, step)):
        return slice(int(c[0]), int(c[-1]) + 1, None if step == 1 else step)
    return c.copy()


def _as_tensor(value, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        t = value.detach()
    else:
        try:
            t = torch.as_tensor(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise ConfigError(f"weights must be numeric arrays ({e})") from None
    return t.to(dtype=like.dtype, device=like.device)
