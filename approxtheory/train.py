"""One training loop for every experiment.

Trains a model (normally the shared :class:`~approxtheory.model.Transformer`) on a task of
:mod:`approxtheory.tasks` (regression, mean squared error) or on a token stream (next-token
language modelling, cross-entropy over one-hot inputs).

Example::

    >>> from approxtheory.model import LayerSpec, ModelConfig, Transformer
    >>> from approxtheory.tasks import MaxPlusMin
    >>> from approxtheory.train import TrainConfig, train
    >>> model = Transformer(ModelConfig(d_in=1, width=8, layers=[LayerSpec(2, 4)]))
    >>> res = train(model, MaxPlusMin(T=4), TrainConfig(steps=20, batch=32, lr=1e-2, seed=0))
    >>> res.status, len(res.losses)
    ('completed', 20)

What it does, in order: validate the :class:`TrainConfig` (typed :class:`ConfigError` messages
naming what is allowed) and the device (:class:`DeviceUnavailableError` for ``cuda`` without
CUDA); draw the initial weights from the seed (``init="default"``: PyTorch's default
initialisation of every ``nn.Linear``, bit for bit what ``torch.manual_seed(seed)`` + building the
model gives, but from a local ``torch.Generator``); cast the model to the training dtype (float32
by default); then per step: draw a batch, forward, loss, backward, optional gradient clipping,
learning-rate schedule, optimizer step, per-step callbacks (diagnostics that return dicts), hooks
(interventions that may change the model or the optimizer). Evaluation runs on a float64 copy of
the model. Every random draw comes from generators derived from ``seed`` (never global state), so
the same seed gives the same losses bit for bit on CPU. A non-finite loss stops the run before its
update with ``status == "nonfinite"``; the model keeps the last finite weights.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .errors import ConfigError, DeviceUnavailableError
from .model.layers import set_factored
from .resources import array_bytes, forward_bytes, keep_freed_memory, require

__all__ = [
    "TrainConfig",
    "TaskData",
    "TokenData",
    "TrainResult",
    "Callback",
    "train",
    "lr_at",
    "resolve_device",
    "float64_copy",
    "default_init_",
    "InvariantFraction",
    "LogitNorms",
    "AttentionMaps",
    "OPTIMIZERS",
    "SCHEDULES",
]

OPTIMIZERS = ("adam", "adamw", "sgd")
SCHEDULES = ("constant", "cosine", "warmup")
ENGINES = ("fast", "reference")
DTYPES = ("float32", "float64")
INITS = ("default", "keep")
SEED_MAX = 2**32 - 1
DEVICE_INDEX_MAX = 127  # torch's device index is an int8: cuda:128 would wrap to cuda:-128
_ITEMSIZE = {"float32": 4, "float64": 8}


# ------------------------------------------------------------------------------------ config
def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _int(name, v, lo, hi=None, what=None):
    if not _is_int(v) or v < lo or (hi is not None and v > hi):
        rng = f"an integer >= {lo}" if hi is None else f"an integer in {lo}..{hi}"
        raise ConfigError(f"{name} must be {what or rng} (got {v!r})")


def _real(name, v, lo, hi=None, lo_open=True, hi_open=False, what=""):
    ok = _is_real(v) and math.isfinite(v) and (v > lo if lo_open else v >= lo)
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    if not ok:
        raise ConfigError(f"{name} must be {what} (got {v!r})")


def _choice(name, v, allowed):
    if v not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)} (got {v!r})")


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Everything the loop needs besides the model and the data; checked when built.

    ``steps`` optimizer steps (0: no training, the untrained model is evaluated) on batches of
    ``batch``; ``optimizer`` adam / adamw / sgd with ``lr``, ``weight_decay``, ``momentum`` (sgd
    only), ``betas`` (adam, adamw); ``schedule`` constant / warmup (linear over ``warmup_steps``,
    then constant) / cosine (optional linear warmup, then cosine decay to ``min_lr_ratio``·lr);
    ``clip_grad_norm`` (None: no clipping); ``dtype`` of training (float32 or float64; evaluation
    is float64 always); ``device`` cpu, cuda or cuda:N; ``seed`` 0..2^32-1 for every draw;
    ``init`` default (redraw the weights from the seed) or keep (train the weights as given);
    ``init_std`` (after the default draw, every parameter with two or more dimensions ~ N(0,
    init_std²)); ``eval_every`` (0: evaluate only after the last step); ``compile`` the forward
    with ``torch.compile``; ``progress`` bar (tqdm). ``decay_steps`` (cosine only; None: all
    steps): the cosine reaches ``min_lr_ratio``·lr at that step and holds there for the rest, so
    that the last steps show whether the loss has settled at the final rate (the
    training-adequacy gate's plateau test reads the last quarter). ``engine``: ``fast`` (the
    default) computes a one-query attention layer (the CLS read-out's last layer) in its
    factored form, the same function without the per-token keys and values, and keeps the
    allocator's freed memory for reuse (glibc: no page faults per step); ``reference`` trains
    the model exactly as its forward is written. Both are deterministic for a seed; they differ
    by float rounding only (:mod:`approxtheory.bench` ``train --gated`` measures both)."""

    steps: int = 1000
    batch: int = 64
    lr: float = 1e-3
    optimizer: str = "adam"
    weight_decay: float = 0.0
    momentum: float = 0.0
    betas: tuple = (0.9, 0.999)
    schedule: str = "constant"
    warmup_steps: int = 0
    min_lr_ratio: float = 0.0
    clip_grad_norm: float | None = None
    dtype: str = "float32"
    device: str = "cpu"
    seed: int = 0
    init: str = "default"
    init_std: float | None = None
    eval_every: int = 0
    compile: bool = False
    progress: bool = False
    decay_steps: int | None = None
    engine: str = "fast"

    def __post_init__(self):
        _int("steps", self.steps, 0)
        _int("batch", self.batch, 1)
        _real("lr", self.lr, 0, what="a finite number > 0")
        _choice("optimizer", self.optimizer, OPTIMIZERS)
        _real("weight_decay", self.weight_decay, 0, lo_open=False, what="a finite number >= 0")
        _real(
            "momentum", self.momentum, 0, 1, lo_open=False, hi_open=True, what="a number in [0, 1)"
        )
        if self.momentum and self.optimizer != "sgd":
            raise ConfigError(
                f"momentum applies to optimizer sgd only (got momentum="
                f"{self.momentum!r} with {self.optimizer}; adam and adamw take "
                f"betas)"
            )
        if (
            not isinstance(self.betas, (tuple, list))
            or len(self.betas) != 2
            or not all(_is_real(b) and 0 <= b < 1 for b in self.betas)
        ):
            raise ConfigError(f"betas must be two numbers in [0, 1) (got {self.betas!r})")
        _choice("schedule", self.schedule, SCHEDULES)
        _int("warmup_steps", self.warmup_steps, 0)
        if self.schedule == "warmup" and self.warmup_steps < 1:
            raise ConfigError("schedule warmup needs warmup_steps >= 1 (got 0)")
        if self.schedule == "constant" and self.warmup_steps:
            raise ConfigError(
                f"schedule constant takes no warmup_steps (got "
                f"{self.warmup_steps}); use schedule warmup or cosine"
            )
        _real("min_lr_ratio", self.min_lr_ratio, 0, 1, lo_open=False, what="a number in [0, 1]")
        if self.clip_grad_norm is not None:
            _real(
                "clip_grad_norm",
                self.clip_grad_norm,
                0,
                what="None (no clipping) or a finite number > 0",
            )
        _choice("dtype", self.dtype, DTYPES)
        if not isinstance(self.device, str) or not (
            self.device in ("cpu", "cuda")
            or (
                self.device.startswith("cuda:")
                and self.device[5:].isascii()
                and self.device[5:].isdigit()
                and int(self.device[5:]) <= DEVICE_INDEX_MAX
            )
        ):
            raise ConfigError(
                f"device must be cpu, cuda or cuda:N with N in 0..{DEVICE_INDEX_MAX} "
                f"(got {self.device!r})"
            )
        _int("seed", self.seed, 0, SEED_MAX)
        _choice("init", self.init, INITS)
        if self.init_std is not None:
            _real("init_std", self.init_std, 0, what="None or a finite number > 0")
            if self.init != "default":
                raise ConfigError(
                    f"init_std needs init default (got init {self.init!r}, "
                    f"which trains the weights as given)"
                )
        _int("eval_every", self.eval_every, 0, what="an integer >= 0 (0: only after the last step)")
        if self.decay_steps is not None:
            _int("decay_steps", self.decay_steps, 1, what="None or an integer >= 1")
            if self.schedule != "cosine":
                raise ConfigError(
                    f"decay_steps applies to schedule cosine only (got schedule {self.schedule!r})"
                )
            if not self.warmup_steps < self.decay_steps <= max(self.steps, 1):
                raise ConfigError(
                    f"decay_steps must be above warmup_steps ({self.warmup_steps}) and at most "
                    f"steps ({self.steps}) (got {self.decay_steps})"
                )
        _choice("engine", self.engine, ENGINES)
        for name in ("compile", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False (got {getattr(self, name)!r})")
        # the least a batch can take (one input value and one float64 target per sequence),
        # refused here already; train() checks the full estimate before allocating
        require(
            bytes=self.batch * (_ITEMSIZE[self.dtype] + 8),
            what=f"a training batch of batch={self.batch} sequences",
        )

    @property
    def torch_dtype(self):
        return torch.float64 if self.dtype == "float64" else torch.float32


def lr_at(cfg: TrainConfig, step: int) -> float:
    """The learning rate of step ``step`` (0-based, an integer >= 0) under ``cfg.schedule``."""
    if not isinstance(cfg, TrainConfig):
        raise ConfigError(f"cfg must be a TrainConfig (got {type(cfg).__name__})")
    _int("step", step, 0, what="an integer >= 0 (0-based step index)")
    w = cfg.warmup_steps
    if step < w:
        return cfg.lr * (step + 1) / w
    if cfg.schedule != "cosine":
        return cfg.lr
    end = cfg.steps if cfg.decay_steps is None else cfg.decay_steps
    p = min(1.0, (step - w) / max(1, end - w))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p)))


def resolve_device(device: str) -> torch.device:
    """``torch.device`` of ``device``; :class:`DeviceUnavailableError` when CUDA is asked for
    and torch sees none (or not that many)."""
    if device == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise DeviceUnavailableError(
            f"device {device} asked for, but torch sees no CUDA device (use device cpu)"
        )
    dev = torch.device(device)
    if dev.index is not None and dev.index >= torch.cuda.device_count():
        raise DeviceUnavailableError(
            f"device {device} asked for, but torch sees {torch.cuda.device_count()} CUDA device(s)"
        )
    return dev


# ------------------------------------------------------------------------------------ data
@dataclass(kw_only=True)
class TaskData:
    """Regression on a task: inputs from ``sampler(n, rng)`` (default ``task.sample``), targets
    ``task.target`` in float64 (on the inputs as rounded to the training dtype). ``train_size``:
    draw a fixed training set of that size once and sample batches from it with replacement
    (None: fresh inputs every step). ``val_inputs``: validation inputs (evaluated in float64:
    ``val_mse``, ``val_nmse``)."""

    task: Any
    sampler: Callable | None = None
    train_size: int | None = None
    val_inputs: Any = None

    def __post_init__(self):
        if not hasattr(self.task, "target"):
            raise ConfigError(f"task must be an approxtheory.tasks task (got {self.task!r})")
        if self.train_size is not None:
            _int(
                "train_size",
                self.train_size,
                1,
                what="None (fresh inputs every step) or an integer >= 1",
            )
        if self.sampler is not None and not callable(self.sampler):
            raise ConfigError("sampler must be a function (n, rng) -> array of inputs")
        if self.train_size is not None:
            T, d = _task_shape(self.task)
            # the float64 draw and its (at least float32) training copy are alive together
            require(
                bytes=array_bytes(self.train_size, T, d, itemsize=8 + 4),
                what=f"a training set of train_size={self.train_size} sequences (T={T}, d={d})",
            )
        if self.val_inputs is not None:
            self.val_inputs = _val_inputs(self.task, self.val_inputs)


@dataclass(kw_only=True)
class TokenData:
    """Next-token prediction on a stream of token ids in ``0..vocab-1``: windows of ``seq_len``
    tokens (one-hot inputs of width ``vocab``) predict the next token at every position.
    ``val_tokens``: a validation stream; ``val_windows`` windows of it, drawn once, give
    ``val_loss`` (cross-entropy, float64)."""

    tokens: Any
    vocab: int
    seq_len: int
    val_tokens: Any = None
    val_windows: int = 64

    def __post_init__(self):
        _int("vocab", self.vocab, 1)
        _int("seq_len", self.seq_len, 1)
        _int("val_windows", self.val_windows, 1)
        self.tokens = self._check("tokens", self.tokens)
        if self.val_tokens is not None:
            self.val_tokens = self._check("val_tokens", self.val_tokens)

    def _check(self, name, t):
        t = _token_ids(name, t)
        if len(t) < self.seq_len + 2:
            raise ConfigError(
                f"{name} has {len(t)} tokens; windows of seq_len={self.seq_len} "
                f"need at least {self.seq_len + 2}"
            )
        if len(t) and (int(t.min()) < 0 or int(t.max()) >= self.vocab):
            raise ConfigError(f"{name} must hold ids in 0..{self.vocab - 1}")
        return t.long()


def _task_shape(task) -> tuple[int, int]:
    T, d = getattr(task, "T", 1), getattr(task, "d", 1)
    return (int(T) if _is_int(T) else 1), (int(d) if _is_int(d) else 1)


def _val_inputs(task, X) -> np.ndarray:
    """Validation inputs as a float64 array of the task's shape, or a ConfigError."""
    if isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    try:
        a = np.asarray(X)
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(f"val_inputs must be a numeric array of inputs ({e})") from None
    if a.dtype.kind not in "biuf":
        raise ConfigError(f"val_inputs must be a real-valued array of inputs (got dtype {a.dtype})")
    a = a.astype(np.float64)
    if _is_int(getattr(task, "T", None)) and _is_int(getattr(task, "d", None)):
        T, d = _task_shape(task)
        if a.ndim != 3 or a.shape[1:] != (T, d) or not len(a):
            raise ConfigError(
                f"val_inputs must have shape (n, {T}, {d}) with n >= 1 (got {a.shape})"
            )
    elif a.ndim != 3 or not len(a):
        raise ConfigError(f"val_inputs must have shape (n, T, d) with n >= 1 (got {a.shape})")
    if not np.isfinite(a).all():
        raise ConfigError("val_inputs must be finite (got NaN or infinite values)")
    return a


_TORCH_IDS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_ID_DTYPES = "int8, int16, int32, int64, uint8, uint16, uint32, uint64 (values below 2^63)"


def _token_ids(name, t) -> torch.Tensor:
    """A 1-D int64 tensor of token ids from a torch or numpy integer array (or a list of
    ints); unsigned ids are converted where they fit in int64. Anything else: ConfigError."""
    if isinstance(t, torch.Tensor) and t.dtype in _TORCH_IDS:
        if t.dim() != 1:
            raise ConfigError(
                f"{name} must be a 1-D sequence of integer token ids (got shape {tuple(t.shape)})"
            )
        return t
    if isinstance(t, torch.Tensor):
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
            raise ConfigError(
                f"{name} must be a 1-D sequence of integer token ids (allowed dtypes: "
                f"{_ID_DTYPES}; got {t.dtype})"
            )
        t = t.detach().cpu().numpy()  # torch's unsigned 16-64 bit: through numpy
    try:
        a = np.asarray(t)
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(f"{name} must be a 1-D sequence of integer token ids ({e})") from None
    if a.dtype.kind not in "iu":
        raise ConfigError(
            f"{name} must be a 1-D sequence of integer token ids (allowed dtypes: "
            f"{_ID_DTYPES}; got {a.dtype})"
        )
    if a.ndim != 1:
        raise ConfigError(
            f"{name} must be a 1-D sequence of integer token ids (got shape {a.shape})"
        )
    if a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise ConfigError(
            f"{name} holds a uint64 id above 2^63 - 1 (got {int(a.max())}); ids must be "
            f"below the vocabulary size"
        )
    return torch.from_numpy(a.astype(np.int64))


# ------------------------------------------------------------------------------------ result
@dataclass
class TrainResult:
    """``status`` is ``completed`` or ``nonfinite`` (``message`` says where); ``losses[s]`` the
    training loss of step s (before its update); ``evals`` rows ``{"step": s, metric: value}``
    after s steps; ``records`` the callbacks' rows ``{"step": s, "callback": name, ...}``;
    ``seconds`` the whole call, ``train_seconds`` the steps only (no evaluation),
    ``steps_per_s`` = steps_done / train_seconds."""

    model: nn.Module
    config: TrainConfig
    status: str
    message: str
    steps_done: int
    losses: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    records: list = field(default_factory=list)
    seconds: float = 0.0
    train_seconds: float = 0.0
    steps_per_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def final_loss(self) -> float:
        return self.losses[-1] if self.losses else float("nan")

    def loss_tail(self) -> dict:
        """``{"loss_q3": ..., "loss_q4": ...}``: the mean training loss over the third and the
        last quarter of the steps done (NaN when fewer than 4 steps ran): the columns the
        training-adequacy gate's plateau test reads (``proofs_check/_gate.py``)."""
        n = len(self.losses)
        if n < 4:
            return {"loss_q3": float("nan"), "loss_q4": float("nan")}
        q = n // 4
        third, last = self.losses[n - 2 * q : n - q], self.losses[n - q :]
        return {
            "loss_q3": float(np.mean(np.asarray(third, dtype=np.float64))),
            "loss_q4": float(np.mean(np.asarray(last, dtype=np.float64))),
        }

    def history(self) -> list[dict]:
        """One row per step that has anything: ``loss`` (of that step's batch), the
        evaluation after that many steps, the callbacks' values."""
        rows: dict[int, dict] = {}
        for s, v in enumerate(self.losses):
            rows.setdefault(s, {"step": s})["loss"] = v
        for e in self.evals:
            rows.setdefault(e["step"], {"step": e["step"]}).update(e)
        for r in self.records:
            rows.setdefault(r["step"], {"step": r["step"]}).update(
                {k: v for k, v in r.items() if k != "callback"}
            )
        return [rows[s] for s in sorted(rows)]


# ------------------------------------------------------------------------------------ callbacks
class Callback:
    """A per-step diagnostic. Any function ``fn(step, model, loss, batch) -> dict | None`` is one
    (called after every step); a subclass may set ``every`` (called after steps that are a
    multiple of it, and after the last step) and define ``before_step(step, model, batch)``
    (called before the forward of those steps, e.g. to snapshot weights). ``loss`` is the step's
    training loss (a float, before the update), ``batch`` the ``(inputs, targets)`` tensors; the
    returned dict is stored in ``TrainResult.records`` with the step and the callback's name."""

    every = 1
    name: str | None = None

    def before_step(self, step, model, batch):
        pass

    def __call__(self, step, model, loss, batch):  # pragma: no cover - abstract
        return None


def _heads_qk(model):
    """(layer, head, W_Q block, W_K block) of every head, float64 numpy copies."""
    out = []
    for li in range(len(model.layers)):
        for h in range(model.attention(li).h):
            w = model.head_weights(li, h)
            out.append((li, h, w.q.double().cpu().numpy(), w.k.double().cpu().numpy()))
    return out


class InvariantFraction(Callback):
    """Identifiability diagnostics of the optimizer's step (identification digest §5): ``rho``,
    the mean over heads of the fraction of the update (ΔW_Q, ΔW_K) in the directions of the
    GL(n) symmetry (the Sylvester projection), over heads that moved; ``beta``, the mean over
    heads of ||W_Q W_Qᵀ - W_K W_Kᵀ|| after the step."""

    name = "invariant_fraction"

    def __init__(self, every: int = 1):
        _int("every", every, 1)
        self.every = every
        self._before: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None = None

    def before_step(self, step, model, batch):
        self._before = {(li, h): (q, k) for li, h, q, k in _heads_qk(model)}

    def __call__(self, step, model, loss, batch):
        from .identifiability import imbalance, sylvester_projection

        rhos, betas = [], []
        assert self._before is not None  # train() calls before_step on the same steps
        for li, h, Wq, Wk in _heads_qk(model):
            Wq0, Wk0 = self._before[(li, h)]
            dq, dk = Wq - Wq0, Wk - Wk0
            if np.linalg.norm(dq) + np.linalg.norm(dk) > 0:
                rhos.append(sylvester_projection(Wq0, Wk0, dq, dk)[1])
            betas.append(np.linalg.norm(imbalance(Wq, Wk)))
        return {"rho": float(np.mean(rhos)) if rhos else 0.0, "beta": float(np.mean(betas))}


def _attention_logits(model, x):
    """Every layer's pre-softmax attention logits ``(B, h, T', T')`` on inputs ``x`` (through
    the model's own projection path, RoPE and KV groups included)."""
    logits = []
    with torch.no_grad():
        hs = model.hidden_states(x.to(next(model.parameters()).dtype))
        for li, h in enumerate(hs[:-1]):
            blk, attn = model.block(li), model.attention(li)
            q, k, _ = attn._qkv(blk.ln1(h), torch.arange(h.shape[1], device=h.device))
            logits.append((q @ k.transpose(-2, -1)) * attn.scale)
    return logits


def _probe_inputs(name, inputs) -> torch.Tensor:
    """Probe inputs ``(n, T, d)`` of a callback as a float64 tensor, or a ConfigError."""
    if isinstance(inputs, torch.Tensor):
        t = inputs.detach()
        if t.is_complex() or t.dtype == torch.bool:
            raise ConfigError(f"{name} must be real-valued (got dtype {t.dtype})")
        t = t.to(torch.float64)
    else:
        try:
            a = np.asarray(inputs)
        except (TypeError, ValueError, OverflowError) as e:
            raise ConfigError(f"{name} must be a numeric array (n, T, d) ({e})") from None
        if a.dtype.kind not in "iuf":
            raise ConfigError(f"{name} must be a real-valued array (n, T, d) (got {a.dtype})")
        t = torch.tensor(a.astype(np.float64))
    if t.dim() != 3 or not len(t):
        raise ConfigError(f"{name} must have shape (n, T, d) with n >= 1 (got {tuple(t.shape)})")
    return t


class LogitNorms(Callback):
    """Attention-logit magnitudes per layer on the step's batch (or on fixed ``inputs``):
    ``logit_max_{l}`` = max |q·k|·scale and ``logit_rms_{l}`` (tradeoffs digest P5: saturation)."""

    name = "logit_norms"

    def __init__(self, every: int = 1, inputs=None):
        _int("every", every, 1)
        self.every = every
        self.inputs = None if inputs is None else _probe_inputs("inputs", inputs)

    def __call__(self, step, model, loss, batch):
        x = batch[0] if self.inputs is None else self.inputs
        out = {}
        for li, lg in enumerate(_attention_logits(model, x)):
            out[f"logit_max_{li}"] = float(lg.abs().max())
            out[f"logit_rms_{li}"] = float(lg.pow(2).mean().sqrt())
        return out


class AttentionMaps(Callback):
    """Every layer's attention probabilities on fixed probe ``inputs`` (numpy arrays
    ``attention_{l}`` of shape (n, h, T', T'), from the model's manual attention path)."""

    name = "attention_maps"

    def __init__(self, inputs, every: int = 1):
        _int("every", every, 1)
        self.every, self.inputs = every, _probe_inputs("inputs", inputs)

    def __call__(self, step, model, loss, batch):
        p = next(model.parameters())
        with torch.no_grad():
            _, atts = model(self.inputs.to(device=p.device, dtype=p.dtype), return_attention=True)
        return {f"attention_{li}": a.detach().cpu().numpy() for li, a in enumerate(atts)}


# ------------------------------------------------------------------------------------ model
def default_init_(model: nn.Module, generator: torch.Generator, std: float | None = None):
    """Draw every ``nn.Linear`` of ``model`` as PyTorch's default initialisation does, in module
    order, from ``generator`` (bit for bit what ``torch.manual_seed(seed)`` then building the
    model gives, for models whose only random parameters are ``nn.Linear``); then, with ``std``,
    every parameter with two or more dimensions ~ N(0, std²) in ``model.parameters()`` order
    (drawn in float64 whatever the model's dtype)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):  # drawn in float32 on the CPU, then cast
                w = torch.empty(m.weight.shape)
                nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=generator)
                m.weight.copy_(w)
                if m.bias is not None:
                    fan_in = m.weight.shape[1]
                    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    b = torch.empty(m.bias.shape)
                    nn.init.uniform_(b, -bound, bound, generator=generator)
                    m.bias.copy_(b)
        if std is not None:
            for p in model.parameters():
                if p.dim() > 1:
                    w = torch.empty(p.shape, dtype=torch.float64)
                    nn.init.normal_(w, std=std, generator=generator)
                    p.copy_(w)
    return generator


def _set_dtype(model: nn.Module, dtype: torch.dtype) -> None:
    """Cast ``model`` to ``dtype``; a model with a ``cfg.dtype`` (the shared Transformer casts
    its inputs to it) gets a copy of its config with the new dtype, so that a config shared with
    other models is left alone."""
    model.to(dtype)
    cfg = getattr(model, "cfg", None)
    name = {torch.float64: "float64", torch.float32: "float32"}[dtype]
    if cfg is not None and getattr(cfg, "dtype", name) != name:
        new = copy.copy(cfg)
        new.dtype = name
        for m in model.modules():
            if getattr(m, "cfg", None) is cfg:
                m.cfg = new


def float64_copy(model: nn.Module) -> nn.Module:
    """A float64 copy of ``model`` on the same device (for evaluation); the model is untouched."""
    m = copy.deepcopy(model)
    _set_dtype(m, torch.float64)
    set_factored(m, False)
    return m.eval()


# ------------------------------------------------------------------------------------ loop
class _TaskBatches:
    def __init__(self, data: TaskData, cfg: TrainConfig, dev, dtype):
        self.task = data.task
        self.sampler = data.sampler or data.task.sample
        self.rng = np.random.default_rng(cfg.seed)
        self.B, self.dev, self.dtype = cfg.batch, dev, dtype
        self.X = self.y = None
        if data.train_size is not None:
            X = torch.tensor(self.sampler(data.train_size, self.rng), dtype=dtype)
            y = data.task.target(X.double()).to(dtype)
            self.X, self.y, self.n = X.to(dev), y.to(dev), data.train_size
        self.val = None
        if data.val_inputs is not None:
            Xv = torch.as_tensor(np.asarray(data.val_inputs), dtype=torch.float64)
            self.val = (Xv.to(dev), data.task.target(Xv).to(dev))

    def __call__(self):
        if self.X is not None and self.y is not None:  # both or neither
            idx = torch.from_numpy(self.rng.integers(0, self.n, self.B))
            if self.dev.type != "cpu":
                idx = idx.to(self.dev)
            return self.X[idx], self.y[idx]
        X = torch.tensor(self.sampler(self.B, self.rng), dtype=self.dtype)
        return X.to(self.dev), self.task.target(X.double()).to(self.dtype).to(self.dev)

    @staticmethod
    def loss(out, y):
        if out.dim() > y.dim():
            out = out[..., 0]
        return ((out - y) ** 2).mean()

    def evaluate(self, m64) -> dict:
        if self.val is None:
            return {}
        X, y = self.val
        with torch.no_grad():
            out = m64(X)
            if out.dim() > y.dim():
                out = out[..., 0]
            ok = torch.isfinite(y)
            err = ((out - y)[ok] ** 2).mean()
            var = y[ok].var()
        return {
            "val_mse": float(err),
            "val_nmse": float(err / var) if float(var) > 0 else float("nan"),
        }


class _TokenBatches:
    def __init__(self, data: TokenData, cfg: TrainConfig, dev, dtype):
        self.V, self.T, self.B, self.dev = data.vocab, data.seq_len, cfg.batch, dev
        self.tokens = data.tokens.to(dev)
        self.g = torch.Generator().manual_seed(cfg.seed)
        self.dtype = dtype
        self.ar = torch.arange(self.T, device=dev)
        self.val = None
        if data.val_tokens is not None:
            gv = torch.Generator().manual_seed(
                int(np.random.SeedSequence([cfg.seed, 1]).generate_state(1)[0])
            )
            vt = data.val_tokens.to(dev)
            starts = torch.randint(0, len(vt) - self.T - 1, (data.val_windows,), generator=gv)
            offs = starts.to(dev)[:, None] + self.ar
            self.val = (self._one_hot(vt[offs], torch.float64), vt[offs + 1])

    def __call__(self):
        starts = torch.randint(0, len(self.tokens) - self.T - 1, (self.B,), generator=self.g)
        offs = starts.to(self.dev)[:, None] + self.ar  # (B, T)
        return self._one_hot(self.tokens[offs], self.dtype), self.tokens[offs + 1]

    def _one_hot(self, idx: torch.Tensor, dtype) -> torch.Tensor:
        # the same exact 0/1 values as indexing an identity matrix, without its V x V bytes
        # (10 GB in float32 at a GPT-2 vocabulary)
        return torch.nn.functional.one_hot(idx, self.V).to(dtype)

    def loss(self, out, y):
        return F.cross_entropy(out.reshape(-1, self.V), y.reshape(-1))

    def evaluate(self, m64) -> dict:
        if self.val is None:
            return {}
        x, y = self.val
        with torch.no_grad():
            return {"val_loss": float(self.loss(m64(x), y))}


def _train_bytes(model: nn.Module, data, cfg: TrainConfig) -> int:
    """A lower bound of the memory ``train`` allocates besides the model: the gradients and
    the optimizer's state, the training set (``train_size``) or the token stream's one-hot
    batches, one batch and its forward pass (for the shared Transformer), and the validation
    set. Computed from sizes only (nothing is allocated)."""
    it = _ITEMSIZE[cfg.dtype]
    P = sum(p.numel() for p in model.parameters())
    states = 2 if cfg.optimizer in ("adam", "adamw") else (1 if cfg.momentum else 0)
    n = P * it * (1 + states)  # gradients + optimizer state
    B = cfg.batch
    mcfg = getattr(model, "cfg", None)
    fwd_cfg = None
    if mcfg is not None and all(hasattr(mcfg, a) for a in ("layers", "width", "d_in")):
        fwd_cfg = mcfg
    if isinstance(data, TokenData):
        V, T = data.vocab, data.seq_len
        n += array_bytes(B, T, V, itemsize=it) + array_bytes(2, B, T)  # one-hot, ids, targets
        if data.val_tokens is not None:
            n += array_bytes(data.val_windows, T, V) + array_bytes(2, data.val_windows, T)
    else:
        T, d = _task_shape(data.task)
        n += array_bytes(B, T, d, itemsize=it + 8) + array_bytes(B)  # X, X.double(), y
        if data.train_size is not None:
            n += array_bytes(data.train_size, T, d, itemsize=it + 8) + array_bytes(data.train_size)
        if data.val_inputs is not None:
            n += 2 * int(np.asarray(data.val_inputs).size) * 8
    if fwd_cfg is not None:
        try:
            fb = forward_bytes(fwd_cfg, B, T)
        except (TypeError, ValueError, AttributeError):
            fb = 0
        n += fb * it // (4 if getattr(fwd_cfg, "dtype", "float64") == "float32" else 8)
    return n


def _cb_name(cb) -> str:
    return getattr(cb, "name", None) or getattr(cb, "__name__", None) or type(cb).__name__


def _make_optimizer(model, cfg: TrainConfig):
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(
            params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay
        )
    cls = torch.optim.Adam if cfg.optimizer == "adam" else torch.optim.AdamW
    return cls(params, lr=cfg.lr, betas=tuple(cfg.betas), weight_decay=cfg.weight_decay)


def _train_inputs(model, data, config, callbacks, hooks, evaluate):
    """:func:`train`'s arguments checked: its config (the default when None) and its data (a
    bare task wrapped in a :class:`TaskData`)."""
    cfg = TrainConfig() if config is None else config
    if not isinstance(cfg, TrainConfig):
        raise ConfigError(f"config must be a TrainConfig (got {type(cfg).__name__})")
    if not isinstance(model, nn.Module):
        raise ConfigError(f"model must be a torch module (got {type(model).__name__})")
    if not isinstance(data, (TaskData, TokenData)):
        data = TaskData(task=data)
    for kind, fns in (("callbacks", callbacks), ("hooks", hooks)):
        if any(not callable(f) for f in fns):
            raise ConfigError(f"{kind} must be functions")
    if evaluate is not None and not callable(evaluate):
        raise ConfigError("evaluate must be a function model -> dict")
    return cfg, data


def _require_memory(model: nn.Module, data, cfg: TrainConfig) -> None:
    """Refuse before drawing or allocating anything when the run cannot fit."""
    require(
        bytes=_train_bytes(model, data, cfg),
        what=(
            f"training with batch={cfg.batch}"
            + (f", train_size={data.train_size}" if getattr(data, "train_size", None) else "")
            + f" ({cfg.optimizer}, {cfg.dtype})"
        ),
    )


def _timed_callbacks(callbacks: list) -> tuple[list, list]:
    """Per callback (cb, every, before_step, name), its ``every`` checked; and the (entry,
    before_step) pairs of those with a ``before_step``."""
    timed = [
        (cb, getattr(cb, "every", 1), getattr(cb, "before_step", None), _cb_name(cb))
        for cb in callbacks
    ]
    for cb, every, _, _ in timed:
        _int(f"{_cb_name(cb)}.every", every, 1)
    pre = [(t, t[2]) for t in timed if t[2] is not None]
    return timed, pre


def _prepare(model: nn.Module, data, cfg: TrainConfig, dev, dtype):
    """The model initialised (``init="default"``), cast and moved, in training mode; the
    batches it trains on."""
    if cfg.init == "default":
        model.to("cpu")
        default_init_(model, torch.Generator().manual_seed(cfg.seed), cfg.init_std)
    _set_dtype(model, dtype)
    model.to(dev)
    model.train()
    return (_TokenBatches if isinstance(data, TokenData) else _TaskBatches)(data, cfg, dev, dtype)


def _steps(cfg: TrainConfig, steps: int):
    """The step range, and its progress bar (None without ``cfg.progress``)."""
    it = range(steps)
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(it, desc="train", unit="step", leave=False, mininterval=0.5)
        it = bar
    return it, bar


# one function: the step loop, its evaluation timing (do_eval's closure) and its stop status
# share state across steps; split further they would pass eight values back and forth
def train(
    model: nn.Module,
    data,
    config: TrainConfig | None = None,
    *,
    callbacks: Sequence[Callable] = (),
    hooks: Sequence[Callable] = (),
    evaluate: Callable[[nn.Module], dict] | None = None,
) -> TrainResult:
    """Train ``model`` in place on ``data`` (a :class:`TaskData`, a task, or a
    :class:`TokenData`) under ``config`` (default :class:`TrainConfig()`).

    ``callbacks``: diagnostics ``fn(step, model, loss, batch) -> dict | None`` after each step
    (see :class:`Callback`); ``hooks``: interventions ``fn(step, model, optimizer)`` after the
    callbacks of each step (e.g. rebalancing, clearing the optimizer's moments); ``evaluate``:
    extra metrics ``fn(model_float64) -> dict`` at every evaluation. Returns a
    :class:`TrainResult`; the trained model is ``result.model`` (the same object, in the
    training dtype, on the device)."""
    t_start = time.perf_counter()
    cfg, data = _train_inputs(model, data, config, callbacks, hooks, evaluate)
    dev = resolve_device(cfg.device)
    dtype = cfg.torch_dtype
    _require_memory(model, data, cfg)

    batches = _prepare(model, data, cfg, dev, dtype)
    loss_fn = batches.loss
    opt = _make_optimizer(model, cfg)
    fwd = torch.compile(model) if cfg.compile else model
    factored = []
    if cfg.engine == "fast":
        keep_freed_memory()
        factored = set_factored(model, True)

    callbacks, hooks = list(callbacks), list(hooks)
    timed, pre = _timed_callbacks(callbacks)

    losses: list[float] = []
    evals: list[dict] = []
    records: list[dict] = []
    eval_seconds = 0.0

    def do_eval(step):
        nonlocal eval_seconds
        t0 = time.perf_counter()
        m64 = float64_copy(model)
        row = batches.evaluate(m64)
        if evaluate is not None:
            row.update(evaluate(m64) or {})
        if row:
            evals.append({"step": step, **row})
        eval_seconds += time.perf_counter() - t0

    steps, clip, sched = cfg.steps, cfg.clip_grad_norm, cfg.schedule != "constant"
    last = steps - 1
    status, message = "completed", f"{steps} steps"
    if cfg.eval_every:
        do_eval(0)
    it, bar = _steps(cfg, steps)
    t_loop = time.perf_counter()
    params = [p for g in opt.param_groups for p in g["params"]]
    for step in it:
        batch = batches()
        due = [t for t in timed if t[1] == 1 or step % t[1] == 0 or step == last] if timed else ()
        for t, before_step in pre:
            if t in due:
                before_step(step, model, batch)
        loss = loss_fn(fwd(batch[0]), batch[1])
        loss.backward()
        lv = loss.item()
        if not math.isfinite(lv):
            opt.zero_grad(set_to_none=True)
            status = "nonfinite"
            message = (
                f"the training loss was {lv} at step {step}; training stopped before "
                f"that step's update (the model holds the weights after {step} steps)"
            )
            break
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        if sched:
            lr = lr_at(cfg, step)
            for g in opt.param_groups:
                g["lr"] = lr
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(lv)
        for cb, _, _, name in due:
            r = cb(step, model, lv, batch)
            if r:
                records.append({"step": step, "callback": name, **r})
        for h in hooks:
            h(step, model, opt)
        if bar is not None and step % 50 == 0:
            bar.set_postfix(loss=f"{lv:.3g}", refresh=False)
        if cfg.eval_every and (step + 1) % cfg.eval_every == 0 and step != last:
            do_eval(step + 1)
    if bar is not None:
        bar.close()
    for m in factored:  # the trained model computes as its forward is written
        m.factored = False
    loop_s = time.perf_counter() - t_loop - eval_seconds
    done = len(losses)
    if not evals or evals[-1]["step"] != done:
        do_eval(done)
    total = time.perf_counter() - t_start
    return TrainResult(
        model=model,
        config=cfg,
        status=status,
        message=message,
        steps_done=done,
        losses=losses,
        evals=evals,
        records=records,
        seconds=total,
        train_seconds=loop_s,
        steps_per_s=done / loop_s if loop_s > 0 and done else 0.0,
    )
