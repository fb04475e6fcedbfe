"""Drawing a planned plot with matplotlib (:func:`draw_plan`, :func:`plot_from_csv`,
:func:`slope_plot`): facets, styles, ticks that do not overlap, deterministic bytes."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..io import atomic_write_bytes
from .plan import (
    _LINESTYLES,
    _MARKERS,
    _MAX_CELLS_ONE_PANEL,
    _MAX_PANELS,
    _NCOLORS,
    STYLE,
    PlotPlan,
    Series,
    _fmt,
    _series_label,
    check_plot,
)


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
        _draw_series(ax, s, st, xs, plan.categorical, slot + off)
    if levels:
        ax.axvline(slot - 0.5, color="0.6", linewidth=0.8)


def _draw_series(ax, s: Series, st: dict, xs: list, categorical: bool, level_x: float) -> None:
    """One series at ``xs`` in style ``st``: a bound's line or ticks, or the measured points with
    their interval (error bars, a band, or a level; a categorical level as a bar at
    ``level_x``)."""
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
        return
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
        return
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
        return
    if s.interval == "band":
        ax.fill_between(xs, s.lo, s.hi, color=st["color"], alpha=0.2, linewidth=0)
    elif s.interval == "level" and categorical:
        # one interval for the whole series: a bar in its own slot, at the points' mean
        mean = sum(s.y) / len(s.y)
        ax.errorbar(
            [level_x],
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


def _legend(fig, ax0, flat: list, n: int) -> None:
    """One legend for the ``n`` panels' labelled artists (each label once): beside the
    figure for panels, beside the axes for long ones, inside otherwise."""
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


def draw_plan(plan: PlotPlan, spec: dict, out: Path) -> Path:
    """Draw a :func:`plan_plot` plan to ``out`` (PNG or PDF by suffix)."""
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
        _label_panels(fig, flat, n, ncols, nrows, plan, spec)
        _x_axis_ticks(fig, ax0, plan)
        if plan.logy:
            _plain_log_y(ax0)
        _save(fig, out)
        plt.close(fig)
    return out


def _label_panels(fig, flat: list, n: int, ncols: int, nrows: int, plan: PlotPlan, spec) -> None:
    """The axis labels (x on the panels with none below, y on the first column), the title(s),
    the legend and (panels) the fixed spacing."""
    xlabel = spec.get("xlabel", plan.x)
    ylabel = spec.get("ylabel", ", ".join(spec["y"]))
    for i, ax in enumerate(flat[:n]):
        if i // ncols == nrows - 1 or i + ncols >= n:  # no panel below: labelled
            ax.set_xlabel(xlabel)
            ax.xaxis.set_tick_params(labelbottom=True)
        if i % ncols == 0:
            ax.set_ylabel(ylabel)
    ax0 = flat[0]
    if n == 1:
        ax0.set_title(spec.get("title", ""))
    else:
        fig.suptitle(spec.get("title", ""))
    _legend(fig, ax0, flat, n)
    if n > 1:  # fixed spacing (shared axes: tick labels on the outer panels only)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.1, top=0.88, wspace=0.1, hspace=0.3)


def _x_axis_ticks(fig, ax0, plan: PlotPlan) -> None:
    """The x ticks: the categories (and the interval slot), the values plotted where they can
    each be named, else the axis's own locator (integers where every x is one)."""
    from matplotlib.ticker import (
        LogFormatterSciNotation,
        LogLocator,
        MaxNLocator,
        NullFormatter,
        ScalarFormatter,
    )

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
            ax0.xaxis.set_major_locator(LogLocator(base=10) if plan.logx else MaxNLocator(nbins=6))
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
