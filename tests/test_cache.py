"""Caches that never crash and never serve stale results, and deterministic results.

* an unreadable or malformed cache entry (verify's ``.cache/*.json``, the runner's
  ``cells/*.json``) is a miss: the result is recomputed and the entry rewritten valid;
* ``verdicts.json`` and the CSVs are byte for byte the same for a fresh run, a rerun from the
  cache, a ``--no-cache`` run in another directory or process, and a run resumed after a kill
  (timings live in ``timings.json`` and in the cache / cell files, never in those files);
* the cache key covers the whole source, so an edited construction is recomputed.
"""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from approxtheory import provenance
from approxtheory.cli import main
from approxtheory.experiment import cell_hash, cells, get, run_experiment
from approxtheory.io import DIGEST_FIELD, content_digest
from approxtheory.proofs_check import CHECKS, Context, check_hash

ROOT = Path(__file__).resolve().parents[1]
needs_posix = pytest.mark.skipif(os.name != "posix", reason="FIFOs, symlinks, modes")
# fast claims that draw random numbers (HC-L8, HC-K2, the identifiability ones) plus HC-K1,
# whose record has rows, a plot, fitted slopes and a witness
FAST = ["HC-L8", "ID-L4.1", "ID-B4.6", "ID-F4.7", "HC-K2", "HC-K1"]
EXP = "softmax_beta_sweep"


def verify(out, *claims, extra=()):
    return main(["verify", "--only", *(claims or FAST), "--out", str(out), "--quiet", *extra])


def snapshot(out: Path) -> dict:
    """The files that must not change between equivalent runs, as bytes."""
    files = [out / "verdicts.json", *sorted((out / "data").glob("*.csv"))]
    return {str(p.relative_to(out)): p.read_bytes() for p in files}


def timings(out: Path) -> dict:
    return json.loads((out / "timings.json").read_text())["claims"]


def disturb_global_rng(seed: int):
    """Global RNG state a check must not depend on."""
    torch.manual_seed(seed)
    torch.rand(seed % 7 + 1)
    np.random.seed(seed)


# ----------------------------------------------------------------------------- corrupt entries

CORRUPTIONS = {
    "truncated": lambda b: b[: len(b) // 2],
    "empty": lambda b: b"",
    "garbage": lambda b: bytes(range(256)) * 3,
    "json-list": lambda b: b"[1, 2, 3]\n",
    "json-null": lambda b: b"null",
    "missing-key": lambda b: _edit(b, lambda d: d.pop("rows", None) or d.pop("sup_error", None)),
    "wrong-type": lambda b: _edit(
        b, lambda d: d.update(rows="oops") if "rows" in d else d.update(trace=7)
    ),
    "other-claim": lambda b: _edit(b, lambda d: d.update(claim="XX-1", cell="0" * 16)),
    # self-consistent (digest recomputed) but not a record of this claim / cell
    "schema-redigested": lambda b: _edit(
        b, lambda d: d.pop("rows", None) is not None or d.pop("seed"), redigest=True
    ),
}


def _edit(data: bytes, fn, redigest=False) -> bytes:
    d = json.loads(data)
    d.pop(DIGEST_FIELD)
    fn(d)
    if redigest:
        d[DIGEST_FIELD] = content_digest(d)
    return json.dumps(d).encode()


@pytest.fixture(scope="module")
def verify_cache(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify-cache")
    assert verify(out, "HC-L8", "HC-K1", "ID-F4.7") == 0
    return out


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_unreadable_verify_cache_entries_are_misses(verify_cache, tmp_path, kind):
    out = tmp_path / "out"
    shutil.copytree(verify_cache, out)
    before = snapshot(out)
    entries = sorted((out / ".cache").glob("*.json"))
    assert len(entries) == 3
    for p in entries:
        p.write_bytes(CORRUPTIONS[kind](p.read_bytes()))
    assert verify(out, "HC-L8", "HC-K1", "ID-F4.7") == 0
    assert all(not t["cached"] for t in timings(out).values())  # all recomputed
    assert snapshot(out) == before
    for p in entries:  # rewritten valid
        rec = json.loads(p.read_text())
        assert rec["claim"] == p.name.rsplit(".", 2)[0] and isinstance(rec["rows"], list)
    assert verify(out, "HC-L8", "HC-K1", "ID-F4.7") == 0  # and now served
    assert all(t["cached"] for t in timings(out).values())
    left = sorted(p.name for p in (out / ".cache").iterdir() if p.name != "plots.ledger")
    assert left == [p.name for p in entries]  # no temporary files left beside the plot ledger


# ----------------------------------------------------------------------------- hostile entries
# (an entry that is not a regular file, is huge, nests without end, or is digest-valid
# but of the wrong shape is a miss; one that cannot be replaced is skipped with one warning)

VERIFY3 = ("HC-L8", "HC-K1", "ID-F4.7")


def _copy_cache(verify_cache, tmp_path) -> tuple[Path, dict, list[Path]]:
    out = tmp_path / "out"
    shutil.copytree(verify_cache, out, symlinks=True)
    entries = sorted((out / ".cache").glob("*.json"))
    assert len(entries) == 3
    return out, snapshot(out), entries


def _all_recomputed_and_rewritten(out: Path, before: dict, entries: list[Path]) -> None:
    assert all(not t["cached"] for t in timings(out).values())
    assert snapshot(out) == before
    for p in entries:  # now a regular file holding the record
        assert p.is_file() and not p.is_symlink()
        assert json.loads(p.read_text())["claim"] == p.name.rsplit(".", 2)[0]


def _sparse(p: Path) -> None:
    p.unlink()
    with open(p, "wb") as fh:
        fh.truncate(3 * 2**30)  # 3 GiB that takes no disk


def _symlink_to(target):
    def make(p: Path) -> None:
        p.unlink()
        p.symlink_to(target)

    return make


HOSTILE = {
    "dev-zero-symlink": _symlink_to("/dev/zero"),
    "symlink-to-a-valid-entry": lambda p: (
        shutil.copy(p, p.with_name("elsewhere." + p.name[:-5])),
        _symlink_to(p.with_name("elsewhere." + p.name[:-5]))(p),
    ),
    "3GiB-sparse": _sparse,
    "deep-brackets": lambda p: p.write_text("[" * 100_000),
    "deep-but-closed": lambda p: p.write_text("[" * 100_000 + "]" * 100_000),
    "nan-literal": lambda p: p.write_text('{"claim": NaN}'),
}


@needs_posix
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_verify_cache_entries_are_misses(verify_cache, tmp_path, kind):
    out, before, entries = _copy_cache(verify_cache, tmp_path)
    for p in entries:
        HOSTILE[kind](p)
    assert verify(out, *VERIFY3) == 0
    _all_recomputed_and_rewritten(out, before, entries)


@needs_posix
@pytest.mark.slow
def test_a_fifo_in_place_of_a_verify_cache_entry_does_not_hang(verify_cache, tmp_path):
    """In a subprocess, so that a regression fails at the (generous) timeout instead of hanging
    the suite: a plain run of these three claims takes seconds."""
    out, before, entries = _copy_cache(verify_cache, tmp_path)
    for p in entries:
        p.unlink()
        os.mkfifo(p)
    _verify_in_a_subprocess("--only", *VERIFY3, "--out", str(out))
    # another process may see a source tree edited meanwhile (other keys): compare as the
    # fresh-process test does, and check the entries under the keys that process used
    verdicts = json.loads((out / "verdicts.json").read_text())["verdicts"]
    assert _strip_code_identity((out / "verdicts.json").read_bytes()) == _strip_code_identity(
        before["verdicts.json"]
    )
    for v in verdicts:
        entry = out / ".cache" / f"{v['claim']}.{v['cache_key']}.json"
        assert entry.is_file() and json.loads(entry.read_text())["claim"] == v["claim"]


def _redigested(edit):
    """A digest-valid entry (the digest recomputed after ``edit``) of the wrong shape."""

    def make(p: Path) -> None:
        p.write_bytes(_edit(p.read_bytes(), edit, redigest=True))

    return make


def _plot(edit):
    def fn(d):
        if d.get("plot"):
            edit(d["plot"])
        else:  # a claim without a plot: give it a broken one
            d["plot"] = {"x": "nope", "y": ["nope"]}
            d["rows"] = d["rows"] or [{"a": 1.0}]

    return fn


WRONG_SHAPES = {
    "plot-x-not-a-column": _plot(lambda pl: pl.update(x="no_such_column")),
    "plot-group-not-a-column": _plot(lambda pl: pl.update(group="no_such_column")),
    "plot-y-not-a-list": _plot(lambda pl: pl.update(y="sup_error")),
    "plot-unknown-key": _plot(lambda pl: pl.update(colour="red")),
    "plot-logx-not-bool": _plot(lambda pl: pl.update(logx="yes")),
    "unknown-key": lambda d: d.update(claim_mutant_note=7),
    "missing-volatile": lambda d: d.pop("volatile"),
    "volatile-a-list": lambda d: d.update(volatile=[1, 2]),
    "mutants-not-strings": lambda d: d.update(mutants=[1, None]),
    "falsified-by-not-strings": lambda d: d.update(falsified_by=[{}]),
    "slope-predicted-a-string": lambda d: d.update(
        slopes=[{"label": "s", "fitted": 1.0, "lo": 0.0, "hi": 2.0, "predicted": "one"}]
    ),
    "slope-fitted-a-bool": lambda d: d.update(
        slopes=[{"label": "s", "fitted": True, "lo": 0.0, "hi": 2.0}]
    ),
    "rows-not-dicts": lambda d: d.update(rows=[[1, 2]]),
    "slack-a-bool": lambda d: d.update(slack=True),
}


@pytest.mark.parametrize("kind", sorted(WRONG_SHAPES))
def test_digest_valid_verify_entries_of_the_wrong_shape_are_misses(verify_cache, tmp_path, kind):
    out, before, entries = _copy_cache(verify_cache, tmp_path)
    for p in entries:
        _redigested(WRONG_SHAPES[kind])(p)
    assert verify(out, *VERIFY3) == 0
    _all_recomputed_and_rewritten(out, before, entries)


def _one_warning(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("approxtheory: warning: "), err
    return lines[0]


def _report_written(out: Path) -> None:
    for f in ("verdicts.json", "report.md", "report.html", "timings.json"):
        assert (out / f).is_file(), f
    assert len(json.loads((out / "verdicts.json").read_text())["verdicts"]) == 3


@needs_posix
def test_a_directory_in_place_of_an_entry_is_skipped_with_one_warning(
    verify_cache, tmp_path, capsys
):
    out, before, entries = _copy_cache(verify_cache, tmp_path)
    for p in entries:
        p.unlink()
        p.mkdir()
        (p / "inside").write_text("x")  # not empty: cannot be replaced by a rename either
    capsys.readouterr()
    assert verify(out, *VERIFY3) == 0
    line = _one_warning(capsys.readouterr().err)
    assert "cannot write the cache entry" in line and "skipped" in line
    _report_written(out)
    assert snapshot(out) == before
    assert all(p.is_dir() for p in entries)  # left alone
    assert all(not t["cached"] for t in timings(out).values())


def test_a_cache_that_cannot_be_written_is_skipped_with_one_warning(
    verify_cache, tmp_path, capsys, monkeypatch
):
    """A read-only ``.cache`` (simulated: root may write anywhere) and a ``.cache`` that is a
    file: every write fails, one warning line, the run completes with its report."""
    import approxtheory.verify as V

    def read_only(path, obj):
        raise PermissionError(13, "Permission denied", str(path))

    out = tmp_path / "ro"
    with monkeypatch.context() as m:
        m.setattr(V, "atomic_write_checked_json", read_only)
        capsys.readouterr()
        assert verify(out, *VERIFY3) == 0
    assert "Permission denied" in _one_warning(capsys.readouterr().err)
    _report_written(out)
    assert snapshot(out) == snapshot(verify_cache)

    out = tmp_path / "file"
    out.mkdir()
    (out / ".cache").write_text("not a folder")
    assert verify(out, *VERIFY3) == 0
    _one_warning(capsys.readouterr().err)
    _report_written(out)
    assert snapshot(out) == snapshot(verify_cache)


@needs_posix
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_cache_folder_is_skipped_with_one_warning(verify_cache, tmp_path, capsys):
    out, before, entries = _copy_cache(verify_cache, tmp_path)
    for p in entries:
        p.write_text("garbage")  # a miss whose rewrite fails
    (out / ".cache").chmod(0o555)
    try:
        capsys.readouterr()
        assert verify(out, *VERIFY3) == 0
        _one_warning(capsys.readouterr().err)
    finally:
        (out / ".cache").chmod(0o755)
    _report_written(out)
    assert snapshot(out) == before


@pytest.fixture(scope="module")
def exp_cache(tmp_path_factory):
    out = tmp_path_factory.mktemp("exp-cache")
    r = run_experiment(EXP, out=out, progress=False)
    assert r["complete"]
    return out


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_unreadable_cell_files_are_misses(exp_cache, tmp_path, kind):
    shutil.copytree(exp_cache, tmp_path / "out")
    root = tmp_path / "out" / EXP
    csv_before = (root / "quick.csv").read_bytes()
    spoiled = sorted((root / "cells").glob("*.json"))[:3]
    for p in spoiled:
        p.write_bytes(CORRUPTIONS[kind](p.read_bytes()))
    r = run_experiment(EXP, out=tmp_path / "out", progress=False)
    assert r["complete"] and r["computed"] == 3 and r["cached"] == r["cells"] - 3
    assert (root / "quick.csv").read_bytes() == csv_before
    for p in spoiled:
        rec = json.loads(p.read_text())
        assert rec["cell"] == p.stem and "sup_error" in rec


# ----------------------------------------------------------------------------- determinism


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """One fresh verify run of FAST (global RNG disturbed first) and its files."""
    out = tmp_path_factory.mktemp("fresh")
    disturb_global_rng(1)
    assert verify(out) == 0
    assert not any(t["cached"] for t in timings(out).values())
    return snapshot(out)


def test_verify_is_byte_identical_fresh_cached_and_no_cache(fresh, tmp_path):
    assert any(k.startswith("data/") for k in fresh) and "timings.json" not in fresh
    disturb_global_rng(2)
    assert verify(tmp_path / "a", extra=["--no-cache"]) == 0  # fresh, elsewhere
    assert snapshot(tmp_path / "a") == fresh
    disturb_global_rng(3)
    assert verify(tmp_path / "a") == 0  # from the cache
    assert all(t["cached"] for t in timings(tmp_path / "a").values())
    assert snapshot(tmp_path / "a") == fresh
    d = json.loads(fresh["verdicts.json"])
    assert "wall_s" not in d["meta"] and all("duration_s" not in r for r in d["verdicts"])


def _strip_code_identity(data: bytes) -> bytes:
    """verdicts.json without the source fingerprint, git revision and cache keys: a second
    process may see a working tree that others edited meanwhile; everything else must match."""
    d = json.loads(data)
    for k in ("source", "git"):
        d["meta"].pop(k)
    for r in d["verdicts"]:
        r.pop("cache_key")
    return json.dumps(d, sort_keys=True).encode()


def _verify_in_a_subprocess(*args: str) -> None:
    """``approxtheory verify ARGS`` in a fresh process (one OpenMP thread); it must exit 0."""
    r = subprocess.run(
        [sys.executable, "-m", "approxtheory", "verify", *args],
        cwd=ROOT,
        timeout=300,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert r.returncode == 0, r.stderr


def test_verify_in_a_fresh_process_gives_the_same_results(fresh, tmp_path):
    _verify_in_a_subprocess("--only", *FAST, "--out", str(tmp_path), "--quiet", "--no-cache")
    other = snapshot(tmp_path)
    assert other.keys() == fresh.keys()
    for k in fresh:
        if k == "verdicts.json":
            assert _strip_code_identity(other[k]) == _strip_code_identity(fresh[k])
        else:
            assert other[k] == fresh[k], k


def test_checks_do_not_depend_on_global_random_state():
    for cid in ("HC-L8", "ID-L4.1", "ID-B4.6", "ID-F4.7"):
        runs = []
        for s in (11, 12):
            disturb_global_rng(s)
            runs.append(CHECKS[cid](Context()).to_dict())
        assert runs[0] == runs[1], cid
        other = CHECKS[cid](Context(seed=1)).to_dict()
        assert (
            other["evidence"] != runs[0]["evidence"] or other["measured"] != runs[0]["measured"]
        ), f"{cid} ignores ctx.seed"


def test_runner_csv_is_byte_identical_fresh_and_cached(exp_cache, tmp_path):
    first = (exp_cache / EXP / "quick.csv").read_bytes()
    assert b"seconds" not in first.splitlines()[0]  # timings stay out
    shutil.copytree(exp_cache, tmp_path / "c")
    r = run_experiment(EXP, out=tmp_path / "c", progress=False)
    assert r["cached"] == r["cells"]
    assert (tmp_path / "c" / EXP / "quick.csv").read_bytes() == first
    run = json.loads((tmp_path / "c" / EXP / "quick.json").read_text())
    assert run["wall_s"] >= 0 and run["cell_seconds"] > 0  # timings are here


# ----------------------------------------------------------------------------- killed runs


def test_verify_killed_midway_resumes_to_the_fresh_result(fresh, tmp_path, monkeypatch):
    def killed(ctx):
        raise KeyboardInterrupt

    killed.source_fn = CHECKS["ID-B4.6"].source_fn
    with monkeypatch.context() as m:
        m.setitem(CHECKS, "ID-B4.6", killed)
        assert verify(tmp_path / "a") == 130  # interrupted
    done = sorted(p.name.rsplit(".", 2)[0] for p in (tmp_path / "a" / ".cache").glob("*.json"))
    assert done == ["HC-L8", "ID-L4.1"]  # kept what it finished
    assert not list((tmp_path / "a" / ".cache").glob(".*"))  # no half-written files
    assert verify(tmp_path / "a") == 0  # resume
    t = timings(tmp_path / "a")
    assert [c for c in FAST if t[c]["cached"]] == ["HC-L8", "ID-L4.1"]
    assert snapshot(tmp_path / "a") == fresh


def test_experiment_killed_midway_resumes_to_the_fresh_result(exp_cache, tmp_path, monkeypatch):
    exp = get(EXP)
    calls = []

    def dies_on_the_fourth(cfg):
        calls.append(cfg)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return cell(cfg)

    cell = exp.cell
    monkeypatch.setattr(exp, "cell", dies_on_the_fourth)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(EXP, out=tmp_path, progress=False)
    assert len(list((tmp_path / EXP / "cells").glob("*.json"))) == 3
    monkeypatch.setattr(exp, "cell", cell)
    r = run_experiment(EXP, out=tmp_path, progress=False)
    assert r["complete"] and r["cached"] == 3 and r["computed"] == r["cells"] - 3
    assert (tmp_path / EXP / "quick.csv").read_bytes() == (
        exp_cache / EXP / "quick.csv"
    ).read_bytes()


# ----------------------------------------------------------------------------- stale caches


def test_cache_keys_cover_settings_source_and_libraries(monkeypatch):
    base = check_hash("HC-K2", Context())
    assert check_hash("HC-K2", Context()) == base
    assert check_hash("HC-K2", Context(seed=1)) != base
    assert check_hash("HC-K2", Context(profile="full")) != base
    assert check_hash("HC-K1", Context()) != base
    exp = get(EXP)
    cfg = cells(exp, "quick")[0]
    cbase = cell_hash(exp, cfg)
    assert cell_hash(exp, {**cfg, "seed": 1}) != cbase
    monkeypatch.setattr(provenance, "source_fingerprint", lambda packages=(): "edited")
    assert check_hash("HC-K2", Context()) != base
    assert cell_hash(exp, cfg) != cbase
    monkeypatch.undo()
    libs = {**provenance.libraries(), "torch": "0.0.0"}
    monkeypatch.setattr(provenance, "libraries", lambda: libs)
    assert check_hash("HC-K2", Context()) != base
    assert cell_hash(exp, cfg) != cbase


def test_source_fingerprint_sees_every_file(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    fp = lambda: provenance.fingerprint_dirs([("pkg", pkg)])  # noqa: E731
    base = fp()
    assert fp() == base
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0junk")
    assert fp() == base  # compiled files don't count
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    assert fp() != base
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    assert fp() == base
    (pkg / "sub" / "b.py").rename(pkg / "sub" / "c.py")
    assert fp() != base
    assert provenance.source_fingerprint() == provenance.source_fingerprint()  # once per process
    assert provenance.source_fingerprint.cache_info().currsize >= 1


def test_an_edited_construction_is_recomputed_not_served_from_cache(tmp_path):
    """Doubling HC-K2's read-out in a copy of the source: same settings, new key, refuted."""
    src = tmp_path / "src"
    # the installed layout: the folders proofs_check/ and experiments/ go under the package
    for pkg, to in (
        ("approxtheory", "approxtheory"),
        ("proofs_check", "approxtheory/proofs_check"),
        ("experiments", "approxtheory/experiments"),
    ):
        shutil.copytree(ROOT / pkg, src / to, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    out = tmp_path / "out"

    def run():
        code = (
            "import sys, approxtheory, approxtheory.proofs_check as pc; "
            "from approxtheory.cli import main; print(approxtheory.__file__, pc.__file__); "
            f"sys.exit(main(['verify', '--only', 'HC-K2', '--out', {str(out)!r}, '--quiet']))"
        )
        r = subprocess.run(
            [sys.executable, "-c", code],
            cwd=src,
            env=env,
            timeout=300,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert r.stdout.count(str(src)) == 2, r.stdout  # the copy is what runs
        v = json.loads((out / "verdicts.json").read_text())["verdicts"][0]
        return v, json.loads((out / "timings.json").read_text())["claims"]["HC-K2"]

    before, t = run()
    assert before["verdict"] == "verified-numeric" and not t["cached"]
    assert run()[1]["cached"]  # unchanged code: served
    construction = src / "approxtheory" / "constructions" / "headcount.py"
    text = construction.read_text()
    old = "m.set_readout(weight=T * np.eye(T * d)"
    assert text.count(old) == 1, "HC-K2's read-out moved: update this test"
    construction.write_text(text.replace(old, "m.set_readout(weight=2 * T * np.eye(T * d)"))
    after, t = run()
    assert after["cache_key"] != before["cache_key"]
    assert not t["cached"] and after["verdict"] == "refuted"
    assert len(list((out / ".cache").glob("HC-K2.*.json"))) == 2


# calls that draw from (or reseed) torch's, numpy's or python's global random state
_TORCH_DRAWS = {
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
    "bernoulli",
    "multinomial",
    "poisson",
    "rand_like",
    "randn_like",
    "randint_like",
}
_NP_OK = {"default_rng", "Generator", "SeedSequence", "PCG64", "Philox", "BitGenerator"}
_INPLACE = {
    "normal_",
    "uniform_",
    "random_",
    "bernoulli_",
    "exponential_",
    "cauchy_",
    "log_normal_",
    "geometric_",
}


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def global_random_draws(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, last = name.rpartition(".")
        seeded = any(k.arg == "generator" for k in node.keywords)
        bad = (
            name
            in (
                "torch.manual_seed",
                "torch.seed",
                "torch.cuda.manual_seed",
                "torch.cuda.manual_seed_all",
                "torch.random.manual_seed",
            )
            or (head == "torch" and last in _TORCH_DRAWS and not seeded)
            or (head in ("np.random", "numpy.random") and last not in _NP_OK)
            or head == "random"
            or (
                head.endswith("nn.init")
                and not seeded
                and last not in ("calculate_gain", "zeros_", "ones_", "constant_", "eye_", "dirac_")
            )
            or (last in _INPLACE and not seeded)
        )
        if bad:
            found.append(f"line {node.lineno}: {name}")
    return found


def test_global_random_draws_are_recognised():
    bad = (
        "import torch, numpy as np, random\ntorch.manual_seed(0)\ntorch.randn(3)\n"
        "np.random.rand(2)\nrandom.random()\ntorch.nn.init.normal_(w)\nw.uniform_(0, 1)\n"
    )
    assert len(global_random_draws(bad)) == 6
    good = (
        "g = torch.Generator().manual_seed(s)\ntorch.randn(3, generator=g)\n"
        "rng = np.random.default_rng(s)\nrng.standard_normal(3)\n"
        "torch.nn.init.normal_(w, generator=g)\nw.uniform_(0, 1, generator=g)\n"
    )
    assert global_random_draws(good) == []


def test_checks_and_experiments_draw_only_from_local_generators():
    """Every random draw of a check or an experiment comes from the run's / cell's seed through
    a local generator (np.random.default_rng, torch.Generator().manual_seed)."""
    found = {}
    for pkg in ("proofs_check", "experiments"):
        for p in sorted((ROOT / pkg).rglob("*.py")):
            hits = global_random_draws(p.read_text(encoding="utf-8"))
            if hits:
                found[str(p.relative_to(ROOT))] = hits
    assert found == {}
