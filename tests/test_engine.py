"""The training engine: the fast engine's factored one-query attention computes the model's own
function (values and gradients), training is deterministic for a seed, and the held cosine
schedule and the engine option are checked."""

import math

import numpy as np
import pytest
import torch

from approxtheory.errors import ConfigError
from approxtheory.model import LayerSpec, ModelConfig, Transformer
from approxtheory.tasks import SyntheticMaxSum
from approxtheory.train import TaskData, TrainConfig, float64_copy, lr_at, train

CASES = [
    dict(spec=LayerSpec(4, 8), kw={}),
    dict(spec=LayerSpec(4, 8), kw={"bias": True}),
    dict(spec=LayerSpec(4, 8, kv_groups=2), kw={"bias": True}),
    dict(spec=LayerSpec(4, 8, kv_groups=1), kw={"causal": True}),
    dict(spec=LayerSpec(2, 16, value_dim=4), kw={"residual": True}),
]


def _model(case, layers=2):
    specs = [LayerSpec(2, 8)] * (layers - 1) + [case["spec"]]
    cfg = ModelConfig(
        d_in=3,
        width=32,
        layers=specs,
        embed_hidden=(16,),
        head_hidden=(16,),
        dtype="float64",
        **{"residual": False, **case["kw"]},
    )
    torch.manual_seed(0)
    return Transformer(cfg)


def _switch(model, on):
    for m in model.modules():
        if hasattr(type(m), "factored"):
            m.factored = on


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['spec'].heads}h-{sorted(c['kw'])}")
@pytest.mark.parametrize("layers", [1, 2])
def test_factored_attention_is_the_same_function(case, layers):
    model = _model(case, layers)
    x = torch.randn(5, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    outs, grads = [], []
    for on in (False, True):
        _switch(model, on)
        model.zero_grad()
        y = model(x)
        y.pow(2).sum().backward()
        outs.append(y.detach())
        grads.append(
            [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in model.parameters()]
        )
    assert torch.allclose(outs[0], outs[1], rtol=0, atol=1e-12)
    for a, b in zip(*grads):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_wrong_factored_form_is_caught(monkeypatch):
    # a planted bug in the factored form (the value bias forgotten) fails the equality test
    from approxtheory.model.layers import Attention

    right = Attention._one_query

    def forgets_value_bias(self, x, mask):
        bias = self.v.bias
        self.v.bias = None
        try:
            return right(self, x, mask)
        finally:
            self.v.bias = bias

    monkeypatch.setattr(Attention, "_one_query", forgets_value_bias)
    with pytest.raises(AssertionError):
        test_factored_attention_is_the_same_function(CASES[1], 1)


def _data(T=6):
    task = SyntheticMaxSum(T, d=2, D=2, a=np.eye(2))
    Xv = task.sample_gaussian(64, np.random.default_rng(5))
    return TaskData(task=task, sampler=task.sample_gaussian, val_inputs=Xv)


def _hc_model(dtype="float32"):
    cfg = ModelConfig(
        d_in=2,
        width=16,
        layers=[LayerSpec(2, 8)],
        embed_hidden=(16,),
        head_hidden=(16,),
        head_activation="gelu",
        residual=False,
        dtype=dtype,
    )
    return Transformer(cfg)


def test_fast_engine_is_deterministic():
    cfg = TrainConfig(
        steps=40,
        batch=32,
        lr=1e-2,
        schedule="cosine",
        warmup_steps=4,
        decay_steps=30,
        min_lr_ratio=0.1,
        seed=3,
    )
    a = train(_hc_model(), _data(), cfg)
    b = train(_hc_model(), _data(), cfg)
    assert a.losses == b.losses and a.evals == b.evals
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)
    # the trained model computes as written (the switch is off after training)
    assert not any(getattr(m, "factored", False) for m in a.model.modules())


def test_engines_differ_by_rounding_only_in_float64():
    cfg = dict(steps=30, batch=32, lr=1e-2, seed=1, dtype="float64")
    fast = train(_hc_model("float64"), _data(), TrainConfig(engine="fast", **cfg))
    ref = train(_hc_model("float64"), _data(), TrainConfig(engine="reference", **cfg))
    assert np.allclose(fast.losses, ref.losses, rtol=1e-9, atol=0)
    assert math.isclose(fast.evals[-1]["val_nmse"], ref.evals[-1]["val_nmse"], rel_tol=1e-8)


def test_float64_copy_computes_as_written():
    m = _hc_model()
    _switch(m, True)
    assert not any(getattr(x, "factored", False) for x in float64_copy(m).modules())


def test_held_cosine_schedule():
    cfg = TrainConfig(
        steps=100, lr=1.0, schedule="cosine", warmup_steps=10, decay_steps=60, min_lr_ratio=0.05
    )
    assert lr_at(cfg, 0) == pytest.approx(0.1)
    assert lr_at(cfg, 10) == pytest.approx(1.0)
    assert lr_at(cfg, 35) == pytest.approx(0.05 + 0.95 * 0.5)
    assert all(lr_at(cfg, s) == pytest.approx(0.05) for s in (60, 80, 99))
    plain = TrainConfig(steps=100, lr=1.0, schedule="cosine")
    assert lr_at(plain, 99) < 0.001  # without decay_steps: to the last step, as before


@pytest.mark.parametrize(
    "kw, says",
    [
        ({"engine": "turbo"}, "engine must be one of fast, reference"),
        ({"schedule": "constant", "decay_steps": 5}, "decay_steps applies to schedule cosine"),
        ({"schedule": "cosine", "decay_steps": 0}, "decay_steps must be None or an integer"),
        ({"schedule": "cosine", "steps": 10, "decay_steps": 11}, "at most steps (10)"),
        ({"schedule": "cosine", "warmup_steps": 5, "decay_steps": 5}, "above warmup_steps (5)"),
    ],
)
def test_engine_options_refused(kw, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        TrainConfig(**kw)
