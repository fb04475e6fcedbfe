"""The training loop (approxtheory.train): determinism from the seed, learning on easy tasks,
steps=0, a non-finite loss stops the run, callbacks and hooks see what they should, every
ConfigError of the config, cuda without CUDA. No timing assertions (see `bench train`)."""

import math

import numpy as np
import pytest
import torch

from approxtheory.errors import ConfigError, DeviceUnavailableError
from approxtheory.measure import nmse
from approxtheory.model import LayerSpec, ModelConfig, Transformer
from approxtheory.tasks import MaxPlusMin, ScalarMax
from approxtheory.train import (
    AttentionMaps,
    Callback,
    InvariantFraction,
    LogitNorms,
    TaskData,
    TokenData,
    TrainConfig,
    float64_copy,
    lr_at,
    train,
)


def small_model(d_in=1, width=8, heads=2, ffn_hidden=(), **kw):
    """One layer of ``heads`` heads splitting ``width`` (an FFN of widths ``ffn_hidden``)."""
    layers = [LayerSpec(heads, width // heads, ffn_hidden=ffn_hidden)]
    return Transformer(ModelConfig(d_in=d_in, width=width, layers=layers, **kw))


def lm_model(V=5, T=6, E=8):
    """:func:`small_model` as a causal LM over ``V`` tokens: learned positions for ``T`` tokens,
    a per-token read-out, an FFN of 16."""
    return small_model(
        V,
        E,
        ffn_hidden=(16,),
        d_out=V,
        seq_len=T,
        positions="learned",
        readout="tokens",
        causal=True,
    )


def weights(model):
    return [p.detach().clone() for p in model.parameters()]


# ------------------------------------------------------------------------ determinism
@pytest.mark.parametrize("train_size", [None, 64])
def test_same_seed_same_losses_bit_for_bit(train_size):
    task = MaxPlusMin(T=4)
    data = TaskData(task=task, train_size=train_size)
    cfg = TrainConfig(steps=15, batch=8, lr=1e-2, seed=3)
    a = train(small_model(), data, cfg)
    torch.rand(5), np.random.rand(3)  # global state disturbed between runs: no effect
    b = train(small_model(), data, cfg)
    assert a.losses == b.losses and len(a.losses) == 15
    assert all(torch.equal(p, q) for p, q in zip(weights(a.model), weights(b.model), strict=True))
    c = train(small_model(), data, TrainConfig(steps=15, batch=8, lr=1e-2, seed=4))
    assert c.losses != a.losses
    assert not torch.equal(weights(c.model)[0], weights(a.model)[0])


def test_token_stream_is_deterministic_and_learns_a_periodic_stream():
    V, T = 5, 6
    stream = torch.arange(600) % V  # next token = current + 1 mod V
    data = TokenData(tokens=stream, vocab=V, seq_len=T, val_tokens=stream[:100])
    cfg = TrainConfig(steps=120, batch=8, lr=1e-2, seed=0, eval_every=60)
    a = train(lm_model(V, T), data, cfg)
    b = train(lm_model(V, T), data, cfg)
    assert a.losses == b.losses and [e["val_loss"] for e in a.evals] == [
        e["val_loss"] for e in b.evals
    ]
    assert [e["step"] for e in a.evals] == [0, 60, 120]
    assert a.evals[0]["val_loss"] > math.log(V) - 1  # untrained: about log V
    assert a.evals[-1]["val_loss"] < 0.3 * a.evals[0]["val_loss"]
    c = train(lm_model(V, T), data, TrainConfig(steps=120, batch=8, lr=1e-2, seed=1))
    assert c.losses != a.losses


@pytest.mark.parametrize("kind", ["task", "fixed-set", "tokens"])
def test_the_batches_come_from_the_seed(kind):
    """Same starting weights (init keep), different seeds: different batches from step 0 on;
    the same seed: the same batches."""
    if kind == "tokens":
        stream = torch.arange(600) % 5
        data, make = TokenData(tokens=stream, vocab=5, seq_len=6), lambda: lm_model(5, 6)
    else:
        data = TaskData(task=MaxPlusMin(T=4), train_size=64 if kind == "fixed-set" else None)
        make = small_model
    ref = make()
    seen = {}
    for seed in (0, 0, 1):
        m = make()
        m.load_state_dict(ref.state_dict())
        got = []
        train(
            m,
            data,
            TrainConfig(steps=2, batch=4, seed=seed, init="keep"),
            callbacks=[lambda s, mo, l, b, got=got: got.append(b[0].clone())],
        )
        seen.setdefault(seed, []).append(got)
    (a, b), (c,) = seen[0], seen[1]
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a[0], c[0])


def test_default_init_is_what_manual_seed_and_build_give():
    cfg = ModelConfig(d_in=2, width=8, layers=[LayerSpec(2, 4)], embed_hidden=(5,))
    with torch.random.fork_rng():
        torch.manual_seed(7)
        ref = Transformer(cfg)
    m = Transformer(cfg)
    train(m, TaskData(task=_scalar_task_2d()), TrainConfig(steps=0, seed=7, dtype="float64"))
    assert all(torch.equal(p, q) for p, q in zip(weights(ref), weights(m), strict=True))
    # init="keep" trains the weights as given
    k = Transformer(cfg)
    with torch.no_grad():
        for p in k.parameters():
            p.fill_(0.125)
    train(k, TaskData(task=_scalar_task_2d()), TrainConfig(steps=0, init="keep"))
    assert all(bool((p == 0.125).all()) for p in k.parameters())


def _scalar_task_2d():
    from approxtheory.tasks import SyntheticMaxSum

    return SyntheticMaxSum(3, d=2, D=1, seed=0)


# ------------------------------------------------------------------------ learning
def test_loss_decreases_on_an_easy_task():
    task = ScalarMax(T=4)
    Xv = task.sample(256, np.random.default_rng(1))
    res = train(
        small_model(),
        TaskData(task=task, val_inputs=Xv),
        TrainConfig(steps=200, batch=64, lr=1e-2, seed=0, eval_every=200),
    )
    assert res.ok and res.status == "completed" and res.steps_done == 200
    first, last = np.mean(res.losses[:10]), np.mean(res.losses[-10:])
    assert last < 0.3 * first
    assert res.evals[0]["step"] == 0 and res.evals[-1]["step"] == 200
    assert res.evals[-1]["val_nmse"] < 0.5 * res.evals[0]["val_nmse"]
    assert res.steps_per_s > 0 and res.seconds >= res.train_seconds > 0


def test_evaluation_is_float64_and_leaves_the_model_alone():
    task = MaxPlusMin(T=4)
    Xv = task.sample(128, np.random.default_rng(2))
    res = train(
        small_model(), TaskData(task=task, val_inputs=Xv), TrainConfig(steps=5, batch=8, seed=0)
    )
    m = res.model
    assert next(m.parameters()).dtype == torch.float32 and m.cfg.dtype == "float32"
    m64 = float64_copy(m)
    assert next(m64.parameters()).dtype == torch.float64 and m64.cfg.dtype == "float64"
    assert next(m.parameters()).dtype == torch.float32 and m.cfg.dtype == "float32"
    assert res.evals[-1]["val_nmse"] == nmse(m64, task, X=Xv)  # the same float64 formula


def test_training_dtype_does_not_touch_a_shared_config():
    cfg = ModelConfig(d_in=1, width=8, layers=[LayerSpec(2, 4)])  # float64
    a, b = Transformer(cfg), Transformer(cfg)
    train(a, MaxPlusMin(T=3), TrainConfig(steps=2, batch=4))
    assert a.cfg.dtype == "float32" and cfg.dtype == "float64" and b.cfg.dtype == "float64"
    assert b(torch.rand(2, 3, 1, dtype=torch.float64)).dtype == torch.float64


def test_steps_zero_gives_the_untrained_model_history():
    task = MaxPlusMin(T=4)
    Xv = task.sample(64, np.random.default_rng(0))
    m = small_model()
    res = train(m, TaskData(task=task, val_inputs=Xv), TrainConfig(steps=0, seed=5))
    assert res.ok and res.steps_done == 0 and res.losses == [] and res.records == []
    assert [e["step"] for e in res.evals] == [0] and res.steps_per_s == 0.0
    assert res.evals[0]["val_nmse"] == nmse(float64_copy(m), task, X=Xv)
    assert res.history() == [res.evals[0]] and math.isnan(res.final_loss)


# ------------------------------------------------------------------------ non-finite loss
def test_nan_loss_stops_with_a_status_before_its_update():
    task = MaxPlusMin(T=4)
    calls = []

    def sampler(n, rng):
        calls.append(n)
        X = rng.uniform(0, 1, (n, 4, 1))
        if len(calls) == 4:  # the 4th batch (step 3) holds a NaN
            X[0, 0, 0] = np.nan
        return X

    seen = []
    res = train(
        small_model(),
        TaskData(task=task, sampler=sampler),
        TrainConfig(steps=10, batch=4, seed=0),
        callbacks=[lambda s, m, l, b: seen.append(s)],
    )
    assert res.status == "nonfinite" and not res.ok
    assert res.steps_done == 3 and len(res.losses) == 3 and seen == [0, 1, 2]
    assert "nan" in res.message and "step 3" in res.message
    assert all(torch.isfinite(p).all() for p in res.model.parameters())
    # the weights are those after 3 steps: the same as a clean 3-step run
    clean = train(
        small_model(), TaskData(task=task, sampler=sampler), TrainConfig(steps=3, batch=4, seed=0)
    )
    assert all(
        torch.equal(p, q) for p, q in zip(weights(res.model), weights(clean.model), strict=True)
    )


def test_divergence_to_inf_stops():
    task = MaxPlusMin(T=4)
    res = train(
        small_model(),
        TaskData(task=task),
        TrainConfig(steps=50, batch=8, lr=1e6, optimizer="sgd", seed=0),
    )
    assert res.status == "nonfinite" and res.steps_done < 50
    assert all(math.isfinite(v) for v in res.losses)


# ------------------------------------------------------------------------ callbacks and hooks
def test_callbacks_receive_step_model_loss_batch():
    task = MaxPlusMin(T=4)
    got = []
    m = small_model()

    def fn(step, model, loss, batch):
        x, y = batch
        got.append((step, model, loss, tuple(x.shape), tuple(y.shape), x.dtype))
        return {"twice": 2 * loss} if step % 2 == 0 else None

    res = train(m, task, TrainConfig(steps=5, batch=3, seed=0), callbacks=[fn])
    assert [g[0] for g in got] == [0, 1, 2, 3, 4]
    assert all(g[1] is m for g in got)
    assert [g[2] for g in got] == res.losses
    assert all(g[3:] == ((3, 4, 1), (3,), torch.float32) for g in got)
    assert res.records == [
        {"step": s, "callback": "fn", "twice": 2 * res.losses[s]} for s in (0, 2, 4)
    ]
    hist = res.history()
    assert [h["step"] for h in hist] == [0, 1, 2, 3, 4] and hist[2]["twice"] == 2 * hist[2]["loss"]


class Snapshot(Callback):
    name = "snap"

    def __init__(self, every):
        self.every, self.before, self.calls = every, {}, []

    def before_step(self, step, model, batch):
        self.before[step] = [p.detach().clone() for p in model.parameters()]

    def __call__(self, step, model, loss, batch):
        moved = any(
            not torch.equal(p, q)
            for p, q in zip(model.parameters(), self.before[step], strict=True)
        )
        self.calls.append(step)
        return {"moved": moved}


@pytest.mark.parametrize("steps,expected", [(7, [0, 3, 6]), (8, [0, 3, 6, 7]), (1, [0])])
def test_callback_every_and_before_step(steps, expected):
    cb = Snapshot(every=3)
    res = train(
        small_model(), MaxPlusMin(T=4), TrainConfig(steps=steps, batch=4, seed=0), callbacks=[cb]
    )
    assert cb.calls == expected and sorted(cb.before) == expected
    assert [r["step"] for r in res.records] == expected
    assert all(r["moved"] and r["callback"] == "snap" for r in res.records)


def test_hooks_see_the_optimizer_and_the_schedule():
    lrs = []
    cfg = TrainConfig(
        steps=10,
        batch=4,
        lr=0.1,
        schedule="cosine",
        warmup_steps=3,
        min_lr_ratio=0.1,
        optimizer="sgd",
        momentum=0.9,
    )
    train(
        small_model(),
        MaxPlusMin(T=4),
        cfg,
        hooks=[lambda s, m, opt: lrs.append((s, opt.param_groups[0]["lr"]))],
    )
    assert lrs == [(s, lr_at(cfg, s)) for s in range(10)]
    assert [lr_at(cfg, s) for s in range(3)] == pytest.approx([0.1 / 3, 0.2 / 3, 0.1])
    assert lr_at(cfg, 3) == pytest.approx(0.1) and 0.01 < lr_at(cfg, 9) < 0.02
    w = TrainConfig(steps=10, lr=0.5, schedule="warmup", warmup_steps=4)
    assert [lr_at(w, s) for s in (0, 3, 4, 9)] == [0.125, 0.5, 0.5, 0.5]
    assert lr_at(TrainConfig(lr=0.3), 17) == 0.3


def test_gradient_clipping_bounds_the_update():
    m = small_model()
    before = torch.cat([p.detach().flatten().clone() for p in m.parameters()])
    cfg = TrainConfig(
        steps=1, batch=8, lr=1.0, optimizer="sgd", clip_grad_norm=1e-3, seed=0, init="keep"
    )
    train(m, MaxPlusMin(T=4), cfg)
    after = torch.cat([p.detach().flatten() for p in m.parameters()])
    step = float((after - before.float()).norm())
    assert 0 < step <= 1e-3 * 1.0001


@pytest.mark.parametrize("opt", ["adam", "adamw", "sgd"])
def test_every_optimizer_trains(opt):
    res = train(
        small_model(),
        MaxPlusMin(T=4),
        TrainConfig(steps=30, batch=16, lr=1e-2, optimizer=opt, seed=0),
    )
    assert res.ok and np.mean(res.losses[-5:]) < np.mean(res.losses[:5])


def test_diagnostic_callbacks():
    V, T = 5, 6
    stream = torch.arange(300) % V
    probe = torch.eye(V)[stream[:T]][None]
    inv, norms = InvariantFraction(every=2), LogitNorms(every=2)
    maps = AttentionMaps(probe, every=4)
    res = train(
        lm_model(V, T),
        TokenData(tokens=stream, vocab=V, seq_len=T),
        TrainConfig(steps=5, batch=4, seed=0, dtype="float64", optimizer="sgd", lr=0.1),
        callbacks=[inv, norms, maps],
    )
    by = {}
    for r in res.records:
        by.setdefault(r["callback"], []).append(r)
    assert [r["step"] for r in by["invariant_fraction"]] == [0, 2, 4]
    assert all(0 <= r["rho"] <= 1 and r["beta"] > 0 for r in by["invariant_fraction"])
    assert all(r["logit_max_0"] >= r["logit_rms_0"] > 0 for r in by["logit_norms"])
    assert [r["step"] for r in by["attention_maps"]] == [0, 4]
    a = by["attention_maps"][0]["attention_0"]
    assert a.shape == (1, 2, T, T) and np.allclose(a.sum(-1), 1)


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"steps": -1}, "steps must be an integer >= 0"),
        ({"steps": 2.5}, "steps must be an integer >= 0"),
        ({"steps": True}, "steps must be an integer >= 0"),
        ({"batch": 0}, "batch must be an integer >= 1"),
        ({"lr": 0}, "lr must be a finite number > 0"),
        ({"lr": -1e-3}, "lr must be a finite number > 0"),
        ({"lr": float("nan")}, "lr must be a finite number > 0"),
        ({"lr": float("inf")}, "lr must be a finite number > 0"),
        ({"lr": "0.1"}, "lr must be a finite number > 0"),
        ({"optimizer": "lbfgs"}, "optimizer must be one of adam, adamw, sgd"),
        ({"weight_decay": -0.1}, "weight_decay must be a finite number >= 0"),
        ({"momentum": 1.0, "optimizer": "sgd"}, "momentum must be a number in [0, 1)"),
        ({"momentum": 0.9}, "momentum applies to optimizer sgd only"),
        ({"betas": (0.9,)}, "betas must be two numbers in [0, 1)"),
        ({"betas": (0.9, 1.0)}, "betas must be two numbers in [0, 1)"),
        ({"schedule": "step"}, "schedule must be one of constant, cosine, warmup"),
        ({"schedule": "warmup"}, "schedule warmup needs warmup_steps >= 1"),
        ({"warmup_steps": 5}, "schedule constant takes no warmup_steps"),
        ({"warmup_steps": -1, "schedule": "cosine"}, "warmup_steps must be an integer >= 0"),
        ({"min_lr_ratio": 1.5}, "min_lr_ratio must be a number in [0, 1]"),
        ({"clip_grad_norm": 0}, "clip_grad_norm must be None (no clipping) or a finite number > 0"),
        ({"dtype": "float16"}, "dtype must be one of float32, float64"),
        ({"device": "tpu"}, "device must be cpu, cuda or cuda:N"),
        ({"device": "cuda:x"}, "device must be cpu, cuda or cuda:N"),
        ({"seed": -1}, "seed must be an integer in 0..4294967295"),
        ({"seed": 2**32}, "seed must be an integer in 0..4294967295"),
        ({"init": "xavier"}, "init must be one of default, keep"),
        ({"init_std": 0}, "init_std must be None or a finite number > 0"),
        ({"init_std": 0.1, "init": "keep"}, "init_std needs init default"),
        ({"eval_every": -2}, "eval_every must be an integer >= 0"),
        ({"compile": 1}, "compile must be True or False"),
        ({"progress": "yes"}, "progress must be True or False"),
    ],
)
def test_config_errors(kw, needle):
    with pytest.raises(ConfigError) as e:
        TrainConfig(**kw)
    assert needle in str(e.value) and "got" in str(e.value)


def test_config_takes_keywords_only():
    with pytest.raises(TypeError):
        TrainConfig(10)


@pytest.mark.parametrize(
    "kw,needle",
    [
        (
            {"tokens": torch.arange(5), "vocab": 5, "seq_len": 4},
            "has 5 tokens; windows of seq_len=4",
        ),
        ({"tokens": torch.arange(10), "vocab": 5, "seq_len": 2}, "ids in 0..4"),
        ({"tokens": torch.rand(10), "vocab": 5, "seq_len": 2}, "1-D sequence of integer token ids"),
        (
            {"tokens": torch.zeros(10, dtype=torch.long), "vocab": 0, "seq_len": 2},
            "vocab must be an integer >= 1",
        ),
        (
            {
                "tokens": torch.zeros(10, dtype=torch.long),
                "vocab": 2,
                "seq_len": 2,
                "val_tokens": torch.zeros(3, dtype=torch.long),
            },
            "val_tokens has 3 tokens",
        ),
    ],
)
def test_token_data_errors(kw, needle):
    with pytest.raises(ConfigError) as e:
        TokenData(**kw)
    assert needle in str(e.value)


def test_train_argument_errors():
    m = small_model()
    with pytest.raises(ConfigError, match="config must be a TrainConfig"):
        train(m, MaxPlusMin(T=4), {"steps": 3})
    with pytest.raises(ConfigError, match="task must be an approxtheory.tasks task"):
        train(m, "not a task", TrainConfig(steps=1))
    with pytest.raises(ConfigError, match="train_size must be None"):
        TaskData(task=MaxPlusMin(T=4), train_size=0)
    with pytest.raises(ConfigError, match="callbacks must be functions"):
        train(m, MaxPlusMin(T=4), TrainConfig(steps=1), callbacks=[3])


def test_cuda_without_cuda_is_a_typed_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    m = small_model()
    before = weights(m)
    for dev in ("cuda", "cuda:0"):
        with pytest.raises(DeviceUnavailableError, match="torch sees no CUDA device"):
            train(m, MaxPlusMin(T=4), TrainConfig(steps=3, device=dev))
    assert issubclass(DeviceUnavailableError, ConfigError)
    assert all(
        torch.equal(p, q) for p, q in zip(before, weights(m), strict=True)
    )  # refused before work


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_trains_like_cpu():
    task = MaxPlusMin(T=4)
    Xv = task.sample(64, np.random.default_rng(0))
    cfg = {"steps": 20, "batch": 8, "lr": 1e-2, "seed": 0, "dtype": "float64"}
    a = train(small_model(), TaskData(task=task, val_inputs=Xv), TrainConfig(**cfg))
    b = train(small_model(), TaskData(task=task, val_inputs=Xv), TrainConfig(device="cuda", **cfg))
    assert np.allclose(a.losses, b.losses, rtol=1e-9, atol=1e-12)
    assert next(b.model.parameters()).is_cuda


def test_progress_bar_runs(capsys):
    res = train(small_model(), MaxPlusMin(T=4), TrainConfig(steps=3, batch=4, progress=True))
    assert res.ok and "train" in capsys.readouterr().err


@pytest.mark.slow
def test_compile_trains_like_eager():
    """torch.compile (about a minute on CPU the first time): the same losses as eager up to
    kernel round-off."""
    cfg = {"steps": 5, "batch": 8, "seed": 0}
    a = train(small_model(), MaxPlusMin(T=4), TrainConfig(compile=True, **cfg))
    b = train(small_model(), MaxPlusMin(T=4), TrainConfig(**cfg))
    assert a.ok and np.allclose(a.losses, b.losses, rtol=1e-4)


def test_bench_train_command(capsys):
    """`approxtheory bench train --json` reports both rates and the ratio (no timing asserted)."""
    import json

    from approxtheory.cli import main

    assert main(["bench", "train", "--json", "--steps", "2", "--rounds", "2", "--warmup", "0"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert {"ours_steps_per_s", "plain_steps_per_s", "ratio", "goal_ratio", "threads"} <= set(res)
    assert res["ours_steps_per_s"] > 0 and res["plain_steps_per_s"] > 0 and res["threads"] == 1
    assert res["shapes"]["params_ours"] == res["shapes"]["params_plain"]
    assert [r["round"] for r in res["rounds"]] == [0, 1]
    assert main(["bench", "train", "--rounds", "0"]) == 2
    assert "--rounds must be an integer from 1 to 100" in capsys.readouterr().err


def test_bench_plain_model_computes_the_same_network():
    """The benchmark's baseline is the same function as our model on its config (fair)."""
    from approxtheory.bench.train import PlainModel, _shared, plain_names

    ours, plain = _shared(7, 8, 2, 5, 2, 12), PlainModel(7, 8, 2, 5, 2, 12)
    g = torch.Generator().manual_seed(0)
    sd = {k: torch.randn(v.shape, generator=g) for k, v in ours.state_dict().items()}
    ours.load_state_dict(sd)
    plain.load_state_dict({plain_names(k, ours): v for k, v in sd.items()})
    x = torch.randn(3, 5, 7, generator=g)
    assert torch.allclose(ours(x), plain(x), atol=1e-5)


def test_loss_tail_is_the_third_and_last_quarter_means():
    """The columns the training-adequacy gate's plateau test reads (proofs_check/_gate.py)."""
    import math

    from approxtheory.train import TrainResult

    r = TrainResult(None, None, "completed", "", 8, losses=[8, 7, 6, 5, 4, 3, 2, 1])
    assert r.loss_tail() == {"loss_q3": 3.5, "loss_q4": 1.5}
    short = TrainResult(None, None, "completed", "", 3, losses=[3, 2, 1]).loss_tail()
    assert all(math.isnan(v) for v in short.values())
