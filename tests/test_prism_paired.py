"""prism_paired (issue 12 item 3) and the PR-E1/PR-E2 checks (item 6): pairing (same batches, same
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
from approxtheory.proofs_check import prism as prc
from approxtheory.proofs_check._core import Context, flips
from approxtheory.train import train

CFG = dict(d=32, T=32, batch=4, steps=3, lr=1e-2, corpus="pydoc", seed=5)
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
            r["val_loss"] = 2.0 + (loss_diff[seed] if name == "prism" else 0.0)
            for li in range(1, 5):
                r[f"D_{li}"] = 5.0
            if name == "prism":
                r["D_1"] += d1_diff[seed]
            if name == "wide":
                r["D_1"] += wide_d1[seed]
            rows.append(r)
    return rows


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
        monkeypatch.setattr(prc, "_paired_rows", lambda ctx, r=rows: ([dict(x) for x in r], "x"))
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
    monkeypatch.setattr(prc, "_paired_rows", lambda ctx: ([dict(x) for x in rows], "x"))
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
