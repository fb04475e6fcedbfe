"""The style gates of CI: ``ruff check``, ``ruff format --check`` and mypy, all configured in
pyproject.toml, run with the tools of this interpreter's environment (the ``test`` extra).

mypy runs through ``.ci/typecheck.py``, which checks ``experiments/`` and ``proofs_check/``
under their installed names ``approxtheory.experiments`` / ``approxtheory.proofs_check``. Its
cache (``.mypy_cache``) makes a second run take seconds; a cold run takes about half a minute.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _tool(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        pytest.fail(f"{module} is not installed: pip install -e '.[test]'")


def test_ruff_check_is_clean():
    _tool("ruff")
    r = _run("-m", "ruff", "check", "--no-cache", "--output-format", "concise", ".", timeout=120)
    assert r.returncode == 0, f"ruff check found problems:\n{r.stdout}{r.stderr}"


def test_ruff_format_is_clean():
    _tool("ruff")
    r = _run("-m", "ruff", "format", "--no-cache", "--check", ".", timeout=120)
    assert r.returncode == 0, (
        f"files need `ruff format` (run it, then commit):\n{r.stdout}{r.stderr}"
    )


def test_mypy_is_clean():
    _tool("mypy")
    r = _run(str(ROOT / ".ci" / "typecheck.py"), timeout=300)
    assert r.returncode == 0, f"mypy found problems:\n{r.stdout}{r.stderr}"
