"""Tradeoffs digest §8 P1, P2 + P5: saturation of optimised position-only heads (P1,
``tradeoffs_heads``) and in trained tiny models, with the logit norms recorded
(``tradeoffs_saturation``).

``tradeoffs_heads`` (P1, no training): per (T, B, seed) the best exact error E(d, T) of rank-d
position-only heads on the C1 features (F = 8, target lag 2, rows t >= T/2, read-out 1), logits
B·tanh(z/B) (B = inf: unbounded), d in {1, 2, 4, 8}, Adam from seeded restarts, running minimum
over d (:func:`approxtheory.experiments._tradeoffs.optimise_heads`). The TO-T2 check (the X3
bound on the d-gain) and the TO-X2 check (P1 (a): no finite-B head below the floor) read its
rows; the plot draws E(d) vs T per B with the TO-X2 floor.

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
adds no verdict to TO-T2 and TO-E5 (checked in ``verify`` by their surrogate checks);
it is the trained counterpart to read next to them, and the TO-P2 check (digest P2) decides from
its cells: each cell also records a 95 % bootstrap interval of its NMSE over the validation
sequences (``val_nmse_lo``, ``val_nmse_hi``)."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment

LAG = 2


def check_cell(cfg: dict) -> dict:
    from approxtheory._validate import pos_int
    from approxtheory.errors import ConfigError

    for k in ("T", "head_dim", "width", "steps"):
        pos_int(k, cfg[k], numpy=False)
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
    lo, hi = nmse_interval(
        ((out - y)[:, rows] ** 2).numpy(), y[:, rows].numpy(), seed=20_000 + cfg["seed"]
    )
    B = res.records[-1]["logit_max_0"]
    x2 = claim("TO-X2")
    floor = float(np.mean([x2.evaluate_float("floor", L=t + 1, B=B) for t in range(T // 2, T)]))
    return {
        "val_nmse": nmse,
        "val_nmse_lo": lo,
        "val_nmse_hi": hi,
        "logit_max": B,
        "logit_rms": res.records[-1]["logit_rms_0"],
        "floor_at_logit_max": floor,
        "final_train_loss": res.final_loss,
    }


train_cell.check = check_cell  # type: ignore[attr-defined]

#: bootstrap resamples (over validation sequences) of the NMSE's 95 % interval
BOOTSTRAP = 1000


def nmse_interval(sq, y, seed: int) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the NMSE mean(sq) / var(y) over the validation
    sequences (rows of ``sq`` and ``y``: squared errors and targets of the scored positions),
    resampling whole sequences with a seeded generator (deterministic)."""
    import numpy as np

    sq, y = np.asarray(sq, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(sq)
    idx = np.random.default_rng(seed).integers(0, n, (BOOTSTRAP, n))
    per_seq = sq.mean(1)
    ys, ys2 = y.mean(1), (y**2).mean(1)
    num = per_seq[idx].mean(1)
    var = ys2[idx].mean(1) - ys[idx].mean(1) ** 2
    b = num / var
    return float(np.quantile(b, 0.025)), float(np.quantile(b, 0.975))


def train_plot(rows: list, out: Path) -> list:
    import numpy as np

    from approxtheory.experiments._plots import line_plot
    from approxtheory.experiments._tradeoffs import seeds_summary
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
                "y": [per[d]["median"] for d in ds],
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


# ------------------------------------------------------------------------------ P1: tradeoffs_heads
def heads_check(cfg: dict) -> dict:
    import math

    from approxtheory._validate import pos_int
    from approxtheory.errors import ConfigError

    for k in ("T", "restarts", "steps"):
        pos_int(k, cfg[k], numpy=False)
    if cfg["T"] < 8:
        raise ConfigError(f"T must be at least 8 (rows t >= T/2 with lag 2; got {cfg['T']})")
    B = cfg["B"]
    if isinstance(B, bool) or not isinstance(B, (int, float)) or math.isnan(B) or B <= 0:
        raise ConfigError(f"B must be a positive number or inf (got {B!r})")
    return {}


def heads_cell(cfg: dict) -> dict:
    """P1: :func:`optimise_heads` at (T, B) from the cell's seed; E_d<d> is the running minimum
    over d, raw_d<d> the best restart at d alone."""
    import math

    from approxtheory.experiments._tradeoffs import optimise_heads

    heads_check(cfg)
    T, B = int(cfg["T"]), float(cfg["B"])
    Bkey = 999 if math.isinf(B) else int(round(100 * B))
    r = optimise_heads(
        T,
        B,
        restarts=int(cfg["restarts"]),
        steps=int(cfg["steps"]),
        seed=1_000_003 * int(cfg["seed"]) + 1009 * T + Bkey,
    )
    return {
        **{f"E_d{d}": v for d, v in r["envelope"].items()},
        **{f"raw_d{d}": v for d, v in r["raw"].items()},
    }


heads_cell.check = heads_check  # type: ignore[attr-defined]


def heads_floor(T: int, B: float) -> float:
    """The TO-X2 floor q/(1+q) averaged over P1's scored rows (L = t + 1); 0 for B = inf."""
    import math

    import numpy as np

    from approxtheory import claim
    from approxtheory.experiments._tradeoffs import scored_rows

    if math.isinf(B):
        return 0.0
    x2 = claim("TO-X2")
    return float(np.mean([x2.evaluate_float("floor", L=int(t) + 1, B=B) for t in scored_rows(T)]))


def _heads_panel(rows: list, out: Path, B: float, Ts: list, ds: list) -> tuple:
    """One B of :func:`heads_plot`: its panel-file (E(d, T) per d and the TO-X2 floor), its
    summary rows, and its relative d-gain per T."""
    import math

    import numpy as np

    from approxtheory.experiments._plots import line_plot

    series: list[dict] = []
    summary: list[dict] = []
    fl = {T: heads_floor(T, B) for T in Ts}
    for i, d in enumerate(ds):
        vals = {
            T: [float(r[f"E_d{d}"]) for r in rows if float(r["B"]) == B and int(r["T"]) == T]
            for T in Ts
        }
        series.append(
            {
                "x": Ts,
                "y": [float(np.median(vals[T])) for T in Ts],
                "lo": [min(vals[T]) for T in Ts],
                "hi": [max(vals[T]) for T in Ts],
                "label": f"d = {d}",
                "color": f"C{i}",
            }
        )
        summary += [
            {"B": B, "T": T, "head_dim": d, "E_min": min(vals[T]), "floor": fl[T]} for T in Ts
        ]
    if not math.isinf(B):
        series.append(
            {
                "x": Ts,
                "y": [fl[T] for T in Ts],
                "label": "TO-X2 floor q/(1+q)",
                "dashed": True,
                "color": "k",
            }
        )
    name = "inf" if math.isinf(B) else f"{B:g}"
    path = line_plot(
        out / f"E_vs_T_B{name}.png",
        series,
        title=f"P1: optimised heads, B = {name} (median over seeds, band min-max)",
        xlabel="T",
        ylabel="relative MSE E(d, T) (rows t >= T/2)",
        logx=True,
        logy=not math.isinf(B),
    )
    best = {
        T: {
            d: min(float(r[f"E_d{d}"]) for r in rows if float(r["B"]) == B and int(r["T"]) == T)
            for d in (ds[0], ds[-1])
        }
        for T in Ts
    }
    gain = [(best[T][ds[0]] - best[T][ds[-1]]) / best[T][ds[0]] for T in Ts]
    return path, summary, name, gain


def heads_plot(rows: list, out: Path) -> list:
    """E(d, T) (min over seeds, band over seeds) vs T per d, one panel-file per B, with the TO-X2
    floor; and the relative d-gain [E(1) - E(8)] / E(1) vs T per B."""
    from approxtheory.experiments._plots import line_plot
    from approxtheory.report import write_csv

    out.mkdir(parents=True, exist_ok=True)
    Bs = sorted({float(r["B"]) for r in rows})
    Ts = sorted({int(r["T"]) for r in rows})
    ds = sorted(int(k[3:]) for k in rows[0] if k.startswith("E_d"))
    summary, plots, gain_series = [], [], []
    for j, B in enumerate(Bs):
        path, rows_B, name, gain = _heads_panel(rows, out, B, Ts, ds)
        plots.append(path)
        summary += rows_B
        gain_series.append({"x": Ts, "y": gain, "label": f"B = {name}", "color": f"C{j}"})
    write_csv(out / "summary.csv", summary)
    plots.append(
        line_plot(
            out / "d_gain.png",
            gain_series,
            title=f"P1: relative d-gain [E({ds[0]}) - E({ds[-1]})] / E({ds[0]}) vs T",
            xlabel="T",
            ylabel="relative gain",
            logx=True,
            logy=False,
        )
    )
    return plots


_INF = float("inf")
register_experiment(
    Experiment(
        name="tradeoffs_heads",
        description="P1: optimised position-only heads on the C1 features (lag 2, rows t >= T/2, "
        "read-out 1), E(d, T) per logit bound B (inf: unbounded), restarts per d; read by the "
        "TO-T2 and TO-X2 checks",
        grids={
            "quick": {
                "T": [16, 64, 128],
                "B": [0.5, 1.0, 2.0, _INF],
                "restarts": [2],
                "steps": [100],
            },
            "full": {
                "T": [16, 32, 64, 128, 256],
                "B": [0.5, 1.0, 2.0, _INF],
                "restarts": [4],
                "steps": [300],
            },
        },
        seeds={"quick": [0], "full": [0, 1, 2]},
        cell=heads_cell,
        plot=heads_plot,
        claims=("TO-T2", "TO-X2"),
    )
)

register_experiment(
    Experiment(
        name="tradeoffs_saturation",
        description="P2 + P5: one trained head of dim d copying x_{t-2}, NMSE vs d per T with "
        "the logit norms and the TO-X2 floor at the measured logit bound; read by the TO-P2 check",
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
        claims=("TO-P2",),
    )
)
