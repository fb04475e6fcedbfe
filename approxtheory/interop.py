"""Export a construction or a :class:`~approxtheory.model.Transformer` to TransformerLens 4 and to
Hugging Face ``transformers``, with a parity report.

Example (needs the optional ``transformer-lens`` package)::

    from approxtheory.interop import export
    ex = export("hc_k1", to="tl")          # a TransformerBridge + a ParityReport
    ex.report.max_abs_diff, ex.report.dtype

Targets:

* ``tl``: a native TransformerLens bridge (``TransformerBridge.boot_native``) holding every
  attention / FFN layer. The encoder (token MLP, one-hot or learned positions, the CLS token) and
  the read-out run outside the bridge: the bridge takes the residual stream at block 0
  (``start_at_layer=0``) with the model's attention mask, and returns the last residual stream
  (its unembedding is the identity). TransformerLens refuses an attention scale of 1, so a model
  with ``attn_scale=1`` is exported with scale 2 and W_Q, b_Q doubled (exact in binary floating
  point); per-layer scales (per-layer head widths at the default 1/sqrt(head_dim)) are folded
  into each layer's W_Q under scale 2 (one rounding per query). Heads are zero-padded to the
  widest layer (heads, head widths, value widths, KV groups expanded) and FFN hidden units to
  the widest FFN: zero heads and units add exactly zero.
  TransformerLens computes RMSNorm and RoPE tables in float32, so a model with either is compared
  in float32 (stated in the report).
* ``hf``: a ``transformers`` ``PreTrainedModel`` of architecture ``approxtheory`` (registered
  with ``AutoConfig`` / ``AutoModel`` when this module's :func:`hf_classes` runs) holding the whole
  model, encoder and read-out included, written with ``save_pretrained`` (safetensors) and
  reloaded with ``from_pretrained``; it computes in the model's dtype (float64 for the
  constructions). The directory carries ``modeling_approxtheory.py`` and an ``auto_map`` in
  config.json: ``transformers.AutoModel.from_pretrained(dir, trust_remote_code=True)`` loads it
  in a fresh process (approxtheory installed), without calling :func:`hf_classes` first.

What a target cannot express is a :class:`~approxtheory.errors.ConfigError` naming it, raised
from the configuration alone, before anything is allocated.

``transformers`` and ``transformer_lens`` are optional heavy dependencies (extras ``hf`` and
``tl``): they are imported only inside the functions that need them.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .errors import ConfigError
from .interop_targets import ParityReport, all_equal, hf_refusal, refuse, tl_refusal

__all__ = [
    "TARGETS",
    "ParityReport",
    "Exported",
    "export",
    "tl_refusal",
    "hf_refusal",
    "load_tl",
    "load_hf",
    "hf_classes",
    "resolve",
    "check_source",
    "result_witness",
]

TARGETS = ("tl", "hf")
#: parity allowed when the target computes in float64 / float32
PARITY_TOL = {"float64": 1e-12, "float32": 1e-5}
_TL_CONFIG = "approxtheory_tl_config.json"
_TL_WEIGHTS = "model.safetensors"
_MODEL_CONFIG = "approxtheory_model_config.json"


@dataclass
class Exported:
    """The exported object (``obj``: a TransformerBridge or a transformers model), the source
    model, where it was written (``path``, or None), the parity report (None without a check) and
    ``forward(x)``: the model's outputs computed through the target (the pieces in
    ``report.outside`` by the source model)."""

    target: str
    obj: Any
    model: Any
    path: Path | None
    report: ParityReport | None
    construction: Any = None

    #: the model whose encoder and read-out run with ``obj`` (the reloaded one where written)
    io_model: Any = None

    def forward(self, x) -> torch.Tensor:
        return _forward(self.target, self.obj, self.io_model or self.model, x)

    def recheck(self, seed: int = 0, n_random: int = 64, budget: int = 512) -> ParityReport:
        """The parity report of ``obj`` as it is now (e.g. after editing its weights)."""
        return _check(
            self.target,
            self.obj,
            self.model,
            self.io_model or self.model,
            self.construction,
            seed,
            n_random,
            budget,
            self.path is not None,
            self.report.architecture if self.report else self.target,
            list(self.report.notes) if self.report else [],
        )


# ------------------------------------------------------------------------------- sources


def check_source(name_or_result) -> None:
    """Refuse (ConfigError, one line) what names no source: not a construction and no existing
    path. Cheap: nothing is built or read (:func:`resolve` reads and checks the rest)."""
    from .constructions import REGISTRY
    from .errors import did_you_mean

    s = str(name_or_result)
    if not s.strip():  # an empty value is a value (refused), not the current directory
        raise ConfigError(f"the export source is empty (got {s!r}); give {_allowed_sources()}")
    if s in REGISTRY or Path(s).exists():
        return
    if os.path.islink(s):  # a dangling link or a loop is not an unknown name
        raise ConfigError(
            f"export source {s!r} is a symbolic link that leads nowhere (dangling or a loop)"
        )
    raise ConfigError(
        f"unknown construction or results path {s!r}{did_you_mean(s, REGISTRY)}; give "
        f"{_allowed_sources()}"
    )


def _allowed_sources() -> str:
    from .constructions import REGISTRY

    return (
        f"a construction ({', '.join(REGISTRY)}: `approxtheory construct --list`), a "
        "`construct NAME --json` file or a directory written by `approxtheory export --to hf`"
    )


def resolve(name_or_result):
    """A construction or a Transformer from what the command line names: a construction name,
    a ``construct NAME --json`` result file (rebuilt from its construction and knobs), or a
    directory written by :func:`export` (``hf`` or ``tl``: its model, encoder and read-out
    included). Unknown names and paths are a ConfigError saying what is allowed."""
    from .constructions import REGISTRY, build

    s = str(name_or_result)
    check_source(s)
    if s in REGISTRY:
        return build(s)
    p = Path(s)
    allowed = _allowed_sources()
    if p.is_dir():
        if (p / _TL_CONFIG).is_file():
            _tl_source_model(p)
        if os.path.lexists(p / "config.json"):  # read_hf_config says what is wrong with it
            return load_hf(p).transformer
        raise ConfigError(f"{s!r} is a directory without an exported model; give {allowed}")
    from .foreign import MAX_TABLE_BYTES, read_json

    rec = read_json(p, where=f"export source {s!r}", max_bytes=MAX_TABLE_BYTES)
    if not isinstance(rec, dict) or rec.get("construction") not in REGISTRY:
        raise ConfigError(
            f"{s!r} names no known construction (field 'construction'); give {allowed}"
        )
    knobs = rec.get("knobs") or {}
    if not isinstance(knobs, dict) or not all(
        isinstance(v, (int, float, str, bool)) for v in knobs.values()
    ):
        raise ConfigError(
            f"{s!r}: field 'knobs' must map knob names to numbers (got {str(knobs)[:80]})"
        )
    return build(rec["construction"], **knobs)


def result_witness(name_or_result):
    """The witness recorded in a ``construct NAME --json`` result file, as a ``(1, T, d)`` array,
    or None (a construction name, a directory, a result without a finite witness)."""
    from .foreign import MAX_TABLE_BYTES, read_json

    p = Path(str(name_or_result))
    if not p.is_file():
        return None
    try:
        rec = read_json(p, where=str(p), max_bytes=MAX_TABLE_BYTES)
        w = np.asarray(rec.get("witness") if isinstance(rec, dict) else None, dtype=np.float64)
    except (ValueError, TypeError):  # ConfigError is a ValueError
        return None
    return w[None] if w.ndim == 2 and np.isfinite(w).all() else None


def _tl_source_model(p: Path):
    """The whole Transformer of a TransformerLens export: its encoder and read-out from
    ``outside.safetensors``, its layers read back from the native weights is not supported:
    a TL export is re-exported from its construction instead."""
    raise ConfigError(
        f"{str(p)!r} is a TransformerLens export; export its construction (or the "
        "Hugging Face export, which holds the whole model) instead"
    )


def _source(obj):
    """(model, construction or None) from a construction name, a Construction or a Transformer."""
    from .model import Transformer

    if isinstance(obj, str):
        from .constructions import build

        c = build(obj)
        return c.model, c
    if isinstance(obj, Transformer):
        return obj, None
    model = getattr(obj, "model", None)
    if isinstance(model, Transformer) and hasattr(obj, "task"):
        return model, obj
    raise ConfigError(
        "export takes a construction name, a Construction or an approxtheory Transformer "
        f"(got {type(obj).__name__})"
    )


def _check_out(out) -> Path | None:
    """``out`` as a Path whose nearest existing ancestor is a writable directory (checked before
    any work), or None."""
    if out is None:
        return None
    p = Path(out)
    if p.is_symlink() and not p.exists():
        raise ConfigError(
            f"--out {str(p)!r} is a symbolic link that leads nowhere (dangling or a loop); "
            "remove it or give another directory"
        )
    if p.exists() and not p.is_dir():
        raise ConfigError(f"--out {str(p)!r} exists and is not a directory")
    q = p
    while not q.exists():
        q = q.parent
    if not q.is_dir() or not os.access(q, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {str(p)!r}: {str(q)!r} is not a writable directory")
    try:  # the real test: the temporary folder the export is written into
        os.rmdir(tempfile.mkdtemp(prefix=".export-", dir=q))
    except OSError as e:
        raise ConfigError(
            f"--out {str(p)!r}: cannot write in {str(q)!r} ({e.strerror or e})"
        ) from None
    return p


def _publish(tmp: Path, out: Path) -> None:
    """Move every file written in ``tmp`` into ``out`` (each by an atomic rename)."""
    from .io import _mode_for

    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(tmp.iterdir()):
        os.chmod(f, _mode_for(out / f.name))  # as open() would give it (writers use 0600)
        os.replace(f, out / f.name)


# ------------------------------------------------------------------------------- TransformerLens


def _tl_layout(cfg) -> dict:
    """The padded sizes of the TransformerLens model."""
    layers = cfg.layers
    H = max(s.heads for s in layers)
    Dh = max(max(s.head_dim, s.value_dim) for s in layers)
    uniform = (
        all_equal((s.heads, s.head_dim, s.value_dim, s.kv_groups) for s in layers)
        and layers[0].head_dim == layers[0].value_dim
    )
    G = layers[0].kv_groups if uniform else H
    d_mlp = max((s.ffn_hidden[0] for s in layers if s.ffn_hidden), default=0)
    return {"H": H, "Dh": Dh, "G": G, "d_mlp": d_mlp, "padded": not uniform}


def _tl_scale(cfg, layer_head_dims) -> tuple[float, list[float]]:
    """(TransformerLens's attn_scale (it divides the logits by it), the factor on each layer's
    W_Q, b_Q). One scale s for every layer: 1/s (s = 1: 2, W_Q doubled, as TransformerLens
    refuses 1). Per-layer scales s_l (per-layer head widths at the default 1/sqrt(head_dim)):
    2, with s_l folded into W_Q as 2 s_l (exact up to one rounding of each query)."""
    s = cfg.attn_scale
    per = [1.0 / math.sqrt(n) if s is None else s for n in layer_head_dims]
    if len(set(per)) > 1:
        return 2.0, [2.0 * v for v in per]
    s = per[0]
    if math.isclose(s, 1.0, rel_tol=0, abs_tol=1e-9):
        return 2.0, [2.0] * len(per)  # TransformerLens refuses scale 1
    return 1.0 / s, [1.0] * len(per)


#: context length of a TransformerLens export of a model without a fixed sequence length
DEFAULT_N_CTX = 1024


def _tl_config_dict(cfg, T: int | None = None) -> dict:
    lay = _tl_layout(cfg)
    scale, _ = _tl_scale(cfg, [s.head_dim for s in cfg.layers])
    T_tot = (cfg.seq_len or T or DEFAULT_N_CTX) + (1 if cfg.readout == "cls" else 0)
    norm = "RMS" if cfg.rmsnorm else ("LN" if cfg.layernorm else None)
    rd = None
    if cfg.rope is not None:
        rd = cfg.layers[0].head_dim if cfg.rope == "full" else int(cfg.rope)
    d = {
        "d_model": cfg.width,
        "n_heads": lay["H"],
        "d_head": lay["Dh"],
        "n_layers": len(cfg.layers),
        "n_ctx": max(T_tot, 2),
        "d_vocab": 1,
        "d_vocab_out": cfg.width,
        "attn_only": lay["d_mlp"] == 0,
        "normalization_type": norm,
        "final_rms": bool(cfg.rmsnorm),
        "eps": float(cfg.rms_eps) if cfg.rmsnorm else 1e-5,
        "attention_dir": "causal" if cfg.causal else "bidirectional",
        "attn_scale": scale,
        "use_attn_scale": True,
        "positional_embedding_type": "rotary" if rd else "standard",
        "init_weights": False,
        "seed": 0,
    }
    if lay["G"] != lay["H"]:
        d["n_key_value_heads"] = lay["G"]
    if lay["d_mlp"]:
        d["d_mlp"] = lay["d_mlp"]
        d["act_fn"] = {"relu": "relu", "gelu": "gelu", "swiglu": "silu"}[cfg.ffn_kind]
        d["gated_mlp"] = cfg.ffn_kind == "swiglu"
    if rd:
        d["rotary_dim"] = rd
        d["rotary_base"] = float(cfg.rope_base)
    return d


def _need(module: str, extra: str, package: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            f"this export needs the optional package {package} "
            f"(pip install 'approxtheory[{extra}]'); it is not installed"
        )


def _tl_boot(cfg_dict: dict, dtype: torch.dtype):
    """A native TransformerLens bridge (``TransformerBridge.boot_native``) of ``cfg_dict``."""
    _need("transformer_lens", "tl", "transformer-lens")
    from transformer_lens.config import TransformerBridgeConfig
    from transformer_lens.model_bridge.sources.native import boot  # = TransformerBridge.boot_native

    tcfg = TransformerBridgeConfig(**cfg_dict, dtype=dtype)
    return boot(tcfg, dtype=dtype)


def _tl_native(bridge):
    """The NativeModel inside a bridge."""
    from transformer_lens.model_bridge.sources.native.model import NativeModel

    for m in (
        getattr(bridge, "original_model", None),
        getattr(bridge._driver, "underlying_model", None),
    ):
        if isinstance(m, NativeModel):
            return m
    raise ConfigError("not a native TransformerLens bridge (no NativeModel inside)")


def _tl_params(native) -> dict[str, torch.Tensor]:
    """The NativeModel's parameters by their native names (the bridge wraps its submodules:
    ``._original_component`` segments are dropped; a tensor reached by several names once)."""
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, p in native.named_parameters(remove_duplicate=False):
        key = name.replace("._original_component", "")
        if id(p) in seen or key in out:
            continue
        seen.add(id(p))
        out[key] = p
    return out


def _tl_write_params(native, st: dict[str, torch.Tensor]) -> None:
    """Write ``st`` (native names) into the bridge's model; parameters it does not name (a
    bias the bridge adds) are zeroed; a name the model lacks is an error."""
    params = _tl_params(native)
    unknown = sorted(set(st) - set(params))
    if unknown:
        raise ConfigError(f"TransformerLens model has no parameter(s) {', '.join(unknown)}")
    with torch.no_grad():
        for k, p in params.items():
            if k in st:
                if tuple(p.shape) != tuple(st[k].shape):
                    raise ConfigError(
                        f"TransformerLens parameter {k} has shape {tuple(p.shape)} "
                        f"(got {tuple(st[k].shape)})"
                    )
                p.copy_(st[k].to(p.dtype))
            else:
                p.zero_()


def _tl_state(model, cfg_dict: dict) -> dict[str, torch.Tensor]:
    """The NativeModel's state dict holding ``model``'s layers (zero-padded)."""
    cfg = model.cfg
    dt, E = cfg.torch_dtype, cfg.width
    _, qfs = _tl_scale(cfg, [s.head_dim for s in cfg.layers])
    st: dict[str, torch.Tensor] = {
        "tok_embed.weight": torch.zeros(1, E, dtype=dt),
        "head.weight": torch.eye(E, dtype=dt),
    }
    if cfg_dict["positional_embedding_type"] == "standard":
        st["pos.weight"] = torch.zeros(cfg_dict["n_ctx"], E, dtype=dt)
    with torch.no_grad():
        for li, blk in enumerate(model.layers):
            st.update(_tl_attn_state(blk.attn, cfg, cfg_dict, qfs[li], f"layers.{li}.attn"))
            _tl_norm(st, cfg, f"layers.{li}.ln1", blk.ln1)
            if not cfg_dict["attn_only"]:
                _tl_mlp_state(st, blk, cfg, cfg_dict.get("d_mlp", 0), f"layers.{li}")
        if cfg.final_norm:
            _tl_norm(st, cfg, "ln_out", model.ln_f)
    return st


def _tl_norm(st: dict, cfg, prefix: str, mod) -> None:
    """A norm's weight (and LayerNorm's bias) into ``st`` under ``prefix``; nothing without one."""
    if cfg.rmsnorm:
        st[f"{prefix}.weight"] = mod.weight.detach().clone()
    elif cfg.layernorm:
        st[f"{prefix}.weight"] = mod.weight.detach().clone()
        st[f"{prefix}.bias"] = mod.bias.detach().clone()


def _tl_attn_state(a, cfg, cfg_dict: dict, qf: float, p: str) -> dict[str, torch.Tensor]:
    """One attention layer's TL weights, zero-padded to ``n_heads`` x ``d_head``, the scale
    ``qf`` folded into W_Q and b_Q."""
    dt, E = cfg.torch_dtype, cfg.width
    H, Dh = cfg_dict["n_heads"], cfg_dict["d_head"]
    G = cfg_dict.get("n_key_value_heads", H)
    kvh = G if G != H else H
    Wq, Wk, Wv = (torch.zeros(n, Dh, E, dtype=dt) for n in (H, kvh, kvh))
    bq, bk, bv = (torch.zeros(n, Dh, dtype=dt) for n in (H, kvh, kvh))
    Wo = torch.zeros(E, H, Dh, dtype=dt)
    q_w = a.q.weight.view(a.h, a.n, E)
    k_w = a.k.weight.view(a.g, a.n, E)
    v_w = a.v.weight.view(a.g, a.c, E)
    o_w = a.o.weight.view(E, a.h, a.c)
    rep = a.h // a.g
    Wq[: a.h, : a.n] = q_w * qf
    Wo[:, : a.h, : a.c] = o_w
    if kvh == a.g and G != H:  # GQA kept as it is
        Wk[:, : a.n], Wv[:, : a.c] = k_w, v_w
    else:  # one KV head per query head
        Wk[: a.h, : a.n] = k_w.repeat_interleave(rep, dim=0)
        Wv[: a.h, : a.c] = v_w.repeat_interleave(rep, dim=0)
    if cfg.bias:
        bq[: a.h, : a.n] = a.q.bias.view(a.h, a.n) * qf
        kb, vb = a.k.bias.view(a.g, a.n), a.v.bias.view(a.g, a.c)
        if kvh == a.g and G != H:
            bk[:, : a.n], bv[:, : a.c] = kb, vb
        else:
            bk[: a.h, : a.n] = kb.repeat_interleave(rep, dim=0)
            bv[: a.h, : a.c] = vb.repeat_interleave(rep, dim=0)
    st: dict[str, torch.Tensor] = {}
    st[f"{p}.q.weight"], st[f"{p}.q.bias"] = Wq.reshape(H * Dh, E), bq.reshape(-1)
    st[f"{p}.k.weight"], st[f"{p}.k.bias"] = Wk.reshape(kvh * Dh, E), bk.reshape(-1)
    st[f"{p}.v.weight"], st[f"{p}.v.bias"] = Wv.reshape(kvh * Dh, E), bv.reshape(-1)
    st[f"{p}.o.weight"] = Wo.reshape(E, H * Dh)
    st[f"{p}.o.bias"] = a.o.bias.detach().clone() if cfg.bias else torch.zeros(E, dtype=dt)
    return st


def _tl_mlp_state(st: dict, blk, cfg, d_mlp: int, layer: str) -> None:
    """One layer's MLP (zero-padded to ``d_mlp``; all zero without one) and its norm into ``st``."""
    dt, E, m, ffn = cfg.torch_dtype, cfg.width, f"{layer}.mlp", blk.ffn
    if cfg.ffn_kind == "swiglu":
        g_, i_ = (torch.zeros(d_mlp, E, dtype=dt) for _ in range(2))
        o_ = torch.zeros(E, d_mlp, dtype=dt)
        if ffn is not None:
            k = ffn.w1.weight.shape[0]
            g_[:k], i_[:k], o_[:, :k] = ffn.w1.weight, ffn.w3.weight, ffn.w2.weight
        st[f"{m}.gate.weight"], st[f"{m}.in.weight"] = g_, i_
        st[f"{m}.out.weight"] = o_
    else:
        w1, b1 = torch.zeros(d_mlp, E, dtype=dt), torch.zeros(d_mlp, dtype=dt)
        w2, b2 = torch.zeros(E, d_mlp, dtype=dt), torch.zeros(E, dtype=dt)
        if ffn is not None:
            l1, l2 = ffn.mlp.linears
            k = l1.weight.shape[0]
            w1[:k], w2[:, :k] = l1.weight, l2.weight
            if l1.bias is not None:
                b1[:k], b2[:] = l1.bias, l2.bias
        st[f"{m}.fc_in.weight"], st[f"{m}.fc_in.bias"] = w1, b1
        st[f"{m}.fc_out.weight"], st[f"{m}.fc_out.bias"] = w2, b2
    if ffn is not None:
        _tl_norm(st, cfg, f"{layer}.ln2", blk.ln2)
    elif cfg.layernorm or cfg.rmsnorm:  # a zero MLP: its norm's values do not matter
        st[f"{layer}.ln2.weight"] = torch.ones(E, dtype=dt)
        if cfg.layernorm:
            st[f"{layer}.ln2.bias"] = torch.zeros(E, dtype=dt)


def _tl_bytes(cfg_dict: dict, itemsize: int) -> int:
    """Memory of the TransformerLens model (parameters, twice while they are written, and each
    layer's n_ctx x n_ctx causal-mask buffer)."""
    E, H, Dh, L = (cfg_dict[k] for k in ("d_model", "n_heads", "d_head", "n_layers"))
    G = cfg_dict.get("n_key_value_heads", H)
    d_mlp, n_ctx = cfg_dict.get("d_mlp", 0), cfg_dict["n_ctx"]
    per_layer = (2 * H + 2 * G) * Dh * E + (H + 2 * G) * Dh + E + 3 * d_mlp * E + 2 * d_mlp + 4 * E
    params = L * per_layer + (n_ctx + 1 + E) * E
    return 2 * params * itemsize + L * n_ctx * n_ctx


def _tl_export(model, T: int | None = None):
    from .resources import require

    cfg = model.cfg
    cfg_dict = _tl_config_dict(cfg, T)
    require(
        bytes=_tl_bytes(cfg_dict, 8 if cfg.dtype == "float64" else 4),
        what=f"the TransformerLens model ({cfg_dict['n_layers']} layers, n_ctx "
        f"{cfg_dict['n_ctx']})",
    )
    bridge = _tl_boot(cfg_dict, cfg.torch_dtype)
    native = _tl_native(bridge)
    st = _tl_state(model, cfg_dict)
    _tl_write_params(native, st)
    bridge.eval()
    return bridge, cfg_dict


def load_tl(path):
    """A TransformerLens bridge and the source model's config from a directory written by
    ``export(..., to="tl", out=path)``; returns ``(bridge, model)`` where ``model`` is an
    approxtheory Transformer holding the encoder and read-out (its layers are not used)."""
    from safetensors.torch import load_file

    p = Path(path)
    if not (p / _TL_CONFIG).is_file() or not (p / _TL_WEIGHTS).is_file():
        raise ConfigError(f"{str(p)!r} is not a TransformerLens export of approxtheory")
    meta = json.loads((p / _TL_CONFIG).read_text())
    model = _model_from_dict(meta["model_config"])
    outside = load_file(str(p / "outside.safetensors"))
    model.load_state_dict(outside, strict=False)
    dtype = model.cfg.torch_dtype
    bridge = _tl_boot(meta["tl_config"], dtype)
    _tl_write_params(_tl_native(bridge), load_file(str(p / _TL_WEIGHTS)))
    bridge.eval()
    return bridge, model


def _tl_write(bridge, model, cfg_dict, out: Path) -> None:
    from safetensors.torch import save_file

    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=_existing(out)))
    try:
        native = _tl_native(bridge)
        save_file(
            {k: v.detach().contiguous() for k, v in _tl_params(native).items()}, tmp / _TL_WEIGHTS
        )
        outside = {
            k: v.detach().contiguous()
            for k, v in model.state_dict().items()
            if not k.startswith("layers.")
        }
        save_file(outside, tmp / "outside.safetensors")
        meta = {"tl_config": cfg_dict, "model_config": _model_dict(model.cfg)}
        (tmp / _TL_CONFIG).write_text(json.dumps(meta, indent=2))
        _publish(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _existing(out: Path) -> Path:
    q = out
    while not q.exists():
        q = q.parent
    return q


# ------------------------------------------------------------------------------- Hugging Face

_HF_CLASSES: tuple | None = None


def hf_classes():
    """``(ApproxTheoryConfig, ApproxTheoryModel)``: the transformers config and model classes of
    the ``approxtheory`` architecture, registered with AutoConfig / AutoModel (once)."""
    global _HF_CLASSES
    if _HF_CLASSES is not None:
        return _HF_CLASSES
    _need("transformers", "hf", "transformers")
    from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one-line output on the command line

    class ApproxTheoryConfig(PretrainedConfig):
        model_type = "approxtheory"

        def __init__(self, model_config: dict | None = None, **kwargs):
            self.model_config = model_config or {}
            super().__init__(**kwargs)

    class ApproxTheoryModel(PreTrainedModel):
        config_class = ApproxTheoryConfig
        base_model_prefix = "transformer"
        _no_split_modules: list[str] = []

        def __init__(self, config):
            super().__init__(config)
            self.transformer = _model_from_dict(config.model_config)
            self.post_init()

        def _init_weights(self, module):  # the weights are the exported ones
            return

        def forward(self, inputs, return_attention: bool = False):
            _restore_buffers(self.transformer)
            return self.transformer(inputs, return_attention=return_attention)

    AutoConfig.register("approxtheory", ApproxTheoryConfig, exist_ok=True)
    AutoModel.register(ApproxTheoryConfig, ApproxTheoryModel, exist_ok=True)
    _HF_CLASSES = (ApproxTheoryConfig, ApproxTheoryModel)
    return _HF_CLASSES


@torch.no_grad()
def _restore_buffers(model) -> None:
    """Recompute the RoPE frequencies (non-persistent buffers, not in the safetensors file;
    ``from_pretrained`` builds the model on the meta device and leaves them unset)."""
    from .model import Attention, rope_frequencies

    cfg = model.cfg
    for a in model.modules():
        if isinstance(a, Attention) and a.freqs.numel():
            f = rope_frequencies(a.freqs.numel(), cfg.rope_base, cfg.rope_freqs)
            dt = a.freqs.dtype
            if a.freqs.is_meta or not torch.equal(a.freqs, f.to(dtype=dt, device=a.freqs.device)):
                a.freqs = f.to(device=a.q.weight.device, dtype=dt)


def _hf_export(model):
    Cfg, Model = hf_classes()
    hf = Model(Cfg(model_config=_model_dict(model.cfg)))
    hf.transformer.load_state_dict(model.state_dict(), strict=True)
    hf.eval()
    return hf


def load_hf(path):
    """The model of a directory written by ``export(..., to="hf", out=path)``
    (``from_pretrained``, in the dtype it was saved in)."""
    from .hf_files import check_weights, read_hf_config, require_load

    p = Path(path)
    c = read_hf_config(p, option="export")  # typed and range-checked before anything is built
    if c["model_type"] != "approxtheory":
        raise ConfigError(
            f"{str(p)!r} holds a {c['model_type']!r} model; export reloads model_type "
            "'approxtheory' (written by `approxtheory export --to hf`)"
        )
    check_weights(p)
    dtype = c["_model_config"].torch_dtype
    require_load(c, p, itemsize=dtype.itemsize)
    _, Model = hf_classes()
    try:
        m = Model.from_pretrained(str(p), dtype=dtype)
    except (MemoryError, ConfigError):
        raise
    except Exception as e:  # weights that do not fit the config: the files' fault, not a bug
        raise ConfigError(
            f"could not load the model in {str(p)!r}: {type(e).__name__}: {str(e)[:200]}"
        ) from None
    _restore_buffers(m.transformer)
    m.eval()
    return m


#: the module an hf export carries beside its weights, named by ``auto_map`` in config.json, so
#: that ``AutoModel.from_pretrained(dir, trust_remote_code=True)`` loads it in a fresh process
#: (the approxtheory package installed); its classes are :func:`hf_classes`'s
HF_REMOTE_MODULE = "modeling_approxtheory"
HF_AUTO_MAP = {
    "AutoConfig": f"{HF_REMOTE_MODULE}.ApproxTheoryConfig",
    "AutoModel": f"{HF_REMOTE_MODULE}.ApproxTheoryModel",
}
_HF_REMOTE_CODE = '''"""The approxtheory architecture for ``transformers``, written by
``approxtheory export --to hf``: ``AutoModel.from_pretrained(folder, trust_remote_code=True)``
loads the model through the ``auto_map`` of config.json. The classes are the installed
package's (``pip install 'approxtheory[hf]'``): nothing else runs here."""

from approxtheory.interop import hf_classes

ApproxTheoryConfig, ApproxTheoryModel = hf_classes()

__all__ = ["ApproxTheoryConfig", "ApproxTheoryModel"]
'''


def _hf_write(hf, out: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=_existing(out)))
    try:
        # a class loaded before through auto_map is marked for an auto class: save_pretrained
        # would then copy the module defining it (this file) and rewrite auto_map; the export
        # carries its own small module instead
        for c in (type(hf), type(hf.config)):
            c._auto_class = None
        hf.config.auto_map = dict(HF_AUTO_MAP)
        hf.save_pretrained(str(tmp), safe_serialization=True)
        (tmp / f"{HF_REMOTE_MODULE}.py").write_text(_HF_REMOTE_CODE, encoding="utf-8")
        _publish(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------------- configs


def _model_dict(cfg) -> dict:
    d = asdict(cfg)
    return json.loads(json.dumps(d))  # tuples -> lists, JSON-clean


def _model_from_dict_cfg(d: dict):
    from .model import LayerSpec, ModelConfig

    d = dict(d)
    d["layers"] = [
        LayerSpec(**{**s, "ffn_hidden": tuple(s.get("ffn_hidden", ()))}) for s in d["layers"]
    ]
    for k in ("embed_hidden", "head_hidden"):
        d[k] = tuple(d.get(k, ()))
    if d.get("rope_freqs") is not None:
        d["rope_freqs"] = tuple(d["rope_freqs"])
    return ModelConfig(**d)


def _model_from_dict(d: dict):
    from .model import Transformer

    return Transformer(_model_from_dict_cfg(d))


# ------------------------------------------------------------------------------- forward + check


@torch.no_grad()
def _forward(target: str, obj, model, x) -> torch.Tensor:
    """The model's outputs computed through the exported object."""
    x = torch.as_tensor(np.asarray(x, dtype=np.float64)) if isinstance(x, np.ndarray) else x
    if target == "hf":
        return obj(x.to(model.cfg.torch_dtype))
    h, mask, _ = model._input_stream(x)
    n_ctx = obj.cfg.n_ctx
    if h.shape[1] > n_ctx:
        raise ConfigError(
            f"this TransformerLens export holds sequences of up to {n_ctx} positions "
            f"(the CLS token included); got {h.shape[1]}"
        )
    tl_mask = None if mask is None else (~mask)[None, None]
    r = obj(h, start_at_layer=0, attention_mask=tl_mask)  # (B, T+1, E): the last residual
    r = r[:, -1] if model.cls is not None else r
    return model.head(r)


def _compare_dtype(target: str, cfg) -> tuple[str, list[str]]:
    if cfg.dtype == "float32":
        return "float32", ["the model itself is float32"]
    if target == "tl":
        why = []
        if cfg.rmsnorm:
            why.append("TransformerLens computes RMSNorm in float32")
        if cfg.rope is not None:
            why.append("TransformerLens computes its RoPE tables in float32")
        if why:
            return "float32", why
    return "float64", []


def _inputs(model, construction, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cfg = model.cfg
    if construction is not None:
        return np.asarray(construction.task.sample(n, rng), dtype=np.float64)
    T = cfg.seq_len or 8
    return rng.standard_normal((n, T, cfg.d_in))


def _abs_max(a: torch.Tensor) -> float:
    """The largest |value| of a model output (inf when any is not finite: nothing then passes)."""
    a = a.to(torch.float64)
    if not bool(torch.isfinite(a).all()):
        return math.inf
    return float(a.abs().max()) if a.numel() else 0.0


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    d = (a.to(torch.float64) - b.to(torch.float64)).abs()
    return float(d.max()) if d.numel() else 0.0


def _check(
    target,
    obj,
    model,
    io_model,
    construction,
    seed,
    n_random,
    budget,
    reloaded,
    arch,
    notes,
    worst=None,
) -> ParityReport:
    """Parity of ``obj`` (with ``io_model``'s encoder and read-out where they run outside the
    target) against the source ``model``."""
    dtype, why = _compare_dtype(target, model.cfg)
    X = _inputs(model, construction, n_random, seed)
    with torch.no_grad():
        ref = model(X)
    rand = _max_diff(_forward(target, obj, io_model, X), ref)
    scale = _abs_max(ref)
    worst_d, n_worst, sup, sup_t, sup_search = None, 0, None, None, None
    if construction is not None:
        m = construction.measure(budget=budget, seed=seed, upper=False)
        w = m.get("witness")
        if w is not None and np.isfinite(np.asarray(w, dtype=np.float64)).all():
            W = np.asarray(w, dtype=np.float64)[None]
            with torch.no_grad():
                ref_w = model(W)
                out_w = _forward(target, obj, io_model, W)
            worst_d, n_worst = _max_diff(out_w, ref_w), 1
            scale = max(scale, _abs_max(ref_w))
            tgt = np.asarray(construction.task.target(W), dtype=np.float64)
            o = out_w.to(torch.float64).numpy().reshape(tgt.shape)
            has = ~np.isnan(tgt)  # a NaN target: no target at that position
            e = np.abs(o[has] - tgt[has])
            e = np.where(np.isnan(e), np.inf, e)  # never let NaN hide in a max
            sup = float(m["sup_error"])
            sup_t = float(e.max()) if e.size else 0.0
        if target == "hf" and reloaded:
            from .measure import sup_error

            r = sup_error(obj.transformer, construction.task, budget=budget, seed=seed)
            sup_search = float(r.value)
    if worst is not None:  # worst inputs given by the caller (a result file's witness)
        Wx = np.asarray(worst, dtype=np.float64)
        with torch.no_grad():
            ref_x = model(Wx)
            d = _max_diff(_forward(target, obj, io_model, Wx), ref_x)
        scale = max(scale, _abs_max(ref_x))
        worst_d = d if worst_d is None else max(worst_d, d)
        n_worst += int(Wx.shape[0])
    outside = (
        ["encoder (token MLP, positions, CLS token, attention mask)", "read-out"]
        if target == "tl"
        else []
    )
    return ParityReport(
        target=target,
        architecture=arch,
        dtype=dtype,
        tolerance=PARITY_TOL[dtype],
        max_abs_diff_worst=worst_d,
        max_abs_diff_random=rand,
        n_worst=n_worst,
        n_random=n_random,
        seed=seed,
        outside=outside,
        notes=[*why, *notes],
        reloaded=reloaded,
        sup_error=sup,
        sup_error_target=sup_t,
        sup_error_reloaded_search=sup_search,
        output_scale=scale,
    )


def export(
    construction_or_model,
    to: str = "tl",
    out=None,
    check: bool = True,
    *,
    seed: int = 0,
    n_random: int = 64,
    budget: int = 512,
    worst=None,
) -> Exported:
    """Export a construction (name or :class:`~approxtheory.constructions.Construction`) or a
    :class:`~approxtheory.model.Transformer` to TransformerLens (``to="tl"``) or Hugging Face
    (``to="hf"``); with ``out`` write it there (HF: ``save_pretrained``, safetensors; TL: the
    native model's safetensors and its config), and with ``check`` compare it -- reloaded from
    ``out`` where written -- with the model on the construction's search witness (``budget``
    sequences, ``seed``) and on ``n_random`` seeded random inputs (:class:`ParityReport`).

    ``worst`` (optional, shape ``(n, T, d_in)``) adds inputs to the worst ones compared, e.g.
    the witness recorded in a ``construct --json`` result.

    Refuses (ConfigError, before allocating) a target it does not know, an ``out`` that is not a
    writable directory and an architecture the target cannot express."""
    out_p, worst = _export_inputs(
        construction_or_model, to, out, check, seed, n_random, budget, worst
    )
    model, construction = _source(construction_or_model)
    refuse(to, model.cfg)
    notes: list[str] = []
    if to == "tl":
        obj, arch, model_for_check = _export_tl(model, construction, out_p, notes)
    else:
        obj = _hf_export(model)
        arch = "transformers PreTrainedModel, model_type 'approxtheory' (AutoModel)"
        model_for_check = model
        if out_p is not None:
            _hf_write(obj, out_p)
            obj = load_hf(out_p)
    report = None
    if check:
        report = _check(
            to,
            obj,
            model,
            model_for_check,
            construction,
            seed,
            n_random,
            budget,
            out_p is not None,
            arch,
            notes,
            worst,
        )
    return Exported(
        target=to,
        obj=obj,
        model=model,
        path=out_p,
        report=report,
        construction=construction,
        io_model=model_for_check,
    )


def _export_inputs(construction_or_model, to, out, check, seed, n_random, budget, worst):
    """``(out, worst)`` of :func:`export`, checked in its order (ConfigError on the first wrong)."""
    if to not in TARGETS:
        raise ConfigError(f"unknown export target {to!r}; targets: {', '.join(TARGETS)}")
    if not isinstance(check, (bool, np.bool_)):
        raise ConfigError(f"check must be True or False (got {check!r})")
    for name, v, lo in (("seed", seed, 0), ("n_random", n_random, 1), ("budget", budget, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ConfigError(f"{name} must be an integer >= {lo} (got {v!r})")
    out_p = _check_out(out)
    if worst is not None:
        w = np.asarray(worst, dtype=np.float64) if not isinstance(worst, np.ndarray) else worst
        if w.ndim != 3 or w.dtype.kind not in "biuf" or not np.isfinite(w).all():
            raise ConfigError(
                f"worst must be finite inputs of shape (n, T, d_in) (got shape {w.shape})"
            )
        worst = w.astype(np.float64)
    if isinstance(construction_or_model, str):
        from .constructions import REGISTRY
        from .errors import did_you_mean

        if construction_or_model not in REGISTRY:
            raise ConfigError(
                f"unknown construction {construction_or_model!r}"
                f"{did_you_mean(construction_or_model, REGISTRY)} (known: {', '.join(REGISTRY)})"
            )
    return out_p, worst


def _export_tl(model, construction, out_p, notes: list[str]):
    """``(bridge, architecture, model to check)`` of an export to TransformerLens (written to and
    reloaded from ``out_p`` where given); what the export changed appended to ``notes``."""
    obj, cfg_dict = _tl_export(model, None if construction is None else int(construction.task.T))
    if _tl_layout(model.cfg)["padded"]:
        notes.append(
            f"heads zero-padded to {cfg_dict['n_heads']} x {cfg_dict['d_head']} "
            "(one KV head per query head)"
        )
    tl_scale, qfs = _tl_scale(model.cfg, [s.head_dim for s in model.cfg.layers])
    if len(set(qfs)) > 1:
        notes.append("per-layer attention scales folded into W_Q, b_Q (TL scale 2)")
    elif qfs[0] != 1.0:
        notes.append("attention scale 1 exported as scale 2 with W_Q, b_Q doubled")
    model_for_check = model
    if out_p is not None:
        _tl_write(obj, model, cfg_dict, out_p)
        obj, model_for_check = load_tl(out_p)
    return obj, "TransformerLens native bridge (TransformerBridge.boot_native)", model_for_check
