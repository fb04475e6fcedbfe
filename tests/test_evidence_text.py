"""A verdict's prose is read by people: its ``evidence`` and ``covered`` name
their figures at a sensible precision and never hold a Python repr (a dict, a list of strings or
tuples, a 16-digit float, ``np.float64(...)``, ``tensor(...)``).

:func:`looks_like_repr` is the test's reading of "a repr"; the checks that used to write reprs
are run here (the cheap ones, under the smoke profile, and under each of their mutants so the
failing branches' text is read too), and the shipped ``docs/findings/verdicts.json`` is scanned.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from approxtheory.proofs_check import CHECKS, MUTANTS, Verdict
from approxtheory.proofs_check._core import Context

ROOT = Path(__file__).resolve().parents[1]

#: the openings of a Python container or object repr
_REPR_OPENINGS = ("{'", '{"', "['", '["', "[(", '("', "np.float64(", "tensor(", "array(")
#: a decimal number as Python prints it (optionally signed, with an exponent)
_DECIMAL = re.compile(r"(?<![\w.])[-+]?(\d+\.\d+)(?:[eE][-+]?\d+)?(?![\w.]*\d)")
#: this many significant digits or more is a repr, not a figure written for a reader
MAX_DIGITS = 8


def _significant(mantissa: str) -> int:
    """Significant digits of ``12.340`` -> 5 (leading zeros do not count, written trailing
    zeros do)."""
    return len(mantissa.replace(".", "").lstrip("0"))


def looks_like_repr(text: str | None) -> list[str]:
    """The pieces of ``text`` that read as a Python repr (empty when none): a dict, list or
    tuple opening (``{'``, ``['``, ``[(``, ``("``, ...), ``np.float64(``, ``tensor(``, or a
    decimal with :data:`MAX_DIGITS` or more significant digits."""
    if not text:
        return []
    found = [o for o in _REPR_OPENINGS if o in text]
    found += [m.group(0) for m in _DECIMAL.finditer(text) if _significant(m.group(1)) >= MAX_DIGITS]
    return found


# ------------------------------------------------------------------------- the detector
@pytest.mark.parametrize(
    "text",
    [
        "at {'p': 30, 'n': 3, 'extremal': True}",
        'counts {"uniform": 1}',
        "width symbols in it: ['n']",
        "(|I|, d) in [(1, 1), (2, 1)]",
        'got ("a", 1)',
        "best_val_nmse 0.011500472207502712",
        "ρ = 1.000000000000",
        "closest error/floor 1.000008683",
        "ratio -12.34567890e-3",
        "mean np.float64(0.5)",
        "loss tensor(0.25)",
        "x array([1.0, 2.0])",
    ],
)
def test_a_repr_is_flagged(text):
    assert looks_like_repr(text), text


@pytest.mark.parametrize(
    "text",
    [
        "",
        None,
        "T = 8: NMSE 1.23e-2, heads 4, best val_nmse 0.0115",
        "whole-model counts uniform 198,216, prism 198,216; small 123,551,232 parameters",
        "forward+backward totals uniform 81,920,000 (an integer count is a figure)",
        "Per-head widths small 256/128/96/64, medium 256/128/64",
        "mean 0.1257 ± 0.0010, interval [0.0546, 0.0741], ρ = 1 + 2.2e-16",
        "schedules 2,2,4,4,8,8,12x6 vs 3,6,8,...; the rule's reason, 'a slowdown'",
        "torch 2.13.0+cpu, numpy 2.4.6, (T, ε) = (8, 0.1), seven digits 1.234567",
    ],
)
def test_readable_text_is_not_flagged(text):
    assert looks_like_repr(text) == []


def test_the_digit_count():
    assert _significant("0.0115") == 3
    assert _significant("1.000000000000") == 13
    assert _significant("123.45678") == 8
    assert looks_like_repr("x 123.45678") and not looks_like_repr("x 123.4567")


# --------------------------------------------------------------- the checks that were fixed
#: the fixed checks that run in seconds under the smoke profile (each also under its mutants)
FIXED_CHEAP = (
    "PR-S",
    "PR-S4",
    "PR-S5",
    "PR-S6",
    "PR-A1",
    "PR-A2",
    "PR-TPP",
    "PR-N1",
    "PR-N2",
    "PR-E3",
    "HC-L4",
    "HC-P5",
    "HC-N1",
    "IF-P1",
    "IF-P2",
    "IF-R3",
    "IF-E2",
    "TO-X2",
    "ID-S5.1",
)

#: mutants left out for time (PR-N2 counts FLOPs of 4 models per run; "scores-full-width" is
#: kept: its per-layer mismatches are the failing branch's text)
SLOW_MUTANTS = {("PR-N2", "head-width-not-rescaled"), ("PR-N2", "attention-blind")}


def _repr_pieces(v: Verdict) -> dict:
    return {k: got for k in ("evidence", "covered") if (got := looks_like_repr(getattr(v, k)))}


@pytest.mark.parametrize("cid", FIXED_CHEAP)
def test_fixed_checks_write_named_figures(cid, monkeypatch):
    from approxtheory.proofs_check import prism

    # PR-N2's throughput (evidence only, a timed loop) is measured once, not once per mutant
    monkeypatch.setattr(
        prism.neutrality, "_throughput", functools.cache(prism.neutrality._throughput)
    )
    runs = {"(original)": CHECKS[cid](Context(profile="smoke"))}
    for m in MUTANTS.get(cid, {}):
        if (cid, m) in SLOW_MUTANTS:
            continue
        runs[m] = CHECKS[cid](Context(profile="smoke", mutant=m))
    bad = {name: p for name, v in runs.items() if (p := _repr_pieces(v))}
    assert not bad, f"{cid}: repr-like text {bad}"
    assert runs["(original)"].evidence  # something was said


def test_the_gated_text_names_the_run():
    """A not-checkable trained verdict's "(ran: ...)" names each figure of the run (head-count's
    and the trade-offs' gated verdicts), the best NMSE at 3 digits, not a dict's values."""
    from approxtheory.proofs_check._trained_verdicts import gated_verdict

    rows = [
        {"T": 8, "steps": 500, "hidden": 16, "params": p, "seed": 0, "val_nmse": v, "lr": 0.003}
        for p, v in ((3233, 0.011500472207502712), (5297, 0.0358123456789))
    ]

    class Gate:  # a gate that did not pass (what the two gated verdicts read of one)
        passed, reference, metric, cells = False, {}, "val_nmse", {}

        def reason(self):
            return "undecided at this budget"

        def scale(self):
            return {}

    # every trained check's gated verdict is the pipeline's (the one shared gated_verdict)
    v1 = gated_verdict("HC-P8", [("exp", Gate())], {"exp": rows}, "c")
    v2 = gated_verdict("TO-R3", [("exp", Gate())], {"exp": rows}, "c")
    for v in (v1, v2):
        assert v is not None and v.verdict == "not-checkable"
        assert not looks_like_repr(v.evidence), v.evidence
        for piece in ("T 8, ", "steps 500", "hidden 16", "params 3233/5297", "1 seed, best "):
            assert piece in v.evidence, v.evidence
        assert "best val_nmse 0.0115)" in v.evidence, v.evidence
    assert "lr 0.003" in v2.evidence


# ------------------------------------------------------------------- the shipped findings
def test_the_shipped_verdicts_hold_no_repr():
    """``docs/findings/verdicts.json`` (a shipped quick run): every record whose evidence or
    covered text reads as a repr is reported."""
    path = ROOT / "docs" / "findings" / "verdicts.json"
    if not path.exists():
        pytest.skip("no shipped verdicts.json")
    records = json.loads(path.read_text(encoding="utf-8"))["verdicts"]
    assert records
    bad = {
        f"{r['claim']} {k}": got
        for r in records
        for k in ("evidence", "covered")
        if (got := looks_like_repr(r.get(k)))
    }
    assert not bad, f"{len(bad)} records with repr-like text: {bad}"
