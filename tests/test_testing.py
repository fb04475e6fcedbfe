"""approxtheory.testing: the calibrated power-law fit, the rate assertions, their
refusals of bad input, and the on-disk cache of measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest

import approxtheory as at
from approxtheory import testing as T
from approxtheory.constructions import build
from approxtheory.errors import (
    ApproxTheoryError,
    ConfigError,
    InvalidValueError,
    RegimeError,
    UnknownClaimError,
    UnknownSymbolError,
)
from approxtheory.testing import (
    Measured,
    RateAssertionError,
    RateUndecidedError,
    assert_claim_rate,
    assert_rate,
    calibrate,
    fit_power_law,
)
from approxtheory.testing import claim_rates as CR

BETAS = [10.0, 100.0, 1000.0, 10000.0]


# ------------------------------------------------------------------------------- calibration
def test_the_interval_is_calibrated_on_synthetic_rates_with_noise_and_floors():
    """Done-when of over seeded synthetic rates (known exponents, 0-10 % noise, floors
    in half of the cases) the 95% interval covers the true exponent in 93-97 % of the decided
    cases; the floor test refuses floors, not power laws."""
    c = calibrate(4000, confidence=0.95, seed=0)
    assert c.n_cases == 4000
    assert 0.93 <= c.coverage <= 0.97, c
    cases, refused, covered = c.by_kind["power law"]
    assert 0.93 <= covered / (cases - refused) <= 0.97, c
    assert refused / cases < 0.01, c  # a power law is almost never taken for a floor
    f_cases, f_refused, _ = c.by_kind["floor"]
    assert f_refused / f_cases > 0.15, c  # floors are refused rather than mis-covered
    assert calibrate(4000, confidence=0.95, seed=0) == c  # deterministic


@pytest.mark.parametrize("confidence", [0.8, 0.99])
def test_the_calibration_follows_the_confidence(confidence):
    c = calibrate(1500, confidence=confidence, seed=1)
    assert abs(c.coverage - confidence) < 0.03, c


def test_no_global_random_state_is_touched():
    before = np.random.get_state()[1].copy()
    calibrate(50, seed=3)
    fit_power_law(BETAS, [1.0, 0.1, 0.012, 0.001])
    assert np.array_equal(np.random.get_state()[1], before)


def test_the_t_interval_of_a_noisy_line():
    """The interval is the Student-t one: slope ± t(0.975, n-2)·se."""
    rng = np.random.default_rng(0)
    x = np.logspace(0, 3, 6)
    y = 2.0 * x**-1.5 * np.exp(0.05 * rng.standard_normal(6))
    fit = fit_power_law(x, y)
    lx, ly = np.log(x), np.log(y)
    b, a = np.polyfit(lx, ly, 1)
    r = ly - a - b * lx
    se = math.sqrt((r @ r) / 4 / ((lx - lx.mean()) ** 2).sum())
    from scipy.stats import t

    assert fit.slope == pytest.approx(b)
    assert fit.ci_high - fit.slope == pytest.approx(t.ppf(0.975, 4) * se)
    assert fit.df == 4 and fit.n_points == 6 and not fit.floor


def test_an_exact_power_law_has_a_round_off_interval_and_no_floor_test():
    fit = fit_power_law(BETAS, [0.6 / b for b in BETAS])
    assert fit.slope == pytest.approx(-1.0)
    assert fit.ci_high - fit.ci_low < 1e-8
    assert fit.contains(-1.0) and fit.floor_p is None and not fit.floor


def test_a_floor_is_found_and_refused():
    """The value-gain mutant of IF-T2: 1.05 x the softmax average, an error floor 0.05."""
    errors = [0.05 + 0.6 / b for b in BETAS]
    fit = fit_power_law(BETAS, errors)
    assert fit.floor and fit.floor_p < 0.05
    assert fit.floor_level == pytest.approx(0.05, rel=0.2)
    with pytest.raises(RateUndecidedError) as e:
        assert_rate(BETAS, errors, at_most=-1, over="beta")
    assert e.value.reason == "floor" and e.value.fit.floor
    msg = str(e.value)
    assert "floor near 0.05" in msg and "cannot decide" in msg and "\n" not in msg


def test_three_points_cannot_test_a_floor():
    fit = fit_power_law(BETAS[:3], [1.0, 0.1, 0.09])
    assert fit.floor_p is None and not fit.floor


# ------------------------------------------------------------------------------- assert_rate
def test_an_exact_rate_passes_each_form():
    errors = [0.6 / b for b in BETAS]
    assert assert_rate(BETAS, errors, at_most=-1).slope == pytest.approx(-1)
    assert_rate(BETAS, errors, at_least=-1)
    assert_rate(BETAS, errors, exponent=-1)
    assert_rate(BETAS, errors, at_most=-1.2, tol=0.25)


def test_a_flat_error_fails_with_a_compact_message():
    with pytest.raises(RateAssertionError) as e:
        assert_rate(BETAS, [0.50, 0.45, 0.51, 0.47], at_most=-1, over="beta")
    msg = str(e.value)
    lines = msg.splitlines()
    assert len(lines) == 3, msg
    assert lines[0].startswith("error ~ beta^-0.003, 95% interval [-0.061, +0.056]")
    assert "4 points, beta 10..10000" in lines[0]
    assert "at or below -1.000, excluding every exponent above it" in lines[1]
    assert lines[2].startswith("  worst point: beta=10000, error=0.47")
    assert e.value.fit.slope == pytest.approx(-0.0028, abs=1e-3)


def test_at_least_and_exponent_failures_name_what_was_needed():
    with pytest.raises(RateAssertionError, match="at or above -0.500, excluding every "):
        assert_rate(BETAS, [1, 0.1, 0.01, 0.001], at_least=-0.5)
    with pytest.raises(RateAssertionError, match="contain -2.000, but it excludes it"):
        assert_rate(BETAS, [1, 0.12, 0.011, 0.0009], exponent=-2)


def test_a_wide_interval_cannot_decide():
    with pytest.raises(RateUndecidedError, match="straddles -1.000") as e:
        assert_rate(BETAS[:3], [1, 0.3, 0.02], at_most=-1)
    assert e.value.reason == "wide"


@pytest.mark.parametrize(
    "sizes, errors, kw, err, needle",
    [
        ([1, 2, 3], [1, 2], {}, InvalidValueError, "same length (got 3 sizes and 2 errors)"),
        ([1, 2], [1, 2], {}, RateUndecidedError, "at least 3 sizes (got 2)"),
        ([0, 2, 3], [1, 2, 3], {}, InvalidValueError, "sizes must be > 0"),
        ([-1, 2, 3], [1, 2, 3], {}, InvalidValueError, "sizes must be > 0"),
        ([1, math.inf, 3], [1, 2, 3], {}, InvalidValueError, "sizes must be finite"),
        ([1, 2, 3], [1, math.nan, 3], {}, RateUndecidedError, "errors[1] is nan"),
        ([1, 2, 3], [1, math.inf, 3], {}, RateUndecidedError, "a failure of what was measured"),
        ([1, 2, 3], [1, -2, 3], {}, InvalidValueError, "errors must be >= 0"),
        ([1, 2, 3], [1, 0.0, 3], {}, RateUndecidedError, "is exactly 0"),
        ([2, 2, 2], [1, 2, 3], {}, RateUndecidedError, "at least 2 distinct sizes"),
        ([1, 2, 3], [1, 2, 3], {"confidence": 0}, InvalidValueError, "in (0, 1)"),
        ([1, 2, 3], [1, 2, 3], {"confidence": 1}, InvalidValueError, "in (0, 1)"),
        ([1, 2, 3], [1, 2, 3], {"confidence": 1.5}, InvalidValueError, "in (0, 1)"),
        ([1, 2, 3], [1, 2, 3], {"confidence": math.nan}, InvalidValueError, "in (0, 1)"),
        ([1, 2, 3], [1, 2, 3], {"confidence": True}, InvalidValueError, "in (0, 1)"),
        ([1, 2, 3], [1, 2, 3], {"confidence": "0.95"}, InvalidValueError, "in (0, 1)"),
        (["1", "2", "3"], [1, 2, 3], {}, InvalidValueError, "sizes[0] must be a real number"),
        ("123", [1, 2, 3], {}, InvalidValueError, "sizes must be a sequence of numbers"),
        ([1, 2, 3], [True, 2, 3], {}, InvalidValueError, "errors[0] must be a real number"),
        ([[1, 2, 3]], [[1, 2, 3]], {}, InvalidValueError, "must be a real number"),
        (np.ones((3, 2)), np.ones((3, 2)), {}, InvalidValueError, "must be 1-D"),
        (np.array(["a", "b", "c"]), [1, 2, 3], {}, InvalidValueError, "dtype <U1"),
    ],
)
def test_bad_input_is_refused_with_a_typed_error(sizes, errors, kw, err, needle):
    with pytest.raises(err) as e:
        assert_rate(sizes, errors, at_most=-1, **kw)
    assert isinstance(e.value, ApproxTheoryError)
    assert needle in str(e.value)
    with pytest.raises(err):
        fit_power_law(sizes, errors, **kw)


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({}, "exactly one of exponent=, at_most= or at_least= (got none)"),
        ({"at_most": -1, "at_least": -2}, "(got at_most, at_least)"),
        ({"at_most": math.nan}, "at_most must be finite"),
        ({"exponent": "-1"}, "exponent must be a real number"),
        ({"at_most": -1, "tol": -0.1}, "tol must be >= 0"),
        ({"at_most": -1, "tol": math.inf}, "tol must be finite"),
    ],
)
def test_bad_assertion_arguments(kw, needle):
    with pytest.raises(InvalidValueError) as e:
        assert_rate(BETAS, [1, 0.1, 0.01, 0.001], **kw)
    assert needle in str(e.value)


# ------------------------------------------------------------------------------- claim form
def test_the_claim_form_reads_the_exponent_and_the_log_factors_share():
    fit = assert_claim_rate("IF-T2", BETAS, [0.06 / b for b in BETAS], over="beta", values={"T": 4})
    assert fit.slope == pytest.approx(-1.0)
    # a decay slower than 1/beta by more than the ln(beta T) factor's share fails
    with pytest.raises(RateAssertionError) as e:
        assert_claim_rate(
            "IF-T2", BETAS, [0.06 / b**0.8 for b in BETAS], over="beta", values={"T": 4}
        )
    msg = str(e.value)
    assert msg.startswith("IF-T2: error ~ beta^-0.800")
    assert "(IF-T2's upper bound err_attn ~ beta^-1.000)" in msg
    own = np.polyfit(
        np.log(BETAS),
        np.log([at.claim("IF-T2").evaluate_float(beta=b, T=4) for b in BETAS]),
        1,
    )[0]
    assert f"-1.000 + tol {own + 1:.3g}" in msg


def test_the_claim_form_refuses_bad_input():
    errors = [0.06 / b for b in BETAS]
    with pytest.raises(UnknownClaimError):
        assert_claim_rate("IF-T99", BETAS, errors, over="beta")
    with pytest.raises(UnknownSymbolError):
        assert_claim_rate("IF-T2", BETAS, errors, over="gamma", values={"T": 4})
    with pytest.raises(RegimeError, match="outside the claim's regime"):
        assert_claim_rate("IF-T2", [0.01, 0.1, 1, 10], errors, over="beta", values={"T": 4})
    with pytest.raises(InvalidValueError, match="must not give beta"):
        assert_claim_rate("IF-T2", BETAS, errors, over="beta", values={"T": 4, "beta": 2})
    with pytest.raises(InvalidValueError):
        assert_claim_rate(3, BETAS, errors, over="beta")


def test_the_exponent_shortcut_falls_back_at_special_values():
    """HC-K1's (S-1)/(eβ) + T e^{-β} decays like β^-1, except at S = 1 (exponentially): the
    cached exponent with the symbols left free is not used where it is wrong."""
    c = at.claim("HC-K1")
    generic = CR._asymptotic_exponent(c, "beta", "err_bound", "oo", False, {"S": 4, "T": 8})
    assert generic == -1.0
    special = CR._asymptotic_exponent(c, "beta", "err_bound", "oo", False, {"S": 1, "T": 4})
    assert special == float(c.asymptotic_exponent("beta", "err_bound", S=1, T=4))
    assert special != -1.0


# ------------------------------------------------------------------------------- short reprs
def test_short_reprs_are_one_line():
    c = build("softmax_retrieval", T=4, beta=10.0)
    for obj in (c, c.model, c.model.cfg, c.task, fit_power_law(BETAS, [1, 0.1, 0.01, 0.001])):
        s = T.short_repr(obj)
        assert "\n" not in s and len(s) < 160 and s.startswith("<"), s
    assert T.short_repr(c.model).startswith("<Transformer width=2 layers=1")
    assert T.short_repr([1, 2]) == "[1, 2]"


# ------------------------------------------------------------------------------- the cache
@pytest.fixture
def counted(monkeypatch):
    """Count the calls of measure.sup_error (the cache must make none on a hit)."""
    import approxtheory.measure as measure

    calls = []
    real = measure.sup_error

    def spy(*a, **k):
        calls.append(k.get("budget"))
        return real(*a, **k)

    monkeypatch.setattr(measure, "sup_error", spy)
    return calls


def _entries(d):
    return sorted((d / "sup_error").glob("*.json"))


def test_a_second_measurement_is_read_from_the_cache(tmp_path, counted):
    m = Measured(tmp_path, budget=16)
    c = build("softmax_retrieval", T=4, beta=10.0)
    r1 = m.sup_error(c)
    r2 = Measured(tmp_path, budget=16).sup_error(build("softmax_retrieval", T=4, beta=10.0))
    assert len(counted) == 1 and len(_entries(tmp_path)) == 1
    assert r2.value == r1.value and np.array_equal(r2.witness, r1.witness)
    assert r2.n_evals == r1.n_evals and r2.by_source == r1.by_source
    assert m.hits == 0 and m.misses == 1


def test_the_key_covers_weights_task_and_settings(tmp_path, counted):
    m = Measured(tmp_path, budget=16)
    c = build("softmax_retrieval", T=4, beta=10.0)
    m.sup_error(c)
    m.sup_error(c, budget=17)  # other search settings
    m.sup_error(c, seed=1)
    c.model.attention(0).v.weight.data.mul_(1.05)  # other weights (the value-gain mutant)
    m.sup_error(c)
    d = build("softmax_retrieval", T=5, beta=10.0)  # another task
    m.sup_error(d)
    m.sup_error(d.model, d.task)  # the same, as model and task
    assert len(counted) == 5 and m.hits == 1


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncate", "edit", "directory", "empty", "huge"],
)
def test_an_unreadable_entry_is_a_miss(tmp_path, counted, damage):
    m = Measured(tmp_path, budget=16)
    c = build("softmax_retrieval", T=4, beta=10.0)
    good = m.sup_error(c).value
    (path,) = _entries(tmp_path)
    text = path.read_text()
    if damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "truncate":
        path.write_text(text[: len(text) // 2])
    elif damage == "edit":
        path.write_text(text.replace(repr(good)[:6], "0.999", 1))
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "empty":
        path.write_text("")
    elif damage == "huge":
        path.write_text(" " * (T.MAX_ENTRY_BYTES + 1))
    r = Measured(tmp_path, budget=16).sup_error(c)
    assert r.value == good and len(counted) == 2


def test_an_unwritable_cache_still_measures(tmp_path, counted):
    """A cache folder that cannot be created (below a file: even root cannot) measures, and the
    summary says that nothing was stored."""
    (tmp_path / "afile").write_text("x")
    m = Measured(tmp_path / "afile" / "cache", budget=16)
    r = m.sup_error(build("softmax_retrieval", T=4, beta=10.0))
    assert math.isfinite(r.value) and m.write_error is not None
    assert "could not be written" in m.summary()
    m.sup_error(build("softmax_retrieval", T=4, beta=10.0))
    assert len(counted) == 2


def test_sup_error_of_does_not_build_on_a_hit(tmp_path, counted, monkeypatch):
    import approxtheory.constructions as constructions

    m = Measured(tmp_path, budget=16)
    knobs = {"T": 4, "beta": 10.0}
    r1 = m.sup_error_of("softmax_retrieval", knobs)

    def mutate(c, name):
        c.model.attention(0).q.weight.data.clamp_(max=1.0)

    r3 = m.sup_error_of("softmax_retrieval", knobs, mutant="beta-dropped", mutate=mutate)
    assert r3.value > 5 * r1.value and len(counted) == 2

    def no_build(*a, **k):
        raise AssertionError("built on a cache hit")

    monkeypatch.setattr(constructions, "build", no_build)
    assert m.sup_error_of("softmax_retrieval", dict(knobs)).value == r1.value
    assert m.sup_error_of("softmax_retrieval", knobs, mutant="beta-dropped", mutate=mutate).value
    assert len(counted) == 2 and m.hits == 2
    with pytest.raises(ConfigError, match="needs mutate"):
        m.sup_error_of("softmax_retrieval", knobs, mutant="x")


def test_nmse_is_cached(tmp_path, monkeypatch):
    import approxtheory.measure as measure

    calls = []
    real = measure.nmse
    monkeypatch.setattr(measure, "nmse", lambda *a, **k: calls.append(1) or real(*a, **k))
    c = build("softmax_retrieval", T=4, beta=10.0)
    m = Measured(tmp_path)
    v = m.nmse(c, n=64)
    assert m.nmse(c, n=64) == v and len(calls) == 1
    m.nmse(c, n=65)
    assert len(calls) == 2


def test_no_cache_measures_every_time(counted):
    m = Measured(None, budget=16)
    c = build("softmax_retrieval", T=4, beta=10.0)
    m.sup_error(c)
    m.sup_error(c)
    assert len(counted) == 2 and "no cache" in repr(m)


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"budget": 0}, "budget must be a positive integer"),
        ({"budget": True}, "budget must be a positive integer"),
        ({"profile": "slow"}, "profile must be one of quick, full"),
        ({"mutant": ""}, "mutant must be a mutant name"),
    ],
)
def test_bad_settings_of_measured(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        Measured(None, **kw)


def test_profiles_set_the_default_budget():
    assert Measured(None).budget == 256 and Measured(None, profile="full").budget == 1024
    assert Measured(None, budget=7, profile="full").budget == 7
