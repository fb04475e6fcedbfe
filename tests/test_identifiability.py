"""Identifiability: the catalogue's counts equal P - rank(Jacobian) for drawn configurations;
inert and aliased biases; update projection; rebalancing leaves the function unchanged."""

import json

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approxtheory import ConfigError
from approxtheory.cli import main
from approxtheory.identifiability import (
    AttentionConfig,
    bias_aliasing,
    build_layer,
    imbalance,
    rebalance_model,
    sylvester_projection,
    unidentified_dim,
)


@st.composite
def configs(draw):
    H = draw(st.sampled_from([1, 2, 4]))
    E = H * draw(st.sampled_from([2, 4])) if H < 4 else draw(st.sampled_from([4, 8]))
    G = draw(st.sampled_from([g for g in range(1, H + 1) if H % g == 0]))
    D = E // H
    rope = draw(
        st.sampled_from(
            [None, "full"] + (["repeated", f"partial:{D // 2 // 2 * 2}"] if D >= 4 else [])
        )
    )
    if rope == "partial:0" or D % 2:
        rope = None
    return AttentionConfig(
        E=E,
        H=H,
        G=G,
        bias=draw(st.booleans()) if rope is None else False,
        causal=draw(st.booleans()),
        rope=rope,
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs())
def test_measured_equals_predicted(cfg):
    r = unidentified_dim(cfg)
    assert r["measured"] == r["predicted"], (cfg, r)
    assert r["singular_value_gap"] > 1e6


@pytest.mark.parametrize(
    "cfg",
    [
        AttentionConfig(8, 2),
        AttentionConfig(12, 3, causal=True),
        AttentionConfig(16, 8),
        AttentionConfig(16, 1),
    ],
)
def test_structured_certificate_agrees_with_dense_jacobian(cfg):
    s = unidentified_dim(cfg, method="structured")
    d = unidentified_dim(cfg, method="dense")
    assert s["method"] == "structured" and d["method"] == "dense"
    assert s["measured"] == d["measured"] == s["predicted"]
    assert s["total"] == d["total"]


def test_structured_method_refuses_what_it_cannot_certify():
    with pytest.raises(ConfigError, match="structured method needs"):
        unidentified_dim(AttentionConfig(8, 2, bias=True), method="structured")


@pytest.mark.parametrize(
    "cfg,total,pred",
    [
        (AttentionConfig(8, 4, G=2), 192, 16),  # the issue's example
        (AttentionConfig(6, 1, no_output=True), 108, 36),  # paper's head without W_O: ratio 1/3
        (AttentionConfig(8, 2, fat=True), 512, 256),
    ],
)
def test_table_rows(cfg, total, pred):
    r = unidentified_dim(cfg)
    assert (r["total"], r["predicted"], r["measured"]) == (total, pred, pred)


def test_cli_issue_example(capsys):
    assert main(["identifiability", "--E", "8", "--H", "4", "--G", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["predicted"] == d["measured"] == 16 and d["total"] == 192
    assert d["ratio"] == pytest.approx(16 / 192)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--E", "8", "--H", "3"], "H must divide E (got H=3, E=8)"),
        (["--E", "8", "--H", "4", "--G", "3"], "G must divide H"),
        (["--E", "6", "--H", "2", "--rope", "full"], "even head width"),
        (["--E", "-8", "--H", "2"], "E must be a positive integer"),
        (["--E", "8", "--H", "2", "--rope", "sideways"], "rope must be"),
    ],
)
def test_cli_bad_input(capsys, argv, needle):
    assert main(["identifiability", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "cfg", [AttentionConfig(8, 2, bias=True), AttentionConfig(8, 4, G=2, bias=True, causal=True)]
)
def test_key_bias_inert_and_value_bias_aliased(cfg):
    r = bias_aliasing(cfg)
    assert r["key_bias_output_change"] < 1e-12 and r["key_bias_grad"] < 1e-12
    assert r["value_bias_aliasing_output_change"] < 1e-12


@pytest.mark.parametrize("causal", [False, True])
def test_bias_symmetries_recomputed_with_positive_controls(causal):
    """ID-F4.7 / ID-B4.7.2 redone here on the layer: a key-bias shift leaves every output
    unchanged while a query-bias shift of the same size does not; a value-bias shift δ_h alone
    moves every output by exactly Σ_h W_O^h δ_h (attention rows sum to 1), so subtracting that
    from b_O undoes it."""
    cfg = AttentionConfig(8, 2, bias=True, causal=causal)
    m = build_layer(cfg, seed=5)
    a = m.layers[0].attn
    g = torch.Generator().manual_seed(11)
    X = torch.randn(3, 6, 8, generator=g, dtype=torch.float64)

    def out():
        with torch.no_grad():
            return m(X).clone()

    y0 = out()
    shift = torch.randn(a.k.bias.shape, generator=g, dtype=torch.float64)
    with torch.no_grad():
        a.k.bias.add_(shift)
    assert float((out() - y0).abs().max()) < 1e-12
    with torch.no_grad():
        a.k.bias.sub_(shift)
        a.q.bias.add_(shift)
    assert float((out() - y0).abs().max()) > 1e-3
    with torch.no_grad():
        a.q.bias.sub_(shift)
        delta = torch.randn(a.v.bias.shape, generator=g, dtype=torch.float64)
        a.v.bias.add_(delta)
    moved = out() - y0
    expected = (a.o.weight.detach() @ delta).expand_as(moved)  # head_i = I (identity read-out)
    assert float(expected.abs().max()) > 1e-3
    assert torch.allclose(moved, expected, atol=1e-12, rtol=0)
    with torch.no_grad():
        a.o.bias.sub_(a.o.weight @ delta)
    assert float((out() - y0).abs().max()) < 1e-12


def test_update_projection_conventions():
    rng = np.random.default_rng(0)
    Wq, Wk = rng.standard_normal((4, 16)), rng.standard_normal((4, 16))
    A = rng.standard_normal((4, 4))
    A_hat, rho = sylvester_projection(Wq, Wk, A @ Wq, -A.T @ Wk)
    assert rho == pytest.approx(1.0, abs=1e-12) and np.allclose(A_hat, A)
    G = rng.standard_normal((16, 16))
    assert sylvester_projection(Wq, Wk, Wk @ G, Wq @ G.T)[1] < 1e-20


def test_rebalancing_leaves_the_function_unchanged():
    m = build_layer(AttentionConfig(16, 4), seed=3)
    with torch.no_grad():
        m.layers[0].attn.q.weight.mul_(3.0)  # unbalance
        m.layers[0].attn.k.weight.div_(3.0)
    X = torch.randn(5, 7, 16, dtype=torch.float64)
    a = m.layers[0].attn
    heads = [slice(4 * h, 4 * (h + 1)) for h in range(4)]
    before = [
        (a.q.weight.detach().numpy()[sl].copy(), a.k.weight.detach().numpy()[sl].copy())
        for sl in heads
    ]
    assert min(np.linalg.norm(imbalance(Wq, Wk)) for Wq, Wk in before) > 1.0
    with torch.no_grad():
        y0 = m(X)
        dM = rebalance_model(m)
        y1 = m(X)
    assert dM < 1e-12 and float((y1 - y0).abs().max()) < 1e-12
    for sl, (Wq0, Wk0) in zip(heads, before):
        Wq, Wk = a.q.weight.detach().numpy()[sl], a.k.weight.detach().numpy()[sl]
        assert np.linalg.norm(imbalance(Wq, Wk)) < 1e-10  # balanced: W_Q W_Qᵀ = W_K W_Kᵀ
        # the same circuit W_Kᵀ W_Q (recomputed here), reached by new weights
        assert np.allclose(Wk.T @ Wq, Wk0.T @ Wq0, atol=1e-12, rtol=0)
        assert np.abs(Wq - Wq0).max() > 1e-3


@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "2"])
def test_value_dim_must_be_a_positive_integer(bad):
    with pytest.raises(ConfigError, match="value_dim must be None or a positive integer"):
        AttentionConfig(8, 2, value_dim=bad)
    with pytest.raises(ConfigError, match="not with no_output"):
        AttentionConfig(4, 1, no_output=True, value_dim=2)


def test_a_value_width_apart_from_the_head_width_is_counted_and_measured_densely():
    from approxtheory.identifiability import attention_param_count

    cfg = AttentionConfig(8, 2, value_dim=2)
    # W_Q, W_K: 2 heads x 4 x 8 each; W_V: 2 x 2 x 8; W_O: 8 x (2 x 2)
    assert attention_param_count(cfg) == 64 + 64 + 32 + 32
    r = unidentified_dim(cfg)
    assert r["method"] == "dense" and (r["measured"], r["total"]) == (2 * (16 + 4), 192)
