"""The result of a log-log rate fit, without torch: what :func:`approxtheory.measure.fit_rate`
(a bootstrap interval) and :func:`approxtheory.testing.rates.fit_power_law` (a Student-t
interval and a floor test) both return, so that a rate test whose measurements come from the
cache loads no torch."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RateFit"]


@dataclass
class RateFit:
    """log y = intercept + slope · log x, with a confidence interval ``[ci_low, ci_high]`` for
    the slope at ``level`` (from :func:`approxtheory.measure.fit_rate`: a residual bootstrap)."""

    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    level: float
    n_points: int

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the interval (up to float64 round-off, 1e-9 relative)."""
        slack = 1e-9 * max(1.0, abs(value))
        return self.ci_low - slack <= value <= self.ci_high + slack

    def to_dict(self):
        return dict(self.__dict__)
