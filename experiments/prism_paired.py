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

Model: the digest's decoder LM (§3, §9) on the shared model: pre-norm **RMSNorm** and a final
RMSNorm, RoPE on every head's full width (per-head frequencies), SwiGLU without biases, no
attention biases, a linear embedding of one-hot characters whose matrix is also the read-out
(**tied embeddings**), init N(0, 0.02²) for every matrix. AdamW (0.9, 0.95), weight decay 0.1,
clip 1.0, linear warmup then cosine to 10 %.

Scales (grid parameter ``scale``; ``approxtheory experiment run prism_paired --scale NAME`` sets
it with the scale's d, T, lr, steps and batch, :data:`SCALES` with :data:`SCALE_PROVENANCE`):
``toy`` (the profiles' default) is d = 32/64, L = 4, h_base = 4, schedules uniform (4,4,4,4),
Prism (1,2,4,4) (digest §9: the paper's early/baseline head-width ratio 4), reversed (4,4,2,1),
uniform-wide (2,2,2,2); ``toy8`` the digest's L = 8 toy at the profile's sizes
(:data:`SCHEDULES_L8`: Prism (1,1,2,2,4,4,4,4), which obeys the paper's rules 4-5);
``small``/``medium``/``large`` are the paper's Table 1/4 models (124M, 354M, 757M parameters
with a 50257-token embedding) with uniform h_base, the Table 4 Prism schedule
(:func:`approxtheory.schedules.prism`), its reverse, and uniform h_base/2 as the wide control;
they are for GPUs (``--device cuda``) and are refused before allocating when their estimated
memory does not fit (the GPU's memory for ``--device cuda``, ``--max-memory`` otherwise).

Quick: d = 32, T = 32, batch 16, lr 1e-2, 3 seeds x 80 steps (12 cells); full: d = 64, T = 64,
batch 32, lr 3e-3, 8 seeds x 1200 steps (32 cells); ``--seeds N`` runs seeds 0..N-1 instead. Times
are in the README. Default corpus: CPython's ``pydoc_data.topics`` (the same as the other LM
experiments); ``--corpus PATH`` a user's UTF-8 text file. :func:`paired_stats` and
:func:`seeds_needed` are the paired statistics and the power statement the checks PR-E1/PR-E2 use.
"""

from __future__ import annotations

import math
from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment

#: the toy scale's schedules (d = 32 or 64, L = 4, h_base = 4; digest §9)
SCHEDULES = {
    "uniform": (4, 4, 4, 4),
    "prism": (1, 2, 4, 4),
    "reversed": (4, 4, 2, 1),
    "wide": (2, 2, 2, 2),
}
H_BASE = 4
#: the digest's L = 8 toy (§9: "d = 64, L = 8: uniform 4x8 vs (1,1,2,2,4,4,4,4)"), scale ``toy8``:
#: its Prism schedule obeys rules 4-5 (blocks of 2 layers, L/2 at h_base), which the L = 4 one
#: (1,2,4,4) cannot; reversed and uniform-wide as at L = 4. About 2x the L = 4 cost.
SCHEDULES_L8 = {
    "uniform": (4,) * 8,
    "prism": (1, 1, 2, 2, 4, 4, 4, 4),
    "reversed": (4, 4, 4, 4, 2, 2, 1, 1),
    "wide": (2,) * 8,
}
#: GPT-2 BPE, the paper's tokenizer (digest §5)
PAPER_VOCAB = 50257
#: the paper's models (Table 1/4) and training recipe (digest §3, §5); see SCALE_PROVENANCE.
#: ``batch`` is sequences per optimizer step (the paper: 256 / 256 / 512).
SCALES: dict[str, dict] = {
    "small": dict(
        d=768,
        L=12,
        h_base=12,
        ffn=2048,
        T=1024,
        lr=6e-4,
        steps=11_000,
        batch=16,
        reported_params=124_000_000,
        tokens=2_880_000_000,
        batch_tokens=2**18,
    ),
    "medium": dict(
        d=1024,
        L=24,
        h_base=16,
        ffn=2731,
        T=1024,
        lr=3e-4,
        steps=40_000,
        batch=16,
        reported_params=354_000_000,
        tokens=10_490_000_000,
        batch_tokens=2**18,
    ),
    "large": dict(
        d=1536,
        L=24,
        h_base=16,
        ffn=4096,
        T=1024,
        lr=2.5e-4,
        steps=40_000,
        batch=16,
        reported_params=757_000_000,
        tokens=20_970_000_000,
        batch_tokens=2**19,
    ),
}
TOY_SCALES = ("toy", "toy8")
SCALE_NAMES = (*TOY_SCALES, *SCALES)
SCALE_PROVENANCE = {
    "d, L, h_base, Prism schedule": "stated (Table 4)",
    "reported_params": "stated (Table 1: 124M, 354M, 757M)",
    "tokens": "stated (2.88B / 10.49B / 20.97B training tokens, digest §5)",
    "batch_tokens": "derived (digest §5: 2^18 / 2^18 / 2^19 tokens per step reproduce the "
    "token counts with the steps; the paper says 0.25M / 0.25M / 0.5M)",
    "T = 1024": "stated (digest §5)",
    "lr": "stated (peak 6e-4 / 3e-4 / 2.5e-4, digest §5)",
    "steps": "derived (digest §5: tokens / batch tokens = 11k / 40k / 40k)",
    "vocab 50257": "stated (GPT-2 BPE); this experiment's corpus is character-level, so only "
    "the corpus's characters occur and the other rows of the tied embedding are never input",
    "ffn": "derived (digest §3: int(8d/3) reproduces the sizes; 2731 = round(8d/3) for "
    "Medium, whose rounding the paper does not state; --set ffn=N changes it)",
    "tied embeddings, no biases": "derived (digest §3: the reported sizes need them)",
    "RMSNorm, pre-norm + final norm, init N(0, 0.02)": "not stated (digest's choice)",
    "warmup 2.5 %, cosine": "stated; final LR not stated (10 % of peak chosen)",
    "batch 16": "chosen: the paper's 0.25M / 0.5M-token batches (256 / 512 sequences) need "
    "gradient accumulation, which the shared loop has not, and its inputs are one-hot "
    "(B T V floats); with the paper's steps a run sees 1/16 (Large 1/32) of the paper's "
    "tokens; --set batch=N changes it",
    "precision": "float32 (the paper trains in bf16; the shared loop trains float32/float64)",
    "wide control = h_base/2 heads everywhere": "chosen here (the digest's 'all layers at 6 "
    "heads' example for Small; the toy's (2,2,2,2))",
}
#: warmup as a fraction of the steps: toy 1/20 (digest §9 'short linear warmup'), paper 2.5 %
WARMUP = {"toy": 0.05, "toy8": 0.05, "small": 0.025, "medium": 0.025, "large": 0.025}
#: an optimistic GPU rate (about an H100's dense bf16 peak), so that time estimates on cuda
#: stay lower bounds
GPU_FLOPS_PER_SECOND = 1e15
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
def schedules_for(scale: str = "toy") -> dict[str, tuple[int, ...]]:
    """The four schedules of a scale: uniform, Prism, reversed, uniform-wide."""
    if scale == "toy":
        return dict(SCHEDULES)
    if scale == "toy8":
        return dict(SCHEDULES_L8)
    from approxtheory import schedules

    sc = SCALES[scale]
    d, L, hb = sc["d"], sc["L"], sc["h_base"]
    p = schedules.prism(d, L, hb).heads
    return {"uniform": (hb,) * L, "prism": p, "reversed": p[::-1], "wide": (hb // 2,) * L}


def ffn_width(d: int, scale: str = "toy", ffn: int = 0) -> int:
    """SwiGLU hidden width: ``ffn`` when > 0, else the scale's (toy: int(8d/3))."""
    if ffn:
        return ffn
    return SCALES[scale]["ffn"] if scale in SCALES else int(8 * d / 3)


def model_config(heads, d: int, V: int, T: int, ffn: int | None = None):
    """The digest's decoder LM for ``heads`` at width ``d`` over ``V`` tokens: RMSNorm (pre-norm
    and final), RoPE, SwiGLU of hidden ``ffn`` (default int(8d/3)), tied embeddings, no
    biases."""
    from approxtheory.model import ModelConfig
    from approxtheory.schedules import custom

    s = custom(heads, d, heads[-1], rules=("divisibility",))
    f = int(8 * d / 3) if not ffn else ffn
    return ModelConfig.decoder_lm(V, d, s.layer_specs(ffn_hidden=(f,)), T)


def scale_model_config(scale: str, schedule: str = "uniform", vocab: int = PAPER_VOCAB):
    """The paper's model of ``scale`` (small, medium, large) with one of its schedules."""
    sc = SCALES[scale]
    return model_config(schedules_for(scale)[schedule], sc["d"], vocab, sc["T"], sc["ffn"])


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
    V = max(V, PAPER_VOCAB) if _scale(cfg) in SCALES else V
    data = TokenData(
        tokens=idx[:n_train],
        vocab=V,
        seq_len=cfg["T"],
        val_tokens=idx[n_train:],
        val_windows=_val_windows(cfg),
    )
    return data, V


def _scale(cfg: dict) -> str:
    return cfg.get("scale", "toy")


def _val_windows(cfg: dict) -> int:
    """Validation windows of val_loss: 64 (toy); 16 at the paper's scales (the loop evaluates
    one-hot windows in float64: 16 x 1024 x 50257 x 8 bytes = 6.6 GB per copy)."""
    return 64 if _scale(cfg) in TOY_SCALES else 16


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
        warmup_steps=max(1, int(cfg["steps"] * WARMUP[_scale(cfg)])),
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
    from approxtheory._validate import check_real, pos_int
    from approxtheory.errors import ConfigError
    from approxtheory.resources import FLOPS_PER_SECOND, require

    from .identifiability_training import _BYTES_PER_CHAR, corpus_checked

    scale = _scale(cfg)
    if scale not in SCALE_NAMES:
        raise ConfigError(f"scale must be one of {', '.join(SCALE_NAMES)} (got {scale!r})")
    for k in ("d", "T", "batch", "steps"):
        pos_int(k, cfg[k], numpy=False)
    ffn = cfg.get("ffn", 0)
    if not isinstance(ffn, int) or isinstance(ffn, bool) or ffn < 0:
        raise ConfigError(f"ffn must be 0 (the scale's width) or a positive integer (got {ffn!r})")
    if cfg["schedule"] not in SCHEDULES:
        raise ConfigError(
            f"schedule must be one of {', '.join(SCHEDULES)} (got {cfg['schedule']!r})"
        )
    if scale in SCALES:
        sc = SCALES[scale]
        if (cfg["d"], cfg["T"]) != (sc["d"], sc["T"]):
            raise ConfigError(
                f"scale {scale} is d={sc['d']}, T={sc['T']} (Table 4; got d={cfg['d']}, "
                f"T={cfg['T']}): use --scale {scale} without --set d/T, or scale toy"
            )
    elif cfg["d"] % H_BASE:
        raise ConfigError(f"d must be a multiple of h_base={H_BASE} (got {cfg['d']})")
    check_real("lr", cfg["lr"], 0, lo_open=True, must="a positive number", numpy=False)
    n, V = corpus_checked(cfg["corpus"], cfg["T"])
    if scale in SCALES:
        V = max(V, PAPER_VOCAB)
    est = estimate(cfg, V)
    corpus = _BYTES_PER_CHAR * n
    if str(cfg.get("device", "cpu")).startswith("cuda"):
        import torch

        if torch.cuda.is_available():  # else the runner refuses --device cuda (one line)
            require(
                bytes=est["bytes"],
                limit=torch.cuda.get_device_properties(0).total_memory,
                what=f"a prism_paired cell at scale {scale} (batch {cfg['batch']}) on the GPU",
            )
        # on the host: the corpus, and the weights while the loop draws them on the CPU
        return {
            "bytes": corpus + 12 * est["params"],
            "seconds": est["flops"] / GPU_FLOPS_PER_SECOND,
        }
    return {"bytes": corpus + est["bytes"], "seconds": est["flops"] / FLOPS_PER_SECOND}


_PARAMS: dict = {}  # parameter counts of the meta-built models, by configuration


def estimate(cfg: dict, V: int) -> dict:
    """Parameters (the model built on the meta device: nothing allocated), training FLOPs and a
    lower bound of a cell's peak memory (float32 training, float64 evaluation): weights,
    gradients and AdamW's moments (16 bytes a parameter), the float64 evaluation copy, the
    one-hot batch and the logits with their gradient, the per-token activations of every layer
    (9d + 4f floats), the int64 token indices the loop one-hot encodes a batch from
    (``F.one_hot``), and the evaluation windows (their int64 and float64 one-hot and the
    logits) or the D_l pass (every layer's attention maps), whichever is larger."""
    import torch

    from approxtheory.model import Transformer

    scale = _scale(cfg)
    heads = schedules_for(scale)[cfg["schedule"]]
    d, T, B = cfg["d"], cfg["T"], cfg["batch"]
    f = ffn_width(d, scale, cfg.get("ffn", 0))
    key = (heads, d, V, T, f)
    if key not in _PARAMS:
        with torch.device("meta"):
            _PARAMS[key] = Transformer(model_config(heads, d, V, T, f)).count_params()
    P = _PARAMS[key]
    L = len(heads)
    flops = cfg["steps"] * (6 * B * T * P + 6 * B * T * V * d + 3 * 4 * B * T * T * d * L)
    W = _val_windows(cfg)
    step = 4 * B * T * (3 * V + L * (9 * d + 4 * f))
    one_hot = 8 * B * T * V  # int64 before the cast to the batch's float32
    evals = max(3 * 8 * W * T * V, 4 * D_WINDOWS * (T * V + 2 * sum(heads) * T * T))
    return {"params": P, "flops": flops, "bytes": 24 * P + max(step + one_hot, evals)}


def paired_cell(cfg: dict) -> dict:
    import torch

    from approxtheory.errors import ApproxTheoryError
    from approxtheory.model import Transformer
    from approxtheory.schedules import attention_distance
    from approxtheory.train import train

    data, V = token_data(cfg)
    scale = _scale(cfg)
    heads = schedules_for(scale)[cfg["schedule"]]
    f = ffn_width(cfg["d"], scale, cfg.get("ffn", 0))
    model = Transformer(model_config(heads, cfg["d"], V, cfg["T"], f))
    res = train(model, data, train_config(cfg))
    if not res.ok:
        raise ApproxTheoryError(f"prism_paired cell {cfg}: {res.message}")
    g = torch.Generator().manual_seed(WINDOW_SEED)
    vt, T = data.val_tokens, cfg["T"]
    starts = torch.randint(0, len(vt) - T - 1, (D_WINDOWS,), generator=g)
    p = next(model.parameters())
    ids = vt[starts[:, None] + torch.arange(T)].to(p.device)
    X = torch.nn.functional.one_hot(ids, V).to(p.dtype)
    model.eval()
    D = attention_distance(model, X)
    out = {
        "val_loss": res.evals[-1]["val_loss"],
        "train_loss": res.losses[-1],
        "params": model.count_params(),
        "heads": ",".join(map(str, heads)),
        "L": len(heads),
        "h_base": SCALES[scale]["h_base"] if scale in SCALES else H_BASE,
        "ffn_width": f,
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
    n_layers = max(len(str(r["heads"]).split(",")) for r in rows)
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
                "ylabel": "Δ validation loss (nats)",
                "logx": False,
                "logy": False,
            },
            out / "paired_diff.png",
        ),
    ]


paired_cell.check = check_cell  # type: ignore[attr-defined]
#: ``--scale NAME`` presets of the CLI (grid overrides; --set on top of them)
paired_cell.scales = {  # type: ignore[attr-defined]
    "toy": {"scale": "toy"},  # the profile's own sizes
    "toy8": {"scale": "toy8"},  # the profile's sizes, the digest's L = 8 schedules
    **{
        name: {"scale": name, **{k: sc[k] for k in ("d", "T", "lr", "steps", "batch")}}
        for name, sc in SCALES.items()
    },
}

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
                "scale": ["toy"],
                "ffn": [0],
            },
            # the quick scale with 24 paired seeds: PR-E2's effect needs about 9 at the quick
            # run's spread, PR-E1's about 450 (it stays short of power, and says how short)
            "decisive": {
                "schedule": list(SCHEDULES),
                "d": [32],
                "T": [32],
                "batch": [16],
                "steps": [80],
                "lr": [1e-2],
                "corpus": ["pydoc"],
                "scale": ["toy"],
                "ffn": [0],
            },
            "full": {
                "schedule": list(SCHEDULES),
                "d": [64],
                "T": [64],
                "batch": [32],
                "steps": [1200],
                "lr": [3e-3],
                "corpus": ["pydoc"],
                "scale": ["toy"],
                "ffn": [0],
            },
        },
        seeds={"quick": [0, 1, 2], "full": list(range(8)), "decisive": list(range(24))},
        cell=paired_cell,
        # the default corpus is CPython's pydoc topics: another Python's text is another cell
        code=("pydoc_data.topics",),
        plot=paired_plot,
        claims=("PR-E1", "PR-E2"),
    )
)
