"""Formulas as presentation MathML: sympy's printer, serialised here with its text escaped, and
a whitelist that any markup must pass before a page carries it (no script, no foreign element)."""

from __future__ import annotations

import html
import re

__all__ = ["mathml", "safe_mathml"]

#: MathML elements and attributes a formula may carry (anything else: the text fallback)
_MATHML_TAGS = frozenset(
    "math mi mn mo ms mtext mspace mrow mfrac msqrt mroot msub msup msubsup munder mover "
    "munderover mtable mtr mtd mpadded mphantom menclose mstyle merror semantics annotation "
    "mfenced none mprescripts mmultiscripts".split()
)
_MATHML_ATTRS = frozenset(
    "mathvariant stretchy fence separator separators open close linethickness columnalign "
    "rowalign accent accentunder lspace rspace form largeop movablelimits notation display "
    "xmlns encoding".split()
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[A-Za-z:-]+=\"[^\"<>]*\")*)\s*(/?)>")
_ATTR = re.compile(r"([A-Za-z:-]+)=\"([^\"<>]*)\"")
_ENTITY = re.compile(r"&(?:[A-Za-z]+|#[0-9]+|#x[0-9A-Fa-f]+);")


def safe_mathml(markup: str) -> bool:
    """Whether ``markup`` is only whitelisted MathML elements and attributes, entities and text
    (no ``<`` or ``&`` outside them)."""
    for m in _TAG.finditer(markup):
        if m.group(2) not in _MATHML_TAGS:
            return False
        for a in _ATTR.finditer(m.group(3)):
            if a.group(1) not in _MATHML_ATTRS:
                return False
    rest = _ENTITY.sub("", _TAG.sub("", markup))
    return "<" not in rest and ">" not in rest and "&" not in rest


def _mathml_markup(expr) -> str:
    """Sympy's presentation MathML of ``expr``, serialised here with its text escaped (sympy's
    own ``mathml()`` writes text raw: ``a < b`` would come out as ``<mo><</mo>``); the entity
    references sympy writes in text (``&InvisibleTimes;``) are kept."""
    from sympy.printing.mathml import MathMLPresentationPrinter
    from sympy.printing.printer import Printer

    def text(t: str) -> str:
        parts = re.split(r"(&(?:[A-Za-z]+|#[0-9]+|#x[0-9A-Fa-f]+);)", t)
        return "".join(p if i % 2 else html.escape(p, quote=False) for i, p in enumerate(parts))

    def ser(node) -> str:
        if node.nodeType == node.TEXT_NODE:
            return text(node.data)
        if node.nodeType != node.ELEMENT_NODE:
            return ""
        attrs = "".join(f' {k}="{html.escape(v)}"' for k, v in node.attributes.items())
        inner = "".join(ser(c) for c in node.childNodes)
        return f"<{node.tagName}{attrs}>{inner}</{node.tagName}>"

    return ser(Printer._print(MathMLPresentationPrinter(), expr))


def mathml(expr, name: str | None = None) -> str | None:
    """``expr`` (a sympy expression), preceded by ``name =`` when given, as a presentation
    MathML ``<math>`` element that browsers render natively (no network, no script); None for
    anything but a sympy expression (text is never parsed), when sympy cannot print it or when
    the markup is not plain MathML."""
    import sympy as sp

    if not isinstance(expr, sp.Basic):  # never sympify text: that would evaluate it
        return None
    try:
        body = _mathml_markup(expr)
        if name is not None:
            body = f"{_mathml_markup(sp.Symbol(name))}<mo>=</mo>{body}"
    except Exception:  # any expression sympy cannot print: the text fallback
        return None
    markup = f"<math><mrow>{body}</mrow></math>"
    return markup if safe_mathml(markup) else None
