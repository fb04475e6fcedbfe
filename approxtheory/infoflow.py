"""The InfoFlow calculus (arXiv 2605.17930, digest §5): does an architecture approximate a
retrieval task at a T-independent parameter rate, and which step costs the most?

A task is a small **retrieval program** (:class:`Task`): argmax retrievals with their order
(:class:`Argmax`), fixed-position aggregations (:class:`Fixed`), global aggregations
(:class:`Global`) and a read-out (:class:`Readout`). An architecture (:class:`Arch`) is a list of
head counts, one per layer, with or without positional encoding. :func:`predict_rate` schedules the
program's retrievals onto (layer, head) slots (list scheduling by longest remaining chain, Hu's
rule), falls back to global aggregation (GIA) where a retrieval cannot be placed, tracks the
information set and its coupled blocks per position and layer, charges every step its cost law and
returns a :class:`Prediction`: ``N(ε) ~ ε^{-alpha}`` with ``alpha`` the largest step exponent.

Every cost law is read from the catalogue (one source of truth): MPR, residual and the GIA block
size from ``IF-R1``, Lipschitz read-outs and exact maps from ``IF-R2``, the decode law from
``IF-T4`` (``decode_law="dE"``, ``|I| d/E``, from a secondary summary) or ``IF-R3``
(``decode_law="lipschitz"``, ``|I| d``, the digest's sensitivity variant), the composition rule
(max exponent) from ``IF-R4``. The calculus itself is the digest's reconstruction [DER]: the
paper's text was not available.

>>> p = predict_rate(Arch((1,)), make_task("kth", k=2))
>>> p.depends_on_T, p.dominant.kind
(True, 'decode')
>>> p = predict_rate(Arch((1, 1), pos_enc=True), make_task("kth", k=2))
>>> p.alpha, p.depends_on_T, p.dominant.kind
(1, False, 'readout')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .catalogue import claim
from .errors import ConfigError, InvalidValueError, UnknownSymbolError, did_you_mean
from .parse import to_number

__all__ = [
    "Argmax",
    "Fixed",
    "Global",
    "Readout",
    "Task",
    "Arch",
    "Block",
    "Step",
    "Placement",
    "Fallback",
    "Prediction",
    "DecodeLaw",
    "DECODE_LAWS",
    "MODES",
    "TASKS",
    "make_task",
    "parse_heads",
    "parse_task_args",
    "predict_rate",
    "info_table",
    "T",
    "d",
    "E",
]

# the catalogue's symbols (sympy symbols with the same name and assumptions are equal)
T = claim("IF-R1").symbol("T")
d = claim("IF-T4").symbol("d")
E = claim("IF-T4").symbol("E")

#: the propagation modes and the catalogue law charged for each (digest §5.2 table)
MODES: dict[str, str] = {
    "MPR": "max-position retrieval: one head attends to the argmax of its score; cost "
    "IF-R1 N_mpr (no ε-growing parameters, β is free); adds one decoupled item",
    "SPA": "specific-position aggregation (needs positional encoding): one head averages a "
    "fixed set P; free (IF-R1) when the consumer needs only the mixture, else decoded with "
    "|I| = |P|",
    "GIA": "global information aggregation: all T positions in one coupled block "
    "(IF-R1 I_global), decoded with |I| = T by the decode law",
    "residual": "the residual stream keeps I(q, l-1) in I(q, l); cost IF-R1 N_residual",
}

QUERIES = ("cls", "tokens", "last")

#: the symbols a prediction's exponent can hold, by name (each a positive integer)
_SYMBOLS: dict[str, sp.Symbol] = {"T": T, "d": d, "E": E}
_SYMBOL_TEXT = {"T": "the sequence length", "d": "the token dimension", "E": "the width"}


def _symbol_value(name: str, value: Any, *, keep_symbol: bool = False) -> sp.Expr:
    """A caller's value for the catalogue symbol ``name`` (T, d or E: positive integers).

    Strings are read by :func:`approxtheory.parse.to_number` (parsed, never evaluated); ints,
    sympy Integers and the like are converted exactly. With ``keep_symbol`` the catalogue symbol
    itself is accepted (an architecture whose width stays symbolic)."""
    sym = _SYMBOLS[name]
    allowed = f"a positive integer ({_SYMBOL_TEXT[name]})"
    if keep_symbol:
        if isinstance(value, sp.Symbol) and value == sym:  # same name and assumptions
            return sym
        allowed += f", or the catalogue symbol approxtheory.infoflow.{name}"
    if isinstance(value, sp.Basic) and not value.is_number:
        raise InvalidValueError(
            f"{name} must be {allowed} (got the expression {sp.sstr(value)[:60]!r})"
        )
    v = to_number(value, name)
    if not (v.is_Integer and v > 0):
        raise InvalidValueError(f"{name} must be {allowed} (got {name}={sp.sstr(v)[:60]})")
    return v


def _as_sympy(value: Any, what: str) -> sp.Expr:
    """An internal value (a sympy expression, or a number such as a :class:`DecodeLaw`'s
    exponent) as a sympy expression. A string is refused, never parsed."""
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, str):
        raise ConfigError(
            f"{what} must be a sympy expression or a number, not a string (got {value[:60]!r})"
        )
    return to_number(value, what)


# ------------------------------------------------------------------------------- cost laws


def _law_exponent(cid: str, expr: str, **values: Any) -> sp.Expr:
    """The exponent a of the catalogue law ``cid``/``expr`` read as N ∝ ε^{-a}, with
    ``values`` (symbol name -> value or sympy expression) substituted. A law without ε (a
    constant count) has exponent 0."""
    c = claim(cid)
    e = c.expr(expr)
    if not any(s.name == "epsilon" for s in e.free_symbols):
        return sp.Integer(0)
    a = -c.exponent("epsilon", expr)
    subs = {c.symbol(k): _as_sympy(v, f"{cid} {expr}: {k}") for k, v in values.items()}
    return sp.simplify(a.subs(subs))


@dataclass(frozen=True)
class DecodeLaw:
    """The cost exponent of decoding a coupled block of ``size`` positions (digest IF-T4).

    ``exponent(size, d, E)`` returns a sympy expression; ``source`` names the catalogue claim
    and expression it reads, ``provenance`` that claim's label."""

    name: str
    exponent: Callable[[Any, Any, Any], sp.Expr]
    source: str
    provenance: str


def _catalogue_decode(name: str, cid: str) -> DecodeLaw:
    def exponent(size, d_, E_):
        values = {"I_size": size, "d": d_}
        if "E" in claim(cid).symbols:
            values["E"] = E_
        return _law_exponent(cid, "N_decode", **values)

    return DecodeLaw(name, exponent, f"{cid} N_decode", claim(cid).provenance)


#: the decode laws (the digest marks the exponent uncertain, its ambiguity 4)
DECODE_LAWS: dict[str, DecodeLaw] = {
    "dE": _catalogue_decode("dE", "IF-T4"),
    "lipschitz": _catalogue_decode("lipschitz", "IF-R3"),
}


def _map_exponent(m: int) -> tuple[sp.Expr, str]:
    """Cost of an FFN map of ``m`` decoupled Lipschitz scalars (m = 0: an exact map)."""
    if m == 0:
        return _law_exponent("IF-R2", "N_exact"), "IF-R2 N_exact"
    return _law_exponent("IF-R2", "N_lipschitz", m=m), f"IF-R2 N_lipschitz (m={m})"


# ------------------------------------------------------------------------ retrieval programs


@dataclass(frozen=True)
class Argmax:
    """Max-position retrieval: each query position (``"cls"``, every token ``"tokens"``, or the
    ``"last"`` token) retrieves the value at the argmax of a score.

    ``order`` is the number of distinct input positions the score couples (1: the key's content
    only; 2: query and key, e.g. x(s)ᵀAx(t)); a head's score is bilinear in the query's and
    the key's states, so order 2 needs a token query and order >= 3 cannot be one head.
    ``inputs`` are the nodes whose results the score or value reads; ``exclude_self`` needs
    positional encoding (-M<p_t, p_s>); ``ffn_vars`` is the number of Lipschitz scalar inputs
    of the FFN map applied to the retrieved item (0: exact, e.g. min, a product gate)."""

    name: str
    query: str
    order: int = 1
    inputs: tuple[str, ...] = ()
    exclude_self: bool = False
    ffn_vars: int = 0
    note: str = ""


@dataclass(frozen=True)
class Fixed:
    """Specific-position aggregation: the query averages a fixed set of positions (needs
    positional encoding). ``positions`` is a label (``"{1,2,3}"``, ``"t-1"``) and ``size`` its
    number of positions; ``mixture_only`` when the consumer needs only the average."""

    name: str
    query: str
    positions: str
    size: int
    mixture_only: bool = True
    inputs: tuple[str, ...] = ()
    ffn_vars: int = 0
    note: str = ""


@dataclass(frozen=True)
class Global:
    """A symmetric function of all tokens that is not a chain of argmaxes (e.g. TASK-TRI's inner
    min over pairs, order 3): only global aggregation computes it."""

    name: str
    query: str
    order: int
    inputs: tuple[str, ...] = ()
    note: str = ""


Node = Argmax | Fixed | Global


@dataclass(frozen=True)
class Readout:
    """The final map at the read-out position: a Lipschitz function of ``lipschitz_vars``
    decoupled scalars (0: exactly representable, e.g. a sum or the retrieved value itself)."""

    inputs: tuple[str, ...]
    lipschitz_vars: int = 0
    what: str = ""


@dataclass(frozen=True)
class Task:
    """A target as a retrieval program (digest §5.2)."""

    name: str
    description: str
    nodes: tuple[Node, ...]
    readout: Readout
    source: str = ""
    args: tuple[tuple[str, int], ...] = ()
    #: what the program's predicted rate does not cover (shown with every prediction)
    caveat: str = ""

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)


@dataclass(frozen=True)
class Arch:
    """Head counts per layer, positional encoding, token dimension ``d`` and width ``E``.

    ``d`` and ``E`` are the catalogue's symbols unless given; a given value must be a positive
    integer (an int, a sympy Integer or a string such as ``"64"``, read by
    :mod:`approxtheory.parse`, never evaluated); anything else raises
    :class:`~approxtheory.errors.InvalidValueError`."""

    heads: tuple[int, ...]
    pos_enc: bool = False
    d: Any = d
    E: Any = E

    def __post_init__(self):
        heads = tuple(self.heads)
        if not heads:
            raise ConfigError("an architecture needs at least one layer; allowed: heads >= 1 each")
        bad = [h for h in heads if not isinstance(h, int) or isinstance(h, bool) or h < 1]
        if bad:
            raise ConfigError(
                f"head counts must be integers >= 1 (got {bad[0]!r}); allowed: heads >= 1 per "
                "layer, e.g. 1,1"
            )
        object.__setattr__(self, "heads", heads)
        object.__setattr__(self, "d", _symbol_value("d", self.d, keep_symbol=True))
        object.__setattr__(self, "E", _symbol_value("E", self.E, keep_symbol=True))

    @property
    def layers(self) -> int:
        return len(self.heads)

    def label(self) -> str:
        return f"({', '.join(map(str, self.heads))}){' + PE' if self.pos_enc else ''}"


# ------------------------------------------------------------------------------ the record


@dataclass(frozen=True)
class Block:
    """One block of an information set: ``items`` (position labels) and whether they are
    coupled in one head's mixture (``size`` positions) or decoupled."""

    items: str
    size: Any
    coupled: bool
    source: str

    def to_dict(self) -> dict:
        return {
            "items": self.items,
            "size": str(self.size),
            "coupled": self.coupled,
            "source": self.source,
        }


@dataclass(frozen=True)
class Placement:
    node: str
    layer: int
    head: int | None  # None: a GIA fallback sharing (and so coupling) a head
    mode: str
    query: str


@dataclass(frozen=True)
class Fallback:
    node: str
    layer: int
    reason: str


@dataclass(frozen=True)
class Step:
    """One charged step: ``kind`` is ``attention``, ``ffn``, ``decode`` or ``readout``."""

    kind: str
    layer: int
    node: str
    mode: str
    exponent: sp.Expr
    law: str
    detail: str = ""

    def describe(self) -> str:
        where = f"layer {self.layer}" if self.layer else "read-out"
        return f"{self.kind} {self.node} ({self.mode}, {where}): ε^-({self.exponent}) by {self.law}"

    def to_dict(self) -> dict:
        return {**vars(self), "exponent": str(self.exponent), "describe": self.describe()}


@dataclass(frozen=True)
class Prediction:
    """What :func:`predict_rate` returns: ``N(ε) ~ ε^{-alpha}``."""

    arch: Arch
    task: Task
    alpha: sp.Expr
    depends_on_T: bool
    schedule: tuple[Placement, ...]
    fallbacks: tuple[Fallback, ...]
    steps: tuple[Step, ...]
    dominant: Step
    info: tuple[dict[str, tuple[Block, ...]], ...]
    decode_law: str
    provenance: dict[str, str] = field(default_factory=dict)

    def alpha_at(self, **values: Any) -> sp.Expr:
        """``alpha`` with values for T, d, E substituted (names).

        Each value must be a positive integer (an int, a sympy Integer or a string such as
        ``"64"``, read by :mod:`approxtheory.parse`, never evaluated): another name raises
        :class:`~approxtheory.errors.UnknownSymbolError`, a value outside the symbol's domain
        (``T=-5``, ``T=2.5``, ``T=True``) :class:`~approxtheory.errors.InvalidValueError`."""
        subs = {}
        for k, v in values.items():
            if k not in _SYMBOLS:
                raise UnknownSymbolError(
                    f"alpha_at has no symbol {k!r}{did_you_mean(k, _SYMBOLS, ignore_case=True)}; "
                    f"allowed: {', '.join(_SYMBOLS)} (positive integers)"
                )
            subs[_SYMBOLS[k]] = _symbol_value(k, v)
        return sp.simplify(self.alpha.subs(subs))

    def to_dict(self) -> dict:
        return {
            "task": self.task.name,
            "task_args": dict(self.task.args),
            "arch": {"heads": list(self.arch.heads), "pos_enc": self.arch.pos_enc},
            "alpha": str(self.alpha),
            "rate": f"N(eps) ~ eps^-({self.alpha})",
            "depends_on_T": self.depends_on_T,
            "dominant": self.dominant.to_dict(),
            "schedule": [p.__dict__ for p in self.schedule],
            "fallbacks": [f.__dict__ for f in self.fallbacks],
            "steps": [s.to_dict() for s in self.steps],
            "info": [
                {pos: [b.to_dict() for b in blocks] for pos, blocks in layer.items()}
                for layer in self.info
            ],
            "decode_law": self.decode_law,
            "provenance": dict(self.provenance),
        }


# ------------------------------------------------------------------------------ the tasks


@dataclass(frozen=True)
class TaskSpec:
    build: Callable[..., Task]
    params: dict[str, tuple[int, int | None, int]]  # name -> (min, max or None, default)
    description: str


def _gdr(D: int) -> Task:
    nodes = tuple(
        Argmax(f"min_f{i}", "cls", order=1, note=f"argmin_s f_{i}(x(s)), value f_{i}")
        for i in range(1, D + 1)
    )
    return Task(
        "gdr",
        "generalized D-retrieval F_0(min_s f_1(x(s)), ..., min_s f_D(x(s)))",
        nodes,
        Readout(tuple(n.name for n in nodes), lipschitz_vars=D, what="Lipschitz F_0 of D values"),
        source="digest §2.1 ([P]); W1, W2",
        args=(("D", D),),
    )


def _pmax(D: int) -> Task:
    nodes: list[Node] = []
    for i in range(1, D + 1):
        nodes.append(
            Argmax(
                f"pair{i}",
                "tokens",
                order=2,
                note=f"r_{i}(t) = x(argmax_s x(s)ᵀA_{i}x(t)); FFN u_{i}(t) = r_{i}ᵀA_{i}x(t) "
                "(bilinear, O(d² log 1/ε) units: exponent 0)",
            )
        )
        nodes.append(Argmax(f"max{i}", "cls", order=1, inputs=(f"pair{i}",), note=f"max_t u_{i}"))
    return Task(
        "pmax",
        "TASK-PMAX(D): Σ_i max_{s,t} x(s)ᵀ A_i x(t)",
        tuple(nodes),
        Readout(tuple(f"max{i}" for i in range(1, D + 1)), 0, "sum over i (linear)"),
        source="digest §2.2, §4.2; W3, W4, W5",
        args=(("D", D),),
    )


def _kth(k: int) -> Task:
    if k == 1:
        nodes: tuple[Node, ...] = (Argmax("top", "cls", order=1, note="max_s g(x(s))"),)
    elif k >= 3:
        # ours [DER], not in the sources (the digest gives programs for k <= 2 only): a chain at
        # CLS; retrieval j takes the argmax of g over the positions not retrieved before it
        # (score β g_s - M Σ_{i<j} <p_{s_i}, p_s>, the retrieved positions carried in CLS's
        # state: needs positional encoding like §4.1's self-exclusion); the k-th is the target
        nodes = tuple(
            Argmax(
                "top" if j == k else f"rank{j}",
                "cls",
                order=1,
                inputs=(f"rank{j - 1}",) if j > 1 else (),
                exclude_self=j > 1,
                note=f"rank {j}: argmax over the positions other than ranks 1..{j - 1} "
                "(-M Σ <p_{s_i}, p_s>; ours)"
                if j > 1
                else "max_s g(x(s)) and its position",
            )
            for j in range(1, k + 1)
        )
    else:
        nodes = (
            Argmax(
                "max_other",
                "tokens",
                order=1,
                exclude_self=True,
                note="m_{-t} = max_{s≠t} g_s; FFN v_t = min(g_t, m_{-t}) (exact)",
            ),
            Argmax("top", "cls", order=1, inputs=("max_other",), note="max_t v_t = 2nd largest"),
        )
    return Task(
        "kth",
        f"TASK-KTH({k}): f(the {k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k, 'th') } largest of g(x(s)))",
        nodes,
        Readout(("top",), 1, "Lipschitz f of one value"),
        source="digest §2.5, §4.1; W6, W7" if k <= 2 else "digest §2.5; the k >= 3 chain is ours",
        args=(("k", k),),
        caveat=""
        if k <= 2
        else "the k >= 3 chain retrieves positions, not scores: where scores tie (or lie within "
        "about 1/β) a retrieved position is a mixture and the exclusion removes the wrong tokens, "
        "so its ε^-1 holds only on inputs whose k largest scores are separated; over all inputs "
        "(sup norm) the chain is no approximation at any β (digest IF-T2: retrieving a value "
        "other than the score is discontinuous at ties; §4.1's k = 2 program avoids it); no "
        "tie-robust program for k >= 3 is known here",
    )


def _ind() -> Task:
    return Task(
        "ind",
        "TASK-IND: x(s+1) where x(s) = x(T) (induction head)",
        (
            Fixed("prev", "tokens", "t-1", 1, note="each token copies its predecessor"),
            Argmax(
                "match",
                "last",
                order=2,
                inputs=("prev",),
                note="the last token matches x(T) against x(s-1), value x(s)",
            ),
        ),
        Readout(("match",), 0, "the retrieved token"),
        source="digest §2.7 (Sanford et al.); W8, W9",
    )


def _tri() -> Task:
    return Task(
        "tri",
        "TASK-TRI: min_{t1,t2,t3} ‖x(t1) + x(t2) + x(t3)‖",
        (
            Global("inner", "tokens", order=3, note="min_{t2,t3} ‖x(t1)+x(t2)+x(t3)‖ per t1"),
            Argmax("outer", "cls", order=1, inputs=("inner",), note="min over t1"),
        ),
        Readout(("outer",), 0, "the minimum itself"),
        source="digest §2.3; W10",
    )


def _spa(p: int) -> Task:
    label = "{" + ",".join(str(i) for i in range(1, p + 1)) + "}"
    return Task(
        "spa",
        f"TASK-SPA: x(1) + ... + x({p}) (= {p} x the average over {label})",
        (Fixed("first", "cls", label, p, mixture_only=True, note="average of the positions"),),
        Readout(("first",), 0, f"{p} x the average (linear)"),
        source="digest §2.4, §6.4; W11",
        args=(("p", p),),
    )


TASKS: dict[str, TaskSpec] = {
    # upper limits keep the calculus (one node per retrieval or position) to seconds: the cost
    # grows with D and p (D = 256 takes about 5 s; D = 1e5 did not finish)
    "gdr": TaskSpec(_gdr, {"D": (1, 256, 2)}, "generalized D-retrieval (HC's task)"),
    "pmax": TaskSpec(_pmax, {"D": (1, 256, 1)}, "Σ_i max over pairs x(s)ᵀA_i x(t)"),
    "kth": TaskSpec(
        _kth, {"k": (1, 64, 2)}, "k-th largest score (k >= 3: a CLS exclusion chain, ours)"
    ),
    "ind": TaskSpec(_ind, {}, "induction head"),
    "tri": TaskSpec(_tri, {}, "triangle-center (order-3 comparison)"),
    "spa": TaskSpec(_spa, {"p": (1, 1024, 3)}, "sum of the first p tokens"),
}


def _range(lo: int, hi: int | None) -> str:
    return f"{lo}..{hi}" if hi is not None else f">= {lo}"


def make_task(name: str, **args: Any) -> Task:
    """The task ``name`` of :data:`TASKS` with its integer arguments (ranges checked)."""
    key = str(name).lower()
    if key not in TASKS:
        raise ConfigError(
            f"unknown task {name!r}{did_you_mean(key, TASKS)}; allowed: {', '.join(TASKS)}"
        )
    spec = TASKS[key]
    values = {p: default for p, (_, _, default) in spec.params.items()}
    for k, v in args.items():
        if k not in spec.params:
            allowed = ", ".join(spec.params) or "none"
            raise ConfigError(f"task {key} has no argument {k!r}; allowed: {allowed}")
        lo, hi, _ = spec.params[k]
        txt = str(v).strip()
        if isinstance(v, int) and not isinstance(v, bool):
            iv: int | None = v
        elif txt.isascii() and txt.lstrip("+-").isdigit():  # no "1_0", no non-ASCII digits
            iv = int(txt, 10)
        else:
            iv = None
        if iv is None or isinstance(v, bool) or iv < lo or (hi is not None and iv > hi):
            raise ConfigError(f"task {key}: {k} must be an integer {_range(lo, hi)} (got {v!r})")
        values[k] = iv
    return spec.build(**values)


def parse_task_args(items: list[str] | None) -> dict[str, str]:
    """``["k=2", "D=3"]`` -> ``{"k": "2", "D": "3"}``."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip() or not val.strip():
            raise ConfigError(f"a task argument must be NAME=VALUE (got {item!r}); e.g. k=2")
        if key.strip() in out:
            raise ConfigError(f"task argument {key.strip()!r} given twice; give it once")
        out[key.strip()] = val.strip()
    return out


def parse_heads(text: str) -> tuple[int, ...]:
    """``"2,1"`` -> ``(2, 1)``: head counts per layer, each an integer >= 1."""
    parts = [p.strip() for p in str(text).split(",")]
    if not str(text).strip() or any(not p for p in parts):
        raise ConfigError(
            f"--heads must be a comma-separated list of head counts (got {text!r}); allowed: "
            "integers >= 1, one per layer, e.g. 1,1"
        )
    out = []
    for p in parts:
        try:
            h = int(p, 10)
        except ValueError:
            raise ConfigError(
                f"--heads: {p!r} is not an integer; allowed: integers >= 1, one per layer, e.g. 1,1"
            ) from None
        if h < 1:
            raise ConfigError(
                f"--heads: a head count must be >= 1 (got {h}); allowed: integers >= 1, one per "
                "layer, e.g. 1,1"
            )
        out.append(h)
    return tuple(out)


# ------------------------------------------------------------------------- the calculus


def _unrealisable(node: Node, arch: Arch) -> str | None:
    """Why ``node`` cannot be one head's retrieval in ``arch`` (None: it can)."""
    if isinstance(node, Global):
        return f"a global function of order {node.order}: no chain of argmaxes computes it"
    if isinstance(node, Fixed):
        return None if arch.pos_enc else "fixed positions need positional encoding"
    if node.order >= 3:
        return f"a score of order {node.order}: a head's score couples at most 2 positions"
    if node.order == 2 and node.query == "cls":
        return "a pairwise score needs a token query (CLS holds no token content)"
    if node.exclude_self and not arch.pos_enc:
        return (
            "excluding the query's own position (or positions retrieved before) needs "
            "positional encoding"
        )
    return None


def _chain_length(task: Task) -> dict[str, int]:
    """Longest chain from each node to the read-out (Hu's priority)."""
    users: dict[str, list[str]] = {n.name: [] for n in task.nodes}
    for n in task.nodes:
        for i in n.inputs:
            users[i].append(n.name)
    memo: dict[str, int] = {}

    def length(name: str) -> int:
        if name not in memo:
            memo[name] = 1 + max((length(u) for u in users[name]), default=0)
        return memo[name]

    return {n.name: length(n.name) for n in task.nodes}


def _schedule(task: Task, arch: Arch) -> tuple[list[Placement], list[Fallback]]:
    prio = _chain_length(task)
    order = {n.name: i for i, n in enumerate(task.nodes)}
    done: dict[str, int] = {}  # node -> the layer after which its result is available
    placements: list[Placement] = []
    fallbacks: list[Fallback] = []
    pending = [n.name for n in task.nodes]
    for layer, heads in enumerate(arch.heads, start=1):
        ready = [
            n for n in pending if all(i in done and done[i] < layer for i in task.node(n).inputs)
        ]
        for name in [n for n in ready if _unrealisable(task.node(n), arch)]:
            node = task.node(name)
            reason = _unrealisable(node, arch) or ""
            placements.append(Placement(name, layer, None, "GIA", node.query))
            fallbacks.append(Fallback(name, layer, reason))
            done[name] = layer
            pending.remove(name)
        ready = sorted((n for n in ready if n in pending), key=lambda n: (-prio[n], order[n]))
        for head, name in enumerate(ready[:heads], start=1):
            node = task.node(name)
            mode = "SPA" if isinstance(node, Fixed) else "MPR"
            placements.append(Placement(name, layer, head, mode, node.query))
            done[name] = layer
            pending.remove(name)
    # what is left found no (layer, head) slot: global aggregation where it is needed
    for name in sorted(pending, key=lambda n: order[n]):
        node = task.node(name)
        after = max((done[i] for i in node.inputs), default=0)
        layer = min(arch.layers, after + 1)
        why = _unrealisable(node, arch)
        if why is None:
            why = (
                "no free head: every head of the layers after its inputs serves another "
                "retrieval (a head serving two retrievals mixes them)"
                if after < arch.layers
                else f"too few layers: its inputs are ready only after layer {after}"
            )
        placements.append(Placement(name, layer, None, "GIA", node.query))
        fallbacks.append(Fallback(name, layer, why))
        done[name] = layer
    placements.sort(key=lambda p: (p.layer, p.head or 0, order[p.node]))
    return placements, fallbacks


def _positions(task: Task) -> list[str]:
    used = {n.query for n in task.nodes}
    out = ["CLS", "t"]
    if "last" in used:
        out.append("T")
    return out


def _receives(query: str, position: str) -> bool:
    return (
        (query == "cls" and position == "CLS")
        or (query == "tokens" and position in ("t", "T"))
        or (query == "last" and position == "T")
    )


def _information(task: Task, arch: Arch, placements: list[Placement]):
    positions = _positions(task)
    own = {"CLS": (), "t": (Block("t", 1, False, "token"),), "T": (Block("T", 1, False, "token"),)}
    layers: list[dict[str, tuple[Block, ...]]] = [{p: own[p] for p in positions}]
    for layer in range(1, arch.layers + 1):
        cur = {p: tuple(layers[-1][p]) for p in positions}  # the residual keeps everything
        for pl in (p for p in placements if p.layer == layer):
            node = task.node(pl.node)
            if pl.mode == "GIA":
                blk = Block("1..T", T, True, f"{pl.node} (GIA)")
            elif isinstance(node, Fixed):
                blk = Block(node.positions, node.size, node.size > 1, f"{pl.node} (SPA)")
            else:
                q = {"cls": "CLS", "tokens": "t", "last": "T"}[node.query]
                blk = Block(f"s*_{pl.node}({q})", 1, False, f"{pl.node} (MPR)")
            for p in positions:
                if _receives(pl.query, p):
                    here = blk
                    if isinstance(node, Fixed) and p == "T" and blk.items.startswith("t"):
                        # a relative position (t-1) read at the last token
                        here = Block("T" + blk.items[1:], blk.size, blk.coupled, blk.source)
                    cur[p] = cur[p] + (here,)
        layers.append(cur)
    return tuple(layers)


def _dominance_key(e: sp.Expr) -> tuple[bool, float]:
    """Order steps as ε -> 0 and T grows: a T-dependent exponent first, then the value at a
    reference point (T = 10^6, d = E = 1 where they are symbols)."""
    ref = e.subs({T: 10**6, d: 1, E: 1})
    try:
        val = float(ref)
    except TypeError:
        val = float("inf")
    return (bool(e.has(T)), val)


def predict_rate(arch: Arch, task: Task, decode_law: str | DecodeLaw = "dE") -> Prediction:
    """The InfoFlow prediction ``N(ε) ~ ε^{-alpha}`` for ``task`` on ``arch``.

    ``decode_law`` is ``"dE"`` (IF-T4's |I|d/E, [Q2]), ``"lipschitz"`` (IF-R3's |I|d, the
    digest's sensitivity variant) or a :class:`DecodeLaw`."""
    law = _decode_law(decode_law)
    placements, fallbacks = _schedule(task, arch)
    steps = _steps(arch, task, law, placements, {f.node for f in fallbacks})
    alpha = sp.Max(*[s.exponent for s in steps])  # IF-R4: the worst step dominates
    # the dominant step: the largest exponent, the latest such step on ties
    best = max(range(len(steps)), key=lambda i: (_dominance_key(steps[i].exponent), i))
    provenance = {
        "calculus": "digest §5.2 reconstruction [DER] (the paper's text was not available)",
        "decode_law": f"{law.name}: {law.source} ({law.provenance})",
        **{cid: claim(cid).provenance for cid in ("IF-R1", "IF-R2", "IF-R4")},
        **({"caveat": task.caveat} if task.caveat else {}),
    }
    return Prediction(
        arch=arch,
        task=task,
        alpha=alpha,
        depends_on_T=bool(alpha.has(T)),
        schedule=tuple(placements),
        fallbacks=tuple(fallbacks),
        steps=tuple(steps),
        dominant=steps[best],
        info=_information(task, arch, placements),
        decode_law=law.name,
        provenance=provenance,
    )


def _decode_law(decode_law: str | DecodeLaw) -> DecodeLaw:
    """The decode law by its name in :data:`DECODE_LAWS` (ConfigError naming them), or as given."""
    if isinstance(decode_law, str):
        if decode_law not in DECODE_LAWS:
            raise ConfigError(
                f"unknown decode law {decode_law!r}; allowed: {', '.join(DECODE_LAWS)}"
            )
        return DECODE_LAWS[decode_law]
    return decode_law


def _steps(arch: Arch, task: Task, law: DecodeLaw, placements, fell: set) -> list[Step]:
    """The cost steps of the schedule in order: per placed node its attention, decode and FFN
    steps (a node in ``fell`` falls back to global pooling and a decode), then the read-out."""
    steps: list[Step] = []
    zero = _law_exponent("IF-R1", "N_mpr")
    gia_size = claim("IF-R1").expr("I_global")
    for pl in placements:
        node = task.node(pl.node)
        if pl.node in fell:
            steps += _fallback_steps(pl, zero, law, gia_size, arch)
            continue
        if isinstance(node, Fixed) and node.size > 1 and not node.mixture_only:
            steps.append(
                Step(
                    "decode",
                    pl.layer,
                    pl.node,
                    "SPA",
                    _as_sympy(law.exponent(node.size, arch.d, arch.E), f"decode law {law.name}"),
                    f"{law.source} with |I| = |P| = {node.size}",
                )
            )
        else:
            steps.append(Step("attention", pl.layer, pl.node, pl.mode, zero, "IF-R1 N_mpr"))
        if not isinstance(node, Global):
            a, src = _map_exponent(node.ffn_vars)
            steps.append(Step("ffn", pl.layer, pl.node, pl.mode, a, src, node.note))
    a, src = _map_exponent(task.readout.lipschitz_vars)
    steps.append(Step("readout", 0, "readout", "FFN", a, src, task.readout.what))
    return steps


def _fallback_steps(pl, zero, law: DecodeLaw, gia_size, arch: Arch) -> list[Step]:
    """A node that falls back to global pooling: free pooling, then a decode of the item from
    a block coupling all T positions (|I| = IF-R1's I_global)."""
    return [
        Step(
            "attention",
            pl.layer,
            pl.node,
            "GIA",
            zero,
            "IF-R1 N_mpr",
            "pooling (free; the cost is the decode)",
        ),
        Step(
            "decode",
            pl.layer,
            pl.node,
            "GIA",
            _as_sympy(law.exponent(gia_size, arch.d, arch.E), f"decode law {law.name}"),
            f"{law.source} with |I| = IF-R1 I_global",
            "the FFN decodes the item from a block coupling all T positions",
        ),
    ]


def info_table(p: Prediction) -> list[tuple[int, str, str]]:
    """(layer, position, blocks) rows: coupled blocks in brackets with their size."""
    rows = []
    for layer, sets in enumerate(p.info):
        for pos, blocks in sets.items():
            txt = (
                ", ".join(f"[{b.items}]x{b.size}" if b.coupled else b.items for b in blocks) or "∅"
            )
            rows.append((layer, pos, txt))
    return rows
