"""The model's layers on affine forms: embedding, attention, FFN, blocks; :func:`layer_bounds`.

Part of :mod:`approxtheory.bounds` (see its docstring for the method)."""

from __future__ import annotations

import math

import torch

from ..errors import ConfigError
from ._af import _AF, _DT, _U, _dot, _gam, _t
from ._inputs import _as_boxes, _no_nan, _require_forms
from .mlp import _mlp_forward
from .ratio import _coupled_F
from .softmax import _simplex_lp_max, softmax_bounds


# ============================================================================== the model
def model_reason(model, task=None) -> str | None:
    """Why the sound bound cannot handle this model (and the task's shape), or None; the
    target's own reason is added by :func:`.targets.unsupported_reason`."""
    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "layers"):
        return "not an approxtheory.model.Transformer"
    if cfg.layernorm:
        return "LayerNorm is not supported by the bound propagation"
    if cfg.rope is not None and (cfg.rope == "full" or int(cfg.rope) > 0):
        return "RoPE is not supported by the bound propagation"
    if cfg.readout != "cls" and task is not None and not getattr(task, "per_token", False):
        return "a per-token read-out needs a per-token target (this task has one output)"
    if getattr(cfg, "tie_embeddings", False):
        return "a read-out tied to the embedding is not supported (an MLP read-out is)"
    if cfg.ffn_kind not in ("relu", "bilinear") and any(s.ffn_hidden for s in cfg.layers):
        return f"ffn_kind={cfg.ffn_kind!r} is not supported (relu or bilinear only)"
    if cfg.head_activation not in ("relu", "identity") and cfg.head_hidden:
        return f"head_activation={cfg.head_activation!r} is not supported (relu or identity)"
    if task is not None:
        if not all(hasattr(task, a) for a in ("T", "d", "lo", "hi", "target")):
            return "not an approxtheory task (it needs T, d, lo, hi and target)"
        if getattr(task, "domain", "box") not in ("box", "sphere"):
            return f"domain {task.domain!r} is neither a box nor the unit sphere"
        if getattr(task, "per_token", False) and cfg.readout != "tokens":
            return "a per-token target needs the per-token read-out (readout='tokens')"
        if cfg.d_in != task.d:
            return f"model d_in={cfg.d_in} differs from the task's d={task.d}"
        if cfg.positions != "none" and cfg.seq_len != task.T:
            return f"model was built for T={cfg.seq_len}, the task has T={task.T}"
    return None  # the target's own reason: targets.unsupported_reason


def _input_af(lo, hi):
    """Input boxes (B, T, d) as affine forms with one noise symbol per coordinate."""
    B, T, d = lo.shape
    c = 0.5 * lo + 0.5 * hi
    half = torch.maximum(hi - c, c - lo) * (1 + 4 * _U)
    A = torch.diag_embed(half.reshape(B, T * d)).reshape(B, T, d, T * d)
    return _AF(c, A, torch.zeros_like(c))


def _embed(model, x: _AF) -> _AF:
    cfg = model.cfg
    B, T, _ = x.shape
    n = x.n
    h = x
    if cfg.positions == "onehot":
        eye = torch.eye(T, dtype=_DT).expand(B, T, T)
        h = _AF.cat([h, _AF.const(eye, n)], -1)
    h = _mlp_forward(model.embed, h)
    if model.pos is not None:
        h = h + _t(model.pos)
    if model.cls is not None:
        cls = _t(model.cls).expand(B, 1, h.shape[-1])
        h = _AF.cat([h, _AF.const(cls, n)], 1)
    return h


def _key_count(model, T_tot):
    """Keys attended to: the T input tokens (CLS not a key) or all T_tot tokens."""
    if model.cls is not None and not model.cfg.cls_is_key:
        return T_tot - 1
    return T_tot


def _qkv(attn, h: _AF, hq: _AF, Jk: int):
    B, Tq = hq.shape[0], hq.shape[1]
    H, n, c, G = attn.h, attn.n, attn.c, attn.g
    bias = lambda lin: None if lin.bias is None else _t(lin.bias)
    hk = h.narrow(1, 0, Jk)
    q = hq.linear(_t(attn.q.weight), bias(attn.q)).reshape(B, Tq, H, n).transpose(1, 2)
    k = hk.linear(_t(attn.k.weight), bias(attn.k)).reshape(B, Jk, G, n).transpose(1, 2)
    v = hk.linear(_t(attn.v.weight), bias(attn.v)).reshape(B, Jk, G, c).transpose(1, 2)
    if G != H:
        idx = torch.arange(H) // (H // G)
        k, v = k.index(1, idx), v.index(1, idx)
    return q, k, v


def _allowed_keys(model, T_tot: int, Tq: int, Jk: int):
    """The causal mask of a block as the keys each query may attend to, (Tq, Jk) bool, or None
    (every key): the model's own mask (:meth:`Transformer._mask`) restricted to the keys the
    propagation uses (the queries are the last ``Tq`` of the ``T_tot`` positions)."""
    if not model.cfg.causal:
        return None
    qpos = torch.arange(T_tot - Tq, T_tot)
    return qpos[:, None] >= torch.arange(Jk)[None, :]


def _attend(logits: _AF, v: _AF, allowed=None) -> _AF:
    """Σ_j softmax(logits)_j v_j for logits (B, H, Tq, J) and values (B, H, J, c); ``allowed``
    (Tq, J) bool: the keys each query attends to (a causal mask; None: all). A masked key has
    the logit -inf exactly: its weight is [0, 0], it is never the reference and never enters
    the LP or the ratio bound (its value form is still finite, and multiplied by 0)."""
    B, H, Tq, J = logits.shape
    c = v.shape[-1]
    lL, lU = logits.bounds()
    # a NaN bound (overflowed forms) knows nothing: the widest interval, never a masked key
    lL = torch.where(torch.isnan(lL), torch.full_like(lL, -math.inf), lL)
    lU = torch.where(torch.isnan(lU), torch.full_like(lU, math.inf), lU)
    cm = logits.c
    if allowed is not None:
        ninf = torch.full_like(lL, -math.inf)
        lL, lU = torch.where(allowed, lL, ninf), torch.where(allowed, lU, ninf)
        cm = cm.masked_fill(~allowed, -math.inf)
    pl, pu = softmax_bounds(lL, lU)  # (B, H, Tq, J)
    ph = torch.softmax(cm, -1).clamp(min=0.0)
    ph = torch.minimum(torch.maximum(ph, pl), pu)
    ref = cm.argmax(-1)  # (B, H, Tq): an allowed key (every query sees at least one)
    vq = v.unsqueeze(2).expand_to((B, H, Tq, J, c))
    idx = ref[..., None, None].expand(B, H, Tq, 1, c)
    v_r = vq.gather(3, idx)  # (B, H, Tq, 1, c)
    e = vq - v_r.expand_to((B, H, Tq, J, c))  # (B, H, Tq, J, c)
    v_r = v_r.reshape(B, H, Tq, c)
    eL, eU = e.bounds()
    emax = torch.maximum(eL.abs(), eU.abs())
    # (iii) affine: Σ_j p̂_j e_j ± Σ_j |p_j - p̂_j| max|e_j|
    prad = torch.maximum(pu - ph, ph - pl).clamp_min(0.0)
    affine = v_r + e.scale(ph[..., None]).sum(3)
    dev = (prad[..., None] * emax).sum(3) * (1 + _gam(J))
    affine = affine.add_interval(-dev, dev)
    if bool((logits.A == 0).all()) and bool((logits.r == 0).all()):
        # constant logits (e.g. W_Q = 0): p = softmax(c) up to the softmax slack, so the
        # affine form is exact up to round-off and no interval of F can be narrower
        return affine
    # (i) LP over the simplex ∩ box and (ii) coupled ratio bound: an interval for F
    plx, pux = pl[..., None, :].expand(B, H, Tq, c, J), pu[..., None, :].expand(B, H, Tq, c, J)
    FU = _simplex_lp_max(eU.transpose(-1, -2), plx, pux)
    FL = -_simplex_lp_max(-eL.transpose(-1, -2), plx, pux)
    delta = logits - logits.gather(3, ref[..., None]).expand_to((B, H, Tq, J))
    onehot = torch.nn.functional.one_hot(ref, J).bool()
    valid = ~onehot if allowed is None else ~onehot & allowed
    dl = delta.unsqueeze(3).expand_to((B, H, Tq, c, J))
    el = e.transpose(3, 4)
    z = torch.zeros(B, H, Tq, c, dtype=_DT)
    cL, cU = _coupled_F(dl, el, z, z, valid[:, :, :, None, :].expand(B, H, Tq, c, J))
    FL, FU = torch.maximum(FL, cL), torch.minimum(FU, cU)
    FU = torch.maximum(FU, FL)
    interval = v_r.add_interval(FL, FU)
    # the affine form keeps the output's correlation with everything else (a target, a
    # reference model): where its own slack is a small part of the interval's width it is
    # nearly exact (a sound interval is at least as wide as the true range, so it costs at
    # most about that slack), e.g. logits that hardly depend on the input (a truncated
    # position-only head whose SVD leaves 1e-17 on the token coordinate)
    irad = interval.rad()
    use_aff = (affine.rad() <= irad) | (affine.r <= 0.01 * irad)
    return _AF.where(use_aff, affine, interval)


def _ffn_forward(ffn, cfg, x: _AF) -> _AF:
    if cfg.ffn_kind == "bilinear":
        b = lambda lin: None if lin.bias is None else _t(lin.bias)
        a1 = x.linear(_t(ffn.w1.weight), b(ffn.w1))
        a3 = x.linear(_t(ffn.w3.weight), b(ffn.w3))
        return a1.mul(a3).linear(_t(ffn.w2.weight), b(ffn.w2))
    return _mlp_forward(ffn.mlp, x)


def _block(model, blk, h: _AF, n_query: int | None = None, stop_after_attn_logits=False):
    cfg = model.cfg
    attn = blk.attn
    B, T_tot = h.shape[0], h.shape[1]
    Jk = _key_count(model, T_tot)
    hq = h if n_query is None else h.narrow(1, T_tot - n_query, n_query)
    Tq = hq.shape[1]
    q, k, v = _qkv(attn, h, hq, Jk)
    logits = _dot(q, k, "bhqd", "bhkd", "bhqk").scale(torch.tensor(attn.scale, dtype=_DT))
    if stop_after_attn_logits:
        return hq, q, k, v, logits
    y = _attend(logits, v, _allowed_keys(model, T_tot, Tq, Jk))  # (B, H, Tq, c)
    y = y.transpose(1, 2).reshape(B, Tq, attn.h * attn.c)
    o = y.linear(_t(attn.o.weight), None if attn.o.bias is None else _t(attn.o.bias))
    x = hq + o if cfg.residual else o
    if blk.ffn is not None:
        f = _ffn_forward(blk.ffn, cfg, x)
        x = x + f if cfg.ffn_residual else f
    return x


def _forward_af(model, x: _AF, all_states=False, head_input=False):
    h = _embed(model, x)
    states = [h]
    L = len(model.layers)
    for i, blk in enumerate(model.layers):
        last_only = (not all_states) and model.cls is not None and i == L - 1
        h = _block(model, blk, h, n_query=1 if last_only else None)
        states.append(h)
    if head_input:
        return h.narrow(1, h.shape[1] - 1, 1).reshape(h.shape[0], -1)
    out = _mlp_forward(
        model.head,
        h.narrow(1, h.shape[1] - 1, 1).reshape(h.shape[0], -1) if model.cls is not None else h,
    )
    return (out, states) if all_states else out


def layer_bounds(model, lo, hi):
    """Interval bounds of every residual-stream state (as :meth:`Transformer.hidden_states`:
    the input stream, then after each layer) and of the output, for inputs in the box(es)
    ``lo <= X <= hi`` of shape (T, d) or (B, T, d). Returns ``(states, out)``: a list of
    (lo, hi) pairs and one (lo, hi) pair. The box must be finite with ``lo <= hi``, d the
    model's ``d_in`` and T its ``seq_len`` when it has positions (ConfigError otherwise); a
    bound the propagation cannot give (overflow) is -inf / +inf, never NaN."""
    r = model_reason(model)
    if r:
        raise ConfigError(r)
    cfg = model.cfg
    T = int(cfg.seq_len) if cfg.positions != "none" else None
    lo, hi = _as_boxes(lo, hi, int(cfg.d_in), T, "layer_bounds")
    B, T_, d_ = lo.shape
    _require_forms(model, B, T_, d_, f"layer_bounds on {B} box(es) of ({T_}, {d_})")
    with torch.no_grad():
        out, states = _forward_af(model, _input_af(lo, hi), all_states=True)
    return [_no_nan(*s.bounds()) for s in states], _no_nan(*out.bounds())
