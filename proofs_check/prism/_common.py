"""The toy models the PR checks build (the shared model at d = 64 with a head schedule, and
the tied decoder LM) and the evidence-text helpers they share."""

from __future__ import annotations

from typing import Any

import torch

from approxtheory.model import LayerSpec, ModelConfig, Transformer

D_MODEL, FFN = 64, 170
SCHEDULES = {
    "uniform": [4, 4, 4, 4],
    "prism": [1, 2, 4, 4],
    "reversed": [4, 4, 2, 1],
    "wide": [2, 2, 2, 2],
}
H_BASE = 4

NOT_RESCALED = "head-width-not-rescaled"
_NOT_RESCALED_WHAT = (
    "every layer keeps the baseline head width d/h_base = 16 whatever its head "
    "count, so h_l·d_h != d (the reshape bug a schedule must avoid)"
)


def _model(heads, mutant=None, dtype="float64"):
    def width(h):
        return D_MODEL // H_BASE if mutant == NOT_RESCALED else D_MODEL // h

    return Transformer(
        ModelConfig(
            d_in=8,
            width=D_MODEL,
            bias=True,
            ffn_kind="swiglu",
            ffn_bias=False,
            layers=[LayerSpec(h, width(h), ffn_hidden=(FFN,)) for h in heads],
            readout="tokens",
            causal=True,
            rope="full",
            d_out=8,
            dtype=dtype,
        )
    )


LM_VOCAB = 50
UNTIED = "untied-readout"


def _lm(heads, V: int, d: int = D_MODEL, f: int = FFN, mutant=None, device=None):
    """The digest's decoder LM (:meth:`~approxtheory.model.ModelConfig.decoder_lm`: RMSNorm
    pre-norm + final, RoPE, SwiGLU, tied embeddings, no biases) over ``V`` tokens, of any length
    (no position embedding: ``seq_len`` None); the ``untied-readout`` mutant gives the read-out
    its own matrix."""
    layers = [LayerSpec(h, d // h, ffn_hidden=(f,)) for h in heads]
    seq_len: Any = None  # decoder_lm's annotation asks for a length; RoPE needs none
    cfg = ModelConfig.decoder_lm(V, d, layers, seq_len, tie_embeddings=mutant != UNTIED)
    if device is None:
        return Transformer(cfg)
    with torch.device(device):
        return Transformer(cfg)


def _seq(xs) -> str:
    """A sequence of numbers as evidence text: ``256/128/96`` (``:g``)."""
    return "/".join(f"{x:g}" for x in xs)


def _commas(xs) -> str:
    """Head counts as evidence text: ``2,2,4,4`` (the paper's way of writing a schedule)."""
    return ",".join(str(x) for x in xs)


def _named(d: dict, fmt=_seq) -> str:
    """A name -> figure(s) map as evidence text: ``small 256/128/96, medium 256/128``."""
    return ", ".join(f"{k} {fmt(v)}" for k, v in d.items())
