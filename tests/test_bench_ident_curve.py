"""``approxtheory bench identifiability --gpt2-until``: the GPT-2 cost curve E = 64, 96, 128, ...
with a per-layer budget (``--max-gb``, ``--max-seconds``). Bad budgets are refused in one line
before anything is built; the stopping rule is tested on fake layers (no transformers, fast)."""

from __future__ import annotations

import json
import sys
import time
import types

import pytest

from approxtheory import identifiability_modules as im
from approxtheory import resources
from approxtheory.bench import model as bm
from approxtheory.cli import main
from approxtheory.errors import ConfigError


@pytest.fixture(autouse=True)
def _limits(monkeypatch):
    monkeypatch.setattr(resources, "machine_memory", lambda: 24 << 30)
    monkeypatch.delenv(resources.ENV_BYTES, raising=False)
    monkeypatch.delenv(resources.ENV_SECONDS, raising=False)


@pytest.fixture
def no_build(monkeypatch):
    """Building a layer, bounding one or running a bench fails the test."""

    def boom(*a, **k):
        raise AssertionError("built or ran before refusing")

    monkeypatch.setattr(bm, "bench_identifiability", boom)
    monkeypatch.setattr(bm, "bench_gpt2_curve", boom)
    monkeypatch.setattr(bm, "_gpt2_layer", boom)
    monkeypatch.setattr(im, "gpt2_structured", boom)
    monkeypatch.setattr(im, "bench_rows", boom)


def _cli_error(argv, capsys) -> str:
    t0 = time.monotonic()
    rc = main(["bench", "identifiability", *argv])
    err = capsys.readouterr().err
    assert rc == 2, (rc, err)
    assert err.count("\n") == 1 and err.startswith("approxtheory: error: "), err
    assert "Traceback" not in err
    assert time.monotonic() - t0 < 20
    return err


@pytest.mark.parametrize("option", ["--max-gb", "--max-seconds"])
@pytest.mark.parametrize("value", ["0", "-1", "-0.5", "inf", "-inf", "nan", "1e400", "x", ""])
def test_bad_budgets_are_refused_in_one_line(capsys, no_build, option, value):
    err = _cli_error(["--gpt2-until", f"{option}={value}"], capsys)
    assert f"{option} must be a finite number > 0" in err and repr(value) in err


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--max-seconds", "5"], "--max-seconds goes with --gpt2-until"),
        (["--max-gb", "5"], "--max-gb goes with --gpt2-until or --gpt2"),
        (["--gpt2", "16", "--gpt2-until"], "give one"),
        (["--gpt2", "768", "--max-gb", "0.1"], "the GPT-2 layer of --gpt2 768 needs about"),
    ],
)
def test_budget_options_out_of_place_are_refused(capsys, no_build, argv, words):
    assert words in _cli_error(argv, capsys)


def test_the_library_refuses_bad_budgets(monkeypatch):
    _fake(monkeypatch, {})  # nothing is built: a width would raise KeyError
    for kw in ({"max_bytes": 0, "max_seconds": 1}, {"max_bytes": 1, "max_seconds": float("nan")}):
        with pytest.raises(ConfigError, match="must be a finite number > 0"):
            bm.bench_gpt2_curve(**kw)
    with pytest.raises(ConfigError, match="multiples of heads"):
        bm.bench_gpt2_curve(1e9, 1, start=66)


# ------------------------------------------------------------------------- the stopping rule
def _fake(monkeypatch, seconds: dict, est: dict | None = None, open_=None):
    """Fake layers: ``_gpt2_layer`` returns E, ``gpt2_structured`` a closed result taking
    ``seconds[E]`` (open, undecided, for the widths ``open_``), ``gpt2_structured_bytes``
    ``est.get(E, 0)``; the widths bounded are logged."""
    built: list[int] = []

    def layer(E, H, seed):
        built.append(E)
        return E

    def structured(E, seed=0):
        closed = E not in (open_ or ())
        return types.SimpleNamespace(
            total=4 * E * E + 4 * E,
            measured=E * E // 4 + E if closed else None,
            predicted=E * E // 4 + E,
            status="certified" if closed else "undecided",
            gap=(1.0, 1e-12, 1e12),
            seconds=seconds[E],
            notes=("rank bounds: ...", f"unidentified >= {E}, <= {2 * E}"),
        )

    monkeypatch.setattr(bm, "_gpt2_layer", layer)
    monkeypatch.setattr(im, "gpt2_structured", structured)
    monkeypatch.setattr(im, "gpt2_structured_bytes", lambda E, H: (est or {}).get(E, 0))
    return built


def test_the_table_stops_after_the_first_layer_over_the_time_budget(monkeypatch):
    built = _fake(monkeypatch, {64: 1.0, 96: 5.0, 128: 700.0, 160: 1.0})
    seen = []
    res = bm.bench_gpt2_curve(8 * 2**30, 600, progress=seen.append)
    assert built == [64, 96, 128] and [r["E"] for r in res["rows"]] == [64, 96, 128]
    assert seen == res["rows"] and all(r["closed"] and r["H"] == 4 for r in res["rows"])
    assert res["stop"]["reason"] == "time" and res["stop"]["E"] == 128
    assert "E = 128 took 700 s > the budget of 600 s" in res["stop"]["text"]
    assert "decides only where the table stops" in res["stop"]["text"]


def test_the_table_stops_before_building_a_layer_over_the_memory_cap(monkeypatch):
    built = _fake(monkeypatch, {64: 1.0, 96: 1.0, 128: 1.0}, est={128: 9 * 2**30})
    res = bm.bench_gpt2_curve(8 * 2**30, 600)
    assert built == [64, 96] and [r["E"] for r in res["rows"]] == [64, 96]
    stop = res["stop"]
    assert stop["reason"] == "memory" and stop["E"] == 128 and stop["need_bytes"] > 8 * 2**30
    assert stop["text"].startswith("E = 128 would need 9.0 GiB > the cap of 8 GiB")


def test_the_memory_limit_in_force_also_stops_it(monkeypatch):
    built = _fake(monkeypatch, {64: 1.0}, est={64: 2 << 20})
    monkeypatch.setenv(resources.ENV_BYTES, "1M")
    res = bm.bench_gpt2_curve(8 * 2**30, 600)
    assert built == [] and res["rows"] == []
    assert (
        "the memory limit in force (1.0 MiB; APPROXTHEORY_MAX_BYTES raises it)"
        in res["stop"]["text"]
    )


def _no_transformers_needed(monkeypatch):
    """The CLI checks that the hf extra is there; a stub stands in where it is not."""
    if "transformers" not in sys.modules:
        try:
            import transformers  # noqa: F401
        except ImportError:
            monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))


def test_the_output_has_one_row_per_width_and_the_stop_line(monkeypatch, capsys):
    _no_transformers_needed(monkeypatch)
    monkeypatch.setattr(bm, "bench_identifiability", lambda **k: [])
    _fake(monkeypatch, {64: 1.0, 96: 2.0, 128: 30.0}, open_={128})
    argv = ["bench", "identifiability", "--gpt2-until", "--max-seconds", "10", "--max-gb", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("GPT2 E=")]
    assert [int(r.split("E=")[1].split()[0]) for r in rows] == [64, 96, 128]
    assert all(" closed (certified" in r and " GiB peak" in r for r in rows[:2])
    assert "U=None predicted 4224  open (undecided" in rows[2]
    assert rows[2].endswith(": unidentified >= 128, <= 256")
    assert out[0].startswith("# GPT-2 cost curve") and "> 4 GiB" in out[0] and "> 10 s" in out[0]
    assert [line for line in out if line.startswith("stop: ")] == [
        "stop: E = 128 took 30 s > the budget of 10 s: stopped (the next width is larger; the "
        "clock decides only where the table stops)"
    ]
    assert "load average" in out[-1]
    assert main([*argv, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert [r["E"] for r in rec[:-1]] == [64, 96, 128] and all(r["gpt2"] for r in rec)
    assert rec[-1]["stop"]["reason"] == "time" and rec[-1]["max_gb"] == 4.0


def test_a_real_layer_row(monkeypatch):
    pytest.importorskip("transformers")
    res = bm.bench_gpt2_curve(8 * 2**30, 1e-9, start=16, step=16)
    (row,) = res["rows"]
    assert row["E"] == 16 and row["P"] == 4 * 16 * 16 + 4 * 16 and row["closed"]
    assert row["measured"] == row["predicted"] and row["peak_bytes"] > 0
    assert res["stop"]["reason"] == "time" and res["stop"]["E"] == 16
