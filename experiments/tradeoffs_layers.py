"""Tradeoffs digest §8 P6 and P7 on real text: character-level causal LMs of the shared class
(pre-LayerNorm, learned positions, GELU FFN) trained with :func:`approxtheory.train.train` under
three allocations of the same total attention width Σ_ℓ H_ℓ d_ℓ: ``uniform`` (H, d) in every
layer, ``front`` (H, 3d/2) in the first half and (H, d/2) in the second, ``back`` the mirror.

P6 (per-layer compressibility): after training, every head of one layer ℓ at a time is truncated
to rank r (SVD of its QK and OV circuits, TO-C1's procedure) and the validation-loss increase
Δ_ℓ(r) is recorded (the per-cell trace). P7 (allocation): the validation loss per schedule.

Corpus: the identifiability experiment's default (CPython's ``pydoc_data.topics``), or
``--corpus PATH`` (a text file; first 90 % train, the rest validation).

Stated criterion (TO-R2): see :data:`CRITERION`."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, held_recipe, register_experiment

SCHEDULES = ("uniform", "front", "back")
#: the kept ranks of the per-layer truncation profile (capped at each layer's head dim)
RANKS = (1, 2, 4, 8)

CRITERION = (
    "P6: in the uniform models, at every kept rank r, the seed-mean validation-loss increase "
    "from truncating all heads of layer 1 exceeds that of every later layer; P7: the front-loaded "
    "schedule's seed-mean validation loss is at most the back-loaded one's. Consistent only if "
    "both hold"
)


def layer_specs(schedule: str, layers: int, heads: int, head_dim: int) -> list[tuple[int, int]]:
    """(heads, head_dim) per layer of a schedule; every schedule has Σ_ℓ H_ℓ d_ℓ = layers·H·d."""
    if schedule == "uniform":
        return [(heads, head_dim)] * layers
    big, small = 3 * head_dim // 2, head_dim // 2
    half = layers // 2
    first = [(heads, big)] * half + [(heads, small)] * half
    return first if schedule == "front" else first[::-1]


def check_cell(cfg: dict) -> dict:
    from approxtheory.errors import ConfigError
    from approxtheory.experiments._tradeoffs import check_text_corpus
    from approxtheory.experiments.identifiability_training import (
        _corpus_stats,
        check_corpus_length,
    )

    for k in ("T", "width", "heads", "head_dim", "layers", "steps", "batch"):
        v = cfg[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{k} must be a positive integer (got {v!r})")
    if cfg["schedule"] not in SCHEDULES:
        raise ConfigError(
            f"schedule must be one of {', '.join(SCHEDULES)} (got {cfg['schedule']!r})"
        )
    if cfg["layers"] % 2 or cfg["head_dim"] % 2:
        raise ConfigError(
            f"layers and head_dim must be even (got {cfg['layers']}, {cfg['head_dim']})"
        )
    spec = cfg["corpus"]
    check_text_corpus(spec)
    n, _ = _corpus_stats(spec)
    check_corpus_length(n, cfg["T"], "" if spec in ("pydoc", "", None) else spec)
    return {}


def _schedule(cfg: dict) -> dict:
    """The learning-rate schedule of a cell: where the grid sets ``decay`` (the decisive
    profile, :func:`~approxtheory.experiment.held_recipe`), warm-up, cosine decay to
    ``min_lr``·lr and then held; otherwise a constant rate (the quick and full profiles)."""
    if not cfg.get("decay"):
        return {}
    return {
        "schedule": "cosine",
        "warmup_steps": int(cfg["warmup"]),
        "decay_steps": int(cfg["decay"]),
        "min_lr_ratio": float(cfg["min_lr"]),
    }


def train_cell(cfg: dict) -> dict:
    import copy

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.experiments._tradeoffs import (
        corpus_tokens,
        lm_config,
        lm_val_loss,
        lm_val_windows,
        truncate_layer,
    )
    from approxtheory.model import Transformer
    from approxtheory.train import TokenData, TrainConfig, train

    check_cell(cfg)
    T, L = cfg["T"], cfg["layers"]
    tr, va, V = corpus_tokens(cfg["corpus"], T)
    specs = layer_specs(cfg["schedule"], L, cfg["heads"], cfg["head_dim"])
    model = Transformer(lm_config(V, T, cfg["width"], specs))
    res = train(
        model,
        TokenData(tokens=tr, vocab=V, seq_len=T),
        TrainConfig(
            steps=cfg["steps"],
            batch=cfg["batch"],
            lr=cfg["lr"],
            optimizer="adamw",
            weight_decay=0.01,
            seed=cfg["seed"],
            device=cfg.get("device", "cpu"),
            **_schedule(cfg),
        ),
    )
    if not res.ok:
        raise ApproxTheoryError(f"tradeoffs_layers cell {cfg}: {res.message}")
    win = lm_val_windows(va, T, cfg["val_windows"], 10_000 + cfg["seed"])
    base = lm_val_loss(res.model, V, win)
    trace = []
    for li, (_, d) in enumerate(specs):
        for r in RANKS:
            if r >= d:
                continue
            m = copy.deepcopy(res.model)
            truncate_layer(m, li, r)
            trace.append(
                {
                    "layer": li + 1,
                    "rank": r,
                    "head_dim_l": d,
                    "dloss": lm_val_loss(m, V, win) - base,
                }
            )
    return {
        "val_loss": base,
        "final_train_loss": res.final_loss,
        "vocab": V,
        "attn_params": model.count_params(["attn"]),
        "trace": trace,
    }


train_cell.check = check_cell  # type: ignore[attr-defined]


def summarise(rows: list, trace: list) -> dict:
    """Seed-mean validation loss per schedule; seed-mean Δ_ℓ(r) of the uniform models."""
    from approxtheory.experiments._tradeoffs import seeds_summary

    out: dict = {"loss": {}, "dloss": {}}
    for s in SCHEDULES:
        v = [r["val_loss"] for r in rows if r["schedule"] == s]
        if v:
            out["loss"][s] = seeds_summary(v)
    uni = [t for t in trace if t["schedule"] == "uniform"]
    for li in sorted({int(t["layer"]) for t in uni}):
        for r in sorted({int(t["rank"]) for t in uni}):
            v = [t["dloss"] for t in uni if int(t["layer"]) == li and int(t["rank"]) == r]
            if v:
                out["dloss"][(li, r)] = seeds_summary(v)
    return out


def train_plot(rows: list, out: Path, trace: list | None = None) -> list:
    from approxtheory.experiments._plots import line_plot
    from approxtheory.report import write_csv

    out.mkdir(parents=True, exist_ok=True)
    s = summarise(rows, trace or [])
    agg = [
        {
            "layer": li,
            "rank": r,
            "dloss_mean": v["mean"],
            "dloss_min": v["lo"],
            "dloss_max": v["hi"],
        }
        for (li, r), v in sorted(s["dloss"].items())
    ]
    write_csv(out / "compressibility.csv", agg)
    write_csv(
        out / "allocation.csv",
        [{"schedule": k, **{f"loss_{a}": b for a, b in v.items()}} for k, v in s["loss"].items()],
    )
    layers = sorted({li for li, _ in s["dloss"]})
    series = []
    for li in layers:
        rs = sorted(r for l2, r in s["dloss"] if l2 == li)
        vals = [s["dloss"][(li, r)] for r in rs]
        series.append(
            {
                "x": rs,
                "y": [max(v["median"], 1e-6) for v in vals],
                "lo": [max(v["lo"], 1e-6) for v in vals],
                "hi": [max(v["hi"], 1e-6) for v in vals],
                "label": f"layer {li}",
            }
        )
    paths = []
    if series:
        paths.append(
            line_plot(
                out / "compressibility.png",
                series,
                title="TO-R2 / P6: loss increase from truncating one layer's heads",
                xlabel="kept rank r (every head of the layer, QK and OV)",
                ylabel="validation loss increase Δ_ℓ(r) (floored at 1e-6)",
                logx=True,
            )
        )
    ks = [k for k in SCHEDULES if k in s["loss"]]
    if ks:
        paths.append(
            line_plot(
                out / "allocation.png",
                [
                    {
                        "x": list(range(len(ks))),
                        "y": [s["loss"][k]["median"] for k in ks],
                        "lo": [s["loss"][k]["lo"] for k in ks],
                        "hi": [s["loss"][k]["hi"] for k in ks],
                        "label": "validation loss (0 uniform, 1 front, 2 back)",
                    }
                ],
                title="TO-R2 / P7: allocation at equal Σ H·d",
                xlabel="schedule",
                ylabel="validation cross-entropy",
                logy=False,
            )
        )
    return paths


#: the models of the quick and decisive grids, and the data they are read on
_QUICK_MODELS = {
    "schedule": list(SCHEDULES),
    "T": [32],
    "width": [32],
    "heads": [2],
    "head_dim": [16],
    "layers": [4],
}
_QUICK_DATA = {"val_windows": [64], "corpus": ["pydoc"]}

register_experiment(
    Experiment(
        name="tradeoffs_layers",
        description="P6 + P7 on real text: char-level LMs with uniform, front- and back-loaded "
        "head dims at equal Σ H·d; per-layer SVD-truncation loss increase (criterion: "
        + CRITERION
        + ")",
        grids={
            "quick": {**_QUICK_MODELS, "steps": [250], "batch": [16], "lr": [0.003], **_QUICK_DATA},
            # the quick models at a held recipe (warm-up, cosine, held tail) and eight paired
            # seeds, so that P7's per-seed front - back can fall on one side of 0 in every seed
            "decisive": {**_QUICK_MODELS, **_QUICK_DATA, **held_recipe(0.003, 1500, batch=16)},
            "full": {
                "schedule": list(SCHEDULES),
                "T": [128],
                "width": [128],
                "heads": [4],
                "head_dim": [32],
                "layers": [4],
                "steps": [1500],
                "batch": [32],
                "lr": [0.0003],
                "val_windows": [256],
                "corpus": ["pydoc"],
            },
        },
        seeds={"quick": [0, 1], "full": [0, 1, 2], "decisive": list(range(8))},
        cell=train_cell,
        plot=train_plot,
        claims=("TO-R2",),
    )
)
