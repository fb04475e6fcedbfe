"""The :class:`Construction` record, the registry and knob validation (private)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import ConfigError

__all__ = ["Construction", "Knob", "REGISTRY", "ESTIMATES", "register", "build", "names",
           "verdict"]

# Float round-off allowed when a bound is compared with a float64 measurement.
ATOL = 1e-12
RTOL = 1e-9


@dataclass(frozen=True)
class Knob:
    type: type
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None   # returns an error message or None
    choices: tuple | None = None


@dataclass
class Construction:
    """Weights that realise a claim, plus what the paper says about their error.

    ``bound_kind`` is ``upper`` (measured sup error must not exceed ``claimed_bound``),
    ``lower`` (a floor the measured error must not beat) or ``exact`` (zero up to round-off).
    """

    name: str
    claim: str
    model: Any
    task: Any
    knobs: dict
    params: int
    params_convention: str
    claimed_bound: float
    bound_kind: str = "upper"
    bound_expr: str = ""
    extra: dict = field(default_factory=dict)
    measure_fn: Callable | None = None

    def measure(self, budget: int = 4096, seed: int = 0, **kw) -> dict:
        """Measure the error (adversarially for sup-norm claims) and give the verdict."""
        if self.measure_fn is not None:
            m = self.measure_fn(self, budget=budget, seed=seed, **kw)
        else:
            from ..measure import sup_error
            r = sup_error(self.model, self.task, budget=budget, seed=seed, **kw)
            m = {"sup_error": r.value, "witness": r.witness.tolist(),
                 "witness_output": np.asarray(r.model_output).tolist(),
                 "witness_target": np.asarray(r.target).tolist(), "n_evals": r.n_evals,
                 "by_source": r.by_source}
        m.setdefault("measured", m["sup_error"])
        m["verdict"] = verdict(m["measured"], self.claimed_bound, self.bound_kind)
        return m

    def report(self, budget: int = 4096, seed: int = 0) -> dict:
        m = self.measure(budget=budget, seed=seed)
        return {"construction": self.name, "claim": self.claim, "knobs": self.knobs,
                "task": self.task.describe(), "params": self.params,
                "params_convention": self.params_convention,
                "claimed_bound": self.claimed_bound, "bound_kind": self.bound_kind,
                "bound_expr": self.bound_expr, "budget": budget, "seed": seed,
                **m, "extra": self.extra}


def verdict(measured: float, bound: float, kind: str) -> str:
    slack = ATOL + RTOL * abs(bound)
    if kind == "lower":
        return "within-bound" if measured >= bound - slack else "refuted"
    return "within-bound" if measured <= bound + slack else "refuted"


REGISTRY: dict[str, tuple[Callable, dict[str, Knob], str, str]] = {}
# name -> estimator(**knob values) -> bytes, or {"bytes": ..., "seconds": ...}: the memory the
# build needs, checked (approxtheory.resources.require) before building
ESTIMATES: dict[str, Callable[..., Any]] = {}


def register(name: str, claim: str, summary: str, estimate: Callable | None = None,
             **knobs: Knob):
    """Register a construction; ``estimate(**knobs)`` (optional) gives the bytes its build needs,
    so that :func:`build` refuses oversized knobs before allocating."""
    def deco(fn):
        REGISTRY[name] = (fn, knobs, claim, summary)
        if estimate is not None:
            ESTIMATES[name] = estimate
        else:
            ESTIMATES.pop(name, None)
        fn.construction_name = name
        return fn
    return deco


def names() -> list[str]:
    return list(REGISTRY)


def _coerce(name: str, knob: Knob, value):
    if value is None:
        return knob.default
    if isinstance(value, (bool, np.bool_)) and knob.type is not bool:
        # bool is an int subclass: True would silently become 1
        raise ConfigError(f"{name} must be of type {knob.type.__name__}, not a boolean "
                          f"(got {value!r})")
    if knob.type is bool and not isinstance(value, (bool, np.bool_, str)):
        raise ConfigError(f"{name} must be true or false (got {value!r})")
    try:
        if knob.type is bool and isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            v = value.lower() in ("true", "1", "yes")
        elif knob.type is int and isinstance(value, float) and not value.is_integer():
            raise ValueError
        else:
            v = knob.type(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be of type {knob.type.__name__} (got {value!r})") from None
    if isinstance(v, float) and not np.isfinite(v):
        raise ConfigError(f"{name} must be finite (got {value!r})")
    if knob.choices is not None and v not in knob.choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(str, knob.choices))} "
                          f"(got {v!r})")
    if knob.check is not None:
        msg = knob.check(v)
        if msg:
            raise ConfigError(f"{name} {msg} (got {name}={v})")
    return v


def build(name: str, **knobs) -> Construction:
    """Build the construction ``name`` with the given knobs (defaults for the rest)."""
    if name not in REGISTRY:
        import difflib
        close = difflib.get_close_matches(name, REGISTRY, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown construction {name!r}{hint} (known: {', '.join(REGISTRY)})")
    fn, spec, _claim, _summary = REGISTRY[name]
    unknown = set(knobs) - set(spec)
    if unknown:
        raise ConfigError(f"{name} has no knob {', '.join(sorted(unknown))}; its knobs are: "
                          f"{', '.join(spec) or 'none'}")
    values = {k: _coerce(k, spec[k], knobs.get(k)) for k in spec}
    estimate = ESTIMATES.get(name)
    if estimate is not None:
        from ..resources import require
        e = estimate(**values)
        e = e if isinstance(e, dict) else {"bytes": e}
        require(bytes=e.get("bytes", 0), seconds=e.get("seconds"),
                what=f"building {name} ({', '.join(f'{k}={v}' for k, v in values.items())})")
    c = fn(**values)
    c.knobs = values
    return c


def positive(v):
    return None if v > 0 else "must be positive"


def at_least(n):
    return lambda v: None if v >= n else f"must be >= {n}"
