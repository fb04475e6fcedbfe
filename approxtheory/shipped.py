"""Shipped trained results: finished experiment cells committed with the repository.

A trained cell that decides a claim can cost minutes of CPU; it is computed once (``approxtheory
experiment run NAME --profile decisive --ship``), written here as one small JSON file, committed,
and read by every later run whose cell code is the code that computed it::

    experiments/results/<experiment>/<cell id>.json

One file per finished cell: its parameters (the config, seed included; the device is not part of
it), its metrics and loss tail (the cell's record), the recipe (the config's training
parameters), the git revision and library versions it was computed with, its seconds (one
thread), and the
**fingerprint of the cell code**: the source of the cell function and of every function, class
and constant of its module that it uses (followed through the module), plus the whole source of
the library modules it trains with (:data:`CELL_CODE`, and an experiment's own ``code`` list).
A cell whose fingerprint differs from the current code's is **stale**: reported as such, never
used (``--retrain`` or ``--ship`` recomputes it). Editing a grid, a plot or a check does not make
cells stale; editing the model, the training loop, the task or the cell function does.

A file that is missing, not a regular file (a FIFO, a symlink, a device), larger than
:data:`MAX_BYTES`, not strict JSON, nested too deep, of another schema, not a record of the cell
its name says, or with an infinite or non-numeric metric (NaN is kept: cells record it by design
and the checks treat it as a failure; a cell's per-step ``trace`` is a list of flat rows of such
metrics) is treated as a missing cell, with one
warning line on stderr per run (:func:`read_cell`); it never crashes a run and never becomes a
verdict.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import importlib.util
import inspect
import json
import math
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from . import provenance
from .io import atomic_write_json, read_json_entry

__all__ = [
    "SCHEMA",
    "CELL_CODE",
    "MAX_BYTES",
    "store_dir",
    "cell_id",
    "code_fingerprint",
    "ShippedCell",
    "read_cell",
    "write_cell",
    "describe",
    "store_digest",
    "RETRAIN_ENV",
]

SCHEMA = "approxtheory-shipped-cell-1"
#: library modules every trained cell's numbers depend on (the model, the loop, the tasks)
CELL_CODE = ("approxtheory.model", "approxtheory.train", "approxtheory.tasks")
#: a shipped cell file is a few kB; anything larger is not one
MAX_BYTES = 256 << 10
#: set (to "1") while ``verify --retrain`` runs: checks compute decisive grids instead of
#: reading shipped cells (an environment variable, so that ``--jobs`` workers see it too)
RETRAIN_ENV = "APPROXTHEORY_RETRAIN"
#: configuration keys that do not change a cell's numbers (where it ran)
_NOT_IDENTITY = ("device",)


def store_dir() -> Path:
    """The store's folder: ``results/`` inside the experiments package (``experiments/results``
    in a checkout; installed with the package)."""
    d = provenance.package_dir("approxtheory.experiments")
    if d is None:  # pragma: no cover - the package is part of this distribution
        raise FileNotFoundError("the package approxtheory.experiments is not installed")
    return d / "results"


def _identity(config: dict) -> dict:
    return {k: v for k, v in config.items() if k not in _NOT_IDENTITY}


def cell_id(experiment: str, config: dict) -> str:
    """The cell's file name stem: 16 hex digits of the experiment's name and the config (the
    device left out)."""
    text = json.dumps([experiment, _identity(config)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ fingerprint
def _module_source(name: str) -> bytes:
    """The source of a module or a whole package (every .py file, sorted), by file, without
    importing it."""
    pkg = provenance.package_dir(name)
    if pkg is not None:
        return provenance.fingerprint_dirs([(name, pkg)]).encode()
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return f"absent module {name}".encode()
    return Path(spec.origin).read_bytes()


def _names(code: types.CodeType):
    """Every global name a code object (and the functions nested in it) loads, and every
    ``(module, name, level)`` it imports inside a function (``from .m import f``)."""
    module: str | None = None
    consts: list = []
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_CONST":
            consts = [*consts[-1:], ins.argval]
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
            yield ins.argval
        elif ins.opname == "IMPORT_NAME":  # after LOAD_CONST level, LOAD_CONST fromlist
            level = consts[0] if len(consts) == 2 and isinstance(consts[0], int) else 0
            module = "." * level + str(ins.argval)
        elif ins.opname == "IMPORT_FROM" and module is not None:
            yield (module, ins.argval)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _names(c)


def _imported(owner_module: str, target: tuple) -> object:
    """The object ``from module import name`` gives inside ``owner_module`` (relative imports
    resolved against its package), or None when it is not importable here."""
    import importlib

    module, name = target
    try:
        mod: types.ModuleType | None
        if module.startswith("."):
            pkg = owner_module.rsplit(".", 1)[0]
            mod = importlib.import_module(module.rstrip(".") or ".", pkg)
        else:
            mod = importlib.import_module(module) if module else None
        return getattr(mod, name, None) if mod is not None else None
    except (ImportError, ValueError):
        return None


#: packages whose functions a cell's closure is followed into (beyond them: CELL_CODE and an
#: experiment's ``code`` list, fingerprinted whole)
FOLLOW = ("approxtheory.experiments",)


def _followed(obj) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    return any(mod == p or mod.startswith(p + ".") for p in FOLLOW) or mod == getattr(
        _followed, "root", None
    )


def _closure(fn) -> list[tuple[str, str]]:
    """(qualified name, source or value) of ``fn`` and of every function, class and plain
    constant it uses from its own module or from the experiments package, followed through those
    functions: what the cell computes with, besides the library modules."""
    _followed.root = getattr(fn, "__module__", None)  # type: ignore[attr-defined]
    seen: dict[str, str] = {}
    todo: list[tuple[str, object, dict]] = []

    def push(name, obj, glb):
        todo.append((name, obj, glb))

    mod = sys.modules.get(getattr(fn, "__module__", ""), None)
    push("<cell>", fn, vars(mod) if mod is not None else {})
    while todo:
        name, obj, glb = todo.pop()
        if isinstance(obj, (types.FunctionType, type)):
            if not _followed(obj):
                continue  # another package's: covered by the declared library modules
            key = f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"
            if key in seen:
                continue
            try:
                seen[key] = inspect.getsource(obj)
            except (OSError, TypeError):
                seen[key] = repr(obj)
            own = vars(sys.modules[obj.__module__]) if obj.__module__ in sys.modules else glb
            codes = (
                [obj.__code__]
                if isinstance(obj, types.FunctionType)
                else [v.__code__ for v in vars(obj).values() if isinstance(v, types.FunctionType)]
            )
            for code in codes:
                for n in _names(code):
                    if isinstance(n, tuple):  # an import inside the function
                        got = _imported(obj.__module__, n)
                        if got is not None:
                            push(n[1], got, own)
                    elif n in own:
                        push(n, own[n], own)
        elif isinstance(obj, (int, float, str, bool, tuple, frozenset, type(None), dict, list)):
            key = f"{glb.get('__name__', '?')}.{name}"
            if key not in seen:
                # the assignment as written, never the value now: a module-level cache (a dict
                # filled by the first cell) must not change the fingerprint
                src = _assignment_source(str(glb.get("__name__", "")), name)
                if src is None and isinstance(obj, (dict, list)):
                    src = "mutable, not assigned at module level"
                seen[key] = src if src is not None else repr(obj)
    return sorted(seen.items())


@functools.cache
def _assignments(module: str) -> dict[str, str]:
    """Name -> source text of each module-level assignment of ``module`` (the last one wins)."""
    import ast

    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return {}
    text = Path(spec.origin).read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for node in ast.parse(text).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target]
        for t in targets:
            out[t.id] = ast.get_source_segment(text, node) or ""
    return out


def _assignment_source(module: str, name: str) -> str | None:
    try:
        return _assignments(module).get(name)
    except (ImportError, ValueError, SyntaxError, OSError):
        return None


@functools.cache
def _fingerprint(cell, modules: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for name, src in _closure(cell):
        h.update(f"{name}\0{src}\0".encode())
    for m in sorted(set(modules)):
        h.update(f"module {m}\0".encode())
        h.update(_module_source(m))
        h.update(b"\0")
    return h.hexdigest()[:16]


def code_fingerprint(exp) -> str:
    """The fingerprint of ``exp``'s cell code (module docstring): 16 hex digits."""
    return _fingerprint(exp.cell, tuple(CELL_CODE) + tuple(getattr(exp, "code", ()) or ()))


# ------------------------------------------------------------------------------ read / write
@dataclass(frozen=True)
class ShippedCell:
    """A shipped cell as read: ``status`` fresh (usable), stale (another code fingerprint) or
    missing; its ``record`` (config and metrics, fresh only) and the file's ``meta`` (revision,
    fingerprint, recipe, libraries, seconds: the cell's wall seconds on one thread)."""

    status: str
    record: dict | None = None
    meta: dict | None = None


_WARNED: set = set()


def _warn(path: Path, why: str) -> None:
    if str(path) in _WARNED:
        return
    _WARNED.add(str(path))
    print(
        f"approxtheory: warning: shipped cell {path} ignored ({why}); treated as not computed",
        file=sys.stderr,
    )


def _plain_metric(v) -> bool:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return True
    if isinstance(v, (int, float)):
        # NaN is a value some cells record by design ("not measured in this variant"), and the
        # checks treat it as a failure, never as a small error; an infinity is not a record
        return not math.isinf(v)
    return False


#: the most rows a shipped cell's per-step trace may hold
MAX_TRACE_ROWS = 10_000


def _trace(v) -> bool:
    """A cell's per-step ``trace``: a list (at most :data:`MAX_TRACE_ROWS`) of flat objects whose
    values are plain metrics (:func:`_plain_metric`)."""
    return (
        isinstance(v, list)
        and len(v) <= MAX_TRACE_ROWS
        and all(
            isinstance(row, dict)
            and all(isinstance(k, str) and _plain_metric(x) for k, x in row.items())
            for row in v
        )
    )


def _valid(data, exp_name: str, config: dict, cid: str) -> str:
    """Why ``data`` is not a shipped record of this cell ('' when it is)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("schema") != SCHEMA:
        return f"schema {str(data.get('schema'))[:40]!r}, expected {SCHEMA}"
    if data.get("experiment") != exp_name or data.get("cell") != cid:
        return "a record of another cell"
    cfg, rec = data.get("config"), data.get("record")
    if not isinstance(cfg, dict) or not isinstance(rec, dict) or not rec:
        return "no config or no record"
    if json.dumps(cfg, sort_keys=True, default=str) != json.dumps(
        json.loads(json.dumps(_identity(config), default=str)), sort_keys=True
    ):
        return "its config is not this cell's"
    bad = [k for k, v in rec.items() if not (_plain_metric(v) or (k == "trace" and _trace(v)))]
    if bad:
        return f"infinite or non-numeric metric(s) {', '.join(sorted(bad)[:3])}"
    if not isinstance(data.get("fingerprint"), str):
        return "no code fingerprint"
    return ""


def read_cell(exp, config: dict, folder: Path | None = None) -> ShippedCell:
    """The shipped cell of ``exp`` at ``config`` (see the module docstring for what counts as
    missing)."""
    folder = store_dir() if folder is None else Path(folder)
    cid = cell_id(exp.name, config)
    path = folder / exp.name / f"{cid}.json"
    if not path.exists() and not path.is_symlink():
        return ShippedCell("missing")
    data = read_json_entry(path, max_bytes=MAX_BYTES)
    if data is None:
        _warn(path, f"not a regular JSON file of at most {MAX_BYTES >> 10} KiB")
        return ShippedCell("missing")
    why = _valid(data, exp.name, config, cid)
    if why:
        _warn(path, why)
        return ShippedCell("missing")
    meta = {k: data.get(k) for k in ("revision", "fingerprint", "libraries", "seconds")}
    meta["recipe"] = data.get("recipe")
    if data["fingerprint"] != code_fingerprint(exp):
        return ShippedCell("stale", None, meta)
    return ShippedCell("fresh", {**config, **data["record"]}, meta)


#: the config keys that describe how a cell trained (its recipe), where present
RECIPE_KEYS = (
    "steps",
    "batch",
    "lr",
    "warmup",
    "decay",
    "min_lr",
    "optimizer",
    "schedule",
    "standardize",
    "ffn_kind",
)


def write_cell(exp, config: dict, record: dict, seconds: float, folder=None) -> Path:
    """Write a finished cell to the store (atomically): ``record`` holds the cell's own results
    (the config's keys are dropped from it)."""
    folder = store_dir() if folder is None else Path(folder)
    ident = _identity(config)
    rec = {k: v for k, v in record.items() if k not in config and k not in ("cell", "seconds")}
    libs = provenance.libraries()
    out = {
        "schema": SCHEMA,
        "experiment": exp.name,
        "cell": cell_id(exp.name, config),
        "config": ident,
        "recipe": {k: ident[k] for k in RECIPE_KEYS if k in ident},
        "record": rec,
        "fingerprint": code_fingerprint(exp),
        "revision": provenance.git_revision(),
        "libraries": {k: libs[k] for k in ("torch", "numpy", "python") if k in libs},
        "seconds": round(float(seconds), 1),
    }
    path = folder / exp.name / f"{out['cell']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_json(path, out, sort_keys=False)  # the record keeps its column order


def describe(metas: list[dict]) -> str:
    """What a set of shipped cells was computed with, for a verdict's note: revisions and
    recipes."""
    revs = sorted({str(m.get("revision") or "unknown")[:10] for m in metas})
    recipes = sorted({json.dumps(m.get("recipe") or {}, sort_keys=True) for m in metas})
    rtext = "; ".join(
        ", ".join(
            f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in json.loads(r).items()
        )
        for r in recipes
    )
    return f"computed at {', '.join(revs)}, recipe {rtext or 'unstated'}"


@functools.cache
def store_digest() -> str:
    """A digest of every shipped cell file (names and bytes), once per process: part of the key
    of a cached verdict, so a verdict that read shipped cells is recomputed when they change."""
    h = hashlib.sha256()
    root = store_dir()
    if root.is_dir():
        for p in sorted(root.rglob("*.json")):
            if p.is_file() and not p.is_symlink():
                h.update(p.relative_to(root).as_posix().encode() + b"\0")
                data = read_json_entry(p, max_bytes=MAX_BYTES)
                h.update(json.dumps(data, sort_keys=True, default=str).encode() + b"\0")
    return h.hexdigest()[:16]
