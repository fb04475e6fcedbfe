"""Finite input domains: the certified bracket by exhaustive enumeration.

Part of :mod:`approxtheory.bounds` (see its docstring for the method).

A task whose domain is ``"onehot"`` (every token one of the ``d`` basis vectors: one-hot
sequences, the vertices of the simplex per token) has exactly ``d^T`` inputs. When that count is
within the work budget (``max_points``) every input is evaluated, in float64 batches, and the
supremum of the error is their maximum: exact, not a relaxation. The bound adds the round-off of
the float64 evaluation itself, allowed for as the verdicts do (``4096`` units of the model dtype's
machine epsilon, relative to the output scale, plus the same relative share of the maximum):
``upper = max_e (1 + 4096 eps) + 4096 eps max(1, scale)``. Above the budget nothing is certified:
``upper`` is None, ``stop`` says ``budget`` and ``reason`` names the domain's size, the budget
and the largest T the budget covers (the frontier at this d), and nothing is enumerated; ``lower``
is the largest error at the given ``points`` (a lower bound only; 0 without them).

A NaN or infinite error at any input (the model or the target failed there) gives
``upper = +inf`` with ``unsound_input = True``: never a finite number.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from ..errors import ConfigError
from ._af import _DT
from ._result import BracketResult, _err_from, _Lower, _roundoff_eps

#: the domains whose inputs are enumerated (name -> what they are, for messages)
FINITE_DOMAINS = {"onehot": "one-hot tokens (each token one of the d basis vectors)"}
#: round-off of the model's own evaluation, in units of its dtype's epsilon (as the verdicts)
_ULPS = 4096
#: the default enumeration budget (inputs): 4^9 one-hot sequences, about 7 s on one core
MAX_POINTS = 1 << 18
#: inputs evaluated per batch
_CHUNK = 4096


def domain_size(task) -> int:
    """The number of inputs of a finite domain (``d^T`` for one-hot tokens; exact integer)."""
    if getattr(task, "domain", "box") != "onehot":
        raise ConfigError(
            f"domain {getattr(task, 'domain', '?')!r} is not finite (finite domains: "
            f"{', '.join(FINITE_DOMAINS)})"
        )
    return int(task.d) ** int(task.T)


def frontier_T(d: int, max_points: int) -> int:
    """The largest T with ``d^T <= max_points`` (0 when not even T = 1 fits)."""
    T = 0
    while int(d) ** (T + 1) <= max_points:
        T += 1
    return T


def _onehot_batch(start: int, n: int, T: int, d: int) -> torch.Tensor:
    """Inputs ``start .. start + n - 1`` of the enumeration (token t is digit t of the index in
    base d): a (n, T, d) float64 tensor of one-hot tokens."""
    idx = torch.arange(start, start + n, dtype=torch.int64)
    pw = torch.tensor([d**t for t in range(T)], dtype=torch.int64)
    ids = (idx[:, None] // pw[None, :]) % d  # (n, T)
    return torch.nn.functional.one_hot(ids, d).to(_DT)


def enumerate_bracket(model, task, *, max_points: int, lo=None, hi=None, points=None):
    """The bracket of a finite domain by enumeration (see the module docstring). ``lo``/``hi``
    ((T, d) arrays or None) keep only the inputs inside that box; ``points`` are extra inputs
    evaluated for the lower side (projected onto the domain by the task)."""
    t0 = time.perf_counter()
    T, d = int(task.T), int(task.d)
    N = domain_size(task)
    model.eval()
    low = _Lower(model, task)
    budget = {"max_points": int(max_points)}
    eps = _roundoff_eps(model)
    lo_t = None if lo is None else torch.as_tensor(lo, dtype=_DT)
    hi_t = None if hi is None else torch.as_tensor(hi, dtype=_DT)
    # above the budget nothing is enumerated (a prefix of the order certifies nothing and
    # finds little): only the given points are evaluated, for the lower side
    n_eval = N if N <= max_points else 0
    scale = _enumerate(model, task, low, n_eval, lo_t, hi_t, points)
    secs = time.perf_counter() - t0
    witness = None if low.X is None else low.X.numpy()
    if low.nonfinite:
        return BracketResult(
            math.inf,
            math.inf,
            witness,
            n_eval,
            0,
            0,
            secs,
            f"the model or target is NaN/inf at {low.nonfinite} evaluated input(s) (witness)",
            "enumeration",
            stop="unsound-input",
            unsound_input=True,
            extra={"budget": budget, "points": N},
        )
    if N > max_points:
        return _over_budget(low, witness, n_eval, secs, N, T, d, max_points, budget)
    allow = _ULPS * eps
    upper = low.value * (1 + allow) + allow * max(1.0, scale)
    return BracketResult(
        upper,
        low.value,
        witness,
        N,
        0,
        0,
        secs,
        None,
        "enumeration",
        True,
        f"exhaustive: all {N} inputs of the one-hot domain evaluated",
        extra={"budget": budget, "points": N, "roundoff_allowance": upper - low.value},
    )


def _enumerate(model, task, low, n_eval, lo_t, hi_t, points) -> float:
    """Evaluate the given points, then the first ``n_eval`` inputs of the enumeration (those
    inside lo_t..hi_t when given), into ``low``; stops at a NaN/inf error. Returns the largest
    finite |output| or |target| seen (the scale of the round-off allowance)."""
    T, d = int(task.T), int(task.d)
    scale = 0.0
    with torch.no_grad():
        if points is not None:
            P = torch.as_tensor(task.project(np.asarray(points, dtype=np.float64)), dtype=_DT)
            low.eval(P)
        for start in range(0, n_eval, _CHUNK):
            X = _onehot_batch(start, min(_CHUNK, n_eval - start), T, d)
            if lo_t is not None and hi_t is not None:
                keep = ((X >= lo_t) & (X <= hi_t)).flatten(1).all(-1)
                X = X[keep]
                if not len(X):
                    continue
            out = model(X)
            y = task.target(X)
            fin = torch.isfinite(out)
            scale = max(
                scale,
                float(out.abs().where(fin, torch.zeros_like(out)).max()),
                float(y.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0).max()),
            )
            low.eval(X, _err_from(out, y, task))
            if low.nonfinite:
                break
    return scale


def _over_budget(low, witness, n_eval, secs, N, T, d, max_points, budget) -> BracketResult:
    """No bound: the domain's ``N = d^T`` inputs exceed ``max_points`` (lower: the points)."""
    fr = frontier_T(d, max_points)
    return BracketResult(
        None,
        low.value,
        witness,
        n_eval,
        0,
        0,
        secs,
        f"not certified within the budget: the one-hot domain has d^T = {d}^{T} = {N} "
        f"inputs, above max_points = {max_points} (exhaustive enumeration certifies T <= "
        f"{fr} at d = {d}); nothing is certified (lower: the given points only)",
        "enumeration",
        stop=f"budget ({max_points} points) below the domain's {N}",
        extra={"budget": budget, "points": N, "frontier_T": fr},
    )
