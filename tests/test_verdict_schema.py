"""The verdict schema is stated once (proofs_check._core.Verdict): verify._record and the cache
reader's field types derive from it, and a record keeps the keys, order and values it had when
_record listed them by hand."""

import json
from types import SimpleNamespace

from approxtheory.proofs_check._core import Verdict
from approxtheory.verify import _record, _schema


def _reference(c, v: dict, key: str) -> dict:
    """The record as _record wrote it before the schema was derived (a frozen copy)."""
    return json.loads(
        json.dumps(
            {
                "schema_version": 1,
                "claim": c.id,
                "paper": c.paper,
                "kind": c.kind,
                "statement": c.statement,
                "provenance": c.provenance,
                "verdict": v["verdict"],
                "evidence": v["evidence"],
                "covered": v.get("covered", ""),
                "measured": v.get("measured"),
                "claimed": v.get("claimed"),
                "witness": v.get("witness"),
                "check": v.get("check", ""),
                "cache_key": key,
                "scope": v.get("scope", "none"),
                "mutants": list(v.get("mutants", [])),
                "falsified_by": list(v.get("falsified_by", [])),
                "slack": v.get("slack"),
                "scale": v.get("scale"),
                "certified": v.get("certified"),
                "formula_note": v.get("formula_note", ""),
                "slack_note": v.get("slack_note", ""),
                "volatile": v.get("volatile", {}),
                "rows": v.get("rows", []),
                "plot": v.get("plot"),
                "slopes": v.get("slopes", []),
            },
            default=str,
        )
    )


CLAIM = SimpleNamespace(id="X-1", paper="p", kind="upper", statement="s", provenance="pr")
PLANTED = Verdict(
    claim="X-1",
    verdict="verified-numeric",
    evidence="e",
    covered="c",
    measured=(1.5, 2),
    claimed={"a": 1},
    witness=[1],
    rows=[{"x": 1, "sup_error": 0.1}],
    plot={"x": "x"},
    slopes=[{"label": "l", "fitted": 1.0, "lo": 0.9, "hi": 1.1}],
    check="fn",
    scope="full",
    mutants=["m1"],
    volatile={"t": 1},
    falsified_by=["m1"],
    slack=2.0,
    slack_note="sn",
    formula_note="fn",
    scale={"s": 1},
    certified={"cells": 1},
)


def test_record_bytes_match_the_hand_written_schema():
    # a planted Verdict, an error result with and without a scope, a crash record
    for v in (
        PLANTED.to_dict(),
        Verdict(claim="X-1", verdict="refuted", evidence="e").to_dict(),
        {"verdict": "error", "evidence": "x", "scope": "none"},
        {"verdict": "error", "evidence": "x"},
        {"verdict": "error", "evidence": "x", "covered": "a | b", "scope": "none", "check": "f"},
    ):
        got, want = _record(CLAIM, v, "k"), _reference(CLAIM, v, "k")
        assert json.dumps(got) == json.dumps(want)  # same keys, same order, same values


def test_cache_reader_types_come_from_the_verdict():
    keys, typed, any_type = _schema()
    assert keys == frozenset(_reference(CLAIM, {"verdict": "", "evidence": ""}, ""))
    assert typed == {
        **dict.fromkeys(("paper", "kind", "statement", "provenance", "evidence"), str),
        **dict.fromkeys(("covered", "check", "scope", "formula_note", "slack_note"), str),
        **dict.fromkeys(("rows", "slopes", "mutants", "falsified_by"), list),
        "volatile": dict,
    }
    assert sorted(any_type) == sorted(
        ("measured", "claimed", "witness", "plot", "slack", "scale", "certified")
    )
