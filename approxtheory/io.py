"""Files that cannot be turned against a run.

* Atomic writes: a result file is either the old one or the complete new one, never half; a new
  file gets the umask's mode, a replaced one keeps its mode.
* Strict JSON: non-finite floats are written as ``{"$float": "nan" | "inf" | "-inf"}`` (never
  the ``NaN``/``Infinity`` literals, ``allow_nan=False``) and read back as floats.
* Hostile entries are misses: :func:`read_json_entry` reads regular files only (no FIFO, device,
  directory or symlink), never blocks, caps the size before reading and refuses deep nesting.
* Writes stay in the output folder: :func:`safe_path` / :func:`safe_dir` refuse a path that a
  symlinked sub-folder leads out of it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_text",
    "atomic_write_bytes",
    "atomic_write_json",
    "json_roundtrip",
    "read_json",
    "read_json_entry",
    "read_at_most",
    "encode_nonfinite",
    "json_text",
    "atomic_write_checked_json",
    "read_checked_json",
    "content_digest",
    "safe_path",
    "safe_dir",
]


def _umask() -> int:
    """The process's umask, read without changing it where the system tells it (Linux), else
    by setting and restoring it."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _mode_for(path: Path) -> int:
    """The permission bits a file written at ``path`` gets: those of the regular file it
    replaces, else what ``open()`` would give a new file (0666 less the umask)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except (OSError, ValueError):
        pass
    return 0o666 & ~_umask()


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed and
    renamed over ``path``, so a reader sees the old or the new content, never a partial one.
    A new file gets the mode ``open()`` would give it (the umask is respected); a replaced
    regular file keeps its mode. A symlink at ``path`` is replaced, never followed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            else:  # pragma: no cover - Windows
                os.chmod(tmp, mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _inside(root: Path | str, relative: Path | str, what: str) -> tuple[Path, Path]:
    """``root / relative`` and the resolved ``root``, refused when ``relative`` is absolute,
    empty or climbs out with ``..``."""
    from .errors import ConfigError

    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ConfigError(
            f"refusing to write {what} {str(relative)!r}: a path inside the output folder is "
            f"needed (relative, without '..')"
        )
    try:
        return Path(root) / rel, Path(root).resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise ConfigError(f"refusing to write under {str(root)!r}: {e}") from None


def _check_inside(base: Path, folder: Path, what: str) -> None:
    from .errors import ConfigError

    try:
        resolved = folder.resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise ConfigError(
            f"refusing to write {what}: {str(folder)!r} cannot be resolved ({e})"
        ) from None
    if resolved != base and base not in resolved.parents:
        raise ConfigError(
            f"refusing to write {what}: {str(folder)!r} resolves to {str(resolved)!r}, outside "
            f"the output folder {str(base)!r} (a symlinked sub-folder?); remove the link or "
            f"choose another output folder"
        )


def safe_path(root: Path | str, relative: Path | str) -> Path:
    """``root / relative`` for a write under the output folder ``root``, refused (a typed
    :class:`~approxtheory.errors.ConfigError`) when ``relative`` is absolute or climbs out with
    ``..``, or when the folder it would be written in resolves outside ``root`` (a symlinked
    sub-folder pointing elsewhere). The file itself may be a symlink: an atomic write replaces
    it, never follows it."""
    target, base = _inside(root, relative, "the file")
    _check_inside(base, target.parent, f"the file {target.name!r}")
    return target


def safe_dir(root: Path | str, relative: Path | str) -> Path:
    """The folder ``root / relative``, created if missing, refused (a typed
    :class:`~approxtheory.errors.ConfigError`) when it resolves outside ``root`` (it, or a folder
    on the way, is a symlink pointing elsewhere) or climbs out with ``..``."""
    d, base = _inside(root, relative, "into the folder")
    _check_inside(base, d, "into it")
    d.mkdir(parents=True, exist_ok=True)
    return d


def atomic_write_text(path: Path | str, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def write_if_changed(path: Path | str, data: bytes | str) -> bool:
    """Write ``data`` (text as UTF-8) to ``path`` atomically unless ``path`` is a regular file
    that already holds exactly these bytes; whether it was written. A rerun that changes
    nothing then rewrites nothing (mtimes kept, no disk traffic)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
            with open(path, "rb") as fh:
                if fh.read(len(data) + 1) == data:
                    return False
    except (OSError, ValueError):
        pass
    atomic_write_bytes(path, data)
    return True


#: the key of the object that stands for a non-finite number in the JSON files written here
NONFINITE_FIELD = "$float"
_NONFINITE_VALUES = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _nonfinite_key(k: Any) -> Any:
    if isinstance(k, float) and not math.isfinite(k):  # a key is a string in JSON anyway
        return "nan" if math.isnan(k) else ("inf" if k > 0 else "-inf")
    return k


def encode_nonfinite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by its marker object (``{"$float": "nan"}``,
    ``{"$float": "inf"}``, ``{"$float": "-inf"}``), so that it dumps as strict JSON; tuples
    become lists (as JSON has them), everything else is kept."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return {NONFINITE_FIELD: "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
    if isinstance(obj, dict):
        return {_nonfinite_key(k): encode_nonfinite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode_nonfinite(v) for v in obj]
    return obj


def json_text(obj: Any, sort_keys: bool = True) -> str:
    """The strict JSON text (indent 2, newline-terminated) that :func:`atomic_write_json`
    writes: non-finite floats as their markers (see :func:`encode_nonfinite`), never the
    ``NaN``/``Infinity`` literals; other objects as their ``str``."""
    return (
        json.dumps(
            encode_nonfinite(obj), indent=2, sort_keys=sort_keys, default=str, allow_nan=False
        )
        + "\n"
    )


def atomic_write_json(path: Path | str, obj: Any, sort_keys: bool = True) -> Path:
    """``sort_keys=False`` keeps the dicts' order (cache files: a cached record must read back
    exactly as the fresh one, column order of its rows included). Strict JSON: a non-finite
    float is written as its marker (see :func:`encode_nonfinite`), read back by
    :func:`read_json_entry`."""
    return atomic_write_text(path, json_text(obj, sort_keys=sort_keys))


def json_roundtrip(obj: Any) -> Any:
    """``obj`` as it reads back from a JSON file written by :func:`atomic_write_json` (tuples
    become lists, numpy scalars and other objects their ``str``, dict order kept): a fresh
    result normalised this way equals the same result read from a cache."""
    return json.loads(json.dumps(obj, default=str))


DIGEST_FIELD = "_sha256"


def content_digest(obj: Any) -> str:
    """SHA-256 of ``obj``'s JSON text, dict order included (the same before and after a JSON
    round trip)."""
    import hashlib

    text = json.dumps(obj, default=str, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: a lone surrogate escaped in an entry ("\\ud800") digests, never raises
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def atomic_write_checked_json(path: Path | str, obj: dict) -> Path:
    """A cache entry: ``obj`` (dict order kept) plus the digest of its content, so that an
    entry that was cut short, edited or written by something else reads as a miss."""
    return atomic_write_json(path, {**obj, DIGEST_FIELD: content_digest(obj)}, sort_keys=False)


def read_checked_json(path: Path | str) -> dict | None:
    """The dict written by :func:`atomic_write_checked_json`, or None when the file is not a
    JSON entry (see :func:`read_json_entry`: missing, not a regular file, too large, unreadable,
    not strict JSON, nested too deep), not a dict, or its content does not match its digest."""
    d = read_json(path)
    if not isinstance(d, dict) or not isinstance(d.get(DIGEST_FIELD), str):
        return None
    digest = d.pop(DIGEST_FIELD)
    return d if digest == content_digest(d) else None


def read_at_most(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from the open file descriptor ``fd`` (read in 1 MiB chunks until
    end of file or the limit): the capped read behind every reader of untrusted files here."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 2**20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_json(path: Path | str) -> Any:
    """The JSON in ``path``, or None when it is missing, unreadable or not valid JSON (a cache
    entry that cannot be read is a miss, never a crash); see :func:`read_json_entry`."""
    return read_json_entry(path)


#: the deepest nesting of arrays and objects :func:`read_json_entry` parses (far below the
#: parser's recursion limit, so that the value can also be dumped and digested again)
MAX_JSON_DEPTH = 200

# a JSON string literal (unrolled loop, linear, no backtracking blow-up)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _json_depth_ok(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the arrays and objects of the JSON text ``data`` nest at most ``limit`` deep
    (one linear pass; brackets inside string literals do not count)."""
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return True
    import numpy as np

    step = np.zeros(256, dtype=np.int64)
    step[list(b"[{")], step[list(b"]}")] = 1, -1
    return int(np.cumsum(step[np.frombuffer(brackets, dtype=np.uint8)]).max()) <= limit


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def _decode_markers(d: dict) -> Any:
    if len(d) == 1 and NONFINITE_FIELD in d:
        v = d[NONFINITE_FIELD]
        if isinstance(v, str) and v in _NONFINITE_VALUES:
            return _NONFINITE_VALUES[v]
    return d


def read_json_entry(path, *, max_bytes: int = 64 * 2**20):
    """The JSON value stored at ``path``, or None when it is not one: missing, not a regular file
    (FIFO, device, directory, socket, symlink), larger than max_bytes, unreadable, not UTF-8,
    nested deeper than the parser can take, not strict JSON. Never blocks, never reads more than
    max_bytes + 1 bytes, never raises for hostile content (only for a programming error).

    Non-finite numbers written by :func:`atomic_write_json` as ``{"$float": "nan"}``,
    ``{"$float": "inf"}`` or ``{"$float": "-inf"}`` read back as the floats; the literals
    ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON) make the file a miss."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise TypeError(f"max_bytes must be a non-negative int (got {max_bytes!r})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(os.fspath(path), flags)
    except (OSError, ValueError):  # missing, a symlink (ELOOP), no permission, NUL in the name
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        data = read_at_most(fd, max_bytes + 1)
    except OSError:  # EAGAIN, EIO, EISDIR...
        return None
    finally:
        os.close(fd)
    if len(data) > max_bytes or not _json_depth_ok(data):
        return None
    try:
        text = data.decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant, object_hook=_decode_markers)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, a constant
        return None
