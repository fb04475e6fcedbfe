"""The notebooks under ``docs/notebooks/`` run top to bottom without a cell error (nbclient), and
are stored without outputs.

The kernel is this interpreter: a ``python3`` kernelspec that runs ``sys.executable`` is written
to a temporary directory placed first on ``JUPYTER_PATH``, so neither a user's own ``python3``
kernelspec nor a missing one changes what runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (this interpreter)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.delenv("APPROXTHEORY_DEBUG", raising=False)
    return "python3"


def execute(path: Path, kernel_name: str, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    ).execute()
    return nb


def test_there_is_a_notebook():
    assert any(p.name == "checking_bounds.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name} is stored with outputs: clear them before committing"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, kernel, tmp_path):
    try:
        nb = execute(path, kernel, tmp_path)
    except CellExecutionError as err:
        pytest.fail(f"{path.name}: a cell failed:\n{err}")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if path.name == "checking_bounds.ipynb":
        # a claim renders as LaTeX, and the construction sweep is plotted
        latex = [o.data["text/latex"] for o in outputs if "text/latex" in o.get("data", {})]
        assert any(r"\textbf{HC-T2b}" in s for s in latex), latex
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2


def test_a_failing_cell_fails(kernel, tmp_path):
    """The harness is not vacuous: a notebook with an assertion that fails is an error."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("assert x == 2")]
    )
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(CellExecutionError, match="AssertionError"):
        execute(path, kernel, tmp_path)
