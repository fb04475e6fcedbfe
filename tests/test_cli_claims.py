"""The `approxtheory claims` CLI: output, JSON, exit codes and one-line errors."""

import json
import subprocess
import sys

import pytest

from approxtheory.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_eval_issue_example(capsys):
    rc, out, err = run(capsys, "claims", "eval", "HC-T2b", "T=64", "s=1", "n=2", "D=2")
    assert rc == 0 and out.strip() == "5/2"


def test_eval_json_fields(capsys):
    rc, out, _ = run(capsys, "claims", "eval", "HC-T2b", "T=20", "s=1", "n=2", "D=2", "--json")
    d = json.loads(out)
    assert rc == 0 and d["id"] == "HC-T2b" and d["value"] == "-1/4"
    assert d["float"] == -0.25 and d["vacuous"] is True


@pytest.mark.parametrize("argv,needle", [
    (["claims", "eval", "HC-T2b", "T=64", "s=2", "n=2", "D=2"], "s < D"),
    (["claims", "eval", "HC-T2b", "T=64", "s=1", "n=2"], "no value for D"),
    (["claims", "eval", "HC-T2b", "T=64", "s=1", "n=2", "D=2", "q=1"], "no symbol 'q'"),
    (["claims", "eval", "HC-T2x", "T=64"], "did you mean"),
    (["claims", "eval", "HC-T2a", "epsilon=0", "C=1", "gamma=2"], "epsilon must be positive"),
    (["claims", "eval", "ID-T4.5", "E=32", "H=3"], "H must divide E (got H=3, E=32)"),
    (["claims", "eval", "HC-T2b", "T"], "NAME=VALUE"),
    (["claims", "eval", "HC-T2b", "T=x", "s=1", "n=2", "D=2"], "must be a real number"),
    (["claims", "show", "NOPE"], "unknown claim id"),
    (["claims", "list", "--paper", "1234.5678"], "unknown paper"),
    (["claims", "frobnicate"], "invalid choice"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_list_json_has_all_papers_and_provenance(capsys):
    rc, out, _ = run(capsys, "claims", "list", "--json")
    d = json.loads(out)
    assert rc == 0 and len(d) >= 45
    assert len({c["paper"] for c in d}) == 5
    assert all(c["provenance"] in ("stated", "reconstructed", "derived", "conjecture") for c in d)


def test_list_filters_by_paper(capsys):
    rc, out, _ = run(capsys, "claims", "list", "--paper", "2606.27449", "--json")
    ids = {c["id"] for c in json.loads(out)}
    assert {"PR-N1", "PR-N2", "PR-S", "PR-E1", "PR-E2"} <= ids
    assert all(i.startswith("PR-") for i in ids)
    rc2, out2, _ = run(capsys, "claims", "list", "--paper", "prism", "--json")
    assert {c["id"] for c in json.loads(out2)} == ids


def test_show_text_latex_json(capsys):
    rc, out, _ = run(capsys, "claims", "show", "HC-T2b")
    assert rc == 0 and "provenance: stated" in out and "vacuous if" in out
    rc, out, _ = run(capsys, "claims", "show", "ID-T4.5", "--latex")
    assert rc == 0 and r"\frac{1}{2 H}" in out
    rc, out, _ = run(capsys, "claims", "show", "PR-N1", "--json")
    assert json.loads(out)["paper"] == "2606.27449"


def test_console_script_runs_without_traceback():
    r = subprocess.run([sys.executable, "-m", "approxtheory", "claims", "eval", "HC-T2b", "T=64",
                        "s=3", "n=2", "D=2"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "s < D" in r.stderr
