"""Progress bars: tqdm's when it is installed (the ``progress`` extra, also in ``test``), none
otherwise; a run without tqdm computes and writes the same results, silently.

    >>> from approxtheory.progress import progress_bar
    >>> bar = progress_bar([1, 2, 3], desc="demo", disable=True)
    >>> bar.set_postfix_str("x")
    >>> list(bar)
    [1, 2, 3]
"""

from __future__ import annotations

import contextlib
import math
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "progress_bar",
    "NoBar",
    "VerifyProgress",
    "eta_seconds",
    "expected_seconds",
    "format_eta",
]


class NoBar:
    """The part of tqdm's interface the package uses, doing nothing but iterate."""

    def __init__(self, iterable: Iterable[Any]):
        self._iterable = iterable

    def __iter__(self) -> Iterator[Any]:
        return iter(self._iterable)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        pass

    def update(self, n: float = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(iterable: Iterable[Any], **kwargs: Any):
    """``tqdm(iterable, **kwargs)``, or a :class:`NoBar` over ``iterable`` without tqdm."""
    try:
        from tqdm import tqdm
    except ImportError:
        return NoBar(iterable)
    return tqdm(iterable, **kwargs)


def eta_seconds(
    remaining: list[str],
    done: dict[str, float],
    expected: dict[str, float],
    current: str | None = None,
    current_s: float = 0.0,
) -> float | None:
    """Seconds left for the ``remaining`` claims (``current`` among them, running for
    ``current_s``), given the seconds each ``done`` one took and what the ``expected`` (the
    previous run's) times were: the expected times of what is left, scaled by how this run
    compares with the previous one on the claims both ran (clipped to 0.2..5x, so one slow claim
    cannot swing it); a claim with no previous time counts as the median of the known ones. With
    no previous times: the mean time per done claim times the claims left. None before
    anything is known."""
    if not remaining:
        return 0.0
    known = [c for c in done if c in expected]
    if expected:
        speed = 1.0
        base = sum(expected[c] for c in known)
        if known and base > 0:
            speed = min(5.0, max(0.2, sum(done[c] for c in known) / base))
        typical = statistics.median(expected.values())
        left = 0.0
        for c in remaining:
            e = expected.get(c, typical) * speed
            left += max(e - current_s, 0.0) if c == current else e
        return left
    if not done:
        return None
    mean = sum(done.values()) / len(done)
    return max(mean * len(remaining) - current_s, 0.0)


def _seconds_by_claim(data) -> dict[str, float]:
    """Per claim, the seconds in a ``timings.json``-shaped ``data`` (``{"claims": {label:
    {"duration_s": s}}}``), a claim's mutant labels (``ID~...``) added to it; {} when it has
    no such shape."""
    claims = data.get("claims") if isinstance(data, dict) else None
    out: dict[str, float] = {}
    if not isinstance(claims, dict):
        return out
    for label, t in claims.items():
        s = t.get("duration_s") if isinstance(t, dict) else t
        if isinstance(label, str) and isinstance(s, (int, float)) and not isinstance(s, bool):
            if math.isfinite(s) and s >= 0:
                cid = label.split("~", 1)[0]
                out[cid] = out.get(cid, 0.0) + float(s)
    return out


#: the shipped per-claim seconds of a first run (``approxtheory/data/verify_seconds.json``)
SHIPPED_SECONDS = "verify_seconds.json"


def expected_seconds(ids: list[str], previous: Path | None = None) -> dict[str, float]:
    """Per claim of ``ids``, the seconds its check is expected to take, for the ETA: the
    previous run's in this folder (its ``timings.json``, ``previous``), else the shipped
    default (:data:`SHIPPED_SECONDS`: the claims it names, and its ``other_s`` for the rest),
    so the ETA is known from the first claim on, slow trained checks included."""
    from .io import read_json_entry

    shipped = read_json_entry(Path(__file__).parent / "data" / SHIPPED_SECONDS, max_bytes=2**20)
    out = _seconds_by_claim(shipped)
    other = shipped.get("other_s") if isinstance(shipped, dict) else None
    if isinstance(other, (int, float)) and not isinstance(other, bool) and other >= 0:
        out.update((c, float(other)) for c in ids if c not in out)
    if previous is not None:
        out.update(_seconds_by_claim(read_json_entry(previous, max_bytes=16 * 2**20)))
    return {c: out[c] for c in ids if c in out}


def format_eta(seconds: float | None) -> str:
    """``ETA ~1m05s`` (``ETA ?`` when unknown)."""
    if seconds is None:
        return "ETA ?"
    s = int(round(seconds))
    if s >= 3600:
        return f"ETA ~{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"ETA ~{s // 60}m{s % 60:02d}s"
    return f"ETA ~{s}s"


class VerifyProgress:
    """``verify``'s progress on stderr. On a terminal: a bar of claims done of all, the claim
    running (with its stage and the sub-progress a long check reports through
    :meth:`approxtheory.proofs_check.Context.progress`), and an ETA. Not a terminal (a pipe, a
    file): one plain line per claim as it finishes (no carriage return, no redraw). Disabled
    (``--quiet``): nothing. The ETA comes from the previous run's per-claim times and, for
    claims it did not run, the shipped defaults (:func:`eta_seconds`), so it is shown from the
    first claim on. Wall-clock time here only shapes what is shown, never a result."""

    #: the least seconds between two sub-progress redraws
    REDRAW_S = 0.5

    def __init__(
        self,
        ids: list[str],
        desc: str,
        disable: bool = False,
        expected: dict[str, float] | None = None,
        file=None,
        jobs: int = 1,
    ):
        self.file = file if file is not None else sys.stderr
        self.disable = disable
        self.desc = desc
        self.total = len(ids)
        self.jobs = max(1, jobs)
        self.expected = dict(expected or {})
        self.remaining = list(ids)
        self.running: dict[str, float] = {}  # claim -> monotonic start
        self.finished: dict[str, float] = {}
        self.tty = bool(getattr(self.file, "isatty", lambda: False)())
        self._last_draw = 0.0
        self.announced = False
        self.bar = (
            progress_bar(
                (),  # updated by hand: the total says how many claims
                total=len(ids),
                desc=desc,
                unit="claim",
                disable=disable,
                file=self.file,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                "[{elapsed}{postfix}]",
            )
            if self.tty and not disable
            else NoBar(())
        )

    def _eta(self) -> str:
        now = time.monotonic()
        current, running_s = None, 0.0
        if len(self.running) == 1:
            current, start = next(iter(self.running.items()))
            running_s = now - start
        eta = eta_seconds(self.remaining, self.finished, self.expected, current, running_s)
        if eta is not None and self.jobs > 1:  # claims computed side by side
            eta /= min(self.jobs, max(1, len(self.remaining)))
        return format_eta(eta)

    def _show(self, text: str) -> None:
        self.bar.set_postfix_str(f"{text}, {self._eta()}")

    def start(self, cid: str) -> None:
        if self.disable:
            return
        if not self.announced and not self.tty:
            self.announced = True
            print(f"{self.desc}: {self.total} claims, {self._eta()}", file=self.file, flush=True)
        self.running[cid] = time.monotonic()
        self._show(cid if len(self.running) == 1 else ", ".join(self.running))

    def stage(self, text: str) -> None:
        """The running claim's stage (mutants, claim mutants)."""
        if self.disable or not self.running:
            return
        self._show(f"{next(iter(self.running))} {text}")

    def _hook(self, stage: str, i: int, n: int | None) -> None:
        now = time.monotonic()
        if now - self._last_draw < self.REDRAW_S or not self.running:
            return
        self._last_draw = now
        of = f" {i}/{n}" if n else f" {i}" if i else ""
        self._show(f"{next(iter(self.running))} {stage}{of}")

    @contextlib.contextmanager
    def sub_progress(self, set_hook):
        """While a claim runs here: ``set_hook`` (the checks' listener setter) is given this
        bar's redraw, so the check's progress calls show (on a terminal only)."""
        if self.disable or not self.tty:
            yield
            return
        set_hook(self._hook)
        try:
            yield
        finally:
            set_hook(None)

    def done(self, cid: str, timings: dict | None = None, verdict: str | None = None) -> None:
        """``cid`` finished (with ``verdict``); ``timings``: its labels' seconds (this run's
        ``timings.json``)."""
        if self.disable:
            return
        self.running.pop(cid, None)
        mine = [
            t
            for label, t in (timings or {}).items()
            if label.split("~", 1)[0] == cid and isinstance(t, dict)
        ]
        computed = [float(t.get("duration_s", 0.0)) for t in mine if not t.get("cached")]
        if computed:  # a cached claim says nothing of the speed
            self.finished[cid] = sum(computed)
        if cid in self.remaining:
            self.remaining.remove(cid)
        self.bar.update(1)
        self._show(", ".join(self.running) if self.running else f"{cid} done")
        if not self.tty:
            n = self.total - len(self.remaining)
            how = f"{sum(computed):.1f} s" if computed else "cached"
            what = f" {verdict}" if verdict else ""
            print(
                f"{self.desc}: {n}/{self.total} {cid}{what} ({how}), {self._eta()}",
                file=self.file,
                flush=True,
            )

    def close(self) -> None:
        self.bar.close()
