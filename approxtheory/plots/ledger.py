"""Which plots of a report folder are current: ``verify`` redraws a plot only when what it is
drawn from changed (its CSV's bytes or its spec, the plotting code, matplotlib's version) or
the file is missing. The digests live in one JSON file in the run's cache folder
(``.cache/plots.ledger``, apart from the claims' ``*.json`` entries); a ledger that cannot be
read is empty (every plot is drawn), one that cannot be written is skipped (the next run draws
again)."""

from __future__ import annotations

import functools
import hashlib
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..io import atomic_write_json, read_json_entry

__all__ = ["PlotLedger", "code_digest"]


@functools.cache
def code_digest() -> str:
    """A digest of what draws a plot: the sources of :mod:`approxtheory.plots`, the style sheet
    and matplotlib's version (once per process)."""
    import matplotlib

    here = Path(__file__).parent
    h = hashlib.sha256(matplotlib.__version__.encode() + b"\0")
    for p in [*sorted(here.glob("*.py")), here.parent / "plot.mplstyle"]:
        h.update(p.name.encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def _is_file(p: Path) -> bool:
    try:
        return stat.S_ISREG(p.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False


class PlotLedger:
    """The digests of the plots drawn in a folder (``path``: the ledger file). :meth:`draw`
    draws a plot unless its file is there and was drawn from the same inputs; :meth:`save`
    writes the ledger of this run's plots when it changed."""

    def __init__(self, path: Path):
        self.path = path
        old = read_json_entry(path, max_bytes=16 * 2**20)
        self.old: dict[str, str] = (
            {k: v for k, v in old.items() if isinstance(v, str)} if isinstance(old, dict) else {}
        )
        self.new: dict[str, str] = {}
        self.drawn = 0
        self.kept = 0

    def draw(self, png: Path, inputs: Any, draw: Callable[[], Any]) -> bool:
        """Call ``draw()`` (which writes ``png``) unless ``png`` is a file drawn from the same
        ``inputs`` (bytes, text or JSON data) by the same code; whether it drew."""
        if not isinstance(inputs, bytes):
            inputs = inputs if isinstance(inputs, str) else json.dumps(inputs, sort_keys=True)
            inputs = inputs.encode("utf-8")
        key = hashlib.sha256(code_digest().encode() + b"\0" + inputs).hexdigest()[:32]
        name = png.name
        self.new[name] = key
        if self.old.get(name) == key and _is_file(png):
            self.kept += 1
            return False
        draw()
        self.drawn += 1
        return True

    def save(self) -> None:
        """Write the ledger when it changed (an unwritable folder is skipped: the next run then
        draws its plots again)."""
        if self.new == self.old:
            return
        try:
            atomic_write_json(self.path, self.new)
        except OSError:
            pass
