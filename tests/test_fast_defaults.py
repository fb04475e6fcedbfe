"""Output where a shell expects it, a cached rerun that writes nothing new, one torch
thread policy, and the small traps (solve_for's message, experiment plot's profile)."""

import io
import json
import os

import pytest
import torch

import approxtheory as at
from approxtheory import resources
from approxtheory.cli import main
from approxtheory.errors import ConfigError, UnknownSymbolError
from approxtheory.plots.ledger import PlotLedger
from approxtheory.progress import VerifyProgress, expected_seconds

CHEAP = ["PR-S", "HC-K1"]  # a symbolic check and a construction with a plot: about 2 s


# ----------------------------------------------------------------------------- output streams


def test_summary_on_stdout_and_plain_progress_lines_on_stderr(tmp_path, capsys):
    assert main(["verify", "--only", *CHEAP, "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("verify: 2 claims in ") and "refuted: HC-K1" in out
    assert f"report: {tmp_path / 'report.md'} and {tmp_path / 'report.html'}" in out
    assert "\r" not in err and "\x1b" not in err  # not a terminal: no redraws
    lines = err.splitlines()
    assert lines[0].startswith("verify (quick): 2 claims, ETA ~")  # known before any claim
    assert lines[1].startswith("verify (quick): 1/2 PR-S verified-")
    assert lines[2].startswith("verify (quick): 2/2 HC-K1 refuted (")
    assert main(["verify", "--only", *CHEAP, "--out", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_the_redrawn_bar():
    pytest.importorskip("tqdm")
    tty = _Terminal()
    bar = VerifyProgress(["A", "B"], "verify (quick)", expected={"A": 1.0, "B": 2.0}, file=tty)
    bar.start("A")
    bar.done("A", {"A": {"cached": False, "duration_s": 1.0}}, "verified-numeric")
    bar.close()
    assert "\r" in tty.getvalue() and "1/2" in tty.getvalue()


def test_the_eta_is_known_before_the_first_claim(tmp_path):
    shipped = expected_seconds(["HC-P8", "XX-1"])
    assert shipped["HC-P8"] > shipped["XX-1"] > 0  # a named claim, and other_s for the rest
    prev = tmp_path / "timings.json"
    prev.write_text(json.dumps({"claims": {"XX-1": {"duration_s": 7.0}, "XX-1~m": 1.0}}))
    assert expected_seconds(["HC-P8", "XX-1"], prev)["XX-1"] == 8.0
    bar = VerifyProgress(["HC-P8"], "v", expected=shipped, file=io.StringIO())
    assert bar._eta() != "ETA ?"


# ----------------------------------------------------------------------------- cached rerun


def test_a_cached_rerun_rewrites_nothing_and_states_both_times(tmp_path):
    assert main(["verify", "--only", *CHEAP, "--out", str(tmp_path), "--quiet"]) == 0
    files = ["verdicts.json", "data/HC-K1.csv", "plots/HC-K1.png"]
    before = {f: ((tmp_path / f).read_bytes(), (tmp_path / f).stat().st_mtime_ns) for f in files}
    assert main(["verify", "--only", *CHEAP, "--out", str(tmp_path), "--quiet"]) == 0
    t = json.loads((tmp_path / "timings.json").read_text())
    if not all(c["cached"] for c in t["claims"].values()):
        pytest.skip("the source changed between the two runs (another edit on this tree)")
    after = {f: ((tmp_path / f).read_bytes(), (tmp_path / f).stat().st_mtime_ns) for f in files}
    assert after == before  # same bytes, and not even rewritten
    md = (tmp_path / "report.md").read_text()
    assert "verdicts computed in " in md and "(2 read from the cache)" in md
    assert "this report assembled at " in md
    assert "computed in" in (tmp_path / "report.html").read_text()


def test_a_plot_is_redrawn_only_when_its_inputs_change(tmp_path):
    png, drawn = tmp_path / "a.png", []

    def draw():
        drawn.append(1)
        png.write_bytes(b"png")

    led = PlotLedger(tmp_path / "ledger.json")
    assert led.draw(png, ["csv", {"x": "T"}], draw)
    led.save()
    led = PlotLedger(tmp_path / "ledger.json")
    assert not led.draw(png, ["csv", {"x": "T"}], draw)  # same inputs, file there
    assert led.draw(png, ["csv2", {"x": "T"}], draw)  # the data changed
    led.save()
    png.unlink()
    assert PlotLedger(tmp_path / "ledger.json").draw(png, ["csv2", {"x": "T"}], draw)
    assert len(drawn) == 3
    (tmp_path / "bad.json").write_text("[1, 2")  # unreadable: every plot is drawn
    assert PlotLedger(tmp_path / "bad.json").draw(png, ["csv2", {"x": "T"}], draw)


# ----------------------------------------------------------------------------- threads


def test_the_thread_policy_precedence(monkeypatch):
    monkeypatch.delenv(resources.THREADS_ENV, raising=False)
    assert resources.threads() == resources.DEFAULT_THREADS == 1
    monkeypatch.setenv(resources.THREADS_ENV, "2")
    assert resources.threads() == 2
    old = torch.get_num_threads()
    try:
        assert resources.set_threads(3) == 3 and torch.get_num_threads() == 3
        with resources.pinned_threads(1):  # verify and experiment cells
            assert resources.threads() == 1 and torch.get_num_threads() == 1
            with resources.using_threads():
                assert torch.get_num_threads() == 1
        assert resources.threads() == 3
        assert resources.set_threads(None) == 2  # back to the environment
    finally:
        resources.set_threads(None)
        torch.set_num_threads(old)
    for bad in ("0", "-2", "1.5", "x", str(10**9)):
        monkeypatch.setenv(resources.THREADS_ENV, bad)
        with pytest.raises(ConfigError, match="APPROXTHEORY_THREADS must be a whole number"):
            resources.threads()
    with pytest.raises(ConfigError):
        resources.set_threads(0)


def test_a_library_search_computes_with_the_policy(monkeypatch):
    from approxtheory.constructions import build
    from approxtheory.measure import sup_error

    seen = []
    real = resources.using_threads

    def spy(n=None):
        seen.append(resources.threads() if n is None else n)
        return real(n)

    monkeypatch.setattr(resources, "using_threads", spy)
    monkeypatch.delenv(resources.THREADS_ENV, raising=False)
    c = build("softmax_retrieval", T=2, beta=10.0)
    sup_error(c.model, c.task, budget=4, discrete_evals=8, local_steps=2)
    assert seen and set(seen) == {1}


@pytest.mark.parametrize(
    "argv, env",
    [
        (["--threads", "0", "claims", "list"], None),
        (["--threads", "-1", "claims", "list"], None),
        (["--threads", "1000000", "claims", "list"], None),
        (["construct", "hc_k1", "--threads", "0"], None),
        (["construct", "hc_k1", "--threads", "two"], None),
        (["claims", "list"], "1.5"),
        (["claims", "list"], "lots"),
    ],
)
def test_bad_thread_counts_are_one_line_exit_2(argv, env, monkeypatch, capsys):
    if env is None:
        monkeypatch.delenv(resources.THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(resources.THREADS_ENV, env)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "threads" in err.lower(), err


# ----------------------------------------------------------------------------- small traps


def test_solve_for_says_how_to_solve_for_another_expression():
    c = at.claim("HC-T2b")
    v = dict(s=1, n=2, D=2, C=1, epsilon=1e-2)
    with pytest.raises(UnknownSymbolError, match=r"solve_for\('T', 'M_min', 1000000.0, \.\.\.\)"):
        c.solve_for("T", M_min=1e6, **v)
    assert c.solve_for("T", "M_min", 1e6, **v) == c.solve_for("T", expr="M_min", equals=1e6, **v)


def test_experiment_plot_finds_the_profile_that_was_run(tmp_path, capsys):
    d = tmp_path / "softmax_beta_sweep"
    d.mkdir()
    (d / "full.csv").write_bytes(b"a,b\n1,2\n")  # only the full run is there
    assert main(["experiment", "plot", "softmax_beta_sweep", "--out", str(tmp_path)]) == 2
    assert "full.csv" in capsys.readouterr().err  # it read the full run, not the missing quick
    (d / "quick.csv").write_bytes(b"a,b\n1,2\n")
    os.utime(d / "quick.csv", (1, 1))  # older than full.csv
    assert main(["experiment", "plot", "softmax_beta_sweep", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "results of the profiles full, quick" in err and "redrawing full" in err
