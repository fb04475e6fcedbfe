"""Of_module on TransformerLens 4 bridges: a native bridge's attention, read
from the module (heads, head width, width, GQA, biases, causal, RoPE), measured P - rank J
against the catalogue. Skipped where transformer_lens is absent."""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("transformer_lens")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from approxtheory import interop  # noqa: E402
from approxtheory.errors import ConfigError  # noqa: E402
from approxtheory.identifiability_modules import module_config, of_module  # noqa: E402
from approxtheory.model import LayerSpec, ModelConfig, Transformer  # noqa: E402


def _bridge(seed=0, **kw):
    """A random approxtheory model exported as a native TransformerLens bridge."""
    torch.manual_seed(seed)
    base = dict(d_in=3, width=8, layers=[LayerSpec(heads=2, head_dim=4)], d_out=2, bias=True)
    base.update(kw)
    m = Transformer(ModelConfig(**base))
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.5)
    return interop.export(m, to="tl", check=False).obj


@pytest.mark.parametrize(
    "kw, rope, causal, G, measured",
    [
        (dict(), None, False, 2, 2 * 16 + 2 * 16 + 2 * 4 + 2 * 4),
        (dict(causal=True), None, True, 2, 80),
        (dict(causal=True, rope="full"), "full", True, 2, 48),
        (
            dict(rope="full", layers=[LayerSpec(heads=4, head_dim=2, kv_groups=2)]),
            "full",
            False,
            2,
            16,
        ),
    ],
)
def test_native_bridge_matches_catalogue(kw, rope, causal, G, measured):
    b = _bridge(**kw)
    r = of_module(b, layer=0)
    assert r.kind == "NativeAttention" and r.status == "certified" and r.matches
    assert r.measured == r.predicted == measured
    assert r.config["bias"] and r.config["causal"] is causal and r.config["rope"] == rope
    assert r.config["G"] == G and r.config["E"] == 8
    assert r.gap[2] >= 1e3 and r.gap[0] > r.gap[1]
    assert r.total == sum(p.numel() for p in b.blocks[0].attn.parameters())
    # the AttentionBridge and the NativeAttention inside it are the same measurement
    a = of_module(b.blocks[0].attn)
    n = of_module(b.blocks[0].attn._original_component)
    assert (a.measured, a.gap) == (r.measured, r.gap) == (n.measured, n.gap)


def test_native_bridge_degenerate_is_not_generic():
    # a false claim must fail: one head's W_Q zeroed has more unidentified directions
    b = _bridge()
    q = b.blocks[0].attn._original_component.q
    with torch.no_grad():
        q.weight[0:4] = 0.0
    r = of_module(b, layer=0)
    assert r.status == "certified" and r.measured > r.predicted and not r.matches


def test_native_bridge_every_layer_and_not_changed():
    b = _bridge(layers=[LayerSpec(heads=2, head_dim=4)] * 2, causal=True)
    before = {k: v.clone() for k, v in b.state_dict().items()}
    rs = [of_module(b, layer=i) for i in range(2)]
    assert all(r.matches and r.measured == 80 for r in rs)
    assert all(torch.equal(before[k], v) for k, v in b.state_dict().items())


def test_hc_k1_export_measured():
    # the construction's weights are not generic (zero blocks): measured >= predicted, reported
    b = interop.export("hc_k1", to="tl", check=False).obj
    r = of_module(b, layer=0)
    assert r.total == 80 and r.predicted == 24 and r.config["H"] == 2
    assert r.measured is None or r.measured >= r.predicted


def test_bridge_errors():
    b = _bridge()
    with pytest.raises(ConfigError, match="needs layer=N, an integer from 0 to 0"):
        of_module(b)
    with pytest.raises(ConfigError, match="from 0 to 0"):
        of_module(b, layer=1)
    with pytest.raises(ConfigError, match="layer applies to a TransformerLens TransformerBridge"):
        of_module(torch.nn.MultiheadAttention(8, 2), layer=0)
    with pytest.raises(ConfigError, match="attention_dir"):
        of_module(b, layer=0, causal=True)
    with pytest.raises(ConfigError, match="up to"):
        n_ctx = b.cfg.n_ctx
        of_module(b, layer=0, inputs=torch.randn(2, n_ctx + 1, 8, dtype=torch.float64))
    # a TransformerLens component that is not attention: the error lists what is supported
    with pytest.raises(ConfigError, match="TransformerLens bridges") as e:
        of_module(b.blocks[0])
    assert "GPT2Attention" in str(e.value) and len(str(e.value).splitlines()) == 1


def test_unknown_module_error_names_tl():
    with pytest.raises(ConfigError, match="TransformerLens bridges .a TransformerBridge"):
        of_module(torch.nn.Linear(4, 4))
    with pytest.raises(ConfigError, match="NativeAttention"):
        module_config(torch.nn.Linear(4, 4))
