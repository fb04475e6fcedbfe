"""Where a check reads a claim's formulas: the values of their free symbols.

A check that evaluates a formula at one value of a symbol (or at points where two symbols move
only in proportion) cannot tell the claim from a false one that agrees there (``D_r = D/2``
alone; a wrong ``H``-dependence that coincides at ``H = 2``). :func:`recording` records, while a
check runs, every :meth:`~approxtheory.catalogue._claim.Claim.evaluate` (and ``evaluate_float``)
and :meth:`~approxtheory.catalogue._claim.Claim.solve_for` of one claim with the values given;
:func:`summarize` turns the log into the record ``verify --mutants`` keeps (``points_read``): per
expression, how many points were read, the symbols read at one value and the pairs read only in
proportion. :func:`merge` joins the summaries of several runs of the same check, and
:func:`blind_spots` lists what the union leaves untested, from which
:func:`approxtheory.catalogue.mutate.pivot_mutants` makes the false formulas that agree at every
point read.

Symbols the catalogue describes as unspecified constants (``C``, ``c1``) are not listed: a check
picks them, no claim states them.

Example::

    >>> from approxtheory import claim
    >>> with recording("HC-T2b") as log:
    ...     _ = claim("HC-T2b").evaluate(T=64, s=1, n=2, D=2)
    ...     _ = claim("HC-T2b").evaluate(T=128, s=1, n=2, D=2)
    >>> summarize(log)["k"]["fixed"]
    {'D': '2', 'n': '2', 's': '1'}
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

import sympy as sp

from ..parse import to_number
from ._claim import ALIASES, Claim

__all__ = ["recording", "summarize", "merge", "blind_spots"]

#: how the catalogue describes a constant a claim leaves unspecified (see mutate._UNSPECIFIED)
UNSPECIFIED = re.compile(
    r"unspecified|conjectured constant|^constant of|T-free factor|of the fitted|\(unknown\)", re.I
)

#: the most distinct values kept per symbol in a summary (enough to tell one value from many)
MAX_VALUES = 8


def _free(c: Claim, name: str) -> list[str]:
    """The free symbols of ``c``'s expression ``name`` that a claim states (not unspecified)."""
    try:
        e = c.expr(name)
    except Exception:  # noqa: BLE001 - a name the claim lacks raised in the check already
        return []
    out = []
    for s in getattr(e, "free_symbols", ()):
        desc = c.symbols.get(s.name, (None, ""))[1] or ""
        if not UNSPECIFIED.search(desc):
            out.append(s.name)
    return sorted(out)


def _exact(v) -> Any:
    """``v`` as a finite exact or float sympy number, or None (a symbol, an array, NaN)."""
    if isinstance(v, sp.Basic):
        return v if v.is_number and v.is_finite else None
    if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:  # a numpy or torch scalar
        v = v.item()
    try:
        return to_number(v, "value")
    except Exception:  # noqa: BLE001 - not a number: recorded as not given
        return None


def _pairs(args) -> list:
    """The (old, new) pairs of a ``subs`` call (``subs(old, new)``, a dict, or pairs)."""
    if len(args) == 2:
        return [tuple(args)]
    if len(args) == 1:
        a = args[0]
        if isinstance(a, dict):
            return list(a.items())
        try:
            return [tuple(x) for x in a]
        except TypeError:
            return []
    return []


def _rows(values: list, cap: int = 64) -> list[list]:
    """Up to ``cap`` distinct rows of the broadcast argument arrays of a lambdified call."""
    import numpy as np

    try:
        arrs = np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values])
    except (TypeError, ValueError):
        return []
    if not arrs:
        return [[]]
    flat = np.stack([a.reshape(-1) for a in arrs], axis=1)
    rows: list[list] = []
    for r in flat:
        t = [float(x) for x in r]
        if t not in rows:
            rows.append(t)
            if len(rows) >= cap:
                break
    return rows


class _Recorder:
    """The state of one :func:`recording` block."""

    def __init__(self, cid: str):
        self.cid = cid
        self.log: list = []
        self.depth = 0
        #: id -> (object kept alive, expression name, point so far) of the claim's
        #: expressions and of what a check derived from them by ``subs``
        self.tracked: dict[int, tuple] = {}

    def point(self, c: Claim, name: str, values, base=None) -> dict:
        keep = set(_free(c, name))
        out = dict(base or {})
        for k, v in values:
            k = ALIASES.get(k, k) if isinstance(k, str) else getattr(k, "name", None)
            if k in keep:
                x = _exact(v)
                if x is not None:
                    out[k] = x
        return out

    def note(self, c: Claim, expr, values, solved=None) -> None:
        if c.id != self.cid or self.depth != 1:
            return
        name = c.expr_name(expr)
        self.log.append((name, self.point(c, name, values.items()), solved))

    def track(self, obj, name: str, point: dict) -> None:
        if isinstance(obj, sp.Basic) and not obj.is_Atom:
            self.tracked[id(obj)] = (obj, name, point)


def _claim_wrappers(r: _Recorder, orig: dict) -> dict:
    """Replacements of the :class:`Claim` methods that read a formula at values."""
    cid = r.cid

    def evaluate(self, expr=None, /, **values):
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        r.depth += 1
        try:
            out = orig["evaluate"](self, expr, **values)
            r.note(self, expr, values)
            return out
        finally:
            r.depth -= 1

    def solve_for(self, symbol, expr=None, equals=None, /, **values):
        r.depth += 1
        try:
            out = orig["solve_for"](self, symbol, expr, equals, **values)
            e = expr if expr is not None else values.get("expr")
            given = {k: v for k, v in values.items() if k not in ("expr", "equals", symbol)}
            r.note(self, e, given, solved=ALIASES.get(str(symbol), str(symbol)))
            return out
        finally:
            r.depth -= 1

    def expr(self, name=None):
        out = orig["expr"](self, name)
        if self.id == cid and r.depth == 0:
            r.track(out, self.expr_name(name), {})
        return out

    def exponent(self, symbol, expr=None):
        r.depth += 1
        try:
            out = orig["exponent"](self, symbol, expr)
        finally:
            r.depth -= 1
        if self.id == cid and r.depth == 0:
            name = self.expr_name(expr)
            r.log.append((name, {}, ALIASES.get(str(symbol), str(symbol))))
            r.track(out, name, {})
        return out

    def asymptotic_exponent(self, symbol, expr=None, at=sp.oo, /, **values):
        if expr is None and "expr" in values and "expr" not in self.symbols:
            expr = values.pop("expr")
        r.depth += 1
        try:
            out = orig["asymptotic_exponent"](self, symbol, expr, at, **values)
            r.note(self, expr, values, solved=ALIASES.get(str(symbol), str(symbol)))
            return out
        finally:
            r.depth -= 1

    return {
        "evaluate": evaluate,
        "solve_for": solve_for,
        "expr": expr,
        "exponent": exponent,
        "asymptotic_exponent": asymptotic_exponent,
    }


def _sympy_wrappers(r: _Recorder, subs, lambdify):
    """Replacements of ``sympy.Basic.subs`` and ``sympy.lambdify`` that follow the claim's
    expressions (and what ``subs`` derives from them) and record the values given."""

    def claim_now():
        from . import claim

        return claim(r.cid)

    def traced_subs(self, *args, **kw):
        out = subs(self, *args, **kw)
        hit = r.tracked.get(id(self))
        if hit is not None and hit[0] is self:
            _, name, base = hit
            point = r.point(claim_now(), name, _pairs(args), base)
            if point != base:
                r.log.append((name, point, None))
            r.track(out, name, point)
        return out

    def traced_lambdify(args, expr, *a, **kw):
        f = lambdify(args, expr, *a, **kw)
        hit = r.tracked.get(id(expr))
        if hit is None or hit[0] is not expr:
            return f
        _, name, base = hit
        syms = list(args) if isinstance(args, (list, tuple)) else [args]

        def g(*vals):
            for row in _rows(list(vals)):
                r.log.append((name, r.point(claim_now(), name, zip(syms, row), base), None))
            return f(*vals)

        return g

    return traced_subs, traced_lambdify


@contextlib.contextmanager
def recording(cid: str) -> Iterator[list]:
    """Within the block, every read of claim ``cid``'s formulas at values of their symbols is
    appended to the yielded list as ``(expression name, {symbol: exact value}, solved symbol
    or None)``: ``evaluate``/``evaluate_float``/``solve_for``/``asymptotic_exponent`` calls, and
    ``subs`` and ``sympy.lambdify`` calls on the expressions ``expr`` (and ``exponent``,
    ``rate_exponent``) returned, followed through chains of ``subs``. Reads of other claims are
    not recorded. Not thread-safe (it patches :class:`Claim`, ``sympy.Basic.subs`` and
    ``sympy.lambdify`` for the block)."""
    r = _Recorder(cid)
    names = ("evaluate", "solve_for", "expr", "exponent", "asymptotic_exponent")
    orig = {n: getattr(Claim, n) for n in names}
    subs, lambdify = sp.Basic.subs, sp.lambdify
    for n, f in _claim_wrappers(r, orig).items():
        setattr(Claim, n, f)
    sp.Basic.subs, sp.lambdify = _sympy_wrappers(r, subs, lambdify)
    try:
        yield r.log
    finally:
        for n, f in orig.items():
            setattr(Claim, n, f)
        sp.Basic.subs = subs
        sp.lambdify = lambdify


def _key(v) -> str:
    """One spelling per value: 2, 2.0 and Integer(2) are the same point."""
    try:
        return f"{float(v):.12g}"
    except (TypeError, ValueError):
        return sp.sstr(v)


def _ratio(x, y) -> str | None:
    """``x / y`` as a key, or None where it is not a finite number."""
    try:
        fx, fy = float(x), float(y)
    except (TypeError, ValueError, OverflowError):
        return None
    if fy == 0 or not (math.isfinite(fx) and math.isfinite(fy)):
        return None
    return _key(fx / fy)


def summarize(log: list) -> dict:
    """Per expression read: ``n`` (points), ``values`` (symbol -> up to :data:`MAX_VALUES`
    distinct values, as strings), ``fixed`` (symbol -> its one value), ``proportional`` (pairs
    ``[a, b, a/b]`` whose ratio is the same at every point where both are given, and
    non-zero)."""
    by: dict[str, list[dict]] = {}
    for name, point, solved in log:
        by.setdefault(name, []).append({**point, **({solved: None} if solved else {})})
    out: dict[str, dict] = {}
    for name, pts in by.items():
        names = sorted({k for p in pts for k in p})
        values: dict[str, list[str]] = {}
        for k in names:
            seen: list[str] = []
            for p in pts:
                if k in p:
                    s = "*" if p[k] is None else _key(p[k])  # "*": solved for
                    if s not in seen:
                        seen.append(s)
            values[k] = sorted(seen)[:MAX_VALUES] if "*" not in seen else ["*"]
        fixed = {k: v[0] for k, v in values.items() if len(v) == 1 and v[0] != "*"}
        prop = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if a in fixed or b in fixed:
                    continue
                both = [(p[a], p[b]) for p in pts if p.get(a) is not None and p.get(b) is not None]
                ratios = {_ratio(x, y) for x, y in both}
                if len(both) < 2 or None in ratios:
                    continue
                if len(ratios) == 1:
                    prop.append([a, b, ratios.pop()])
        out[name] = {"n": len(pts), "values": values, "fixed": fixed, "proportional": prop}
    return out


def merge(summaries: list[dict]) -> dict:
    """The union of :func:`summarize` records of several runs: a symbol is fixed only when every
    run that read the expression read it at the same one value; a pair is proportional only
    when every such run read it in the same ratio."""
    out: dict[str, dict] = {}
    for s in summaries:
        for name, r in (s or {}).items():
            if name not in out:
                out[name] = {
                    "n": r["n"],
                    "values": {k: list(v) for k, v in r["values"].items()},
                    "fixed": dict(r["fixed"]),
                    "proportional": [list(p) for p in r["proportional"]],
                }
                continue
            m = out[name]
            m["n"] += r["n"]
            for k, v in r["values"].items():
                have = m["values"].setdefault(k, [])
                have += [x for x in v if x not in have]
                if "*" in have:
                    m["values"][k] = ["*"]
                else:
                    m["values"][k] = sorted(have)[:MAX_VALUES]
            m["fixed"] = {
                k: v
                for k, v in m["fixed"].items()
                if r["fixed"].get(k, v) == v and len(m["values"].get(k, [])) == 1
            }
            m["proportional"] = [p for p in m["proportional"] if p in r["proportional"]]
    return out


def blind_spots(points: dict) -> list[tuple]:
    """What a merged ``points_read`` leaves untested, as ``("fixed", expression, symbol,
    value)`` and ``("proportional", expression, a, b, ratio)`` tuples, sorted."""
    out: list[tuple] = []
    for name, r in sorted(points.items()):
        for k, v in sorted(r["fixed"].items()):
            out.append(("fixed", name, k, v))
        for a, b, ratio in r["proportional"]:
            out.append(("proportional", name, a, b, ratio))
    return out
