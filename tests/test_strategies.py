"""approxtheory.strategies: failing cases shrink (toward near-ties, lower bounds, simple values),
every bound takes a value or a strategy, impossible arguments raise InvalidArgument, knobs are
drawn from the ranges their Knob declares."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from approxtheory import strategies as ats
from approxtheory.constructions import REGISTRY, Knob, _base, build, names
from approxtheory.model import LayerSpec
from approxtheory.tasks import PairwiseMax, SyntheticMaxSum

minimal = ats.minimal  # hypothesis.find without the example database: reproducible


def gap(X, minimum=False):
    """The margin of the separated value of the first coordinate."""
    x = np.sort(X[:, 0])
    return (x[1] - x[0]) if minimum else (x[-1] - x[-2])


def softmax_error(x, beta):
    p = np.exp(beta * (x - x.max()))
    p /= p.sum()
    return float(x.max() - p @ x)


# --- shrinking -----------------------------------------------------------------------------------


def test_a_small_gap_shrinks_to_a_tie_at_the_top():
    X = minimal(ats.retrieval_inputs(T=8, margin=st.floats(0, 0.5)), lambda X: gap(X) < 1e-3)
    assert X.shape == (8, 1)
    assert gap(X) == 0.0
    np.testing.assert_array_equal(X[:, 0], np.ones(8))  # top at hi, the rest tied with it


def test_the_gap_shrinks_to_the_margin_not_beyond_it():
    X = minimal(ats.retrieval_inputs(T=8, margin=0.125), lambda X: gap(X) < 0.5)
    assert gap(X) == 0.125
    np.testing.assert_array_equal(X[:, 0], [1.0] + [0.875] * 7)


def _failing_case(margin):
    """Run a property that fails only for small gaps (softmax retrieval at β = 50 misses by more
    than 0.005) and return the failing case Hypothesis reports, i.e. the shrunk one."""
    seen = []

    @settings(database=None, max_examples=300, deadline=None)
    @given(margin.flatmap(lambda m: st.tuples(st.just(m), ats.retrieval_inputs(T=8, margin=m))))
    def prop(case):
        seen.append(case)
        m, X = case
        assert softmax_error(X[:, 0], 50.0) <= 0.005

    with pytest.raises(AssertionError):
        prop()
    return seen[-1]


def test_a_property_failing_for_small_margins_shrinks_to_the_lower_bound():
    m, X = _failing_case(ats.margins(0.01, 0.5))
    assert m == 0.01  # the margin's lower bound
    assert gap(X) == pytest.approx(0.01, abs=1e-12)  # the gap is the margin: a near-tie
    assert np.ptp(np.sort(X[:, 0])[:-1]) == 0  # the rest tied just below the top
    assert X[0, 0] == 1.0  # the top at hi, in position 0


def test_with_a_plain_floats_margin_the_gap_still_shrinks_onto_the_margin():
    """``st.floats(a, b)`` shrinks to the float Hypothesis finds simplest, not to ``a``; the
    input's structure still shrinks onto that margin."""
    m, X = _failing_case(st.floats(0.01, 0.5))
    assert softmax_error(X[:, 0], 50.0) > 0.005
    assert gap(X) == pytest.approx(m, abs=1e-12)
    assert np.ptp(np.sort(X[:, 0])[:-1]) == 0


def test_the_separated_value_shrinks_to_its_end_and_position_zero():
    X = minimal(ats.retrieval_inputs(T=5, margin=0.2, lo=-1.0, hi=3.0))
    np.testing.assert_array_equal(X[:, 0], [3.0, 2.8, 2.8, 2.8, 2.8])
    X = minimal(ats.retrieval_inputs(T=3, margin=0.5, lo=-1.0, hi=3.0, minimum=True))
    np.testing.assert_array_equal(X[:, 0], [-1.0, -0.5, -0.5])
    X = minimal(ats.retrieval_inputs(T=4, margin=0.5), lambda X: X[:, 0].argmax() > 1)
    assert X[:, 0].argmax() == 2


def test_other_coordinates_shrink_to_simple_values():
    X = minimal(ats.retrieval_inputs(T=3, margin=0.1, d=3, lo=-1.0, hi=1.0))
    np.testing.assert_array_equal(X[:, 1:], np.zeros((3, 2)))
    X = minimal(
        ats.retrieval_inputs(T=3, margin=0.1, d=3, lo=-1.0, hi=1.0), lambda X: X[:, 1:].max() > 0.5
    )
    assert set(np.unique(X[:, 1:]).tolist()) <= {0.0, 1.0}


def test_betas_tasks_and_architectures_shrink():
    assert minimal(ats.betas(10, 1e3)) == 10.0  # the softest softmax
    assert 5 < minimal(ats.betas(0.5, 10), lambda b: b > 5) <= 10
    assert minimal(ats.margins(0.2, 0.3)) == 0.2
    t = minimal(ats.max_tasks(kind="synthetic", d=3, D=2))
    assert isinstance(t, SyntheticMaxSum) and t.T == 2
    np.testing.assert_array_equal(t.a, [[1, 0, 0], [1, 0, 0]])
    t = minimal(ats.max_tasks(kind="pairwise", d=2, D=1))
    assert isinstance(t, PairwiseMax)
    np.testing.assert_allclose(t.A, [0.5 * np.eye(2)])
    assert minimal(ats.layer_specs()) == LayerSpec(1, 1, kv_groups=1, ffn_hidden=())
    cfg = minimal(ats.architectures(), lambda c: len(c.layers) > 1)
    assert len(cfg.layers) == 2 and cfg.width == 2 and cfg.d_in == 1


# --- guarantees, with bounds given as values or strategies ---------------------------------------

bounds = st.tuples(st.floats(-1e3, 1e3), st.floats(1e-6, 1e3)).map(lambda b: (b[0], b[0] + b[1]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(), bounds, st.floats(0, 0.999999), st.booleans(), st.integers(1, 12), st.integers(1, 3)
)
def test_the_margin_holds_exactly_in_floating_point(data, lh, frac, minimum, T, d):
    lo, hi = lh
    margin = frac * (hi - lo)
    as_strategy = data.draw(st.booleans())
    wrap = st.just if as_strategy else (lambda v: v)
    X = data.draw(
        ats.retrieval_inputs(
            T=wrap(T),
            margin=wrap(margin),
            d=wrap(d),
            lo=wrap(lo),
            hi=wrap(hi),
            minimum=wrap(minimum),
        )
    )
    assert X.shape == (T, d) and X.dtype == np.float64
    assert np.all((lo <= X) & (X <= hi))
    if T > 1:
        assert gap(X, minimum) >= margin
        assert (
            np.count_nonzero(X[:, 0] == (X[:, 0].min() if minimum else X[:, 0].max())) == 1
            or margin == 0
        )


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_position_and_default_margin(data):
    T = data.draw(st.integers(2, 10))
    pos = data.draw(st.integers(0, T - 1))
    X = data.draw(ats.retrieval_inputs(T=T, margin=0.3, position=st.just(pos), lo=2.0, hi=4.0))
    assert X[pos, 0] - np.delete(X[:, 0], pos).max() >= 0.3
    X = data.draw(ats.retrieval_inputs(T=T, lo=2.0, hi=2.5))  # default margin: 0..(hi-lo)/2
    assert np.all((2.0 <= X) & (X <= 2.5))


def test_the_old_positional_calls_still_work():
    X = minimal(ats.retrieval_inputs(st.integers(2, 4), ats.margins(0.05, 0.5), 1, 0.0, 1.0, False))
    assert X.shape[0] == 2 and gap(X) == pytest.approx(0.05, abs=1e-15) and gap(X) >= 0.05
    assert minimal(ats.betas(st.just(2.0), st.just(8.0))) == 2.0


# --- impossible arguments ------------------------------------------------------------------------

EAGER = {
    "margin = hi - lo": (lambda: ats.retrieval_inputs(margin=1.0), "margin must be less than"),
    "margin > hi - lo": (lambda: ats.retrieval_inputs(margin=0.6, lo=0, hi=0.5), "margin"),
    "negative margin": (lambda: ats.retrieval_inputs(margin=-0.1), "margin must be >= 0"),
    "nan margin": (lambda: ats.retrieval_inputs(margin=float("nan")), "finite"),
    "lo > hi": (lambda: ats.retrieval_inputs(lo=1.0, hi=0.0), "lo must be less than hi"),
    "lo = hi": (lambda: ats.retrieval_inputs(lo=0.5, hi=0.5), "lo must be less than hi"),
    "infinite hi": (lambda: ats.retrieval_inputs(hi=float("inf")), "hi must be a finite"),
    "hi - lo overflows": (lambda: ats.retrieval_inputs(lo=-1e308, hi=1e308), "hi - lo"),
    "T = 0": (lambda: ats.retrieval_inputs(T=0), "T must be an integer >= 1"),
    "T = -3": (lambda: ats.retrieval_inputs(T=-3), "T must be"),
    "T = 2.5": (lambda: ats.retrieval_inputs(T=2.5), "T must be an integer"),
    "T = True": (lambda: ats.retrieval_inputs(T=True), "T must be an integer"),
    "d = 0": (lambda: ats.retrieval_inputs(d=0), "d must be an integer >= 1"),
    "negative d": (lambda: ats.retrieval_inputs(d=-2), "d must be"),
    "position >= T": (lambda: ats.retrieval_inputs(T=4, position=4), "position must be .* 0..3"),
    "negative position": (lambda: ats.retrieval_inputs(position=-1), "position must be"),
    "minimum not bool": (lambda: ats.retrieval_inputs(minimum="yes"), "minimum must be True"),
    "betas min > max": (lambda: ats.betas(10, 1), "min_value must be <= max_value"),
    "betas min = 0": (lambda: ats.betas(0, 1), "min_value must be positive"),
    "betas negative": (lambda: ats.betas(-1.0, 10), "min_value must be positive"),
    "betas inf": (lambda: ats.betas(1, float("inf")), "max_value must be a finite"),
    "betas nan": (lambda: ats.betas(float("nan"), 2), "min_value must be a finite"),
    "margins min > max": (lambda: ats.margins(0.4, 0.1), "min_value must be <= max_value"),
    "margins negative": (lambda: ats.margins(-0.1, 0.1), "min_value must be >= 0"),
    "margins inf": (lambda: ats.margins(0, float("inf")), "max_value must be a finite"),
    "task T = 0": (lambda: ats.max_tasks(T=0), "T must be"),
    "task kind": (lambda: ats.max_tasks(kind="sorted"), "kind must be one of"),
    "task d = 0": (lambda: ats.max_tasks(d=0), "d must be"),
    "task D = 0": (lambda: ats.max_tasks(D=0), "D must be"),
    "task seed < 0": (lambda: ats.max_tasks(seed=-1), "seed must be an integer in 0.."),
    "task seed too big": (lambda: ats.max_tasks(seed=2**32), "seed must be"),
    "heads = 0": (lambda: ats.layer_specs(heads=0), "heads must be an integer >= 1"),
    "head_dim = 0": (lambda: ats.layer_specs(head_dim=0), "head_dim must be"),
    "kv_groups not dividing": (
        lambda: ats.layer_specs(heads=4, kv_groups=3),
        "kv_groups must divide heads",
    ),
    "ffn width 0": (lambda: ats.layer_specs(ffn_hidden=[4, 0]), "ffn_hidden width"),
    "ffn not a list": (lambda: ats.layer_specs(ffn_hidden=5), "ffn_hidden must be a sequence"),
    "d_in = 0": (lambda: ats.architectures(d_in=0), "d_in must be"),
    "width = 0": (lambda: ats.architectures(width=0), "width must be"),
    "layers = 0": (lambda: ats.architectures(layers=0), "layers must be"),
    "odd rope": (lambda: ats.architectures(rope=3), "even number"),
    "rope name": (lambda: ats.architectures(rope="half"), "rope must be"),
    "readout": (lambda: ats.architectures(readout="mean"), "readout must be one of"),
    "dtype": (lambda: ats.architectures(dtype="float16"), "dtype must be one of"),
    "causal not bool": (lambda: ats.architectures(causal=1), "causal must be True"),
    "layer not a spec": (lambda: ats.architectures(layer=4), "layer must be"),
    "unknown construction": (
        lambda: ats.construction_knobs("hc_k11"),
        r"unknown construction 'hc_k11'; did you mean hc_k1",
    ),
    "unknown knob": (
        lambda: ats.construction_knobs("hc_k1", betta=3.0),
        "hc_k1 has no knob betta; its knobs are: T, beta",
    ),
    "knob out of range": (lambda: ats.construction_knobs("hc_k1", T=2), "knob T must be"),
    "knob of wrong type": (lambda: ats.construction_knobs("hc_k2", T="many"), "knob T must be"),
    "knob not a choice": (lambda: ats.construction_knobs("hc_k1", sets="odd"), "sets must be one"),
}


@pytest.mark.parametrize("case", list(EAGER), ids=list(EAGER))
def test_impossible_values_raise_at_once(case):
    call, match = EAGER[case]
    with pytest.raises(InvalidArgument, match=match):
        call()


DRAWN = {
    "margin": (lambda: ats.retrieval_inputs(margin=st.just(1.0)), "margin must be less than"),
    "margin vs drawn hi": (lambda: ats.retrieval_inputs(margin=0.4, hi=st.just(0.3)), "margin"),
    "lo > hi": (lambda: ats.retrieval_inputs(lo=st.just(2.0)), "lo must be less than hi"),
    "T": (lambda: ats.retrieval_inputs(T=st.just(0)), "T must be"),
    "d": (lambda: ats.retrieval_inputs(d=st.just(-1)), "d must be"),
    "position": (lambda: ats.retrieval_inputs(T=8, position=st.just(8)), "position must be"),
    "position vs drawn T": (lambda: ats.retrieval_inputs(T=st.just(3), position=5), "position"),
    "betas": (lambda: ats.betas(st.just(10.0), 1.0), "min_value must be <= max_value"),
    "betas 0": (lambda: ats.betas(st.just(0.0), 1.0), "min_value must be positive"),
    "margins": (lambda: ats.margins(0.5, st.just(0.1)), "min_value must be <= max_value"),
    "task kind": (lambda: ats.max_tasks(kind=st.just("sorted")), "kind must be one of"),
    "task seed": (lambda: ats.max_tasks(seed=st.just(-5)), "seed must be"),
    "kv_groups": (
        lambda: ats.layer_specs(heads=st.just(4), kv_groups=st.just(3)),
        "kv_groups must divide",
    ),
    "ffn": (lambda: ats.layer_specs(ffn_hidden=st.just([0])), "ffn_hidden width"),
    "rope": (lambda: ats.architectures(rope=st.just(5)), "even number"),
    "layer": (lambda: ats.architectures(layer=st.just("big")), "layer must be"),
    "dtype": (lambda: ats.architectures(dtype=st.just("half")), "dtype must be"),
    "construction": (lambda: ats.construction_knobs(st.just("nope")), "unknown construction"),
    "unknown knob": (lambda: ats.construction_knobs(st.just("hc_k1"), betta=1.0), "no knob betta"),
    "knob value": (lambda: ats.construction_knobs("hc_k1", T=st.just(2)), "knob T must be"),
    "knob value, drawn name": (lambda: ats.construction_knobs(st.just("hc_k1"), T=2), "knob T"),
}


@pytest.mark.parametrize("case", list(DRAWN), ids=list(DRAWN))
def test_impossible_drawn_values_raise_when_drawn(case):
    call, match = DRAWN[case]
    strategy = call()  # a strategy argument is checked only once drawn
    with pytest.raises(InvalidArgument, match=match):
        minimal(strategy)


# --- construction knobs --------------------------------------------------------------------------


@pytest.mark.parametrize("name", names())
def test_drawn_knobs_pass_the_constructions_own_validation(name):
    table = REGISTRY[name].knobs

    @settings(max_examples=30, deadline=None, database=None)
    @given(ats.construction_knobs(name))
    def check(knobs):
        assert set(knobs) == set(table)
        for k, v in knobs.items():
            assert type(v) is table[k].type or (table[k].type is float and type(v) is int)
            _base._coerce(k, table[k], v)  # raises ConfigError outside the knob's range

    check()


@pytest.mark.parametrize("name", [n for n in names() if REGISTRY[n].requires])
def test_drawn_knobs_keep_the_requirements_between_knobs(name):
    """Constraints between knobs (k < T/2, h = D, beta*T >= 1, r <= 2F) hold in every draw, so
    ``build`` accepts drawn knobs; the draws still vary the constrained knobs."""
    table, requires = REGISTRY[name].knobs, REGISTRY[name].requires
    seen: dict[str, set] = {k: set() for r in requires for k in r.knob_names}

    @settings(max_examples=60, deadline=None, database=None)
    @given(ats.construction_knobs(name))
    def check(knobs):
        for r in requires:
            assert r.check(knobs) is None, (name, knobs)
            for k in r.knob_names:
                seen[k].add(knobs[k])

    check()
    if any(len(r.knob_names) > 1 for r in requires):  # hc_k1's h = 2 admits one value
        assert any(len(v) > 1 for v in seen.values()), seen
    assert all(r.check({k: table[k].default for k in table}) is None for r in requires)


def test_overrides_that_break_a_requirement_are_refused_or_rejected():
    """Fixed overrides that break a requirement raise at once; drawn ones are never returned."""
    with pytest.raises(InvalidArgument, match="k must be < T // 2"):
        ats.construction_knobs("lag_head", T=8, k=5)

    @settings(max_examples=20, deadline=None, database=None)
    @given(ats.construction_knobs("lag_head", T=st.integers(4, 9), k=st.integers(0, 4)))
    def check(knobs):
        assert knobs["k"] < knobs["T"] // 2, knobs

    check()


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("lag_head", {"T": 4}),  # k < T // 2 = 2: the default k = 2 breaks it, 0 and 1 keep it
        ("lag_head", {"T": 5}),
        ("svd_truncation", {"F": 1}),  # r <= 2: the default r = 8 breaks it
        ("svd_truncation", {"F": 1, "T": 4}),
        ("hc_k1_synthetic", {"h": 3}),  # h = D: the default D = 4 breaks it, D = 3 keeps it
    ],
)
def test_overrides_the_defaults_do_not_fit_are_repaired_not_filtered(name, overrides):
    """A fixed override that some values of the free knobs fit (but not their defaults) draws
    valid knobs without Hypothesis' filter health check failing (it failed before: the repair
    only reset free knobs to their defaults, then rejected nearly every draw)."""
    requires = REGISTRY[name].requires

    @settings(max_examples=40, deadline=None, database=None)
    @given(ats.construction_knobs(name, **overrides))
    def check(knobs):
        assert all(knobs[k] == v for k, v in overrides.items())
        assert all(r.check(knobs) is None for r in requires), knobs
        if name == "lag_head":  # cheap to build: build accepts the drawn knobs
            build(name, **knobs)

    check()


@settings(max_examples=15, deadline=None, database=None)
@given(ats.construction_knobs("softmax_retrieval", T=st.integers(1, 6)))
def test_drawn_knobs_build(knobs):
    c = build("softmax_retrieval", **knobs)
    assert c.knobs == knobs


def test_knob_ranges_come_from_the_knob(monkeypatch):
    knobs = {
        "T": Knob(type=int, default=6, help="", low=5, high=7),
        "beta": Knob(type=float, default=3.0, help="", low=2, high=8, log=True),
        "B": Knob(type=float, default=1.0, help="", low=0, high=1, exclude_low=True),
        "N": Knob(type=int, default=4, help="", low=2),
        "gate": Knob(type=float, default=-1.0, help=""),
        "eps": Knob(type=float, default=0.1, help="", low=0, exclude_low=True, high=1, log=True),
        "f": Knob(type=str, default="sin", help="", choices=("identity", "sin")),
        "flag": Knob(type=bool, default=False, help=""),
    }
    monkeypatch.setitem(
        REGISTRY,
        "_strategy_test",
        _base.Registered(name="_strategy_test", build=None, knobs=knobs, claim="X", summary="test"),
    )

    @settings(max_examples=100, deadline=None, database=None)
    @given(ats.construction_knobs("_strategy_test"))
    def check(k):
        assert 5 <= k["T"] <= 7 and isinstance(k["T"], int)
        assert 2 <= k["beta"] <= 8
        assert 0 < k["B"] <= 1
        assert 2 <= k["N"] <= 32  # open end: low + 30
        assert -11 <= k["gate"] <= 9  # no range: the default ± 10
        assert 1e-3 <= k["eps"] <= 1  # open low end of 0: default·10⁻²
        assert k["f"] in ("identity", "sin") and isinstance(k["flag"], bool)

    check()
    # every knob shrinks to its default (nearest admissible value), choices to the default
    assert minimal(ats.construction_knobs("_strategy_test")) == {
        "T": 6,
        "beta": 3.0,
        "B": 1.0,
        "N": 4,
        "gate": -1.0,
        "eps": 0.1,
        "f": "sin",
        "flag": False,
    }
    assert (
        minimal(ats.construction_knobs("_strategy_test"), lambda k: k["f"] != "sin")["f"]
        == "identity"
    )
    assert {
        minimal(ats.construction_knobs("_strategy_test"), lambda k, t=t: k["T"] == t)["T"]
        for t in (5, 6, 7)
    } == {5, 6, 7}
    small = minimal(ats.construction_knobs("_strategy_test"), lambda k: k["beta"] < 2.5)
    assert 2 <= small["beta"] < 2.5 and small["T"] == 6  # the others stay at their defaults


def test_drawn_knobs_shrink_to_the_registered_defaults():
    for name in ("hc_k1", "softmax_retrieval", "lag_head"):
        table = REGISTRY[name].knobs
        assert minimal(ats.construction_knobs(name)) == {k: v.default for k, v in table.items()}


@settings(max_examples=30, deadline=None)
@given(ats.max_tasks(T=st.integers(1, 6)), st.data())
def test_drawn_tasks_are_well_formed(task, data):
    if isinstance(task, SyntheticMaxSum):
        np.testing.assert_allclose(np.linalg.norm(task.a, axis=1), 1.0, rtol=1e-12)
    if isinstance(task, PairwiseMax):
        np.testing.assert_allclose([np.linalg.norm(m, 2) for m in task.A], 0.5, rtol=1e-12)
    seeded = data.draw(
        ats.max_tasks(kind=st.sampled_from(["synthetic", "pairwise"]), seed=st.integers(0, 3))
    )
    assert isinstance(seeded, (SyntheticMaxSum, PairwiseMax))


@settings(max_examples=30, deadline=None)
@given(
    ats.architectures(
        rope=st.sampled_from([None, "full", 0, 2, 4]),
        dtype=st.just("float32"),
        layer=ats.layer_specs(heads=st.integers(1, 4), head_dim=st.integers(1, 5)),
    )
)
def test_drawn_architectures_are_valid_configs(cfg):
    assert cfg.dtype == "float32" and 1 <= len(cfg.layers) <= 3
    for spec in cfg.layers:
        assert spec.heads % spec.kv_groups == 0
        if cfg.rope == "full":
            assert spec.head_dim % 2 == 0
        elif cfg.rope is not None:
            assert spec.head_dim >= cfg.rope
