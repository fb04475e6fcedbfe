"""The trained trade-off experiments (tradeoffs digest §8 P3, P4, P6, P7) and the TO-R1..R3
verdicts built on them: the template fit recovers known parameters, the verdict logic fed
synthetic rows says what its criterion says (and each mutant flips a passing one), SVD truncation
and head pruning do exactly what they claim on built models, and trained bounded-logit heads never
beat the TO-X2 floor (a property test at tiny scale). The quick cells themselves run under the
``slow`` marker (test_checks_tradeoffs.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _helpers import layers_row, layers_trace
from hypothesis import given, settings
from hypothesis import strategies as st

import approxtheory as at
from approxtheory.experiments._tradeoffs import (
    LagMix,
    fit_template,
    head_ov_norms,
    prune_heads,
    template_error,
    truncate_head,
    truncate_layer,
)
from approxtheory.model import LayerSpec, ModelConfig, Transformer
from approxtheory.proofs_check import tradeoffs as chk

FAIL = "inconsistent"


# ------------------------------------------------------------------------------ template fit
@pytest.mark.parametrize(
    "a,b,alpha,beta,D", [(0.3, 0.05, 1.5, 1.0, 16), (1.0, 0.2, 0.7, 2.0, 32), (0.1, 0.1, 1, 1, 64)]
)
def test_template_fit_recovers_known_parameters(a, b, alpha, beta, D):
    H = [2**i for i in range(int(math.log2(D)) + 1)]
    E = template_error(H, D, 3, a, b, alpha, beta)
    f = fit_template(H, E, D, 3)
    assert f["rms_log_resid"] < 1e-6
    assert f["alpha"] == pytest.approx(alpha, rel=1e-3)
    assert f["beta"] == pytest.approx(beta, rel=1e-3)
    want = at.claim("TO-T1").evaluate_float("H_star", D=D, M=3, a=a, b=b, alpha=alpha, beta=beta)
    assert f["H_star"] == pytest.approx(want, rel=1e-3)
    # and H* is the minimiser of the template on a fine grid
    grid = np.geomspace(0.5, 2 * D, 4001)
    assert grid[np.argmin(template_error(grid, D, 3, a, b, alpha, beta))] == pytest.approx(
        want, rel=2e-3
    )


# ------------------------------------------------------------------------------ verdict logic
def _budget_rows(nmse_of_h, D=16, T=16, seeds=(0, 1)):
    return [
        {"T": T, "budget": D, "heads": h, "seed": s, "steps": 10, "val_nmse": nmse_of_h(h, s)}
        for h in (1, 2, 4, 8, 16)
        for s in seeds
    ]


def _interior(h, s):
    return float(template_error(h, 16, 3, 0.05, 0.3, 1.5, 1.0)) * (1 + 0.01 * s)


def test_r1_verdict_logic():
    v = chk.budget_split_verdict("TO-R1", _budget_rows(_interior), "quick")
    assert v.verdict == "consistent-empirical", v.evidence
    assert v.evidence.startswith("Criterion: ") and "[fails]" not in v.evidence
    # all-heads best (monotone decreasing in H): the edge wins
    v = chk.budget_split_verdict("TO-R1", _budget_rows(lambda h, s: 1 / h), "quick")
    assert v.verdict == FAIL and "edge" in v.evidence
    # interior optimum, but far from the template's H* (a spike at H = 2 the template cannot follow)
    v = chk.budget_split_verdict(
        "TO-R1", _budget_rows(lambda h, s: 0.01 if h == 2 else 1.0), "quick"
    )
    assert v.verdict in ("consistent-empirical", FAIL)  # decided by the fit, never an error
    for m in ("argmax-for-argmin", "hstar-D-linear"):
        assert (
            chk.budget_split_verdict("TO-R1", _budget_rows(_interior), "quick", m).verdict == FAIL
        )


def _layer_rows(front, back, first_cost, later_cost):
    rows, trace = [], []
    for s in (0, 1):
        for k, loss in (("uniform", 2.0), ("front", front), ("back", back)):
            rows.append(layers_row(k, s, loss))
        trace += layers_trace(s, lambda li: first_cost if li == 1 else later_cost)
    return rows, trace


def test_r2_verdict_logic():
    rows, trace = _layer_rows(2.0, 2.1, 1.0, 0.1)
    v = chk.layer_allocation_verdict("TO-R2", rows, trace, "quick")
    assert v.verdict == "consistent-empirical", v.evidence
    for m in ("layers-reversed", "schedules-swapped"):
        assert chk.layer_allocation_verdict("TO-R2", rows, trace, "quick", m).verdict == FAIL
    # later layers costlier to compress, or back-loading better: inconsistent
    for args in ((2.0, 2.1, 0.1, 1.0), (2.2, 2.1, 1.0, 0.1)):
        rows, trace = _layer_rows(*args)
        assert chk.layer_allocation_verdict("TO-R2", rows, trace, "quick").verdict == FAIL


def _cut_rows(cut_dim, cut_heads, svd, prune):
    base = {"T": 16, "p": 4, "width": 32, "heads": 8, "head_dim": 8, "layers": 1, "steps": 10}
    out = []
    for s in (0, 1):
        out += [
            {
                **base,
                "variant": "base",
                "seed": s,
                "val_nmse": 0.1,
                "svd_nmse": svd,
                "prune_nmse": prune,
            },
            {
                **base,
                "variant": "cut_dim",
                "seed": s,
                "val_nmse": cut_dim,
                "svd_nmse": math.nan,
                "prune_nmse": math.nan,
            },
            {
                **base,
                "variant": "cut_heads",
                "seed": s,
                "val_nmse": cut_heads,
                "svd_nmse": math.nan,
                "prune_nmse": math.nan,
            },
        ]
    return out


def test_r3_verdict_logic():
    good = _cut_rows(0.2, 0.3, 0.15, 0.5)
    assert chk.cut_order_verdict("TO-R3", good, "quick").verdict == "consistent-empirical"
    assert chk.cut_order_verdict("TO-R3", good, "quick", "cuts-swapped").verdict == FAIL
    v = chk.cut_order_verdict("TO-R3", _cut_rows(0.3, 0.2, 0.15, 0.5), "quick")
    assert v.verdict == FAIL and "trained" in v.witness["failed"][0]
    v = chk.cut_order_verdict("TO-R3", _cut_rows(0.2, 0.3, 0.5, 0.15), "quick")
    assert v.verdict == FAIL and "post hoc" in v.witness["failed"][0]


# ------------------------------------------------------------------------------ compression
def _model(seed=0, heads=4, n=6, E=12, layers=2):
    g = torch.Generator().manual_seed(seed)
    m = Transformer(
        ModelConfig(
            d_in=3,
            width=E,
            layers=[LayerSpec(heads, n) for _ in range(layers)],
            readout="tokens",
            d_out=2,
            causal=True,
        )
    )
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5)
    return m


def test_truncation_at_full_rank_is_the_identity_and_below_is_eckart_young():
    m = _model()
    X = torch.randn(5, 7, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y0 = m(X)
    full = _model()
    truncate_layer(full, 0, 6)
    truncate_layer(full, 1, 6)
    assert torch.allclose(full(X), y0, atol=1e-10)
    for r in (1, 3):
        t = _model()
        truncate_head(t, 1, 2, r)
        w0, w = m.head_weights(1, 2), t.head_weights(1, 2)
        M0 = (w0.q.T @ w0.k).numpy()
        U, S, Vt = np.linalg.svd(M0)
        best = (U[:, :r] * S[:r]) @ Vt[:r]
        np.testing.assert_allclose((w.q.T @ w.k).numpy(), best, atol=1e-10)
        assert np.linalg.matrix_rank((w.o @ w.v).numpy(), tol=1e-9) == r
        # the other heads are untouched
        for h in (0, 1, 3):
            assert torch.equal(t.head_weights(1, h).q, m.head_weights(1, h).q)


def test_truncation_matches_the_to_c1_construction():
    from approxtheory.constructions import build
    from approxtheory.constructions.tradeoffs import build_lag_model

    c = build("svd_truncation", r=5, T=16, B=2.0)
    m, _ = build_lag_model(16, 2, 8, 2.0, decay=0.3)
    truncate_head(m, 0, 0, 5, ov=False)
    w, wc = m.head_weights(0, 0), c.model.head_weights(0, 0)
    np.testing.assert_allclose((w.q.T @ w.k).numpy(), (wc.q.T @ wc.k).numpy(), atol=1e-12)


def test_pruning_removes_the_smallest_heads_only():
    m = _model(seed=3)
    norms = head_ov_norms(m, 0)
    gone = prune_heads(m, 0, 2)
    assert gone == sorted(np.argsort(norms)[:2].tolist())
    ref = _model(seed=3)
    for h in range(4):
        o = m.head_weights(0, h).o
        if h in gone:
            assert float(o.abs().max()) == 0.0
        else:
            assert torch.equal(o, ref.head_weights(0, h).o)


def test_lagmix_targets_use_the_lags_only():
    task = LagMix(8, p=2)
    X = np.random.default_rng(0).standard_normal((3, 8, 2))
    y = task.target(X)
    X2 = X.copy()
    X2[:, -1] += 5.0  # the last token is no lag of any row
    np.testing.assert_array_equal(task.target(X2), y)
    X3 = X.copy()
    X3[:, 4] += 5.0  # token 4 is lag 1, 2, 3 of rows 5, 6, 7
    changed = np.abs(task.target(X3) - y).max(-1).max(0) > 0
    assert changed.tolist() == [False] * 5 + [True] * 3


# ------------------------------------------------------------------ trained bounded-logit heads
class _BoundedHead(torch.nn.Module):
    """A position-only attention head with learned positions (query/key dim d), logits
    B·tanh(·) in [-B, B], value x, read-out c; outputs the scored rows t >= T/2."""

    def __init__(self, T, d, B, g):
        super().__init__()
        self.T, self.B = T, B
        self.pq = torch.nn.Parameter(torch.randn(T, d, generator=g))
        self.pk = torch.nn.Parameter(torch.randn(T, d, generator=g))
        self.c = torch.nn.Parameter(torch.ones(()))
        self.rows = torch.arange(T // 2, T)

    def attention(self):
        z = self.B * torch.tanh(self.pq[self.rows] @ self.pk.T)
        causal = torch.arange(self.T)[None, :] <= self.rows[:, None]
        return torch.softmax(z.masked_fill(~causal, float("-inf")), -1)

    def forward(self, x):
        return self.c * (self.attention().to(x.dtype) @ x[..., 0].T).T


class _LagRows(at.tasks.Task):
    name = "lag_rows"
    lo, hi = -math.sqrt(3.0), math.sqrt(3.0)

    def __init__(self, T, k):
        super().__init__(T, 1)
        self.k = k

    def _target(self, X):
        return X[:, torch.arange(self.T // 2, self.T) - self.k, 0]


@settings(max_examples=6, deadline=None)
@given(
    B=st.sampled_from([0.5, 1.0, 2.0]),
    T=st.sampled_from([8, 16]),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_trained_bounded_logit_heads_never_beat_the_x2_floor(B, T, d, seed):
    from approxtheory.train import TrainConfig, train

    head = _BoundedHead(T, d, B, torch.Generator().manual_seed(seed))
    res = train(
        head, _LagRows(T, 2), TrainConfig(steps=60, batch=32, lr=0.05, seed=seed, init="keep")
    )
    assert res.ok
    with torch.no_grad():
        a = head.attention().double()
        c = float(head.c)
    rows = head.rows
    at_t = a[torch.arange(len(rows)), rows - 2]
    # exact error per row for i.i.d. unit-variance tokens with read-out c, and with the best one
    err = (1 - c * at_t) ** 2 + c**2 * ((a**2).sum(-1) - at_t**2)
    best = 1 - at_t**2 / (a**2).sum(-1)
    floor = torch.tensor(
        [at.claim("TO-X2").evaluate_float("floor", L=int(t) + 1, B=B) for t in rows],
        dtype=torch.float64,
    )
    assert (best >= floor * (1 - 1e-9)).all(), (best - floor).min()
    assert (err >= best - 1e-12).all()


# ------------------------------------------------------------------ P1: optimised heads
def test_p1_heads_envelope_floor_and_unbounded_sanity():
    """optimise_heads: the envelope is the running minimum of the per-d bests; finite-B heads
    stay above the TO-X2 floor averaged over the scored rows (P1 (a)); unbounded heads of
    dimension 8 retrieve lag 2 at T = 16 almost exactly (P1 (d): E < 0.05) while d = 1 cannot
    (E > 0.5: one rank-1 logit row cannot peak at every lag-2 position)."""
    from approxtheory.experiments._tradeoffs import optimise_heads, scored_rows

    for B in (1.0, math.inf):
        r = optimise_heads(16, B, restarts=2, steps=100, seed=5)
        raw, env = r["raw"], r["envelope"]
        assert list(env) == [1, 2, 4, 8]
        assert all(env[d] == min(raw[e] for e in raw if e <= d) for d in env), r
        if math.isfinite(B):
            floor = np.mean(
                [
                    at.claim("TO-X2").evaluate_float("floor", L=int(t) + 1, B=B)
                    for t in scored_rows(16)
                ]
            )
            assert min(env.values()) >= floor * (1 - 1e-9), (env, floor)
        else:
            assert env[8] < 0.05 and raw[1] > 0.5, r


def test_p1_envelope_is_the_running_minimum_over_d():
    """From untrained starts (steps = 0) the per-d errors are not monotone in d; the envelope is
    their running minimum (rank-d heads contain the rank-d' heads, d' < d)."""
    from approxtheory.experiments._tradeoffs import optimise_heads

    non_monotone = 0
    for seed in range(6):
        r = optimise_heads(16, 1.0, restarts=1, steps=0, seed=seed)
        raw, env = r["raw"], r["envelope"]
        assert env == {d: min(raw[e] for e in raw if e <= d) for d in raw}
        non_monotone += any(raw[b] > raw[a] for a, b in zip(raw, list(raw)[1:]))
    assert non_monotone, "every draw was monotone: the envelope is not exercised"


def test_p1_bad_input_is_a_typed_error():
    from approxtheory.errors import ConfigError
    from approxtheory.experiments.tradeoffs_saturation import heads_check

    good = {"T": 16, "B": 1.0, "restarts": 1, "steps": 1}
    heads_check(good)
    heads_check({**good, "B": math.inf})
    for bad, msg in (
        ({"B": 0.0}, "B must be"),
        ({"B": math.nan}, "B must be"),
        ({"B": "1"}, "B must be"),
        ({"T": 4}, "T must be at least 8"),
        ({"restarts": 0}, "restarts must be"),
    ):
        with pytest.raises(ConfigError, match=msg):
            heads_check({**good, **bad})


def _p1_rows(gain_scale=1.0):
    """tradeoffs_heads-shaped rows: E(d) = 0.9 - gain_scale·0.01·log2(d) per (T, B), and the
    unbounded cells with a large d-gain (0.85 -> 0.01)."""
    rows = []
    for T in (16, 64):
        for B in (0.5, 1.0, math.inf):
            E = {
                d: (0.85 if d == 1 else 0.01)
                if math.isinf(B)
                else 0.9 - gain_scale * 0.01 * math.log2(d)
                for d in (1, 2, 4, 8)
            }
            rows.append(
                {"T": T, "B": B, "seed": 0, "restarts": 2, "steps": 1}
                | {f"E_d{d}": v for d, v in E.items()}
            )
    return tuple(rows)


def test_to_t2_reads_the_p1_rows_and_its_mutant(monkeypatch):
    """TO-T2 on stated P1 rows: a small d-gain is within the X3 bound; the unbounded-heads
    mutant reads the B = inf cells (gain sqrt(0.85) - sqrt(0.01) = 0.82 > the bound at
    B = 0.5, T = 64: sqrt(2e/L) <= 0.41 for L >= 33) and is refuted; a d-gain 30x larger is
    refuted as well; no rows: not-checkable with the command."""
    import approxtheory.proofs_check.tradeoffs as toc
    from approxtheory.proofs_check import Context, run_check

    rows = {"r": _p1_rows()}
    monkeypatch.setattr(toc.heads, "_trained", lambda name, profile: (rows["r"], (), 0.0, "fake"))
    assert run_check("TO-T2", Context()).verdict == "verified-numeric"
    assert run_check("TO-T2", Context(mutant="unbounded-heads")).verdict == "refuted"
    rows["r"] = _p1_rows(gain_scale=30.0)
    v = run_check("TO-T2", Context())
    assert v.verdict == "refuted" and v.witness["T"] == 64, v.evidence
    monkeypatch.setattr(toc.heads, "_trained", lambda name, profile: (None, (), 0.0, "0 cached"))
    v = run_check("TO-T2", Context())
    assert v.verdict == "not-checkable" and "tradeoffs_heads" in v.evidence


def test_to_x2_reads_the_p1_rows(monkeypatch):
    """TO-X2 adds P1's heads to its attack: stated rows above the floor keep it verified (the
    P1 ratio is reported); a P1 cell below the floor averaged over its rows refutes it, with
    that cell as the witness."""
    import approxtheory.proofs_check.tradeoffs as toc
    from approxtheory.experiments._tradeoffs import scored_rows
    from approxtheory.proofs_check import Context, run_check

    rows = {"r": _p1_rows()}
    monkeypatch.setattr(toc.heads, "_trained", lambda name, profile: (rows["r"], (), 0.0, "fake"))
    v = run_check("TO-X2", Context())
    assert v.verdict == "verified-numeric" and "closest error/floor" in v.evidence, v.evidence
    floor = np.mean(
        [at.claim("TO-X2").evaluate_float("floor", L=int(t) + 1, B=1.0) for t in scored_rows(64)]
    )
    low = [dict(r) for r in _p1_rows()]
    for r in low:
        if r["B"] == 1.0 and r["T"] == 64:
            r["E_d8"] = 0.5 * floor
    rows["r"] = tuple(low)
    v = run_check("TO-X2", Context())
    assert v.verdict == "refuted", v.evidence
    assert v.witness["head"] == "P1 rank-d heads" and (v.witness["B"], v.witness["T"]) == (1.0, 64)


# ------------------------------------------------------------------------------ bad input
def test_bad_corpus_is_a_typed_error(tmp_path):
    from approxtheory.errors import ConfigError
    from approxtheory.experiments.tradeoffs_layers import check_cell

    cfg = {
        "schedule": "uniform",
        "T": 32,
        "width": 32,
        "heads": 2,
        "head_dim": 16,
        "layers": 4,
        "steps": 1,
        "batch": 2,
    }
    (tmp_path / "bin.dat").write_bytes(bytes(range(256)))
    (tmp_path / "nul.txt").write_bytes(b"abc\x00def" * 100)
    for spec, msg in (
        (str(tmp_path / "missing.txt"), "not found"),
        (str(tmp_path), "text file"),
        (str(tmp_path / "bin.dat"), "UTF-8"),
        (str(tmp_path / "nul.txt"), "NUL"),
    ):
        with pytest.raises(ConfigError, match=msg):
            check_cell({**cfg, "corpus": spec})


# ------------------------------------------------------------------------------ determinism
@pytest.mark.parametrize(
    "name,over",
    [
        ("tradeoffs_budget", {"heads": 4, "steps": 3}),
        ("tradeoffs_cuts", {"variant": "base", "steps": 3}),
        ("tradeoffs_layers", {"schedule": "front", "steps": 2, "val_windows": 4}),
        ("tradeoffs_saturation", {"head_dim": 2, "steps": 3}),
        ("tradeoffs_heads", {"T": 16, "steps": 3}),
    ],
)
def test_cells_are_deterministic_in_the_seed(name, over):
    """A cell run twice from the same seed gives the same record (so the same CSV bytes)."""
    from approxtheory.experiment import cells, get

    exp = get(name)
    cfg = {**cells(exp, "quick")[0], **over}
    a, b = exp.cell(dict(cfg)), exp.cell(dict(cfg))
    assert a == b
    assert exp.cell({**cfg, "seed": 1}) != a
