"""No caller's value reaches sympy's parser.

Two parts:

* the three API paths that used to evaluate a caller's string (``Prediction.alpha_at``,
  ``infoflow.Arch(d=, E=)``, ``measure.compare_exponent(fit, ..., **values)``) now parse it with
  :mod:`approxtheory.parse` or refuse it with a typed error, and a payload runs nothing;
* an AST scan over ``approxtheory/``, ``proofs_check/`` and ``experiments/`` that forbids the
  string-evaluating calls (``sympify``, ``S(...)``, ``parse_expr``, ``eval``, ``exec``, and every
  other call into sympy, because nearly all of them sympify their arguments non-strictly:
  ``simplify``, ``N``, ``Max``, ``log``, ``.subs(...)``, ... all run a string; only the
  constructors in :data:`SAFE_SYMPY` do not) applied to a value that came from a caller.

  "Came from a caller" is the brief's rule, made concrete: the value is a parameter of the
  enclosing public function (a module-level function or a method of a public class whose name has
  no leading underscore, dunders included; a dataclass's fields, ``self.x``, in
  ``__post_init__``), or any value of a ``**kwargs`` (in any function), or is derived *directly*
  from one: an attribute, item or slice of it, a container, f-string or arithmetic holding it,
  ``str()``/``.strip()``/``.items()``-style pass-throughs, a loop or comprehension variable over
  it, or a name assigned any of these. The result of any other call (``claim(cid).expr(...)``, a
  converter such as ``parse.to_number``) is the callee's value, not the caller's.
  The internal uses that are flagged but safe are listed in :data:`ALLOWED`, each with its reason;
  a test plants mutants and checks the scan goes red.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("approxtheory", "proofs_check", "experiments")
PAYLOAD_FILE = "approxtheory_pwned_marker"

#: builtins that run a string as code
BUILTIN_EVALUATORS = {"eval", "exec"}
#: names that evaluate a string under any module alias (``from sympy import sympify as f``
#: is caught by the import tracking; these catch ``sympy.core.sympify.sympify`` and the like)
EVALUATORS = {"sympify", "parse_expr"}
#: methods (on any object) that sympify their arguments: ``x.subs(x, "...")`` runs the string
SYMPY_METHODS = {"subs", "evalf", "sympify", "xreplace", "rewrite", "equals"}
#: sympy callables that do not evaluate a string argument (checked: ``Rational("...")``,
#: ``Integer("...")`` and ``Float("...")`` parse a number literal or refuse; ``Symbol`` and
#: ``Dummy`` take it as a name; ``sstr``/``srepr`` print it)
SAFE_SYMPY = {"Symbol", "Dummy", "Integer", "Float", "Rational", "sstr", "srepr"}
#: calls through which a value stays "directly derived" from its argument (method name or
#: builtin); the result of any other call is not the caller's value
PASS_THROUGH_METHODS = {
    "strip", "lstrip", "rstrip", "lower", "upper", "casefold", "replace", "split", "partition",
    "format", "items", "values", "keys", "get", "pop", "copy", "setdefault",
}  # fmt: skip
PASS_THROUGH_BUILTINS = {"str", "dict", "list", "tuple", "set", "sorted", "reversed", "zip"}

#: the internal uses that the scan flags but that are safe: (file, function, call) -> why.
#: ``call`` is the called name as written (``sp.sympify``, ``.subs``). Keep each reason precise;
#: a new entry needs the same care as a new public API taking strings.
ALLOWED: dict[tuple[str, str, str], str] = {
    # catalogue.mutate builds the claim mutants of `approxtheory verify --mutants`: its callers
    # (claim_mutants, _mutable_symbol, the mutant tests) pass a catalogue expression (Claim.expr)
    # and a catalogue symbol (Claim.symbol); `rec` only rebuilds sub-trees of that expression.
    # No CLI or documented API passes a caller's string (the file's owner was asked to add an
    # isinstance(sp.Basic / sp.Symbol) guard at the top; the entries stay until the scan can
    # see such a guard).
    ("approxtheory/catalogue/mutate.py", "shift_rate", "sp.Pow"): "catalogue symbol x",
    ("approxtheory/catalogue/mutate.py", "shift_rate", "sp.exp"): "sub-tree of a catalogue expr",
    ("approxtheory/catalogue/mutate.py", "shift_rate", "sp.degree"): "sub-tree of a catalogue expr",
    ("approxtheory/catalogue/mutate.py", "unspecified_constant", "sp.Mul.make_args"): "callers "
    "pass Claim.expr(...) (claim_mutants); a sympy expression's factors, nothing parsed",
    # experiments.infoflow_trained.depth_prediction substitutes T and E from the experiment's
    # own integer grid (depth_fits reads them from the cell rows it wrote); the owner was asked
    # to use Prediction.alpha_at (which validates: positive integers, strings parsed) instead
    ("experiments/infoflow_trained.py", "depth_prediction", ".subs"): "integer grid values "
    "of the experiment (depth_fits), not user text",
    # docs.formula_mathml renders the catalogue's own expressions (claims page, notebook,
    # report); an isinstance(sp.Basic) guard at its top refuses anything else, strings included
    ("approxtheory/docs.py", "formula_mathml", "sp.mathml"): "catalogue expressions only "
    "(isinstance guard)",
    ("approxtheory/docs.py", "formula_mathml", "sp.latex"): "catalogue expressions only "
    "(isinstance guard)",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    function: str
    call: str
    source: str

    def key(self) -> tuple[str, str, str]:
        return (self.path, self.function, self.call)

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line} in {self.function}(): {self.call}(...) of a caller's "
            f"value: {self.source}"
        )


def _sympy_aliases(tree: ast.AST) -> tuple[set[str], dict[str, str]]:
    """Local names bound to the sympy package (or a submodule), and names imported from it
    (local name -> the imported name)."""
    modules, names = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "sympy" or a.name.startswith("sympy."):
                    modules.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "sympy" or node.module.startswith("sympy."):
                for a in node.names:
                    names[a.asname or a.name] = a.name
    return modules, names


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


class _Scanner:
    def __init__(self, tree: ast.AST, path: str):
        self.path = path
        self.modules, self.from_sympy = _sympy_aliases(tree)
        self.findings: list[Finding] = []

    # -- which calls are dangerous
    def dangerous(self, call: ast.Call) -> str | None:
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in BUILTIN_EVALUATORS or f.id in EVALUATORS:
                return f.id
            if f.id in self.from_sympy and self.from_sympy[f.id] not in SAFE_SYMPY:
                return f.id  # from sympy import S, simplify, sympify, ... (any alias)
            return None
        if isinstance(f, ast.Attribute):
            base = f.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in self.modules:  # sp.anything(...)
                return None if f.attr in SAFE_SYMPY else _dotted(f)
            if f.attr in EVALUATORS:
                return _dotted(f)
            if f.attr in SYMPY_METHODS:
                return f".{f.attr}"
        return None

    # -- taint
    def tainted(self, node: ast.AST | None, bad: set[str]) -> bool:
        """Whether ``node``'s value is directly derived from a tainted name."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in bad
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            return self.tainted(node.value, bad)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.tainted(e, bad) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.tainted(e, bad) for e in (*node.keys, *node.values) if e)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.tainted(node.elt, bad)
        if isinstance(node, ast.DictComp):
            return self.tainted(node.key, bad) or self.tainted(node.value, bad)
        if isinstance(node, ast.BinOp):
            return self.tainted(node.left, bad) or self.tainted(node.right, bad)
        if isinstance(node, ast.UnaryOp):
            return self.tainted(node.operand, bad)
        if isinstance(node, ast.BoolOp):
            return any(self.tainted(v, bad) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.tainted(node.body, bad) or self.tainted(node.orelse, bad)
        if isinstance(node, ast.JoinedStr):
            return any(self.tainted(v, bad) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return self.tainted(node.value, bad)
        if isinstance(node, ast.NamedExpr):
            return self.tainted(node.value, bad)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in PASS_THROUGH_METHODS:
                return self.tainted(f.value, bad)
            if isinstance(f, ast.Name) and f.id in PASS_THROUGH_BUILTINS:
                return any(self.tainted(a, bad) for a in node.args)
        return False  # constants, comparisons, lambdas, and the results of other calls

    @staticmethod
    def _targets(t: ast.AST) -> set[str]:
        out = set()
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.add(n.id)
        return out

    def propagate(self, fn: ast.AST, bad: set[str]) -> set[str]:
        """Names assigned from tainted values anywhere in ``fn`` (to a fixpoint)."""
        bad = set(bad)
        while True:
            before = len(bad)
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign) and self.tainted(n.value, bad):
                    for t in n.targets:
                        bad |= self._targets(t)
                elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and self.tainted(n.value, bad):
                    bad |= self._targets(n.target)
                elif isinstance(n, ast.NamedExpr) and self.tainted(n.value, bad):
                    bad |= self._targets(n.target)
                elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and self.tainted(
                    n.iter, bad
                ):
                    bad |= self._targets(n.target)
                elif isinstance(n, ast.withitem) and self.tainted(n.context_expr, bad):
                    if n.optional_vars is not None:
                        bad |= self._targets(n.optional_vars)
            if len(bad) == before:
                return bad

    def scan_function(self, fn, qualname: str, public: bool, method: bool) -> None:
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        if method and params and params[0].arg in ("self", "cls"):
            this, params = params[0].arg, params[1:]
        else:
            this = None
        bad: set[str] = set()
        if public:
            bad |= {p.arg for p in params}
            if a.vararg:
                bad.add(a.vararg.arg)
            if this and fn.name == "__post_init__":  # a dataclass's fields are the caller's
                bad.add(this)
        if a.kwarg:  # any value of **kwargs, public or not
            bad.add(a.kwarg.arg)
        # nested functions: their own **kwargs too (their other parameters are the enclosing
        # function's business, and what they read from it is covered by the propagation)
        for n in ast.walk(fn):
            if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if n.args.kwarg:
                    bad.add(n.args.kwarg.arg)
        if not bad:
            return
        bad = self.propagate(fn, bad)
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            what = self.dangerous(n)
            if what is None:
                continue
            args = [*n.args, *(k.value for k in n.keywords)]
            if any(self.tainted(x, bad) for x in args):
                self.findings.append(
                    Finding(self.path, n.lineno, qualname, what, ast.unparse(n)[:120])
                )

    def scan(self, tree: ast.Module) -> list[Finding]:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.scan_function(node, node.name, not node.name.startswith("_"), False)
            elif isinstance(node, ast.ClassDef):
                public_cls = not node.name.startswith("_")
                for m in node.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        dunder = m.name.startswith("__") and m.name.endswith("__")
                        public = public_cls and (dunder or not m.name.startswith("_"))
                        self.scan_function(m, f"{node.name}.{m.name}", public, True)
        return self.findings


def scan_source(source: str, path: str = "<string>") -> list[Finding]:
    """The scan's findings for one module's source."""
    tree = ast.parse(source, filename=path)
    return _Scanner(tree, path).scan(tree)


def _files():
    for top in SCANNED:
        yield from sorted((ROOT / top).rglob("*.py"))


def scan_tree() -> list[Finding]:
    out: list[Finding] = []
    for p in _files():
        rel = p.relative_to(ROOT).as_posix()
        out += scan_source(p.read_text(encoding="utf-8"), rel)
    return out


# ------------------------------------------------------------------------------- the scan


def test_no_caller_value_reaches_a_string_evaluating_call():
    findings = scan_tree()
    flagged = [f for f in findings if f.key() not in ALLOWED]
    assert not flagged, "a caller's value reaches sympy's parser or eval:\n" + "\n".join(
        map(str, flagged)
    )


def test_every_allow_list_entry_is_still_needed():
    """An entry whose call is gone (or moved) is stale: remove it rather than keep a hole."""
    keys = {f.key() for f in scan_tree()}
    stale = [k for k in ALLOWED if k not in keys]
    assert not stale, f"stale ALLOWED entries: {stale}"


def test_the_scan_covers_the_three_packages():
    files = list(_files())
    for top in SCANNED:
        assert any(p.relative_to(ROOT).parts[0] == top for p in files), top
    assert any(p.name == "infoflow.py" and p.parent.name == "approxtheory" for p in files)


MUTANT_BASE = """
import sympy as sp
from .parse import to_number


def public(value, other=1):
    return to_number(value) + other
"""


@pytest.mark.parametrize(
    "body,call",
    [
        ("    return sp.sympify(value)\n", "sp.sympify"),
        ("    x = value.strip()\n    return sp.sympify(x)\n", "sp.sympify"),
        ("    return sp.S(value)\n", "sp.S"),
        ("    return sp.parse_expr(value)\n", "sp.parse_expr"),
        ("    return eval(value)\n", "eval"),
        ("    exec(value)\n", "exec"),
        ("    return sp.Symbol('x').subs('x', value)\n", ".subs"),
        ("    return sp.simplify(value)\n", "sp.simplify"),
        ("    return sp.N(value)\n", "sp.N"),
        ("    return [sp.sympify(v) for v in [value, 2]]\n", "sp.sympify"),
        # a caller's name as a key of subs is sympified too
        ("    return sp.Symbol('x').subs({k: 1 for k in [value]})\n", ".subs"),
        ("    return sp.Max(f'{value}', 1)\n", "sp.Max"),
    ],
)
def test_the_scan_goes_red_on_a_planted_mutant(body, call):
    src = MUTANT_BASE + "\n\ndef mutant(value):\n" + body
    found = scan_source(src, "mutant.py")
    assert [(f.function, f.call) for f in found] == [("mutant", call)], found


def test_the_scan_covers_kwargs_post_init_and_import_aliases():
    src = textwrap.dedent(
        """
        from dataclasses import dataclass
        from sympy import sympify as to_expr, S
        import sympy


        def _private(**values):
            return {k: to_expr(v) for k, v in values.items()}


        @dataclass
        class Public:
            d: object = 1

            def __post_init__(self):
                sympy.sympify(self.d)

            def method(self, x):
                return S(x)

            def _internal(self, x):
                return S(x)  # private: not a caller's value
        """
    )
    found = {(f.function, f.call) for f in scan_source(src, "m.py")}
    assert found == {
        ("_private", "to_expr"),
        ("Public.__post_init__", "sympy.sympify"),
        ("Public.method", "S"),
    }


def test_a_sanitized_value_is_clean():
    src = MUTANT_BASE + textwrap.dedent(
        """

        def fine(value, **kw):
            v = to_number(value, "value")
            subs = {sp.Symbol(k): to_number(x, k) for k, x in kw.items()}
            return sp.Symbol("x").subs(subs) + sp.sympify(v) + sp.S(0)
        """
    )
    assert scan_source(src, "ok.py") == []


# ----------------------------------------------------------------- the three string paths


def _payload(tmp_path) -> tuple[str, Path]:
    marker = tmp_path / PAYLOAD_FILE
    return f"__import__('os').system('touch {marker}')", marker


def test_alpha_at_parses_strings_and_runs_no_payload(tmp_path):
    from approxtheory.errors import ApproxTheoryError, ParseError
    from approxtheory.infoflow import Arch, make_task, predict_rate

    p = predict_rate(Arch((1,)), make_task("kth", k=2))
    assert str(p.alpha_at(T="64", d="2", E="8")) == "16"
    payload, marker = _payload(tmp_path)
    for kw in ({"T": payload}, {"d": payload}, {"E": payload}):
        with pytest.raises(ParseError):
            p.alpha_at(**kw)
    with pytest.raises(ApproxTheoryError):
        p.alpha_at(**{payload: 1})
    assert not marker.exists()


def test_arch_parses_strings_and_runs_no_payload(tmp_path):
    from approxtheory.errors import ParseError
    from approxtheory.infoflow import Arch, make_task, predict_rate

    assert predict_rate(Arch((1,), E="8"), make_task("kth", k=2)).alpha_at(T=64, d=1) == 8
    payload, marker = _payload(tmp_path)
    for kw in ({"d": payload}, {"E": payload}):
        with pytest.raises(ParseError):
            Arch((1,), **kw)
    assert not marker.exists()


def test_compare_exponent_parses_strings_and_runs_no_payload(tmp_path):
    import sympy as sp

    from approxtheory.errors import ParseError, UnknownClaimError, UnknownSymbolError
    from approxtheory.measure import compare_exponent, fit_rate

    fit = fit_rate([1, 10, 100, 1000], [1, 0.01, 1e-4, 1e-6])
    assert compare_exponent(fit, "HC-T2a", gamma="2")["predicted"] == 2.0
    x = sp.Symbol("x")
    assert compare_exponent(fit, -2 * x, x="1")["within_ci"] is True
    payload, marker = _payload(tmp_path)
    with pytest.raises(ParseError):
        compare_exponent(fit, "HC-T2a", gamma=payload)
    with pytest.raises(ParseError):
        compare_exponent(fit, -2 * x, x=payload)
    with pytest.raises(UnknownSymbolError):
        compare_exponent(fit, -2 * x, **{payload: 1})
    with pytest.raises(UnknownClaimError):
        compare_exponent(fit, payload)
    assert not marker.exists()


def test_no_payload_runs_in_a_fresh_interpreter(tmp_path):
    """The same payloads, in a fresh process (nothing cached or patched by the test session),
    each caught as a typed error; the marker file must not appear."""
    payload, marker = _payload(tmp_path)
    code = textwrap.dedent(
        f"""
        import sympy as sp
        from approxtheory.errors import ApproxTheoryError
        from approxtheory import infoflow, measure
        P = {payload!r}
        p = infoflow.predict_rate(infoflow.Arch((1,)), infoflow.make_task("kth", k=2))
        fit = measure.fit_rate([1, 10, 100], [1, 0.1, 0.01])
        calls = [
            lambda: p.alpha_at(T=P),
            lambda: infoflow.Arch((1,), d=P),
            lambda: infoflow.Arch((1,), E=P),
            lambda: measure.compare_exponent(fit, "HC-T2a", gamma=P),
            lambda: measure.compare_exponent(fit, sp.Symbol("x"), x=P),
            lambda: measure.compare_exponent(fit, P),
        ]
        for c in calls:
            try:
                c()
            except ApproxTheoryError:
                pass
            else:
                raise SystemExit("accepted a payload")
        print("ok")
        """
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
    assert not marker.exists()


@pytest.mark.parametrize(
    "path,old,new,function",
    [
        # the three fixed paths, each reverted to what evaluated a caller's string
        (
            "approxtheory/infoflow.py",
            "subs[_SYMBOLS[k]] = _symbol_value(k, v)",
            "subs[_SYMBOLS[k]] = sp.sympify(v)",
            "Prediction.alpha_at",
        ),
        (
            "approxtheory/infoflow.py",
            'object.__setattr__(self, "E", _symbol_value("E", self.E, keep_symbol=True))',
            'object.__setattr__(self, "E", sp.sympify(self.E))',
            "Arch.__post_init__",
        ),
        (
            "approxtheory/measure.py",
            "subs[by_name[k]] = to_number(v, k)",
            "subs[by_name[k]] = v",
            "compare_exponent",
        ),
    ],
)
def test_the_scan_goes_red_when_a_fix_is_reverted(path, old, new, function):
    src = (ROOT / path).read_text(encoding="utf-8")
    assert src.count(old) == 1, f"{path} changed: update this mutant ({old!r})"
    assert not [f for f in scan_source(src, path) if f.function == function]
    found = scan_source(src.replace(old, new), path)
    assert any(f.function == function for f in found), found
