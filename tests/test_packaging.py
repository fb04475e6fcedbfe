"""Packaging: the version is read from the package metadata, py.typed
ships, tqdm is optional, experiments come from the entry-point group as well as from imports."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import approxtheory
from approxtheory import experiment, provenance
from approxtheory.errors import ConfigError
from approxtheory.progress import NoBar, progress_bar

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once_in_pyproject_and_read_from_the_metadata():
    version = _pyproject()["project"]["version"]
    assert importlib.metadata.version("approxtheory") == version, (
        "the installed metadata is stale: reinstall (pip install -e .)"
    )
    assert approxtheory.__version__ == version == provenance.package_version()
    assert provenance.libraries()["approxtheory"] == version
    literal = re.compile(rf"""["']{re.escape(version)}["']""")
    written = [
        str(p.relative_to(ROOT))
        for d in ("approxtheory", "experiments", "proofs_check")
        for p in sorted((ROOT / d).rglob("*.py"))
        if literal.search(p.read_text("utf-8"))
    ]
    assert written == [], f"the version is written again in {written}"


def test_without_metadata_the_version_says_unknown(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    provenance.package_version.cache_clear()
    try:
        assert provenance.package_version() == provenance.UNKNOWN_VERSION == "0+unknown"
    finally:
        monkeypatch.undo()
        provenance.package_version.cache_clear()
    assert provenance.package_version() == approxtheory.__version__


def test_tqdm_is_an_optional_extra():
    project = _pyproject()["project"]
    core = [re.split(r"[<>=!~ ;\[]", d)[0] for d in project["dependencies"]]
    assert "tqdm" not in core
    assert {"sympy", "numpy", "scipy", "torch", "hypothesis", "matplotlib", "pytest"} <= set(core)
    assert any(d.startswith("tqdm") for d in project["optional-dependencies"]["progress"])


def test_progress_bars_fall_back_to_none_without_tqdm(monkeypatch, tmp_path, capsys):
    import tqdm

    assert isinstance(progress_bar([1], disable=True), tqdm.tqdm)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` fails
    bar = progress_bar([1, 2], desc="x", unit="cell", disable=False, file=sys.stderr)
    assert isinstance(bar, NoBar)
    bar.set_postfix_str("HC-P6")
    bar.set_description("y")
    bar.update()
    bar.close()
    assert list(bar) == [1, 2]
    from approxtheory.verify import run_verify

    assert run_verify(only=["HC-P6"], out=tmp_path, progress=True) == 0
    err = capsys.readouterr().err
    assert "verify (quick): 1 claims" in err and "it/s" not in err and "claim/s" not in err


def test_the_built_in_experiments_are_an_entry_point():
    eps = importlib.metadata.entry_points(group=experiment.ENTRY_POINT_GROUP)
    assert {(ep.name, ep.value) for ep in eps} >= {("builtin", "approxtheory.experiments")}


def _plugin(root: Path, dist: str, module: str, source: str) -> None:
    """A distribution on ``root`` whose entry point in the group names ``module``."""
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{experiment.ENTRY_POINT_GROUP}]\n{dist} = {module}\n")
    (root / f"{module}.py").write_text(source)


PLUGIN = """
from approxtheory.experiment import Experiment, register_experiment
def cell(cfg):
    return {"y": cfg["x"] * 2}
register_experiment(Experiment("third_party_double", "x times two", {"quick": {"x": [1, 2]}},
                               cell))
"""


def test_a_third_party_distribution_adds_experiments(monkeypatch, tmp_path):
    _plugin(tmp_path, "atplugin", "atplugin_exps", PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    # load the built-ins into the real registry first: they register on first import only, so a
    # first import inside the patched copy would leave the real registry empty for later tests
    experiment.load_plugins()
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    monkeypatch.setattr(experiment, "_plugins_loaded", False)
    monkeypatch.delitem(sys.modules, "atplugin_exps", raising=False)
    exp = experiment.get("third_party_double")
    assert exp.cell({"x": 3}) == {"y": 6}
    names = list(experiment.all_experiments())
    assert "softmax_beta_sweep" in names and names.index("softmax_beta_sweep") < names.index(
        "third_party_double"
    )
    r = experiment.run_experiment("third_party_double", out=tmp_path / "out", progress=False)
    assert r["complete"] and r["cells"] == 2
    sys.modules.pop("atplugin_exps", None)


def test_a_broken_plugin_is_named_in_a_typed_error(monkeypatch, tmp_path):
    _plugin(tmp_path, "atbroken", "atbroken_exps", "raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # load the built-ins into the real registry first: they register on first import only, so a
    # first import inside the patched copy would leave the real registry empty for later tests
    experiment.load_plugins()
    monkeypatch.setattr(experiment, "EXPERIMENTS", dict(experiment.EXPERIMENTS))
    monkeypatch.setattr(experiment, "_plugins_loaded", False)
    with pytest.raises(
        ConfigError,
        match=r"entry point 'atbroken' \(atbroken_exps\) failed to "
        r"load: RuntimeError: boom",
    ):
        experiment.load_plugins()
    sys.modules.pop("atbroken_exps", None)


@pytest.mark.parametrize(
    "folder, installed",
    [("experiments", "approxtheory.experiments"), ("proofs_check", "approxtheory.proofs_check")],
)
def test_a_bundled_package_imported_under_its_folder_name_says_which_name_to_use(folder, installed):
    # `import experiments` from the repository's root would register every experiment twice
    r = subprocess.run(
        [sys.executable, "-c", f"import {folder}"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert (
        last.startswith("ImportError: ")
        and f"are the package {installed}; import that, not {folder!r}" in last
    )
