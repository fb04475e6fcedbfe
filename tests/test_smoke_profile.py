"""The smoke profile: every claim cheaply, honestly. A check runs its quick
grid unless it gives a smaller smoke one; trained evidence comes from cached cells only; what the
cheap pass cannot decide is not-checkable with a reason starting "smoke profile:"; smoke has
its own cache keys and profile name, and never changes what quick computes. Also the
sub-progress hook and the ETA the verify bar shows."""

import io
import json

import pytest

from approxtheory.progress import VerifyProgress, eta_seconds, format_eta
from approxtheory.proofs_check import PROFILES, Context, Verdict, _core, check_hash
from approxtheory.verify import run_verify


def test_the_smoke_context_runs_on_quick_with_its_own_name_and_key():
    assert "smoke" in PROFILES
    s = Context(profile="smoke")
    assert (s.profile, s.smoke, s.name, s.grid) == ("quick", True, "smoke", "smoke")
    assert s == Context(smoke=True)
    q, f = Context(), Context(profile="full")
    assert (q.name, q.grid, f.name, f.grid) == ("quick", "quick", "full", "full")
    assert s.pick(1, 2, smoke=3) == 3 and s.pick(1, 2) == 1
    assert q.pick(1, 2, smoke=3) == 1 and f.pick(1, 2, smoke=3) == 2
    cid = "HC-L8"
    assert check_hash(cid, s) != check_hash(cid, q)
    with pytest.raises(ValueError, match="quick"):
        Context(profile="full", smoke=True)


def test_an_undecided_smoke_check_is_not_checkable_with_the_reason(fake_check):
    def fn(ctx, cid):
        ctx.undecided("the small grid has one point, no slope")
        return Verdict(cid, "refuted", "decided", scope="full")

    chk = fake_check("ZZ-SMOKE1", fn)
    v = chk(Context(profile="smoke"))
    assert v.verdict == "not-checkable" and v.scope == "none"
    assert v.evidence == "smoke profile: the small grid has one point, no slope"
    assert chk(Context()).verdict == "refuted"  # quick: undecided() does nothing


def test_smoke_trains_nothing_and_says_so(fake_check, tmp_path, monkeypatch):
    """Under smoke an experiment with no cached cells is not trained: the check's own
    not-checkable path runs and its reason starts with "smoke profile:"."""
    monkeypatch.chdir(tmp_path)  # an empty ./results
    _core._experiment_rows.cache_clear()

    def fn(ctx, cid):
        rows, _, _, note = _core.experiment_rows("identifiability_training", ctx.profile)
        if rows is None:
            return _core.not_run(cid, "identifiability_training", ctx.profile, note)
        return Verdict(cid, "consistent-empirical", "trained", scope="full")

    v = fake_check("ZZ-SMOKE2", fn)(Context(profile="smoke"))
    _core._experiment_rows.cache_clear()
    assert v.verdict == "not-checkable"
    assert v.evidence.startswith("smoke profile: identifiability_training not trained")
    assert not _core._SMOKE_SKIPS


def test_memoised_measurements_are_kept_apart_for_smoke(fake_check):
    calls = []

    @_core.memo
    def grid(profile):
        calls.append(profile)
        return len(calls)

    def fn(ctx, cid):
        return Verdict(cid, "not-checkable", f"value {grid(ctx.profile)}", scope="none")

    chk = fake_check("ZZ-SMOKE3", fn)
    assert chk(Context()).evidence == "value 1"
    assert chk(Context(profile="smoke")).evidence == "value 2"  # not quick's value
    assert chk(Context()).evidence == "value 1" and len(calls) == 2


def test_smoke_grids_add_no_certified_bracket_and_report_progress(fake_check):
    seen = []

    def fn(ctx, cid):
        rows, _ = _core.construction_grid(
            "softmax_retrieval", {"T": [4], "beta": [10.0, 100.0]}, budget=16
        )
        return Verdict(cid, "not-checkable", json.dumps(rows), scope="none")

    chk = fake_check("ZZ-SMOKE4", fn)
    _core.set_progress_hook(lambda stage, i, n: seen.append((stage, i, n)))
    try:
        rows = json.loads(chk(Context(profile="smoke")).evidence)
    finally:
        _core.set_progress_hook(None)
    assert rows and not any("sup_error_upper" in r or "certified" in r for r in rows)
    assert seen == [("softmax_retrieval cells", 1, 2), ("softmax_retrieval cells", 2, 2)]
    quick = json.loads(chk(Context()).evidence)  # quick still computes its bracket
    assert all("sup_error_upper" in r for r in quick)
    assert [r["sup_error"] for r in quick] == [r["sup_error"] for r in rows]
    Context().progress("nobody listens", 1, 2)  # no hook: nothing happens


def test_a_smoke_run_names_its_profile_and_keeps_quick_verdicts(tmp_path):
    """Claims whose checks give no smoke value get quick's verdict, evidence and rows."""
    ids = ["HC-L8", "HC-P6", "ID-B4.6"]
    assert run_verify(profile="smoke", only=ids, out=tmp_path / "s", progress=False) == 0
    assert run_verify(profile="quick", only=ids, out=tmp_path / "q", progress=False) == 0
    s = json.loads((tmp_path / "s" / "verdicts.json").read_text(encoding="utf-8"))
    q = json.loads((tmp_path / "q" / "verdicts.json").read_text(encoding="utf-8"))
    assert s["meta"]["profile"] == "smoke" and q["meta"]["profile"] == "quick"
    for a, b in zip(s["verdicts"], q["verdicts"]):
        assert a["cache_key"] != b["cache_key"]
        assert {**a, "cache_key": ""} == {**b, "cache_key": ""}


def test_the_eta_uses_the_previous_run_scaled_and_clipped():
    # previous run: A 10 s, B 30 s, C 60 s; this run did A in 20 s (twice as slow)
    exp = {"A": 10.0, "B": 30.0, "C": 60.0}
    assert eta_seconds(["B", "C"], {"A": 20.0}, exp) == pytest.approx(180.0)
    # B running for 10 s of its expected 60: 50 + 120 left
    assert eta_seconds(["B", "C"], {"A": 20.0}, exp, "B", 10.0) == pytest.approx(170.0)
    # one claim 1000x slower cannot scale the rest by more than 5
    assert eta_seconds(["C"], {"A": 10000.0}, exp) == pytest.approx(300.0)
    # a claim with no previous time counts as the median (30 s)
    assert eta_seconds(["D"], {}, exp) == pytest.approx(30.0)
    # no previous run: the mean per done claim
    assert eta_seconds(["X", "Y"], {"A": 4.0, "B": 6.0}, {}) == pytest.approx(10.0)
    assert eta_seconds(["X"], {}, {}) is None and eta_seconds([], {}, {}) == 0.0
    assert (format_eta(None), format_eta(7.4), format_eta(65), format_eta(3725)) == (
        "ETA ?",
        "ETA ~7s",
        "ETA ~1m05s",
        "ETA ~1h02m",
    )


def test_the_bar_prints_nothing_disabled_and_no_sub_progress_off_a_terminal():
    hooks = []
    quiet = io.StringIO()
    bar = VerifyProgress(["A"], "verify (smoke)", disable=True, file=quiet)
    bar.start("A")
    with bar.sub_progress(hooks.append):
        bar.stage("mutants")
    bar.done("A", {"A": {"cached": False, "duration_s": 1.0}})
    bar.close()
    assert quiet.getvalue() == "" and hooks == []
    pipe = io.StringIO()  # not a TTY: the claim lines as before, no sub-progress hook
    bar = VerifyProgress(["A", "B"], "verify (smoke)", file=pipe)
    bar.start("A")
    with bar.sub_progress(hooks.append):
        pass
    bar.done("A", {"A": {"cached": False, "duration_s": 1.0}})
    bar.close()
    assert hooks == [] and bar.finished == {"A": 1.0}
