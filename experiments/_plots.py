"""Plot helpers shared by the head-count and trade-off experiments: a line per series with its
seed band shaded (``fill_between``) in the package style, and the per-group band statistics
(min, median, max over seeds) they draw from the CSV rows.

They follow :mod:`approxtheory.plots` (issue 28 item 2): x ticks name the values plotted (at most
12 of them; plain labels 8, 16, 32 on a log axis), overlapping tick labels are thinned, identical
series are drawn once with both labels, categorical x (a configuration index with its names) is
drawn as categories with error bars, and :func:`band_plot` aggregates over seeds only: a column
that tells apart rows of one (group, x, seed) is a key of its own and splits the series."""

from __future__ import annotations

from pathlib import Path

__all__ = ["band_rows", "line_plot", "band_plot", "hidden_keys"]

#: columns a band aggregates over (the replicates)
_REPLICATES = ("seed",)


def band_rows(rows: list, key: str, by: tuple) -> list[dict]:
    """min, median and max of ``key`` over seeds per group ``by`` (the seed band), sorted by
    group."""
    import numpy as np

    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), []).append(float(r[key]))
    return [
        {
            **dict(zip(by, k)),
            f"{key}_min": min(v),
            f"{key}_median": float(np.median(v)),
            f"{key}_max": max(v),
            "seeds": len(v),
        }
        for k, v in sorted(groups.items())
    ]


def hidden_keys(rows: list, by: tuple, key: str) -> list[str]:
    """The columns beyond ``by`` (and the seed, and ``key``) that tell apart rows sharing
    ``by`` and the seed: keys a band over seeds must not aggregate over. Only integer or text
    columns qualify (a measurement differs from row to row anyway); the fewest that make every
    (``by``, keys, seed) unique, in column order."""
    seed = [c for c in _REPLICATES if any(c in r for r in rows)]
    cols: list[str] = []
    for r in rows:
        for c in r:
            if c not in cols and c not in by and c != key and c not in seed:
                cols.append(c)

    def unique(extra: list[str]) -> bool:
        seen = set()
        for r in rows:
            k = tuple(r.get(c) for c in (*by, *extra, *seed))
            if k in seen:
                return False
            seen.add(k)
        return True

    if not seed or unique([]):
        return []

    def discrete(c: str) -> bool:
        vals = [r.get(c) for r in rows]
        return all(
            isinstance(v, str) or (isinstance(v, (int, float)) and float(v).is_integer())
            for v in vals
        ) and len(set(map(str, vals))) < len(vals)

    cand = [c for c in cols if discrete(c)]
    chosen: list[str] = []
    for c in cand:
        chosen.append(c)
        if unique(chosen):
            break
    # drop the ones not needed (keep the result minimal)
    for c in list(chosen):
        rest = [d for d in chosen if d != c]
        if unique(rest):
            chosen = rest
    return chosen if unique(chosen) else []


def _dedupe(series: list) -> list:
    """Identical series (same x, y and band) drawn once, the labels joined."""
    out: list = []
    for s in series:
        sig = (
            tuple(s["x"]),
            tuple(s["y"]),
            tuple(s.get("lo", ())),
            tuple(s.get("hi", ())),
            bool(s.get("dashed")),
        )
        for o in out:
            if o["_sig"] == sig:
                first = o["label"].removesuffix(" (identical)")
                o["label"] = f"{first} / {s['label']} (identical)"
                break
        else:
            out.append({**s, "_sig": sig})
    return out


def _draw_series(ax, s: dict, i: int, n: int, width: float, categories) -> None:
    """Series ``i`` of ``n`` of :func:`line_plot`: a line with its band, or, with
    ``categories``, dodged markers with error bars."""
    color = s.get("color", f"C{i % 7}")
    xs = [float(v) for v in s["x"]]
    if categories is not None:
        off = (i - (n - 1) / 2) * width if n > 1 else 0.0
        xs = [v + off for v in xs]
        err = None
        if "lo" in s:
            err = [
                [max(0.0, y - a) for y, a in zip(s["y"], s["lo"])],
                [max(0.0, b - y) for y, b in zip(s["y"], s["hi"])],
            ]
        ax.errorbar(
            xs,
            s["y"],
            yerr=err,
            linestyle="none",
            marker="o",
            color=color,
            capsize=3,
            label=s["label"],
        )
        return
    ax.plot(
        xs,
        s["y"],
        linestyle="--" if s.get("dashed") else "-",
        marker=None if s.get("dashed") else "o",
        color=color,
        label=s["label"],
    )
    if "lo" in s:
        ax.fill_between(xs, s["lo"], s["hi"], color=color, alpha=0.2, linewidth=0)


def _x_ticks(fig, ax, series: list, logx: bool, xint: bool, categories) -> None:
    """:func:`line_plot`'s x ticks: at the measured x values (a dashed curve's dense grid names
    nothing), thinned; categorical names; or the axis's own locator."""
    from matplotlib.ticker import MaxNLocator, NullFormatter

    from approxtheory.plots import MAX_FIXED_TICKS, _fmt, _thin_ticks

    shown = [s for s in series if not s.get("dashed")] or series
    xs_all = sorted({float(v) for s in shown for v in s["x"]})
    if categories is not None:
        _thin_ticks(fig, ax.xaxis, xs_all, [str(categories.get(v, _fmt(v))) for v in xs_all])
        if xs_all:
            ax.set_xlim(xs_all[0] - 0.5, xs_all[-1] + 0.5)
    elif (logx or xint) and 0 < len(xs_all) <= MAX_FIXED_TICKS:
        _thin_ticks(fig, ax.xaxis, xs_all, [_fmt(v) for v in xs_all])
    elif logx:
        ax.xaxis.set_minor_formatter(NullFormatter())
    elif xint:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def line_plot(
    out,
    series,
    *,
    title,
    xlabel,
    ylabel,
    logx=False,
    logy=True,
    vlines=(),
    xint=False,
    categories=None,
):
    """A figure in the package style: every series ``{"x", "y", "label"}`` with optional
    ``"lo"``/``"hi"`` (a shaded band over seeds), ``"dashed"`` and ``"color"``; ``vlines``
    ``(x, label)``; ``xint``: integer ticks on x (head counts); ``categories``: ``{x value:
    name}``, x is categorical (markers with error bars, dodged, no joining line). Identical
    series are drawn once (the legend names both); at most 12 distinct x values get one tick
    each."""
    from approxtheory.plots import STYLE, _plain_log_y, _plt, _save

    plt = _plt()
    series = _dedupe(list(series))
    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots()
        width = 0.6 / max(1, len(series))
        for i, s in enumerate(series):
            _draw_series(ax, s, i, len(series), width, categories)
        for j, (x, lab) in enumerate(vlines):
            ax.axvline(x, color=f"C{(j + 4) % 7}", linestyle=":", label=lab)
        if logx and categories is None:
            ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
            _plain_log_y(ax)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        handles = ax.get_legend_handles_labels()[0]
        if len(handles) > 4:  # beside the axes, off the data
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        elif handles:
            ax.legend()
        _x_ticks(fig, ax, series, logx, xint, categories)
        _save(fig, Path(out))
        plt.close(fig)
    return out


def band_plot(
    rows: list,
    out: Path,
    *,
    x: str,
    key: str,
    group: str,
    title: str,
    ylabel: str,
    xlabel: str | None = None,
    logx: bool = False,
    logy: bool = True,
    label: str | None = None,
) -> Path:
    """One line per value of ``group`` (and of every :func:`hidden_keys` column: a band
    aggregates over seeds only): the median over seeds of ``key`` against ``x``, with the
    min-max band over seeds shaded (from :func:`band_rows` of ``rows``). An x with a text column
    naming each value (``config`` beside a configuration index) is drawn as categories. The x
    axis is labelled ``xlabel``, by default ``x`` (as in a plot spec)."""
    extra = hidden_keys(rows, (group, x), key)
    band = band_rows(rows, key, (group, *extra, x))
    cats = _category_names(rows, x, (group, *extra), key)
    series = []
    cells = sorted({tuple(b[k] for k in (group, *extra)) for b in band})
    for i, cell in enumerate(cells):
        pts = sorted((b[x], b) for b in band if tuple(b[k] for k in (group, *extra)) == cell)
        g = cell[0]
        head = f"{label or group} = {g:g}" if _number(g) else f"{g}"
        more = ", ".join(
            f"{k} = {v:g}" if _number(v) else f"{k} = {v}" for k, v in zip(extra, cell[1:])
        )
        series.append(
            {
                "x": [p for p, _ in pts],
                "y": [b[f"{key}_median"] for _, b in pts],
                "lo": [b[f"{key}_min"] for _, b in pts],
                "hi": [b[f"{key}_max"] for _, b in pts],
                "label": f"{head}, {more}" if more else head,
                "color": f"C{i % 7}",
            }
        )
    xint = all(float(b[x]).is_integer() for b in band)
    return line_plot(
        out,
        series,
        title=title,
        xlabel=x if xlabel is None else xlabel,
        ylabel=ylabel,
        logx=logx,
        logy=logy,
        xint=xint,
        categories=cats,
    )


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _category_names(rows: list, x: str, by: tuple, key: str) -> dict | None:
    """``{x value: name}`` when a text column other than the keys names the x values (one name
    per x within each group; names of several groups joined with /), else None."""
    cols: list[str] = []
    for r in rows:
        for c in r:
            if c not in cols and c not in (x, key, *by, *_REPLICATES):
                cols.append(c)
    for c in cols:
        vals = [r.get(c) for r in rows]
        if not all(isinstance(v, str) for v in vals):
            continue
        per_cell: dict = {}
        for r in rows:
            per_cell.setdefault((tuple(r.get(b) for b in by), r[x]), set()).add(r[c])
        back: dict = {}
        for (cell, xv), names in per_cell.items():
            for n in names:
                back.setdefault((cell, n), set()).add(xv)
        if all(len(v) == 1 for v in per_cell.values()) and all(len(v) == 1 for v in back.values()):
            names_x: dict = {}
            for (_, xv), names in sorted(per_cell.items(), key=lambda kv: str(kv[0])):
                for n in sorted(names):
                    names_x.setdefault(float(xv), [])
                    if n not in names_x[float(xv)]:
                        names_x[float(xv)].append(n)
            return {k: "/".join(v) for k, v in names_x.items()}
    return None
