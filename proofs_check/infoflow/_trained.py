"""What the trained IF-* checks share: the paper's recipe and reported results, the non-finite
row failures and the training-length text."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import Verdict
from .._pipeline import Evidence, Run

#: the paper's recipe (digest §6), said in a gated InfoFlow verdict
IF_RECIPE = (
    "The paper's recipe (digest §6, [Q1]): AdamW lr 1e-3, weight decay 1e-2, cosine annealing, "
    "best validation NMSE over training, several seeds; §6.1 at d = 4, T = 64; batch size and "
    "training length not stated (§6.4: 2000 epochs)"
)
#: what the paper reports per trained InfoFlow experiment (digest §6, §7)
IF_PAPER = {
    "infoflow_pmax_heads": "§6.1: TASK-PMAX(D), d = 4, T = 64, D in 2..6, AdamW lr 1e-3, wd "
    "1e-2: (D, D) best validation NMSE of order 1e-4 to 1e-3; one head fewer in either layer: "
    "two to three orders of magnitude worse for D <= 4, about one order at D = 5, a few times "
    "at D = 6",
    "infoflow_tri_growth": "§6.2: TASK-TRI, d = 2, (2,2)/E = 24, (4,4)/E = 24, (4,4)/E = 48, T "
    "in {3, 8, 16, 32, 64}: NMSE of order 1e-3 at T = 3, of order 0.1 at T = 8, close to 1 at "
    "T >= 16, whatever the size",
    "infoflow_spa_weights": "§6.4: one layer, one head, positions, T = 10, x ~ N(0, I_2), "
    "AdamW 1e-3, 2000 epochs: CLS weights about 1/3 on positions 1-3, about 0 elsewhere; the "
    "validation MSE is not given",
    "infoflow_kth_depth": "no paper figure (digest §7 item 4, the digest's prediction): the "
    "two-layer (1, 1) model below NMSE 1e-2 at T in {4, 8, 16, 32} (Adam lr 1e-3, batch 256, "
    "3000 steps); one layer at least 10x worse at T = 32",
    "infoflow_pmax_depth": "no paper figure (digest §7 item 4 on TASK-PMAX(1), the digest's "
    "candidate separation task)",
}


def decided_evidence(
    experiments: tuple[str, ...], gate, criterion: Callable[[Run], Verdict]
) -> Evidence:
    """A trained IF-* check's evidence whose criterion also decides below the gate where a
    failed gate cannot change the outcome (``decides_below_gate``): its experiments, gate and
    criterion, beside the paper's report (:data:`IF_PAPER`)."""
    return Evidence(
        experiments=experiments,
        gate=gate,
        criterion=criterion,
        paper=IF_PAPER,
        decides_below_gate=True,
    )


#: the paper's (D, D) magnitude (digest §6.1: "order 1e-4 to 1e-3"; its upper end) at T = 64
P3_PAPER_NMSE = 1e-3


def _nonfinite(rows, fields, label) -> list:
    """One failure message per row whose measured ``fields`` hold NaN or inf (a measurement
    that failed is a failure of the criterion, never a pass nor an undecided run)."""
    out = []
    for r in rows:
        bad = [f for f in fields if f in r and not np.isfinite(float(r[f]))]
        if bad:
            out.append(f"{label(r)}: non-finite {', '.join(f'{f} = {r[f]}' for f in bad)}")
    return out


def _training_text(raw) -> str:
    """The training steps and width E of infoflow_pmax_heads rows: "16000 steps", or per D where
    the profile trains the D values for different numbers of steps ("steps 16000 (D = 2), 32000
    (D = 3)"); the width is named the same way where the rows carry one ("E = 32" or "E 32
    (D = 2), 48 (D = 3)")."""

    def per_d(key: str, one: str, label: str) -> str | None:
        by: dict = {}
        for r in raw:
            if key in r:
                by.setdefault(int(r["D"]), set()).add(int(r[key]))
        allv = sorted({v for vs in by.values() for v in vs})
        if not allv:
            return None
        if len(allv) == 1:
            return one.format(allv[0])
        return f"{label} " + ", ".join(
            f"{'/'.join(map(str, sorted(vs)))} (D = {D})" for D, vs in sorted(by.items())
        )

    parts = [per_d("steps", "{} steps", "steps"), per_d("E", "E = {}", "E")]
    return ", ".join(p for p in parts if p)
