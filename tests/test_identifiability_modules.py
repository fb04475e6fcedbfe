"""Identifiability of foreign attention modules: of_module on
MultiheadAttention, GPT2Attention and LlamaAttention against the catalogue, the gap rule, the
structured GPT-2 bounds and ``identifiability --from-hf`` on tiny local directories."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from approxtheory.errors import ConfigError  # noqa: E402
from approxtheory.identifiability_modules import (  # noqa: E402
    from_hf_dir,
    gap_rank,
    gpt2_structured,
    of_module,
    read_hf_config,
)


def _gpt2(E=16, H=4, seed=0):
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    torch.manual_seed(seed)
    return GPT2Attention(GPT2Config(n_embd=E, n_head=H, n_layer=1), layer_idx=0)


def _llama(E=16, H=4, G=2, bias=False, seed=0):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention

    torch.manual_seed(seed)
    c = LlamaConfig(
        hidden_size=E,
        num_attention_heads=H,
        num_key_value_heads=G,
        num_hidden_layers=1,
        intermediate_size=2 * E,
        attention_bias=bias,
    )
    return LlamaAttention(c, layer_idx=0)


def test_gpt2_attention_matches_catalogue():
    r = of_module(_gpt2())
    assert (r.total, r.measured, r.predicted) == (1088, 160, 160)
    assert r.status == "certified" and r.matches
    assert r.gap[2] >= 1e3 and r.gap[0] > r.gap[1]
    assert r.config["causal"] and r.config["bias"]


def test_llama_gqa_rope_matches_catalogue():
    r = of_module(_llama())
    assert (r.total, r.measured, r.predicted) == (768, 40, 40)
    assert r.matches


def test_llama_with_biases():
    # HF initialises biases to zero: draw them, generic point. Under RoPE the key bias is not
    # inert (it rotates with the key's position); only the value biases alias with b_O
    a = _llama(bias=True)
    with torch.no_grad():
        for lin in (a.q_proj, a.k_proj, a.v_proj, a.o_proj):
            lin.bias.normal_(0, 0.5, generator=torch.Generator().manual_seed(1))
    r = of_module(a)
    assert r.config["bias"] and r.matches
    assert r.measured == r.predicted == 40 + 2 * 4


def test_multihead_attention_causal_and_not():
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    a = of_module(m)
    b = of_module(m, causal=True)
    assert a.matches and b.matches and a.measured == 160
    m2 = torch.nn.MultiheadAttention(16, 4, bias=False)
    c = of_module(m2)
    assert c.matches and c.measured == 2 * 16 * 16 // 4


def test_module_not_changed_and_deterministic():
    a = _gpt2()
    before = {k: v.clone() for k, v in a.state_dict().items()}
    r1, r2 = of_module(a, seed=3), of_module(a, seed=3)
    assert all(torch.equal(before[k], v) for k, v in a.state_dict().items())
    assert a.c_attn.weight.dtype == torch.float32
    assert (r1.measured, r1.gap) == (r2.measured, r2.gap)


def test_false_claim_fails():
    # a degenerate module (one head's W_Q zeroed) has more unidentified directions: the
    # measurement must differ from the catalogue's generic count
    a = _gpt2()
    with torch.no_grad():
        a.c_attn.weight[:, 0:4] = 0.0
    r = of_module(a)
    assert r.status == "certified" and r.measured > r.predicted and not r.matches


def test_too_few_inputs_undercount_rank():
    # 1 sequence of 2 tokens cannot reveal the rank: measured grows beyond the prediction
    r = of_module(_gpt2(), inputs=torch.randn(1, 2, 16, dtype=torch.float64))
    assert not r.matches


def test_gap_rule():
    sv = np.array([1.0, 0.5, 1e-3, 1e-14, 1e-15])
    r, g = gap_rank(sv, 5)
    assert r == 3 and g[0] == 1e-3 and g[2] > 1e3
    r, g = gap_rank(np.array([1.0, 0.5, 0.2, 0.1]), 4)  # full rank: gap against the floor
    assert r == 4 and g[2] > 1e10
    r, g = gap_rank(np.logspace(0, -15, 16), 16)  # no clear gap
    assert g[2] < 1e3


def test_undecided_when_gap_unclear():
    r = of_module(_gpt2(), min_gap=1e30)
    assert r.status == "undecided" and r.measured is None and not r.matches


@pytest.mark.parametrize(
    "bad",
    [
        torch.nn.Linear(4, 4),
        torch.nn.MultiheadAttention(8, 2, add_bias_kv=True),
        torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=4),
    ],
)
def test_unknown_modules_refused(bad):
    with pytest.raises(ConfigError):
        of_module(bad)


def test_bad_arguments():
    with pytest.raises(ConfigError):
        of_module(_gpt2(), seed=-1)
    with pytest.raises(ConfigError):
        of_module(_gpt2(), inputs=torch.randn(2, 3, 5))
    with pytest.raises(ConfigError):
        of_module(_gpt2(), min_gap=0.5)


def test_structured_gpt2_equals_dense():
    a = _gpt2()
    s = gpt2_structured(a)
    d = of_module(a)
    assert s.status == "certified" and s.measured == d.measured == s.predicted == 160


def test_structured_refuses_to_certify_what_it_cannot():
    s = gpt2_structured(_gpt2(), qk_max_cols=0)
    assert s.status == "undecided" and s.measured is None
    assert any("rank bounds" in n for n in s.notes)


def test_structured_degenerate_not_certified_as_generic():
    a = _gpt2()
    with torch.no_grad():
        a.c_attn.weight[:, 0:4] = 0.0
    s = gpt2_structured(a)
    assert not s.matches


@pytest.fixture(scope="module")
def hf_dirs(tmp_path_factory):
    from transformers import GPT2Config, GPT2Model, LlamaConfig, LlamaModel

    root = tmp_path_factory.mktemp("hf")
    torch.manual_seed(0)
    GPT2Model(
        GPT2Config(n_embd=16, n_head=4, n_layer=2, n_positions=16, vocab_size=50257)
    ).save_pretrained(root / "gpt2")
    LlamaModel(
        LlamaConfig(
            hidden_size=16,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_hidden_layers=2,
            intermediate_size=32,
            vocab_size=11,
        )
    ).save_pretrained(root / "llama")
    (root / "notmodel").mkdir()
    (root / "weird").mkdir()
    (root / "weird" / "config.json").write_text(json.dumps({"model_type": "t5"}))
    return root


def test_from_hf_all_layers(hf_dirs):
    res = from_hf_dir(hf_dirs / "gpt2", all_layers=True)
    assert [r["layer"] for r in res["layers"]] == [0, 1]
    assert res["total"] == 2 * 1088 and res["measured"] == res["predicted"] == 320
    res = from_hf_dir(hf_dirs / "llama", layer=1)
    assert res["measured"] == res["predicted"] == 40


def _cli(capsys, *args):
    from approxtheory.cli import main

    rc = main(["identifiability", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_from_hf_table_and_json(hf_dirs, capsys):
    rc, out, err = _cli(capsys, "--from-hf", str(hf_dirs / "gpt2"), "--all-layers")
    assert rc == 0, err
    assert "total" in out and "certified" in out and "MISMATCH" not in out
    rc, out, err = _cli(capsys, "--from-hf", str(hf_dirs / "llama"), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["layers"][0]["matches"] and d["layers"][0]["gap"]["ratio"] > 1e3


@pytest.mark.parametrize(
    "sub,extra,word",
    [
        ("missing", [], "not one"),
        ("notmodel", [], "no config.json"),
        ("weird", [], "unknown architecture"),
        ("gpt2", ["--layer", "7"], "from 0 to 1"),
    ],
)
def test_cli_from_hf_bad_input(hf_dirs, capsys, sub, extra, word):
    rc, out, err = _cli(capsys, "--from-hf", str(hf_dirs / sub), *extra)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and word in lines[0]


def test_read_config_before_loading(hf_dirs, tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="JSON"):
        read_hf_config(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 2}))
    with pytest.raises(ConfigError, match="no weights"):
        read_hf_config(tmp_path)


@pytest.mark.slow
def test_structured_gpt2_wider():
    s = gpt2_structured(_gpt2(E=32, H=4))
    assert s.status == "certified" and s.measured == s.predicted == 576


@pytest.mark.slow
def test_dense_gpt2_wider_has_enough_inputs():
    # 1.25 P rows alone gave 720 here (too few logit differences per head); the default now
    # sizes the inputs for the query/key part too
    r = of_module(_gpt2(E=32, H=4))
    assert r.matches and r.measured == 576


# ----------------------------------------------- approxtheory's own layer and `export --to hf` dirs
def _own_model(**kw):
    from approxtheory.model import LayerSpec, ModelConfig, Transformer

    base = dict(
        d_in=3,
        width=8,
        layers=[LayerSpec(heads=2, head_dim=4), LayerSpec(heads=4, head_dim=2)],
        d_out=2,
        bias=True,
        causal=True,
        rope="full",
        readout="tokens",
    )
    base.update(kw)
    torch.manual_seed(0)
    m = Transformer(ModelConfig(**base))
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.5)
    return m


def test_own_attention_matches_catalogue():
    m = _own_model()
    a = of_module(m.attention(0), causal=True)
    b = of_module(m.attention(1), causal=True)
    assert a.kind == "approxtheory Attention" and a.matches and b.matches
    assert a.config["rope"] == "full" and a.config["causal"] and a.config["bias"]
    # full RoPE: QK keeps D per head (the commutant of distinct rotations), OV C², b_V aliasing C
    assert (a.measured, b.measured) == (2 * 4 + 2 * 16 + 2 * 4, 4 * 2 + 4 * 4 + 4 * 2)
    c = of_module(_own_model(rope=2).attention(0))  # partial RoPE, not causal
    assert c.config["rope"] == "partial:2" and c.matches


def test_own_attention_refusals():
    from approxtheory.model import LayerSpec

    m = _own_model(layers=[LayerSpec(heads=2, head_dim=2, value_dim=4)], rope=None)
    with pytest.raises(ConfigError, match="value width = query/key width"):
        of_module(m.attention(0))


@pytest.fixture(scope="module")
def own_hf_dir(tmp_path_factory):
    from approxtheory import interop

    d = tmp_path_factory.mktemp("own") / "hf"
    interop.export(_own_model(), to="hf", out=d, check=False)
    return d


def test_from_hf_on_an_export_to_hf(own_hf_dir, capsys):
    res = from_hf_dir(own_hf_dir, all_layers=True)
    assert res["model_type"] == "approxtheory" and res["n_layers"] == 2
    assert [r["total"] for r in res["layers"]] == [4 * 64 + 8 * 3 + 8] * 2
    assert res["measured"] == res["predicted"] == 48 + 32 and res["status"] == "certified"
    assert all(r["config"]["causal"] and r["config"]["rope"] == "full" for r in res["layers"])
    rc, out, err = _cli(capsys, "--from-hf", str(own_hf_dir), "--all-layers")
    assert rc == 0, err
    assert "approxtheory, 2 layers" in out and "MISMATCH" not in out
    rc, out, err = _cli(capsys, "--from-hf", str(own_hf_dir), "--layer", "2")
    assert rc == 2 and "from 0 to 1" in err and len(err.strip().splitlines()) == 1


def test_from_hf_on_an_export_to_tl_is_refused(tmp_path, capsys):
    pytest.importorskip("transformer_lens")
    from approxtheory import interop

    interop.export(_own_model(rope=None), to="tl", out=tmp_path / "tl", check=False)
    rc, out, err = _cli(capsys, "--from-hf", str(tmp_path / "tl"))
    assert rc == 2 and "no config.json" in err and len(err.strip().splitlines()) == 1
