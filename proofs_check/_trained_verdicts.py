"""Trained verdicts' shared helpers: the gate and the scale. Every check that reads a
trained model decides through the shared training-adequacy gate (proofs_check/_gate.py) before
its criterion and records its scale: what was run beside what the paper reports. The helpers are
generic (the trade-off, InfoFlow, Prism and identification checks use them): the run figures
(:func:`run_figures`, :func:`run_text`), the scale record (:func:`trained_scale`,
:func:`ungated_scale`), the gated not-checkable verdict (:func:`gated_verdict`) and the gate on a
cross-entropy (:func:`loss_gate`)."""

from __future__ import annotations

from typing import Any

from ._core import Verdict, rows_source

#: the run figures a scale record lists, where the rows have them
RUN_KEYS = (
    "T",
    "L",
    "D",
    "d",
    "budget",
    "heads",
    "head_dim",
    "h1",
    "h2",
    "E",
    "width",
    "total_width",
    "hidden",
    "layers",
    "params",
    "steps",
    "batch",
)


def run_figures(rows, metric: str = "val_nmse", keys=RUN_KEYS) -> dict:
    """What a trained run was: the values of ``keys`` its rows hold (sorted, as integers), its
    learning rates, its number of seeds and its best (smallest finite) ``metric``."""
    import math

    def num(v):
        try:
            return float(v)
        except (TypeError, ValueError):
            return math.nan

    out: dict[str, Any] = {}
    for k in keys:
        vals = {int(num(r[k])) for r in rows if k in r and math.isfinite(num(r[k]))}
        if vals:
            out[k] = sorted(vals)
    lrs = sorted({num(r["lr"]) for r in rows if "lr" in r and math.isfinite(num(r["lr"]))})
    if lrs:
        out["lr"] = lrs
    out["seeds"] = len({str(r["seed"]) for r in rows if "seed" in r})
    fin = [num(r.get(metric)) for r in rows if math.isfinite(num(r.get(metric)))]
    out[f"best_{metric}"] = min(fin) if fin else None
    return out


def run_text(figures: dict) -> str:
    """What a trained run was (:func:`run_figures`, or head-count's) as evidence text: every
    figure named, a grid's values joined by ``/``, rates and the best metric at 3 significant
    digits (``T 8/16, steps 500, lr 0.003, 2 seeds, best val_nmse 0.0115``)."""

    def num(v) -> str:
        if isinstance(v, float):
            return f"{v:.3g}"
        return str(v)

    out = []
    for k, v in figures.items():
        if k == "seeds":
            out.append(f"{v} seed{'' if v == 1 else 's'}")
        elif k.startswith("best_"):
            out.append(f"best {k[5:]} " + ("none finite" if v is None else num(float(v))))
        elif isinstance(v, (list, tuple)):
            out.append(f"{k} " + "/".join(num(x) for x in v))
        else:
            out.append(f"{k} {num(v)}")
    return ", ".join(out)


def trained_scale(gates: list, rows_by: dict, metric: str = "val_nmse", paper=None) -> dict:
    """A trained verdict's ``scale``: per experiment, what was run (:func:`run_figures`), the
    gate's reference (the control configurations), whether it passed, per reference cell what
    was reached against the paper's figure (:meth:`Gate.scale`), and what the paper reports
    (``paper``: experiment -> text)."""
    paper = paper or {}

    def cells(g):
        out = g.scale()
        for label, c in g.cells.items():  # a cross-entropy gate's level in nats too
            if "reached_loss" in c:
                out[label]["reached_loss"] = c["reached_loss"]
        return out

    return {
        name: {
            "run": run_figures(rows_by[name], metric),
            "reference": g.reference,
            "gate_passed": g.passed,
            "metric": g.metric,
            "cells": cells(g),
            "paper": paper.get(name, ""),
            # a per-configuration label ("infoflow_pmax_heads D = 2") reads its experiment's
            "source": rows_source(name) or rows_source(name.split(" ", 1)[0]),
        }
        for name, g in gates
    }


def ungated_scale(name: str, rows, why: str, metric: str = "val_nmse", paper: str = "") -> dict:
    """The ``scale`` record of a check that reads a trained run without gating it (``why``: the
    claim is about the optimiser's steps, not about what the trained model computes)."""
    return {
        name: {
            "run": run_figures(rows, metric),
            "reference": f"not gated: {why}",
            "gate_passed": None,
            "cells": {},
            "paper": paper,
        }
    }


def gated_verdict(
    cid: str,
    gates: list,
    rows_by: dict,
    covered: str,
    *,
    metric: str = "val_nmse",
    paper=None,
    measured: str = "",
    rows=None,
    plot=None,
    prefix: str = "",
) -> Verdict | None:
    """The not-checkable verdict of a trained check whose gates did not all pass (None when they
    did): what was reached, the paper's figure, the known recipe (each gate's ``budget``), what
    was run and, with ``measured``, the measurement the criterion would have read (shown, not
    decided)."""
    failed = [(name, g) for name, g in gates if not g.passed]
    if not failed:
        return None
    ran = "; ".join(f"{name}: {run_text(run_figures(rows_by[name], metric))}" for name, _ in failed)
    return Verdict(
        cid,
        "not-checkable",
        prefix
        + " ".join(f"[{name}] {g.reason()}" for name, g in failed)
        + f" (ran: {ran})"
        + (f". Measured anyway (not decided): {measured}" if measured else ""),
        covered=covered + "; gated: the criterion was not applied",
        rows=list(rows or []),
        plot=plot,
        scope="none",
        scale=trained_scale(gates, rows_by, metric, paper),
    )


def _ce_level_name(loss: str) -> str:
    from ._gate import TRAINED_NMSE

    return f"{loss}·{TRAINED_NMSE:g}/ln V"


def loss_gate(rows, *, control, describe, by=None, config=(), budget="", loss="val_loss"):
    """The shared gate (:func:`._gate.training_gate`) on a cross-entropy ``loss``, one decision
    per value of the keys ``by`` (default: per T where every row has one, else one). The gate's
    level test is an NMSE's (<= TRAINED_NMSE, NMSE 1 = the constant predictor); a cross-entropy
    has no such scale (its floor, the text's entropy, is unknown), so the level tested is the
    uniform predictor's: each row gets the column ``loss·TRAINED_NMSE/ln V`` (``vocab`` = V),
    at most TRAINED_NMSE exactly when the loss is below ln V (the model learned more than an
    untrained guess). The finite and plateau tests (``loss_q3``, ``loss_q4``) are the gate's own.
    A row without ``vocab`` gets NaN: a failure, never a pass."""
    import math

    from ._gate import TRAINED_NMSE, training_gate

    name = _ce_level_name(loss)
    derived = []
    for r in rows:
        x = dict(r)
        try:
            v, V = float(r[loss]), float(r["vocab"])
        except (KeyError, TypeError, ValueError):
            v, V = math.nan, math.nan
        x[name] = TRAINED_NMSE * v / math.log(V) if V > 1 else math.nan
        derived.append(x)
    gate = training_gate(
        derived,
        control=control,
        describe=describe,
        by=present_keys(rows, ("T",)) if by is None else by,
        config=config,
        metric=name,
        budget=budget,
    )
    vocab = {float(r["vocab"]) for r in rows if "vocab" in r}
    if len(vocab) == 1 and min(vocab) > 1:  # the level back in nats, for the scale record
        lnV = math.log(min(vocab))
        for c in gate.cells.values():
            c["reached_loss"] = c["reached"] * lnV / TRAINED_NMSE
    return gate


def present_keys(rows, keys) -> tuple:
    """The keys of ``keys`` that every row holds (a gate's free keys)."""
    return tuple(k for k in keys if rows and all(k in r for r in rows))
