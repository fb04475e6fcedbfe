"""The fields every log-log rate fit has, without torch: the base of
:class:`approxtheory.measure.RateFit` (a bootstrap interval) and of
:class:`approxtheory.testing.rates.PowerLawFit` (a Student-t interval and a floor test), so that
a rate test whose measurements come from the cache loads no torch. Neither fit is an instance of
the other."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SlopeFit"]


@dataclass
class SlopeFit:
    """log y = intercept + slope · log x, with an interval ``[ci_low, ci_high]`` for the slope
    at confidence ``level``, from ``n_points`` points."""

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
