"""Per-layer head schedules (Prism, arXiv 2606.27449): generators, the paper's rules, and exact
and measured neutrality on the shared model.

A schedule is the head count of every layer, ``(h_1, ..., h_L)``, at model width ``d``; layer l
has ``h_l`` heads of width ``d / h_l``, so every weight matrix keeps its shape::

    >>> from approxtheory import schedules
    >>> s = schedules.prism(768, 12, 12)            # the paper's Small schedule (Table 4)
    >>> s.heads
    (3, 3, 6, 6, 8, 8, 12, 12, 12, 12, 12, 12)
    >>> s.head_dims[:6]
    (256, 256, 128, 128, 96, 96)
    >>> schedules.validate((3, 6, 12, 12), d=768)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    approxtheory.errors.ConfigError: schedule breaks rule 'blocks': every head count must be ...

The rules (:data:`RULES`, paper §2.1-2.2): ``divisibility`` (h_l divides d), ``monotone``
(h_1 <= ... <= h_L), ``ends-at-h_base`` (h_L = h_base), ``baseline-half`` (at least L/2 layers at
h_base) and ``blocks`` (each head count held for >= 2 consecutive layers). :func:`uniform`,
:func:`prism` and :func:`custom` schedules satisfy them; :func:`decreasing` (Prism reversed, a
control the paper never ran) breaks ``monotone`` and ``ends-at-h_base`` on purpose and is checked
for divisibility only.

:func:`prism` is the digest's staircase generator: stages of per-head widths ``stage_dims``
(widest first), ``block`` layers each, then h_base for the rest. Its defaults are a rule derived
here, not the paper's (the paper's 24-layer schedules came from an unreported grid search):
``block = max(2, L // 8)``; the stages are the power-of-two widths 256, 128, ... above the
baseline width d/h_base that divide d, then, while at most L/2 layers are pre-baseline, the
widths between the narrowest of them and the baseline whose head count divides d, widest first.
This reproduces Table 4 at all three of the paper's (d, L, h_base) (:data:`PAPER_SCALES`).

:func:`count` builds the shared model for a schedule (on the ``meta`` device: no memory, no
time) and counts its parameters from the modules and its matmul FLOPs with ``FlopCounterMode``
on the explicit attention path (QKᵀ and AV are matmuls there; the fused CPU SDPA kernel is
invisible to the counter), and the softmax work as the number of attention probabilities;
:func:`catalogue_counts` evaluates PR-N1/PR-N2 of the catalogue for the same model, and
:func:`throughput` measures forward+backward tokens/s of several schedules side by side.
:func:`attention_distance` is the per-layer attention distance D_l of the paper's §7.

Sizes are refused before anything is built (:class:`~approxtheory.errors.ConfigError`): at most
:data:`MAX_LAYERS` layers (a schedule, a parsed ``--heads`` list and the modules :func:`count`
builds, about 0.06 s a layer), a width ``d`` of at most :data:`MAX_WIDTH`, and tensors of the
counted model beyond :data:`MAX_ELEMENTS` elements (even on the ``meta`` device torch cannot
size them); :func:`throughput` also refuses, through :mod:`approxtheory.resources`, work whose
memory or estimated time exceeds the limits.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ._validate import pos_int
from .errors import ConfigError
from .model import DType, LayerSpec, ModelConfig, Transformer

__all__ = [
    "MAX_LAYERS",
    "MAX_WIDTH",
    "MAX_ELEMENTS",
    "RULES",
    "KINDS",
    "PAPER_SCALES",
    "Schedule",
    "uniform",
    "prism",
    "decreasing",
    "custom",
    "violations",
    "validate",
    "default_stages",
    "parse_heads",
    "model_config",
    "count",
    "catalogue_counts",
    "throughput",
    "distance_from_maps",
    "attention_distance",
]

#: the rules a Prism-style schedule satisfies, in the order they are checked
RULES = ("divisibility", "monotone", "ends-at-h_base", "baseline-half", "blocks")
KINDS = ("uniform", "prism", "decreasing", "custom")
#: the paper's three models (Table 4): (d, L, h_base)
PAPER_SCALES: dict[str, tuple[int, int, int]] = {
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
    "large": (1536, 24, 16),
}
_MAX_EARLY_DIM = 256  # the widest early head (every scale of the paper; the fused-kernel limit)
#: the most layers a schedule may have (the paper's models have 12 and 24)
MAX_LAYERS = 1024
#: the widest model width d (the paper's widest is 1536)
MAX_WIDTH = 1 << 20
#: the most elements of one tensor of the model :func:`count` builds (torch's sizes overflow
#: beyond 2^63 bytes even on the ``meta`` device)
MAX_ELEMENTS = 1 << 60


#: a positive Python int (numpy integers are refused: a schedule is plain ints)
_pos_int = functools.partial(pos_int, numpy=False)


def _layers(name: str, L) -> int:
    return _pos_int(
        name, L, MAX_LAYERS, above=f"at most {MAX_LAYERS} layers (schedules.MAX_LAYERS)"
    )


def _width(d) -> int:
    return _pos_int("d", d, MAX_WIDTH, above=f"at most {MAX_WIDTH} (schedules.MAX_WIDTH)")


def _bounded_tuple(seq, what: str) -> tuple:
    """``tuple(seq)``, refusing (before building it) more than :data:`MAX_LAYERS` items."""
    if isinstance(seq, (str, bytes)):
        raise ConfigError(f"{what} must be a sequence of integers (got {seq!r}); see parse_heads")
    try:
        n = len(seq)
    except TypeError:
        n = None
    if n is not None and n > MAX_LAYERS:
        raise ConfigError(
            f"{what} has {n} entries, more than the {MAX_LAYERS} layers a schedule may have "
            f"(schedules.MAX_LAYERS)"
        )
    try:
        out = tuple(itertools.islice(seq, MAX_LAYERS + 1))
    except TypeError:
        raise ConfigError(f"{what} must be a sequence of integers (got {seq!r})") from None
    if len(out) > MAX_LAYERS:
        raise ConfigError(
            f"{what} has more than the {MAX_LAYERS} layers a schedule may have "
            f"(schedules.MAX_LAYERS)"
        )
    return out


@dataclass(frozen=True)
class Schedule:
    """Head counts per layer at width ``d``; ``h_base`` is the baseline head count."""

    heads: tuple[int, ...]
    d: int
    h_base: int
    kind: str = "custom"

    @property
    def L(self) -> int:
        return len(self.heads)

    @property
    def head_dims(self) -> tuple[int, ...]:
        """Per-head width d / h_l of every layer."""
        return tuple(self.d // h for h in self.heads)

    def layer_specs(
        self, ffn_hidden: Sequence[int] = (), kv_groups: Sequence[int] | None = None
    ) -> list[LayerSpec]:
        """The shared model's per-layer specs: ``h_l`` heads of width ``d / h_l``; with
        ``kv_groups`` (one per layer, each dividing its layer's head count), that many shared
        key/value heads (GQA)."""
        kv = [None] * self.L if kv_groups is None else _bounded_tuple(kv_groups, "kv_groups")
        if len(kv) != self.L:
            raise ConfigError(f"kv_groups has {len(kv)} entries for {self.L} layers")
        return [
            LayerSpec(h, self.d // h, ffn_hidden=tuple(ffn_hidden), kv_groups=g)
            for h, g in zip(self.heads, kv)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "d": self.d,
            "layers": self.L,
            "h_base": self.h_base,
            "heads": list(self.heads),
            "head_dims": list(self.head_dims),
        }


def violations(
    heads: Sequence[int], d: int, h_base: int | None = None, rules: Sequence[str] = RULES
) -> list[tuple[str, str]]:
    """Every broken rule of ``rules`` as ``(rule, message)``, in :data:`RULES` order
    (``h_base`` defaults to the last layer's head count)."""
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise ConfigError(f"unknown rule {unknown[0]!r} (rules: {', '.join(RULES)})")
    _width(d)
    heads = _bounded_tuple(heads, "the head counts")
    if not heads:
        raise ConfigError("a schedule needs at least one layer (got no head counts)")
    for h in heads:
        _pos_int("a head count", h)
    hb = heads[-1] if h_base is None else _pos_int("h_base", h_base)
    L = len(heads)
    out: list[tuple[str, str]] = []
    if "divisibility" in rules:
        bad = [(i + 1, h) for i, h in enumerate(heads) if d % h]
        if bad:
            out.append(
                (
                    "divisibility",
                    f"every head count must divide d={d} (layer {bad[0][0]} has h={bad[0][1]})",
                )
            )
    if "monotone" in rules:
        drops = [i + 1 for i in range(L - 1) if heads[i] > heads[i + 1]]
        if drops:
            i = drops[0]
            out.append(
                (
                    "monotone",
                    f"head counts must not decrease with depth (layer {i} has "
                    f"h={heads[i - 1]}, layer {i + 1} has h={heads[i]})",
                )
            )
    if "ends-at-h_base" in rules and heads[-1] != hb:
        out.append(
            ("ends-at-h_base", f"the last layer must have h_base={hb} heads (got {heads[-1]})")
        )
    if "baseline-half" in rules:
        n = sum(h == hb for h in heads)
        if 2 * n < L:
            out.append(
                (
                    "baseline-half",
                    f"at least L/2 = {L / 2:g} layers must use h_base={hb} (got {n} of {L})",
                )
            )
    if "blocks" in rules:
        at = 1
        for h, grp in itertools.groupby(heads):
            n = len(list(grp))
            if n < 2:
                out.append(
                    (
                        "blocks",
                        f"every head count must be kept for a block of >= 2 consecutive "
                        f"layers (h={h} is held for 1 layer at layer {at})",
                    )
                )
                break
            at += n
    return out


def validate(
    heads: Sequence[int], d: int, h_base: int | None = None, rules: Sequence[str] = RULES
) -> None:
    """Raise :class:`ConfigError` naming the first broken rule (see :func:`violations`)."""
    bad = violations(heads, d, h_base, rules)
    if bad:
        rule, msg = bad[0]
        raise ConfigError(f"schedule breaks rule {rule!r}: {msg}")


def uniform(d: int, L: int, h: int) -> Schedule:
    """``h`` heads in every one of ``L`` layers (the baseline)."""
    _width(d)
    heads = (h,) * _layers("L", L)
    validate(heads, d, h)
    return Schedule(heads, d, h, "uniform")


def default_stages(d: int, L: int, h_base: int) -> tuple[tuple[int, ...], int]:
    """The default ``(stage_dims, block)`` of :func:`prism` (the rule in the module docstring;
    derived here, not the paper's)."""
    _width(d)
    _layers("L", L)
    _pos_int("h_base", h_base)
    if d % h_base:
        raise ConfigError(f"h_base={h_base} must divide d={d} (rule 'divisibility')")
    base_dim = d // h_base
    block = max(2, L // 8)
    room = (L // 2) // block  # stages that fit while >= L/2 layers stay at h_base
    pow2 = []
    w = _MAX_EARLY_DIM
    while w > base_dim:
        if d % w == 0:
            pow2.append(w)
        w //= 2
    stages = pow2[:room]
    if stages and len(stages) < room:
        lo = stages[-1]
        fill = [d // h for h in range(d // lo + 1, h_base) if d % h == 0 and d // h > base_dim]
        stages += sorted(set(fill), reverse=True)[: room - len(stages)]
    return tuple(stages), block


def prism(
    d: int,
    L: int,
    h_base: int,
    stage_dims: Sequence[int] | None = None,
    block: int | None = None,
) -> Schedule:
    """The Prism staircase: ``block`` layers of ``d / w`` heads for each per-head width ``w`` in
    ``stage_dims`` (widest first), then ``h_base`` heads for the remaining layers. Defaults:
    :func:`default_stages`. Raises :class:`ConfigError` naming the broken rule."""
    dflt_dims, dflt_block = default_stages(d, L, h_base)  # checks d, L and h_base
    dims = dflt_dims if stage_dims is None else _bounded_tuple(stage_dims, "stage_dims")
    b = dflt_block if block is None else _pos_int("block", block)
    for w in dims:
        _pos_int("a stage head dim", w)
        if d % w:
            raise ConfigError(
                f"stage head dim {w} does not divide d={d} (rule 'divisibility': the stage "
                f"would need {d / w:g} heads)"
            )
    if len(dims) * b > L:  # refused before the list is built
        raise ConfigError(
            f"{len(dims)} stages of {b} layers need {len(dims) * b} layers but the model has "
            f"L={L} (rule 'baseline-half')"
        )
    heads: list[int] = []
    for w in dims:
        heads += [d // w] * b
    heads += [h_base] * (L - len(heads))
    validate(heads, d, h_base)
    return Schedule(tuple(heads), d, h_base, "prism")


def decreasing(
    d: int,
    L: int,
    h_base: int,
    stage_dims: Sequence[int] | None = None,
    block: int | None = None,
) -> Schedule:
    """Prism reversed (wide heads late): a control. Checked for divisibility only."""
    p = prism(d, L, h_base, stage_dims, block)
    return Schedule(p.heads[::-1], d, h_base, "decreasing")


def custom(
    heads: Sequence[int], d: int, h_base: int | None = None, rules: Sequence[str] = RULES
) -> Schedule:
    """A user's schedule, validated against ``rules`` (all of :data:`RULES` by default; pass
    ``("divisibility",)`` for a control such as a reversed or uniform-wide schedule)."""
    heads = _bounded_tuple(heads, "the head counts")
    validate(heads, d, h_base, rules)
    return Schedule(heads, d, heads[-1] if h_base is None else h_base, "custom")


def parse_heads(text: str) -> tuple[int, ...]:
    """``"3,3,6,6"`` or ``"3x2,6x2,12x8"`` (count x repeats) -> head counts; more than
    :data:`MAX_LAYERS` layers in all is refused before the list is built."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        h, _, rep = part.partition("x")
        try:
            hv, rv = int(h), int(rep) if rep else 1
        except ValueError:
            raise ConfigError(
                f"head counts must be integers separated by commas, e.g. 3,3,6,6 or 3x2,6x2 "
                f"(got {part!r})"
            ) from None
        if hv < 1 or rv < 1:
            raise ConfigError(f"head counts and repeats must be positive (got {part!r})")
        if len(out) + rv > MAX_LAYERS:
            raise ConfigError(
                f"head counts give more than the {MAX_LAYERS} layers a schedule may have "
                f"(schedules.MAX_LAYERS; at {part!r})"
            )
        out += [hv] * rv
    return tuple(out)


# ------------------------------------------------------------------------------- neutrality
def model_config(
    schedule: Schedule,
    ffn: int | None = None,
    bias: bool = True,
    dtype: DType = "float32",
    d_io: int = 8,
    kv_groups: Sequence[int] | None = None,
) -> ModelConfig:
    """The shared model for ``schedule``: causal, per-token read-out, RoPE on every head's full
    width, SwiGLU of hidden width ``ffn`` (default int(8d/3)) without biases, attention biases
    when ``bias``; ``d_io`` input and output features. No vocabulary embedding and no norms:
    the terms of PR-N1 that hold no head count (the full decoder LM with RMSNorm and tied
    embeddings, whose whole count PR-N1 also checks, is
    ``approxtheory.experiments.prism_paired.model_config``)."""
    f = int(8 * schedule.d / 3) if ffn is None else _pos_int("ffn", ffn)
    return ModelConfig(
        d_in=d_io,
        width=schedule.d,
        layers=schedule.layer_specs(ffn_hidden=(f,), kv_groups=kv_groups),
        d_out=d_io,
        readout="tokens",
        causal=True,
        rope="full",
        ffn_kind="swiglu",
        ffn_bias=False,
        bias=bias,
        dtype=dtype,
    )


def _check_schedule(schedule) -> None:
    if not isinstance(schedule, Schedule):
        raise ConfigError(f"expected a schedules.Schedule (got {type(schedule).__name__})")
    _width(schedule.d)
    _layers("the schedule's L", schedule.L)
    for h in schedule.heads:
        _pos_int("a head count", h)
    bad = [h for h in schedule.heads if schedule.d % h]
    if bad:
        raise ConfigError(
            f"every head count must divide d={schedule.d} to build the model (h={bad[0]} does "
            f"not; rule 'divisibility')"
        )


def _check_elements(schedule: Schedule, cfg: ModelConfig, T: int, batch: int) -> None:
    """Refuse a model whose largest tensor (attention scores, FFN weights or activations) torch
    cannot size, before building it (even on the meta device)."""
    f = max((s.ffn_hidden[0] for s in cfg.layers if s.ffn_hidden), default=0)
    d = schedule.d
    sizes = {
        "the attention scores (batch·h·T²)": batch * max(schedule.heads) * T * T,
        "the FFN weight (f·d)": f * d,
        "the FFN activations (batch·T·f)": batch * T * f,
        "the QKV activations (batch·T·3d)": batch * T * 3 * d,
    }
    what, n = max(sizes.items(), key=lambda kv: kv[1])
    if n > MAX_ELEMENTS:
        raise ConfigError(
            f"{what} would have {n:.3g} elements, more than the 2^60 (schedules.MAX_ELEMENTS) "
            f"torch can size; use a smaller T, batch or ffn"
        )


def _counted_config(
    schedule: Schedule,
    T: int,
    batch: int,
    ffn: int | None,
    bias: bool,
    kv_groups: Sequence[int] | None,
) -> ModelConfig:
    """The checked arguments of :func:`count` and :func:`count_small`: the model they count."""
    _pos_int("T", T)
    _pos_int("batch", batch)
    _check_schedule(schedule)
    cfg = model_config(schedule, ffn, bias, kv_groups=kv_groups)
    _check_elements(schedule, cfg, T, batch)
    return cfg


def _counts(
    schedule: Schedule,
    cfg: ModelConfig,
    T: int,
    batch: int,
    params: dict,
    fwd: list[int],
    fwd_total: int,
    fwd_bwd: int | None,
    softmax: list[int],
) -> dict[str, Any]:
    """The result of :func:`count` and :func:`count_small` from what each counted: the
    parameters, the forward FLOPs per layer and in all, the forward+backward FLOPs and the
    softmax scores per layer."""
    return {
        "schedule": schedule.to_dict(),
        "ffn": next(iter(cfg.layers)).ffn_hidden[0],  # every layer has the same FFN width
        "T": T,
        "batch": batch,
        "params": params,
        "fwd_flops_per_layer": fwd,
        "fwd_flops": fwd_total,
        "fwd_bwd_flops": fwd_bwd,
        "kv_cache_elements_per_layer": [
            T * s.kv_groups * (s.head_dim + s.value_dim)  # type: ignore[operator]
            for s in cfg.layers
        ],
        "softmax_scores_per_layer": softmax,
        "softmax_scores": sum(softmax),
    }


def count(
    schedule: Schedule,
    T: int = 64,
    batch: int = 1,
    ffn: int | None = None,
    bias: bool = True,
    kv_groups: Sequence[int] | None = None,
    backward: bool = True,
) -> dict[str, Any]:
    """Parameters (from the built modules) and FLOPs of the shared model for ``schedule``, built
    on the ``meta`` device, counted on the explicit attention path (``return_attention=True``:
    QKᵀ and AV are matmuls there, whereas CPU's fused SDPA kernel counts zero); one forward for
    the per-layer counts, one forward+backward for the total (``fwd_bwd_flops``; None with
    ``backward=False``). ``kv_groups``: shared key/value heads per layer (GQA; default: one per
    query head); ``kv_cache_elements`` is the keys and values one sequence of length T keeps
    per layer (``T·g_l·(head_dim + value_dim)``, read from the built layers' specs)."""
    from torch.utils.flop_counter import FlopCounterMode

    cfg = _counted_config(schedule, T, batch, ffn, bias, kv_groups)
    with torch.device("meta"):
        m = Transformer(cfg)
        X = torch.zeros(batch, T, cfg.d_in)
    params = {
        "total": m.count_params(),
        "attn": [m.count_params(["attn"], layer=i) for i in range(schedule.L)],
        "ffn": [m.count_params(["ffn"], layer=i) for i in range(schedule.L)],
    }
    with FlopCounterMode(display=False) as fc:
        _, atts = m(X, return_attention=True)
    per_module = fc.get_flop_counts()
    fwd = [int(sum(per_module[f"Transformer.layers.{i}"].values())) for i in range(schedule.L)]
    fwd_total = int(fc.get_total_flops())
    fwd_bwd = None
    if backward:
        with FlopCounterMode(display=False) as fc:
            out, _ = m(X, return_attention=True)
            out.sum().backward()
        fwd_bwd = int(fc.get_total_flops())
    softmax = [int(a.numel()) for a in atts]  # attention probabilities computed per forward
    return _counts(schedule, cfg, T, batch, params, fwd, fwd_total, fwd_bwd, softmax)


#: a layer larger than this many parameters is counted on the meta device (:func:`count`), not
#: built for real by :func:`count_small`
SMALL_LAYER_PARAMS = 50_000_000


def _quadratic_at(values: Sequence[int], T: int) -> int:
    """The polynomial of degree <= 2 through (1, v1), (2, v2), (3, v3) at T (Lagrange's form,
    in integers: each product of two consecutive-offset factors is even)."""
    v1, v2, v3 = (int(v) for v in values[:3])
    return v1 * (T - 2) * (T - 3) // 2 - v2 * (T - 1) * (T - 3) + v3 * (T - 1) * (T - 2) // 2


def _flop_counter():
    """torch's FlopCounterMode, its dispatch mode unwrapped from ``torch._disable_dynamo``: every
    ``TorchDispatchMode`` subclass gets that wrapper, whose first call imports ``torch._dynamo``
    (1.4-4.9 s measured here) although nothing is compiled. The counts are the mode's own (the
    same registry and module tracker); where this torch lacks the private pieces, the plain
    FlopCounterMode (tests/test_schedules.py compares the two)."""
    from torch.utils import flop_counter as fcm

    raw = getattr(getattr(fcm, "_FlopCounterMode", None), "__dict__", {}).get("__torch_dispatch__")
    inner = getattr(raw, "__wrapped__", None)
    if inner is None:
        return fcm.FlopCounterMode(display=False)

    class _Mode(fcm._FlopCounterMode):
        __torch_dispatch__ = inner  # type: ignore[assignment]

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False

    class _Counter(fcm.FlopCounterMode):
        def __enter__(self):
            self.flop_counts.clear()
            self.mod_tracker.__enter__()
            self.mode = _Mode(self)
            self.mode.__enter__()
            return self

    return _Counter(display=False)


def _one_layer_counts(d: int, h: int, h_base: int, g: int, ffn, bias: bool, batch: int) -> dict:
    """One layer of ``h`` heads (``g`` key/value heads) built as a one-layer model on CPU, its
    forward counted at T = 1..4: the layer's parameters, the model's parameters outside the
    layer, and per T the layer's and the whole model's matmul FLOPs and softmax scores."""
    cfg = model_config(Schedule((h,), d, h_base, "custom"), ffn, bias, kv_groups=[g])
    torch.manual_seed(0)  # the counts do not depend on the weights; the build is seeded anyway
    m = Transformer(cfg)
    out: dict[str, Any] = {
        "attn": m.count_params(["attn"], layer=0),
        "ffn": m.count_params(["ffn"], layer=0),
        "layer": m.count_params(layer=0),
        "total": m.count_params(),
        "fwd": [],
        "fwd_total": [],
        "softmax": [],
    }
    with torch.no_grad():
        for T in (1, 2, 3, 4):
            X = torch.zeros(batch, T, cfg.d_in)
            with _flop_counter() as fc:
                _, atts = m(X, return_attention=True)
            out["fwd"].append(int(sum(fc.get_flop_counts()["Transformer.layers.0"].values())))
            out["fwd_total"].append(int(fc.get_total_flops()))
            out["softmax"].append(int(atts[0].numel()))
    return out


def count_small(
    schedule: Schedule,
    T: int = 64,
    batch: int = 1,
    ffn: int | None = None,
    bias: bool = True,
    kv_groups: Sequence[int] | None = None,
) -> dict[str, Any]:
    """:func:`count` with ``backward=False``, in a fraction of the time: each distinct layer is
    built once, for real, as a one-layer model on CPU and counted at T = 1, 2, 3; every figure
    is a polynomial of degree at most 2 in T (QKᵀ and AV quadratic; projections, FFN and
    read-out linear), so three points fix it exactly (:func:`_quadratic_at`), and a fourth
    (T = 4) is checked against it. The meta device of :func:`count` runs Python kernels that
    import ``torch._dynamo`` on first use (1.4 s measured); a layer above
    :data:`SMALL_LAYER_PARAMS` parameters, or a fourth point off the polynomial, falls back to
    :func:`count`. Equal to :func:`count` (tests/test_schedules.py compares them)."""
    cfg = _counted_config(schedule, T, batch, ffn, bias, kv_groups)
    from .resources import model_param_count

    per_layer = model_param_count(cfg) / max(1, schedule.L)
    if per_layer > SMALL_LAYER_PARAMS:
        return count(schedule, T, batch, ffn, bias, kv_groups, backward=False)
    kv = list(kv_groups) if kv_groups is not None else list(schedule.heads)
    specs = {
        (h, g): _one_layer_counts(schedule.d, h, schedule.h_base, g, ffn, bias, batch)
        for h, g in dict.fromkeys(zip(schedule.heads, kv))
    }
    for c in specs.values():
        for key in ("fwd", "fwd_total", "softmax"):
            if _quadratic_at(c[key][:3], 4) != c[key][3]:
                return count(schedule, T, batch, ffn, bias, kv_groups, backward=False)
    layers = [specs[(h, g)] for h, g in zip(schedule.heads, kv)]
    first = layers[0]
    outside = first["total"] - first["layer"]  # embedding and read-out: one per model
    outside_fwd = [t - f for t, f in zip(first["fwd_total"], first["fwd"])]
    fwd = [_quadratic_at(c["fwd"], T) for c in layers]
    softmax = [_quadratic_at(c["softmax"], T) for c in layers]
    params = {
        "total": outside + sum(c["layer"] for c in layers),
        "attn": [c["attn"] for c in layers],
        "ffn": [c["ffn"] for c in layers],
    }
    fwd_total = _quadratic_at(outside_fwd, T) + sum(fwd)
    return _counts(schedule, cfg, T, batch, params, fwd, fwd_total, None, softmax)


def catalogue_counts(
    schedule: Schedule, T: int, batch: int = 1, ffn: int | None = None, bias: bool = True
) -> dict[str, list[int]]:
    """PR-N1's N_attn and N_mlp and PR-N2's F_layer and F_softmax (c = 1: probabilities) of the
    catalogue, evaluated at every layer's head count for the model of :func:`count`."""
    from . import claim

    f = int(8 * schedule.d / 3) if ffn is None else ffn
    n1, n2 = claim("PR-N1"), claim("PR-N2")
    out: dict[str, list[int]] = {"attn": [], "ffn": [], "fwd_flops": [], "softmax": []}
    for h in schedule.heads:
        out["attn"].append(int(n1.evaluate("N_attn", d=schedule.d, h_l=h, I_bias=int(bias))))
        out["ffn"].append(int(n1.evaluate("N_mlp", d=schedule.d, f=f)))
        v = {"T": T, "d": schedule.d, "f": f, "h_l": h}
        out["fwd_flops"].append(batch * int(n2.evaluate("F_layer", **v)))
        out["softmax"].append(batch * int(n2.evaluate("F_softmax", c=1, T=T, h_l=h, d=schedule.d)))
    return out


def throughput(
    schedules: Sequence[Schedule],
    T: int = 32,
    batch: int = 1,
    reps: int = 3,
    warmup: int = 1,
    ffn: int | None = None,
    seed: int = 0,
    device: str = "cpu",
) -> dict[str, Any]:
    """Forward+backward tokens/s of each schedule on the fused (SDPA) path, float32, measured in
    interleaved rounds (median per schedule), with each schedule's ratio to the first. A
    measurement: it depends on the machine, its load and the kernels."""
    _check_timing(T, batch, reps, warmup, seed, device)
    schedules = list(schedules)
    if not schedules:
        raise ConfigError("throughput needs at least one schedule")
    for s in schedules:
        _check_schedule(s)
    cfgs = [model_config(s, ffn) for s in schedules]
    for s, c in zip(schedules, cfgs, strict=True):
        _check_elements(s, c, T, batch)
    _require_timing(cfgs, T, batch, reps, warmup)
    models, X = _timed_models(cfgs, T, batch, seed, device)
    med = _median_steps(models, X, reps, warmup, device)
    tps = [batch * T / t for t in med]
    return {
        "tokens_per_s": [round(v, 1) for v in tps],
        "median_step_s": [round(v, 5) for v in med],
        "ratio_to_first": [round(v / tps[0], 4) for v in tps],
        "T": T,
        "batch": batch,
        "reps": reps,
        "warmup": warmup,
        "threads": torch.get_num_threads(),
        "device": device,
        "dtype": "float32",
        "path": "fused scaled_dot_product_attention, forward+backward",
    }


def _check_timing(T, batch, reps, warmup, seed, device) -> None:
    """Refuse (ConfigError) a timing parameter of :func:`throughput` out of its range."""
    for name, v in (("T", T), ("batch", batch), ("reps", reps)):
        _pos_int(name, v)
    if not isinstance(warmup, int) or warmup < 0:
        raise ConfigError(f"warmup must be an integer >= 0 (got {warmup!r})")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"seed must be an integer from 0 to 2**63 - 1 (got {seed!r})")
    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise ConfigError(f"device must be cpu, cuda or cuda:N (got {device!r})") from None


def _require_timing(cfgs, T: int, batch: int, reps: int, warmup: int) -> None:
    """Refuse a timing whose memory or least time exceeds the limits of :mod:`.resources`."""
    from .resources import FLOPS_PER_SECOND, forward_bytes, model_bytes, model_param_count, require

    # a lower bound of the time: 2 FLOPs per weight and token (the forward's matmuls alone) at
    # resources.FLOPS_PER_SECOND, plus 20 µs per layer of dispatch (measured: ~1 ms) per step
    step_s = [
        2 * model_param_count(c) * batch * T / FLOPS_PER_SECOND + 2e-5 * len(c.layers) for c in cfgs
    ]
    require(
        bytes=sum(2 * model_bytes(c) + forward_bytes(c, batch, T) for c in cfgs),
        seconds=(reps + warmup) * sum(step_s),
        what=f"timing {len(cfgs)} schedules (weights and gradients, float32; {reps} rounds "
        f"after {warmup} warm-up)",
    )


def _timed_models(cfgs, T: int, batch: int, seed: int, device: str):
    """The models of ``cfgs`` on ``device`` (each initialised from ``seed``) and one batch of
    seeded random inputs."""
    gen = torch.Generator().manual_seed(seed)
    models, X = [], None
    for cfg in cfgs:
        # same shapes, so the same initial weights in every schedule; the caller's global RNG
        # state is restored afterwards (fork_rng)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            m = Transformer(cfg)
        models.append(m.to(device))
        if X is None:
            X = torch.randn(batch, T, cfg.d_in, generator=gen).to(device)
    return models, X


def _median_steps(models, X, reps: int, warmup: int, device: str) -> list[float]:
    """The median seconds of a forward+backward step of each model, after ``warmup`` steps each,
    timed in ``reps`` interleaved rounds."""

    def step(m) -> float:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        m.zero_grad(set_to_none=True)
        m(X).sum().backward()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    for m in models:
        for _ in range(warmup):
            step(m)
    times: list[list[float]] = [[] for _ in models]
    for _ in range(reps):
        for i, m in enumerate(models):
            times[i].append(step(m))
    return [sorted(t)[len(t) // 2] for t in times]


# ----------------------------------------------------------------------- attention distance
def distance_from_maps(att: torch.Tensor) -> float:
    """Mean attention distance of attention maps ``att`` of shape ``(B, h, T, T)`` (rows: queries,
    columns: keys, rows summing to 1): ``Σ_s A[t, s]·|t − s|`` averaged over the query rows
    t ≥ T//2 (0-indexed; the digest's 1-indexed ⌊T/2⌋+1..T), the heads and the sequences.
    Linear in ``att``, so it equals the distance of the head-averaged map."""
    if att.dim() != 4 or att.shape[-1] != att.shape[-2]:
        raise ConfigError(f"attention maps must have shape (B, h, T, T) (got {tuple(att.shape)})")
    T = att.shape[-1]
    pos = torch.arange(T, device=att.device)
    dist = (pos[:, None] - pos[None, :]).abs().to(att.dtype)  # (T, T)
    per_query = (att * dist).sum(-1)  # (B, h, T)
    return float(per_query[:, :, T // 2 :].mean())


def attention_distance(model: Transformer, X: torch.Tensor) -> list[float]:
    """D_l of every layer of ``model`` on inputs ``X`` (B, T, d_in) (Prism §7, as the digest
    defines it): the causal attention probabilities from the explicit path (post-RoPE q, k),
    ``Σ_s A[t, s]·|t − s|`` averaged over the queries in the second half of the window, the
    heads and the sequences. A CLS token's row is dropped; a model whose CLS is a key is
    refused (its column would carry attention mass at no token distance)."""
    cfg = model.cfg
    if cfg.readout == "cls" and cfg.cls_is_key:
        raise ConfigError(
            "attention distance needs the input tokens as the only keys (cls_is_key=True "
            "puts attention mass on the CLS token)"
        )
    with torch.no_grad():
        _, atts = model(X, return_attention=True)
    out = []
    for att in atts:
        if cfg.readout == "cls":
            att = att[:, :, :-1, :-1]  # input tokens only (the CLS column is masked: zero)
        out.append(distance_from_maps(att))
    return out
