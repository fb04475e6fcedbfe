"""A head and width allocation per layer, derived from the five papers, every decision cited:
:func:`allocate` returns an :class:`Allocation`.

Example::

    >>> from approxtheory.advise import allocate
    >>> a = allocate(layers=12, d_model=768, heads=12, T=1024, task="retrieval:D=4")
    >>> a.heads
    (4, 4, 6, 6, 8, 8, 12, 12, 12, 12, 12, 12)
    >>> [c.claim for c in a.decision("extraction-floor").citations][:2]
    ['HC-T2b', 'HC-T2a']

What it does, in order:

* **Inputs** are checked before anything is built (:class:`~approxtheory.errors.ConfigError`,
  one line): the shape of an existing model (``layers``, ``d_model``, ``heads``: the baseline
  head count h_base, which must divide d_model), the sequence length ``T`` > 0, a task
  (:func:`parse_task`: ``retrieval:D=4``, ``kth:k=2``, ``lm``), constraints
  (:func:`parse_constraints`: ``head_dims=64|128|256``, the per-head widths the kernels
  support; ``kv_heads=G``, the shared key/value heads per layer, GQA) and candidate schedules
  (``uniform``, ``prism`` or a JSON file read by :func:`read_schedule_file`, size-capped, parsed,
  never evaluated).
* **Rules** (:class:`Decision`): the Prism staircase (fewer, wider heads early; PR-E1, PR-A1,
  PR-A2, PR-S) with its block length and stage widths (PR-S4, PR-S5, PR-S6, TO-R1: where the
  papers are silent, :func:`approxtheory.schedules.default_stages` is the stated default), the
  extraction floor of a retrieval of D items (the smallest head count at which HC-T2b's
  regime stops holding: the lower bound no longer applies; HC-T2a, HC-P8, HC-Conj1, IF-P1), depth
  rather than width for the k-th largest (IF-T3, IF-T1, IF-K1), baseline heads in the later
  layers (TO-T2, TO-X2, TO-R2, TO-R3), KV heads (ID-GQA4.9) and the identification count as a
  reported consequence (ID-T4.5, ID-X4.8.1). Every cited claim carries its regime status at the
  user's sizes (:func:`regime_status`: ``in regime``, ``extrapolated``, ``vacuous``, computed from
  the catalogue's conditions) and its verdict in the committed findings
  (:mod:`approxtheory.findings`); a decision resting on a ``refuted`` or ``inconsistent`` claim
  carries a flag.
* **Candidates** (:class:`Candidate`): uniform, the Prism staircase, the advised allocation and
  the user's schedules, each counted by :func:`approxtheory.schedules.count` (parameters, forward
  matmul FLOPs at T, softmax scores, KV-cache bytes) with the consequences the catalogue states:
  the InfoFlow rate (:func:`approxtheory.infoflow.predict_rate`), the head-count exponent at the
  extracting layer (HC-T2b), the unidentified fraction (ID-X4.8.1 / ID-GQA4.9) and the
  saturation floor (TO-X2).

Nothing here is trained: the advice is what the cited statements imply at these sizes, not a
measured improvement. :func:`approxtheory.advise_train.validate` (``advise --train quick|full``,
retrieval tasks only) trains the candidates paired on a surrogate of the task, the head-count
retrieval model, and reports the advice's measured difference with each other candidate, with
an interval; :func:`~approxtheory.advise_train.validated` returns the allocation with it in
:attr:`Allocation.validation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sympy as sp

from . import schedules as S
from ._validate import check_int
from .catalogue import claim
from .catalogue._claim import substitute
from .errors import ConfigError
from .findings import COMMITTED, load_findings, verdicts
from .io import read_json_entry

__all__ = [
    "TASKS",
    "CONSTRAINTS",
    "STATUSES",
    "FLAGGED_VERDICTS",
    "MAX_SCHEDULE_BYTES",
    "Task",
    "Constraints",
    "Citation",
    "Decision",
    "LayerAlloc",
    "Consequence",
    "Candidate",
    "Allocation",
    "parse_task",
    "parse_constraints",
    "read_schedule_file",
    "regime_status",
    "committed_findings",
    "allocate",
]

#: the task structures the advisor knows: name -> (argument, its minimum, help)
TASKS: dict[str, tuple[str | None, int, str]] = {
    "retrieval": ("D", 1, "retrieval of D items (head count: generalized D-retrieval)"),
    "kth": ("k", 1, "the k-th largest score (InfoFlow)"),
    "lm": (None, 0, "language modelling (Prism's setting)"),
}
#: the constraints ``--constrain`` accepts
CONSTRAINTS = {
    "head_dims": "the per-head widths the kernels support, e.g. head_dims=64|128|256",
    "kv_heads": "shared key/value heads per layer (GQA), e.g. kv_heads=4",
}
#: the regime statuses of a citation
STATUSES = ("in regime", "extrapolated", "vacuous")
#: verdicts that flag a decision resting on them
FLAGGED_VERDICTS = ("refuted", "inconsistent")
#: the largest schedule file read
MAX_SCHEDULE_BYTES = 64 * 2**10
#: bytes per cached key/value element (bfloat16 / float16; stated default)
KV_BYTES = 2
#: the logit bound B at which the saturation floor (TO-X2) is shown (the papers give none)
LOGIT_BOUND = 4


# ------------------------------------------------------------------------------- the inputs
@dataclass(frozen=True)
class Task:
    """A task structure: ``name`` of :data:`TASKS` and its argument (``D`` or ``k``)."""

    name: str = "lm"
    arg: int | None = None

    def label(self) -> str:
        key = TASKS[self.name][0]
        return self.name if key is None else f"{self.name}:{key}={self.arg}"

    def infoflow(self):
        """The InfoFlow program for the task (None for language modelling)."""
        from .infoflow import make_task

        if self.name == "retrieval":
            return make_task("gdr", D=self.arg)
        return make_task("kth", k=self.arg) if self.name == "kth" else None


@dataclass(frozen=True)
class Constraints:
    """``head_dims``: allowed per-head widths (None: any); ``kv_heads``: KV heads per layer."""

    head_dims: tuple[int, ...] | None = None
    kv_heads: int | None = None

    def to_dict(self) -> dict:
        return {"head_dims": self.head_dims and list(self.head_dims), "kv_heads": self.kv_heads}


def _int(text: str, what: str, lo: int = 1) -> int:
    t = str(text).strip()
    if not (t.isascii() and t.isdigit()) or int(t) < lo or len(t) > 9:
        raise ConfigError(f"{what} must be an integer from {lo} to 999999999 (got {text!r})")
    return int(t)


def parse_task(text: str | Task | None) -> Task:
    """``"retrieval:D=4"``, ``"kth:k=2"`` or ``"lm"`` (None: ``lm``) -> :class:`Task`."""
    if isinstance(text, Task):
        return text
    if text is None:
        return Task()
    name, _, arg = str(text).strip().partition(":")
    allowed = "retrieval:D=N, kth:k=N or lm"
    if name not in TASKS:
        raise ConfigError(f"unknown task {text!r}; allowed: {allowed}")
    key, lo, _ = TASKS[name]
    if key is None:
        if arg:
            raise ConfigError(f"task {name} takes no argument (got {text!r}); allowed: {allowed}")
        return Task(name)
    k, sep, v = arg.partition("=")
    if k.strip() != key or not sep:
        raise ConfigError(f"task {name} needs {key}=N (got {text!r}); allowed: {allowed}")
    return Task(name, _int(v, f"task {name}: {key}", lo))


def parse_constraints(items: Sequence[str] | Constraints | None) -> Constraints:
    """``["head_dims=64|128", "kv_heads=4"]`` -> :class:`Constraints` (unknown names refused)."""
    if isinstance(items, Constraints):
        return items
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, val = str(item).partition("=")
        key = key.strip()
        if key not in CONSTRAINTS or not sep:
            raise ConfigError(
                f"unknown constraint {item!r}; allowed: "
                + "; ".join(f"{k} ({v})" for k, v in CONSTRAINTS.items())
            )
        if key in out:
            raise ConfigError(f"constraint {key} given twice; give it once")
        if key == "head_dims":
            parts = val.split("|")
            if len(parts) > 64:
                raise ConfigError("head_dims lists more than 64 widths")
            out[key] = tuple(sorted({_int(p, "a head_dims width") for p in parts}))
        else:
            out[key] = _int(val, "kv_heads")
    return Constraints(**out)


def read_schedule_file(path: str | Path, layers: int, d_model: int) -> tuple[str, tuple, tuple]:
    """A user schedule: a JSON file ``{"heads": [...], "kv_heads": [...], "name": "..."}``
    (``kv_heads`` and ``name`` optional) of at most :data:`MAX_SCHEDULE_BYTES`, read by
    :func:`approxtheory.io.read_json_entry` (regular files only, never evaluated). Returns
    ``(name, heads, kv_heads)``; a file that is not such a schedule for ``layers`` layers at
    width ``d_model`` is a :class:`ConfigError` naming what is wrong."""
    data = read_json_entry(path, max_bytes=MAX_SCHEDULE_BYTES)
    form = '{"heads": [h_1, ..., h_L], "kv_heads": [...] (optional), "name": "..." (optional)}'
    if not isinstance(data, dict) or not isinstance(data.get("heads"), list):
        raise ConfigError(
            f"schedule file {str(path)!r} is not a regular JSON file of at most "
            f"{MAX_SCHEDULE_BYTES} bytes of the form {form}"
        )
    extra = set(data) - {"heads", "kv_heads", "name"}
    if extra:
        raise ConfigError(f"schedule file {str(path)!r} has unknown keys {sorted(extra)}; {form}")
    heads = _layer_ints(data["heads"], layers, f"{path}: heads")
    kv = data.get("kv_heads")
    kv_heads = heads if kv is None else _layer_ints(kv, layers, f"{path}: kv_heads")
    for i, (h, g) in enumerate(zip(heads, kv_heads)):
        if d_model % h:
            raise ConfigError(f"{path}: layer {i + 1} has {h} heads, which do not divide {d_model}")
        if h % g:
            raise ConfigError(f"{path}: layer {i + 1} has {g} KV heads, which do not divide {h}")
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str) or not name.isprintable() or not 0 < len(name) <= 40:
        raise ConfigError(f"{path}: name must be a printable string of 1 to 40 characters")
    return name, heads, kv_heads


def _layer_ints(v: Any, layers: int, what: str) -> tuple[int, ...]:
    if not isinstance(v, list) or len(v) != layers:
        raise ConfigError(f"{what} must be a list of {layers} integers (one per layer)")
    if any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= S.MAX_WIDTH for x in v):
        raise ConfigError(f"{what} must hold integers from 1 to {S.MAX_WIDTH}")
    return tuple(v)


# ------------------------------------------------------------------------------- citations
@dataclass(frozen=True)
class Citation:
    """A claim a decision rests on: its regime status at the user's sizes (one of
    :data:`STATUSES`, with ``why``) and its verdict in the committed findings."""

    claim: str
    statement: str
    provenance: str
    status: str
    why: str
    verdict: str | None
    scope: str | None = None

    @property
    def flagged(self) -> bool:
        return self.verdict in FLAGGED_VERDICTS

    def line(self) -> str:
        why = f" ({self.why})" if self.why else ""
        v = self.verdict or "no verdict in the committed findings"
        return f"{self.claim} [{self.provenance}]: {self.status}{why}; verdict {v}"

    def to_dict(self) -> dict:
        return {**vars(self), "flagged": self.flagged}


def _subs(c, values: Mapping[str, Any]) -> dict:
    return {c.symbol(k): sp.nsimplify(v) for k, v in values.items() if k in c.symbols}


def regime_status(c, values: Mapping[str, Any]) -> tuple[str, str]:
    """(status, why) of claim ``c`` at ``values`` (names of its symbols; others are ignored),
    read from its regime conditions and its vacuity condition: ``extrapolated`` when a
    condition is decidably false (named), else ``vacuous`` where the claim says nothing, else
    ``in regime`` (``why`` names the conditions it could not decide, or says none is stated)."""
    subs = _subs(c, values)
    failing = [cond.text() for cond in c.regime if cond.holds(subs) is False]
    if failing:
        return "extrapolated", "outside: " + "; ".join(failing)
    if c.vacuous_if is not None and c.vacuous_if.free_symbols <= set(subs):
        v = substitute(c.vacuous_if, subs, what=f"{c.id}: the vacuity condition")
        if sp.simplify(v) in (sp.true, True):
            return "vacuous", f"{sp.sstr(c.vacuous_if)} holds here"
    undecided = [cond.text() for cond in c.regime if cond.holds(subs) is None]
    if undecided:
        return "in regime", "undecided: " + "; ".join(undecided)
    return "in regime", "" if c.regime else "the catalogue states no regime conditions"


_ORDER = {"in regime": 0, "vacuous": 1, "extrapolated": 2}


def _cite(cid: str, per_layer: Sequence[Mapping[str, Any]], found: Mapping[str, dict]) -> Citation:
    """The citation of ``cid`` whose status is the worst over ``per_layer`` value sets (the
    layer named when there are several)."""
    c = claim(cid)
    worst, why = "in regime", ""
    for i, values in enumerate(per_layer or [{}]):
        st, w = regime_status(c, values)
        if _ORDER[st] > _ORDER[worst] or (not why and st == worst):
            worst, why = st, (f"layer {i + 1}: {w}" if len(per_layer) > 1 and w else w)
    rec = found.get(cid)
    return Citation(
        cid,
        c.statement,
        c.provenance,
        worst,
        why,
        None if rec is None else rec["verdict"],
        None if rec is None else rec.get("scope"),
    )


@dataclass(frozen=True)
class Decision:
    """One decision of the advice: ``rule`` (a short name), what was decided, the layers it
    set (1-based; empty: the whole model), the claims it rests on and, where the theory is
    silent, the stated ``default`` used instead."""

    rule: str
    decision: str
    layers: tuple[int, ...]
    citations: tuple[Citation, ...]
    default: str = ""

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(
            f"rests on {c.claim}, whose committed verdict is {c.verdict}"
            for c in self.citations
            if c.flagged
        )

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "decision": self.decision,
            "layers": list(self.layers),
            "citations": [c.to_dict() for c in self.citations],
            "default": self.default,
            "flags": list(self.flags),
        }


# ------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class LayerAlloc:
    heads: int
    head_dim: int
    kv_heads: int


@dataclass(frozen=True)
class Consequence:
    """A predicted consequence of a candidate: what, the value, the claims behind it."""

    what: str
    value: str
    claims: tuple[str, ...]
    number: float | None = None

    def to_dict(self) -> dict:
        return {"what": self.what, "value": self.value, "claims": list(self.claims)}


@dataclass(frozen=True)
class Candidate:
    """A schedule side by side with the others: its layers, exact cost and consequences."""

    name: str
    layers: tuple[LayerAlloc, ...]
    cost: Mapping[str, Any]
    consequences: tuple[Consequence, ...]
    rules_broken: tuple[str, ...] = ()

    @property
    def heads(self) -> tuple[int, ...]:
        return tuple(a.heads for a in self.layers)

    def consequence(self, what: str) -> Consequence | None:
        return next((c for c in self.consequences if c.what == what), None)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "heads": list(self.heads),
            "head_dims": [a.head_dim for a in self.layers],
            "kv_heads": [a.kv_heads for a in self.layers],
            "cost": dict(self.cost),
            "consequences": [c.to_dict() for c in self.consequences],
            "rules_broken": list(self.rules_broken),
        }


@dataclass(frozen=True)
class Allocation:
    """The advice: the advised layers, the decisions behind them and the candidates compared."""

    inputs: Mapping[str, Any]
    layers: tuple[LayerAlloc, ...]
    decisions: tuple[Decision, ...]
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = field(default=())
    findings: str = ""
    #: the paired training of the candidates (an :class:`approxtheory.advise_train.Validation`,
    #: set by :func:`approxtheory.advise_train.validated`); None: theory only
    validation: Any = None

    @property
    def heads(self) -> tuple[int, ...]:
        return tuple(a.heads for a in self.layers)

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(f"{d.rule}: {f}" for d in self.decisions for f in d.flags)

    def decision(self, rule: str) -> Decision:
        for d in self.decisions:
            if d.rule == rule:
                return d
        raise KeyError(rule)

    def to_dict(self) -> dict:
        return {
            "inputs": dict(self.inputs),
            "layers": [a.__dict__ for a in self.layers],
            "decisions": [d.to_dict() for d in self.decisions],
            "flags": list(self.flags),
            "candidates": [c.to_dict() for c in self.candidates],
            "notes": list(self.notes),
            "findings": self.findings,
            "validation": None if self.validation is None else self.validation.to_dict(),
        }

    def table(self) -> str:
        """The advice as text: layers, decisions with their citations, candidates."""
        from ._advise_text import render

        return render(self)


# ----------------------------------------------------------------------------------- rules
def committed_findings() -> dict | None:
    """The committed findings (:data:`approxtheory.findings.COMMITTED`; None when absent)."""
    return load_findings(COMMITTED)


@dataclass
class _Ctx:
    L: int
    d: int
    h_base: int
    T: int
    task: Task
    cons: Constraints
    found: Mapping[str, dict]

    def allowed(self, h: int) -> bool:
        """Whether ``h`` heads fit the width and the head-dim constraint."""
        if self.d % h:
            return False
        return self.cons.head_dims is None or self.d // h in self.cons.head_dims

    def cite(self, cid: str, *per_layer: Mapping[str, Any]) -> Citation:
        return _cite(cid, list(per_layer), self.found)


def _staircase(x: _Ctx) -> tuple[S.Schedule, list[Decision]]:
    """The Prism staircase within the constraints, with its three decisions."""
    dims, block = S.default_stages(x.d, x.L, x.h_base)
    kept = tuple(w for w in dims if x.allowed(x.d // w))
    sched = S.prism(x.d, x.L, x.h_base, stage_dims=kept, block=block)
    pre = tuple(i + 1 for i, h in enumerate(sched.heads) if h != x.h_base)
    layer_vals = [{"d": x.d, "h_l": h, "h_base": x.h_base} for h in sched.heads]
    what = (
        f"layers {_span(pre)} use fewer, wider heads ({_heads_text(sched, pre)}); the rest keep "
        f"h_base = {x.h_base}"
        if pre
        else f"every layer keeps h_base = {x.h_base} (no stage width fits the constraints)"
    )
    cites = ("PR-E1", "PR-A1", "PR-A2")
    out = [
        Decision(
            "staircase",
            what,
            pre,
            tuple(x.cite(c) for c in cites) + (x.cite("PR-S", *layer_vals),),
        ),
        Decision(
            "stage-blocks",
            f"each stage holds {block} layers; stages stop while at least L/2 = {x.L / 2:g} "
            f"layers keep h_base",
            pre,
            (x.cite("PR-S4"), x.cite("PR-S5"), x.cite("TO-R1")),
            default="the papers do not say where 'early' ends at this depth: block = "
            "max(2, L // 8), stages while >= L/2 layers stay at h_base "
            "(schedules.default_stages, a rule derived here)",
        ),
    ]
    if kept:
        dropped = sorted(set(dims) - set(kept))
        out.append(
            Decision(
                "stage-widths",
                f"stage head dims {list(kept)}, widest first"
                + (f" (dropped by the head_dims constraint: {dropped})" if dropped else ""),
                pre,
                (x.cite("PR-S6"),),
                default="power-of-two widths from 256 down, then the widths between whose head "
                "count divides d (schedules.default_stages)",
            )
        )
    return sched, out


def _extraction_floor(x: _Ctx) -> int | None:
    """The smallest allowed head count at which HC-T2b's regime no longer holds (its lower bound
    stops applying), read from the catalogue's conditions; None when it holds for every one."""
    c = claim("HC-T2b")
    D = x.task.arg
    for h in range(1, x.d + 1):
        if x.allowed(h) and regime_status(c, {"s": h, "D": D})[0] == "extrapolated":
            return h
    return None


def _floor_rule(x: _Ctx, heads: list[int], staircase: Sequence[int]) -> Decision:
    """Raise the layers below the extraction floor of a retrieval of D items."""
    D = x.task.arg
    floor = _extraction_floor(x)
    below = [h for h in range(1, x.d + 1) if x.allowed(h) and floor and h < floor]
    s = staircase[0] if staircase[0] < (floor or 0) else (below[-1] if below else None)
    t2b_vals = {"T": x.T, "D": D} | ({"s": s, "n": x.d // s} if s else {})
    if floor is None:
        raised: list[int] = []
        what = "no head count leaves HC-T2b's regime: no floor derived; the staircase is kept"
    else:
        cap = len(heads) if floor <= x.h_base else max(2, x.L // 8)
        raised = [i for i in range(cap) if heads[i] < floor]
        for i in raised:
            heads[i] = floor
        what = (
            f"the extracting layers get at least {floor} heads (HC-T2b's lower bound holds only "
            f"below it)" + (f": layers {_span([i + 1 for i in raised])} raised" if raised else "")
        )
        if floor > x.h_base:
            what += f"; above h_base = {x.h_base}, so the schedule is no longer monotone (PR-S)"
    h1 = heads[0]
    return Decision(
        "extraction-floor",
        what,
        tuple(i + 1 for i in raised),
        (
            x.cite("HC-T2b", t2b_vals),
            x.cite("HC-T2a", {"h": h1, "D": D, "n": x.d // h1}),
            x.cite("HC-P8"),
            x.cite("HC-Conj1", {"L": x.L, "h": h1, "D": D, "T": x.T}),
            x.cite("IF-P1"),
        ),
        default="the one-layer results do not say which layer of a deep model extracts: the "
        "floor is applied to the early layers (TO-R1 puts extraction there)",
    )


def _depth_rule(x: _Ctx) -> Decision:
    k = x.task.arg
    ok = x.L >= 2
    what = (
        f"the k-th largest (k = {k}) is left to depth: {x.L} layers, no head-count floor"
        if ok
        else f"one layer cannot retrieve the k-th largest at a T-free rate (k = {k}): use >= 2 "
        "layers"
    )
    return Decision(
        "depth-not-width",
        what,
        (),
        (
            x.cite("IF-T3", {"k": k, "T": x.T}),
            x.cite("IF-T1", {"T": x.T}),
            x.cite("IF-K1", {"T": x.T}),
        ),
    )


def _later_rule(x: _Ctx, heads: Sequence[int]) -> Decision:
    later = tuple(i + 1 for i, h in enumerate(heads) if h == x.h_base)
    sat = {"L": x.T, "B": LOGIT_BOUND}
    return Decision(
        "later-layers",
        f"layers {_span(later)} keep h_base = {x.h_base} heads of width {x.d // x.h_base}: "
        "a wider head buys little once softmax saturates",
        later,
        (x.cite("TO-T2", sat), x.cite("TO-X2", sat), x.cite("TO-R2"), x.cite("TO-R3")),
        default=f"the logit bound B is not stated: its status is read at B = {LOGIT_BOUND}",
    )


def _kv_rule(x: _Ctx, heads: Sequence[int]) -> tuple[list[int], Decision]:
    G = x.cons.kv_heads
    kv = (
        list(heads) if G is None else [max(g for g in range(1, G + 1) if h % g == 0) for h in heads]
    )
    vals = [{"H": h, "G": g, "E": x.d, "D": x.d // h} for h, g in zip(heads, kv)]
    what = (
        "one KV head per query head (no GQA)"
        if G is None
        else f"KV heads per layer: {','.join(map(str, kv))} (at most {G}, dividing each layer's "
        "head count)"
    )
    default = (
        "the papers state no effect of GQA on the error; without a kv_heads constraint, none"
        if G is None
        else "a layer whose head count kv_heads does not divide gets its largest divisor below it"
    )
    return kv, Decision("kv-heads", what, (), (x.cite("ID-GQA4.9", *vals),), default=default)


def _identification_rule(x: _Ctx, heads: Sequence[int]) -> Decision:
    vals = [{"D": x.d // h, "E": x.d, "H": h} for h in heads]
    return Decision(
        "identification",
        "the unidentified fraction of each candidate is reported, not optimised",
        (),
        (x.cite("ID-T4.5", {"H": x.h_base, "E": x.d}), x.cite("ID-X4.8.1", *vals)),
        default="the theory gives no exchange rate between identified parameters and error",
    )


def _neutral_rule(x: _Ctx, heads: Sequence[int]) -> Decision:
    vals = [{"d": x.d, "h_l": h, "T": x.T, "L": x.L} for h in heads]
    return Decision(
        "cost-neutral",
        "head counts move at equal parameters and matmul FLOPs (only the softmax work h·T² "
        "changes)",
        (),
        (x.cite("PR-N1", *vals), x.cite("PR-N2", *vals)),
    )


def _span(layers: Sequence[int]) -> str:
    if not layers:
        return "none"
    if list(layers) == list(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}-{layers[-1]}" if len(layers) > 1 else str(layers[0])
    return ",".join(map(str, layers))


def _heads_text(s: S.Schedule, layers: Sequence[int]) -> str:
    pairs = dict.fromkeys((s.heads[i - 1], s.head_dims[i - 1]) for i in layers)
    return ", ".join(f"h={h} (d_h={dh})" for h, dh in pairs)


# --------------------------------------------------------------------------- consequences
def _rate(x: _Ctx, heads: Sequence[int]) -> Consequence | None:
    """The InfoFlow rate N(ε) ~ ε^-α of the task on these heads (RoPE: positional encoding)."""
    from .infoflow import Arch, predict_rate

    prog = x.task.infoflow()
    if prog is None:
        return None
    p = predict_rate(Arch(tuple(heads), pos_enc=True, E=x.d), prog)
    alpha = p.alpha_at(T=x.T, E=x.d)
    law = p.dominant.law.split()[0]
    claims = tuple(dict.fromkeys(["IF-R4", law, "IF-R1"]))
    num = float(alpha) if alpha.is_number else None
    return Consequence("InfoFlow rate", f"N(eps) ~ eps^-({sp.sstr(alpha)})", claims, num)


def _threshold(x: _Ctx, heads: Sequence[int]) -> Consequence | None:
    """The head-count law at the first layer: HC-T2b's exponent k below D heads, HC-T2a's
    T-free rate at or above."""
    if x.task.name != "retrieval":
        return None
    D, h = x.task.arg, heads[0]
    lower = claim("HC-T2b")
    vals = {"T": x.T, "s": h, "n": x.d // h, "D": D}
    st, _ = regime_status(lower, vals)
    if st == "extrapolated":
        up = claim("HC-T2a")
        return Consequence(
            "head-count law (layer 1)",
            f"h = {h} >= D = {D}: eps^-{sp.sstr(up.rate_exponent())}, T-free",
            ("HC-T2a",),
        )
    if st == "vacuous":
        return Consequence(
            "head-count law (layer 1)", f"h = {h} < D = {D}: HC-T2b vacuous here", ("HC-T2b",)
        )
    k = lower.evaluate("k", **vals)
    return Consequence(
        "head-count law (layer 1)",
        f"h = {h} < D = {D}: M >= C eps^-{sp.sstr(sp.nsimplify(k))} (k = {float(k):.3g})",
        ("HC-T2b",),
        float(k),
    )


def _unidentified(x: _Ctx, heads: Sequence[int], kv: Sequence[int]) -> Consequence:
    """The parameter-weighted unidentified fraction of the attention layers (plain count: no
    RoPE, no biases)."""
    U = P = 0
    used = set()
    for h, g in zip(heads, kv):
        if g == h:
            c, vals = claim("ID-X4.8.1"), {"D": x.d // h, "E": x.d, "H": h}
        else:
            c, vals = claim("ID-GQA4.9"), {"D": x.d // h, "E": x.d, "H": h, "G": g}
        used.add(c.id)
        U += c.evaluate("U", **vals)
        P += c.evaluate("P", **vals)
    frac = sp.nsimplify(U / P)
    return Consequence(
        "unidentified fraction", f"{float(frac):.4f}", tuple(sorted(used)), float(frac)
    )


def _candidate(x: _Ctx, name: str, heads: Sequence[int], kv: Sequence[int]) -> Candidate:
    sched = S.Schedule(tuple(heads), x.d, x.h_base, "custom")
    n = S.count_small(sched, T=x.T, kv_groups=list(kv))
    cost = {
        "params": n["params"]["total"],
        "attn_params": sum(n["params"]["attn"]),
        "matmul_flops_fwd": n["fwd_flops"],
        "softmax_scores": n["softmax_scores"],
        "kv_cache_bytes": KV_BYTES * sum(n["kv_cache_elements_per_layer"]),
    }
    cons = [
        Consequence("parameters", f"{cost['params']:,}", ("PR-N1",)),
        Consequence("matmul FLOPs fwd", f"{cost['matmul_flops_fwd']:,}", ("PR-N2",)),
        Consequence("softmax scores", f"{cost['softmax_scores']:,}", ("PR-N2",)),
    ]
    cons += [c for c in (_rate(x, heads), _threshold(x, heads)) if c is not None]
    cons.append(_unidentified(x, heads, kv))
    rules = tuple(r for r, _ in S.violations(heads, x.d, x.h_base))
    layers = tuple(LayerAlloc(h, x.d // h, g) for h, g in zip(heads, kv))
    return Candidate(name, layers, cost, tuple(cons), rules)


def _against_uniform(cands: list[Candidate]) -> tuple[Candidate, ...]:
    """Each candidate with its cost against the uniform one (PR-N1, PR-N2), where one is."""
    base = next((c.cost for c in cands if c.name == "uniform"), None)
    if base is None:
        return tuple(cands)
    out = []
    for c in cands:
        same = all(c.cost[k] == base[k] for k in ("params", "matmul_flops_fwd"))
        note = Consequence(
            "cost vs uniform",
            "equal parameters and matmul FLOPs" if same else "differs (KV heads)",
            ("PR-N1", "PR-N2"),
        )
        out.append(replace(c, consequences=(*c.consequences[:3], note, *c.consequences[3:])))
    return tuple(out)


def _saturation_note(x: _Ctx) -> str:
    c = claim("TO-X2")
    v = c.evaluate_float("floor", L=x.T, B=LOGIT_BOUND)
    return (
        f"saturation floor (TO-X2): with logits bounded by B = {LOGIT_BOUND}, positional "
        f"retrieval over T = {x.T} tokens keeps a relative error >= {v:.3g} for every head "
        "dimension, in every candidate"
    )


# ----------------------------------------------------------------------------------- allocate
def _check_shape(layers, d_model, heads, T) -> None:
    for name, v, most in (
        ("layers", layers, S.MAX_LAYERS),
        ("d_model", d_model, S.MAX_WIDTH),
        ("heads", heads, S.MAX_WIDTH),
        ("T", T, 2**31),
    ):
        check_int(name, v, 1, most, numpy=False)
    if d_model % heads:
        raise ConfigError(
            f"heads = {heads} does not divide d_model = {d_model}: every head must have the "
            "same integer width d_model / heads"
        )


def _check_inputs(x: _Ctx) -> None:
    """Refuse what no allocation can satisfy, before anything is built."""
    dims = x.cons.head_dims
    if dims is not None and min(dims) > x.d:
        raise ConfigError(
            f"budget too small for one head: d_model = {x.d} is narrower than the narrowest "
            f"allowed head dim {min(dims)} (head_dims={'|'.join(map(str, dims))})"
        )
    if not x.allowed(x.h_base):
        raise ConfigError(
            f"the baseline head dim {x.d // x.h_base} (d_model / heads) is not in the head_dims "
            f"constraint {'|'.join(map(str, dims or ()))}"
        )
    if x.task.name == "retrieval" and (x.task.arg or 0) > x.d:
        raise ConfigError(
            f"budget too small for one head per item: retrieval of D = {x.task.arg} items "
            f"needs D heads of width >= 1, but d_model = {x.d}"
        )
    G = x.cons.kv_heads
    if G is not None and G > x.h_base:
        raise ConfigError(f"kv_heads = {G} exceeds the baseline head count {x.h_base}")


def _resolve_candidates(specs: Sequence[str], x: _Ctx) -> list[tuple[str, tuple, tuple]]:
    out = []
    for spec in specs:
        if spec == "uniform":
            h = S.uniform(x.d, x.L, x.h_base).heads
            out.append(("uniform", h, h))
        elif spec == "prism":
            h = S.prism(x.d, x.L, x.h_base).heads
            out.append(("prism", h, h))
        elif spec == "advised":
            continue
        else:
            out.append(read_schedule_file(spec, x.L, x.d))
    return out


def allocate(
    layers: int,
    d_model: int,
    heads: int,
    T: int,
    task: str | Task | None = None,
    constraints: Sequence[str] | Constraints | None = None,
    candidates: Sequence[str] = ("uniform", "prism"),
    findings: Mapping | None = None,
) -> Allocation:
    """The advised allocation for a model of ``layers`` layers of width ``d_model`` with
    ``heads`` heads per layer (h_base) at sequence length ``T`` (see the module docstring).

    ``candidates``: ``uniform``, ``prism`` or paths of schedule files
    (:func:`read_schedule_file`), compared with the advice; ``findings``: a verdicts file's
    contents (default :func:`committed_findings`). Nothing is trained here: the paired
    training of the candidates is :func:`approxtheory.advise_train.validate`."""
    _check_shape(layers, d_model, heads, T)
    t, cons = parse_task(task), parse_constraints(constraints)
    if isinstance(candidates, str) or len(candidates) > 16:
        raise ConfigError("candidates must be a list of at most 16 names or files")
    f = committed_findings() if findings is None else findings
    x = _Ctx(layers, d_model, heads, T, t, cons, verdicts(dict(f)) if f else {})
    _check_inputs(x)
    others = _resolve_candidates(candidates, x)  # files read and checked before counting
    rows_out: list[Candidate] = []
    sched, decisions = _staircase(x)
    advised = list(sched.heads)
    if t.name == "retrieval":
        decisions.append(_floor_rule(x, advised, sched.heads))
    elif t.name == "kth":
        decisions.append(_depth_rule(x))
    decisions.append(_later_rule(x, advised))
    kv, kv_decision = _kv_rule(x, advised)
    decisions += [kv_decision, _identification_rule(x, advised), _neutral_rule(x, advised)]
    rows = [("advised", tuple(advised), tuple(kv)), *others]
    counted: dict[tuple, Candidate] = {}  # the same layers are counted once
    for n, h, g in rows:
        c = counted.get((h, g)) or _candidate(x, n, h, g)
        counted.setdefault((h, g), c)
        rows_out.append(replace(c, name=n))
    cands = _against_uniform(rows_out)
    inputs = {
        "layers": layers,
        "d_model": d_model,
        "heads": heads,
        "T": T,
        "task": t.label(),
        "constraints": cons.to_dict(),
        "kv_bytes_per_element": KV_BYTES,
    }
    src = str(COMMITTED) if findings is None else "given"
    if f is None:
        src = f"none ({COMMITTED} not found: every verdict is unknown)"
    elif isinstance(f.get("meta"), Mapping):
        meta = f["meta"]
        src += f" (profile {meta.get('profile')}, revision {meta.get('git')})"
    layers_out = tuple(LayerAlloc(h, d_model // h, g) for h, g in zip(advised, kv))
    notes = (_saturation_note(x),)
    return Allocation(inputs, layers_out, tuple(decisions), cands, notes, src)
