"""Every verdict earns its word: the mutant framework, and `verify --mutants` on the quick profile.

A check declares mutants (deliberately broken variants of what it checks); under a mutant a
correct check must fail. These tests run every declared mutant of the quick profile once (one
`verify --mutants` run shared by the module) and assert that each passing verdict names a
mutant that flips it, that every verdict states its scope, and that the framework downgrades a
verified verdict nobody can falsify."""

import json
import os

import pytest

from approxtheory import claims as at_claims
from approxtheory.proofs_check import (
    CHECKS,
    MUTANTS,
    PASSING,
    SCOPES,
    VERIFIED,
    Context,
    Verdict,
    _core,
    check_hash,
)
from approxtheory.verify import run_verify

#: claims checked side by side (``verify --jobs``; the records are the same bytes as one at a
#: time, tests/test_verify_jobs.py): the mutant run was 948 s of CI's 31 minutes in one process
MUTANT_JOBS = max(1, min(4, os.cpu_count() or 1))


#: claims whose mutants run on every revision (the tests below name them); the others rotate
CORE = ("HC-T2b", "HC-K1", "HC-P6b", "IF-T2", "PR-E4", "PR-A1", "ID-F4.7", "TO-X3")
#: one claim in ROTATION runs its mutants on each revision (the full run is ``-m slow``, and
#: ``APPROXTHEORY_MUTANTS_ALL=1`` runs every claim here too)
ROTATION = 3


def mutant_subset(revision: str | None, every: bool = False) -> list[str] | None:
    """The claims whose mutants this revision's tests run: :data:`CORE` and the catalogue's
    claims at positions ``k, k + ROTATION, ...`` with ``k`` from the git revision (a different
    third on each commit, the same on every machine); None (all) with ``every``. Claims with
    nothing to mutate (no declared mutant, no formula) are left out: ``--mutants --only``
    refuses them."""
    if every:
        return None
    k = int(revision, 16) % ROTATION if revision else 0
    ids = _mutable_ids()
    return [cid for i, cid in enumerate(ids) if i % ROTATION == k or cid in CORE]


def _mutable_ids() -> list[str]:
    """The catalogue's claims that have a declared mutant or a formula, in catalogue order."""
    from approxtheory import claims

    return [c.id for c in claims() if MUTANTS.get(c.id) or c.expressions]


def _mutant_run(out, only):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers compute with the client's count: one each, no overload
    try:
        rc = run_verify(
            profile="quick", only=only, out=out, progress=False, mutants=True, jobs=MUTANT_JOBS
        )
    finally:
        torch.set_num_threads(threads)
    data = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    return rc, {v["claim"]: v for v in data["verdicts"]}, data["meta"]


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from approxtheory.provenance import git_revision

    every = os.environ.get("APPROXTHEORY_MUTANTS_ALL") == "1"
    out = tmp_path_factory.mktemp("verify_mutants")
    return _mutant_run(out, mutant_subset(git_revision(), every))


def test_the_rotation_covers_every_claim_and_the_core():
    """Every claim with something to mutate runs on some revision; none that --mutants --only
    refuses is ever picked (the revisions below cover every residue)."""
    subsets = [set(mutant_subset(f"{k:07x}")) for k in range(ROTATION)]
    assert set().union(*subsets) == set(_mutable_ids())
    bare = {c.id for c in at_claims() if not MUTANTS.get(c.id) and not c.expressions}
    assert bare and not bare & set().union(*subsets)
    assert all(set(CORE) <= s for s in subsets)
    assert mutant_subset("abc", every=True) is None


@pytest.mark.slow
def test_every_claim_mutants_full_run(tmp_path):
    """The whole quick profile under --mutants: nothing errors, every required mutant of a
    passing verdict is caught or the verdict is downgraded."""
    rc, recs, meta = _mutant_run(tmp_path, None)
    assert rc == 0
    summary = meta["mutant_summary"]
    assert not summary["errors"], summary["errors"]
    for cid, names in summary["surviving"].items():  # a survivor downgrades its verdict
        assert recs[cid].get("downgraded_from"), (cid, names)


def test_the_run_completes(mutant_run):
    rc, recs, meta = mutant_run
    assert rc == 0, [c for c, r in recs.items() if r["verdict"] == "error"]
    assert meta["mutants"] is True


def test_every_verdict_states_its_scope(mutant_run):
    _, recs, _ = mutant_run
    bad = {c: r["scope"] for c, r in recs.items() if r["scope"].split(":")[0].strip() not in SCOPES}
    assert not bad, bad
    for c, r in recs.items():
        if r["scope"].startswith(("partial", "surrogate")):
            assert len(r["scope"].split(":", 1)[-1].strip()) > 5, (c, r["scope"])


def test_every_verified_verdict_names_a_mutant_that_flips_it(mutant_run):
    _, recs, _ = mutant_run
    missing = [c for c, r in recs.items() if r["verdict"] in VERIFIED and not r["falsified_by"]]
    assert not missing, missing


def test_every_declared_mutant_of_a_passing_check_flips_it(mutant_run):
    """A declared mutant that does not flip its check is either a weak mutant or a check that
    cannot fail; both must be fixed, not tolerated."""
    _, recs, _ = mutant_run
    weak = {
        c: [m["name"] for m in r.get("mutant_results", []) if not m["flips"]]
        for c, r in recs.items()
    }
    weak = {c: ms for c, ms in weak.items() if ms}
    assert not weak, weak


def test_every_passing_claim_with_a_formula_ran_its_claim_mutants(mutant_run):
    """Claim mutants (generated from the claim's sympy tree) ran for every passing claim with a
    formula, and each record says whether the check read the mutated formula."""
    from approxtheory import claim

    _, recs, _ = mutant_run
    missing = [
        c
        for c, r in recs.items()
        if r["verdict"] in PASSING and claim(c).expressions and "claim_mutants" not in r
    ]
    assert not missing, missing
    for r in recs.values():
        for m in r.get("claim_mutants", []):
            assert isinstance(m["formula_read"], bool) and m["kind"] in (
                "rate",
                "scale",
                "sign",
                "const",
                "regime",
                "pivot",
                "kind",
            )


def test_no_verified_verdict_survives_a_required_claim_mutant(mutant_run):
    _, recs, _ = mutant_run
    bad = {}
    for c, r in recs.items():
        if r["verdict"] not in VERIFIED or not r.get("claim_mutants"):
            continue
        cms = r["claim_mutants"]
        scale = [m for m in cms if m["kind"] == "scale" and m["required"]]
        # a rate mutant of an exponent whose symbols are fitted or unknown is not required
        rate = [m for m in cms if m["kind"] == "rate" and m["required"]]
        if scale and not any(m["flips"] for m in scale):
            bad[c] = "scale"
        if (
            rate
            and not any(m["flips"] for m in rate)
            and "loose by" not in r.get("claim_mutant_note", "")
        ):
            bad[c] = "rate"
        pivots: dict = {}
        for m in cms:
            if m["kind"] == "pivot" and m["required"]:
                pivots.setdefault(m["name"].split(":", 1)[1], []).append(m["flips"])
        if any(not any(f) for f in pivots.values()):
            bad[c] = "pivot"
        flips = [m for m in cms if m["kind"] == "kind" and m["required"]]
        if flips and not any(m["flips"] for m in flips):
            bad[c] = "kind"
    assert not bad, bad


def test_hc_t2b_is_not_verified_as_a_lower_bound(mutant_run):
    _, recs, _ = mutant_run
    assert recs["HC-T2b"]["verdict"] not in VERIFIED


# ------------------------------------------------------------------------------ the framework


def test_a_check_without_mutants_cannot_be_verified(fake_check):
    def fn(ctx, cid):
        return Verdict(cid, "verified-numeric", "all good", scope="full")

    v = fake_check("ZZ-NOMUT", fn)(Context())
    assert v.verdict == "consistent-empirical" and "downgraded" in v.evidence


def test_a_mutant_runs_the_broken_variant_and_flips(fake_check):
    def fn(ctx, cid):
        value = 2.0 if ctx.is_mutant("doubled") else 1.0
        ok = value <= 1.0
        return Verdict(cid, "verified-numeric" if ok else "refuted", f"value {value}", scope="full")

    chk = fake_check("ZZ-MUT", fn, mutants={"doubled": "the value doubled"})
    assert chk(Context()).verdict == "verified-numeric"
    assert chk(Context(mutant="doubled")).verdict == "refuted"
    assert _core.flips("verified-numeric", "refuted")
    assert not _core.flips("verified-numeric", "error")
    with pytest.raises(ValueError, match="declares no mutant"):
        chk(Context(mutant="nonexistent"))


def test_mutant_runs_have_their_own_cache_key():
    cid = next(iter(CHECKS))
    assert check_hash(cid, Context()) != check_hash(cid, Context(mutant="x"))


def test_scope_must_be_one_of_the_scheme():
    with pytest.raises(ValueError, match="scope"):
        Verdict("X", "verified-numeric", "e", scope="everything")
    assert Verdict("X", "not-checkable", "why").scope == "none"


def _pipeline(cid, tmp_path, base="PR-S6"):
    """``cid``'s record through verify's mutant pipeline, as a claim shaped like ``base`` (no
    formula), with a fresh cache."""
    from dataclasses import replace

    from approxtheory.catalogue import claim
    from approxtheory.verify import _Cache, _verify_claim

    c = replace(claim(base), id=cid)
    return _verify_claim(c, Context(), _Cache(tmp_path / ".cache", use=False), {}, True)


def test_an_empirical_verdict_no_mutant_flips_is_downgraded(fake_check, tmp_path):
    def fn(ctx, cid):  # a fixed band that reads nothing the mutant changes
        return Verdict(cid, "consistent-empirical", "gap has the right sign", scope="full")

    fake_check("ZZ-EMP", fn, mutants={"relabelled": "the rows relabelled"})
    rec = _pipeline("ZZ-EMP", tmp_path)
    assert rec["verdict"] == "not-checkable" and rec["downgraded_from"] == "consistent-empirical"
    assert "cannot earn a consistent-empirical verdict" in rec["evidence"]
    assert rec["mutant_results"] == [
        {
            "name": "relabelled",
            "breaks": "the rows relabelled",
            "verdict": "consistent-empirical",
            "flips": False,
        }
    ]


def test_an_empirical_verdict_its_mutant_flips_keeps_it(fake_check, tmp_path):
    def fn(ctx, cid):
        bad = ctx.is_mutant("relabelled")
        return Verdict(cid, "inconsistent" if bad else "consistent-empirical", "e", scope="full")

    fake_check("ZZ-EMP2", fn, mutants={"relabelled": "the rows relabelled"})
    rec = _pipeline("ZZ-EMP2", tmp_path)
    assert rec["verdict"] == "consistent-empirical" and rec["falsified_by"] == ["relabelled"]
    assert "downgraded_from" not in rec


def test_a_check_that_raises_on_a_mutant_is_a_defect_not_a_catch(fake_check, tmp_path):
    from approxtheory.verify import mutant_summary, mutant_summary_line

    def fn(ctx, cid):
        if ctx.is_mutant("crash"):
            raise ZeroDivisionError("planted crash")
        if ctx.is_mutant("doubled"):
            return Verdict(cid, "refuted", "value 2", scope="full")
        return Verdict(cid, "verified-numeric", "value 1", scope="full")

    fake_check("ZZ-CRASH", fn, mutants={"crash": "divides by zero", "doubled": "doubled"})
    rec = _pipeline("ZZ-CRASH", tmp_path)
    by = {m["name"]: m for m in rec["mutant_results"]}
    assert by["crash"]["verdict"] == "error" and not by["crash"]["flips"]
    assert "planted crash" in by["crash"]["error"]
    assert rec["mutant_errors"] == ["crash"] and rec["falsified_by"] == ["doubled"]
    assert rec["verdict"] == "verified-numeric"  # caught by "doubled"; the crash caught nothing
    s = mutant_summary([rec])
    assert (s["required_caught"], s["required"]) == (1, 1)  # one of the declared flips
    assert s["errors"] == {"ZZ-CRASH": ["crash"]} and not s["surviving"]
    line = mutant_summary_line(s)
    assert line.startswith("mutants: required caught 1/1") and "defects" in line
    # only a crash: nothing caught, the verified verdict is downgraded
    fake_check("ZZ-CRASH2", fn, mutants={"crash": "divides by zero"})
    rec = _pipeline("ZZ-CRASH2", tmp_path)
    assert rec["verdict"] == "consistent-empirical" and rec["mutant_errors"] == ["crash"]
    s = mutant_summary([rec])
    assert s["surviving"] == {"ZZ-CRASH2": ["declared (crash)"]}
    assert s["downgraded"] == {"ZZ-CRASH2": "verified-numeric -> consistent-empirical"}


def test_mutants_on_a_claim_with_nothing_to_mutate_is_one_line_exit_2(tmp_path, capsys):
    from approxtheory.cli import main

    assert main(["verify", "--mutants", "--only", "HC-TR1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no declared mutant and no formula" in err[0]


def test_expressions_no_run_of_the_check_reads_are_reported(fake_check, tmp_path, monkeypatch):
    """A check that reads the claim's ratio but never its U_qk: the record and the summary
    name U_qk (a formula nothing tests), whatever the verdict."""
    from dataclasses import replace

    from approxtheory import catalogue
    from approxtheory.catalogue import claim
    from approxtheory.verify import _Cache, _verify_claim, mutant_summary

    c = replace(claim("ID-GQA4.9"), id="ZZ-READ")
    monkeypatch.setitem(catalogue._REGISTRY, "ZZ-READ", c)

    def fn(ctx, cid):
        value = float(claim(cid).evaluate("ratio", G=1, H=2))  # only the ratio is read
        ok = abs(value - 1 / 6) < 1e-12
        return Verdict(cid, "verified-numeric" if ok else "refuted", f"ratio {value}", scope="full")

    fake_check("ZZ-READ", fn, mutants={"nothing": "a mutant that changes nothing"})
    rec = _verify_claim(c, Context(), _Cache(tmp_path / ".cache", use=False), {}, True)
    assert rec["unread_expressions"] == ["U", "P", "U_qk"]
    assert mutant_summary([rec])["unread"] == {"ZZ-READ": ["U", "P", "U_qk"]}
