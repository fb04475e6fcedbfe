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

Arguments are range-checked when parsed (see :mod:`approxtheory._cliargs`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import Sequence

import sympy as sp

from .errors import ApproxTheoryError, MissingSymbolError

__all__ = ["main", "build_parser"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse API
        # "argument --seed: must be ..." (from a _cliargs type) -> "--seed must be ..."
        m = re.fullmatch(r"argument (-[-\w]+)(?:/-[-\w]+)*: ((?:must|no such|is|cannot) .*)",
                         message, flags=re.S)
        if m:
            message = f"{m.group(1)} {m.group(2)}"
        raise _UsageError(f"{message} (see `{self.prog} --help`)")


def _parse_assignments(items: Sequence[str]) -> dict[str, str]:
    values = {}
    for it in items:
        if "=" not in it:
            raise ApproxTheoryError(f"expected NAME=VALUE, got {it!r} (e.g. T=64)")
        k, v = it.split("=", 1)
        k = k.strip()
        if not k:
            raise ApproxTheoryError(f"expected NAME=VALUE, got {it!r} (e.g. T=64)")
        if k in values:
            raise ApproxTheoryError(f"{k} given twice")
        values[k] = v
    return values


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=str))


# ------------------------------------------------------------------------------------- claims
def _cmd_claims_list(args) -> int:
    from .catalogue import claims
    cs = claims(paper=args.paper, kind=args.kind, provenance=args.provenance)
    if args.json:
        _print_json([c.to_dict() for c in cs])
        return 0
    width = max((len(c.id) for c in cs), default=2)
    for c in cs:
        stmt = c.statement if len(c.statement) <= 90 else c.statement[:87] + "..."
        print(f"{c.id:<{width}}  {c.paper}  {c.kind:<12} {c.provenance:<13} {stmt}")
    print(f"{len(cs)} claims", file=sys.stderr)
    return 0


def _cmd_claims_show(args) -> int:
    from .catalogue import claim
    c = claim(args.id)
    if args.json:
        _print_json(c.to_dict())
        return 0
    if args.latex:
        print(c.latex())
        return 0
    d = c.to_dict()
    print(f"{c.id}: {c.statement}")
    print(f"  paper:      arXiv {c.paper} ({c.paper_name}), {c.section}")
    print(f"  kind:       {c.kind}")
    print(f"  provenance: {c.provenance}")
    for name, e in d["expressions"].items():
        tag = " (primary)" if name == d["primary"] and len(d["expressions"]) > 1 else ""
        print(f"  {name}{tag} = {e}")
    for n, info in d["symbols"].items():
        print(f"  symbol {n}: {info['description']} [{', '.join(info['assumptions'])}]")
    for r in d["regime"]:
        print(f"  regime:     {r}")
    if d["vacuous_if"]:
        print(f"  vacuous if: {d['vacuous_if']}")
    if d["rate_exponent_in_inverse_epsilon"]:
        print(f"  rate:       N ~ (1/epsilon)^({d['rate_exponent_in_inverse_epsilon']})")
    if d["depends_on"]:
        print(f"  depends on: {', '.join(d['depends_on'])}")
    if d["notes"]:
        print(f"  notes:      {d['notes']}")
    return 0


def _cmd_claims_eval(args) -> int:
    from .catalogue import claim
    c = claim(args.id)
    values = _parse_assignments(args.values)
    name = args.expr or c.primary_name
    value = c.evaluate(name, **values)
    try:
        fval = float(sp.N(value, 17))
    except (TypeError, OverflowError):
        fval = None
    if fval is not None and not math.isfinite(fval):
        fval = None          # beyond float64 (JSON has no Infinity): the exact value is in "value"
    try:
        vac = c.is_vacuous(**values)
    except MissingSymbolError:
        vac = None  # the vacuity condition needs symbols the evaluated expression does not
    if args.json:
        _print_json({"id": c.id, "expression": name, "values": values, "value": sp.sstr(value),
                     "float": fval, "vacuous": vac})
        return 0
    print(sp.sstr(value))
    if vac:
        print(f"note: {c.id} is vacuous here ({sp.sstr(c.vacuous_if)})", file=sys.stderr)
    return 0


def _cmd_docs(args) -> int:
    from pathlib import Path
    from .docs import render_claims_markdown, write_claims_page
    path = Path(args.out)
    if not args.check:
        from ._cliargs import check, out_file
        check(out_file, "--out", args.out)
    if args.check:
        if path.exists() and not (path.is_file() or path.is_dir()):   # a FIFO blocks the read
            raise ApproxTheoryError(f"--out must be a regular file (got {args.out!r})")
        fresh = render_claims_markdown()
        if not path.exists() or path.read_text(encoding="utf-8") != fresh:
            print(f"approxtheory: {path} is stale; run `approxtheory docs`", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    write_claims_page(path)
    print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="approxtheory",
                description="Approximation theory of transformers: claims, constructions, checks.")
    from . import __version__
    p.add_argument("--version", action="version", version=f"approxtheory {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    pc = sub.add_parser("claims", help="query the claim catalogue")
    csub = pc.add_subparsers(dest="claims_command", metavar="ACTION", parser_class=_Parser)
    pl = csub.add_parser("list", help="list claims")
    pl.add_argument("--paper", help="arXiv id (e.g. 2510.06662) or short name (e.g. headcount)")
    pl.add_argument("--kind", help="upper, lower, exact, ratio, rate, lemma, theorem, ...")
    pl.add_argument("--provenance", help="stated, reconstructed, derived or conjecture")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    pl.set_defaults(func=_cmd_claims_list)
    ps = csub.add_parser("show", help="show one claim")
    ps.add_argument("id")
    ps.add_argument("--latex", action="store_true", help="print the formulas as LaTeX")
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(func=_cmd_claims_show)
    pe = csub.add_parser("eval", help="evaluate a claim's formula, e.g. "
                                      "`claims eval HC-T2b T=64 s=1 n=2 D=2`")
    pe.add_argument("id")
    pe.add_argument("values", nargs="*", metavar="NAME=VALUE")
    pe.add_argument("--expr", help="which expression (default: the primary one)")
    pe.add_argument("--json", action="store_true")
    pe.set_defaults(func=_cmd_claims_eval)

    pd = sub.add_parser("docs", help="regenerate docs/claims.md from the catalogue")
    pd.add_argument("--out", default="docs/claims.md")
    pd.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    pd.set_defaults(func=_cmd_docs)

    for register in _extra_commands():
        register(sub)
    return p


def _extra_commands():
    """Commands contributed by other modules (constructions, benchmarks)."""
    from .bench import register as reg_bench
    from .constructions.cli import register as reg_construct
    from .experiment import register as reg_experiment
    from .identifiability import register as reg_ident
    from .verify import register as reg_verify
    return [reg_verify, reg_construct, reg_experiment, reg_ident, reg_bench]


def _one_line(text) -> str:
    # every line boundary of str.splitlines (\r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029 too)
    return re.sub(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*", " ",
                  str(text).strip()) or "(no message)"


def _os_error(e: OSError) -> str:
    what = e.strerror or _one_line(e) or type(e).__name__
    files = [f for f in (e.filename, getattr(e, "filename2", None)) if f]
    return _one_line(f"{what}: {' -> '.join(map(str, files))}" if files else what)


def _out_of_memory(e: BaseException) -> bool:
    """torch reports failed allocations as RuntimeError (CPU) or torch.OutOfMemoryError (GPU)."""
    if type(e).__name__ == "OutOfMemoryError":
        return True
    if isinstance(e, TypeError) and "Overflow when unpacking long" in str(e):
        return True     # a tensor size beyond int64 (--max-memory unlimited)
    return isinstance(e, RuntimeError) and ("can't allocate memory" in str(e)
                                            or "Storage size calculation overflowed" in str(e)
                                            or "out of memory" in str(e).lower())


def _run(parser, argv) -> int:
    args, extra = parser.parse_known_args(argv)
    if extra:
        # NAME=VALUE pairs may follow options (`claims eval ID --expr X T=64`)
        if getattr(args, "values", None) is not None and all("=" in e and not
                                                             e.startswith("-") for e in extra):
            args.values = list(args.values) + extra
        else:
            raise _UsageError(f"unrecognized arguments: {' '.join(extra)} "
                              "(see `approxtheory --help`)")
    if not getattr(args, "func", None):
        # a command group without its action: one line, like every other usage error
        cmd = getattr(args, "command", None)
        where = f"approxtheory {cmd}" if cmd else "approxtheory"
        raise _UsageError(f"`{where}` needs {'an action' if cmd else 'a command'} "
                          f"(see `{where} --help`)")
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
    except (_UsageError, ApproxTheoryError) as e:    # incl. ResourceLimitError
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
        return fail("out of memory; use smaller sizes (the estimates that refuse oversized work "
                    "before allocating are lower bounds, see --max-memory)")
    except KeyboardInterrupt:
        print("approxtheory: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if _out_of_memory(e):
            return fail(f"out of memory ({_one_line(e)[:200]}); use smaller sizes")
        debug = os.environ.get("APPROXTHEORY_DEBUG", "").strip() not in ("", "0")
        print(f"approxtheory: internal error: {type(e).__name__}: {_one_line(e)[:500]} (this is "
              f"a bug; please report it" + ("" if debug else ", with the traceback that "
                                                              "APPROXTHEORY_DEBUG=1 prints") + ")",
              file=sys.stderr)
        if debug:
            raise
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
