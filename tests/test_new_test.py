"""``approxtheory new-test CLAIM``: the scaffold of a rate test, its refusals, and the
written test itself: it passes on the shipped construction and fails on its check's mutants."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from approxtheory.cli import main
from approxtheory.testing import Measured, RateAssertionError, RateUndecidedError

ROOT = Path(__file__).resolve().parents[1]


def cli(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def cli_error(argv, capsys) -> str:
    rc, _, err = cli(argv, capsys)
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("approxtheory: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("newtest")
    assert main(["new-test", "IF-T2", "--out", str(d / "test_IF_T2.py")]) == 0
    return d / "test_IF_T2.py"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_generated_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_it_writes_a_test_for_the_claim(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, _ = cli(["new-test", "IF-T2"], capsys)
    assert rc == 0
    path = tmp_path / "tests" / "test_IF_T2.py"
    assert path.is_file()
    assert out.startswith("wrote tests/test_IF_T2.py: the rate of IF-T2 in beta")
    assert "--approxtheory-mutant beta-dropped" in out
    src = path.read_text()
    compile(src, str(path), "exec")
    for needle in (
        'CLAIM = "IF-T2"',
        'CONSTRUCTION = "softmax_retrieval"',
        '"T": st.integers(-7, 23).map(lambda u: 8 + u),',
        "@given(knobs=st.fixed_dictionaries(KNOBS))",
        "assume(measured.admissible(CONSTRUCTION, cases, claim=CLAIM",
        "measured.sup_error_value_of(CONSTRUCTION, k, mutant=measured.mutant",
        "measured.assert_claim_rate(",
        '"beta-dropped": ',
        "from approxtheory.proofs_check.infoflow.rates import _retrieval_mutation",
        "@pytest.mark.rate_test(claim=CLAIM, over=SYMBOL)",
        "Regime: beta*T >= 1.",
    ):
        assert needle in src, needle


def test_the_written_test_is_formatted_as_the_project(written):
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    cfg = ["--config", str(ROOT / "pyproject.toml")]
    for cmd in (["check", *cfg, str(written)], ["format", "--check", *cfg, str(written)]):
        r = subprocess.run([ruff, *cmd], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr


def test_the_written_test_passes_and_catches_the_mutants(written, tmp_path, monkeypatch):
    """One drawn case of the written test (T = 4), run directly: the shipped construction
    passes; beta-dropped (no inverse temperature) fails the rate with a compact message and
    value-gain (the head's output x 1.05) fails too."""
    mod = _load(written)
    knobs = {"T": 4}
    inner = mod.test_IF_T2_sup_error_follows_the_claimed_rate.hypothesis.inner_test

    def assume(condition):  # outside Hypothesis: a case outside the regime is a bug here
        assert condition

    monkeypatch.setattr(mod, "assume", assume)
    m = Measured(tmp_path / "cache", budget=16)
    inner(measured=m, knobs=knobs)
    m.mutant = "beta-dropped"
    with pytest.raises(RateAssertionError) as e:
        inner(measured=m, knobs=knobs)
    lines = str(e.value).splitlines()
    assert len(lines) == 3 and lines[0].startswith("IF-T2: error ~ beta^+0.000")
    assert (
        "excluding every exponent above it (IF-T2's upper bound err_attn ~ beta^-1.000)"
        in (lines[1])
    )
    m.mutant = "value-gain"  # the error is 0.05 (all tokens at 1) at every beta: flat
    with pytest.raises((RateAssertionError, RateUndecidedError), match="IF-T2: "):
        inner(measured=m, knobs=knobs)
    m.mutant = "no-such-mutant"
    with pytest.raises(pytest.fail.Exception, match="declares no mutant 'no-such-mutant'"):
        inner(measured=m, knobs=knobs)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["IF-T99"], "unknown claim"),
        (["IF-T3"], "IF-T3 has no construction to measure"),
        (["IF-T2", "--construction", "hc_k1"], "does not realise IF-T2"),
        (["IF-T2", "--over", "gamma"], "--over 'gamma' is not a knob of softmax_retrieval"),
    ],
)
def test_bad_claims_and_options_exit_2(argv, needle, capsys, tmp_path):
    line = cli_error(["new-test", *argv, "--out", tmp_path / "t.py"], capsys)
    assert needle in line, line
    assert not (tmp_path / "t.py").exists()


def test_an_unwritable_out_exits_2(capsys, tmp_path):
    (tmp_path / "afile").write_text("x")
    line = cli_error(["new-test", "IF-T2", "--out", tmp_path / "afile" / "t.py"], capsys)
    assert "--out cannot be created" in line
    line = cli_error(["new-test", "IF-T2", "--out", tmp_path], capsys)
    assert "--out must be a file" in line
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            assert "is not writable" in cli_error(
                ["new-test", "IF-T2", "--out", ro / "t.py"], capsys
            )
        finally:
            ro.chmod(0o700)


def test_an_existing_out_needs_force(capsys, tmp_path):
    out = tmp_path / "t.py"
    out.write_text("keep")
    assert "pass --force to overwrite" in cli_error(["new-test", "IF-T2", "--out", out], capsys)
    assert out.read_text() == "keep"
    rc, _, _ = cli(["new-test", "IF-T2", "--out", out, "--force"], capsys)
    assert rc == 0 and "CLAIM = " in out.read_text()


@pytest.mark.slow
def test_the_written_test_under_pytest_twice_and_on_a_mutant(tmp_path):
    """The written test run by pytest: it passes, its second run measures nothing (every
    measurement from the cache), and ``--approxtheory-mutant beta-dropped`` fails it with the
    rate message (no traceback). The speed-up is a benchmark, not asserted here."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("APPROXTHEORY_TEST_CACHE", None)
    assert main(["new-test", "IF-T2", "--out", str(tmp_path / "tests" / "test_IF_T2.py")]) == 0

    def run(*extra):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", *extra],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=1800,
        )

    first = run()
    assert first.returncode == 0, first.stdout + first.stderr
    assert "50 measurements, 0 from the cache" in first.stdout
    second = run()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "50 measurements, 50 from the cache" in second.stdout and "0 computed" in second.stdout
    red = run("--approxtheory-mutant", "beta-dropped")
    assert red.returncode == 1, red.stdout + red.stderr
    assert "RateAssertionError" in red.stdout and "IF-T2: error ~ beta^" in red.stdout
    assert "Failing test case" in red.stdout or "Falsifying example" in red.stdout
    assert "raise RateAssertionError(" not in red.stdout


def _all_knobs():
    from approxtheory.constructions import REGISTRY

    return [(e.name, k, kn) for e in REGISTRY.values() for k, kn in e.knobs.items()]


def _rendered(key, knob):
    """The strategy a written test draws ``knob`` with (its source, compiled here: the
    generator's own output, not a caller's input)."""
    import math

    from hypothesis import strategies as st

    from approxtheory.commands.new_test import _knob_source

    src, _ = _knob_source(key, knob)
    return eval(compile(src, "<KNOBS>", "eval"), {"st": st, "math": math})


@pytest.mark.parametrize("name, key, knob", _all_knobs(), ids=lambda v: str(v)[:20])
def test_the_written_draws_shrink_as_construction_knobs(name, key, knob):
    """Every knob of every construction, written out as a written test draws it, shrinks to
    what ``approxtheory.strategies`` shrinks it to (the default, clipped into the range)."""
    from hypothesis import find

    from approxtheory.strategies.knobs import _knob_strategy

    want = find(_knob_strategy(key, knob), lambda _: True)
    assert find(_rendered(key, knob), lambda _: True) == want


def test_the_written_draws_stay_in_the_declared_ranges():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    knobs = _all_knobs()

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(data=st.data())
    def check(data):
        name, key, knob = data.draw(st.sampled_from(knobs))
        v = data.draw(_rendered(key, knob))
        assert knob.range_error(v) is None, (name, key, v)

    check()
