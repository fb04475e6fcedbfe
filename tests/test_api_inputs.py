"""Regressions for the model, training, tasks and strategies: every
bad constructor argument is a typed error (bools are not integers, NaN and inf are refused, sizes
are integers), and sizes that cannot fit are refused before anything is allocated. Limits are set
explicitly (``resources.limits``), so the answers do not depend on this machine's memory."""

import math

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from approxtheory import strategies as ats
from approxtheory.errors import ApproxTheoryError, ConfigError, ResourceLimitError
from approxtheory.model import LayerSpec, ModelConfig, ResidualLayout, Transformer
from approxtheory.resources import limits
from approxtheory.tasks import (
    GeneralizedRetrieval,
    Induction,
    KthLargest,
    MaxPlusMin,
    PairwiseMax,
    ScalarMax,
    SyntheticMaxSum,
    TriangleCenter,
)
from approxtheory.train import (
    AttentionMaps,
    LogitNorms,
    TaskData,
    TokenData,
    TrainConfig,
    lr_at,
    train,
)

NAN, INF = float("nan"), float("inf")


def _cfg(**kw):
    base = dict(d_in=1, width=8, layers=[LayerSpec(2, 4)])
    base.update(kw)
    return ModelConfig(**base)


# ------------------------------------------------------------------ 1. RoPE and the logit scale
@pytest.mark.parametrize("base", [0, -5, NAN, INF, -INF, True, "10000", None])
def test_rope_base_must_be_finite_and_positive(base):
    with pytest.raises(ConfigError, match="rope_base must be a finite number > 0"):
        _cfg(rope="full", rope_base=base)


@pytest.mark.parametrize(
    "freqs", [(NAN, 1.0), (1.0, INF), ("a", 1.0), (True, 1.0), "12", 3, {"a": 1}]
)
def test_rope_freqs_must_be_finite_numbers(freqs):
    with pytest.raises(ConfigError, match="rope_freqs"):
        _cfg(rope="full", rope_freqs=freqs)


def test_rope_freqs_too_few_is_refused_at_the_config():
    with pytest.raises(ConfigError, match="rope_freqs needs at least 2 values"):
        _cfg(rope="full", rope_freqs=(1.0,))
    cfg = _cfg(rope="full", rope_freqs=[0.5, 0.25])  # a list is kept as a tuple of floats
    assert cfg.rope_freqs == (0.5, 0.25)


@pytest.mark.parametrize("scale", [INF, -INF, NAN, 0, -1.0, True, "1"])
def test_attn_scale_must_be_finite_and_positive(scale):
    with pytest.raises(ConfigError, match="attn_scale must be None"):
        _cfg(attn_scale=scale)


def test_valid_rope_configs_give_finite_forwards():
    for kw in (dict(rope_base=2.0), dict(rope_freqs=(0.0, 3.0)), dict(attn_scale=1e3)):
        m = Transformer(_cfg(rope="full", **kw))
        x = torch.rand(3, 5, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        assert torch.isfinite(m(x)).all()


# ------------------------------------------------------------ 2. integers are integers, not bools
@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(heads=True, head_dim=2), "heads must be a positive integer"),
        (dict(heads=2, head_dim=True), "head_dim must be a positive integer"),
        (dict(heads=2, head_dim=2, value_dim=2.5), "value_dim must be a positive integer"),
        (dict(heads=2, head_dim=2, value_dim=True), "value_dim must be a positive integer"),
        (dict(heads=2, head_dim=2, value_dim=0), "value_dim must be a positive integer"),
        (dict(heads=2, head_dim=2, kv_groups=True), "kv_groups must be a positive integer"),
        (dict(heads=2, head_dim=2, kv_groups=1.0), "kv_groups must be a positive integer"),
        (dict(heads=2.0, head_dim=2), "heads must be a positive integer"),
        (dict(heads=np.bool_(True), head_dim=2), "heads must be a positive integer"),
        (dict(heads=2, head_dim=2, ffn_hidden=(2.5,)), "ffn_hidden widths"),
        (dict(heads=2, head_dim=2, ffn_hidden=(True,)), "ffn_hidden widths"),
        (dict(heads=2, head_dim=2, ffn_hidden=(-3,)), "ffn_hidden widths"),
        (dict(heads=2, head_dim=2, ffn_hidden="12"), "ffn_hidden must be a sequence"),
        (dict(heads=2, head_dim=2, ffn_hidden=4), "ffn_hidden must be a sequence"),
    ],
)
def test_layer_spec_refuses_bools_and_non_integers(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        LayerSpec(**kw)


def test_layer_spec_keeps_numpy_integers_as_ints():
    s = LayerSpec(np.int64(4), np.int32(2), ffn_hidden=[np.int64(3)])
    assert (s.heads, s.head_dim, s.value_dim, s.kv_groups, s.ffn_hidden) == (4, 2, 2, 4, (3,))
    assert all(type(v) is int for v in (s.heads, s.head_dim, s.value_dim, s.kv_groups))


@pytest.mark.parametrize(
    "kw,needle",
    [
        (dict(d_in=True), "d_in must be a positive integer"),
        (dict(width=True), "width must be a positive integer"),
        (dict(d_out=2.0), "d_out must be a positive integer"),
        (dict(bias=1), "bias must be True or False"),
        (dict(causal="yes"), "causal must be True or False"),
        (dict(layernorm=None), "layernorm must be True or False"),
        (dict(seq_len=True, positions="onehot"), "seq_len must be None or a positive"),
        (dict(seq_len=2.5, positions="learned"), "seq_len must be None or a positive"),
        (dict(seq_len=-1), "seq_len must be None or a positive"),
        (dict(embed_hidden=(-1,)), "embed_hidden widths"),
        (dict(head_hidden=(2.5,)), "head_hidden widths"),
        (dict(head_hidden="8"), "head_hidden must be a sequence"),
        (dict(rope=True), "rope must be None, 'full'"),
        (dict(rope="half"), "rope must be None, 'full'"),
        (dict(rope=2.0), "rope must be None, 'full'"),
        (dict(layers=[3]), "layer 0 must be a LayerSpec or a mapping"),
        (dict(layers=5), "layers must be a list of LayerSpecs"),
        (dict(layers=[{"heads": 2}]), "missing head_dim"),
        (dict(layers=[{"heads": 2, "head_dim": 2, "width": 3}]), "unknown field"),
        (dict(positions=["onehot"]), "positions must be none, onehot or learned"),
        (dict(dtype=64), "dtype must be float64 or float32"),
    ],
)
def test_model_config_refuses_wrong_types(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        _cfg(**kw)


def test_model_config_normalises_sequences():
    cfg = _cfg(embed_hidden=[3], head_hidden=[np.int64(2)], tie_embeddings=False)
    assert cfg.embed_hidden == (3,) and cfg.head_hidden == (2,)
    # a list () is no longer mistaken for a hidden layer by the tied read-out's check
    tied = ModelConfig(
        d_in=2, width=4, layers=[LayerSpec(1, 4)], d_out=2, tie_embeddings=True, embed_hidden=[]
    )
    assert tied.embed_hidden == ()


def test_head_index_refuses_bools():
    m = Transformer(_cfg())
    with pytest.raises(ConfigError, match="head index"):
        m.attention(0).set_head(True, q=np.zeros((4, 8)))
    with pytest.raises(ConfigError, match="head index"):
        m.head_weights(0, True)


# ----------------------------------------------------------------- 3. forward of a numpy array
def test_forward_accepts_numpy_arrays_and_matches_torch():
    m = Transformer(_cfg())
    x = np.random.default_rng(0).uniform(size=(3, 5, 1))
    out = m(x)
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, m(torch.from_numpy(x)), rtol=0, atol=0)
    assert len(m.hidden_states(x.astype(np.float32))) == 2


@pytest.mark.parametrize(
    "x,needle",
    [
        ([[[0.0]]], "input must be a torch tensor"),
        ("abc", "input must be a torch tensor"),
        (np.array([[["a"]]]), "real-valued"),
        (np.zeros((1, 2, 1), dtype=complex), "real-valued"),
        (torch.zeros(1, 2, 1, dtype=torch.complex128), "real-valued"),
        (np.zeros((2, 1)), r"shape \(batch, T, 1\)"),
    ],
)
def test_forward_refuses_other_inputs_with_a_typed_error(x, needle):
    m = Transformer(_cfg())
    with pytest.raises(ConfigError, match=needle):
        m(x)


# --------------------------------------------------- 4. a model that cannot fit is refused first
def test_a_huge_transformer_is_refused_before_allocating():
    cfg = ModelConfig(d_in=1, width=300000, layers=[LayerSpec(4, 64)])
    with limits(max_bytes="1G"), pytest.raises(ResourceLimitError) as e:
        Transformer(cfg)
    assert e.value.kind == "memory" and e.value.limit == 1 << 30 and e.value.needed > 1 << 30
    assert "width 300000" in str(e.value)
    cfg = ModelConfig(d_in=1, width=8, layers=[LayerSpec(10**6, 10**6)])
    with limits(max_bytes="1G"), pytest.raises(ResourceLimitError):
        Transformer(cfg)


def test_transformer_takes_a_model_config():
    with pytest.raises(ConfigError, match="Transformer takes a ModelConfig"):
        Transformer({"d_in": 1})


def test_residual_layout_refuses_sizes_that_cannot_fit():
    with limits(max_bytes="1G"):
        with pytest.raises(ResourceLimitError, match="ResidualLayout of 1000000000000"):
            ResidualLayout(x=10**12)
        with pytest.raises(ResourceLimitError, match="ResidualLayout"):
            ResidualLayout(r=(10**6, 10**6))
        with pytest.raises(ResourceLimitError, match="ResidualLayout"):
            ResidualLayout.interleaved(10**12, value=1, gate=1)
    feat = ResidualLayout.interleaved(3, value=1, gate=2)  # the vectorised layout is unchanged
    assert feat.indices("gate").tolist() == [1, 2, 4, 5, 7, 8] and feat.width == 9


# -------------------------------------------------------------------------- 5. lr_at's step
@pytest.mark.parametrize("step", [-10, -1, 1.5, True, "3", None])
def test_lr_at_refuses_negative_and_non_integer_steps(step):
    cfg = TrainConfig(steps=100, schedule="cosine", warmup_steps=10)
    with pytest.raises(ConfigError, match="step must be an integer >= 0"):
        lr_at(cfg, step)
    with pytest.raises(ConfigError, match="cfg must be a TrainConfig"):
        lr_at({"lr": 1}, 0)
    assert lr_at(cfg, 0) == pytest.approx(1e-4) and lr_at(cfg, np.int64(10)) == pytest.approx(1e-3)


# ------------------------------------------------------------ 6. training sizes and token dtypes
def test_a_huge_batch_is_refused_at_the_config():
    with limits(max_bytes="1G"), pytest.raises(ResourceLimitError) as e:
        TrainConfig(batch=10**9)
    assert "batch=1000000000" in str(e.value) and e.value.limit == 1 << 30
    assert "1.0 GiB" in str(e.value)


def test_a_batch_that_cannot_fit_is_refused_before_training():
    model = Transformer(_cfg())
    before = [p.detach().clone() for p in model.parameters()]
    cfg = TrainConfig(steps=1, batch=10**5, seed=3)  # fits the config's check, not the step's
    with limits(max_bytes="16M"), pytest.raises(ResourceLimitError, match="training with batch"):
        train(model, MaxPlusMin(T=64), cfg)
    # refused before the weights were redrawn from the seed
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_a_huge_training_set_is_refused_at_construction():
    with limits(max_bytes="1G"), pytest.raises(ResourceLimitError) as e:
        TaskData(task=MaxPlusMin(T=8), train_size=10**10)
    assert "train_size=10000000000" in str(e.value)
    model = Transformer(_cfg())
    data = TaskData(task=MaxPlusMin(T=8), train_size=10**6)  # fits the default limit
    with limits(max_bytes="16M"), pytest.raises(ResourceLimitError, match="train_size=1000000"):
        train(model, data, TrainConfig(steps=1, batch=4))


def test_token_stream_one_hot_batches_are_estimated():
    model = Transformer(ModelConfig(d_in=5000, width=8, layers=[LayerSpec(2, 4)], d_out=5000))
    tokens = np.arange(200) % 5000
    data = TokenData(tokens=tokens, vocab=5000, seq_len=64)
    with limits(max_bytes="64M"), pytest.raises(ResourceLimitError):
        train(model, data, TrainConfig(steps=1, batch=1024))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int16])
def test_token_ids_of_every_integer_dtype_are_accepted(dtype):
    ids = (np.arange(40) % 5).astype(dtype)
    d = TokenData(tokens=ids, vocab=5, seq_len=4, val_tokens=torch.from_numpy(ids))
    assert d.tokens.dtype == torch.int64 and d.tokens.tolist() == (np.arange(40) % 5).tolist()
    assert d.val_tokens.dtype == torch.int64


def test_torch_unsigned_token_ids_are_converted():
    t = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2], dtype=torch.uint64)
    assert TokenData(tokens=t, vocab=5, seq_len=4).tokens.tolist() == t.tolist()


@pytest.mark.parametrize(
    "tokens,needle",
    [
        (np.arange(10, dtype=np.float64), "allowed dtypes: int8"),
        (np.ones(10, dtype=bool), "allowed dtypes"),
        (torch.ones(10), "allowed dtypes"),
        (np.array([2**63 + 1] * 10, dtype=np.uint64), r"uint64 id above 2\^63 - 1"),
        ([2**70] * 10, "allowed dtypes"),
        (["a"] * 10, "allowed dtypes"),
        (np.zeros((2, 10), dtype=np.int64), "1-D sequence"),
        (np.array([0, 1, 7, 2, 3, 4, 0, 1], dtype=np.uint64), r"ids in 0\.\.4"),
    ],
)
def test_bad_token_streams_are_typed_errors(tokens, needle):
    with pytest.raises(ConfigError, match=needle):
        TokenData(tokens=tokens, vocab=5, seq_len=4)


@pytest.mark.parametrize(
    "val,needle",
    [
        (np.full((4, 8, 1), NAN), "finite"),
        (np.array([[["a"]]]), "real-valued"),
        (np.zeros((4, 7, 1)), r"shape \(n, 8, 1\)"),
        (np.zeros((0, 8, 1)), "n >= 1"),
    ],
)
def test_validation_inputs_are_checked(val, needle):
    with pytest.raises(ConfigError, match=needle):
        TaskData(task=MaxPlusMin(T=8), val_inputs=val)


def test_device_index_beyond_torch_is_refused():
    # torch's device index is an int8: cuda:128 would silently become cuda:-128
    with pytest.raises(ConfigError, match="cuda:N with N in 0..127"):
        TrainConfig(device="cuda:128")
    with pytest.raises(ConfigError, match="cuda:N"):
        TrainConfig(device="cuda:99999999999999999999")
    TrainConfig(device="cuda:127")  # well-formed (availability is checked by train)


def test_callback_probe_inputs_are_checked():
    with pytest.raises(ConfigError, match="real-valued"):
        AttentionMaps(np.array([[["x"]]]))
    with pytest.raises(ConfigError, match=r"shape \(n, T, d\)"):
        LogitNorms(inputs=np.zeros(3))
    assert AttentionMaps(np.zeros((2, 3, 1), dtype=np.float32)).inputs.dtype == torch.float64


# ----------------------------------------------------------------------------------- tasks
def test_task_sampling_is_checked_and_refused_before_allocating():
    rng = np.random.default_rng(0)
    for task in (ScalarMax(8), TriangleCenter(8), Induction(8), SyntheticMaxSum(8)):
        with limits(max_bytes="1G"), pytest.raises(ResourceLimitError, match="sampling 10"):
            task.sample(10**10, rng)
        with pytest.raises(ConfigError, match="n must be an integer >= 0"):
            task.sample(-1, rng)
        with pytest.raises(ConfigError, match="rng must be a numpy Generator"):
            task.sample(2, 0)
        with pytest.raises(ConfigError, match="max_n must be an integer >= 1"):
            task.structured(rng, max_n=0)
    with limits(max_bytes="1G"), pytest.raises(ResourceLimitError):
        SyntheticMaxSum(8).sample_gaussian(10**10, rng)
    assert ScalarMax(8).sample(0, rng).shape == (0, 8, 1)


def test_task_constructors_refuse_sizes_that_cannot_fit():
    with limits(max_bytes="1G"):
        with pytest.raises(ResourceLimitError, match="position sets of max_plus_min"):
            MaxPlusMin(T=10**10)
        with pytest.raises(ResourceLimitError, match="features of synthetic_max_sum"):
            SyntheticMaxSum(4, D=10**10)
        with pytest.raises(ResourceLimitError, match="matrices of pairwise_max"):
            PairwiseMax(4, d=1000, D=10**5)


@pytest.mark.parametrize(
    "make,needle",
    [
        (lambda: PairwiseMax(4, scale=NAN), "scale must be a finite number"),
        (lambda: PairwiseMax(4, scale=-1.0), "scale must be a finite number > 0"),
        (lambda: PairwiseMax(4, d=2, A=np.full((1, 2, 2), NAN)), "A must be finite"),
        (lambda: SyntheticMaxSum(4, d=2, a=[[NAN, 1.0]]), "a must be finite"),
        (lambda: SyntheticMaxSum(4, seed=-1), "seed must be an integer"),
        (lambda: SyntheticMaxSum(4, seed=True), "seed must be an integer"),
        (lambda: SyntheticMaxSum(4, D=True), "D must be an integer"),
        (lambda: ScalarMax(True), "T must be an integer"),
        (
            lambda: GeneralizedRetrieval(4, 1, features=[lambda x: x[..., 0]], sets=[[0, 1.5, 2]]),
            "S_1 must hold integer positions",
        ),
        (
            lambda: GeneralizedRetrieval(4, 1, features=[lambda x: x[..., 0]], sets=[[0, True]]),
            "S_1 must hold integer positions",
        ),
        (lambda: GeneralizedRetrieval(4, 1, features=[3]), "features must be functions"),
        (
            lambda: GeneralizedRetrieval(4, 1, affine=([[NAN]], [0.0])),
            "W must be finite",
        ),
        (
            lambda: GeneralizedRetrieval(4, 1, affine=([[1.0]], [0.0]), outer_affine=([1.0], NAN)),
            "c0 \\(outer_affine\\) must be a finite number",
        ),
        (lambda: GeneralizedRetrieval(4, 1, affine=([[1.0]],)), "affine must be a pair"),
        (
            lambda: GeneralizedRetrieval(4, 1, features=[lambda x: x[..., 0]], outer=5),
            "outer must be a function",
        ),
        (lambda: KthLargest(4, f=3), "f must be a function"),
        (lambda: ScalarMax(4).target("abc"), "real-valued array"),
        (lambda: ScalarMax(4).target([[["a"]]]), "real-valued array"),
        (lambda: ScalarMax(4).target(torch.zeros(1, 4, 1, dtype=torch.complex64)), "real"),
    ],
)
def test_task_arguments_are_typed_errors(make, needle):
    with pytest.raises(ConfigError, match=needle):
        make()


def test_tasks_are_unchanged_for_valid_arguments():
    task = MaxPlusMin(T=4)
    X = task.sample(3, np.random.default_rng(0))
    assert task.target(X).shape == (3,) and np.isfinite(task.target(X)).all()
    assert SyntheticMaxSum(4, d=2, D=2, seed=np.int64(3)).a.shape == (2, 2)
    assert math.isclose(np.linalg.norm(PairwiseMax(4, d=3, seed=1).A[0], 2), 0.5)


# ------------------------------------------------------------------------- 7. strategy caps
@pytest.mark.parametrize(
    "make,needle",
    [
        (lambda: ats.layer_specs(heads=10**9), "heads must be at most 4096"),
        (lambda: ats.layer_specs(head_dim=10**9), "head_dim must be at most 4096"),
        (lambda: ats.layer_specs(heads=4, kv_groups=10**9), "kv_groups must be at most"),
        (lambda: ats.layer_specs(ffn_hidden=[10**9]), "ffn_hidden width must be at most"),
        (lambda: ats.layer_specs(ffn_hidden=[1] * 17), "at most 16 widths"),
        (lambda: ats.architectures(width=10**9), "width must be at most 4096"),
        (lambda: ats.architectures(d_in=10**9), "d_in must be at most 4096"),
        (lambda: ats.architectures(layers=10**6), "layers must be at most 256"),
        (lambda: ats.retrieval_inputs(T=10**9), "T must be at most 4096"),
        (lambda: ats.retrieval_inputs(T=4096, d=4096), "more than the 1048576"),
        (lambda: ats.max_tasks(T=10**9), "T must be at most 4096"),
        (lambda: ats.max_tasks(kind="synthetic", d=4096, D=4096), "features a_i"),
        (lambda: ats.max_tasks(kind="pairwise", d=2048, D=1), "matrices A_i"),
    ],
)
def test_strategy_sizes_are_capped_before_generating(make, needle):
    with pytest.raises(InvalidArgument, match=needle):
        make()


def test_drawn_sizes_above_the_cap_are_refused_when_drawn():
    with pytest.raises(InvalidArgument, match="heads must be at most 4096"):
        ats.minimal(ats.layer_specs(heads=st.just(10**9)))
    with pytest.raises(InvalidArgument, match="layers must be at most 256"):
        ats.minimal(ats.architectures(layers=st.just(10**4)))


def test_strategies_at_the_cap_still_draw():
    spec = ats.minimal(ats.layer_specs(heads=4096, head_dim=1, ffn_hidden=()))
    assert spec.heads == 4096 and spec.kv_groups == 1


def test_every_error_here_is_an_approxtheory_error():
    # the typed errors above derive from the package's base class (the CLI's error boundary)
    assert issubclass(ConfigError, ApproxTheoryError)
    assert issubclass(ResourceLimitError, ApproxTheoryError)
