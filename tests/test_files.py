"""Files that cannot be turned against a run.

* :func:`approxtheory.io.read_json_entry` reads regular files only, never more than its cap,
  never blocks on a FIFO, never recurses without bound and reads strict JSON only;
* JSON written by :mod:`approxtheory.io` is strict (non-finite floats as ``{"$float": ...}``);
* atomic writes respect the umask and an existing file's mode;
* :func:`approxtheory.io.safe_path` refuses a path that leaves its root through a symlink;
* markdown text from records is escaped.
"""

import json
import math
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from approxtheory.io import (
    atomic_write_bytes,
    atomic_write_checked_json,
    atomic_write_json,
    encode_nonfinite,
    json_text,
    read_checked_json,
    read_json,
    read_json_entry,
)

ROOT = Path(__file__).resolve().parents[1]
needs_posix = pytest.mark.skipif(os.name != "posix", reason="FIFOs, symlinks and modes")


def _in_subprocess(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a hang fails the test at ``timeout`` (tens of
    seconds: only a real hang can reach it) instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


# ----------------------------------------------------------------------------- read_json_entry


def test_read_json_entry_reads_strict_json(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"a": [1, 2.5, "x", null, true], "b": {"c": "\\u00e9"}}')
    assert read_json_entry(p) == {"a": [1, 2.5, "x", None, True], "b": {"c": "é"}}
    assert read_json_entry(str(p)) == read_json(p)
    p.write_text("3")
    assert read_json_entry(p) == 3


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"\xff\xfe{}",  # not UTF-8
        "\ufeff{}".encode(),  # a BOM is not JSON
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b"[-Infinity]",
        b"[" * 100_000,
        b"[" * 100_000 + b"]" * 100_000,  # well-formed, but deeper than the parser can take
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    ],
    ids=["empty", "cut", "not-utf8", "bom", "nan", "inf", "-inf", "open", "deep", "deep-obj"],
)
def test_read_json_entry_hostile_content_is_a_miss(tmp_path, content):
    p = tmp_path / "e.json"
    p.write_bytes(content)
    assert read_json_entry(p) is None
    assert read_checked_json(p) is None


def test_read_json_entry_depth_counts_brackets_outside_strings_only(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(["[" * 10_000, '\\"[{', "]" * 10]))
    assert read_json_entry(p) == ["[" * 10_000, '\\"[{', "]" * 10]
    nested = 150 * "[" + "1" + 150 * "]"
    p.write_text(nested)
    assert read_json_entry(p) is not None  # moderate nesting is fine


def test_read_json_entry_missing_directory_and_bad_names_are_misses(tmp_path):
    assert read_json_entry(tmp_path / "missing.json") is None
    assert read_json_entry(tmp_path) is None  # a directory
    assert read_json_entry(str(tmp_path / "nul\0name")) is None


def test_read_json_entry_cap(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps(list(range(100))))
    size = p.stat().st_size
    assert read_json_entry(p, max_bytes=size) == list(range(100))
    assert read_json_entry(p, max_bytes=size - 1) is None
    with pytest.raises(TypeError):  # a programming error, not hostile content
        read_json_entry(p, max_bytes=-1)


@needs_posix
def test_read_json_entry_sparse_3gib_file_is_refused_unread(tmp_path):
    p = tmp_path / "big.json"
    with open(p, "wb") as fh:
        fh.truncate(3 * 2**30)  # sparse: no disk used
    assert read_json_entry(p) is None


@needs_posix
def test_read_json_entry_symlinks_are_misses(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("[1]")
    (tmp_path / "link.json").symlink_to(real)
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    assert read_json_entry(real) == [1]
    assert read_json_entry(tmp_path / "link.json") is None
    assert read_json_entry(tmp_path / "zero.json") is None
    assert read_json_entry("/dev/zero") is None  # a device named directly
    assert read_json_entry("/dev/null") is None


@needs_posix
def test_read_json_entry_does_not_block_on_a_fifo(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    r = _in_subprocess(
        f"""
        from approxtheory.io import read_json_entry, read_checked_json
        assert read_json_entry({str(fifo)!r}) is None
        assert read_checked_json({str(fifo)!r}) is None
        print("ok")
        """
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@needs_posix
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads anything")
def test_read_json_entry_unreadable_file_is_a_miss(tmp_path):
    p = tmp_path / "u.json"
    p.write_text("[1]")
    p.chmod(0)
    try:
        assert read_json_entry(p) is None
    finally:
        p.chmod(0o600)


def test_lone_surrogate_in_a_checked_entry_is_a_miss_not_a_crash(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"a": "\\ud800", "_sha256": "0"}')
    assert read_json_entry(p) == {"a": "\ud800", "_sha256": "0"}
    assert read_checked_json(p) is None


# ----------------------------------------------------------------------------- strict JSON


def test_nonfinite_floats_are_written_as_markers_and_read_back(tmp_path):
    obj = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (2, math.nan), math.inf: 1}
    text = json_text(obj)
    for literal in ("NaN", "Infinity"):
        assert literal not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"literal {c}"))  # strict JSON
    p = atomic_write_json(tmp_path / "x.json", obj)
    back = read_json_entry(p)
    assert math.isnan(back["a"]) and back["b"][:2] == [math.inf, -math.inf]
    assert back["b"][2] == 1.5 and back["c"][0] == 2 and math.isnan(back["c"][1])
    assert back["inf"] == 1
    assert json.loads(text)["b"][0] == {"$float": "inf"}
    assert encode_nonfinite([1.0, "nan", {"$float": "x"}]) == [1.0, "nan", {"$float": "x"}]


def test_a_marker_lookalike_is_kept_as_it_is(tmp_path):
    p = tmp_path / "m.json"
    p.write_text('[{"$float": "zero"}, {"$float": "nan", "x": 1}, {"$float": 1}]')
    assert read_json_entry(p) == [{"$float": "zero"}, {"$float": "nan", "x": 1}, {"$float": 1}]


def test_checked_entries_with_nonfinite_values_round_trip(tmp_path):
    p = tmp_path / "c.json"
    atomic_write_checked_json(p, {"v": math.nan, "w": [math.inf]})
    assert "NaN" not in p.read_text()
    back = read_checked_json(p)
    assert back is not None and math.isnan(back["v"]) and back["w"] == [math.inf]


# ----------------------------------------------------------------------------- atomic modes


@needs_posix
def test_atomic_writes_respect_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        p = atomic_write_bytes(tmp_path / "new.txt", b"x")
        assert stat.S_IMODE(p.stat().st_mode) == 0o644
        os.umask(0o077)
        q = atomic_write_bytes(tmp_path / "private.txt", b"x")
        assert stat.S_IMODE(q.stat().st_mode) == 0o600
    finally:
        os.umask(old)


@needs_posix
def test_atomic_writes_keep_an_existing_files_mode(tmp_path):
    p = tmp_path / "kept.txt"
    p.write_bytes(b"old")
    p.chmod(0o640)
    old = os.umask(0o077)
    try:
        atomic_write_bytes(p, b"new")
    finally:
        os.umask(old)
    assert p.read_bytes() == b"new" and stat.S_IMODE(p.stat().st_mode) == 0o640


@needs_posix
def test_atomic_write_replaces_a_symlink_without_following_it(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("keep")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write_bytes(link, b"new")
    assert target.read_text() == "keep" and not link.is_symlink() and link.read_bytes() == b"new"


# ----------------------------------------------------------------------------- safe paths


def test_safe_path_accepts_paths_inside_the_root(tmp_path):
    from approxtheory.io import safe_dir, safe_path

    assert safe_path(tmp_path, "a.json") == tmp_path / "a.json"
    assert safe_path(tmp_path, "data/x.csv") == tmp_path / "data" / "x.csv"  # need not exist
    assert safe_dir(tmp_path, "plots") == tmp_path / "plots" and (tmp_path / "plots").is_dir()
    (tmp_path / "inner").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "inner", target_is_directory=True)
    assert safe_path(tmp_path, "alias/x.csv") == tmp_path / "alias" / "x.csv"  # stays inside


@pytest.mark.parametrize("rel", ["/etc/passwd", "../x.csv", "data/../../x.csv", ""])
def test_safe_path_refuses_paths_that_leave_the_root(tmp_path, rel):
    from approxtheory.errors import ConfigError
    from approxtheory.io import safe_dir, safe_path

    with pytest.raises(ConfigError, match="inside the output folder"):
        safe_path(tmp_path, rel)
    with pytest.raises(ConfigError):
        safe_dir(tmp_path, rel)


@needs_posix
def test_safe_path_refuses_a_symlinked_sub_folder_pointing_outside(tmp_path):
    from approxtheory.errors import ConfigError
    from approxtheory.io import safe_dir, safe_path

    root, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "data").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ConfigError, match="outside the output folder"):
        safe_path(root, "data/x.csv")
    with pytest.raises(ConfigError, match="outside the output folder"):
        safe_path(root, "data/deeper/x.csv")
    with pytest.raises(ConfigError, match="outside the output folder"):
        safe_dir(root, "data")
    with pytest.raises(ConfigError, match="outside the output folder"):
        safe_dir(root, "data/sub")
    assert list(elsewhere.iterdir()) == []  # nothing created there
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(ConfigError):
        safe_path(root, "loop/x.csv")


# ----------------------------------------------------------------------------- markdown


def test_markdown_text_is_escaped():
    from approxtheory.report import _md_code, _md_text

    t = _md_text("a | b `c` <b>x</b> & [l](u) *e* _u_ ~s~ \\\n| row |\r\x00\u2028z")
    assert "\n" not in t and "\r" not in t and "\x00" not in t and "\u2028" not in t
    assert "<" not in t and ">" not in t and "&lt;b&gt;" in t and "&amp;" in t
    for ch in "|`[]*_~":
        assert ch not in t.replace("\\" + ch, "")
    assert "\\\\" in t  # a backslash is escaped too
    assert _md_text("plain text 1.5e-3 (ok)") == "plain text 1.5e-3 (ok)"
    assert _md_code("x") == "`x`"
    assert _md_code("a`b") == "``a`b``"
    assert _md_code("`a``") == "``` `a`` ```"
    assert _md_code("a|b\nc") == "`a\\|b c`"


@needs_posix
def test_source_fingerprint_does_not_open_a_fifo_named_py(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "b.py")
    r = _in_subprocess(
        f"""
        from pathlib import Path
        from approxtheory.provenance import fingerprint_dirs
        print(fingerprint_dirs([("pkg", Path({str(tmp_path)!r}))]))
        """
    )
    assert r.returncode == 0 and len(r.stdout.strip()) == 64, r.stderr
