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
    from approxtheory.errors import ConfigError

    if cfg.get("task") == "pmax":
        D, drop = int(cfg["D"]), cfg.get("drop")
        if D < 2 or drop not in ("none", "layer1", "layer2"):
            raise ConfigError(f"pmax needs D >= 2 and drop none, layer1 or layer2 (got {cfg})")
        return (D - (drop == "layer1"), D - (drop == "layer2"), 8 * D)
    if cfg.get("task") != "tri":
        raise ConfigError(f"task must be pmax or tri (got {cfg.get('task')!r})")
    try:
        h1, h2, E = (int(v) for v in str(cfg["size"]).split(","))
    except (KeyError, ValueError):
        raise ConfigError(f"tri needs size 'h1,h2,E' (got {cfg.get('size')!r})") from None
    if min(h1, h2, E) < 1:
        raise ConfigError(f"size entries must be positive (got {cfg['size']!r})")
    return h1, h2, E


def trained_cell(cfg: dict) -> dict:
    """Train one two-layer model: ``task`` (pmax or tri), ``D`` and ``drop`` (pmax) or
    ``size`` (tri), ``T``, ``hidden``, ``lr``, ``steps``, ``seed``; pmax optionally ``d``."""
    import numpy as np
    import torch

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.model import LayerSpec, ModelConfig, Transformer
    from approxtheory.train import TaskData, TrainConfig, float64_copy, train

    h1, h2, E = heads_of(cfg)
    task = _task(cfg)
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


# ------------------------------------------------------------- one layer vs two on KTH(2)
def kth_cell(cfg: dict) -> dict:
    """Train a ``layers``-layer model with one head per layer and learned positions on
    TASK-KTH(2) (scalar tokens U[0, 1]): width ``E``, hidden size ``hidden`` (encoder, FFNs,
    read-out), ``T``, ``lr``, ``steps``, ``seed``."""
    import numpy as np
    import torch

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.model import LayerSpec, ModelConfig, Transformer
    from approxtheory.tasks import KthLargest
    from approxtheory.train import TaskData, TrainConfig, float64_copy, train

    T, E, N, L = int(cfg["T"]), int(cfg["E"]), int(cfg["hidden"]), int(cfg["layers"])
    task = KthLargest(T, k=2)
    mc = ModelConfig(
        d_in=1,
        width=E,
        layers=[LayerSpec(1, E, ffn_hidden=(N,))] * L,
        seq_len=T,
        positions="learned",
        embed_hidden=(N,),
        head_hidden=(N,),
        residual=True,
        dtype="float32",
    )
    seed = int(cfg["seed"])
    Xva = task.sample(VAL_SIZE, np.random.default_rng(10_000 + seed))
    model = Transformer(mc)
    res = train(
        model,
        TaskData(task=task, val_inputs=Xva),
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
        raise ApproxTheoryError(f"infoflow kth cell {cfg}: {res.message}")
    with torch.no_grad():
        out = float64_copy(res.model).cpu()(torch.from_numpy(np.asarray(Xva, dtype=np.float64)))
    nm, lo, hi = nmse_interval(out.reshape(len(Xva), -1)[:, 0].numpy(), task.target(Xva), seed)
    return {"val_nmse": nm, "nmse_lo": lo, "nmse_hi": hi, "params": model.count_params()}


def depth_fits(rows: list) -> list[dict]:
    """Per (layers, T): the fitted log-log slope of best-over-seeds NMSE against the parameter
    count (95 % bootstrap interval, ``fit_rate``) next to predict_rate's: N ~ ε^-α and NMSE ~ ε²
    give NMSE ~ N^(-2/α), α at d = 1 and the model's E."""
    from approxtheory.infoflow import Arch, make_task, predict_rate
    from approxtheory.infoflow import E as E_
    from approxtheory.infoflow import T as T_
    from approxtheory.infoflow import d as d_
    from approxtheory.measure import fit_rate

    best: dict = {}
    for r in rows:
        k = (int(r["layers"]), int(r["T"]), int(r["E"]), int(r["params"]))
        best[k] = min(best.get(k, math.inf), float(r["val_nmse"]))
    out = []
    for L, T, E in sorted({k[:3] for k in best}):
        pts = sorted((p, v) for (l_, t_, e_, p), v in best.items() if (l_, t_, e_) == (L, T, E))
        if len(pts) < 3:  # fit_rate needs three points
            continue
        fit = fit_rate([p for p, _ in pts], [v for _, v in pts], seed=10 * T + L)
        pred = predict_rate(Arch((1,) * L, pos_enc=True), make_task("kth", k=2))
        alpha = float(pred.alpha.subs({T_: T, d_: 1, E_: E}))
        out.append(
            {
                "layers": L,
                "T": T,
                "E": E,
                "slope": fit.slope,
                "slope_lo": fit.ci_low,
                "slope_hi": fit.ci_high,
                "alpha": alpha,
                "predicted_slope": -2.0 / alpha,
                "depends_on_T": pred.depends_on_T,
            }
        )
    return out


def kth_plot(rows: list, out: Path, **_) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "fits.csv", depth_fits(rows))
    tab = [
        {"model": f"L={r['layers']},T={r['T']}", "params": r["params"], "val_nmse": r["val_nmse"]}
        for r in rows
    ]
    p = write_csv(out / "nmse_vs_params.csv", tab)
    return [
        plot_from_csv(
            p,
            {
                "x": "params",
                "y": ["val_nmse"],
                "group": "model",
                "title": "KTH(2): NMSE vs parameters, one layer vs two (fits.csv: slopes)",
                "xlabel": "parameters",
                "ylabel": "NMSE",
            },
            out / "nmse_vs_params.png",
        )
    ]


register_experiment(
    Experiment(
        name="infoflow_kth_depth",
        description="IF-T1 (empirical side): one layer vs two (one head each, learned positions) "
        "on TASK-KTH(2); NMSE vs parameters per T, fitted slopes next to predict_rate's -2/alpha",
        grids={
            "quick": {
                "layers": [1, 2],
                "T": [4, 16],
                "E": [8],
                "hidden": [8, 16, 32],
                "lr": [3e-3],
                "steps": [300],
            },
            "full": {
                "layers": [1, 2],
                "T": [4, 8, 16, 32],
                "E": [8],
                "hidden": [8, 16, 32, 64, 128],
                "lr": [1e-3],
                "steps": [3000],
            },
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=kth_cell,
        plot=kth_plot,
        claims=("IF-T1",),
    )
)
