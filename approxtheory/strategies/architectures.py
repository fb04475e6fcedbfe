"""Strategies for layer specs and model architectures (:class:`~approxtheory.model.ModelConfig`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from ..model import LayerSpec, ModelConfig

if TYPE_CHECKING:
    pass
from .common import (
    _BOOL,
    _DTYPES,
    _FFN,
    _HEAD_DIM,
    _HEADS,
    _LAYERS,
    _MAX_FFN_DEPTH,
    _MAX_LAYERS,
    _MAX_SIZE,
    _READOUT,
    _READOUTS,
    _RMS_EPS,
    _RMS_EPS_DEFAULT,
    _ROPE,
    _SMALL,
    _WIDTH,
    _bool,
    _int,
    _one_of,
    _real,
    _s,
    _values,
)

# --- architectures -------------------------------------------------------------------------------


def _check_layer(v: dict) -> None:
    if "heads" in v:
        _int("heads", v["heads"], 1, cap=_MAX_SIZE)
    if "head_dim" in v:
        _int("head_dim", v["head_dim"], 1, cap=_MAX_SIZE)
    if v.get("kv_groups") is not None:
        g = _int("kv_groups", v["kv_groups"], 1, cap=_MAX_SIZE)
        if "heads" in v and v["heads"] % g:
            raise InvalidArgument(
                f"kv_groups must divide heads (got kv_groups={g}, heads={v['heads']})"
            )
    if "ffn_hidden" in v:
        w = v["ffn_hidden"]
        if isinstance(w, (str, bytes)) or not hasattr(w, "__iter__"):
            raise InvalidArgument(
                f"ffn_hidden must be a sequence of positive integers (the FFN "
                f"hidden widths; empty: no FFN) (got {w!r})"
            )
        w = list(w)
        if len(w) > _MAX_FFN_DEPTH:
            raise InvalidArgument(
                f"ffn_hidden must hold at most {_MAX_FFN_DEPTH} widths (got {len(w)})"
            )
        for x in w:
            _int("every ffn_hidden width", x, 1, cap=_MAX_SIZE)


def layer_specs(
    heads=_HEADS, head_dim=_HEAD_DIM, kv_groups=None, ffn_hidden=_FFN
) -> SearchStrategy[LayerSpec]:
    """A :class:`~approxtheory.model.LayerSpec`: ``heads`` (1..4096) heads of width ``head_dim``
    (1..4096), ``kv_groups`` key/value groups dividing ``heads`` (default: any divisor), FFN hidden
    widths ``ffn_hidden`` (a sequence of at most 16 integers in 1..4096).

    >>> from approxtheory.strategies import minimal
    >>> minimal(layer_specs())
    LayerSpec(heads=1, head_dim=1, value_dim=1, kv_groups=1, ffn_hidden=())
    >>> minimal(layer_specs(heads=6), lambda s: s.kv_groups > 2).kv_groups
    3
    """
    _check_layer(
        _values(heads=heads, head_dim=head_dim, kv_groups=kv_groups, ffn_hidden=ffn_hidden)
    )
    return _layer_specs(heads, head_dim, kv_groups, ffn_hidden)


@st.composite
def _layer_specs(draw, heads, head_dim, kv_groups, ffn_hidden):
    h = draw(_s(heads))
    n = draw(_s(head_dim))
    _check_layer(dict(heads=h, head_dim=n))
    if kv_groups is None:
        g = draw(st.sampled_from([g for g in range(1, h + 1) if h % g == 0]))
    else:
        g = draw(_s(kv_groups))
    w = draw(_s(ffn_hidden))
    _check_layer(dict(heads=h, kv_groups=g, ffn_hidden=w))
    return LayerSpec(
        heads=int(h), head_dim=int(n), kv_groups=int(g), ffn_hidden=tuple(int(x) for x in w)
    )


def _check_arch(v: dict) -> None:
    for k in ("d_in", "width"):
        if k in v:
            _int(k, v[k], 1, cap=_MAX_SIZE)
    if "layers" in v:
        _int("layers", v["layers"], 1, cap=_MAX_LAYERS)
    for k in ("causal", "bias", "tie_embeddings"):
        if k in v:
            _bool(k, v[k])
    norms = {}  # the norm flags given as values (None: drawn where valid)
    for k in ("layernorm", "rmsnorm", "final_norm"):
        if v.get(k) is not None:
            norms[k] = _bool(k, v[k])
    if norms.get("layernorm") and norms.get("rmsnorm"):
        raise InvalidArgument(
            "layernorm and rmsnorm are exclusive: at most one pre-norm kind can be True "
            "(got layernorm=True, rmsnorm=True; pass None for one of them to draw it where valid)"
        )
    if (
        norms.get("final_norm")
        and norms.get("layernorm") is False
        and norms.get("rmsnorm") is False
    ):
        raise InvalidArgument(
            "final_norm=True needs a norm kind: layernorm or rmsnorm must be True or None "
            "(drawn where valid) (got final_norm=True, layernorm=False, rmsnorm=False)"
        )
    if "rms_eps" in v:
        if not _real("rms_eps", v["rms_eps"]) > 0:
            raise InvalidArgument(
                f"rms_eps must be a finite real number > 0 (RMSNorm's ε) (got {v['rms_eps']!r})"
            )
    if "rope" in v:
        r = v["rope"]
        if not (r is None or r == "full"):
            _int("rope", r, 0, why=" (or None, or 'full': the number of rotated dims per head)")
            if r % 2:
                raise InvalidArgument(
                    f"rope must be None, 'full' or an even number of rotated dims (got {r!r})"
                )
    if "readout" in v:
        _one_of("readout", v["readout"], _READOUTS)
    if "dtype" in v:
        _one_of("dtype", v["dtype"], _DTYPES)
    if v.get("layer") is not None and not isinstance(v["layer"], LayerSpec):
        raise InvalidArgument(
            f"layer must be None, a LayerSpec or a strategy of LayerSpecs (got {v['layer']!r})"
        )


def architectures(
    d_in=_SMALL,
    width=_WIDTH,
    layers=_LAYERS,
    layer=None,
    causal=_BOOL,
    rope=_ROPE,
    bias=_BOOL,
    layernorm=None,
    readout=_READOUT,
    dtype="float64",
    rmsnorm=None,
    rms_eps=_RMS_EPS,
    final_norm=None,
    tie_embeddings=_BOOL,
) -> SearchStrategy[ModelConfig]:
    """A :class:`~approxtheory.model.ModelConfig`: ``layers`` layers, each drawn from ``layer``
    (a LayerSpec or a strategy; default :func:`layer_specs`, so head counts and widths vary per
    layer: uniform, Prism-style and fat-head models alike). RoPE widens odd head widths by one
    (``rope='full'``) or to the rotated width (an even integer ``rope``).

    >>> from approxtheory.strategies import minimal
    >>> cfg = minimal(architectures())
    >>> cfg.d_in, cfg.width, len(cfg.layers), cfg.rope, cfg.readout
    (1, 2, 1, None, 'cls')
    >>> cfg.layernorm, cfg.rmsnorm, cfg.final_norm, cfg.tie_embeddings
    (False, False, False, False)

    Arguments (values or strategies): ``d_in``, ``width`` (1..4096), ``layers`` (1..256);
    ``causal``, ``bias``, ``tie_embeddings`` (booleans); ``rope`` (None, ``'full'`` or an even
    integer >= 0); ``readout`` (``'cls'`` or ``'tokens'``); ``dtype`` (``'float64'`` or
    ``'float32'``); ``rms_eps`` (a finite real > 0, RMSNorm's ε; drawn only where
    ``rmsnorm``, default one of 1e-6, 1e-5, 1e-3, shrinking to the model's 1e-6).

    The norms: ``layernorm``, ``rmsnorm`` (the pre-norm kind: exclusive, at most one True) and
    ``final_norm`` (one more norm, of that kind, before the read-out: needs one of the two) are
    booleans, strategies of booleans or None (the default): a boolean drawn where it is valid,
    False where it is not (``rmsnorm`` where ``layernorm`` is True, ``final_norm`` without a
    norm kind) and True where it must be (``final_norm=True`` with the other kind False). A
    tied read-out (``tie_embeddings``) maps back to the input: such a config has
    ``d_out = d_in`` (the others ``d_out = 1``). Everything shrinks to off.
    """
    args = dict(locals())  # every argument by name, in the signature's order
    _check_arch(_values(**args))
    return _architectures(args)


def _draw_norms(draw, layernorm, rmsnorm, final_norm) -> tuple[bool, bool, bool]:
    """``(layernorm, rmsnorm, final_norm)``: the given ones drawn (and checked together), the
    None ones drawn where valid, False where not, True where they must be."""
    given = {
        k: None if x is None else draw(_s(x))
        for k, x in (("layernorm", layernorm), ("rmsnorm", rmsnorm), ("final_norm", final_norm))
    }
    _check_arch(given)
    ln, rms, fn = (None if x is None else bool(x) for x in given.values())
    if ln is None:
        ln = False if rms else True if (fn and rms is False) else draw(_BOOL)
    if rms is None:
        rms = False if ln else True if fn else draw(_BOOL)
    if fn is None:
        fn = draw(_BOOL) if (ln or rms) else False
    return ln, rms, fn


@st.composite
def _architectures(draw, args: dict):
    """The draw of :func:`architectures`, from its arguments ``args`` (values or strategies)."""
    nl = draw(_s(args["layers"]))
    r = draw(_s(args["rope"]))
    _check_arch(dict(layers=nl, rope=r))
    specs = []
    layer = args["layer"]
    for _ in range(nl):
        spec = draw(layer_specs() if layer is None else _s(layer))
        _check_arch(dict(layer=spec))
        need = (
            spec.head_dim + spec.head_dim % 2
            if r == "full"
            else max(spec.head_dim, r)
            if r is not None
            else spec.head_dim
        )
        if need != spec.head_dim:
            spec = LayerSpec(spec.heads, need, kv_groups=spec.kv_groups, ffn_hidden=spec.ffn_hidden)
        specs.append(spec)
    v = {
        k: draw(_s(args[k]))
        for k in ("d_in", "width", "causal", "bias", "readout", "dtype", "tie_embeddings")
    }
    _check_arch(v)
    ln, rms, fn = _draw_norms(draw, args["layernorm"], args["rmsnorm"], args["final_norm"])
    rms_eps = args["rms_eps"]
    # ε only matters with RMSNorm: a strategy is drawn only then (a plain value is kept)
    eps = draw(_s(rms_eps)) if rms or not isinstance(rms_eps, SearchStrategy) else _RMS_EPS_DEFAULT
    _check_arch(dict(rms_eps=eps))
    v["tie_embeddings"] = tie = bool(v["tie_embeddings"])
    return ModelConfig(
        layers=specs,
        rope=r,
        layernorm=ln,
        rmsnorm=rms,
        rms_eps=float(eps),
        final_norm=fn,
        d_out=v["d_in"] if tie else 1,  # a tied read-out maps back to the input space
        **v,
    )
