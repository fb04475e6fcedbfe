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

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
import torch

from ._validate import check_int
from .errors import ConfigError, InvalidValueError, MissingSymbolError, UnknownSymbolError
from .ratefit import SlopeFit
from .resources import with_threads

__all__ = [
    "SupErrorResult",
    "sup_error",
    "errors",
    "nmse",
    "RateFit",
    "fit_rate",
    "compare_exponent",
    "MAX_N_BOOT",
    "MAX_DISCRETE_EVALS",
    "MAX_LOCAL_STEPS",
]

#: most bootstrap resamples :func:`fit_rate` accepts (each is one least-squares fit)
MAX_N_BOOT = 100_000
#: most evaluations :func:`sup_error`'s discrete stage accepts (``discrete_evals``)
MAX_DISCRETE_EVALS = 10**7
#: most gradient steps per start :func:`sup_error`'s local stages accept (``local_steps``)
MAX_LOCAL_STEPS = 10**5


#: ``v`` as an integer in ``lo..hi`` (``ConfigError`` naming the range otherwise)
_count = functools.partial(check_int, plain=True)


def _float64(name: str, v) -> np.ndarray:
    """``v`` as a float64 array (``InvalidValueError`` for what is not numeric)."""
    try:
        return np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        raise InvalidValueError(
            f"{name} must be an array of real numbers (got {type(v).__name__}: {e})"
        ) from None


@dataclass
class SupErrorResult:
    """The outcome of :func:`sup_error`: the largest error found and where.

    ``value`` is the largest ℓ∞ error |model − target| over the searched inputs (a lower bound on
    the supremum; ``inf`` when the model's output is NaN or infinite, with ``nonfinite`` set),
    ``witness`` the (T, d) input attaining it with ``model_output`` and ``target`` there,
    ``n_evals`` the forward evaluations spent of ``budget``, and ``by_source`` /
    ``evals_by_source`` the best error and the evaluations per search stage.
    """

    value: float  # the largest error found: max over outputs of |model - target|
    witness: np.ndarray  # the input (T, d) that attains it
    model_output: Any
    target: Any
    n_evals: int  # forward evaluations (sequences) spent
    by_source: dict = field(default_factory=dict)  # best error per search stage
    budget: int = 0
    evals_by_source: dict = field(default_factory=dict)  # evaluations spent per stage
    nonfinite: bool = False  # the model's output at the witness is NaN or inf (a failure)

    def __repr__(self) -> str:
        """One line: the error found, the witness's shape, the evaluations spent."""
        shape = "x".join(map(str, np.shape(self.witness)))
        return (
            f"SupErrorResult(value={self.value:.6g}, witness=<{shape} array>, "
            f"n_evals={self.n_evals}, budget={self.budget}"
            + (", nonfinite=True" if self.nonfinite else "")
            + ")"
        )

    def to_dict(self) -> dict:
        """The result as JSON-ready plain values (``sup_error`` is ``value``)."""
        return {
            "sup_error": self.value,
            "witness": self.witness.tolist(),
            "model_output": np.asarray(self.model_output).tolist(),
            "target": np.asarray(self.target).tolist(),
            "n_evals": self.n_evals,
            "by_source": self.by_source,
            "evals_by_source": self.evals_by_source,
            "nonfinite": self.nonfinite,
            "budget": self.budget,
        }


def output_as_target(
    out: torch.Tensor, y: torch.Tensor, per_token_target_only: bool = False
) -> torch.Tensor:
    """The model's outputs ``out`` in the shape of the targets ``y``: a read-out of width 1
    loses its last axis (per token: (B, T, 1) -> (B, T), only where ``y`` is per token if
    ``per_token_target_only``; per sequence: (B, 1) -> (B,)); ConfigError where the shapes
    still differ. The search takes (B, 1, 1) against (B,) targets; the brackets
    (:mod:`approxtheory.bounds`, ``per_token_target_only``) keep their stricter rule and take a
    per-token read-out only against per-token targets."""
    if out.dim() == 3 and out.shape[-1] == 1 and (y.dim() == 2 or not per_token_target_only):
        out = out[..., 0]
    if out.dim() == 2 and y.dim() == 1 and out.shape[-1] == 1:
        out = out[:, 0]
    if out.shape != y.shape:
        raise ConfigError(
            f"model output shape {tuple(out.shape)} does not match the task's "
            f"target shape {tuple(y.shape)}"
        )
    return out


def _err_per_sample(model, task, X: torch.Tensor) -> torch.Tensor:
    """ℓ∞ error per sequence, shape (B,).

    A NaN target marks an output that has no target (e.g. the first k rows of a lag task) and is
    not measured. A NaN or infinite *model* output where there is a target is a failure: its
    error is ``inf``, never 0, so it wins the search and becomes the witness. So is a sequence
    whose input holds a NaN or an infinity (its target is undefined, so no output is right)."""
    out = model(X)
    y = task.target(X)
    out = output_as_target(out, y)
    no_target = torch.isnan(y)
    failed = ~torch.isfinite(out) & ~no_target
    e = (out - y).abs().masked_fill(no_target, 0.0)
    e = torch.where(failed, torch.full_like(e, float("inf")), e)
    if e.dim() > 1:
        e = e.flatten(1).amax(-1)
    bad_input = ~torch.isfinite(X.detach()).flatten(1).all(-1)
    return torch.where(bad_input, torch.full_like(e, float("inf")), e)


@with_threads
def errors(model, task, X, batch: int = 4096) -> np.ndarray:
    """ℓ∞ error of each input sequence (no gradient); ``inf`` where the model's output is NaN or
    infinite, and for a sequence whose input holds a NaN or an infinity (a failure, never 0).

    ``batch`` (sequences per forward pass) must be an integer >= 1 (:class:`ConfigError`)."""
    from .resources import require_errors

    batch = _count("batch", batch, 1)
    if not hasattr(X, "__len__"):
        raise InvalidValueError(f"X must be an array of input sequences (got {type(X).__name__})")
    require_errors(model, task, len(X), batch=batch)
    X = torch.as_tensor(_float64("X", X), dtype=torch.float64)
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch):
            out.append(_err_per_sample(model, task, X[i : i + batch]))
    return torch.cat(out).numpy() if out else np.zeros(0)


# ------------------------------------------------------------------------------- the search
def _attention_modules(model):
    from .model import Attention

    return [m for m in model.modules() if isinstance(m, Attention)]


def _effective_beta(model, task) -> float | None:
    """The largest logit change per unit input change, max over attention layers:
    ``scale · ||W_Q||₂ · ||W_K||₂ · ||first encoder layer||₂`` (a rough, generic estimate of β,
    used only to centre the gap grids δ ~ c/β; None when the model has no attention)."""
    atts = _attention_modules(model)
    if not atts:
        return None
    emb = 1.0
    first = next((m for m in getattr(model, "embed", []) if isinstance(m, torch.nn.Linear)), None)
    if first is not None:
        w = first.weight.detach()[:, : task.d].to(torch.float64)
        emb = max(float(torch.linalg.matrix_norm(w, 2)), 1e-12)
    best = 0.0
    for a in atts:
        q = float(torch.linalg.matrix_norm(a.q.weight.detach().to(torch.float64), 2))
        k = float(torch.linalg.matrix_norm(a.k.weight.detach().to(torch.float64), 2))
        best = max(best, a.scale * q * k * emb)
    return best if best > 0 else None


class _Softened:
    """Context manager: multiply every attention logit of ``model`` by ``factor`` (a softened
    temperature for continuation in β); restores the scales on exit."""

    def __init__(self, model, factor: float):
        self.atts = _attention_modules(model)
        self.factor = factor

    def __enter__(self):
        self.saved = [a.scale for a in self.atts]
        for a in self.atts:
            a.scale = a.scale * self.factor
        return self

    def __exit__(self, *exc):
        for a, sc in zip(self.atts, self.saved):
            a.scale = sc
        return False


class _Search:
    """Bookkeeping shared by the stages: evaluations, best per stage and a pool of the best
    distinct inputs (the starts of the local stages)."""

    def __init__(self, model, task, batch: int, pool_size: int = 24):
        self.model, self.task, self.batch = model, task, batch
        self.n_evals = 0
        self.by_source: dict[str, float] = {}
        self.evals_by_source: dict[str, int] = {}
        self.pools: dict[str, list[tuple[float, np.ndarray]]] = {}
        self.pool_size = pool_size
        self.best_e = -np.inf
        self.best_X: np.ndarray | None = None

    def eval(self, Xs: np.ndarray, source: str) -> np.ndarray:
        Xs = np.asarray(Xs, dtype=np.float64)
        if len(Xs) == 0:
            return np.zeros(0)
        e = errors(self.model, self.task, Xs, batch=self.batch)
        self.record(Xs, e, source)
        return e

    def record(self, Xs: np.ndarray, e: np.ndarray, source: str, count: bool = True) -> None:
        if count:
            self.n_evals += len(Xs)
            self.evals_by_source[source] = self.evals_by_source.get(source, 0) + len(Xs)
        e = np.where(np.isnan(e), np.inf, e)  # never let NaN hide in a max
        i = int(np.argmax(e))
        self.by_source[source] = max(self.by_source.get(source, -np.inf), float(e[i]))
        if e[i] > self.best_e:
            self.best_e, self.best_X = float(e[i]), np.array(Xs[i])
        k = min(self.pool_size, len(e))
        pool = self.pools.setdefault(source, [])
        for j in np.argpartition(-e, k - 1)[:k]:
            pool.append((float(e[j]), np.array(Xs[j])))
        self.pools[source] = self._prune(pool)

    def _prune(self, pool):
        pool.sort(key=lambda p: -p[0])
        kept: list[tuple[float, np.ndarray]] = []
        for ej, Xj in pool:
            if any(ej == ek and np.array_equal(Xj, Xk) for ek, Xk in kept):
                continue
            kept.append((ej, Xj))
            if len(kept) >= self.pool_size:
                break
        return kept

    def starts(self, n: int) -> list[np.ndarray]:
        """The ``n`` best inputs, taken round-robin over the stages (best stage first) so that
        the starts of the local stages are diverse rather than n copies of one basin."""
        pools = sorted((p for p in self.pools.values() if p), key=lambda p: -p[0][0])
        out: list[np.ndarray] = []
        i = 0
        while len(out) < n and any(i < len(p) for p in pools):
            for p in pools:
                if i < len(p) and len(out) < n and not any(np.array_equal(p[i][1], X) for X in out):
                    out.append(p[i][1])
            i += 1
        return out


def _gap_grid(width: float, beta: float | None, coarse: bool) -> np.ndarray:
    """Gaps δ: a log grid over the domain's scale plus a grid matched to β (δ ~ c/β)."""
    per_decade = 1 if coarse else 4
    g = list(width * np.logspace(-1, -9, 8 * per_decade + 1))
    if beta:
        g += list(np.geomspace(0.25, 16.0, 7 if coarse else 25) / beta)
    return np.array(sorted({float(x) for x in g if 0 < x <= width}), dtype=np.float64)


def _k_grid(T: int, coarse_max: int = 24) -> np.ndarray:
    if T <= 1:
        return np.zeros(0, dtype=int)
    if T - 1 <= coarse_max:
        return np.arange(1, T)
    ks = np.unique(np.round(np.geomspace(1, T - 1, coarse_max)).astype(int))
    return np.unique(np.concatenate([ks, [1, 2, T - 2, T - 1]]))


def _anchors(task, rng, n_max: int = 8) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(extreme token u, unit direction w pointing into the domain, background token b)."""
    d, lo, hi = task.d, task.lo, task.hi
    out = []
    if task.domain == "sphere":
        dirs = [np.eye(d)[i] * s for i in range(min(d, 4)) for s in (1.0, -1.0)]
        dirs += [task.project(rng.standard_normal(d)) for _ in range(2)]
        for u in dirs[: max(2, n_max // 2)]:
            w = rng.standard_normal(d)
            w -= (w @ u) * u
            w /= max(np.linalg.norm(w), 1e-12)
            out.append((u, w, -u))
        return out
    c = np.full(d, 0.5 * (lo + hi))
    if d <= 3:
        verts = [np.array(v, dtype=float) for v in itertools.product((lo, hi), repeat=d)]
    else:
        verts = [np.full(d, hi), np.full(d, lo)] + [
            rng.choice([lo, hi], size=d) for _ in range(n_max - 2)
        ]
    for v in verts[:n_max]:
        w = (c - v) / max(np.linalg.norm(c - v), 1e-12)
        out.append((v, w, 2 * c - v))
    return out


def _family_inputs(task, anchor, ks, gaps, order: str) -> np.ndarray:
    """One token at the extreme u, k tokens at gap δ from it (u + δ w, projected), the rest at
    the background b; ``order`` puts the extreme first ("front") or last ("back")."""
    u, w, b = anchor
    T = task.T
    out = np.empty((len(ks) * len(gaps), T, task.d))
    i = 0
    for k in ks:
        for g in gaps:
            X = np.tile(b, (T, 1))
            tie = u + g * w
            if order == "front":
                X[0] = u
                X[1 : k + 1] = tie
            else:
                X[T - 1] = u
                X[T - 1 - k : T - 1] = tie
            out[i] = X
            i += 1
    return task.project(out)


def _families(S: _Search, rng, beta) -> None:
    """Near-tie families: for every anchor, order and k, a gap δ on a coarse log grid (matched to
    β); then a fine δ grid (and neighbouring k) around the best combinations."""
    task = S.task
    if task.T < 2:
        return
    width = float(task.hi - task.lo) if task.domain == "box" else 1.0
    anchors = _anchors(task, rng)
    ks = _k_grid(task.T)
    coarse = _gap_grid(width, beta, coarse=True)
    scored = []
    for ai, a in enumerate(anchors):
        for order in ("front", "back"):
            X = _family_inputs(task, a, ks, coarse, order)
            e = S.eval(X, "families").reshape(len(ks), len(coarse))
            for ki, k in enumerate(ks):
                scored.append((float(e[ki].max()), ai, order, int(k)))
    # all tokens equal, moving along a line of the domain (an all-equal block at every level):
    # 257 levels, then a fine grid around the best one
    for u, _w, b in anchors[:2]:
        s_grid = np.linspace(0.0, 1.0, 257)
        line = b[None, :] + s_grid[:, None] * (u - b)[None, :]  # (n, d)
        X = task.project(np.repeat(line[:, None, :], task.T, axis=1))
        e = S.eval(X, "families")
        i = int(np.argmax(e))
        s_fine = np.clip(s_grid[i] + np.linspace(-1 / 256, 1 / 256, 129), 0.0, 1.0)
        line = b[None, :] + s_fine[:, None] * (u - b)[None, :]
        S.eval(task.project(np.repeat(line[:, None, :], task.T, axis=1)), "families")
    scored.sort(key=lambda r: -r[0])
    fine = _gap_grid(width, beta, coarse=False)
    done = set()
    for _, ai, order, k in scored[:4]:
        near = [kk for kk in (k - 1, k, k + 1) if 1 <= kk <= task.T - 1]
        key = (ai, order, tuple(near))
        if key in done:
            continue
        done.add(key)
        S.eval(_family_inputs(task, anchors[ai], near, fine, order), "families")


def _block_seeds(task, rng) -> np.ndarray:
    """Runs of equal values: the sequence cut into m contiguous blocks, each block at lo, hi (or
    the midpoint), every combination (m = 8 with two levels, m = 4 with three)."""
    if task.domain != "box":
        return np.zeros((0, task.T, task.d))
    T, lo, hi = task.T, task.lo, task.hi
    out = []
    for m, levels in ((min(T, 8), (lo, hi)), (min(T, 4), (lo, 0.5 * (lo + hi), hi))):
        cuts = np.linspace(0, T, m + 1).round().astype(int)
        for combo in itertools.product(levels, repeat=m):
            X = np.empty((T, task.d))
            for j in range(m):
                X[cuts[j] : cuts[j + 1]] = combo[j]
            out.append(X)
    return np.stack(out)


def _cell_candidates(task, X: np.ndarray, t: int, gaps: np.ndarray) -> np.ndarray:
    """Candidate values for token t of X: per coordinate the domain bounds, the midpoint, the
    other tokens' extremes and offsets δ from them and from the current value; and whole-token
    copies of the other tokens' extreme tokens. Returns (n, T, d) modified copies of X."""
    T, d = task.T, task.d
    outs = []
    others = np.delete(X, t, axis=0) if T > 1 else X
    if task.domain == "box":
        lo, hi = task.lo, task.hi
        for j in range(d):
            col = others[:, j]
            top, bot, cur = col.max(), col.min(), X[t, j]
            vals = [lo, hi, 0.5 * (lo + hi), top, bot]
            for g in gaps:
                vals += [top - g, top + g, bot + g, bot - g, cur + g, cur - g]
            vals = np.clip(np.unique(np.array(vals)), lo, hi)
            vals = vals[vals != cur]
            Y = np.repeat(X[None], len(vals), axis=0)
            Y[:, t, j] = vals
            outs.append(Y)
    # whole-token moves: copy another token (the extremes of each coordinate), or jitter
    idx = set()
    for j in range(d):
        idx.add(int(np.argmax(others[:, j])))
        idx.add(int(np.argmin(others[:, j])))
    for i in sorted(idx):
        src = others[i]
        for g in (0.0, *gaps[:2]):
            Y = X.copy()
            Y[t] = src + g * (np.sign(X[t] - src) if task.domain == "box" else 0.0)
            outs.append(Y[None])
    if not outs:
        return np.zeros((0, T, d))
    return task.project(np.concatenate(outs))


def _discrete(S: _Search, rng, beta, max_evals: int, n_starts: int = 4) -> None:
    """Coordinate-wise local search among candidate values (greedy, first improvement over a
    group of tokens at a time), from the best inputs so far; restarts by kicking a random block
    of tokens to the domain's bounds while evaluations remain."""
    task = S.task
    width = float(task.hi - task.lo) if task.domain == "box" else 1.0
    gap_list = [1e-2 * width]
    if beta:
        gap_list += [0.5 / beta, 2.0 / beta, 6.0 / beta]
    gaps = np.array(sorted(g for g in gap_list if g < width))
    spent0 = S.n_evals
    starts = S.starts(n_starts)
    si = 0
    while S.n_evals - spent0 < max_evals and starts:
        X = np.array(starts[si % len(starts)])
        if si >= len(starts):  # a restart: kick a random block to a bound
            a = int(rng.integers(0, task.T))
            b = int(rng.integers(a, task.T)) + 1
            lv = (task.lo, task.hi) if task.domain == "box" else (-1.0, 1.0)
            X[a:b] = lv[int(rng.integers(0, 2))]
            X = task.project(X)
        si += 1
        cur = float(S.eval(X[None], "discrete")[0])
        improved = True
        while improved and S.n_evals - spent0 < max_evals:
            improved = False
            order = rng.permutation(task.T)
            probe = _cell_candidates(task, X, int(order[0]), gaps)
            group = max(1, 512 // max(1, len(probe)))
            for g0 in range(0, task.T, group):
                cands = np.concatenate(
                    [_cell_candidates(task, X, int(t), gaps) for t in order[g0 : g0 + group]]
                )
                if not len(cands):
                    continue
                e = S.eval(cands, "discrete")
                j = int(np.argmax(e))
                if e[j] > cur * (1 + 1e-9) + 1e-300:
                    X, cur, improved = cands[j], float(e[j]), True
                if S.n_evals - spent0 >= max_evals:
                    break


def _ascent(
    S: _Search, starts: list[np.ndarray], factors, steps: int, base_lr: float, source: str, beta
) -> list[np.ndarray]:
    """Projected Adam ascent on the input; for each temperature factor f (continuation: the
    model's logits times f, then anneal f to 1) ``steps`` steps. The true error (f = 1) of every
    iterate is what is recorded. Returns the best input per start."""
    model, task = S.model, S.task
    if not starts:
        return []
    best_X = np.stack(starts)
    best_e = errors(model, task, best_X)
    S.record(best_X, best_e, source)
    X = torch.tensor(best_X, dtype=torch.float64)
    width = float(task.hi - task.lo) if task.domain == "box" else 1.0
    for f in factors:
        lr = base_lr if beta is None else min(base_lr, 2.0 / (f * beta))
        lr = max(lr, 1e-6 * width)
        X = X.detach().clone().requires_grad_(True)
        opt = torch.optim.Adam([X], lr=lr)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=1e-2 ** (1 / max(steps, 1)))
        for _ in range(steps):
            opt.zero_grad()
            with _Softened(model, f):
                e_soft = _err_per_sample(model, task, X)
            e_soft = torch.where(torch.isfinite(e_soft), e_soft, torch.zeros_like(e_soft))
            (-e_soft.sum()).backward()
            if X.grad is None or not torch.isfinite(X.grad).all():
                break
            opt.step()
            sched.step()
            with torch.no_grad():
                X.copy_(torch.as_tensor(task.project(X.detach())))
            Xn = X.detach().numpy().copy()
            en = errors(model, task, Xn)
            S.record(Xn, en, source)
            better = en > best_e
            best_e[better] = en[better]
            best_X[better] = Xn[better]
    return list(best_X)


def _require_search_time(model, task, budget, discrete_evals, local_starts, local_steps):
    """Refuse a search whose forward passes alone would exceed the time limit (a lower bound:
    2 · parameters · T flops per sequence at resources.FLOPS_PER_SECOND; models without a
    ``cfg`` are not estimated)."""
    from .resources import FLOPS_PER_SECOND, model_param_count, require

    cfg = getattr(model, "cfg", None)
    if cfg is None:
        return
    try:
        per_seq = 2.0 * model_param_count(cfg) * int(getattr(task, "T", 1)) / FLOPS_PER_SECOND
    except (AttributeError, TypeError, ValueError):
        return
    de = max(1024, 2 * int(budget)) if discrete_evals is None else int(discrete_evals)
    # the local stages: about 1.5 · local_starts inputs per step, each step a forward and a
    # backward pass (3 forwards' worth)
    local = 3 * int(local_steps) * (int(local_starts) + max(1, int(local_starts) // 2))
    evals = int(budget) + de + local
    require(bytes=0, seconds=evals * per_seq, what=f"the error search ({evals} evaluations)")


def _check_sizes(budget, seed, local_starts, local_steps, batch) -> None:
    """ConfigError for a budget, seed or count :func:`sup_error` does not take."""
    check_int("budget", budget, 1)
    check_int("seed", seed, 0)
    for name, v in (("local_starts", local_starts), ("local_steps", local_steps), ("batch", batch)):
        check_int(name, v, 1 if name == "batch" else 0, must="a non-negative integer")


def _check_domain(task) -> None:
    """ConfigError for a task domain that is not a finite interval."""
    if not (np.isfinite(task.lo) and np.isfinite(task.hi)) or task.lo > task.hi:
        raise ConfigError(
            f"the task's domain must have finite lo <= hi (got lo={task.lo}, hi={task.hi})"
        )


def _check_search(local_steps, discrete_evals, lr, continuation) -> None:
    """ConfigError (or ResourceLimitError) for search sizes, a step size or continuation
    factors :func:`sup_error` does not take."""
    _count("local_steps", local_steps, 0, MAX_LOCAL_STEPS)
    if discrete_evals is not None:
        _count("discrete_evals", discrete_evals, 0, MAX_DISCRETE_EVALS)
    if lr is not None and (
        isinstance(lr, (bool, np.bool_))
        or not isinstance(lr, (int, float, np.integer, np.floating))
        or not (np.isfinite(lr) and lr > 0)
    ):
        raise ConfigError(f"lr must be a positive finite number (got {lr!r})")
    try:
        factors = tuple(continuation)
        bad_factor = any(
            isinstance(f, (bool, np.bool_))
            or not isinstance(f, (int, float, np.integer, np.floating))
            or not (0 < f <= 1)
            for f in factors
        )
    except TypeError:
        factors, bad_factor = (), True
    if bad_factor:
        raise ConfigError(
            f"continuation must be a sequence of factors in (0, 1] (got {continuation!r})"
        )


def _result(model, task, S: _Search, budget) -> SupErrorResult:
    """The search's result: the worst input found, the model's output and the target there,
    the best error per stage."""
    best_X = S.best_X
    assert best_X is not None  # set by the first evaluation (budget >= 1 random inputs)
    with torch.no_grad():
        Xt = torch.tensor(best_X[None], dtype=torch.float64)
        out = model(Xt)[0].numpy()
        y = task.target(Xt)[0].numpy()
    nonfinite = (
        bool(not np.all(np.isfinite(out[~np.isnan(y)])))
        if np.ndim(y)
        else bool(not np.all(np.isfinite(out)))
    )
    by_source = {k: float(v) for k, v in S.by_source.items()}
    return SupErrorResult(
        float(S.best_e),
        best_X,
        out,
        y,
        S.n_evals,
        by_source,
        budget,
        dict(S.evals_by_source),
        nonfinite,
    )


@with_threads
def sup_error(
    model,
    task,
    budget: int = 4096,
    seed: int = 0,
    local_starts: int = 8,
    local_steps: int = 60,
    lr: float | None = None,
    include_structured: bool = True,
    batch: int = 4096,
    families: bool = True,
    discrete_evals: int | None = None,
    continuation: Sequence[float] = (1 / 64, 1 / 16, 1 / 4, 1.0),
) -> SupErrorResult:
    """Estimate ``sup_X ||model(X) - task(X)||_∞`` over the task's domain (a lower bound on the
    supremum: the error at the worst input found, which is returned as the witness).

    Stages, each reporting its best error in ``by_source`` (and its evaluations in
    ``evals_by_source``), generic over tasks:

    1. ``random``: ``budget`` uniform samples of the domain.
    2. ``structured``: the task's structured inputs (vertices, faces, near-ties, all-equal blocks)
       and block patterns (the sequence cut into runs, each at a bound or the midpoint).
    3. ``families``: near-tie families: one token at an extreme u (a vertex of the box), k tokens
       at gap δ from it, the rest at the opposite vertex, for every k (a geometric grid of k when
       T > 25) and δ on a log grid plus a grid matched to the model's logit scale (δ ~ c/β),
       refined around the best combinations; and all tokens equal, at 257 levels along a line
       of the domain, refined around the best level.
    4. ``discrete``: greedy coordinate-wise local search with restarts among candidate values
       (bounds, other tokens' values, small offsets from them) from the best inputs so far
       (``discrete_evals`` evaluations, default ``max(1024, 2·budget)`` up to
       :data:`MAX_DISCRETE_EVALS`).
    5. ``continuation``: projected gradient ascent at softened temperatures (every attention
       logit times f for f in ``continuation``, annealed to 1) from the best inputs, so that
       saturated softmax does not stall it; the true error is what is recorded.
    6. ``local``: fine projected ascent at the model's temperature (two step scales).

    Deterministic for a given seed. A NaN or infinite model output is an error of ``inf`` (the
    result's ``nonfinite`` is True and the witness is that input), never zero.

    Sizes are checked before anything starts: ``discrete_evals`` at most
    :data:`MAX_DISCRETE_EVALS`, ``local_steps`` at most :data:`MAX_LOCAL_STEPS`, and the memory of
    ``budget`` sequences against :mod:`approxtheory.resources`' limit
    (:class:`~approxtheory.errors.ResourceLimitError`).
    """
    _check_sizes(budget, seed, local_starts, local_steps, batch)
    _check_domain(task)
    _check_search(local_steps, discrete_evals, lr, continuation)
    from .resources import require_sup_error

    require_sup_error(model, task, budget, batch=batch)  # refuse before allocating
    _require_search_time(model, task, budget, discrete_evals, local_starts, local_steps)
    rng = np.random.default_rng(seed)
    model.eval()
    S = _Search(model, task, batch)
    beta = _effective_beta(model, task)

    S.eval(task.sample(budget, rng), "random")
    if include_structured:
        S.eval(task.structured(rng), "structured")
        S.eval(_block_seeds(task, rng), "structured")
    if families:
        _families(S, rng, beta)
    if discrete_evals is None:
        discrete_evals = min(max(1024, 2 * int(budget)), MAX_DISCRETE_EVALS)
    if discrete_evals > 0:
        _discrete(S, rng, beta, discrete_evals)
    width = float(task.hi - task.lo) if task.domain == "box" else 1.0
    if local_steps > 0 and local_starts > 0:
        _local(S, task, rng, beta, width, (local_starts, local_steps, lr, continuation))
    return _result(model, task, S, budget)


def _local(S: _Search, task, rng, beta, width: float, opts) -> None:
    """Stages 5 and 6 of :func:`sup_error`: projected ascent from the best inputs so far (and
    jittered copies of the best), at softened temperatures, then at the model's own (``opts``:
    local_starts, local_steps, lr, continuation; ``width`` the domain's scale)."""
    local_starts, local_steps, lr, continuation = opts
    starts = S.starts(local_starts)
    if starts:  # also jitter the best start
        scale = 0.02 * width
        starts += [
            task.project(starts[0] + scale * rng.standard_normal(starts[0].shape))
            for _ in range(max(1, local_starts // 2))
        ]
    if continuation and beta:
        per = max(1, local_steps // (2 * len(continuation)))
        _ascent(S, starts, continuation, per, 0.05 * width, "continuation", beta)
    scales = (lr,) if lr is not None else (0.01 * width, 1e-4 * width)
    starts = S.starts(local_starts)
    steps = max(1, local_steps // len(scales))
    for sc in scales:
        starts = _ascent(S, starts, (1.0,), steps, sc, "local", None)


@with_threads
def nmse(model, task, n: int = 4096, seed: int = 0, X=None) -> float:
    """Normalised mean squared error mean((ŷ - y)²)/var(y) on ``n`` random inputs (or on the
    sequences ``X`` when given).

    ``n`` (or ``len(X)``) must be an integer >= 2 (the variance of one target is undefined) and
    ``seed`` an integer >= 0 (:class:`ConfigError`); the memory of the ``n`` sequences and their
    forward pass is checked before anything is drawn
    (:class:`~approxtheory.errors.ResourceLimitError`). Returns ``inf`` when the model's output is
    NaN or infinite where there is a target, or an input holds a NaN or an infinity (a failure,
    never a small error)."""
    from .resources import array_bytes, errors_bytes, require

    _count("seed", seed, 0)
    if X is None:
        n = _count("n", n, 2)
        T_, d_ = int(getattr(task, "T", 1)), int(getattr(task, "d", 1))
        # the sample, its float64 copy, the errors and one forward pass over all n sequences
        require(
            bytes=array_bytes(n, T_, d_) + errors_bytes(model, task, n, batch=n),
            what=f"the NMSE on {n} sequences (T={T_})",
        )
        X = task.sample(n, np.random.default_rng(seed))
    else:
        X = _float64("X", X)
        if X.ndim < 1 or len(X) < 2:
            raise ConfigError(
                f"the NMSE needs at least 2 input sequences (got {X.shape[0] if X.ndim else 0})"
            )
    Xt = torch.tensor(X, dtype=torch.float64)
    with torch.no_grad():
        out = model(Xt)
        y = task.target(Xt)
        if out.dim() > y.dim():
            out = out[..., 0]
        m = torch.isfinite(y)
        if int(m.sum()) < 2:
            raise ConfigError(
                "the target is defined (finite) at fewer than 2 outputs of these inputs; NMSE "
                "is undefined"
            )
        diff = (out - y)[m]
        if not bool(torch.isfinite(diff).all()) or not bool(torch.isfinite(Xt).all()):
            return float("inf")
        err = (diff**2).mean()
        var = y[m].var()
    if float(var) == 0.0:
        raise ConfigError("the target is constant on these inputs; NMSE is undefined")
    r = float(err / var)
    return r if np.isfinite(r) else float("inf")


@dataclass
class RateFit(SlopeFit):
    """log y = intercept + slope · log x, with a residual-bootstrap confidence interval for the
    slope (the fields and :meth:`contains` of :class:`~approxtheory.ratefit.SlopeFit`)."""

    def to_dict(self):
        return dict(self.__dict__)


def fit_rate(
    x: Sequence[float], y: Sequence[float], n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> RateFit:
    """Log-log least squares of y against x with a residual-bootstrap interval for the slope.

    Inputs are checked before any fit: x and y 1-D of equal length (at least 3 points), finite
    and positive (:class:`~approxtheory.errors.InvalidValueError` for NaN or inf, as a measured
    error of ``inf`` is a failure, not a point of a rate); ``n_boot`` an integer from 1 to
    :data:`MAX_N_BOOT`, ``level`` in (0, 1), ``seed`` an integer >= 0 (:class:`ConfigError`)."""
    n_boot = _count("n_boot", n_boot, 1, MAX_N_BOOT)
    seed = _count("seed", seed, 0)
    if (
        isinstance(level, (bool, np.bool_))
        or not isinstance(level, (int, float, np.integer, np.floating))
        or not (0 < level < 1)
    ):
        raise ConfigError(f"level must be a number in (0, 1), e.g. 0.95 (got {level!r})")
    xs = _float64("x", x)
    ys = _float64("y", y)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ConfigError(f"x and y must be 1-D of equal length (got {xs.shape}, {ys.shape})")
    if len(xs) < 3:
        raise ConfigError(f"a rate fit needs at least 3 points (got {len(xs)})")
    for name, v in (("x", xs), ("y", ys)):
        if not np.isfinite(v).all():
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            raise InvalidValueError(
                f"a rate fit needs finite {name} values (got {name}[{i}] = {v[i]}); a NaN or "
                "infinite measurement is a failure, not a point of a rate"
            )
    if (xs <= 0).any() or (ys <= 0).any():
        raise ConfigError("a log-log fit needs positive x and y")
    lx, ly = np.log(xs), np.log(ys)
    if np.ptp(lx) == 0:
        raise ConfigError("x values must not all be equal")
    slope, intercept = np.polyfit(lx, ly, 1)
    # residual bootstrap (fixed design: the x grid is chosen, the errors are measured)
    rng = np.random.default_rng(seed)
    fitted = intercept + slope * lx
    resid = ly - fitted
    resid = resid * np.sqrt(len(xs) / (len(xs) - 2))  # small-sample variance correction
    boots = [np.polyfit(lx, fitted + rng.choice(resid, len(xs)), 1)[0] for _ in range(n_boot)]
    a = (1 - level) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    # the interval always contains the point estimate
    return RateFit(
        float(slope), float(intercept), float(min(lo, slope)), float(max(hi, slope)), level, len(xs)
    )


def compare_exponent(fit: RateFit, predicted, **values) -> dict:
    """Compare a fitted slope with a predicted exponent (a number, a sympy expression evaluated at
    ``values``, or a claim id whose ``rate_exponent`` is used with the sign of a decay in ε).

    ``values`` maps symbol names to numbers; a string value is read by
    :func:`approxtheory.parse.to_number` (parsed, never evaluated). For a claim each value is
    checked against its symbol as in :meth:`Claim.evaluate`; for an expression every name must
    be one of its free symbols (:class:`~approxtheory.errors.UnknownSymbolError`). An exponent
    left with a free symbol raises :class:`~approxtheory.errors.MissingSymbolError`."""
    from .catalogue import Claim, claim
    from .parse import to_number

    if not isinstance(fit, RateFit):
        raise ConfigError(f"fit must be a RateFit from fit_rate (got {type(fit).__name__})")
    if isinstance(predicted, str):
        predicted = claim(predicted)
    if isinstance(predicted, Claim):
        # names, values and the symbols' assumptions checked by the claim (strings parsed)
        expr = predicted.rate_exponent().subs(predicted._subs(values))
    elif isinstance(predicted, sp.Basic):
        by_name = {s.name: s for s in predicted.free_symbols if isinstance(s, sp.Symbol)}
        subs = {}
        for k, v in values.items():
            if k not in by_name:
                allowed = ", ".join(sorted(by_name)) or "none"
                raise UnknownSymbolError(
                    f"the predicted exponent has no symbol {k!r}; its symbols are: {allowed}"
                )
            subs[by_name[k]] = to_number(v, k)
        expr = predicted.subs(subs)
    else:
        if values:
            raise UnknownSymbolError(
                f"values ({', '.join(values)}) need a claim id or a sympy expression as the "
                "prediction, not a number"
            )
        expr = to_number(predicted, "predicted")
    if expr.free_symbols:
        names = ", ".join(sorted(s.name for s in expr.free_symbols))
        raise MissingSymbolError(f"the predicted exponent needs values for: {names}")
    try:
        p = float(expr.evalf())
    except (TypeError, ValueError) as e:
        raise InvalidValueError(
            f"the predicted exponent is not a real number (got {sp.sstr(expr)[:60]})"
        ) from e
    if not np.isfinite(p):
        raise InvalidValueError(f"the predicted exponent must be finite (got {p})")
    return {
        "predicted": p,
        "fitted": fit.slope,
        "ci": [fit.ci_low, fit.ci_high],
        "within_ci": fit.contains(p),
    }
