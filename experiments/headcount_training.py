"""HC-P8 scaled down: one-layer models trained on Σ_i max_t a_iᵀx(t) (D = 2, d = 2) with
h = 1..3 heads of width 8, no residual, no LayerNorm, no positions, CLS read-out (headcount digest
§5.1 / §6 P8, cheaper D = 2 variant). Validation NMSE is measured in float64; training runs in
float32 for speed. Hyper-parameters are not from the paper (it gives none): Adam, lr 1e-3,
batch 256."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment


def train_cell(cfg: dict) -> dict:
    import numpy as np
    import torch
    from approxtheory.measure import nmse
    from approxtheory.model import LayerSpec, ModelConfig, Transformer
    from approxtheory.tasks import SyntheticMaxSum

    from ._rng import init_linear_
    rng = np.random.default_rng(cfg["seed"])
    task = SyntheticMaxSum(cfg["T"], d=2, D=2, seed=123)
    h, N = cfg["heads"], cfg["hidden"]
    mc = ModelConfig(d_in=2, width=8 * h, layers=[LayerSpec(h, 8)], embed_hidden=(N,),
                     head_hidden=(N,), head_activation="gelu", residual=False, dtype="float32")
    model = Transformer(mc)
    init_linear_(model, cfg["seed"])      # = torch.manual_seed(seed) + build, without global state
    model = model.to(cfg["device"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    Xtr = torch.tensor(task.sample_gaussian(8000, rng), dtype=torch.float32)
    ytr = task.target(Xtr.double()).float()
    for step in range(cfg["steps"]):
        idx = torch.from_numpy(rng.integers(0, len(Xtr), 256))
        xb, yb = Xtr[idx].to(cfg["device"]), ytr[idx].to(cfg["device"])
        loss = ((model(xb)[:, 0] - yb) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    model = model.cpu().double()
    model.cfg.dtype = "float64"
    Xva = task.sample_gaussian(2000, np.random.default_rng(10_000 + cfg["seed"]))
    return {"val_nmse": nmse(model, task, X=Xva), "params": model.count_params(),
            "final_train_loss": float(loss.detach())}


def train_plot(rows: list, out: Path) -> list:
    from approxtheory.report import plot_from_csv, write_csv
    out.mkdir(parents=True, exist_ok=True)
    best = {}
    for r in rows:                           # minimum over seeds, as in the paper's Fig. 1a
        k = (r["heads"], r["T"])
        best[k] = min(best.get(k, float("inf")), r["val_nmse"])
    agg = [{"heads": h, "T": T, "val_nmse": v} for (h, T), v in sorted(best.items())]
    p = write_csv(out / "min_over_seeds.csv", agg)
    return [plot_from_csv(p, {"x": "T", "y": ["val_nmse"], "group": "heads",
                              "title": "HC-P8 (D = 2): validation NMSE vs T",
                              "xlabel": "T", "ylabel": "min-over-seeds NMSE"},
                          out / "nmse_vs_T.png")]


register_experiment(Experiment(
    name="headcount_phase",
    description="trained one-layer models on Σ max a_iᵀx (D = 2): NMSE vs T for h = 1..3 "
                "(HC-P8, scaled down)",
    grids={"quick": {"heads": [1, 2, 3], "T": [8, 32], "hidden": [32], "steps": [300]},
           "full": {"heads": [1, 2, 3, 4], "T": [8, 16, 32, 64], "hidden": [32],
                    "steps": [3000]}},
    seeds={"quick": [0], "full": [0, 1, 2]},
    cell=train_cell, plot=train_plot, claims=("HC-P8", "HC-T2a", "HC-T2b")))
