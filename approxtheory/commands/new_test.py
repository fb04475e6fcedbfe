"""``approxtheory new-test CLAIM [--out PATH]``: write a runnable Hypothesis rate test for a claim.

The test builds the claim's construction (its knobs drawn by
:func:`approxtheory.strategies.construction_knobs`), measures its sup error with the ``measured``
fixture (cached on disk, :mod:`approxtheory.pytest_plugin`) over a grid of the swept knob, and
asserts the catalogue's rate with :func:`approxtheory.testing.assert_claim_rate`; the claim's
regime and the construction's requirements are assumptions of every drawn case. With
``--approxtheory-mutant NAME`` the test runs against a mutant the claim's check declares (a
perturbed weight, ...) and goes red.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import sys
from pathlib import Path

from ..errors import ApproxTheoryError, ConfigError, ResourceLimitError

__all__ = ["register", "render", "plan"]

#: decades the grid of the swept knob spans, from a decade beyond its default
DECADES = 4


def _ident(cid: str) -> str:
    return re.sub(r"\W+", "_", cid).strip("_")


def _constructions_of(cid: str) -> list:
    from ..constructions import REGISTRY

    return [r for r in REGISTRY.values() if r.claim == cid]


def _symbol(c, name: str) -> str | None:
    from ..errors import UnknownSymbolError

    try:
        return c.symbol(name).name
    except UnknownSymbolError:
        return None


def _grid(knob, at_zero: bool, points: int) -> list:
    """``points`` values of ``knob`` log-spaced over :data:`DECADES` decades from a decade
    beyond its default (upwards towards ∞, downwards towards 0), inside its range."""
    d = float(knob.default)
    exps = [
        (1 - DECADES * i / (points - 1)) if at_zero else (-1 + DECADES * i / (points - 1))
        for i in range(points)
    ]
    vals = [d * 10**e for e in exps]
    out: list
    if knob.type is int:
        out = sorted({max(1, round(v)) for v in vals})
    else:
        out = [float(f"{v:.4g}") for v in vals]
    return [v for v in out if knob.range_error(v) is None]


def _defaults(entry) -> dict:
    return {k: kn.default for k, kn in entry.knobs.items()}


def _values(c, knobs: dict, over: str) -> dict:
    """The claim's symbols set by the construction's knobs (the swept one aside)."""
    out = {}
    for k, v in knobs.items():
        s = _symbol(c, k)
        if s is not None and s != over and not isinstance(v, str):
            out[s] = v
    return out


def _choose_over(c, entry, over: str | None, name: str) -> tuple[str, str, float]:
    """The knob to sweep (a knob that is a symbol of the claim's expression ``name`` with a
    finite non-zero asymptotic exponent), the point it tends to, and that exponent."""
    free = {s.name for s in c.expr(name).free_symbols}
    knobs = entry.knobs
    if over is not None:
        if over not in knobs:
            raise ConfigError(
                f"--over {over!r} is not a knob of {entry.name}; its knobs are: "
                f"{', '.join(knobs) or 'none'}"
            )
        cands = [over]
    else:
        cands = sorted(
            (k for k in knobs if _symbol(c, k) in free and knobs[k].type in (int, float)),
            key=lambda k: (not knobs[k].log, list(knobs).index(k)),
        )
    why = []
    for k in cands:
        sym = _symbol(c, k)
        if sym is None or sym not in free:
            why.append(f"{k} is not a symbol of {c.id}'s {name}")
            continue
        knob = knobs[k]
        at = "0" if knob.high is not None else "oo"
        try:
            p = float(c.asymptotic_exponent(sym, name, at, **_values(c, _defaults(entry), sym)))
        except (ApproxTheoryError, TypeError, ValueError) as e:
            why.append(f"{k}: {e}")
            continue
        if math.isfinite(p) and p != 0:
            return k, at, p
        why.append(f"{k}: the asymptotic exponent is {p}")
    raise ConfigError(
        f"{c.id}: no knob of {entry.name} to measure a rate over"
        + (f" ({'; '.join(why)})" if why else f" (its knobs: {', '.join(knobs) or 'none'})")
    )


def _mutation(cid: str, entry) -> tuple[dict, str | None, str | None, str | None]:
    """The mutants the claim's check declares, and where its code applies them to a built
    construction: (mutants, module, name, kind ``call`` or ``item``); (mutants, None, None,
    None) when no such code is found (the test then cannot run them)."""
    import approxtheory.proofs_check as pc

    declared = dict(pc.MUTANTS.get(cid, {}))
    check = pc.CHECKS.get(cid)
    if not declared or check is None:
        return declared, None, None, None
    module = sys.modules[getattr(check, "source_fn", check).__module__]
    try:
        probe = entry.build(**_defaults(entry))
    except Exception:  # a construction that cannot be built at its defaults: no probe
        probe = None
    for name, obj in vars(module).items():
        if not ("mutat" in name.lower() or "mutant" in name.lower()):
            continue
        try:
            if isinstance(obj, dict) and set(declared) <= set(obj):
                fns, kind = [obj[m] for m in declared], "item"
            elif inspect.isfunction(obj) and len(inspect.signature(obj).parameters) == 1:
                if obj(None) is not None:
                    continue
                fns, kind = [obj(m) for m in declared], "call"
            else:
                continue
            if not all(callable(f) for f in fns):
                continue
            if probe is not None:
                for f in fns:  # applies to a fresh construction without an error
                    f(entry.build(**_defaults(entry)))
        except Exception:
            continue
        return declared, module.__name__, name, kind
    return declared, None, None, None


def _bound_of(c, entry) -> tuple[str, str]:
    """The claim's expression that the construction's ``claimed_bound`` evaluates (matched on
    its ``bound_expr``; the primary one when none matches) and the bound's kind."""
    import sympy as sp

    try:
        built = entry.build(**_defaults(entry))
    except ApproxTheoryError as e:
        raise ConfigError(f"{entry.name} cannot be built at its default knobs ({e})") from None
    if built.bound_kind == "exact":
        raise ConfigError(
            f"{c.id}: {entry.name} is exact ({built.bound_expr or 'zero error'}): its error has "
            f"no rate to test"
        )
    text = str(built.bound_expr or "").replace(" ", "")
    found = [
        (n, sp.sstr(e).replace(" ", ""))
        for n, e in c.expressions.items()
        if sp.sstr(e).replace(" ", "") and sp.sstr(e).replace(" ", "") in text
    ]
    name = max(found, key=lambda f: (f[1] == text, len(f[1])))[0] if found else c.primary_name
    assert name is not None
    return name, built.bound_kind


def plan(cid: str, construction: str | None = None, over: str | None = None) -> dict:
    """Everything the test needs, checked now: the claim, its construction, the swept knob,
    the point it tends to, the exponent, the grids, the knobs that set claim symbols, the
    mutants and where they are applied."""
    from ..catalogue import claim
    from ..resources import require
    from ..testing import PROFILES

    c = claim(cid)
    entries = _constructions_of(c.id)
    if not entries:
        from ..constructions import REGISTRY

        have = sorted({r.claim for r in REGISTRY.values()})
        raise ConfigError(
            f"{c.id} has no construction to measure, so no rate test can be written for it; "
            f"claims with one: {', '.join(have)}"
        )
    if construction is not None:
        match = [e for e in entries if e.name == construction]
        if not match:
            raise ConfigError(
                f"--construction {construction!r} does not realise {c.id}; its constructions: "
                f"{', '.join(e.name for e in entries)}"
            )
        entry = match[0]
    else:
        entry = entries[0]
    if not c.has_formula:
        raise ConfigError(f"{c.id} states no formula, so it has no rate to test")
    name, kind = _bound_of(c, entry)
    knob, at, p = _choose_over(c, entry, over, name)
    sym = _symbol(c, knob)
    assert sym is not None
    grids = {}
    for prof, spec in PROFILES.items():
        g = []
        for v in _grid(entry.knobs[knob], at == "0", spec["points"]):
            knobs = {**_defaults(entry), knob: v}
            if any(r.check(knobs) for r in entry.requires):
                continue
            if entry.estimate is not None:
                e = entry.estimate(**knobs)
                e = e if isinstance(e, dict) else {"bytes": e}
                try:
                    require(bytes=e.get("bytes", 0), seconds=e.get("seconds"), what="")
                except ResourceLimitError:
                    continue
            g.append(v)
        if len(g) < 4:
            raise ConfigError(
                f"{c.id}: fewer than 4 values of {knob} fit {entry.name}'s range, requirements "
                f"and the memory limit (got {g}); a rate test needs at least 4"
            )
        grids[prof] = g
    # the catalogue can evaluate the claim on the grid at the default knobs (tol needs it)
    values = _values(c, _defaults(entry), sym)
    for v in grids["quick"]:
        try:
            c.evaluate_float(name, **{**values, sym: v})
        except ApproxTheoryError as e:
            raise ConfigError(
                f"{c.id}: its {name} cannot be evaluated from {entry.name}'s knobs "
                f"at {sym}={v:g} ({e}); no rate test is written"
            ) from None
    mutants, mod, fn, how = _mutation(c.id, entry)
    return {
        "claim": c,
        "entry": entry,
        "knob": knob,
        "symbol": sym,
        "at": at,
        "exponent": p,
        "expr": name,
        "kind": kind,
        "grids": grids,
        "symbols": {k: _symbol(c, k) for k in entry.knobs if _symbol(c, k) not in (None, sym)},
        "mutants": mutants,
        "mutation": (mod, fn, how) if mod else None,
    }


def _wrap(text: str, width: int = 92, indent: str = "") -> str:
    import textwrap

    return "\n".join(
        textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent)
    )


def _q(text: str) -> str:
    """A double-quoted Python string literal (the style ruff formats to)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _str_lines(text: str, indent: str, width: int = 96) -> list[str]:
    """``text`` as implicitly concatenated literals, each line within ``width``."""
    import textwrap

    parts = textwrap.wrap(
        text, width=width - len(indent) - 3, drop_whitespace=False, break_long_words=False
    )
    return [indent + _q(part) for part in parts] or [indent + '""']


def _knob_source(key: str, knob) -> tuple[str, bool]:
    """The Hypothesis strategy that draws ``knob`` as
    :func:`approxtheory.strategies.construction_knobs` draws it (its declared range, on a log
    scale where it says so, shrinking to its default), as source; and whether it needs
    ``math``. Written out so that the test loads neither torch nor the constructions to draw."""
    import ast

    from ..strategies.knobs import _knob_bounds

    def literal(v) -> str:
        text = repr(v)
        try:
            if ast.literal_eval(text) != v:
                raise ValueError(text)
        except (ValueError, SyntaxError):
            raise ConfigError(
                f"knob {key}: its value {v!r} cannot be written into a test as a literal"
            ) from None
        return text

    if knob.choices:
        vals = [knob.default] + [c for c in knob.choices if c != knob.default]
        return f"st.sampled_from([{', '.join(literal(v) for v in vals)}])", False
    if knob.type is bool:
        return ("st.booleans()" if not knob.default else "st.sampled_from([True, False])"), False
    if knob.type not in (int, float):
        return f"st.just({literal(knob.default)})", False
    from hypothesis.errors import InvalidArgument

    try:
        b = _knob_bounds(key, knob)
    except InvalidArgument as e:
        raise ConfigError(f"{e}; no test can draw it") from None
    if b[0] == "int":
        _, lo, hi, log, default = b
        if lo > hi:
            raise ConfigError(f"knob {key}: its declared range holds no integer")
        t = min(max(default, lo), hi)
        if not log:
            return f"st.integers({lo - t}, {hi - t}).map(lambda u: {t} + u)", False
        return (
            f"st.floats({math.log(lo / t)!r}, {math.log(hi / t)!r}).map("
            f"lambda e: min(max(int(round({t} * math.exp(e))), {lo}), {hi}))",
            True,
        )
    _, lo, hi, log, t, inside = b
    lo_in, hi_in = inside(lo), inside(hi)  # the open ends moved inside, as the strategy does
    if log:
        a, z = math.log10(lo) - math.log10(t), math.log10(hi) - math.log10(t)
        return (
            f"st.floats({a!r}, {z!r}).map(lambda e: min(max({t!r} * 10.0**e, {lo_in!r}), "
            f"{hi_in!r}))",
            False,
        )
    return (
        f"st.floats({lo - t!r}, {hi - t!r}).map(lambda u: min(max({t!r} + u, {lo_in!r}), "
        f"{hi_in!r}))",
        False,
    )


def render(p: dict, out: str) -> str:
    """The source of the test for the plan ``p`` (written to ``out``); formatted as
    ``ruff format`` writes it: its docstring, its constants, its mutants, the test."""
    entry, knob = p["entry"], p["knob"]
    doc = _render_doc(p, out)
    drawn = {k: _knob_source(k, kn) for k, kn in entry.knobs.items() if k != knob}
    lines = _render_constants(p, doc, drawn)
    lines = _render_mutants(p, lines)
    return "\n".join(_render_test(p, lines))


def _towards(at: str) -> str:
    return "0" if at == "0" else "∞"


def _render_doc(p: dict, out: str) -> list[str]:
    """The generated test's module docstring, as lines."""
    c, entry = p["claim"], p["entry"]
    knob, sym, at = p["knob"], p["symbol"], p["at"]
    side = {
        "upper": "decay at least as fast (the whole 95% interval of the fitted exponent at or "
        "below it, plus the share of the bound's slowly varying factor over the grid)",
        "lower": "decay no faster (the whole 95% interval at or above it)",
    }.get(
        p["kind"],
        "follow it (the 95% interval, widened by the bound's own deviation over the grid, must "
        "contain it)",
    )
    towards = _towards(at)
    regime = "; ".join(cond.text() for cond in c.regime) or "none stated"
    reqs = "; ".join(r.message for r in entry.requires) or "none"
    mut = p["mutation"]
    names = list(p["mutants"])
    shown = out if len(out) <= 40 else "THIS_FILE"
    doc = [
        f'"""Rate test of {c.id}, written by `approxtheory new-test {c.id}`.',
        "",
        _wrap(f"{c.id} ({c.kind}, {c.provenance}): {c.statement}"),
        "",
        _wrap(
            f"Construction: {entry.name} ({entry.summary}); its knobs are drawn from the "
            f"ranges they declare, as approxtheory.strategies.construction_knobs draws them "
            f"(written out in KNOBS), {knob} is swept over GRID. Rate: "
            f"{p['expr']} ~ {sym}^{p['exponent']:g} as {sym} -> {towards} (read from the "
            f"catalogue when the test runs); the measured sup error must {side}."
        ),
        _wrap(
            f"Regime: {regime}. Requirements of the construction: {reqs}. Both are assumed "
            f"at every grid point of every drawn case."
        ),
        "",
        f"Run:  pytest {shown}",
        "      (measurements are cached on disk: a second run of the unchanged test measures",
        "      nothing)",
    ]
    if mut:
        doc.append(f"      pytest {shown} --approxtheory-mutant {names[-1]}")
        doc.append("      (runs it against a declared mutant: it goes red)")
    doc += [
        "Options: --approxtheory-budget N, --approxtheory-profile full, --approxtheory-cache DIR.",
        "",
        "The test imports no part of approxtheory: the `measured` fixture measures (torch and",
        "the construction load on a miss only) and reads the regime, the requirements and the",
        "claim's exponent from the catalogue once, then from the cache, keyed by the code.",
        '"""',
    ]
    return doc


def _render_constants(p: dict, doc: list[str], drawn: dict) -> list[str]:
    """``doc`` followed by the imports and the constants (grid, knobs, symbols)."""
    c, entry = p["claim"], p["entry"]
    knob, sym, at = p["knob"], p["symbol"], p["at"]
    towards = _towards(at)
    uses_math = any(m for _, m in drawn.values())
    lines = doc + [
        "",
        "from __future__ import annotations",
        "",
        *(["import math", ""] if uses_math else []),
        "import pytest",
        "from hypothesis import HealthCheck, Phase, assume, given, settings",
        "from hypothesis import strategies as st",
        "",
        f"CLAIM = {_q(c.id)}",
        f"CONSTRUCTION = {_q(entry.name)}",
        f"#: the knob swept for the rate, {c.id}'s symbol SYMBOL, towards {towards}",
        f"OVER = {_q(knob)}",
        f"SYMBOL = {_q(sym)}",
        f"AT = {_q(at)}",
        "#: the claim's expression the construction's bound evaluates, and the bound's kind",
        f"EXPR = {_q(p['expr'])}",
        f"KIND = {_q(p['kind'])}",
        "#: the values of OVER per profile (--approxtheory-profile quick|full)",
        "GRID = {",
    ]
    for prof, g in p["grids"].items():
        lines.append(f"    {_q(prof)}: {g!r},")
    symbols = ", ".join(f"{_q(k)}: {_q(v)}" for k, v in p["symbols"].items())
    lines += ["}"]
    lines += [
        f"#: the knobs of {entry.name} but OVER, each drawn from the range it declared when this",
        "#: test was written (shrinking to its default), as construction_knobs draws it",
        "KNOBS = {",
    ]
    for k, (src, _) in drawn.items():
        one = f"    {_q(k)}: {src},"
        if len(one) <= 100:
            lines.append(one)
        else:
            lines += [f"    {_q(k)}: (", f"        {src}", "    ),"]
    lines += [
        "}",
        f"#: the construction's knobs that set {c.id}'s symbols (knob: symbol)",
        f"SYMBOLS = {{{symbols}}}",
        "#: errors at or below this are float64 round-off of an exact construction",
        "ROUNDOFF = 1e-12",
    ]
    return lines


def _render_mutants(p: dict, lines: list[str]) -> list[str]:
    """``lines`` followed by the declared mutants and ``mutate``."""
    c = p["claim"]
    mut = p["mutation"]
    names = list(p["mutants"])
    if mut:
        mod, fn, kind = mut
        lines += [
            f"#: the mutants declared by {c.id}'s check ({mod}):",
            "#: broken copies of the construction that the test must catch",
            "MUTANTS = {",
        ]
        for name, why in p["mutants"].items():
            one = f"    {_q(name)}: {_q(why)},"
            if len(one) <= 100:
                lines.append(one)
            else:
                lines.append(f"    {_q(name)}: (")
                lines += _str_lines(why, "        ")
                lines.append("    ),")
        lines += [
            "}",
            "",
            "",
            "def mutate(construction, name):",
            f'    """Apply the declared mutant ``name`` (the check\'s own code, {fn})."""',
            f"    from {mod} import {fn}",
            "",
            f"    {fn}(name)(construction)" if kind == "call" else f"    {fn}[name](construction)",
        ]
    else:
        lines += [
            f"#: {c.id}'s check declares no mutant this test can apply"
            + (f" (declared: {', '.join(names)})" if names else ""),
            "MUTANTS: dict = {}",
            "",
            "",
            "def mutate(construction, name):",
            "    raise NotImplementedError(name)",
        ]
    return lines


def _render_test(p: dict, lines: list[str]) -> list[str]:
    """``lines`` followed by the test function."""
    ident = _ident(p["claim"].id)
    lines += [
        "",
        "",
        "@pytest.mark.rate_test(claim=CLAIM, over=SYMBOL)",
        "@settings(",
        "    max_examples=10,",
        "    deadline=None,",
        "    derandomize=True,  # the same cases every run: the cache serves the second one",
        "    database=None,",
        "    suppress_health_check=[HealthCheck.too_slow],",
        "    phases=[Phase.explicit, Phase.generate, Phase.shrink],  # no explain: it re-measures",
        ")",
        "@given(knobs=st.fixed_dictionaries(KNOBS))",
        f"def test_{ident}_sup_error_follows_the_claimed_rate(measured, knobs):",
        "    if measured.mutant is not None and measured.mutant not in MUTANTS:",
        "        pytest.fail(",
        '            f"{CLAIM} declares no mutant {measured.mutant!r} that this test can apply "',
        "            f\"(declared: {', '.join(MUTANTS) or 'none'})\",",
        "            pytrace=False,",
        "        )",
        "    grid = GRID[measured.profile]",
        "    cases = [{**knobs, OVER: x} for x in grid]",
        "    values = {SYMBOLS[k]: v for k, v in knobs.items() if k in SYMBOLS}",
        "    # the construction's requirements and the claim's regime at every grid point (read by",
        "    # the constructions and the catalogue once, then from the cache)",
        "    assume(measured.admissible(CONSTRUCTION, cases, claim=CLAIM, "
        "symbols={**SYMBOLS, OVER: SYMBOL}))",
        "    # cached on disk: a case measured before (same knobs, mutant, settings, code) is read",
        "    # back without building the construction (nor loading torch)",
        "    errors = [",
        "        measured.sup_error_value_of(CONSTRUCTION, k, mutant=measured.mutant, "
        "mutate=mutate)",
        "        for k in cases",
        "    ]",
    ]
    if p["kind"] == "upper":
        lines += [
            "    if max(errors) <= ROUNDOFF:  # exact at these knobs (one token): nothing decays",
            "        return",
        ]
    lines += [
        "    measured.assert_claim_rate(",
        "        CLAIM, grid, errors, over=SYMBOL, values=values, at=AT, expr=EXPR, kind=KIND",
        "    )",
        "",
    ]
    return lines


def _default_out(cid: str) -> str:
    return f"tests/test_{_ident(cid)}.py"


def _cmd_new_test(args) -> int:
    from .._cliargs import check, out_file
    from ..io import atomic_write_text

    if args.out is not None and not args.out.strip():  # an empty value is not absence
        raise ConfigError(f"--out needs a file path (got {args.out!r})")
    out = args.out or _default_out(args.claim)
    check(out_file, "--out", out)
    path = Path(out)
    if os.path.lexists(path) and not args.force:  # a dangling link too: it would be replaced
        what = "exists" if path.exists() else "is a symbolic link (leading nowhere)"
        raise ConfigError(f"--out {out!r} {what}; pass --force to overwrite it")
    p = plan(args.claim, construction=args.construction, over=args.over)
    atomic_write_text(path, render(p, out))
    mut = p["mutants"]
    print(
        f"wrote {out}: the rate of {p['claim'].id} in {p['symbol']} "
        f"({p['expr']} ~ {p['symbol']}^{p['exponent']:g}), measured on "
        f"{p['entry'].name}; run `pytest {out}`"
        + (
            f", and `pytest {out} --approxtheory-mutant {list(mut)[-1]}` to see it fail"
            if p["mutation"]
            else ""
        )
    )
    if not p["mutation"]:
        print(
            f"note: {p['claim'].id}'s check declares no mutant the test can apply"
            + (f" ({', '.join(mut)})" if mut else ""),
            file=sys.stderr,
        )
    return 0


def register(p) -> None:
    p.add_argument("claim", metavar="CLAIM", help="a claim id, e.g. IF-T2")
    p.add_argument("--out", help="the test file to write (default: tests/test_<CLAIM>.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.add_argument("--construction", help="which of the claim's constructions (default: the first)")
    p.add_argument("--over", help="the knob to sweep (default: chosen from the claim's rate)")
    p.set_defaults(func=_cmd_new_test)
