"""The one trained-verdict pipeline. A trained check *declares* its evidence as data
(:class:`Evidence`: the experiments it reads, the gate's control set on each, the criterion, the
paper's reference figures) and :func:`trained_verdict` does the sequence every trained check
shares, in one place:

1. read each experiment's cells through the runner (run them, or read the cache or the shipped
   decisive grid); a missing experiment is the not-run verdict naming the command to run;
2. apply the training-adequacy gate (:mod:`._gate`) to each experiment's rows *as trained*
   (a check's mutants act inside its criterion, after the gate);
3. below the gate: the not-checkable verdict with what was reached, the paper's figure and the
   known recipe, showing the criterion's measurement without deciding it (or, for a check
   whose criterion cannot read an untrained run, without it);
4. past the gate: the criterion's verdict, with the scale record of every experiment (what was
   run beside what the paper reports) and, where the check asks, the gate's reached figures.

The criterion is the check's own science (its statistic, its intervals, its texts); nothing
here decides a claim."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import _rows
from ._core import Context, Verdict
from ._gate import Gate
from ._trained_verdicts import gated_verdict, trained_scale, ungated_scale


@dataclass
class Run:
    """What the pipeline read for one check: each experiment's rows as trained, its runner
    note, its seconds and the profile it was read at, and the gates applied to it."""

    ctx: Context
    cid: str
    rows: dict[str, list]
    notes: dict[str, str]
    seconds: dict[str, float]
    profiles: dict[str, str]
    gates: list[tuple[str, Gate]] = field(default_factory=list)
    traces: dict[str, list] = field(default_factory=dict)
    #: the rows each gate read, by the gate's label (an experiment, or a part of one)
    gate_rows: dict[str, list] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.rows)

    @property
    def one(self) -> list:
        """The rows of a check that reads one experiment (a copy per row: the criterion may
        relabel them for a mutant without touching what the gate read)."""
        (rows,) = self.rows.values()
        return [dict(r) for r in rows]

    @property
    def note(self) -> str:
        """The runner's note of a check that reads one experiment."""
        (note,) = self.notes.values()
        return note

    @property
    def passed(self) -> bool:
        return all(g.passed for _, g in self.gates)


@dataclass(frozen=True)
class Evidence:
    """A trained check's evidence, declared.

    ``experiments``: the experiments read (or a function of the context giving them, e.g. the
    groups of outside results); ``gate``: the training-adequacy gate of one experiment's rows
    (its control set, described), or a list of ``(label, gate, rows)`` for an experiment gated
    in parts (per D, or on rows derived from the run's); ``criterion``: the verdict on the rows
    read (called after the gate when ``measure_when_gated`` is False, else always, its
    measurement shown by a gated verdict); ``covered``: what was read, for a gated verdict
    whose criterion is not run; ``paper``: per experiment, what the paper reports for it (the
    scale record's reference); ``profile``: the profile an experiment is read at (default: the
    run's own); ``gate_text``: a passed gate's reached figures appended to the criterion's
    evidence; ``prefix``: what the check read of its claim, said first in a gated verdict too;
    ``traces``: the runs' trace rows are read as well (:attr:`Run.traces`); ``read``: where a
    check trains its own models instead of reading an experiment, its rows ``(rows, seconds,
    note)`` for (context, name) (default: the runner, ``_rows.exp_rows``);
    ``decides_below_gate``: a criterion verdict that decides (anything but not-checkable) stands
    below the gate, with the scale record: for a criterion that reads the gates itself and
    decides there only where a failed gate cannot change the outcome (a non-finite measurement
    is a failure whatever the gate; a trained part against a claim made for every part);
    ``ungated``: why the run is read without a gate (the claim is about the optimiser's steps,
    not about what the trained model computes): ``gate`` is then None, the criterion always
    decides and the scale record says why no gate applies."""

    experiments: tuple[str, ...] | Callable[[Context], tuple[str, ...]]
    gate: Callable[[str, list], Gate | list[tuple[str, Gate, list]]] | None
    criterion: Callable[[Run], Verdict]
    covered: Callable[[Run], str] | None = None
    paper: Mapping[str, str] = field(default_factory=dict)
    metric: str = "val_nmse"
    measure_when_gated: bool = True
    profile: Callable[[Context, str], str] | None = None
    gate_text: bool = False
    prefix: Callable[[Run], str] | None = None
    traces: bool = False
    read: Callable[[Context, str], tuple] | None = None
    decides_below_gate: bool = False
    ungated: str = ""


def passed_gate_text(gates: list[tuple[str, Gate]]) -> str:
    """The sentence a passed gate adds to a verdict: its reference and, per control cell, the
    min-over-seeds metric reached (and its loss-tail ratio where recorded)."""
    return "".join(
        f". The run passed the training-adequacy gate ({gate.reference}; min-over-seeds "
        f"{gate.metric}: "
        + "; ".join(
            f"{lab}: {c['reached']:.3g}"
            + ("" if c["tail_ratio"] is None else f", tail {c['tail_ratio']:.3g}")
            for lab, c in gate.cells.items()
        )
        + ")"
        for _, gate in gates
    )


def _paper_by_label(ev: Evidence, run: Run) -> dict[str, str]:
    """The paper's figure per gate label: the label's own, else its experiment's (a part of an
    experiment, "name D = 2", reads the experiment's)."""
    out = {}
    for label, _ in run.gates:
        name = next((n for n in run.rows if label == n or label.startswith(n + " ")), label)
        out[label] = ev.paper.get(label, ev.paper.get(name, ""))
    return out


def read_run(ctx: Context, cid: str, ev: Evidence) -> Run | Verdict:
    """Step 1: every experiment's rows, or the not-run verdict of the first one missing."""
    names = ev.experiments(ctx) if callable(ev.experiments) else ev.experiments
    run = Run(ctx, cid, {}, {}, {}, {})
    for name in names:
        used = ev.profile(ctx, name) if ev.profile else ctx.profile
        raw, secs, note = ev.read(ctx, name) if ev.read else _rows.exp_rows(name, used)
        if raw is None:
            return _rows.not_run(cid, name, used, note)
        run.rows[name], run.notes[name] = list(raw), note
        run.seconds[name], run.profiles[name] = float(secs or 0.0), used
        if ev.traces:
            run.traces[name] = list(_rows.exp_trace(name, used))
    return run


def _ungated_verdict(ev: Evidence, run: Run) -> Verdict:
    """A run read without a gate (``ev.ungated`` says why): the criterion's verdict, with the
    scale record of what was run and why no gate applies."""
    if not ev.ungated:
        raise ValueError(f"{run.cid}: an Evidence without a gate must say why (ungated=...)")
    v = ev.criterion(run)
    v.scale = {}
    for name, rows in run.rows.items():
        v.scale.update(ungated_scale(name, rows, ev.ungated, ev.metric, ev.paper.get(name, "")))
    v.volatile = {"seconds": round(sum(run.seconds.values()), 2), **v.volatile}
    return v


def trained_verdict(ctx: Context, cid: str, ev: Evidence) -> Verdict:
    """The verdict of a trained check declared by ``ev`` (the module docstring's four steps)."""
    run = read_run(ctx, cid, ev)
    if isinstance(run, Verdict):
        return run
    if ev.ungated or ev.gate is None:
        return _ungated_verdict(ev, run)
    for name, rows in run.rows.items():
        g = ev.gate(name, rows)
        for label, gate, read in [(name, g, rows)] if isinstance(g, Gate) else g:
            run.gates.append((label, gate))
            run.gate_rows[label] = read
    volatile = {"seconds": round(sum(run.seconds.values()), 2)}
    prefix = ev.prefix(run) if ev.prefix else ""
    paper = _paper_by_label(ev, run)
    if not run.passed and not ev.measure_when_gated:
        covered = ev.covered(run) if ev.covered else ""
        gated = gated_verdict(
            cid, run.gates, run.gate_rows, covered, metric=ev.metric, paper=paper, prefix=prefix
        )
        assert gated is not None
        gated.volatile = volatile
        return gated
    v = ev.criterion(run)
    if not run.passed and not (ev.decides_below_gate and v.verdict != "not-checkable"):
        gated = gated_verdict(
            cid,
            run.gates,
            run.gate_rows,
            v.covered,
            metric=ev.metric,
            paper=paper,
            measured=v.evidence,
            rows=v.rows,
            plot=v.plot,
            prefix=prefix,
        )
        assert gated is not None
        gated.volatile = volatile
        return gated
    v.scale = trained_scale(run.gates, run.gate_rows, ev.metric, paper)
    if ev.gate_text and run.passed:
        v.evidence += passed_gate_text(run.gates)
    v.volatile = {**volatile, **v.volatile}
    return v
