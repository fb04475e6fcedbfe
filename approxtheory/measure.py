"""Measurements: adversarial sup-norm error, NMSE, log-log rate fits with bootstrap intervals.

Example::

    >>> from approxtheory.constructions import build
    >>> from approxtheory.measure import sup_error
    >>> c = build("softmax_retrieval", T=4, beta=100.0)
    >>> r = sup_error(c.model, c.task, budget=2000, seed=0)
    >>> r.value <= c.claimed_bound
    True

``sup_error`` combines (1) random samples, (2) the task's structured inputs (vertices, faces,
near-ties, all-equal blocks) and (3) local maximisation of the error from the worst starts by
projected gradient ascent (Adam on the input, projected back onto the domain after each step). It
returns the estimate *and the worst input found* (the witness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import sympy as sp
import torch

from .errors import ConfigError

__all__ = ["SupErrorResult", "sup_error", "errors", "nmse", "RateFit", "fit_rate",
           "compare_exponent"]


@dataclass
class SupErrorResult:
    value: float                  # the largest error found: max over outputs of |model - target|
    witness: np.ndarray           # the input (T, d) that attains it
    model_output: Any
    target: Any
    n_evals: int                  # forward evaluations (sequences) spent
    by_source: dict = field(default_factory=dict)   # best error per search stage
    budget: int = 0

    def to_dict(self) -> dict:
        return {"sup_error": self.value, "witness": self.witness.tolist(),
                "model_output": np.asarray(self.model_output).tolist(),
                "target": np.asarray(self.target).tolist(), "n_evals": self.n_evals,
                "by_source": self.by_source, "budget": self.budget}


def _err_per_sample(model, task, X: torch.Tensor) -> torch.Tensor:
    """ℓ∞ error per sequence, shape (B,)."""
    out = model(X)
    y = task.target(X)
    if out.dim() == 3 and out.shape[-1] == 1:
        out = out[..., 0]
    if out.dim() == 2 and y.dim() == 1 and out.shape[-1] == 1:
        out = out[:, 0]
    if out.shape != y.shape:
        raise ConfigError(f"model output shape {tuple(out.shape)} does not match the task's "
                          f"target shape {tuple(y.shape)}")
    e = (out - y).abs()
    if e.dim() == 1:
        return e
    return torch.nan_to_num(e, nan=0.0).flatten(1).amax(-1)   # skip NaN rows (no target)


def errors(model, task, X, batch: int = 4096) -> np.ndarray:
    """ℓ∞ error of each input sequence (no gradient)."""
    X = torch.as_tensor(np.asarray(X), dtype=torch.float64)
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch):
            out.append(_err_per_sample(model, task, X[i:i + batch]))
    return torch.cat(out).numpy() if out else np.zeros(0)


def sup_error(model, task, budget: int = 4096, seed: int = 0, local_starts: int = 8,
              local_steps: int = 60, lr: float | None = None, include_structured: bool = True,
              batch: int = 4096) -> SupErrorResult:
    """Estimate ``sup_X ||model(X) - task(X)||_∞`` over the task's domain.

    ``budget`` random sequences, then the structured inputs, then ``local_starts`` runs of projected
    gradient ascent of ``local_steps`` steps from the worst inputs found (plus small random
    perturbations of them). Deterministic for a given seed.
    """
    if budget < 1:
        raise ConfigError(f"budget must be >= 1 (got {budget})")
    rng = np.random.default_rng(seed)
    model.eval()
    n_evals = 0
    pool = []            # (error, X)
    by_source = {}

    def consider(Xs, source):
        nonlocal n_evals
        e = errors(model, task, Xs, batch=batch)
        n_evals += len(Xs)
        if len(e):
            i = int(np.argmax(e))
            by_source[source] = max(by_source.get(source, 0.0), float(e[i]))
            k = min(local_starts, len(e))
            for j in np.argsort(-e)[:k]:
                pool.append((float(e[j]), np.array(Xs[j])))

    consider(task.sample(budget, rng), "random")
    if include_structured:
        consider(task.structured(rng), "structured")
    pool.sort(key=lambda p: -p[0])
    starts = [p[1] for p in pool[:local_starts]]
    # also jitter the best start: sup errors of softmax heads sit at near-ties
    if starts:
        scale = 0.02 * (task.hi - task.lo)
        starts += [task.project(starts[0] + scale * rng.standard_normal(starts[0].shape))
                   for _ in range(max(1, local_starts // 2))]
    if starts and local_steps > 0:
        best_X = np.stack(starts)
        best_e = errors(model, task, best_X)
        n_evals += len(best_X)
        # two scales of projected ascent: coarse (1 % of the domain) then fine (1e-4), each with a
        # geometric step decay; softmax error peaks near ties are as narrow as 1/β
        scales = (lr,) if lr is not None else (0.01 * (task.hi - task.lo),
                                                1e-4 * (task.hi - task.lo))
        steps = max(1, local_steps // len(scales))
        for step in scales:
            X = torch.tensor(best_X, dtype=torch.float64).requires_grad_(True)
            opt = torch.optim.Adam([X], lr=step)
            sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=1e-3 ** (1 / steps))
            for _ in range(steps):
                opt.zero_grad()
                e = _err_per_sample(model, task, X)
                n_evals += len(best_X)
                en = e.detach().numpy()
                better = en > best_e
                best_e[better] = en[better]
                best_X[better] = X.detach().numpy()[better]
                (-e.sum()).backward()
                if X.grad is None or not torch.isfinite(X.grad).all():
                    break
                opt.step()
                sched.step()
                with torch.no_grad():
                    X.copy_(task.project(X))
        e = errors(model, task, best_X)
        n_evals += len(best_X)
        by_source["local"] = float(e.max())
        pool.extend((float(e[j]), best_X[j]) for j in range(len(best_X)))
    best_err, best_X = max(pool, key=lambda p: p[0])
    with torch.no_grad():
        Xt = torch.tensor(best_X[None], dtype=torch.float64)
        out = model(Xt)[0].numpy()
        y = task.target(Xt)[0].numpy()
    return SupErrorResult(best_err, best_X, out, y, n_evals, by_source, budget)


def nmse(model, task, n: int = 4096, seed: int = 0, X=None) -> float:
    """Normalised mean squared error mean((ŷ - y)²)/var(y) on ``n`` random inputs."""
    rng = np.random.default_rng(seed)
    X = task.sample(n, rng) if X is None else np.asarray(X)
    Xt = torch.tensor(X, dtype=torch.float64)
    with torch.no_grad():
        out = model(Xt)
        y = task.target(Xt)
        if out.dim() > y.dim():
            out = out[..., 0]
        m = torch.isfinite(y)
        err = ((out - y)[m] ** 2).mean()
        var = y[m].var()
    if float(var) == 0.0:
        raise ConfigError("the target is constant on these inputs; NMSE is undefined")
    return float(err / var)


@dataclass
class RateFit:
    """log y = intercept + slope · log x, with a residual-bootstrap confidence interval for the slope."""

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


def fit_rate(x: Sequence[float], y: Sequence[float], n_boot: int = 2000, level: float = 0.95,
             seed: int = 0) -> RateFit:
    """Log-log least squares of y against x with a residual-bootstrap interval for the slope."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ConfigError(f"x and y must be 1-D of equal length (got {x.shape}, {y.shape})")
    if len(x) < 3:
        raise ConfigError(f"a rate fit needs at least 3 points (got {len(x)})")
    if (x <= 0).any() or (y <= 0).any():
        raise ConfigError("a log-log fit needs positive x and y")
    lx, ly = np.log(x), np.log(y)
    if np.ptp(lx) == 0:
        raise ConfigError("x values must not all be equal")
    slope, intercept = np.polyfit(lx, ly, 1)
    # residual bootstrap (fixed design: the x grid is chosen, the errors are measured)
    rng = np.random.default_rng(seed)
    fitted = intercept + slope * lx
    resid = ly - fitted
    resid = resid * np.sqrt(len(x) / (len(x) - 2))     # small-sample variance correction
    boots = [np.polyfit(lx, fitted + rng.choice(resid, len(x)), 1)[0] for _ in range(n_boot)]
    a = (1 - level) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    # the interval always contains the point estimate
    return RateFit(float(slope), float(intercept), float(min(lo, slope)), float(max(hi, slope)),
                   level, len(x))


def compare_exponent(fit: RateFit, predicted, **values) -> dict:
    """Compare a fitted slope with a predicted exponent (a number, a sympy expression evaluated at
    ``values``, or a claim id whose ``rate_exponent`` is used with the sign of a decay in ε)."""
    from .catalogue import Claim, claim
    if isinstance(predicted, str):
        predicted = claim(predicted)
    if isinstance(predicted, Claim):
        predicted = predicted.rate_exponent().subs(
            {predicted.symbol(k): v for k, v in values.items()})
    elif isinstance(predicted, sp.Basic):
        predicted = predicted.subs(values)
    p = float(sp.N(predicted))
    return {"predicted": p, "fitted": fit.slope, "ci": [fit.ci_low, fit.ci_high],
            "within_ci": fit.contains(p)}
