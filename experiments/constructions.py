"""Construction sweeps (no training): measured sup error against the claimed bound."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, float_range, int_range, register_experiment


def softmax_cell(cfg: dict) -> dict:
    from approxtheory.constructions import build

    c = build("softmax_retrieval", T=cfg["T"], beta=cfg["beta"])
    m = c.measure(budget=cfg.get("budget", 512), seed=cfg["seed"])
    return {
        "sup_error": m["sup_error"],
        "claimed_bound": c.claimed_bound,
        "verdict": m["verdict"],
        "n_evals": m["n_evals"],
    }


def softmax_plot(rows: list, out: Path) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    if not any("sup_error" in r for r in rows):  # a CSV the runner did not write
        raise KeyError("sup_error")
    out.mkdir(parents=True, exist_ok=True)
    tmp = write_csv(out / "data.csv", rows)
    return [
        plot_from_csv(
            tmp,
            {
                "x": "beta",
                "y": ["sup_error"],
                "bound": "claimed_bound",
                "group": "T",
                "title": "softmax max retrieval (IF-T2)",
                "xlabel": "β",
                "ylabel": "sup error",
            },
            out / "sup_error.png",
        )
    ]


register_experiment(
    Experiment(
        name="softmax_beta_sweep",
        description="sup error of one softmax head retrieving the max, against (1 + ln βT)/β",
        grids={
            "quick": {"T": [2, 16, 128], "beta": [10.0, 100.0, 1000.0]},
            "full": {
                "T": [2, 4, 16, 64, 256, 1024],
                "beta": [10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 1e5],
            },
        },
        seeds={"quick": [0], "full": [0, 1]},
        cell=softmax_cell,
        # the sup-error search draws its budget of 512 sequences of T tokens at once
        params={"T": int_range(2, 16384), "beta": float_range(1e-6, 1e12)},
        plot=softmax_plot,
        claims=("IF-T2", "HC-P2"),
    )
)
