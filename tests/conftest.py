import os

import pytest
from hypothesis import HealthCheck, settings

# `CI=true` makes Hypothesis load its built-in "ci" profile; we only register "dev" and load it
# when not on CI (or when HYPOTHESIS_PROFILE names another profile).
settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):
    settings.load_profile("dev")


@pytest.fixture
def fake_check(monkeypatch):
    """Register throwaway claim checks, ``make(cid, verdict_fn, mutants=None)`` (a check of that
    id already registered is restored afterwards, a new one removed)."""
    from approxtheory.proofs_check import CHECKS, MUTANTS, _core

    added = []

    def make(cid, verdict_fn, mutants=None):
        monkeypatch.setitem(CHECKS, cid, None)
        del CHECKS[cid]
        _core.check(cid, mutants=mutants)(verdict_fn)
        added.append(cid)
        return CHECKS[cid]

    yield make
    for cid in added:
        CHECKS.pop(cid, None)
        MUTANTS.pop(cid, None)


@pytest.fixture
def fewer_boots(monkeypatch):
    """fit_rate with 300 bootstrap draws instead of 2000 (the criteria's intervals on exact power
    laws are points either way; the noisy cases stay far from their thresholds)."""
    import functools

    from approxtheory import measure

    monkeypatch.setattr(measure, "fit_rate", functools.partial(measure.fit_rate, n_boot=300))
