"""The notebooks under ``docs/notebooks/`` run top to bottom without a cell error (nbclient), are
stored without outputs, and each has a committed page with its outputs (``NAME.md`` and its
figures in ``NAME_files/``, written by ``approxtheory docs --notebooks``) whose text is what a
fresh run renders.

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
    """The notebook runs as `approxtheory docs --notebooks` runs it (this interpreter's kernel,
    claims and sympy values also shown as MathML) and its committed page is that run's."""
    from approxtheory.docs import execute_notebook
    from approxtheory.errors import ApproxTheoryError

    try:
        nb = execute_notebook(path)
    except ApproxTheoryError as err:
        pytest.fail(f"{path.name}: {err}")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if path.name == "checking_bounds.ipynb":
        # a claim renders as LaTeX, and the construction sweep is plotted
        latex = [o.data["text/latex"] for o in outputs if "text/latex" in o.get("data", {})]
        assert any(r"\textbf{HC-T2b}" in s for s in latex), latex
        assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2
        # ... and as MathML on the page
        shown = [o.data["text/html"] for o in outputs if "text/html" in o.get("data", {})]
        assert any("<strong>HC-T2b</strong>" in s and "<math" in s for s in shown), shown
    # the committed page with outputs is this run's (its figures by name: PNG bytes may differ
    # between matplotlib builds, the text may not)
    from approxtheory.docs import render_notebook_markdown

    text, images = render_notebook_markdown(nb, path.stem)
    page = path.with_suffix(".md")
    hint = "run `approxtheory docs --notebooks` and commit the page and its figures"
    assert page.is_file() and page.read_text(encoding="utf-8") == text, f"{page.name}: {hint}"
    figures = path.parent / f"{path.stem}_files"
    stored = sorted(str(p.relative_to(path.parent)) for p in figures.glob("*.png"))
    assert stored == sorted(images), (stored, sorted(images), hint)
    assert all(data.startswith(b"\x89PNG") for data in images.values())


def test_rendered_page_shows_every_cell_and_output():
    """The page renderer is not vacuous: code, streams (one block per run of them), results,
    figures and LaTeX-only results all appear; a cell error is refused."""
    import base64

    from approxtheory.docs import render_notebook_markdown
    from approxtheory.errors import ApproxTheoryError

    png = base64.b64encode(b"\x89PNG fake").decode()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Title"),
            nbformat.v4.new_code_cell(
                "print(1); print(2)\nx",
                outputs=[
                    nbformat.v4.new_output("stream", name="stdout", text="1\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="2\n"),
                    nbformat.v4.new_output("execute_result", data={"text/plain": "42"}),
                    nbformat.v4.new_output("display_data", data={"image/png": png}),
                    nbformat.v4.new_output("display_data", data={"text/latex": "$x^2$"}),
                    nbformat.v4.new_output(
                        "display_data",
                        data={"text/html": "<math>x</math>\n", "text/plain": "x"},
                    ),
                ],
            ),
        ]
    )
    text, images = render_notebook_markdown(nb, "nb")
    assert "# Title" in text and "```{.python .nb-input}\nprint(1); print(2)\nx\n```" in text
    assert "```{.text .nb-output}\n1\n2\n```" in text
    assert "```{.text .nb-output}\n42\n```" in text
    assert "```{.latex .nb-output}\n$x^2$\n```" in text
    assert '<div class="nb-output"><math>x</math></div>' in text
    assert images == {"nb_files/cell1_output3.png": b"\x89PNG fake"}
    assert "![output of cell 1](nb_files/cell1_output3.png)" in text
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="E", evalue="v", traceback=[])]
    with pytest.raises(ApproxTheoryError, match="cell 1 raised E: v"):
        render_notebook_markdown(nb, "nb")


def test_a_failing_cell_fails(kernel, tmp_path):
    """The harness is not vacuous: a notebook with an assertion that fails is an error."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("assert x == 2")]
    )
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(CellExecutionError, match="AssertionError"):
        execute(path, kernel, tmp_path)
