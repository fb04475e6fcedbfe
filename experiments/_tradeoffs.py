"""Shared pieces of the trade-off experiments (tradeoffs digest §8 P1, P3, P4, P6, P7): the
position-only heads on the C1 features optimised per head dimension (P1; also read by the TO-T2
and TO-X2 checks), the synthetic
3-lag extraction task, per-head SVD truncation and head pruning of a trained model, the fit of
the TO-T1 template, and the real-text corpus (the identifiability experiment's default and
``--corpus``).

Everything random comes from the caller's seed through local generators."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from approxtheory.tasks import Task

__all__ = [
    "c1_features",
    "head_errors",
    "causal_rows",
    "adam",
    "scored_rows",
    "optimise_heads",
    "HEAD_DIMS",
    "LagMix",
    "lagmix_model",
    "truncate_head",
    "prune_heads",
    "truncate_layer",
    "head_ov_norms",
    "fit_template",
    "template_error",
    "template_hstar",
    "lm_config",
    "lm_val_windows",
    "lm_val_loss",
    "corpus_tokens",
    "check_text_corpus",
    "lagmix_nmse",
    "seeds_summary",
]


# ------------------------------------------------------------------ position-only heads (P1)
#: the head dimensions of P1 (F = 8 features: A has rank <= 16, the peak is shaped by d = 4)
HEAD_DIMS = (1, 2, 4, 8)


def c1_features(T: int, F: int) -> np.ndarray:
    """The digest's §5 C1 positional features [cos(ω_i t), sin(ω_i t)] / sqrt(F),
    ω_i = 100^(-i/F) (unit norm)."""
    t = np.arange(T)[:, None]
    w = 100.0 ** (-np.arange(1, F + 1) / F)[None, :]
    P = np.empty((T, 2 * F))
    P[:, 0::2], P[:, 1::2] = np.cos(w * t), np.sin(w * t)
    return P / np.sqrt(F)


def head_errors(z, valid, tgt, c=None):
    """Exact expected squared error of each query row of a position-only head (torch, float64)
    for i.i.d. unit-variance scalar tokens and target x_tgt:
    (1 - c α_tgt)² + c² Σ_{s≠tgt} α_s².
    ``z``: logits (..., n, W); ``valid``: the visible keys of each row (n, W); ``tgt``: the target
    key of each row (n,); ``c``: read-out per row (None: the best one, α_tgt / Σ_s α_s²)."""
    a = torch.softmax(z.masked_fill(~valid, float("-inf")), -1)
    at = a.gather(-1, tgt.expand(*a.shape[:-1]).unsqueeze(-1)).squeeze(-1)
    others = (a**2).masked_fill(torch.nn.functional.one_hot(tgt, a.shape[-1]).bool(), 0.0).sum(-1)
    if c is None:
        c = at / (at**2 + others)
    return (1 - c * at) ** 2 + c**2 * others


def causal_rows(T: int, rows, k: int):
    """(valid keys, target keys) of the causal query rows ``rows`` with target lag k."""
    rows = torch.as_tensor(rows)
    valid = torch.arange(T)[None, :] <= rows[:, None]
    return valid, rows - k


def adam(params, loss_fn, steps: int, lr: float, stop=None):
    """Plain Adam (β = 0.9, 0.999; ε = 1e-8) on ``params``; ``stop(loss)`` ends it early.
    Returns the number of steps taken."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for i in range(1, steps + 1):
        for p in params:
            p.grad = None
        loss = loss_fn()
        if stop is not None and stop(float(loss.detach())):
            return i - 1
        loss.backward()
        with torch.no_grad():
            for p, mi, vi in zip(params, m, v):
                mi.mul_(0.9).add_(p.grad, alpha=0.1)
                vi.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                p.sub_(lr * (mi / (1 - 0.9**i)) / ((vi / (1 - 0.999**i)).sqrt() + 1e-8))
    return steps


def scored_rows(T: int) -> np.ndarray:
    """The query rows P1 scores: t >= T/2, so that each sees at least T/2 tokens (L = t + 1)."""
    return np.arange(T // 2, T)


def optimise_heads(
    T: int,
    B: float,
    *,
    restarts: int,
    steps: int,
    seed: int,
    ds=HEAD_DIMS,
    F: int = 8,
    k: int = 2,
    lr: float = 0.05,
) -> dict:
    """P1 (tradeoffs digest §8): the best exact error E(d) of rank-d position-only heads on the
    C1 features with logits B·tanh(z/B) (``B = inf``: unsquashed), read-out fixed to 1 (the same
    value map for every head, as X3 assumes), target lag ``k``, rows :func:`scored_rows`; Adam
    in float64 from ``restarts`` seeded restarts per d. Returns ``raw`` (the best restart per d)
    and ``envelope`` (the running minimum over d: rank-d heads contain the rank-d' heads,
    d' < d), both {d: E}. A non-finite error raises (it is a failure, never an error of 0)."""
    from approxtheory.errors import ApproxTheoryError

    g = torch.Generator().manual_seed(int(seed))
    rows = torch.as_tensor(scored_rows(T))
    valid, tgt = causal_rows(T, rows, k)
    P = torch.from_numpy(c1_features(T, F))
    one = torch.ones(len(rows), dtype=torch.float64)
    bounded = math.isfinite(B)
    # every (d, restart) is one independent problem in one batch: a rank-d head is a rank-max(d)
    # factorisation with the columns beyond d masked to zero (their gradients are 0, and Adam is
    # elementwise, so the batch is the same as separate runs from the same start)
    n, dmax = len(ds) * restarts, max(ds)
    mask = torch.zeros(n, 1, dmax, dtype=torch.float64)
    for i, d in enumerate(ds):
        mask[i * restarts : (i + 1) * restarts, :, :d] = 1.0
    U = torch.randn(n, 2 * F, dmax, generator=g, dtype=torch.float64).requires_grad_()
    V = torch.randn(n, 2 * F, dmax, generator=g, dtype=torch.float64).requires_grad_()

    def logits():
        z = P[rows] @ (U * mask) @ (V * mask).transpose(1, 2) @ P.T
        return B * torch.tanh(z / B) if bounded else z

    adam([U, V], lambda: head_errors(logits(), valid, tgt, one).mean(-1).sum(), steps, lr)
    with torch.no_grad():
        e = head_errors(logits(), valid, tgt, one).mean(-1).numpy().reshape(len(ds), restarts)
    if not np.all(np.isfinite(e)):
        raise ApproxTheoryError(f"P1 heads: non-finite error at T = {T}, B = {B}")
    raw = {d: float(e[i].min()) for i, d in enumerate(ds)}
    env = dict(zip(ds, np.minimum.accumulate([raw[d] for d in ds]).tolist()))
    return {"raw": raw, "envelope": env}


# ------------------------------------------------------------------------------------ the task
class LagMix(Task):
    """The digest's continuous 3-lag extraction (§8 P2/P3): x_t ~ N(0, I_p) i.i.d.,
    y_t = tanh(Σ_j W_j x_{t-j}) in R^p for the lags j in ``lags`` (x_s = 0 for s < 0), with fixed
    random W_j drawn from ``task_seed`` (entries N(0, 1/(p·M)), so Σ_j W_j x_{t-j} has unit
    variance per coordinate; ``squash=False`` drops the tanh). Every lag carries p numbers, so
    extracting all of them needs M attention peaks and M·p value channels (the digest's C2
    grouped-heads picture)."""

    name = "lag_mix"
    per_token = True
    domain = "gaussian"

    def __init__(
        self, T: int, p: int = 4, lags=(1, 2, 3), task_seed: int = 1234, squash: bool = True
    ):
        super().__init__(T, p)
        self.lags = tuple(int(j) for j in lags)
        self.squash = squash
        M = len(self.lags)
        g = np.random.default_rng(task_seed)
        self.W = torch.from_numpy(g.standard_normal((M, p, p)) / math.sqrt(p * M))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((n, self.T, self.d))

    def _target(self, X):
        s = torch.zeros_like(X)
        for W, j in zip(self.W.to(X.dtype), self.lags):
            s[:, j:] += X[:, : self.T - j] @ W.T
        return torch.tanh(s) if self.squash else s


def lagmix_model(T: int, p: int, width: int, heads: int, head_dim: int, layers: int = 1):
    """One (or more) causal attention layers on learned absolute positions, per-token GELU
    read-out (hidden 2·width), no FFN: the digest's P2/P3 model."""
    from approxtheory.model import LayerSpec, ModelConfig, Transformer

    return Transformer(
        ModelConfig(
            d_in=p,
            width=width,
            seq_len=T,
            positions="learned",
            readout="tokens",
            causal=True,
            layers=[LayerSpec(heads, head_dim) for _ in range(layers)],
            head_hidden=(2 * width,),
            head_activation="gelu",
            d_out=p,
            dtype="float32",
        )
    )


# ------------------------------------------------------------------------------ compression
def truncate_head(model, layer: int, head: int, r: int, ov: bool = True) -> None:
    """Replace head ``head`` of ``layer`` by its rank-``r`` truncated SVD (digest TO-C1 [DER]):
    the QK circuit M_QK = W_Qᵀ W_K (logits e_tᵀ M_QK e_s · scale) and, with ``ov``, the OV
    circuit M_OV = W_O W_V, each kept to its r leading singular triplets; the head keeps its width
    (rows r.. are zero), so the scale 1/sqrt(head_dim) is unchanged and the logits are exactly
    e_tᵀ M_QK^(r) e_s · scale."""
    w = model.head_weights(layer, head)
    Wq, Wk = w.q.double().cpu().numpy(), w.k.double().cpu().numpy()
    n = Wq.shape[0]
    r = min(int(r), n)
    U, S, Vt = np.linalg.svd(Wq.T @ Wk)
    q2, k2 = np.zeros_like(Wq), np.zeros_like(Wk)
    q2[:r] = (U[:, :r] * np.sqrt(S[:r])).T
    k2[:r] = (Vt[:r].T * np.sqrt(S[:r])).T
    kw = {"q": q2, "k": k2}
    if ov:
        Wv, Wo = w.v.double().cpu().numpy(), w.o.double().cpu().numpy()
        c = Wv.shape[0]
        rv = min(r, c)
        U, S, Vt = np.linalg.svd(Wo @ Wv)
        o2, v2 = np.zeros_like(Wo), np.zeros_like(Wv)
        o2[:, :rv] = U[:, :rv] * np.sqrt(S[:rv])
        v2[:rv] = np.sqrt(S[:rv])[:, None] * Vt[:rv]
        kw.update(v=v2, o=o2)
    model.set_head(layer, head, **kw)


def truncate_layer(model, layer: int, r: int, ov: bool = True) -> None:
    """Truncate every head of ``layer`` to rank ``r`` (:func:`truncate_head`)."""
    for h in range(model.attention(layer).h):
        truncate_head(model, layer, h, r, ov)


def head_ov_norms(model, layer: int) -> list[float]:
    """‖W_O^h W_V^h‖_F of every head of ``layer`` (the digest's pruning score)."""
    out = []
    for h in range(model.attention(layer).h):
        w = model.head_weights(layer, h)
        out.append(float(torch.linalg.matrix_norm((w.o @ w.v).double())))
    return out


def prune_heads(model, layer: int, n_prune: int) -> list[int]:
    """Remove the ``n_prune`` heads of ``layer`` with the smallest ‖W_O W_V‖ (their W_O block set
    to zero, so they contribute nothing); returns the pruned head indices."""
    norms = head_ov_norms(model, layer)
    gone = [int(i) for i in np.argsort(norms, kind="stable")[:n_prune]]
    for h in gone:
        o = model.head_weights(layer, h).o
        model.set_head(layer, h, o=torch.zeros_like(o))
    return sorted(gone)


# ------------------------------------------------------------------------------ TO-T1 template
@functools.cache
def _template_fn():
    import sympy as sp

    from approxtheory import claim

    c = claim("TO-T1")
    return sp.lambdify(
        [c.symbol(s) for s in ("H", "D", "M", "a", "b", "alpha", "beta")], c.expr("error"), "numpy"
    )


def template_error(H, D: float, M: int, a: float, b: float, alpha: float, beta: float):
    """The catalogue's TO-T1 template ``error`` at head counts ``H`` (numpy, vectorised)."""
    return _template_fn()(np.asarray(H, dtype=np.float64), D, M, a, b, alpha, beta)


def template_hstar(D: float, M: int, a: float, b: float, alpha: float, beta: float) -> float:
    """The catalogue's TO-T1 ``H_star`` at the given parameters."""
    from approxtheory import claim

    return claim("TO-T1").evaluate_float("H_star", D=D, M=M, a=a, b=b, alpha=alpha, beta=beta)


def fit_template(H, E, D: float, M: int, restarts: int = 12, seed: int = 0) -> dict:
    """Least-squares fit of log E to log of the TO-T1 template (a, b > 0; α, β in [0.01, 6]) at a
    fixed budget D; multistart from a seeded grid. Returns the parameters, the fitted H* (the
    catalogue's closed form) and the RMS residual in log E."""
    from scipy.optimize import least_squares

    H = np.asarray(H, dtype=np.float64)
    lE = np.log(np.asarray(E, dtype=np.float64))

    def resid(th):
        a, b, al, be = math.exp(th[0]), math.exp(th[1]), th[2], th[3]
        return np.log(template_error(H, D, M, a, b, al, be)) - lE

    rng = np.random.default_rng(seed)
    best = None
    for _ in range(restarts):
        x0 = [rng.uniform(-4, 1), rng.uniform(-4, 1), rng.uniform(0.1, 3), rng.uniform(0.1, 3)]
        try:
            r = least_squares(resid, x0, bounds=([-30, -30, 0.01, 0.01], [10, 10, 6, 6]))
        except (ValueError, FloatingPointError):  # pragma: no cover - overflow at a start
            continue
        if np.isfinite(r.cost) and (best is None or r.cost < best.cost):
            best = r
    assert best is not None
    a, b, al, be = math.exp(best.x[0]), math.exp(best.x[1]), float(best.x[2]), float(best.x[3])
    return {
        "a": a,
        "b": b,
        "alpha": al,
        "beta": be,
        "H_star": template_hstar(D, M, a, b, al, be),
        "rms_log_resid": float(np.sqrt(np.mean(best.fun**2))),
    }


# ------------------------------------------------------------------------------ language model
def check_text_corpus(spec: str) -> None:
    """ConfigError unless ``spec`` is 'pydoc' or a UTF-8 text file (no NUL bytes): a binary file
    would otherwise be read with replacement characters and trained on. The identifiability
    experiment's loader does the checking (one place for both)."""
    from approxtheory.experiments.identifiability_training import load_corpus

    load_corpus(spec)


def corpus_tokens(spec: str, T: int):
    """(train ids, validation ids, vocabulary size) of the corpus ``spec`` ('pydoc': CPython's
    pydoc topics; else a text file), character level, first 90 % for training; typed errors for
    a missing, non-text or too short file (the identifiability experiment's loader)."""
    from approxtheory.experiments.identifiability_training import (
        check_corpus_length,
        load_corpus,
    )

    check_text_corpus(spec)
    text = load_corpus(spec)
    check_corpus_length(len(text), T, "" if spec in ("pydoc", "", None) else spec)
    chars = sorted(set(text))
    lut = {c: i for i, c in enumerate(chars)}
    idx = torch.tensor([lut[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(idx))
    return idx[:n], idx[n:], len(chars)


def lm_config(V: int, T: int, width: int, specs, ffn_mult: int = 2):
    """A character-level causal LM of the shared class: learned positions, pre-LayerNorm, one
    layer per (heads, head_dim) in ``specs`` (value width = head_dim), GELU FFN of
    ffn_mult·width."""
    from approxtheory.model import LayerSpec, ModelConfig

    return ModelConfig(
        d_in=V,
        width=width,
        seq_len=T,
        positions="learned",
        readout="tokens",
        causal=True,
        layernorm=True,
        ffn_kind="gelu",
        layers=[LayerSpec(h, d, ffn_hidden=(ffn_mult * width,)) for h, d in specs],
        d_out=V,
        dtype="float32",
    )


def lm_val_windows(val_ids, T: int, n: int, seed: int):
    """``n`` validation windows (offsets, input ids, next-token ids), drawn from ``seed``."""
    g = torch.Generator().manual_seed(int(seed))
    starts = torch.randint(0, len(val_ids) - T - 1, (n,), generator=g)
    offs = starts[:, None] + torch.arange(T)
    return offs, val_ids[offs], val_ids[offs + 1]


def lm_val_loss(model, V: int, windows, chunk: int = 64) -> float:
    """Cross-entropy (float64) of ``model`` (evaluated as a float64 copy) on ``windows``."""
    from approxtheory.train import float64_copy

    m = float64_copy(model)
    dev = next(m.parameters()).device
    _, x, y = windows
    x, y = x.to(dev), y.to(dev)
    eye = torch.eye(V, dtype=torch.float64, device=dev)
    tot, n = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(x), chunk):
            out = m(eye[x[i : i + chunk]])
            tot += float(
                torch.nn.functional.cross_entropy(
                    out.reshape(-1, V), y[i : i + chunk].reshape(-1), reduction="sum"
                )
            )
            n += y[i : i + chunk].numel()
    return tot / n


def lagmix_nmse(model, task: LagMix, X) -> float:
    """Validation NMSE (float64 copy of ``model``) on inputs ``X``: mean squared error over every
    token and coordinate divided by the target's variance."""
    from approxtheory.train import float64_copy

    m = float64_copy(model)
    dev = next(m.parameters()).device
    X = torch.as_tensor(np.asarray(X), dtype=torch.float64)
    y = task.target(X)
    with torch.no_grad():
        out = m(X.to(dev)).cpu()
    return float(((out - y) ** 2).mean() / y.var())


def seeds_summary(values) -> dict:
    """Mean, median, min and max of a list of per-seed values (the plots draw the median with
    the min-max band; the checks' rules read the mean)."""
    v = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(v.mean()),
        "median": float(np.median(v)),
        "lo": float(v.min()),
        "hi": float(v.max()),
        "n": int(len(v)),
    }


def lagmix_train_config(cfg: dict):
    """The TrainConfig of a 3-lag extraction cell: ``steps``, ``lr``, ``batch`` (default 64) and,
    where the grid sets ``decay``, the held cosine schedule (``warmup``, ``decay``, ``min_lr``);
    without it a constant rate (the quick and full profiles' recipe)."""
    from approxtheory.train import TrainConfig

    held = bool(cfg.get("decay"))
    return TrainConfig(
        steps=cfg["steps"],
        batch=int(cfg.get("batch", 64)),
        lr=cfg["lr"],
        schedule="cosine" if held else "constant",
        warmup_steps=int(cfg.get("warmup", 0)) if held else 0,
        decay_steps=int(cfg["decay"]) if held else None,
        min_lr_ratio=float(cfg.get("min_lr", 0.0)),
        seed=cfg["seed"],
        device=cfg.get("device", "cpu"),
    )
