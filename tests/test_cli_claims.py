"""The `approxtheory claims` CLI: output, JSON, exit codes and one-line errors."""

import json
import subprocess
import sys
import time

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


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["claims", "eval", "HC-T2b", "T=64", "s=2", "n=2", "D=2"], "s < D"),
        (["claims", "eval", "HC-T2b", "T=64", "s=1", "n=2"], "no value for D"),
        (["claims", "eval", "HC-T2b", "T=64", "s=1", "n=2", "D=2", "q=1"], "no symbol 'q'"),
        (["claims", "eval", "HC-T2x", "T=64"], "did you mean"),
        (["claims", "eval", "HC-T2a", "epsilon=0", "C=1", "gamma=2"], "epsilon must be positive"),
        (["claims", "eval", "ID-T4.5", "E=32", "H=3"], "H must divide E (got H=3, E=32)"),
        (["claims", "eval", "HC-T2b", "T"], "NAME=VALUE"),
        (["claims", "eval", "HC-T2b", "T=x", "s=1", "n=2", "D=2"], "must be a real number"),
        (["claims", "show", "NOPE"], "unknown claim id"),
        (["claims", "show", "NOPE", "--trail"], "unknown claim id"),
        (["claims", "show", "NOPE", "--trail", "--json"], "unknown claim id"),
        (["claims", "list", "--paper", "1234.5678"], "unknown paper"),
        (["claims", "frobnicate"], "invalid choice"),
    ],
)
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


def test_show_trail_prints_every_stop_with_paths(capsys):
    rc, out, err = run(capsys, "claims", "show", "hc-k1", "--trail")
    assert rc == 0 and not err
    lines = out.splitlines()
    assert lines[0].startswith("HC-K1: ")
    stops = {line.split(":", 1)[0].strip() for line in lines[1:]}
    assert stops == {"catalogue", "check", "reads", "construction", "experiment", "writes"}
    assert "  reads:        declared by the check" in out  # @check(constructions=...), no parse
    assert "  catalogue:    approxtheory/catalogue/headcount.py:" in out
    assert "k1_construction (proofs_check/headcount/k1.py:" in out
    assert "  construction: hc_k1 (approxtheory/constructions/headcount.py:" in out
    assert "  experiment:   none" in out
    assert "  writes:       report/data/HC-K1.csv" in out


def test_show_trail_json(capsys):
    rc, out, _ = run(capsys, "claims", "show", "IF-P3", "--trail", "--json")
    d = json.loads(out)
    assert rc == 0 and d["claim"] == "IF-P3"
    assert d["check"]["path"] == "proofs_check/infoflow/trained_heads.py" and d["check"]["line"] > 0
    assert [(e["name"], e["path"]) for e in d["experiments"]] == [
        ("infoflow_pmax_heads", "experiments/infoflow_trained.py")
    ]
    assert d["constructions"] == []
    assert any(o.startswith("report/data/IF-P3.csv") for o in d["outputs"])


def test_console_script_runs_without_traceback():
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "approxtheory",
            "claims",
            "eval",
            "HC-T2b",
            "T=64",
            "s=3",
            "n=2",
            "D=2",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr and "s < D" in r.stderr


# --- hardening: values are parsed, never evaluated; nothing hangs --------------------------------
def _run_all(argvs, timeout=90):
    """Run ``python -m approxtheory ARGV`` for every ARGV at once; (rc, stderr, seconds) each.

    A run still going after ``timeout`` seconds fails the test (these commands used to run until
    killed); the bound is generous because interpreter start-up and imports take several seconds
    on a loaded machine, while the evaluation itself is checked in-process to take < 5 s."""
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "approxtheory", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    out = []
    try:
        for p in procs:
            _, err = p.communicate(timeout=max(1.0, timeout - (time.perf_counter() - t0)))
            out.append((p.returncode, err, time.perf_counter() - t0))
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {timeout} s: {[p.args for p in procs]}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


def test_injection_does_not_execute(tmp_path):
    marker = tmp_path / "pwned"
    payloads = (
        f"__import__('os').system('touch {marker}')",
        f"__import__('pathlib').Path('{marker}').touch()",
        f"exec(\"open('{marker}','w')\")",
    )
    results = _run_all(
        [["claims", "eval", "HC-T2b", f"T={p}", "s=1", "n=2", "D=2"] for p in payloads]
    )
    for rc, err, _ in results:
        assert rc == 2, err
        assert "Traceback" not in err and "must be a real number" in err
    assert not marker.exists()


HANGS = [
    (["HC-T2a", "epsilon=0.1", "C=1", "gamma=1e9"], "too large"),
    (["HC-T2b", "T=10**10**10", "s=1", "n=2", "D=2"], "exponent"),
    (["HC-T2b", "T=1e999999999", "s=1", "n=2", "D=2"], "exponent"),
    (
        ["HC-T2b", "--expr", "M_min", "T=10**30", "s=1", "n=2", "D=2", "C=1", "epsilon=1/2"],
        "too large",
    ),
]


def test_former_hangs_exit_2_with_one_line():
    results = _run_all([["claims", "eval", *argv] for argv, _ in HANGS])
    for (argv, needle), (rc, err, _) in zip(HANGS, results):
        lines = [l for l in err.splitlines() if l.strip()]
        assert rc == 2, (argv, err)
        assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, (argv, err)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["HC-T2a", "epsilon=0.1", "C=1", "gamma=1e9"], "too large"),
        (["HC-T2b", "T=10**10**10", "s=1", "n=2", "D=2"], "exponent"),
        (["HC-T2b", "T=1e999999999", "s=1", "n=2", "D=2"], "exponent"),
        (["HC-T2b", "T=1/0", "s=1", "n=2", "D=2"], "division by zero"),
        (["HC-T2b", "T=True", "s=1", "n=2", "D=2"], "unknown name 'True'"),
        (["HC-T2b", "T=inf", "s=1", "n=2", "D=2"], "finite"),
        (["HC-T2b", "T=64", "s=1", "n=2", "D=2", "expr=k"], "no symbol 'expr'"),
    ],
)
def test_bad_values_exit_2_quickly_in_process(capsys, argv, needle):
    t0 = time.perf_counter()
    rc, out, err = run(capsys, "claims", "eval", *argv)
    assert time.perf_counter() - t0 < 5
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc == 2 and len(lines) == 1 and needle in lines[0], err


def test_value_strings_are_exact(capsys):
    # k = T/16 - 3/2 at s=1, n=2, D=2; T = 2^6 = 64 gives 5/2
    rc, out, _ = run(capsys, "claims", "eval", "HC-T2b", "T=2^6", "s=1", "n=4/2", "D=2")
    assert rc == 0 and out.strip() == "5/2"
    # T = 10^30: 10^30/16 - 3/2 = 62500000000000000000000000000 - 3/2
    rc, out, _ = run(capsys, "claims", "eval", "HC-T2b", "T=10**30", "s=1", "n=2", "D=2")
    assert rc == 0 and out.strip() == "124999999999999999999999999997/2"
