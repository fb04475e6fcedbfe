"""Fuzzing harness: Hypothesis draws CLI argument lists and API calls from a
grammar of valid and invalid values and checks one property for every one of them.

The CLI property (:func:`check_cli`), for ``approxtheory.cli.main(argv)`` run in-process in a
fresh sandbox directory (the working directory, so that relative writes land there):

* exit 0 or 2 (1 only for ``docs --check`` finding a stale page, and for ``verify`` when a check
  crashed or ``--fail-on refuted`` matched); ``--help``/``--version`` may exit 0 via SystemExit;
* no traceback on stdout or stderr, no ``internal error``; on exit 2 exactly one stderr line,
  ``approxtheory: error: ...`` (a Python warning would be a second line in a real process);
* stdout is written as a real UTF-8 stream (strict), stderr as ``backslashreplace``;
* bounded time and memory: ``SECONDS`` of CPU time per call (the process's, all threads;
  enforced with ``ITIMER_PROF``, so that a loaded machine, which stretches the wall clock but
  not the CPU time a call needs, cannot fail an example), a wall-clock guard of ``HANG_FACTOR``
  times that against a call blocked without using CPU (a FIFO read, a network wait: only a real
  hang reaches it), and ``RLIMIT_AS`` = the
  current size + ``HEADROOM``; work above ``APPROXTHEORY_MAX_BYTES=1G`` must be refused before
  allocating, so an ``out of memory`` exit is a failure unless the argv's ``--max-memory`` lifted
  that limit);
* no file written outside ``--out`` (or the command's default output): every write, mkdir,
  rename and removal is seen by an audit hook (:func:`sys.addaudithook`) and must lie under the
  output target (the interpreter's own ``__pycache__`` excepted); the sandbox is snapshotted
  before and after; device nodes and FIFOs given as paths keep their type (an atomic write must
  not replace them with a regular file); ``os.system``, a process spawn naming the injection
  marker, or compiling source that contains it fails the example, as does the marker file.

The API property (:func:`api_call`): the call returns normally or raises a subclass of
:class:`approxtheory.errors.ApproxTheoryError`, within ``SECONDS`` of CPU time (and the same
wall-clock hang guard).

The short runs (default suite) are derandomized and sized to take well under a minute together;
``pytest -m slow tests/test_fuzz.py`` runs the long ones (README, "Bad input": how many inputs
they tried and how long they took).
"""

from __future__ import annotations

import contextlib
import decimal
import fractions
import io
import math
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, Phase, assume, example, given, settings
from hypothesis import strategies as st

import approxtheory
from approxtheory import identifiability as idf
from approxtheory import resources
from approxtheory.cli import main
from approxtheory.errors import ApproxTheoryError

TOKEN = "FUZZMARK"  # in every injection payload; must never reach exec/compile
MARKER = os.path.join(tempfile.gettempdir(), f"approxtheory-{TOKEN}-{os.getpid()}")
SECONDS = 20.0  # CPU seconds per example (a few times what the slowest short example needs)
# the wall-clock guard against a call that blocks without using CPU: far above any normal run
HANG_FACTOR = 10
HEADROOM = 4 << 30  # RLIMIT_AS: current size + 4 GiB
LIMIT_BYTES = "1G"  # APPROXTHEORY_MAX_BYTES during the fuzz

SHORT = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "print_blob": False,
    "suppress_health_check": list(HealthCheck),
}
LONG = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}
if os.environ.get("APPROXTHEORY_FUZZ_PHASES"):
    # e.g. "generate": the drawn inputs only, no regression examples, no shrinking (how the
    # mutants that must turn this file red were checked)
    SHORT["phases"] = LONG["phases"] = [
        Phase[p.strip()] for p in os.environ["APPROXTHEORY_FUZZ_PHASES"].split(",")
    ]


# =========================================================================== the grammar: values
BIG_INTS = [0, -1, 10**6, 10**9, 10**12, 10**20, 2**63, -(2**63), 10**30, 10**400]
FLOAT_TEXT = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "-0.0",
    "0.0",
    "0.5",
    "1.5",
    "-1.5",
    "1e308",
    "1e-320",
    "1e999999999",
    "2.5E+4",
    "1e3",
    "1e-3",
]
JUNK_TEXT = [
    "",
    " ",
    "abc",
    "0x10",
    "1_000",
    "١٢",
    "½",
    "１２",
    "1,5",
    "+3",
    " 7 ",
    "\x00",
    "1\x00",
    "True",
    "None",
    "--",
    "-",
    "=",
    "--json",
    "-h",
    "9" * 5000,
    "é" * 300,
    "\u202e1",
    "\udcff",
    "10**10**10",
    "1/0",
    "\n",
    "1\n2",
]
HOSTILE = [
    f"__import__('os').system('touch {MARKER}')",
    f"__import__('os').system('touch {TOKEN}')",
    f'exec(\'open("{TOKEN}","w")\')',
    f"eval('{TOKEN}')",
    f"open('{TOKEN}','w')",
    f"(lambda: __import__('os').system('touch {TOKEN}'))()",
    "().__class__.__bases__[0].__subclasses__()",
    f"Symbol('{TOKEN}')",
    "10**10**10",
    "1e999999999",
    "1/0",
    "0**-1",
    "2^1000",
    "sqrt(-1)",
    "log(0)",
    "exp(1000)",
    "exp(exp(exp(10)))",
    "(" * 30 + "1" + ")" * 30,
    "(" * 500,
    "1" + "+1" * 150,
    "pi",
    "π",
    "e",
    "E",
    "oo",
    "zoo",
    "I",
    "1j",
    "x",
    "T",
    "Integer(5)",
    "S(1)/3",
    "3/4",
    "0.1",
    ".5",
    "3.",
    "-2^2",
    "2^-1",
    "2^3^2",
    "1e-1001",
    "٣",
    "𝟙",
    "1" * 201,
    "9" * 100,
    "0." + "0" * 300 + "1",
    "2**100",
    "10**30",
    "10**31",
    "sqrt(2)^100",
    "log(-1)",
    "--T=1",
    "1e",
    "e1",
    "..1",
    "1..",
    "2^^2",
    "2**",
    "()",
    "sqrt()",
    "sqrt(1,2)",
]
NUM_TEXT = st.one_of(
    st.integers(-3, 70).map(str),
    st.sampled_from(BIG_INTS).map(str),
    st.sampled_from(FLOAT_TEXT),
    st.floats().map(repr),
)
ANY_TEXT = st.one_of(NUM_TEXT, st.sampled_from(JUNK_TEXT), st.text(max_size=12))
VALUE_TEXT = st.one_of(ANY_TEXT, st.sampled_from(HOSTILE))

# paths, relative to the sandbox (the working directory); see Sandbox for the fixtures
OUT_PATHS = [
    "out",
    "out/nested/deeper",
    "new dir/with space",
    "existing.txt",
    "existing.txt/sub",
    "somedir",
    "nulldev",
    "fifo",
    "",
    " ",
    "/proc/approxtheory-fuzz/out",
    "a" * 300,
    "a\x00b",
    "\udcff",
    "-out",
]
READ_PATHS = [
    "corpus.txt",
    "existing.txt",
    "/dev/null",
    "fifo",
    "nulldev",
    "somedir",
    "nope.txt",
    "",
    "a\x00b",
    "/proc/version",
    "somedir/nope/deeper",
    "\udcff",
]
SIZES = ["1", "1K", "512M", "1G", "1.5T", "unlimited", "0", "-1", "lots", "1e3", "8 G", "", "nan"]


def _catalogue():
    cs = approxtheory.claims()
    return {c.id: c for c in cs}


CLAIMS = _catalogue()
CLAIM_IDS = sorted(CLAIMS)
FORMULA_IDS = sorted(i for i, c in CLAIMS.items() if c.has_formula)
PAPERS = sorted({c.paper for c in CLAIMS.values()}) + [
    "headcount",
    "infoflow",
    "prism",
    "tradeoffs",
    "identifiability",
]
KINDS = sorted({c.kind for c in CLAIMS.values()})
PROVENANCES = sorted({c.provenance for c in CLAIMS.values()})
JUNK_IDS = [
    "",
    "hc-t2b",
    "HC-T2",
    "HC-T2b ",
    "NOPE",
    "ID-T4.5\x00",
    "../../etc/passwd",
    TOKEN,
    "\udcff",
    "X" * 500,
]


def _constructions():
    from approxtheory.constructions import REGISTRY

    return {n: entry.knobs for n, entry in REGISTRY.items()}


CONSTRUCTIONS = _constructions()
# constructions whose measurement is quick with tiny knobs (the short run's valid `construct`s)
QUICK_CONSTRUCTIONS = {
    "hc_k2": {"T": [1, 2], "d": [1, 2]},
    "hc_l9": {"T": [1, 2], "eps": ["0.5", "1"]},
    "svd_truncation": {"T": [4, 5], "k": [0, 1], "F": [1], "r": [0, 1]},
    "hc_k1_synthetic": {"T": [1, 2], "D": [1], "d": [1], "h": [0, 1]},
}


def _experiments():
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)
    from approxtheory.experiment import all_experiments

    return all_experiments()


EXPERIMENTS = _experiments()


def opt(flag, values):
    """``[flag, value]``, ``[flag=value]``, or ``[flag]`` (a missing value)."""
    return st.one_of(
        values.map(lambda v: [flag, v]), values.map(lambda v: [f"{flag}={v}"]), st.just([flag])
    )


def assemble(prefix, groups, bad, max_groups=4):
    """``prefix`` + option groups in any order; ``bad`` (None, or a strategy of groups of which
    at least one is added) keeps work that would run long out of a run."""
    parts = st.lists(groups, max_size=max_groups)
    if bad is not None:
        parts = st.tuples(parts, st.lists(bad, min_size=1, max_size=2)).map(lambda t: t[0] + t[1])
    return st.tuples(
        st.just(prefix) if isinstance(prefix, list) else prefix, parts.flatmap(st.permutations)
    ).map(lambda t: list(t[0]) + [tok for g in t[1] for tok in g])


# ----------------------------------------------------------------------------- claims, docs
@st.composite
def claims_eval_argv(draw):
    cid = draw(
        st.one_of(
            st.sampled_from(FORMULA_IDS), st.sampled_from(CLAIM_IDS), st.sampled_from(JUNK_IDS)
        )
    )
    c = CLAIMS.get(cid)
    syms = sorted(c.symbols) if c is not None else []
    names = st.one_of(
        st.sampled_from(syms or ["T"]),
        st.sampled_from(
            ["", "x", "T ", " T", "__class__", "expr", "eps", "ε", "β", TOKEN, "a=b", "\x00"]
        ),
    )
    pairs = st.lists(
        st.one_of(
            st.tuples(names, VALUE_TEXT).map(lambda kv: f"{kv[0]}={kv[1]}"),
            st.sampled_from(["T", "=5", "T==5", "T=5=6", "T=", "=", "-T=5"]),
        ),
        max_size=6,
    )
    exprs = sorted(c.to_dict()["expressions"]) if c is not None and c.has_formula else []
    extra = draw(
        st.lists(
            st.one_of(
                st.just(["--json"]),
                opt(
                    "--expr", st.one_of(st.sampled_from(exprs or ["k"]), st.sampled_from(JUNK_TEXT))
                ),
            ),
            max_size=2,
        )
    )
    if draw(st.booleans()) and syms:  # a complete, plausible assignment now and then
        vals = [f"{s}={draw(st.one_of(st.integers(1, 64).map(str), NUM_TEXT))}" for s in syms]
    else:
        vals = draw(pairs)
    tokens = vals + [t for g in extra for t in g]
    return ["claims", "eval", cid] + draw(st.permutations(tokens))


CLAIMS_ARGV = st.one_of(
    assemble(
        ["claims", "list"],
        st.one_of(
            opt("--paper", st.one_of(st.sampled_from(PAPERS), ANY_TEXT)),
            opt("--kind", st.one_of(st.sampled_from(KINDS), ANY_TEXT)),
            opt("--provenance", st.one_of(st.sampled_from(PROVENANCES), ANY_TEXT)),
            st.just(["--json"]),
            st.sampled_from([["--bogus"], ["stray"], ["-h"]]),
        ),
        None,
    ),
    assemble(
        st.one_of(st.sampled_from(CLAIM_IDS), st.sampled_from(JUNK_IDS)).map(
            lambda i: ["claims", "show", i]
        ),
        st.sampled_from([["--latex"], ["--json"], ["--bogus"], ["extra"]]),
        None,
        max_groups=2,
    ),
    claims_eval_argv(),
    st.sampled_from(
        [
            ["claims"],
            ["claims", "nope"],
            ["claims", "show"],
            ["claims", "eval"],
            ["claims", "--json"],
            [],
            ["nope"],
            ["--bogus"],
            ["-"],
            [""],
            ["--version"],
            ["--help"],
            ["claims", "list", "--paper"],
        ]
    ),
)
DOCS_ARGV = st.one_of(
    opt(
        "--out",
        st.one_of(st.sampled_from(OUT_PATHS + ["page.md", "out/page.md", "/dev/null"]), ANY_TEXT),
    ).map(lambda g: ["docs", "--check"] + g),
    st.sampled_from([["docs", "--check"], ["docs", "--check", "--bogus"]]),
    opt(
        "--out",
        st.sampled_from(
            [
                "page.md",
                "out/deeper/page.md",
                "nulldev",
                "fifo",
                "somedir",
                "existing.txt/sub",
                "",
                "a\x00b",
                "/proc/approxtheory-fuzz/p.md",
            ]
        ),
    ).map(lambda g: ["docs"] + g),
)


# ------------------------------------------------------------------------------- construct
def knob_values(knob, huge: bool = True):
    """Valid-looking and invalid values of one construction knob, as text."""
    base = [str(knob.default), "abc", "", "nan", "inf", "-1", "0", "1e999999", "0x10", "\x00"]
    if knob.choices:
        base += list(knob.choices) + ["SPLIT", "none"]
    if knob.type is int:
        ints = st.integers(-2, 12).map(str)
        base += ["1.5", "2.0", "1e3"] + ([str(10**20), str(10**9), "9" * 5000] if huge else [])
        return st.one_of(ints, st.sampled_from(base))
    if knob.type is float:
        base += ["0.5", "1", "10", "1e308", "-0.0", "1e-320"] + (["1e20"] if huge else [])
        return st.one_of(st.sampled_from(base), st.floats(-1e3, 1e3).map(repr))
    return st.sampled_from(base + ["true", "sin", "identity"])


def knob_groups(name):
    spec = CONSTRUCTIONS.get(name, {})
    gs = [opt(f"--{k}", knob_values(v)) for k, v in spec.items()]
    gs += [
        opt(
            "--budget",
            st.one_of(
                st.integers(1, 64).map(str),
                st.sampled_from(["0", "-1", "abc", "1.5", "1e3", str(10**12), str(10**20)]),
            ),
        ),
        opt(
            "--seed",
            st.one_of(st.integers(0, 5).map(str), st.sampled_from(["-1", "abc", str(2**64)])),
        ),
        opt("--max-memory", st.sampled_from(SIZES)),
        st.just(["--json"]),
    ]
    return st.one_of(*gs)


# invalid wherever they stand (parsing stops at the first) ...
BAD_CONSTRUCT = st.sampled_from(
    [
        ["--nosuchknob", "1"],
        ["--budget", "0"],
        ["--budget", "-1"],
        ["--budget", "abc"],
        ["--budget", "1.5"],
        ["--seed", "-1"],
        ["--seed", "x"],
        ["--seed", str(2**64)],
        ["stray"],
        ["--max-memory", "lots"],
        ["--max-memory", "-1"],
        ["-x"],
        ["--=1"],
        ["--budget=0"],
    ]
)
# ... and valid but refused before measuring: these go last (the last value of an option wins)
REFUSED_CONSTRUCT = st.sampled_from(
    [["--max-memory", "1"], ["--budget", str(10**12)], ["--budget", str(10**20)], ["--T"]]
)


@st.composite
def construct_argv(draw, valid_runs=False):
    """``construct`` argv. With ``valid_runs=False`` every argv that names a construction carries
    an invalid option or a refusal (``--max-memory 1``, a huge budget), so nothing is measured."""
    shape = draw(st.sampled_from(["named"] * 6 + ["list", "help", "other"]))
    if shape == "list":
        return ["construct", "--list"] + draw(st.sampled_from([[], ["--json"], ["--bogus"]]))
    if shape == "other":
        return draw(
            st.sampled_from(
                [
                    ["construct"],
                    ["construct", "nope"],
                    ["construct", "hc_k"],
                    ["construct", "--json"],
                    ["construct", "", "--T", "1"],
                    ["construct", "-h"],
                    ["construct", "HC_K1"],
                    ["construct", TOKEN],
                ]
            )
        )
    name = draw(st.sampled_from(sorted(CONSTRUCTIONS)))
    if shape == "help":
        return ["construct", name, draw(st.sampled_from(["--help", "-h"]))]
    if valid_runs:
        return draw(assemble(["construct", name], knob_groups(name), None))
    if draw(st.booleans()):
        return draw(assemble(["construct", name], knob_groups(name), BAD_CONSTRUCT))
    return draw(assemble(["construct", name], knob_groups(name), None)) + draw(REFUSED_CONSTRUCT)


@st.composite
def quick_construct_argv(draw):
    """A valid, quick ``construct`` run: tiny knobs, budget 1..64."""
    name = draw(st.sampled_from(sorted(QUICK_CONSTRUCTIONS)))
    argv = ["construct", name]
    for k, vals in QUICK_CONSTRUCTIONS[name].items():
        argv += [f"--{k}", str(draw(st.sampled_from(vals)))]
    argv += ["--budget", str(draw(st.integers(1, 64))), "--seed", str(draw(st.integers(0, 3)))]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


# ------------------------------------------------------------------------ identifiability
def ident_argv(small=range(1, 9)):
    sizes = st.one_of(
        st.sampled_from(list(small)).map(str),
        st.sampled_from(["0", "-1", "abc", "1.5", "nan", str(10**6), str(10**20), "9" * 5000, ""]),
    )
    groups = st.one_of(
        opt("--E", sizes),
        opt("--H", sizes),
        opt("--G", sizes),
        st.sampled_from(
            [["--bias"], ["--causal"], ["--fat"], ["--no-output"], ["--json"], ["--bogus"]]
        ),
        opt(
            "--rope",
            st.sampled_from(
                [
                    "full",
                    "partial:2",
                    "partial:0",
                    "partial:-2",
                    "partial:x",
                    "partial:",
                    "repeated",
                    "bogus",
                    "",
                ]
            ),
        ),
        opt("--method", st.sampled_from(["auto", "dense", "structured", "bogus"])),
        opt("--seed", st.sampled_from(["0", "1", "-1", "abc", str(2**64)])),
        opt("--max-memory", st.sampled_from(SIZES)),
    )
    return assemble(["identifiability"], groups, None, max_groups=5)


# ------------------------------------------------------------------- experiment, verify, bench
def _set_values():
    from approxtheory.experiment import grid_values

    keys = sorted({k for e in EXPERIMENTS.values() for p in e.grids for k in grid_values(e, p)})
    kv = st.tuples(
        st.one_of(st.sampled_from(keys), st.sampled_from(["nosuch", "", " ", "seed"])), ANY_TEXT
    ).map(lambda t: f"{t[0]}={t[1]}")
    return st.one_of(kv, st.sampled_from(["steps", "=1", "T", "corpus=x"]))


EXP_GROUPS = st.one_of(
    opt("--profile", st.sampled_from(["quick", "full", "bogus"])),
    opt("--device", st.sampled_from(["cpu", "cuda", "tpu"])),
    opt("--out", st.sampled_from(OUT_PATHS)),
    opt("--corpus", st.sampled_from(READ_PATHS)),
    opt("--set", _set_values()),
    opt("--max-memory", st.sampled_from(SIZES)),
    st.sampled_from([["--quiet"], ["--bogus"]]),
)
EXP_BAD = st.one_of(
    st.sampled_from(
        [
            ["--set", "nosuch=1"],
            ["--set", "steps"],
            ["--set", "=1"],
            ["--profile", "bogus"],
            ["--device", "tpu"],
            ["--corpus", "nope.txt"],
            ["--corpus", "somedir"],
            ["--corpus", "fifo"],
            ["--max-memory", "lots"],
            ["--out", "existing.txt"],
            ["--out", "existing.txt/sub"],
            ["--bogus"],
            ["extra-positional"],
        ]
    )
)


@st.composite
def experiment_argv(draw):
    action = draw(st.sampled_from(["list", "run", "run", "plot", "bogus", ""]))
    name = draw(
        st.one_of(
            st.sampled_from(sorted(EXPERIMENTS)),
            st.sampled_from(["nope", "", TOKEN, "softmax_beta"]),
            st.none(),
        )
    )
    prefix = ["experiment", action] + ([] if name is None else [name])
    refusal = name == "identifiability_training" and draw(st.booleans())
    if action == "run" and name in EXPERIMENTS and not refusal:
        return draw(assemble(prefix, EXP_GROUPS, EXP_BAD))
    if refusal:  # valid options, refused before running: too little memory (given last)
        return draw(
            assemble(
                prefix, EXP_GROUPS.filter(lambda g: not g[0].startswith("--max-memory")), None, 2
            )
        ) + ["--max-memory", "1"]
    return draw(assemble(prefix, EXP_GROUPS, None))


VERIFY_GROUPS = st.one_of(
    opt("--profile", st.sampled_from(["quick", "full"])),
    st.lists(
        st.one_of(st.sampled_from(CLAIM_IDS), st.sampled_from(PAPERS)), min_size=1, max_size=3
    ).map(lambda ids: ["--only"] + ids),
    opt("--out", st.sampled_from(["out", "out/nested/deeper", "new dir/with space"])),
    st.just(["--fail-on", "refuted"]),
    opt("--seed", st.integers(0, 9).map(str)),
    st.sampled_from([["--no-cache"], ["--quiet"], ["--mutants"]]),
)
VERIFY_BAD = st.one_of(
    opt("--seed", st.sampled_from(["-1", "abc", "1.5", "", "nan"])),
    opt("--profile", st.sampled_from(["bogus", "", "QUICK"])),
    opt("--fail-on", st.sampled_from(["verified", "", "x"])),
    opt(
        "--out",
        st.sampled_from(
            [
                "existing.txt",
                "existing.txt/sub",
                "",
                " ",
                "nulldev",
                "fifo",
                "a" * 300 + "/x",
                "a\x00b",
            ]
        ),
    ),
    st.sampled_from([["--bogus"], ["stray"], ["--only"], ["-x"]]),
)
VERIFY_ARGV = assemble(["verify"], VERIFY_GROUPS, VERIFY_BAD)

BENCH_BAD = st.one_of(
    opt("--threads", st.sampled_from(["0", "-1", "abc", ""])),
    opt("--reps", st.sampled_from(["0", "-2"])),
    opt("--budget", st.sampled_from(["0", "x"])),
    opt("--seed", st.sampled_from(["-1", "x"])),
    opt("--dense-max-E", st.sampled_from(["-1", "x"])),
    opt("--profile", st.sampled_from(["bogus"])),
    st.sampled_from([["--bogus"], ["stray"]]),
)
BENCH_GROUPS = st.one_of(
    st.sampled_from([["--json"], ["--quick"], ["--no-upper"]]),
    opt("--threads", st.sampled_from(["1", "2"])),
    opt("--reps", st.sampled_from(["1"])),
    opt("--budget", st.sampled_from(["1", "64"])),
    opt("--seed", st.sampled_from(["0", "3"])),
    opt("--only", st.sampled_from(["hc_k2", "nope", ""])),
    opt("--dense-max-E", st.sampled_from(["0", "8"])),
    opt("--profile", st.sampled_from(["quick", "full"])),
)
BENCH_ARGV = st.one_of(
    st.sampled_from(["model", "verify", "search", "identifiability"]).flatmap(
        lambda w: assemble(["bench", w], BENCH_GROUPS, BENCH_BAD)
    ),
    st.sampled_from([["bench"], ["bench", "nope"], ["bench", "--json"], ["bench", "-h"]]),
)

# filesystem errors (ENAMETOOLONG, ENOENT under /proc, EACCES under /sys, ENOTDIR): OSError
# and special files (a device node, a FIFO)
FS_PATHS = st.one_of(
    st.sampled_from(
        [
            "a" * 300,
            "a" * 300 + "/x",
            "/proc/approxtheory-fuzz/x.md",
            "/proc/version",
            "/sys/approxtheory-fuzz.md",
            "existing.txt/sub/x.md",
            "somedir/" + "b" * 256 + "/x",
            "/proc/approxtheory\nfuzz/x.md",
            "/proc/a\u2028b/x",
        ]
    ),
    st.sampled_from(["nulldev", "fifo"]),
)
FS_ARGV = st.one_of(
    FS_PATHS.map(lambda p: ["docs", "--out", p]),
    FS_PATHS.map(lambda p: ["docs", "--check", "--out", p]),
    st.tuples(FS_PATHS, VERIFY_BAD).map(lambda t: ["verify", "--out", t[0]] + t[1]),
    st.tuples(
        st.sampled_from(["run", "plot"]),
        st.sampled_from(sorted(EXPERIMENTS)),
        FS_PATHS,
        st.sampled_from(["--out", "--corpus"]),
    ).map(lambda t: ["experiment", t[0], t[1], t[3], t[2], "--set", "nosuch=1"]),
)


@st.composite
def huge_argv(draw):
    """Valid requests for work far too big: each must be refused before allocating."""
    kind = draw(st.sampled_from(["identifiability", "construct", "construct", "experiment"]))
    big = str(draw(st.sampled_from([10**5, 10**6, 10**9, 10**20, 2**62])))
    if kind == "identifiability":
        return [
            "identifiability",
            "--E",
            big,
            "--H",
            draw(st.sampled_from(["1", "2", "4"])),
        ] + draw(
            st.sampled_from(
                [
                    [],
                    ["--method", "dense"],
                    ["--method", "structured"],
                    ["--bias"],
                    ["--fat"],
                    ["--no-output", "--H", "1"],
                ]
            )
        )
    if kind == "construct":
        name = draw(st.sampled_from(sorted(CONSTRUCTIONS)))
        ints = [k for k, v in CONSTRUCTIONS[name].items() if v.type is int and k != "seed"]
        # the default budget: with a small one, see test_open_late_refusal_small_budget
        return ["construct", name, f"--{draw(st.sampled_from(ints))}", big] + draw(
            st.sampled_from([[], ["--json"], ["--seed", "1"]])
        )
    key = draw(st.sampled_from(["E", "T", "batch", "steps", "H"]))
    return ["experiment", "run", "identifiability_training", "--set", f"{key}={big}", "--quiet"]


# everything the short run may execute (no real measurement, verify, experiment or benchmark);
# the command is drawn first, with these weights (docs renders the whole catalogue: ~1 s)
FAST_COMMANDS = {
    "claims eval": (claims_eval_argv(), 5),
    "claims": (CLAIMS_ARGV, 2),
    "construct": (construct_argv(), 4),
    "identifiability": (ident_argv(), 3),
    "experiment": (experiment_argv(), 2),
    "verify": (VERIFY_ARGV, 2),
    "bench": (BENCH_ARGV, 2),
    "docs": (DOCS_ARGV, 1),
    "fs": (FS_ARGV, 3),
    "huge": (huge_argv(), 2),
}
FAST_ARGV = st.sampled_from([k for k, (_s, w) in FAST_COMMANDS.items() for _ in range(w)]).flatmap(
    lambda k: FAST_COMMANDS[k][0]
)


def mutate(argv_strategy):
    """Duplicate a token or a whole argv tail, or drop one (missing values, duplicate flags)."""

    @st.composite
    def _m(draw):
        argv = list(draw(argv_strategy))
        how = draw(st.sampled_from(["none"] * 5 + ["dup", "drop", "repeat"]))
        if argv and how != "none":
            i = draw(st.integers(0, len(argv) - 1))
            if how == "dup":
                argv.insert(i, argv[i])
            elif how == "drop" and len(argv) > 1 and i > 0:
                del argv[i]
            elif how == "repeat":
                argv += argv[i:]
        return argv

    return _m()


# ======================================================================== the sandbox, the hook
class Sandbox:
    """A fresh working directory with fixtures: a file, a directory, a corpus, a null device
    node (a private copy of /dev/null: an atomic write may replace it harmlessly) and a FIFO."""

    def __init__(self, base: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="fz", dir=base))
        (self.dir / "existing.txt").write_text("hello\n")
        (self.dir / "corpus.txt").write_text("the quick brown fox jumps over the lazy dog\n" * 40)
        (self.dir / "somedir").mkdir()
        self.special = {}
        with contextlib.suppress(OSError):
            os.mknod(self.dir / "nulldev", stat.S_IFCHR | 0o666, os.makedev(1, 3))
            self.special["nulldev"] = stat.S_IFCHR
        with contextlib.suppress(OSError):
            os.mkfifo(self.dir / "fifo")
            self.special["fifo"] = stat.S_IFIFO

    def snapshot(self) -> dict:
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.dir):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                st_ = os.lstat(p)
                out[p] = (stat.S_IFMT(st_.st_mode), st_.st_size, st_.st_mtime_ns)
        return out

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.move": (1,),
}
_SPAWN = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile", "pty.spawn")


class _Audit:
    on = False
    writes: ClassVar[list] = []
    forbidden: ClassVar[list] = []
    spawns: ClassVar[list] = []


def _path_of(p):
    if isinstance(p, int) or p is None:
        return None
    try:
        p = os.fsdecode(p)
    except (TypeError, ValueError):
        return None
    return os.path.normpath(os.path.join(os.getcwd(), p))


def _hook(event, args):
    if not _Audit.on:
        return
    try:
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            )
            if writing and _path_of(path):
                _Audit.writes.append((event, _path_of(path)))
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                if i < len(args) and _path_of(args[i]):
                    _Audit.writes.append((event, _path_of(args[i])))
        elif event == "os.system":
            _Audit.forbidden.append((event, repr(args)[:200]))
        elif event.startswith(_SPAWN):
            _Audit.spawns.append((event, repr(args)[:300]))
            if TOKEN in repr(args) or "touch" in repr(args):
                _Audit.forbidden.append((event, repr(args)[:200]))
        elif event == "compile":
            src = args[0]
            if isinstance(src, (bytes, str)) and TOKEN in (
                src if isinstance(src, str) else src.decode("latin-1")
            ):
                _Audit.forbidden.append((event, repr(src)[:200]))
    except Exception:  # noqa: BLE001, S110 - an audit hook must never raise into the audited code
        pass


sys.addaudithook(_hook)


class _Hang(BaseException):
    """Raised by the alarm: a BaseException, so that no ``except Exception`` swallows it."""


@contextlib.contextmanager
def bounded(seconds: float = SECONDS, headroom: int = HEADROOM):
    """Run the block under a CPU-time alarm of ``seconds`` (``ITIMER_PROF``: this process's CPU
    time, all threads), a wall-clock hang guard of ``HANG_FACTOR * seconds`` and an
    address-space limit (current + headroom).

    No wall-clock figure decides a pass: load slows the wall clock, not the CPU time a call
    needs; the hang guard is there for a call blocked in a system call, and is far above any
    normal run."""

    def on_cpu(signum, frame):
        raise _Hang(f"used more than {seconds} s of CPU time")

    def on_alarm(signum, frame):
        raise _Hang(f"blocked for more than {HANG_FACTOR * seconds} s (wall clock)")

    old = signal.signal(signal.SIGALRM, on_alarm)
    old_prof = signal.signal(signal.SIGPROF, on_cpu)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    lim = vm + headroom if hard == resource.RLIM_INFINITY else min(hard, vm + headroom)
    resource.setrlimit(resource.RLIMIT_AS, (lim, hard))
    # and again every second: an exception raised where Python cannot propagate it (a gc
    # callback, a __del__) is only reported as unraisable
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    signal.setitimer(signal.ITIMER_REAL, HANG_FACTOR * seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, old)
        signal.signal(signal.SIGPROF, old_prof)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture
def fuzz_env(monkeypatch, tmp_path_factory):
    """The fuzz environment: limits that refuse big work early, no debug re-raise, a headless
    matplotlib whose cache is allowed, and a base directory for the sandboxes."""
    monkeypatch.setenv(resources.ENV_BYTES, LIMIT_BYTES)
    monkeypatch.setenv(resources.ENV_SECONDS, "30")
    monkeypatch.delenv("APPROXTHEORY_DEBUG", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    base = tmp_path_factory.mktemp("fuzz")
    monkeypatch.chdir(base)
    yield base
    assert not os.path.exists(MARKER), f"the injection marker {MARKER} was created"


# ==================================================================================== property
DEFAULT_OUTS = {"docs": "docs/claims.md", "verify": "report", "experiment": "results"}


def _out_targets(argv, cwd: str) -> list[str]:
    """The output targets of this argv: every ``--out`` value (argparse takes the last one, the
    harness allows all of them) or the command's default."""
    outs = []
    for i, a in enumerate(argv):
        if a == "--out" and i + 1 < len(argv):
            outs.append(argv[i + 1])
        elif a.startswith("--out="):
            outs.append(a[len("--out=") :])
    if not outs and argv and argv[0] in DEFAULT_OUTS:
        outs.append(DEFAULT_OUTS[argv[0]])
    res = []
    for o in outs:
        with contextlib.suppress(ValueError, TypeError):
            res.append(os.path.normpath(os.path.join(cwd, o)) if o.strip() else None)
    return [r for r in res if r]


# caches of the interpreter and of third-party libraries (not the CLI's doing): bytecode, the
# directory torch creates on importing its compiler, matplotlib's font cache
THIRD_PARTY_CACHES = (
    os.path.join(tempfile.gettempdir(), "torchinductor_"),
    os.path.expanduser(os.path.join("~", ".cache", "matplotlib")),
    os.path.expanduser(os.path.join("~", ".config", "matplotlib")),
)


def _allowed(path: str, outs: list[str]) -> bool:
    if f"{os.sep}__pycache__{os.sep}" in path or path.startswith(THIRD_PARTY_CACHES):
        return True
    if os.environ.get("MPLCONFIGDIR") and path.startswith(os.environ["MPLCONFIGDIR"]):
        return True
    for o in outs:
        if path == o or path.startswith(o + os.sep):
            return True
        parent, name = os.path.split(o)  # atomic writes: PARENT/.NAME.XXXX.tmp
        if os.path.dirname(path) == parent and os.path.basename(path).startswith(f".{name}."):
            return True
        if (o + os.sep).startswith(path + os.sep):  # creating the output's parents
            return True
    return False


def _raised_limit(argv) -> bool:
    """The argv's (last) ``--max-memory`` lifts the fuzz limit: running out of memory is then the
    user's choice, not a missed refusal."""
    size = None
    for i, a in enumerate(argv):
        if a == "--max-memory" and i + 1 < len(argv):
            size = argv[i + 1]
        elif a.startswith("--max-memory="):
            size = a.partition("=")[2]
    if size is None:
        return False
    try:
        b = resources.parse_size(size)
    except ApproxTheoryError:
        return False
    return b is None or b > resources.parse_size(LIMIT_BYTES)


def _verify_failed(outs, fail_on: bool) -> bool:
    """verify's exit 1: its verdicts.json records a crashed check (or a refuted claim under
    ``--fail-on refuted``)."""
    import json

    for o in outs:
        with contextlib.suppress(OSError, ValueError):
            verdicts = json.loads(Path(o, "verdicts.json").read_text())["verdicts"]
            bad = {"error"} | ({"refuted"} if fail_on else set())
            if any(v.get("verdict") in bad for v in verdicts):
                return True
    return False


def run_cli(argv, sandbox: Sandbox, seconds: float = SECONDS):
    """main(argv) in the sandbox: (rc, stdout, stderr, CPU seconds, warnings, exit_via)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="\n")
    cwd = os.getcwd()
    os.chdir(sandbox.dir)
    _Audit.writes, _Audit.forbidden, _Audit.spawns = [], [], []
    via = "return"
    t0 = time.process_time()
    try:
        with (
            warnings.catch_warnings(record=True) as caught,
            bounded(seconds),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            warnings.simplefilter("default")
            _Audit.on = True
            try:
                rc = main(list(argv))
            except SystemExit as e:
                rc, via = (e.code if isinstance(e.code, int) else 1), "SystemExit"
            finally:
                _Audit.on = False
    finally:
        os.chdir(cwd)
    took = time.process_time() - t0  # CPU time, like the alarm
    texts = []
    for s in (out, err):
        s.flush()
        texts.append(s.buffer.getvalue().decode("utf-8", "replace"))
    shown = [
        w
        for w in caught
        if not issubclass(
            w.category,
            (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning),
        )
    ]
    return rc, texts[0], texts[1], took, shown, via


def check_cli(argv, base: Path, seconds: float = SECONDS):
    """Run ``argv`` in a fresh sandbox and assert the CLI property; returns (rc, stderr)."""
    sb = Sandbox(base)
    try:
        before = sb.snapshot()
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            rc, out, err, took, warns, via = run_cli(argv, sb, seconds)
        except _Hang:
            pytest.fail(f"no answer within {seconds} s of CPU time (or a hang): {argv!r}")
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if os.environ.get("APPROXTHEORY_FUZZ_LOG"):  # per-example timings, for tuning
            with open(os.environ["APPROXTHEORY_FUZZ_LOG"], "a", encoding="utf-8") as log:
                log.write(f"{took:.3f}\t{rc}\t{argv!r}\n")
        after = sb.snapshot()
        outs = _out_targets(argv, str(sb.dir))
        ctx = f"argv={argv!r} rc={rc} via={via}\nstderr={err[-2000:]!r}"
        cmd = argv[0] if argv else ""
        assert "Traceback" not in err and "Traceback" not in out, ctx
        assert "internal error" not in err, ctx
        if via == "SystemExit":
            assert rc == 0 and any(a in ("-h", "--help", "--version") for a in argv), ctx
        elif rc == 1:
            ok = (cmd == "docs" and "--check" in argv and " is stale; run " in err) or (
                cmd == "verify" and _verify_failed(outs, "--fail-on" in argv)
            )
            assert ok, "exit 1 outside a command's own failure verdict: " + ctx
        else:
            assert rc in (0, 2), ctx
        if rc == 2:
            lines = err.splitlines()
            assert len(lines) == 1 and err.endswith("\n"), "not exactly one stderr line: " + ctx
            assert lines[0].startswith("approxtheory: error: "), ctx
            shown = [str(w.message) for w in warns]
            assert not warns, f"warnings would add stderr lines: {shown}\n{ctx}"
            if "out of memory" in err:
                assert _raised_limit(argv), (
                    "allocation failed instead of a refusal before allocating: " + ctx
                )
        assert took < seconds, f"{took:.1f} s of CPU time: {ctx}"
        assert (rss1 - rss0) * 1024 < HEADROOM, f"peak RSS grew by {(rss1 - rss0) >> 10} MiB: {ctx}"
        # files: the audit log and the sandbox snapshot
        assert not _Audit.forbidden, f"forbidden events {_Audit.forbidden}: {ctx}"
        stray = [(ev, p) for ev, p in _Audit.writes if not _allowed(p, outs)]
        assert not stray, f"writes outside --out {outs}: {stray[:5]}\n{ctx}"
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        stray = [p for p in changed if not _allowed(p, outs)]
        assert not stray, f"sandbox files changed outside --out {outs}: {stray[:5]}\n{ctx}"
        for name, kind in sb.special.items():
            p = str(sb.dir / name)
            assert after.get(p, (None,))[0] == kind, f"{name} was replaced or removed: {ctx}"
        assert not any(TOKEN in p or "MARKER" in p for p in after), ctx
        assert not os.path.exists(MARKER), ctx
        return rc, err
    finally:
        sb.close()


# ======================================================================= the short runs (CI)
# regression inputs: one @example per bug the harness found (see the module docstring of each)
@settings(max_examples=200, **SHORT)
@given(argv=mutate(FAST_ARGV))
@example(argv=["docs", "--out", "nulldev"])  # replaced a device node (/dev/null!)
@example(argv=["docs", "--check", "--out", "fifo"])  # hung reading a FIFO
@example(argv=["claims", "eval", "HC-T2b", f"T=__import__('os').system('touch {MARKER}')"])
@example(argv=["identifiability", "--E", str(10**20), "--H", "1", "--max-memory", "unlimited"])
@example(argv=["identifiability", "--seed", str(2**64)])  # torch.manual_seed overflowed
@example(argv=["docs", "--out", "a\x00b"])  # ValueError: embedded null byte
@example(argv=["claims", "eval", "HC-T2c", "-T=5", "\x85"])  # a 2-line error (\x85 = NEL)
@example(argv=["docs", "--out", "/proc/approxtheory\nfuzz/x.md"])  # 2 lines: OSError's file name
@example(argv=["construct", "hc_l9", "--eps", "1e-320"])  # OverflowError: a 10^642-byte estimate
@example(argv=["construct", "hc_k1", "--gate", "1e308"])  # inf logits reported as "refuted"
@example(argv=["bench", "train", "--seed", str(2**64)])  # torch.manual_seed: ValueError
@example(argv=["identifiability", "--max-memory", "9" * 400])  # int(inf): OverflowError
@example(argv=["schedule", "compare", "uniform", "prism", "--threads", "5000"])  # libgomp abort
@example(argv=["docs", "--check", "--out", "/dev/zero"])  # read until memory ran out
def test_cli_fuzz_short(fuzz_env, argv):
    check_cli(argv, fuzz_env)


@settings(max_examples=3, **SHORT)
@given(argv=quick_construct_argv())
@example(argv=["construct", "if_pairwise_max", "--T", "1", "--d", "1", "--budget", "1"])
def test_cli_construct_runs_short(fuzz_env, argv):
    """A few real, quick measurements (tiny knobs, budget 1..64)."""
    check_cli(argv, fuzz_env)


# ================================================================================ the API
def api_call(fn, *args, seconds: float = SECONDS, **kwargs):
    """Call ``fn``: it returns, or raises an ApproxTheoryError, within ``seconds`` of CPU time."""
    t0 = time.process_time()
    if os.environ.get("APPROXTHEORY_FUZZ_LOG"):  # log the call first: a hang shows up last
        with open(os.environ["APPROXTHEORY_FUZZ_LOG"], "a", encoding="utf-8") as log:
            log.write(f"api\t{fn.__qualname__}\t{args!r}\t{kwargs!r}\n"[:2000])
    try:
        with warnings.catch_warnings(), bounded(seconds):
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except ApproxTheoryError:
        pass
    except _Hang:
        pytest.fail(
            f"no answer within {seconds} s of CPU time (or a hang): "
            f"{fn.__qualname__}{args!r} {kwargs!r}"
        )
    except Exception as e:  # the property: no other exception type
        raise AssertionError(
            f"{fn.__qualname__}(*{args!r}, **{kwargs!r}) raised {type(e).__name__}: {e}"
        ) from e
    assert time.process_time() - t0 < seconds


API_NUMBERS = st.one_of(
    st.integers(-3, 100),
    st.sampled_from(BIG_INTS),
    st.floats(),
    st.sampled_from([math.nan, math.inf, -0.0, 1e308, 5e-324, 0.5]),
    st.sampled_from(
        [
            True,
            False,
            None,
            fractions.Fraction(1, 3),
            decimal.Decimal("NaN"),
            decimal.Decimal("1e999999"),
            decimal.Decimal("0.1"),
            complex(1, 1),
            1j,
            np.float64("nan"),
            np.int64(5),
            np.bool_(True),
            np.float32(0.5),
            np.array([1, 2]),
            np.array(3.0),
            [1],
            {"a": 1},
            (),
            b"64",
            object(),
            sp.Integer(3),
            sp.Rational(1, 3),
            sp.oo,
            sp.nan,
            sp.zoo,
            sp.I,
            sp.pi,
            sp.Symbol("x"),
            sp.Symbol(TOKEN),
            sp.Float("1e500"),
            sp.Integer(10) ** 400,
            sp.Symbol("T") + 1,
            sp.Eq(sp.Symbol("x"), 1),
            sp.true,
        ]
    ),
)
API_VALUES = st.one_of(API_NUMBERS, VALUE_TEXT)


@st.composite
def claim_call(draw):
    cid = draw(
        st.one_of(
            st.sampled_from(FORMULA_IDS),
            st.sampled_from(JUNK_IDS),
            st.sampled_from([None, 1, b"HC-T2b", ("HC-T2b",)]),
        )
    )
    c = CLAIMS.get(cid) if isinstance(cid, str) else None
    syms = (sorted(c.symbols) if c is not None else []) or ["T"]
    exprs = sorted(c.to_dict()["expressions"]) if c is not None and c.has_formula else ["k"]
    names = st.one_of(
        st.sampled_from(syms), st.sampled_from(["x", "expr", "eps", "ε", TOKEN, "__class__"])
    )
    if draw(st.booleans()):
        values = {s: draw(st.one_of(st.integers(1, 64), API_VALUES)) for s in syms}
    else:
        values = draw(st.dictionaries(names, API_VALUES, max_size=5))
    method = draw(
        st.sampled_from(
            [
                "evaluate",
                "evaluate",
                "evaluate_float",
                "is_vacuous",
                "in_regime",
                "solve_for",
                "exponent",
                "asymptotic_exponent",
            ]
        )
    )
    expr = draw(st.one_of(st.none(), st.sampled_from(exprs), st.sampled_from(["nope", 1, ""])))
    sym = draw(st.one_of(st.sampled_from(syms), st.sampled_from(["x", "", 1, None])))
    if method in ("evaluate", "evaluate_float"):
        args = () if expr is None else (expr,)
    elif method in ("is_vacuous", "in_regime"):
        args = ()
    elif method == "solve_for":
        args = (sym, expr, draw(st.one_of(st.none(), API_VALUES)))
        values = {k: v for k, v in values.items() if k != sym}
    else:
        args = (sym,) if expr is None else (sym, expr)
        values = {}
    return cid, method, args, values


def _claim_method(cid, method, *args, **values):
    return getattr(approxtheory.claim(cid), method)(*args, **values)


@st.composite
def compare_call(draw):
    a = draw(
        st.one_of(
            st.sampled_from(["HC-T2a", "HC-T2b", "HC-TR2", "HC-TR3"]),
            st.sampled_from(FORMULA_IDS),
            st.sampled_from(JUNK_IDS),
        )
    )
    b = draw(
        st.one_of(
            st.sampled_from(["HC-T2a", "HC-T2b", "HC-TR2", "HC-TR3"]), st.sampled_from(FORMULA_IDS)
        )
    )
    syms = sorted(set(CLAIMS[a].symbols if a in CLAIMS else ()) | set(CLAIMS[b].symbols))
    variable = draw(
        st.one_of(st.sampled_from(syms or ["T"]), st.sampled_from(["x", "", None, 1, "eps"]))
    )
    quantity = draw(st.sampled_from([None, "exponent", "value", "k", "M_min", "nope", 1]))
    if draw(st.booleans()):
        values = {s: draw(st.one_of(st.integers(1, 8), API_VALUES)) for s in syms if s != variable}
    else:
        values = draw(st.dictionaries(st.sampled_from(syms + ["x", TOKEN]), API_VALUES, max_size=4))
    return a, b, variable, quantity, values


@settings(max_examples=120, **SHORT)
@given(call=claim_call())
@example(
    call=(
        "HC-T2b",
        "evaluate",
        (),
        {"T": f"__import__('os').system('touch {MARKER}')", "s": 1, "n": 2, "D": 2},
    )
)
def test_api_claims_fuzz_short(fuzz_env, call):
    cid, method, args, values = call
    api_call(_claim_method, cid, method, *args, **values)
    assert not os.path.exists(MARKER)


@settings(max_examples=30, **SHORT)
@given(call=compare_call())
def test_api_compare_fuzz_short(fuzz_env, call):
    a, b, variable, quantity, values = call
    api_call(approxtheory.compare, a, b, variable, quantity, **values)


# ------------------------------------------------------------ constructions, measure, identif.
def api_knobs(name, small=True):
    spec = CONSTRUCTIONS.get(name, {})
    vals = {}
    for k, knob in spec.items():
        if knob.type is int:
            v = st.one_of(
                st.integers(-1, 4 if small else 16),
                st.sampled_from([10**20, 2.0, 2.5, "3", "x", None, True, np.int64(3), math.nan]),
            )
        elif knob.type is float:
            v = st.one_of(
                st.floats(-1, 1e4),
                st.sampled_from([math.nan, math.inf, 1e308, "1.5", None, True, 0, np.float32(2)]),
            )
        else:
            v = st.sampled_from(list(knob.choices or ()) + ["nope", None, 1, True, ""])
        vals[k] = v
    return st.fixed_dictionaries({}, optional=vals)


@st.composite
def build_call(draw, small=True):
    name = draw(
        st.one_of(
            st.sampled_from(sorted(CONSTRUCTIONS)), st.sampled_from(["nope", "", "HC_K1", TOKEN])
        )
    )
    knobs = draw(api_knobs(name, small))
    if draw(st.integers(0, 9)) == 0:
        knobs[draw(st.sampled_from(["nosuch", "budget", "name"]))] = 1
    return name, knobs


def _build(name, knobs):
    from approxtheory.constructions import build

    return build(name, **knobs)


@settings(max_examples=25, **SHORT)
@given(call=build_call())
@example(call=("hc_k1", {"name": 1}))  # TypeError: build() got multiple values for 'name'
@example(call=("hc_l9", {"eps": 1e-297}))  # OverflowError formatting a 10^594-byte estimate
def test_api_build_fuzz_short(fuzz_env, call):
    name, knobs = call
    api_call(_build, name, knobs)


BAD_BUDGETS = [0, -1, 1.5, True, None, "8", 10**20, math.nan, np.float64(4), [4]]


def _sup_error(name, knobs, budget, seed):
    from approxtheory.constructions import build
    from approxtheory.measure import sup_error

    c = build(name, **knobs)
    return sup_error(c.model, c.task, budget=budget, seed=seed, local_starts=1, local_steps=2)


SEEDS = [0, 1, -1, 2**70, None, 1.5, True, np.int64(2), "3"]
# one argument bad at a time (the budget is checked first)
BUDGET_SEED = st.one_of(
    st.tuples(st.sampled_from(BAD_BUDGETS), st.just(0)),
    st.tuples(st.integers(1, 8), st.sampled_from(SEEDS)),
)


@settings(max_examples=25, **SHORT)
@given(name=st.sampled_from(sorted(QUICK_CONSTRUCTIONS)), budget_seed=BUDGET_SEED)
@example(name="hc_k2", budget_seed=(8, 0))
@example(name="hc_k1_synthetic", budget_seed=(1, -1))  # numpy's ValueError, untyped
def test_api_sup_error_fuzz_short(fuzz_env, name, budget_seed):
    budget, seed = budget_seed
    knobs = {k: v[0] for k, v in QUICK_CONSTRUCTIONS[name].items()}
    api_call(_sup_error, name, knobs, budget, seed)


@st.composite
def ident_call(draw, small=True):
    from approxtheory import identifiability as idf

    size = st.one_of(
        st.integers(1, 8 if small else 24),
        st.sampled_from([0, -1, 10**6, 10**20, 2.0, "4", None, True, np.int64(4), math.nan]),
    )
    kw = draw(
        st.fixed_dictionaries(
            {"E": size, "H": size},
            optional={
                "G": size,
                "bias": st.sampled_from([True, False, 1, "yes"]),
                "causal": st.booleans(),
                "fat": st.booleans(),
                "no_output": st.booleans(),
                "rope": st.sampled_from(
                    [None, "full", "partial:2", "partial:x", "repeated", "", 2]
                ),
            },
        )
    )
    fn = draw(
        st.sampled_from(
            [
                "unidentified_dim",
                "predicted_unidentified_dim",
                "dense_estimate",
                "structured_estimate",
                "attention_param_count",
                "bias_aliasing",
                "structured_unidentified_dim",
                "build_layer",
            ]
        )
    )
    extra = {}
    if fn in ("unidentified_dim", "structured_unidentified_dim", "bias_aliasing", "build_layer"):
        extra = draw(
            st.fixed_dictionaries(
                {}, optional={"seed": st.sampled_from([0, 1, -1, True, 2**70, 1.5, None])}
            )
        )
    if fn in ("unidentified_dim", "dense_estimate"):
        extra.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "n_seq": st.sampled_from([None, 1, 12, 0, -1, 10**9, 1.5]),
                        "seq_len": st.sampled_from([1, 7, 0, -3, 10**9, True]),
                    },
                )
            )
        )
    if fn == "unidentified_dim":
        extra.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "rtol": st.sampled_from([1e-8, 0, 1, -1, math.nan, "1e-8", True]),
                        "method": st.sampled_from(["auto", "dense", "structured", "nope", None]),
                    },
                )
            )
        )
    return getattr(idf, fn), kw, extra


def _ident(fn, cfg_kw, extra):
    from approxtheory.identifiability import AttentionConfig

    return fn(AttentionConfig(**cfg_kw), **extra)


@settings(max_examples=40, **SHORT)
@given(call=ident_call())
@example(call=(idf.build_layer, {"E": 2, "H": 1}, {"seed": 2**64}))  # torch.manual_seed overflowed
def test_api_identifiability_fuzz_short(fuzz_env, call):
    fn, kw, extra = call
    api_call(_ident, fn, kw, extra)


# ======================================================================= the long runs (slow)
LONG_COMMANDS = {
    "fast": (FAST_ARGV, 12),
    "construct": (construct_argv(valid_runs=True), 1),
    "quick construct": (quick_construct_argv(), 1),
    "identifiability": (ident_argv(small=range(1, 25)), 2),
}
LONG_ARGV = st.sampled_from([k for k, (_s, w) in LONG_COMMANDS.items() for _ in range(w)]).flatmap(
    lambda k: LONG_COMMANDS[k][0]
)


@st.composite
def real_runs_argv(draw):
    """Real runs that write files: verify on a few quick claims, a one-cell experiment, docs."""
    kind = draw(st.sampled_from(["verify", "experiment", "docs"]))
    out = draw(st.sampled_from(["out", "out/nested/deeper", "new dir/with space"]))
    if kind == "verify":
        ids = draw(
            st.lists(
                st.sampled_from(
                    ["HC-L8", "ID-L4.1", "ID-B4.6", "HC-T1", "TO-X4", "ID-F4.7", "HC-P6"]
                ),
                min_size=1,
                max_size=2,
            )
        )
        return ["verify", "--only", *ids, "--out", out] + draw(
            st.lists(
                st.sampled_from(
                    [["--quiet"], ["--no-cache"], ["--seed", "3"], ["--fail-on", "refuted"]]
                ),
                max_size=2,
            ).map(lambda gs: [t for g in gs for t in g])
        )
    if kind == "experiment":
        return [
            "experiment",
            "run",
            "softmax_beta_sweep",
            "--set",
            "T=2",
            "--set",
            "beta=10",
            "--out",
            out,
            "--quiet",
        ]
    return ["docs", "--out", out + "/claims.md"]


def _long_seconds(argv):
    """CPU seconds (not wall clock: see :func:`bounded`) for one long-run example: the real runs
    (verify on one or two quick claims, a one-cell experiment, docs) need a few seconds of CPU
    and a construct or identifiability call under a second to a few, whatever the load."""
    return 120.0 if argv and argv[0] in ("verify", "experiment", "docs") else 40.0


LONG_EXAMPLES = int(os.environ.get("APPROXTHEORY_FUZZ_EXAMPLES", "2000"))


@pytest.mark.slow
@settings(max_examples=LONG_EXAMPLES, **LONG)
@given(argv=mutate(LONG_ARGV))
def test_cli_fuzz_long(fuzz_env, argv):
    check_cli(argv, fuzz_env, seconds=_long_seconds(argv))


@pytest.mark.slow
@settings(max_examples=max(10, LONG_EXAMPLES // 50), **LONG)
@given(argv=real_runs_argv())
def test_cli_real_runs_long(fuzz_env, argv):
    check_cli(argv, fuzz_env, seconds=_long_seconds(argv))


@pytest.mark.slow
@settings(max_examples=LONG_EXAMPLES, **LONG)
@given(call=st.one_of(claim_call(), compare_call().map(lambda t: ("compare",) + t)))
def test_api_claims_fuzz_long(fuzz_env, call):
    # symbolic work (simplify, limits) can take many seconds: a minute of CPU time per call
    if call[0] == "compare":
        _, a, b, variable, quantity, values = call
        assume(not _open_compare_hang(values))
        api_call(approxtheory.compare, a, b, variable, quantity, seconds=60.0, **values)
    else:
        cid, method, args, values = call
        assume(method != "asymptotic_exponent")  # open: test_open_limit_hang
        api_call(_claim_method, cid, method, *args, seconds=60.0, **values)
    assert not os.path.exists(MARKER)


def _open_compare_hang(values) -> bool:
    """A value of magnitude beyond 10^4 (or below 10^-4) in ``compare``: the known open hang
    (test_open_compare_hang), left out of the long run so that it tests everything else."""
    from approxtheory.parse import parse_value

    for v in values.values():
        try:
            x = abs(float(parse_value(v) if isinstance(v, str) else v))
        except (ApproxTheoryError, TypeError, ValueError, OverflowError):
            continue
        if x > 1e4 or 0 < x < 1e-4:
            return True
    return False


@pytest.mark.slow
@settings(max_examples=max(50, LONG_EXAMPLES // 4), **LONG)
@given(
    call=st.one_of(
        build_call(small=False).map(lambda t: ("build",) + t),
        ident_call(small=False).map(lambda t: ("ident",) + t),
    )
)
def test_api_build_identifiability_fuzz_long(fuzz_env, call):
    if call[0] == "build":
        api_call(_build, call[1], call[2], seconds=40.0)
    else:
        api_call(_ident, call[1], call[2], call[3], seconds=40.0)


@pytest.mark.slow
@settings(max_examples=max(10, LONG_EXAMPLES // 100), **LONG)
@given(
    name=st.sampled_from(sorted(QUICK_CONSTRUCTIONS)),
    budget=st.one_of(st.integers(1, 64), st.sampled_from(BAD_BUDGETS)),
    seed=st.sampled_from(SEEDS),
)
def test_api_sup_error_fuzz_long(fuzz_env, name, budget, seed):
    knobs = {k: v[0] for k, v in QUICK_CONSTRUCTIONS[name].items()}
    api_call(_sup_error, name, knobs, budget, seed, seconds=40.0)


# ================================================================== open bugs found by the fuzz
def _open_finding(reason, strict=True):
    """The marks of an open bug the fuzz found: slow, and an expected failure (``strict``: it
    must fail) for ``reason``."""

    def mark(test):
        return pytest.mark.slow(pytest.mark.xfail(strict=strict, reason=reason)(test))

    return mark


@_open_finding(
    "open: sup_error's up-front estimate "
    "(resources.sup_error_bytes) counts the budget's random draws only; with a "
    "small --budget and a long sequence the search runs for about a minute before "
    "a later stage (structured inputs, families, discrete search) is refused",
)
def test_open_late_refusal_small_budget(fuzz_env):
    check_cli(["construct", "softmax_retrieval", "--T", "100000", "--budget", "1"], fuzz_env)


@_open_finding(
    "open: compare() hangs in sympy's solve (simplify -> "
    "logcombine turns c*log(T) with c = 10^9 into an exact power T**(10^9))",
)
def test_open_compare_hang(fuzz_env):
    api_call(
        approxtheory.compare,
        "IF-T2",
        "HC-P3",
        "T",
        "value",
        beta="1000000000",
        delta=1,
        epsilon=2,
        g=1,
    )


@_open_finding(
    "open: asymptotic_exponent() hangs in sympy's limit "
    "(x*d(log e)/dx of 2*T*ceiling(1/epsilon) as epsilon -> oo)",
)
def test_open_limit_hang(fuzz_env):
    api_call(_claim_method, "HC-L9", "asymptotic_exponent", "epsilon", "width_bound")


@_open_finding(
    "open: exponent() runs sympy's simplify on "
    "x*d(log e)/dx; for HC-L3's x_tilde (exponentials) that takes ~30 s on a "
    "loaded machine before NotAPowerLawError (passes on an idle one)",
    strict=False,
)
def test_open_slow_exponent(fuzz_env):
    api_call(_claim_method, "HC-L3", "exponent", "Z", "x_tilde")
