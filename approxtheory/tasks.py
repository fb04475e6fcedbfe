"""Target functions of the digests, with samplers and structured inputs for error search.

Example::

    >>> import numpy as np
    >>> from approxtheory.tasks import MaxPlusMin
    >>> task = MaxPlusMin(T=8)
    >>> X = task.sample(4, np.random.default_rng(0))
    >>> task.target(X).shape
    (4,)

Every target is written once, in torch (float64), so that the error search can differentiate it;
``target`` accepts numpy or torch arrays of shape ``(B, T, d)``. A task knows its domain
(``project`` maps any array back into it) and offers ``structured(rng)``: vertices and faces of the
domain, near-ties and all-equal blocks, where sup-norm errors of softmax constructions live.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import torch

from .errors import ConfigError
from .resources import array_bytes, require

__all__ = [
    "Task",
    "GeneralizedRetrieval",
    "MaxPlusMin",
    "SyntheticMaxSum",
    "KthLargest",
    "PairwiseMax",
    "LagExtraction",
    "ScalarMax",
    "Memorize",
    "TriangleCenter",
    "SpecificPositions",
    "Induction",
    "TASKS",
]


def _check_int(name, v, lo=1):
    if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)) or v < lo:
        raise ConfigError(f"{name} must be an integer >= {lo} (got {v!r})")
    return int(v)


_SEED_MAX = 2**32 - 1


def _check_seed(seed) -> int:
    if (
        not isinstance(seed, (int, np.integer))
        or isinstance(seed, (bool, np.bool_))
        or not 0 <= seed <= _SEED_MAX
    ):
        raise ConfigError(f"seed must be an integer in 0..{_SEED_MAX} (got {seed!r})")
    return int(seed)


def _finite_array(name, a, what: str = "") -> np.ndarray:
    """``a`` as a finite float64 array, or a ConfigError."""
    try:
        out = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(f"{name} must be a numeric array{what} ({e})") from None
    if not np.isfinite(out).all():
        raise ConfigError(f"{name} must be finite{what} (got NaN or infinite entries)")
    return out


def _finite_real(name, v) -> float:
    if (
        not isinstance(v, (int, float, np.integer, np.floating))
        or isinstance(v, (bool, np.bool_))
        or not np.isfinite(float(v))
    ):
        raise ConfigError(f"{name} must be a finite number (got {v!r})")
    return float(v)


def _as_inputs(name: str, X) -> np.ndarray:
    """Inputs as a float64 numpy array, or a ConfigError (strings, objects, complex values)."""
    try:
        a = np.asarray(X)
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(f"{name} must be a numeric array of shape (batch, T, d) ({e})") from None
    if a.dtype.kind not in "biuf":
        raise ConfigError(
            f"{name} must be a real-valued array of shape (batch, T, d) (got dtype {a.dtype})"
        )
    return a.astype(np.float64, copy=False)


class Task:
    """Base class: a map from ``(B, T, d)`` inputs to ``(B,)`` (or ``(B, T)`` per-token) targets."""

    name = "task"
    per_token = False
    domain = "box"  # "box" (lo..hi per coordinate) or "sphere" (unit-norm tokens)
    lo, hi = 0.0, 1.0

    def __init__(self, T: int, d: int):
        self.T = _check_int("T", T)
        self.d = _check_int("d", d)

    # --- the target ---------------------------------------------------------------------------
    def _target(self, X: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def target(self, X):
        """Target values; numpy in -> numpy out, torch in -> torch out (differentiable)."""
        if isinstance(X, torch.Tensor):
            if X.is_complex():
                raise ConfigError(f"{self.name} expects real-valued inputs (got {X.dtype})")
            self._check(X)
            return self._target(X.to(torch.float64))
        X = _as_inputs("inputs", X)
        self._check(X)
        return self._target(torch.from_numpy(X)).numpy()

    def _check(self, X):
        if X.ndim != 3 or X.shape[1] != self.T or X.shape[2] != self.d:
            raise ConfigError(
                f"{self.name} expects inputs of shape (batch, {self.T}, {self.d}) "
                f"(got {tuple(X.shape)})"
            )

    # --- the domain ---------------------------------------------------------------------------
    def project(self, X):
        if self.domain == "sphere":
            if isinstance(X, torch.Tensor):
                return X / X.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1e-12)
        if isinstance(X, torch.Tensor):
            return X.clamp(self.lo, self.hi)
        return np.clip(X, self.lo, self.hi)

    def _check_sample(self, n, rng) -> int:
        """``n`` (an integer >= 0) once the draw of ``n`` float64 sequences is known to fit."""
        n = _check_int("n", n, lo=0)
        if not isinstance(rng, np.random.Generator):
            raise ConfigError(
                f"rng must be a numpy Generator (np.random.default_rng(seed)) (got "
                f"{type(rng).__name__})"
            )
        require(
            bytes=array_bytes(n, self.T, self.d),
            what=f"sampling {n} sequences of {self.name} (T={self.T}, d={self.d})",
        )
        return n

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        n = self._check_sample(n, rng)
        if self.domain == "sphere":
            return self.project(rng.standard_normal((n, self.T, self.d)))
        return rng.uniform(self.lo, self.hi, size=(n, self.T, self.d))

    def structured(self, rng: np.random.Generator, max_n: int = 512) -> np.ndarray:
        """Vertices, faces, near-ties and all-equal blocks of the domain (at most ``max_n``)."""
        max_n = self._check_structured(rng, max_n)
        T, d, lo, hi = self.T, self.d, self.lo, self.hi
        out = []
        if self.domain == "sphere":
            basis = np.eye(d)
            for i in range(min(d, 4)):
                X = np.tile(basis[i], (T, 1))
                out.append(X)
                Y = X.copy()
                Y[0] = -basis[i]
                out.append(Y)
            for _ in range(16):  # near-ties: two tokens almost equal, rest random
                X = self.sample(1, rng)[0]
                X[min(1, T - 1)] = self.project(X[0] + 1e-3 * rng.standard_normal(d))
                out.append(X)
            return np.stack(out[:max_n])
        # all-equal blocks at several levels
        for v in np.linspace(lo, hi, 5):
            out.append(np.full((T, d), v))
        # vertices: exhaustive when small, else random vertices
        n_cells = T * d
        if n_cells <= 8:
            for bits in itertools.product((lo, hi), repeat=n_cells):
                out.append(np.array(bits, dtype=float).reshape(T, d))
        else:
            for _ in range(32):
                out.append(rng.choice([lo, hi], size=(T, d)))
        # one spike on a flat background (faces of the box)
        for t in range(min(T, 16)):
            X = np.full((T, d), lo)
            X[t] = hi
            out.append(X)
            Y = np.full((T, d), hi)
            Y[t] = lo
            out.append(Y)
        # near-ties: the two largest (and smallest) within small gaps of each other
        for gap in (*np.geomspace(1e-1, 1e-6, 11), 0.0):
            for _ in range(2):
                X = rng.uniform(lo, hi, size=(T, d))
                top = rng.uniform(lo + (hi - lo) / 2, hi)
                X[0] = top
                X[min(1, T - 1)] = top - gap * (hi - lo)
                out.append(X)
                Y = rng.uniform(lo, hi, size=(T, d))
                bot = rng.uniform(lo, lo + (hi - lo) / 2)
                Y[0] = bot
                Y[min(1, T - 1)] = bot + gap * (hi - lo)
                out.append(Y)
        # half the tokens equal to one value, the rest at another (all-equal blocks)
        for a, b in ((lo, hi), (hi, lo), (0.5 * (lo + hi), hi)):
            X = np.full((T, d), a)
            X[: T // 2] = b
            out.append(X)
        X = np.stack(out)
        if len(X) > max_n:
            X = X[rng.choice(len(X), size=max_n, replace=False)]
        return self.project(X)

    def _check_structured(self, rng, max_n) -> int:
        max_n = _check_int("max_n", max_n, lo=1)
        if not isinstance(rng, np.random.Generator):
            raise ConfigError(
                f"rng must be a numpy Generator (np.random.default_rng(seed)) (got "
                f"{type(rng).__name__})"
            )
        # every task builds at least 16 candidate inputs (of T x d floats) before keeping max_n
        require(
            bytes=array_bytes(min(16, max_n), self.T, self.d),
            what=f"the structured inputs of {self.name} (T={self.T}, d={self.d})",
        )
        return max_n

    def describe(self) -> dict:
        return {"task": self.name, "T": self.T, "d": self.d, "domain": self.domain}


# ---------------------------------------------------------------------------------------------
class GeneralizedRetrieval(Task):
    """Generalized D-retrieval (arXiv 2510.06662 eqs. 8-9):
    :math:`H(X) = F_0(\\bar z)`, :math:`\\bar z_i = \\min_{t \\in S_i} f_i(x(t))`.

    ``features`` are torch callables ``(..., d) -> (...)`` into [0, 1]; ``sets`` are lists of
    0-based positions with ``|S_i| >= T/4``; ``outer`` maps ``(..., D) -> (...)``. ``mode="max"``
    uses max instead of min (equivalent via f -> 1 - f). Constructions that realise the features
    exactly need them affine: pass ``affine=(W, b)`` with ``f_i(x) = W[i]·x + b[i]``, and
    ``outer_affine=(c, c0)`` for ``F_0(z) = c·z + c0``.
    """

    name = "generalized_retrieval"

    def __init__(
        self,
        T: int,
        d: int,
        features: Sequence[Callable] | None = None,
        sets: Sequence[Sequence[int]] | None = None,
        outer: Callable | None = None,
        mode: str = "min",
        affine=None,
        outer_affine=None,
    ):
        super().__init__(T, d)
        if mode not in ("min", "max"):
            raise ConfigError(f"mode must be min or max (got {mode!r})")
        self.mode = mode
        self.affine = None
        if affine is not None:
            if (
                isinstance(affine, (str, bytes))
                or not hasattr(affine, "__len__")
                or len(affine) != 2
            ):
                raise ConfigError(f"affine must be a pair (W, b) (got {affine!r})")
            W, b = (_finite_array(n, a, " (affine features)") for n, a in zip("Wb", affine))
            if W.ndim != 2 or W.shape[1] != d or b.shape != (W.shape[0],):
                raise ConfigError(f"affine features need W of shape (D, {d}) and b of shape (D,)")
            self.affine = (W, b)
            Wt, bt = torch.from_numpy(W), torch.from_numpy(b)
            features = [(lambda x, i=i: x @ Wt[i] + bt[i]) for i in range(W.shape[0])]
        if features is None or isinstance(features, (str, bytes)) or not len(features):
            raise ConfigError("generalized retrieval needs at least one feature f_i")
        self.features = list(features)
        if not all(callable(f) for f in self.features):
            raise ConfigError("features must be functions (..., d) -> (...) (torch callables)")
        self.D = len(self.features)
        # the sets are held as sorted Python lists of positions and a (D, T) mask, built
        # through a set of each: refuse what cannot fit before building them. Lower bounds:
        # 8 bytes a position in each list, 1 in the mask, 16 in the transient set, and for the
        # default sets (every position) the list of T int objects (28 + 8 bytes each)
        require(
            bytes=array_bytes(self.D, self.T, itemsize=9)
            + array_bytes(self.T, itemsize=16 + (36 if sets is None else 0)),
            what=f"the position sets of {self.name} (D={self.D}, T={self.T})",
        )
        if sets is None:
            sets = [list(range(T))] * self.D
        if isinstance(sets, (str, bytes)) or not hasattr(sets, "__len__"):
            raise ConfigError(f"sets must be a list of position lists (got {sets!r})")
        if len(sets) != self.D:
            raise ConfigError(f"need one set S_i per feature (got {len(sets)} sets, D={self.D})")
        self.sets = []
        for i, S in enumerate(sets):
            if isinstance(S, (str, bytes)) or not hasattr(S, "__iter__"):
                raise ConfigError(f"S_{i + 1} must be a collection of positions (got {S!r})")
            S = list(S)
            if any(
                not isinstance(t, (int, np.integer)) or isinstance(t, (bool, np.bool_)) for t in S
            ):
                raise ConfigError(f"S_{i + 1} must hold integer positions (got {S!r})")
            S = sorted({int(t) for t in S})
            if not S or S[0] < 0 or S[-1] >= T:
                raise ConfigError(f"S_{i + 1} must be a non-empty subset of 0..{T - 1}")
            if 4 * len(S) < T:
                raise ConfigError(f"|S_{i + 1}| must be >= T/4 (got {len(S)}, T={T})")
            self.sets.append(S)
        self.outer_affine = None
        if outer_affine is not None:
            if (
                isinstance(outer_affine, (str, bytes))
                or not hasattr(outer_affine, "__len__")
                or len(outer_affine) != 2
            ):
                raise ConfigError(f"outer_affine must be a pair (c, c0) (got {outer_affine!r})")
            c, c0 = outer_affine
            c = _finite_array("c", c, " (outer_affine)")
            c0 = _finite_real("c0 (outer_affine)", c0)
            if c.shape != (self.D,):
                raise ConfigError(f"outer_affine needs c of shape ({self.D},)")
            self.outer_affine = (c, float(c0))
            ct = torch.from_numpy(c)
            outer = lambda z: z @ ct + float(c0)  # noqa: E731
        if outer is not None and not callable(outer):
            raise ConfigError("outer must be a function (..., D) -> (...) (a torch callable)")
        self.outer = outer if outer is not None else (lambda z: z.sum(-1))
        self._masks = torch.zeros(self.D, T, dtype=torch.bool)
        for i, S in enumerate(self.sets):
            self._masks[i, S] = True

    def z(self, X: torch.Tensor) -> torch.Tensor:
        vals = torch.stack([f(X) for f in self.features], dim=-1)  # (B, T, D)
        fill = float("inf") if self.mode == "min" else float("-inf")
        vals = vals.masked_fill(~self._masks.T[None], fill)
        return vals.amin(dim=1) if self.mode == "min" else vals.amax(dim=1)  # (B, D)

    def _target(self, X):
        return self.outer(self.z(X))

    def describe(self):
        return {
            **super().describe(),
            "D": self.D,
            "mode": self.mode,
            "set_sizes": [len(s) for s in self.sets],
        }


class MaxPlusMin(GeneralizedRetrieval):
    """The motivating toy (eq. 7): d = 1, H(X) = max_t x(t) + min_t x(t); D = 2.

    In the min form of the definition: f_1 = 1 - x, f_2 = x, F_0(z) = (1 - z_1) + z_2.
    """

    name = "max_plus_min"

    def __init__(self, T: int):
        super().__init__(
            T, 1, affine=([[-1.0], [1.0]], [1.0, 0.0]), outer_affine=([-1.0, 1.0], 1.0), mode="min"
        )


class SyntheticMaxSum(GeneralizedRetrieval):
    """The synthetic task of §5.1: y = Σ_i max_t a_iᵀ x(t) (D = len(a)).

    The paper samples x ~ N(0, I) (unbounded); sup-norm errors need a compact domain, so the domain
    here is the box [-1, 1]^d (Gaussian sampling is available for training via ``sample_gaussian``).
    The a_i are not given by the paper: default a seeded random draw, rows normalised to unit norm.
    """

    name = "synthetic_max_sum"
    lo, hi = -1.0, 1.0

    def __init__(self, T: int, d: int = 4, D: int = 4, a=None, seed: int = 0):
        _check_int("T", T)
        d = _check_int("d", d)
        if a is None:
            D = _check_int("D", D)
            seed = _check_seed(seed)
            require(bytes=array_bytes(D, d), what=f"the features of {self.name} (D={D}, d={d})")
            a = np.random.default_rng(seed).standard_normal((D, d))
            a /= np.linalg.norm(a, axis=1, keepdims=True)
        a = _finite_array("a", a)
        if a.ndim != 2 or a.shape[1] != d or not len(a):
            raise ConfigError(f"a must have shape (D, d={d}) (got {a.shape})")
        self.a = a
        super().__init__(
            T, d, affine=(a, np.zeros(len(a))), outer_affine=(np.ones(len(a)), 0.0), mode="max"
        )

    def sample_gaussian(self, n, rng):
        n = self._check_sample(n, rng)
        return rng.standard_normal((n, self.T, self.d))


class ScalarMax(GeneralizedRetrieval):
    """max_t x(t) for scalar tokens in [0, 1] (D = 1): the single-head softmax-retrieval target."""

    name = "scalar_max"

    def __init__(self, T: int):
        super().__init__(T, 1, affine=([[1.0]], [0.0]), outer_affine=([1.0], 0.0), mode="max")


class KthLargest(Task):
    """TASK-KTH(k): F(X) = f(k-th largest of the scalar tokens), x(t) in [0, 1] (d = 1)."""

    name = "kth_largest"

    def __init__(self, T: int, k: int = 2, f: Callable | None = None, f_name: str = "identity"):
        super().__init__(T, 1)
        self.k = _check_int("k", k)
        if self.k > T:
            raise ConfigError(f"k must be <= T (got k={k}, T={T})")
        if f is not None and not callable(f):
            raise ConfigError(f"f must be a function of the k-th largest value (got {f!r})")
        self.f = f if f is not None else (lambda u: u)
        self.f_name = str(f_name)

    def _target(self, X):
        v = torch.topk(X[..., 0], self.k, dim=1).values[:, -1]
        return self.f(v)

    def describe(self):
        return {**super().describe(), "k": self.k, "f": self.f_name}


class PairwiseMax(Task):
    """TASK-PMAX(D): F(X) = Σ_i max_{s,t} x(s)ᵀ A_i x(t), unit-norm tokens.

    The A_i are seeded random matrices scaled to spectral norm ``scale`` (default 1/2, so every
    score lies in [-1/2, 1/2])."""

    name = "pairwise_max"
    domain = "sphere"
    lo, hi = -1.0, 1.0

    def __init__(self, T: int, d: int = 4, D: int = 1, A=None, seed: int = 0, scale: float = 0.5):
        super().__init__(T, d)
        if A is None:
            D = _check_int("D", D)
            seed = _check_seed(seed)
            scale = _finite_real("scale", scale)
            if not scale > 0:
                raise ConfigError(f"scale must be a finite number > 0 (got {scale!r})")
            require(
                bytes=array_bytes(2 * D, d, d),
                what=f"the matrices of {self.name} (D={D}, d={d})",
            )
            A = np.random.default_rng(seed).standard_normal((D, d, d))
            A = np.stack([scale * a / np.linalg.norm(a, 2) for a in A])
        A = _finite_array("A", A)
        if A.ndim != 3 or A.shape[1:] != (d, d) or not len(A):
            raise ConfigError(f"A must have shape (D, {d}, {d}) (got {A.shape})")
        self.A = A
        self.D = len(A)
        self._A = torch.from_numpy(A)

    def _target(self, X):
        # scores[b, i, s, t] = x(s)ᵀ A_i x(t)
        sc = torch.einsum("bsd,ide,bte->bist", X, self._A, X)
        return sc.flatten(2).amax(-1).sum(-1)

    def describe(self):
        return {**super().describe(), "D": self.D}


class LagExtraction(Task):
    """Per-token lag extraction y_t = x_{t-k} (tradeoffs digest §5, C1); scalar tokens.

    Rows t < k have no target and are NaN in the output; error measures skip them. The theory is for
    i.i.d. tokens of unit variance, so the domain is [-sqrt(3), sqrt(3)] (uniform, variance 1)."""

    name = "lag_extraction"
    per_token = True
    lo, hi = -float(np.sqrt(3.0)), float(np.sqrt(3.0))

    def __init__(self, T: int, k: int = 2):
        super().__init__(T, 1)
        self.k = _check_int("k", k, lo=0)
        if self.k >= T:
            raise ConfigError(f"lag k must be < T (got k={k}, T={T})")

    def _target(self, X):
        y = torch.full(X.shape[:2], float("nan"), dtype=X.dtype)
        y[:, self.k :] = X[:, : self.T - self.k, 0]
        return y

    def describe(self):
        return {**super().describe(), "k": self.k}


class Memorize(Task):
    """Identity on the whole sequence: target vec(X) (for HC-K2 / HC-P1)."""

    name = "memorize"

    def _target(self, X):
        return X.reshape(X.shape[0], -1)


class TriangleCenter(Task):
    """TASK-TRI (InfoFlow digest §2.3): F(X) = min_{t1,t2,t3} ‖x(t1) + x(t2) + x(t3)‖, indices
    may repeat (as written); order of comparison 3.

    The experiments' tokens are x ~ N(0, 2 I_2) with the norm clamped to [0.2, 4] (digest §6.2):
    the domain is that annulus (``project`` rescales norms into it), ``sample`` draws from it.
    The target is computed one t1 at a time over the triples t1 <= t2 <= t3 only (the sum is
    symmetric: a sixth of the T³ triples; memory B·T²·d)."""

    name = "triangle_center"
    domain = "annulus"
    lo, hi = -4.0, 4.0
    r_min, r_max = 0.2, 4.0

    def __init__(self, T: int, d: int = 2):
        super().__init__(T, d)

    def project(self, X):
        if isinstance(X, torch.Tensor):
            n = X.norm(dim=-1, keepdim=True)
            return X * n.clamp(self.r_min, self.r_max) / n.clamp_min(1e-12)
        n = np.linalg.norm(X, axis=-1, keepdims=True)
        return X * np.clip(n, self.r_min, self.r_max) / np.maximum(n, 1e-12)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        n = self._check_sample(n, rng)
        return self.project(np.sqrt(2.0) * rng.standard_normal((n, self.T, self.d)))

    def _target(self, X):
        T = self.T
        i, j = torch.triu_indices(T, T)  # (t2, t3) with t2 <= t3, rows t2 = 0, 1, ... in order
        pair = X[:, i, :] + X[:, j, :]  # (B, T(T+1)/2, d)
        best = None
        for t1 in range(T):
            # the pairs with t2 >= t1 are a suffix: rows 0..t1-1 hold T + (T-1) + ... entries
            start = t1 * T - t1 * (t1 - 1) // 2
            m = (pair[:, start:, :] + X[:, t1, None, :]).norm(dim=-1).amin(-1)
            best = m if best is None else torch.minimum(best, m)
        assert best is not None
        return best

    def structured(self, rng: np.random.Generator, max_n: int = 512) -> np.ndarray:
        """Cancelling triples (a zero minimum), all-equal tokens, tokens on both radii, a
        near-cancelling triple at several gaps, and random draws."""
        max_n = self._check_structured(rng, max_n)
        T, d = self.T, self.d
        out = []
        e = np.eye(d)[0]
        for r in (self.r_min, 1.0, self.r_max):
            out.append(np.tile(r * e, (T, 1)))  # all equal: min = 3r
        for gap in (*np.geomspace(1e-1, 1e-6, 6), 0.0):
            X = self.sample(1, rng)[0]
            u = X[0] / np.linalg.norm(X[0])
            v = np.array([-u[1], u[0], *([0.0] * (d - 2))]) if d >= 2 else -u
            X[0] = u  # three unit vectors at 120 degrees sum to ~0
            X[min(1, T - 1)] = -0.5 * u + np.sqrt(3) / 2 * v
            X[min(2, T - 1)] = -0.5 * u - np.sqrt(3) / 2 * v + gap * u
            out.append(X)
        for _ in range(8):  # one token against many on the opposite side
            X = np.tile(self.r_max * e, (T, 1))
            X[0] = -self.r_min * e
            out.append(X[rng.permutation(T)])
        while len(out) < min(max_n, 64):
            out.append(self.sample(1, rng)[0])
        return self.project(np.stack(out[:max_n]))

    def describe(self):
        return {**super().describe(), "norm_range": [self.r_min, self.r_max]}


class SpecificPositions(Task):
    """TASK-SPA (InfoFlow digest §2.4): F(X) = x(1) + ... + x(p) (p = 3 in the paper, T = 10,
    x ~ N(0, I_2)); a vector target of shape ``(B, d)``. ``offset`` > 0 sums x(offset + 1) ..
    x(offset + p) instead (the off-by-one mutant of IF-E1 uses offset 1).

    The sup-norm domain is the box [-3, 3]^d (``sample_gaussian`` gives the paper's draws)."""

    name = "specific_positions"
    lo, hi = -3.0, 3.0

    def __init__(self, T: int = 10, d: int = 2, p: int = 3, offset: int = 0):
        super().__init__(T, d)
        self.p = _check_int("p", p)
        self.offset = _check_int("offset", offset, lo=0)
        if self.offset + self.p > T:
            raise ConfigError(f"offset + p must be <= T (got offset={offset}, p={p}, T={T})")

    def _target(self, X):
        return X[:, self.offset : self.offset + self.p].sum(1)

    def sample_gaussian(self, n, rng):
        n = self._check_sample(n, rng)
        return rng.standard_normal((n, self.T, self.d))

    def describe(self):
        return {**super().describe(), "p": self.p, "offset": self.offset}


class Induction(Task):
    """TASK-IND (InfoFlow digest §2.7): one-hot tokens over a vocabulary of size ``d``; the
    target is the token after the latest earlier occurrence of the last token x(T):
    x(s+1) with s < T the largest index such that x(s) = x(T) (0-based ``s < T-1``), or the zero
    vector when x(T) does not occur earlier. A vector target of shape ``(B, d)``.

    ``sample`` plants an earlier occurrence of the last token in every draw; ``project`` maps
    any array to the one-hot of its largest coordinate."""

    name = "induction"
    domain = "onehot"
    lo, hi = 0.0, 1.0

    def __init__(self, T: int, d: int = 8):
        super().__init__(T, d)
        if self.T < 3:
            raise ConfigError(f"induction needs T >= 3 (got T={T})")
        if self.d < 2:
            raise ConfigError(f"induction needs a vocabulary of d >= 2 tokens (got d={d})")

    def project(self, X):
        if isinstance(X, torch.Tensor):
            return torch.nn.functional.one_hot(X.argmax(-1), self.d).to(X.dtype)
        return np.eye(self.d)[np.asarray(X).argmax(-1)]

    def _ids(self, rng, n):
        ids = rng.integers(0, self.d, size=(n, self.T))
        s = rng.integers(0, self.T - 2, size=n)  # the planted earlier occurrence
        ids[np.arange(n), s] = ids[:, -1]
        return ids

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        n = self._check_sample(n, rng)
        return np.eye(self.d)[self._ids(rng, n)]

    def _target(self, X):
        ids = X.argmax(-1)  # (B, T)
        same = ids[:, :-2] == ids[:, -1:]  # earlier positions s = 0..T-3 with x(s) = x(T)
        pos = torch.arange(self.T - 2).expand_as(same)
        s = torch.where(same, pos, torch.full_like(pos, -1)).amax(1)  # latest, -1 if none
        nxt = X[torch.arange(X.shape[0]), (s + 1).clamp(max=self.T - 1)]
        return torch.where((s >= 0)[:, None], nxt, torch.zeros_like(nxt))

    def structured(self, rng: np.random.Generator, max_n: int = 512) -> np.ndarray:
        """Several earlier occurrences (the latest must win), an occurrence at the first and at
        the last possible position, runs of one token, no earlier occurrence, and draws."""
        max_n = self._check_structured(rng, max_n)
        T, d = self.T, self.d
        rows = []
        rows.append(np.zeros(T, dtype=int))  # one token everywhere
        a = np.arange(T) % d
        rows.append(a)  # a cycle: many occurrences
        for s in (0, T - 3):
            r = (np.arange(T) % (d - 1)) + 1
            r[-1], r[s] = 0, 0
            rows.append(r)
        r = np.ones(T, dtype=int)
        r[-1] = 0
        rows.append(r)  # no earlier occurrence: zero target
        for _ in range(16):
            rows.append(self._ids(rng, 1)[0])
        return np.eye(d)[np.stack(rows[:max_n])]

    def describe(self):
        return {**super().describe(), "vocabulary": self.d}


TASKS = {
    c.name: c
    for c in (
        GeneralizedRetrieval,
        MaxPlusMin,
        SyntheticMaxSum,
        ScalarMax,
        KthLargest,
        PairwiseMax,
        LagExtraction,
        Memorize,
        TriangleCenter,
        SpecificPositions,
        Induction,
    )
}
