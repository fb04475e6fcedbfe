"""Results from elsewhere: a trained claim's stated criterion, gate and scale
record applied to a results CSV produced anywhere (a GPU cluster, another codebase, a paper's
table): ``approxtheory verify --only CLAIM --results PATH``.

Each trained claim that accepts outside results registers one documented schema
(:func:`results_schema`): the columns it requires and those it reads when present, which
experiment of this toolkit each row stands for (``route``), and what the columns mean
(``approxtheory verify --results-schema CLAIM`` prints it). :func:`load_results` parses and
validates a CSV against it (never evaluates it): a missing, empty or malformed file, a missing
column, a value that is not a number where one is needed or a non-finite metric is a typed
:class:`~approxtheory.errors.ConfigError` saying what was wrong and what the schema allows.
While :func:`using_results` is active, the checks' row reader
(:func:`._core.experiment_rows`) returns these rows instead of running or reading the
toolkit's own experiments, and :func:`results_note` says where they came from.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from approxtheory.errors import ConfigError

__all__ = [
    "ResultsSchema",
    "SCHEMAS",
    "results_schema",
    "results_schema_of",
    "load_results",
    "using_results",
    "active_results",
    "results_note",
    "MAX_RESULTS_BYTES",
]

#: the largest results file read (a results table of a trained sweep is kilobytes)
MAX_RESULTS_BYTES = 64 * 2**20


@dataclass(frozen=True)
class ResultsSchema:
    """The columns a claim's check reads from outside results.

    ``required`` / ``optional``: column name -> "int", "float" or "metric" (a float that must be
    finite and >= 0) and what it means; ``route(row) -> experiment name`` says which of the
    toolkit's experiments a row stands for; ``defaults`` fills optional columns that are absent
    (e.g. one seed)."""

    claim: str
    required: dict
    optional: dict
    route: Callable[[dict], str]
    defaults: dict
    doc: str

    def describe(self) -> str:
        lines = [f"results schema of {self.claim}: {self.doc}", "", "required columns:"]
        lines += [f"  {k} ({t}): {m}" for k, (t, m) in self.required.items()]
        lines += ["optional columns:"]
        lines += [
            f"  {k} ({t}): {m}" + (f" [default {self.defaults[k]}]" if k in self.defaults else "")
            for k, (t, m) in self.optional.items()
        ]
        lines += [
            "",
            "A CSV with a header row, one trained model per row; other columns are ignored. "
            "Run: approxtheory verify --only " + self.claim + " --results PATH",
        ]
        return "\n".join(lines)


SCHEMAS: dict[str, ResultsSchema] = {}


def results_schema(
    claim: str,
    *,
    required: dict,
    optional: dict,
    route: Callable[[dict], str],
    doc: str,
    defaults: dict | None = None,
) -> ResultsSchema:
    """Register the outside-results schema of ``claim`` (see :class:`ResultsSchema`)."""
    if claim in SCHEMAS:
        raise RuntimeError(f"two results schemas for {claim}")
    s = ResultsSchema(claim, dict(required), dict(optional), route, dict(defaults or {}), doc)
    SCHEMAS[claim] = s
    return s


def results_schema_of(claim: str) -> ResultsSchema:
    """The outside-results schema of ``claim`` (a typed error naming the claims that have one)."""
    return _schema(claim)


def _schema(claim: str) -> ResultsSchema:
    if claim not in SCHEMAS:
        raise ConfigError(
            f"{claim} takes no outside results; the claims that do: {', '.join(sorted(SCHEMAS))}"
        )
    return SCHEMAS[claim]


#: the range of each integer column (a value outside is a typo or garbage, never a trained
#: model: heads 0 or -4, T = 10^20); other integer columns: :data:`INT_RANGE`
INT_RANGES = {
    "heads": (1, 4096),
    "h1": (1, 4096),
    "h2": (1, 4096),
    "D": (1, 4096),
    "T": (1, 10**7),
    "hidden": (1, 10**9),
    "head_dim": (1, 10**6),
    "total_width": (1, 10**7),
    "layers": (1, 10**4),
    "mlp_params": (1, 10**15),
    "seed": (0, 2**63 - 1),
}
INT_RANGE = (0, 10**15)


def _value(kind: str, text: str, col: str, line: int, path: str):
    where = f"{path}, line {line}, column {col!r}"
    t = (text or "").strip()
    if kind == "int":
        lo, hi = INT_RANGES.get(col, INT_RANGE)
        try:
            v = int(t) if len(t) <= 40 else None
        except ValueError:
            v = None
        if v is None:
            raise ConfigError(f"{where}: {t[:40]!r} is not an integer (from {lo} to {hi})")
        if not lo <= v <= hi:
            raise ConfigError(f"{where}: {v} is outside {lo} .. {hi}")
        return v
    try:
        x = float(t)  # float() parses a number; it never evaluates an expression
    except ValueError:
        raise ConfigError(f"{where}: {t!r} is not a number") from None
    if kind == "metric" and not (math.isfinite(x) and x >= 0):
        raise ConfigError(f"{where}: {t!r} must be a finite number >= 0 (NaN or inf is a failure)")
    if not math.isfinite(x):
        raise ConfigError(f"{where}: {t!r} must be finite")
    return x


def load_results(claim: str, path: str | Path) -> dict[str, tuple]:
    """The rows of the results CSV at ``path`` for ``claim``'s check, validated against its
    schema and grouped by the experiment each stands for: ``{experiment name: rows}``."""
    return _load(claim, path)[0]


def _load(claim: str, path: str | Path) -> tuple[dict[str, tuple], str]:
    """:func:`load_results` and the SHA-256 (16 hex digits) of the bytes it read."""
    from approxtheory.foreign import read_bytes

    s = _schema(claim)
    shown = str(path)
    data = read_bytes(path, where=f"--results {shown!r}", max_bytes=MAX_RESULTS_BYTES)
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is not part of the first column
    except UnicodeDecodeError as e:
        raise ConfigError(f"--results {shown!r}: not UTF-8 text (byte {e.start})") from None
    try:
        return _rows(s, claim, text, shown), hashlib.sha256(data).hexdigest()[:16]
    except csv.Error as e:
        raise ConfigError(f"--results {shown!r}: not a CSV table ({str(e)[:100]})") from None


def _rows(s: ResultsSchema, claim: str, text: str, shown: str) -> dict[str, tuple]:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    read = {**s.required, **s.optional}
    twice = sorted({c for c in header if c in read and header.count(c) > 1})
    if twice:
        raise ConfigError(
            f"--results {shown!r}: column(s) {', '.join(twice)} appear more than once in the "
            "header (which one holds the values?)"
        )
    missing = [c for c in s.required if c not in header]
    if not header:
        raise ConfigError(f"--results {shown!r}: empty (a header row and one row per model needed)")
    if missing:
        raise ConfigError(
            f"--results {shown!r}: missing column(s) {', '.join(missing)}; {claim} requires "
            f"{', '.join(s.required)} (optional: {', '.join(s.optional)}); see "
            f"approxtheory verify --results-schema {claim}"
        )
    groups: dict[str, list] = {}
    n = 0
    for i, raw in enumerate(reader, start=2):
        if None in raw:
            raise ConfigError(f"{shown}, line {i}: more fields than the header has")
        row = {}
        for col, (kind, _) in {**s.required, **s.optional}.items():
            if col in raw and (raw[col] or "").strip() != "":
                row[col] = _value(kind, raw[col], col, i, shown)
            elif col in s.required:
                raise ConfigError(f"{shown}, line {i}: column {col!r} is empty")
            elif col in s.defaults:
                row[col] = s.defaults[col]
        _check_intervals(row, i, shown)
        try:
            name = s.route(row)
        except (KeyError, ValueError) as e:
            raise ConfigError(f"{shown}, line {i}: {e}") from None
        groups.setdefault(name, []).append(row)
        n += 1
    if not n:
        raise ConfigError(f"--results {shown!r}: a header but no rows")
    return {k: tuple(v) for k, v in groups.items()}


def _check_intervals(row: dict, line: int, shown: str) -> None:
    """An interval given as ``X_lo``/``X_hi`` columns must be ordered (``nmse_lo`` above
    ``nmse_hi`` is a swapped pair, not a measurement). Whether the row's value lies inside is
    not asked: the interval may be over seeds or of a mean, and one seed's value can lie out."""
    for col, lo in row.items():
        if not col.endswith("_lo") or f"{col[:-3]}_hi" not in row:
            continue
        base, hi = col[:-3], row[f"{col[:-3]}_hi"]
        if lo > hi:
            raise ConfigError(
                f"{shown}, line {line}: {col} = {lo:g} is above {base}_hi = {hi:g} (an interval "
                "runs from its lower to its upper end)"
            )


_ACTIVE: dict | None = None


@contextlib.contextmanager
def using_results(claim: str, path: str | Path) -> Iterator[dict]:
    """While active, the checks read ``path``'s rows (validated) in place of their experiments."""
    global _ACTIVE
    groups, digest = _load(claim, path)
    prev = _ACTIVE
    _ACTIVE = {"claim": claim, "path": str(path), "sha256": digest, "groups": groups}
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = prev


def active_results() -> dict | None:
    """The outside results in use (``{claim, path, sha256, groups}``), or None."""
    return _ACTIVE


def results_note() -> str:
    a = _ACTIVE
    return "" if a is None else f"read from --results {a['path']} (sha256 {a['sha256']})"
