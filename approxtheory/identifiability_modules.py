"""Identifiability of foreign attention modules.

:func:`of_module` measures P - rank J of one attention module's float64 outputs on generic
inputs with respect to all its parameters, for ``torch.nn.MultiheadAttention``, Hugging Face
``GPT2Attention`` (fused ``c_attn``, biases, causal), ``LlamaAttention`` (GQA, RoPE, optional
biases, causal) and TransformerLens 4 bridges (a ``TransformerBridge`` with ``layer=N``, one of
its ``AttentionBridge`` components, or the ``NativeAttention`` a native bridge holds: biases
always, GQA, RoPE, causal or bidirectional, read from the module), against
:func:`~approxtheory.identifiability.predicted_unidentified_dim` for the module's configuration.
The rank is read at the largest gap of the singular values (the two values either side and their
ratio are reported); below ``min_gap`` the record says ``undecided``.

:func:`from_hf_dir` does this for the layers of a local Hugging Face model directory (gpt2, llama,
or the ``approxtheory`` architecture that ``approxtheory export --to hf`` writes, whose layers are
the shared model's :class:`~approxtheory.model.Attention`, also accepted by :func:`of_module`;
config.json read and checked before anything large is loaded). :func:`gpt2_structured` certifies
the rank of a causal GPT-2 layer at sizes the dense Jacobian cannot reach (see its docstring).

Measured frontier (random GPT-2 layers, this 2-core machine): the full
structured certificate closes at E = 16, 32, 64 (0.8 s, 7.7 s, 92 s on a loaded machine); at
GPT-2 small (E = 768, H = 12, P = 2,362,368) it certifies only rank J <= 2,262,528 (the gauge
family, by JVP) and rank J >= 1,131,264 (the value/output half through K, 12,304 x 9,217), i.e.
99,840 <= unidentified <= 1,231,104, in ~630 CPU-s and 2.6 GB. What stands in the way is each
head's query/key block: rank 94,272 of a (>= 94,272) x 98,432 matrix, ~5e15 flops per head.

``transformers`` is imported only inside functions.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field

import torch

from .errors import ConfigError
from .hf_files import ARCHITECTURES, read_hf_config  # noqa: F401  (re-exported)
from .identifiability import MIN_GAP, AttentionConfig, gap_rank, predicted_unidentified_dim

__all__ = [
    "ModuleIdentifiability",
    "of_module",
    "module_config",
    "gap_rank",
    "from_hf_dir",
    "read_hf_config",
    "gpt2_structured",
    "bench_rows",
    "cli_from_hf",
    "format_table",
]

KINDS = (
    "torch.nn.MultiheadAttention",
    "GPT2Attention",
    "LlamaAttention",
    "NativeAttention",
    "approxtheory Attention",
)
#: what the typed errors list as supported
SUPPORTED = (
    "torch.nn.MultiheadAttention, Hugging Face GPT2Attention and LlamaAttention, and "
    "TransformerLens bridges (a TransformerBridge with layer=N, an AttentionBridge, or a "
    "native bridge's NativeAttention), and approxtheory's own Attention layer"
)


@dataclass(frozen=True)
class ModuleIdentifiability:
    """One module's measurement: ``total`` parameters P, ``measured`` P - rank J (``None`` when
    ``undecided``), the catalogue's ``predicted`` count, ``gap`` = (σ_r, σ_{r+1}, ratio) at the
    chosen threshold, ``status`` (``certified`` or ``undecided``), the configuration read from the
    module, the method, the rows of J and the wall time (informational only)."""

    kind: str
    total: int
    measured: int | None
    predicted: int
    gap: tuple[float, float, float]
    status: str
    config: dict
    method: str = "dense"
    rank: int | None = None
    rows: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def matches(self) -> bool:
        return self.status == "certified" and self.measured == self.predicted

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gap"] = {"above": self.gap[0], "below": self.gap[1], "ratio": self.gap[2]}
        d["matches"] = self.matches
        d["notes"] = list(self.notes)
        return d


# ---------------------------------------------------------------------------------- adapters
def _is_hf(module, name: str) -> bool:
    return type(module).__name__ == name and type(module).__module__.startswith("transformers")


def _is_tl(module, name: str) -> bool:
    return type(module).__name__ == name and type(module).__module__.startswith("transformer_lens")


def _unwrap(module, layer: int | None = None):
    """The attention module to measure: layer ``layer``'s attention of a TransformerLens
    ``TransformerBridge``; the component a TransformerLens bridge component wraps
    (``AttentionBridge._original_component``); else ``module``. ``layer`` applies to a
    ``TransformerBridge`` only."""
    if _is_tl(module, "TransformerBridge"):
        n = len(module.blocks)
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < n:
            raise ConfigError(
                f"of_module on a TransformerBridge needs layer=N, an integer from 0 to {n - 1} "
                f"(got {layer!r})"
            )
        module = module.blocks[layer].attn
    elif layer is not None:
        raise ConfigError(
            f"layer applies to a TransformerLens TransformerBridge (got a {type(module).__name__})"
        )
    seen = 0
    while type(module).__module__.startswith("transformer_lens") and seen < 8:
        inner = getattr(module, "_original_component", None)
        if not isinstance(inner, torch.nn.Module):
            break
        module, seen = inner, seen + 1
    return module


def _kind(module) -> str:
    if isinstance(module, torch.nn.MultiheadAttention):
        return "torch.nn.MultiheadAttention"
    for name in ("GPT2Attention", "LlamaAttention"):
        if _is_hf(module, name):
            return name
    if _is_tl(module, "NativeAttention"):
        return "NativeAttention"
    from .model import Attention

    if isinstance(module, Attention):
        return "approxtheory Attention"
    raise ConfigError(
        f"of_module does not know the module {type(module).__module__}.{type(module).__name__}; "
        f"supported: {SUPPORTED}"
    )


def module_config(module, causal: bool | None = None, layer: int | None = None) -> dict:
    """The configuration of ``module`` that the catalogue's count depends on: E, H, G, head width,
    biases, causal, RoPE; plus ``attention_config``, the :class:`AttentionConfig` of the
    prediction. Unsupported variants raise :class:`ConfigError` naming them. A TransformerLens
    ``TransformerBridge`` needs ``layer``."""
    module = _unwrap(module, layer)
    kind = _kind(module)
    if kind == "torch.nn.MultiheadAttention":
        if not module._qkv_same_embed_dim:
            raise ConfigError("MultiheadAttention with kdim/vdim != embed_dim is not supported")
        if module.bias_k is not None or module.add_zero_attn:
            raise ConfigError(
                "MultiheadAttention with add_bias_kv or add_zero_attn is not supported"
            )
        E, H = module.embed_dim, module.num_heads
        bias = module.in_proj_bias is not None
        if bias != (module.out_proj.bias is not None):
            raise ConfigError("MultiheadAttention with bias on one projection only")
        cfg = dict(E=E, H=H, G=H, D=E // H, bias=bias, causal=bool(causal), rope=None)
    elif kind == "GPT2Attention":
        if module.is_cross_attention:
            raise ConfigError("cross-attention GPT2Attention is not supported (self-attention)")
        E, H = module.embed_dim, module.num_heads
        cfg = dict(E=E, H=H, G=H, D=module.head_dim, bias=True, causal=True, rope=None)
        if causal is False:
            cfg["causal"] = False
    elif kind == "NativeAttention":
        cfg = _native_config(module, causal)
    elif kind == "approxtheory Attention":
        cfg = _own_config(module, causal)
    else:  # LlamaAttention
        c = module.config
        E, H = c.hidden_size, c.num_attention_heads
        G, D = c.num_key_value_heads, module.head_dim
        bias = bool(getattr(c, "attention_bias", False))
        cfg = dict(E=E, H=H, G=G, D=D, bias=bias, causal=True, rope="full")
        if causal is False:
            cfg["causal"] = False
        inv = _llama_inv_freq(module)[0].double()
        if len(torch.unique(inv)) != len(inv) or bool((inv <= 0).any()):
            raise ConfigError("RoPE with repeated or non-positive frequencies is not supported")
    if cfg["H"] * cfg["D"] > cfg["E"]:
        raise ConfigError(
            f"heads x head width must be <= the width for the catalogue's count "
            f"(got {cfg['H']} x {cfg['D']} > {cfg['E']})"
        )
    cfg["attention_config"] = AttentionConfig(
        E=cfg["H"] * cfg["D"],
        H=cfg["H"],
        G=cfg["G"],
        bias=cfg["bias"],
        causal=cfg["causal"],
        rope=cfg["rope"],
    )
    return cfg


def _native_config(module, causal: bool | None) -> dict:
    """The configuration of a TransformerLens ``NativeAttention`` (q, k, v, o always carry
    biases; GQA from ``n_kv_heads``; the mask from its config's ``attention_dir``; RoPE from its
    shared rotary module)."""
    E, H, G, D = module.d_model, module.n_heads, module.n_kv_heads, module.d_head
    if causal is not None and bool(causal) != bool(module.causal):
        raise ConfigError(
            "a TransformerLens NativeAttention's mask is its config's attention_dir "
            f"({'causal' if module.causal else 'bidirectional'}); leave causal unset"
        )
    if float(getattr(module, "attn_scores_soft_cap", -1.0)) > 0:
        raise ConfigError(
            "a TransformerLens attention with a score soft cap (attn_scores_soft_cap) is not in "
            "the catalogue"
        )
    if any(getattr(module, n).bias is None for n in ("q", "k", "v", "o")):
        raise ConfigError("a NativeAttention without a bias on every projection is not supported")
    rope = None
    if module.rotary is not None:
        rd = int(module.rotary.rotary_dim)
        inv = _native_inv_freq(module)
        if len(torch.unique(inv)) != len(inv) or bool((inv <= 0).any()):
            raise ConfigError("RoPE with repeated or non-positive frequencies is not supported")
        rope = "full" if rd == D else f"partial:{rd}"
    return dict(E=E, H=H, G=G, D=D, bias=True, causal=bool(module.causal), rope=rope)


def _own_config(module, causal: bool | None) -> dict:
    """The configuration of approxtheory's :class:`~approxtheory.model.Attention` (the mask is
    the model's: ``causal``, default False; RoPE from its frequency buffer)."""
    E, H, G, D, C = module.q.in_features, module.h, module.g, module.n, module.c
    if C != D:
        raise ConfigError(
            f"the catalogue's count needs value width = query/key width (got {C} and {D})"
        )
    bias = module.q.bias is not None
    rope = None
    rd = 2 * int(module.freqs.numel())
    if rd:
        f = module.freqs.detach().double()
        if len(torch.unique(f)) != len(f) or bool((f <= 0).any()):
            raise ConfigError("RoPE with repeated or non-positive frequencies is not supported")
        rope = "full" if rd == D else f"partial:{rd}"
    return dict(E=E, H=H, G=G, D=D, bias=bias, causal=bool(causal), rope=rope)


def _native_inv_freq(module) -> torch.Tensor:
    """The float64 RoPE frequencies of a NativeAttention (TransformerLens's formula,
    base^(-2i/rotary_dim)); a ``rope_scaling`` other than the default is refused."""
    rs = getattr(module.cfg, "rope_scaling", None)
    if isinstance(rs, dict):
        kind = str(rs.get("rope_type") or rs.get("type") or "").lower()
        if kind not in ("", "default") and float(rs.get("factor", 1.0)) > 1.0:
            raise ConfigError(
                f"a TransformerLens attention with rope_scaling {kind!r} is not supported "
                "(default RoPE only)"
            )
    rd = int(module.rotary.rotary_dim)
    base = float(module.cfg.rotary_base)
    return 1.0 / (base ** (torch.arange(0, rd, 2, dtype=torch.float64) / rd))


class _Wrap(torch.nn.Module):
    """Holds the float64 copy as a submodule so ``functional_call`` swaps its parameters."""

    def __init__(self, m, run):
        super().__init__()
        self.m = m
        self._run = run

    def forward(self, X):
        return self._run(X)


def _llama_inv_freq(module) -> tuple[torch.Tensor, float]:
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rot = LlamaRotaryEmbedding(module.config)
    return rot.inv_freq.detach().clone(), float(rot.attention_scaling)


_F64 = "approxtheory_float64"


def _f64_attention() -> str:
    """Register (once) an attention function that is HF's eager one with the softmax left in the
    inputs' dtype (float64), GQA by repeating the key/value heads; returns its name."""
    from transformers import AttentionInterface

    def attend(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
        rep = query.shape[1] // key.shape[1]
        key = key.repeat_interleave(rep, dim=1)
        value = value.repeat_interleave(rep, dim=1)
        w = torch.matmul(query, key.transpose(2, 3)) * scaling
        if attention_mask is not None:
            w = w + attention_mask
        w = torch.softmax(w, dim=-1)
        return torch.matmul(w, value).transpose(1, 2).contiguous(), w

    AttentionInterface.register(_F64, attend)
    return _F64


def _causal_mask(L: int, dtype=torch.float64) -> torch.Tensor:
    m = torch.full((L, L), torch.finfo(dtype).min, dtype=dtype)
    return torch.triu(m, diagonal=1)


def _forward(module, kind: str, cfg: dict, L: int):
    """A float64 copy of ``module`` and f(params, X) -> outputs (X of shape (N, L, E))."""
    m = copy.deepcopy(module).to(torch.float64).eval()
    notes = []
    mask = _causal_mask(L) if cfg["causal"] else None
    if kind == "torch.nn.MultiheadAttention":
        bf = m.batch_first

        def run(X):
            Xi = X if bf else X.transpose(0, 1)
            y = m(Xi, Xi, Xi, need_weights=True, attn_mask=mask)[0]  # explicit path, no SDPA
            return y if bf else y.transpose(0, 1)

    elif kind == "NativeAttention":
        if m.rotary is not None:  # the module's tables are float32: rebuilt in float64
            inv = _native_inv_freq(module)
            pos = torch.arange(m.rotary.cos_cached.shape[0], dtype=torch.float64)
            fr = torch.outer(pos, inv)
            m.rotary.cos_cached = fr.cos().repeat_interleave(2, dim=-1)
            m.rotary.sin_cached = fr.sin().repeat_interleave(2, dim=-1)
            notes.append("RoPE tables computed in float64 from the module's frequencies")

        def run(X):
            return m(X)[0]

    elif kind == "approxtheory Attention":
        pos = torch.arange(L)
        keep = None if mask is None else mask == 0  # the model's masks say where to attend

        def run(X):
            return m(X, keep, pos, need_weights=True)[0]  # the explicit path, not SDPA

    elif kind == "GPT2Attention":
        m.config = copy.copy(m.config)
        m.config._attn_implementation = "eager"
        if m.reorder_and_upcast_attn:
            m.reorder_and_upcast_attn = False
            notes.append("reorder_and_upcast_attn (float32 logits) off: the same function")
        am = None if mask is None else mask[None, None]

        def run(X):
            return m(X, attention_mask=am)[0]

    else:
        m.config = copy.copy(m.config)
        m.config._attn_implementation = _f64_attention()
        notes.append("softmax in float64 (HF's eager Llama attention takes it in float32)")
        inv, scale = _llama_inv_freq(module)
        pos = torch.arange(L, dtype=torch.float64)
        fr = pos[:, None] * inv.double()[None, :]
        emb = torch.cat([fr, fr], dim=-1)
        cos, sin = (emb.cos() * scale)[None], (emb.sin() * scale)[None]
        notes.append("RoPE tables computed in float64 from the module's frequencies")
        am = None if mask is None else mask[None, None]

        def run(X):
            return m(X, position_embeddings=(cos, sin), attention_mask=am)[0]

    return m, run, notes


def _check_finite(module) -> None:
    """Refuse a module with NaN or infinite parameters (its Jacobian has no rank to measure)."""
    for name, p in module.named_parameters():
        if not bool(torch.isfinite(p.detach()).all()):
            raise ConfigError(
                f"the module's parameter {name!r} holds NaN or infinite values; the rank of the "
                "Jacobian is measured on finite weights"
            )


def of_module(
    module,
    *,
    inputs: torch.Tensor | None = None,
    seed: int = 0,
    seq_len: int = 6,
    n_seq: int | None = None,
    causal: bool | None = None,
    min_gap: float = MIN_GAP,
    layer: int | None = None,
) -> ModuleIdentifiability:
    """P - rank of the Jacobian of ``module``'s float64 outputs (self-attention on ``inputs``,
    shape (N, L, E), default seeded N(0, 1) sequences: rows >= 1.25 P and >= 1.5x each head's
    query/key rank in logit differences) with respect to all its
    parameters, against the catalogue's prediction for the module's configuration.

    ``causal`` applies to ``MultiheadAttention`` and approxtheory's ``Attention`` (default
    False: its mask is the model's); GPT-2 and Llama attention are
    causal; a TransformerLens attention's mask is its config's. ``layer`` picks the layer of a
    TransformerLens ``TransformerBridge`` (its ``blocks[layer].attn``); an ``AttentionBridge`` is
    measured through the module it wraps (the hooks are identities). Inputs with too little
    information undercount the rank (a finite input set gives a lower bound on the generic
    rank). The threshold is the largest singular-value gap; a ratio below ``min_gap`` gives
    ``status="undecided"`` and ``measured=None``. The module itself is not changed."""
    from .identifiability import _check_seed, jacobian_singular_values
    from .resources import array_bytes, require

    _check_seed(seed)
    if isinstance(min_gap, bool) or not isinstance(min_gap, (int, float)) or not min_gap > 1:
        raise ConfigError(f"min_gap must be a number > 1 (got {min_gap!r})")
    module = _unwrap(module, layer)
    kind = _kind(module)
    cfg = module_config(module, causal=causal)
    E = cfg["E"]
    if inputs is not None:
        X = _checked_inputs(inputs, E)
        seq_len = X.shape[1]
    if kind == "NativeAttention":  # its causal mask and RoPE tables hold n_ctx positions
        seq_len = _native_seq_len(module, inputs is not None, seq_len)
    P = sum(p.numel() for p in module.parameters())
    if inputs is None:
        n_seq = _checked_n_seq(cfg, P, seq_len, n_seq)
    _check_finite(module)
    n_rows = X.shape[0] * X.shape[1] if inputs is not None else int(n_seq or 0) * seq_len
    rows = n_rows * E
    require(
        bytes=array_bytes(rows, P) + array_bytes(min(rows, 4096), P) * 2,
        seconds=4.0 * max(rows, P) * min(rows, P) ** 2 / 2e10,
        what=f"the dense Jacobian ({rows} outputs x P={P} parameters, float64) of {kind}",
    )
    if inputs is None:  # drawn only once the Jacobian is known to fit
        g = torch.Generator().manual_seed(int(seed) + 1)
        X = torch.randn(int(n_seq or 0), seq_len, E, generator=g, dtype=torch.float64)
    t0 = time.perf_counter()
    m, run, notes = _forward(module, kind, cfg, X.shape[1])
    f_mod, flat = _flat_forward(m, run)
    _check_copy(module, kind, run, f_mod, flat, X)
    sv = jacobian_singular_values(f_mod, flat, X, X.shape[1] * E, P, chunk_size=512)
    rank, gap = gap_rank(sv, P, min_gap)
    return _measured(
        kind, cfg, P, rank if gap[2] >= min_gap else None, gap, "dense", rows, t0, notes
    )


def _measured(kind: str, cfg: dict, P: int, rank, gap, method: str, rows: int, t0: float, notes):
    """The result: certified with its ``rank`` (None: undecided) against the prediction."""
    certified = rank is not None
    pred = predicted_unidentified_dim(cfg["attention_config"])
    return ModuleIdentifiability(
        kind=kind,
        total=P,
        measured=P - rank if certified else None,
        predicted=pred,
        gap=gap,
        status="certified" if certified else "undecided",
        config={k: v for k, v in cfg.items() if k != "attention_config"},
        method=method,
        rank=rank if certified else None,
        rows=rows,
        seconds=time.perf_counter() - t0,
        notes=tuple(notes),
    )


def _checked_inputs(inputs, E: int) -> torch.Tensor:
    """The given inputs as float64, when they are a finite (N, L, E) tensor; else ConfigError."""
    if not isinstance(inputs, torch.Tensor) or inputs.ndim != 3 or inputs.shape[-1] != E:
        raise ConfigError(f"inputs must be a tensor of shape (N, L, {E})")
    X = inputs.detach().to(torch.float64)
    if not bool(torch.isfinite(X).all()):
        raise ConfigError("inputs must be finite (they hold NaN or infinite values)")
    return X


def _native_seq_len(module, given: bool, seq_len):
    """A TransformerLens attention's n_ctx: longer inputs refused, the default cut to it."""
    n_ctx = int(module.causal_mask.shape[0])
    if given and seq_len > n_ctx:
        raise ConfigError(
            f"this TransformerLens attention holds sequences of up to {n_ctx} positions "
            f"(n_ctx); got inputs of length {seq_len}"
        )
    if not given and isinstance(seq_len, int) and not isinstance(seq_len, bool):
        seq_len = min(seq_len, n_ctx)
    return seq_len


def _checked_n_seq(cfg: dict, P: int, seq_len, n_seq):
    """The number of drawn sequences (checked, or the default when None), ``seq_len`` checked."""
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 2:
        raise ConfigError(f"seq_len must be an integer >= 2 (got {seq_len!r})")
    if n_seq is None:
        # enough rows for P, and enough for each head's query/key part: a sequence tells at
        # most L(L-1)/2 (causal) independent logit differences per head, and that part has
        # rank up to 2DE + 2D (measured: 1.25 P rows alone undercount at E = 32, H = 4)
        E, D = cfg["E"], cfg["D"]
        qk = -(-int(1.5 * (2 * D * E + 2 * D)) // (seq_len * (seq_len - 1) // 2))
        n_seq = max(4, -(-int(1.25 * P) // (seq_len * E)), qk)
    elif isinstance(n_seq, bool) or not isinstance(n_seq, int) or n_seq < 1:
        raise ConfigError(f"n_seq must be a positive integer (got {n_seq!r})")
    return n_seq


def _flat_forward(m, run):
    """``(f(theta, X), flat)``: the float64 copy's flattened output, of its flat parameters."""
    from torch.func import functional_call

    from .identifiability import flat_params, unflatten

    names, shapes, flat = flat_params(dict(m.named_parameters()))
    wrap = _Wrap(m, run)
    names = ["m." + n for n in names]

    def f_mod(theta, Xc):
        return functional_call(wrap, unflatten(theta, names, shapes), (Xc,)).reshape(-1)

    return f_mod, flat


def _check_copy(module, kind: str, run, f_mod, flat, X) -> None:
    """Self-checks on the first sequence: the reparametrized forward against the copy's, and
    for a TransformerLens attention the float64 copy against the module itself."""
    with torch.no_grad():
        y_ref = run(X[:1])
    y_copy = f_mod(flat, X[:1])
    if not torch.allclose(y_ref.reshape(-1), y_copy, atol=1e-12, rtol=1e-12):
        raise RuntimeError("of_module: the reparametrized forward disagrees with the module")
    if kind == "NativeAttention":  # the float64 copy (RoPE tables rebuilt) is the module's function
        dt = next(module.parameters()).dtype
        with torch.no_grad():
            y_mod = module(X[:1].to(dt))[0].to(torch.float64)
        # its RoPE tables are float32 whatever its dtype: float32 agreement there
        tol = 1e-10 if dt == torch.float64 and module.rotary is None else 1e-5
        if not torch.allclose(y_mod.reshape(-1), y_copy.detach(), atol=tol, rtol=tol):
            raise RuntimeError(
                "of_module: the float64 copy disagrees with the TransformerLens module"
            )


# ------------------------------------------------------------------------- local HF directories
def _layer_param_count(c: dict, layers=None) -> int:
    """Attention parameters of one layer (the largest of ``layers`` where they differ) of a
    config checked by :func:`~approxtheory.hf_files.read_hf_config`."""
    if c["model_type"] == "approxtheory":
        cfg = c["_model_config"]
        E, b = cfg.width, bool(cfg.bias)
        best = 0
        for i in range(len(cfg.layers)) if layers is None else layers:
            s = cfg.layers[i]
            h, n, cv, g = s.heads, s.head_dim, s.value_dim or s.head_dim, s.kv_groups or s.heads
            qkv = h * n + g * n + g * cv
            best = max(best, E * qkv + h * cv * E + b * (qkv + E))
        return best
    s = c["_sizes"]
    E = s["E"]
    if c["model_type"] == "gpt2":
        return 4 * E * E + 4 * E
    H, G, D = s["H"], s["G"], s["D"]
    return E * D * (2 * H + 2 * G) + (s["bias"] * ((H + 2 * G) * D + E))


def _load_checked(path, c: dict):
    """The model of the checked directory ``path`` (config ``c``): its weights' headers checked
    and its memory refused before ``transformers`` loads it; a load that still fails is a
    ConfigError naming the directory."""
    from .hf_files import check_weights, require_load
    from .interop import _need

    check_weights(path)
    require_load(c, path)
    _need("transformers", "hf", "transformers")
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        if c["model_type"] == "approxtheory":  # the shared model, in its dtype (float64 here)
            from .interop import load_hf

            return load_hf(path).transformer
        return AutoModel.from_pretrained(str(path), local_files_only=True, dtype=torch.float64)
    except (MemoryError, ConfigError):
        raise
    except Exception as e:  # a foreign file transformers cannot load: bad input, not a bug
        raise ConfigError(
            f"could not load the model in {str(path)!r}: {type(e).__name__}: {str(e)[:200]}"
        ) from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def from_hf_dir(
    path,
    layer: int | None = 0,
    all_layers: bool = False,
    seed: int = 0,
    method: str = "auto",
    min_gap: float = MIN_GAP,
) -> dict:
    """:func:`of_module` on the attention of one layer (``layer``) or every layer of a local
    Hugging Face directory; returns {"layers": [records], "total", "measured", "predicted"}."""
    from .resources import array_bytes, require

    c = read_hf_config(path)
    n = c["_n_layers"]
    if all_layers:
        layers = list(range(n))
    else:
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < n:
            raise ConfigError(
                f"--layer must be an integer from 0 to {n - 1}: {str(path)!r} has {n} "
                f"layer(s) (got {layer!r})"
            )
        layers = [layer]
    if method not in ("auto", "dense", "structured"):
        raise ConfigError(f"--method must be auto, dense or structured (got {method!r})")
    P = _layer_param_count(c, layers)
    if method == "dense" or (method == "auto" and (P <= 200_000 or c["model_type"] != "gpt2")):
        need = array_bytes(int(1.25 * P) + 1, P)
        require(bytes=need, what=f"the dense Jacobian of one attention layer (P={P})")
        use = "dense"
    else:
        if c["model_type"] != "gpt2":
            raise ConfigError(
                f"--method structured supports gpt2 only ({str(path)!r} holds "
                f"{c['model_type']}); use --method dense"
            )
        use = "structured"
    model = _load_checked(path, c)
    own = c["model_type"] == "approxtheory"
    recs = []
    for i in layers:
        if own:
            attn = model.attention(i)
        else:
            attn = model.h[i].attn if c["model_type"] == "gpt2" else model.layers[i].self_attn
        if own:
            recs.append(of_module(attn, seed=seed, min_gap=min_gap, causal=model.cfg.causal))
        elif use == "dense":
            recs.append(of_module(attn, seed=seed, min_gap=min_gap))
        else:
            recs.append(gpt2_structured(attn, seed=seed, min_gap=min_gap))
    certified = all(r.status == "certified" for r in recs)
    return {
        "path": str(path),
        "model_type": c["model_type"],
        "n_layers": n,
        "layers": [dict(r.to_dict(), layer=i) for i, r in zip(layers, recs)],
        "total": sum(r.total for r in recs),
        "measured": sum(r.measured or 0 for r in recs) if certified else None,
        "predicted": sum(r.predicted for r in recs),
        "status": "certified" if certified else "undecided",
    }


def format_table(res: dict) -> str:
    lines = [
        f"{res['path']}: {res['model_type']}, {res['n_layers']} layers (attention parameters)",
        f"{'layer':>5} {'P':>10} {'measured':>9} {'predicted':>9} {'gap':>22} {'ratio':>8}  status",
    ]
    for r in res["layers"]:
        g = r["gap"]
        meas = "-" if r["measured"] is None else str(r["measured"])
        lines.append(
            f"{r['layer']:>5} {r['total']:>10} {meas:>9} {r['predicted']:>9} "
            f"{g['above']:>10.2e}/{g['below']:<10.2e} {g['ratio']:>8.1e}  {r['status']}"
            f"{'' if r['matches'] else ' MISMATCH' if r['status'] == 'certified' else ''}"
        )
        if r["status"] != "certified" and r["notes"]:
            lines.append(f"{'':>5} {r['notes'][-1]}")
    meas = "-" if res["measured"] is None else str(res["measured"])
    lines.append(f"{'total':>5} {res['total']:>10} {meas:>9} {res['predicted']:>9}")
    return "\n".join(lines)


def cli_from_hf(args) -> int:
    """``approxtheory identifiability --from-hf DIR [--layer N | --all-layers] [--json]``."""
    res = from_hf_dir(
        args.from_hf,
        layer=0 if args.layer is None else args.layer,
        all_layers=bool(args.all_layers),
        seed=args.seed,
        method=args.method,
    )
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(format_table(res))
    return 0


# ------------------------------------------------------------------- structured (GPT-2 scale)
def _gpt2_weights(module):
    """Per-head float64 weights of a GPT2Attention (Conv1D: y = x W + b)."""
    E, H, D = module.embed_dim, module.num_heads, module.head_dim
    W = module.c_attn.weight.detach().double()  # (E, 3E)
    b = module.c_attn.bias.detach().double()
    Wq, Wk, Wv = (W[:, i * E : (i + 1) * E].T.reshape(H, D, E) for i in range(3))
    bq, bk, bv = (b[i * E : (i + 1) * E].reshape(H, D) for i in range(3))
    Wo = module.c_proj.weight.detach().double().reshape(H, D, E).transpose(1, 2)  # (H, E, C)
    bo = module.c_proj.bias.detach().double()
    return E, H, D, (Wq, bq, Wk, bk, Wv, bv, Wo, bo)


def _min_sv_ratio(M: torch.Tensor) -> float:
    sv = torch.linalg.svdvals(M)
    return float(sv[-1] / sv[0]) if sv[0] > 0 else 0.0


def _probs(X, wq, bq, wk, scale, mask):
    lg = ((X @ wq.T + bq) @ (X @ wk.T).transpose(-1, -2)) * scale  # key bias: row-constant
    if mask is not None:
        lg = lg + mask
    return torch.softmax(lg, dim=-1)


@contextlib.contextmanager
def _forward_ad():
    """torch's forward-mode AD loads its decompositions through the deprecated torch.jit.script
    on first use (a DeprecationWarning that is not ours): silenced for that call only."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=".*torch.jit.script.*", category=DeprecationWarning
        )
        yield


def _gauge_check(module, E, H, D, w, X, seed) -> float:
    """Largest relative output change along random combinations of the gauge directions (QK
    GL(D) with its biases, inert key bias, OV GL(C), value/output bias aliasing), by JVP."""
    from torch.func import functional_call, jvp

    Wq, bq, Wk, bk, Wv, bv, Wo, bo = w
    g = torch.Generator().manual_seed(int(seed) + 5)
    dq, dk, dv, dbq, dbk, dbv = (torch.zeros_like(t) for t in (Wq, Wk, Wv, bq, bk, bv))
    dWo = torch.zeros_like(Wo)
    dbo = torch.zeros_like(bo)
    for h in range(H):
        A = torch.randn(D, D, generator=g, dtype=torch.float64)
        B = torch.randn(D, D, generator=g, dtype=torch.float64)
        beta = torch.randn(D, generator=g, dtype=torch.float64)
        delta = torch.randn(D, generator=g, dtype=torch.float64)
        dq[h], dbq[h] = A @ Wq[h], A @ bq[h]
        dk[h], dbk[h] = -A.T @ Wk[h], -A.T @ bk[h] + beta
        dv[h], dbv[h] = B @ Wv[h], B @ bv[h] + delta
        dWo[h] = -Wo[h] @ B
        dbo -= Wo[h] @ delta
    dW = torch.cat([t.reshape(E, E).T for t in (dq, dk, dv)], dim=1)
    db = torch.cat([dbq.reshape(-1), dbk.reshape(-1), dbv.reshape(-1)])
    dP = dWo.transpose(1, 2).reshape(E, E)
    m, run, _ = _forward(module, "GPT2Attention", {"causal": True}, X.shape[1])
    wrap = _Wrap(m, run)
    names = ["m.c_attn.weight", "m.c_attn.bias", "m.c_proj.weight", "m.c_proj.bias"]
    prim = tuple(dict(wrap.named_parameters())[n].detach() for n in names)
    tang = (dW, db, dP, dbo)

    def f(*ps):
        return functional_call(wrap, dict(zip(names, ps)), (X,))

    with _forward_ad():
        dy = jvp(f, prim, tang)[1]
    # reference: the same JVP along a random direction of the same size
    rnd = tuple(torch.randn(t.shape, generator=g, dtype=torch.float64) for t in prim)
    scale = math.sqrt(
        sum(float((t**2).sum()) for t in tang) / sum(float((t**2).sum()) for t in rnd)
    )
    with _forward_ad():
        dyr = jvp(f, prim, tuple(t * scale for t in rnd))[1]
    return float(dy.abs().max() / dyr.abs().max())


def _gpt2_sizes(E: int, H: int, seq_len: int, qk_max_cols: int) -> tuple[int, int, int, bool]:
    """``(n_seq, NL, qk_cols, do_qk)`` of :func:`gpt2_structured` on a width-E, H-head layer."""
    D = E // H
    need = H * E + 1 + 2 * -(-(2 * D * E + 2 * D) // D) + seq_len
    n_seq = -(-need // seq_len)
    qk_cols = 2 * D * E + 2 * D
    return n_seq, n_seq * seq_len, qk_cols, qk_cols <= qk_max_cols


def gpt2_structured_bytes(E: int, H: int, seq_len: int = 8, qk_max_cols: int = 20_000) -> int:
    """Memory (bytes) of :func:`gpt2_structured` on a width-E, H-head GPT-2 layer, computed
    from the sizes alone (checked before a layer is built: ``bench identifiability --gpt2``)."""
    from .resources import array_bytes

    _, NL, qk_cols, do_qk = _gpt2_sizes(E, H, seq_len, qk_max_cols)
    return (
        array_bytes(NL, H * E + 1) * 3
        + array_bytes(H, NL, seq_len)
        + (array_bytes(NL * (E // H), qk_cols) * 3 if do_qk else 0)
    )


def _gpt2_heads(module, cfg: dict, w, X, scale: float, mask):
    """Per head, the attention probabilities and the value vectors on X, after a self-check of
    their reconstruction against the module's own forward (float64 copy)."""
    Wq, bq, Wk, bk, Wv, bv, Wo, bo = w
    H = len(Wq)
    _, run, _ = _forward(module, "GPT2Attention", cfg, X.shape[1])
    with torch.no_grad():
        A = [_probs(X, Wq[h], bq[h], Wk[h], scale, mask) for h in range(H)]
        Vt = [X @ Wv[h].T + bv[h] for h in range(H)]
        y = sum((A[h] @ Vt[h]) @ Wo[h].T for h in range(H)) + bo
        ym = run(X[:4])
    if not torch.allclose(y[:4], ym, atol=1e-10, rtol=1e-8):
        raise RuntimeError("gpt2_structured: the reconstruction disagrees with the module")
    return A, Vt


def _gpt2_worst_factor(Wq, Wv, Wo) -> float:
    """The smallest relative singular value of every W_Q^h, W_V^h, W_O^h and of W_O."""
    H, E, C = Wo.shape
    return min(
        min(_min_sv_ratio(Wq[h]) for h in range(H)),
        min(_min_sv_ratio(Wv[h]) for h in range(H)),
        min(_min_sv_ratio(Wo[h]) for h in range(H)),
        _min_sv_ratio(Wo.transpose(0, 1).reshape(E, H * C)),
    )


def _gpt2_qk_lower(w, X, K, Vt, scale: float, mask, g, qk_cols: int, min_gap: float, gaps):
    """The query/key part of the lower bound: per head, the gap rank of the Jacobian of the
    projection off col K of its output (on a seeded row subset, drawn from ``g``), 0 for a
    head whose gap is below ``min_gap``; each head's gap is appended to ``gaps``."""
    from torch.func import jacfwd

    Wq, bq, Wk, bk, Wv, bv, Wo, bo = w
    H, D, E = Wq.shape
    C = D
    NL = K.shape[0]
    qk_lower = 0
    Q, _ = torch.linalg.qr(K)  # (NL, nK) orthonormal basis of col K
    keep = -(-5 * qk_cols // 4)
    rows_sel = torch.randperm(NL * C, generator=g)[:keep].sort().values
    for h in range(H):
        Vh = Vt[h]

        def z(theta, h=h, Vh=Vh):
            wq = theta[: D * E].view(D, E)
            bqh = theta[D * E : D * E + D]
            wk = theta[D * E + D : 2 * D * E + D].view(D, E)
            bkh = theta[2 * D * E + D :]
            lg = ((X @ wq.T + bqh) @ (X @ wk.T + bkh).transpose(-1, -2)) * scale + mask
            Z = (torch.softmax(lg, dim=-1) @ Vh).reshape(NL, C)
            return (Z - Q @ (Q.T @ Z)).reshape(-1)

        theta = torch.cat([Wq[h].reshape(-1), bq[h], Wk[h].reshape(-1), bk[h]])
        with _forward_ad():
            Jh = jacfwd(z)(theta)  # forward mode: fewer columns than rows
        if Jh.shape[0] > keep:  # a row subset: its rank is still a lower bound
            Jh = Jh[rows_sel]
        r, gh = gap_rank(torch.linalg.svdvals(Jh).numpy(), qk_cols, min_gap)
        del Jh
        gaps.append(gh)
        if gh[2] < min_gap:
            r = 0
        qk_lower += r
    return qk_lower


def gpt2_structured(
    module,
    *,
    seed: int = 0,
    seq_len: int = 8,
    min_gap: float = MIN_GAP,
    qk_max_cols: int = 20_000,
) -> ModuleIdentifiability:
    """Bounds on rank J of a causal ``GPT2Attention`` by its structure, without a dense J.

    Upper bound (free): the gauge family (QK GL(D) acting on W_Q, b_Q, W_K, b_K; the inert key
    bias; OV GL(C) on W_V, b_V, W_O; value/output bias aliasing) has dimension H(D² + D + C² + C)
    when every W_Q^h and W_V^h has full rank D (checked), and lies in ker J (checked by JVP on
    random combinations), so rank J <= P - H(D² + D + C² + C).

    Lower bound: with K = [A_h X̃]_h (the attention-averaged inputs with the ones column) of full
    column rank and W_O, each W_O^h and W_V^h of full rank (checked from the singular-value gaps),
    the value/output part contributes exactly H(2CE - C²) + E (tangent dimension of the rank-C
    products, plus the output bias), and each head's query/key part adds the rank of
    P⊥ ∂(A_h Ṽ_h)/∂(W_Q^h, b_Q^h, W_K^h, b_K^h) (P⊥ the projection off col K; block diagonal
    across heads through the full-column-rank W_O) on a seeded subset of 1.25x its columns' count
    of rows (a row subset's rank is a lower bound), measured by jacfwd and the gap rule when the
    block has at most ``qk_max_cols`` columns (else 0: not certified). Certified when the bounds
    meet; otherwise ``undecided`` with both bounds in the notes."""
    from .resources import require

    if not _is_hf(module, "GPT2Attention"):
        raise ConfigError(f"gpt2_structured needs a GPT2Attention (got {type(module).__name__})")
    cfg = module_config(module)
    t0 = time.perf_counter()
    E, H, D, w = _gpt2_weights(module)
    C = D
    Wq, bq, Wk, bk, Wv, bv, Wo, bo = w
    P = 4 * E * E + 4 * E
    nK = H * E + 1
    n_seq, NL, qk_cols, do_qk = _gpt2_sizes(E, H, seq_len, qk_max_cols)
    require(
        bytes=gpt2_structured_bytes(E, H, seq_len, qk_max_cols),
        what=f"the structured rank bounds of GPT2Attention E={E} H={H}",
    )
    notes = []
    g = torch.Generator().manual_seed(int(seed) + 1)
    X = torch.randn(n_seq, seq_len, E, generator=g, dtype=torch.float64)
    mask = _causal_mask(seq_len)
    scale = float(module.scaling)
    A, Vt = _gpt2_heads(module, cfg, w, X, scale, mask)
    # full ranks of the factors (gap against the smallest possible: ratio of extreme values)
    worst = _gpt2_worst_factor(Wq, Wv, Wo)
    factors_ok = worst > 1.0 / min_gap * 1e-6  # well above the noise floor eps*E
    notes.append(f"smallest relative singular value of W_Q^h, W_V^h, W_O^h, W_O: {worst:.2e}")
    # upper bound
    gauge_dim = H * (D * D + D + C * C + C)
    resid = _gauge_check(module, E, H, D, w, X[: min(4, n_seq)], seed)
    notes.append(f"gauge directions: relative output change {resid:.1e} (random: 1)")
    upper = P - gauge_dim if (factors_ok and resid < 1e-9) else P
    # lower bound: the OV part through K
    K, rK, gK = _gpt2_K(A, X, nK, min_gap)
    gaps = [gK]
    K_ok = rK == nK and gK[2] >= min_gap
    notes.append(f"K: {NL} x {nK}, rank {rK}, gap ratio {gK[2]:.1e}")
    lower = (H * (2 * C * E - C * C) + E) if (K_ok and factors_ok) else 0
    qk_lower = 0
    if K_ok and factors_ok and do_qk:
        qk_lower = _gpt2_qk_lower(w, X, K, Vt, scale, mask, g, qk_cols, min_gap, gaps)
    elif not do_qk:
        notes.append(
            f"query/key blocks ({NL * C} x {qk_cols} per head) over qk_max_cols: not certified"
        )
    lower += qk_lower
    notes.append(f"rank bounds: {lower} <= rank J <= {upper}")
    notes.append(f"unidentified >= {P - upper}, <= {P - lower}")
    gap = min(gaps, key=lambda t: t[2])
    rank = lower if lower == upper else None
    return _measured("GPT2Attention", cfg, P, rank, gap, "structured", NL * E, t0, notes)


def _gpt2_K(A, X, nK: int, min_gap: float):
    """K = [A_h X]_h with the ones column (NL x nK), its gap rank and gap."""
    N, L, E = X.shape
    NL = N * L
    ones = torch.ones(NL, 1, dtype=torch.float64)
    with torch.no_grad():
        K = torch.cat([(A[h] @ X).reshape(NL, E) for h in range(len(A))] + [ones], dim=1)
        rK, gK = gap_rank(torch.linalg.svdvals(K).numpy(), nK, min_gap)
    return K, rK, gK


def bench_rows(widths=(16, 32, 64), heads: int = 4, seed: int = 0) -> list[dict]:
    """Time and peak memory of :func:`gpt2_structured` (and of the dense :func:`of_module` where
    P <= 5,000) on random causal GPT-2 layers of widths ``widths``: the cost curve.
    Times are informational; nothing decided depends on them."""
    import resource

    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    rows = []
    for E in widths:
        H = heads if not isinstance(heads, dict) else heads[E]
        torch.manual_seed(seed)
        a = GPT2Attention(GPT2Config(n_embd=E, n_head=H, n_layer=1), layer_idx=0)
        for method in ("structured", "dense"):
            if method == "dense" and 4 * E * E + 4 * E > 5_000:
                continue
            r = gpt2_structured(a, seed=seed) if method == "structured" else of_module(a, seed=seed)
            rows.append(
                {
                    "E": E,
                    "H": H,
                    "P": r.total,
                    "method": method,
                    "measured": r.measured,
                    "predicted": r.predicted,
                    "status": r.status,
                    "gap_ratio": r.gap[2],
                    "seconds": round(r.seconds, 2),
                    "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                    "notes": list(r.notes),
                }
            )
    return rows
