"""The model's configuration records: :class:`LayerSpec` (one layer) and :class:`ModelConfig`
(the whole architecture), with the validation of every field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

import numpy as np
import torch

from ..errors import ConfigError

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
        # every field validated, in this order (the first error found is the one raised)
        self._check_sizes_and_flags()
        self._check_options()
        self._check_rope()
        self._check_scale_and_norms()
        self._check_tied()

    def _check_sizes_and_flags(self) -> None:
        """The layers, the sizes d_in, width, d_out and the boolean fields."""
        self.layers = _layer_specs(self.layers)
        for name in ("d_in", "width", "d_out"):
            setattr(self, name, _pos_int(name, getattr(self, name)))
        for name in _BOOL_FIELDS:
            v = getattr(self, name)
            if not isinstance(v, (bool, np.bool_)):
                raise ConfigError(f"{name} must be True or False (got {v!r})")
            setattr(self, name, bool(v))

    def _check_options(self) -> None:
        """Positions and seq_len, the encoder/read-out widths, readout, ffn_kind, head_activation,
        dtype."""
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

    def _check_rope(self) -> None:
        """rope, rope_base, rope_freqs, and each layer's rotated dims."""
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

    def _check_scale_and_norms(self) -> None:
        """attn_scale, the one pre-norm, final_norm and rms_eps."""
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

    def _check_tied(self) -> None:
        """What tie_embeddings=True needs."""
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
