"""Shipped trained cells (approxtheory.shipped): written and read back, stale when the cell code
changes, and a damaged or hostile file is a missing cell with a warning, never a crash or a
verdict."""

import importlib
import json
import linecache
import os
import sys
import textwrap
from pathlib import Path

import pytest

import approxtheory.experiments  # noqa: F401  (the built-ins registered before a test copies the registry)
from approxtheory import experiment, shipped
from approxtheory.experiment import Experiment, run_experiment
from approxtheory.experiment_plan import plan_run

CELL_V1 = """
SCALE = 2.0
_CACHE: dict = {}  # filled by the first cell: must not change the fingerprint

def _helper(x):
    return SCALE * x

def cell(cfg):
    _CACHE[cfg["a"]] = cfg["a"]
    return {"val_nmse": _helper(float(cfg["a"])) / 100, "loss_q3": 1.0, "loss_q4": 0.9}
"""


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private store folder and a tiny experiment whose cell lives in its own module file."""
    folder = tmp_path / "store"
    monkeypatch.setattr(shipped, "store_dir", lambda: folder)
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    shipped._fingerprint.cache_clear()
    shipped._assignments.cache_clear()
    mod_dir = tmp_path / "mods"
    mod_dir.mkdir()
    (mod_dir / "shipcell_mod.py").write_text(CELL_V1)
    monkeypatch.syspath_prepend(str(mod_dir))
    sys.modules.pop("shipcell_mod", None)
    mod = importlib.import_module("shipcell_mod")

    def make():
        return experiment.register_experiment(
            Experiment(
                name="shipped_toy",
                description="toy",
                grids={"quick": {"a": [1, 2]}, "decisive": {"a": [1, 2, 3]}},
                seeds={"quick": [0], "decisive": [0, 1]},
                cell=sys.modules["shipcell_mod"].cell,
            )
        )

    yield folder, mod_dir, make, mod
    sys.modules.pop("shipcell_mod", None)
    shipped._fingerprint.cache_clear()
    shipped._assignments.cache_clear()


def _edit(mod_dir, text):
    (mod_dir / "shipcell_mod.py").write_text(text)
    linecache.checkcache()
    importlib.reload(sys.modules["shipcell_mod"])
    shipped._fingerprint.cache_clear()
    shipped._assignments.cache_clear()


def test_ship_then_read_back_identical_csv(store, tmp_path):
    folder, _, make, _ = store
    make()
    a = run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    files = sorted((folder / "shipped_toy").glob("*.json"))
    assert a["computed"] == 6 and len(files) == 6
    rec = json.loads(files[0].read_text())
    assert rec["schema"] == shipped.SCHEMA and "val_nmse" in rec["record"]
    assert "device" not in rec["config"] and rec["fingerprint"] == shipped.code_fingerprint(make())
    # a fresh results folder (another machine): every cell read from the store, none computed
    b = run_experiment("shipped_toy", "decisive", out=tmp_path / "b", progress=False, max_cells=0)
    assert b["complete"] and b["computed"] == 0 and b["shipped"] == 6
    assert Path(a["csv"]).read_bytes() == Path(b["csv"]).read_bytes()
    # --retrain (use_shipped=False) ignores them
    c = run_experiment(
        "shipped_toy",
        "decisive",
        out=tmp_path / "c",
        progress=False,
        max_cells=0,
        use_shipped=False,
    )
    assert not c["complete"] and c["shipped"] == 0


@pytest.mark.parametrize(
    "edit",
    [
        CELL_V1.replace('"loss_q4": 0.9', '"loss_q4": 0.8'),  # the cell function
        CELL_V1.replace("SCALE * x", "SCALE * x + 0"),  # a helper it calls
        CELL_V1.replace("SCALE = 2.0", "SCALE = 3.0"),  # a constant it reads
    ],
    ids=["cell", "helper", "constant"],
)
def test_editing_cell_code_makes_cells_stale(store, tmp_path, edit):
    folder, mod_dir, make, _ = store
    make()
    run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    _edit(mod_dir, edit)
    exp = make()
    assert {shipped.read_cell(exp, c).status for c in experiment.cells(exp, "decisive")} == {
        "stale"
    }
    r = run_experiment("shipped_toy", "decisive", out=tmp_path / "b", progress=False, max_cells=0)
    assert not r["complete"] and r["stale"] == 6 and r["shipped"] == 0


def test_unrelated_edit_keeps_cells_fresh(store, tmp_path):
    folder, mod_dir, make, _ = store
    make()
    run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    _edit(mod_dir, CELL_V1 + "\n\ndef plot(rows, out):\n    return []\n")
    r = run_experiment("shipped_toy", "decisive", out=tmp_path / "b", progress=False, max_cells=0)
    assert r["complete"] and r["shipped"] == 6


def test_the_check_side_says_stale(store, tmp_path, monkeypatch):
    from approxtheory.proofs_check import _core

    folder, mod_dir, make, _ = store
    make()
    run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    got, why = _core._decisive_rows("shipped_toy", tmp_path / "d1")
    assert got is not None and "read 6 shipped cell(s)" in got[2] and not why
    _edit(mod_dir, CELL_V1.replace("/ 100", "/ 10"))
    make()
    got, why = _core._decisive_rows("shipped_toy", tmp_path / "d2")
    assert got is None and "6 stale" in why


def _one_cell(store, tmp_path):
    folder, _, make, _ = store
    exp = make()
    run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    cfg = experiment.cells(exp, "decisive")[0]
    return exp, cfg, folder / "shipped_toy" / f"{shipped.cell_id('shipped_toy', cfg)}.json"


def _damage(kind, path, tmp_path):
    data = json.loads(path.read_text())
    path.unlink()
    if kind == "truncated":
        path.write_text(json.dumps(data)[:50])
    elif kind == "huge":
        path.write_text(json.dumps({**data, "pad": "x" * (shipped.MAX_BYTES + 10)}))
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-out":
        outside = tmp_path / "outside.json"
        outside.write_text(json.dumps(data))
        path.symlink_to(outside)
    elif kind == "schema":
        path.write_text(json.dumps({**data, "schema": "something-else-9"}))
    elif kind == "nan":
        path.write_text(
            json.dumps({**data, "record": {**data["record"], "val_nmse": {"$float": "inf"}}})
        )
    elif kind == "string-metric":
        path.write_text(json.dumps({**data, "record": {**data["record"], "val_nmse": [1, 2]}}))
    elif kind == "other-cell":
        path.write_text(json.dumps({**data, "config": {**data["config"], "a": 99}}))
    elif kind == "not-object":
        path.write_text("[1, 2, 3]")


@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "huge",
        "deep",
        "fifo",
        "symlink-out",
        "schema",
        "nan",
        "string-metric",
        "other-cell",
        "not-object",
    ],
)
def test_damaged_file_is_a_missing_cell_with_a_warning(store, tmp_path, capsys, kind):
    exp, cfg, path = _one_cell(store, tmp_path)
    _damage(kind, path, tmp_path)
    shipped._WARNED.clear()
    capsys.readouterr()
    got = shipped.read_cell(exp, cfg)
    assert got.status == "missing" and got.record is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning: shipped cell" in err and "ignored" in err
    # the runner goes on: that one cell is missing, the others are read
    r = run_experiment("shipped_toy", "decisive", out=tmp_path / "b", progress=False, max_cells=0)
    assert r["shipped"] == 5 and not r["complete"]


def test_fingerprint_follows_the_library_modules(store):
    _, _, make, _ = store
    exp = make()
    a = shipped.code_fingerprint(exp)
    shipped._fingerprint.cache_clear()
    shipped._assignments.cache_clear()
    exp.code = ("approxtheory.headcount_analysis",)
    assert shipped.code_fingerprint(exp) != a
    assert textwrap.dedent("x") == "x"


def test_dry_run_plans_without_training(store, tmp_path):
    folder, _, make, _ = store
    make()
    run_experiment(
        "shipped_toy", "decisive", out=tmp_path / "a", progress=False, max_cells=2, ship=True
    )
    plan = plan_run("shipped_toy", "decisive", out=tmp_path / "b")
    assert (plan["cells"], plan["shipped"], plan["compute"], plan["cached"]) == (6, 2, 4, 0)
    assert plan["groups"] and plan["estimated_cpu_seconds"] >= 0
    assert "one cell run" in plan["groups"][0]["how"]
    plan = plan_run("shipped_toy", "decisive", out=tmp_path / "a")
    assert (plan["cached"], plan["compute"]) == (2, 4)
    assert not (tmp_path / "b").exists()  # nothing written


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--ship"], "takes no --ship"),
        (["--workers", "2"], "takes no --workers"),
        (["--device", "cuda"], "takes no --device"),
    ],
)
def test_dry_run_refuses_what_it_cannot_do(capsys, extra, says):
    from approxtheory.cli import main

    rc = main(
        ["experiment", "run", "headcount_phase_d4", "--profile", "decisive", "--dry-run", *extra]
    )
    err = capsys.readouterr().err
    assert rc == 2 and says in err and err.count("\n") == 1


def test_dry_run_estimates_a_stepped_experiment(capsys, tmp_path):
    from approxtheory.cli import main

    rc = main(
        [
            "experiment",
            "run",
            "headcount_phase_d4",
            "--profile",
            "decisive",
            "--dry-run",
            "--quiet",
            "--retrain",
            "--set",
            "heads=4",
            "--set",
            "T=8",
            "--seeds",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "1 cells" in out and "ms/step" in out and "1 to compute" in out


def test_a_module_cache_filled_by_a_cell_keeps_the_fingerprint(store):
    _, _, make, mod = store
    exp = make()
    before = shipped.code_fingerprint(exp)
    exp.cell({"a": 5, "seed": 0})
    assert mod._CACHE
    shipped._fingerprint.cache_clear()
    shipped._assignments.cache_clear()
    assert shipped.code_fingerprint(exp) == before


def test_shipping_again_keeps_fresh_cells_untouched(store, tmp_path):
    """A second --ship run (another results folder, so every cell is read from the store or the
    local cache) rewrites no fresh shipped cell: each keeps the revision it was computed at."""
    folder, _, make, _ = store
    make()
    run_experiment("shipped_toy", "decisive", out=tmp_path / "a", progress=False, ship=True)
    files = sorted((folder / "shipped_toy").glob("*.json"))
    for f in files:  # as if computed at another revision
        rec = json.loads(f.read_text())
        rec["revision"] = "0000000"
        f.write_text(json.dumps(rec, indent=2))
    before = {f: f.read_bytes() for f in files}
    for out in ("a", "b"):  # the local cache of "a", then the store alone
        run_experiment("shipped_toy", "decisive", out=tmp_path / out, progress=False, ship=True)
    assert {f: f.read_bytes() for f in files} == before


NAN, INF = {"$float": "nan"}, {"$float": "inf"}  # how the store writes them


@pytest.mark.parametrize(
    "trace, fresh",
    [
        ([{"layer": 1, "rank": 2, "dloss": 0.5}, {"layer": 2, "rank": 2, "dloss": NAN}], True),
        ([], True),
        ([{"layer": 1, "dloss": INF}], False),  # an infinite value
        ([{"layer": 1, "dloss": [0.5]}], False),  # not flat
        ({"layer": 1}, False),  # not a list
        ([[1, 2]], False),  # a row that is not an object
    ],
)
def test_a_per_step_trace_is_read_back_or_refused(store, tmp_path, capsys, trace, fresh):
    exp, cfg, path = _one_cell(store, tmp_path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "record": {**data["record"], "trace": trace}}))
    shipped._WARNED.clear()
    capsys.readouterr()
    got = shipped.read_cell(exp, cfg)
    assert (got.status == "fresh") is fresh
    if fresh:
        assert got.record is not None and len(got.record["trace"]) == len(trace)
    else:
        assert "warning: shipped cell" in capsys.readouterr().err


def test_the_decisive_grid_hands_its_trace_to_the_check(tmp_path):
    """A decisive grid's shipped cells carry their per-step trace to the check (TO-R2 reads the
    truncation profile of tradeoffs_layers from it)."""
    from approxtheory.proofs_check import _core

    got, why = _core._decisive_rows("tradeoffs_layers", tmp_path)
    assert got is not None, why
    rows, trace, how = got
    assert len(rows) == 24 and "shipped cell(s) of the decisive grid" in how
    uniform = [t for t in trace if t["schedule"] == "uniform"]
    assert {int(t["seed"]) for t in uniform} == set(range(8))
    assert {int(t["layer"]) for t in uniform} == {1, 2, 3, 4}
