"""HC-P8 scaled down: one-layer models trained on Σ_i max_t a_iᵀx(t) (D = 2, d = 2) with
h = 1..3 heads of width 8, no residual, no LayerNorm, no positions, CLS read-out (headcount digest
§5.1 / §6 P8, cheaper D = 2 variant), trained with :func:`approxtheory.train.train`. Validation
NMSE is measured in float64; training runs in float32 for speed. Hyper-parameters are not from the
paper (it gives none): Adam, lr 1e-3, batch 256."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, int_range, register_experiment


def train_cell(cfg: dict) -> dict:
    import numpy as np

    from approxtheory.model import LayerSpec, ModelConfig, Transformer
    from approxtheory.tasks import SyntheticMaxSum
    from approxtheory.train import TaskData, TrainConfig, train

    task = SyntheticMaxSum(cfg["T"], d=2, D=2, seed=123)
    h, N = cfg["heads"], cfg["hidden"]
    mc = ModelConfig(
        d_in=2,
        width=8 * h,
        layers=[LayerSpec(h, 8)],
        embed_hidden=(N,),
        head_hidden=(N,),
        head_activation="gelu",
        residual=False,
        dtype="float32",
    )
    # a fixed training set of 8000 Gaussian inputs, batches of 256 drawn from it; the weights
    # drawn from the cell's seed as torch.manual_seed(seed) + build would (no global state)
    Xva = task.sample_gaussian(2000, np.random.default_rng(10_000 + cfg["seed"]))
    data = TaskData(task=task, sampler=task.sample_gaussian, train_size=8000, val_inputs=Xva)
    model = Transformer(mc)
    res = train(
        model,
        data,
        TrainConfig(
            steps=cfg["steps"],
            batch=256,
            lr=1e-3,
            optimizer="adam",
            seed=cfg["seed"],
            device=cfg.get("device", "cpu"),
        ),
    )
    if not res.ok:
        from approxtheory.errors import ApproxTheoryError

        raise ApproxTheoryError(f"headcount_phase cell {cfg}: {res.message}")
    return {
        "val_nmse": res.evals[-1]["val_nmse"],
        "params": model.count_params(),  # (train() trains it in place)
        "final_train_loss": res.final_loss,
    }


def train_plot(rows: list, out: Path) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    best: dict[tuple[int, int], float] = {}
    for r in rows:  # minimum over seeds, as in the paper's Fig. 1a
        k = (r["heads"], r["T"])
        best[k] = min(best.get(k, float("inf")), r["val_nmse"])
    agg = [{"heads": h, "T": T, "val_nmse": v} for (h, T), v in sorted(best.items())]
    p = write_csv(out / "min_over_seeds.csv", agg)
    return [
        plot_from_csv(
            p,
            {
                "x": "T",
                "y": ["val_nmse"],
                "group": "heads",
                "title": "HC-P8 (D = 2): validation NMSE vs T",
                "ylabel": "min-over-seeds NMSE",
            },
            out / "nmse_vs_T.png",
        )
    ]


register_experiment(
    Experiment(
        name="headcount_phase",
        description="trained one-layer models on Σ max a_iᵀx (D = 2): NMSE vs T for h = 1..3 "
        "(HC-P8, scaled down)",
        grids={
            "quick": {"heads": [1, 2, 3], "T": [8, 32], "hidden": [32], "steps": [300]},
            "full": {"heads": [1, 2, 3, 4], "T": [8, 16, 32, 64], "hidden": [32], "steps": [3000]},
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=train_cell,
        # sizes up to a few times the full profile's (the float64 validation pass on 2000
        # sequences of T tokens through N hidden units: at most 2000 x 256 x 512 values, 2 GiB)
        params={
            "heads": int_range(1, 64),
            "T": int_range(2, 256),
            "hidden": int_range(1, 512),
            "steps": int_range(1, 100_000),
        },
        plot=train_plot,
        claims=("HC-T2b", "HC-TR3"),
    )
)
