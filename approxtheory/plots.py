"""Plots drawn from the CSV files only, each saying one thing (issue 28 item 2).

:func:`plot_from_csv` reads a tidy CSV and a plot spec (``x``, ``y``, optional ``bound``,
``group``, ``title``, ``xlabel``, ``ylabel``, ``logx``, ``logy``) and plans the figure from the
CSV before drawing it (:func:`plan_plot`):

* **series are grouped by every varying key**: a column that is not the x axis, not a plotted
  value (a ``y`` column, the bound, an interval end) and varies over the rows is a key, unless it
  is derived, i.e. a function of x and the remaining keys (a label such as ``config`` next to
  ``config_index``, a flag such as ``holds``, a measurement nobody plots); a line joins only rows
  that agree on every key. The spec may name the keys itself (``keys``) or columns to ignore
  (``ignore``);
* **categorical x** (strings, or an index / seed column) is drawn as categories: markers, no
  joining lines, the groups dodged side by side, tick labels naming the categories;
* **intervals** (``y_lo``/``y_hi``, ``y_low``/``y_high``, ``y_min``/``y_max``,
  ``y_ci_low``/``y_ci_high``, or ``lo``/``hi`` and ``ci_low``/``ci_high`` for the first plotted
  value) are drawn as a band on a line, as error bars on categories, and, when the interval does
  not change along x (an interval of a mean over the points), as one shaded level;
* **ticks name the values plotted**: at most 12 distinct x values get exactly those ticks (plain
  labels ``8, 16, 32``, no ``8×10⁰``), more get integer or decade ticks; tick labels that would
  overlap are thinned until they do not;
* **no duplicate lines**: series with identical points are drawn once, the legend naming every
  group they stand for.

:func:`check_plot` returns the plan with the problems a plot of it would have (a line through
rows that differ in a key, a joined categorical axis, a duplicate series, a line that goes back
on x); :func:`check_series` checks any list of series against the CSV's rows, so a plan made
elsewhere (the old grouping by ``group`` alone) can be checked the same way.

Output is deterministic: the same CSV and spec give the same bytes (no metadata, no timestamps).
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import ApproxTheoryError
from .io import atomic_write_bytes

__all__ = [
    "plot_from_csv",
    "slope_plot",
    "plan_plot",
    "check_plot",
    "check_series",
    "grouping_keys",
    "PlotPlan",
    "Series",
    "STYLE",
    "MAX_FIXED_TICKS",
]

STYLE = Path(__file__).with_name("plot.mplstyle")
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
    sub = [rows[i] for i in idx]
    cols = _columns(sub)
    values, ends = _value_columns(spec, cols)
    keys, derived = grouping_keys(sub, spec) if sub else ([], [])
    categorical, labels = _categorical_x(sub, x, keys, derived) if sub else (False, {})
    if categorical:
        logx = False
        cats: list = []
        for r in sub:
            if r[x] not in cats:
                cats.append(r[x])
        if all(isinstance(c, float) for c in cats):
            cats.sort()
    else:
        cats = []
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
    for col, role in columns:
        drawn: list[Series] = []
        for g in order:
            gi = [i for i in groups[g] if _is_num(rows[i].get(col))]
            if logy:
                gi = [i for i in gi if rows[i][col] > 0]
            if not gi:
                continue
            gi.sort(key=lambda i: (xpos(rows[i][x]), i))
            kv = tuple((k, v) for k, v in zip(keys, g) if v is not None)
            xs = tuple(xpos(rows[i][x]) for i in gi)
            ys = tuple(rows[i][col] for i in gi)
            lo = hi = None
            kind = ""
            if role == "measured" and col in ends:
                a, b = ends[col]
                if all(_is_num(rows[i].get(a)) and _is_num(rows[i].get(b)) for i in gi):
                    lo = tuple(rows[i][a] for i in gi)
                    hi = tuple(rows[i][b] for i in gi)
                    if logy and any(v <= 0 for v in lo):
                        lo = tuple(max(v, min(ys) * 1e-3) for v in lo)
                    kind = _interval_kind(list(lo), list(hi), categorical)
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
        series += drawn
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


# ----------------------------------------------------------------------------- drawing


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    """The figure's bytes, atomically: no software, creator or date metadata, so the same
    figure gives the same bytes."""
    buf = io.BytesIO()
    fmt = path.suffix.lstrip(".") or "png"
    meta = (
        {"Software": None}
        if fmt == "png"
        else {"Creator": None, "Producer": None, "CreationDate": None}
    )
    fig.savefig(buf, format=fmt, metadata=meta)
    return atomic_write_bytes(path, buf.getvalue())


def _overlapping(fig, labels) -> bool:
    """Whether any two visible, non-empty tick labels overlap on the rendered figure."""
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text()]
    return any(boxes[i].overlaps(boxes[j]) for i in range(len(boxes)) for j in range(i))


def _thin_ticks(
    fig, axis, ticks: list[float], labels: list[str], rotate: bool = False, thin: bool = True
) -> int:
    """Keep every k-th tick (k = 1, 2, ...) until the labels do not overlap; the k used.
    ``rotate``: category names are first turned upright (all of them kept if that is enough);
    ``thin=False``: only say (2) whether all ticks overlap, thinning nothing."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    k = 1
    turned = not rotate
    while True:
        kept = list(range(0, len(ticks), k))
        axis.set_major_locator(FixedLocator([ticks[i] for i in kept]))
        axis.set_major_formatter(FixedFormatter([labels[i] for i in kept]))
        axis.set_minor_locator(NullLocator())
        fig.draw_without_rendering()
        if k >= len(ticks) or not _overlapping(fig, axis.get_ticklabels()):
            return k
        if not thin:
            return 2
        if not turned:
            turned = True
            for t in axis.get_ticklabels():
                t.set_rotation(90)
            axis.set_tick_params(labelrotation=90)
            fig.draw_without_rendering()
            if not _overlapping(fig, axis.get_ticklabels()):
                return k
        k += 1


def plot_from_csv(csv_path: Path, spec: dict, out: Path) -> Path:
    """Draw ``spec`` from the CSV at ``csv_path`` to ``out`` (PNG or PDF by suffix) and return
    ``out``: measurements as markers (joined by lines along a numeric x), intervals as bands or
    error bars, the claimed bound dashed; log-log by default. See :func:`plan_plot` for what is
    drawn and :func:`check_plot` for the checks."""
    plan = check_plot(csv_path, spec)
    draw_plan(plan, spec, Path(out))
    return Path(out)


def _members(s: Series) -> list[tuple[tuple[str, Any], ...]]:
    return [s.keys, *s.also]


def _facets(plan: PlotPlan, spec: dict) -> tuple[list[str], list[tuple[str, list[Series]]]]:
    """``(facet keys, [(panel title, its series)])``: with keys beyond the spec's group that
    make more than :data:`_MAX_CELLS_ONE_PANEL` cells, one panel per cell (the group's values
    as the series in each); else one panel with every series."""
    group: str = spec.get("group") or ""
    extra = [k for k in plan.keys if k != group]
    cells: list[tuple] = []
    for s in plan.series:
        for m in _members(s):
            c = tuple(dict(m).get(k) for k in extra)
            if c not in cells:
                cells.append(c)
    if not extra or group not in plan.keys or not 1 < len(cells) <= _MAX_PANELS:
        return [], [("", list(plan.series))]
    if len(cells) <= _MAX_CELLS_ONE_PANEL:
        return [], [("", list(plan.series))]
    cells.sort(key=lambda c: tuple((str(type(v)), v if v is not None else "") for v in c))
    panels = []
    for c in cells:
        ss: list[Series] = []
        for s in plan.series:
            mem = [m for m in _members(s) if tuple(dict(m).get(k) for k in extra) == c]
            if not mem:
                continue
            strip = [tuple(kv for kv in m if kv[0] not in extra) for m in mem]
            t = replace(s, keys=strip[0], also=tuple(strip[1:]), also_rows=())
            multi = len({x.column for x in plan.series if x.role == "measured"}) > 1
            ss.append(replace(t, label=_series_label(t, multi or not t.keys)))
        title = ", ".join(f"{k}={_fmt(v)}" for k, v in zip(extra, c) if v is not None)
        panels.append((title, ss))
    return extra, panels


def _style(plan: PlotPlan, spec: dict, faceted: bool) -> dict:
    """Colour, marker and line style per series (by its first group's keys and value column).
    In panels, colour follows the spec's group; in one panel with keys beyond the group, colour
    follows the other keys (a cell and its bound share one) and the marker the group; a bound
    standing for several groups is grey."""
    group: str = spec.get("group") or ""
    extra = [k for k in plan.keys if k != group]
    ys = [y for y in spec["y"] if any(s.column == y for s in plan.series)]
    cells: list = []
    gvals: list = []
    for s in plan.series:
        for m in _members(s):
            kv = dict(m)
            cell = tuple(kv.get(k) for k in extra) if extra and not faceted else ()
            if cell not in cells:
                cells.append(cell)
            gv = kv.get(group) if group else None
            if gv not in gvals:
                gvals.append(gv)

    def style(s: Series) -> dict:
        kv = dict(s.keys)
        if faceted or not extra:
            ci = gvals.index(kv.get(group)) if group in plan.keys else 0
            mi = ys.index(s.column) if s.column in ys and len(ys) > 1 else ci
        else:
            ci = cells.index(tuple(kv.get(k) for k in extra))
            mi = gvals.index(kv.get(group)) if group in plan.keys else 0
        if not plan.keys and s.column in ys:
            ci = ys.index(s.column)
        color = f"C{ci % _NCOLORS}"
        if (
            s.role == "bound"
            and group in plan.keys
            and len({dict(m).get(group) for m in _members(s)}) > 1
        ):
            color = "0.35"
        st = {
            "color": color,
            "marker": _MARKERS[mi % len(_MARKERS)],
            "linestyle": "--" if s.role == "bound" else _LINESTYLES[(ci // _NCOLORS) % 4],
        }
        # two series never look alike: a look taken by another label moves to the next colour
        bump = 0
        while used.get((st["color"], st["marker"], st["linestyle"]), s.label) != s.label:
            bump += 1
            if bump > _NCOLORS * len(_MARKERS):
                break
            st["color"] = f"C{(ci + bump) % _NCOLORS}"
            st["marker"] = _MARKERS[(mi + bump // _NCOLORS) % len(_MARKERS)]
        used.setdefault((st["color"], st["marker"], st["linestyle"]), s.label)
        return st

    used: dict[tuple, str] = {}
    return {"style": style}


def _draw_axes(ax, plan: PlotPlan, ss: list[Series], style) -> None:
    """One panel: its series, intervals and (categorical x) the interval slot."""
    # categorical x: the groups dodged side by side within a category
    tags: list = []
    for s in ss:
        if s.role == "measured" and s.keys not in tags:
            tags.append(s.keys)
    width = 0.6 / max(1, len(tags))
    levels = [s for s in ss if s.interval == "level" and plan.categorical]
    slot = float(len(plan.categories))  # the interval slot right of the categories
    for s in ss:
        st = style(s)
        xs = list(s.x)
        off = 0.0
        if plan.categorical and len(tags) > 1 and s.keys in tags:
            off = (tags.index(s.keys) - (len(tags) - 1) / 2) * width
            xs = [v + off for v in xs]
        ls = st["linestyle"] if s.joined else "none"
        if s.role == "bound":
            ax.plot(
                xs,
                s.y,
                linestyle=ls,
                marker=None if s.joined else "_",
                markersize=12,
                color=st["color"],
                label=s.label,
            )
            continue
        if s.interval == "errorbar" and s.lo is not None and s.hi is not None:
            err = [
                [max(0.0, y - a) for y, a in zip(s.y, s.lo)],
                [max(0.0, b - y) for y, b in zip(s.y, s.hi)],
            ]
            ax.errorbar(
                xs,
                s.y,
                yerr=err,
                linestyle=ls,
                marker=st["marker"],
                color=st["color"],
                capsize=3,
                label=s.label,
            )
            continue
        ax.plot(
            xs,
            s.y,
            linestyle=ls,
            marker=st["marker"],
            color=st["color"],
            alpha=0.9,
            label=s.label,
        )
        if s.lo is None or s.hi is None:
            continue
        if s.interval == "band":
            ax.fill_between(xs, s.lo, s.hi, color=st["color"], alpha=0.2, linewidth=0)
        elif s.interval == "level" and plan.categorical:
            # one interval for the whole series: a bar in its own slot, at the points' mean
            mean = sum(s.y) / len(s.y)
            ax.errorbar(
                [slot + off],
                [mean],
                yerr=[[max(0.0, mean - s.lo[0])], [max(0.0, s.hi[0] - mean)]],
                marker=st["marker"],
                markerfacecolor="white",
                color=st["color"],
                capsize=4,
                linestyle="none",
            )
        elif s.interval == "level":
            ax.fill_between(
                [min(xs), max(xs)],
                [s.lo[0]] * 2,
                [s.hi[0]] * 2,
                color=st["color"],
                alpha=0.15,
                linewidth=0,
            )
    if levels:
        ax.axvline(slot - 0.5, color="0.6", linewidth=0.8)


def _log_labels(ticks: list[float]) -> list[str]:
    """Plain labels (8, 16, 32); powers of ten over more than four decades as 10^k."""
    pows = [round(math.log10(t)) for t in ticks if t > 0]
    if (
        len(pows) == len(ticks)
        and all(math.isclose(10.0**p, t) for p, t in zip(pows, ticks))
        and max(pows) - min(pows) > 4
    ):
        return [f"$10^{{{p}}}$" for p in pows]
    return [_fmt(t) for t in ticks]


def _step_labels(ticks: list[float]) -> list[str]:
    """Tick labels with as many decimals as the tick step needs (-0.5, -0.4999, never six
    digits of noise)."""
    if len(ticks) < 2:
        return [f"{t:.3g}" for t in ticks]
    step = min(abs(b - a) for a, b in zip(ticks, ticks[1:])) or 1.0
    dec = max(0, -math.floor(math.log10(step) + 1e-9))
    return [f"{t:.{dec}f}".replace("-0" + "." + "0" * dec, "0" + "." + "0" * dec) for t in ticks]


def _plain_log_y(ax, which: str = "y") -> None:
    """A log axis over less than two decades: ticks at 1-9 (one decade) or 1, 2, 5 times the
    powers of ten, labelled plainly (0.2, 0.3), not 2×10⁻¹."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    if not (lo > 0 and hi > lo) or hi / lo >= 100:
        return
    axis = ax.yaxis if which == "y" else ax.xaxis
    subs = tuple(range(1, 10)) if hi / lo < 10 else (1.0, 2.0, 5.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def draw_plan(plan: PlotPlan, spec: dict, out: Path) -> Path:
    """Draw a :func:`plan_plot` plan to ``out`` (PNG or PDF by suffix)."""
    from matplotlib.ticker import (
        LogFormatterSciNotation,
        LogLocator,
        MaxNLocator,
        NullFormatter,
        ScalarFormatter,
    )

    plt = _plt()
    facet_keys, panels = _facets(plan, spec)
    n = len(panels)
    ncols = 1 if n == 1 else min(3, n)
    nrows = -(-n // ncols)
    with plt.style.context(str(STYLE)):
        if n == 1:
            fig, axes = plt.subplots(squeeze=False)
        else:
            fig, axes = plt.subplots(
                nrows,
                ncols,
                sharex=True,
                sharey=True,
                squeeze=False,
                figsize=(2.3 * ncols + 0.8, 1.9 * nrows + 0.9),
            )
        style = _style(plan, spec, bool(facet_keys))["style"]
        flat = list(axes.flat)
        for ax, (title, ss) in zip(flat, panels):
            _draw_axes(ax, plan, ss, style)
            if n > 1:
                ax.set_title(title, fontsize=8)
        for ax in flat[n:]:
            ax.set_visible(False)
        ax0 = flat[0]
        if plan.logx:
            ax0.set_xscale("log")
        if plan.logy:
            ax0.set_yscale("log")
        xlabel = spec.get("xlabel", plan.x)
        ylabel = spec.get("ylabel", ", ".join(spec["y"]))
        for i, ax in enumerate(flat[:n]):
            if i // ncols == nrows - 1 or i + ncols >= n:  # no panel below: labelled
                ax.set_xlabel(xlabel)
                ax.xaxis.set_tick_params(labelbottom=True)
            if i % ncols == 0:
                ax.set_ylabel(ylabel)
        if n == 1:
            ax0.set_title(spec.get("title", ""))
        else:
            fig.suptitle(spec.get("title", ""))
        handles, labels = [], []
        for ax in flat[:n]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        if handles:  # nothing to label: no legend (and no warning)
            if n > 1:
                fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.93))
            elif len(handles) > 3 or any(len(lab) > 28 for lab in labels):
                ax0.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0))
            else:
                ax0.legend(handles, labels)
        if n > 1:  # fixed spacing (shared axes: tick labels on the outer panels only)
            fig.subplots_adjust(left=0.1, right=0.98, bottom=0.1, top=0.88, wspace=0.1, hspace=0.3)
        ticks = list(plan.xticks)
        if plan.categorical:
            labs = list(plan.category_labels)
            if any(s.interval == "level" for s in plan.series):
                ticks.append(float(len(plan.categories)))
                labs.append("interval")
            ax0.set_xlim(-0.5, len(ticks) - 0.5)
            _thin_ticks(fig, ax0.xaxis, ticks, labs, rotate=True)
        elif ticks:
            labs = _log_labels(ticks) if plan.logx else [_fmt(t) for t in ticks]
            if _thin_ticks(fig, ax0.xaxis, ticks, labs, thin=False) > 1:
                ticks = []  # too many values to name each: the axis's own (decade) ticks
                ax0.xaxis.set_major_locator(
                    LogLocator(base=10) if plan.logx else MaxNLocator(nbins=6)
                )
                ax0.xaxis.set_major_formatter(
                    LogFormatterSciNotation() if plan.logx else ScalarFormatter()
                )
                if plan.logx:
                    ax0.xaxis.set_minor_locator(LogLocator(base=10, subs="auto"))
                    ax0.xaxis.set_minor_formatter(NullFormatter())
                    _plain_log_y(ax0, "x")
        if ticks or plan.categorical:
            pass
        elif (
            not plan.logx
            and plan.series
            and all(float(v).is_integer() for s in plan.series for v in s.x)
        ):
            ax0.xaxis.set_major_locator(MaxNLocator(integer=True))
        elif plan.logx:
            ax0.xaxis.set_minor_formatter(NullFormatter())
        if plan.logy:
            _plain_log_y(ax0)
        _save(fig, out)
        plt.close(fig)
    return out


def slope_plot(slopes: Sequence[dict], title: str, out: Path) -> Path:
    """Fitted exponents with their confidence intervals next to the predicted ones: one row per
    fit, its label wrapped, at most five x ticks with short labels (never overlapping)."""
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    labels = [textwrap.fill(str(s.get("label", "")), 34) for s in slopes]
    lines = sum(max(1, lab.count("\n") + 1) for lab in labels)
    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots(figsize=(5.2, 0.9 + 0.28 * lines + 0.2 * len(slopes)))
        ends = []
        for i, s in enumerate(slopes):
            f, lo, hi = (float(s.get(k, math.nan)) for k in ("fitted", "lo", "hi"))
            if math.isfinite(f):
                lo = lo if math.isfinite(lo) else f
                hi = hi if math.isfinite(hi) else f
                ax.errorbar(
                    [f],
                    [i],
                    xerr=[[max(0.0, f - lo)], [max(0.0, hi - f)]],
                    fmt="o",
                    color="C0",
                    capsize=3,
                    label="fitted (CI)" if i == 0 else None,
                )
                ends += [lo, hi, f]
            p = s.get("predicted")
            if p is not None and math.isfinite(float(p)):
                ax.plot(
                    [float(p)],
                    [i],
                    marker="x",
                    color="C1",
                    markersize=8,
                    linestyle="none",
                    label="predicted"
                    if not any(lab == "predicted" for lab in ax.get_legend_handles_labels()[1])
                    else None,
                )
                ends.append(float(p))
        # a span of at least 2e-4 (a zero-width interval still has an axis); the tick labels
        # carry the digits their step needs
        if ends:
            a, b = min(ends), max(ends)
            mid, half = (a + b) / 2, max((b - a) / 2 * 1.15, 1e-4)
            ax.set_xlim(mid - half, mid + half)
        ax.set_ylim(-0.6, len(slopes) - 0.4)
        ax.set_yticks(range(len(slopes)), labels)
        ax.invert_yaxis()
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.set_xlabel("exponent")
        ax.set_title(title)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        fig.draw_without_rendering()
        ticks = [float(t) for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        _thin_ticks(fig, ax.xaxis, ticks, _step_labels(ticks))
        _save(fig, out)
        plt.close(fig)
    return out
