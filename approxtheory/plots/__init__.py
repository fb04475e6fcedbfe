"""Plots drawn from the CSV files only, each saying one thing.

:func:`plot_from_csv` reads a tidy CSV and a plot spec (``x``, ``y``, optional ``bound``,
``group``, ``title``, ``xlabel`` (default: the ``x`` column's name), ``ylabel``, ``logx``,
``logy``) and plans the figure from the CSV before drawing it (:func:`plan_plot`):

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

The package: :mod:`.plan` (reading and planning, no matplotlib) and :mod:`.draw` (drawing).
"""

from __future__ import annotations

from .draw import (  # noqa: F401  (experiments/_plots.py and the tests use the private helpers)
    _log_labels,
    _overlapping,
    _plain_log_y,
    _plt,
    _save,
    _step_labels,
    _thin_ticks,
    draw_plan,
    plot_from_csv,
    slope_plot,
)
from .plan import (  # noqa: F401
    MAX_FIXED_TICKS,
    STYLE,
    PlotPlan,
    Series,
    _fmt,
    _read_rows,
    check_plot,
    check_series,
    grouping_keys,
    plan_plot,
)

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
