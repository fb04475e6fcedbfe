"""`approxtheory verify`: a verdict for every claim, report files, plots, cache, exit codes."""

import json

import numpy as np
import pytest

import approxtheory as at
from approxtheory.cli import main
from approxtheory.measure import errors
from approxtheory.proofs_check import CHECKS, VERDICTS, missing_checks

# verdicts fixed by what the constructions' tests establish independently (test_constructions):
# HC-K1's stated gate is refuted by a hand witness; the other constructions meet their bounds
PINNED = {
    "HC-K1": "refuted",
    "HC-K2": "verified-numeric",
    "HC-L9": "verified-numeric",
    "IF-T2": "verified-numeric",
    "IF-K1": "verified-numeric",
    "IF-K2": "verified-numeric",
    "PR-N1": "verified-symbolic",
}


def test_every_claim_has_a_check():
    assert missing_checks() == []


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    rc = main(["verify", "--out", str(out), "--quiet"])
    return rc, out


def test_quick_verify_writes_a_verdict_for_every_claim(report):
    rc, out = report
    assert rc == 0
    d = json.loads((out / "verdicts.json").read_text())
    ids = [r["claim"] for r in d["verdicts"]]
    assert sorted(ids) == sorted(c.id for c in at.claims())
    for r in d["verdicts"]:
        assert r["verdict"] in VERDICTS and r["verdict"] != "error", r
        assert r["evidence"]
        if r["verdict"] == "not-checkable":
            assert len(r["evidence"]) > 20  # the reason
        if r["verdict"] == "refuted" and r["claimed"] is not None:
            # a witness, and a measurement on the wrong side of the claim (above an upper bound,
            # below a lower one or outside a stated range: numbers differ, ranges say which)
            assert r["witness"] is not None, r
            if all(isinstance(r[k], (int, float)) for k in ("measured", "claimed")):
                assert r["measured"] != pytest.approx(r["claimed"]), r
    v = {r["claim"]: r["verdict"] for r in d["verdicts"]}
    assert {c: v[c] for c in PINNED} == PINNED
    assert d["meta"]["schema_version"] == 1 and d["meta"]["libraries"]["torch"]
    for f in ("report.md", "report.html"):
        text = (out / f).read_text()
        assert all(c.id in text for c in at.claims())


def test_hc_k1_refutation_witness_reproduces_on_the_construction(report):
    """The witness of HC-K1's refutation, fed to the one HC-K1 head of its worst cell (the
    paper's gate -1), gives the recorded error, far above the claimed bound; the recorded bound
    is the catalogue's at that cell."""
    from approxtheory.proofs_check.headcount import _head_model
    from approxtheory.report import read_csv

    _, out = report
    d = json.loads((out / "verdicts.json").read_text())
    r = next(r for r in d["verdicts"] if r["claim"] == "HC-K1")
    assert r["verdict"] == "refuted"
    rows = read_csv(out / "data" / "HC-K1.csv")
    cell = next(
        x
        for x in rows
        if float(x["sup_error"]) == pytest.approx(r["measured"], rel=1e-12)
        and float(x["claimed_bound"]) == pytest.approx(r["claimed"], rel=1e-12)
    )
    T, S, beta, gate = int(cell["T"]), int(cell["S"]), float(cell["beta"]), float(cell["gate"])
    model, task = _head_model(T, S, beta, gate)
    w = np.asarray(r["witness"], dtype=np.float64).reshape(1, T, 1)
    e = errors(model, task, w)[0]
    assert e == pytest.approx(r["measured"], rel=1e-9)
    bound = at.claim("HC-K1").evaluate_float("err_bound", T=T, S=S, beta=beta)
    assert r["claimed"] == pytest.approx(bound, rel=1e-12)
    assert e > 100 * r["claimed"]


def test_construction_claims_have_plots_drawn_from_csv(report):
    _, out = report
    d = json.loads((out / "verdicts.json").read_text())
    for r in d["verdicts"]:
        c = at.claim(r["claim"])
        if c.kind == "construction" and r["verdict"] != "not-checkable":
            assert r["plots"], r["claim"]
            for p in r["plots"]:
                assert (out / p).stat().st_size > 1000
            assert all((out / p).exists() for p in r["csv"])
        if c.kind == "rate" and r["verdict"] != "not-checkable":
            assert any("slopes" in p for p in r["plots"]), r["claim"]


def test_rerun_uses_the_cache(report, capsys):
    _, out = report
    before = {p.name: p.stat().st_mtime_ns for p in (out / ".cache").iterdir()}
    verdicts = (out / "verdicts.json").read_bytes()
    csvs = {p.name: p.read_bytes() for p in (out / "data").iterdir()}
    assert main(["verify", "--out", str(out), "--quiet"]) == 0
    after = {p.name: p.stat().st_mtime_ns for p in (out / ".cache").iterdir()}
    assert before == after  # nothing recomputed
    # the same bytes from the cache (timings are in timings.json, not in these files)
    assert (out / "verdicts.json").read_bytes() == verdicts
    assert {p.name: p.read_bytes() for p in (out / "data").iterdir()} == csvs
    t = json.loads((out / "timings.json").read_text())
    assert t["wall_s"] > 0 and all(c["cached"] for c in t["claims"].values())


def test_only_filters_and_fail_on_refuted(tmp_path):
    assert main(["verify", "--only", "HC-K1", "PR-N1", "--out", str(tmp_path), "--quiet"]) == 0
    d = json.loads((tmp_path / "verdicts.json").read_text())
    assert [r["claim"] for r in d["verdicts"]] == ["HC-K1", "PR-N1"]
    assert d["verdicts"][0]["verdict"] == "refuted"
    assert (
        main(
            ["verify", "--only", "HC-K1", "--out", str(tmp_path), "--quiet", "--fail-on", "refuted"]
        )
        == 1
    )
    assert main(["verify", "--only", "prism", "--out", str(tmp_path), "--quiet"]) == 0
    d = json.loads((tmp_path / "verdicts.json").read_text())
    # the Prism paper's claims, by their id prefix (not through the filter under test)
    prism = {c.id for c in at.claims() if c.id.startswith("PR-")}
    assert len(prism) >= 5 and {r["claim"] for r in d["verdicts"]} == prism


def test_a_crashing_check_exits_1_and_the_others_still_run(tmp_path, monkeypatch):
    def boom(ctx):
        raise RuntimeError("planted failure")

    boom.source_fn = CHECKS["PR-S"].source_fn
    monkeypatch.setitem(CHECKS, "PR-S", boom)
    rc = main(["verify", "--only", "PR-S", "PR-N1", "--out", str(tmp_path), "--quiet"])
    assert rc == 1
    d = json.loads((tmp_path / "verdicts.json").read_text())
    v = {r["claim"]: r for r in d["verdicts"]}
    assert v["PR-S"]["verdict"] == "error" and "planted failure" in v["PR-S"]["evidence"]
    assert v["PR-N1"]["verdict"] == "verified-symbolic"
    assert "PR-S" in (tmp_path / "report.md").read_text()


def test_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["verify", "--only", "HC-XX", "--out", str(tmp_path)]) == 2
    assert "unknown claim id" in capsys.readouterr().err
    assert main(["verify", "--profile", "huge"]) == 2


# ----------------------------------------------------------------------------- files

HOSTILE_TEXT = "a | b `c` <script>alert(1)</script>\n| injected | row |\r\n[x](javascript:y) *e*"


@pytest.fixture
def planted(monkeypatch):
    """PR-N1's check replaced by one whose record has non-finite numbers and hostile text."""
    from approxtheory.proofs_check._core import Verdict

    def planted_check(ctx):
        return Verdict(
            "PR-N1",
            "refuted",
            HOSTILE_TEXT,
            covered=HOSTILE_TEXT,
            measured=float("nan"),
            claimed=[float("inf"), -float("inf")],
            witness={"x": HOSTILE_TEXT, "v": float("nan")},
            scope="partial: " + HOSTILE_TEXT,
            volatile={"rate": float("inf"), "note": HOSTILE_TEXT},
        )

    planted_check.source_fn = CHECKS["PR-N1"].source_fn
    monkeypatch.setitem(CHECKS, "PR-N1", planted_check)


def _strict(text: str, what: str):
    def refuse(c):
        pytest.fail(f"{what}: literal {c}")

    return json.loads(text, parse_constant=refuse)


def test_verdicts_json_is_strict_json_with_nonfinite_markers(tmp_path, planted):
    import math

    from approxtheory.io import read_json_entry

    assert main(["verify", "--only", "PR-N1", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("verdicts.json", "timings.json"):
        _strict((tmp_path / name).read_text(), name)
    v = json.loads((tmp_path / "verdicts.json").read_text())["verdicts"][0]
    assert v["measured"] == {"$float": "nan"}
    assert v["claimed"] == [{"$float": "inf"}, {"$float": "-inf"}]
    back = read_json_entry(tmp_path / "verdicts.json")["verdicts"][0]  # decodes the markers
    assert math.isnan(back["measured"]) and back["claimed"] == [math.inf, -math.inf]
    # and the cache entry is strict too, and served
    entry = next((tmp_path / ".cache").glob("PR-N1.*.json"))
    _strict(entry.read_text(), entry.name)
    before = (tmp_path / "verdicts.json").read_bytes()
    assert main(["verify", "--only", "PR-N1", "--out", str(tmp_path), "--quiet"]) == 0
    t = json.loads((tmp_path / "timings.json").read_text())["claims"]["PR-N1"]
    assert t["cached"] and (tmp_path / "verdicts.json").read_bytes() == before


def test_report_md_escapes_record_text(tmp_path, planted):
    assert main(["verify", "--only", "PR-N1", "HC-L8", "--out", str(tmp_path), "--quiet"]) == 0
    md = (tmp_path / "report.md").read_text()
    lines = md.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| claim |"))
    table = lines[header:]
    assert len(table) == 2 + 2  # header, rule, one row per claim: no injected row or break
    ncells = table[0].count(" | ")
    row = next(ln for ln in table if ln.startswith("| PR-N1 |"))
    assert row.replace("\\|", "").count(" | ") == ncells  # the record's pipes are escaped
    # outside code spans (whose content is literal text) no markup survives
    import re

    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md.replace("\\`", ""))
    assert "<script>" not in prose and "&lt;script&gt;" in prose
    assert not re.search(r"(?<!\\)\]\(javascript", prose) and "\\[x\\]" in prose
    assert "``{'x': 'a \\| b `c` <script>" in row  # the witness: a code span, pipes escaped
    assert "\\`c\\`" in md and "\\*e\\*" in md
    html_text = (tmp_path / "report.html").read_text()
    # the planted script never appears as markup; the page's own scripts are typed tags
    assert "<script>alert(1)" not in html_text and "alert(1)</script>" not in html_text
    assert not re.findall(r"<script(?![^>]*\btype=)", html_text)


def test_a_symlinked_sub_folder_of_out_is_refused(tmp_path, capsys):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "data").symlink_to(elsewhere, target_is_directory=True)
    assert main(["verify", "--only", "HC-L8", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("approxtheory: error: ")
    assert "outside the output folder" in err[0]
    assert list(elsewhere.iterdir()) == []
    (out / "data").unlink()
    (out / ".cache").symlink_to(elsewhere, target_is_directory=True)
    assert main(["verify", "--only", "HC-L8", "--out", str(out), "--quiet"]) == 2
    assert list(elsewhere.iterdir()) == []


def test_verify_files_respect_the_umask(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        assert main(["verify", "--only", "HC-L8", "--out", str(tmp_path), "--quiet"]) == 0
    finally:
        os.umask(old)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in files), files
