"""Constructions: each one's measured error against the bound its paper states. A refutation is
recorded with a witness that is re-checked here, never hidden by widening a tolerance."""

import json

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import approxtheory as at
from approxtheory import ConfigError
from approxtheory import strategies as ats
from approxtheory.cli import main
from approxtheory.constructions import build, names
from approxtheory.measure import errors, fit_rate, sup_error

ALL = ["hc_k1", "hc_k1_synthetic", "hc_k2", "hc_l9", "softmax_retrieval", "if_second_largest",
       "if_pairwise_max", "lag_head", "svd_truncation"]


def test_every_construction_is_registered():
    assert set(ALL) <= set(names())


def _recheck_witness(c, rep):
    """The witness must reproduce the reported error (measured by an independent forward)."""
    W = np.asarray(rep["witness"])[None]
    e = errors(c.model, c.task, W)[0]
    assert np.isclose(e, rep["sup_error"], rtol=1e-9, atol=1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knobs=ats.construction_knobs("hc_k1", T=st.integers(4, 12), beta=ats.betas(1, 1e3),
                                    gate=st.floats(-4.0, -0.25)))
def test_hc_k1_within_bound_or_refuted_with_witness(knobs):
    c = build("hc_k1", **knobs)
    rep = c.report(budget=256, seed=0)
    _recheck_witness(c, rep)
    if rep["verdict"] == "refuted":
        assert rep["sup_error"] > c.claimed_bound   # a real counterexample
    if knobs["gate"] <= -2.0:
        # out-of-set scores are then at least β below the in-set minimum: the paper's
        # T e^{-β} term is valid and the bound must hold
        assert rep["verdict"] == "within-bound", rep


def test_hc_k1_paper_gate_is_refuted_by_a_concrete_witness():
    """With the stated gate -1, an out-of-set token at f = 0 ties with in-set tokens at f = 1:
    the bound (|S|-1)/(eβ) + T e^{-β} fails. The toolkit reports it with the input."""
    c = build("hc_k1", T=8, beta=100.0, gate=-1.0)
    rep = c.report(budget=512)
    assert rep["verdict"] == "refuted"
    assert rep["sup_error"] > 10 * c.claimed_bound
    _recheck_witness(c, rep)


@settings(max_examples=10, deadline=None)
@given(T=st.integers(1, 64), beta=ats.betas(1, 1e4))
def test_hc_k1_synthetic_within_bound_and_params_independent_of_T(T, beta):
    c = build("hc_k1_synthetic", T=T, beta=beta)
    assert c.params == build("hc_k1_synthetic", T=1, beta=beta).params
    rep = c.report(budget=256)
    assert rep["verdict"] == "within-bound", rep


@given(T=st.integers(1, 12), d=st.integers(1, 3))
@settings(max_examples=10, deadline=None)
def test_hc_k2_attention_output_is_exactly_vec_x_over_T(T, d):
    c = build("hc_k2", T=T, d=d)
    X = torch.rand(5, T, d, dtype=torch.float64)
    hs = c.model.hidden_states(X)
    cls_state = hs[-1][:, -1]
    assert torch.allclose(cls_state, X.reshape(5, -1) / T, atol=1e-15, rtol=0)
    assert c.measure(budget=128)["verdict"] == "within-bound"


@settings(max_examples=8, deadline=None)
@given(T=st.integers(1, 16), eps=st.floats(0.04, 0.5))
def test_hc_l9_error_within_one_grid_step(T, eps):
    c = build("hc_l9", T=T, eps=eps)
    rep = c.report(budget=512)
    assert rep["verdict"] == "within-bound", rep
    ng = c.extra["n_g"]
    assert c.extra["widths"] == [T * ng, 2 * ng] and max(c.extra["widths"]) <= \
        c.extra["width_bound"]


@settings(max_examples=15, deadline=None)
@given(T=st.integers(1, 256), beta=ats.betas(1, 1e6))
def test_softmax_retrieval_within_if_t2_bound(T, beta):
    c = build("softmax_retrieval", T=T, beta=beta)
    rep = c.report(budget=256)
    assert rep["verdict"] == "within-bound", rep


@settings(max_examples=20, deadline=None)
@given(X=ats.retrieval_inputs(T=st.integers(2, 32), margin=st.floats(0.05, 0.5)),
       beta=ats.betas(10, 1e3))
def test_gap_law_softmax_error_at_most_T_exp_minus_beta_gap(X, beta):
    """With a margin g between the top score and the rest, the error is <= (T-1) e^{-βg}
    (HC-K1's err_gap, derived)."""
    T = X.shape[0]
    c = build("softmax_retrieval", T=T, beta=beta)
    top2 = np.sort(X[:, 0])[-2:]
    g = top2[1] - top2[0]
    err = errors(c.model, c.task, X[None])[0]
    bound = at.claim("HC-K1").evaluate_float("err_gap", S=T, beta=beta,
                                             g=sp.Rational(repr(float(g))))
    assert err <= bound + 1e-12


def test_rate_softmax_sup_error_scales_like_one_over_beta():
    """Fitted exponent of the sup error in β against HC-K1's asymptotic exponent (-1)."""
    betas = np.geomspace(10, 1e4, 7)
    sups = [sup_error(build("softmax_retrieval", T=2, beta=b).model,
                      build("softmax_retrieval", T=2, beta=b).task, budget=512, seed=1).value
            for b in betas]
    fit = fit_rate(betas, sups)
    predicted = float(at.claim("HC-K1").asymptotic_exponent("beta", "err_bound", S=2, T=2))
    assert predicted == -1.0
    assert fit.contains(predicted), fit


def test_rate_hc_l9_error_scales_like_eps():
    """HC-L9: error <= 1/⌈1/ε⌉; the measured sup error falls like ε^1 (fitted with CI)."""
    epss = np.geomspace(0.02, 0.5, 6)
    sups = [build("hc_l9", T=4, eps=e).measure(budget=2048, seed=2)["sup_error"] for e in epss]
    fit = fit_rate(epss, sups)
    assert fit.ci_low <= 1.0 <= fit.ci_high, fit


def test_infoflow_constructions_within_bound():
    for T in (4, 16, 64):
        rep = build("if_second_largest", T=T).report(budget=512)
        assert rep["verdict"] == "within-bound", rep
    for D in (1, 2):
        rep = build("if_pairwise_max", T=16, D=D, beta=1e3).report(budget=256)
        assert rep["verdict"] == "within-bound", rep


def test_if_second_largest_error_does_not_grow_with_T():
    """IF-K1: the ε^{-1} rate is T-independent; at β = 1e4 the sup errors for T in {4, 16, 64}
    agree within a factor of 2 (digest §7 item 2)."""
    errs = [build("if_second_largest", T=T, N=32).measure(budget=1024)["sup_error"]
            for T in (4, 16, 64)]
    assert max(errs) <= 2 * min(errs), errs


def test_lag_head_never_beats_the_floor_and_weights_obey_the_cap():
    for B in (1.0, 2.0):
        for T in (16, 64):
            rep = build("lag_head", T=T, B=B).report(budget=128)
            assert rep["verdict"] == "within-bound", rep
            assert rep["TO-X1_weight_cap_holds"], rep


def test_svd_truncation_bounds_hold():
    for r in (2, 8, 14):
        rep = build("svd_truncation", r=r).report(budget=256)
        assert rep["verdict"] == "within-bound", rep
        assert rep["logit_bound_holds"], rep


@pytest.mark.parametrize("name,knobs,needle", [
    ("softmax_retrieval", {"beta": -1.0}, "beta must be positive"),
    ("hc_k1", {"beta": 0.5}, "beta must be >= 1"),
    ("hc_k1", {"sets": "odd"}, "sets must be one of"),
    ("hc_l9", {"eps": 2.0}, "eps must be in"),
    ("lag_head", {"T": 8, "k": 5}, "k must be < T/2"),
    ("svd_truncation", {"r": 100}, "r must be <= 2F"),
    ("hc_k1", {"frob": 1}, "no knob frob"),
    ("hc_k1", {"h": 1}, "h must equal D"),
    ("hc_k1_synthetic", {"h": 3, "D": 4}, "h must equal D"),
    ("nope", {}, "unknown construction"),
])
def test_bad_knobs_raise_typed_errors(name, knobs, needle):
    with pytest.raises(ConfigError, match=needle):
        build(name, **knobs)


def test_cli_construct_list_and_json(capsys):
    assert main(["construct", "--list"]) == 0
    out = capsys.readouterr().out
    for n in ALL:
        assert n in out
    for n in ALL:
        assert main(["construct", n, "--budget", "64", "--json"]) == 0
        d = json.loads(capsys.readouterr().out)
        for key in ("claim", "params", "sup_error", "witness", "claimed_bound", "verdict"):
            assert key in d, (n, key)
        assert d["verdict"] in ("within-bound", "refuted")
        at.claim(d["claim"])  # cites a real catalogue claim


def test_cli_construct_bad_input_exits_2(capsys):
    assert main(["construct", "hc_k1", "--beta", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "beta must be positive" in err
    assert main(["construct", "hc_k1", "--T"]) == 2
    assert main(["construct", "bogus"]) == 2
