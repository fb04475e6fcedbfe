"""Structured certified bracket for InfoFlow's two-layer "second largest" construction (IF-K1).

Scope: scalar tokens in a box ``[lo, hi]`` with ``lo >= 0``, the target ``f(x_(2))``
(:class:`~approxtheory.tasks.KthLargest` with k = 2 and a read-out function f with a known
interval extension: ``identity`` or the digest's ``sin`` = sin 6u + 0.5|u - 0.3|), and a
two-layer, one-head-per-layer model (CLS read-out, no causal mask, no normalisation, no RoPE)
whose weights compose, term by term, to

* layer 1, query t, key s: logits ``β1_t x_s + κ_ts`` (the query does not read x), the value
  the token itself (``m_t = Σ_s w_ts x_s``), the self logit far below the others (positional
  self-exclusion);
* FFN 1: two ReLU units reading ``a x_t`` and ``a (x_t - m_t)``, so that a feature functional
  ψ of the token's state is ``c·min(x_t, m_t) + const``;
* layer 2, CLS query (constant: it does not read what layer 1 wrote into CLS): logits
  ``β2 v_t + const`` and values whose read-out pre-activations are rank one in the same
  feature ``v_t = min(x_t, m_t)``;
* a one-hidden-layer ReLU read-out of ``U = Σ_t p_t v_t``, ``R(U) = b + Σ_j c_j ReLU(w_j U +
  b_j)``.

Every composed quantity carries a forward rounding allowance (γ_n·|M|…|v|), structural
zeros are checked exactly, and what is only nearly satisfied (a spread of logit offsets, a
rank-one residual) is carried as slack. Outside the scope :class:`Unsupported` is raised.

Method
------
*Layer 1 (exact softmax deficit).* With the n = T - 1 other keys and logits perturbed by at
most ζ1, ``max_{s≠t} x_s - m'_t <= D1`` where ``β1 D1 = L`` solves the Dinkelbach equation
``-L + (n - 1) e^{ζ1 - 1 - L} = 0`` (each key's term ``e^{-βd}(d - λ)`` is maximised at
``d = λ + 1/β``: ``D1 = W((n-1)e^{ζ1-1})/β1``, the supremum for ζ1 = 0); the self weight is at
most ``e^{Δ}`` (Δ: the largest self-minus-other logit gap over the box), which moves m_t by at
most ``ε = e^{Δ}(hi - lo)``.

*Which token is the max (case split).* With τ1 the largest token and τ2 the second (y =
x_(2)): ``v_t = min(x_t, m_t) <= y + ε`` for every t (τ1's m is at most y + ε, the others' x
at most y), and ``v_{τ2} >= y - D1 - ε`` (its m retrieves x_(1) >= y). So with ``d_t = y + ε
- v_t >= 0`` and ``d_{τ2} <= D = D1 + 2ε``, layer 2's deficit ``y + ε - U`` is at most Λ,
``β2 Λ = L`` the root of ``e^{-m}(m - L) + (T - 1) e^{ζ2 - 1 - L}``, ``m = min(β2 D, L + 1)``
(τ2's term at its best d in [0, D], every other key at its free optimum; the keys' logit
offsets differ by at most ζ2). Hence ``U - y ∈ [ε - Λ, ε]`` and ``U ∈ [lo, hi]``.

*1-D branch.* The error is then at most ``sup_y sup_{U} |R(U) - f(y)|`` over that band.
``y`` runs over ``[lo, hi]`` in pieces; on a piece R's range is exact (its values at the
breakpoints inside and at the ends) and f's is an interval extension, plus a mean-value form
(``R(U) - f(y) = (R(y) - f(y)) + (R(U) - R(y))``, the first by ``g(y_c) + g'(piece)·h/2`` with
g' from R's slope and f's Clarke derivative, the second by R's slopes times the band) where R
is linear on the piece; the tighter is kept. The worst pieces are bisected (a priority queue,
``max_pieces`` piece evaluations, no clock) until the bound is within ``tol`` of the
relaxation's own largest value at the pieces' centres.

Soundness in floating point: composed weights carry γ_n allowances; the roots L are accepted
only where the equation's sign is certain (margin 1e-12 of the terms), rounded up; R's
evaluation carries ``γ_N·(|b| + Σ|c_j|(|w_j||U| + |b_j|))`` plus a Lipschitz allowance for its
float breakpoints; f's interval extension is widened by 1e-14; the result is
``upper·(1 + 1e-12) + 1e-300``. The named f is checked against the task's callable at 33
points (a mismatch is refused).
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import torch

from ..bracket_softmax import StructuredBracket, Unsupported, _box_reason, _np, _require_finite
from ..errors import ConfigError

_U = 2.0**-53
#: pieces evaluated per round of the bisection
_BATCH = 64
#: the read-out functions f with an interval extension here (``KthLargest.f_name``)
F_NAMES = ("identity", "sin")


def _gk(k: int) -> float:
    """Relative rounding allowance of a float64 computation over k summed terms (4·γ_k)."""
    return 4.0 * (k + 8) * 2.3e-16


# ============================================================================== tracked values
# a composed quantity is (value, magnitude, n): |exact - value| <= _gk(n)·magnitude, the
# magnitude being the same expression on absolute values (the forward error of sums/products)
def _exact(v):
    v = np.asarray(v, np.float64)
    return v, np.abs(v), 0


def _mm(M, x):
    """M @ x on a tracked x (M exact: a stored weight)."""
    v, g, n = x
    return M @ v, np.abs(M) @ g, n + M.shape[-1] + 1


def _add(*xs):
    return (
        sum(x[0] for x in xs),
        sum(x[1] for x in xs),
        max(x[2] for x in xs) + len(xs),
    )


def _err(x) -> np.ndarray:
    return _gk(x[2]) * x[1] * (1 + 1e-12) + 1e-300


def _lohi(x):
    e = _err(x)
    return x[0] - e, x[0] + e


def _struct_zero(M, v, what: str) -> None:
    """Unsupported unless ``|M| @ |v|`` is exactly 0 (a structural zero of the composition)."""
    if np.any(np.abs(M) @ np.abs(v) != 0):
        raise Unsupported(what)


# ============================================================================== extraction
def _seq(mlp, kinds: list, what: str):
    try:
        mods = [m for m in mlp if not isinstance(m, torch.nn.Identity)]
    except TypeError:
        raise Unsupported(f"{what} must be a sequence of layers") from None
    got = ["lin" if isinstance(m, torch.nn.Linear) else "relu" for m in mods]
    if got != kinds or not all(
        isinstance(m, torch.nn.ReLU) for m, k in zip(mods, kinds) if k == "relu"
    ):
        raise Unsupported(f"{what} must be {' -> '.join(kinds)}")
    out = []
    for m in mods:
        if isinstance(m, torch.nn.Linear):
            W = _np(m.weight)
            out.append((W, np.zeros(W.shape[0]) if m.bias is None else _np(m.bias)))
    return out


def _heads(attn):
    if attn.h != 1 or attn.g != 1 or attn.freqs.numel():
        raise Unsupported("each layer must have one head and no RoPE")
    parts = []
    for lin in (attn.q, attn.k, attn.v, attn.o):
        W = _np(lin.weight)
        parts += [W, np.zeros(W.shape[0]) if lin.bias is None else _np(lin.bias)]
    return parts + [float(attn.scale)]


def two_plain_blocks(model):
    """The two blocks of a two-layer model with no normalisation layers; else Unsupported."""
    if len(model.layers) != 2:
        raise Unsupported("two layers are needed")
    b0, b1 = model.block(0), model.block(1)
    norms = (b0.ln1, b0.ln2, b1.ln1, b1.ln2)
    if not all(isinstance(n, torch.nn.Identity) for n in norms) or model.ln_f is not None:
        raise Unsupported("normalisation layers are not supported")
    return b0, b1


def _check_scope(model, task):
    from ..tasks import KthLargest

    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "layers"):
        raise Unsupported("not an approxtheory.model.Transformer")
    if not isinstance(task, KthLargest) or task.k != 2 or int(task.d) != 1:
        raise Unsupported("the target must be f(second largest) of scalar tokens (KthLargest k=2)")
    if task.f_name not in F_NAMES:
        raise Unsupported(f"the read-out function {task.f_name!r} has no interval extension")
    b0, b1 = two_plain_blocks(model)
    if cfg.causal or cfg.cls_is_key or model.cls is None or cfg.readout != "cls":
        raise Unsupported("a CLS read-out whose query is not a key and no causal mask is needed")
    if not (cfg.residual and cfg.ffn_residual) or cfg.d_in != 1 or cfg.d_out != 1:
        raise Unsupported("residual blocks, scalar input and output are needed")
    if b0.ffn is None or b0.ffn.gated or b1.ffn is not None:
        raise Unsupported("layer 1 needs a ReLU FFN and layer 2 none")
    if cfg.positions != "none" and cfg.seq_len != int(task.T):
        raise Unsupported(f"model was built for T={cfg.seq_len}, the task has T={task.T}")
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise Unsupported("a model weight is NaN or infinite")
    return cfg, b0, b1


def _stream(model, cfg, T):
    """Token t's input state ``A x_t + B_t`` (B as (E, T) columns, tracked) and the CLS."""
    ((We, be),) = _seq(model.embed, ["lin"], "the embedding")
    E = We.shape[0]
    onehot = We[:, 1 : 1 + T] if cfg.positions == "onehot" else np.zeros((E, T))
    pos = np.zeros((E, T)) if model.pos is None else _np(model.pos).T
    B = onehot + be[:, None] + pos
    Bmag = np.abs(onehot) + np.abs(be)[:, None] + np.abs(pos)
    return _exact(We[:, 0]), (B, Bmag, 3), _np(model.cls)


def _dot2(X, Y, s: float):
    """s·Xᵀ Y for tracked X (n, a), Y (n, b) (or vectors)."""
    n = X[0].shape[0]
    return (s * (X[0].T @ Y[0]), abs(s) * (X[1].T @ Y[1]), X[2] + Y[2] + n + 2)


def _layer1(A, B, b0, lo, hi):
    """Layer 1's composed logits and value map: dict of β bounds, the deficit's slack ζ1, the
    self gap Δ, oA (tracked) and the interval [oBlo, oBhi] of the output's constant part."""
    Wq, bq, Wk, bk, Wv, bv, Wo, bo, s1 = _heads(b0.attn)
    _struct_zero(Wq, A[1], "layer 1's query reads the token's value")
    T = B[0].shape[1]
    qB = _add(_mm(Wq, B), _exact(bq[:, None]))
    kA = _mm(Wk, A)
    kB = _add(_mm(Wk, B), _exact(bk[:, None]))
    bL, bU = _lohi(_dot2(qB, (kA[0][:, None], kA[1][:, None], kA[2]), s1))
    bL, bU = bL[:, 0], bU[:, 0]
    if not np.all(bL > 0):
        raise Unsupported("layer 1's logits must increase with the key's value (β1 > 0)")
    kL, kU = _lohi(_dot2(qB, kB, s1))  # (T, T): query t, key s
    off = ~np.eye(T, dtype=bool)
    kLo = np.where(off, kL, np.inf).min(1) if T > 1 else np.zeros(T)
    kHi = np.where(off, kU, -np.inf).max(1) if T > 1 else np.zeros(T)
    zeta = float(np.max(kHi - kLo + (bU - bL) * hi))
    gap = float(np.max(bU * hi - bL * lo + np.diag(kU) - kLo))
    oA = _mm(Wo, _mm(Wv, A))
    oB = _add(_mm(Wo, _add(_mm(Wv, B), _exact(bv[:, None]))), _exact(bo[:, None]))
    oL, oU = _lohi(oB)
    return {
        "beta": float(bL.min()),
        "zeta": zeta,
        "gap": gap,
        "oA": oA,
        "oc": 0.5 * (oL.min(1) + oU.max(1)),
        "orad": 0.5 * (oU.max(1) - oL.min(1)) * (1 + 4 * _U) + 1e-300,
    }


def _ffn(A, B, L1, b0, xmax):
    """FFN 1's two units ``ReLU(a x)`` (pass) and ``ReLU(a (x - m))`` (cut), checked: (W2, b2,
    pass index, cut index, a, the units' slack)."""
    (W1, b1), (W2, b2) = _seq(b0.ffn.mlp, ["lin", "relu", "lin"], "layer 1's FFN")
    if W1.shape[0] != 2:
        raise Unsupported("layer 1's FFN must have two hidden units (ReLU(x), ReLU(x - m))")
    al = _mm(W1, A)
    mu = _mm(W1, L1["oA"])
    pas = [i for i in range(2) if mu[1][i] == 0]
    cut = [i for i in range(2) if mu[0][i] == -al[0][i] and mu[0][i] != 0]
    if len(pas) != 1 or len(cut) != 1 or al[0][pas[0]] != al[0][cut[0]] or al[0][0] <= 0:
        raise Unsupported("layer 1's FFN must compute ReLU(a x) and ReLU(a (x - m)), a > 0")
    ip, ic = pas[0], cut[0]
    a = float(al[0][ip])
    gam = _add(_mm(W1, B), _exact((W1 @ L1["oc"] + b1)[:, None]))
    gL, gU = _lohi(gam)
    g = np.maximum(np.abs(gL), np.abs(gU)).max(1) + np.abs(W1) @ L1["orad"]
    g = g + _gk(W1.shape[1]) * (np.abs(W1) @ np.abs(L1["oc"]) + np.abs(b1))
    slack = float(np.max(g + (_err(al) + _err(mu)) * xmax))
    if slack > 1e-9 * a * xmax + 1e-300:
        raise Unsupported("layer 1's FFN units have offsets (they must read a x and a (x - m))")
    return W2, b2, ip, ic, a, slack


def _state_mag(A, B, L1, W2, b2, a, us, xmax):
    """An E-vector bounding |state after layer 1| of every token (for slack terms)."""
    relu = np.full(W2.shape[1], 2 * a * xmax + us)
    return (
        A[1] * xmax
        + B[1].max(1)
        + L1["oA"][1] * xmax
        + np.abs(L1["oc"])
        + L1["orad"]
        + np.abs(W2) @ relu
        + np.abs(b2)
    ) * (1 + 1e-9)


def _feature(psi, pe, A, B, L1, ffn, smag, xmax):
    """ψ·(token state after layer 1) = ``c·min(x_t, m_t) + k_t``: (c, k_lo (T,), k_hi (T,));
    ψ an E-vector with an elementwise error bound ``pe`` on it."""
    W2, b2, ip, ic, a, us = ffn
    E = len(psi)
    cp, cc = psi @ W2[:, ip], psi @ W2[:, ic]
    c = -cc * a
    if not c != 0:
        raise Unsupported("layer 2 does not read min(x, m) (the FFN's cut unit)")
    res_x = abs(psi @ A[0] + cp * a - c)
    res_m = abs(psi @ L1["oA"][0])
    if max(res_x, res_m) > 1e-9 * abs(c):
        raise Unsupported("layer 2's feature is not c·min(x, m) (x or m read directly)")
    ap = np.abs(psi)
    rnd = _gk(E + 4) * (
        (ap @ A[1] + ap @ L1["oA"][1]) * xmax
        + (ap @ np.abs(W2[:, ip]) + ap @ np.abs(W2[:, ic])) * (2 * a * xmax + us)
    )
    rnd += (_err(A) @ ap + _err(L1["oA"]) @ ap) * xmax
    slack = (res_x + res_m) * xmax + (abs(cp) + abs(cc)) * us + rnd + pe @ smag
    # the constant part ψ·(B_t + oB' + b2)
    Bc = B[0] + (L1["oc"] + b2)[:, None]
    kv = psi @ Bc
    ke = _gk(E + 4) * (ap @ (B[1] + (np.abs(L1["oc"]) + np.abs(b2))[:, None]))
    ke = ke + ap @ _err(B) + ap @ L1["orad"]
    return c, kv - ke - slack, kv + ke + slack


def _layer2(A, B, cls, L1, ffn, b1, model, xmax, smag):
    """Layer 2 and the read-out, composed: β2, its slack ζ2 and the read-out R(U) = hbo + Σ_j
    Ho_j ReLU(wR_j U + b_j), b_j in [bc_j - br_j, bc_j + br_j]."""
    W2, b2 = ffn[0], ffn[1]
    Wq, bq, Wk, bk, Wv, bv, Wo, bo, s2 = _heads(b1.attn)
    (H1, hb1), (Ho, hbo) = _seq(model.head, ["lin", "relu", "lin"], "the read-out")
    if Ho.shape[0] != 1:
        raise Unsupported("the read-out must have one output")
    for M, what in ((Wq, "layer 2's query"), (H1, "the read-out")):
        _struct_zero(M, L1["oA"][1], f"{what} reads what layer 1 wrote into CLS")
        _struct_zero(M, W2, f"{what} reads what FFN 1 wrote into CLS")
    E = len(cls)
    # CLS after layer 1, as far as the query and the read-out see it: c0 + oB' + b2
    cc = cls + L1["oc"] + b2
    ccm = np.abs(cls) + np.abs(L1["oc"]) + np.abs(b2)
    q2 = Wq @ cc + bq
    q2e = np.abs(Wq) @ L1["orad"] + _gk(E + 4) * (np.abs(Wq) @ ccm + np.abs(bq))
    kap = s2 * (Wk.T @ q2)
    kape = abs(s2) * (np.abs(Wk.T) @ q2e + _gk(len(q2) + 2) * (np.abs(Wk.T) @ np.abs(q2)))
    beta2, k2L, k2U = _feature(kap, kape, A, B, L1, ffn, smag, xmax)
    if not beta2 > 0:
        raise Unsupported("layer 2's logits must increase with min(x, m) (β2 > 0)")
    # the value path: pre-activations G S with G = H1 Wo Wv, rank one w ⊗ φ (+ residual)
    G = H1 @ (Wo @ Wv)
    Gm = np.abs(H1) @ (np.abs(Wo) @ np.abs(Wv))
    j = int(np.argmax(np.abs(G).sum(1)))
    phi = G[j].copy()
    if not np.any(phi != 0):
        raise Unsupported("the read-out does not read layer 2's output")
    w = (G @ phi) / (phi @ phi)
    res = np.abs(G - np.outer(w, phi)) + _gk(2 * E + 8) * (Gm + np.abs(np.outer(w, phi)))
    if np.max(res @ smag) > 1e-9 * np.max(np.abs(w)) * (np.abs(phi) @ smag):
        raise Unsupported("the read-out's pre-activations are not rank one in layer 2's value")
    cphi, kL, kU = _feature(phi, np.zeros(E), A, B, L1, ffn, smag, xmax)
    # constant part: H1 (c0 + oB' + b2 + Wo bv + bo) + hb1, and w·[min k, max k]
    const = cc + Wo @ bv + bo
    cm = ccm + np.abs(Wo) @ np.abs(bv) + np.abs(bo)
    bc = H1 @ const + hb1 + w * 0.5 * (kL.min() + kU.max())
    br = (
        np.abs(H1) @ L1["orad"]
        + _gk(2 * E + 8) * (np.abs(H1) @ cm + np.abs(hb1) + Gm @ np.zeros(E))
        + np.abs(w) * 0.5 * (kU.max() - kL.min())
        + res @ smag
    )
    wR = w * cphi
    br = br + _gk(4) * np.abs(wR) * xmax + _gk(4) * np.abs(bc)
    return {
        "beta2": float(beta2),
        "zeta2": float(k2U.max() - k2L.min()),
        "wR": wR,
        "bc": bc,
        "br": br * (1 + 1e-9) + 1e-300,
        "Ho": Ho[0],
        "hbo": float(hbo[0]),
    }


def _extract(model, task, blo, bhi) -> dict:
    """The composed problem of a supported (model, task) over the box, or Unsupported."""
    cfg, b0, b1 = _check_scope(model, task)
    _check_f(task)
    T = int(task.T)
    lo, hi = float(np.min(blo)), float(np.max(bhi))
    if lo < 0:
        raise Unsupported("the box must lie in x >= 0 (FFN 1's ReLU(x) is then x)")
    xmax = max(hi, 1e-300)
    with np.errstate(over="raise", invalid="raise"):
        try:
            A, B, cls = _stream(model, cfg, T)
            L1 = _layer1(A, B, b0, lo, hi)
            ffn = _ffn(A, B, L1, b0, xmax)
            smag = _state_mag(A, B, L1, ffn[0], ffn[1], ffn[4], ffn[5], xmax)
            L2 = _layer2(A, B, cls, L1, ffn, b1, model, xmax, smag)
        except FloatingPointError:
            raise Unsupported("composing the weights overflows float64") from None
    p = {"T": T, "lo": lo, "hi": hi, "f": task.f_name, **L1, **L2}
    vals = [p["beta"], p["zeta"], p["beta2"], p["zeta2"], *p["bc"], *p["br"], *p["wR"]]
    _require_finite(vals)
    return p


def kth_reason(model, task) -> str | None:
    """Why :func:`kth_bracket` does not apply to (model, task); None if it does (cheap: the
    weights are composed once, nothing is bounded)."""
    return _box_reason(_extract, model, task, d=1)


# ============================================================================== the target f
def _f_point(name: str, u):
    u = np.asarray(u, np.float64)
    if name == "identity":
        return u
    return np.sin(6 * u) + 0.5 * np.abs(u - 0.3)


def _check_f(task) -> None:
    """The task's f must be the named function (checked at 33 points of [0, 1])."""
    u = np.linspace(0.0, 1.0, 33)
    try:
        with torch.no_grad():
            got = task.f(torch.from_numpy(u)).double().numpy()
    except Exception:  # noqa: BLE001  (any failure: not the named function)
        raise Unsupported("the task's f cannot be evaluated") from None
    if not np.allclose(got, _f_point(task.f_name, u), rtol=0, atol=1e-12):
        raise Unsupported(f"the task's f is not the named {task.f_name!r} function")


def _sin_range(a, b):
    """Sound [min, max] of sin on [a, b] (arrays, a <= b), widened by 1e-14."""
    a = a - 4 * _U * np.abs(a) - 1e-300
    b = b + 4 * _U * np.abs(b) + 1e-300
    sa, sb = np.sin(a), np.sin(b)
    lo, hi = np.minimum(sa, sb), np.maximum(sa, sb)
    two = 2 * math.pi
    # a maximum π/2 + 2kπ or a minimum -π/2 + 2kπ inside [a, b] (k by floor, checked both ways)
    kmax = np.ceil((a - math.pi / 2) / two - 1e-12)
    kmin = np.ceil((a + math.pi / 2) / two - 1e-12)
    has_max = (math.pi / 2 + two * kmax <= b + 1e-12) | (b - a >= two)
    has_min = (-math.pi / 2 + two * kmin <= b + 1e-12) | (b - a >= two)
    hi = np.where(has_max, 1.0, hi)
    lo = np.where(has_min, -1.0, lo)
    return lo - 1e-14, hi + 1e-14


def _f_range(name: str, y0, y1):
    """Sound [min, max] of f on [y0, y1] (arrays)."""
    if name == "identity":
        return y0 - 1e-300, y1 + 1e-300
    sl, sh = _sin_range(6 * y0, 6 * y1)
    d0, d1 = np.abs(y0 - 0.3), np.abs(y1 - 0.3)
    inside = (y0 <= 0.3) & (y1 >= 0.3)
    al = np.where(inside, 0.0, np.minimum(d0, d1))
    ah = np.maximum(d0, d1)
    return sl + 0.5 * al - 1e-14, sh + 0.5 * ah + 1e-14


def _fprime_range(name: str, y0, y1):
    """Sound [min, max] of f's Clarke derivative on [y0, y1]."""
    if name == "identity":
        return np.ones_like(y0), np.ones_like(y0)
    # 6 cos(6y) = 6 sin(6y + π/2)
    cl, ch = _sin_range(6 * y0 + math.pi / 2, 6 * y1 + math.pi / 2)
    sl = np.where(y1 < 0.3, -0.5, np.where(y0 > 0.3, 0.5, -0.5))
    sh = np.where(y0 > 0.3, 0.5, np.where(y1 < 0.3, -0.5, 0.5))
    return 6 * cl + sl - 1e-13, 6 * ch + sh + 1e-13


# ============================================================================== deficits
def _root(h, hi0: float) -> float:
    """The smallest float L found with ``h(L) < 0`` certainly (h decreasing; it returns (value,
    magnitude of its terms)); bisection from [0, hi0], hi0 doubled until it qualifies."""

    def neg(L):
        v, mag = h(L)
        return v + 1e-12 * mag < 0

    hi = max(hi0, 1.0)
    for _ in range(2000):
        if neg(hi):
            break
        hi *= 2
    else:  # pragma: no cover  (h is decreasing to -inf)
        return math.inf
    lo = 0.0
    if neg(lo):
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if neg(mid):
            hi = mid
        else:
            lo = mid
    return hi


def retrieval_deficit(n_keys: int, zeta: float = 0.0) -> float:
    """``β·sup (max - softmax-average)`` over n_keys keys whose logits are ``β x_s`` plus offsets
    within ζ of each other: the root L of ``-L + (n - 1) e^{ζ - 1 - L}`` (Lambert W), rounded
    up (0 for one key)."""
    if n_keys <= 1:
        return 0.0
    k = (n_keys - 1) * math.exp(zeta - 1)

    def h(L):
        t = k * math.exp(-L)
        return -L + t, L + t

    return _root(h, math.log1p(k) + 1) * (1 + 8 * _U)


def joint_deficit(T: int, bD: float, zeta: float = 0.0) -> float:
    """``β2·sup (y + ε - U)`` for layer 2 given every feature ``<= y + ε`` and one of them
    ``>= y + ε - D`` (``bD = β2·D``), the T - 1 others free, offsets within ζ: the root L of
    ``e^{-m}(m - L) + (T - 1) e^{ζ - 1 - L}``, ``m = min(bD, L + 1)``, rounded up."""
    k = (T - 1) * math.exp(zeta - 1)

    def h(L):
        m = min(bD, L + 1)
        a = math.exp(-m) * (m - L)
        t = k * math.exp(-L)
        return a + t, abs(a) + t + math.exp(-m) * (abs(m) + L)

    return _root(h, bD + math.log1p(k) + 1) * (1 + 8 * _U)


def _band(p) -> tuple[float, float, dict]:
    """The band ``U - y ∈ [eL, eU]`` (module doc) and its parts."""
    T, lo, hi = p["T"], p["lo"], p["hi"]
    eps = min(1.0, math.exp(min(p["gap"], 700.0))) * (hi - lo) * (1 + 8 * _U)
    D1 = retrieval_deficit(T - 1, p["zeta"]) / p["beta"] * (1 + 8 * _U)
    D = (D1 + 2 * eps) * (1 + 8 * _U)
    bD = p["beta2"] * D
    lam = joint_deficit(T, bD, p["zeta2"]) / p["beta2"] * (1 + 8 * _U) if T > 1 else 0.0
    eL = (eps - lam) - 4 * _U * (abs(eps) + abs(lam))
    eU = eps * (1 + 4 * _U)
    return eL, eU, {"D1": D1, "eps": eps, "Lambda": lam}


# ============================================================================== read-out R
def _readout(p) -> dict:
    """R's breakpoints (sorted, within [lo, hi]), its values there, slopes per segment and the
    allowance on a float evaluation."""
    wR, bc, Ho = p["wR"], p["bc"], p["Ho"]
    lo, hi = p["lo"], p["hi"]
    nz = wR != 0
    bp = np.sort(-bc[nz] / wR[nz])
    bp = bp[(bp > lo) & (bp < hi)]
    lip = float(np.abs(Ho) @ np.abs(wR))
    xmax = max(abs(lo), abs(hi))
    N = len(wR)
    rnd = _gk(N + 4) * (abs(p["hbo"]) + np.abs(Ho) @ (np.abs(wR) * xmax + np.abs(bc)))
    allow = float(np.abs(Ho) @ p["br"] + rnd + lip * 8 * _U * (xmax + 1e-300)) * (1 + 1e-9)
    R = {"bp": bp, "lip": lip, "allow": allow, "p": p}
    R["vbp"] = _R_nom(R, bp)
    knots = np.concatenate([[lo], bp, [hi]])
    mids = 0.5 * (knots[:-1] + knots[1:])
    R["knots"] = knots
    R["slope"] = ((mids[:, None] * wR + bc) > 0) @ (Ho * wR) if len(mids) else np.zeros(0)
    return R


def _R_nom(R, U):
    p = R["p"]
    U = np.asarray(U, np.float64)
    return p["hbo"] + np.maximum(U[..., None] * p["wR"] + p["bc"], 0.0) @ p["Ho"]


def _R_range(R, a, b):
    """Sound [min, max] of R on [a, b] (arrays): its values at the ends and breakpoints inside."""
    va, vb = _R_nom(R, a), _R_nom(R, b)
    lo, hi = np.minimum(va, vb), np.maximum(va, vb)
    bp, vbp = R["bp"], R["vbp"]
    if len(bp):
        inside = (bp[None, :] > a[:, None]) & (bp[None, :] < b[:, None])
        hi = np.maximum(hi, np.where(inside, vbp[None, :], -np.inf).max(1))
        lo = np.minimum(lo, np.where(inside, vbp[None, :], np.inf).min(1))
    return lo - R["allow"], hi + R["allow"]


def _slope_range(R, a, b):
    """[min, max] of R's (nominal) slopes over the segments meeting [a, b]."""
    k = R["knots"]
    i0 = np.clip(np.searchsorted(k, a, side="right") - 1, 0, len(k) - 2)
    i1 = np.clip(np.searchsorted(k, b, side="left") - 1, 0, len(k) - 2)
    s = R["slope"]
    mn = np.array([s[x : y + 1].min() for x, y in zip(i0, np.maximum(i0, i1))])
    mx = np.array([s[x : y + 1].max() for x, y in zip(i0, np.maximum(i0, i1))])
    return mn, mx


# ============================================================================== pieces
def _piece_bounds(p, R, band, y0, y1):
    """Upper bounds of |model - target| with x_(2) in [y0, y1] (arrays): the tighter of the
    decoupled ranges and the mean-value form."""
    lo, hi = p["lo"], p["hi"]
    eL, eU = band
    a = np.clip(y0 + eL, lo, hi)
    b = np.clip(y1 + eU, lo, hi)
    Rl, Rh = _R_range(R, a, b)
    fl, fh = _f_range(p["f"], y0, y1)
    dec = np.maximum(Rh - fl, fh - Rl)
    # mean-value form: g(y) = R(y) - f(y) around the centre, plus R's slopes times the band
    yc, h = 0.5 * (y0 + y1), 0.5 * (y1 - y0) * (1 + 4 * _U)
    gc = _R_nom(R, yc) - _f_point(p["f"], yc)
    w = 1e-12 * (1 + max(abs(lo), abs(hi)))
    sl, sh = _slope_range(R, np.maximum(y0 - w, lo), np.minimum(y1 + w, hi))
    dl, dh = _fprime_range(p["f"], y0, y1)
    gr = h * np.maximum(np.abs(sh - dl), np.abs(dl - sh)) + h * np.maximum(
        np.abs(sl - dh), np.abs(sh - dl)
    )
    ul, uh = _slope_range(R, np.maximum(y0 + eL - w, lo), np.minimum(y1 + eU + w, hi))
    prods = np.stack([ul * eL, ul * eU, uh * eL, uh * eU])
    ml = gc - gr + prods.min(0) - R["allow"] - 1e-14
    mh = gc + gr + prods.max(0) + R["allow"] + 1e-14
    mv = np.maximum(np.abs(ml), np.abs(mh)) * (1 + 8 * _U)
    return np.minimum(dec, mv)


def _piece_found(p, R, band, y0, y1):
    """The relaxation's value at the pieces' centres (|R(U) - f(y_c)| at the band's ends)."""
    yc = 0.5 * (y0 + y1)
    fc = _f_point(p["f"], yc)
    out = np.zeros_like(yc)
    for e in band:
        U = np.clip(yc + e, p["lo"], p["hi"])
        out = np.maximum(out, np.abs(_R_nom(R, U) - fc))
    return out


def _witness(p, yc: float, D1: float) -> list:
    """Inputs near the worst case of a piece: x_(1) = hi, x_(2) = y_c, the rest lo; and two
    tokens at y_c with the rest a layer-1 deficit below."""
    T, lo, hi = p["T"], p["lo"], p["hi"]
    a = np.full((T, 1), lo)
    a[0, 0], a[1 % T, 0] = hi, yc
    b = np.full((T, 1), max(lo, yc - D1 - 1.0 / p["beta"]))
    b[0, 0] = b[1 % T, 0] = yc
    return [a, b]


def _check_args(task, lo, hi, tol, atol, max_pieces):
    if getattr(task, "domain", "box") != "box":
        raise ConfigError(
            f"kth_bracket supports the box domain only (got {getattr(task, 'domain', None)!r}; "
            "supported: 'box')"
        )
    if not isinstance(max_pieces, (int, np.integer)) or isinstance(max_pieces, bool):
        raise ConfigError(f"max_pieces must be a positive integer (got {max_pieces!r})")
    if max_pieces <= 0:
        raise ConfigError(f"max_pieces must be a positive integer (got {max_pieces!r})")
    for name, v in (("tol", tol), ("atol", atol)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be a finite number >= 0 (got {v!r})")
    T = int(task.T)
    try:
        blo = np.broadcast_to(np.asarray(task.lo if lo is None else lo, np.float64), (T, 1))
        bhi = np.broadcast_to(np.asarray(task.hi if hi is None else hi, np.float64), (T, 1))
    except (TypeError, ValueError):
        raise ConfigError(f"lo and hi must be scalars or ({T}, 1) arrays") from None
    if not (np.isfinite(blo).all() and np.isfinite(bhi).all()):
        raise ConfigError("lo and hi must be finite numbers (got a NaN or infinite end)")
    if np.any(blo > bhi):
        raise ConfigError("lo must be <= hi in every coordinate (got lo > hi)")
    return blo.copy(), bhi.copy()


def kth_bracket(
    model, task, lo=None, hi=None, *, tol: float = 0.01, atol: float = 1e-12, max_pieces=8192
) -> StructuredBracket:
    """Certified ``upper >= sup_X |model(X) − f(x_(2))|`` over the box for InfoFlow's two-layer
    second-largest construction (module doc). ``max_pieces``: the deterministic work budget
    (piece evaluations); when it is spent the result is the best sound bound so far, ``stop``
    saying so. Bad arguments (lo > hi, non-finite ends, a budget <= 0, a domain other than a
    box) raise :class:`~approxtheory.errors.ConfigError`; a model or task outside the scope
    :class:`~approxtheory.bracket_softmax.Unsupported`."""
    blo, bhi = _check_args(task, lo, hi, tol, atol, max_pieces)
    p = _extract(model, task, blo, bhi)
    eL, eU, parts = _band(p)
    R = _readout(p)
    band = (eL, eU)
    grid = np.linspace(p["lo"], p["hi"], 65)
    cuts = np.unique(np.concatenate([grid, R["bp"]]))
    y0, y1 = cuts[:-1], cuts[1:]
    if len(y0) == 0:  # a degenerate box: one point
        y0 = y1 = np.array([p["lo"]])
    heap: list = []
    spent, found, best_y, counter = 0, 0.0, float(y0[0]), 0

    def run(a, b):
        nonlocal spent, found, best_y, counter
        ub = _piece_bounds(p, R, band, a, b)
        fd = _piece_found(p, R, band, a, b)
        spent += len(a)
        k = int(np.argmax(fd))
        if fd[k] > found:
            found, best_y = float(fd[k]), float(0.5 * (a[k] + b[k]))
        for i in range(len(a)):
            counter += 1
            heapq.heappush(heap, (-float(ub[i]), counter, float(a[i]), float(b[i])))

    run(y0, y1)
    stop, conv = "piece budget spent (best sound bound so far)", False
    while True:
        upper = -heap[0][0]
        if not math.isfinite(upper):
            stop = "unsound-input: a non-finite bound"
            break
        if upper <= (1 + tol) * found + atol:
            stop, conv = "converged", True
            break
        if spent >= max_pieces:
            break
        take = [heapq.heappop(heap) for _ in range(min(_BATCH, len(heap)))]
        a = np.array([t[2] for t in take])
        b = np.array([t[3] for t in take])
        m = 0.5 * (a + b)
        if np.all((m <= a) | (m >= b)):  # the pieces cannot be split further in float64
            for t in take:
                heapq.heappush(heap, t)
            stop = "pieces at float64 resolution"
            break
        run(np.concatenate([a, m]), np.concatenate([m, b]))
    upper = -heap[0][0] * (1 + 1e-12) + 1e-300
    head = {"route": "kth", "upper": upper, "found": found, **parts, "band": [eL, eU]}
    return StructuredBracket(
        upper,
        found,
        pieces=spent,
        stop=stop,
        converged=conv,
        heads=[head],
        witnesses=_witness(p, best_y, parts["D1"]),
        classes=1,
    )
