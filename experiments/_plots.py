"""Plot helpers shared by the head-count and trade-off experiments: a line per series with its
seed band shaded (``fill_between``) in the package style, and the per-group band statistics
(min, median, max over seeds) they draw from the CSV rows."""

from __future__ import annotations

from pathlib import Path

__all__ = ["band_rows", "line_plot", "band_plot"]


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


def line_plot(out, series, *, title, xlabel, ylabel, logx=False, logy=True, vlines=(), xint=False):
    """A figure in the package style: every series ``{"x", "y", "label"}`` with optional
    ``"lo"``/``"hi"`` (a shaded band over seeds), ``"dashed"`` and ``"color"``; ``vlines``
    ``(x, label)``; ``xint``: integer ticks on x (head counts)."""
    from approxtheory.report import STYLE, _plt, _save

    plt = _plt()
    with plt.style.context(str(STYLE)):
        fig, ax = plt.subplots()
        for i, s in enumerate(series):
            color = s.get("color", f"C{i % 7}")
            ax.plot(
                s["x"],
                s["y"],
                linestyle="--" if s.get("dashed") else "-",
                marker=None if s.get("dashed") else "o",
                color=color,
                label=s["label"],
            )
            if "lo" in s:
                ax.fill_between(s["x"], s["lo"], s["hi"], color=color, alpha=0.2, linewidth=0)
        for j, (x, lab) in enumerate(vlines):
            ax.axvline(x, color=f"C{(j + 4) % 7}", linestyle=":", label=lab)
        if logx:
            ax.set_xscale("log", base=2)
        elif xint:
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend()
        _save(fig, out)
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
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = True,
    label: str | None = None,
) -> Path:
    """One line per value of ``group``: the median over seeds of ``key`` against ``x``, with the
    min-max band over seeds shaded (from :func:`band_rows` of ``rows``)."""
    band = band_rows(rows, key, (group, x))
    series = []
    for i, g in enumerate(sorted({b[group] for b in band})):
        pts = sorted((b[x], b) for b in band if b[group] == g)
        series.append(
            {
                "x": [p for p, _ in pts],
                "y": [b[f"{key}_median"] for _, b in pts],
                "lo": [b[f"{key}_min"] for _, b in pts],
                "hi": [b[f"{key}_max"] for _, b in pts],
                "label": f"{label or group} = {g:g}" if isinstance(g, float) else f"{g}",
                "color": f"C{i % 7}",
            }
        )
    xint = all(float(b[x]).is_integer() for b in band)
    return line_plot(
        out, series, title=title, xlabel=xlabel, ylabel=ylabel, logx=logx, logy=logy, xint=xint
    )
