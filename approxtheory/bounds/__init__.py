"""Certified upper bracket of the sup-norm error of a :class:`~approxtheory.model.Transformer`.

Example::

    >>> from approxtheory.constructions import build
    >>> from approxtheory.bounds import upper_bracket
    >>> c = build("softmax_retrieval", T=4, beta=100.0)
    >>> r = upper_bracket(c.model, c.task, max_boxes=8000)
    >>> r.lower <= r.upper <= 2 * r.lower
    True

:func:`approxtheory.measure.sup_error` searches for a bad input, so it gives a *lower* bound on
``sup_X ||model(X) - task(X)||_∞``. :func:`upper_bracket` gives an *upper* bound that holds for
every X in the task's box (``task.lo <= x(t)_k <= task.hi``), by bound propagation and
branch-and-bound over the input box; together they bracket the supremum.

Method
------
*Affine forms.* Every intermediate quantity on a sub-box is an affine form
``c + A ε + [-r, r]`` in the box's noise symbols ``ε ∈ [-1, 1]^{T·d}`` (one per input coordinate)
plus an independent interval (zonotope / affine arithmetic; interval bound propagation is the
special case ``A = 0``). Linear layers, residual sums and the read-out are exact on affine forms;
ReLU uses the zonotope relaxation ``relu(x) ∈ λx + [0, max(-λl, (1-λ)u)]``; a product of two forms
(the q·k logits, bilinear FFNs) keeps the two first-order terms and bounds the quadratic one by
the product of the radii.

*Softmax.* Given logit intervals ``[l_j, u_j]`` the exact interval of ``softmax_j`` is
``[exp(l_j - lse(l_j, u_{-j})), exp(u_j - lse(u_j, l_{-j}))]`` (:func:`softmax_bounds`, log
space, so it is stable at β = 1e4 and beyond). An attention output ``Σ_j p_j v_j`` is written
``v_r + Σ_j p_j e_j`` with ``e_j = v_j - v_r`` for a reference key r (Σ p = 1), and ``F = Σ_j p_j
e_j`` is bounded three ways, of which the tightest is kept: (i) the LP over
``{l <= p <= u, Σ p = 1}`` solved by the greedy sort (:func:`simplex_lp_max`); (ii) the coupled
ratio bound below; (iii) an affine form ``Σ_j p̂_j e_j`` at the centre weights p̂ plus
``Σ_j |p_j - p̂_j| max|e_j|`` (exact when the logits are constant on the box, e.g. ``W_Q = 0``;
then (i) and (ii) are skipped, as they cannot be narrower).

*Coupled ratio bound.* With ``δ_j = s_j - s_r`` (logit differences) and weights ``w_j = e^{δ_j}``,
``F = (e_r + Σ_{j≠r} w_j e_j) / (1 + Σ_{j≠r} w_j)``. For any λ, ``F >= λ`` iff
``(e_r - λ) + Σ_j w_j (e_j - λ) >= 0`` (Dinkelbach), and the sum splits over keys: each term is
minimised over the key's own region of ``(δ_j, e_j)``, a parallelogram ``δ ∈ [δL, δU]``,
``e ∈ [eL, eU]``, ``e - αδ ∈ [γL, γU]`` (α: least-squares slope of e's affine form on δ's),
in closed form (``min e^δ (αδ + c)`` sits at ``δ* = -c/α - 1``). The sum is concave and
decreasing in λ; chord, Newton and bisection steps find the largest λ it certifies, with every
term held as a sign and a log-magnitude (no overflow at β = 1e4 and beyond). This keeps the
softmax's key fact — a far-from-top key has a tiny weight — *coupled* to how far its value is
from the top's, which intervals lose. A second form keeps the reference's logit as one common
factor ``e^{-s_r}`` of all keys (so keys cannot each pick their own reference) and slices the
reference's range along its target feature; per candidate the tighter of the two is used.

*Model minus target, jointly.* When the last block is attention only, the read-out is linear and
the target is a generalized retrieval ``c0 + Σ_i c_i opt_{t∈S_i}(W_i x(t) + b_i)``
(:class:`~approxtheory.tasks.GeneralizedRetrieval` with ``affine`` and ``outer_affine``), heads
are matched to target terms by their read-out values, and each matched head's contribution
``Σ_j p_j u_j - opt_{t∈S} g_t`` is bounded by enumerating which t' attains the max (only those
that can on the box), writing it as ``Σ_j p_j (u_j - g_{t'})`` with the reference key t' and the
constraints ``g_j <= g_{t'}``, and applying the coupled ratio bound. For the single-head retrieval
head this is exact at the root box (up to the bisection). Otherwise the target is an affine form
(affine features; a min/max over tokens becomes the form of one token plus a one-sided interval)
and the error bound is the concretised ``model - target`` form.

*ReLU read-out (generic path): CROWN.* When the read-out after the CLS state is a ReLU MLP, it
is also bounded by back-substitution (CROWN): the CLS state is the zonotope form above; every
ReLU's input bounds come from back-substituting its rows to that form (intersected with the
zonotope's), and the outputs' bounds are linear functions of the noise symbols,
``L(ε) <= out <= U(ε)``. An unstable ReLU on ``[l, u]`` is bounded above by its chord, whose
offset is re-derived from both ends and rounded up (any float slope stays sound), and below by
``α z`` with α ∈ {adaptive, 0, 1} per ReLU layer: all combinations (up to two ReLU layers, else
the three uniform ones) run in one stacked pass and the tightest per box and row is kept (each
is a valid bound). The zonotope is also propagated with the tightened ReLU bounds; the final
bounds are the intersection of the two.

*Model minus a max (generic path).* For a one-term retrieval target ``c0 + opt_{t∈S} g_t``
(g_t affine in token t) the error is bounded without an interval for the target: where
``-opt`` is concave in ε (max on the upper side, min on the lower side) by LP duality,
``max_ε F(ε) - max_t g_t(ε) <= min_{λ∈Δ} max_ε F(ε) - Σ_t λ_t g_t(ε)``, with λ the greedy
optimum of that separable piecewise-linear problem (:func:`_greedy_lambda`) and the vertices
(any λ in the simplex is valid; a rounding error in Σλ is paid for with
``|Σλ - 1|·max|g|``); on the other side exactly, by enumerating t.

*Branch-and-bound.* Boxes sit in a priority queue keyed by their error bound; the worst boxes are
split along the coordinate (token, dim) whose split lowers the children's bound most among the
widest few ("strong branching"); the model is evaluated at box centres and at points found by a
short projected gradient ascent, which gives ``lower``. On the generic path, where the
read-out's first ReLUs each read (almost) one input coordinate (decided once, on the root), a
coordinate is split at the zero crossing of such an unstable ReLU nearest its midpoint (so the
children make it stable), the candidates are the coordinates with most such ReLUs (never one
much narrower than the widest: slivers shave the bound by tiny amounts that greedy strong
branching would prefer to progress), two per box, and near-ties go to the heuristic's choice;
boxes whose bound is at most ``lower`` are pruned. The search stops when
``upper <= (1 + tol) lower``, ``upper <= atol``, or the split or box budget is spent: work counts,
so the result does not depend on the machine's speed. (The old ``time_limit`` is deprecated: it
becomes a box budget; an optional ``wall_clock_cap`` is only a safety net whose stop is marked
``exhausted-by-time``, ``reproducible=False``, with the best sound bound so far.)

*Structured path (any T).* One attention-only layer of softmax retrieval heads against an affine
generalized retrieval (``softmax_retrieval``, ``hc_k1``, ``hc_k1_synthetic``) is bounded without
boxes over the T·d inputs: per head, a Dinkelbach check that splits over tokens, the exact
softmax-over-box optimum per token (vertex or critical point, "Vertex-Softmax"), positions grouped
into classes by symmetry, and a 1-D branch over the reference token's feature
(:mod:`approxtheory.bracket_softmax`). A separable two-hidden-layer ReLU read-out against a
one-term max (HC-L9's network, ``hc_l9``) has its own structured route
(:mod:`approxtheory.bounds.relu`: exact per-group ranges, the argmax token by symmetry class,
1-D pieces of its value), and so does InfoFlow's two-layer second-largest construction
(``if_second_largest``, IF-K1/IF-T1: :mod:`approxtheory.bounds.kth`: each layer's exact softmax
deficit (Lambert W), the case split on which token is the largest, 1-D pieces of x_(2) with the
read-out's exact range and a mean-value form), and so, on the unit sphere, does InfoFlow's two-layer
pairwise-max construction (``if_pairwise_max``, IF-K2: :mod:`approxtheory.bounds.pairwise`: the
composed weights checked against ``β x(s)ᵀA_i x(t)`` scores and ``r_iᵀA_i x(t)`` features with
explicit slacks, each layer's softmax deficit per term, closed form). ``method="auto"`` uses them
wherever they apply.

*Non-finite input.* NaN/inf weights, or a NaN/inf error at any evaluated input, give
``upper = +inf`` with ``unsound_input=True``: a NaN is never read as a zero error.

Soundness in floating point
---------------------------
The bound is for the exact real-arithmetic function of the stored weights. All propagation runs in
float64; every operation adds a rounding allowance to the interval part of the form (γ_k·magnitude
with ``γ_k = (k + 8)·2.3e-16`` for a k-term sum, covering ``k·u/(1 - k·u)``), endpoints are
rounded outward (relative 4·2^-53 plus 1e-300 absolute), softmax bounds are widened by a relative
``1e-14·(1 + |logits|)``, the ratio bound only accepts a λ whose Dinkelbach sum exceeds
``(1e-10 + 1e-15·max|δ|)`` times the sum of the absolute values of its terms' parts, and the final
upper bound is multiplied by ``1 + 1e-12`` and raised by ``1e-300``. CROWN's back-substitution
adds, at every step, ``γ·(|Λ||W|·|input| + |Λ||b| + |ν|)`` (linear) or ``γ·(|Λ'|·|z| + Σ Λ⁺t)``
(ReLU) to the row's offset, with |input| from the zonotope bounds, so the float products stand
for the exact ones. The float64 evaluation of
the model itself differs from the exact function by round-off of relative order 1e-15 (float32
models: 1e-7, not included). The tests check soundness against brute force (grids and random
points), per layer on random models, and with a deliberately narrowed softmax bound (a mutant
that the checks must catch; and a ReLU chord without its offset, that the CROWN containment
check on random MLPs must catch).

*Causal masks and per-token read-outs.* A masked key has the logit -inf exactly: its softmax
weight is [0, 0], it is never the reference key and never enters the LP or the ratio bound. A
per-token read-out is bounded output by output against a per-token target: the lag task
``x(t - k)`` (its first k rows have no target and are not measured) or a reference model (the
truncation target: both models run on the same noise symbols, so their shared part cancels).
Where the logits do not depend on the input (position-only heads) the attention output is an
exact affine form and the root box's bound is the supremum (up to round-off).

*Finite domains.* One-hot tokens (``task.domain == "onehot"``) are enumerated exhaustively when
their ``d^T`` inputs fit ``max_points`` (:mod:`approxtheory.bounds.finite`); above it nothing is
certified and the result says so (the frontier T at this d).

Unsupported (``upper=None`` with ``reason``): LayerNorm, RoPE, GELU/SwiGLU activations, and
targets other than affine generalized retrieval (:class:`~approxtheory.tasks.ScalarMax`,
:class:`~approxtheory.tasks.MaxPlusMin`, :class:`~approxtheory.tasks.SyntheticMaxSum`, …),
:class:`~approxtheory.tasks.Memorize`, :class:`~approxtheory.tasks.KthLargest` with the identity
or the digest's ``sin`` read-out, the lag task and a reference model. A domain other than a box
or a finite one raises :class:`~approxtheory.errors.ConfigError` naming those supported.
"""

from __future__ import annotations

# the package, split by what the code is about: affine forms (_af), input validation
# (_inputs), softmax pieces (softmax), the coupled ratio bound (ratio), FFN/MLP CROWN (mlp), the
# layers on affine forms (forward), targets (targets), model-minus-target error bounds (error),
# and the branch-and-bound driver (bracket)
from ._af import _AF  # noqa: F401  (tests reach the private pieces here)
from .bracket import (  # noqa: F401
    BOXES_PER_SECOND,
    DOMAINS,
    TIME_LIMIT_CAP_FACTOR,
    BracketResult,
    _Lower,
    bracket_reach,
    upper_bracket,
)
from .error import error_bounds
from .forward import _input_af, layer_bounds  # noqa: F401
from .mlp import _crown_mlp, _mlp_ops, _relu_relax  # noqa: F401
from .ratio import _coupled_F, _ratio_bounds, _ratio_lower  # noqa: F401
from .softmax import simplex_lp_max, softmax_bounds
from .targets import _minus_opt, unsupported_reason  # noqa: F401

__all__ = [
    "BracketResult",
    "upper_bracket",
    "bracket_reach",
    "error_bounds",
    "layer_bounds",
    "softmax_bounds",
    "simplex_lp_max",
    "unsupported_reason",
]
