"""Every verdict earns its word: the mutant framework, and `verify --mutants` on the quick profile.

A check declares mutants (deliberately broken variants of what it checks); under a mutant a
correct check must fail. These tests run every declared mutant of the quick profile once (one
`verify --mutants` run shared by the module) and assert that each passing verdict names a
mutant that flips it, that every verdict states its scope, and that the framework downgrades a
verified verdict nobody can falsify."""

import json
import os

import pytest

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


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    import torch

    out = tmp_path_factory.mktemp("verify_mutants")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers compute with the client's count: one each, no overload
    try:
        rc = run_verify(profile="quick", out=out, progress=False, mutants=True, jobs=MUTANT_JOBS)
    finally:
        torch.set_num_threads(threads)
    data = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    return rc, {v["claim"]: v for v in data["verdicts"]}, data["meta"]


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
            assert isinstance(m["formula_read"], bool) and m["kind"] in ("rate", "scale", "regime")


def test_no_verified_verdict_survives_a_required_claim_mutant(mutant_run):
    _, recs, _ = mutant_run
    bad = {}
    for c, r in recs.items():
        if r["verdict"] not in VERIFIED or not r.get("claim_mutants"):
            continue
        cms = r["claim_mutants"]
        scale = [m for m in cms if m["kind"] == "scale" and m["required"]]
        rate = [m for m in cms if m["kind"] == "rate"]
        if scale and not any(m["flips"] for m in scale):
            bad[c] = "scale"
        if (
            rate
            and not any(m["flips"] for m in rate)
            and "loose by" not in r.get("claim_mutant_note", "")
        ):
            bad[c] = "rate"
    assert not bad, bad


def test_hc_t2b_is_not_verified_as_a_lower_bound(mutant_run):
    _, recs, _ = mutant_run
    assert recs["HC-T2b"]["verdict"] not in VERIFIED


# ------------------------------------------------------------------------------ the framework


@pytest.fixture
def fake_check(monkeypatch):
    """Register a throwaway claim check (restored afterwards)."""
    added = []

    def make(cid, verdict_fn, mutants=None):
        monkeypatch.setitem(CHECKS, cid, None)
        del CHECKS[cid]
        _core.check(cid, mutants=mutants)(verdict_fn)
        added.append(cid)
        return CHECKS[cid]

    yield make
    for cid in added:
        CHECKS.pop(cid, None)
        MUTANTS.pop(cid, None)


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
