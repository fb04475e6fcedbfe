"""The shared transformer: both attention paths against an independent numpy transformer written
from the layout in the model's docstring; shapes and configs are checked, softmax is stable for
huge β, RoPE is relative, Prism schedules keep the hand-counted parameter count."""

import dataclasses

import numpy as np
import pytest
import torch
from _helpers import DECODER_LM, NO_BIASES, decoder_lm_config
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import erf

from approxtheory import ConfigError
from approxtheory import strategies as ats
from approxtheory.model import LayerSpec, ModelConfig, Transformer


# ----------------------------------------------------------------- independent numpy forward
def _np_softmax(z):
    with np.errstate(invalid="ignore"):
        z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _np_act(name, x):
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "gelu":
        return 0.5 * x * (1 + erf(x / np.sqrt(2)))
    return x


def _np_mlp(P, prefix, x, n_linear, act, bias):
    for i in range(n_linear):
        x = x @ P[f"{prefix}.{2 * i}.weight"].T + (P[f"{prefix}.{2 * i}.bias"] if bias else 0)
        if i < n_linear - 1:
            x = _np_act(act, x)
    return x


def _np_layernorm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def _np_rmsnorm(x, w, eps):
    return x / np.sqrt((x**2).mean(-1, keepdims=True) + eps) * w


def _np_norm(cfg, P, name, x):
    if cfg.layernorm:
        return _np_layernorm(x, P[f"{name}.weight"], P[f"{name}.bias"])
    if cfg.rmsnorm:
        return _np_rmsnorm(x, P[f"{name}.weight"], cfg.rms_eps)
    return x


def _np_rope(x, pairs, base, explicit):
    """Rotate (2i, 2i+1) of the first 2·pairs dims by position·θ_i, θ_i = base^{-2i/(2·pairs)}.
    x: (B, N, H, n)."""
    if pairs == 0:
        return x
    th = (
        np.asarray(explicit[:pairs])
        if explicit is not None
        else base ** (-2.0 * np.arange(pairs) / (2 * pairs))
    )
    ang = np.arange(x.shape[1])[:, None] * th[None]  # (N, pairs)
    c, s = np.cos(ang)[None, :, None], np.sin(ang)[None, :, None]
    x = x.copy()
    a, b = x[..., 0 : 2 * pairs : 2].copy(), x[..., 1 : 2 * pairs : 2].copy()
    x[..., 0 : 2 * pairs : 2] = a * c - b * s
    x[..., 1 : 2 * pairs : 2] = a * s + b * c
    return x


def np_transformer(m, X):
    """The model's forward recomputed in numpy from its parameters: encoder on [x, onehot(t)],
    learned positions added, CLS appended last (a query, not a key unless cls_is_key), per layer
    pre-norm attention (GQA, RoPE, causal) with residual, then the FFN (ReLU/GELU MLP, SwiGLU or
    bilinear); read-out of the CLS state or of every token. Returns (output, attentions)."""
    cfg = m.cfg
    P = {k: v.detach().double().numpy() for k, v in m.named_parameters()}
    B, T, _ = X.shape
    h = X
    if cfg.positions == "onehot":
        h = np.concatenate([X, np.broadcast_to(np.eye(T), (B, T, T))], -1)
    h = _np_mlp(P, "embed", h, len(cfg.embed_hidden) + 1, "relu", cfg.embed_bias)
    if cfg.positions == "learned":
        h = h + P["pos"]
    cls = cfg.readout == "cls"
    if cls:
        h = np.concatenate([h, np.broadcast_to(P["cls"], (B, 1, cfg.width))], 1)
    N = h.shape[1]
    allowed = np.ones((N, N), bool)
    if cfg.causal:
        allowed &= np.tril(allowed)
    if cls and not cfg.cls_is_key:
        allowed[:, -1] = False
    atts = []
    for li, spec in enumerate(cfg.layers):
        pre = f"layers.{li}"
        H, n, c, G = spec.heads, spec.head_dim, spec.value_dim, spec.kv_groups
        x = _np_norm(cfg, P, f"{pre}.ln1", h)

        def lin(name, x=x, pre=pre):
            return x @ P[f"{pre}.attn.{name}.weight"].T + (
                P[f"{pre}.attn.{name}.bias"] if cfg.bias else 0
            )

        q = lin("q").reshape(B, N, H, n)
        k = lin("k").reshape(B, N, G, n)
        v = lin("v").reshape(B, N, G, c)
        pairs = 0 if cfg.rope is None else (n if cfg.rope == "full" else int(cfg.rope)) // 2
        q = _np_rope(q, pairs, cfg.rope_base, cfg.rope_freqs)
        k = _np_rope(k, pairs, cfg.rope_base, cfg.rope_freqs)
        group = np.arange(H) // (H // G)
        k, v = k[:, :, group], v[:, :, group]  # (B, N, H, ·)
        scale = cfg.attn_scale if cfg.attn_scale is not None else 1 / np.sqrt(n)
        logits = np.einsum("bihd,bjhd->bhij", q, k) * scale
        att = _np_softmax(np.where(allowed, logits, -np.inf))
        atts.append(att)
        y = np.einsum("bhij,bjhc->bihc", att, v).reshape(B, N, H * c)
        a = y @ P[f"{pre}.attn.o.weight"].T + (P[f"{pre}.attn.o.bias"] if cfg.bias else 0)
        h = h + a if cfg.residual else a
        if spec.ffn_hidden:
            x = _np_norm(cfg, P, f"{pre}.ln2", h)
            if cfg.ffn_kind in ("swiglu", "bilinear"):

                def g(name, x=x, pre=pre):
                    return x @ P[f"{pre}.ffn.{name}.weight"].T + (
                        P[f"{pre}.ffn.{name}.bias"] if cfg.ffn_bias else 0
                    )

                u = g("w1")
                u = u / (1 + np.exp(-u)) * g("w3") if cfg.ffn_kind == "swiglu" else u * g("w3")
                f = u @ P[f"{pre}.ffn.w2.weight"].T + (
                    P[f"{pre}.ffn.w2.bias"] if cfg.ffn_bias else 0
                )
            else:
                f = _np_mlp(
                    P, f"{pre}.ffn.mlp", x, len(spec.ffn_hidden) + 1, cfg.ffn_kind, cfg.ffn_bias
                )
            h = h + f if cfg.ffn_residual else f
    h = h[:, -1] if cls else h
    if cfg.final_norm:
        h = _np_norm(cfg, P, "ln_f", h)
    if cfg.tie_embeddings:  # the embedding's matrix (E x d_in), transposed
        out = h @ P["embed.0.weight"] + (P["head.bias"] if cfg.head_bias else 0)
    else:
        out = _np_mlp(P, "head", h, len(cfg.head_hidden) + 1, cfg.head_activation, cfg.head_bias)
    return out, atts


def _randomised(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    m = Transformer(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=torch.float64))
    return m


def _check_against_numpy(m, B, T, seed):
    cfg = m.cfg
    x = torch.randn(
        B, T, cfg.d_in, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + 1)
    )
    ref, ref_atts = np_transformer(m, x.numpy())
    with torch.no_grad():
        y = m(x)  # fused path (CLS row only in the last layer)
        y2, atts = m(x, return_attention=True)  # manual path
    assert y.dtype == torch.float64
    assert y.shape == ((B, cfg.d_out) if cfg.readout == "cls" else (B, T, cfg.d_out))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(y2.numpy(), ref, rtol=1e-9, atol=1e-10)
    for a, r, spec in zip(atts, ref_atts, cfg.layers):
        assert a.shape[1] == spec.heads
        np.testing.assert_allclose(a.numpy(), r, rtol=1e-9, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(cfg=ats.architectures(), B=st.integers(1, 3), T=st.integers(1, 9), seed=st.integers(0, 99))
def test_both_paths_match_an_independent_numpy_transformer(cfg, B, T, seed):
    _check_against_numpy(_randomised(cfg, seed), B, T, seed)


@pytest.mark.parametrize(
    "kw",
    [
        dict(
            positions="onehot",
            seq_len=5,
            embed_hidden=(6,),
            head_hidden=(7,),
            head_activation="gelu",
        ),
        dict(positions="learned", seq_len=5, attn_scale=0.7, cls_is_key=True, causal=True),
        dict(ffn_kind="swiglu", ffn_bias=False, residual=False),
        dict(ffn_kind="bilinear", ffn_residual=False, layernorm=True, readout="tokens"),
        dict(ffn_kind="gelu", rope=2, rope_freqs=(0.3, 1.1), bias=True, causal=True),
        dict(rope="full", rope_base=7.0, embed_bias=False, head_bias=False, cls_is_key=True),
        dict(rmsnorm=True, rms_eps=1e-3, ffn_kind="swiglu", causal=True, rope="full"),
        dict(DECODER_LM, d_out=3, rope="full", ffn_kind="swiglu", **NO_BIASES),
        dict(
            layernorm=True,
            final_norm=True,
            tie_embeddings=True,
            d_out=3,
            positions="learned",
            seq_len=5,
        ),
    ],
    ids=[
        "onehot-mlp-gelu",
        "learned-clskey-causal",
        "swiglu-noresidual",
        "bilinear-ln-tokens",
        "partial-rope-freqs",
        "rope-base-nobias",
        "rmsnorm-cls",
        "digest-decoder-lm",
        "layernorm-final-tied-cls",
    ],
)
def test_config_options_match_the_numpy_transformer(kw):
    cfg = ModelConfig(
        **{
            **dict(
                d_in=3,
                width=8,
                d_out=2,
                layers=[
                    LayerSpec(2, 4, value_dim=3, kv_groups=1, ffn_hidden=(5,)),
                    LayerSpec(4, 2, ffn_hidden=(6,)),
                ],
            ),
            **kw,
        }
    )
    _check_against_numpy(_randomised(cfg, 0), 2, 5, 0)


def test_cls_is_not_a_key_by_default():
    cfg = ModelConfig(d_in=1, width=2, layers=[LayerSpec(1, 1)])
    m = Transformer(cfg)
    torch.nn.init.normal_(m.cls)
    with torch.no_grad():
        _, atts = m(torch.rand(2, 5, 1, dtype=torch.float64), return_attention=True)
    assert float(atts[0][..., -1].abs().max()) == 0.0  # nobody attends to CLS
    assert float(atts[0][..., :-1].min()) > 0.0  # every row attends to every token


def test_causal_mask_and_large_beta_are_finite():
    from approxtheory.constructions import build

    for beta in (1.0, 1e3, 1e6):
        c = build("softmax_retrieval", T=16, beta=beta)
        X = torch.rand(64, 16, 1, dtype=torch.float64)
        y, att = c.model(X, return_attention=True)
        assert torch.isfinite(y).all() and torch.isfinite(att[0]).all()
    # at β = 1e6 and a gap >= 1e-3 the head is the exact max (other weights <= 15 e^{-1000})
    X = torch.from_numpy(np.random.default_rng(0).permutation(np.arange(16) * 1e-3 + 0.5))
    with torch.no_grad():
        y = c.model(X.reshape(1, 16, 1))
    assert float(y[0, 0]) == float(X.max())
    cfg = ModelConfig(
        d_in=2, width=4, layers=[LayerSpec(2, 2)], causal=True, readout="tokens", attn_scale=1e6
    )
    m = Transformer(cfg)
    with torch.no_grad():
        _, att = m(torch.randn(3, 6, 2, dtype=torch.float64), return_attention=True)
    assert torch.isfinite(att[0]).all()
    assert float(torch.triu(att[0][0, 0], 1).abs().max()) == 0.0
    assert float(att[0][0, 0, 0, 0]) == 1.0  # the first token sees only itself


def test_rope_logits_depend_only_on_relative_position():
    """With the same token at every position, RoPE logits q(i)·k(j) depend on i - j only (and do
    depend on it); without RoPE they are all equal."""

    def logits(rope):
        cfg = ModelConfig(
            d_in=2,
            width=8,
            layers=[LayerSpec(4, 2, kv_groups=2)],
            rope=rope,
            readout="tokens",
            bias=True,
        )
        m = _randomised(cfg, 3)
        x = torch.tensor([[[0.3, -1.2]]], dtype=torch.float64).expand(1, 7, 2)
        with torch.no_grad():
            _, att = m(x, return_attention=True)
        L = att[0][0].log().numpy()  # logits up to a per-row constant
        return L - L[:, :, :1]

    L = logits("full")
    for d in range(-6, 7):
        diag = np.array([L[:, i, i - d] - L[:, i, i] for i in range(7) if 0 <= i - d < 7])
        assert np.allclose(diag, diag[0], atol=1e-10)
    assert np.abs(L).max() > 1e-3
    assert np.abs(logits(None)).max() < 1e-12


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
    # set_head writes head i's rows (q, k, v) and columns (o) and nothing else
    m.zero_()
    m.layers[0].attn.set_head(
        1, q=np.ones((2, 4)), k=2 * np.ones((2, 4)), v=3 * np.ones((2, 4)), o=4 * np.ones((4, 2))
    )
    a = m.layers[0].attn
    for w, val in ((a.q.weight, 1.0), (a.k.weight, 2.0), (a.v.weight, 3.0)):
        assert (w[2:] == val).all() and (w[:2] == 0).all()
    assert (a.o.weight[:, 2:] == 4.0).all() and (a.o.weight[:, :2] == 0).all()


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(layers=[dict(heads=4, head_dim=2, kv_groups=3)]), "kv_groups must divide heads"),
        (dict(layers=[LayerSpec(1, 3)], rope="full"), "even number"),
        (dict(layers=[LayerSpec(1, 4)], positions="onehot"), "needs seq_len"),
        (dict(layers=[LayerSpec(1, 4)], ffn_kind="tanh"), "ffn_kind"),
        (dict(layers=[LayerSpec(1, 4)], width=0), "width must be a positive integer"),
    ],
)
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
    """PR-N1 measured on the shared model: any head schedule, same parameter count, by hand:
    encoder 8·16 + 16, CLS 16, read-out 16 + 1; per layer q, k, v, o 16·16 + 16 each and the FFN
    16·32 + 32 + 32·16 + 16 (h heads of width 16/h: h·(16/h) = 16 rows whatever h)."""

    def model(heads):
        return Transformer(
            ModelConfig(
                d_in=8,
                width=16,
                layers=[LayerSpec(h, 16 // h, ffn_hidden=(32,)) for h in heads],
                bias=True,
            )
        )

    per_layer = 4 * (16 * 16 + 16) + (16 * 32 + 32 + 32 * 16 + 16)
    assert model(schedule).count_params() == 8 * 16 + 16 + 16 + 17 + per_layer * len(schedule)
    assert model(schedule).count_params(["attn"]) == 4 * (16 * 16 + 16) * len(schedule)


def test_gqa_shares_key_value_heads():
    cfg = ModelConfig(
        d_in=2, width=8, layers=[LayerSpec(4, 2, kv_groups=2)], rope="full", bias=True
    )
    m = Transformer(cfg)
    assert m.layers[0].attn.k.weight.shape == (4, 8)
    assert m.count_params(["attn"]) == (8 * 8 + 8) + 2 * (4 * 8 + 4) + (8 * 8 + 8)
    # heads 0 and 1 share KV group 0: set through head 1, read by head 0
    m.layers[0].attn.set_head(1, k=np.full((2, 8), 5.0))
    assert (m.layers[0].attn.k.weight[:2] == 5.0).all()
    _check_against_numpy(_randomised(cfg, 1), 2, 5, 1)


def test_config_round_trips_through_to_dict():
    cfg = ModelConfig(
        d_in=2, width=8, layers=[LayerSpec(4, 2, kv_groups=2, ffn_hidden=(3,))], rope="full"
    )
    d = cfg.to_dict()
    again = ModelConfig(**{**d, "layers": [LayerSpec(**spec) for spec in d["layers"]]})
    assert dataclasses.asdict(again) == d


# ------------------------------------------------- opt-in RMSNorm, final norm, tied embeddings
def test_rmsnorm_matches_torch_rms_norm_and_numpy_in_float64():
    from approxtheory.model import RMSNorm

    g = torch.Generator().manual_seed(0)
    x = 3.0 * torch.randn(4, 7, 16, dtype=torch.float64, generator=g)
    n = RMSNorm(16, eps=1e-5).double()
    with torch.no_grad():
        n.weight.copy_(torch.randn(16, dtype=torch.float64, generator=g))
        y = n(x)
        ref = torch.nn.functional.rms_norm(x, (16,), n.weight, eps=1e-5)
    assert y.dtype == torch.float64
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-13, atol=1e-14)
    w = n.weight.detach().numpy()
    np.testing.assert_allclose(y.numpy(), _np_rmsnorm(x.numpy(), w, 1e-5), rtol=1e-13)
    # no centring: a constant vector keeps its sign and is scaled to unit RMS (times the gain)
    c = torch.full((1, 16), -2.0, dtype=torch.float64)
    np.testing.assert_allclose(
        RMSNorm(16, 1e-12).double()(c).detach().numpy(), -np.ones((1, 16)), rtol=1e-10
    )


def _lm(tie, **kw):
    return decoder_lm_config(6, **{"tie_embeddings": tie, **kw})


def test_tied_embeddings_are_one_parameter_counted_once():
    tied, untied = Transformer(_lm(True)), Transformer(_lm(False))
    names = [n for n, _ in tied.named_parameters()]
    assert "embed.0.weight" in names and not any(n.startswith("head.") for n in names)
    # the read-out is the embedding's matrix itself (same storage), transposed
    assert tied.head.weight.data_ptr() == tied.embedding_linear().weight.data_ptr()
    assert tied.head.weight.shape == (11, 8)
    # counted once: exactly the untied model's count less one 11 x 8 read-out matrix
    assert tied.count_params() == untied.count_params() - 11 * 8
    assert tied.count_params(["head"]) == 0
    # norms: 2 per layer and the final one, d gains each (RMSNorm has no bias)
    assert tied.count_params() == sum(p.numel() for p in tied.parameters())
    n_norm = sum(p.numel() for n, p in tied.named_parameters() if ".ln" in n or "ln_f" in n)
    assert n_norm == (2 * 2 + 1) * 8
    # both uses of the shared matrix receive gradient (one tensor, one .grad)
    x = torch.eye(11, dtype=torch.float64)[torch.tensor([[1, 3, 5, 7]])]
    tied(x).sum().backward()
    g = tied.embedding_linear().weight.grad
    assert g is not None and float(g[:, [0, 2]].abs().sum()) > 0  # unseen tokens: read-out only


def test_tied_model_survives_copies_and_dtype_casts():
    import copy

    from approxtheory.train import float64_copy

    m = Transformer(_lm(True, dtype="float32"))
    c = copy.deepcopy(m)
    assert c.head.weight.data_ptr() == c.embedding_linear().weight.data_ptr()
    assert c.head.weight.data_ptr() != m.head.weight.data_ptr()
    f = float64_copy(m)
    assert f.head.weight.dtype == torch.float64
    assert f.head.weight.data_ptr() == f.embedding_linear().weight.data_ptr()
    again = Transformer(_lm(True, dtype="float32"))
    again.load_state_dict(m.state_dict())
    x = torch.rand(2, 4, 11)
    with torch.no_grad():
        assert torch.equal(again(x), m(x))


def test_tied_read_out_refuses_its_own_weight():
    m = Transformer(_lm(True))
    with pytest.raises(ConfigError, match="tied to the embedding"):
        m.set_readout(weight=np.zeros((11, 8)))
    with pytest.raises(ConfigError, match="tied to the embedding"):
        m.readout_linear()
    with pytest.raises(ConfigError, match="no bias"):
        m.set_readout(bias=np.zeros(11))
    m.set_embedding(weight=np.ones((8, 11)))
    assert float(m.head.weight.detach().sum()) == 88.0


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(layernorm=True), "exclusive"),
        (dict(rmsnorm=False), "final_norm needs a norm kind"),
        (dict(d_out=3), r"d_out == d_in"),
        (dict(embed_hidden=(5,)), r"embed_hidden=\(\)"),
        (dict(head_hidden=(5,)), r"head_hidden=\(\)"),
        (dict(positions="onehot", seq_len=4), "positions other than onehot"),
        (dict(rms_eps=0.0), "rms_eps must be a finite number > 0"),
        (dict(tie_embeddings=1), "tie_embeddings must be True or False"),
    ],
)
def test_bad_opt_in_configs_raise_typed_errors(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        _lm(True, **kw)


def test_opt_in_fields_default_off():
    """The defaults add nothing: no norm, no final norm, an untied read-out of its own."""
    m = Transformer(ModelConfig(d_in=3, width=4, layers=[LayerSpec(2, 2, ffn_hidden=(3,))]))
    assert m.ln_f is None and not m.cfg.rmsnorm and not m.cfg.tie_embeddings
    assert [n for n, _ in m.named_parameters() if "ln" in n] == []
    assert "head.0.weight" in dict(m.named_parameters())


# --- a one-line repr ------------------------------------------------------------
def test_model_config_repr_is_one_line_with_the_essentials():
    cfg = ModelConfig(
        d_in=2,
        width=8,
        layers=[LayerSpec(2, 4, ffn_hidden=(16,))] * 3 + [LayerSpec(1, 8, value_dim=2)],
        seq_len=5,
        positions="onehot",
        causal=True,
    )
    r = repr(cfg)
    assert r == (
        "ModelConfig(d_in=2, width=8, layers=3*[2x4 ffn16], [1x8 v2], d_out=1, seq_len=5, "
        "positions='onehot', causal=True)"
    )
    # the defaults are left out; a field set to a non-default value shows
    assert "rope_base" not in r and "dtype" not in r
    assert "dtype='float32'" in repr(dataclasses.replace(cfg, dtype="float32"))
    # GQA groups show where they differ from the heads
    gqa = ModelConfig(d_in=1, width=8, layers=[LayerSpec(4, 2, kv_groups=2)])
    assert "layers=[4x2 kv2]" in repr(gqa)
    # a long config stays on one line of bounded length
    many = ModelConfig(d_in=1, width=8, layers=[LayerSpec(h, 2) for h in range(1, 80)])
    assert "\n" not in repr(many) and len(repr(many)) <= 300


def test_decoder_lm_preset_is_the_prism_model_and_norm_names_the_one_prenorm():
    from dataclasses import asdict

    spec = [LayerSpec(2, 8, ffn_hidden=(42,)), LayerSpec(4, 4, ffn_hidden=(42,))]
    cfg = ModelConfig.decoder_lm(11, 16, spec, 8)
    # written out here, not from tests/_helpers (the preset's own statement of the paper's model)
    written = ModelConfig(
        d_in=11, width=16, layers=spec, d_out=11, seq_len=8, readout="tokens", causal=True,
        rope="full", rmsnorm=True, final_norm=True, tie_embeddings=True, ffn_kind="swiglu",
        ffn_bias=False, bias=False, embed_bias=False, head_bias=False, dtype="float32",
    )  # fmt: skip
    assert asdict(cfg) == asdict(written)
    assert cfg.norm == "rmsnorm"
    assert not ModelConfig.decoder_lm(11, 16, spec, 8, tie_embeddings=False).tie_embeddings
    assert ModelConfig(d_in=1, width=2, layers=[LayerSpec(1, 2)]).norm == "none"
    assert ModelConfig(d_in=1, width=2, layers=[LayerSpec(1, 2)], layernorm=True).norm == (
        "layernorm"
    )
