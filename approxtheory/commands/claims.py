"""``approxtheory claims list|show|eval``: query the claim catalogue."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence

import sympy as sp

from ..errors import ApproxTheoryError, MissingSymbolError
from ._parser import Parser

__all__ = ["register"]


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


def _cmd_claims_list(args) -> int:
    from ..catalogue import claims

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
    from ..catalogue import claim

    c = claim(args.id)
    if args.trail:
        from ..trail import trail  # imports the checks and experiments: only when asked

        t = trail(c.id)
        if args.json:
            _print_json(t.to_dict())
        else:
            print("\n".join(t.lines()))
        return 0
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
    from ..catalogue import claim

    c = claim(args.id)
    values = _parse_assignments(args.values)
    name = args.expr or c.primary_name
    value = c.evaluate(name, **values)
    try:
        fval = float(sp.N(value, 17))
    except (TypeError, OverflowError):
        fval = None
    if fval is not None and not math.isfinite(fval):
        fval = None  # beyond float64 (JSON has no Infinity): the exact value is in "value"
    try:
        vac = c.is_vacuous(**values)
    except MissingSymbolError:
        vac = None  # the vacuity condition needs symbols the evaluated expression does not
    if args.json:
        _print_json(
            {
                "id": c.id,
                "expression": name,
                "values": values,
                "value": sp.sstr(value),
                "float": fval,
                "vacuous": vac,
            }
        )
        return 0
    print(sp.sstr(value))
    if vac:
        print(f"note: {c.id} is vacuous here ({sp.sstr(c.vacuous_if)})", file=sys.stderr)
    return 0


def register(p) -> None:
    csub = p.add_subparsers(dest="claims_command", metavar="ACTION", parser_class=Parser)
    pl = csub.add_parser("list", help="list claims")
    pl.add_argument("--paper", help="arXiv id (e.g. 2510.06662) or short name (e.g. headcount)")
    pl.add_argument("--kind", help="upper, lower, exact, ratio, rate, lemma, theorem, ...")
    pl.add_argument("--provenance", help="stated, reconstructed, derived or conjecture")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    pl.set_defaults(func=_cmd_claims_list)
    ps = csub.add_parser("show", help="show one claim")
    ps.add_argument("id", help="a claim id of `approxtheory claims list`, e.g. HC-T2b")
    ps.add_argument("--latex", action="store_true", help="print the formulas as LaTeX")
    ps.add_argument("--json", action="store_true", help="machine-readable output")
    ps.add_argument(
        "--trail",
        action="store_true",
        help="where the claim lives: its catalogue entry, check, constructions, experiments "
        "and the CSVs and plots verify writes for it, with file paths (with --json: as JSON)",
    )
    ps.set_defaults(func=_cmd_claims_show)
    pe = csub.add_parser(
        "eval", help="evaluate a claim's formula, e.g. `claims eval HC-T2b T=64 s=1 n=2 D=2`"
    )
    pe.add_argument("id", help="a claim id of `approxtheory claims list`, e.g. HC-T2b")
    pe.add_argument(
        "values",
        nargs="*",
        metavar="NAME=VALUE",
        help="a value for each symbol of the formula, e.g. T=64 or beta=1/2 (numbers, pi, e, "
        "sqrt, log, exp, + - * / ^; never evaluated as code)",
    )
    pe.add_argument("--expr", help="which expression (default: the primary one)")
    pe.add_argument("--json", action="store_true", help="machine-readable output")
    pe.set_defaults(func=_cmd_claims_eval)
