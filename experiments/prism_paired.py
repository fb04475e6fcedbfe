"""Paired training of head schedules (Prism, arXiv 2606.27449, digest §9; issue 12 item 3):
uniform, Prism, reversed (decreasing) and uniform-wide schedules of the shared model as a
character-level decoder LM at equal parameters, paired by seed.

One cell is one (schedule, seed): the validation cross-entropy after training and the per-layer
attention distance D_l (:func:`approxtheory.schedules.attention_distance`) on fixed validation
windows (drawn once from a generator of fixed seed :data:`WINDOW_SEED`, the same for every schedule
and seed). Pairing: for a seed, every schedule starts from **the same initial weights** and sees
**the same batch order**. Every parameter tensor has the same shape whatever the head split (only
the reshape ``(B, T, d) -> (B, T, h_l, d/h_l)`` differs), so ``TrainConfig(seed=s, init="default")``
draws bit-identical tensors for every schedule: the same matrices, grouped into different heads.
The batches come from a generator seeded with the same seed (:class:`TokenData`), so the windows of
step k are identical across schedules (:func:`batch_order` shows them).

Model (closest to the digest's that the shared model offers): pre-norm **LayerNorm** (the shared
model has no RMSNorm), RoPE on every head's full width (per-head frequencies), SwiGLU of hidden
int(8d/3) without biases, no attention biases, a linear embedding of one-hot characters and a
separate linear read-out (the shared model has **no tied embeddings**), init N(0, 0.02²) for every
matrix. AdamW (0.9, 0.95), weight decay 0.1, clip 1.0, warmup then cosine to 10 %.

Schedules at d, L = 4, h_base = 4: uniform (4,4,4,4), Prism (1,2,4,4) (digest §9: the paper's
early/baseline head-width ratio 4), reversed (4,4,2,1), uniform-wide (2,2,2,2). Quick: d = 32,
T = 32, batch 16, lr 1e-2, 3 seeds x 80 steps (12 cells, 27 s on one core measured with
OMP_NUM_THREADS=1, the torch import included); full: d = 64, T = 64, batch 32, lr 3e-3, 8 seeds
x 1200 steps (32 cells, estimated 45-60 min on one core from the digest's 0.045 s/step on two
threads). Default corpus: CPython's ``pydoc_data.topics`` (the same as the other LM experiments);
``--corpus PATH`` a user's UTF-8 text file. :func:`paired_stats` and :func:`seeds_needed` are the
paired statistics and the
power statement the checks PR-E1/PR-E2 use.
"""

from __future__ import annotations

import math
from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment

SCHEDULES = {
    "uniform": (4, 4, 4, 4),
    "prism": (1, 2, 4, 4),
    "reversed": (4, 4, 2, 1),
    "wide": (2, 2, 2, 2),
}
H_BASE = 4
WINDOW_SEED = 20260625  # the fixed validation windows of D_l (same for every schedule and seed)
D_WINDOWS = 16
#: the paper's loss effect, relative: "a few tenths of a percent of the loss" (digest §6);
#: 0.3 % of the uniform model's validation loss
PAPER_REL_EFFECT = 0.003
#: the paper's early-layer distance effect, as a fraction of the window: about -100 tokens at
#: T = 1024 (digest §7, read from axis ranges)
PAPER_D_FRACTION = 100 / 1024
Z_POWER = 2.8  # z_{0.975} + z_{0.80} (two-sided 5 %, 80 % power; digest §9)


# ------------------------------------------------------------------------------- statistics
def paired_stats(diffs) -> dict:
    """Mean, sample s.d., 95 % t-interval and sign counts of paired differences."""
    from scipy import stats

    d = [float(x) for x in diffs]
    n = len(d)
    mean = sum(d) / n if n else float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else float("nan")
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n) if n > 1 else float("nan")
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "lo": mean - half,
        "hi": mean + half,
        "neg": sum(x < 0 for x in d),
        "pos": sum(x > 0 for x in d),
    }


def seeds_needed(sd: float, effect: float) -> int:
    """Paired seeds that resolve ``effect`` with seed s.d. ``sd`` of the differences:
    n = ceil((2.8 sd / effect)²) (80 % power, two-sided 5 %; digest §9), at least 2."""
    if not (sd >= 0 and abs(effect) > 0) or math.isnan(sd):
        return 2
    return max(2, math.ceil((Z_POWER * sd / abs(effect)) ** 2))


def paired_verdict(diffs, effect: float, predicted_sign: int = -1) -> dict:
    """The verdict of a paired comparison against the paper's ``effect`` (its magnitude) with
    the paper's sign ``predicted_sign``: the 95 % interval excludes 0 on the predicted side ->
    consistent-empirical; on the other side -> inconsistent; includes 0 -> not-checkable when
    fewer seeds were run than :func:`seeds_needed` (underpowered: no detectable effect at this
    scale), inconsistent otherwise (powered to see the paper's effect, and it is absent)."""
    s = paired_stats(diffs)
    need = seeds_needed(s["sd"], effect)
    if s["lo"] > 0 or s["hi"] < 0:
        side = 1 if s["lo"] > 0 else -1
        v = "consistent-empirical" if side == predicted_sign else "inconsistent"
    else:
        v = "not-checkable" if s["n"] < need else "inconsistent"
    return {**s, "verdict": v, "effect": abs(effect), "needed": need}


# ------------------------------------------------------------------------------- the cell
def model_config(heads, d: int, V: int, T: int):
    from approxtheory.model import ModelConfig
    from approxtheory.schedules import custom

    s = custom(heads, d, H_BASE, rules=("divisibility",))
    f = int(8 * d / 3)
    return ModelConfig(
        d_in=V,
        width=d,
        layers=s.layer_specs(ffn_hidden=(f,)),
        d_out=V,
        seq_len=T,
        readout="tokens",
        causal=True,
        rope="full",
        layernorm=True,
        ffn_kind="swiglu",
        ffn_bias=False,
        bias=False,
        embed_bias=False,
        head_bias=False,
        dtype="float32",
    )


_CORPUS: dict = {}  # the last corpus read (a path is re-read when another is asked for)


def token_data(cfg: dict):
    """(TokenData, vocab) of the cell's corpus: first 90 % train, the rest validation."""
    import numpy as np
    import torch

    from approxtheory.train import TokenData

    from .identifiability_training import check_corpus_length, load_corpus

    spec = cfg["corpus"]
    key = spec
    if spec not in ("pydoc", "", None) and Path(spec).is_file():
        st = Path(spec).stat()
        key = (spec, st.st_mtime_ns, st.st_size)
    if key not in _CORPUS:
        text = load_corpus(spec)
        cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        _, inv = np.unique(cp, return_inverse=True)  # ids in code-point order (sorted(set(text)))
        _CORPUS.clear()
        _CORPUS[key] = (torch.from_numpy(inv.astype(np.int64)), int(inv.max()) + 1)
    idx, V = _CORPUS[key]
    check_corpus_length(len(idx), cfg["T"])
    n_train = int(0.9 * len(idx))
    data = TokenData(
        tokens=idx[:n_train], vocab=V, seq_len=cfg["T"], val_tokens=idx[n_train:], val_windows=64
    )
    return data, V


def train_config(cfg: dict):
    from approxtheory.train import TrainConfig

    return TrainConfig(
        steps=cfg["steps"],
        batch=cfg["batch"],
        lr=cfg["lr"],
        optimizer="adamw",
        betas=(0.9, 0.95),
        weight_decay=0.1,
        clip_grad_norm=1.0,
        schedule="cosine",
        warmup_steps=max(1, cfg["steps"] // 20),
        min_lr_ratio=0.1,
        dtype="float32",
        seed=cfg["seed"],
        init_std=0.02,
        device=cfg.get("device", "cpu"),
    )


def batch_order(cfg: dict, n: int = 3) -> list:
    """The first ``n`` training batches (token ids) the cell would see (the same for every
    schedule of a seed)."""
    import torch

    from approxtheory.train import _TokenBatches

    data, _ = token_data(cfg)
    tc = train_config(cfg)
    b = _TokenBatches(data, tc, torch.device("cpu"), torch.float32)
    return [b()[1] for _ in range(n)]


def check_cell(cfg: dict) -> dict:
    """Validate a cell's config before it runs (typed errors) and estimate what it needs."""
    import os

    from approxtheory.errors import ConfigError
    from approxtheory.resources import FLOPS_PER_SECOND, require

    from .identifiability_training import _BYTES_PER_CHAR, _corpus_stats, check_corpus_length

    for k in ("d", "T", "batch", "steps"):
        v = cfg[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{k} must be a positive integer (got {v!r})")
    if cfg["schedule"] not in SCHEDULES:
        raise ConfigError(
            f"schedule must be one of {', '.join(SCHEDULES)} (got {cfg['schedule']!r})"
        )
    if cfg["d"] % H_BASE:
        raise ConfigError(f"d must be a multiple of h_base={H_BASE} (got {cfg['d']})")
    lr = cfg["lr"]
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < float("inf"):
        raise ConfigError(f"lr must be a positive number (got {lr!r})")
    spec = cfg["corpus"]
    if spec not in ("pydoc", "", None):
        size = os.path.getsize(spec) if Path(spec).is_file() else 0
        require(bytes=_BYTES_PER_CHAR * size, what=f"reading the corpus {spec}")
    n, V = _corpus_stats(spec)
    check_corpus_length(n, cfg["T"], "" if spec in ("pydoc", "", None) else spec)
    d, T, B = cfg["d"], cfg["T"], cfg["batch"]
    P = 4 * 12 * d * d + 2 * V * d
    flops = cfg["steps"] * (6 * B * T * P + 4 * 12 * B * T * T * d)
    b = 16 * P + 4 * B * T * V + _BYTES_PER_CHAR * n + 4 * 4 * B * T * (T + 8 * d)
    return {"bytes": b, "seconds": flops / FLOPS_PER_SECOND}


def paired_cell(cfg: dict) -> dict:
    import torch

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.model import Transformer
    from approxtheory.schedules import attention_distance
    from approxtheory.train import train

    data, V = token_data(cfg)
    heads = SCHEDULES[cfg["schedule"]]
    model = Transformer(model_config(heads, cfg["d"], V, cfg["T"]))
    res = train(model, data, train_config(cfg))
    if not res.ok:
        raise ApproxTheoryError(f"prism_paired cell {cfg}: {res.message}")
    g = torch.Generator().manual_seed(WINDOW_SEED)
    vt, T = data.val_tokens, cfg["T"]
    starts = torch.randint(0, len(vt) - T - 1, (D_WINDOWS,), generator=g)
    X = torch.eye(V)[vt[starts[:, None] + torch.arange(T)]]
    model.eval()
    D = attention_distance(model, X)
    out = {
        "val_loss": res.evals[-1]["val_loss"],
        "train_loss": res.losses[-1],
        "params": model.count_params(),
        "heads": ",".join(map(str, heads)),
        "vocab": V,
    }
    out.update({f"D_{i + 1}": float(v) for i, v in enumerate(D)})
    return out


# ------------------------------------------------------------------------------- analysis
COMPARISONS = (("prism", "uniform"), ("reversed", "uniform"), ("wide", "uniform"))


def paired_rows(rows, key: str = "val_loss") -> list[dict]:
    """One row per (comparison, seed): ``diff`` = key(A) - key(B) for the same seed."""
    by = {(r["schedule"], int(r["seed"])): r for r in rows}
    out = []
    for a, b in COMPARISONS:
        for (s, seed), r in sorted(by.items()):
            if s == a and (b, seed) in by:
                out.append(
                    {
                        "comparison": f"{a}-{b}",
                        "seed": seed,
                        "diff": float(r[key]) - float(by[(b, seed)][key]),
                    }
                )
    return out


def paired_plot(rows: list, out: Path) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    pr = paired_rows(rows)
    if not pr:
        return []
    for c in {r["comparison"] for r in pr}:
        st = paired_stats([r["diff"] for r in pr if r["comparison"] == c])
        for r in pr:
            if r["comparison"] == c:
                r.update(mean=st["mean"], lo=st["lo"], hi=st["hi"])
    p = write_csv(out / "paired.csv", pr)
    dl = []
    n_layers = len(SCHEDULES["uniform"])
    for a, b in COMPARISONS:
        for li in range(1, n_layers + 1):
            diffs = [
                r["diff"] for r in paired_rows(rows, f"D_{li}") if r["comparison"] == f"{a}-{b}"
            ]
            if diffs:
                st = paired_stats(diffs)
                dl.append(
                    {
                        "comparison": f"{a}-{b}",
                        "layer": li,
                        "delta_D": st["mean"],
                        "lo": st["lo"],
                        "hi": st["hi"],
                    }
                )
    pd = write_csv(out / "delta_D.csv", dl)
    return [
        plot_from_csv(
            pd,
            {
                "x": "layer",
                "y": ["delta_D", "lo", "hi"],
                "group": "comparison",
                "title": "ΔD_l = D_l(A) - D_l(uniform): mean and 95 % t-interval over seeds",
                "xlabel": "layer",
                "ylabel": "ΔD_l (tokens)",
                "logx": False,
                "logy": False,
            },
            out / "delta_D.png",
        ),
        plot_from_csv(
            p,
            {
                "x": "seed",
                "y": ["diff", "mean", "lo", "hi"],
                "group": "comparison",
                "title": "paired validation-loss differences (A - uniform) with 95 % t-interval",
                "xlabel": "seed",
                "ylabel": "Δ validation loss (nats)",
                "logx": False,
                "logy": False,
            },
            out / "paired_diff.png",
        ),
    ]


paired_cell.check = check_cell  # type: ignore[attr-defined]

register_experiment(
    Experiment(
        name="prism_paired",
        description="uniform / Prism / reversed / uniform-wide head schedules at equal "
        "parameters, paired by seed (same initial weights, same batches): validation loss "
        "and attention distance D_l (PR-E1, PR-E2)",
        grids={
            "quick": {
                "schedule": list(SCHEDULES),
                "d": [32],
                "T": [32],
                "batch": [16],
                "steps": [80],
                "lr": [1e-2],
                "corpus": ["pydoc"],
            },
            "full": {
                "schedule": list(SCHEDULES),
                "d": [64],
                "T": [64],
                "batch": [32],
                "steps": [1200],
                "lr": [3e-3],
                "corpus": ["pydoc"],
            },
        },
        seeds={"quick": [0, 1, 2], "full": list(range(8))},
        cell=paired_cell,
        plot=paired_plot,
        claims=("PR-E1", "PR-E2"),
    )
)
