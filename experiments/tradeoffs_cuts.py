"""Tradeoffs digest §8 P4: halve the attention width of a baseline (H, d) by cutting head
dimension or by cutting head count, trained from scratch and post hoc. Causal attention layers on
learned positions (per-token GELU read-out) trained with :func:`approxtheory.train.train` on the
3-lag extraction task (:class:`LagMix`). Variants: ``base`` (H, d), ``cut_heads`` (H/2, d),
``cut_dim`` (H, d/2), each trained from the same seed for the same steps; the ``base`` cell also
compresses its trained model post hoc, every head to rank d/2 by truncated SVD of its QK and OV
circuits (TO-C1's procedure) versus pruning the H/2 heads of each layer with the smallest
‖W_O W_V‖, and records the validation NMSE of both.

Stated criterion (TO-R3): see :data:`CRITERION`."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment
from approxtheory.experiments.tradeoffs_budget import DECISIVE_LAGMIX

VARIANTS = ("base", "cut_heads", "cut_dim")

CRITERION = (
    "trained: the seed-mean validation NMSE of (H, d/2) is at most that of (H/2, d); post hoc: "
    "the seed-mean NMSE increase from truncating every head of the trained (H, d) model to rank "
    "d/2 (SVD of QK and OV) is smaller than from pruning half of each layer's heads (smallest "
    "‖W_O W_V‖). Consistent only if both hold"
)


def shape(cfg: dict) -> tuple[int, int]:
    H, d = cfg["heads"], cfg["head_dim"]
    return {"base": (H, d), "cut_heads": (H // 2, d), "cut_dim": (H, d // 2)}[cfg["variant"]]


def check_cell(cfg: dict) -> dict:
    from approxtheory.errors import ConfigError

    for k in ("T", "p", "width", "heads", "head_dim", "layers", "steps"):
        v = cfg[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{k} must be a positive integer (got {v!r})")
    if cfg["heads"] % 2 or cfg["head_dim"] % 2:
        raise ConfigError(
            f"heads and head_dim must be even (got {cfg['heads']}, {cfg['head_dim']})"
        )
    if cfg["variant"] not in VARIANTS:
        raise ConfigError(f"variant must be one of {', '.join(VARIANTS)} (got {cfg['variant']!r})")
    return {}


def train_cell(cfg: dict) -> dict:
    import copy

    import numpy as np

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.experiments._tradeoffs import (
        LagMix,
        lagmix_model,
        lagmix_nmse,
        lagmix_train_config,
        prune_heads,
        truncate_layer,
    )
    from approxtheory.train import TaskData, train

    check_cell(cfg)
    T, p, L = cfg["T"], cfg["p"], cfg["layers"]
    H, d = shape(cfg)
    task = LagMix(T, p)
    Xv = task.sample(1024, np.random.default_rng(10_000 + cfg["seed"]))
    model = lagmix_model(T, p, cfg["width"], H, d, L)
    res = train(
        model,
        TaskData(task=task),
        lagmix_train_config(cfg),
    )
    if not res.ok:
        raise ApproxTheoryError(f"tradeoffs_cuts cell {cfg}: {res.message}")
    rec = {
        "H": H,
        "d": d,
        "attn_params": model.count_params(["attn"]),
        "val_nmse": lagmix_nmse(res.model, task, Xv),
        "svd_nmse": float("nan"),
        "prune_nmse": float("nan"),
    }
    if cfg["variant"] == "base":
        svd, pruned = copy.deepcopy(res.model), copy.deepcopy(res.model)
        for li in range(L):
            truncate_layer(svd, li, d // 2)
            prune_heads(pruned, li, H // 2)
        rec["svd_nmse"] = lagmix_nmse(svd, task, Xv)
        rec["prune_nmse"] = lagmix_nmse(pruned, task, Xv)
    if cfg.get("decay"):  # the held schedule's settled tail, for the gate's plateau test
        rec.update(res.loss_tail())
    return rec


train_cell.check = check_cell  # type: ignore[attr-defined]


def summarise(rows: list) -> dict:
    """Seed-mean NMSE of every variant, of the post-hoc compressions, and the per-seed values."""
    import math

    from approxtheory.experiments._tradeoffs import seeds_summary

    by = {v: {int(r["seed"]): r for r in rows if r["variant"] == v} for v in VARIANTS}
    seeds = sorted(set(by["base"]) & set(by["cut_heads"]) & set(by["cut_dim"]))
    out: dict = {"seeds": seeds}
    for v in VARIANTS:
        out[v] = seeds_summary([by[v][s]["val_nmse"] for s in seeds])
    for k in ("svd", "prune"):
        inc = [by["base"][s][f"{k}_nmse"] - by["base"][s]["val_nmse"] for s in seeds]
        out[f"{k}_increase"] = seeds_summary(inc)
        out[f"{k}_per_seed"] = inc
    out["trained_per_seed"] = [
        (by["cut_dim"][s]["val_nmse"], by["cut_heads"][s]["val_nmse"]) for s in seeds
    ]
    out["trained_ok"] = out["cut_dim"]["mean"] <= out["cut_heads"]["mean"]
    out["posthoc_ok"] = out["svd_increase"]["mean"] < out["prune_increase"]["mean"]
    out["finite"] = all(math.isfinite(x) for s in seeds for x in (by["base"][s]["svd_nmse"],))
    return out


def train_plot(rows: list, out: Path) -> list:
    from approxtheory.experiments._plots import line_plot
    from approxtheory.report import write_csv

    out.mkdir(parents=True, exist_ok=True)
    s = summarise(rows)
    H = int(max(r["H"] for r in rows))
    d = int(max(r["d"] for r in rows))
    agg = [
        {
            "what": f"trained {v}",
            "nmse_mean": s[v]["mean"],
            "nmse_min": s[v]["lo"],
            "nmse_max": s[v]["hi"],
        }
        for v in VARIANTS
    ] + [
        {
            "what": f"post hoc {k}",
            "nmse_mean": s["base"]["mean"] + s[f"{k}_increase"]["mean"],
            "nmse_min": s["base"]["lo"] + s[f"{k}_increase"]["lo"],
            "nmse_max": s["base"]["hi"] + s[f"{k}_increase"]["hi"],
        }
        for k in ("svd", "prune")
    ]
    write_csv(out / "summary.csv", agg)
    # attention width on x: the baseline at H·d, both cuts at H·d/2
    x = [H * d // 2, H * d]
    paths = [
        line_plot(
            out / "cuts.png",
            [
                {
                    "x": x,
                    "y": [s["cut_dim"]["median"], s["base"]["median"]],
                    "lo": [s["cut_dim"]["lo"], s["base"]["lo"]],
                    "hi": [s["cut_dim"]["hi"], s["base"]["hi"]],
                    "label": f"trained: cut head dim ({H}, {d // 2})",
                },
                {
                    "x": x,
                    "y": [s["cut_heads"]["median"], s["base"]["median"]],
                    "lo": [s["cut_heads"]["lo"], s["base"]["lo"]],
                    "hi": [s["cut_heads"]["hi"], s["base"]["hi"]],
                    "label": f"trained: cut head count ({H // 2}, {d})",
                },
                {
                    "x": x,
                    "y": [s["base"]["median"] + s["svd_increase"]["median"], s["base"]["median"]],
                    "label": f"post hoc: SVD to rank {d // 2}",
                    "dashed": True,
                },
                {
                    "x": x,
                    "y": [s["base"]["median"] + s["prune_increase"]["median"], s["base"]["median"]],
                    "label": f"post hoc: prune {H // 2} heads",
                    "dashed": True,
                },
            ],
            title=f"TO-R3 / P4: halving the attention width of ({H}, {d})",
            xlabel="attention width Σ H·d per layer",
            ylabel="validation NMSE (median over seeds, band min-max)",
        )
    ]
    return paths


#: the models of the quick and decisive grids
_QUICK_MODELS = {
    "variant": list(VARIANTS),
    "T": [16],
    "p": [4],
    "width": [32],
    "heads": [8],
    "head_dim": [8],
    "layers": [1],
}

register_experiment(
    Experiment(
        name="tradeoffs_cuts",
        description="P4: (H, d) vs (H/2, d) vs (H, d/2) trained on 3-lag extraction; post hoc "
        "SVD truncation to rank d/2 vs pruning H/2 heads (criterion: " + CRITERION + ")",
        grids={
            "quick": {**_QUICK_MODELS, "steps": [300], "lr": [0.01]},
            # the quick grid at the decisive recipe, three paired seeds
            "decisive": {**_QUICK_MODELS, **DECISIVE_LAGMIX},
            "full": {
                "variant": list(VARIANTS),
                "T": [32],
                "p": [8],
                "width": [64],
                "heads": [8],
                "head_dim": [8],
                "layers": [2],
                "steps": [1500],
                "lr": [0.003],
            },
        },
        seeds={"quick": [0, 1], "full": [0, 1, 2], "decisive": [0, 1, 2]},
        cell=train_cell,
        plot=train_plot,
        claims=("TO-R3",),
    )
)
