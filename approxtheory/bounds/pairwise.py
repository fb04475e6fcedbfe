"""Structured certified bracket for InfoFlow's two-layer pairwise-max construction (IF-K2).

Scope: :class:`~approxtheory.tasks.PairwiseMax` (``F(X) = Σ_i max_{s,t} x(s)ᵀA_i x(t)``, D
terms) on its unit-sphere domain (every token ``||x(t)||_2 = 1``), and a two-layer model (CLS
read-out, no causal mask, no normalisation, no RoPE, no position embeddings, a single linear
embedding and read-out, a bilinear gated FFN after layer 1 and none after layer 2, D heads per
layer, head i serving term i) whose weights compose, term by term, to

* layer 1, head i, query t, key s: logits ``β_i x(s)ᵀA_i x(t) + e_s`` (plus what depends on t
  only), ``|e_s| <= ε_i`` (the composed bilinear form's residual ``||M_i - β_i A_i||_F`` and
  the key's linear term), β_i > 0; its value written to the stream is affine in the key's x,
  so token t's state is affine in ``z = (x(t), ρ_1(t), …, ρ_D(t))``, ``ρ_i(t) = Σ_s w_s x(s)``;
* FFN 1 (bilinear, ``w2((w1 h + b1) ⊙ (w3 h + b3)) + b2``): a functional ψ of the state after
  it is a quadratic form ``zᵀQz + l·z + k`` in z;
* layer 2, head j, CLS query (constant: it does not read what layer 1 or FFN 1 wrote into CLS):
  logits ``κ_j·state(t)`` and read-out contribution ``ν_j·state(t)``, both of the form ``c
  u_j(t) + k ± σ`` with ``u_j(t) = ρ_j(t)ᵀA_j x(t)`` (c = β2_j > 0 for the logits, ``c_ν ≈ 1``
  for the value, σ the symmetrised quadratic form's block residuals plus the linear terms,
  ``|z_a| <= 1`` for every block); the read-out does not read CLS's layer-1 writes either.

The CLS token: by default (``cls_is_key=False``) the softmaxes run over the T input tokens only.
With ``cls_is_key=True`` the CLS state must equal the embedding of ``x = 0`` exactly, so that it
is one more key "token" with x = 0 (scores 0, values 0) in both layers: every max then runs over
the scores and 0, and each term may overshoot by up to ``max(0, -λ_min(sym A_i))`` (a
Gershgorin lower bound, at least ``-||A_i||``), which is added to the upper side.

Method
------
A softmax average of values v_j (n of them) with logits ``β v_j + o_j``, the offsets within ζ of
each other, has a deficit ``max_j v_j - Σ p_j v_j ∈ [0, L/β]``, L the root of ``-L + (n-1)
e^{ζ-1-L}`` (Dinkelbach: each non-max term ``e^{-βδ}(βδ - L)`` peaks at ``βδ = L + 1``; ζ = 0
gives ``g(n) = max_y (n-1) y e^{-y} / (1 + (n-1) e^{-y})``; :func:`~approxtheory.bounds.kth.\
retrieval_deficit`), and at most the values' range. Layer 1 (values ``a_i(s,t) = x(s)ᵀA_i x(t)
∈ [-α_i, α_i]``, ``α_i >= ||A_i||_2``): ``u_i(t) = Σ_s w_s a_i(s,t) ∈ [m_i(t) - Δ1_i, m_i(t)]``,
``m_i(t) = max_s a_i(s,t)``. Layer 2 (values ``u_i(t)``): ``Ū_i ∈ [max_t u_i(t) - Δ2_i, max_t
u_i(t)] ⊂ [F_i - Δ1_i - Δ2_i, F_i]``. The model's output is ``Σ_i (c_ν,i Ū_i ± σ_ν,i) + K``
(K the composed constant), so its error lies in ``Σ_i [-Δ1_i - Δ2_i - |c_ν,i - 1| α_i - σ_ν,i,
χ_i + |c_ν,i - 1| α_i + σ_ν,i] + K`` (χ_i the CLS-key overshoot, else 0) and the bracket is the
larger end in absolute value. No search: one pass over the weights (well under a second).

Soundness in floating point: the bracket bounds the exact function of the model's float64
weights. Every composed matrix carries an elementwise bound on its distance to the exact one
(``|fl(AB) - AB| <= γ_k |A||B|`` with ``γ_k = 4(k + 8)·2.3e-16`` above float64's ``k u/(1 -
k u)``, plus the inputs' own bounds, an absolute 1e-300 for underflow, the bounds themselves
inflated by ``1 + 4γ``); residual norms are taken of ``|computed residual| + bound``, rounded
up; structural zeros (what CLS's query and the read-out must not read) are checked on the
weights' supports (exact boolean products); the roots L are rounded up (kth's
``retrieval_deficit``) and every quotient and sum is widened by ``1 + 8u``; the result is
``upper·(1 + 1e-12) + 1e-300``. Outside the scope :class:`Unsupported` is raised with a reason,
also when a near-structure's slack is large (more than 1 % of the term's scale).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..bracket_softmax import (
    StructuredBracket,
    Unsupported,
    _np,
    _require_finite,
    _single_linear,
    _Tracked,
)
from .kth import retrieval_deficit, two_plain_blocks

_U = 2.0**-53
#: a near-structure is refused when its slack exceeds this fraction of the term's scale
_SLACK_MAX = 0.01


def _gk(k: int) -> float:
    """Relative rounding allowance of a float64 sum of k products (4·γ_k, generous)."""
    return 4.0 * (k + 8) * 2.3e-16


# ============================================================================== tracked values
class _T(_Tracked):
    """A float64 array ``v`` with an elementwise bound ``e`` on its distance to the exact value,
    with this module's operators (its own rounding allowances)."""

    __slots__ = ()

    @property
    def T(self) -> _T:
        return _T(self.v.T, self.e.T)

    def __matmul__(self, o) -> _T:
        o = o if isinstance(o, _T) else _T(o)
        k = self.v.shape[-1]
        av, ov = np.abs(self.v), np.abs(o.v)
        e = av @ o.e + self.e @ ov + self.e @ o.e + _gk(k) * (av @ ov)
        return _T(self.v @ o.v, e * (1 + _gk(k + 4)) + 1e-300)

    def __add__(self, o) -> _T:
        o = o if isinstance(o, _T) else _T(o)
        v = self.v + o.v
        return _T(v, (self.e + o.e + 2 * _U * np.abs(v)) * (1 + 4 * _U) + 1e-300)

    def mul(self, o) -> _T:
        """Elementwise product (broadcasting)."""
        o = o if isinstance(o, _T) else _T(o)
        v = self.v * o.v
        e = np.abs(self.v) * o.e + self.e * np.abs(o.v) + self.e * o.e + 2 * _U * np.abs(v)
        return _T(v, e * (1 + 4 * _U) + 1e-300)

    def scale(self, s: float) -> _T:
        v = self.v * s
        return _T(v, (abs(s) * self.e + 2 * _U * np.abs(v)) * (1 + 4 * _U) + 1e-300)

    def sym(self) -> _T:
        return (self + self.T).scale(0.5)


def _fro_up(M) -> float:
    """An upper bound of the Frobenius norm of the nonnegative array M as computed."""
    M = np.asarray(M, np.float64)
    return float(np.sqrt(np.sum(M * M))) * (1 + _gk(M.size + 2)) + 1e-300


def _res_norm(X: _T, target, c: float) -> float:
    """An upper bound of ``||X_exact - c·target||_F`` (target: exact floats)."""
    ct = c * np.asarray(target, np.float64)
    r = np.abs(X.v - ct) * (1 + 2 * _U) + X.e + 2 * _U * np.abs(ct)
    return _fro_up(r)


def _spec_up(A) -> float:
    """An upper bound of ``||A||_2``: min(Frobenius, sqrt(||A||_1 ||A||_∞)), rounded up."""
    A = np.abs(np.asarray(A, np.float64))
    n1, ni = float(A.sum(0).max()), float(A.sum(1).max())
    return min(_fro_up(A), math.sqrt(n1 * ni) * (1 + _gk(A.size)) + 1e-300)


def _lmin_low(A, alpha: float) -> float:
    """A lower bound of ``λ_min((A + Aᵀ)/2)``: Gershgorin's, at least ``-alpha``."""
    S = 0.5 * (np.asarray(A, np.float64) + np.asarray(A, np.float64).T)
    off = np.abs(S).sum(1) - np.abs(np.diag(S))
    g = float(np.min(np.diag(S) - off * (1 + _gk(len(S)))))
    return max(g - _gk(len(S)) * float(np.abs(S).max(initial=0.0)), -alpha)


def _reads(mats, what: str) -> None:
    """Unsupported unless the chain product of the matrices' supports is exactly 0 (the first
    does not read what the last writes through the others: a structural zero)."""
    acc = (np.asarray(mats[0]) != 0).astype(np.float64)
    for M in mats[1:]:
        acc = acc @ (np.asarray(M) != 0).astype(np.float64)
    if np.any(acc != 0):
        raise Unsupported(what)


# ============================================================================== extraction
def _heads(attn, D: int, layer: int) -> tuple[list, np.ndarray, float]:
    """Per head (q, bq, k, bk, v, bv, o), the output bias and the logit scale."""
    if attn.h != D or attn.freqs.numel():
        raise Unsupported(f"layer {layer + 1} must have D = {D} heads (one per term) and no RoPE")
    n, c, rep = attn.n, attn.c, attn.h // attn.g

    def bias(lin, size):
        return np.zeros(size) if lin.bias is None else _np(lin.bias)

    bq, bk = bias(attn.q, attn.h * n), bias(attn.k, attn.g * n)
    bv, bo = bias(attn.v, attn.g * c), bias(attn.o, attn.o.weight.shape[0])
    out = []
    for i in range(attn.h):
        hw, gi = attn.head_weights(i), i // rep
        out.append(
            (
                _np(hw.q),
                bq[i * n : (i + 1) * n],
                _np(hw.k),
                bk[gi * n : (gi + 1) * n],
                _np(hw.v),
                bv[gi * c : (gi + 1) * c],
                _np(hw.o),
            )
        )
    return out, bo, float(attn.scale)


def _check_scope(model, task):
    from ..tasks import PairwiseMax

    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "layers"):
        raise Unsupported("not an approxtheory.model.Transformer")
    if not isinstance(task, PairwiseMax) or getattr(task, "domain", None) != "sphere":
        raise Unsupported("the target must be the pairwise max Σ_i max x(s)ᵀA_i x(t) on the sphere")
    b0, b1 = two_plain_blocks(model)
    if cfg.causal or model.cls is None or cfg.readout != "cls":
        raise Unsupported("a CLS read-out and no causal mask are needed")
    if not (cfg.residual and cfg.ffn_residual) or cfg.d_in != task.d or cfg.d_out != 1:
        raise Unsupported("residual blocks, d-dimensional tokens and a scalar output are needed")
    if cfg.positions != "none":
        raise Unsupported("position embeddings are not supported (the target ignores order)")
    if b0.ffn is None or b0.ffn.kind != "bilinear" or b1.ffn is not None:
        raise Unsupported("layer 1 needs a bilinear gated FFN and layer 2 none")
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise Unsupported("a model weight is NaN or infinite")
    return cfg, b0, b1


def _layer1(model, cfg, b0, A, alpha):
    """Layer 1 composed: the embedding (P, c0), per head β_i and its offset bound ε_i, the
    state's blocks Z = [P, G_1..G_D] (tracked) and constant c1 (tracked)."""
    P, c0 = _single_linear(model.embed, "the embedding")
    cls = _np(model.cls)[:, None]
    c0 = c0[:, None]
    if cfg.cls_is_key and not np.array_equal(cls, c0):
        raise Unsupported("with cls_is_key the CLS state must be the embedding of x = 0 exactly")
    D = len(A)
    heads, bo, s1 = _heads(b0.attn, D, 0)
    Pt = _T(P)
    betas, eps, G = [], [], []
    c1 = _T(c0) + _T(bo[:, None])
    for i, (Wq, bq, Wk, _bk, Wv, bv, Wo) in enumerate(heads):  # bk: same for every key
        kP = _T(Wk) @ Pt
        M = (kP.T @ (_T(Wq) @ Pt)).scale(s1)  # logit = x_sᵀ M x_t + x_s·m + f(t)
        m = (kP.T @ (_T(Wq) @ _T(c0) + _T(bq[:, None]))).scale(s1)
        beta = float(np.sum(M.v * A[i]) / np.sum(A[i] * A[i]))
        if not beta > 0:
            raise Unsupported(f"layer 1 head {i + 1}'s scores must be β x(s)ᵀA_i x(t), β > 0")
        e = (_res_norm(M, A[i], beta) + _fro_up(np.abs(m.v) + m.e)) * (1 + 4 * _U)
        if e > _SLACK_MAX * beta * alpha[i]:
            raise Unsupported(
                f"layer 1 head {i + 1}'s scores are not β x(s)ᵀA_i x(t) (residual {e:.3g} "
                f"against β||A_i|| = {beta * alpha[i]:.3g})"
            )
        betas.append(beta)
        eps.append(e)
        G.append(_T(Wo) @ (_T(Wv) @ Pt))
        c1 = c1 + _T(Wo) @ (_T(Wv) @ _T(c0) + _T(bv[:, None]))
    Z = _T(np.hstack([P] + [g.v for g in G]), np.hstack([np.zeros_like(P)] + [g.e for g in G]))
    raw = [(h[4], h[6]) for h in heads]  # (Wv, Wo) per head, for the structural zeros
    return {"P": P, "c0": c0, "cls": cls, "beta": betas, "eps": eps, "Z": Z, "c1": c1, "raw": raw}


def _ffn_parts(b0, L1):
    """FFN 1's two factors as affine maps of z: (F1, f1, F3, f3) tracked, and (W2, b2)."""
    f = b0.ffn

    def wb(lin):
        W = _np(lin.weight)
        return W, np.zeros(W.shape[0]) if lin.bias is None else _np(lin.bias)

    (W1, b1), (W3, b3), (W2, b2) = wb(f.w1), wb(f.w3), wb(f.w2)
    Z, c1 = L1["Z"], L1["c1"]
    F1, F3 = _T(W1) @ Z, _T(W3) @ Z
    f1, f3 = _T(W1) @ c1 + _T(b1[:, None]), _T(W3) @ c1 + _T(b3[:, None])
    return {"F1": F1, "f1": f1, "F3": F3, "f3": f3, "W2": W2, "b2": b2[:, None]}


def _quad(psi: _T, L1, ff):
    """ψ·(token state after FFN 1) = ``zᵀQz + l·z + k``: (Q, l, k) tracked (ψ a tracked row)."""
    w = psi @ _T(ff["W2"])  # (1, H)
    Q = ff["F1"].T @ w.T.mul(ff["F3"])
    l_ = psi @ L1["Z"] + w.mul(ff["f3"].T) @ ff["F1"] + w.mul(ff["f1"].T) @ ff["F3"]
    k = psi @ (L1["c1"] + _T(ff["b2"])) + w.mul(ff["f1"].T) @ ff["f3"]
    return Q, l_, k


def _fit(psi: _T, j: int, A, alpha, L1, ff, what: str):
    """ψ·state(t) = ``c u_j(t) + k ± σ``: (c, σ, k tracked), Unsupported when σ is large."""
    Q, l_, k = _quad(psi, L1, ff)
    d, D = A.shape[1], len(A)
    S = Q.sym()
    St = np.zeros_like(S.v)
    rj = slice(d * (1 + j), d * (2 + j))
    St[rj, :d] = 0.5 * A[j]
    St[:d, rj] = 0.5 * A[j].T
    c = float(np.sum(S.v * St) / np.sum(St * St))
    sig = 0.0
    for a in range(D + 1):
        ra = slice(d * a, d * (a + 1))
        sig += _fro_up(np.abs(l_.v[:, ra]) + l_.e[:, ra])
        for b in range(D + 1):
            rb = slice(d * b, d * (b + 1))
            sig += _res_norm(_T(S.v[ra, rb], S.e[ra, rb]), St[ra, rb], c)
    sig *= 1 + _gk(2 * (D + 1) ** 2)
    if not abs(c) > 0 or sig > _SLACK_MAX * abs(c) * alpha[j]:
        raise Unsupported(
            f"{what} is not c·r_jᵀA_j x(t) (c = {c:.3g}, residual {sig:.3g}; the bilinear FFN "
            "must form u_j = r_jᵀA_j x(t))"
        )
    return c, sig, k


def _layer2(model, b1, A, alpha, L1, ff):
    """Layer 2 and the read-out composed: per head (β2, ζ2, c_ν, σ_ν) and the constant K."""
    D = len(A)
    heads, bo2, s2 = _heads(b1.attn, D, 1)
    Hr, hb = _single_linear(model.head, "the read-out")
    W2, b2 = ff["W2"], ff["b2"]
    P = L1["P"]
    for (Wv, Wo), i in zip(L1["raw"], range(D)):
        _reads([Hr, Wo, Wv, P], f"the read-out reads what layer 1 head {i + 1} wrote into CLS")
    _reads([Hr, W2], "the read-out reads what FFN 1 wrote into CLS")
    # the CLS state after FFN 1 as far as its query and the read-out see it (constant)
    ccls = _T(L1["cls"]) + _T(b2) + (L1["c1"] + _T(-L1["c0"]))
    K = _T(Hr) @ (ccls + _T(bo2[:, None])) + _T(hb[:, None])
    out = []
    for j, (Wq, bq, Wk, _bk, Wv, bv, Wo) in enumerate(heads):  # bk: same for every key
        for Wv1, Wo1 in L1["raw"]:
            _reads([Wq, Wo1, Wv1, P], f"layer 2 head {j + 1}'s query reads layer 1's CLS writes")
        _reads([Wq, W2], f"layer 2 head {j + 1}'s query reads what FFN 1 wrote into CLS")
        q2 = _T(Wq) @ ccls + _T(bq[:, None])
        kappa = (q2.T @ _T(Wk)).scale(s2)  # (1, E)
        beta2, sk, _ = _fit(kappa, j, A, alpha, L1, ff, f"layer 2 head {j + 1}'s score")
        if not beta2 > 0:
            raise Unsupported(f"layer 2 head {j + 1}'s scores must increase with u_j (β2 > 0)")
        nu = _T(Hr) @ (_T(Wo) @ _T(Wv))
        cnu, snu, knu = _fit(nu, j, A, alpha, L1, ff, f"layer 2 head {j + 1}'s value")
        K = K + knu + _T(Hr) @ (_T(Wo) @ _T(bv[:, None]))
        out.append({"beta2": beta2, "zeta2": 2 * sk, "c_nu": cnu, "sigma_nu": snu})
    return out, K


def _extract(model, task) -> dict:
    """The composed problem of a supported (model, task), or Unsupported."""
    cfg, b0, b1 = _check_scope(model, task)
    A = np.asarray(task.A, np.float64)
    alpha = [_spec_up(a) for a in A]
    if not all(a > 0 for a in alpha):
        raise Unsupported("a term's matrix A_i is zero")
    with np.errstate(over="raise", invalid="raise"):
        try:
            L1 = _layer1(model, cfg, b0, A, alpha)
            ff = _ffn_parts(b0, L1)
            L2, K = _layer2(model, b1, A, alpha, L1, ff)
        except FloatingPointError:
            raise Unsupported("composing the weights overflows float64") from None
    p = {"A": A, "alpha": alpha, "beta": L1["beta"], "eps": L1["eps"], "L2": L2, "K": K}
    p["cls_key"] = bool(cfg.cls_is_key)
    vals = [*L1["eps"], *[v for h in L2 for v in h.values()], float(K.v[0, 0]), float(K.e[0, 0])]
    _require_finite(vals)
    return p


def pairwise_reason(model, task) -> str | None:
    """Why :func:`pairwise_bracket` does not apply to (model, task); None if it does (cheap: the
    weights are composed once, nothing is searched)."""
    try:
        _extract(model, task)
    except Unsupported as e:
        return str(e)
    except (AttributeError, TypeError, ValueError) as e:
        return f"not an approxtheory model and pairwise-max task ({type(e).__name__})"
    return None


# ============================================================================== the bracket
def _deficit(n: int, zeta: float, beta: float, cap: float) -> float:
    """Rounded-up ``sup (max - softmax average)`` over n values in a range of width ``cap``,
    logits β·value plus offsets within ζ: ``min(L/β, cap)`` (module doc)."""
    if zeta > 600.0:  # e^ζ overflows: only the range is left
        return cap * (1 + 8 * _U)
    return min(retrieval_deficit(n, zeta) / beta, cap) * (1 + 8 * _U)


def _terms(p, T: int) -> list:
    """Per term: the deficits Δ1, Δ2, the CLS-key overshoot χ and the error's [lo, hi]."""
    n = T + (1 if p["cls_key"] else 0)  # keys per softmax (the CLS one with x = 0)
    out = []
    for i, (A, al, b1, e1, h) in enumerate(zip(p["A"], p["alpha"], p["beta"], p["eps"], p["L2"])):
        d1 = _deficit(n, 2 * e1, b1, 2 * al)
        d2 = _deficit(n, h["zeta2"], h["beta2"], 2 * al)
        chi = max(0.0, -_lmin_low(A, al)) if p["cls_key"] else 0.0
        scale = abs(h["c_nu"] - 1.0) * al * (1 + 4 * _U)
        lo = -(d1 + d2 + scale + h["sigma_nu"]) * (1 + 8 * _U)
        hi = (chi + scale + h["sigma_nu"]) * (1 + 8 * _U)
        out.append(
            {
                "term": i,
                "beta1": b1,
                "beta2": h["beta2"],
                "D1": d1,
                "D2": d2,
                "cls_overshoot": chi,
                "value_scale_slack": scale,
                "lo": lo,
                "hi": hi,
            }
        )
    return out


def _witness(p, T: int) -> list:
    """Near-worst inputs of term 1: x(0) = its top right singular vector v, x(1) the left one
    u, the rest at layer 1's worst gap below u (the deficit's maximiser), all unit-norm."""
    A, d = p["A"][0], p["A"].shape[1]
    U, s, Vt = np.linalg.svd(A)
    u, v = U[:, 0], Vt[0]
    w = np.zeros(d)
    w[int(np.argmin(np.abs(u)))] = 1.0
    w = w - (w @ u) * u
    w = w / max(np.linalg.norm(w), 1e-300) if d > 1 else w
    y = (retrieval_deficit(T, 0.0) + 1.0) / max(p["beta"][0] * float(s[0]), 1e-300)
    c = min(1.0, max(-1.0, 1.0 - y))
    rest = c * u + math.sqrt(max(0.0, 1 - c * c)) * w
    X = np.tile(rest, (T, 1))
    X[0] = v
    if T > 1:
        X[1] = u
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    return [X]


def pairwise_bracket(model, task) -> StructuredBracket:
    """Certified ``upper >= sup_X |model(X) − F(X)|`` over the unit sphere (every token unit
    norm) for InfoFlow's two-layer pairwise-max construction (module doc); a model or task
    outside the scope raises :class:`~approxtheory.bracket_softmax.Unsupported`. ``found`` is
    the model's error at the witness input (a lower estimate); ``heads`` has one record: the error's
    interval, the constant and per term its deficits and slacks (``terms``)."""
    p = _extract(model, task)
    T = int(task.T)
    terms = _terms(p, T)
    K = p["K"]
    klo = float(K.v[0, 0]) - float(K.e[0, 0]) * (1 + 4 * _U)
    khi = float(K.v[0, 0]) + float(K.e[0, 0]) * (1 + 4 * _U)
    n = len(terms) + 2
    lo = (sum(t["lo"] for t in terms) + klo) * (1 + _gk(n)) - 1e-300
    hi = (sum(t["hi"] for t in terms) + khi) * (1 + _gk(n)) + 1e-300
    upper = max(-lo, hi, 0.0) * (1 + 1e-12) + 1e-300
    wit = _witness(p, T)
    try:
        with torch.no_grad():
            X = torch.from_numpy(np.stack(wit))
            found = float((model(X)[:, 0] - task.target(X)).abs().max())
    except Exception:  # noqa: BLE001  (the witness is optional: only a lower estimate)
        found = 0.0
    if not math.isfinite(upper):
        return StructuredBracket(math.inf, found, stop="unsound-input: a non-finite bound")
    head = {"route": "pairwise", "upper": upper, "found": found, "lo": lo, "hi": hi}
    head.update(constant=[klo, khi], terms=terms)
    return StructuredBracket(
        upper,
        found if math.isfinite(found) else 0.0,
        pieces=1,
        stop="closed form (softmax deficits per layer, no search)",
        converged=True,
        heads=[head],
        witnesses=wit,
        classes=len(terms),
    )
