"""Paired training of the advice's candidates on a surrogate task (``advise --train``):
:func:`validate` an :class:`~approxtheory.advise.Allocation` -> a :class:`Validation`.

The claims behind the head-count floor are about the generalized D-retrieval task (head count
digest §5.1): a layer that extracts D items needs h >= D heads. The surrogate is that task's
model, not the user's: experiment ``headcount_phase_d4`` (:mod:`approxtheory.experiments.
headcount_trained`, cell ``retrieval_cell``: one attention layer, per-head width 8, a ReLU
encoder and a GELU read-out), trained through the experiment runner
(:func:`approxtheory.experiment.run_experiment`), so the project's one model class and one
training loop are used, cells already in the runner's cache or shipped with the repository
(:mod:`approxtheory.shipped`) are read instead of trained, and new cells are cached.

* Each candidate is represented by the head count of its extracting (first) layer, capped at
  D + 1 (the largest head count the experiment trains: past D the head-count theory predicts
  nothing more), on the task with D items, T = min(8, the user's T) tokens.
* ``quick`` is the experiment's quick recipe (Adam lr 1e-2, batch 128, 500 steps, hidden 16)
  with seeds 0-5 (about 1.5 s of one CPU thread per cell: 18 s for two surrogate head counts);
  ``full`` its decisive recipe (:data:`~approxtheory.experiments.headcount_trained.DECISIVE`:
  8000 steps, hidden 32, 20-80 s per cell) with seeds 0-7 (seeds 0 and 1 at T = 8 are shipped
  for 1 to 5 heads at D = 4).
* The candidates are paired by seed: the same seed gives the same training batches, the same
  validation set and the same initialisation procedure (:func:`approxtheory.train.train` draws
  every number from the seed). Per seed the advice is compared with each other candidate by
  ln(NMSE_advised / NMSE_other) of the final validation NMSE; the mean's two-sided
  :data:`LEVEL` Student t interval over the seeds decides: ``helped`` (entirely below 0),
  ``hurt`` (entirely above 0), else ``no detectable difference`` (``undecided`` with one seed
  or a non-finite NMSE). Two candidates with the same surrogate head count are the same cells:
  their difference is 0 by construction.

Language modelling and the k-th largest have no trainable surrogate here: :func:`check_train`
refuses them (ConfigError).

Example::

    >>> from approxtheory.advise import allocate
    >>> from approxtheory.advise_train import validated
    >>> a = validated(allocate(12, 768, 2, 1024, task="retrieval:D=4"), "quick")  # doctest: +SKIP
    >>> a.validation.comparison("uniform").outcome  # doctest: +SKIP
    'no detectable difference'
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .advise import Task, parse_task
from .errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .advise import Allocation

__all__ = [
    "TRAIN_MODES",
    "TRAIN_SEEDS",
    "EXPERIMENT",
    "SURROGATE_T",
    "MAX_D",
    "LEVEL",
    "MAX_SEEDS",
    "DEFAULT_OUT",
    "OUTCOMES",
    "Comparison",
    "Validation",
    "check_train",
    "check_seeds",
    "validate",
    "validated",
]

#: ``--train`` mode -> the profile of :data:`EXPERIMENT` it trains
TRAIN_MODES = {"quick": "quick", "full": "decisive"}
#: the seeds each mode trains by default
TRAIN_SEEDS = {"quick": tuple(range(6)), "full": tuple(range(8))}
#: the experiment whose cell is the surrogate (its D is overridden for D != 4)
EXPERIMENT = "headcount_phase_d4"
#: the surrogate's sequence length (at most; the user's T where smaller, at least 2)
SURROGATE_T = 8
#: the largest D the surrogate trains (the experiment's declared range)
MAX_D = 16
#: the confidence level of the interval
LEVEL = 0.95
#: the most seeds one validation trains
MAX_SEEDS = 32
#: where the runner caches the trained cells when no folder is given (``--out DIR``: DIR/train)
DEFAULT_OUT = Path("results") / "advise"
#: what a comparison can conclude
OUTCOMES = ("helped", "no detectable difference", "hurt", "undecided")


def check_train(task: str | Task | None, train: str | None) -> None:
    """ConfigError (one line naming what is allowed) unless ``train`` is None, or a mode of
    :data:`TRAIN_MODES` for a task with a trainable surrogate (retrieval of 1 to :data:`MAX_D`
    items)."""
    if train is None:
        return
    if train not in TRAIN_MODES:
        raise ConfigError(f"train must be one of {', '.join(TRAIN_MODES)} (got {train!r})")
    t = parse_task(task)
    if t.name != "retrieval":
        raise ConfigError(
            f"--train has no trainable surrogate for task {t.label()}: it trains the head-count "
            f"retrieval task only (--task retrieval:D=N, N from 1 to {MAX_D}); lm and kth are "
            "advised from theory alone (run without --train)"
        )
    if (t.arg or 0) > MAX_D:
        raise ConfigError(
            f"--train trains the retrieval surrogate for retrieval:D=N with N from 1 to {MAX_D} "
            f"(got D = {t.arg}); run without --train"
        )


def check_seeds(seeds: Sequence[int] | None, train: str) -> tuple[int, ...]:
    """The seeds to train: ``seeds`` (distinct integers from 0 to 2^32 - 1, at most
    :data:`MAX_SEEDS`) or the mode's default (:data:`TRAIN_SEEDS`)."""
    if seeds is None:
        return TRAIN_SEEDS[train]
    from ._validate import check_seed

    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence):
        raise ConfigError(f"seeds must be a list of integers (got {seeds!r})")
    if not 1 <= len(seeds) <= MAX_SEEDS:
        raise ConfigError(f"seeds must be 1 to {MAX_SEEDS} distinct integers (got {len(seeds)})")
    out = tuple(check_seed(s, name="each of the seeds") for s in seeds)
    if len(set(out)) != len(out):
        raise ConfigError(f"seeds must be 1 to {MAX_SEEDS} distinct integers (got {seeds!r})")
    return out


# ----------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Comparison:
    """The advice against one other candidate on the surrogate: the surrogate head counts
    (advised, other), the per-seed ln(NMSE_advised / NMSE_other), their mean, its interval and
    the outcome (one of :data:`OUTCOMES`)."""

    other: str
    heads: tuple[int, int]
    log_ratios: tuple[float, ...]
    mean: float | None
    low: float | None
    high: float | None
    outcome: str
    note: str = ""

    def line(self) -> str:
        n = len(self.log_ratios)
        what = f"advised vs {self.other} (surrogate heads {self.heads[0]} vs {self.heads[1]})"
        if self.mean is None:
            return f"{what}: {self.outcome} ({self.note})"
        if self.low is None or self.high is None:
            ival = "no interval"
        else:
            ival = f"{LEVEL:.0%} t interval [{self.low:+.3g}, {self.high:+.3g}]"
        tail = f" ({self.note})" if self.note else ""
        return (
            f"{what}: mean ln(NMSE advised / NMSE {self.other}) = {self.mean:+.3g}, {ival} over "
            f"{n} seed(s): {self.outcome}{tail}"
        )

    def to_dict(self) -> dict:
        return {
            "other": self.other,
            "surrogate_heads": list(self.heads),
            "log_ratios": list(self.log_ratios),
            "mean": self.mean,
            "interval": None if self.low is None else [self.low, self.high],
            "level": LEVEL,
            "outcome": self.outcome,
            "note": self.note,
        }


@dataclass(frozen=True)
class Validation:
    """The paired training of an allocation's candidates (see the module docstring): the mode,
    the surrogate's configuration and recipe, the seeds, every candidate's surrogate head count
    and per-seed validation NMSE, the comparisons, and where the cells came from."""

    mode: str
    experiment: str
    profile: str
    surrogate: Mapping[str, Any]
    recipe: str
    seeds: tuple[int, ...]
    heads: tuple[tuple[str, int, int], ...]  # (candidate, its layer-1 heads, surrogate heads)
    nmse: Mapping[int, tuple[float, ...]]  # surrogate heads -> NMSE per seed
    comparisons: tuple[Comparison, ...]
    cells: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def comparison(self, other: str) -> Comparison:
        for c in self.comparisons:
            if c.other == other:
                return c
        raise KeyError(other)

    def lines(self) -> list[str]:
        s = self.surrogate
        out = [
            f"paired training (--train {self.mode}; a surrogate, not your model): the head-count "
            f"retrieval task of experiment {self.experiment} (one attention layer, D = {s['D']} "
            f"items, T = {s['T']} tokens, head dim {s['head_dim']}, hidden {s['hidden']}; "
            f"{self.recipe}), each candidate's extracting (first) layer's heads capped at "
            f"D + 1 = {s['D'] + 1}; seeds {','.join(map(str, self.seeds))} (a seed gives both "
            "candidates the same batches, validation set and initialisation procedure)",
        ]
        for name, h, hs in self.heads:
            vals = ", ".join(f"{v:.3g}" for v in self.nmse[hs])
            out.append(f"  {name}: layer-1 heads {h} -> {hs} on the surrogate; NMSE {vals}")
        out += [f"  {c.line()}" for c in self.comparisons]
        c = self.cells
        out.append(
            f"  cells: {c.get('computed', 0)} trained here, {c.get('cached', 0)} read "
            f"({c.get('shipped', 0)} shipped), cache {c.get('out')}; {self.seconds:.1f} s"
        )
        if self.mode == "quick":
            out.append(
                "  quick is a screen (the quick recipe's models do not reach the training-adequacy "
                "gate); --train full trains the decisive recipe"
            )
        return out

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "experiment": self.experiment,
            "profile": self.profile,
            "surrogate": dict(self.surrogate),
            "recipe": self.recipe,
            "seeds": list(self.seeds),
            "candidates": [
                {
                    "name": n,
                    "layer1_heads": h,
                    "surrogate_heads": hs,
                    "val_nmse": list(self.nmse[hs]),
                }
                for n, h, hs in self.heads
            ],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "cells": dict(self.cells),
            "seconds": self.seconds,
        }


# ------------------------------------------------------------------------------- statistics
def _compare(other: str, heads: tuple[int, int], a: Sequence[float], b: Sequence[float]):
    """The comparison of per-seed NMSE ``a`` (advised) with ``b`` (other), seed by seed."""
    if heads[0] == heads[1]:
        zeros = tuple(0.0 for _ in a)
        note = "the same surrogate head count: the same cells, difference 0 by construction"
        return Comparison(other, heads, zeros, 0.0, 0.0, 0.0, "no detectable difference", note)
    if not all(math.isfinite(x) and x > 0 for x in (*a, *b)):
        note = "a cell's NMSE is not a finite positive number"
        return Comparison(other, heads, (), None, None, None, "undecided", note)
    d = tuple(math.log(x / y) for x, y in zip(a, b))
    n = len(d)
    mean = math.fsum(d) / n
    if n < 2:
        return Comparison(other, heads, d, mean, None, None, "undecided", "one seed: no interval")
    from scipy import stats

    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1))
    half = float(stats.t.ppf(0.5 + LEVEL / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    outcome = "helped" if high < 0 else "hurt" if low > 0 else "no detectable difference"
    return Comparison(other, heads, d, mean, low, high, outcome)


# ---------------------------------------------------------------------------------- running
@contextlib.contextmanager
def _seeds_of(exp, profile: str, seeds: Sequence[int]) -> Iterator[None]:
    """``exp`` runs ``seeds`` on ``profile`` and draws no plots for the duration (restored after;
    as ``experiment run --seeds N`` does): the experiment's plots are of its own grid."""
    old_seeds, old_plot = exp.seeds, exp.plot
    exp.seeds, exp.plot = {**old_seeds, profile: list(seeds)}, None
    try:
        yield
    finally:
        exp.seeds, exp.plot = old_seeds, old_plot


@contextlib.contextmanager
def _cache_dir(out: str | Path | None) -> Iterator[Path]:
    """The runner's output folder: ``out`` (default :data:`DEFAULT_OUT`), or a temporary one
    (cells not kept) when it cannot be created."""
    d = Path(DEFAULT_OUT if out is None else out)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        with tempfile.TemporaryDirectory(prefix="approxtheory-advise-") as t:
            yield Path(t)
        return
    yield d


def _recipe(grid: Mapping[str, list]) -> str:
    from .experiments.headcount_trained import BATCH, LR

    lr, batch, steps = grid.get("lr", [LR])[0], grid.get("batch", [BATCH])[0], grid["steps"][0]
    text = f"Adam lr {lr:g}, batch {batch}, {steps} steps, cosine"
    if grid.get("warmup"):
        text += (
            f" ({grid['warmup'][0]} warm-up, decay to {grid['min_lr'][0]:g} lr by step "
            f"{grid['decay'][0]}, then held)"
        )
    return text


def validate(
    allocation: Allocation,
    train: str = "quick",
    seeds: Sequence[int] | None = None,
    out: str | Path | None = None,
) -> Validation:
    """Train ``allocation``'s candidates paired on the surrogate of its task (``train``:
    ``quick`` or ``full``; ``seeds``: default :data:`TRAIN_SEEDS`; ``out``: the runner's cache
    folder, default :data:`DEFAULT_OUT`) and compare the advice with every other candidate
    (see the module docstring). ConfigError for a task without a surrogate."""
    task = parse_task(allocation.inputs["task"])
    check_train(task, train)
    seeds = check_seeds(seeds, train)
    import approxtheory.experiments  # noqa: F401  (registers the built-in experiments)

    from .experiment import get, grid_values, run_experiment
    from .report import read_csv

    t0 = time.perf_counter()
    D = int(task.arg or 0)
    exp, profile = get(EXPERIMENT), TRAIN_MODES[train]
    grid = grid_values(exp, profile)
    T = max(2, min(SURROGATE_T, int(allocation.inputs["T"])))
    surrogate = {"D": D, "T": T, "head_dim": grid["head_dim"][0], "hidden": grid["hidden"][0]}
    heads = tuple((c.name, c.heads[0], min(c.heads[0], D + 1)) for c in allocation.candidates)
    nmse: dict[int, tuple[float, ...]] = {}
    tally: dict[str, Any] = {"computed": 0, "cached": 0, "shipped": 0, "stale": 0}
    with _cache_dir(out) as d, _seeds_of(exp, profile, seeds):
        tally["out"] = str(d)
        for hs in sorted({hs for _, _, hs in heads}):
            r = run_experiment(
                EXPERIMENT,
                profile=profile,
                out=d,
                progress=False,
                overrides={"D": D, "heads": hs, "T": T},
            )
            for k in ("computed", "cached", "shipped", "stale"):
                tally[k] += int(r.get(k, 0))
            by_seed = {int(row["seed"]): float(row["val_nmse"]) for row in read_csv(r["csv"])}
            nmse[hs] = tuple(by_seed.get(s, math.nan) for s in seeds)
    adv = heads[0][2]  # the advice is the first candidate (allocate)
    comps = tuple(_compare(n, (adv, hs), nmse[adv], nmse[hs]) for n, _, hs in heads[1:])
    return Validation(
        train,
        EXPERIMENT,
        profile,
        surrogate,
        f"its {profile} recipe: {_recipe(grid)}",
        seeds,
        heads,
        nmse,
        comps,
        tally,
        round(time.perf_counter() - t0, 1),
    )


def validated(
    allocation: Allocation,
    train: str = "quick",
    seeds: Sequence[int] | None = None,
    out: str | Path | None = None,
) -> Allocation:
    """``allocation`` with :func:`validate`'s result in its ``validation`` field (its table and
    JSON then carry the paired result)."""
    from dataclasses import replace

    return replace(allocation, validation=validate(allocation, train, seeds, out))
