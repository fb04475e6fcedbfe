"""Builders and checks several test files share (a helper module, not a test file)."""

from __future__ import annotations

import dataclasses
import functools
import tracemalloc


def record(claim, paper, verdict, evidence="checked.", scope="full", **kw) -> dict:
    """The verify record of ``claim`` as results.json holds it: the fields given, every other
    field the report reads empty (``kw`` overrides or adds)."""
    return {
        "claim": claim,
        "paper": paper,
        "verdict": verdict,
        "evidence": evidence,
        "scope": scope,
        "statement": f"statement of {claim}",
        "provenance": "stated",
        "falsified_by": [],
        "mutants": [],
        "plots": [],
        "csv": [],
        "slopes": [],
        "witness": None,
        "measured": None,
        "claimed": None,
        "slack": None,
        "slack_note": "",
        "scale": None,
        **kw,
    }


def within_peak(limit: int, call, what: str = ""):
    """``call()``, asserting that its peak of allocated memory stays under ``limit`` bytes (the
    failure says ``WHAT allocated N bytes at its peak``). Memory, not the clock: a loaded machine
    cannot fail it."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        return call()
    finally:
        peak = tracemalloc.get_traced_memory()[1] - base
        if started:
            tracemalloc.stop()
        assert peak < limit, f"{what}allocated {peak} bytes at its peak"


def saturation_rows(E, zmax) -> list[dict]:
    """tradeoffs_saturation-shaped rows (TO-P2): ``E[T][d]`` the NMSE (interval ±2 %),
    ``zmax[T]`` the logit bound."""
    return [
        {
            "T": T,
            "head_dim": d,
            "seed": 0,
            "steps": 10,
            "val_nmse": e,
            "val_nmse_lo": 0.98 * e,
            "val_nmse_hi": 1.02 * e,
            "logit_max": zmax[T],
        }
        for T, row in E.items()
        for d, e in row.items()
    ]


def false_claim(cid, regime=None, **exprs):
    """A copy of catalogue claim ``cid`` with the expressions ``exprs`` replaced (and the regime,
    when given): a false claim to swap in with :func:`approxtheory.catalogue.overriding`."""
    from approxtheory import claim

    c = claim(cid)
    kw = {"expressions": {**dict(c.expressions), **exprs}}
    if regime is not None:
        kw["regime"] = tuple(regime)
    return dataclasses.replace(c, **kw)


def run_quick(cid, false=None):
    """The quick-profile verdict of ``cid``'s check, with the false claim ``false`` (a copy of
    the catalogue's claim, see :func:`false_claim`) swapped in when given."""
    from approxtheory.catalogue import overriding
    from approxtheory.proofs_check import Context, run_check

    if false is None:
        return run_check(cid, Context(profile="quick"))
    with overriding(false):
        return run_check(cid, Context(profile="quick"))


#: verdicts that pass a claim, and those that catch a false one
PASSING = ("verified-numeric", "verified-symbolic", "consistent-empirical")
CATCHING = ("refuted", "inconsistent")


@functools.cache
def quick_verdict(cid) -> str:
    """The quick-profile verdict of the catalogue's own claim ``cid`` (computed once)."""
    return run_quick(cid).verdict


def caught_quick(cid, false, base=PASSING):
    """``false`` (a false copy of ``cid``'s claim) swapped in: the true claim's verdict is in
    ``base`` and the false one's is refuted or inconsistent (a crash is a failure, not a
    catch). Returns the false claim's verdict."""
    assert quick_verdict(cid) in base, quick_verdict(cid)
    v = run_quick(cid, false)
    assert v.verdict in CATCHING, (v.verdict, v.evidence)
    return v
