"""Tradeoffs digest §8 P2 + P5: saturation in trained tiny models, with the logit norms recorded.

One causal attention layer with one head of dimension d (learned absolute positions, per-token
GELU read-out) is trained with :func:`approxtheory.train.train` to copy the token two steps back,
y_t = x_{t-2} (scalar x_t ~ N(0, 1)), for d in a grid and several sequence lengths T. Recorded per
cell: the validation NMSE on the rows t >= T/2 (float64), the attention-logit magnitudes after
training (max |z| and RMS, :class:`approxtheory.train.LogitNorms`), and the TO-X2 floor evaluated
at the measured logit bound B = max |z| (the catalogue's ``floor`` averaged over the scored rows,
L = t + 1). That floor bounds position-only heads whose logits stay in [-B, B]; a trained head's
logits also depend on the tokens, so the floor is drawn as a reference, not a bound.

The plots show NMSE vs d per T with the floor, and the relative gain
G(T) = [E(d_min, T) - E(d_max, T)] / E(d_min, T) with the logit bound per T: the digest predicts
G to fall with T only while the logits stay bounded (P5 decides whether they do). This experiment
adds no verdict of its own (TO-T2 and TO-E5 are checked in ``verify`` by their surrogate checks);
it is the trained counterpart to read next to them."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment

LAG = 2


def check_cell(cfg: dict) -> dict:
    from approxtheory.errors import ConfigError

    for k in ("T", "head_dim", "width", "steps"):
        v = cfg[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{k} must be a positive integer (got {v!r})")
    if cfg["T"] < 2 * LAG + 2:
        raise ConfigError(f"T must be at least {2 * LAG + 2} (got {cfg['T']})")
    return {}


def train_cell(cfg: dict) -> dict:
    import numpy as np
    import torch

    from approxtheory import claim
    from approxtheory.errors import ApproxTheoryError
    from approxtheory.experiments._tradeoffs import LagMix, lagmix_model
    from approxtheory.train import LogitNorms, TaskData, TrainConfig, float64_copy, train

    check_cell(cfg)
    T, d = cfg["T"], cfg["head_dim"]
    task = LagMix(T, 1, lags=(LAG,), squash=False)
    model = lagmix_model(T, 1, cfg["width"], 1, d)
    res = train(
        model,
        TaskData(task=task),
        TrainConfig(
            steps=cfg["steps"],
            batch=64,
            lr=cfg["lr"],
            seed=cfg["seed"],
            device=cfg.get("device", "cpu"),
        ),
        callbacks=[LogitNorms(every=cfg["steps"])],
    )
    if not res.ok:
        raise ApproxTheoryError(f"tradeoffs_saturation cell {cfg}: {res.message}")
    X = torch.from_numpy(task.sample(1024, np.random.default_rng(10_000 + cfg["seed"])))
    m = float64_copy(res.model)
    with torch.no_grad():
        out = m(X.to(next(m.parameters()).device)).cpu()[..., 0]
    y = task.target(X)[..., 0]
    rows = slice(T // 2, T)
    nmse = float(((out - y)[:, rows] ** 2).mean() / y[:, rows].var())
    B = res.records[-1]["logit_max_0"]
    x2 = claim("TO-X2")
    floor = float(np.mean([x2.evaluate_float("floor", L=t + 1, B=B) for t in range(T // 2, T)]))
    return {
        "val_nmse": nmse,
        "logit_max": B,
        "logit_rms": res.records[-1]["logit_rms_0"],
        "floor_at_logit_max": floor,
        "final_train_loss": res.final_loss,
    }


train_cell.check = check_cell  # type: ignore[attr-defined]


def train_plot(rows: list, out: Path) -> list:
    import numpy as np

    from approxtheory.experiments._tradeoffs import line_plot, seeds_summary
    from approxtheory.report import write_csv

    out.mkdir(parents=True, exist_ok=True)
    Ts = sorted({int(r["T"]) for r in rows})
    ds = sorted({int(r["head_dim"]) for r in rows})
    agg: list[dict] = []
    series: list[dict] = []
    gains: list[dict] = []
    for i, T in enumerate(Ts):
        per = {
            d: seeds_summary(
                [r["val_nmse"] for r in rows if int(r["T"]) == T and int(r["head_dim"]) == d]
            )
            for d in ds
        }
        fl = {
            d: float(
                np.mean(
                    [
                        r["floor_at_logit_max"]
                        for r in rows
                        if int(r["T"]) == T and int(r["head_dim"]) == d
                    ]
                )
            )
            for d in ds
        }
        lm = float(np.mean([r["logit_max"] for r in rows if int(r["T"]) == T]))
        for d in ds:
            agg.append({"T": T, "head_dim": d, "nmse_mean": per[d]["mean"], "floor": fl[d]})
        series.append(
            {
                "x": ds,
                "y": [per[d]["mean"] for d in ds],
                "lo": [per[d]["lo"] for d in ds],
                "hi": [per[d]["hi"] for d in ds],
                "label": f"T = {T}",
                "color": f"C{i}",
            }
        )
        series.append(
            {
                "x": ds,
                "y": [max(fl[d], 1e-12) for d in ds],
                "label": f"TO-X2 floor at measured max|z| (clipped at 1e-12), T = {T}",
                "dashed": True,
                "color": f"C{i}",
            }
        )
        e_lo, e_hi = per[ds[0]]["mean"], per[ds[-1]]["mean"]
        gains.append({"T": T, "G": (e_lo - e_hi) / e_lo, "logit_max_mean": lm})
    write_csv(out / "summary.csv", agg)
    write_csv(out / "gain.csv", gains)
    return [
        line_plot(
            out / "saturation.png",
            series,
            title="P2: trained NMSE vs head dim (one head, lag-2 copy)",
            xlabel="head dimension d",
            ylabel="validation NMSE (rows t >= T/2)",
            logx=True,
        ),
        line_plot(
            out / "gain_and_logits.png",
            [
                {"x": Ts, "y": [g["G"] for g in gains], "label": f"G(T), d {ds[0]} -> {ds[-1]}"},
                {"x": Ts, "y": [g["logit_max_mean"] for g in gains], "label": "mean max|z| (P5)"},
            ],
            title="P2/P5: relative gain from head dim and the logit bound vs T",
            xlabel="T",
            ylabel="G(T) / max|z|",
            logx=True,
            logy=False,
        ),
    ]


register_experiment(
    Experiment(
        name="tradeoffs_saturation",
        description="P2 + P5: one trained head of dim d copying x_{t-2}, NMSE vs d per T with "
        "the logit norms and the TO-X2 floor at the measured logit bound (no verdict of its own)",
        grids={
            "quick": {
                "T": [16, 64],
                "head_dim": [1, 4, 16],
                "width": [16],
                "steps": [300],
                "lr": [0.01],
            },
            "full": {
                "T": [16, 64, 256],
                "head_dim": [2, 4, 8, 16, 32],
                "width": [32],
                "steps": [1500],
                "lr": [0.001],
            },
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=train_cell,
        plot=train_plot,
        claims=("TO-T2", "TO-E5", "TO-X2"),
    )
)
