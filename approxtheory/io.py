"""Atomic file writing: a result file is either the old one or the complete new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_text",
    "atomic_write_bytes",
    "atomic_write_json",
    "json_roundtrip",
    "read_json",
    "atomic_write_checked_json",
    "read_checked_json",
    "content_digest",
]


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed and
    renamed over ``path``, so a reader sees the old or the new content, never a partial one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: Path | str, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path | str, obj: Any, sort_keys: bool = True) -> Path:
    """``sort_keys=False`` keeps the dicts' order (cache files: a cached record must read back
    exactly as the fresh one, column order of its rows included)."""
    return atomic_write_text(
        path, json.dumps(obj, indent=2, sort_keys=sort_keys, default=str) + "\n"
    )


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
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write_checked_json(path: Path | str, obj: dict) -> Path:
    """A cache entry: ``obj`` (dict order kept) plus the digest of its content, so that an
    entry that was cut short, edited or written by something else reads as a miss."""
    return atomic_write_json(path, {**obj, DIGEST_FIELD: content_digest(obj)}, sort_keys=False)


def read_checked_json(path: Path | str) -> dict | None:
    """The dict written by :func:`atomic_write_checked_json`, or None when the file is missing,
    unreadable, not JSON, not a dict, or its content does not match its digest."""
    d = read_json(path)
    if not isinstance(d, dict) or not isinstance(d.get(DIGEST_FIELD), str):
        return None
    digest = d.pop(DIGEST_FIELD)
    return d if digest == content_digest(d) else None


def read_json(path: Path | str) -> Any:
    """The JSON in ``path``, or None when it is missing, unreadable or not valid JSON (a cache
    entry that cannot be read is a miss, never a crash)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError covers JSONDecodeError and UnicodeDecodeError
        return None
