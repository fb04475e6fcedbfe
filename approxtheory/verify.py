"""``approxtheory verify``: run every claim's check, cache results, write the report.

Exit codes: 0 when the run completed (a refutation is a finding, not a crash), 1 when a check
itself crashed (the others still run; the report says which), 2 for bad arguments;
``--fail-on refuted`` makes refutations exit 1.

Each check's result is cached under ``OUT/.cache`` by a key covering everything the verdict
depends on (see :func:`approxtheory.proofs_check.check_hash`: the claim, the whole source of the
packages, the library versions, profile and seed): a rerun skips what is unchanged, and a killed
run loses nothing already written (every file is written atomically). A cache entry that cannot be
read or does not have the record's shape is a miss: the check runs again and the entry is
rewritten. Entries are read as regular files only (a FIFO, device, directory or symlink is a
miss), capped in size and parsed without recursion (:func:`approxtheory.io.read_json_entry`);
an entry that cannot be rewritten (a directory in its place, a read-only ``.cache``) is skipped
with one warning line on stderr and the run goes on. Files are written only inside ``OUT``
(a sub-folder symlinked elsewhere is refused, :func:`approxtheory.io.safe_path`).

``verdicts.json`` and the CSVs hold no timings, so a rerun from the cache, a ``--no-cache`` rerun
and a resumed run write them byte for byte the same; timings go to ``timings.json``.
``verdicts.json`` is strict JSON: a non-finite number is written as ``{"$float": "nan"}``,
``{"$float": "inf"}`` or ``{"$float": "-inf"}`` (:func:`approxtheory.io.encode_nonfinite`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys
import time
import traceback
import typing
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import ApproxTheoryError
from .io import (
    atomic_write_checked_json,
    atomic_write_json,
    json_roundtrip,
    json_text,
    read_checked_json,
    safe_dir,
    safe_path,
    write_if_changed,
)
from .mutant_rules import (  # noqa: F401  (mutant_summary* are part of verify's API)
    DOWNGRADE,
    apply_claim_mutants,
    apply_mutants,
    mutant_summary,
    mutant_summary_line,
)
from .provenance import git_revision, libraries, package_version, source_fingerprint

__all__ = ["run_verify", "select_claims"]

SCHEMA_VERSION = 1


def select_claims(only: Sequence[str] | None):
    """Claims named by ids or papers (arXiv id or short name); all when ``only`` is empty."""
    from .catalogue import claim, claims, paper_id

    if not only:
        return claims()
    out, seen = [], set()
    for item in only:
        try:
            cs = claims(paper=paper_id(item))
        except ApproxTheoryError:
            cs = [claim(item)]  # raises UnknownClaimError with suggestions
        for c in cs:
            if c.id not in seen:
                seen.add(c.id)
                out.append(c)
    return out


#: a record's keys, in its order (cache entries keep it): ``schema_version``, ``claim`` (the
#: claim's id), these fields of the catalogue claim, then :data:`_RECORD_ORDER`
_CLAIM_KEYS = ("paper", "kind", "statement", "provenance")
#: the fields of :class:`~approxtheory.proofs_check._core.Verdict` (all but ``claim``, which is
#: the claim's id) in the record's order, with the cache key after ``check``; their types and
#: defaults are the Verdict's (:func:`_verdict_fields`, which checks that the two name the same
#: fields)
_RECORD_ORDER = (
    "verdict",
    "evidence",
    "covered",
    "measured",
    "claimed",
    "witness",
    "check",
    "cache_key",
    "scope",
    "mutants",
    "falsified_by",
    "slack",
    "scale",
    "certified",
    "formula_note",
    "slack_note",
    "volatile",
    "rows",
    "plot",
    "slopes",
)
#: a result that does not say its scope is one no check produced (an error): "none" (a Verdict
#: fills in its own scope)
_RECORD_DEFAULTS = {"scope": "none"}


@functools.cache
def _verdict_fields() -> dict[str, tuple[Any, dataclasses.Field]]:
    """Per field of :class:`~approxtheory.proofs_check._core.Verdict` but ``claim``: its type
    and the field (its default): the verdict schema is stated there once. Imported on first use
    (the checks package is heavy)."""
    from .proofs_check._core import Verdict

    hints = typing.get_type_hints(Verdict)
    out = {f.name: (hints[f.name], f) for f in dataclasses.fields(Verdict) if f.name != "claim"}
    if set(out) != set(_RECORD_ORDER) - {"cache_key"}:
        raise RuntimeError(
            "verify._RECORD_ORDER must name the Verdict's fields (but claim) and cache_key: "
            f"{sorted(set(out) ^ (set(_RECORD_ORDER) - {'cache_key'}))}"
        )
    return out


def _field_value(v: dict, name: str, hint: Any, f: dataclasses.Field):
    """Field ``name`` of the result ``v``: its value, else the Verdict's default (a list field
    is copied as a list)."""
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
        return v[name]
    default: Any
    if name in _RECORD_DEFAULTS:
        default = _RECORD_DEFAULTS[name]
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        default = f.default
    got = v.get(name, default)
    return list(got) if hint is list else got


def _record(c, v: dict, key: str) -> dict:
    """A verdict record, normalised as it reads back from the cache (fresh == cached)."""
    fields = _verdict_fields()
    rec = {"schema_version": SCHEMA_VERSION, "claim": c.id}
    rec.update((k, getattr(c, k)) for k in _CLAIM_KEYS)
    for k in _RECORD_ORDER:
        rec[k] = key if k == "cache_key" else _field_value(v, k, *fields[k])
    return json_roundtrip(rec)


#: the fields a record holds of one type, and those (``_any``) that hold any value
_TYPED = (str, list, dict)


@functools.cache
def _schema() -> tuple[frozenset, dict[str, type], tuple[str, ...]]:
    """The keys of a record, the type of each typed one but ``claim`` and ``verdict`` (checked
    apart), and those of any type: read from :func:`_verdict_fields`."""
    fields = _verdict_fields()
    typed: dict[str, type] = {k: str for k in _CLAIM_KEYS}
    typed.update((k, hint) for k, (hint, _f) in fields.items() if hint in _TYPED and k != "verdict")
    any_type = tuple(k for k, (hint, _f) in fields.items() if hint not in _TYPED)
    keys = frozenset(("schema_version", "claim", *_CLAIM_KEYS, *_RECORD_ORDER))
    return keys, typed, any_type


#: the keys of a cache entry: those of :func:`_record`, and these optional ones
_OPTIONAL = ("formula_read", "names_read", "points_read", "duration_s")
_PLOT_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "bound": (str, type(None)),
    "group": (str, type(None)),
    "title": str,
    "xlabel": str,
    "ylabel": str,
    "logx": bool,
    "logy": bool,
}


def _points_ok(p) -> bool:
    """Whether ``p`` has the shape of :func:`approxtheory.catalogue.points.summarize`."""
    return isinstance(p, dict) and all(
        isinstance(k, str)
        and isinstance(r, dict)
        and isinstance(r.get("n"), int)
        and isinstance(r.get("values"), dict)
        and isinstance(r.get("fixed"), dict)
        and isinstance(r.get("proportional"), list)
        for k, r in p.items()
    )


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _certified_ok(cert) -> bool:
    """Whether ``cert`` is a record's ``certified`` field: None, or the counts (``cells`` <=
    ``of``, ``bracketed`` <= ``of``), ``all`` and the ``gaps`` and ``table`` lists of cells
    (:func:`approxtheory.proofs_check._core.certified_summary`)."""
    if cert is None:
        return True
    if not isinstance(cert, dict) or set(cert) != {
        "cells",
        "of",
        "bracketed",
        "all",
        "gaps",
        "table",
    }:
        return False
    counts = [cert[k] for k in ("cells", "of", "bracketed")]
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in counts):
        return False
    if cert["cells"] > cert["of"] or cert["bracketed"] > cert["of"]:
        return False
    cells = (
        [*cert["gaps"], *cert["table"]]
        if isinstance(cert["gaps"], list) and isinstance(cert["table"], list)
        else None
    )
    return (
        isinstance(cert["all"], bool)
        and cells is not None
        and all(isinstance(e, dict) and isinstance(e.get("cell"), str) for e in cells)
        and len(cert["table"]) == cert["of"]
    )


def _plot_ok(plot, rows: list) -> bool:
    """Whether ``plot`` is a plot spec :func:`approxtheory.report.plot_from_csv` can draw from
    ``rows``: x a column, y a list of column names, the optional keys typed."""
    if plot is None:
        return True
    if not isinstance(plot, dict) or not isinstance(plot.get("x"), str):
        return False
    ys = plot.get("y")
    if not isinstance(ys, list) or not all(isinstance(y, str) for y in ys):
        return False
    if any(k not in ("x", "y") and k not in _PLOT_OPTIONAL for k in plot):
        return False
    if any(k in plot and not isinstance(plot[k], t) for k, t in _PLOT_OPTIONAL.items()):
        return False
    columns = {k for r in rows for k in r}
    return not rows or (
        plot["x"] in columns and (plot.get("group") is None or plot["group"] in columns)
    )


def _cached(path: Path, cid: str, key: str) -> tuple[dict, float] | None:
    """The cached record and the seconds it took to compute, or None (a miss) when the entry is
    missing, not a regular file, too large, unreadable, not JSON, does not match its digest, or
    is not a complete record for this claim and key (its keys, their types, the shapes of its
    rows, slopes and plot spec are checked: a record served from here renders like a fresh
    one)."""
    from .proofs_check import VERDICTS

    record_keys, fields, any_type = _schema()
    rec = read_checked_json(path)
    if (
        not isinstance(rec, dict)
        or rec.get("schema_version") != SCHEMA_VERSION
        or rec.get("claim") != cid
        or rec.get("cache_key") != key
        or rec.get("verdict") not in VERDICTS
        or rec["verdict"] == "error"
    ):
        return None
    if not record_keys <= rec.keys() or any(
        k not in record_keys and k not in _OPTIONAL for k in rec
    ):
        return None
    if any(not isinstance(rec.get(k), t) for k, t in fields.items()) or any(
        k not in rec for k in any_type
    ):
        return None
    if not all(isinstance(r, dict) for r in rec["rows"]):
        return None
    if not _certified_ok(rec["certified"]):
        return None
    if not all(isinstance(m, str) for m in (*rec["mutants"], *rec["falsified_by"])):
        return None
    if not all(
        isinstance(s, dict)
        and isinstance(s.get("label"), str)
        and all(_number(s.get(k)) for k in ("fitted", "lo", "hi"))
        and (s.get("predicted") is None or _number(s["predicted"]))
        for s in rec["slopes"]
    ):
        return None
    if rec["slack"] is not None and not (_number(rec["slack"]) and math.isfinite(rec["slack"])):
        return None
    if "formula_read" in rec and not isinstance(rec["formula_read"], bool):
        return None
    if "names_read" in rec and not (
        isinstance(rec["names_read"], list) and all(isinstance(n, str) for n in rec["names_read"])
    ):
        return None
    if "points_read" in rec and not _points_ok(rec["points_read"]):
        return None
    if not _plot_ok(rec["plot"], rec["rows"]):
        return None
    duration = rec.pop("duration_s", None)
    ok = _number(duration) and math.isfinite(duration) and duration >= 0
    return rec, duration if ok else 0.0


@dataclass
class _Cache:
    """The run's cache folder: whether it is read, and the one warning line for the entries
    that could not be written (the first one is named, the run goes on without them)."""

    root: Path
    use: bool = True
    warned: bool = False
    skipped: int = 0

    def entry(self, label: str, key: str) -> Path:
        return self.root / f"{label}.{key}.json"

    def write(self, path: Path, rec: dict) -> None:
        try:
            atomic_write_checked_json(path, rec)
        except OSError as e:
            self.skipped += 1
            if not self.warned:
                self.warned = True
                why = e.strerror or type(e).__name__
                print(
                    f"approxtheory: warning: cannot write the cache entry {str(path)!r} ({why}); "
                    f"skipped, the run goes on without caching it (and any other entry that "
                    f"cannot be written)",
                    file=sys.stderr,
                )


def _run_check(CHECKS, cid: str, ctx) -> dict:
    try:
        return CHECKS[cid](ctx).to_dict()
    except Exception as e:  # a crashed check is reported, the others still run
        tb = traceback.format_exc().strip().splitlines()
        return {
            "verdict": "error",
            "evidence": f"the check crashed: {type(e).__name__}: {e}",
            "covered": " | ".join(tb[-3:]),
            "scope": "none",
            "check": CHECKS[cid].source_fn.__name__,
        }


@dataclass(frozen=True)
class _Registry:
    """What the checks package registers (:mod:`approxtheory.proofs_check`): the checks, their
    declared mutants, the cache key of a check's run and the verdict-flip test."""

    CHECKS: Any
    MUTANTS: Any
    check_hash: Any
    flips: Any


def _cached_or_run(
    reg: _Registry,
    c,
    ctx,
    cache: _Cache,
    timings: dict,
    label: str,
    claim_mutant=None,
) -> dict:
    """The record of ``c``'s check under ``ctx``, from the cache or computed and cached. With a
    ``claim_mutant`` (:class:`~approxtheory.catalogue.mutate.ClaimMutant`) the check runs while
    the catalogue returns the mutated claim, and the record says whether it read the formula
    (``formula_read``)."""
    CHECKS, check_hash = reg.CHECKS, reg.check_hash
    if c.id not in CHECKS:  # a claim added to the catalogue without a check: say so, go on
        timings[label] = {"cached": False, "duration_s": 0.0}
        return _record(
            c,
            {
                "verdict": "error",
                "evidence": f"no check is registered for {c.id} (every claim needs one in "
                f"proofs_check/<paper>.py)",
                "scope": "none",
            },
            "",
        )
    key = check_hash(c.id, ctx)
    entry = cache.entry(label, key)
    hit = _cached(entry, c.id, key) if cache.use else None
    if hit is not None and claim_mutant is not None and "points_read" not in hit[0]:
        hit = None  # written before mutant runs recorded where they read the formulas
    if hit is not None:
        timings[label] = {"cached": True, "duration_s": hit[1]}
        return hit[0]
    t1 = time.time()
    if claim_mutant is None:
        rec = _record(c, _run_check(CHECKS, c.id, ctx), key)
    else:
        from .catalogue import overriding
        from .catalogue.points import recording, summarize

        with overriding(claim_mutant.claim), recording(c.id) as log:
            rec = _record(c, _run_check(CHECKS, c.id, ctx), key)
        rec["formula_read"] = claim_mutant.read
        rec["names_read"] = sorted(claim_mutant.names_read)
        rec["points_read"] = summarize(log)
    timings[label] = {"cached": False, "duration_s": round(time.time() - t1, 3)}
    if rec["verdict"] != "error":  # overwrites an unreadable entry; keeps the rows' order
        cache.write(entry, {**rec, "duration_s": timings[label]["duration_s"]})
    return rec


def max_jobs() -> int:
    """The most processes ``verify --jobs`` may start: four per core (at least one)."""
    import os

    return max(1, (os.cpu_count() or 1) * 4)


def check_jobs(jobs) -> int:
    """``jobs`` when it is a whole number in 1 .. :func:`max_jobs`, else a ConfigError naming
    the allowed range."""
    from ._validate import check_int

    top = max_jobs()
    return check_int("--jobs", jobs, 1, top, must=f"a whole number from 1 to {top}", numpy=False)


def _verify_claim(c, ctx, cache: _Cache, timings: dict, mutants: bool, stage=None) -> dict:
    """One claim's record: its check (from the cache or run) and, with ``mutants``, its declared
    and generated mutants when it passes. ``stage(text)`` is told which part runs."""
    from .proofs_check import CHECKS, MUTANTS, PASSING, check_hash, flips

    reg = _Registry(CHECKS, MUTANTS, check_hash, flips)
    rec = _cached_or_run(reg, c, ctx, cache, timings, c.id)
    if mutants and rec["verdict"] in PASSING:
        if stage is not None:
            stage("mutants")

        def run(cx, label, claim_mutant=None):
            return _cached_or_run(reg, c, cx, cache, timings, label, claim_mutant=claim_mutant)

        rec = apply_mutants(reg, run, c, rec, ctx)
        if stage is not None:
            stage("claim mutants")
        rec = apply_claim_mutants(reg, run, c, rec, ctx)
    return rec


def _verify_cell(cfg: dict) -> dict:
    """In a worker process of ``verify --jobs``: the records and timings of a group of claims
    (those of one check function, so that their shared measurements are computed once), as JSON
    text (exact: floats round-trip; any depth of record travels as one string), computed with
    the client's torch thread count so that every number is what ``--jobs 1`` computes."""
    import json

    from .catalogue import claim
    from .proofs_check import Context
    from .resources import pinned_threads

    cache = _Cache(Path(cfg["cache"]), use=cfg["use_cache"])
    ctx = Context(**cfg["ctx"])
    timings: dict[str, dict] = {}
    with pinned_threads(cfg["threads"]):  # run_cell pins its own count around this
        recs = [
            _verify_claim(claim(cid), ctx, cache, timings, cfg["mutants"]) for cid in cfg["claims"]
        ]
    return {"payload": json.dumps({"recs": recs, "timings": timings, "skipped": cache.skipped})}


def _groups(selected, expected: dict[str, float]) -> list[list[int]]:
    """The indices of ``selected`` in groups for the pool: the claims of one check function
    together (they share memoised measurements), the groups longest first by the previous run's
    times (so that the last to start is a short one)."""
    from .proofs_check import CHECKS

    by: dict = {}
    for i, c in enumerate(selected):
        fn = getattr(CHECKS.get(c.id), "source_fn", None)
        by.setdefault(fn if fn is not None else ("no check", c.id), []).append(i)
    groups = list(by.values())
    groups.sort(key=lambda g: -sum(expected.get(selected[i].id, 0.0) for i in g))
    return groups


def _verify_parallel(selected, ctx, cache: _Cache, timings: dict, mutants, jobs, bar):
    """The records of ``selected`` (in their order) computed ``jobs`` at a time in a local
    process pool (:func:`approxtheory.executors.compute_cells`, as ``experiment run --workers``);
    which process computes which claim changes no byte of a record."""
    import json
    from dataclasses import asdict

    import torch

    from .executors import compute_cells

    base = {
        "cache": str(cache.root),
        "use_cache": cache.use,
        "ctx": asdict(ctx),
        "mutants": mutants,
        "threads": torch.get_num_threads(),
    }
    groups = _groups(selected, bar.expected)
    cfgs = [{**base, "claims": [selected[i].id for i in g]} for g in groups]
    got: dict[int, dict] = {}
    run = compute_cells(_verify_cell, cfgs, executor="pool", workers=min(jobs, len(cfgs)))
    for k, out, _s in run:
        d = json.loads(out["payload"])
        timings.update(d["timings"])
        cache.skipped += d["skipped"]
        for i, rec in zip(groups[k], d["recs"]):
            got[i] = rec
            bar.done(selected[i].id, d["timings"], rec["verdict"])
    return [got[i] for i in range(len(selected))]


@dataclass(frozen=True)
class RunOptions:
    """The arguments of :func:`run_verify`, as its body receives them (see there)."""

    profile: str = "quick"
    only: Sequence[str] | None = None
    out: str | Path = "report"
    fail_on: str | None = None
    seed: int = 0
    progress: bool = True
    use_cache: bool = True
    mutants: bool = False
    results: str | Path | None = None
    jobs: int = 1
    retrain: bool = False


def run_verify(
    profile: str = "quick",
    only: Sequence[str] | None = None,
    out: str | Path = "report",
    fail_on: str | None = None,
    seed: int = 0,
    progress: bool = True,
    use_cache: bool = True,
    mutants: bool = False,
    results: str | Path | None = None,
    jobs: int = 1,
    retrain: bool = False,
) -> int:
    """Run the checks (and with ``mutants=True`` each passing check's declared mutants, naming
    in ``falsified_by`` the ones that flip it) and write the report. ``results``: a results CSV
    from elsewhere for the one trained claim in ``only`` (its schema:
    ``approxtheory verify --results-schema CLAIM``): the claim's criterion, gate and scale record
    are applied to it in place of the toolkit's own runs, with no cache. ``jobs``: how many
    claims are checked at once, each in its own process (the local pool of
    ``experiment run --workers``, :func:`approxtheory.executors.compute_cells`); the report is
    the same bytes for any count.
    ``retrain``: the trained checks compute their experiments' decisive grids here (the cells
    not in the local cache) instead of reading the shipped cells (:mod:`approxtheory.shipped`):
    CPU-hours; ``experiment run NAME --profile decisive --dry-run`` estimates each.
    ``profile="smoke"``: every claim cheaply (the quick grids, smaller ones where a check gives
    them, trained evidence from cached cells only; what that cannot decide is not-checkable with
    a reason starting "smoke profile:")."""
    # One torch thread for the whole run: a result must not depend on the machine's core count
    # (a reduction's order follows the thread count), and on a shared machine threads fight
    # (measured: HC-T2a 201 s with 2 threads against 15 s with 1, the same verdict). Experiment
    # cells already train with one thread (approxtheory.executors.CELL_THREADS).
    from .resources import pinned_threads
    from .shipped import RETRAIN_ENV

    if retrain:  # read by the checks in this process and in --jobs workers alike
        os.environ[RETRAIN_ENV] = "1"
    try:
        with pinned_threads(1):
            return _run_verify(
                RunOptions(
                    profile=profile,
                    only=only,
                    out=out,
                    fail_on=fail_on,
                    seed=seed,
                    progress=progress,
                    use_cache=use_cache,
                    mutants=mutants,
                    results=results,
                    jobs=jobs,
                    retrain=retrain,
                )
            )
    finally:
        if retrain:
            os.environ.pop(RETRAIN_ENV, None)


def _run_verify(opts: RunOptions) -> int:
    """The body of :func:`run_verify` (which fixes the torch thread count around it)."""
    jobs = check_jobs(opts.jobs)
    if opts.results is not None:
        return _run_with_results(opts, opts.results)
    from .proofs_check import PROFILES, Context

    profile = opts.profile
    if profile not in PROFILES:
        raise ApproxTheoryError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r})")
    if opts.fail_on not in (None, "refuted"):
        raise ApproxTheoryError(f"--fail-on takes 'refuted' (got {opts.fail_on!r})")
    selected = select_claims(opts.only)
    if opts.mutants and opts.only:
        _check_mutable(selected)
    out, cache = _prepare_out(Path(opts.out), opts.use_cache)
    ctx = Context(profile=profile, seed=opts.seed)
    t0 = time.time()
    timings: dict[str, dict] = {}
    records = _check_all(selected, ctx, cache, timings, opts, jobs, out)
    _write_data(records, out, profile)
    wall = _write_report(records, selected, timings, opts, out, t0)
    return _summarise(records, wall, cache, out, opts)


def _check_mutable(selected) -> None:
    """``--mutants`` with ``--only``: every named claim must have something to mutate (declared
    mutants or a formula), else nothing would run and the flag would say nothing."""
    from .proofs_check import MUTANTS

    bare = [c.id for c in selected if not MUTANTS.get(c.id) and not c.expressions]
    if bare:
        raise ApproxTheoryError(
            f"--mutants: {', '.join(bare)} has no declared mutant and no formula to mutate, so "
            "no mutant can run; name claims with a formula or declared mutants (`approxtheory "
            "claims show ID` lists both), or leave --mutants out"
        )


def _run_with_results(opts: RunOptions, results: str | Path) -> int:
    """``verify --results``: the one claim in ``only`` checked against the given results CSV
    (no cache, one process)."""
    from .catalogue import claim
    from .proofs_check._results import SCHEMAS, using_results

    ids = [claim(x).id for x in (opts.only or [])]
    if len(ids) != 1:
        raise ApproxTheoryError(
            "--results applies to one claim: give it with --only CLAIM (claims with a results "
            f"schema: {', '.join(sorted(SCHEMAS))})"
        )
    with using_results(ids[0], results):
        _judge_first(ids[0], results, opts)
        # the run proper: the given results live in this process (one job), never cached
        rc = _run_verify(
            replace(opts, only=ids, use_cache=False, results=None, jobs=1, retrain=False)
        )
    _refuse_unjudged(ids[0], results, Path(opts.out))
    return rc


def _judge_first(cid: str, results, opts: RunOptions) -> None:
    """The given rows judged once before anything is printed or written: rows the check cannot
    judge are bad input (one line, exit 2, no progress lines and no report), whatever
    ``--quiet`` says. Judging given rows trains nothing, so the second pass (the run proper,
    which writes the report) costs as little."""
    from .proofs_check import Context, run_check

    try:
        run_check(cid, Context(profile=opts.profile, seed=opts.seed))
    except ApproxTheoryError:
        raise
    except Exception as e:  # noqa: BLE001  (the rows, not the code: see the message)
        raise ApproxTheoryError(
            f"--results {str(results)!r}: {cid}'s check cannot judge these rows "
            f"({type(e).__name__}: {str(e)[:160]}): they pass the schema but lack a "
            "configuration its criterion compares (e.g. the same seeds and T at every head "
            f"count); see `approxtheory verify --results-schema {cid}`"
        ) from None


def _refuse_unjudged(cid: str, results, out: Path) -> None:
    """Rows that pass the schema but that the check cannot judge (it crashed on them: a
    configuration its criterion compares is missing) are bad input: one line, whatever
    ``--quiet`` says."""
    from .io import read_json_entry

    data = read_json_entry(out / "verdicts.json")
    recs = data.get("verdicts", []) if isinstance(data, dict) else []
    for r in recs:
        if isinstance(r, dict) and r.get("claim") == cid and r.get("verdict") == "error":
            why = str(r.get("evidence", "")).removeprefix("the check crashed: ")[:200]
            raise ApproxTheoryError(
                f"--results {str(results)!r}: {cid}'s check cannot judge these rows ({why}): "
                f"they pass the schema but lack a configuration its criterion compares (e.g. "
                f"the same seeds and T at every head count); see `approxtheory verify "
                f"--results-schema {cid}`"
            )


def _prepare_out(out: Path, use_cache: bool) -> tuple[Path, _Cache]:
    """The output folder made, with its ``data``, ``plots`` and ``.cache`` sub-folders."""
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("data", "plots"):
        safe_dir(out, sub)
    cache = _Cache(safe_path(out, ".cache"), use=use_cache)
    try:
        safe_dir(out, ".cache")
    except FileExistsError:  # a file in its place: every entry is a miss that is not written
        pass
    return out, cache


def _check_all(selected, ctx, cache: _Cache, timings: dict, opts: RunOptions, jobs: int, out):
    """The records of ``selected``, in their order, one at a time or ``jobs`` at a time, with
    the progress bar."""
    from .progress import VerifyProgress, expected_seconds
    from .proofs_check._core import set_progress_hook

    profile, mutants = opts.profile, opts.mutants
    shown_bar = VerifyProgress(
        [c.id for c in selected],
        desc=f"verify ({profile}{'' if jobs == 1 else f', {jobs} jobs'})",
        disable=not opts.progress,
        expected=expected_seconds([c.id for c in selected], out / "timings.json"),
        jobs=jobs,
    )
    if jobs == 1:
        records = []
        for c in selected:
            shown_bar.start(c.id)
            with shown_bar.sub_progress(set_progress_hook):
                rec = _verify_claim(c, ctx, cache, timings, mutants, shown_bar.stage)
            records.append(rec)
            shown_bar.done(c.id, timings, rec["verdict"])
    else:
        records = _verify_parallel(selected, ctx, cache, timings, mutants, jobs, shown_bar)
    shown_bar.close()
    return records


def _write_data(records: list, out: Path, profile: str) -> None:
    """Each record's CSVs and plots (drawn from the CSVs only), named in its ``csv`` and
    ``plots``. A file that would get the bytes it holds is not rewritten, and a plot is redrawn
    only when its CSV, spec or the plotting code changed (:class:`approxtheory.plots.ledger.
    PlotLedger`): a rerun with nothing recomputed writes nothing here."""
    from .io import write_if_changed
    from .plots.ledger import PlotLedger
    from .report import csv_text, plot_from_csv, slope_plot

    ledger = PlotLedger(safe_path(out, ".cache/plots.ledger"))
    for rec in records:
        rec["csv"], rec["plots"] = [], []
        cid = rec["claim"]
        if rec["rows"]:
            p = safe_path(out, f"data/{cid}.csv")
            text = csv_text(rec["rows"])
            write_if_changed(p, text)
            rec["csv"].append(str(p.relative_to(out)))
            if rec["plot"] and profile != "smoke":  # smoke draws no plot (the CSV is there)
                png = safe_path(out, f"plots/{cid}.png")
                spec = rec["plot"]
                ledger.draw(png, [text, spec], functools.partial(plot_from_csv, p, spec, png))
                rec["plots"].append(str(png.relative_to(out)))
        if rec["slopes"]:
            p = safe_path(out, f"data/{cid}.slopes.csv")
            text = csv_text(rec["slopes"])
            write_if_changed(p, text)
            rec["csv"].append(str(p.relative_to(out)))
            if profile == "smoke":
                continue
            png = safe_path(out, f"plots/{cid}.slopes.png")
            title = f"{cid}: fitted vs predicted exponent"
            ledger.draw(
                png,
                [text, title],
                functools.partial(slope_plot, rec["slopes"], title, png),
            )
            rec["plots"].append(str(png.relative_to(out)))
    ledger.save()


def _write_report(records, selected, timings: dict, opts: RunOptions, out: Path, t0) -> float:
    """``verdicts.json`` (no timings: identical bytes for cached, fresh and resumed runs),
    ``timings.json``, ``report.md`` and ``report.html``; the run's wall seconds."""
    from .proofs_check._core import KEY_PACKAGES
    from .report import formulas_of, render_html, render_markdown

    libs = libraries()
    meta = {
        "schema_version": SCHEMA_VERSION,
        "profile": opts.profile,
        "seed": opts.seed,
        "mutants": opts.mutants,
        "version": package_version(),
        "git": git_revision(),
        "source": source_fingerprint(KEY_PACKAGES)[:16],
        "python": libs["python"],
        "libraries": {k: libs[k] for k in ("torch", "sympy", "numpy", "scipy")},
        "claims": len(records),
    }
    if opts.mutants:
        meta["mutant_summary"] = mutant_summary(records)
    for r in records:  # run-dependent figures go with the timings, not into verdicts.json
        if r.get("volatile"):
            timings.setdefault(r["claim"], {})["volatile"] = r["volatile"]
    public = [
        {k: v for k, v in r.items() if k not in ("rows", "plot", "volatile")} for r in records
    ]
    computed = _computed_seconds(timings)
    shown_records = [
        {**p, "volatile": r.get("volatile", {}), **computed.get(r["claim"], {})}
        for p, r in zip(public, records)
    ]
    write_if_changed(safe_path(out, "verdicts.json"), json_text({"meta": meta, "verdicts": public}))
    wall = time.time() - t0
    atomic_write_json(safe_path(out, "timings.json"), {"wall_s": round(wall, 3), "claims": timings})
    shown = {
        **meta,
        "wall_s": wall,
        "assembled": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t0)),
        "computed_s": sum(c["computed_s"] for c in computed.values()),
        "cached": sum(1 for c in computed.values() if c["cached"]),
    }
    write_if_changed(safe_path(out, "report.md"), render_markdown(shown_records, shown))
    write_if_changed(
        safe_path(out, "report.html"),
        render_html(shown_records, shown, formulas=formulas_of(selected)),
    )
    return wall


def _computed_seconds(timings: dict) -> dict[str, dict]:
    """Per claim: ``computed_s``, the seconds of the computation that produced its verdict (its
    check and mutants, when they ran, in this run or the one whose cache entry was read), and
    ``cached``, whether all of it came from the cache."""
    out: dict[str, dict] = {}
    for label, t in timings.items():
        if not isinstance(t, dict) or "duration_s" not in t:
            continue
        c = out.setdefault(label.split("~", 1)[0], {"computed_s": 0.0, "cached": True})
        c["computed_s"] += float(t["duration_s"])
        c["cached"] = c["cached"] and bool(t.get("cached"))
    return out


def _summarise(records: list, wall: float, cache: _Cache, out: Path, opts: RunOptions) -> int:
    """The run's summary and where its report is, on stdout (with ``progress``; a warning on
    stderr), and its exit code."""
    crashed = [r["claim"] for r in records if r["verdict"] == "error"]
    refuted = [r["claim"] for r in records if r["verdict"] == "refuted"]
    inconsistent = [r["claim"] for r in records if r["verdict"] == "inconsistent"]
    if opts.progress:
        counts: dict[str, int] = {}
        for r in records:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        print(
            f"verify: {len(records)} claims in {wall:.1f} s: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        )
        if refuted:
            print(f"refuted: {', '.join(refuted)}")
        if inconsistent:
            print(f"inconsistent: {', '.join(inconsistent)}")
        from .report import certified_line

        if certified_line(records):
            print(certified_line(records))
        if crashed:
            print(f"checks that crashed: {', '.join(crashed)}")
        if opts.mutants:
            print(mutant_summary_line(mutant_summary(records)))
        if cache.skipped:
            print(f"cache entries not written: {cache.skipped}", file=sys.stderr)
        print(f"report: {out / 'report.md'} and {out / 'report.html'}", flush=True)
    if crashed:
        return 1
    if opts.fail_on == "refuted" and refuted:
        return 1
    return 0
