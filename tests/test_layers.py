"""The import graph of approxtheory: no cycles, a declared layer order, no
module imports the old top-level names, and every module imports on its own.

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` of the
package, function-local ones included (``if TYPE_CHECKING:`` imports count for the layers, not
for the cycles: they never run). ``from pkg import name`` is an edge to ``pkg.name`` when that is
a module, else to ``pkg``. Importing a submodule runs its parent packages' ``__init__`` first, so
an import of ``a.b.c`` is also an edge to ``a.b`` and ``a``, except to the packages of the
importing module itself (they are already running when it is).

The layers, lowest first, are :data:`LAYERS`; a module imports only from its own layer or a
lower one. A new module is placed in a layer here (the test fails until it is).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "approxtheory"
#: the folders installed under the package (``[tool.setuptools.package-dir]``)
MAPPED = {"approxtheory.experiments": "experiments", "approxtheory.proofs_check": "proofs_check"}
#: import names that must not exist (the folders above are only importable under the package)
OLD_NAMES = ("experiments", "proofs_check")

#: lowest first; a module may import from its own layer and the layers before it
LAYERS: list[tuple[str, list[str]]] = [
    (
        "foundation",
        [
            "approxtheory.errors",
            "approxtheory.io",
            "approxtheory.foreign",
            "approxtheory.parse",
            "approxtheory.resources",
            "approxtheory.provenance",
            "approxtheory.ratefit",
            "approxtheory.progress",
            "approxtheory._cliargs",
            "approxtheory._validate",
            "approxtheory.report",
            "approxtheory.report_page",
            "approxtheory.mathml",
            "approxtheory.plots",
            "approxtheory.plots.*",
        ],
    ),
    (
        "catalogue",
        [
            "approxtheory.catalogue",
            "approxtheory.catalogue.*",
            "approxtheory",
            "approxtheory.infoflow",
            "approxtheory.findings",
        ],
    ),
    ("model and tasks", ["approxtheory.model", "approxtheory.model.*", "approxtheory.tasks"]),
    (
        "measure and bounds",
        [
            "approxtheory.measure",
            "approxtheory.bounds",
            "approxtheory.bounds.*",
            "approxtheory.bracket_softmax",
        ],
    ),
    ("constructions", ["approxtheory.constructions", "approxtheory.constructions.*"]),
    (
        "analyses",
        [
            "approxtheory.identifiability",
            "approxtheory.identifiability_modules",
            "approxtheory.interop",
            "approxtheory.interop_targets",
            "approxtheory.hf_files",
            "approxtheory.bench",
            "approxtheory.bench.model",
            "approxtheory.bench.search",
            "approxtheory.bench.bracket",
            "approxtheory.strategies",
            "approxtheory.strategies.*",
            "approxtheory.headcount_analysis",
            "approxtheory.schedules",
            "approxtheory.advise",
            "approxtheory._advise_text",
            "approxtheory.testing",
            "approxtheory.testing.*",
            "approxtheory.pytest_plugin",
        ],
    ),
    ("training", ["approxtheory.train", "approxtheory.bench.train"]),
    (
        "experiment runner",
        [
            "approxtheory.experiment",
            "approxtheory.executors",
            "approxtheory.bench.sweep",
            "approxtheory.shipped",
            "approxtheory.experiment_plan",
        ],
    ),
    ("experiments", ["approxtheory.experiments", "approxtheory.experiments.*"]),
    ("checks", ["approxtheory.proofs_check", "approxtheory.proofs_check.*"]),
    # the trail joins the checks, experiments and constructions; the docs pages show
    # each claim's trail, so they sit here too
    (
        "verify",
        [
            "approxtheory.verify",
            "approxtheory.mutant_rules",
            "approxtheory.trail",
            "approxtheory.docs",
            "approxtheory.bench.gated",
            "approxtheory.bench.explain",
            "approxtheory.bench.threads",
            "approxtheory.advise_train",
        ],
    ),
    ("commands", ["approxtheory.commands", "approxtheory.commands.*"]),
    ("cli", ["approxtheory.cli", "approxtheory.__main__"]),
]


# ------------------------------------------------------------------------------- the graph


def package_dirs() -> dict[str, Path]:
    """Import name -> source directory of the package and of the folders mapped under it (which
    must resolve under their package names: the project is installed)."""
    dirs = {PACKAGE: ROOT / PACKAGE}
    for name, folder in MAPPED.items():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, (
            f"{name} does not resolve: reinstall the project (pip install -e .)"
        )
        dirs[name] = ROOT / folder
    return dirs


def modules(dirs: dict[str, Path] | None = None) -> dict[str, Path]:
    """Every module of the package (dotted name -> file); ``__init__.py`` is its package."""
    if dirs is None:
        return dict(_package_modules())
    out = {}
    for name, d in dirs.items():
        for p in sorted(d.rglob("*.py")):
            rel = p.relative_to(d)
            if "__pycache__" in rel.parts or not all(
                (d / Path(*rel.parts[:i]) / "__init__.py").exists() for i in range(len(rel.parts))
            ):
                continue  # not inside a package
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([name, *parts])] = p
    return out


@functools.lru_cache(maxsize=1)
def _package_modules() -> tuple[tuple[str, Path], ...]:
    return tuple(modules(package_dirs()).items())


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Line numbers of the statements under ``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def imports_of(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """``(imported module, line, type-checking only)`` for every import of a module of the
    package (or of an old top-level name, reported as such) in the module ``name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tc = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    roots = (PACKAGE, *OLD_NAMES)

    def resolve(dotted: str) -> str:  # the longest prefix that is a module
        parts = dotted.split(".")
        while len(parts) > 1 and ".".join(parts) not in known:
            parts.pop()
        return ".".join(parts)

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for t in targets:
            if t.split(".")[0] in roots:
                t = resolve(t)
                out.append((t, node.lineno, node.lineno in tc))
                # importing a.b.c runs the __init__ of a.b first: an edge to every package
                # above the target that is not already a package of this module
                parts = t.split(".")
                for i in range(1, len(parts)):
                    parent = ".".join(parts[:i])
                    if parent in known and not (name + ".").startswith(parent + "."):
                        out.append((parent, node.lineno, node.lineno in tc))
    return out


def import_graph(
    mods: dict[str, Path] | None = None, runtime_only: bool = False
) -> dict[str, dict[str, int]]:
    """module -> {imported module of the package: line}."""
    if mods is None:
        return {k: dict(v) for k, v in _package_graph(runtime_only)}
    known = set(mods)
    graph = {}
    for name, path in mods.items():
        graph[name] = {}
        for target, line, type_only in imports_of(name, path, known):
            if target != name and not (runtime_only and type_only):
                graph[name].setdefault(target, line)
    return graph


@functools.lru_cache(maxsize=2)
def _package_graph(runtime_only: bool) -> tuple:
    return tuple(import_graph(modules(), runtime_only).items())


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (``a -> b -> ... -> a``) per strongly connected component with more than one
    module (Tarjan), each starting at its alphabetically first module."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    out = []
    for comp in comps:  # a shortest path back to the start, within comp
        start, members = comp[0], set(comp)
        prev, frontier, found = {start: None}, [start], None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == start:
                        found = v
                        break
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path, v = [start], found
        while v is not None and v != start:
            path.insert(1, v)
            v = prev[v]
        out.append(path + [start])
    return sorted(out)


def layer_of(module: str) -> int | None:
    hits = [
        i for i, (_, pats) in enumerate(LAYERS) if any(fnmatch.fnmatchcase(module, p) for p in pats)
    ]
    assert len(hits) <= 1, f"{module} matches several layers: {[LAYERS[i][0] for i in hits]}"
    return hits[0] if hits else None


def layer_violations(graph: dict[str, dict[str, int]], paths: dict[str, Path]) -> list[str]:
    out = []
    for a in sorted(graph):
        la = layer_of(a)
        for b, line in sorted(graph[a].items()):
            lb = layer_of(b)
            if la is not None and lb is not None and lb > la:
                out.append(
                    f"{a} (layer {LAYERS[la][0]!r}) imports {b} (layer {LAYERS[lb][0]!r}, "
                    f"above it) at {paths[a].relative_to(ROOT)}:{line}"
                )
    return out


# ------------------------------------------------------------------------------- the tests


def test_the_graph_reader_sees_every_kind_of_import(tmp_path):
    """Absolute, relative (one and two levels), ``from pkg import submodule``, function-local,
    type-checking-only and old-name imports, on a small package."""
    pkg = tmp_path / "approxtheory"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text("x = 1\ndef f():\n    from approxtheory.sub import c\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from .sub.c import y\nimport experiments\n"
    )
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import a, b\nfrom ..a import x\ny = 2\n")
    mods = modules({"approxtheory": pkg})
    assert set(mods) == {
        "approxtheory",
        "approxtheory.a",
        "approxtheory.b",
        "approxtheory.sub",
        "approxtheory.sub.c",
    }
    g = import_graph(mods)
    assert g["approxtheory"] == {"approxtheory.a": 1}
    # importing approxtheory.sub.c from outside approxtheory.sub runs approxtheory.sub first
    assert g["approxtheory.a"] == {"approxtheory.sub.c": 3, "approxtheory.sub": 3}
    assert g["approxtheory.b"] == {"approxtheory.sub.c": 3, "approxtheory.sub": 3, "experiments": 4}
    assert g["approxtheory.sub.c"] == {"approxtheory.a": 1, "approxtheory.b": 1}
    assert "approxtheory.sub.c" not in import_graph(mods, runtime_only=True)["approxtheory.b"]
    assert cycles(import_graph(mods, runtime_only=True)) == [
        ["approxtheory.a", "approxtheory.sub.c", "approxtheory.a"]
    ]


def test_cycles_are_found_and_named():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}, "e": {"e": 1}}
    assert cycles(g) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_the_package_has_no_import_cycle():
    found = cycles(import_graph(runtime_only=True))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_every_module_is_in_a_declared_layer():
    missing = [m for m in modules() if layer_of(m) is None]
    assert not missing, (
        f"modules in no layer: {missing}; add each to LAYERS in "
        f"tests/test_layers.py, in the layer whose modules it may import"
    )


def test_a_module_imports_only_from_its_layer_or_below():
    mods = modules()
    bad = layer_violations(import_graph(), mods)
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_a_layer_violation_is_reported():
    g = {"approxtheory.errors": {"approxtheory.cli": 7}, "approxtheory.cli": {}}
    paths = {m: ROOT / "approxtheory" / f"{m.split('.')[-1]}.py" for m in g}
    assert layer_violations(g, paths) == [
        "approxtheory.errors (layer 'foundation') imports approxtheory.cli (layer 'cli', above "
        "it) at approxtheory/errors.py:7"
    ]


# ------------------------------------------------------------------------- papers apart

#: the modules of each paper (fnmatch patterns over dotted names): its catalogue, constructions,
#: analysis, experiments, checks and command; every module named in none of them is shared
#: (the kernel and the aggregators: catalogue/constructions registries, verify, docs, advise,
#: the CLI). A paper's module imports only its own paper's modules and shared ones.
PAPERS: dict[str, list[str]] = {
    "headcount": [
        "approxtheory.catalogue.headcount",
        "approxtheory.constructions.headcount",
        "approxtheory.headcount_analysis",
        "approxtheory.experiments.headcount_*",
        "approxtheory.proofs_check.headcount",
        "approxtheory.proofs_check.headcount.*",
        "approxtheory.proofs_check.headcount_more",
    ],
    "tradeoffs": [
        "approxtheory.catalogue.tradeoffs",
        "approxtheory.constructions.tradeoffs",
        "approxtheory.experiments._tradeoffs",
        "approxtheory.experiments.tradeoffs_*",
        "approxtheory.proofs_check.tradeoffs",
        "approxtheory.proofs_check.tradeoffs.*",
    ],
    "infoflow": [
        "approxtheory.catalogue.infoflow",
        "approxtheory.constructions.infoflow",
        "approxtheory.infoflow",
        "approxtheory.experiments.infoflow_*",
        "approxtheory.proofs_check.infoflow",
        "approxtheory.proofs_check.infoflow.*",
        "approxtheory.commands.infoflow",
    ],
    "identification": [
        "approxtheory.catalogue.identification",
        "approxtheory.identifiability",
        "approxtheory.identifiability_modules",
        "approxtheory.experiments.identifiability_*",
        "approxtheory.proofs_check.identification",
        "approxtheory.proofs_check.identification.*",
        "approxtheory.commands.identifiability",
    ],
    "prism": [
        "approxtheory.catalogue.prism",
        "approxtheory.schedules",
        "approxtheory.experiments.prism_*",
        "approxtheory.proofs_check.prism",
        "approxtheory.proofs_check.prism.*",
        "approxtheory.commands.schedule",
    ],
}

#: words that mark a module name as a paper's: such a module must be in :data:`PAPERS`
PAPER_WORDS = ("headcount", "tradeoff", "infoflow", "identif", "prism")

#: cross-paper imports that stay until the code they touch may change, each with its reason.
#: The corpus reader (``load_corpus``, ``check_corpus_length``, ``_corpus_stats``) lives in the
#: identifiability experiment; moving it to a shared module renames it in the code fingerprint
#: of every cell that reads a corpus (approxtheory/shipped.py), and the shipped prism_paired
#: and tradeoffs_layers cells would go stale: it moves when those cells are next recomputed.
KNOWN_CROSS_IMPORTS: dict[tuple[str, str], str] = {
    (a, "approxtheory.experiments.identifiability_training"): "the corpus reader (shipped cells)"
    for a in (
        "approxtheory.experiments._tradeoffs",
        "approxtheory.experiments.prism_paired",
        "approxtheory.experiments.tradeoffs_layers",
    )
}


def paper_of(module: str) -> str | None:
    """The paper whose module ``module`` is (see :data:`PAPERS`), or None for a shared one."""
    hits = [p for p, pats in PAPERS.items() if any(fnmatch.fnmatchcase(module, q) for q in pats)]
    assert len(hits) <= 1, f"{module} belongs to several papers: {hits}"
    return hits[0] if hits else None


def cross_paper_imports(graph: dict[str, dict[str, int]]) -> dict[tuple[str, str], int]:
    """(importer, imported) -> line, for every import of one paper's module by another's."""
    out = {}
    for a in sorted(graph):
        pa = paper_of(a)
        for b, line in sorted(graph[a].items()):
            pb = paper_of(b)
            if pa is not None and pb is not None and pa != pb:
                out[(a, b)] = line
    return out


def cross_paper_violations(
    graph: dict[str, dict[str, int]],
    paths: dict[str, Path],
    known: dict[tuple[str, str], str] = KNOWN_CROSS_IMPORTS,
) -> list[str]:
    return [
        f"{a} ({paper_of(a)}) imports {b} ({paper_of(b)}) at {paths[a].relative_to(ROOT)}:{line}"
        for (a, b), line in cross_paper_imports(graph).items()
        if (a, b) not in known
    ]


def test_every_paper_names_modules_that_exist():
    mods = modules()
    for paper, pats in PAPERS.items():
        for pat in pats:
            assert any(fnmatch.fnmatchcase(m, pat) for m in mods), (paper, pat)


def test_a_module_named_for_a_paper_is_that_papers():
    """A new paper module cannot pass as shared: a name that mentions a paper is mapped."""
    unmapped = [
        m
        for m in modules()
        if paper_of(m) is None and any(w in m.split(".", 1)[-1] for w in PAPER_WORDS)
    ]
    assert not unmapped, f"add these to PAPERS in tests/test_layers.py: {unmapped}"


def test_no_papers_module_imports_another_papers():
    """What two papers share lives in the shared layer (DESIGN.md: papers do not import papers)."""
    mods = modules()
    graph = import_graph()
    bad = cross_paper_violations(graph, mods)
    assert not bad, "a paper's module imports another paper's:\n" + "\n".join(bad)
    # every known exception is still there (one that is gone is struck from the list)
    assert set(KNOWN_CROSS_IMPORTS) <= set(cross_paper_imports(graph)), sorted(
        set(KNOWN_CROSS_IMPORTS) - set(cross_paper_imports(graph))
    )


def test_a_cross_paper_import_is_reported(tmp_path):
    """A planted import of the trade-offs checks by an InfoFlow check (function-local, relative,
    as the shared gate helpers were once imported) goes red; the shared module does not."""
    pkg = tmp_path / "approxtheory"
    for sub in ("proofs_check", "proofs_check/infoflow", "proofs_check/tradeoffs"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "proofs_check" / "_trained_verdicts.py").write_text("def gate(): ...\n")
    (pkg / "proofs_check" / "infoflow" / "rates.py").write_text(
        "from .._trained_verdicts import gate\ndef f():\n    from ..tradeoffs import x\n"
    )
    mods = modules({"approxtheory": pkg})
    graph = import_graph(mods)
    paths = {m: ROOT / p.relative_to(tmp_path) for m, p in mods.items()}
    assert cross_paper_violations(graph, paths) == [
        "approxtheory.proofs_check.infoflow.rates (infoflow) imports "
        "approxtheory.proofs_check.tradeoffs (tradeoffs) at approxtheory/proofs_check/infoflow/"
        "rates.py:3"
    ]
    # the same import, declared a known exception, passes
    assert (
        cross_paper_violations(
            graph,
            paths,
            {
                (
                    "approxtheory.proofs_check.infoflow.rates",
                    "approxtheory.proofs_check.tradeoffs",
                ): "x"
            },
        )
        == []
    )
    # and on the package's own graph, one planted edge is caught
    real = import_graph()
    planted = {
        **real,
        "approxtheory.schedules": {**real["approxtheory.schedules"], "approxtheory.infoflow": 9},
    }
    assert [v for v in cross_paper_violations(planted, modules()) if "schedules" in v] == [
        "approxtheory.schedules (prism) imports approxtheory.infoflow (infoflow) at "
        "approxtheory/schedules.py:9"
    ]


def test_only_the_commands_layer_holds_argparse_wiring():
    """No library module adds parsers or arguments, or defines a command's ``register``."""
    commands = [i for i, (n, _) in enumerate(LAYERS) if n == "commands"][0]
    found = []
    for name, path in modules().items():
        if (layer_of(name) or 0) >= commands:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr
                in ("add_parser", "add_argument", "add_subparsers", "set_defaults")
            ):
                found.append(f"{name}:{node.lineno}: .{node.func.attr}()")
            if (
                isinstance(node, ast.FunctionDef)
                and node.name == "register"
                and len(node.args.args) == 1
            ):
                found.append(f"{name}:{node.lineno}: def register({node.args.args[0].arg})")
    assert not found, found


_OLD_ALTERNATIVES = "|".join(OLD_NAMES)
_OLD_IMPORT = re.compile(
    rf"^\s*(?:>>>\s*)?(?:from\s+({_OLD_ALTERNATIVES})(?:\.|\s)|import\s+({_OLD_ALTERNATIVES})\b)",
    re.M,
)
_OLD_DYNAMIC = re.compile(rf"""import_module\(\s*["'](?:{_OLD_ALTERNATIVES})\b""")


def old_name_imports(text: str) -> list[int]:
    """Line numbers importing ``experiments`` or ``proofs_check`` as top-level names."""
    return sorted(
        {
            text.count("\n", 0, m.start()) + 1
            for r in (_OLD_IMPORT, _OLD_DYNAMIC)
            for m in r.finditer(text)
        }
    )


def test_old_name_imports_are_recognised():
    assert old_name_imports(
        "import experiments\nfrom proofs_check import x\n"
        "    from experiments._rng import f\n>>> import proofs_check\n"
        f"importlib.import_module({'experiments'!r})\n"
    ) == [1, 2, 3, 4, 5]
    assert (
        old_name_imports(
            "from approxtheory.experiments import x\nimport approxtheory."
            "proofs_check\nfrom approxtheory import experiments\n"
            "# the experiments folder\nimport experimentsX\n"
        )
        == []
    )


def repository_files() -> list[Path]:
    """The files of the checkout (tracked and new, not ignored), relative to the root."""
    try:
        r = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            timeout=60,
        )
        if r.returncode == 0:
            return [
                Path(f)
                for f in sorted(set(r.stdout.decode().split("\0")))
                if f and (ROOT / f).is_file()
            ]
    except OSError:
        pass
    skip = {".git", ".venv", "build", "results", "report", "site", "__pycache__"}
    return [
        p.relative_to(ROOT)
        for p in sorted(ROOT.rglob("*"))
        if p.is_file() and not set(p.relative_to(ROOT).parts) & skip
    ]


def test_nothing_imports_the_old_top_level_names():
    """The built-in experiments and the checks are ``approxtheory.experiments`` and
    ``approxtheory.proofs_check``; importing them as ``experiments`` / ``proofs_check`` (which
    would still resolve from the repository root) would register every experiment twice."""
    found = []
    for rel in repository_files():
        p = ROOT / rel
        if p.suffix in (".py", ".md", ".toml", ".cfg", ".ini", ".txt") or p.name == "run":
            text = p.read_text(encoding="utf-8", errors="replace")
        elif p.suffix == ".ipynb":
            cells = json.loads(p.read_text(encoding="utf-8")).get("cells", [])
            text = "\n".join("".join(c.get("source", [])) for c in cells)
        else:
            continue
        found += [f"{rel}:{n}" for n in old_name_imports(text)]
    assert not found, f"imports of the old top-level names: {found}"


def test_the_old_names_refuse_to_import_and_experiments_do_not_register_twice(tmp_path):
    """From the repository root the folders are importable under their old names: their
    ``__init__`` refuses, and a second registration of an experiment raises ConfigError."""
    code = (
        "import approxtheory.experiments, approxtheory.proofs_check\n"
        "for old in ('experiments', 'proofs_check'):\n"
        "    try:\n"
        "        __import__(old)\n"
        "    except ImportError as e:\n"
        "        assert 'approxtheory.' + old in str(e), e\n"
        "    else:\n"
        "        raise SystemExit(old + ' imported')\n"
        "from approxtheory.errors import ConfigError\n"
        "from approxtheory.experiment import EXPERIMENTS, Experiment, register_experiment\n"
        "e = EXPERIMENTS['softmax_beta_sweep']\n"
        "register_experiment(e)                       # the same cell again: a reload\n"
        "def cell(cfg): return {}\n"
        "try:\n"
        "    register_experiment(Experiment('softmax_beta_sweep', 'x', {}, cell))\n"
        "except ConfigError as err:\n"
        "    assert 'registered twice' in str(err), err\n"
        "else:\n"
        "    raise SystemExit('registered twice silently')\n"
        "print('ok')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_the_declared_packages_are_every_package_of_the_tree():
    """pyproject lists the packages explicitly (the mapping needs it): a new subpackage that is
    not listed would be left out of the wheel."""
    tomllib = pytest.importorskip("tomllib")
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["package-dir"] == MAPPED
    tree = {m for m, p in modules().items() if p.name == "__init__.py"}
    assert set(setup["packages"]) == tree
    assert "py.typed" in setup["package-data"]["approxtheory"]
    assert (ROOT / "approxtheory" / "py.typed").is_file()


# ------------------------------------------------------------------- importing on its own

#: third-party libraries loaded before forking (their import order cannot create a cycle of ours)
PRELOAD = (
    "numpy",
    "scipy",
    "scipy.optimize",
    "scipy.linalg",
    "scipy.stats",
    "sympy",
    "torch",
    "matplotlib",
    "matplotlib.pyplot",
    "hypothesis",
    "tqdm",
)

_FORK_DRIVER = r"""
import importlib, json, os, sys, traceback
import matplotlib
matplotlib.use("Agg")
for lib in PRELOAD:
    try:
        importlib.import_module(lib)
    except ImportError:
        pass
assert not [m for m in sys.modules if m == "approxtheory" or m.startswith("approxtheory.")]
todo, workers, results, running = list(MODULES), WORKERS, {}, {}
while todo or running:
    while todo and len(running) < workers:
        mod = todo.pop(0)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                importlib.import_module(mod)
                msg = "ok"
            except BaseException as e:
                msg = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-3:])
            os.write(w, msg.encode()[:60000])
            os._exit(0)
        os.close(w)
        running[pid] = (mod, r)
    pid, status = os.wait()
    mod, r = running.pop(pid)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    results[mod] = b"".join(chunks).decode() or f"exit status {status}"
print(json.dumps(results))
"""


def import_each_forked(
    mods: list[str], workers: int = 2, timeout: float = 600, preload: tuple[str, ...] = PRELOAD
) -> dict:
    """Import every module in its own process, forked from a fresh interpreter that loaded only
    the third-party libraries ``preload``: module -> "ok" or the error."""
    code = (
        _FORK_DRIVER.replace("PRELOAD", repr(preload))
        .replace("MODULES", repr(mods))
        .replace("WORKERS", str(workers))
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT / "tests",
        env={**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def import_alone(mod: str) -> str:
    """``python -c "import mod"`` in a fresh interpreter: "ok" or the error."""
    r = subprocess.run(
        [sys.executable, "-c", f"import {mod}"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT / "tests",
        env={**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
    )
    return "ok" if r.returncode == 0 else r.stderr.strip()[-2000:]


def importable_modules() -> list[str]:
    """Every module but ``__main__`` (importing it runs the command line)."""
    return sorted(m for m in modules() if m.rpartition(".")[2] != "__main__")


def sample_modules() -> list[str]:
    """Per layer, the module importing the most modules of the package (the likeliest to sit
    on a cycle that only bites when it is imported first)."""
    graph = import_graph(runtime_only=True)
    best: dict[int, str] = {}
    for m in importable_modules():
        i = layer_of(m)
        if i is not None and (i not in best or len(graph[m]) > len(graph[best[i]])):
            best[i] = m
    return [best[i] for i in sorted(best)]


def _import_sweep(mods: list[str]) -> None:
    results = import_each_forked(mods)
    bad = {m: r for m, r in results.items() if r != "ok"}
    assert not bad, "modules that do not import on their own:\n" + "\n".join(
        f"--- {m}\n{r}" for m, r in bad.items()
    )
    assert set(results) == set(mods)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_sample_of_modules_imports_on_its_own():
    """One module per layer (see :func:`sample_modules`) imported first in a process of its own,
    forked after loading only numpy, torch, sympy, ...; run from tests/, so the repository root
    is not on sys.path. Every module: the slow tests below."""
    mods = sample_modules()
    assert len(mods) == len(LAYERS) and "approxtheory.cli" in mods
    _import_sweep(mods)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_module_imports_on_its_own():
    """As above, for every module (about 0.7 s of CPU each)."""
    _import_sweep(importable_modules())


def test_a_module_that_cannot_import_on_its_own_is_caught(tmp_path):
    """A two-module cycle that fails only when one side is imported first, in a package on the
    path of the forked driver."""
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import g\ndef f():\n    return 1\n")
    (pkg / "b.py").write_text("from .a import f\ndef g():\n    return 2\n")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tmp_path) + (os.pathsep + old if old else "")
    try:
        res = import_each_forked(["cyc.a", "cyc.b", "json"], preload=())
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    assert res["json"] == "ok"
    assert "partially initialized module" in res["cyc.a"] and "ImportError" in res["cyc.b"]


@pytest.mark.slow
def test_every_module_imports_in_a_fresh_interpreter():
    """The literal check: ``python -c "import X"`` for every module (two at a time)."""
    mods = importable_modules()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(mods, pool.map(import_alone, mods)))
    bad = {m: r for m, r in results.items() if r != "ok"}
    assert not bad, "\n".join(f"--- {m}\n{r}" for m, r in bad.items())
