"""The one model class, :class:`Transformer`: its construction, its named editing surface and its
forward pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import torch
import torch.nn as nn

from ..errors import ConfigError
from .config import ModelConfig
from .layers import MLP, Attention, Block, FeedForward, TiedReadout, _norm
from .weights import HeadWeights, _as_tensor, _write


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
        from ..resources import require_model

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
