"""The pytest plugin: options, the cached ``measured`` fixture, the ``rate_test``
marker and short reports, run in inner pytest sessions (``pytester``)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import scipy.special  # noqa: F401

# loaded here, before the inner sessions: pytester's in-process runs drop the modules they
# import, and numpy and torch cannot be imported twice in one process
import approxtheory.constructions  # noqa: F401
import approxtheory.testing  # noqa: F401

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def _torch_loaded():
    """One search before the inner sessions, so that the modules torch loads lazily on the first
    one are loaded already (pytester would drop them, and torch cannot load them twice)."""
    from approxtheory.constructions import build
    from approxtheory.measure import sup_error

    c = build("softmax_retrieval", T=2, beta=10.0)
    sup_error(c.model, c.task, budget=4, discrete_evals=8, local_steps=2)


def test_the_plugin_is_an_installed_entry_point():
    eps = importlib.metadata.entry_points(group="pytest11")
    assert any(ep.value == "approxtheory.pytest_plugin" for ep in eps), (
        "reinstall the project (pip install -e .) to register the pytest11 entry point"
    )


def test_the_plugin_module_imports_nothing_heavy():
    """Loaded by every pytest run of the environment: no torch, no sympy, no catalogue (the
    package's __init__ loads its re-exports lazily), no numpy."""
    code = (
        "import sys, approxtheory.pytest_plugin; "
        "print(sorted(m for m in ('torch', 'approxtheory.testing', 'approxtheory.measure', "
        "'hypothesis', 'sympy', 'numpy', 'approxtheory.catalogue') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_options_are_registered(pytester):
    r = pytester.runpytest_inprocess("--help")
    out = r.stdout.str()
    for opt in (
        "--approxtheory-budget",
        "--approxtheory-profile",
        "--approxtheory-cache",
        "--approxtheory-no-cache",
        "--approxtheory-mutant",
    ):
        assert opt in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--approxtheory-budget", "0"], "must be a positive integer (got '0')"),
        (["--approxtheory-budget", "x"], "must be a positive integer (got 'x')"),
        (["--approxtheory-profile", "slow"], "invalid choice: 'slow'"),
        (["--approxtheory-mutant", " "], "must be a non-empty name"),
    ],
)
def test_bad_options_are_usage_errors(pytester, args, needle):
    pytester.makepyfile("def test_x():\n    pass\n")
    r = pytester.runpytest_inprocess(*args)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in r.stderr.str()


FIXTURE_TEST = """
import json, os
from approxtheory.constructions import build

def test_measured(measured):
    r = measured.sup_error(build("softmax_retrieval", T=4, beta=10.0))
    with open(os.environ["OUT"], "w") as f:
        json.dump({"budget": measured.budget, "profile": measured.profile,
                   "mutant": measured.mutant, "value": r.value,
                   "cache": str(measured.cache_dir)}, f)
"""


def _settings(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_fixture_follows_the_options_and_caches(pytester, monkeypatch, tmp_path):
    pytester.makepyfile(FIXTURE_TEST)
    out = tmp_path / "out.json"
    monkeypatch.setenv("OUT", str(out))
    monkeypatch.delenv("APPROXTHEORY_TEST_CACHE", raising=False)
    cache = tmp_path / "cache"
    args = [
        "--approxtheory-budget",
        "16",
        "--approxtheory-cache",
        str(cache),
        "-p",
        "no:cacheprovider",
    ]
    r = pytester.runpytest_inprocess(*args, "--approxtheory-mutant", "value-gain")
    r.assert_outcomes(passed=1)
    s = _settings(out)
    assert s["budget"] == 16 and s["profile"] == "quick" and s["mutant"] == "value-gain"
    assert s["cache"] == str(cache)
    r.stdout.fnmatch_lines(["approxtheory: 1 measurements, 0 from the cache*1 computed*"])
    assert len(list((cache / "sup_error").glob("*.json"))) == 1
    r = pytester.runpytest_inprocess(*args)
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["approxtheory: 1 measurements, 1 from the cache*0 computed*"])
    assert _settings(out)["value"] == s["value"]


def test_the_cache_folder_defaults(pytester, monkeypatch, tmp_path):
    pytester.makepyfile(FIXTURE_TEST)
    out = tmp_path / "out.json"
    monkeypatch.setenv("OUT", str(out))
    monkeypatch.delenv("APPROXTHEORY_TEST_CACHE", raising=False)
    pytester.runpytest_inprocess("--approxtheory-profile", "full").assert_outcomes(passed=1)
    s = _settings(out)
    assert s["cache"] == str(pytester.path / ".approxtheory-cache") and s["budget"] == 1024
    monkeypatch.setenv("APPROXTHEORY_TEST_CACHE", str(tmp_path / "env"))
    pytester.runpytest_inprocess("--approxtheory-budget", "16").assert_outcomes(passed=1)
    assert _settings(out)["cache"] == str(tmp_path / "env")
    pytester.runpytest_inprocess("--approxtheory-budget", "16", "--approxtheory-no-cache")
    assert _settings(out)["cache"] == "None"


def test_the_marker_is_registered(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rate_test(claim="IF-T2", over="beta")
        def test_rate():
            pass

        def test_other():
            pass
        """
    )
    r = pytester.runpytest_inprocess("--strict-markers", "-m", "rate_test")
    r.assert_outcomes(passed=1, deselected=1)
    assert (
        "rate_test(claim=None, over=None)" in pytester.runpytest_inprocess("--markers").stdout.str()
    )


def test_a_rate_failure_reports_its_message_not_the_traceback(pytester):
    pytester.makepyfile(
        """
        from approxtheory.testing import assert_rate

        def test_rate():
            assert_rate([10, 100, 1000, 10000], [0.50, 0.45, 0.51, 0.47], at_most=-1,
                        over="beta")
        """
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "RateAssertionError" in out and "excluding every exponent above it" in out
    assert "worst point: beta=10000" in out
    assert "raise RateAssertionError(" not in out  # no library source in the report
    assert (
        "test_a_rate_failure_reports_its_message_not_the_traceback.py:4: RateAssertionError" in out
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--tb=long")
    assert "raise RateAssertionError(" in r.stdout.str()


def test_a_refusal_is_reported_as_shortly(pytester):
    pytester.makepyfile(
        """
        from approxtheory.testing import assert_rate

        def test_rate():
            assert_rate([10, 100, 1000, 10000], [0.11, 0.056, 0.0506, 0.05], at_most=-1)
        """
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "RateUndecidedError" in out and "error floor near" in out
    assert "Traceback" not in out and "def assert_rate" not in out


def test_comparisons_of_the_toolkits_objects_show_short_reprs(pytester):
    pytester.makepyfile(
        """
        from approxtheory.constructions import build

        def test_compare():
            a = build("softmax_retrieval", T=4, beta=10.0)
            b = build("softmax_retrieval", T=5, beta=10.0)
            assert a == b
        """
    )
    r = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "<Construction softmax_retrieval (IF-T2) T=4, beta=10.0" in out
    assert "(attention): ModuleList" not in out  # no multi-line module repr


def test_falsifying_examples_show_short_reprs():
    """Hypothesis prints the toolkit's objects with the plugin's printers (registered at
    collection, where the tests import Hypothesis)."""
    from hypothesis.vendor.pretty import pretty

    from approxtheory.constructions import build
    from approxtheory.testing import short_repr

    c = build("softmax_retrieval", T=4, beta=10.0)
    for obj in (c, c.model, c.model.cfg):
        assert pretty(obj) == short_repr(obj)
    assert pretty({"c": c}) == "{'c': " + short_repr(c) + "}"


@pytest.mark.slow
def test_the_project_collects_the_same_tests_with_the_plugin():
    """The plugin adds options and a fixture; the project's own suite is unchanged."""

    def collect(*extra):
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=900,
        )
        return [line for line in r.stdout.splitlines() if "::" in line]

    with_plugin = collect()
    without = collect("-p", "no:approxtheory")
    assert with_plugin and with_plugin == without
