"""The structured bracket of InfoFlow's two-layer pairwise-max construction on the unit sphere
(approxtheory.bounds.pairwise, IF-K2): never below the largest error found on random unit-norm
inputs and by the adversarial search (Hypothesis over small cells, with tied terms, weights
perturbed on their supports and the CLS token as a key), planted unsound relaxations (a deficit
dropped, a term dropped) go red in the same comparison, out-of-scope models and tasks are refused
with a reason and routed elsewhere, and the quick cells are certified below IF-K2's bound."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory import claim
from approxtheory.bounds import bracket_reach, upper_bracket
from approxtheory.bounds import pairwise as bp
from approxtheory.bracket_softmax import Unsupported
from approxtheory.constructions import build
from approxtheory.measure import errors, sup_error
from approxtheory.model import Transformer
from approxtheory.tasks import PairwiseMax


def _worst(c, n=2000, budget=32, seed=0, extra=()) -> float:
    """The largest error found: n random unit-norm inputs, the adversarial search and the
    bracket's witnesses (``extra``)."""
    X = c.task.sample(n, np.random.default_rng(seed))
    worst = float(np.max(errors(c.model, c.task, X)))
    worst = max(worst, float(sup_error(c.model, c.task, budget=budget, seed=seed).value))
    if len(extra):
        worst = max(worst, float(np.max(errors(c.model, c.task, np.stack(extra)))))
    return worst


def _on_support(c, rel: float, seed: int) -> None:
    """Perturb every nonzero weight by a relative ``rel`` (the structural zeros stay zero)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in c.model.parameters():
            noise = torch.randn(p.shape, generator=g, dtype=p.dtype)
            p.mul_(1 + rel * noise * (p != 0))


def _cls_key(c):
    """The same weights in a model whose CLS token is a key of every softmax."""
    m = Transformer(dataclasses.replace(c.model.cfg, cls_is_key=True))
    m.load_state_dict(c.model.state_dict())
    return dataclasses.replace(c, model=m)


def _cell(D, T, d, beta, seed, variant):
    c = build("if_pairwise_max", T=T, d=d, D=D, beta=beta, seed=seed, tied=int(variant == "tied"))
    if variant == "perturbed":
        _on_support(c, 3e-4, seed)
    if variant == "cls-key":
        c = _cls_key(c)
    return c


# ----------------------------------------------------------------------------- soundness
@given(
    D=st.integers(1, 3),
    T=st.integers(2, 8),
    d=st.integers(2, 4),
    lb=st.floats(0.0, 4.0),
    seed=st.integers(0, 40),
    variant=st.sampled_from(["plain", "tied", "perturbed", "cls-key"]),
)
@settings(max_examples=16, deadline=None)
def test_bracket_never_below_the_largest_error_found(D, T, d, lb, seed, variant):
    c = _cell(D, T, d, 10.0**lb, seed, variant)
    b = bp.pairwise_bracket(c.model, c.task)
    assert bp.pairwise_reason(c.model, c.task) is None
    assert np.isfinite(b.upper) and b.upper >= b.found >= 0
    worst = _worst(c, seed=seed, extra=b.witnesses)
    assert worst <= b.upper + 1e-12, (worst, b.upper)


def test_bracket_is_close_to_the_search_on_a_near_tie_cell():
    """Two deficits per term, both nearly attained: the bracket is within 1.5x of the search."""
    c = build("if_pairwise_max", T=6, d=3, D=2, beta=300.0, seed=3)
    b = bp.pairwise_bracket(c.model, c.task)
    worst = _worst(c, budget=128)
    assert worst <= b.upper <= 1.5 * worst


# ----------------------------------------------------------------------------- planted faults
def _no_deficit(mp):
    mp.setattr(bp, "retrieval_deficit", lambda n, zeta=0.0: 0.0)


def _one_term(mp):
    real = bp._terms
    mp.setattr(bp, "_terms", lambda p, T: real(p, T)[:1])


def _no_layer2(mp):
    real = bp._terms

    def fn(p, T):
        return [{**t, "lo": t["lo"] + t["D2"]} for t in real(p, T)]

    mp.setattr(bp, "_terms", fn)


@pytest.mark.parametrize(
    "plant,kw",
    [
        (_no_deficit, dict(T=8, d=4, D=1, beta=100.0)),
        (_one_term, dict(T=8, d=4, D=4, beta=100.0, tied=1)),
        (_no_layer2, dict(T=6, d=3, D=2, beta=300.0, seed=3)),
    ],
    ids=["deficit-zero", "D-factor-dropped", "layer-2-deficit-dropped"],
)
def test_planted_unsound_relaxation_goes_red(plant, kw, monkeypatch):
    c = build("if_pairwise_max", **kw)
    worst = _worst(c, budget=128)
    assert worst <= bp.pairwise_bracket(c.model, c.task).upper + 1e-12
    plant(monkeypatch)
    assert worst > bp.pairwise_bracket(c.model, c.task).upper  # the same comparison fails


# ----------------------------------------------------------------------------- scope
def _transposed(c):
    d = c.task.d
    w3 = c.model.feed_forward(0).w3.weight.data
    for i, A in enumerate(c.task.A):
        w3[i * d : (i + 1) * d, :d] = torch.from_numpy(A.T.copy())


def _reads_r(c):
    c.model.readout_linear(0).weight.data[0, c.task.d] += 0.1  # r_1's first coordinate


def _neg_query(c):
    c.model.attention(0).q.weight.data.neg_()


def _query_reads_u(c):
    d, D = c.task.d, c.task.D
    c.model.attention(1).q.weight.data[0, d + D * d] = 1.0  # u_1, written by FFN 1


@pytest.mark.parametrize(
    "edit,match",
    [
        (_transposed, "r_jᵀA_j"),
        (_reads_r, "read-out reads what layer 1"),
        (_neg_query, "β > 0"),
        (_query_reads_u, "query reads what FFN 1"),
    ],
    ids=["FFN-transposed", "readout-reads-CLS", "query-sign", "layer2-query-reads-u"],
)
def test_broken_structure_is_refused_and_routed_elsewhere(edit, match):
    c = build("if_pairwise_max", T=8, d=4, D=2, beta=1e3)
    edit(c)
    with pytest.raises(Unsupported, match=match):
        bp.pairwise_bracket(c.model, c.task)
    assert match.split()[0] in (bp.pairwise_reason(c.model, c.task) or "")
    route, why = bracket_reach(c.model, c.task)
    assert route == "generic" and "box cover" in why
    r = upper_bracket(c.model, c.task, method="structured")
    assert r.upper is None and "pairwise-max" in r.reason


def test_other_tasks_and_models_are_refused():
    c = build("if_pairwise_max", T=2, d=2, D=1, beta=10.0)

    class BoxPairwise(PairwiseMax):
        domain = "box"

    box = BoxPairwise(2, d=2, A=c.task.A)
    assert "sphere" in bp.pairwise_reason(c.model, box)
    assert bracket_reach(c.model, box)[0] == "generic"  # the box branch-and-bound, not this
    # a task with another number of terms than the model's heads
    assert "heads" in bp.pairwise_reason(c.model, PairwiseMax(2, d=2, D=2, seed=0))
    # a task whose A is not the model's: the scores do not match
    other = PairwiseMax(2, d=2, A=-c.task.A)
    assert "β > 0" in bp.pairwise_reason(c.model, other)
    # with the CLS as a key, its state must be the embedding of x = 0
    k = _cls_key(c)
    with torch.no_grad():
        k.model.cls[0] += 1.0
    assert "embedding of x = 0" in bp.pairwise_reason(k.model, k.task)
    # a perturbation beyond the slack the bracket carries (1 % of the term's scale)
    big = build("if_pairwise_max", T=2, d=2, D=1, beta=10.0)
    _on_support(big, 0.2, 0)
    assert bp.pairwise_reason(big.model, big.task) is not None
    # not a Transformer
    assert "Transformer" in bp.pairwise_reason(object(), c.task)


def test_value_floor_is_carried_as_slack_not_refused():
    c = build("if_pairwise_max", T=8, d=4, D=1, beta=1e4)
    base = bp.pairwise_bracket(c.model, c.task).upper
    c.model.attention(1).v.weight.data.mul_(1.001)
    b = bp.pairwise_bracket(c.model, c.task)
    slack = b.heads[0]["terms"][0]["value_scale_slack"]
    assert slack >= 0.001 * np.linalg.norm(c.task.A[0], 2) and b.upper >= base + slack * 0.999
    assert _worst(c, budget=64) <= b.upper


# ----------------------------------------------------------------------------- the quick cells
QUICK = [
    (D, T, 0, beta)
    for D in (1, 2)
    for T in (8, 64)
    for beta in ([1e2, 1e3, 1e4, 1e5, 1e6] if T == 8 else [1e3, 1e4, 1e5])
] + [(16, 8, 1, beta) for beta in (1e2, 1e3, 1e4, 1e5, 1e6)]


def test_quick_cells_are_certified_below_the_claimed_bound():
    cl = claim("IF-K2")
    for D, T, tied, beta in QUICK:
        c = build("if_pairwise_max", T=T, d=4, D=D, beta=beta, tied=tied)
        b = bp.pairwise_bracket(c.model, c.task)
        claimed = cl.evaluate_float("err_bound", D=D, beta=beta, T=T)
        # well below: the claim's ln(βT) makes it 4-8 times the bracket on these cells
        assert b.found <= b.upper <= claimed / 3, (D, T, tied, beta, b.upper, claimed)


@pytest.mark.parametrize("D,T,tied,beta", [(1, 8, 0, 1e2), (2, 8, 0, 1e4), (16, 8, 1, 1e3)])
def test_quick_cells_bracket_over_found(D, T, tied, beta):
    """The bracket against the adversarial search's worst case on three quick cells (report:
    ratio in ``-s`` output); the routed bracket and the construction's certify agree."""
    c = build("if_pairwise_max", T=T, d=4, D=D, beta=beta, tied=tied)
    r = upper_bracket(c.model, c.task)
    assert r.method == "structured" and r.upper == bp.pairwise_bracket(c.model, c.task).upper
    found = _worst(c, n=1000, budget=128)
    print(f"D={D} T={T} tied={tied} β={beta:g}: bracket/found = {r.upper / found:.2f}")
    assert found <= r.upper <= 6 * found
    cert = c.certify()
    assert cert["sup_error_upper"] == r.upper and "unit sphere" in cert["certified"]
