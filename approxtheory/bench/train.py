"""Benchmark of the training loop (``approxtheory bench train [--json]``).

Training steps per second of :func:`approxtheory.train.train` on the shared
:class:`~approxtheory.model.Transformer` against a plain hand-written training loop of the same
network written nanoGPT-style (``nn.Linear`` q/k/v/o, ``F.scaled_dot_product_attention``, a GELU
MLP, pre-LayerNorm, Adam), on identical shapes and identically drawn batches (next-token
prediction on a random token stream, one-hot inputs), in the same process. The two are timed in
alternating rounds (ABBA order, so that drift of a shared machine hits both alike) after a warm-up;
the figures are the median of the per-round rates, and the ratio ours/plain is the median of the
per-pair ratios; the best round of each (the least disturbed by other processes) and their ratio
are reported too. ``torch.set_num_threads`` is set to ``threads`` for the run and restored after.
Goal: ratio >= 0.9 on CPU.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["PlainBlock", "PlainModel", "plain_train", "bench_train", "plain_names", "GOAL_RATIO"]

GOAL_RATIO = 0.9


class PlainBlock(nn.Module):
    def __init__(self, E, H, hidden):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = nn.LayerNorm(E), nn.LayerNorm(E)
        self.q, self.k, self.v = nn.Linear(E, E), nn.Linear(E, E), nn.Linear(E, E)
        self.o = nn.Linear(E, E)
        self.fc, self.proj = nn.Linear(E, hidden), nn.Linear(hidden, E)

    def forward(self, x):
        B, T, E = x.shape
        h = self.ln1(x)
        q = self.q(h).view(B, T, self.H, E // self.H).transpose(1, 2)
        k = self.k(h).view(B, T, self.H, E // self.H).transpose(1, 2)
        v = self.v(h).view(B, T, self.H, E // self.H).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(y.transpose(1, 2).reshape(B, T, E))
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))


class PlainModel(nn.Module):
    """The same network as the benchmark's Transformer config, written directly."""

    def __init__(self, V, E, H, T, layers, hidden):
        super().__init__()
        self.embed = nn.Linear(V, E)
        self.pos = nn.Parameter(torch.zeros(T, E))
        self.blocks = nn.ModuleList([PlainBlock(E, H, hidden) for _ in range(layers)])
        self.head = nn.Linear(E, V)

    def forward(self, x):
        h = self.embed(x) + self.pos
        for b in self.blocks:
            h = b(h)
        return self.head(h)


def plain_train(model, tokens, V, T, B, steps, lr, g):
    """The hand-written loop: draw windows, one-hot, forward, cross-entropy, Adam. Returns the
    seconds of the ``steps`` steps."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    eye = torch.eye(V)
    ar = torch.arange(T)
    t0 = time.perf_counter()
    for _ in range(steps):
        starts = torch.randint(0, len(tokens) - T - 1, (B,), generator=g)
        offs = starts[:, None] + ar
        x, y = eye[tokens[offs]], tokens[offs + 1]
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return time.perf_counter() - t0


def plain_names(name: str, model) -> str:
    """The plain model's name of a parameter ``name`` of the benchmark's Transformer ``model``
    (the same network). The encoder's and read-out's prefixes come from the model's surface."""

    def prefix(linear) -> str:
        return model.parameter_name(linear.weight).rsplit(".", 1)[0] + "."

    for a, b in (
        ("layers.", "blocks."),
        (".attn.", "."),
        (".ffn.mlp.0.", ".fc."),
        (".ffn.mlp.2.", ".proj."),
        (prefix(model.embedding_linear()), "embed."),
        (prefix(model.readout_linear()), "head."),
    ):
        name = name.replace(a, b)
    return name


def _shared(V, E, H, T, layers, hidden):
    from ..model import LayerSpec, ModelConfig, Transformer

    mc = ModelConfig(
        d_in=V,
        width=E,
        seq_len=T,
        positions="learned",
        readout="tokens",
        causal=True,
        layernorm=True,
        bias=True,
        ffn_kind="gelu",
        layers=[LayerSpec(H, E // H, ffn_hidden=(hidden,)) for _ in range(layers)],
        d_out=V,
        dtype="float32",
    )
    return Transformer(mc)


def _check_bench(sizes, threads: int, seed: int, width: int, heads: int) -> None:
    """ConfigError for a size (name, value, least allowed), thread count or seed that
    :func:`bench_train` does not take."""
    from ..errors import ConfigError

    for name, v, lo in sizes:
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise ConfigError(f"{name} must be an integer >= {lo} (got {v!r})")
    from .._cliargs import MAX_SEED, MAX_THREADS

    if threads > MAX_THREADS:
        raise ConfigError(f"threads must be an integer from 1 to {MAX_THREADS} (got {threads!r})")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(
            f"seed must be an integer from 0 to {MAX_SEED} (2^32-1, the range numpy and torch "
            f"seeding accept) (got {seed!r})"
        )
    if width % heads:
        raise ConfigError(f"heads must divide width (got width={width}, heads={heads})")


def _rounds(run_ours, run_plain, rounds: int, steps: int, progress) -> list[dict]:
    """Per round, the two loops' steps per second (in alternating order) and their ratio."""
    rows = []
    for r in range(rounds):
        order = (("ours", run_ours), ("plain", run_plain))
        if r % 2:
            order = order[::-1]
        row: dict[str, float] = {"round": r}
        for name, fn in order:
            row[f"{name}_steps_per_s"] = steps / fn(steps, r + 1)
        row["ratio"] = row["ours_steps_per_s"] / row["plain_steps_per_s"]
        rows.append(row)
        if progress:
            progress(row)
    return rows


def _summary(rows: list[dict], shapes: dict, steps: int, warmup: int, threads: int) -> dict:
    """The bench's result: the medians and bests of the rounds, the goal, the shapes."""
    ours_rate = statistics.median(r["ours_steps_per_s"] for r in rows)
    plain_rate = statistics.median(r["plain_steps_per_s"] for r in rows)
    ratio = statistics.median(r["ratio"] for r in rows)
    best_ours = max(r["ours_steps_per_s"] for r in rows)
    best_plain = max(r["plain_steps_per_s"] for r in rows)
    return {
        "ours_steps_per_s": ours_rate,
        "plain_steps_per_s": plain_rate,
        "ratio": ratio,
        "ratio_min": min(r["ratio"] for r in rows),
        "ratio_max": max(r["ratio"] for r in rows),
        "best_ours_steps_per_s": best_ours,
        "best_plain_steps_per_s": best_plain,
        "ratio_of_best": best_ours / best_plain,
        "goal_ratio": GOAL_RATIO,
        "meets_goal": ratio >= GOAL_RATIO,
        "rounds": rows,
        "shapes": shapes,
        "steps_per_round": steps,
        "warmup_steps": warmup,
        "threads": threads,
        "dtype": "float32",
        "device": "cpu",
        "torch": torch.__version__,
    }


def _runners(ours, plain, tokens, vocab: int, seq_len: int, batch: int, seed: int):
    """``(run_ours, run_plain)``: each ``run(n, r)`` trains its model ``n`` steps in round ``r``
    (learning rate 1e-3, seed ``seed + r``; ours keeps its weights after round 0) and returns
    the training seconds."""
    from ..train import TokenData, TrainConfig, train

    data = TokenData(tokens=tokens, vocab=vocab, seq_len=seq_len)
    lr = 1e-3

    def run_ours(n, r):
        res = train(
            ours,
            data,
            TrainConfig(
                steps=n, batch=batch, lr=lr, seed=seed + r, init="keep" if r else "default"
            ),
        )
        return res.train_seconds

    def run_plain(n, r):
        return plain_train(
            plain, tokens, vocab, seq_len, batch, n, lr, torch.Generator().manual_seed(seed + r)
        )

    return run_ours, run_plain


def bench_train(
    vocab: int = 64,
    width: int = 64,
    heads: int = 4,
    seq_len: int = 64,
    layers: int = 2,
    batch: int = 16,
    steps: int = 40,
    rounds: int = 6,
    warmup: int = 10,
    threads: int = 1,
    seed: int = 0,
    progress=None,
) -> dict:
    """Steps per second of our loop and of the plain loop (float32, CPU), same shapes, same
    batch; see the module docstring for the protocol."""
    _check_bench(
        (
            ("vocab", vocab, 2),
            ("width", width, 1),
            ("heads", heads, 1),
            ("seq_len", seq_len, 1),
            ("layers", layers, 1),
            ("batch", batch, 1),
            ("steps", steps, 1),
            ("rounds", rounds, 1),
            ("warmup", warmup, 0),
            ("threads", threads, 1),
        ),
        threads,
        seed,
        width,
        heads,
    )
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, vocab, (20_000,), generator=g)
        hidden = 4 * width
        ours = _shared(vocab, width, heads, seq_len, layers, hidden)
        plain = PlainModel(vocab, width, heads, seq_len, layers, hidden)
        n_ours = sum(p.numel() for p in ours.parameters())
        n_plain = sum(p.numel() for p in plain.parameters())
        run_ours, run_plain = _runners(ours, plain, tokens, vocab, seq_len, batch, seed)
        if warmup:
            run_ours(warmup, 0)
            run_plain(warmup, 0)
        rows = _rounds(run_ours, run_plain, rounds, steps, progress)
        shapes = {
            "vocab": vocab,
            "width": width,
            "heads": heads,
            "seq_len": seq_len,
            "layers": layers,
            "ffn_hidden": hidden,
            "batch": batch,
            "params_ours": n_ours,
            "params_plain": n_plain,
        }
        return _summary(rows, shapes, steps, warmup, threads)
    finally:
        torch.set_num_threads(old_threads)
