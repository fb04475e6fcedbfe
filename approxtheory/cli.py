"""The ``approxtheory`` command line.

Exit codes and the error boundary (:func:`main`), the same for every command:

* ``0`` success; ``1`` a command's own failure verdict (``docs --check`` found a stale page,
  ``verify`` had a crashed check or ``--fail-on refuted`` matched);
* ``2`` the user's input or environment is at fault, reported as exactly one line on stderr,
  ``approxtheory: error: ...``, never a traceback: bad arguments (argparse and the typed
  :class:`~approxtheory.errors.ApproxTheoryError`), work refused before allocating
  (:class:`~approxtheory.errors.ResourceLimitError`; raise the limit with ``--max-memory SIZE`` or
  ``APPROXTHEORY_MAX_BYTES``), filesystem errors (``OSError``: permission denied, not a
  directory, disk full, ...) and running out of memory (``MemoryError``, torch's allocator
  failures);
* ``2`` also for an environment that cannot run the command, reported the same way: standard
  output closed (``>&-``; checked before the command runs) or failing (``> /dev/full``), output
  that the stream's encoding cannot represent (``PYTHONIOENCODING=ascii`` and a claim statement
  with ``ĉ``), ``MPLBACKEND`` naming no matplotlib backend, an ``APPROXTHEORY_MAX_BYTES`` or
  ``APPROXTHEORY_MAX_SECONDS`` that is not a valid limit (checked before the command runs);
* ``141`` (128 + SIGPIPE, as a shell reports a process killed by it) when the reader of standard
  output went away (``approxtheory claims list | head``): quiet, no message, no traceback;
* ``1`` an unexpected exception, i.e. a bug in approxtheory: one line,
  ``approxtheory: internal error: TYPE: MESSAGE (this is a bug; please report it ...)``; with
  ``APPROXTHEORY_DEBUG=1`` in the environment the full traceback is printed as well (and
  re-raised, so that a debugger can catch it);
* ``130`` interrupted (Ctrl-C).

Arguments are range-checked when parsed (see :mod:`approxtheory._cliargs`). The commands
themselves (their arguments, handlers and output) are in :mod:`approxtheory.commands`.
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import re
import sys
from collections.abc import Sequence

from .commands import register_all
from .commands._parser import Parser as _Parser
from .commands._parser import UsageError as _UsageError
from .errors import ApproxTheoryError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The ``approxtheory`` argument parser with every subcommand."""
    p = _Parser(
        prog="approxtheory",
        description="Approximation theory of transformers: claims, constructions, checks.",
    )
    from . import __version__

    p.add_argument("--version", action="version", version=f"approxtheory {__version__}")
    from ._cliargs import THREADS_HELP, threads

    p.add_argument(
        "--threads",
        dest="policy_threads",
        type=threads,
        metavar="N",
        help=f"torch threads of every computation ({THREADS_HELP}; default: the environment "
        "variable APPROXTHEORY_THREADS, else 1, measured fastest here; `verify` and experiment "
        "cells always use 1). Also accepted after a computing command: construct --threads N",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    register_all(sub)
    return p


def _one_line(text) -> str:
    # every line boundary of str.splitlines (\r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029 too)
    return (
        re.sub(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*", " ", str(text).strip())
        or "(no message)"
    )


def _os_error(e: OSError) -> str:
    what = e.strerror or _one_line(e) or type(e).__name__
    files = [f for f in (e.filename, getattr(e, "filename2", None)) if f]
    return _one_line(f"{what}: {' -> '.join(map(str, files))}" if files else what)


def _out_of_memory(e: BaseException) -> bool:
    """torch reports failed allocations as RuntimeError (CPU) or torch.OutOfMemoryError (GPU)."""
    if type(e).__name__ == "OutOfMemoryError":
        return True
    if isinstance(e, TypeError) and "Overflow when unpacking long" in str(e):
        return True  # a tensor size beyond int64 (--max-memory unlimited)
    return isinstance(e, RuntimeError) and (
        "can't allocate memory" in str(e)
        or "Storage size calculation overflowed" in str(e)
        or "out of memory" in str(e).lower()
    )


def _run(parser, argv) -> int:
    args, extra = parser.parse_known_args(argv)
    if extra:
        # NAME=VALUE pairs may follow options (`claims eval ID --expr X T=64`)
        if getattr(args, "values", None) is not None and all(
            "=" in e and not e.startswith("-") for e in extra
        ):
            args.values = list(args.values) + extra
        else:
            raise _UsageError(
                f"unrecognized arguments: {' '.join(extra)} (see `approxtheory --help`)"
            )
    if not getattr(args, "func", None):
        # a command group without its action: one line, like every other usage error
        cmd = getattr(args, "command", None)
        where = f"approxtheory {cmd}" if cmd else "approxtheory"
        raise _UsageError(
            f"`{where}` needs {'an action' if cmd else 'a command'} (see `{where} --help`)"
        )
    from .resources import limits, max_bytes, max_seconds, memory_option, set_threads, threads

    # the limits of the environment, checked before any work: a bad APPROXTHEORY_MAX_BYTES is the
    # environment's fault, whether or not this command would have read it
    max_bytes()
    max_seconds()
    threads()  # likewise a bad APPROXTHEORY_THREADS
    # the one thread policy (approxtheory.resources.threads), applied to torch for the command;
    # a command's own --threads (construct, bench, schedule) is the same setting
    own = getattr(args, "threads", None)
    set_threads(args.policy_threads or (own if isinstance(own, int) else None))
    with limits(max_bytes=getattr(args, "max_memory", None)):
        with memory_option(hasattr(args, "max_memory")):  # advised only where it exists
            rc = int(args.func(args) or 0)
    if sys.stdout is not None:
        sys.stdout.flush()  # a full disk or a closed pipe shows up here, inside the boundary
    return rc


class _StdoutError(Exception):
    """Standard output cannot be written (closed, failing, or its encoding too narrow)."""

    def __init__(self, message: str, silence: bool = False):
        super().__init__(message)
        self.silence = silence  # point fd 1 at /dev/null before exiting


def _check_stdout() -> None:
    """Refuse to run with standard output closed (``approxtheory claims list >&-``): Python then
    sets ``sys.stdout`` to None and every print would vanish, exit 0 with nothing shown."""
    out = sys.stdout
    closed = out is None
    fileno = getattr(out, "fileno", None)
    if out is not None and out is sys.__stdout__ and fileno is not None:
        try:
            os.fstat(fileno())
        except OSError as e:
            closed = e.errno == errno.EBADF
        except (ValueError, AttributeError, io.UnsupportedOperation):
            pass
    if closed:
        raise _StdoutError(
            "standard output is closed, so nothing could be shown; run with it open "
            "(redirect it to /dev/null to discard the output)"
        )


class _GuardedStdout:
    """``sys.stdout`` for the duration of :func:`main`: a write that fails because of the stream
    (a full disk, a dead terminal, an encoding that cannot represent the text) raises
    :class:`_StdoutError` naming standard output; a broken pipe stays a BrokenPipeError.
    Everything else is the stream's own."""

    def __init__(self, stream):
        self._stream = stream

    def _failed(self, e: Exception) -> _StdoutError:
        if isinstance(e, UnicodeEncodeError):
            enc = getattr(self._stream, "encoding", None) or e.encoding
            bad = e.object[e.start : e.end] if isinstance(e.object, str) else ""
            return _StdoutError(
                f"cannot write the output: standard output's encoding {enc!r} cannot represent "
                f"{ascii(bad[:10])}; set PYTHONIOENCODING=utf-8 (or a UTF-8 locale, e.g. "
                f"LC_ALL=C.UTF-8)"
            )
        why = _os_error(e) if isinstance(e, OSError) else _one_line(e)
        return _StdoutError(f"cannot write to standard output: {why}", silence=True)

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as e:
            raise self._failed(e) from None

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _silence_stdout(out) -> None:
    """Point standard output's file descriptor at /dev/null, so that the interpreter's own flush
    at exit does not print a second error (``Exception ignored ... BrokenPipeError``). A stream
    without a descriptor (a test's capture) is left alone."""
    try:
        if out is None:
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def _environment_error(e: BaseException) -> str | None:
    """The one-line message for an exception that the environment caused, or None (a bug)."""
    backend = os.environ.get("MPLBACKEND")
    if backend is not None and isinstance(e, ValueError) and "backend" in str(e):
        tb, in_mpl = e.__traceback__, False
        while tb is not None:
            in_mpl = in_mpl or "matplotlib" in tb.tb_frame.f_code.co_filename
            tb = tb.tb_next
        if in_mpl:
            return (
                f"MPLBACKEND={ascii(backend[:100])} is not a matplotlib backend; unset it or set "
                f"MPLBACKEND=Agg (approxtheory draws its figures with Agg)"
            )
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring for the error boundary)."""

    def fail(msg: str) -> int:
        if sys.stderr is not None:  # print(file=None) would write to stdout
            try:
                print(f"approxtheory: error: {msg}", file=sys.stderr)
            except (OSError, ValueError):  # stderr is gone as well: the exit code says it
                pass
        return 2

    stdout = sys.stdout
    try:
        _check_stdout()
        sys.stdout = _GuardedStdout(stdout)
        try:
            return _run(build_parser(), argv)
        finally:
            if isinstance(sys.stdout, _GuardedStdout):
                sys.stdout = stdout
    except (_UsageError, ApproxTheoryError) as e:  # incl. ResourceLimitError
        return fail(_one_line(e))
    except _StdoutError as e:
        if e.silence:
            _silence_stdout(stdout)
        return fail(_one_line(e))
    except BrokenPipeError:
        # stdout went away (`approxtheory claims list | head`): not an error worth a message
        _silence_stdout(stdout)
        return 141
    except OSError as e:
        return fail(_os_error(e))
    except MemoryError:
        return fail(
            "out of memory; use smaller sizes (the estimates that refuse oversized work "
            "before allocating are lower bounds, see --max-memory)"
        )
    except KeyboardInterrupt:
        print("approxtheory: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if _out_of_memory(e):
            return fail(f"out of memory ({_one_line(e)[:200]}); use smaller sizes")
        env = _environment_error(e)
        if env is not None:
            return fail(_one_line(env))
        debug = os.environ.get("APPROXTHEORY_DEBUG", "").strip() not in ("", "0")
        print(
            f"approxtheory: internal error: {type(e).__name__}: {_one_line(e)[:500]} (this is "
            f"a bug; please report it"
            + ("" if debug else ", with the traceback that APPROXTHEORY_DEBUG=1 prints")
            + ")",
            file=sys.stderr,
        )
        if debug:
            raise
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
