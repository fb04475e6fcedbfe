"""Reading a trained experiment's rows, shared by the checks of every paper (the head-count,
InfoFlow and Prism checks read rows through :func:`exp_rows`, so that a test substitutes rows in
one place: ``monkeypatch.setattr(proofs_check._rows, "exp_rows", ...)``; callers look it up as
``_rows.exp_rows`` at call time)."""

from __future__ import annotations

from ._core import experiment_rows, not_run

__all__ = ["exp_rows", "not_run"]


def exp_rows(name: str, profile: str) -> tuple:
    """(rows or None, seconds, note) of an experiment through the runner
    (:func:`._core.experiment_rows`; kept as the one name the head-count, InfoFlow and Prism
    checks read rows through, so tests can substitute rows)."""
    rows, _trace, secs, note = experiment_rows(name, profile)
    return rows, secs, note
