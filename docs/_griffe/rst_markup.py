"""A griffe extension (mkdocs.yml, mkdocstrings' python handler): the project's docstrings are
reStructuredText as Sphinx writes it, and mkdocstrings renders them as markdown; this rewrites
the reST that markdown would show raw, before the docstring is parsed.

- a role, ``:class:`Claim```, ``:func:`~approxtheory.measure.sup_error``` or
  ``:func:`the search <sup_error>```, becomes a code span that links to the object's page where
  mkdocs-autorefs knows it (an *optional* reference: an object outside the API pages is plain
  code, never a broken link);
- a literal block, a paragraph ending in ``::`` followed by an indented block, becomes a fenced
  code block (``Example::`` reads ``Example:``; a lone ``::`` disappears), ``pycon`` when it is
  a doctest session;
- a doctest session outside a literal block (lines from ``>>>`` to the next blank line) is
  fenced too, so that it is not run together into one paragraph.
"""

from __future__ import annotations

import re
import textwrap

from griffe import Extension, Object

_ROLE = re.compile(
    r":(?:py:)?(?:class|mod|func|meth|attr|data|exc|obj|const|type):"
    r"`(?P<tilde>~?)(?P<text>[^`<]+?)(?:\s*<(?P<target>[^>`]+)>)?`"
)


def _identifier(obj: Object, name: str) -> str | None:
    """The full path of ``name`` seen from ``obj`` (its own scope, then its parents'), or the
    name itself when it is already dotted; None when it cannot be resolved."""
    name = name.strip().lstrip(".")
    try:
        return obj.resolve(name)
    except Exception:  # griffe's NameResolutionError, or an alias it cannot follow
        return name if "." in name else None


def _role(obj: Object | None, m: re.Match) -> str:
    text = m["text"].strip()
    target = (m["target"] or text).strip()
    shown = text.rsplit(".", 1)[-1] if m["tilde"] and not m["target"] else text
    if m["target"] is None and text.endswith("()"):
        target = text[:-2]
    ident = None if obj is None else _identifier(obj, target)
    code = f"`{shown}`"
    if ident is None:
        return code
    return f'<autoref identifier="{ident}" optional>{code}</autoref>'


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fence(lines: list[str]) -> list[str]:
    body = textwrap.dedent("\n".join(lines)).strip("\n").split("\n")
    lang = "pycon" if body and body[0].lstrip().startswith(">>>") else "text"
    return [f"```{lang}", *body, "```"]


def rewrite(text: str, obj: Object | None = None) -> str:
    """The reST docstring ``text`` as the markdown mkdocstrings renders (see the module)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence:
            out.append(line)
            i += 1
            continue
        if line.rstrip().endswith("::"):
            # a literal block follows: the indented lines after a blank one
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            base = _indent(line)
            k = j
            while k < len(lines) and (not lines[k].strip() or _indent(lines[k]) > base):
                k += 1
            while k > j and not lines[k - 1].strip():
                k -= 1
            if k > j:
                head = line.rstrip()[:-2].rstrip()
                if head:
                    out.append(head + (":" if not head.endswith(":") else ""))
                    out.append("")
                out += _fence(lines[j:k])
                i = k
                continue
        if line.lstrip().startswith(">>>"):
            k = i
            while k < len(lines) and lines[k].strip():
                k += 1
            if out and out[-1].strip():
                out.append("")
            out += _fence(lines[i:k])
            i = k
            continue
        out.append(line)
        i += 1
    result = "\n".join(out)
    # roles everywhere outside fenced code
    parts = re.split(r"(```[\s\S]*?```)", result)
    for n in range(0, len(parts), 2):
        parts[n] = _ROLE.sub(lambda m: _role(obj, m), parts[n])
    return "".join(parts)


class RstMarkup(Extension):
    """Rewrite every docstring's reST roles and literal blocks once a package is loaded (the
    package's own docstring included)."""

    def on_package(self, *, pkg: Object, **kwargs) -> None:
        stack, seen = [pkg], set()
        while stack:
            obj = stack.pop()
            if obj.is_alias or id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj.docstring.value, obj)
            stack.extend(obj.members.values())
