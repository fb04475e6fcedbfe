"""The shared transformer: fused and manual paths agree, shapes and configs are checked, softmax is
stable for huge β, Prism schedules keep the parameter count."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from approxtheory import ConfigError
from approxtheory import strategies as ats
from approxtheory.model import LayerSpec, ModelConfig, Transformer


@settings(max_examples=25, deadline=None)
@given(cfg=ats.architectures(), B=st.integers(1, 3), T=st.integers(1, 9), seed=st.integers(0, 99))
def test_manual_path_matches_fused_sdpa(cfg, B, T, seed):
    torch.manual_seed(seed)
    m = Transformer(cfg)
    for p in m.parameters():
        torch.nn.init.normal_(p, std=0.5)
    x = torch.randn(B, T, cfg.d_in, dtype=torch.float64)
    y = m(x)
    y2, atts = m(x, return_attention=True)
    assert torch.allclose(y, y2, atol=1e-12, rtol=1e-10)
    for a, spec in zip(atts, cfg.layers):
        assert a.shape[1] == spec.heads
        assert torch.allclose(a.sum(-1), torch.ones_like(a.sum(-1)))
    assert y.dtype == torch.float64
    assert y.shape == ((B, cfg.d_out) if cfg.readout == "cls" else (B, T, cfg.d_out))


def test_cls_is_not_a_key_by_default():
    cfg = ModelConfig(d_in=1, width=2, layers=[LayerSpec(1, 1)])
    m = Transformer(cfg)
    torch.nn.init.normal_(m.cls)
    with torch.no_grad():
        _, atts = m(torch.rand(2, 5, 1, dtype=torch.float64), return_attention=True)
    assert float(atts[0][..., -1].abs().max()) == 0.0   # nobody attends to CLS


def test_causal_mask_and_large_beta_are_finite():
    from approxtheory.constructions import build
    for beta in (1.0, 1e3, 1e6):
        c = build("softmax_retrieval", T=16, beta=beta)
        X = torch.rand(64, 16, 1, dtype=torch.float64)
        y, att = c.model(X, return_attention=True)
        assert torch.isfinite(y).all() and torch.isfinite(att[0]).all()
    cfg = ModelConfig(d_in=2, width=4, layers=[LayerSpec(2, 2)], causal=True, readout="tokens",
                      attn_scale=1e6)
    m = Transformer(cfg)
    with torch.no_grad():
        _, att = m(torch.randn(3, 6, 2, dtype=torch.float64), return_attention=True)
    assert torch.isfinite(att[0]).all()
    assert float(torch.triu(att[0][0, 0], 1).abs().max()) == 0.0


def test_set_weights_checks_names_and_shapes():
    m = Transformer(ModelConfig(d_in=1, width=4, layers=[LayerSpec(2, 2)]))
    with pytest.raises(ConfigError, match=r"expects shape \(4, 4\)"):
        m.set_weights({"layers.0.attn.q.weight": np.zeros((3, 4))})
    with pytest.raises(ConfigError, match="no parameter named"):
        m.set_weights({"layers.0.attn.z.weight": np.zeros((4, 4))})
    with pytest.raises(ConfigError, match=r"head 1 q block must have shape \(2, 4\)"):
        m.layers[0].attn.set_head(1, q=np.zeros((3, 4)))
    m.set_weights({"layers.0.attn.q.weight": np.eye(4)})
    assert float(m.layers[0].attn.q.weight.detach()[2, 2]) == 1.0
    with pytest.raises(ConfigError, match="strict"):
        m.set_weights({}, strict=True)


@pytest.mark.parametrize("kw,needle", [
    (dict(layers=[dict(heads=4, head_dim=2, kv_groups=3)]), "kv_groups must divide heads"),
    (dict(layers=[LayerSpec(1, 3)], rope="full"), "even number"),
    (dict(layers=[LayerSpec(1, 4)], positions="onehot"), "needs seq_len"),
    (dict(layers=[LayerSpec(1, 4)], ffn_kind="tanh"), "ffn_kind"),
    (dict(layers=[LayerSpec(1, 4)], width=0), "width must be a positive integer"),
])
def test_bad_configs_raise_typed_errors(kw, needle):
    base = dict(d_in=1, width=4)
    base.update(kw)
    with pytest.raises(ConfigError, match=needle):
        ModelConfig(**base)


def test_wrong_input_shape_is_a_clear_error():
    m = Transformer(ModelConfig(d_in=3, width=4, layers=[LayerSpec(1, 4)]))
    with pytest.raises(ConfigError, match=r"shape \(batch, T, 3\)"):
        m(torch.zeros(2, 5, 2))


@given(schedule=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=5))
def test_prism_schedules_have_the_uniform_parameter_count(schedule):
    """PR-N1 measured on the shared model: any head schedule, same parameter count."""
    def model(heads):
        return Transformer(ModelConfig(d_in=8, width=16, layers=[
            LayerSpec(h, 16 // h, ffn_hidden=(32,)) for h in heads], bias=True))
    assert model(schedule).count_params() == model([8] * len(schedule)).count_params()


def test_gqa_and_rope_models_run():
    cfg = ModelConfig(d_in=2, width=8, layers=[LayerSpec(4, 2, kv_groups=2)], rope="full",
                      bias=True)
    m = Transformer(cfg)
    assert m.layers[0].attn.k.weight.shape == (4, 8)
    y = m(torch.randn(2, 5, 2, dtype=torch.float64))
    assert torch.isfinite(y).all()
