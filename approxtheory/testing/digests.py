"""The digests of models and tasks that key the cache of :class:`~approxtheory.testing.Measured`."""

from __future__ import annotations

import hashlib
import json

import numpy as np


# ------------------------------------------------------------------------------- digests
def _update_array(h, label: str, a) -> None:
    a = np.ascontiguousarray(a)
    h.update(f"{label}\0{a.dtype.str}\0{a.shape}\0".encode())
    h.update(a.tobytes())


def _update_value(h, label: str, v, depth: int = 0) -> None:
    """Hash a plain attribute value (numbers, strings, tuples of them, arrays, tensors)."""
    import torch

    if isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)
        _update_array(h, label, t.numpy())
    elif isinstance(v, np.ndarray):
        _update_array(h, label, v)
    elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
        h.update(f"{label}\0{type(v).__name__}\0{v!r}\0".encode())
    elif isinstance(v, (tuple, list)) and depth < 3:
        h.update(f"{label}\0{type(v).__name__}\0{len(v)}\0".encode())
        for i, item in enumerate(v):
            _update_value(h, f"{label}[{i}]", item, depth + 1)


def _probe(task) -> np.ndarray:
    """Fixed inputs of the task's shape (a local generator, seed 12345)."""
    return np.asarray(task.sample(3, np.random.default_rng(12345)), dtype=np.float64)


def model_digest(model, task=None) -> str:
    """SHA-256 of what a model computes: its class, its config, every parameter and buffer (name,
    dtype, shape, bytes), the plain attributes of its modules (an attention scale) and, with a
    ``task``, its outputs on three fixed inputs of the task's shape."""
    import torch

    h = hashlib.sha256()
    h.update(f"{type(model).__module__}.{type(model).__qualname__}\0".encode())
    cfg = getattr(model, "cfg", None)
    if cfg is not None and hasattr(cfg, "to_dict"):
        h.update(json.dumps(cfg.to_dict(), sort_keys=True, default=str).encode())
    if isinstance(model, torch.nn.Module):
        for name, t in sorted(model.state_dict().items()):
            _update_value(h, f"param {name}", t)
        for name, t in sorted(model.named_buffers()):
            _update_value(h, f"buffer {name}", t)
        for mname, m in model.named_modules():
            for k, v in sorted(vars(m).items()):
                if not k.startswith("_") and k != "training":
                    _update_value(h, f"attr {mname}.{k}", v)
    if task is not None:
        try:
            X = torch.tensor(_probe(task), dtype=torch.float64)
            was = getattr(model, "training", False)
            model.eval()  # what sup_error does; no dropout draws from the global RNG
            with torch.no_grad():
                out = model(X)
            if was:
                model.train()
            _update_value(h, "probe", out)
        except Exception as e:  # a model the probe cannot run: its failure is part of the key
            h.update(f"probe failed\0{type(e).__name__}\0".encode())
    return h.hexdigest()


def task_digest(task) -> str:
    """SHA-256 of a task: its class, ``describe()``, domain, its plain attributes and arrays and
    its targets on three fixed inputs."""
    h = hashlib.sha256()
    h.update(f"{type(task).__module__}.{type(task).__qualname__}\0".encode())
    describe = task.describe() if hasattr(task, "describe") else {}
    h.update(json.dumps(describe, sort_keys=True, default=str).encode())
    for k in ("T", "d", "domain", "lo", "hi", "per_token", "name"):
        _update_value(h, f"class {k}", getattr(task, k, None))
    for k, v in sorted(vars(task).items()):
        if not k.startswith("__"):
            _update_value(h, f"attr {k}", v)
    try:
        _update_value(h, "probe", np.asarray(task.target(_probe(task)), dtype=np.float64))
    except Exception as e:
        h.update(f"probe failed\0{type(e).__name__}\0".encode())
    return h.hexdigest()
