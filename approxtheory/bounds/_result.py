"""The bracket's result record and its lower side (the largest error evaluated), shared by the
branch-and-bound (:mod:`.bracket`) and the enumeration of finite domains (:mod:`.finite`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..measure import output_as_target
from .targets import _target_rows


@dataclass
class BracketResult:
    """``lower <= sup_X |model(X) - target(X)|_∞ <= upper`` over the box (upper None: no bound,
    see ``reason``). ``lower`` is the largest error at an evaluated input (``witness``)."""

    upper: float | None
    lower: float | None
    witness: np.ndarray | None = None
    boxes: int = 0  # boxes whose bound was computed
    splits: int = 0
    open_boxes: int = 0  # boxes left unresolved when the search stopped
    seconds: float = 0.0
    reason: str | None = None  # why upper is None (unsupported, or no finite bound)
    method: str = ""  # "coupled" (model minus target jointly) or "affine"
    converged: bool = False  # upper <= (1 + tol) lower (or <= atol)
    stop: str = ""  # why the search stopped
    extra: dict = field(default_factory=dict)
    #: False only when the wall-clock safety net stopped the search ("exhausted-by-time"): the
    #: bound is still sound, but another machine may stop elsewhere
    reproducible: bool = True
    #: the model gave NaN/inf (weights, or an evaluated output): upper is +inf, never finite
    unsound_input: bool = False

    @property
    def ratio(self) -> float | None:
        if self.upper is None or not self.lower:
            return None
        return self.upper / self.lower

    def to_dict(self) -> dict:
        return {
            "upper": self.upper,
            "lower": self.lower,
            "ratio": self.ratio,
            "witness": None if self.witness is None else self.witness.tolist(),
            "boxes": self.boxes,
            "splits": self.splits,
            "open_boxes": self.open_boxes,
            "seconds": self.seconds,
            "reason": self.reason,
            "method": self.method,
            "converged": self.converged,
            "stop": self.stop,
            "reproducible": self.reproducible,
            "unsound_input": self.unsound_input,
        }


def _roundoff_eps(model) -> float:
    """The machine epsilon of the model's evaluation dtype (float64 unless it is float32)."""
    dt = getattr(getattr(model, "cfg", None), "dtype", "float64")
    return float(np.finfo(dt if dt in ("float32", "float64") else "float64").eps)


def _err(model, task, X: torch.Tensor) -> torch.Tensor:
    return _err_from(model(X), task.target(X), task)


def _err_from(out: torch.Tensor, y: torch.Tensor, task) -> torch.Tensor:
    """ℓ∞ error per input of the model's outputs ``out`` against the targets ``y``."""
    out = output_as_target(out, y, per_token_target_only=True)
    # the outputs that have no target by the task's definition (a lag task's first rows, NaN
    # there) are not measured; any other NaN, of the output or the target, stays NaN (a failure)
    e = (out - y).abs()
    rows = _target_rows(task, out.shape[-1]) if out.dim() == 2 else None
    if rows is not None:
        e = torch.where(rows, e, torch.zeros_like(e))
    if e.dim() == 1:
        return e
    # a NaN in any output makes that input's error NaN (amax would skip nothing, but be explicit)
    bad = torch.isnan(e).flatten(1).any(-1)
    e = e.flatten(1).amax(-1)
    return torch.where(bad, torch.full_like(e, math.nan), e)


class _Lower:
    """Best evaluated error and its input. A NaN or infinite error (the model or the target
    failed at that input) is recorded in ``nonfinite`` with its input and makes ``value``
    +inf: it is never read as 0."""

    def __init__(self, model, task):
        self.model, self.task = model, task
        self.value, self.X = 0.0, None
        self.nonfinite = 0
        # on the unit sphere every evaluated input is first projected onto it (a box's centre
        # is not a point of the domain; its projection is)
        self.sphere = getattr(task, "domain", "box") == "sphere"

    def _proj(self, X):
        return X / X.norm(dim=-1, keepdim=True).clamp_min(1e-12) if self.sphere else X

    def _note(self, e, X):
        bad = ~torch.isfinite(e)
        if bool(bad.any()):
            if not self.nonfinite:
                self.X = X[int(bad.nonzero()[0, 0])].detach().clone()
            self.nonfinite += int(bad.sum())
            self.value = math.inf
            return torch.where(bad, torch.full_like(e, math.inf), e)
        return e

    def eval(self, X, e=None):
        """Evaluate the errors at X (or take ``e``, the errors already computed there)."""
        if e is None:
            X = self._proj(X)
            with torch.no_grad():
                e = _err(self.model, self.task, X)
        e = self._note(e, X)
        if self.nonfinite:
            return e
        i = int(e.argmax())
        if float(e[i]) > self.value:
            self.value, self.X = float(e[i]), X[i].clone()
        return e

    def ascend(self, X0, lo, hi, steps=40):
        """Projected Adam ascent of the error from X0 inside [lo, hi] (per start)."""
        X = X0.clone().requires_grad_(True)
        for scale in (0.01, 1e-4):
            w = (hi - lo).amax()
            opt = torch.optim.Adam([X], lr=float(scale * w) + 1e-12)
            for _ in range(steps // 2):
                opt.zero_grad()
                Xp = self._proj(X)
                e = _err(self.model, self.task, Xp)
                ed = self._note(e.detach(), Xp.detach())
                if self.nonfinite:
                    return
                i = int(ed.argmax())
                if float(ed[i]) > self.value:
                    self.value, self.X = float(ed[i]), Xp.detach()[i].clone()
                (-e.sum()).backward()
                if X.grad is None or not torch.isfinite(X.grad).all():
                    break
                opt.step()
                with torch.no_grad():
                    X.copy_(torch.maximum(torch.minimum(X, hi), lo))
        self.eval(X.detach())
        # the vertex the gradient points to (the maximiser where the error is linear in the
        # box, e.g. position-only attention; Adam's small steps may stop short of it)
        Xv = X.detach().clone().requires_grad_(True)
        e = _err(self.model, self.task, self._proj(Xv))
        if not bool(torch.isfinite(e).all()):
            self._note(e.detach(), Xv.detach())
            return
        e.sum().backward()
        if Xv.grad is not None and bool(torch.isfinite(Xv.grad).all()):
            self.eval(torch.where(Xv.grad > 0, hi, torch.where(Xv.grad < 0, lo, Xv.detach())))
