"""A profile given as a list of sub-grids: its cells are the union of their products (each cell
once), overrides replace a parameter in every sub-grid, ``--set`` types from every sub-grid's
values, mismatched sub-grids are refused at registration; the IF-P3/IF-E2 evidence names the
steps per D when they differ."""

import pytest

from approxtheory import experiment
from approxtheory.errors import ApproxTheoryError, ConfigError

NAME = "subgrid_test_double"


def _cell(cfg):
    return {"y": 2 * cfg["x"] + cfg["steps"]}


@pytest.fixture
def exp(monkeypatch):
    experiment.load_plugins()
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    return experiment.register_experiment(
        experiment.Experiment(
            name=NAME,
            description="x twice plus steps",
            grids={
                "quick": {"x": [1], "steps": [5]},
                # x = 2 appears in both sub-grids with steps 10: that cell once
                "full": [{"x": [1, 2], "steps": [10]}, {"x": [2, 3], "steps": [10, 20]}],
            },
            cell=_cell,
            seeds={"quick": [0], "full": [0, 1]},
        )
    )


def test_cells_are_the_union_of_the_sub_grids(exp):
    got = sorted((c["x"], c["steps"], c["seed"]) for c in experiment.cells(exp, "full"))
    want = sorted(
        {(x, s, seed) for x in (1, 2) for s in (10,) for seed in (0, 1)}
        | {(x, s, seed) for x in (2, 3) for s in (10, 20) for seed in (0, 1)}
    )
    assert got == want and len(got) == 2 * 5  # (1,10) (2,10) (2,20) (3,10) (3,20)
    assert len(experiment.cells(exp, "quick")) == 1  # a plain dict grid as before


def test_overrides_replace_the_parameter_in_every_sub_grid(exp):
    cs = experiment.cells(exp, "full", overrides={"steps": 7})
    got = sorted((c["x"], c["steps"]) for c in cs)
    assert sorted(set(got)) == [(1, 7), (2, 7), (3, 7)] and len(got) == 6  # 3 x 2 seeds
    with pytest.raises(ApproxTheoryError, match="no parameter 'lr'"):
        experiment.cells(exp, "full", overrides={"lr": 1.0})
    with pytest.raises(ApproxTheoryError, match="no profile 'huge'"):
        experiment.cells(exp, "huge")


def test_grid_values_and_set_typing(exp):
    assert experiment.grid_values(exp, "full") == {"x": [1, 2, 3], "steps": [10, 20]}
    from approxtheory.commands.experiment import _parse_overrides

    assert _parse_overrides(exp, "full", ["steps=40"]) == {"steps": 40}
    with pytest.raises(ApproxTheoryError):
        _parse_overrides(exp, "full", ["steps=abc"])


def test_run_writes_every_sub_grid_cell(exp, tmp_path):
    res = experiment.run_experiment(NAME, "full", out=tmp_path, progress=False)
    assert res["complete"] and res["cells"] == 10 and res["computed"] == 10
    again = experiment.run_experiment(NAME, "full", out=tmp_path, progress=False)
    assert again["cached"] == 10 and again["computed"] == 0
    assert isinstance(res["grid"], list) and len(res["grid"]) == 2


@pytest.mark.parametrize(
    "grids, match",
    [
        ({"full": [{"x": [1], "steps": [1]}, {"x": [1]}]}, "different parameters"),
        ({"full": [{"x": [1], "steps": [1]}, {"steps": [1], "x": [1]}]}, "different parameters"),
        ({"full": []}, "empty grid list"),
        ({"full": [{"x": [], "steps": [1]}]}, "non-empty list"),
        ({"full": {"x": 3}}, "non-empty list"),
        ({"full": [3]}, "grid or a list of them"),
        ({"full": 3}, "grid or a list of them"),
    ],
)
def test_bad_sub_grids_are_refused_at_registration(monkeypatch, grids, match):
    experiment.load_plugins()
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    with pytest.raises(ConfigError, match=match):
        experiment.register_experiment(experiment.Experiment(NAME, "bad", grids, _cell))


def test_pmax_full_profile_trains_d3_longer():
    import approxtheory.experiments  # noqa: F401

    cs = experiment.cells(experiment.get("infoflow_pmax_heads"), "full")
    steps = {(c["D"], c["steps"], c["E"]) for c in cs}
    assert steps == {(2, 16000, 32), (3, 32000, 32)} and len(cs) == 18


def test_training_text_names_steps_per_d():
    from approxtheory.proofs_check.infoflow import _training_text

    assert _training_text([{"D": 2, "steps": 100}, {"D": 3, "steps": 100}]) == "100 steps"
    rows = [{"D": 2, "steps": 16000}, {"D": 3, "steps": 32000}, {"D": 3, "steps": 32000}]
    assert _training_text(rows) == "steps 16000 (D = 2), 32000 (D = 3)"
    rows = [{"D": 2, "steps": 16000, "E": 32}, {"D": 3, "steps": 32000, "E": 48}]
    assert _training_text(rows) == "steps 16000 (D = 2), 32000 (D = 3), E 32 (D = 2), 48 (D = 3)"
    assert _training_text([{"D": 2, "steps": 10, "E": 32}]) == "10 steps, E = 32"
