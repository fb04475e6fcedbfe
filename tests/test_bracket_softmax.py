"""The structured certified bracket (approxtheory.bracket_softmax): exact at the papers'
sizes, never below brute force on small cells (fixed and Hypothesis-drawn models and boxes),
its mutants caught, deterministic budgets, NaN/inf never bracketed by a finite number."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from _helpers import perturb as _perturb
from hypothesis import given, settings
from hypothesis import strategies as st

import approxtheory.bracket_softmax as bs
from approxtheory.bench.search import _synthetic_known, known_hc_k1_vertices, known_softmax_max
from approxtheory.bounds import upper_bracket
from approxtheory.constructions import build
from approxtheory.constructions.headcount import build_softmax_retrieval_model
from approxtheory.errors import ConfigError
from approxtheory.tasks import GeneralizedRetrieval, ScalarMax


def _grid_max(model, task, n=21, lo=None, hi=None, extra=None):
    """max |model - target| over a dense grid of the (T, d) box (T·d <= 4) plus extra points."""
    T, d = task.T, task.d
    lo = np.full((T, d), float(task.lo)) if lo is None else np.asarray(lo, float)
    hi = np.full((T, d), float(task.hi)) if hi is None else np.asarray(hi, float)
    axes = [np.linspace(lo.flat[i], hi.flat[i], n) for i in range(T * d)]
    X = np.array(list(itertools.product(*axes))).reshape(-1, T, d)
    if extra is not None:
        X = np.concatenate([X, np.clip(np.asarray(extra, float).reshape(-1, T, d), lo, hi)])
    Xt = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        out = model(Xt)[:, 0]
        y = task.target(Xt)
    return float((out - y).abs().max())


# ----------------------------------------------------------------------------- the papers' sizes
def test_softmax_retrieval_at_T_1024_beta_1e4_is_certified_within_2x_of_the_supremum():
    c = build("softmax_retrieval", T=1024, beta=1e4)
    known = known_softmax_max(1024, 1e4)  # W(1023/e)/β, computed independently (scipy)
    assert known == pytest.approx(4.4399e-4, rel=1e-4)
    r = upper_bracket(c.model, c.task)
    assert r.method == "structured" and r.reproducible and not r.unsound_input
    assert known * (1 - 1e-12) <= r.upper <= 2 * known
    assert r.upper <= known * (1 + 1e-8)  # in fact exact up to the outward rounding
    assert r.lower <= r.upper and r.lower >= 0.999 * known  # the witness attains it


@pytest.mark.parametrize("T", [8, 32, 128])
def test_hc_k1_gate_minus_one_is_certified_up_to_T_128(T):
    c = build("hc_k1", T=T, beta=1000.0, gate=-1.0)
    vertex = known_hc_k1_vertices(T, 1000.0, -1.0)[0]  # a lower bound on the sup
    r = upper_bracket(c.model, c.task)
    assert r.method == "structured"
    assert vertex * (1 - 1e-9) <= r.upper <= 1.2 * vertex
    assert r.lower <= r.upper


def test_hc_k1c_and_the_synthetic_instance_are_certified():
    c = build("hc_k1", T=128, beta=1000.0, gate=-2.0)
    r = upper_bracket(c.model, c.task)
    assert r.lower <= r.upper <= 1.01 * r.lower and r.upper <= c.claimed_bound
    c = build("hc_k1_synthetic", T=16, D=1, d=4, beta=100.0)
    known = _synthetic_known(c)
    r = upper_bracket(c.model, c.task)
    assert known * (1 - 1e-9) <= r.upper <= known * (1 + 1e-8)


def test_construct_reports_the_structured_bracket_at_T_1024(capsys):
    import json

    from approxtheory.cli import main

    rc = main(
        [
            "construct",
            "softmax_retrieval",
            "--T",
            "1024",
            "--beta",
            "1e4",
            "--json",
            "--budget",
            "64",
        ]
    )
    assert rc == 0
    rep = json.loads(capsys.readouterr().out)
    known = known_softmax_max(1024, 1e4)
    assert known <= rep["sup_error_upper"] <= 2 * known
    assert rep["bracket"]["method"] == "structured" and "certified" in rep
    assert rep["sup_error"] <= rep["sup_error_upper"]


def test_construct_help_prints_the_usage(capsys):
    from approxtheory.cli import main

    assert main(["construct", "--help"]) == 0
    assert "approxtheory construct NAME" in capsys.readouterr().out


# ----------------------------------------------------------------------------- soundness
SMALL = [
    ("softmax_retrieval", dict(T=2, beta=20.0), 0.0),
    ("softmax_retrieval", dict(T=3, beta=50.0), 0.0),
    ("softmax_retrieval", dict(T=3, beta=5.0), 0.3),
    ("hc_k1", dict(T=4, beta=20.0, gate=-1.0), 0.0),
    ("hc_k1", dict(T=4, beta=20.0, gate=-1.0), 0.02),
    ("hc_k1", dict(T=4, beta=8.0, gate=-2.0, sets="all"), 0.1),
    ("hc_k1_synthetic", dict(T=2, d=1, D=2, beta=10.0), 0.0),
    ("hc_k1_synthetic", dict(T=2, d=2, D=1, beta=10.0), 0.05),
]


@pytest.mark.parametrize("name,knobs,noise", SMALL)
def test_bracket_is_never_below_a_dense_grid(name, knobs, noise):
    c = build(name, **knobs)
    if noise:
        _perturb(c.model, noise, 7)
    r = upper_bracket(c.model, c.task, method="structured", max_pieces=256)
    assert r.upper is not None and math.isfinite(r.upper), r.reason
    n = 9 if c.task.T * c.task.d >= 4 else 41
    assert _grid_max(c.model, c.task, n=n, extra=r.witness) <= r.upper
    assert r.lower <= r.upper


@given(
    seed=st.integers(0, 10**6),
    T=st.integers(1, 3),
    beta=st.floats(0.5, 200.0),
    noise=st.sampled_from([0.0, 0.1, 0.5, 2.0]),
    sub=st.booleans(),
    mode=st.sampled_from(["max", "min"]),
)
@settings(max_examples=25, deadline=None)
def test_random_small_models_and_boxes_are_bracketed(seed, T, beta, noise, sub, mode):
    rng = np.random.default_rng(seed)
    m = _perturb(build_softmax_retrieval_model(T, beta), noise, seed)
    a, b = rng.normal(), rng.normal()
    task = GeneralizedRetrieval(
        T, 1, affine=([[a]], [b]), outer_affine=([rng.normal()], rng.normal()), mode=mode
    )
    lo = hi = None
    if sub:
        u, v = rng.random((T, 1)), rng.random((T, 1))
        lo, hi = np.minimum(u, v), np.maximum(u, v)
    r = upper_bracket(m, task, method="structured", lo=lo, hi=hi, max_pieces=128)
    assert r.upper is not None, r.reason
    assert _grid_max(m, task, n=41 if T < 3 else 25, lo=lo, hi=hi, extra=r.witness) <= r.upper


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_default_initialised_models_are_bracketed(dtype):
    """A freshly initialised one-head model (CLS = 0: constant scores, α = 0) in either dtype."""
    from approxtheory.model import LayerSpec, ModelConfig, Transformer

    cfg = ModelConfig(
        d_in=1,
        width=2,
        layers=[LayerSpec(heads=1, head_dim=1)],
        d_out=1,
        attn_scale=1.0,
        dtype=dtype,
    )
    torch.manual_seed(0)
    m = Transformer(cfg)
    r = upper_bracket(m, ScalarMax(3), method="structured")
    assert r.upper is not None, r.reason
    slack = 1e-5 if dtype == "float32" else 0.0
    assert _grid_max(m, ScalarMax(3), n=25) <= r.upper + slack


def test_two_head_perturbed_models_are_bracketed_on_sub_boxes():
    rng = np.random.default_rng(3)
    c = build("hc_k1", T=4, beta=15.0, gate=-1.0)
    _perturb(c.model, 0.2, 3)
    for _ in range(3):
        u, v = rng.random((4, 1)), rng.random((4, 1))
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        r = upper_bracket(c.model, c.task, method="structured", lo=lo, hi=hi)
        assert _grid_max(c.model, c.task, n=11, lo=lo, hi=hi, extra=r.witness) <= r.upper


# ----------------------------------------------------------------------------- mutants
def test_mutant_without_the_critical_point_is_caught(monkeypatch):
    """An unsound relaxation: each token's maximum taken at the interval's ends only (the
    softmax optimum is interior) must fall below the grid."""
    real = bs._term_max

    def ends_only(alpha, w, c, dl, du):
        # the real maximum over each one-point interval: the value at that end alone
        at_dl, at_du = real(alpha, w, c, dl, dl), real(alpha, w, c, du, du)
        g = bs._gt(at_du[0], at_du[1], at_dl[0], at_dl[1])
        best = [np.where(g, u, d) for u, d in zip(at_du, at_dl)]
        best[1] = np.where(dl > du, 0.0, best[1])
        return tuple(best)

    c = build("softmax_retrieval", T=3, beta=50.0)
    known = known_softmax_max(3, 50.0)
    assert bs.structured_bracket(c.model, c.task).upper >= known
    monkeypatch.setattr(bs, "_term_max", ends_only)
    assert bs.structured_bracket(c.model, c.task).upper < known
    # upper_bracket's own check (bound >= every evaluated error) refuses to give a number
    r = upper_bracket(c.model, c.task, method="structured")
    assert r.upper is None and "internal check failed" in r.reason


def test_mutant_dropping_the_other_tokens_is_caught(monkeypatch):
    """A dropped term: counting each class once (forgetting the other tokens)."""
    real = bs._extract

    def one_each(*a, **k):
        K, heads, parts = real(*a, **k)
        for h in heads:
            h.count = np.ones_like(h.count)
        return K, heads, parts

    c = build("softmax_retrieval", T=16, beta=50.0)
    known = known_softmax_max(16, 50.0)
    assert bs.structured_bracket(c.model, c.task).upper >= known
    monkeypatch.setattr(bs, "_extract", one_each)
    assert bs.structured_bracket(c.model, c.task, max_pieces=64).upper < known


def test_mutant_nan_read_as_zero_is_caught(monkeypatch):
    """The old _Lower read a NaN error as 0; with that mutant a NaN target gets a finite bound."""
    import approxtheory.bounds as bd

    task = _NanAbove(3, 0.9)
    m = build_softmax_retrieval_model(3, 20.0)
    assert upper_bracket(m, task).upper == math.inf

    def as_zero(self, e, X):
        return torch.nan_to_num(e, nan=0.0)

    monkeypatch.setattr(bd._Lower, "_note", as_zero)
    assert math.isfinite(upper_bracket(m, task).upper)


# ----------------------------------------------------------------------------- non-finite input
class _NanAbove(ScalarMax):
    """max_t x(t), but NaN where some token exceeds ``cut`` (a target that fails somewhere)."""

    def __init__(self, T, cut):
        super().__init__(T)
        self.cut = cut

    def _target(self, X):
        y = super()._target(X)
        return torch.where(X[..., 0].amax(-1) > self.cut, torch.full_like(y, math.nan), y)


@pytest.mark.parametrize("method", ["auto", "structured", "generic"])
def test_nan_weights_give_an_infinite_bracket(method):
    c = build("softmax_retrieval", T=2, beta=20.0)
    with torch.no_grad():
        c.model.head[0].weight[0, 0] = math.nan
    r = upper_bracket(c.model, c.task, method=method, max_boxes=50)
    assert r.upper == math.inf and r.unsound_input and r.stop == "unsound-input"
    assert "weights" in r.reason


@pytest.mark.parametrize("method", ["auto", "generic"])
def test_nan_outputs_at_evaluated_inputs_give_an_infinite_bracket(method):
    r = upper_bracket(
        build_softmax_retrieval_model(3, 20.0), _NanAbove(3, 0.9), method=method, max_boxes=50
    )
    assert r.upper == math.inf and r.unsound_input and r.lower == math.inf
    assert r.witness is not None and r.witness.max() > 0.9  # the input where it failed


# ----------------------------------------------------------------------------- budgets, input
def test_results_are_deterministic_and_need_no_clock():
    c = build("hc_k1", T=16, beta=100.0, gate=-1.0)
    r1 = upper_bracket(c.model, c.task, max_pieces=40)
    r2 = upper_bracket(c.model, c.task, max_pieces=40)
    assert (r1.upper, r1.lower, r1.boxes, r1.stop) == (r2.upper, r2.lower, r2.boxes, r2.stop)
    assert r1.reproducible


def test_the_deprecated_time_limit_becomes_a_box_budget():
    from approxtheory.bounds import BOXES_PER_SECOND

    c = build("hc_l9", T=2, eps=0.25)
    r = upper_bracket(c.model, c.task, time_limit=1.0, tol=0.0, method="generic")
    assert r.extra["budget"]["max_boxes"] == math.ceil(BOXES_PER_SECOND * 1.0)
    assert r.extra["budget"]["wall_clock_cap"] == 10.0
    assert r.boxes <= r.extra["budget"]["max_boxes"] + 2 * 16 * 6
    assert r.stop == f"box budget ({BOXES_PER_SECOND}) spent" and r.reproducible


def test_the_wall_clock_safety_net_marks_the_result_not_reproducible():
    c = build("hc_l9", T=2, eps=0.25)
    r = upper_bracket(c.model, c.task, method="generic", wall_clock_cap=1e-9, tol=0.0)
    assert r.stop == "exhausted-by-time" and not r.reproducible
    assert r.upper is not None and _grid_max(c.model, c.task, n=41) <= r.upper  # still sound


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(max_pieces=0), "max_pieces must be a positive integer"),
        (dict(max_boxes=-1), "max_boxes must be a positive integer"),
        (dict(time_limit=0.0), "time_limit must be a positive number"),
        (dict(wall_clock_cap=math.inf), "wall_clock_cap must be a positive number"),
        (dict(method="exact"), "method must be one of auto, structured, generic"),
        (dict(lo=0.9, hi=0.1), "lo must be <= hi"),
        (dict(lo=math.nan), "must be finite"),
        (dict(hi=math.inf), "must be finite"),
    ],
)
def test_bad_input_is_a_config_error_naming_what_is_allowed(kw, match):
    c = build("softmax_retrieval", T=2, beta=10.0)
    with pytest.raises(ConfigError, match=match):
        upper_bracket(c.model, c.task, **kw)


def test_unsupported_models_for_the_structured_path_say_why():
    c = build("hc_k2", T=2, d=1)  # (hc_l9 has its own structured route: approxtheory.bounds.relu)
    r = upper_bracket(c.model, c.task, method="structured")
    assert r.upper is None and "structured bracket does not apply" in r.reason
    assert bs.structured_reason(c.model, c.task) is not None
    c = build("softmax_retrieval", T=2, beta=10.0)
    assert bs.structured_reason(c.model, c.task) is None


def test_cli_bad_input_is_one_line_and_exit_2(capsys):
    from approxtheory.cli import main

    assert main(["bench", "bracket", "--threads", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "threads" in err[0]


def test_bench_bracket_json_has_the_interval_baseline(capsys):
    import json

    from approxtheory.cli import main

    rc = main(["bench", "bracket", "--json", "--only", "softmax T=4 β=1e+02", "--threads", "1"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    (row,) = res["rows"]
    assert row["known"] * (1 - 1e-12) <= row["certified"] <= 1.001 * row["known"]
    assert row["interval"] == pytest.approx(4.0, rel=1e-9)  # IBP: [0, T]
    assert row["interval_over_certified"] > 100 and row["meets_goal"]
