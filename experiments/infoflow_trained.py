"""Trained InfoFlow experiments (infoflow digest §6.1, §6.2, §7 items 5 and 6), through
:func:`approxtheory.train.train` and the runner.

Model: a two-layer transformer with residual stream (digest §1.2), no positional encoding, a
trainable CLS read-out, a ReLU encoder and read-out of hidden size ``hidden``, per-layer head
counts ``(h1, h2)`` and per-head width ``E / max(h1, h2)`` rounded up (so one head fewer in a
layer changes nothing else). Training: Adam (lr per profile), cosine schedule, float32;
validation NMSE in float64 on 1000 fresh sequences, with a 95 % bootstrap interval over the
validation sequences (``nmse_lo``, ``nmse_hi``). Hyper-parameters are not the paper's (it gives
none).

- ``infoflow_pmax_heads`` (IF-P3): TASK-PMAX(D), d = 4, unit-norm tokens, heads (D, D),
  (D-1, D), (D, D-1);
- ``infoflow_tri_growth`` (IF-P4): TASK-TRI, d = 2, N(0, 2I) clamped to norm [0.2, 4], T
  growing, two model sizes.
"""

from __future__ import annotations

import math
from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment

BATCH, VAL_SIZE, N_BOOT = 128, 1000, 200


def _task(cfg: dict):
    from approxtheory.tasks import PairwiseMax, TriangleCenter

    T = int(cfg["T"])
    if cfg["task"] == "pmax":
        return PairwiseMax(T, d=int(cfg.get("d", 4)), D=int(cfg["D"]), seed=7)
    return TriangleCenter(T, d=2)


def nmse_interval(pred, y, seed: int, n_boot: int = N_BOOT) -> tuple[float, float, float]:
    """NMSE = mean((pred - y)²) / var(y) and its 95 % bootstrap interval over the samples."""
    import numpy as np

    pred, y = np.asarray(pred, float), np.asarray(y, float)
    nm = float(np.mean((pred - y) ** 2) / np.var(y))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(y), (n_boot, len(y)))
    boot = np.mean((pred[idx] - y[idx]) ** 2, axis=1) / np.var(y[idx], axis=1)
    return nm, float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))


def heads_of(cfg: dict) -> tuple[int, int, int]:
    """(h1, h2, E): PMAX from ``D`` and ``drop`` (none, layer1, layer2: one head less there),
    E = 8·D; TRI from ``size`` "h1,h2,E"."""
    if cfg["task"] == "pmax":
        D = int(cfg["D"])
        drop = cfg["drop"]
        return (D - (drop == "layer1"), D - (drop == "layer2"), 8 * D)
    h1, h2, E = (int(v) for v in str(cfg["size"]).split(","))
    return h1, h2, E


def trained_cell(cfg: dict) -> dict:
    """Train one two-layer model: ``task`` (pmax or tri), ``D`` and ``drop`` (pmax) or
    ``size`` (tri), ``T``, ``hidden``, ``lr``, ``steps``, ``seed``; pmax optionally ``d``."""
    import numpy as np
    import torch

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.model import LayerSpec, ModelConfig, Transformer
    from approxtheory.train import TaskData, TrainConfig, float64_copy, train

    task = _task(cfg)
    h1, h2, E = heads_of(cfg)
    N = int(cfg["hidden"])
    n = math.ceil(E / max(h1, h2))
    mc = ModelConfig(
        d_in=task.d,
        width=E,
        layers=[LayerSpec(h1, n, ffn_hidden=(N,)), LayerSpec(h2, n, ffn_hidden=(N,))],
        embed_hidden=(N,),
        head_hidden=(N,),
        residual=True,
        dtype="float32",
    )
    seed = int(cfg["seed"])
    Xva = task.sample(VAL_SIZE, np.random.default_rng(10_000 + seed))
    data = TaskData(task=task, val_inputs=Xva)
    model = Transformer(mc)
    res = train(
        model,
        data,
        TrainConfig(
            steps=int(cfg["steps"]),
            batch=BATCH,
            lr=float(cfg["lr"]),
            optimizer="adam",
            schedule="cosine",
            seed=seed,
            device=cfg.get("device", "cpu"),
        ),
    )
    if not res.ok:
        raise ApproxTheoryError(f"infoflow cell {cfg}: {res.message}")
    m = float64_copy(res.model).cpu()
    with torch.no_grad():
        out = m(torch.from_numpy(np.asarray(Xva, dtype=np.float64)))
    pred = out.reshape(len(Xva), -1)[:, 0].numpy()
    nm, lo, hi = nmse_interval(pred, task.target(Xva), seed)
    return {
        "h1": h1,
        "h2": h2,
        "E": E,
        "val_nmse": nm,
        "nmse_lo": lo,
        "nmse_hi": hi,
        "params": model.count_params(),
        "final_train_loss": res.final_loss,
    }


def pmax_plot(rows: list, out: Path, **_) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    tab = [
        {"D": r["D"], "config": f"({r['h1']},{r['h2']})", "x": i, "val_nmse": r["val_nmse"]}
        for i, r in enumerate(sorted(rows, key=lambda r: (r["D"], r["h1"], r["h2"], r["seed"])))
    ]
    p = write_csv(out / "nmse_per_config.csv", tab)
    return [
        plot_from_csv(
            p,
            {
                "x": "x",
                "y": ["val_nmse"],
                "group": "D",
                "title": "PMAX(D): validation NMSE per (h1, h2) (see nmse_per_config.csv)",
                "xlabel": "config index",
                "ylabel": "NMSE",
                "logx": False,
            },
            out / "nmse_per_config.png",
        )
    ]


def tri_plot(rows: list, out: Path, **_) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    tab = [
        {"size": f"({r['h1']},{r['h2']})/E={r['E']}", "T": r["T"], "val_nmse": r["val_nmse"]}
        for r in rows
    ]
    p = write_csv(out / "nmse_vs_T.csv", tab)
    return [
        plot_from_csv(
            p,
            {
                "x": "T",
                "y": ["val_nmse"],
                "group": "size",
                "title": "TRI: validation NMSE vs T per model size",
                "xlabel": "T",
                "ylabel": "NMSE",
            },
            out / "nmse_vs_T.png",
        )
    ]


register_experiment(
    Experiment(
        name="infoflow_pmax_heads",
        description="IF-P3: two-layer models on TASK-PMAX(D), d = 4, heads (D, D), (D-1, D), "
        "(D, D-1); best validation NMSE with bootstrap interval",
        grids={
            "quick": {
                "task": ["pmax"],
                "D": [2],
                "T": [8],
                "drop": ["none", "layer1", "layer2"],
                "hidden": [32],
                "lr": [1e-2],
                "steps": [1000],
            },
            "full": {
                "task": ["pmax"],
                "D": [2, 3],
                "T": [16],
                "drop": ["none", "layer1", "layer2"],
                "hidden": [64],
                "lr": [3e-3],
                "steps": [5000],
            },
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=trained_cell,
        plot=pmax_plot,
        claims=("IF-P3",),
    )
)
register_experiment(
    Experiment(
        name="infoflow_tri_growth",
        description="IF-P4: two-layer models on TASK-TRI, d = 2, NMSE vs T for (2,2)/E=24 and "
        "(4,4)/E=48",
        grids={
            "quick": {
                "task": ["tri"],
                "T": [3, 16],
                "size": ["2,2,24", "4,4,48"],
                "hidden": [32],
                "lr": [3e-3],
                "steps": [400],
            },
            "full": {
                "task": ["tri"],
                "T": [3, 8, 16, 32, 64],
                "size": ["2,2,24", "4,4,24", "4,4,48"],
                "hidden": [64],
                "lr": [3e-3],
                "steps": [5000],
            },
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=trained_cell,
        plot=tri_plot,
        claims=("IF-P4",),
    )
)
