"""Training-time identifiability diagnostics (identification digest §5-6): a small character-level
model of the shared class trained with SGD, SGD + weight decay, AdamW, AdamW + periodic
rebalancing and the paper's control AdamW + periodic clearing of the optimizer state without
rebalancing (``adamw_clear``), plus an SGD learning-rate sweep (the paper's case 5, Fig. 4); per
logged step the invariant fraction ρ of the update, the imbalance β and its drift, the loss, and
per layer and head the per-step drift ||C_{t+1} - C_t||_F of C = W_Q W_Qᵀ - W_K W_Kᵀ (columns
``drift_l<layer>_h<head>``; their means over the logged steps are the cell's ``step_drift_*``).

Default corpus: CPython's ``pydoc_data.topics`` (English reference text present wherever Python
is), values joined in sorted-key order with blank lines; first 90 % train. ``--corpus PATH`` takes
a user's text file. The model has no biases and no RoPE, so the per-head imbalance
W_Q W_Qᵀ - W_K W_Kᵀ is exactly conserved by gradient flow (ID-L5.1)."""

from __future__ import annotations

from pathlib import Path

from approxtheory.experiment import Experiment, register_experiment


def load_corpus(spec: str) -> str:
    if spec in ("pydoc", "", None):
        from pydoc_data import topics

        return "\n\n".join(topics.topics[k] for k in sorted(topics.topics))
    p = Path(spec)
    if not p.is_file():
        from approxtheory.errors import ConfigError

        raise ConfigError(
            f"corpus file not found: {spec}"
            if not p.exists()
            else f"the corpus must be a text file (got {spec})"
        )
    data = p.read_bytes()
    from approxtheory.errors import ConfigError

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"the corpus must be a UTF-8 text file (got {spec}: byte {e.start} is not UTF-8)"
        ) from None
    if "\x00" in text:
        raise ConfigError(f"the corpus must be a text file (got {spec}: it holds NUL bytes)")
    return text


def min_corpus_chars(T: int) -> int:
    """The shortest corpus the cell can train on with sequence length T: the first 90 % (train)
    and the rest (validation) must each hold a window of T + 1 characters with room to move."""
    n = 10 * (T + 1)
    while not _corpus_long_enough(n, T):
        n += 1
    while n > 1 and _corpus_long_enough(n - 1, T):
        n -= 1
    return n


def _corpus_long_enough(n: int, T: int) -> bool:
    n_train = int(0.9 * n)
    return n_train - T - 1 >= 1 and n - T - 1 > n_train


def check_corpus_length(n: int, T: int, spec: str = "") -> None:
    if not _corpus_long_enough(n, T):
        from approxtheory.errors import ConfigError

        name = f"the corpus {spec}" if spec else "the corpus"
        raise ConfigError(
            f"{name} has {n} characters; with T={T} it needs at least "
            f"{min_corpus_chars(T)} (90 % for training, 10 % for validation, each "
            f"longer than T + 1 characters)"
        )


# one character of a corpus in the cell: the text (>= 1 byte), its index list (an 8-byte slot)
# and the index tensor (8 bytes), for ASCII text
_BYTES_PER_CHAR = 17


def _corpus_stats(spec: str) -> tuple[int, int]:
    """(characters, distinct characters) of the corpus, read after its size was checked."""
    import os

    key: str | tuple[str, int, int] = spec
    if spec not in ("pydoc", "", None) and Path(spec).is_file():
        st = os.stat(spec)
        key = (spec, st.st_mtime_ns, st.st_size)
    if key not in _STATS:
        text = load_corpus(spec)
        _STATS.clear()
        _STATS[key] = (len(text), len(set(text)))
    return _STATS[key]


_STATS: dict = {}


def corpus_checked(spec: str, T: int) -> tuple[int, int]:
    """(characters, distinct characters) of the corpus ``spec``, after its file's size was held
    to the memory limit (before reading) and its length to T (:func:`check_corpus_length`)."""
    import os

    from approxtheory.resources import require

    if spec not in ("pydoc", "", None):
        size = os.path.getsize(spec) if Path(spec).is_file() else 0
        require(bytes=_BYTES_PER_CHAR * size, what=f"reading the corpus {spec}")
    n, V = _corpus_stats(spec)
    check_corpus_length(n, T, "" if spec in ("pydoc", "", None) else spec)
    return n, V


def check_cell(cfg: dict) -> dict:
    """Validate a cell's config before running it (typed errors) and estimate what it needs:
    ``{"bytes": ..., "seconds": ...}`` (see :func:`approxtheory.experiment.check_cells`)."""
    from approxtheory._validate import check_real, pos_int
    from approxtheory.errors import ConfigError
    from approxtheory.resources import FLOPS_PER_SECOND, array_bytes, model_param_count

    for k in ("E", "H", "T", "batch", "steps", "log_every", "rebalance_every"):
        pos_int(k, cfg[k], numpy=False)
    if cfg["optimizer"] not in OPTIMIZERS:
        raise ConfigError(
            "optimizer must be sgd, sgd_wd, adamw or adamw_rebalance, or adamw_clear (the "
            f"paper's control: AdamW with its moments cleared, no rebalancing) "
            f"(got {cfg['optimizer']!r})"
        )
    check_real("lr_sgd", cfg["lr_sgd"], 0, lo_open=True, must="a positive number", numpy=False)
    if cfg["H"] > cfg["E"]:
        raise ConfigError(f"H must be <= E (got H={cfg['H']}, E={cfg['E']})")
    n, V = corpus_checked(cfg["corpus"], cfg["T"])
    T, E, H, B = cfg["T"], cfg["E"], cfg["H"], cfg["batch"]
    P = model_param_count(_model_config(V, T, E, H))
    # parameters, gradients and two optimizer moments; the one-hot batch; per layer the saved
    # activations (attention probabilities B·H·T², the stream and FFN B·T·4E) for the backward
    b = (
        array_bytes(4, P)
        + array_bytes(B, T, V)
        + _BYTES_PER_CHAR * n
        + 2 * (array_bytes(B, H, T, T) + array_bytes(B, T, 4 * E))
    )
    flops = cfg["steps"] * (6 * B * T * P + 2 * 12 * B * T * T * E)
    return {"bytes": b, "seconds": flops / FLOPS_PER_SECOND}


#: the cell's optimizers: the paper's cases 1-4 and its control (AdamW whose moments are cleared
#: every ``rebalance_every`` steps, as the rebalanced run's are, but with no rebalancing)
OPTIMIZERS = ("sgd", "sgd_wd", "adamw", "adamw_rebalance", "adamw_clear")


class HeadDrift:
    """Per layer and head, ||C_after - C_before||_F of C = W_Q W_Qᵀ - W_K W_Kᵀ across the
    optimizer's step (the digest's "drift", Fig. 4), float64; a callback of ``train``."""

    name = "head_drift"

    def __init__(self, every: int = 1):
        self.every = every
        self._before: dict = {}

    @staticmethod
    def _imbalances(model) -> dict:
        from approxtheory.identifiability import imbalance

        out = {}
        for li in range(len(model.layers)):
            for h in range(model.attention(li).h):
                w = model.head_weights(li, h)
                out[(li, h)] = imbalance(w.q.double().cpu().numpy(), w.k.double().cpu().numpy())
        return out

    def before_step(self, step, model, batch):
        self._before = self._imbalances(model)

    def __call__(self, step, model, loss, batch):
        import numpy as np

        return {
            f"drift_l{li}_h{h}": float(np.linalg.norm(C - self._before[(li, h)]))
            for (li, h), C in self._imbalances(model).items()
        }


def _model_config(V: int, T: int, E: int, H: int):
    """The cell's model: a two-layer causal character LM, learned positions, no biases,
    H heads of width E/H per layer, a 2E-wide FFN, float64."""
    from approxtheory.model import LayerSpec, ModelConfig

    return ModelConfig(
        d_in=V,
        width=E,
        seq_len=T,
        positions="learned",
        readout="tokens",
        causal=True,
        embed_bias=False,
        head_bias=False,
        ffn_bias=False,
        layers=[LayerSpec(H, E // H, ffn_hidden=(2 * E,)) for _ in range(2)],
        d_out=V,
        dtype="float64",
    )


def _hooks(cfg: dict) -> list:
    """The optimizer's hooks of the cell's ``optimizer``: ``adamw_clear`` drops the moments
    every ``rebalance_every`` steps (the paper's control), ``adamw_rebalance`` rebalances every
    block then drops the moments (as the paper and its code do)."""
    import torch

    from approxtheory.identifiability import rebalance_model

    opt_name = cfg["optimizer"]
    hooks = []
    if opt_name == "adamw_clear":  # the paper's control: the moments dropped, no rebalancing

        def clear(step, model, opt):
            if (step + 1) % cfg["rebalance_every"] == 0:
                opt.state.clear()

        hooks.append(clear)
    if opt_name == "adamw_rebalance":

        def rebalance(step, model, opt):
            if (step + 1) % cfg["rebalance_every"] == 0:
                with torch.no_grad():
                    for blk_i in range(len(model.layers)):
                        rebalance_model(model, blk_i)
                # the paper (and its code) also drop the optimizer's moments after rebalancing
                opt.state.clear()

        hooks.append(rebalance)
    return hooks


def _trace(res) -> list[dict[str, float]]:
    """The per-log-step trace of a training result: loss, ρ, β and its relative drift, and
    each head's drift."""
    from approxtheory.train import InvariantFraction

    trace: list[dict[str, float]] = []
    heads = {r["step"]: r for r in res.records if r["callback"] == HeadDrift.name}
    for r in res.records:
        if r["callback"] != InvariantFraction.name:
            continue
        C0 = trace[0]["beta"] if trace else r["beta"]
        drifts = {k: v for k, v in heads[r["step"]].items() if k.startswith("drift_")}
        trace.append(
            {
                "step": r["step"],
                "loss": res.losses[r["step"]],
                "rho": r["rho"],
                "beta": r["beta"],
                "beta_drift": abs(r["beta"] - C0) / max(C0, 1e-300),
                **drifts,
            }
        )
    return trace


def train_cell(cfg: dict) -> dict:
    import numpy as np
    import torch

    from approxtheory.model import Transformer
    from approxtheory.train import InvariantFraction, TokenData, TrainConfig, train

    text = load_corpus(cfg["corpus"])
    check_corpus_length(len(text), cfg["T"])
    chars = sorted(set(text))
    idx = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
    n_train = int(0.9 * len(idx))
    V, T, E, H = len(chars), cfg["T"], cfg["E"], cfg["H"]
    opt_name = cfg["optimizer"]
    if opt_name.startswith("sgd"):
        tc = dict(
            optimizer="sgd", lr=cfg["lr_sgd"], weight_decay=4e-4 if opt_name == "sgd_wd" else 0.0
        )
    else:
        tc = dict(optimizer="adamw", lr=1e-3, weight_decay=0.1)
    # float64 training (the imbalance is conserved by gradient flow: ID-L5.1); weights drawn
    # from the cell's seed (PyTorch's default, then N(0, 0.2²) for every matrix)
    config = TrainConfig(
        steps=cfg["steps"],
        batch=cfg["batch"],
        dtype="float64",
        seed=cfg["seed"],
        init_std=0.2,
        device=cfg.get("device", "cpu"),
        **tc,
    )
    data = TokenData(
        tokens=idx[:n_train], vocab=V, seq_len=T, val_tokens=idx[n_train:], val_windows=64
    )
    # diagnostics of the optimizer's step itself (callbacks run before the rebalancing hook)
    res = train(
        Transformer(_model_config(V, T, E, H)),
        data,
        config,
        hooks=_hooks(cfg),
        callbacks=[InvariantFraction(every=cfg["log_every"]), HeadDrift(every=cfg["log_every"])],
    )
    if not res.ok:
        from approxtheory.errors import ApproxTheoryError

        raise ApproxTheoryError(f"identifiability_training cell {cfg}: {res.message}")
    trace = _trace(res)
    rho_mean = float(np.mean([t["rho"] for t in trace[1:]])) if len(trace) > 1 else 0.0
    step_drift = {
        "step_" + k: float(np.mean([t[k] for t in trace]))
        for k in trace[0]
        if k.startswith("drift_")
    }
    return {
        "val_loss": res.evals[-1]["val_loss"],
        "mean_rho": rho_mean,
        "final_beta": trace[-1]["beta"],
        "rho_baseline": 1 / (2 * H),
        "vocab": V,
        **step_drift,
        "trace": trace,
    }


def train_plot(rows: list, out: Path, trace: list | None = None) -> list:
    from approxtheory.report import plot_from_csv, write_csv

    out.mkdir(parents=True, exist_ok=True)
    if not trace:
        return []
    # one line per optimizer: the sweep's cells (other SGD rates, fewer steps) are left out
    main = max(float(t.get("steps", 0)) for t in trace)
    trace = [
        t
        for t in trace
        if float(t.get("lr_sgd", BASE_LR_SGD)) == BASE_LR_SGD and float(t.get("steps", 0)) == main
    ]
    p = write_csv(out / "trace.csv", trace)
    paths = []
    for y, lab, logy in (
        ("rho", "ρ (invariant fraction of the update)", True),
        ("beta", "β = ||W_Q W_Qᵀ - W_K W_Kᵀ||", False),
        ("loss", "training loss", False),
    ):
        paths.append(
            plot_from_csv(
                p,
                {
                    "x": "step",
                    "y": [y],
                    "group": "optimizer",
                    "title": f"identifiability diagnostics: {y}",
                    "ylabel": lab,
                    "logx": False,
                    "logy": logy,
                },
                out / f"{y}.png",
            )
        )
    return paths


#: the SGD learning rates of the sweep (the paper's case 5: 0.5, 0.25, 0.125, 0.0625); 0.25 is
#: the other cells' SGD rate
LR_SWEEP = [0.5, 0.25, 0.125, 0.0625]
#: the SGD rate of the cells that compare optimizers (the paper's cases 1-2)
BASE_LR_SGD = 0.25


def _grids(**fixed) -> list:
    """Two sub-grids of one profile: every optimizer at SGD rate 0.25, and SGD at every rate of
    the sweep, for ``sweep_steps`` steps (default ``steps``; a shared cell appears once)."""
    base = {
        "E": [fixed["E"]],
        "H": [4],
        "T": [fixed["T"]],
        "batch": [fixed["batch"]],
        "steps": [fixed["steps"]],
        "log_every": [fixed["log_every"]],
        "rebalance_every": [fixed["rebalance_every"]],
        "corpus": ["pydoc"],
    }
    sweep = {**base, "steps": [fixed.get("sweep_steps", fixed["steps"])]}
    return [
        {"optimizer": list(OPTIMIZERS), **base, "lr_sgd": [BASE_LR_SGD]},
        {"optimizer": ["sgd"], **sweep, "lr_sgd": LR_SWEEP},
    ]


# validated and sized before a run (experiment.check_cells reads the function attribute)
train_cell.check = check_cell  # type: ignore[attr-defined]

register_experiment(
    Experiment(
        name="identifiability_training",
        description="ρ, imbalance drift and loss per step for SGD, SGD+wd, AdamW, "
        "AdamW+rebalancing and AdamW+cleared moments on a character-level model, and an SGD "
        "learning-rate sweep (ID-E5, ID-F4, ID-CLR)",
        grids={
            # the quick sweep trains 50 steps per rate (10 logged steps: the drift's trend with
            # lr, cheaply); the comparison of optimizers 150
            "quick": _grids(
                E=32, T=32, batch=16, steps=150, log_every=5, rebalance_every=50, sweep_steps=50
            ),
            "full": _grids(E=64, T=64, batch=32, steps=2000, log_every=10, rebalance_every=200),
        },
        seeds={"quick": [0], "full": [0]},
        cell=train_cell,
        plot=train_plot,
        claims=("ID-E5", "ID-F4", "ID-CLR"),
    )
)
