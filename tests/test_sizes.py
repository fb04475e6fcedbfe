"""Modules and functions a reader can hold: no module of the package above
1,000 lines, and no function above 100 lines unless a comment directly above its ``def`` (or its
decorators) starting with ``# one function:`` says why it is one function.

The limits are the issue's; tracr's largest module is 954 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("approxtheory", "proofs_check", "experiments")
MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 100
REASON = "# one function:"


def sources() -> list[Path]:
    return sorted(p for d in FOLDERS for p in (ROOT / d).rglob("*.py"))


def long_functions(text: str) -> list[tuple[str, int, int, bool]]:
    """(name, first line, length, has a stated reason) of every function above the limit."""
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
        if n <= MAX_FUNCTION_LINES:
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        # the comment (one or more lines) sits above the decorators or between them and the `def`
        above = []
        for start in (first, node.lineno):
            i = start - 2
            while i >= 0 and lines[i].strip().startswith("#"):
                above.append(lines[i].strip())
                i -= 1
        out.append((node.name, node.lineno, n, any(a.startswith(REASON) for a in above)))
    return out


def test_the_scan_sees_a_long_function_and_its_reason():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    bare = f"def f():\n{body}\n"
    reasoned = f"{REASON} the steps share every local\n@dec\ndef f():\n{body}\n"
    between = f"@dec(\n    1,\n)\n{REASON} one pass over the rows\ndef f():\n{body}\n"
    assert long_functions(bare) == [("f", 1, MAX_FUNCTION_LINES + 1, False)]
    assert long_functions(reasoned) == [("f", 3, MAX_FUNCTION_LINES + 1, True)]
    assert long_functions(between) == [("f", 5, MAX_FUNCTION_LINES + 1, True)]
    assert long_functions(f"# a comment\ndef f():\n{body}\n")[0][3] is False
    two_lines = f"{REASON} the search updates one running\n# worst case\ndef f():\n{body}\n"
    assert long_functions(two_lines)[0][3] is True
    short = "\n".join(body.splitlines()[: MAX_FUNCTION_LINES // 2])
    assert long_functions(f"def f():\n{short}\n") == []


def test_no_module_above_the_limit():
    big = {
        str(p.relative_to(ROOT)): n
        for p in sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not big, f"modules above {MAX_MODULE_LINES} lines: {big}"


def test_every_long_function_states_why_it_is_one():
    bare = [
        f"{p.relative_to(ROOT)}:{line} {name} ({n} lines)"
        for p in sources()
        for name, line, n, ok in long_functions(p.read_text(encoding="utf-8"))
        if not ok
    ]
    assert not bare, (
        f"functions above {MAX_FUNCTION_LINES} lines without a '{REASON}' comment: {bare}"
    )
