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
    from .resources import limits

    with limits(max_bytes=getattr(args, "max_memory", None)):
        return int(args.func(args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring for the error boundary)."""

    def fail(msg: str) -> int:
        print(f"approxtheory: error: {msg}", file=sys.stderr)
        return 2

    try:
        return _run(build_parser(), argv)
    except (_UsageError, ApproxTheoryError) as e:  # incl. ResourceLimitError
        return fail(_one_line(e))
    except BrokenPipeError:
        # stdout went away (`approxtheory claims list | head`): not an error worth a message
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
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
