"""A rate test's second run is >= 10x faster than its first: what a rate test loads when its
measurements come from the cache, and that the cache still misses whenever what decides a
result changes.

A second run of a test written by ``approxtheory new-test`` is dominated by imports: it reads
every measurement back, so torch (about 2 s of CPU), sympy and the claim catalogue (about 1.3 s)
are its floor unless a hit needs none of them. The package imports lazily, the pytest plugin
imports nothing of it at load time, and a hit of ``measured.sup_error_value_of``,
``measured.admissible`` and ``measured.assert_claim_rate`` reads JSON under a key computed
from the construction's name and knobs, the source fingerprint and the library versions
(read from the package metadata) -- these tests check each piece.

The speed-up itself is a benchmark, not an assertion (wall-clock time decides no result)::

    OMP_NUM_THREADS=1 .venv/bin/python tests/test_rate_speed.py

prints the first and second run of the written IF-T2 test (wall-clock and CPU seconds, fresh
cache) and their ratios, and what the plugin adds to ``pytest --co -q tests/test_parse.py``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what a hit must not load (scipy.special it does: the t quantile of the interval)
HEAVY = ("torch", "sympy", "approxtheory.catalogue", "approxtheory.constructions")


def _python(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        **kw,
    )


def _loaded(code: str, **kw) -> dict:
    """Run ``code`` in a fresh interpreter; the heavy modules it loaded and what it printed
    last (a JSON value)."""
    r = _python(
        textwrap.dedent(code)
        + "\nimport sys, json\n"
        + f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n",
        **kw,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    return {"loaded": [m for m, v in json.loads(lines[-1]).items() if v], "out": lines[:-1]}


# ------------------------------------------------------------------------------- imports
def test_the_package_imports_lazily():
    """``import approxtheory`` loads no sympy and no catalogue; its re-exports load on use,
    ``__all__``, ``dir()`` and ``from approxtheory import *`` are unchanged."""
    r = _loaded("import approxtheory")
    assert r["loaded"] == []
    r = _loaded(
        """
        import json

        import approxtheory as at

        print(json.dumps(sorted(set(at.__all__) - set(dir(at)))))
        from approxtheory import Claim, __version__, claim

        assert str(claim("HC-T2b").evaluate(T=64, s=1, n=2, D=2)) == "5/2"
        assert isinstance(claim("IF-T2"), Claim) and isinstance(__version__, str)
        ns = {}
        exec("from approxtheory import *", ns)
        print(json.dumps(sorted(set(at.__all__) - set(ns))))
        """
    )
    assert r["out"] == ["[]", "[]"]
    assert "approxtheory.catalogue" in r["loaded"] and "torch" not in r["loaded"]
    import approxtheory as at

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        at.no_such_name  # noqa: B018


def test_the_plugin_loads_nothing_heavy():
    r = _loaded("import approxtheory.pytest_plugin")
    assert r["loaded"] == []


# ----------------------------------------------------------------------- a hit, in isolation
KNOBS = [{"T": 4, "beta": b} for b in (10.0, 100.0, 1000.0, 10000.0)]
SYMBOLS = {"T": "T", "beta": "beta"}


def _measure(m):
    values = [m.sup_error_value_of("softmax_retrieval", k) for k in KNOBS]
    ok = m.admissible("softmax_retrieval", KNOBS, claim="IF-T2", symbols=SYMBOLS)
    fit = m.assert_claim_rate(
        "IF-T2", [k["beta"] for k in KNOBS], values, over="beta", values={"T": 4}, kind="upper"
    )
    return values, ok, fit


def test_a_cache_hit_loads_no_torch_sympy_nor_the_catalogue(tmp_path):
    from approxtheory.testing import Measured

    m = Measured(tmp_path, budget=16)
    values, ok, fit = _measure(m)
    assert ok and m.misses == 4
    from approxtheory.provenance import source_fingerprint

    # the child keys with this process's fingerprint (the tree may be edited in between)
    r = _loaded(
        f"""
        import json

        import approxtheory.provenance as p
        p.source_fingerprint = lambda *a, **k: {source_fingerprint()!r}
        from approxtheory.testing import Measured
        import test_rate_speed as t

        m = Measured({str(tmp_path)!r}, budget=16)
        values, ok, fit = t._measure(m)
        print(json.dumps([values, ok, fit.slope, m.hits, m.misses]))
        """,
        cwd=Path(__file__).parent,
    )
    assert r["loaded"] == [], r
    assert json.loads(r["out"][-1]) == [values, True, fit.slope, 4, 0]


def test_the_value_is_that_of_sup_error_of(tmp_path):
    from approxtheory.testing import Measured

    m = Measured(tmp_path, budget=16)
    v = m.sup_error_value_of("softmax_retrieval", KNOBS[0])
    r = m.sup_error_of("softmax_retrieval", KNOBS[0])
    assert r.value == v and (m.hits, m.misses) == (1, 1)
    assert Measured(tmp_path, budget=16).sup_error_value_of("softmax_retrieval", KNOBS[0]) == v


@pytest.fixture
def counted(monkeypatch):
    """The measurements and the catalogue reads actually computed (not read back)."""
    import approxtheory.measure as measure
    import approxtheory.testing.measured as T  # Measured reads _claim_rate_terms here

    calls = {"sup_error": 0, "terms": 0}
    real_sup, real_terms = measure.sup_error, T._claim_rate_terms

    def sup(*a, **k):
        calls["sup_error"] += 1
        return real_sup(*a, **k)

    def terms(*a, **k):
        calls["terms"] += 1
        return real_terms(*a, **k)

    monkeypatch.setattr(measure, "sup_error", sup)
    monkeypatch.setattr(T, "_claim_rate_terms", terms)
    return calls


def test_a_changed_parameter_mutant_or_setting_misses(tmp_path, counted):
    from approxtheory.testing import Measured

    m = Measured(tmp_path, budget=16)
    k = KNOBS[0]
    m.sup_error_value_of("softmax_retrieval", k)
    m.sup_error_value_of("softmax_retrieval", dict(k))
    assert counted["sup_error"] == 1
    m.sup_error_value_of("softmax_retrieval", {**k, "T": 5})  # another parameter
    m.sup_error_value_of("softmax_retrieval", k, budget=17)  # another search setting

    def mutate(c, name):
        c.model.attention(0).q.weight.data.clamp_(max=1.0)

    def mutate2(c, name):
        c.model.attention(0).q.weight.data.clamp_(max=2.0)

    a = m.sup_error_value_of("softmax_retrieval", k, mutant="beta-dropped", mutate=mutate)
    b = m.sup_error_value_of("softmax_retrieval", k, mutant="beta-dropped", mutate=mutate2)
    assert counted["sup_error"] == 5 and a != b  # another mutant's code: another key


def test_a_changed_construction_code_misses(tmp_path, counted, monkeypatch):
    """The key holds the source fingerprint: an edit of the construction's code (its file
    under ``approxtheory/constructions``) changes the fingerprint, and a measurement, the
    requirements and the claim's terms under the changed fingerprint are computed again."""
    import approxtheory.constructions.headcount as hc
    import approxtheory.provenance as prov
    from approxtheory.testing import Measured

    src = Path(hc.__file__).parent
    copy = tmp_path / "pkg" / "constructions"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = prov.fingerprint_dirs([("approxtheory.constructions", copy)])
    f = copy / "headcount.py"
    f.write_text(f.read_text().replace("def build_softmax_retrieval_model(", "def _x(", 1))
    after = prov.fingerprint_dirs([("approxtheory.constructions", copy)])
    assert before != after

    m = Measured(tmp_path / "cache", budget=16)
    _measure(m)
    _measure(m)
    assert counted == {"sup_error": 4, "terms": 1}
    monkeypatch.setattr(prov, "source_fingerprint", lambda *a, **k: after)
    facts = len(list((tmp_path / "cache" / "facts").glob("*.json")))
    _measure(m)
    assert counted == {"sup_error": 8, "terms": 2}
    assert len(list((tmp_path / "cache" / "facts").glob("*.json"))) == 2 * facts


def test_admissible_follows_the_requirements_and_the_regime(tmp_path):
    from approxtheory.errors import ConfigError
    from approxtheory.testing import Measured

    m = Measured(tmp_path)
    low = [{"T": 4, "beta": 0.1}]  # beta*T >= 1 broken: the requirement and the regime
    for _ in range(2):  # computed, then read back
        assert m.admissible("softmax_retrieval", KNOBS, claim="IF-T2", symbols=SYMBOLS)
        assert not m.admissible("softmax_retrieval", low)
        assert not m.admissible("softmax_retrieval", [{"T": 0, "beta": 10.0}])  # out of range
        assert not m.admissible("softmax_retrieval", [{"T": 4, "gamma": 1.0}])  # not a knob
    with pytest.raises(ConfigError, match="unknown construction 'nope'"):
        m.admissible("nope", KNOBS)


def test_the_cached_claim_rate_asserts_as_assert_claim_rate(tmp_path):
    from approxtheory.errors import RegimeError
    from approxtheory.testing import Measured, RateAssertionError, assert_claim_rate

    betas = [10.0, 100.0, 1000.0, 10000.0]
    good = [0.06 / b for b in betas]
    flat = [0.5, 0.45, 0.51, 0.47]
    kw = {"over": "beta", "values": {"T": 4}}
    want = assert_claim_rate("IF-T2", betas, good, **kw)
    with pytest.raises(RateAssertionError) as e:
        assert_claim_rate("IF-T2", betas, flat, **kw)
    for _ in range(2):  # computed, then read back
        m = Measured(tmp_path)
        assert m.assert_claim_rate("IF-T2", betas, good, **kw) == want
        with pytest.raises(RateAssertionError) as e2:
            m.assert_claim_rate("IF-T2", betas, flat, **kw)
        assert str(e2.value) == str(e.value)
        with pytest.raises(RegimeError, match="outside the claim's regime"):
            m.assert_claim_rate("IF-T2", [0.01, 0.1, 1.0, 10.0], good, **kw)
        with pytest.raises(Exception, match="a rate needs at least 3 sizes"):
            m.assert_claim_rate("IF-T2", betas[:2], good[:2], **kw)


# ------------------------------------------------------------------------------- benchmark
def _timed(argv, cwd, env) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall-clock and CPU seconds (user + sys of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=3600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r


def benchmark(profile: str = "quick", out=print) -> dict:
    """The written IF-T2 test run twice by pytest on a fresh cache, and ``pytest --co`` of an
    unrelated test file with and without the plugin; prints and returns the figures."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("APPROXTHEORY_TEST_CACHE", None)
    py = sys.executable
    figures: dict = {"profile": profile, "cpus": os.cpu_count(), "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as d:
        test = Path(d) / "tests" / "test_IF_T2.py"
        r = subprocess.run(
            [py, "-m", "approxtheory", "new-test", "IF-T2", "--out", str(test)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        argv = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        argv += ["--approxtheory-profile", profile]
        for run in ("first", "second"):
            wall, cpu, r = _timed(argv, d, env)
            assert r.returncode == 0, r.stdout + r.stderr
            summary = [ln for ln in r.stdout.splitlines() if ln.startswith("approxtheory:")]
            figures[run] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "summary": summary}
    figures["ratio_wall"] = round(figures["first"]["wall_s"] / figures["second"]["wall_s"], 1)
    figures["ratio_cpu"] = round(figures["first"]["cpu_s"] / figures["second"]["cpu_s"], 1)
    co = [py, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "tests/test_parse.py"]
    safe = {**env, "PYTHONSAFEPATH": "1"}  # the installed package, not the cwd's (3.11+)
    for name, extra in (("with_plugin", []), ("without_plugin", ["-p", "no:approxtheory"])):
        best = min((_timed(co + extra, ROOT, safe) for _ in range(3)), key=lambda t: t[1])
        figures[name] = {"wall_s": round(best[0], 2), "cpu_s": round(best[1], 2)}
    out(json.dumps(figures, indent=2))
    return figures


@pytest.mark.slow
def test_the_benchmark_reports_the_speed_up(capsys):
    """The benchmark runs and its second run measured nothing; its figures are printed, not
    asserted (they depend on the machine and its load)."""
    f = benchmark()
    assert any("0 computed" in ln for ln in f["second"]["summary"]), f
    assert f["first"]["summary"] and "0 from the cache" in f["first"]["summary"][0], f


if __name__ == "__main__":
    benchmark(sys.argv[1] if len(sys.argv) > 1 else "quick")
