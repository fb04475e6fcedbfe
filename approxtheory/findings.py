"""The committed findings: the verdicts file that ``approxtheory verify`` wrote, checked and read
back (:func:`read_findings`, :func:`load_findings`), and :func:`verdicts`, one record per claim.

The docs pages (:mod:`approxtheory.docs`) and the advisor (:mod:`approxtheory.advise`) read the
verdicts through this module; it sits in the catalogue layer, so a module that needs a claim's
current verdict does not import the docs (which register every experiment).

>>> from approxtheory.findings import COMMITTED, load_findings
>>> f = load_findings(COMMITTED)
>>> f is None or f["verdicts"][0]["claim"] == "HC-T1"
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalogue import claims
from .errors import ApproxTheoryError
from .io import read_json_entry
from .report import VERDICT_ORDER

__all__ = ["COMMITTED", "MAX_VERDICTS_BYTES", "read_findings", "load_findings", "verdicts"]

#: the largest verdicts file read (a real quick run's is about 0.3 MB)
MAX_VERDICTS_BYTES = 16 * 2**20
#: the committed run of a checkout (``docs/findings/verdicts.json``; absent from an installed
#: wheel, where :func:`load_findings` returns None)
COMMITTED = Path(__file__).resolve().parents[1] / "docs" / "findings" / "verdicts.json"


def _bad(source, why: str) -> ApproxTheoryError:
    return ApproxTheoryError(
        f"{source} is not a verify verdicts.json ({why}); give the verdicts.json that "
        "`approxtheory verify` wrote"
    )


def read_findings(data: Any, source: str = "the verdicts file") -> dict:
    """``data`` (a parsed verdicts.json) checked to be what ``verify`` writes: ``meta`` with its
    profile and git revision, ``verdicts`` a list of records each with a claim id and a verdict
    of :data:`~approxtheory.report.VERDICT_ORDER`; a typed error saying what is wrong otherwise.
    Returns ``{"meta": ..., "verdicts": [...]}`` with the records in catalogue order (claims no
    longer in the catalogue last, by id)."""
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise _bad(source, "no 'meta' object")
    meta, records = data["meta"], data.get("verdicts")
    for key in ("profile", "git"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise _bad(source, f"meta has no {key!r} string")
    if not isinstance(records, list) or not records:
        raise _bad(source, "'verdicts' is not a non-empty list")
    seen = set()
    for r in records:
        if not isinstance(r, dict) or not isinstance(r.get("claim"), str):
            raise _bad(source, "a record without a 'claim' id")
        if r.get("verdict") not in VERDICT_ORDER:
            raise _bad(
                source,
                f"{r['claim']}: verdict {r.get('verdict')!r} is not one of "
                + ", ".join(VERDICT_ORDER),
            )
        if r["claim"] in seen:
            raise _bad(source, f"{r['claim']} appears twice")
        seen.add(r["claim"])
    order = {c.id: i for i, c in enumerate(claims())}
    records = sorted(records, key=lambda r: (order.get(r["claim"], len(order)), r["claim"]))
    return {"meta": meta, "verdicts": records}


def load_findings(path: Path | str) -> dict | None:
    """The committed findings at ``path`` (:func:`read_findings`), or None when there is no file
    there; a file that is not a verdicts file is a typed error."""
    path = Path(path)
    if not path.exists():
        return None
    data = read_json_entry(path, max_bytes=MAX_VERDICTS_BYTES)
    if data is None:
        raise _bad(path, "not a regular file of strict JSON of at most 16 MiB")
    out = read_findings(data, str(path))
    mutants = load_mutants(path.parent / MUTANTS_FILE)
    if mutants is not None:
        out["mutants"] = mutants
    return out


#: the summary of a ``verify --mutants`` run, shipped beside the findings (:func:`mutant_findings`)
MUTANTS_FILE = "mutants.json"


def mutant_findings(data: dict, source: str = "verdicts.json") -> dict:
    """The shipped summary of a ``verify --mutants`` run's verdicts.json contents ``data``: its
    revision and profile, :func:`approxtheory.verify.mutant_summary`, and per passing claim the
    mutants that ran with the verdict each produced (declared; generated, with kind and whether
    required), the expressions no run read, and the verdict before and after the mutants."""
    meta = data.get("meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or not meta.get("mutants") or "mutant_summary" not in meta:
        raise _bad(source, "not the verdicts.json of a `verify --mutants` run")
    claims_out = []
    for r in data.get("verdicts", []):
        if not isinstance(r, dict) or ("mutant_results" not in r and "claim_mutants" not in r):
            continue
        claims_out.append(
            {
                "claim": r["claim"],
                "check_verdict": r.get("downgraded_from") or r["verdict"],
                "verdict": r["verdict"],
                "declared": {m["name"]: m["verdict"] for m in r.get("mutant_results", [])},
                "generated": [
                    {
                        "name": m["name"],
                        "kind": m["kind"],
                        "required": bool(m.get("required")),
                        "verdict": m["verdict"],
                        "caught": bool(m["flips"]),
                    }
                    for m in r.get("claim_mutants", [])
                ],
                "unread": list(r.get("unread_expressions", [])),
            }
        )
    keep = ("profile", "git", "source", "seed", "version")
    return {
        "meta": {k: meta[k] for k in keep if k in meta},
        "summary": meta["mutant_summary"],
        "claims": claims_out,
    }


def load_mutants(path: Path | str) -> dict | None:
    """The shipped mutant summary at ``path`` (None when absent); not JSON is a typed error."""
    path = Path(path)
    if not path.exists():
        return None
    data = read_json_entry(path, max_bytes=MAX_VERDICTS_BYTES)
    if not isinstance(data, dict) or not {"meta", "summary", "claims"} <= data.keys():
        raise _bad(path, "not a shipped mutant summary (meta, summary, claims)")
    return data


def verdicts(findings: dict | None) -> dict[str, dict]:
    """claim id -> its record in ``findings`` (empty for None)."""
    return {} if findings is None else {r["claim"]: r for r in findings["verdicts"]}
