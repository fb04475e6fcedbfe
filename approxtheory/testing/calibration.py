"""The interval's coverage on seeded synthetic grids: :func:`synthetic_case`, :func:`calibrate`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from .rates import _confidence, fit_power_law

# ------------------------------------------------------------------------------- calibration
#: the synthetic family of :func:`synthetic_case`
SYNTHETIC: dict[str, Any] = {
    "points": (3, 4, 5, 6, 8, 10, 12),
    "decades": (2.0, 4.0),
    "exponent": (0.5, 3.0),
    "noise": (0.0, 0.01, 0.03, 0.1),
    "floor_share": 0.5,
    "floor_decades": (-3.0, 2.0),
}


def synthetic_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, dict]:
    """One synthetic rate measurement with a known exponent: (sizes, errors, exponent, info).

    ``n`` sizes (3 to 12) log-spaced over 2 to 4 decades; the exponent ``p`` uniform in
    ±[0.5, 3]; errors ``(C · size^p + F) · exp(σ Z)`` with σ in {0, 1 %, 3 %, 10 %} and, in
    half of the cases, a floor ``F`` from 10⁻³ to 10² times the smallest noiseless error (at
    most a tenth of the largest: the rate is visible at the large-error end)."""
    s = SYNTHETIC
    n = int(rng.choice(s["points"]))
    sizes = 10 ** rng.uniform(0, 2) * np.logspace(0, rng.uniform(*s["decades"]), n)
    p = float(rng.uniform(*s["exponent"]) * rng.choice([-1.0, 1.0]))
    sigma = float(rng.choice(s["noise"]))
    pure = 10 ** rng.uniform(-2, 2) * sizes**p
    has_floor = bool(rng.random() < s["floor_share"])
    F = 0.0
    if has_floor:
        F = min(10 ** rng.uniform(*s["floor_decades"]) * pure.min(), pure.max() / 10)
    errors = (pure + F) * np.exp(sigma * rng.standard_normal(n))
    return sizes, errors, p, {"n": n, "noise": sigma, "floor": F, "has_floor": has_floor}


@dataclass(frozen=True)
class Calibration:
    """The outcome of :func:`calibrate`: ``coverage`` is the share of decided cases whose
    interval holds the true exponent; ``by_kind`` the same for the cases without a floor
    (``power law``) and with one (``floor``): (cases, refused, covered)."""

    confidence: float
    n_cases: int
    n_decided: int
    n_covered: int
    n_refused: int
    by_kind: dict = field(default_factory=dict)

    @property
    def coverage(self) -> float:
        return self.n_covered / self.n_decided if self.n_decided else math.nan


def calibrate(n_cases: int = 4000, *, confidence: float = 0.95, seed: int = 0) -> Calibration:
    """The interval's coverage over ``n_cases`` seeded :func:`synthetic_case` s: each is fitted
    by :func:`fit_power_law`; a fit the floor test refuses is counted as refused, the others as
    covered when ``ci_low <= exponent <= ci_high``. Deterministic for a seed (a local
    generator; the global numpy state is not touched)."""
    if isinstance(n_cases, bool) or not isinstance(n_cases, Integral) or n_cases < 1:
        raise InvalidValueError(f"n_cases must be a positive integer (got {n_cases!r})")
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise InvalidValueError(f"seed must be an integer >= 0 (got {seed!r})")
    confidence = _confidence(confidence)
    rng = np.random.default_rng(seed)
    counts = {"power law": [0, 0, 0], "floor": [0, 0, 0]}
    for _ in range(int(n_cases)):
        sizes, errors, p, info = synthetic_case(rng)
        fit = fit_power_law(sizes, errors, confidence=confidence)
        row = counts["floor" if info["has_floor"] else "power law"]
        row[0] += 1
        if fit.floor:
            row[1] += 1
        elif fit.ci_low <= p <= fit.ci_high:
            row[2] += 1
    cases = sum(r[0] for r in counts.values())
    refused = sum(r[1] for r in counts.values())
    return Calibration(
        confidence=confidence,
        n_cases=cases,
        n_decided=cases - refused,
        n_covered=sum(r[2] for r in counts.values()),
        n_refused=refused,
        by_kind={k: tuple(v) for k, v in counts.items()},
    )
