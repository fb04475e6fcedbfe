"""Rate tests: power-law fits with calibrated intervals, rate assertions and cached measurements.

A rate test measures an error on a grid of a knob (β, 1/ε, T, ...), fits ``log error = a + p ·
log size`` and asserts something about the exponent ``p`` at a confidence level::

    >>> from approxtheory.testing import assert_rate
    >>> betas = [10.0, 100.0, 1000.0, 10000.0]
    >>> fit = assert_rate(betas, [0.6 / b for b in betas], at_most=-1 + 0.05, over="beta")
    >>> round(fit.slope, 3), fit.level
    (-1.0, 0.95)
    >>> assert_rate(betas, [0.50, 0.45, 0.51, 0.47], at_most=-1, over="beta")
    Traceback (most recent call last):
      ...
    approxtheory.testing.RateAssertionError: error ~ beta^-0.003, 95% interval [-0.061, +0.056] ...

**The interval** (:func:`fit_power_law`) is the Student-t interval of the least-squares slope on
log-log axes with the residual variance (``n - 2`` degrees of freedom): exact when the
log-errors are a power law plus independent Gaussian noise, whatever the number of points, so
its coverage is right by construction (a residual bootstrap of three or four points is not: it
cannot see the noise it resamples). Measurements that are an exact power law (a deterministic
construction) give an interval as narrow as float64 round-off.

**Floors** break every power-law fit: an error that levels off at the small-error end (round-off,
a mis-set weight, a search that stops improving) biases the slope towards 0, and no interval
built from the line covers the rate underneath. :func:`fit_power_law` therefore also fits
``log(C · size^p + F)`` with a floor ``F >= 0`` and tests it against the line (an F-test, one
parameter, ``n - 3`` degrees of freedom, so at least four points); a floor that is significant
(at ``floor_alpha``, 5 %) *and* consequential (its exponent lies outside the line's interval)
makes the fit undecidable: :func:`assert_rate` refuses it with :class:`RateUndecidedError`
instead of reporting a wrong exponent.

**Calibration** (:func:`calibrate`): over seeded synthetic grids with known exponents,
multiplicative noise and floors (:func:`synthetic_case`) the interval covers the true exponent
in about 95 % of the decided cases at ``confidence=0.95``; ``tests/test_testing.py`` holds it
within 0.93-0.97.

**Cached measurements** (:class:`Measured`, the ``measured`` fixture of the pytest plugin
:mod:`approxtheory.pytest_plugin`): ``sup_error`` and ``nmse`` results stored on disk under a key
of the model's weights, the task, the search settings and the code (as ``verify``'s cache), so
that an unchanged rate test measures nothing on its second run. A registered construction is
keyed by its name and knobs instead of its weights (:meth:`Measured.sup_error_of`, the weights
are a function of them and of the fingerprinted code), and what a rate test reads from the
catalogue and the constructions (:meth:`Measured.admissible`, :meth:`Measured.assert_claim_rate`)
is cached the same way: a second run reads JSON and loads neither torch nor sympy (this module
imports numpy alone; torch, sympy and the catalogue load where a miss needs them).

The package, by what the code is about: :mod:`~approxtheory.testing.rates` (the fit and
:func:`assert_rate`), :mod:`~approxtheory.testing.claim_rates` (:func:`assert_claim_rate`),
:mod:`~approxtheory.testing.calibration`, :mod:`~approxtheory.testing.digests` (model and task
digests) and :mod:`~approxtheory.testing.measured` (the cache); the public names are
re-exported here, and their ``__module__`` is this package's (what the pytest plugin and
tracebacks name).
"""

from __future__ import annotations

# SYNTHETIC, CACHE_SCHEME, MAX_ENTRY_BYTES: constants of the one-module approxtheory.testing,
# still importable from it (re-exported, not in __all__)
from .calibration import SYNTHETIC as SYNTHETIC
from .calibration import Calibration, calibrate, synthetic_case
from .claim_rates import assert_claim_rate
from .digests import model_digest, task_digest
from .measured import CACHE_SCHEME as CACHE_SCHEME
from .measured import MAX_ENTRY_BYTES as MAX_ENTRY_BYTES
from .measured import PROFILES, Measured
from .rates import (
    FLOOR_ALPHA,
    PowerLawFit,
    RateAssertionError,
    RateUndecidedError,
    assert_rate,
    fit_power_law,
    short_repr,
)

__all__ = [
    "PowerLawFit",
    "fit_power_law",
    "assert_rate",
    "assert_claim_rate",
    "RateAssertionError",
    "RateUndecidedError",
    "Calibration",
    "calibrate",
    "synthetic_case",
    "Measured",
    "model_digest",
    "task_digest",
    "short_repr",
    "PROFILES",
    "FLOOR_ALPHA",
]


# the public classes keep the module path they had before the split (one module
# approxtheory.testing): the pytest plugin recognises the rate errors and a fit by it, and
# tracebacks and doctests print it
for _cls in (PowerLawFit, RateAssertionError, RateUndecidedError, Calibration, Measured):
    _cls.__module__ = __name__
del _cls
