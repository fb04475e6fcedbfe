"""The training-adequacy gate: when a trained model may speak for (or against) a claim.

Every check that reads a trained model decides through :func:`training_gate` before its
criterion: an optimisation failure is not an approximation result, so a run in which not even
the *control configurations* trained (those the claim or the paper says succeed: h >= D heads,
two layers at L·h >= D, ...) says nothing about the claim, either way. The control is a set,
not the one configuration the claim puts the transition at: were the claim false (the
transition one head later, say), the next configuration still trains, the gate passes and the
criterion can say ``inconsistent``. Below the gate the
verdict is ``not-checkable`` with what was reached, the paper's magnitude where it reports
one, and the budget known to reach it (:meth:`Gate.reason`); ``inconsistent`` needs a model
that passed the gate in the claim's own regime.

The stated test (written before the gated runs were read; the same on every profile): for
every value of the grid's free keys (``by``, e.g. each T), at least one control configuration
passes, on the min over its seeds (the paper's own statistic, Fig. 1):

1. the metric is finite (NaN / inf is a failure, never a small error);
2. it is at most :data:`TRAINED_NMSE` (NMSE 1 is the constant predictor; above 1e-2 the model
   has learned at most the easy part of the target);
3. where the paper reports a magnitude for that configuration, it is at most
   :data:`PAPER_FACTOR` times the paper's (the same configuration trained as the paper did
   lands there; a run 30-600x worse measures its recipe, not the claim);
4. where the rows record the training-loss tail (``loss_q3``, ``loss_q4``: the mean training loss
   over the third and the last quarter of the steps), the seed that gave the minimum has
   plateaued: ``loss_q4 >= PLATEAU_RATIO * loss_q3`` (a loss still halving in its last quarter
   is still being trained). Rows without these columns are decided on 1-3 (and the record
   says the tail was not recorded).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "TRAINED_NMSE",
    "PAPER_FACTOR",
    "PLATEAU_RATIO",
    "PaperMagnitude",
    "Gate",
    "training_gate",
]

#: a reference configuration counts as trained at most at this validation NMSE
TRAINED_NMSE = 1e-2
#: ... and within this factor of the paper's reported magnitude for the same configuration
PAPER_FACTOR = 10.0
#: a loss whose last-quarter mean is below this fraction of its third-quarter mean is still falling
PLATEAU_RATIO = 0.5


@dataclass(frozen=True)
class PaperMagnitude:
    """What the paper reports for one reference cell: ``value`` and where (table, statistic)."""

    value: float
    where: str


@dataclass
class Gate:
    """The gate's outcome. ``cells``: per value of the free keys (a label such as ``T = 16``),
    the control configuration that came closest (``config``; the first that passed, else the
    lowest metric), its min over seeds (``reached``), the paper's magnitude there (or None), the
    tail ratio loss_q4 / loss_q3 of its best seed (or None) and why each control failed."""

    passed: bool
    reference: str
    cells: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    budget: str = ""
    metric: str = "val_nmse"

    def reason(self, run: str = "") -> str:
        """The not-checkable reason: what was reached, against what, and what would reach it."""
        if self.passed:
            return ""
        return (
            f"undecided at this budget{f' ({run})' if run else ''}: no control configuration "
            f"({self.reference}) passed the training-adequacy gate: "
            + "; ".join(self.failures)
            + f". Gate: min-over-seeds {self.metric} finite, <= {TRAINED_NMSE:g}, within "
            f"x{PAPER_FACTOR:g} of the paper's magnitude where it reports one, and a plateaued "
            f"loss tail where recorded (proofs_check/_gate.py); an untrained model is neither "
            "evidence for the claim nor against it" + (f". {self.budget}" if self.budget else "")
        )

    def scale(self) -> dict:
        """The reference cells' figures for a verdict's ``scale`` record."""
        return {
            label: {
                "config": c["config"],
                "reached": c["reached"],
                "paper": None if c["paper"] is None else c["paper"].value,
                "paper_where": None if c["paper"] is None else c["paper"].where,
                "tail_ratio": c["tail_ratio"],
            }
            for label, c in self.cells.items()
        }


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _control(label: str, rows: list, metric: str, mag: PaperMagnitude | None) -> dict:
    """One control configuration at one value of the free keys: min over seeds and failures."""
    vals = [_num(r.get(metric)) for r in rows]
    finite = [v for v in vals if math.isfinite(v)]
    fails = []
    if len(finite) < len(vals):
        fails.append(f"{label}: a non-finite {metric} ({len(vals) - len(finite)} seed(s))")
    reached = min(finite) if finite else math.nan
    if finite and reached > TRAINED_NMSE:
        fails.append(f"{label}: reached {reached:.3g} > {TRAINED_NMSE:g}")
    if finite and mag is not None and reached > PAPER_FACTOR * mag.value:
        fails.append(
            f"{label}: reached {reached:.3g}, {reached / mag.value:.3g}x the paper's "
            f"{mag.value:.3g} ({mag.where}; allowed x{PAPER_FACTOR:g})"
        )
    tail = None
    best = rows[vals.index(reached)] if finite else None
    if best is not None and "loss_q3" in best and "loss_q4" in best:
        q3, q4 = _num(best["loss_q3"]), _num(best["loss_q4"])
        if math.isfinite(q3) and math.isfinite(q4) and q3 > 0:
            tail = q4 / q3
            if tail < PLATEAU_RATIO:
                fails.append(
                    f"{label}: the training loss still falls (last quarter / third quarter "
                    f"= {tail:.3g} < {PLATEAU_RATIO:g})"
                )
        else:
            fails.append(f"{label}: a non-finite or zero training-loss tail")
    return {"reached": reached, "paper": mag, "tail_ratio": tail, "failures": fails}


def training_gate(
    rows: Sequence[Mapping],
    *,
    control: Callable[[Mapping], bool],
    describe: str,
    by: Sequence[str] = ("T",),
    config: Sequence[str] = ("heads",),
    paper: Mapping[tuple, PaperMagnitude] | None = None,
    metric: str = "val_nmse",
    budget: str = "",
) -> Gate:
    """The gate (module docstring) on ``rows``: the control configurations are the rows for
    which ``control(row)`` holds (``describe`` names them), told apart by the keys ``config``,
    one decision per value of the keys ``by``; ``paper`` maps a key tuple (ints: the values of
    ``by`` then of ``config``) to the paper's magnitude there. A run with no control row does
    not pass (nothing says it trained)."""
    paper = dict(paper or {})
    groups: dict[tuple, dict[tuple, list[Mapping]]] = {}
    for r in rows:
        if control(r):
            k = tuple(int(r[x]) for x in by)
            c = tuple(int(r[x]) for x in config)
            groups.setdefault(k, {}).setdefault(c, []).append(r)
    gate = Gate(passed=True, reference=describe, budget=budget, metric=metric)
    if not groups:
        gate.passed = False
        gate.failures.append("no row of a control configuration was run")
        return gate
    for key in sorted(groups):
        label = ", ".join(f"{k} = {v}" for k, v in zip(by, key))
        tried = {}
        for c in sorted(groups[key]):
            clabel = ", ".join(f"{k} = {v}" for k, v in zip((*by, *config), (*key, *c)))
            tried[c] = _control(clabel, groups[key][c], metric, paper.get((*key, *c)))
        ok = [c for c, t in tried.items() if not t["failures"]]
        pick = (
            ok[0]
            if ok
            else min(tried, key=lambda c: (math.isnan(tried[c]["reached"]), tried[c]["reached"]))
        )
        cell = dict(tried[pick])
        cell["config"] = dict(zip(config, pick))
        cell["failures"] = [] if ok else [f for t in tried.values() for f in t["failures"]]
        gate.cells[label] = cell
        gate.failures += cell["failures"]
    gate.passed = not gate.failures
    return gate
