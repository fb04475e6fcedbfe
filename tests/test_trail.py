"""The joined registries: every claim id named by an experiment, a
construction or a check resolves in the catalogue; every experiment's claims are claims whose
check reads it; no orphan; a claim's trail names real files and lines; the claims page's
"checked by / built by / trained in" line."""

import dataclasses
from pathlib import Path

import pytest

import approxtheory.experiment as runner
from approxtheory import trail as tr
from approxtheory.constructions import REGISTRY as CONSTRUCTIONS
from approxtheory.docs import render_claims_markdown, render_trail_line
from approxtheory.experiment import EXPERIMENTS
from approxtheory.proofs_check import CHECKS, Context, _core

#: the joins that do not hold today, each with the fix proposed to the lead: the test
#: asserts the problems are exactly these, so a new dangling reference and a fixed one both fail
KNOWN = {
    # softmax_beta_sweep measures IF-T2's bound (1 + ln βT)/β on the softmax_retrieval
    # construction, but IF-T2's and HC-P2's checks measure their own construction grids and
    # never read its rows: either a check reads the sweep, or it becomes a documented demo
    "experiment softmax_beta_sweep: names IF-T2, whose check does not read softmax_beta_sweep",
    "experiment softmax_beta_sweep: names HC-P2, whose check does not read softmax_beta_sweep",
}


def test_every_registry_join_holds():
    assert set(tr.join_problems()) == KNOWN


def test_a_dangling_experiment_claim_is_reported(monkeypatch):
    """The mutant: a claim id no catalogue entry has, added to one experiment's claims."""
    exp = EXPERIMENTS["headcount_variants"]
    monkeypatch.setattr(exp, "claims", (*exp.claims, "HC-NOPE"))
    problems = tr.join_problems()
    assert "experiment headcount_variants: names 'HC-NOPE', which is not a claim" in problems
    assert set(problems) != KNOWN


@pytest.mark.parametrize(
    "break_it,want",
    [
        (  # an experiment names a claim whose check does not read it
            lambda mp: mp.setattr(
                EXPERIMENTS["headcount_variants"], "claims", ("HC-P10", "HC-Conj1", "HC-K1")
            ),
            "experiment headcount_variants: names HC-K1, whose check does not read "
            "headcount_variants",
        ),
        (  # a check reads an experiment that does not name its claim
            lambda mp: mp.setattr(EXPERIMENTS["headcount_variants"], "claims", ("HC-P10",)),
            "claim HC-Conj1: its check reads experiment headcount_variants, whose claims= does "
            "not name HC-Conj1",
        ),
        (  # an orphan experiment
            lambda mp: mp.setattr(EXPERIMENTS["headcount_real_data"], "claims", ()),
            "experiment headcount_real_data: serves no claim (its claims=() is empty)",
        ),
        (  # a construction naming no claim of the catalogue
            lambda mp: mp.setitem(
                CONSTRUCTIONS, "hc_k2", dataclasses.replace(CONSTRUCTIONS["hc_k2"], claim="HC-K9")
            ),
            "construction hc_k2: names 'HC-K9', which is not a claim",
        ),
        (  # a check under an id that is not a claim
            lambda mp: mp.setitem(CHECKS, "HC-NOPE", CHECKS["HC-K1"]),
            "check HC-NOPE: registered under an id that is not a claim",
        ),
        (  # a claim without a check
            lambda mp: mp.delitem(CHECKS, "HC-P6"),
            "claim HC-P6: no check is registered for it",
        ),
    ],
)
def test_each_broken_join_is_reported(monkeypatch, break_it, want):
    break_it(monkeypatch)
    assert want in tr.join_problems()


def _fake_check(cid, fn, monkeypatch):
    entry = lambda ctx: None  # noqa: E731
    entry.source_fn = fn  # type: ignore[attr-defined]
    monkeypatch.setitem(CHECKS, cid, entry)
    tr.check_reads.cache_clear()
    tr._names_in.cache_clear()


def test_static_reads_follow_helpers_and_f_string_prefixes(monkeypatch):
    def reads_family(ctx, cid):
        for D in (2, 4):
            _core.experiment_rows(f"headcount_phase_d{D}", ctx.profile)

    def names_nothing(ctx, cid):
        return [f"h{i}" for i in range(3)], "headcount_phase is mentioned only in this text"

    try:
        _fake_check("XX-1", reads_family, monkeypatch)
        _fake_check("XX-2", names_nothing, monkeypatch)
        assert tr.check_reads("XX-1")[0] == ("headcount_phase_d2", "headcount_phase_d4")
        assert tr.check_reads("XX-2") == ((), ())
        # a helper of the checks' package is followed: HC-Conj1 reads through _rows
        assert tr.check_reads("HC-Conj1")[0] == ("headcount_variants",)
        # a model builder called directly counts for the constructions it builds
        assert "hc_k1" in tr.check_reads("HC-K1")[1]
    finally:
        tr.check_reads.cache_clear()
        tr._names_in.cache_clear()


def _trained_claims() -> list[str]:
    return sorted(cid for cid in CHECKS if tr.check_reads(cid)[0])


def test_static_reads_contain_what_the_checks_read_when_run(monkeypatch, tmp_path):
    """Every check that reads an experiment, run under smoke with the row reader replaced by a
    recorder that returns no rows (the check then stops as not-checkable, cheaply): every
    experiment it asks for is one :func:`check_reads` found; and two checks that read none."""
    monkeypatch.chdir(tmp_path)  # no cached results are found
    asked: list[str] = []
    get = runner.get

    def rows(name, profile, read_only=False):
        asked.append(name)
        return None, (), 0.0, "recorded by the test"

    def recording_get(name):
        asked.append(name)
        return get(name)

    monkeypatch.setattr(_core, "_experiment_rows", rows)
    monkeypatch.setattr(runner, "get", recording_get)
    trained = _trained_claims()
    assert len(trained) >= 20
    for cid in trained:
        asked.clear()
        CHECKS[cid](Context(profile="smoke"))
        assert asked, f"{cid}: its check read no experiment when run"
        assert set(asked) <= set(tr.check_reads(cid)[0]), (cid, asked)
    for cid in ("HC-P6", "TO-T1"):
        asked.clear()
        CHECKS[cid](Context(profile="smoke"))
        assert not asked and not tr.check_reads(cid)[0], cid


def _line_mentions(ref: tr.Ref, *names: str, span: int = 8) -> bool:
    text = (tr.ROOT / ref.path).read_text(encoding="utf-8").splitlines()
    assert ref.line is not None, ref
    window = "\n".join(text[ref.line - 1 : ref.line - 1 + span])
    return any(n in window for n in names)


def test_every_trail_names_real_files_and_lines():
    for cid, t in tr.trails().items():
        assert _line_mentions(t.catalogue, f'"{cid}"', span=2), t.catalogue
        assert t.check is not None and not Path(t.check.path).is_absolute()
        fn = t.check.name.rsplit(".", 1)[1]
        assert _line_mentions(t.check, f'"{cid}"', f"def {fn}"), t.check
        for ref in (*t.constructions, *t.experiments):
            assert _line_mentions(ref, f'"{ref.name}"', span=3), ref


def test_hc_k1_and_if_p3_trails_take_at_most_six_files():
    k1 = tr.trail("hc-k1")
    assert k1.catalogue.path == "approxtheory/catalogue/headcount.py"
    assert k1.check.path == "proofs_check/headcount/k1.py"
    assert [c.name for c in k1.constructions] == ["hc_k1", "hc_k1_synthetic"]
    assert any(o.startswith("report/data/HC-K1.csv") for o in k1.outputs)
    p3 = tr.trail("IF-P3")
    assert [e.name for e in p3.experiments] == ["infoflow_pmax_heads"]
    assert p3.experiments[0].note == "declared by the experiment, read by the check"
    assert any(o.startswith("results/infoflow_pmax_heads/") for o in p3.outputs)
    for t in (k1, p3):
        files = {r.path for r in (t.catalogue, t.check, *t.constructions, *t.experiments)}
        assert len(files) <= 6, files


def test_the_claims_page_renders_each_trail():
    t = tr.trail("IF-P3")
    line = render_trail_line(t)
    assert line == (
        "Checked by `pmax_head_threshold` in `proofs_check/infoflow/trained_heads.py`; "
        "built by —; trained in "
        "`infoflow_pmax_heads` (`experiments/infoflow_trained.py`)."
    )
    none = dataclasses.replace(t, check=None, experiments=())
    assert render_trail_line(none) == "Checked by no check; built by —; trained in —."
    page = render_claims_markdown(trails={"IF-P3": t})
    section = page[page.index("### IF-P3") :]
    assert section.index(line) < section.index("### ", 4)
    assert page.count("Checked by ") == 1  # only the claims given a trail get a line
