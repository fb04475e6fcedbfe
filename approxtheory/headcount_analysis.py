"""Head-count analyses of results (arXiv 2510.06662, headcount digest §5-§6): the weighted reversal
score R(h), the refit of the MS MARCO error law, and the attention-collision search of HC-P7.

Every formula is read from the catalogue (``claim("HC-P11")``: ``reversal_term``,
``reversal_weight``, ``error_law``); this module only sums, fits and searches.

Example::

    >>> from approxtheory.headcount_analysis import reversal_score
    >>> reversal_score({8: 0.3, 16: 0.2, 32: 0.25})   # err(8) > err(16), err(32): reversals
    1.5
    >>> reversal_score({8: 0.1, 16: 0.2, 32: 0.3})    # error grows with T: none
    0.0
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch

from .errors import ConfigError

__all__ = [
    "reversal_score",
    "reversal_scores",
    "LawFit",
    "fit_error_law",
    "error_law",
    "collision_search",
    "attention_output",
    "max_min_two_heads",
    "random_one_head",
    "real_data_tables",
    "REAL_DATA",
    "synthetic_table2",
    "SYNTHETIC_TABLE2",
]

#: the paper's real-data result tables (MS MARCO Tables 6-7, CIFAR-10 Tables 8-9), shipped with
#: the package (see approxtheory/data/README.md for their provenance)
REAL_DATA = "headcount_real_data_tables.csv"
#: the paper's Table 2 (synthetic D-retrieval, D = 4, validation NMSE mean and std over seeds)
SYNTHETIC_TABLE2 = "headcount_synthetic_table2.csv"


def real_data_tables() -> list[dict]:
    """The shipped tables as rows ``{table, split, metric, h, T, mean, std, err}`` with
    ``err = 1 - accuracy`` (accuracy in [0, 1]; the CIFAR percentages divided by 100)."""
    import csv
    import io
    from importlib.resources import files

    text = (files("approxtheory") / "data" / REAL_DATA).read_text(encoding="utf-8")
    out = []
    for r in csv.DictReader(io.StringIO(text)):
        acc = float(r["mean"]) / (100.0 if r["metric"].endswith("percent") else 1.0)
        out.append(
            {
                "table": int(r["table"]),
                "split": r["split"],
                "metric": r["metric"],
                "h": int(r["h"]),
                "T": int(r["T"]),
                "mean": float(r["mean"]),
                "std": float(r["std"]),
                "err": 1.0 - acc,
            }
        )
    return out


@functools.cache
def _table2_rows() -> tuple:
    import csv
    import io
    from importlib.resources import files

    text = (files("approxtheory") / "data" / SYNTHETIC_TABLE2).read_text(encoding="utf-8")
    ints = ("table", "D", "heads", "head_dim", "hidden", "T")
    return tuple(
        {
            **{k: int(r[k]) for k in ints},
            "val_nmse_mean": float(r["val_nmse_mean"]),
            "val_nmse_std": float(r["val_nmse_std"]),
        }
        for r in csv.DictReader(io.StringIO(text))
    )


def synthetic_table2() -> list[dict]:
    """The paper's Table 2 as rows ``{table, D, heads, head_dim, hidden, T, val_nmse_mean,
    val_nmse_std}`` (D = 4, per-head width 8, N = 32; h = 1..5, T = 8..128): the magnitude the
    trained head-count checks hold their reference configuration to, and the data their criteria
    are calibrated on (see approxtheory/data/README.md)."""
    return [dict(r) for r in _table2_rows()]


@functools.cache
def _p11():
    from .catalogue import claim

    c = claim("HC-P11")
    e1, e2, emax, emin = (c.symbol(x) for x in ("e_1", "e_2", "e_max", "e_min"))
    term = sp.lambdify((e1, e2), c.expr("reversal_term"), "math")
    weight = sp.lambdify((emax, emin), c.expr("reversal_weight"), "math")
    law = c.expr("error_law")
    T, h = c.symbol("T"), c.symbol("h")
    cc, b, a, dl = (c.symbol(x) for x in ("c_fit", "beta_fit", "alpha_fit", "delta_fit"))
    logc = sp.Symbol("logc", real=True)
    log_law = sp.expand_log(sp.log(law.subs(cc, sp.exp(logc))), force=True)
    log_fn = sp.lambdify((h, T, logc, b, a, dl), log_law, "numpy")
    return c, term, weight, log_fn


def reversal_score(err_by_T: Mapping[float, float]) -> float:
    """R(h) for one head count: ``err_by_T`` maps the sequence length T to the error (1 -
    accuracy, or NMSE); the catalogue's term summed over all pairs T1 < T2, divided by its
    weight (the range of the errors over T). 0 when the errors do not vary with T."""
    _, term, weight, _ = _p11()
    if len(err_by_T) < 2:
        raise ConfigError(f"R(h) needs errors at two or more T (got {len(err_by_T)})")
    Ts = sorted(err_by_T)
    errs = [float(err_by_T[T]) for T in Ts]
    if not all(math.isfinite(e) for e in errs):
        raise ConfigError(f"R(h) needs finite errors (got {errs})")
    w = float(weight(max(errs), min(errs)))
    if w <= 0:
        return 0.0
    total = sum(
        float(term(errs[i], errs[j])) for i in range(len(Ts)) for j in range(i + 1, len(Ts))
    )
    return total / w


def reversal_scores(rows: Sequence[Mapping], err: str, h: str = "heads", T: str = "T") -> dict:
    """R(h) per head count from tidy rows (one error per (h, T): pass aggregated rows)."""
    by: dict = {}
    for r in rows:
        by.setdefault(int(r[h]), {})[int(r[T])] = float(r[err])
    return {hh: reversal_score(v) for hh, v in sorted(by.items()) if len(v) >= 2}


@dataclass
class LawFit:
    """The error law ``c·T^β·exp(α h/T^δ)`` fitted in log space (scipy curve_fit, least squares);
    ``ci`` the ``level`` intervals (t distribution on the fit's covariance) of each parameter."""

    c: float
    beta: float
    alpha: float
    delta: float
    ci: dict
    rmse_log: float
    n_points: int
    level: float

    def contains(self, name: str, value: float) -> bool:
        lo, hi = self.ci[name]
        return lo <= value <= hi

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def error_law(h, T, c: float, beta: float, alpha: float, delta: float) -> np.ndarray:
    """The catalogue's error law at (h, T)."""
    _, _, _, log_fn = _p11()
    return np.exp(
        log_fn(np.asarray(h, float), np.asarray(T, float), math.log(c), beta, alpha, delta)
    )


def fit_error_law(h, T, err, level: float = 0.95, p0=(0.0, 0.0, -1.0, 0.3)) -> LawFit:
    """Fit the catalogue's ``error_law`` to errors ``err`` at (h, T) by least squares on log err;
    ``p0`` = initial (log c, β, α, δ). Needs five or more points with positive errors."""
    from scipy import stats
    from scipy.optimize import curve_fit

    _, _, _, log_fn = _p11()
    h, T, err = (np.asarray(v, dtype=np.float64) for v in (h, T, err))
    if not (h.shape == T.shape == err.shape) or h.ndim != 1:
        raise ConfigError("h, T and err must be 1-D of equal length")
    if len(err) < 5:
        raise ConfigError(
            f"the error law has 4 parameters: fit it to 5 or more points (got {len(err)})"
        )
    if (err <= 0).any() or (T <= 0).any():
        raise ConfigError("the error law is fitted in log space: errors and T must be positive")
    y = np.log(err)

    def f(X, logc, b, a, dl):
        return log_fn(X[0], X[1], logc, b, a, dl)

    popt, pcov = curve_fit(f, np.vstack([h, T]), y, p0=list(p0), maxfev=20000)
    resid = y - f(np.vstack([h, T]), *popt)
    dof = max(1, len(y) - 4)
    q = float(stats.t.ppf(0.5 + level / 2, dof))
    se = np.sqrt(np.clip(np.diag(pcov), 0, None))
    names = ("logc", "beta", "alpha", "delta")
    ci = {nm: (float(p - q * s), float(p + q * s)) for nm, p, s in zip(names, popt, se)}
    ci["c"] = (math.exp(ci["logc"][0]), math.exp(ci["logc"][1]))
    return LawFit(
        c=math.exp(popt[0]),
        beta=float(popt[1]),
        alpha=float(popt[2]),
        delta=float(popt[3]),
        ci=ci,
        rmse_log=float(np.sqrt(np.mean(resid**2))),
        n_points=len(y),
        level=level,
    )


# ------------------------------------------------------------------------------ HC-P7 collisions
def attention_output(model, X: torch.Tensor) -> torch.Tensor:
    """A one-layer model's CLS row after attention (W_O · concat of the heads, before F̂)."""
    return model.hidden_states(X)[1][:, -1, :]


def max_min_two_heads(beta: float = 50.0):
    """The two-head construction for max + min (d = 1, headcount digest §4.1): head 1 scores
    +β·x, head 2 scores -β·x, each returns x; F̂ adds the two read-outs. Float64."""
    from .model import LayerSpec, ModelConfig, Transformer

    m = Transformer(
        ModelConfig(d_in=1, width=2, layers=[LayerSpec(2, 1)], residual=False, attn_scale=beta)
    ).zero_()
    m.set_embedding(weight=[[1.0], [1.0]], bias=[0.0, 0.0])
    m.set_cls([1.0, 0.0])
    m.set_head(0, 0, q=[[1.0, 0.0]], k=[[0.0, 1.0]], v=[[0.0, 1.0]], o=[[1.0], [0.0]])
    m.set_head(0, 1, q=[[1.0, 0.0]], k=[[0.0, -1.0]], v=[[0.0, 1.0]], o=[[0.0], [1.0]])
    m.set_readout(weight=[[1.0, 1.0]], bias=[0.0])
    return m


def random_one_head(n: int, seed: int, d: int = 1, width: int = 8, scale: float = 3.0):
    """A one-layer, one-head model of head width ``n`` with every weight drawn N(0, scale²/fan_in)
    from ``seed`` (a random head: no training). Float64."""
    from .model import LayerSpec, ModelConfig, Transformer

    m = Transformer(
        ModelConfig(d_in=d, width=width, layers=[LayerSpec(1, n)], residual=False, embed_hidden=())
    )
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            fan_in = p.shape[-1] if p.dim() > 1 else 1
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * scale / fan_in**0.5)
    return m


def collision_search(
    model,
    target: Callable,
    sampler: Callable,
    T: int,
    d: int,
    delta: float,
    seed: int = 0,
    n_samples: int = 512,
    n_starts: int = 4,
    steps: int = 60,
    box: tuple[float, float] = (0.0, 1.0),
) -> dict:
    """Smallest distance between the attention outputs of two inputs whose targets differ by at
    least ``delta``: random sampling (``sampler(n, rng)`` inputs of shape (n, T, d), all pairs)
    then, from the ``n_starts`` closest pairs, local minimisation of the output distance with a
    penalty on the target gap (Adam on both inputs, clipped to ``box``). Returns
    ``{"min_dist", "lipschitz", "gap", "pairs"}``: the demanded Lipschitz constant of F̂ is
    ``delta / min_dist`` (a lower estimate of the demand: the search may miss closer pairs)."""
    rng = np.random.default_rng(seed)
    X = torch.as_tensor(sampler(n_samples, rng), dtype=torch.float64)
    if X.shape[1:] != (T, d):
        raise ConfigError(f"sampler must return (n, {T}, {d}) inputs (got {tuple(X.shape)})")
    m = model.double().eval()
    with torch.no_grad():
        A = attention_output(m, X)
        y = target(X).reshape(-1)
    dist = torch.cdist(A, A)
    gap = (y[:, None] - y[None, :]).abs()
    ok = gap >= delta
    if not ok.any():
        raise ConfigError(f"no sampled pair has a target gap >= {delta}; lower delta")
    dist = torch.where(ok, dist, torch.full_like(dist, math.inf))
    flat = torch.argsort(dist.reshape(-1))[: 2 * n_starts]
    best, best_gap = float(dist.reshape(-1)[flat[0]]), float(gap.reshape(-1)[flat[0]])
    lo, hi = box
    for idx in flat[::2].tolist():
        i, j = divmod(idx, n_samples)
        x1 = X[i : i + 1].clone().requires_grad_(True)
        x2 = X[j : j + 1].clone().requires_grad_(True)
        opt = torch.optim.Adam([x1, x2], lr=0.01 * (hi - lo))
        for _ in range(steps):
            a1, a2 = attention_output(m, x1), attention_output(m, x2)
            g = (target(x1) - target(x2)).abs().reshape(())
            loss = (a1 - a2).pow(2).sum() + 100.0 * torch.relu(delta - g) ** 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                x1.clamp_(lo, hi)
                x2.clamp_(lo, hi)
            with torch.no_grad():
                a1, a2 = attention_output(m, x1), attention_output(m, x2)
                g = float((target(x1) - target(x2)).abs().reshape(()))
                dd = float((a1 - a2).norm())
            if g >= delta and dd < best:
                best, best_gap = dd, g
    return {
        "min_dist": best,
        "lipschitz": delta / best if best > 0 else math.inf,
        "gap": best_gap,
        "pairs": n_samples * (n_samples - 1) // 2,
    }
