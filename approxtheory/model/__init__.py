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

The package: :mod:`.config` (LayerSpec, ModelConfig and their validation), :mod:`.layers`
(attention, FFN, norms, read-out, block), :mod:`.transformer` (the Transformer) and
:mod:`.weights` (HeadWeights, ResidualLayout, the shape-checked writers).
"""

from .config import (
    Activation,
    DType,
    FFNKind,
    LayerSpec,
    ModelConfig,
    Norm,
    Positions,
    Readout,
)
from .layers import (
    MLP,
    Attention,
    Block,
    FeedForward,
    RMSNorm,
    TiedReadout,
    apply_rope,
    rope_frequencies,
)
from .transformer import Transformer
from .weights import HeadWeights, ResidualLayout

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
    # also imported from here: the option types and the RoPE helpers
    "Activation",
    "DType",
    "FFNKind",
    "Norm",
    "Positions",
    "Readout",
    "apply_rope",
    "rope_frequencies",
]
