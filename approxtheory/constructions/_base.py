"""The :class:`Construction` record, the registry and knob validation (private: the package
re-exports the public names, listed in its ``__all__``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ..errors import ConfigError, RegimeError, did_you_mean

# Float round-off allowed when a bound is compared with a measurement: it follows the model's
# dtype (``tolerance``); these are the float64 values, kept for callers that import them.
ATOL = 1e-12
RTOL = 1e-9
_ULPS = 4096  # round-off budget in units of the dtype's machine epsilon

VERDICTS = ("within-bound", "refuted", "vacuous-bound", "below-tolerance")


@dataclass(frozen=True, kw_only=True)
class Knob:
    """One knob of a construction: its type, default, help text and the values it accepts.

    ``low``/``high`` bound the value (inclusive; None: unbounded on that side); ``exclude_low``/
    ``exclude_high`` make an end open (``low=0, exclude_low=True``: positive). ``log`` says the
    knob is naturally drawn on a log scale (an inverse temperature, a precision); such a knob has
    ``low >= 0``. ``choices`` lists the allowed values of a string knob. :func:`build` enforces
    all of these; property-based strategies read them to draw knob values.
    """

    type: type
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    exclude_low: bool = False
    exclude_high: bool = False
    log: bool = False
    choices: tuple | None = None

    def __post_init__(self):
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ConfigError(f"knob range is empty: low={self.low} > high={self.high}")
        if self.log and (self.low is None or self.low < 0):
            raise ConfigError(f"a log-scale knob needs low >= 0 (got low={self.low})")
        if self.choices is not None and (self.low is not None or self.high is not None):
            raise ConfigError("a knob has either choices or a range, not both")

    def range_error(self, v) -> str | None:
        """Why ``v`` is outside the knob's range (e.g. ``must be positive``), or None."""
        lo, hi = self.low, self.high
        below = lo is not None and (v <= lo if self.exclude_low else v < lo)
        above = hi is not None and (v >= hi if self.exclude_high else v > hi)
        if not (below or above):
            return None
        if hi is None:
            if lo == 0 and self.exclude_low:
                return "must be positive"
            return f"must be {'>' if self.exclude_low else '>='} {_num(lo)}"
        if lo is None:
            return f"must be {'<' if self.exclude_high else '<='} {_num(hi)}"
        return (
            f"must be in {'(' if self.exclude_low else '['}{_num(lo)}, {_num(hi)}"
            f"{')' if self.exclude_high else ']'}"
        )


def positive_log_knob(default: float, help: str = "softmax inverse temperature β") -> Knob:
    """A positive real knob drawn on a log scale (an inverse temperature β, a logit bound)."""
    return Knob(type=float, default=default, help=help, low=0, exclude_low=True, log=True)


def seq_len_knob(default: int, low: int = 1) -> Knob:
    """The sequence length T: a whole number from ``low`` (a construction that needs a few
    tokens, e.g. an induction head, raises it)."""
    return Knob(type=int, default=default, help="sequence length", low=low)


def unit_knob(default: float, help: str, log: bool = False) -> Knob:
    """A real knob in (0, 1] (a precision ε, a decay ratio), on a log scale with ``log``."""
    return Knob(type=float, default=default, help=help, low=0, exclude_low=True, high=1, log=log)


def _num(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


#: the structured bracket's special routes (:mod:`approxtheory.bounds`), in words; any other
#: structured bracket is the softmax-over-box one
_STRUCTURED_ROUTES = {
    "relu": "separable ReLU read-out: exact per-group ranges, argmax token by "
    "symmetry class, 1-D pieces of its value",
    "kth": "two-layer second largest: exact softmax deficits per layer, the case "
    "split on which token is the largest, 1-D pieces of x_(2)",
    "pairwise": "two-layer pairwise max on the unit sphere: softmax deficits per "
    "layer and head, slacks of the composed weights, closed form",
}


@dataclass(kw_only=True)
class Construction:
    """Weights that realise a claim, plus what the paper says about their error (built with
    keywords).

    ``bound_kind`` is ``upper`` (measured sup error must not exceed ``claimed_bound``),
    ``lower`` (a floor the measured error must not beat) or ``exact`` (zero up to round-off).
    ``params`` counts parameters as ``params_convention`` says; ``knobs`` are filled in by
    :func:`build`; ``measure_fn(construction, budget=, seed=, **kw)`` replaces the default
    adversarial sup-error search where given.
    """

    name: str
    claim: str
    model: Any
    task: Any
    params: int
    params_convention: str
    claimed_bound: float
    bound_kind: str = "upper"
    bound_expr: str = ""
    knobs: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    measure_fn: Callable | None = None

    def __post_init__(self):
        if self.bound_kind not in ("upper", "lower", "exact"):
            raise ConfigError(f"bound kind must be upper, lower or exact (got {self.bound_kind!r})")

    def __repr__(self) -> str:
        """One line: name, claim, task and sizes, parameters, the claimed bound, the knobs (the
        model and ``extra`` are left out: ``c.model`` / ``c.extra`` show them)."""
        task = self.task
        try:
            desc = task.describe()
            shape = ", ".join(f"{k}={desc[k]}" for k in ("T", "d") if k in desc)
        except Exception:  # noqa: BLE001 - a repr must not fail on a user's task object
            shape = ""
        knobs = ", ".join(f"{k}={_num(v)}" for k, v in self.knobs.items())
        return (
            f"Construction({self.name!r}, claim={self.claim!r}, "
            f"task={type(task).__name__}({shape}), params={self.params}, "
            f"bound={_num(float(self.claimed_bound))} ({self.bound_kind}), knobs={{{knobs}}})"
        )

    def measure(
        self,
        budget: int = 4096,
        seed: int = 0,
        *,
        upper: bool = False,
        upper_time: float = 10.0,
        **kw,
    ) -> dict:
        """Measure the error (adversarially for sup-norm claims) and give the verdict.

        The result always has the certified-bracket fields of ``construct --json``:
        ``sup_error_upper`` and ``sup_error_upper_reason`` (and ``certified`` where the bracket
        is at or below an upper-kind claimed bound), computed by :meth:`certify` -- the function
        :meth:`report` and the command line call -- when ``upper`` is true; with ``upper``
        false (the default: the bracket costs a branch-and-bound) ``sup_error_upper`` is None
        and the reason says ``not requested``. ``upper_time`` is :meth:`certify`'s
        ``time_limit``. Other keywords go to the search (:func:`approxtheory.measure.sup_error`
        or the construction's ``measure_fn``).
        """
        if not isinstance(upper, (bool, np.bool_)):
            raise ConfigError(f"upper must be True or False (got {upper!r})")
        if self.measure_fn is not None:
            m = self.measure_fn(self, budget=budget, seed=seed, **kw)
        else:
            from ..measure import sup_error

            r = sup_error(self.model, self.task, budget=budget, seed=seed, **kw)
            # the search's result, its witness's output and target named as witness_*
            named = {"model_output": "witness_output", "target": "witness_target"}
            m = {named.get(k, k): v for k, v in r.to_dict().items() if k != "budget"}
        m.setdefault("measured", m["sup_error"])
        dtype = getattr(getattr(self.model, "cfg", None), "dtype", "float64")
        target = np.asarray(m.get("witness_target", 1.0), dtype=np.float64)
        scale = (
            float(np.nanmax(np.abs(target))) if target.size and np.isfinite(target).any() else 1.0
        )
        atol, rtol = tolerance(dtype, scale)
        m["tolerance"] = {"dtype": dtype, "atol": atol, "rtol": rtol}
        m["verdict"] = verdict(m["measured"], self.claimed_bound, self.bound_kind, dtype, scale)
        m.update(
            self.certify(time_limit=upper_time, witness=m.get("witness"))
            if upper
            else {"sup_error_upper": None, "sup_error_upper_reason": "not requested"}
        )
        return m

    def certify(self, time_limit: float = 10.0, witness=None) -> dict:
        """A certified upper bracket of the sup error over the whole input box
        (:func:`approxtheory.bounds.upper_bracket`), where feasible. One attention-only layer of
        softmax retrieval heads against an affine generalized retrieval (softmax_retrieval,
        hc_k1, hc_k1_synthetic) gets the structured bracket at any T
        (:mod:`approxtheory.bracket_softmax`: exact softmax-over-box per head, a piece budget,
        no clock), and so does a separable ReLU read-out against a max (hc_l9,
        :mod:`approxtheory.bounds.relu`) and InfoFlow's two-layer second-largest construction
        (if_second_largest, :mod:`approxtheory.bounds.kth`) and, on the unit sphere, the two-layer
        pairwise-max construction (if_pairwise_max, :mod:`approxtheory.bounds.pairwise`); other
        box domains with T <= 16 and
        d <= 2 the branch-and-bound (beyond that it does not close in seconds). Returns
        ``sup_error_upper`` (None with ``sup_error_upper_reason`` where not computed),
        ``bracket`` (found, certified, method, work, whether reproducible) and, when the
        bracket is at or below an upper-kind claimed bound, ``certified`` saying what was
        certified and on what domain.

        A one-hot domain (IF-K3) is certified by exhaustive enumeration when its d^T inputs
        fit the enumeration budget; above it the result has no bound, a reason naming the
        budget and ``bracket.frontier_T`` (the largest T certified at this d). A causal
        per-token head (TO-X2, TO-C1) is bracketed by the branch-and-bound for T·d <= 64."""
        from ..bounds import bracket_reach

        T, d = self.task.T, self.task.d
        route, why = bracket_reach(self.model, self.task)
        if route is None:
            return self._unreachable(why)
        pts = None if witness is None else np.asarray(witness, dtype=np.float64)[None]
        if pts is not None and (pts.shape[1:] != (T, d) or not np.isfinite(pts).all()):
            pts = None
        b, how = self._bracket(route, pts, time_limit)
        sound = b.upper is not None and math.isfinite(b.upper) and not b.unsound_input
        out: dict[str, Any] = {
            "sup_error_upper": b.upper,
            "sup_error_upper_reason": how if sound else (b.reason or "no finite sound bound"),
            "bracket": {
                "found": b.lower,
                "certified": b.upper,
                "method": b.method,
                "stop": b.stop,
                "work": b.boxes if route in ("structured", "enumeration") else b.splits,
                "seconds": round(b.seconds, 3),
                "reproducible": b.reproducible,
                "unsound_input": b.unsound_input,
            },
        }
        if sound and b.upper is not None and self.bound_kind in ("upper", "exact"):
            certified = self._certified(b, route)
            if certified is not None:
                out["certified"] = certified
        return out

    def _unreachable(self, why: str) -> dict:
        """:meth:`certify`'s record where no bracket reaches the construction: the reason and, on
        a one-hot domain, the enumeration budget's frontier."""
        out_none: dict[str, Any] = {"sup_error_upper": None, "sup_error_upper_reason": why}
        if self.task.domain == "onehot":
            from ..bounds.finite import MAX_POINTS, frontier_T

            out_none["bracket"] = {
                "method": "enumeration",
                "stop": "budget",
                "frontier_T": frontier_T(self.task.d, MAX_POINTS),
            }
        return out_none

    def _bracket(self, route: str, pts, time_limit: float):
        """The upper bracket by ``route`` (enumeration, structured or branch-and-bound), seeded
        with the points ``pts``, and how it was found, in words (the work done, never the wall
        seconds: a row's text is the same on every run; the seconds are in ``bracket``)."""
        from ..bounds import upper_bracket

        if route == "enumeration":
            b = upper_bracket(self.model, self.task, points=pts)
            return b, (
                f"exhaustive enumeration of the {self.task.domain} domain: {b.boxes} inputs "
                "(exact up to the float64 evaluation's round-off)"
            )
        if route == "structured":
            b = upper_bracket(self.model, self.task, method="structured", points=pts)
            heads = (b.extra or {}).get("heads") or [{}]
            kind = _STRUCTURED_ROUTES.get(
                heads[0].get("route"), "exact softmax-over-box per head, symmetry over positions"
            )
            return b, (
                f"structured bracket ({kind}): {b.boxes} piece evaluations, stopped: {b.stop}"
            )
        b = upper_bracket(self.model, self.task, time_limit=time_limit, points=pts)
        return b, (
            f"bound propagation ({b.method}) with branch-and-bound: {b.splits} splits, "
            f"{b.seconds:.1f} s, stopped: {b.stop}"
        )

    def _certified(self, b, route: str) -> str | None:
        """What a sound bracket ``b`` certifies, when it is at or below the claimed bound (up to
        round-off), else None."""
        T, d = self.task.T, self.task.d
        atol, rtol = tolerance(getattr(getattr(self.model, "cfg", None), "dtype", "float64"))
        if not b.upper <= self.claimed_bound + atol + rtol * abs(self.claimed_bound):
            return None
        where = (
            f"all {d}^{T} one-hot sequences"
            if route == "enumeration"
            else f"the unit sphere (T = {T} unit-norm tokens in R^{d})"
            if self.task.domain == "sphere"
            else f"the whole box [{self.task.lo:g}, {self.task.hi:g}]^({T}x{d})"
        )
        return (
            f"sup over {where} of |model - target| <= "
            f"{b.upper:.6g} <= claimed bound {self.claimed_bound:.6g}"
            + ("" if b.reproducible else " (stopped by the time safety net)")
        )

    def report(
        self, budget: int = 4096, seed: int = 0, upper: bool = True, upper_time: float = 10.0
    ) -> dict:
        """Measure and (when ``upper``) certify the construction: the ``construct --json`` record
        with claim, parameters, sup error and witness, the certified upper bracket (or why not),
        the claimed bound and the verdict.
        """
        m = self.measure(budget=budget, seed=seed, upper=upper, upper_time=upper_time)
        return {
            "construction": self.name,
            "claim": self.claim,
            "knobs": self.knobs,
            "task": self.task.describe(),
            "params": self.params,
            "params_convention": self.params_convention,
            "claimed_bound": self.claimed_bound,
            "bound_kind": self.bound_kind,
            "bound_expr": self.bound_expr,
            "budget": budget,
            "seed": seed,
            **m,
            "extra": self.extra,
        }


def claimed_upper(
    name: str,
    claim_id: str,
    *,
    model: Any,
    task: Any,
    params: int,
    params_convention: str,
    at: dict,
    extra: dict,
) -> Construction:
    """A construction whose claimed bound is an upper one: the catalogue's ``err_bound`` of
    claim ``claim_id`` evaluated ``at`` the given symbol values (the expression, as sympy
    writes it, is the bound's text)."""
    from ..catalogue import claim

    cl = claim(claim_id)
    return Construction(
        name=name,
        claim=claim_id,
        model=model,
        task=task,
        params=params,
        params_convention=params_convention,
        claimed_bound=formula_value(cl, "err_bound", **at),
        bound_kind="upper",
        bound_expr=sp.sstr(cl.expr("err_bound")),
        extra=extra,
    )


def nonzero_weights(module) -> int:
    """How many parameters of a torch module (a read-out) are not zero."""
    return int(sum((p != 0).sum() for p in module.parameters()))


def tolerance(dtype: str = "float64", scale: float = 1.0) -> tuple[float, float]:
    """(absolute, relative) round-off allowed when a measurement in ``dtype`` is compared with a
    bound; the absolute part scales with the size of the outputs (``scale``). float64 gives
    (1e-12, 1e-9) for outputs of size <= 1; float32 about (4.9e-4, 4.9e-4)."""
    if dtype not in ("float64", "float32"):
        raise ConfigError(f"dtype must be float64 or float32 (got {dtype!r})")
    eps = float(np.finfo(dtype).eps)
    scale = max(1.0, abs(float(scale))) if np.isfinite(scale) else 1.0
    return max(ATOL, _ULPS * eps) * scale, max(RTOL, _ULPS * eps)


def formula_value(c, expr: str, /, **values) -> float:
    """Claim ``c``'s expression ``expr`` at ``values`` as a float: ``c.evaluate_float`` where
    the claim's regime admits the values, and the formula's value all the same where it does
    not. A construction is built wherever its own requirements hold; whether the claim applies
    at a cell is its check's to decide, so a claim with a narrower regime never stops a build."""
    try:
        return c.evaluate_float(expr, **values)
    except RegimeError:
        return dataclasses.replace(c, regime=()).evaluate_float(expr, **values)


def verdict(
    measured: float, bound: float, kind: str, dtype: str = "float64", scale: float = 1.0
) -> str:
    """Compare a measured error with a bound of kind ``upper``, ``lower`` or ``exact``.

    * ``refuted``: the measurement violates the bound beyond round-off, or is NaN/inf (a model
      whose output is NaN is a failure, never "within" anything);
    * ``vacuous-bound``: the bound says nothing (infinite or NaN; a lower bound <= 0);
    * ``below-tolerance``: an upper bound smaller than the dtype's round-off, met by the
      measurement but not resolvable at this precision;
    * ``within-bound`` otherwise.
    """
    if kind not in ("upper", "lower", "exact"):
        raise ConfigError(f"bound kind must be upper, lower or exact (got {kind!r})")
    measured, bound = float(measured), float(bound)
    if not np.isfinite(measured):
        return "refuted"
    if not np.isfinite(bound) or (kind == "lower" and bound <= 0):
        return "vacuous-bound"
    atol, rtol = tolerance(dtype, scale)
    slack = atol + rtol * abs(bound)
    if kind == "lower":
        return "within-bound" if measured >= bound - slack else "refuted"
    if measured > bound + slack:
        return "refuted"
    if kind == "upper" and bound < atol:
        return "below-tolerance"
    return "within-bound"


@dataclass(frozen=True, kw_only=True)
class Requirement:
    """A constraint between knobs that no single knob's range can say (``k < T/2``).

    ``holds`` is called with the knobs it names as keywords (its parameter names are knob
    names) and returns whether the values are allowed; ``message`` says what is required and
    why. :func:`build` refuses values that break it with a ConfigError holding ``message`` and
    the values; :func:`approxtheory.strategies.construction_knobs` draws only values that keep
    it (breaking draws fall back to the knobs' defaults).
    """

    message: str
    holds: Callable[..., bool]

    @property
    def knob_names(self) -> tuple[str, ...]:
        """The knobs the requirement reads, in the order ``holds`` takes them."""
        import inspect

        return tuple(inspect.signature(self.holds).parameters)

    def check(self, values: dict) -> str | None:
        """Why ``values`` break the requirement (the message and the values read), or None."""
        names = self.knob_names
        if self.holds(**{k: values[k] for k in names}):
            return None
        return f"{self.message} (got {', '.join(f'{k}={values[k]}' for k in names)})"


@dataclass(frozen=True, kw_only=True)
class Registered:
    """A registered construction: ``build(**knob values) -> Construction``, its knobs, the claim
    it realises, a one-line summary, the :class:`Requirement` s between its knobs and,
    optionally, ``estimate(**knob values)``: the bytes (or ``{"bytes": ..., "seconds": ...}``)
    its build needs, checked before building."""

    name: str
    build: Callable[..., Construction]
    knobs: dict[str, Knob]
    claim: str
    summary: str
    estimate: Callable[..., Any] | None = None
    requires: tuple[Requirement, ...] = ()


REGISTRY: dict[str, Registered] = {}


def register(
    name: str,
    claim: str,
    summary: str,
    estimate: Callable | None = None,
    requires: tuple[Requirement, ...] = (),
    **knobs: Knob,
):
    """Register a construction; ``estimate(**knobs)`` (optional) gives the bytes its build needs,
    so that :func:`build` refuses oversized knobs before allocating; ``requires`` lists the
    constraints between knobs (:class:`Requirement`), checked by :func:`build`."""
    for k, v in knobs.items():
        if not isinstance(v, Knob):
            raise ConfigError(f"construction {name} knob {k} must be a Knob (got {v!r})")
    for r in requires:
        if not isinstance(r, Requirement) or not set(r.knob_names) <= set(knobs):
            raise ConfigError(f"construction {name}: {r!r} must be a Requirement on its knobs")

    def deco(fn):
        REGISTRY[name] = Registered(
            name=name,
            build=fn,
            knobs=knobs,
            claim=claim,
            summary=summary,
            estimate=estimate,
            requires=tuple(requires),
        )
        fn.construction_name = name
        return fn

    return deco


def names() -> list[str]:
    """Names of the registered constructions, in registration order."""
    return list(REGISTRY)


def _coerce(name: str, knob: Knob, value):
    if value is None:
        return knob.default
    if isinstance(value, (bool, np.bool_)) and knob.type is not bool:
        # bool is an int subclass: True would silently become 1
        raise ConfigError(
            f"{name} must be of type {knob.type.__name__}, not a boolean (got {value!r})"
        )
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
        raise ConfigError(f"{name} must be one of {', '.join(map(str, knob.choices))} (got {v!r})")
    msg = knob.range_error(v)
    if msg:
        raise ConfigError(f"{name} {msg} (got {name}={v})")
    return v


def build(name: str, /, **knobs) -> Construction:
    """Build the construction ``name`` with the given knobs (defaults for the rest)."""
    if name not in REGISTRY:
        raise ConfigError(
            f"unknown construction {name!r}{did_you_mean(name, REGISTRY)} "
            f"(known: {', '.join(REGISTRY)})"
        )
    entry = REGISTRY[name]
    spec = entry.knobs
    unknown = set(knobs) - set(spec)
    if unknown:
        raise ConfigError(
            f"{name} has no knob {', '.join(sorted(unknown))}; its knobs are: "
            f"{', '.join(spec) or 'none'}"
        )
    values = {k: _coerce(k, spec[k], knobs.get(k)) for k in spec}
    for req in entry.requires:
        why = req.check(values)
        if why:
            raise ConfigError(why)
    if entry.estimate is not None:
        from ..resources import require

        e = entry.estimate(**values)
        e = e if isinstance(e, dict) else {"bytes": e}
        require(
            bytes=e.get("bytes", 0),
            seconds=e.get("seconds"),
            what=f"building {name} ({', '.join(f'{k}={v}' for k, v in values.items())})",
        )
    c = entry.build(**values)
    c.knobs = values
    return c
