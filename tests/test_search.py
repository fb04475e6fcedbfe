"""The sup-error search against worst cases known exactly (the `bench search` panel), its failure
handling (NaN is a failure, never zero error) and its bad-input errors.

The known values are pinned here by hand (derivations in approxtheory/bench/search.py's module
docstring) and cross-checked by brute force, so a regression of the search, or of the known-value
code, fails CI."""

import math

import numpy as np
import pytest
import torch

from approxtheory import ConfigError
from approxtheory.bench.search import (
    known_hc_k1_vertices,
    known_hc_l9,
    known_softmax_max,
    panel,
    run_case,
)
from approxtheory.constructions import build
from approxtheory.measure import errors, sup_error

# --------------------------------------------------------------------------- the known values


@pytest.mark.parametrize("T,beta", [(4, 1e2), (4, 1e4), (64, 1e4), (1024, 1e2), (1024, 1e4)])
def test_softmax_known_worst_matches_brute_force_over_the_common_gap(T, beta):
    """Closed form W((T−1)/e)/β against a dense 1-D maximisation of the common-gap family."""
    g = np.geomspace(1e-9, 1.0, 400001)
    fam = (T - 1) * g * np.exp(-beta * g) / (1 + (T - 1) * np.exp(-beta * g))
    assert known_softmax_max(T, beta) == pytest.approx(fam.max(), rel=1e-6)


def test_softmax_known_worst_pinned_values():
    # W(63/e) = 2.307130..., W(1023/e) = 4.439870... (mpmath.lambertw): checked by w·e^w = (T−1)/e
    for T in (64, 1024):
        w = known_softmax_max(T, 1e4) * 1e4
        assert w * math.exp(w) == pytest.approx((T - 1) / math.e, rel=1e-12)
    assert known_softmax_max(64, 1e4) == pytest.approx(2.307130e-4, rel=1e-6)
    assert known_softmax_max(1024, 1e4) == pytest.approx(4.439870e-4, rel=1e-6)


def test_softmax_known_worst_is_never_beaten_by_random_inputs():
    """No input beats the supremum (2000 random inputs with near ties, model evaluated)."""
    T, beta = 8, 100.0
    c = build("softmax_retrieval", T=T, beta=beta)
    rng = np.random.default_rng(0)
    X = 1 - rng.exponential(3 / beta, size=(2000, T, 1)).clip(0, 1)
    assert errors(c.model, c.task, X).max() <= known_softmax_max(T, beta) * (1 + 1e-9)


@pytest.mark.parametrize("T,frac", [(8, 3 / 7), (32, 15 / 31), (64, 31 / 63)])
def test_hc_k1_vertex_worst_is_hand_derived(T, frac):
    """By hand: first half all 0, second half T/2 − 1 ones and one 0. Head 1 (max over S₁,
    score β(x + r₁), r₁ = −1 on S₂) gives score 0 to the T/2 first-half zeros and to the T/2 − 1
    second-half ones (β(1 − 1)), −β to the second-half zero: it averages x over T − 1 tied tokens,
    (T/2 − 1)/(T − 1), against max₁ = 0. Head 2 (min over S₂, score β(−x + r₂)) is dominated by
    the second-half zero (score 0 against −β): z̃₂ = 0 = min₂ up to e^{−β}. So the error is
    (T/2 − 1)/(T − 1), and the enumeration finds nothing larger."""
    val, _ = known_hc_k1_vertices(T, 1000.0, -1.0)
    assert val == pytest.approx(frac, abs=1e-12)


def test_hc_k1_vertex_enumeration_agrees_with_the_model():
    """The counts formula reproduces the model's error at every vertex of T = 6 (2^6 inputs)."""
    import itertools

    T = 6
    c = build("hc_k1", T=T, beta=1000.0, gate=-1.0)
    X = np.array(list(itertools.product((0.0, 1.0), repeat=T)))[..., None]
    assert errors(c.model, c.task, X).max() == pytest.approx(
        known_hc_k1_vertices(T, 1000.0, -1.0)[0], abs=1e-12
    )


def test_hc_l9_known_worst_is_attained_and_not_beaten_on_a_grid():
    T, eps = 2, 0.25
    c = build("hc_l9", T=T, eps=eps)
    g = np.linspace(0, 1, 401)
    X = np.stack(np.meshgrid(g, g), -1).reshape(-1, T, 1)
    e = errors(c.model, c.task, X)
    assert e.max() == pytest.approx(known_hc_l9(T, eps), abs=1e-9)


# ------------------------------------------------------------------------------- the panel


@pytest.mark.parametrize("case", panel(), ids=lambda c: c.label)
def test_search_reaches_95_percent_of_every_known_worst(case):
    row = run_case(case, upper=False)
    assert row["found"] <= row["known"] * (1 + 1e-6) + 1e-15, row  # a lower bound, never above
    assert row["ratio"] >= 0.95, row


@pytest.mark.parametrize(
    "name,knobs,known",
    [
        ("hc_k1", {"T": 64, "beta": 1000.0, "gate": -1.0}, 31 / 63),
        ("softmax_retrieval", {"T": 1024, "beta": 1e4}, 4.439870e-4),
    ],
)
def test_the_old_search_fails_the_panel(name, knobs, known):
    """Mutant: without the structure-aware stages (random + structured + plain ascent, the
    search of the previous release) the panel goal is missed — so the panel test can fail."""
    c = build(name, **knobs)
    r = sup_error(c.model, c.task, budget=4096, families=False, discrete_evals=0, continuation=())
    assert r.value < 0.95 * known


# --------------------------------------------------------------------- failures are failures


def test_nan_output_is_an_infinite_error_with_its_witness():
    c = build("softmax_retrieval", T=4, beta=10.0)
    with torch.no_grad():
        c.model.layers[0].attn.q.weight.mul_(1e308)  # logits overflow: inf - inf = NaN
    r = sup_error(c.model, c.task, budget=16, seed=0, local_steps=0)
    assert r.value == math.inf and r.nonfinite
    with torch.no_grad():
        out = c.model(torch.tensor(r.witness[None]))
    assert not torch.isfinite(out).all()
    m = c.measure(budget=16, local_steps=0)
    assert m["verdict"] == "refuted"


def test_lag_rows_without_target_are_skipped_not_failures():
    c = build("lag_head", T=16)
    r = sup_error(c.model, c.task, budget=32, seed=0, local_steps=0, discrete_evals=0)
    assert np.isfinite(r.value) and not r.nonfinite


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"budget": 0}, "budget"),
        ({"budget": True}, "budget"),
        ({"budget": 2.5}, "budget"),
        ({"lr": -1.0}, "lr"),
        ({"continuation": (0.0,)}, "continuation"),
        ({"local_steps": -1}, "local_steps"),
    ],
)
def test_bad_search_arguments_are_typed_errors(kw, match):
    c = build("softmax_retrieval", T=4, beta=10.0)
    with pytest.raises(ConfigError, match=match):
        sup_error(c.model, c.task, **{"budget": 8, **kw})


def test_bad_domain_and_shape_are_typed_errors():
    c = build("softmax_retrieval", T=4, beta=10.0)
    c.task.lo, c.task.hi = 1.0, 0.0
    with pytest.raises(ConfigError, match="lo <= hi"):
        sup_error(c.model, c.task, budget=8)
    other = build("hc_k2", T=4, d=1)  # output of size 4, target of size 1
    with pytest.raises(ConfigError, match="shape"):
        sup_error(other.model, build("softmax_retrieval", T=4, beta=10.0).task, budget=8)


# ------------------------------------------------------------------- verdicts and the dtype


def test_verdict_tolerance_follows_the_dtype_and_flags_vacuous_bounds():
    from approxtheory.constructions import verdict

    # float64: round-off of 1e-12 absolute is allowed, 1e-6 is not
    assert verdict(1e-3 + 5e-13, 1e-3, "upper") == "within-bound"
    assert verdict(1e-3 + 1e-6, 1e-3, "upper") == "refuted"
    # float32: the same excess of 1e-6 is round-off
    assert verdict(1e-3 + 1e-6, 1e-3, "upper", "float32") == "within-bound"
    # a bound below the dtype's resolution is reported as such, unless clearly violated
    assert verdict(1e-7, 1e-9, "upper", "float32") == "below-tolerance"
    assert verdict(0.4, 1e-9, "upper", "float32") == "refuted"
    assert verdict(0.0, 0.0, "upper") == "below-tolerance"
    assert verdict(0.0, 0.0, "exact") == "within-bound"
    # vacuous bounds, and NaN/inf measurements
    assert verdict(0.3, float("inf"), "upper") == "vacuous-bound"
    assert verdict(0.3, 0.0, "lower") == "vacuous-bound"
    assert verdict(float("nan"), 1.0, "upper") == "refuted"
    assert verdict(float("inf"), 1.0, "lower") == "refuted"
    with pytest.raises(ConfigError, match="bound kind"):
        verdict(0.1, 1.0, "upperish")


def test_float32_model_at_huge_beta_is_not_refuted_by_rounding_alone():
    """At β = 1e9 the bound (~2e-8) is below float32 resolution: inputs alone round by ~6e-8."""
    c = build("softmax_retrieval", T=8, beta=1e9)
    c.model.cfg.dtype = "float32"
    c.model.float()
    m = c.measure(budget=64, local_steps=0, discrete_evals=0)
    assert m["tolerance"]["dtype"] == "float32"
    assert m["verdict"] in ("within-bound", "below-tolerance")
    assert m["sup_error"] > c.claimed_bound  # float64 rules would have refuted it
