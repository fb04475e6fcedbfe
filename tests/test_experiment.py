"""The experiment runner: cached cells, resume after interruption, tidy CSV + run JSON, plots
redrawn from the CSV."""

import json
from pathlib import Path

import pytest

from approxtheory.cli import main
from approxtheory.experiment import cells, get, plot_experiment, run_experiment


def test_run_resume_and_files(tmp_path):
    n = len(cells(get("softmax_beta_sweep"), "quick"))
    part = run_experiment("softmax_beta_sweep", out=tmp_path, progress=False, max_cells=4)
    assert part["computed"] == 4 and not part["complete"] and part["plots"] == []
    full = run_experiment("softmax_beta_sweep", out=tmp_path, progress=False)
    assert full["computed"] == n - 4 and full["cached"] == 4 and full["complete"]
    again = run_experiment("softmax_beta_sweep", out=tmp_path, progress=False)
    assert again["computed"] == 0 and again["cached"] == n
    run = json.loads((tmp_path / "softmax_beta_sweep" / "quick.json").read_text())
    for key in ("schema_version", "grid", "seeds", "libraries", "git", "wall_s"):
        assert key in run
    lines = (tmp_path / "softmax_beta_sweep" / "quick.csv").read_text().splitlines()
    assert len(lines) == n + 1 and "sup_error" in lines[0]


def test_results_are_deterministic(tmp_path):
    a = run_experiment("softmax_beta_sweep", out=tmp_path / "a", progress=False)
    b = run_experiment("softmax_beta_sweep", out=tmp_path / "b", progress=False)
    # timings are kept out of the CSV (cell files and the run JSON hold them): identical bytes
    assert Path(a["csv"]).read_bytes() == Path(b["csv"]).read_bytes()
    assert "seconds" not in Path(a["csv"]).read_text().splitlines()[0]


def test_plots_come_from_the_csv(tmp_path):
    run_experiment("softmax_beta_sweep", out=tmp_path, progress=False)
    paths = plot_experiment("softmax_beta_sweep", out=tmp_path)
    assert paths and all(p.stat().st_size > 1000 for p in paths)


def test_cli_and_errors(tmp_path, capsys):
    assert main(["experiment", "list"]) == 0
    assert "headcount_phase" in capsys.readouterr().out
    assert main(["experiment", "run", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert main(["experiment", "plot", "softmax_beta_sweep", "--out", str(tmp_path)]) == 2
    assert main(["experiment", "run"]) == 2


@pytest.mark.slow
def test_headcount_phase_quick_trains(tmp_path):
    r = run_experiment("headcount_phase", out=tmp_path, progress=False)
    assert r["complete"] and r["plots"]
