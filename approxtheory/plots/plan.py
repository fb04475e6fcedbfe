"""Planning a plot from a CSV's rows: the varying keys, the series, categorical x, intervals and
ticks (:func:`plan_plot`), and the checks of a plan against the rows (:func:`check_plot`,
:func:`check_series`). Nothing here imports matplotlib."""

from __future__ import annotations

import csv
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ApproxTheoryError

#: the package's matplotlib style (approxtheory/plot.mplstyle)
STYLE = Path(__file__).parent.with_name("plot.mplstyle")
#: at most this many distinct x values get one tick each (the values plotted)
MAX_FIXED_TICKS = 12
#: column names read as an index or a seed: discrete x drawn as categories
_CATEGORICAL_NAMES = ("seed", "index", "idx", "config", "configuration", "label", "case")
#: (lower, upper) suffixes of an interval on a value column ``y``: ``y_lo``/``y_hi`` etc.
_INTERVAL_SUFFIXES = (
    ("_lo", "_hi"),
    ("_low", "_high"),
    ("_ci_low", "_ci_high"),
    ("_ci_lo", "_ci_hi"),
    ("_min", "_max"),
    ("_lower", "_upper"),
)
#: suffixes of a centre (a mean, a median) whose interval carries the bare name
_CENTRE_SUFFIXES = ("_mean", "_median", "_avg", "_centre", "_center")
#: interval columns with no value name: they belong to the first plotted value without its own
_BARE_INTERVALS = (("lo", "hi"), ("ci_low", "ci_high"), ("ci_lo", "ci_hi"), ("low", "high"))
_MARKERS = "os^vDPX*"
#: colours of the package style's cycle (plot.mplstyle)
_NCOLORS = 7
#: at most this many cells (combinations of the keys beyond the group) share one panel
_MAX_CELLS_ONE_PANEL = 4
#: at most this many panels; more cells share one panel
_MAX_PANELS = 12
_LINESTYLES = ("-", "-.", ":", (0, (5, 1, 1, 1)))


# ----------------------------------------------------------------------------- reading


def _read_rows(path: Path) -> list[dict]:
    """The CSV's rows; numeric cells as floats, the others as strings (blank cells dropped)."""
    with open(path, newline="", encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    rows = []
    for r in raw:
        d: dict[str, Any] = {}
        for k, v in r.items():
            if k is None or v is None or v == "":
                continue
            try:
                f = float(v)
            except (TypeError, ValueError):
                d[k] = v
            else:
                d[k] = f if math.isfinite(f) or v.strip().lower() in ("inf", "-inf") else v
        rows.append(d)
    return rows


def _columns(rows: Sequence[dict]) -> list[str]:
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return cols


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _is_num(v) -> bool:
    return isinstance(v, float) and math.isfinite(v)


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Series:
    """One drawn series: the value column, the rows it draws (CSV order indices, in x order),
    the keys that hold for all of them, and how it is drawn."""

    column: str
    role: str  # "measured" or "bound"
    keys: tuple[tuple[str, Any], ...]
    rows: tuple[int, ...]
    x: tuple
    y: tuple
    lo: tuple | None = None
    hi: tuple | None = None
    interval: str = ""  # "", "band", "errorbar" or "level"
    joined: bool = True
    label: str = ""
    #: the other groups' keys when identical series were merged into this one
    also: tuple[tuple[tuple[str, Any], ...], ...] = ()
    #: their rows (each checked like ``rows``)
    also_rows: tuple[tuple[int, ...], ...] = ()

    def summary(self) -> dict:
        return {
            "column": self.column,
            "role": self.role,
            "label": self.label,
            "keys": dict(self.keys),
            "points": len(self.rows),
            "joined": self.joined,
            "interval": self.interval,
            "merged": len(self.also),
        }


@dataclass
class PlotPlan:
    """What :func:`plot_from_csv` draws from a CSV and a spec, with the problems found."""

    x: str
    keys: list[str]
    derived: list[str]
    categorical: bool
    categories: list  # x values in axis order (categorical x)
    category_labels: list[str]
    logx: bool
    logy: bool
    series: list[Series]
    xticks: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> dict:
        return {
            "x": self.x,
            "keys": self.keys,
            "derived": self.derived,
            "categorical": self.categorical,
            "series": [s.summary() for s in self.series],
            "notes": self.notes,
            "problems": self.problems,
        }


def _value_columns(spec: dict, cols: Sequence[str]) -> tuple[list[str], dict[str, tuple]]:
    """The plotted value columns (spec ``y`` less the interval ends) and each one's interval
    ``(lo column, hi column)`` where the CSV has one."""
    ys = [y for y in spec["y"] if isinstance(y, str)]
    ends: dict[str, tuple] = {}
    for y in ys:
        # nmse_mean's interval may be nmse_lo / nmse_hi
        bases = [y, *(y.removesuffix(m) for m in _CENTRE_SUFFIXES if y.endswith(m))]
        for base in bases:
            pair = next(
                (
                    (base + a, base + b)
                    for a, b in _INTERVAL_SUFFIXES
                    if base + a in cols and base + b in cols
                ),
                None,
            )
            if pair is not None:
                ends[y] = pair
                break
    taken = {c for pair in ends.values() for c in pair}
    values = [y for y in ys if y not in taken]
    for a, b in _BARE_INTERVALS:
        if a in cols and b in cols and a not in ends and b not in ends:
            owner = next((y for y in values if y not in ends and y not in (a, b)), None)
            if owner is not None:
                ends[owner] = (a, b)
                taken |= {a, b}
    values = [y for y in values if y not in taken]
    return values, ends


def _determined(rows: Sequence[dict], target: str, by: Sequence[str]) -> bool:
    """Whether ``target`` is a function of the columns ``by`` over ``rows`` (blank is a value)."""
    seen: dict[tuple, Any] = {}
    for r in rows:
        k = tuple(r.get(c) for c in by)
        v = r.get(target)
        if k in seen and seen[k] != v:
            return False
        seen.setdefault(k, v)
    return True


def _measurement_like(vals: list) -> bool:
    """Non-integer numbers, nearly all distinct: a measurement, never a key."""
    nums = [v for v in vals if isinstance(v, float)]
    if len(nums) < 4 or len(nums) < len(vals):
        return False
    return (
        any(not float(v).is_integer() for v in nums if math.isfinite(v))
        and len(set(nums)) > 0.5 * len(nums)
        and len(set(nums)) > 8
    )


def grouping_keys(rows: Sequence[dict], spec: dict) -> tuple[list[str], list[str]]:
    """``(keys, derived)``: the columns that split the rows into series and the varying
    columns left out as derived (each a function of x and the keys over these rows).

    A spec's ``keys`` (a list) is taken as given; its ``ignore`` columns are never keys. Else the
    candidates are the varying columns other than x and the plotted values; derived ones are
    dropped one at a time (measurements first, then flags, labels, non-integer numbers, integer
    numbers, more distinct values first), each drop kept only while every dropped column stays a
    function of x and the remaining keys. The spec's ``group`` is always a key."""
    x = spec["x"]
    cols = _columns(rows)
    values, ends = _value_columns(spec, cols)
    plotted = set(values) | {c for pair in ends.values() for c in pair}
    if spec.get("bound"):
        plotted.add(spec["bound"])
    if isinstance(spec.get("keys"), list):
        keys = [k for k in spec["keys"] if k in cols and k != x]
        return keys, []
    ignore = set(spec.get("ignore") or ())
    cand = [
        c
        for c in cols
        if c != x and c not in plotted and c not in ignore and len({r.get(c) for r in rows}) > 1
    ]
    group: str = spec.get("group") or ""

    def rank(c: str) -> tuple:
        vals = [r.get(c) for r in rows]
        distinct = len(set(vals))
        strs = [v for v in vals if isinstance(v, str)]
        if _measurement_like(vals):
            cls = 0
        elif strs and all(v in ("True", "False") for v in strs):
            cls = 1
        elif strs:
            cls = 2
        elif any(isinstance(v, float) and not v.is_integer() for v in vals):
            cls = 3
        else:
            cls = 4
        return (cls, -distinct, cols.index(c))

    keys = list(cand)
    derived: list[str] = []
    forced: list[str] = []
    for c in sorted(cand, key=rank):
        if c == group:
            continue
        rest = [k for k in keys if k != c]
        if all(_determined(rows, d, [x, *rest]) for d in (*derived, c)):
            keys = rest
            derived.append(c)
        elif rank(c)[0] == 0:  # a measurement with replicates: not a key either
            keys = rest
            forced.append(c)
    return keys, derived + forced


def _categorical_x(rows: Sequence[dict], x: str, keys: Sequence[str], derived) -> tuple:
    """``(categorical, labels by x value)``: x is categorical when any value is not a number,
    when its name reads as an index, a seed or a configuration, or when a text column names
    each x value (a label column derived from x and the keys)."""
    xs = [r[x] for r in rows]
    name = x.lower()
    labels: dict = {}
    for c in derived:
        vals = [r.get(c) for r in rows]
        if not all(isinstance(v, str) for v in vals) or all(v in ("True", "False") for v in vals):
            continue
        per: dict = {}
        for r in rows:
            per.setdefault(r[x], [])
            if r[c] not in per[r[x]]:
                per[r[x]].append(r[c])
        # a label column: different x values never share a label within one series
        if _determined(rows, x, [c, *keys]) and all(len(v) <= 3 for v in per.values()):
            labels = {k: "/".join(v) for k, v in per.items()}
            break
    categorical = (
        any(not isinstance(v, float) for v in xs)
        or any(name == n or name.endswith("_" + n) or name.endswith(n) for n in _CATEGORICAL_NAMES)
        or bool(labels)
    )
    return categorical, labels


def _interval_kind(lo: list, hi: list, categorical: bool) -> str:
    if len(set(lo)) == 1 and len(set(hi)) == 1 and len(lo) > 1:
        return "level"  # one interval for the whole series (of a mean over its points)
    return "errorbar" if categorical or len(lo) == 1 else "band"


def _keys_label(keys: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in keys)


def _series_label(s: Series, multi: bool) -> str:
    """The value (or "claimed bound") and the keys; a merged series names every group: one key
    that differs as ``k=a and b``, several as ``k=a, j=b / k=c, j=d``."""
    head = "claimed bound" if s.role == "bound" else s.column
    groups = [s.keys, *s.also]
    common = [kv for kv in s.keys if all(kv in g for g in groups)]
    diff = [[kv for kv in g if kv not in common] for g in groups]
    lab = _keys_label(common)
    if len(groups) > 1:
        names = {k for d in diff for k, _ in d}
        if len(names) == 1:
            (k,) = names
            vals = " and ".join(_fmt(v) for d in diff for _, v in d)
            rest = f"same for {k}={vals}"
        elif len(groups) <= 3:
            rest = "same for " + " / ".join(_keys_label(d) for d in diff)
        else:  # many groups: each key's values once
            per: dict[str, list[str]] = {}
            for d in diff:
                for k, v in d:
                    if _fmt(v) not in per.setdefault(k, []):
                        per[k].append(_fmt(v))
            rest = "same for " + ", ".join(f"{k} in {{{'; '.join(v)}}}" for k, v in per.items())
        lab = f"{lab}, {rest}" if lab else rest
    if not lab:
        return head
    text = f"{head} {lab}" if multi or s.role == "bound" else lab
    return textwrap.fill(text, 48, break_long_words=False)


def _x_rows(rows: Sequence[dict], x: str, notes: list[str]) -> list[int]:
    """The indices of the rows plotted along ``x`` (a note in ``notes`` for those left out)."""
    # a numeric x axis when any x is a number (rows without one are left out), else the rows
    # that have the column: never a sort of mixed types or a missing column
    idx = list(range(len(rows)))
    if any(_is_num(r.get(x)) for r in rows):
        left = [i for i in idx if not _is_num(rows[i].get(x))]
        if left:
            notes.append(f"{len(left)} row(s) without a numeric {x} left out")
        idx = [i for i in idx if _is_num(rows[i].get(x))]
    else:
        idx = [i for i in idx if x in rows[i]]
    return idx


def plan_plot(rows: Sequence[dict], spec: dict) -> PlotPlan:
    """The series :func:`plot_from_csv` draws for ``rows`` (as read from the CSV) and ``spec``."""
    if not isinstance(spec, dict) or not isinstance(spec.get("x"), str):
        raise ApproxTheoryError("a plot spec is a dict with 'x' (a column name) and 'y' (a list)")
    if not isinstance(spec.get("y"), list):
        raise ApproxTheoryError("a plot spec's 'y' is a list of column names")
    x = spec["x"]
    bound = spec.get("bound")
    logx, logy = bool(spec.get("logx", True)), bool(spec.get("logy", True))
    notes: list[str] = []
    idx = _x_rows(rows, x, notes)
    sub = [rows[i] for i in idx]
    cols = _columns(sub)
    values, ends = _value_columns(spec, cols)
    keys, derived = grouping_keys(sub, spec) if sub else ([], [])
    categorical, labels = _categorical_x(sub, x, keys, derived) if sub else (False, {})
    cats = _categories(sub, x) if categorical else []
    if categorical:
        logx = False
    if logx and any(r[x] <= 0 for r in sub):
        notes.append(f"{x} <= 0 left out on the log axis")
        keep = [j for j, r in enumerate(sub) if r[x] > 0]
        idx, sub = [idx[j] for j in keep], [sub[j] for j in keep]
    pos = {c: float(i) for i, c in enumerate(cats)}

    def xpos(v):
        return pos[v] if categorical else v

    groups: dict[tuple, list[int]] = {}
    for i, r in zip(idx, sub):
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(i)
    order = sorted(
        groups, key=lambda g: tuple((str(type(v)), v if v is not None else "") for v in g)
    )
    series: list[Series] = []
    columns = [(y, "measured") for y in values] + ([(bound, "bound")] if bound else [])
    grouped = [(tuple(zip(keys, g)), groups[g]) for g in order]
    for col, role in columns:
        end = ends[col] if role == "measured" and col in ends else None
        series += _column_series(rows, x, xpos, col, role, grouped, end, logy, categorical)
    multi = len(values) > 1 or not keys
    out = [replace(s, label=_series_label(s, multi)) for s in series]
    plan = PlotPlan(
        x=x,
        keys=keys,
        derived=derived,
        categorical=categorical,
        categories=cats,
        category_labels=[labels.get(c, _fmt(c)) if labels else _fmt(c) for c in cats],
        logx=logx,
        logy=logy,
        series=out,
        notes=notes,
    )
    plan.xticks = _xticks(plan)
    plan.problems = check_series(rows, spec, out, keys=keys, categorical=categorical)
    return plan


def _categories(sub: Sequence[dict], x: str) -> list:
    """The categories of a categorical x axis: in order of first appearance, sorted where all
    are floats."""
    cats: list = []
    for r in sub:
        if r[x] not in cats:
            cats.append(r[x])
    if all(isinstance(c, float) for c in cats):
        cats.sort()
    return cats


def _column_series(rows, x, xpos, col, role, grouped, end, logy, categorical) -> list[Series]:
    """The series of one column ``col`` (``role`` measured or bound), one per group of rows
    (``grouped``: the group's (key, value) pairs and its row indices, in plotting order), the groups
    with identical points drawn once; ``end`` the columns of its interval, if any."""
    drawn: list[Series] = []
    for g, rows_of in grouped:
        gi = [i for i in rows_of if _is_num(rows[i].get(col))]
        if logy:
            gi = [i for i in gi if rows[i][col] > 0]
        if not gi:
            continue
        gi.sort(key=lambda i: (xpos(rows[i][x]), i))
        kv = tuple((k, v) for k, v in g if v is not None)
        xs = tuple(xpos(rows[i][x]) for i in gi)
        ys = tuple(rows[i][col] for i in gi)
        lo, hi, kind = _interval(rows, gi, end, ys, logy, categorical)
        # one y per x on a line; repeated x (replicates) are markers only
        joined = not categorical and len(set(xs)) == len(xs)
        s = Series(col, role, kv, tuple(gi), xs, ys, lo, hi, kind, joined)
        same = (s.x, s.y, s.lo, s.hi)
        dup = next((j for j, d in enumerate(drawn) if (d.x, d.y, d.lo, d.hi) == same), None)
        if dup is None:
            drawn.append(s)
        else:  # identical points: drawn once, the legend names both groups
            d = drawn[dup]
            drawn[dup] = replace(d, also=d.also + (s.keys,), also_rows=d.also_rows + (s.rows,))
    return drawn


def _interval(rows, gi: list[int], end, ys: tuple, logy: bool, categorical: bool):
    """``(lo, hi, kind)`` of a series' interval from its columns ``end`` = (lower, upper) where
    every row has both (lower ends raised above 0 on a log axis), else ``(None, None, "")``."""
    if end is None:
        return None, None, ""
    a, b = end
    if not all(_is_num(rows[i].get(a)) and _is_num(rows[i].get(b)) for i in gi):
        return None, None, ""
    lo = tuple(rows[i][a] for i in gi)
    hi = tuple(rows[i][b] for i in gi)
    if logy and any(v <= 0 for v in lo):
        lo = tuple(max(v, min(ys) * 1e-3) for v in lo)
    return lo, hi, _interval_kind(list(lo), list(hi), categorical)


def _xticks(plan: PlotPlan) -> list[float]:
    """The x ticks: one per category, or the distinct values plotted when there are at most
    :data:`MAX_FIXED_TICKS` (empty: the axis's own locator)."""
    if plan.categorical:
        return [float(i) for i in range(len(plan.categories))]
    xs = sorted({v for s in plan.series for v in s.x})
    if 0 < len(xs) <= MAX_FIXED_TICKS:
        return xs
    return []


def check_series(
    rows: Sequence[dict],
    spec: dict,
    series: Sequence[Series],
    *,
    keys: Sequence[str] | None = None,
    categorical: bool | None = None,
) -> list[str]:
    """The problems of drawing ``series`` from ``rows``: a joined series through rows that
    differ in a key (``keys``: :func:`grouping_keys` of the rows), a joined series on a
    categorical x, a line that goes back on x or repeats an x, identical series drawn twice."""
    x = spec["x"]
    if keys is None or categorical is None:
        sub = [r for r in rows if x in r]
        if any(_is_num(r.get(x)) for r in sub):
            sub = [r for r in sub if _is_num(r.get(x))]
        k, derived = grouping_keys(sub, spec) if sub else ([], [])
        keys = k if keys is None else keys
        if categorical is None:
            categorical = _categorical_x(sub, x, k, derived)[0] if sub else False
    problems = []
    seen: dict[tuple, str] = {}
    for s in series:
        name = s.label or s.column
        for part in (s.rows, *s.also_rows):
            problems += _check_joined(rows, s, part, keys, categorical, x, name)
        sig = (s.role, s.column, tuple(s.x), tuple(s.y), s.lo, s.hi)
        if sig in seen:
            problems.append(f"series {name!r} draws the same points as {seen[sig]!r}")
        seen.setdefault(sig, name)
    return problems


def _check_joined(rows, s: Series, part, keys, categorical, x, name) -> list[str]:
    """A joined series' problems on one group of rows."""
    if not s.joined:
        return []
    problems = []
    rs = [rows[i] for i in part]
    mixed = [k for k in keys if len({r.get(k) for r in rs}) > 1]
    if mixed:
        vals = "; ".join(
            f"{k} in {{{', '.join(sorted({_fmt(r.get(k)) for r in rs}))}}}" for k in mixed
        )
        problems.append(f"series {name!r} joins rows that differ in {vals}")
    if categorical and len(part) > 1:
        problems.append(f"series {name!r} joins categories of {x} with a line")
    xs = [r.get(x) for r in rs]
    if len(set(xs)) < len(xs) or (
        all(_is_num(v) for v in xs) and any(b <= a for a, b in zip(xs, xs[1:]))
    ):
        problems.append(f"series {name!r} goes back on {x} or repeats an x value")
    return problems


def check_plot(csv_path: Path, spec: dict) -> PlotPlan:
    """The plan :func:`plot_from_csv` draws for ``csv_path`` and ``spec``, with its problems
    (``plan.ok`` when none)."""
    return plan_plot(_read_rows(Path(csv_path)), spec)
