"""InfoFlow trained experiments (issue 11 item 3a/3b): the IF-P3/IF-P4 verdict logic on
synthetic rows (both outcomes, the mutants flip), cell determinism, a tiny trained property."""

from __future__ import annotations

import numpy as np
import pytest

from approxtheory.proofs_check import CHECKS, Context
from approxtheory.proofs_check import headcount as hcc
from approxtheory.proofs_check import infoflow as ifc


def _r(nm, rel=0.1, **kw):
    return {**kw, "val_nmse": nm, "nmse_lo": nm * (1 - rel), "nmse_hi": nm * (1 + rel), "steps": 9}


def _pmax_rows(eff, dep1, dep2, D=2):
    return [
        _r(eff, D=D, h1=D, h2=D, T=8, seed=0),
        _r(dep1, D=D, h1=D - 1, h2=D, T=8, seed=0),
        _r(dep2, D=D, h1=D, h2=D - 1, T=8, seed=0),
        _r(10 * eff, D=D, h1=D, h2=D, T=8, seed=1),  # a worse seed: the best one counts
    ]


def _tri_rows(growth, top):
    rows = []
    for h, E in ((2, 24), (4, 48)):
        rows += [
            _r(top / growth, h1=h, h2=h, E=E, T=3, seed=0),
            _r(top, h1=h, h2=h, E=E, T=16, seed=0),
        ]
    return rows


def test_p3_criterion_both_outcomes_and_the_mutant_flips():
    good = _pmax_rows(1e-4, 1e-2, 3e-2)
    res = ifc.p3_criterion(good)
    assert res["ok"] and not res["failed"] and not res["undertrained"]
    assert res["effect"] == pytest.approx(100.0)
    assert not ifc.p3_criterion(good, "heads-relabelled")["ok"]
    bad = ifc.p3_criterion(_pmax_rows(0.2, 0.3, 0.4))
    assert not bad["ok"] and len(bad["failed"]) == 2 and bad["undertrained"] == [2]
    # a ratio of 10 whose interval reaches below 10 does not pass
    assert not ifc.p3_criterion(_pmax_rows(1e-4, 1.05e-3, 1e-2))["ok"]
    # D = 3 is judged on its own configurations
    assert ifc.p3_criterion(good + _pmax_rows(1e-3, 1e-1, 1e-1, D=3))["ok"]
    assert not ifc.p3_criterion(good + _pmax_rows(1e-3, 2e-3, 1e-1, D=3))["ok"]


def test_p4_criterion_both_outcomes_and_the_mutant_flips():
    good = _tri_rows(growth=15.0, top=0.9)
    res = ifc.p4_criterion(good)
    assert res["ok"] and res["effect"] == pytest.approx(15.0)
    assert not ifc.p4_criterion(good, "T-relabelled")["ok"]
    assert not ifc.p4_criterion(_tri_rows(growth=2.0, top=0.9))["ok"]  # too little growth
    assert not ifc.p4_criterion(_tri_rows(growth=50.0, top=0.3))["ok"]  # width fixed it


@pytest.mark.parametrize(
    "cid, name, good, bad, mutant",
    [
        (
            "IF-P3",
            "infoflow_pmax_heads",
            _pmax_rows(1e-4, 1e-2, 3e-2),
            _pmax_rows(0.2, 0.3, 0.4),
            "heads-relabelled",
        ),
        ("IF-P4", "infoflow_tri_growth", _tri_rows(15.0, 0.9), _tri_rows(1.5, 0.9), "T-relabelled"),
    ],
)
def test_checks_on_synthetic_rows(monkeypatch, cid, name, good, bad, mutant):
    rows = {"now": good}
    monkeypatch.setattr(hcc, "_exp_rows", lambda n, p: (tuple(rows["now"]), 0.0, "synthetic"))
    v = CHECKS[cid](Context())
    assert v.verdict == "consistent-empirical" and v.plot and v.rows and "quick" in v.scope
    assert CHECKS[cid](Context(mutant=mutant)).verdict == "inconsistent"
    rows["now"] = bad
    v = CHECKS[cid](Context())
    assert v.verdict == "inconsistent" and v.witness
    if cid == "IF-P3":
        assert "CANNOT DECIDE" in v.evidence


def test_nmse_interval_brackets_the_estimate():
    from approxtheory.experiments.infoflow_trained import nmse_interval

    rng = np.random.default_rng(0)
    y = rng.standard_normal(500)
    nm, lo, hi = nmse_interval(y + 0.3 * rng.standard_normal(500), y, seed=1)
    assert lo < nm < hi and 0.05 < nm < 0.15


@pytest.mark.parametrize(
    "cfg",
    [
        {"task": "tri", "T": 3, "size": "1,1,8"},
        {"task": "pmax", "D": 2, "T": 3, "drop": "layer1"},
    ],
)
def test_cell_is_deterministic(cfg):
    from approxtheory.experiments.infoflow_trained import trained_cell

    cfg = {**cfg, "hidden": 8, "lr": 1e-2, "steps": 3, "seed": 5}
    a, b = trained_cell(cfg), trained_cell(cfg)
    assert a == b and a["nmse_lo"] <= a["val_nmse"] <= a["nmse_hi"]
    if cfg["task"] == "pmax":
        assert (a["h1"], a["h2"], a["E"]) == (1, 2, 16)


def test_tri_small_T_learns_at_a_tiny_budget():
    """TRI at T = 3 with 150 steps beats the constant predictor clearly (NMSE well below 1)."""
    from approxtheory.experiments.infoflow_trained import trained_cell

    r = trained_cell(
        {"task": "tri", "T": 3, "size": "2,2,24", "hidden": 32, "lr": 3e-3, "steps": 150, "seed": 0}
    )
    assert r["val_nmse"] < 0.5


@pytest.mark.slow
def test_quick_profiles_give_the_recorded_verdicts():
    assert CHECKS["IF-P4"](Context()).verdict == "consistent-empirical"
    assert CHECKS["IF-P3"](Context()).verdict in ("consistent-empirical", "inconsistent")


def test_depth_fits_put_the_measured_slope_next_to_predict_rate():
    from approxtheory.experiments.infoflow_trained import depth_fits

    rows = [
        {"layers": L, "T": T, "E": 8, "params": p, "val_nmse": 5.0 * p**-2.0, "seed": 0}
        for L in (1, 2)
        for T in (4, 16)
        for p in (100, 200, 400)
    ]
    fits = {(f["layers"], f["T"]): f for f in depth_fits(rows)}
    assert all(f["slope"] == pytest.approx(-2.0, abs=1e-6) for f in fits.values())
    # predict_rate: one layer α = max(1, T d / E), two layers (1, 1) + PE α = 1
    assert fits[(1, 16)]["predicted_slope"] == pytest.approx(-1.0) and fits[(1, 16)]["depends_on_T"]
    assert fits[(2, 16)]["predicted_slope"] == pytest.approx(-2.0)
    assert not fits[(2, 16)]["depends_on_T"]


def test_kth_cell_is_deterministic():
    from approxtheory.experiments.infoflow_trained import kth_cell

    cfg = {"layers": 2, "T": 4, "E": 8, "hidden": 8, "lr": 3e-3, "steps": 3, "seed": 2}
    assert kth_cell(cfg) == kth_cell(cfg)


@pytest.mark.parametrize(
    "cfg",
    [
        {"task": "nope"},
        {"task": "pmax", "D": 2, "drop": "both"},
        {"task": "pmax", "D": 1, "drop": "none"},
        {"task": "tri", "size": "2,2"},
        {"task": "tri", "size": "0,2,8"},
    ],
)
def test_bad_cell_configs_are_typed_errors(cfg):
    from approxtheory.errors import ConfigError
    from approxtheory.experiments.infoflow_trained import heads_of

    with pytest.raises(ConfigError):
        heads_of(cfg)
