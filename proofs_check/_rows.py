"""Reading a trained experiment's rows, shared by the checks of every paper (the head-count,
InfoFlow and Prism checks read rows through :func:`exp_rows`, so that a test substitutes rows in
one place: ``monkeypatch.setattr(proofs_check._rows, "exp_rows", ...)``; callers look it up as
``_rows.exp_rows`` at call time)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from ._core import experiment_rows, not_run

__all__ = ["exp_rows", "exp_trace", "not_run", "best_over_seeds", "best_rows"]


def exp_rows(name: str, profile: str) -> tuple:
    """(rows or None, seconds, note) of an experiment through the runner
    (:func:`._core.experiment_rows`; kept as the one name the head-count, InfoFlow and Prism
    checks read rows through, so tests can substitute rows)."""
    rows, _trace, secs, note = experiment_rows(name, profile)
    return rows, secs, note


def exp_trace(name: str, profile: str) -> tuple:
    """The trace rows of an experiment's run (the runner's ``<profile>.trace.csv``; () where
    the experiment writes none): read after :func:`exp_rows`, from the same cells."""
    return tuple(experiment_rows(name, profile)[1])


def best_over_seeds(rows: Iterable, by: tuple, key: str = "val_nmse", cast: Callable = int) -> dict:
    """``{(r[b] for b in by): min over r's seeds of float(r[key])}``, the keys cast with
    ``cast``: the trained checks' "best over seeds" statistic (the papers' best validation NMSE
    of several training runs)."""
    best: dict = {}
    for r in rows:
        k = tuple(cast(r[b]) for b in by)
        best[k] = min(best.get(k, math.inf), float(r[key]))
    return best


def best_rows(rows: Iterable, by: tuple, key: str = "val_nmse") -> dict:
    """As :func:`best_over_seeds`, the whole row with the smallest ``key`` per ``by`` key (the
    first such row on a tie)."""
    best: dict = {}
    for r in rows:
        k = tuple(int(r[b]) for b in by)
        if k not in best or float(r[key]) < float(best[k][key]):
            best[k] = r
    return best
