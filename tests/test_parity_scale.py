"""Export parity is judged relative to the output's scale: an absolute 1e-12 would fail a model
whose outputs are 1e10 on float64 round-off alone, and a real mismatch must still fail."""

import math

from approxtheory.interop_targets import ParityReport


def _report(diff, scale, dtype="float64", tol=1e-12, **kw):
    return ParityReport(
        target="hf",
        architecture="test",
        dtype=dtype,
        tolerance=tol,
        max_abs_diff_worst=None,
        max_abs_diff_random=diff,
        n_worst=0,
        n_random=8,
        seed=0,
        outside=[],
        output_scale=scale,
        **kw,
    )


def test_round_off_of_large_outputs_passes():
    # float64 round-off of outputs near 1e10: a few ulps of 1e10 is about 1e-6
    assert _report(4e-6, 1e10).passed
    assert _report(4e-6, 1e10).allowed == 1e-12 * 1e10


def test_a_real_mismatch_of_large_outputs_fails():
    assert not _report(1e-1, 1e10).passed  # 1e-11 relative: far above float64's precision


def test_small_outputs_keep_the_absolute_tolerance():
    assert _report(5e-13, 1e-3).passed and not _report(5e-12, 1e-3).passed
    assert _report(0.0, 0.0).allowed == 1e-12


def test_a_non_finite_output_never_passes():
    assert not _report(0.0, math.inf).passed and not _report(math.nan, 1.0).passed


def test_the_sup_error_comparison_is_relative_too():
    ok = _report(0.0, 1e10, sup_error=5e9, sup_error_target=5e9 + 1e-3)
    bad = _report(0.0, 1e10, sup_error=5e9, sup_error_target=5e9 + 1.0)
    assert ok.passed and not bad.passed
    assert ok.to_dict()["allowed"] == ok.allowed
