"""The one reader of files that come from elsewhere: model directories' config.json
and safetensors files, results CSVs, export sources.

Every reader here refuses with a typed :class:`~approxtheory.errors.ConfigError` (one line, exit
2 on the command line) that names the file, the field and what is allowed, and never blocks or
allocates for hostile content:

* regular files only: a FIFO, device (``/dev/zero``), socket or directory is refused without
  reading (opened non-blocking; a symlink to a regular file is followed, as Hugging Face caches
  hold them);
* size-capped before reading (``fstat``), and never more than the cap + 1 bytes read
  (:func:`approxtheory.io.read_at_most`);
* JSON depth-capped (:data:`approxtheory.io.MAX_JSON_DEPTH`) and strict (no ``NaN`` literals);
  a UTF-8 byte-order mark is allowed and dropped;
* fields typed and range-checked (:func:`get_int`, :func:`get_float`, :func:`get_bool`) before
  anything is built from them;
* safetensors headers (:func:`safetensors_header`) checked against the file's size: an empty,
  truncated or inconsistent file is refused before a loader maps it.
"""

from __future__ import annotations

import json
import math
import os
import stat
import struct
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_TABLE_BYTES",
    "MAX_HEADER_BYTES",
    "MISSING",
    "read_bytes",
    "read_text",
    "read_json",
    "get_int",
    "get_float",
    "get_bool",
    "get_choice",
    "safetensors_header",
    "SAFETENSORS_DTYPES",
]

#: the largest JSON config read (a model's config.json is kilobytes)
MAX_CONFIG_BYTES = 16 * 2**20
#: the largest table (results CSV, result JSON) read
MAX_TABLE_BYTES = 64 * 2**20
#: the largest safetensors header read (the format's own limit is 100 MB; ours is far above
#: any model's index of tensors)
MAX_HEADER_BYTES = 16 * 2**20
#: the largest integer a size field may hold, whatever its own range (far above any model)
MAX_FIELD_INT = 10**12

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()

#: bytes per element of every safetensors dtype
SAFETENSORS_DTYPES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "F64": 8,
    "I64": 8,
    "U64": 8,
}


def _shown(v: Any) -> str:
    """``v`` for a message, cut to 60 characters."""
    t = repr(v)
    return t if len(t) <= 60 else t[:57] + f"... ({len(t)} characters)"


def _kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _open_regular(path, where: str) -> tuple[int, int]:
    """``(fd, size)`` of the regular file at ``path`` opened non-blocking, else ConfigError."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(os.fspath(path), flags)
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, ValueError) as e:  # a loop, no permission, NUL in the name, EISDIR
        why = getattr(e, "strerror", None) or str(e)
        raise ConfigError(
            f"{where}: cannot be opened ({why}); a readable regular file is needed"
        ) from None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise ConfigError(f"{where}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ConfigError(
            f"{where}: is {_kind_of(st.st_mode)}; a regular file is needed (nothing was read)"
        )
    return fd, st.st_size


def _cap_error(where: str, limit: int, size: int | None = None) -> ConfigError:
    from .resources import format_bytes

    got = "" if size is None else f" (it has {format_bytes(size)})"
    return ConfigError(
        f"{where}: larger than {format_bytes(limit)}{got}; such a file is far smaller"
    )


def read_bytes(path, *, where: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, refused (ConfigError starting with ``where``)
    when it is missing, not a regular file, unreadable or larger than ``max_bytes`` (checked
    before reading, and never more than ``max_bytes + 1`` bytes read)."""
    from .io import read_at_most

    fd, size = _open_regular(path, where)
    try:
        if size > max_bytes:
            raise _cap_error(where, max_bytes, size)
        data = read_at_most(fd, max_bytes + 1)
    except OSError as e:
        raise ConfigError(f"{where}: cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise _cap_error(where, max_bytes)
    return data


def read_text(path, *, where: str, max_bytes: int = MAX_TABLE_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8 (a byte-order mark is dropped)."""
    data = read_bytes(path, where=where, max_bytes=max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not UTF-8 text (byte {e.start})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def read_json(path, *, where: str, max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """The strict JSON value in the file ``path`` (see :func:`read_text`), nested at most
    :data:`approxtheory.io.MAX_JSON_DEPTH` deep; else ConfigError starting with ``where``."""
    from .io import MAX_JSON_DEPTH, _json_depth_ok

    text = read_text(path, where=where, max_bytes=max_bytes)
    if not _json_depth_ok(text.encode("utf-8", "surrogatepass")):
        raise ConfigError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ConfigError(f"{where}: JSON nested too deep") from None
    except ValueError as e:
        raise ConfigError(f"{where}: not valid JSON ({str(e)[:120]})") from None


# ---------------------------------------------------------------------------------- fields
def _field(d: Any, key: str, where: str, default: Any) -> Any:
    if not isinstance(d, dict):
        raise ConfigError(f"{where}: must be a JSON object (got {type(d).__name__})")
    if key not in d or d[key] is None:
        if default is MISSING:
            raise ConfigError(f"{where}: field {key!r} is missing")
        return default
    return d[key]


def get_int(
    d: Any,
    key: str,
    *,
    where: str,
    lo: int = 1,
    hi: int = MAX_FIELD_INT,
    default: Any = MISSING,
) -> Any:
    """``d[key]`` as an int from ``lo`` to ``hi`` (JSON integers only: ``12.0``, ``"12"``, true
    and ``1e11`` are refused), ``default`` when absent or null (MISSING: required)."""
    v = _field(d, key, where, default)
    if v is default and default is not MISSING:
        return v
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ConfigError(
            f"{where}: field {key!r} must be an integer from {lo} to {hi} (got {_shown(v)})"
        )
    return v


def get_float(
    d: Any,
    key: str,
    *,
    where: str,
    lo: float = -math.inf,
    hi: float = math.inf,
    default: Any = MISSING,
) -> Any:
    """``d[key]`` as a finite float from ``lo`` to ``hi`` (an integer counts)."""
    v = _field(d, key, where, default)
    if v is default and default is not MISSING:
        return v
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not ok or not (math.isfinite(float(v)) and lo <= v <= hi):
        raise ConfigError(
            f"{where}: field {key!r} must be a finite number from {lo:g} to {hi:g} "
            f"(got {_shown(v)})"
        )
    return float(v)


def get_bool(d: Any, key: str, *, where: str, default: Any = MISSING) -> Any:
    """``d[key]`` as true or false."""
    v = _field(d, key, where, default)
    if not isinstance(v, bool) and not (v is default and default is not MISSING):
        raise ConfigError(f"{where}: field {key!r} must be true or false (got {_shown(v)})")
    return v


def get_choice(d: Any, key: str, choices, *, where: str, default: Any = MISSING) -> Any:
    """``d[key]``, one of ``choices``."""
    v = _field(d, key, where, default)
    if v is default and default is not MISSING:
        return v
    if not isinstance(v, str) or v not in choices:
        raise ConfigError(
            f"{where}: field {key!r} must be one of {', '.join(map(str, choices))} "
            f"(got {_shown(v)})"
        )
    return v


# ----------------------------------------------------------------------------- safetensors
def _tensor_entry(name: str, e: Any, where: str, data_len: int) -> tuple[int, int]:
    """``(begin, end)`` of one tensor of a safetensors header, checked."""
    w = f"{where}: tensor {_shown(name)}"
    if not isinstance(e, dict):
        raise ConfigError(f"{w}: must be an object with dtype, shape and data_offsets")
    dtype = get_choice(e, "dtype", tuple(SAFETENSORS_DTYPES), where=w)
    shape = _field(e, "shape", w, MISSING)
    if not isinstance(shape, list) or len(shape) > 64:
        raise ConfigError(
            f"{w}: field 'shape' must be a list of at most 64 sizes (got {_shown(shape)})"
        )
    n = 1
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 2**62:
            raise ConfigError(f"{w}: field 'shape' must hold integers >= 0 (got {_shown(shape)})")
        n *= s
    off = _field(e, "data_offsets", w, MISSING)
    if (
        not isinstance(off, list)
        or len(off) != 2
        or any(isinstance(o, bool) or not isinstance(o, int) for o in off)
        or not 0 <= off[0] <= off[1] <= data_len
    ):
        raise ConfigError(
            f"{w}: field 'data_offsets' must be [begin, end] with 0 <= begin <= end <= "
            f"{data_len} (the data the file holds; got {_shown(off)})"
        )
    if off[1] - off[0] != n * SAFETENSORS_DTYPES[dtype]:
        raise ConfigError(
            f"{w}: shape {shape} of {dtype} needs {n * SAFETENSORS_DTYPES[dtype]} bytes, "
            f"data_offsets give {off[1] - off[0]}"
        )
    return off[0], off[1]


def safetensors_header(path, *, where: str) -> dict:
    """The tensors ``{name: {"dtype", "shape", "data_offsets"}}`` of the safetensors file
    ``path``, checked without reading its data: an 8-byte little-endian header length, a strict
    JSON object of at most :data:`MAX_HEADER_BYTES`, each tensor's dtype known, shape and byte
    range consistent and inside the file. Empty, truncated or inconsistent files are refused
    (ConfigError starting with ``where``)."""
    from .io import MAX_JSON_DEPTH, _json_depth_ok, read_at_most

    fd, size = _open_regular(path, where)
    try:
        head = read_at_most(fd, 8)
        if len(head) < 8:
            raise ConfigError(
                f"{where}: {size} bytes, too short for a safetensors file (an 8-byte header "
                f"length, a JSON header, the data)"
            )
        (n,) = struct.unpack("<Q", head)
        if n < 2 or n > min(MAX_HEADER_BYTES, size - 8):
            raise ConfigError(
                f"{where}: header length {n} must be from 2 to "
                f"{min(MAX_HEADER_BYTES, max(size - 8, 0))} (the file has {size} bytes: "
                f"truncated or not safetensors)"
            )
        raw = read_at_most(fd, n)
    except OSError as e:
        raise ConfigError(f"{where}: cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if len(raw) < n or not _json_depth_ok(raw, min(MAX_JSON_DEPTH, 8)):
        raise ConfigError(f"{where}: the header is truncated or nested too deep")
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as e:
        raise ConfigError(f"{where}: the header is not valid JSON ({str(e)[:100]})") from None
    if not isinstance(header, dict):
        raise ConfigError(f"{where}: the header must be a JSON object")
    data_len = size - 8 - n
    end = 0
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise ConfigError(f"{where}: __metadata__ must map names to strings")
            continue
        end = max(end, _tensor_entry(name, entry, where, data_len)[1])
        tensors[name] = entry
    if end != data_len:
        raise ConfigError(
            f"{where}: the tensors cover {end} bytes of data, the file holds {data_len} "
            f"(truncated or padded)"
        )
    return tensors


def files_in(folder, pattern: str, *, where: str, limit: int = 10_000) -> list[Path]:
    """The entries of ``folder`` matching ``pattern`` (sorted; at most ``limit``)."""
    try:
        found = sorted(Path(folder).glob(pattern))
    except OSError as e:
        raise ConfigError(f"{where}: cannot be listed ({e.strerror or e})") from None
    if len(found) > limit:
        raise ConfigError(f"{where}: more than {limit} {pattern} files")
    return found
