"""Run mypy on the package with experiments/ and proofs_check/ under their installed names.

``[tool.setuptools.package-dir]`` installs the top-level folders ``experiments/`` and
``proofs_check/`` as ``approxtheory.experiments`` and ``approxtheory.proofs_check``. mypy names a
file by its folder (``experiments.constructions``) and has no option for such a mapping, nor does
it see through setuptools' editable-install import hook; so this script lets mypy collect the files
of ``[tool.mypy] files`` as usual (all options come from ``[tool.mypy]`` in pyproject.toml), renames
the mapped ones to their installed module names and runs the build. Extra arguments go to mypy.

    python .ci/typecheck.py            # what CI, pre-commit and tests/test_style.py run
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.fscache import FileSystemCache
from mypy.main import process_options
from mypy.modulefinder import BuildSource

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli before 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def package_dirs() -> dict[str, Path]:
    """``{import name: folder}`` from ``[tool.setuptools.package-dir]``."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = pyproject["tool"]["setuptools"].get("package-dir", {})
    return {name: ROOT / folder for name, folder in mapping.items() if name}


def rename(sources: list[BuildSource], mapping: dict[str, Path]) -> None:
    """Give each source under a mapped folder its installed module name."""
    for src in sources:
        if not src.path:
            continue
        path = Path(src.path).resolve()
        for name, folder in mapping.items():
            if path.is_relative_to(folder):
                parts = [p.removesuffix(".py") for p in path.relative_to(folder).parts]
                if parts[-1] == "__init__":
                    parts.pop()
                src.module = ".".join([name, *parts])
                src.base_dir = str(ROOT)


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    fscache = FileSystemCache()
    sources, options = process_options(argv, fscache=fscache)
    rename(sources, package_dirs())
    messages: list[str] = []

    def flush(_file: str | None, new: list[str], _serious: bool) -> None:
        messages.extend(new)
        for m in new:
            print(m)

    try:
        build.build(sources, options, None, flush, fscache, sys.stdout, sys.stderr)
    except CompileError as e:
        if not messages:
            print("\n".join(e.messages))
        return 2
    errors = sum(": error:" in m for m in messages)
    files = len({m.split(":", 1)[0] for m in messages if ": error:" in m})
    if errors:
        print(
            f"Found {errors} error{'s' * (errors != 1)} in {files} file{'s' * (files != 1)}"
            f" (checked {len(sources)} source files)"
        )
        return 1
    print(f"Success: no issues found in {len(sources)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
