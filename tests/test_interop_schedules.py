"""Heterogeneous head schedules through export: a Prism schedule of the
shared model (per-layer head counts at a fixed width, so per-layer head widths) exported to
TransformerLens by zero-padding to the widest layer where it can express it, refused with a typed
error where it cannot (full RoPE at per-layer head widths: one rotary width), and to Hugging Face
exactly. Skipped where transformers / transformer_lens are absent."""

import dataclasses
import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from approxtheory import interop, schedules  # noqa: E402
from approxtheory.cli import main  # noqa: E402
from approxtheory.errors import ConfigError  # noqa: E402
from approxtheory.model import LayerSpec, Transformer  # noqa: E402

SCHEDULE = schedules.custom((2, 2, 4, 4), d=16)  # heads 2, 2, 4, 4 of widths 8, 8, 4, 4


def _trained(seed=0, steps=3, **kw) -> Transformer:
    """The shared model of SCHEDULE (float64; ``kw`` replaces config fields), random weights and
    a few Adam steps on a random regression: a trained model, not a hand-made one."""
    cfg = dataclasses.replace(schedules.model_config(SCHEDULE, ffn=8, dtype="float64"), **kw)
    torch.manual_seed(seed)
    m = Transformer(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.1)
    g = torch.Generator().manual_seed(seed + 1)
    X = torch.randn(8, 6, cfg.d_in, generator=g, dtype=torch.float64)
    Y = torch.randn(8, 6, cfg.d_out, generator=g, dtype=torch.float64)
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        ((m(X) - Y) ** 2).mean().backward()
        opt.step()
    return m.eval()


def test_schedule_is_heterogeneous():
    m = _trained(steps=0)
    assert [(s.heads, s.head_dim) for s in m.cfg.layers] == [(2, 8), (2, 8), (4, 4), (4, 4)]
    assert m.cfg.rope == "full"


@pytest.mark.parametrize("rope, dtype", [(None, "float64"), (4, "float32")])
def test_tl_zero_pads_a_schedule_and_verifies_parity(tmp_path, rope, dtype):
    pytest.importorskip("transformer_lens")
    m = _trained(rope=rope)
    ex = interop.export(m, to="tl", out=tmp_path / "tl")
    r = ex.report
    assert r.reloaded and r.dtype == dtype and r.passed
    assert r.max_abs_diff <= (1e-12 if dtype == "float64" else 1e-5)
    assert any("zero-padded to 4 x 8" in n for n in r.notes)
    assert any("per-layer attention scales folded" in n for n in r.notes)
    bridge, _ = interop.load_tl(tmp_path / "tl")
    assert (bridge.cfg.n_heads, bridge.cfg.d_head, bridge.cfg.n_layers) == (4, 8, 4)
    # the padded heads are zero: the narrow layers' extra heads and widths hold nothing
    attn = bridge.blocks[0].attn._original_component
    Wo = attn.o.weight.detach().view(16, 4, 8)
    assert torch.count_nonzero(Wo[:, 2:]) == 0 and torch.count_nonzero(Wo[:, :2]) > 0
    attn = bridge.blocks[3].attn._original_component
    Wq = attn.q.weight.detach().view(4, 8, 16)
    assert torch.count_nonzero(Wq[:, 4:]) == 0


def test_tl_padding_is_checked_by_parity():
    # a mutant export: a padded head given a nonzero output weight must fail the parity check
    pytest.importorskip("transformer_lens")
    m = _trained(rope=None)
    ex = interop.export(m, to="tl", check=False)
    assert ex.recheck(n_random=8).passed
    attn = ex.obj.blocks[0].attn._original_component
    with torch.no_grad():  # layer 0 has 2 heads: give padded head 2 a value and an output
        attn.v.weight.view(4, 8, 16)[2] = 0.3
        attn.q.weight.view(4, 8, 16)[2, :1] = 0.1  # (its query is zero too: any pattern)
        attn.o.weight.view(16, 4, 8)[:, 2] = 0.3
    r = ex.recheck(n_random=8)
    assert not r.passed and r.max_abs_diff > 1e-6


def test_tl_full_rope_same_head_width_different_head_counts():
    # one rotary width: expressible by zero-padded heads (float32 RoPE tables in TransformerLens)
    pytest.importorskip("transformer_lens")
    m = _trained(
        layers=[LayerSpec(heads=2, head_dim=4, ffn_hidden=(8,)), LayerSpec(heads=4, head_dim=4)]
    )
    r = interop.export(m, to="tl").report
    assert r.passed and r.dtype == "float32" and any("zero-padded to 4 x 4" in n for n in r.notes)


def test_tl_refuses_full_rope_with_per_layer_head_widths(monkeypatch):
    m = _trained(steps=0)

    def boom(*a, **k):
        raise AssertionError("booted a bridge for a refused architecture")

    monkeypatch.setattr(interop, "_tl_boot", boom)
    with pytest.raises(ConfigError, match="per-layer head widths with full RoPE") as e:
        interop.export(m, to="tl")
    assert "one rotary width" in str(e.value) and "the other target is hf" in str(e.value)


def test_hf_round_trips_a_schedule_exactly(tmp_path):
    pytest.importorskip("transformers")
    m = _trained()
    ex = interop.export(m, to="hf", out=tmp_path / "hf")
    r = ex.report
    # the same float64 function: equal up to the rounding of BLAS kernels, which may depend on
    # the reloaded tensors' memory alignment (measured: 0 on the report's inputs, 1.1e-16 at T=7)
    assert r.reloaded and r.dtype == "float64" and r.max_abs_diff <= 1e-15 and r.passed
    back = interop.resolve(tmp_path / "hf")
    assert [(s.heads, s.head_dim) for s in back.cfg.layers] == [(2, 8), (2, 8), (4, 4), (4, 4)]
    X = np.random.default_rng(3).standard_normal((3, 7, m.cfg.d_in))
    with torch.no_grad():
        ref = m(X)
        tol = 8 * torch.finfo(torch.float64).eps * float(ref.abs().max())
        assert float((back(X) - ref).abs().max()) <= tol
        assert float((ex.obj(torch.tensor(X)) - ref).abs().max()) <= tol


def test_cli_hf_export_of_schedule_then_tl_refused_one_line(tmp_path, capsys):
    # a trained model reaches the command line as an hf export: re-exported to tl it is refused
    pytest.importorskip("transformers")
    interop.export(_trained(), to="hf", out=tmp_path / "hf", check=False)
    assert main(["export", str(tmp_path / "hf"), "--to", "hf", "--check"]) == 0
    assert "parity: PASS" in capsys.readouterr().out
    assert main(["export", str(tmp_path / "hf"), "--to", "tl", "--check"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "per-layer head widths with full RoPE" in err
