"""A panel of constructions whose worst-case error is known exactly, to measure how much of the
supremum :func:`approxtheory.measure.sup_error` finds (``approxtheory bench search``).

Example::

    >>> from approxtheory.bench.search import panel, known_softmax_max
    >>> round(known_softmax_max(T=64, beta=1e4) * 1e4, 4)     # W(63/e), W = Lambert's W
    2.3071
    >>> [c.label for c in panel()][:2]
    ['softmax T=4 β=1e+02', 'softmax T=4 β=1e+04']

Every known value is computed here independently of the model (closed forms or enumeration in
numpy), never by the code under test:

* **softmax max head** (``softmax_retrieval``, scalar tokens in [0, 1]): the error is
  ``Σ_t p_t g_t`` with gaps ``g_t = max − x_t`` and ``p ∝ e^{−β g}``. For fixed other tokens,
  ``∂E/∂g_t`` has the sign of ``1 − β g_t + β E``, so each token's gap is optimal at
  ``g* = 1/β + E``; at the supremum every non-maximal token sits at the same gap. With
  ``u = β g*`` the fixed point reads ``(u − 1) e^{u} = T − 1``, i.e.
  ``E* = W((T − 1)/e) / β`` (Lambert's W), valid while ``g* = (1 + W)/β <= 1``.
* **HC-K1 with gate −1** (``hc_k1``, max over the first half + min over the second): the worst
  case over the vertices {0, 1}^T, by exhaustive enumeration. Within each half the error depends
  only on how many tokens are 1 (the construction is permutation-invariant inside a set), so the
  2^T vertices reduce to (T/2 + 1)² count pairs. (The supremum over the whole box could exceed
  the vertex maximum; the certified upper bracket, where computed, bounds the gap.)
* **HC-L9's ReLU max network** (``hc_l9``): the network outputs Σ_j min(S_j, 1/n_g) with
  S_j = Σ_t ReLU(x_t − j/n_g), which is >= max_t x_t; the excess is largest when all T tokens
  sit at j/n_g + 1/(T n_g), where it is (1 − 1/T)/n_g.
* **HC-K1 synthetic with D = 1** (``hc_k1_synthetic``): one head retrieving max_t aᵀx(t) over
  the box [−1, 1]^d; the features aᵀx range over [−‖a‖₁, ‖a‖₁] independently per token, so the
  worst case is the softmax one on an interval of width W = 2‖a‖₁: W · W((T−1)/e)/(βW).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Case",
    "panel",
    "softmax_cases",
    "hc_k1_cases",
    "synthetic_cases",
    "known_softmax_max",
    "known_hc_k1_vertices",
    "known_hc_l9",
    "run_case",
    "run_panel",
]


def known_softmax_max(T: int, beta: float, width: float = 1.0) -> float:
    """sup over [0, width]^T of max_t x_t − Σ_t softmax(βx)_t x_t (closed form, see module doc)."""
    from scipy.special import lambertw

    if T < 2:
        return 0.0
    w = float(lambertw((T - 1) / math.e).real)
    if (1 + w) / beta <= width:
        return w / beta
    # the optimal gap is beyond the domain: every other token at the far end, gap = width
    g = width
    return (T - 1) * g * math.exp(-beta * g) / (1 + (T - 1) * math.exp(-beta * g))


def known_hc_k1_vertices(T: int, beta: float, gate: float = -1.0) -> tuple[float, tuple[int, int]]:
    """Max error of HC-K1 (split halves, D = 2) over the vertices {0, 1}^T and the counts
    (ones in the first half, ones in the second half) that attain it.

    The construction's output is (1 − z̃₁) + z̃₂ with z̃ᵢ = Σ_t σ(ρᵢ)_t fᵢ(x_t); f₁ = 1 − x with
    score β(x + r₁), f₂ = x with score β(−x + r₂), r_i = 0 in S_i and ``gate`` outside. Written
    here from the paper's definition with counts, in log space."""
    n1, n2 = T // 2, T - T // 2
    best, arg = -1.0, (0, 0)
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            # groups: (x, in S2, count)
            groups = [(1.0, False, a), (0.0, False, n1 - a), (1.0, True, b), (0.0, True, n2 - b)]
            xs = np.array([g[0] for g in groups])
            cnt = np.array([g[2] for g in groups], dtype=float)
            in2 = np.array([g[1] for g in groups])
            r1 = np.where(in2, gate, 0.0)
            r2 = np.where(in2, 0.0, gate)
            live = cnt > 0
            avg = []
            for logit in (beta * (xs + r1), beta * (-xs + r2)):
                lw = np.where(live, np.log(np.where(live, cnt, 1.0)) + logit, -np.inf)
                m = lw[live].max()
                w = np.exp(lw - m)
                avg.append(float((w * xs).sum() / w.sum()))
            max1 = 1.0 if a > 0 else 0.0
            min2 = 0.0 if b < n2 else 1.0
            target = max1 + min2
            model = (1 - (1 - avg[0])) + avg[1]  # (1 − z̃₁) + z̃₂ with z̃₁ = avg(1 − x)
            e = abs(model - target)
            if e > best:
                best, arg = e, (a, b)
    return best, arg


def known_hc_l9(T: int, eps: float) -> float:
    """sup error of HC-L9's max network with n_g = ⌈1/ε⌉ levels: (1 − 1/T)/n_g."""
    n_g = math.ceil(1 / eps - 1e-12)
    return (1 - 1 / T) / n_g


@dataclass
class Case:
    """One row of the search panel: a construction at fixed knobs whose worst error is known in
    closed form or by enumeration (``known``, with ``how`` saying how it was derived).
    """

    label: str
    construction: str
    knobs: dict
    # construction -> known worst error (lambdas bind their knobs as defaults, hence the ...)
    known: Callable[..., float]
    how: str
    upper: bool = True  # try the certified upper bracket (small cases)
    extra: dict = field(default_factory=dict)


def _synthetic_known(c) -> float:
    a = np.asarray(c.task.a, dtype=np.float64)
    W = 2 * float(np.abs(a[0]).sum())
    beta = float(c.knobs["beta"])
    return W * known_softmax_max(c.task.T, beta * W, width=1.0)


def select_cases(cases: list, only: str | None, fields=("construction",), panels=None) -> list:
    """The ``cases`` whose label contains ``only`` or whose ``fields`` equal it (all where
    ``only`` is None). An empty ``only`` is refused, and so is one that matches no case of any
    of ``panels`` (default: ``cases``), listing what exists."""
    from ..errors import ConfigError

    if only is None:
        return list(cases)

    def hit(c, fields=fields) -> bool:
        return only in c.label or any(getattr(c, f, None) == only for f in fields)

    if not str(only).strip():
        raise ConfigError("--only needs a case label or a construction (got '')")
    chosen = [c for c in cases if hit(c)]
    every = [c for p in (panels or [cases]) for c in p]
    if not any(hit(c, (*fields, "construction", "claim")) for c in every):
        names = sorted({c.label for c in every} | {getattr(c, "construction", "") for c in every})
        raise ConfigError(
            f"--only {str(only)[:60]!r} matches no case; the cases and constructions: "
            f"{', '.join(n for n in names if n)}"
        )
    return chosen


def softmax_cases(make) -> list:
    """The softmax-retrieval cases of this panel and the bracket's
    (:func:`approxtheory.bench.bracket.bracket_panel`): T = 4, 64, 1024 at β = 1e2 and 1e4, each
    made by ``make(label, construction, knobs, known, how)``."""
    return [
        make(
            f"softmax T={T} β={beta:.0e}",
            "softmax_retrieval",
            {"T": T, "beta": beta},
            lambda c, T=T, beta=beta: known_softmax_max(T, beta),
            "closed form W((T−1)/e)/β",
        )
        for T in (4, 64, 1024)
        for beta in (1e2, 1e4)
    ]


def hc_k1_cases(make, Ts, how: str) -> list:
    """HC-K1 with gate −1 at β = 1e3 and each T of ``Ts``, known by the vertex enumeration (as
    :func:`softmax_cases`)."""
    return [
        make(
            f"hc_k1 gate=-1 T={T} β=1e3",
            "hc_k1",
            {"T": T, "beta": 1000.0, "gate": -1.0},
            lambda c, T=T: known_hc_k1_vertices(T, 1000.0, -1.0)[0],
            how,
        )
        for T in Ts
    ]


def synthetic_cases(make, how: str) -> list:
    """The synthetic HC-K1 instance with D = 1, T = 16 at d = 2 and 4 (as :func:`softmax_cases`)."""
    return [
        make(
            f"hc_k1_synthetic D=1 d={d} T=16 β=1e2",
            "hc_k1_synthetic",
            {"T": 16, "D": 1, "d": d, "beta": 100.0},
            _synthetic_known,
            how,
        )
        for d in (2, 4)
    ]


def panel() -> list[Case]:
    """The benchmark panel: 14 cases with known worst errors."""
    cases = [
        *softmax_cases(Case),
        *hc_k1_cases(Case, (8, 32, 64), "exhaustive over {0,1}^T (counts per half)"),
        *(
            Case(
                f"hc_l9 T={T} ε={eps}",
                "hc_l9",
                {"T": T, "eps": eps},
                lambda c, T=T, eps=eps: known_hc_l9(T, eps),
                "closed form (1−1/T)/n_g",
            )
            for T, eps in ((4, 0.1), (16, 0.1), (4, 0.25))
        ),
        *synthetic_cases(Case, "closed form on the feature interval [−‖a‖₁, ‖a‖₁]"),
    ]
    for case in cases:  # the certified upper bracket on the small cases only (T <= 16, d <= 2)
        case.upper = case.knobs["T"] <= 16 and case.knobs.get("d", 1) <= 2
    return cases


def run_case(
    case: Case, budget: int = 4096, seed: int = 0, upper: bool = True, upper_time: float = 10.0
) -> dict:
    """Build, compute the known worst, search, and (optionally) bracket from above with
    :meth:`Construction.certify` (T <= 16, d <= 2)."""
    from ..constructions import build
    from ..measure import sup_error

    c = build(case.construction, **case.knobs)
    known = float(case.known(c))
    t0 = time.perf_counter()
    r = sup_error(c.model, c.task, budget=budget, seed=seed)
    secs = time.perf_counter() - t0
    row = {
        "case": case.label,
        "construction": case.construction,
        "knobs": case.knobs,
        "known": known,
        "how_known": case.how,
        "found": r.value,
        "ratio": r.value / known if known > 0 else None,
        "evals": r.n_evals,
        "seconds": round(secs, 3),
        "by_source": r.by_source,
        "upper": None,
        "upper_reason": "not requested",
    }
    if upper:
        t1 = time.perf_counter()
        cert = c.certify(time_limit=upper_time, witness=r.witness)
        row["upper"] = cert["sup_error_upper"]
        row["upper_reason"] = cert["sup_error_upper_reason"]
        row["upper_seconds"] = round(time.perf_counter() - t1, 3)
    return row


def run_panel(
    budget: int = 4096,
    seed: int = 0,
    upper: bool = True,
    progress: bool = False,
    only: str | None = None,
) -> list[dict]:
    """Run :func:`~approxtheory.measure.sup_error` on every panel case (or the cases whose label
    contains ``only`` or whose construction is ``only``) and return one row per case: found,
    known, their ratio and, with ``upper``, the certified upper bracket.
    """
    rows = []
    for case in select_cases(panel(), only):
        row = run_case(case, budget=budget, seed=seed, upper=upper)
        if progress:
            import sys

            print(
                f"  {row['case']:<34} known {row['known']:.4g}  found {row['found']:.4g}  "
                f"ratio {row['ratio']:.3f}  {row['seconds']:.1f} s",
                file=sys.stderr,
            )
        rows.append(row)
    return rows
