"""Where a result came from: the package version, the git revision, the library versions and a
fingerprint of the source.

The bottom layer (imports nothing from the package). Cache keys of ``verify`` and of the
experiment runner are built here (:func:`cache_key`), so a cached result is only reused by the
code, libraries and settings that produced it::

    >>> from approxtheory.provenance import cache_key, libraries, source_fingerprint
    >>> len(source_fingerprint(("approxtheory",)))
    64
    >>> sorted(libraries())
    ['approxtheory', 'numpy', 'python', 'scipy', 'sympy', 'torch']
    >>> len(cache_key("scheme-1", "a part", packages=("approxtheory",)))
    16
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import subprocess
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "package_version",
    "git_revision",
    "libraries",
    "source_fingerprint",
    "fingerprint_dirs",
    "package_dir",
    "cache_key",
    "PACKAGES",
]

#: the packages a verdict or an experiment cell can depend on (the built-in experiments and the
#: checks are installed under ``approxtheory`` from the top-level folders ``experiments/`` and
#: ``proofs_check/``, see ``[tool.setuptools.package-dir]`` in pyproject.toml)
PACKAGES = ("approxtheory", "approxtheory.proofs_check", "approxtheory.experiments")

#: the version when the package metadata is missing (running from a source tree not installed)
UNKNOWN_VERSION = "0+unknown"


@functools.cache
def package_version() -> str:
    """The installed version of approxtheory, read from the package metadata (written once, in
    ``pyproject.toml``); ``0+unknown`` for a source tree that is not installed."""
    try:
        return importlib.metadata.version("approxtheory")
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


def git_revision() -> str | None:
    """The short git revision of the checkout the package runs from (None outside git)."""
    try:
        r = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=5,
        )
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def libraries() -> dict:
    """Versions of python and of the libraries a result depends on."""
    import numpy
    import scipy
    import sympy
    import torch

    return {
        "approxtheory": package_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sympy": sympy.__version__,
        "python": platform.python_version(),
    }


def package_dir(name: str) -> Path | None:
    """The directory of a package, found without importing it (a subpackage's parent is
    imported); None if absent."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # the parent of a dotted name is missing
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def fingerprint_dirs(dirs: Iterable[tuple[str, Path | None]]) -> str:
    """SHA-256 of every ``.py`` file under the given ``(name, directory)`` pairs: relative path
    and bytes, files sorted by relative path (``__pycache__`` skipped; a missing package hashes
    as absent; something named ``*.py`` that is not a regular file, a FIFO for one, hashes by
    its name only and is never opened)."""
    h = hashlib.sha256()
    for name, d in sorted(dirs, key=lambda nd: nd[0]):
        h.update(f"package {name}\0".encode())
        if d is None or not Path(d).is_dir():
            h.update(b"absent\0")
            continue
        files = sorted(
            (p for p in Path(d).rglob("*.py") if "__pycache__" not in p.parts),
            key=lambda p: p.relative_to(d).as_posix(),
        )
        for p in files:
            rel = p.relative_to(d).as_posix()
            if not p.is_file():  # a FIFO, device or folder named *.py: seen, never read
                h.update(f"{name}/{rel}\0not a regular file\0".encode())
                continue
            data = p.read_bytes()
            h.update(f"{name}/{rel}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()


@functools.cache
def source_fingerprint(packages: tuple[str, ...] = PACKAGES) -> str:
    """The fingerprint of the packages' source, computed once per process (a run sees one
    consistent code version even if files change while it runs)."""
    return fingerprint_dirs((name, package_dir(name)) for name in packages)


def cache_key(*parts: str, packages: tuple[str, ...] = PACKAGES) -> str:
    """A cache key (16 hex digits) covering ``parts`` (a scheme name, what is computed, its
    settings), the fingerprint of the source of ``packages`` and the library versions: a result
    stored under it is only reused by the code, libraries and settings that produced it."""
    h = hashlib.sha256()
    for part in (*parts, source_fingerprint(packages), json.dumps(libraries(), sort_keys=True)):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]
