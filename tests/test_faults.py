"""Fault tests, all slow: ``pytest -m slow tests/test_faults.py``.

* ``kill -9`` of a real ``approxtheory verify`` process mid-run, then a rerun into the same
  folder: the same bytes as an uninterrupted ``--no-cache`` run (``verdicts.json``, the CSVs, the
  plots; the report up to its wall time);
* a full disk, simulated in a subprocess by a ``sitecustomize`` that makes every write under the
  output folder fail with ENOSPC once a byte budget is used up (writing the part that fits
  first, as a filling disk does): exit 2 with one error line, no partial file (every file left
  is complete: byte for byte the uninterrupted run's), no temporary file left behind, and a
  rerun with room completes to the same bytes. No tmpfs is mounted: the test needs no
  privileges.

Each test is self-contained; a subprocess timeout of minutes guards against a hang only (a
normal run takes seconds of CPU). Byte comparisons across processes drop the source fingerprint
and cache keys of ``verdicts.json`` when they differ: other processes may edit this working tree
meanwhile (then a second process computes other keys); with the same fingerprint the bytes must
be identical.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from approxtheory.cli import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/fd").is_dir(), reason="POSIX"),
]

ROOT = Path(__file__).resolve().parents[1]
# fast claims: HC-L8 and ID-B4.6 take milliseconds, HC-K2 (rows, a CSV, a plot) and ID-L4.1 a
# few seconds, so a kill after the first cache entry lands mid-run
CLAIMS = ["HC-L8", "ID-B4.6", "HC-K2", "ID-L4.1"]
HANG_GUARD_S = 600  # subprocess timeout: only a real hang reaches it
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
ENV.pop("APPROXTHEORY_DEBUG", None)


def _verify_argv(out, *extra, claims=CLAIMS):
    return ["verify", "--only", *claims, "--out", str(out), "--quiet", *extra]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted ``--no-cache`` run (in this process), and its cache folder from a
    second, cached run."""
    out = tmp_path_factory.mktemp("reference") / "out"
    assert main(_verify_argv(out, "--no-cache")) == 0
    assert main(_verify_argv(out)) == 0  # writes the cache entries (same bytes otherwise)
    return out


def _files(out: Path) -> dict[str, bytes]:
    """Every file of a run but the cache and the timings, as bytes."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".cache" not in p.relative_to(out).parts and p.name != "timings.json"
    }


def _normalise(name: str, data: bytes, same_source: bool) -> bytes:
    if name == "verdicts.json" and not same_source:
        d = json.loads(data)
        d["meta"].pop("source", None)
        d["meta"].pop("git", None)
        for v in d["verdicts"]:
            v.pop("cache_key", None)
        return json.dumps(d, sort_keys=True).encode()
    if name.startswith("report."):  # the header holds the run's wall time (and the revision)
        data = re.sub(rb"\d+(?:\.\d+)? s\b", b"T s", data)
        return data if same_source else re.sub(rb"git [0-9a-f]+", b"git X", data)
    return data


def _source(files: dict[str, bytes]) -> str | None:
    try:
        return json.loads(files["verdicts.json"])["meta"]["source"]
    except (KeyError, ValueError):
        return None


def assert_same_files(out: Path, reference: Path, complete: bool = True) -> None:
    """The files of ``out`` are the reference's, byte for byte (all of them when ``complete``;
    otherwise the ones present: a run stopped by a full disk leaves only whole files)."""
    got, want = _files(out), _files(reference)
    same = _source(got) is None or _source(got) == _source(want)
    if complete:
        assert sorted(got) == sorted(want)
    assert set(got) <= set(want), sorted(set(got) - set(want))
    for name, data in got.items():
        assert _normalise(name, data, same) == _normalise(name, want[name], same), name


def _leftover_temporaries(out: Path) -> list[str]:
    return [str(p) for p in out.rglob("*.tmp")]


# ------------------------------------------------------------------------------ kill -9
@pytest.mark.parametrize("entries_before_kill", [1, 3])
def test_kill_9_mid_verify_then_rerun_gives_identical_bytes(
    reference, tmp_path, entries_before_kill
):
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "approxtheory", *_verify_argv(out)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + HANG_GUARD_S
    try:
        while len(list((out / ".cache").glob("*.json"))) < entries_before_kill:
            assert p.poll() is None, f"verify ended before the kill: {p.stderr.read()!r}"
            assert time.monotonic() < deadline, "no cache entry appeared (hang?)"
            time.sleep(0.01)
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.wait(timeout=60)
        p.stderr.close()
    assert p.returncode == -signal.SIGKILL
    assert not (out / "verdicts.json").exists(), "the kill came after the run had finished"
    left = {p.name for p in (out / ".cache").glob("*.json")}
    assert len(left) >= entries_before_kill
    # the rerun reads the entries the killed run completed and computes the rest
    assert main(_verify_argv(out)) == 0
    timings = json.loads((out / "timings.json").read_text())["claims"]
    verdicts = json.loads((out / "verdicts.json").read_text())["verdicts"]
    # an entry is read back where this process computes the same key (other processes editing
    # the working tree meanwhile change the keys: then every claim is recomputed)
    for v in verdicts:
        if f"{v['claim']}.{v['cache_key']}.json" in left:
            assert timings[v["claim"]]["cached"], (v["claim"], timings)
    assert_same_files(out, reference)


# ---------------------------------------------------------------------------- full disk
SITECUSTOMIZE = textwrap.dedent(
    '''
    """A disk that fills up: writes to files under DIR fail with ENOSPC once BUDGET bytes are
    written (the part that fits is written first). set_budget(-1, None) turns it off."""
    import builtins, errno, io, os

    BUDGET, DIR, USED = -1, None, 0
    _open, _io_open, _fdopen, _write = builtins.open, io.open, os.fdopen, os.write


    def set_budget(budget, folder):
        global BUDGET, DIR, USED
        BUDGET, USED = budget, 0
        DIR = os.path.realpath(folder) if folder else None


    def _watched(path):
        if DIR is None or BUDGET < 0:
            return False
        try:
            real = os.path.realpath(path)
        except (TypeError, ValueError, OSError):
            return False
        return real == DIR or real.startswith(DIR + os.sep)


    def _take(n):
        """How many of n bytes fit; raises ENOSPC (after the caller wrote them) when not all."""
        global USED
        room = max(0, BUDGET - USED)
        USED += min(n, room)
        return min(n, room)


    def _full():
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


    class _FullFile:
        def __init__(self, f):
            self._f = f

        def write(self, data):
            n = len(data.encode("utf-8") if isinstance(data, str) else memoryview(data).cast("B"))
            fits = _take(n)
            if fits < n:
                if fits:
                    self._f.write(data[:fits])
                    self._f.flush()
                raise _full()
            return self._f.write(data)

        def writelines(self, lines):
            for line in lines:
                self.write(line)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

        def __iter__(self):
            return iter(self._f)

        def __getattr__(self, name):
            return getattr(self._f, name)


    def _writing(mode):
        return any(c in str(mode) for c in "wax+")


    def open(file, mode="r", *args, **kwargs):
        f = _open(file, mode, *args, **kwargs)
        if _writing(mode) and not isinstance(file, int) and _watched(file):
            return _FullFile(f)
        return f


    def fdopen(fd, mode="r", *args, **kwargs):
        f = _fdopen(fd, mode, *args, **kwargs)
        if _writing(mode) and _watched(f"/proc/self/fd/{fd}"):
            return _FullFile(f)
        return f


    def write(fd, data):
        if _watched(f"/proc/self/fd/{fd}"):
            n = len(memoryview(data).cast("B"))
            fits = _take(n)
            if fits < n:
                if fits:
                    _write(fd, bytes(memoryview(data).cast("B")[:fits]))
                raise _full()
        return _write(fd, data)


    builtins.open = io.open = open
    os.fdopen, os.write = fdopen, write
    '''
)

RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, sys
    import sitecustomize
    assert hasattr(sitecustomize, "set_budget"), "the fault injector was not loaded"
    from approxtheory.cli import main

    results = []
    for budget, folder, argv in json.loads(sys.argv[1]):
        sitecustomize.set_budget(budget, folder)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(argv)
        sitecustomize.set_budget(-1, None)
        results.append({"rc": rc, "stderr": err.getvalue()})
    print(json.dumps(results))
    """
)


def _run_with_full_disk(tmp_path, runs):
    """Run ``[(budget, folder, argv), ...]`` in one subprocess with the full-disk injector."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    p = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps([[b, str(f), a] for b, f, a in runs])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _assert_full_disk_error(r):
    lines = r["stderr"].splitlines()
    assert r["rc"] == 2, r
    assert "Traceback" not in r["stderr"], r
    errors = [line for line in lines if line.startswith("approxtheory: error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0], r
    assert lines[-1] == errors[0], r
    # before it, only the warnings of cache entries that could not be written
    assert all("warning" in line or "cache entr" in line for line in lines[:-1]), r


def test_full_disk_gives_exit_2_and_leaves_no_partial_file(reference, tmp_path):
    ref_files = _files(reference)
    size = sum(len(b) for b in ref_files.values())  # what a run writes besides its cache
    budgets = sorted({0, 1, size // 5, size // 2, (4 * size) // 5, size - 1})
    runs, outs = [], []
    for i, budget in enumerate(budgets):
        out = tmp_path / f"cached{i}"
        shutil.copytree(reference / ".cache", out / ".cache")  # hits: only the report is written
        runs.append((budget, out, _verify_argv(out)))
        outs.append(out)
    # no cache: the entries cannot be written (warnings), then the report fails
    fresh = tmp_path / "fresh"
    runs.append((0, fresh, _verify_argv(fresh, claims=["HC-L8", "ID-B4.6"])))
    # docs: one atomic write
    docs = tmp_path / "docs"
    docs.mkdir()
    runs.append((1000, docs, ["docs", "--out", str(docs / "claims.md")]))
    results = _run_with_full_disk(tmp_path, runs)

    for out, r in zip(outs, results):
        _assert_full_disk_error(r)
        assert not _leftover_temporaries(out), _leftover_temporaries(out)
        assert_same_files(out, reference, complete=False)  # only whole files are left
    _assert_full_disk_error(results[-2])
    assert not (fresh / "verdicts.json").exists() and not _leftover_temporaries(fresh)
    _assert_full_disk_error(results[-1])
    assert results[-1]["stderr"].count("\n") == 1  # docs: exactly one line
    assert not list(docs.iterdir()), list(docs.iterdir())  # no partial page, no temporary

    # with room again, a rerun in a folder the full disk left behind completes to the same bytes
    out = outs[len(outs) // 2]
    assert main(_verify_argv(out)) == 0
    assert_same_files(out, reference)
