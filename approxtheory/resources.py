"""Resource estimates, checked before allocating.

Work whose estimated memory (or time) exceeds a limit is refused with a
:class:`~approxtheory.errors.ResourceLimitError` *before* anything big is allocated; the message
gives the estimate, the limit and how to raise it.

Example::

    >>> from approxtheory.resources import array_bytes, require
    >>> array_bytes(1000, 1000)                 # one float64 matrix
    8000000
    >>> require(bytes=array_bytes(1000, 1000), what="a small matrix")   # fits: no error
    >>> require(bytes=array_bytes(10**6, 10**6), what="a huge matrix")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    approxtheory.errors.ResourceLimitError: a huge matrix needs about 7.3 TiB of memory, ...

Limits, in order of precedence: the ``limit=`` / ``seconds_limit=`` arguments of :func:`require`;
the innermost :func:`limits` context (the CLI's ``--max-memory SIZE`` option uses it); the
environment variables ``APPROXTHEORY_MAX_BYTES`` (a size such as ``8G``, ``512M`` or a byte
count; ``unlimited`` turns the check off) and ``APPROXTHEORY_MAX_SECONDS``; the defaults, a quarter
of this machine's memory (the cgroup limit where there is one) and 24 hours.

Estimates are lower bounds of the dominant allocations (float64 unless stated): a refusal means the
work certainly does not fit; passing does not promise that it does.

Threads: every entry point that computes (the CLI's commands, the pytest plugin, the
library's search and bracket functions) runs torch with :func:`threads` threads: 1 by default
(:data:`DEFAULT_THREADS`, measured best), else ``APPROXTHEORY_THREADS``, else what
:func:`set_threads` or the CLI's ``--threads N`` says; ``verify`` and experiment cells always
compute with one (their records must not depend on the thread count).

Measurements: ``approxtheory.measure`` calls ``require_sup_error(model, task, budget,
batch=batch)`` at the top of ``sup_error`` and ``require_errors(model, task, len(X),
batch=batch)`` at the top of ``errors``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Literal, ParamSpec, TypeVar, cast

from ._validate import check_int
from .errors import ConfigError, ResourceLimitError

__all__ = [
    "THREADS_ENV",
    "DEFAULT_THREADS",
    "threads",
    "set_threads",
    "using_threads",
    "with_threads",
    "pinned_threads",
    "check_threads",
    "max_threads",
    "ENV_BYTES",
    "ENV_SECONDS",
    "DEFAULT_MEMORY_FRACTION",
    "DEFAULT_MAX_SECONDS",
    "FLOPS_PER_SECOND",
    "require",
    "limits",
    "memory_option",
    "max_bytes",
    "max_seconds",
    "machine_memory",
    "keep_freed_memory",
    "parse_size",
    "MAX_SIZE",
    "format_bytes",
    "format_seconds",
    "array_bytes",
    "model_param_count",
    "model_bytes",
    "forward_bytes",
    "sup_error_bytes",
    "errors_bytes",
    "require_sup_error",
    "require_errors",
    "require_model",
]

ENV_BYTES = "APPROXTHEORY_MAX_BYTES"
ENV_SECONDS = "APPROXTHEORY_MAX_SECONDS"
DEFAULT_MEMORY_FRACTION = 0.25
DEFAULT_MAX_SECONDS = 24 * 3600.0
# An optimistic float64 rate, so that time estimates stay lower bounds.
FLOPS_PER_SECOND = 1e11

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_UNLIMITED = ("unlimited", "none", "inf", "off")
#: the largest limit a size can give (2^64 bytes = 16 EiB); larger values are refused
MAX_SIZE = 1 << 64
_override: list[tuple[int | None, float | None]] = []  # stack of limits() contexts


# ------------------------------------------------------------------------------------ formats
def parse_size(text, name: str = "size") -> int | None:
    """``8G``, ``8GiB``, ``8GB``, ``1.5t``, ``512M``, ``4096`` (bytes; binary units) -> bytes;
    ``unlimited`` -> None. Sizes from 1 byte to :data:`MAX_SIZE` (16 EiB); anything else is a
    :class:`~approxtheory.errors.ConfigError`."""
    s = str(text).strip().lower()
    if s in _UNLIMITED:
        return None
    m = re.fullmatch(r"(\d+)?(?:\.(\d*))?\s*(?:([kmgtp])(?:i?b)?|b)?", s)
    if m is None or not (m.group(1) or m.group(2)):
        raise ConfigError(
            f"{name} must be a size such as 8G, 512M, 1.5T or a number of bytes, "
            f"or 'unlimited' (got {_shown(text)})"
        )
    # exact arithmetic (a float of 400 digits is inf); digits beyond 10^30 are certainly too big
    # and past 30 decimals meaningless, so neither reaches int()'s 4300-digit limit
    whole = (m.group(1) or "0").lstrip("0") or "0"
    if len(whole) > 30:
        n = MAX_SIZE + 1
    else:
        frac = (m.group(2) or "")[:30]
        n = int(Fraction(f"{whole}.{frac or '0'}") * _UNITS[m.group(3) or ""])
    if n > MAX_SIZE:
        raise ConfigError(
            f"{name} must be at most {format_bytes(MAX_SIZE)} (2^64 bytes), or 'unlimited' for "
            f"no limit (got {_shown(text)})"
        )
    if n < 1:
        raise ConfigError(f"{name} must be at least 1 byte (got {_shown(text)})")
    return n


def _shown(text) -> str:
    """``text`` quoted for a message, cut to 60 characters (a 400-digit value stays readable)."""
    t = str(text)
    return repr(t) if len(t) <= 60 else repr(t[:57]) + f"... ({len(t)} characters)"


def format_bytes(n) -> str:
    """A byte count for humans (``1.5 GiB``); beyond floats, the power of ten."""
    if isinstance(n, int) and n.bit_length() > 1000:  # beyond float: the power of ten
        return f"10^{int((n.bit_length() - 1) * math.log10(2))} B"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.3g} ZiB"


def format_seconds(s) -> str:
    """A duration for humans: seconds below 2 minutes, then minutes, hours, days."""
    s = float(s)
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 3 * 86400:
        return f"{s / 3600:.1f} h"
    if s < 3e9:
        return f"{s / 86400:.3g} days"
    return f"{s / 3.15e7:.2g} years"


# ------------------------------------------------------------------------------------- limits
@functools.cache  # read once per process: every training step's size check consults it
def machine_memory() -> int:
    """Physical memory, or the cgroup's limit when that is lower."""
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as f:
                v = f.read().strip()
        except OSError:
            continue
        if v.isdigit() and int(v) > 0 and (total is None or int(v) < total):
            total = int(v)
    return int(total) if total else 16 << 30


def _default_bytes() -> int:
    return max(1 << 30, int(DEFAULT_MEMORY_FRACTION * machine_memory()))


#: a limit's type: bytes (int) or seconds (float)
_L = TypeVar("_L", int, float)


def _in_force(
    which: Literal[0, 1],
    env_name: str,
    parse: Callable[[str], _L | None],
    default: Callable[[], _L | None],
) -> _L | None:
    """A limit in force: the innermost :func:`limits` block's (``which``: 0 bytes, 1 seconds;
    -1 is unlimited: None), else the environment variable ``env_name`` read by ``parse``, else
    ``default()``."""
    for pair in reversed(_override):
        value = pair[which]
        if value is not None:  # the block's own limit: bytes an int, seconds a float
            return None if value == -1 else cast(_L, value)
    env = os.environ.get(env_name, "").strip()
    return parse(env) if env else default()


def max_bytes() -> int | None:
    """The memory limit in force (None: unlimited)."""
    return _in_force(0, ENV_BYTES, lambda env: parse_size(env, ENV_BYTES), _default_bytes)


def _env_seconds(env: str) -> float | None:
    if env.lower() in _UNLIMITED:
        return None
    try:
        v = float(env)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and v > 0):
        raise ConfigError(
            f"{ENV_SECONDS} must be a positive number of seconds or 'unlimited' (got {env!r})"
        )
    return v


def max_seconds() -> float | None:
    """The time limit in force (None: unlimited)."""
    return _in_force(1, ENV_SECONDS, _env_seconds, lambda: DEFAULT_MAX_SECONDS)


@contextlib.contextmanager
def limits(max_bytes: int | str | None = None, max_seconds: float | None = None) -> Iterator[None]:
    """Limits for the work inside the block (None: keep the one in force; ``"unlimited"``: none).
    The CLI's ``--max-memory SIZE`` runs its command inside ``limits(max_bytes=SIZE)``."""
    b = max_bytes
    if isinstance(b, str):
        b = parse_size(b, "--max-memory")
        b = -1 if b is None else b
    elif b is not None and (isinstance(b, bool) or not isinstance(b, int) or b < 1):
        raise ConfigError(
            f"max_bytes must be a positive integer, a size string or None (got {max_bytes!r})"
        )
    s = max_seconds
    if isinstance(s, str) and s.strip().lower() in _UNLIMITED:
        s = -1
    elif s is not None and (
        isinstance(s, bool) or not isinstance(s, (int, float)) or not (math.isfinite(s) and s > 0)
    ):
        raise ConfigError(f"max_seconds must be a positive number or None (got {max_seconds!r})")
    _override.append((b, s))
    try:
        yield
    finally:
        _override.pop()


_option_stack: list[bool] = []  # stack of memory_option() contexts


@contextlib.contextmanager
def memory_option(present: bool) -> Iterator[None]:
    """Whether the command running inside the block has a ``--max-memory`` option: a refusal
    advises it only then (the CLI enters this around every command)."""
    _option_stack.append(bool(present))
    try:
        yield
    finally:
        _option_stack.pop()


def _how_to_raise_memory() -> str:
    if _option_stack and not _option_stack[-1]:
        return (
            f"use smaller sizes, or raise the limit with {ENV_BYTES}=SIZE in the environment "
            f"(e.g. {ENV_BYTES}=32G, or 'unlimited')"
        )
    return (
        f"use smaller sizes, or raise the limit with {ENV_BYTES}=SIZE in the environment or "
        f"--max-memory SIZE on the command line (e.g. 32G, or 'unlimited')"
    )


def require(
    bytes: int = 0,
    seconds: float | None = None,
    what: str = "this work",
    limit: int | None = None,
    seconds_limit: float | None = None,
) -> None:
    """Raise :class:`ResourceLimitError` unless ``bytes`` (and ``seconds``) fit the limits.

    ``limit``/``seconds_limit`` override the limits in force for this call only."""
    need = int(bytes)
    lim = max_bytes() if limit is None else int(limit)
    if lim is not None and need > lim:
        src = (
            "the limit given"
            if limit is not None
            else "--max-memory"
            if any(b is not None for b, _ in _override)
            else ENV_BYTES
            if os.environ.get(ENV_BYTES, "").strip()
            else f"default: a quarter of this machine's {format_bytes(machine_memory())}"
        )
        raise ResourceLimitError(
            f"{what} needs about {format_bytes(need)} of memory, more than the limit of "
            f"{format_bytes(lim)} ({src}); {_how_to_raise_memory()}",
            needed=need,
            limit=lim,
            kind="memory",
            what=what,
        )
    if seconds is None:
        return
    slim = max_seconds() if seconds_limit is None else float(seconds_limit)
    if slim is not None and float(seconds) > slim:
        raise ResourceLimitError(
            f"{what} would take at least {format_seconds(seconds)} (estimated), more than the "
            f"limit of {format_seconds(slim)}; use smaller sizes, or raise the limit with "
            f"{ENV_SECONDS}=SECONDS in the environment (or 'unlimited')",
            needed=float(seconds),
            limit=slim,
            kind="time",
            what=what,
        )


# ---------------------------------------------------------------------------------- estimates
def array_bytes(*shape, itemsize: int = 8) -> int:
    """Bytes of a dense array of this shape (exact integer arithmetic: no overflow)."""
    n = 1
    for s in shape:
        n *= max(0, int(s))
    return n * int(itemsize)


def _mlp_params(d_in: int, hidden, d_out: int, bias: bool) -> int:
    dims = [int(d_in), *map(int, hidden), int(d_out)]
    return sum(a * b + (b if bias else 0) for a, b in zip(dims, dims[1:]))


def model_param_count(cfg) -> int:
    """Parameters of ``Transformer(cfg)``, computed from the config (nothing is allocated)."""
    E = int(cfg.width)
    d_embed_in = int(cfg.d_in) + (int(cfg.seq_len) if cfg.positions == "onehot" else 0)
    n = _mlp_params(d_embed_in, cfg.embed_hidden, E, cfg.embed_bias)
    n += int(cfg.seq_len) * E if cfg.positions == "learned" else 0
    n += E if cfg.readout == "cls" else 0
    # one pre-norm: LayerNorm has a gain and a bias, RMSNorm a gain only
    norm = E if getattr(cfg, "rmsnorm", False) else 2 * E if cfg.layernorm else 0
    for s in cfg.layers:
        h, d, c, g = (
            int(s.heads),
            int(s.head_dim),
            int(s.value_dim or s.head_dim),
            int(s.kv_groups or s.heads),
        )
        n += E * (h * d + g * d + g * c) + h * c * E
        n += (h * d + g * d + g * c + E) if cfg.bias else 0
        n += norm
        if s.ffn_hidden:
            if cfg.ffn_kind in ("swiglu", "bilinear"):
                w = int(s.ffn_hidden[0])
                n += 3 * E * w + ((2 * w + E) if cfg.ffn_bias else 0)
            else:
                n += _mlp_params(E, s.ffn_hidden, E, cfg.ffn_bias)
            n += norm
    n += norm if getattr(cfg, "final_norm", False) else 0
    n += _mlp_params(E, cfg.head_hidden, cfg.d_out, cfg.head_bias)
    if getattr(cfg, "tie_embeddings", False):  # the read-out matrix is the embedding's
        n -= E * int(cfg.d_out)
    return n


def _itemsize(cfg) -> int:
    return 4 if getattr(cfg, "dtype", "float64") == "float32" else 8


def model_bytes(cfg) -> int:
    """Bytes of the parameters of ``Transformer(cfg)``."""
    return model_param_count(cfg) * _itemsize(cfg)


def forward_bytes(cfg, batch: int, T: int, attention_weights: bool = False) -> int:
    """Lower bound of the activation memory of one forward pass on ``(batch, T, d_in)``: twice
    the largest activation (a layer's input and output are alive together), plus the attention
    probabilities when they are returned."""
    B, T, E = int(batch), int(T), int(cfg.width)
    Tc = T + (1 if cfg.readout == "cls" else 0)
    terms = [B * T * int(cfg.d_in), B * Tc * E]
    if cfg.positions == "onehot":
        terms.append(B * T * (int(cfg.d_in) + T))
    terms += [B * T * int(w) for w in cfg.embed_hidden]
    att = 0
    for s in cfg.layers:
        h, d, c = int(s.heads), int(s.head_dim), int(s.value_dim or s.head_dim)
        terms.append(B * Tc * h * max(d, c))
        terms += [B * Tc * int(w) for w in s.ffn_hidden]
        if attention_weights:
            att += B * h * Tc * Tc
    Tout = 1 if cfg.readout == "cls" else T
    terms += [B * Tout * int(w) for w in (*cfg.head_hidden, cfg.d_out)]
    return (2 * max(terms) + att) * _itemsize(cfg)


def _task_shape(task) -> tuple[int, int]:
    return int(getattr(task, "T", 1)), int(getattr(task, "d", 1))


def errors_bytes(model, task, n: int, batch: int = 4096) -> int:
    """``measure.errors`` on ``n`` sequences: the float64 input copy, one batch's forward pass and
    the ``n`` errors."""
    T, d = _task_shape(task)
    b = array_bytes(n, T, d) + array_bytes(n)
    cfg = getattr(model, "cfg", None)
    if cfg is not None and n > 0:
        b += forward_bytes(cfg, min(int(n), int(batch)), T)
    return b


def sup_error_bytes(model, task, budget: int, batch: int = 4096) -> int:
    """``measure.sup_error`` with this budget: the ``budget`` random sequences drawn at once (and
    their float64 copy in ``errors``), plus one batch's forward pass."""
    T, d = _task_shape(task)
    return array_bytes(budget, T, d) + errors_bytes(model, task, budget, batch)


def require_errors(model, task, n: int, batch: int = 4096, what: str | None = None) -> None:
    """Refuse (:class:`~approxtheory.errors.ResourceError`) before allocating when measuring the
    error of ``n`` sequences in batches of ``batch`` would exceed the memory limit.
    """
    require(
        bytes=errors_bytes(model, task, n, batch),
        what=what or f"measuring the error of {int(n)} sequences (T={_task_shape(task)[0]})",
    )


def require_sup_error(model, task, budget: int, batch: int = 4096, what: str | None = None) -> None:
    """Refuse (:class:`~approxtheory.errors.ResourceError`) before allocating when the sup-error
    search with ``budget`` evaluations in batches of ``batch`` would exceed the memory limit.
    """
    require(
        bytes=sup_error_bytes(model, task, budget, batch),
        what=what
        or f"the error search with budget {int(budget)} "
        f"(T={_task_shape(task)[0]}, d={_task_shape(task)[1]})",
    )


def require_model(cfg, what: str = "the model", extra_bytes: int = 0) -> None:
    """Refuse a ``Transformer(cfg)`` whose parameters (plus ``extra_bytes``) do not fit."""
    require(bytes=model_bytes(cfg) + int(extra_bytes), what=what)


_ALLOCATOR_TUNED = False


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to serve a training step's tensors from memory it keeps: no
    ``mmap``/``munmap`` and page faults each step for the ~0.5 MB activations (measured 1.2-1.3x
    fewer CPU-seconds per step at T = 16-64 on the head-count cell). Process-wide, once; freed
    memory up to 256 MB stays with the process. False where the C library is not glibc."""
    global _ALLOCATOR_TUNED
    if _ALLOCATOR_TUNED:
        return True
    try:
        import ctypes
        import ctypes.util
        import sys

        if not sys.platform.startswith("linux"):
            return False
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = getattr(libc, "mallopt", None)
        if mallopt is None:
            return False
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 and mallopt(M_TRIM_THRESHOLD, 256 << 20) == 1
    except (OSError, AttributeError):
        return False
    _ALLOCATOR_TUNED = ok
    return ok


# ----------------------------------------------------------------------------- threads

#: the environment variable that sets the torch thread count of every computation
THREADS_ENV = "APPROXTHEORY_THREADS"
#: the default torch thread count: one. Measured (``approxtheory bench threads``): the
#: project's workloads are small tensors, where more threads add synchronisation, not speed; on
#: a machine with other work running they fight it (``construct hc_k1 --gate -1`` 51.0 s wall /
#: 16.9 s CPU with torch's default against 26.5 s / 6.5 s with one thread, load 6-8), and idle
#: the wall time is the same with 2.6x less CPU.
DEFAULT_THREADS = 1
_THREADS: list[int] = []  # set_threads's count, when one is set
_P = ParamSpec("_P")
_R = TypeVar("_R")


def max_threads() -> int:
    """The largest thread count accepted: 256, or four per core where that is more."""
    return max(256, 4 * (os.cpu_count() or 1))


def check_threads(n, what: str = "threads") -> int:
    """``n`` when it is a whole number from 1 to :func:`max_threads`, else a ConfigError."""
    top = max_threads()
    return check_int(what, n, 1, top, must=f"a whole number from 1 to {top}", numpy=False)


def threads() -> int:
    """The torch thread count of the package's computations, by precedence: the count given to
    :func:`set_threads` (the CLI's ``--threads N`` sets it), the environment variable
    ``APPROXTHEORY_THREADS``, :data:`DEFAULT_THREADS` (1). A malformed environment value is a
    ConfigError (the CLI: one line, exit 2)."""
    if _THREADS:
        return _THREADS[-1]
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return DEFAULT_THREADS
    try:
        n = int(text, 10)
    except ValueError:
        raise ConfigError(
            f"{THREADS_ENV} must be a whole number from 1 to {max_threads()} (got {text[:40]!r})"
        ) from None
    return check_threads(n, THREADS_ENV)


def set_threads(n: int | None) -> int:
    """Set the package's torch thread count for this process (``None``: back to the
    environment variable or the default) and apply it to torch; the count now in force."""
    if n is not None:
        check_threads(n)
    _THREADS.clear()
    if n is not None:
        _THREADS.append(n)
    count = threads()
    import sys

    if "torch" in sys.modules:  # not imported yet: the entry points apply it when they compute
        sys.modules["torch"].set_num_threads(count)
    return count


@contextlib.contextmanager
def using_threads(n: int | None = None) -> Iterator[int]:
    """Compute with ``n`` torch threads (default :func:`threads`) inside; torch's count before
    is restored after."""
    import torch

    count = threads() if n is None else check_threads(n)
    old = torch.get_num_threads()
    if old != count:
        torch.set_num_threads(count)
    try:
        yield count
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


@contextlib.contextmanager
def pinned_threads(n: int) -> Iterator[int]:
    """Inside, the package's thread count is ``n`` whatever :func:`set_threads` or the
    environment say (``verify`` and experiment cells pin 1: their records must not depend on
    the thread count), applied to torch; both are restored after."""
    import torch

    check_threads(n)
    old = torch.get_num_threads()
    _THREADS.append(n)
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        _THREADS.pop()
        torch.set_num_threads(old)


def with_threads(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator: ``fn`` computes under :func:`using_threads` (the package's thread policy)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with using_threads():
            return fn(*args, **kwargs)

    return wrapper
