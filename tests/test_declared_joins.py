"""Declared joins: a check names what it reads, ``@check("IF-P3",
experiments=(...), constructions=(...))`` (:data:`approxtheory.proofs_check.READS`), and this test
holds it to that at run time: a sample of cheap checks runs under the smoke profile (trained rows
come from the shipped and cached cells, nothing is trained) with every way of reading rows or
building a construction replaced by a recorder, and what each check read must be among what it
declares. A planted check that reads an experiment or builds a construction it does not declare
goes red. Statically, for every check: what its source names (the parse ``trail`` fell back on
before the declarations) is declared too."""

from __future__ import annotations

import dataclasses
import sys

import pytest

import approxtheory.constructions  # noqa: F401  (registers the constructions)
import approxtheory.experiment as runner
import approxtheory.experiments  # noqa: F401  (registers the experiments)
from approxtheory import trail as tr
from approxtheory.constructions import REGISTRY as CONSTRUCTIONS
from approxtheory.experiment import EXPERIMENTS
from approxtheory.proofs_check import CHECKS, MUTANTS, READS, Context, _core, _rows

#: checks run by the runtime test: every kind of read (trained rows through ``_rows.exp_rows``,
#: through ``experiment_rows`` directly and through the trade-offs' ``_trained`` alias; two
#: experiments in one check; ``build(name)``, ``construction_grid``, a registered construction
#: function imported and called, a model builder called directly), each under a few seconds on
#: the smoke profile; the slower construction grids are held to their declarations statically
SAMPLE = (
    "HC-K1",
    "HC-P3",
    "HC-L9",
    "HC-K2",
    "HC-P8",
    "HC-P9",
    "HC-P10",
    "HC-P7",
    "HC-Conj1",
    "ID-E5",
    "ID-F4",
    "IF-K3",
    "IF-E1",
    "IF-P3",
    "IF-E3",
    "PR-E1",
    "TO-X2",
    "TO-C1",
    "TO-R1",
    "TO-R3",
)
#: checks that read and build nothing: they declare nothing, and read nothing when run
NOTHING = ("HC-P6", "TO-T1")


def _modules(prefix: str) -> list:
    return [m for n, m in list(sys.modules.items()) if n.startswith(prefix) and m is not None]


def _record(monkeypatch) -> list[tuple[str, str]]:
    """Replace every binding of the row reader and of the experiment registry's ``get`` (a check
    reading an experiment's grid), every registered construction's build (in the registry and
    where its function is imported) and every model builder of the constructions' package with
    a recorder; returns the list it appends ``("experiment", name)``,
    ``("construction", name)`` and ``("model", builder key)`` to (a model builder called inside
    a registered build is that construction's, not recorded again)."""
    seen: list[tuple[str, str]] = []
    depth = [0]
    rows, get = _core.experiment_rows, runner.get

    def recording_rows(name, profile, *a, **k):
        seen.append(("experiment", name))
        return rows(name, profile, *a, **k)

    def recording_get(name, *a, **k):
        seen.append(("experiment", name))
        return get(name, *a, **k)

    monkeypatch.setattr(runner, "get", recording_get)

    def wrap(kind: str, key: str, fn):
        def recording(*a, **k):
            if depth[0] == 0:
                seen.append((kind, key))
            depth[0] += 1
            try:
                return fn(*a, **k)
            finally:
                depth[0] -= 1

        return recording

    built = {}
    for name, entry in CONSTRUCTIONS.items():
        built[id(entry.build)] = wrapper = wrap("construction", name, entry.build)
        monkeypatch.setitem(CONSTRUCTIONS, name, dataclasses.replace(entry, build=wrapper))
    checks = _modules("approxtheory.proofs_check")
    for mod in checks + _modules("approxtheory.constructions"):
        for attr, value in list(vars(mod).items()):
            if value is rows and mod in checks:
                monkeypatch.setattr(mod, attr, recording_rows)
            elif value is get and mod in checks:
                monkeypatch.setattr(mod, attr, recording_get)
            elif id(value) in built and callable(value):
                monkeypatch.setattr(mod, attr, built[id(value)])
            elif tr._is_builder(value):
                monkeypatch.setattr(mod, attr, wrap("model", tr._builder(value), value))
    return seen


def _clear_memos() -> None:
    """Forget the memoised grids, so a check builds what it builds even where an earlier check
    measured the same grid."""
    for mod in _modules("approxtheory.proofs_check"):
        for value in vars(mod).values():
            if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_size"):
                value.cache_clear()


def _undeclared(cid: str, seen, models: dict) -> list[str]:
    """What the check of ``cid`` read (``seen``, from :func:`_record`) beyond its declaration;
    a model builder counts as declared when one construction it builds is."""
    exps, cons = tr.declared_reads(cid) or ((), ())
    out = []
    for kind, name in dict.fromkeys(seen):
        if kind == "experiment" and name not in exps:
            out.append(f"{cid} reads experiment {name}, not in its experiments={exps}")
        elif kind == "construction" and name not in cons:
            out.append(f"{cid} builds construction {name}, not in its constructions={cons}")
        elif kind == "model" and not set(models.get(name, ())) & set(cons):
            out.append(
                f"{cid} calls {name.rsplit('.', 1)[1]} (the model of "
                f"{', '.join(models.get(name, ())) or 'no construction'}), none of them in its "
                f"constructions={cons}"
            )
    return out


def _builder_models() -> dict[str, tuple[str, ...]]:
    """builder key -> the constructions whose registered build calls it (read before patching)."""
    out: dict[str, list[str]] = {}
    for name in CONSTRUCTIONS:
        for key in tr._models_of(name):
            out.setdefault(key, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _run(cid: str, seen: list) -> list[tuple[str, str]]:
    seen.clear()
    _clear_memos()
    CHECKS[cid](Context(profile="smoke"))
    return list(seen)


@pytest.fixture
def recorder(monkeypatch):
    models = _builder_models()
    _clear_memos()
    seen = _record(monkeypatch)
    yield seen, models
    _clear_memos()  # no grid built through a recorder outlives the test


def test_sampled_checks_read_only_what_they_declare(recorder):
    seen, models = recorder
    problems, silent = [], []
    for cid in SAMPLE:
        assert tr.declared_reads(cid) is not None, f"{cid} declares no experiments=/constructions="
        got = _run(cid, seen)
        problems += _undeclared(cid, got, models)
        if not got:
            silent.append(cid)
    assert not problems, "\n".join(problems)
    # the recorder sees the reads: nearly every sampled check read or built something
    assert len(silent) <= 2, f"no read recorded for {silent}"
    for cid in NOTHING:
        assert tr.declared_reads(cid) is None and not _run(cid, seen), cid


@pytest.mark.parametrize(
    "declares,reads,want",
    [
        (  # the mutant of the issue: an undeclared experiment read
            {"experiments": ("headcount_width",)},
            lambda ctx: _rows.exp_rows("headcount_variants", ctx.profile),
            "XX-PLANT reads experiment headcount_variants",
        ),
        (  # an undeclared construction built by name
            {"constructions": ("hc_l9",)},
            lambda ctx: CONSTRUCTIONS["hc_k2"].build(T=4, d=2),
            "XX-PLANT builds construction hc_k2",
        ),
        (  # a model builder called directly, for a construction not declared
            {"constructions": ("hc_k2",)},
            lambda ctx: approxtheory.constructions.build_lag_model(8, 2, 4, 5.0),
            "XX-PLANT calls build_lag_model",
        ),
    ],
)
def test_a_planted_undeclared_read_goes_red(recorder, declares, reads, want):
    seen, models = recorder
    cid = "XX-PLANT"

    def planted(ctx, cid):
        reads(ctx)
        return _core.Verdict(cid, "not-checkable", "planted", scope="none")

    _core.check(cid, **declares)(planted)
    try:
        problems = _undeclared(cid, _run(cid, seen), models)
    finally:
        for registry in (CHECKS, MUTANTS, READS):
            registry.pop(cid, None)
    assert any(p.startswith(want) for p in problems), problems


def test_every_check_declares_what_its_source_names():
    """Statically, for all checks: every experiment and construction name the check's source
    (and the checks' helpers it calls) writes out is declared, and a model builder it calls
    builds a declared construction; every declared name is registered."""
    models = _builder_models()
    problems = []
    for cid in CHECKS:
        strings, _prefixes = tr._names_in(cid)
        exps, cons = tr.parsed_reads(cid)
        named = {n for n in cons if n in strings}
        declared = tr.declared_reads(cid)
        if declared is None:
            if exps or cons:
                problems.append(f"{cid}: reads {exps + cons} but declares nothing")
            continue
        problems += [f"{cid}: reads experiment {n}, undeclared" for n in set(exps) - {*declared[0]}]
        problems += [f"{cid}: builds {n}, undeclared" for n in named - {*declared[1]}]
        problems += [
            f"{cid}: calls {k}, whose constructions {models.get(k)} are undeclared"
            for k in strings
            if k.startswith("builder:") and not set(models.get(k, ())) & {*declared[1]}
        ]
        unknown = (set(declared[0]) - {*EXPERIMENTS}) | (set(declared[1]) - {*CONSTRUCTIONS})
        problems += [f"{cid}: declares {n}, which is not registered" for n in sorted(unknown)]
    assert not problems, "\n".join(problems)


def test_the_trail_reads_the_declarations(monkeypatch):
    """The trail takes a declared check's reads from its declaration (no source needed: the
    parse is never called) and says where they came from; a check declaring nothing falls back
    to the parse, and the trail says so."""
    tr.check_reads.cache_clear()

    def no_parse(cid):
        raise AssertionError(f"parsed the source of {cid}")

    monkeypatch.setattr(tr, "parsed_reads", no_parse)
    monkeypatch.setattr(tr, "_names_in", no_parse)
    try:
        t = tr.trail("IF-P3")
        assert [e.name for e in t.experiments] == ["infoflow_pmax_heads"]
        assert t.reads.startswith("declared by the check")
        assert any(line.startswith("  reads:        declared") for line in t.lines())
        k1 = tr.trail("HC-K1")
        assert [c.name for c in k1.constructions][:1] == ["hc_k1"]
    finally:
        tr.check_reads.cache_clear()
    monkeypatch.undo()
    monkeypatch.delitem(READS, "IF-P3")
    tr.check_reads.cache_clear()
    try:
        t = tr.trail("IF-P3")
        assert [e.name for e in t.experiments] == ["infoflow_pmax_heads"]
        assert t.reads.startswith("recovered by parsing")
    finally:
        tr.check_reads.cache_clear()


def test_every_trail_is_the_same_without_the_sources(monkeypatch):
    """As from a package installed without its sources: with no source to read, every claim's
    trail names the same constructions and experiments (the declarations carry the joins)."""

    def names() -> dict:
        for fn in (tr.check_reads, tr.parsed_reads, tr._names_in, tr._models_of):
            fn.cache_clear()
        return {
            cid: ([c.name for c in t.constructions], [e.name for e in t.experiments])
            for cid, t in tr.trails().items()
        }

    with_sources = names()

    def no_source(*a, **k):
        raise OSError("no source: an installed package without .py files")

    with monkeypatch.context() as m:
        m.setattr(tr.inspect, "getsource", no_source)
        m.setattr(tr.inspect, "getsourcelines", no_source)
        without = names()
    names()  # the caches as they were, with sources
    assert without == with_sources
