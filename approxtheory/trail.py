"""One claim's trail through the four registries: its catalogue entry, its
check, the constructions that realise it, the experiments that train for it and the files a
``verify`` run writes for it, each with a file path relative to the repository.

The registries are joined by strings: claim ids (:mod:`approxtheory.catalogue`), the ``@check``
ids (:data:`approxtheory.proofs_check.CHECKS`), construction names (each construction names the
``claim`` it realises, :data:`approxtheory.constructions.REGISTRY`) and experiment names (each
experiment declares the ``claims`` it serves, :data:`approxtheory.experiment.EXPERIMENTS`). The
declared side of a join is those two fields; the other side is what a check reads
(:func:`check_reads`), which the check declares itself: ``@check("IF-P3",
experiments=(...), constructions=(...))``, recorded in :data:`approxtheory.proofs_check.READS`,
so the trail needs no source and works from an installed package. Only for a check that
declares nothing are its reads recovered from its source (:func:`parsed_reads`: the names
written in the check and in the functions of the checks' package it calls, an f-string by its
literal prefix), and the trail says so (:func:`reads_how`). :func:`join_problems` lists every
join that does not hold (``tests/test_trail.py`` asserts there is none;
``tests/test_declared_joins.py`` runs checks and asserts each reads only what it declares).

Example::

    >>> t = trail("HC-Conj1")
    >>> [e.name for e in t.experiments], t.check.path
    (['headcount_variants'], 'proofs_check/headcount_more.py')
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import re
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FunctionType

import approxtheory
import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)

from .catalogue import claim, claims
from .constructions import REGISTRY as CONSTRUCTIONS
from .experiment import EXPERIMENTS
from .proofs_check import CHECKS, READS

__all__ = [
    "Ref",
    "Trail",
    "ROOT",
    "REPORT_DIR",
    "RESULTS_DIR",
    "COMMITTED_RUN",
    "check_reads",
    "declared_experiments",
    "declared_reads",
    "parsed_reads",
    "reads_how",
    "join_problems",
    "trail",
    "trails",
]

#: the repository (the folder above the package): trail paths are relative to it
ROOT = Path(approxtheory.__file__).resolve().parent.parent
#: where ``approxtheory verify`` and ``approxtheory experiment run`` write by default
REPORT_DIR = "report"
RESULTS_DIR = "results"
#: the committed quick run: which CSVs and plots a claim's verdict wrote
COMMITTED_RUN = Path("docs") / "findings" / "verdicts.json"

#: the package whose functions :func:`check_reads` follows from a check into its helpers
_CHECKS_PACKAGE = "approxtheory.proofs_check"
_CONSTRUCTIONS = "approxtheory.constructions"


def _is_builder(obj) -> bool:
    """A public model builder of the constructions' package (``build_lag_model``)."""
    return (
        isinstance(obj, FunctionType)
        and obj.__module__.startswith(_CONSTRUCTIONS)
        and obj.__name__.startswith("build_")
    )


def _builder(fn) -> str:
    """The key :func:`check_reads` records for a model builder of the constructions' package
    that a check calls directly (``build_hc_k1_model``)."""
    return f"builder:{fn.__module__}.{fn.__qualname__}"


@dataclass(frozen=True)
class Ref:
    """One stop of a trail: a name, the file that defines it (relative to :data:`ROOT`) and the
    line (None where it could not be found), and how it joins the claim."""

    name: str
    path: str
    line: int | None
    note: str = ""

    def where(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Trail:
    """A claim's trail: catalogue entry, check, constructions, experiments, and the files a
    ``verify`` run writes for it (``outputs``, relative to the repository: ``report/`` is
    verify's default ``--out``, ``results/`` the experiment runner's)."""

    claim: str
    statement: str
    catalogue: Ref
    check: Ref | None
    constructions: tuple[Ref, ...]
    experiments: tuple[Ref, ...]
    outputs: tuple[str, ...]
    #: how the check's reads were found (:func:`reads_how`): declared, or parsed from its source
    reads: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self) -> list[str]:
        """The trail as text, one stop a line."""
        out = [f"{self.claim}: {self.statement}"]
        out.append(f"  catalogue:    {self.catalogue.where()}")
        if self.check is None:
            out.append("  check:        none registered")
        else:
            out.append(f"  check:        {self.check.name} ({self.check.where()})")
        if self.reads:
            out.append(f"  reads:        {self.reads}")
        for c in self.constructions:
            out.append(f"  construction: {c.name} ({c.where()}; {c.note})")
        if not self.constructions:
            out.append("  construction: none")
        for e in self.experiments:
            out.append(f"  experiment:   {e.name} ({e.where()}; {e.note})")
        if not self.experiments:
            out.append("  experiment:   none")
        for o in self.outputs:
            out.append(f"  writes:       {o}")
        return out


def _rel(path: str | Path | None) -> str:
    if path is None:
        return "?"
    p = Path(path).resolve()
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return p.as_posix()


@functools.cache
def _module_tree(path: str) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"))


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _literal_line(path: str | None, value: str, calls: tuple[str, ...], keyword: str = "") -> int:
    """The line of the first call to one of ``calls`` in the file at ``path`` whose first
    positional argument (or the argument ``keyword``) is the string ``value``; 0 if none."""
    if path is None or not Path(path).is_file():
        return 0
    for node in ast.walk(_module_tree(path)):
        if not isinstance(node, ast.Call) or _call_name(node) not in calls:
            continue
        args = list(node.args) + [k.value for k in node.keywords if k.arg == keyword]
        if any(isinstance(a, ast.Constant) and a.value == value for a in args):
            return node.lineno
    return 0


def _source_file(obj) -> str | None:
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        return None


# ------------------------------------------------------------------------ what a check reads


#: the literal start of an f-string that names a family of registered names: an identifier
#: with an underscore and at least 6 characters (``f"headcount_phase_d{D}"``, not ``f"h{i}"``)
_NAME_PREFIX = re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]+")


def _strings(fn, seen: set) -> tuple[set[str], set[str]]:
    """The string constants and f-string literal prefixes of ``fn``'s source and, recursively,
    of the functions of the checks' package it names (its module's globals or its local
    ``from ... import``)."""
    strings: set[str] = set()
    prefixes: set[str] = set()
    if fn in seen:
        return strings, prefixes
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return strings, prefixes
    glb = getattr(fn, "__globals__", {})
    local = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    local |= {
        a.arg
        for n in ast.walk(tree)
        if isinstance(n, ast.arguments)
        for a in (*n.posonlyargs, *n.args, *n.kwonlyargs, *(x for x in (n.vararg, n.kwarg) if x))
    }
    follow = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and _NAME_PREFIX.fullmatch(str(first.value)):
                prefixes.add(str(first.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in local:  # a global or builtin, not a local variable
                follow.append(glb.get(node.id))
        elif isinstance(node, ast.ImportFrom):
            base = getattr(fn, "__module__", "") or ""
            if node.level:
                parts = base.split(".")[: -node.level]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base.startswith("approxtheory"):
                continue
            try:
                mod = importlib.import_module(base)
            except ImportError:
                continue
            follow += [getattr(mod, a.name, None) for a in node.names]
    for obj in follow:
        obj = getattr(obj, "func", obj)  # a functools.partial
        obj = inspect.unwrap(obj) if callable(obj) else obj  # a memo / functools.cache wrapper
        if isinstance(obj, str):  # a module constant: PAIRED = "prism_paired"
            strings.add(obj)
        elif isinstance(obj, dict | list | tuple | frozenset):  # names chosen from a table
            items = obj.values() if isinstance(obj, dict) else obj  # (keys are looked up by)
            strings |= {x for x in items if isinstance(x, str)}
        elif isinstance(getattr(obj, "construction_name", None), str):  # a builder called
            strings.add(obj.construction_name)  # type: ignore[union-attr]
        elif _is_builder(obj):
            strings.add(_builder(obj))  # a model builder behind registered constructions
        elif isinstance(obj, FunctionType) and obj.__module__.startswith(_CHECKS_PACKAGE):
            s, p = _strings(obj, seen)
            strings |= s
            prefixes |= p
    return strings, prefixes


@functools.cache
def _names_in(cid: str) -> tuple[frozenset[str], frozenset[str]]:
    entry = CHECKS.get(cid)
    if entry is None:
        return frozenset(), frozenset()
    strings, prefixes = _strings(entry.source_fn, set())  # type: ignore[attr-defined]
    return frozenset(strings), frozenset(prefixes)


def declared_reads(cid: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(experiment names, construction names) that the check of ``cid`` declares
    (``@check(..., experiments=..., constructions=...)``), as written; None when it declares
    neither."""
    d = READS.get(cid) if cid in CHECKS else None
    if d is None:
        return None
    return tuple(d["experiments"]), tuple(d["constructions"])


@functools.cache
def check_reads(cid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(experiment names, construction names) that the check of ``cid`` reads, in registration
    order: what it declares (:func:`declared_reads`; a declared name that is not registered is
    left out here and reported by :func:`join_problems`), else, for a check that declares
    nothing, what :func:`parsed_reads` recovers from its source. ((), ()) for a claim without a
    check."""
    declared = declared_reads(cid)
    if declared is None:
        return parsed_reads(cid)
    exps, built = declared
    return (
        tuple(n for n in EXPERIMENTS if n in exps),
        tuple(n for n in CONSTRUCTIONS if n in built),
    )


def reads_how(cid: str) -> str:
    """How :func:`check_reads` found what the check of ``cid`` reads, in words."""
    if cid not in CHECKS:
        return ""
    if declared_reads(cid) is not None:
        return "declared by the check (@check experiments=/constructions=)"
    return "recovered by parsing the check's source: it declares no experiments=/constructions="


@functools.cache
def parsed_reads(cid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(experiment names, construction names) that the check of ``cid`` names in its source or
    in the functions of the checks' package it calls: a name written out in full, or the
    literal prefix of an f-string (``f"headcount_phase_d{D}"`` names every experiment starting
    ``headcount_phase_d``); a construction also when the check calls the model builder its
    registered build calls (``build_hc_k1_model``). ((), ()) for a claim without a check."""
    strings, prefixes = _names_in(cid)
    exps = tuple(n for n in EXPERIMENTS if n in strings or any(n.startswith(p) for p in prefixes))
    built = tuple(n for n in CONSTRUCTIONS if n in strings or _models_of(n) & strings)
    return exps, built


def _via(cid: str, construction: str) -> str:
    """How the check of ``cid`` reaches ``construction``: "" by its name or by its declaration,
    else the model builders it calls (a check that declares nothing: parsed from its source)."""
    if declared_reads(cid) is not None:
        return ""
    strings = _names_in(cid)[0]
    if construction in strings:
        return ""
    return ", ".join(sorted(b.rsplit(".", 1)[1] for b in _models_of(construction) & strings))


@functools.cache
def _models_of(name: str) -> frozenset[str]:
    """The model builders of the constructions' package that construction ``name``'s registered
    build function calls (a check calling one of them builds that construction's model)."""
    fn = CONSTRUCTIONS[name].build
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            obj = fn.__globals__.get(node.id)
            if _is_builder(obj):
                out.add(_builder(obj))
    return frozenset(out)


def declared_experiments(cid: str) -> tuple[str, ...]:
    """The experiments whose ``claims`` name ``cid``, in registration order."""
    return tuple(n for n, e in EXPERIMENTS.items() if cid in e.claims)


# ------------------------------------------------------------------------------ the trail


def _catalogue_ref(cid: str) -> Ref:
    c = claim(cid)
    mod = importlib.import_module(f"approxtheory.catalogue.{c.paper_name}")
    path = _source_file(mod)
    if path is None or not _literal_line(path, cid, ("claim",)):
        for name in ("headcount", "tradeoffs", "infoflow", "identification", "prism"):
            p = _source_file(importlib.import_module(f"approxtheory.catalogue.{name}"))
            if _literal_line(p, cid, ("claim",)):
                path = p
                break
    return Ref(cid, _rel(path), _literal_line(path, cid, ("claim",)) or None, "catalogue entry")


def _check_ref(cid: str) -> Ref | None:
    entry = CHECKS.get(cid)
    if entry is None:
        return None
    fn = entry.source_fn  # type: ignore[attr-defined]
    mod = importlib.import_module(fn.__module__)
    path = _source_file(mod)
    line = _literal_line(path, cid, ("check", "not_checkable"))
    if not line and _source_file(fn) == path:  # registered in a loop: the function's line
        try:
            line = inspect.getsourcelines(fn)[1]
        except (OSError, TypeError):
            line = 0
    return Ref(f"{fn.__module__}.{fn.__name__}", _rel(path), line or None, "the check")


def _construction_ref(name: str, note: str) -> Ref:
    entry = CONSTRUCTIONS[name]
    path = _source_file(entry.build)
    return Ref(name, _rel(path), _literal_line(path, name, ("register",)) or None, note)


def _experiment_ref(name: str, note: str) -> Ref:
    exp = EXPERIMENTS[name]
    path = _source_file(importlib.import_module(exp.cell.__module__))
    line = _literal_line(path, name, ("Experiment",), keyword="name")
    return Ref(name, _rel(path), line or None, note)


def _join_note(declared: bool, read: bool, what: str) -> str:
    if declared and read:
        return f"declared by the {what}, read by the check"
    if declared:
        return f"declared by the {what}; the check does not read it"
    return f"read by the check; the {what} does not name this claim"


@functools.cache
def _committed_outputs() -> dict[str, tuple[str, ...]]:
    path = ROOT / COMMITTED_RUN
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data["verdicts"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    out = {}
    for r in records:
        if isinstance(r, dict) and isinstance(r.get("claim"), str):
            files = [*(r.get("csv") or []), *(r.get("plots") or [])]
            out[r["claim"]] = tuple(f"{REPORT_DIR}/{f}" for f in files if isinstance(f, str))
    return out


def _outputs(cid: str, experiments: tuple[Ref, ...]) -> tuple[str, ...]:
    committed = _committed_outputs()
    if committed.get(cid):
        verify = [f"{f} (in the committed run, {COMMITTED_RUN.as_posix()})" for f in committed[cid]]
    elif cid in committed:
        verify = [
            f"{REPORT_DIR}/data/{cid}.csv when the verdict has rows (the committed run's, "
            f"{COMMITTED_RUN.as_posix()}, had none)"
        ]
    else:
        verify = [
            f"{REPORT_DIR}/data/{cid}.csv (when the verdict has rows)",
            f"{REPORT_DIR}/plots/{cid}.png (when it also has a plot)",
        ]
    trained = [
        f"{RESULTS_DIR}/{e.name}/<profile>.csv and {RESULTS_DIR}/{e.name}/plots-<profile>/ "
        f"(`approxtheory experiment run {e.name}`)"
        for e in experiments
        if not e.note.startswith("read by the check; the experiment does not")
    ]
    return tuple(verify + trained)


def trail(cid: str) -> Trail:
    """The trail of claim ``cid`` (any case; an unknown id raises UnknownClaimError)."""
    c = claim(cid)
    read_exps, read_cons = check_reads(c.id)
    declared = declared_experiments(c.id)
    exps = tuple(
        _experiment_ref(n, _join_note(n in declared, n in read_exps, "experiment"))
        for n in EXPERIMENTS
        if n in declared or n in read_exps
    )
    cons = []
    for n, entry in CONSTRUCTIONS.items():
        realises, built = entry.claim == c.id, n in read_cons
        if realises or built:
            via = f" through {_via(c.id, n)}" if built and _via(c.id, n) else ""
            if realises and built:
                note = f"realises this claim, built by the check{via}"
            elif realises:
                note = "realises this claim; the check does not build it"
            else:
                note = f"built by the check{via} (realises {entry.claim})"
            cons.append(_construction_ref(n, note))
    return Trail(
        claim=c.id,
        statement=c.statement,
        catalogue=_catalogue_ref(c.id),
        check=_check_ref(c.id),
        constructions=tuple(cons),
        experiments=exps,
        outputs=_outputs(c.id, exps),
        reads=reads_how(c.id),
    )


def trails() -> dict[str, Trail]:
    """Every claim's trail, in catalogue order."""
    return {c.id: trail(c.id) for c in claims()}


# --------------------------------------------------------------------------- the join test


def join_problems() -> list[str]:
    """Every join of the four registries that does not hold, one line each (empty when all
    hold): an experiment's or construction's claim id that is not in the catalogue, a check
    registered under an id that is not a claim, a claim without a check, an experiment or
    construction serving no claim, an experiment naming a claim whose check does not read it,
    a check reading an experiment that does not name its claim, a construction that no check
    builds, a check declaring a name that is not registered."""
    known = {c.id for c in claims()}
    problems = []
    for cid in CHECKS:
        if cid not in known:
            problems.append(f"check {cid}: registered under an id that is not a claim")
    for cid in sorted(known - set(CHECKS)):
        problems.append(f"claim {cid}: no check is registered for it")
    for name, exp in EXPERIMENTS.items():
        if not exp.claims:
            problems.append(f"experiment {name}: serves no claim (its claims=() is empty)")
        for cid in exp.claims:
            if cid not in known:
                problems.append(f"experiment {name}: names {cid!r}, which is not a claim")
            elif name not in check_reads(cid)[0]:
                problems.append(f"experiment {name}: names {cid}, whose check does not read {name}")
    for cid in sorted(set(CHECKS)):
        declared = declared_reads(cid) or ((), ())
        registries: tuple[dict, dict] = (dict(EXPERIMENTS), dict(CONSTRUCTIONS))
        for what, names, registry in zip(("experiment", "construction"), declared, registries):
            for name in names:
                if name not in registry:
                    problems.append(f"check {cid}: declares {what} {name!r}, not registered")
    for cid in known & set(CHECKS):
        for name in check_reads(cid)[0]:
            if cid not in EXPERIMENTS[name].claims:
                problems.append(
                    f"claim {cid}: its check reads experiment {name}, whose claims= does not "
                    f"name {cid}"
                )
    built = {n for cid in CHECKS for n in check_reads(cid)[1]}
    for name, entry in CONSTRUCTIONS.items():
        if not entry.claim:
            problems.append(f"construction {name}: serves no claim (its claim is empty)")
        elif entry.claim not in known:
            problems.append(f"construction {name}: names {entry.claim!r}, which is not a claim")
        if name not in built:
            problems.append(f"construction {name}: no check builds it")
    return problems
