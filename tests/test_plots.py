"""Plots that say one thing each: approxtheory.plots plans every figure from its
CSV (series grouped by every varying key, categorical x as categories, intervals as bands or
error bars, ticks at the values plotted, identical series drawn once) and checks the plan; the
checker fails on the old grouping (by the spec's ``group`` alone)."""

from __future__ import annotations

import math

import pytest

from approxtheory import plots
from approxtheory.errors import ApproxTheoryError
from approxtheory.plots import Series, check_plot, check_series, plan_plot, plot_from_csv
from approxtheory.report import write_csv

P8_SPEC = {"x": "T", "y": ["min_nmse"], "group": "heads", "title": "P8", "ylabel": "NMSE"}


def _p8_rows():
    """HC-P8's table: D = 2 (h 1-3) and D = 4 (h 2-5), T in {8, 16}: heads 2 and 3 at both D."""
    rows = []
    for D, hs in ((2, (1, 2, 3)), (4, (2, 3, 4, 5))):
        for h in hs:
            for T in (8, 16):
                v = 0.4 * math.exp(-0.6 * (h - D + 2)) * (1.3 if T == 16 and h < D else 1.0)
                rows.append({"D": D, "heads": h, "T": T, "min_nmse": v * (1 + 0.1 * D)})
    return rows


def _old_series(rows, spec):
    """The old plot_from_csv's series: one line per value of the spec's group, whatever else
    varies."""
    x, y, g = spec["x"], spec["y"][0], spec.get("group")
    out = []
    for gv in sorted({r[g] for r in rows}):
        idx = sorted((i for i, r in enumerate(rows) if r[g] == gv), key=lambda i: rows[i][x])
        out.append(
            Series(
                y,
                "measured",
                ((g, float(gv)),),
                tuple(idx),
                tuple(float(rows[i][x]) for i in idx),
                tuple(rows[i][y] for i in idx),
                label=f"{g}={gv}",
            )
        )
    return out


def test_series_are_grouped_by_every_varying_key(tmp_path):
    p = write_csv(tmp_path / "p8.csv", _p8_rows())
    plan = check_plot(p, P8_SPEC)
    assert plan.ok, plan.problems
    assert plan.keys == ["D", "heads"]
    assert len(plan.series) == 7  # one per (D, h)
    rows = plots._read_rows(p)
    for s in plan.series:
        assert len({(rows[i]["D"], rows[i]["heads"]) for i in s.rows}) == 1
        assert dict(s.keys).keys() == {"D", "heads"}
    assert plan.xticks == [8.0, 16.0]
    assert plots._log_labels(plan.xticks) == ["8", "16"]


def test_the_checker_fails_on_the_old_grouping_by_group_alone(tmp_path):
    """One line through D = 4's and D = 2's points at h = 2 and 3."""
    p = write_csv(tmp_path / "p8.csv", _p8_rows())
    rows = plots._read_rows(p)
    old = _old_series(rows, P8_SPEC)
    problems = check_series(rows, P8_SPEC, old)
    mixed = [q for q in problems if "differ in D" in q]
    assert len(mixed) == 2, problems  # heads = 2 and heads = 3
    assert any("goes back on T or repeats" in q for q in problems)
    # and the new plan passes the same checker
    assert check_series(rows, P8_SPEC, check_plot(p, P8_SPEC).series) == []


def test_derived_columns_are_not_keys_and_a_label_column_names_the_categories(tmp_path):
    """IF-P3's table: config is a label of config_index, the predicted_* and in_regime flags
    follow from it and D; D is the group; x is categorical (markers, error bars, no line)."""
    rows = []
    for D in (2, 3):
        for i, cfg in enumerate(((D - 1, D), (D, D - 1), (D, D))):
            n = 0.1 * (i + 1) * D
            rows.append(
                {
                    "D": D,
                    "T": 8,
                    "config": f"({cfg[0]},{cfg[1]})",
                    "config_index": i,
                    "predicted_T_dependent": i < 2,
                    "predicted_alpha": "T*d/E" if i < 2 else "0",
                    "nmse": n,
                    "nmse_lo": n * 0.8,
                    "nmse_hi": n * 1.2,
                    "in_regime": True,
                    "gap_needed": 10.0,
                }
            )
    spec = {"x": "config_index", "y": ["nmse", "nmse_lo", "nmse_hi"], "group": "D", "logx": False}
    plan = check_plot(write_csv(tmp_path / "p3.csv", rows), spec)
    assert plan.ok, plan.problems
    assert plan.keys == ["D"]
    assert {"config", "predicted_T_dependent", "predicted_alpha"} <= set(plan.derived)
    assert plan.categorical and not plan.logx
    assert plan.category_labels == ["(1,2)/(2,3)", "(2,1)/(3,2)", "(2,2)/(3,3)"]
    assert [s.column for s in plan.series] == ["nmse", "nmse"]  # the ends are an interval
    assert all(not s.joined and s.interval == "errorbar" for s in plan.series)
    # a joined line over the categories is a problem the checker names
    joined = [Series(**{**s.__dict__, "joined": True}) for s in plan.series]
    assert any(
        "joins categories" in q
        for q in check_series(plots._read_rows(tmp_path / "p3.csv"), spec, joined)
    )


def test_interval_ends_are_an_interval_not_series_and_seeds_are_categories(tmp_path):
    """PR-E1's table: per-seed differences with the t-interval of their mean on every row."""
    rows = []
    for c, (lo, hi) in {"prism-uniform": (-0.2, 0.1), "wide-uniform": (-0.25, 0.13)}.items():
        for seed, d in enumerate((0.01, -0.11, -0.03)):
            rows.append({"comparison": c, "seed": seed, "diff": d, "lo": lo, "hi": hi})
    spec = {"x": "seed", "y": ["diff", "lo", "hi"], "group": "comparison"}
    spec.update(logx=False, logy=False)
    plan = check_plot(write_csv(tmp_path / "e1.csv", rows), spec)
    assert plan.ok, plan.problems
    assert plan.categorical and plan.category_labels == ["0", "1", "2"]
    assert [s.column for s in plan.series] == ["diff", "diff"]
    assert all(s.interval == "level" and not s.joined for s in plan.series)
    out = plot_from_csv(tmp_path / "e1.csv", spec, tmp_path / "e1.png")
    assert out.stat().st_size > 0


def test_identical_series_are_drawn_once_and_the_legend_names_both(tmp_path):
    """HC-K1's table: the bound depends on (T, S, β), not on the gate; two gates, three cells."""
    rows = []
    for gate in (-1.0, -2.0):
        for T, S in ((8, 2), (8, 4), (16, 4)):
            for beta in (10.0, 100.0, 1000.0):
                b = S / T**2 * math.exp(-beta / 100) + 1e-3
                e = b * (0.5 if gate == -2 else 3.0)
                rows.append(
                    {"gate": gate, "T": T, "S": S, "beta": beta, "sup_error": e}
                    | {"claimed_bound": b, "holds": e <= b}
                )
    spec = {"x": "beta", "y": ["sup_error"], "bound": "claimed_bound", "group": "gate"}
    plan = check_plot(write_csv(tmp_path / "k1.csv", rows), spec)
    assert plan.ok, plan.problems
    assert plan.keys == ["gate", "T", "S"] and plan.derived == ["holds"]
    bounds = [s for s in plan.series if s.role == "bound"]
    assert len(bounds) == 3  # one per (T, S), not one per (gate, T, S)
    assert all(len(s.also) == 1 and "gate=-2 and -1" in s.label for s in bounds)
    assert len([s for s in plan.series if s.role == "measured"]) == 6
    # drawing the same points twice is a problem the checker names
    rows_read = plots._read_rows(tmp_path / "k1.csv")
    twice = [*plan.series, plan.series[-1]]
    assert any("same points" in q for q in check_series(rows_read, spec, twice))


def test_same_csv_same_bytes_and_no_metadata(tmp_path):
    p = write_csv(tmp_path / "p8.csv", _p8_rows())
    a = plot_from_csv(p, P8_SPEC, tmp_path / "a.png").read_bytes()
    b = plot_from_csv(p, P8_SPEC, tmp_path / "b.png").read_bytes()
    assert a == b
    assert b"matplotlib" not in a.lower() and b"Software" not in a
    slope = {
        "label": "sup error vs q",
        "fitted": -0.4998,
        "lo": -0.5,
        "hi": -0.4996,
        "predicted": -0.5,
    }
    s1, s2 = (plots.slope_plot([dict(slope)], "t", tmp_path / f"s{i}.png") for i in (1, 2))
    assert s1.read_bytes() == s2.read_bytes()


def test_tick_labels_are_thinned_until_they_do_not_overlap():
    plt = plots._plt()
    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    ticks = [float(i) for i in range(12)]
    ax.plot(ticks, ticks)
    labels = [f"label number {i}" for i in range(12)]
    k = plots._thin_ticks(fig, ax.xaxis, ticks, labels)
    assert k > 1
    assert not plots._overlapping(fig, ax.xaxis.get_ticklabels())
    plt.close(fig)


def test_step_labels_and_log_labels():
    assert plots._step_labels([-0.5, -0.4999, -0.4998]) == ["-0.5000", "-0.4999", "-0.4998"]
    assert plots._step_labels([-0.1, 0.0, 0.1]) == ["-0.1", "0.0", "0.1"]
    assert plots._log_labels([8.0, 16.0, 32.0]) == ["8", "16", "32"]
    assert plots._log_labels([10.0**k for k in range(1, 10)])[0] == "$10^{1}$"


def test_bad_spec_is_a_typed_error(tmp_path):
    for spec in ({"y": ["e"]}, {"x": "T", "y": "e"}, ["x"]):
        with pytest.raises(ApproxTheoryError, match="spec"):
            plan_plot([{"T": 1.0, "e": 1.0}], spec)


def test_missing_columns_and_mixed_x_still_draw(tmp_path):
    p = write_csv(
        tmp_path / "d.csv", [{"T": 1.0, "e": 0.5, "g": "a"}, {"T": "n/a", "e": 0.4}, {"e": 0.3}]
    )
    for spec in (
        {"x": "T", "y": ["e"], "group": "g", "bound": "missing"},
        {"x": "missing", "y": ["e"], "group": "missing"},
        {"x": "g", "y": ["e", "missing"]},
    ):
        out = plot_from_csv(p, spec, tmp_path / "p.png")
        assert out.stat().st_size > 0


def test_experiment_band_plot_aggregates_over_seeds_only(tmp_path):
    """experiments/_plots: a band over seeds grouped by heads alone would mix D = 2 and D = 4
    at h = 2 and 3; hidden_keys finds D, and band_plot splits the series by it."""
    from approxtheory.experiments._plots import _dedupe, band_plot, band_rows, hidden_keys

    rows = [
        {"D": D, "heads": h, "T": T, "seed": s, "val_nmse": 0.1 * h + 0.01 * D + 0.001 * s + T}
        for D, hs in ((2, (1, 2, 3)), (4, (2, 3, 4)))
        for h in hs
        for T in (8, 16)
        for s in range(3)
    ]
    assert hidden_keys(rows, ("heads", "T"), "val_nmse") == ["D"]
    assert hidden_keys([r for r in rows if r["D"] == 2], ("heads", "T"), "val_nmse") == []
    # the old band: 6 seeds' worth of rows in one (h = 2, T) cell
    assert {b["seeds"] for b in band_rows(rows, "val_nmse", ("heads", "T"))} == {3, 6}
    out = band_plot(
        rows,
        tmp_path / "b.png",
        x="T",
        key="val_nmse",
        group="heads",
        title="t",
        ylabel="NMSE",
        logx=True,
    )  # the x axis labelled by the column: "T"
    assert out.stat().st_size > 0
    a = {"x": [1, 2], "y": [3.0, 4.0], "label": "a"}
    merged = _dedupe([a, {**a, "label": "b"}, {**a, "y": [3.0, 5.0], "label": "c"}])
    assert [m["label"] for m in merged] == ["a / b (identical)", "c"]


def test_experiment_category_names_for_an_index_x():
    from approxtheory.experiments._plots import _category_names

    rows = [
        {"D": f"D = {D}", "config": f"({D - (i == 0)},{D - (i == 1)})", "x": i, "seed": s}
        | {"val_nmse": 0.1 * i}
        for D in (2, 3)
        for i in range(3)
        for s in range(2)
    ]
    assert _category_names(rows, "x", ("D",), "val_nmse") == {
        0.0: "(1,2)/(2,3)",
        1.0: "(2,1)/(3,2)",
        2.0: "(2,2)/(3,3)",
    }
    # a numeric x with no naming column stays numeric
    assert (
        _category_names(
            [{k: v for k, v in r.items() if k != "config"} for r in rows], "x", ("D",), "val_nmse"
        )
        is None
    )


@pytest.mark.slow
def test_the_plots_of_a_quick_run_pass_the_checker(tmp_path):
    """verify --profile quick on the claims with figures: every record's plot spec,
    planned from the CSV that verify wrote, has no problem; HC-K1's bound is one line per
    (T, S) for both gates; PR-E1 and IF-P3 are categorical."""
    import json

    from approxtheory.cli import main

    ids = ["HC-P8", "HC-K1", "HC-L3", "IF-P3", "PR-E1", "HC-P7", "IF-R3", "TO-C1"]
    assert main(["verify", "--only", *ids, "--out", str(tmp_path), "--quiet"]) == 0
    seen = {}
    for f in sorted((tmp_path / ".cache").glob("*.json")):
        rec = json.loads(f.read_text())
        csv_path = tmp_path / "data" / f"{rec.get('claim')}.csv"
        if rec.get("plot") and csv_path.exists():
            plan = check_plot(csv_path, rec["plot"])
            assert plan.ok, (rec["claim"], plan.problems)
            seen[rec["claim"]] = plan
    assert {"HC-K1", "HC-L3"} <= set(seen)
    k1 = [s for s in seen["HC-K1"].series if s.role == "bound"]
    assert k1 and all(len(s.also) == 1 for s in k1)
    for c in ("PR-E1", "IF-P3"):
        if c in seen:
            assert seen[c].categorical and not any(s.joined for s in seen[c].series)
