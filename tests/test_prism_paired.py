"""prism_paired and the PR-E1/PR-E2 checks (item 6): pairing (same batches, same
initial weights, equal parameters), the paired statistics and power statement on hand-computed
numbers, the verdict logic on synthetic rows (all three outcomes) and the mutants that flip it."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

import approxtheory.experiments  # noqa: F401  (registers the experiments)
from approxtheory.experiments import prism_paired as pp
from approxtheory.model import Transformer
from approxtheory.proofs_check import _rows as rows_reader
from approxtheory.proofs_check import prism as prc
from approxtheory.proofs_check._core import Context, flips
from approxtheory.train import train

CFG = dict(d=32, T=32, batch=4, steps=3, lr=1e-2, corpus="pydoc", seed=5, scale="toy", ffn=0)
T_975_2 = 4.302652729911275  # Student t quantile 0.975, 2 degrees of freedom


def _cfg(**kw):
    return {**CFG, **kw}


def test_same_batch_order_and_initial_weights_across_schedules():
    data, V = pp.token_data(CFG)
    seen: dict = {}
    weights: dict = {}
    for name, heads in pp.SCHEDULES.items():
        m = Transformer(pp.model_config(heads, CFG["d"], V, CFG["T"]))
        init = train(m, data, dataclasses.replace(_tc(), steps=0))
        weights[name] = {k: v.clone() for k, v in init.model.state_dict().items()}
        batches: list = []
        m = Transformer(pp.model_config(heads, CFG["d"], V, CFG["T"]))
        train(
            m,
            data,
            _tc(),
            callbacks=[lambda s, mod, loss, b, out=batches: out.append(b[1].clone())],
        )
        seen[name] = batches
    ref = seen["uniform"]
    for name in pp.SCHEDULES:
        assert len(seen[name]) == CFG["steps"]
        assert all(torch.equal(a, b) for a, b in zip(ref, seen[name], strict=True)), name
        assert weights[name].keys() == weights["uniform"].keys()
        for k, v in weights[name].items():
            assert torch.equal(v, weights["uniform"][k]), (name, k)
    # the experiment's own batch_order agrees; another seed gives other batches
    assert all(torch.equal(a, b) for a, b in zip(pp.batch_order(CFG, 3), ref, strict=True))
    assert not torch.equal(pp.batch_order(_cfg(seed=6), 1)[0], ref[0])


def _tc():
    return pp.train_config(CFG)


def test_equal_parameters_across_schedules():
    _, V = pp.token_data(CFG)
    counts = {
        n: Transformer(pp.model_config(h, 32, V, 32)).count_params()
        for n, h in pp.SCHEDULES.items()
    }
    assert len(set(counts.values())) == 1, counts
    assert [s.head_dim for s in pp.model_config((1, 2, 4, 4), 32, V, 32).layers] == [32, 16, 8, 8]


def test_paired_stats_and_power_hand_computed():
    s = pp.paired_stats([-1.0, -2.0, -3.0])
    assert s["n"] == 3 and s["mean"] == -2.0 and s["sd"] == pytest.approx(1.0)
    half = T_975_2 / math.sqrt(3)
    assert s["lo"] == pytest.approx(-2 - half) and s["hi"] == pytest.approx(-2 + half)
    assert (s["neg"], s["pos"]) == (3, 0)
    # n = ceil((2.8 sd / effect)^2): (2.8 / 0.5)^2 = 31.36 -> 32; a tiny spread still needs 2
    assert pp.seeds_needed(1.0, 0.5) == 32
    assert pp.seeds_needed(1.0, -0.5) == 32
    assert pp.seeds_needed(0.1, 1.0) == 2
    assert pp.seeds_needed(0.3, 0.1) == 71  # (2.8·3)² = 70.56


def test_paired_verdict_three_outcomes():
    ok = pp.paired_verdict([-1.0, -1.1, -0.9], 0.5)
    assert ok["verdict"] == "consistent-empirical"
    assert ok["hi"] == pytest.approx(-1 + T_975_2 * 0.1 / math.sqrt(3))
    assert pp.paired_verdict([1.0, 1.1, 0.9], 0.5)["verdict"] == "inconsistent"
    under = pp.paired_verdict([-1.0, -2.0, -3.0], 0.5)
    assert under["verdict"] == "not-checkable" and under["needed"] == 32
    # interval includes 0 although 3 seeds resolve the effect: powered, and the effect is absent
    null = pp.paired_verdict([0.1, -0.1, 0.0], 1.0)
    assert null["verdict"] == "inconsistent" and null["needed"] == 2
    # the predicted sign decides which side confirms
    assert pp.paired_verdict([1.0, 1.1, 0.9], 0.5, +1)["verdict"] == "consistent-empirical"


def _rows(loss_diff, d1_diff, wide_d1=(0.0, 0.1, -0.1)):
    """Synthetic prism_paired rows: uniform loss 2.0, D_l = 5 for every layer, Prism shifted by
    ``loss_diff`` / ``d1_diff`` per seed."""
    rows = []
    for seed in range(3):
        for name in pp.SCHEDULES:
            r = {"schedule": name, "seed": seed, "d": 32, "T": 32, "steps": 80, "batch": 16}
            r["vocab"] = 103  # the gate's level on a cross-entropy: below ln V
            r["heads"] = ",".join(map(str, pp.SCHEDULES[name]))
            r["val_loss"] = 2.0 + (loss_diff[seed] if name == "prism" else 0.0)
            for li in range(1, 5):
                r[f"D_{li}"] = 5.0
            if name == "prism":
                r["D_1"] += d1_diff[seed]
            if name == "wide":
                r["D_1"] += wide_d1[seed]
            rows.append(r)
    return rows


def _fake_paired(monkeypatch, rows):
    """The prism_paired rows the pipeline reads (``_rows.exp_rows``)."""
    monkeypatch.setattr(rows_reader, "exp_rows", lambda name, profile: (tuple(rows), 0.0, "x"))


def test_check_verdicts_on_synthetic_rows(monkeypatch):
    cases = {
        "consistent-empirical": ((-0.1, -0.11, -0.09), (-3.0, -3.2, -2.8)),
        "inconsistent": ((0.1, 0.11, 0.09), (3.0, 3.2, 2.8)),
        "not-checkable": ((-0.1, 0.2, -0.05), (-3.0, 4.0, -8.0)),
    }
    for want, (ld, dd) in cases.items():
        rows = _rows(ld, dd)
        assert prc.loss_verdict(rows)["prism"]["verdict"] == want
        assert prc.distance_verdict(rows)["verdict"] == want
        _fake_paired(monkeypatch, rows)
        e1 = prc.paired_loss(Context(), "PR-E1")
        e2 = prc.attention_locality(Context(), "PR-E2")
        assert e1.verdict == want and e2.verdict == want
        assert e1.scope.startswith("surrogate") and e1.rows and e1.plot and e2.rows and e2.plot
        if want == "not-checkable":
            for v in (e1, e2):
                assert "no detectable effect at this scale" in v.evidence
                assert "paired seeds" in v.evidence and "t-interval" in v.evidence
    # ΔD_1 < 0 but the first layer at h_base significantly more local: inconsistent
    rows = _rows((-0.1, -0.11, -0.09), (-3.0, -3.2, -2.8))
    for r in rows:
        if r["schedule"] == "prism":
            r["D_3"] -= 2.0 + 0.1 * r["seed"]
    assert prc.distance_verdict(rows)["verdict"] == "inconsistent"


def test_mutants_flip_the_checks(monkeypatch):
    rows = _rows((-0.1, -0.11, -0.09), (-3.0, -3.2, -2.8))
    _fake_paired(monkeypatch, rows)
    for cid, fn, mutant in (
        ("PR-E1", prc.paired_loss, prc.LOSS_OFFSET),
        ("PR-E2", prc.attention_locality, prc.DIST_OFFSET),
    ):
        base = fn(Context(), cid).verdict
        mut = fn(Context(mutant=mutant), cid).verdict
        assert base == "consistent-empirical" and flips(base, mut), (cid, mut)


@pytest.mark.slow
def test_quick_profile_through_the_runner(tmp_path):
    from approxtheory.experiment import run_experiment
    from approxtheory.report import read_csv

    r = run_experiment("prism_paired", profile="quick", out=str(tmp_path), progress=False)
    assert r["complete"]
    base = tmp_path / "prism_paired"
    rows = read_csv(base / "quick.csv")
    assert len(rows) == 12 and len({int(x["params"]) for x in rows}) == 1
    assert (base / "quick.json").is_file()
    assert (base / "plots-quick" / "paired_diff.png").is_file()
    assert (base / "plots-quick" / "delta_D.png").is_file()
    res = prc.loss_verdict(rows)
    assert set(res) == {"prism", "reversed", "wide"} and res["prism"]["n"] == 3


# ------------------------------------------------------------- the digest's LM and the scales
def test_the_cell_model_is_the_digests_decoder_lm():
    cfg = pp.model_config((1, 2, 4, 4), 32, 50, 32)
    assert cfg.rmsnorm and cfg.final_norm and cfg.tie_embeddings and not cfg.layernorm
    assert cfg.rope == "full" and cfg.ffn_kind == "swiglu" and cfg.causal
    assert not (cfg.bias or cfg.ffn_bias or cfg.embed_bias or cfg.head_bias)
    m = Transformer(cfg)
    # N = V d (tied, once) + L (4 d² + 3 d f + 2 d) + d, f = int(8·32/3) = 85, by hand
    assert m.count_params() == 50 * 32 + 4 * (4 * 32 * 32 + 3 * 32 * 85 + 2 * 32) + 32


#: the digest's Table 4 schedules, transcribed (not generated)
TABLE4 = {
    "small": [3, 3, 6, 6, 8, 8] + [12] * 6,
    "medium": [4] * 3 + [8] * 3 + [16] * 18,
    "large": [6] * 3 + [12] * 3 + [16] * 18,
}
#: Table 1's sizes (124M, 354M, 757M)
REPORTED = {"small": 124e6, "medium": 354e6, "large": 757e6}


@pytest.mark.parametrize("scale", ["small", "medium", "large"])
def test_each_scale_builds_on_meta_with_the_papers_parameter_count(scale):
    s = pp.schedules_for(scale)
    assert list(s["prism"]) == TABLE4[scale]
    assert list(s["reversed"]) == TABLE4[scale][::-1]
    assert len(set(s["uniform"])) == 1 and len(set(s["wide"])) == 1
    counts = {}
    with torch.device("meta"):
        for name in s:
            m = Transformer(pp.scale_model_config(scale, name))
            assert all(p.is_meta for p in m.parameters())  # nothing allocated
            counts[name] = m.count_params()
    assert len(set(counts.values())) == 1, counts
    n = counts["uniform"]
    assert round(n / 1e6) * 1e6 == REPORTED[scale], n
    # the digest's derivation: 12 d² per block + V d (tied) (+ norms: 2d per layer + d)
    d, L = pp.SCALES[scale]["d"], len(s["uniform"])
    assert abs(n - (12 * L * d * d + 50257 * d)) < 0.001 * n


def test_scale_presets_and_bad_scale_configs():
    presets = pp.paired_cell.scales
    assert set(presets) == {"toy", "toy8", "small", "medium", "large"}
    assert presets["toy8"] == dict(scale="toy8")  # the profile's sizes, L = 8 schedules
    assert presets["small"] == dict(scale="small", d=768, T=1024, lr=6e-4, steps=11000, batch=16)
    from approxtheory.errors import ConfigError

    with pytest.raises(ConfigError, match="scale must be one of toy, toy8, small, medium, large"):
        pp.check_cell(_cfg(scale="huge", schedule="prism"))
    with pytest.raises(ConfigError, match="scale small is d=768, T=1024"):
        pp.check_cell(_cfg(scale="small", schedule="prism"))
    with pytest.raises(ConfigError, match="ffn must be 0"):
        pp.check_cell(_cfg(ffn=-1, schedule="prism"))


def test_scale_estimates_refuse_before_allocating(monkeypatch):
    import tracemalloc

    from approxtheory.errors import ResourceLimitError
    from approxtheory.experiment import check_cells
    from approxtheory.resources import limits

    cfg = _cfg(schedule="prism", **pp.paired_cell.scales["small"])
    tracemalloc.start()
    with limits(max_bytes="4G"), pytest.raises(ResourceLimitError, match="needs about"):
        check_cells("prism_paired", "quick", "cpu", pp.paired_cell.scales["small"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200e6  # refused from the estimate: no 124M-parameter model was allocated
    e = pp.estimate(cfg, 50257)
    assert e["params"] == 123_551_232
    # at least weights + gradients + AdamW moments, and the one-hot batch with its logits
    assert e["bytes"] > 16 * e["params"] + 2 * 4 * 16 * 1024 * 50257
    # toy cells fit the default limits
    assert pp.check_cell(_cfg(schedule="prism"))["bytes"] < 1e9


def _cli(argv, capsys):
    from approxtheory.cli import main

    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err.strip()


def test_cli_scale_and_seeds_errors_are_one_line_exit_2(capsys, tmp_path):
    base = ["experiment", "run", "prism_paired", "--quiet", "--out", tmp_path]
    rc, err = _cli([*base, "--scale", "huge"], capsys)
    assert rc == 2 and "\n" not in err
    assert "allowed: toy, toy8, small, medium, large" in err
    rc, err = _cli([*base, "--scale", "small", "--max-memory", "4G"], capsys)
    assert rc == 2 and "needs about" in err and "\n" not in err
    rc, err = _cli([*base, "--seeds", "0"], capsys)
    assert rc == 2 and "--seeds must be a positive integer" in err
    rc, err = _cli([*base, "--scale", "small", "--set", "d=512"], capsys)
    assert rc == 2 and "scale small is d=768" in err
    rc, err = _cli(["experiment", "run", "softmax_beta_sweep", "--scale", "small"], capsys)
    assert rc == 2 and "has no scales" in err
    if not torch.cuda.is_available():
        rc, err = _cli([*base, "--scale", "small", "--device", "cuda"], capsys)
        assert rc == 2 and "no CUDA device" in err and "\n" not in err
    assert not list(tmp_path.glob("prism_paired/cells/*.json"))  # nothing ran


def test_cli_seeds_runs_that_many_paired_seeds(capsys, tmp_path):
    argv = ["experiment", "run", "prism_paired", "--quiet", "--out", tmp_path, "--seeds", "2"]
    rc, _ = _cli([*argv, "--scale", "toy", "--set", "steps=2", "--set", "d=16"], capsys)
    assert rc == 0
    from approxtheory.report import read_csv

    rows = read_csv(tmp_path / "prism_paired" / "quick.csv")
    assert sorted({int(r["seed"]) for r in rows}) == [0, 1]
    assert len(rows) == 8 and {r["scale"] for r in rows} == {"toy"}
    import json

    run = json.loads((tmp_path / "prism_paired" / "quick.json").read_text())
    assert run["seeds"] == [0, 1]
    from approxtheory.experiment import get

    assert get("prism_paired").seeds["quick"] == [0, 1, 2]  # --seeds is for that run only
