"""approxtheory.strategies, continued: architectures() draws the opt-in norm and read-out fields
of ModelConfig (rmsnorm, rms_eps, final_norm, tie_embeddings) without ever drawing an invalid
combination, and construction_knobs refuses overrides that no draw can keep (an InvalidArgument
naming the override, not Hypothesis' Unsatisfiable)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from approxtheory import strategies as ats
from approxtheory.constructions import REGISTRY, build
from approxtheory.model import Transformer

minimal = ats.minimal

# small models: the draws below build and run every config
SMALL = dict(
    width=st.integers(2, 6),
    layer=ats.layer_specs(
        heads=st.integers(1, 2),
        head_dim=st.integers(1, 3),
        ffn_hidden=st.lists(st.integers(1, 4), max_size=1),
    ),
    rope=st.sampled_from([None, "full", 2]),
)


# --- architectures: the opt-in fields -----------------------------------------------------------


@pytest.mark.parametrize(
    "what, condition",
    [
        ("rmsnorm", lambda c: c.rmsnorm),
        ("final RMSNorm", lambda c: c.rmsnorm and c.final_norm),
        ("final LayerNorm", lambda c: c.layernorm and c.final_norm),
        ("tied read-out", lambda c: c.tie_embeddings),
        ("tied, d_in > 1", lambda c: c.tie_embeddings and c.d_in > 1),
        ("all of them", lambda c: c.rmsnorm and c.final_norm and c.tie_embeddings),
        ("another rms_eps", lambda c: c.rmsnorm and c.rms_eps != 1e-6),
    ],
)
def test_drawn_configs_cover_the_opt_in_fields(what, condition):
    cfg = minimal(ats.architectures(), condition)
    assert condition(cfg), what


def test_the_simplest_config_has_every_opt_in_field_off():
    cfg = minimal(ats.architectures())
    assert (cfg.layernorm, cfg.rmsnorm, cfg.final_norm, cfg.tie_embeddings) == (
        False,
        False,
        False,
        False,
    )
    assert cfg.rms_eps == 1e-6 and cfg.d_out == 1 and cfg.d_in == 1 and cfg.width == 2


@settings(max_examples=40, deadline=None, database=None)
@given(ats.architectures(**SMALL), st.integers(1, 2), st.integers(1, 3))
def test_every_drawn_config_builds_and_runs(cfg, B, T):
    assert not (cfg.layernorm and cfg.rmsnorm)
    assert cfg.layernorm or cfg.rmsnorm or not cfg.final_norm
    assert cfg.d_out == (cfg.d_in if cfg.tie_embeddings else 1)
    m = Transformer(cfg)
    x = torch.randn(
        B, T, cfg.d_in, dtype=cfg.torch_dtype, generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        y = m(x)
    assert y.shape == ((B, cfg.d_out) if cfg.readout == "cls" else (B, T, cfg.d_out))
    assert torch.isfinite(y).all()
    assert (m.ln_f is not None) == cfg.final_norm


@settings(max_examples=25, deadline=None, database=None)
@given(st.data())
def test_given_norm_flags_fix_the_others_where_they_must(data):
    # rmsnorm=True: layernorm (drawn where valid) is False
    cfg = data.draw(ats.architectures(rmsnorm=True))
    assert cfg.rmsnorm and not cfg.layernorm
    cfg = data.draw(ats.architectures(layernorm=True))
    assert cfg.layernorm and not cfg.rmsnorm
    # final_norm=True always has a norm kind: the one left to draw is True where the other is not
    cfg = data.draw(ats.architectures(final_norm=True))
    assert cfg.final_norm and (cfg.layernorm != cfg.rmsnorm)
    cfg = data.draw(ats.architectures(final_norm=True, layernorm=False))
    assert cfg.rmsnorm and not cfg.layernorm
    cfg = data.draw(ats.architectures(final_norm=True, rmsnorm=False))
    assert cfg.layernorm and not cfg.rmsnorm
    # no norm kind: no final norm drawn
    cfg = data.draw(ats.architectures(layernorm=False, rmsnorm=False))
    assert not (cfg.layernorm or cfg.rmsnorm or cfg.final_norm)
    cfg = data.draw(ats.architectures(rmsnorm=True, rms_eps=st.sampled_from([1e-4, 0.5])))
    assert cfg.rms_eps in (1e-4, 0.5)
    cfg = data.draw(ats.architectures(tie_embeddings=True, d_in=3))
    assert cfg.tie_embeddings and cfg.d_out == 3


def test_the_old_positional_arguments_keep_their_places():
    cfg = minimal(ats.architectures(2, 4, 1, None, True, None, True, True, "tokens", "float32"))
    assert (cfg.d_in, cfg.width, cfg.causal, cfg.bias, cfg.layernorm) == (2, 4, True, True, True)
    assert (cfg.readout, cfg.dtype, cfg.rmsnorm) == ("tokens", "float32", False)


ARCH_EAGER = {
    "rmsnorm not bool": (dict(rmsnorm="yes"), "rmsnorm must be True or False"),
    "final_norm not bool": (dict(final_norm=1), "final_norm must be True or False"),
    "tie_embeddings not bool": (dict(tie_embeddings="no"), "tie_embeddings must be True or False"),
    "layernorm not bool": (dict(layernorm="on"), "layernorm must be True or False"),
    "both norms": (dict(rmsnorm=True, layernorm=True), "layernorm and rmsnorm are exclusive"),
    "final_norm, no norm": (
        dict(final_norm=True, layernorm=False, rmsnorm=False),
        "final_norm=True needs a norm kind",
    ),
    "rms_eps 0": (dict(rms_eps=0.0), "rms_eps must be a finite real number > 0"),
    "rms_eps negative": (dict(rms_eps=-1e-6), "rms_eps must be a finite real number > 0"),
    "rms_eps nan": (dict(rms_eps=float("nan")), "rms_eps must be a finite real number"),
    "rms_eps inf": (dict(rms_eps=float("inf")), "rms_eps must be a finite real number"),
    "rms_eps bool": (dict(rms_eps=True), "rms_eps must be a finite real number"),
    "rms_eps str": (dict(rms_eps="1e-6"), "rms_eps must be a finite real number"),
}


@pytest.mark.parametrize("case", list(ARCH_EAGER), ids=list(ARCH_EAGER))
def test_impossible_architecture_values_raise_at_once(case):
    kwargs, match = ARCH_EAGER[case]
    with pytest.raises(InvalidArgument, match=match):
        ats.architectures(**kwargs)


ARCH_DRAWN = {
    "rmsnorm": (dict(rmsnorm=st.just("yes")), "rmsnorm must be True or False"),
    "both norms": (
        dict(rmsnorm=st.just(True), layernorm=st.just(True)),
        "layernorm and rmsnorm are exclusive",
    ),
    "both norms, one a value": (
        dict(rmsnorm=True, layernorm=st.just(True)),
        "layernorm and rmsnorm are exclusive",
    ),
    "final_norm, no norm": (
        dict(final_norm=st.just(True), layernorm=False, rmsnorm=False),
        "final_norm=True needs a norm kind",
    ),
    "rms_eps": (dict(rmsnorm=True, rms_eps=st.just(0.0)), "rms_eps must be"),
    "tie_embeddings": (dict(tie_embeddings=st.just(2)), "tie_embeddings must be True"),
}


@pytest.mark.parametrize("case", list(ARCH_DRAWN), ids=list(ARCH_DRAWN))
def test_impossible_drawn_architecture_values_raise_when_drawn(case):
    kwargs, match = ARCH_DRAWN[case]
    strategy = ats.architectures(**kwargs)  # a strategy argument is checked only once drawn
    with pytest.raises(InvalidArgument, match=match):
        minimal(strategy)


# --- construction knobs: overrides no draw can keep ---------------------------------------------

UNSATISFIABLE = {
    "softmax_retrieval beta": (
        ("softmax_retrieval", dict(beta=0.001)),
        r"override beta=0.001 breaks the requirement \"IF-T2's bound needs beta\*T >= 1\" "
        r"for every T the strategy draws \(T in 1\.\.31\)",
    ),
    "lag_head k": (("lag_head", dict(k=100)), r"k=100 breaks .*k must be < T // 2.*T in 4\.\.64"),
    "svd_truncation r": (("svd_truncation", dict(r=1000)), r"r=1000 .*r must be <= 2F.*F in 1"),
    "hc_k1_synthetic h": (("hc_k1_synthetic", dict(h=500)), r"h=500 .*h must equal D.*D in 1"),
    "with another override": (
        ("svd_truncation", dict(r=1000, T=4)),
        r"r=1000 .*r must be <= 2F",
    ),
}


@pytest.mark.parametrize("case", list(UNSATISFIABLE), ids=list(UNSATISFIABLE))
def test_overrides_no_draw_can_keep_raise_at_once(case):
    (name, overrides), match = UNSATISFIABLE[case]
    with pytest.raises(InvalidArgument, match=match):
        ats.construction_knobs(name, **overrides)


def test_overrides_no_draw_can_keep_raise_when_drawn_with_a_drawn_name():
    strategy = ats.construction_knobs(st.just("softmax_retrieval"), beta=0.001)
    with pytest.raises(InvalidArgument, match="beta=0.001 breaks the requirement"):
        minimal(strategy)


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("softmax_retrieval", dict(beta=0.05)),  # T >= 20 keeps beta*T >= 1
        ("softmax_retrieval", dict(beta=0.001, T=st.integers(1000, 1010))),  # judged per draw
        ("softmax_retrieval", dict(beta=st.just(0.001), T=1000)),
        ("lag_head", dict(k=20)),  # T >= 42
    ],
)
def test_overrides_some_draw_keeps_are_not_refused(name, overrides):
    requires = REGISTRY[name].requires

    @settings(max_examples=10, deadline=None, database=None)
    @given(ats.construction_knobs(name, **overrides))
    def check(knobs):
        assert all(r.check(knobs) is None for r in requires), knobs

    check()


def test_an_override_of_none_is_the_default():
    knobs = minimal(ats.construction_knobs("lag_head", k=None, T=st.sampled_from([8, 64])))
    assert knobs["k"] == REGISTRY["lag_head"].knobs["k"].default
    build("lag_head", **knobs)
