"""Benchmarks (commands that print figures; never timed unit tests).

``approxtheory bench model [--json] [--threads N] [--quick]``: float64 forward throughput of one
attention layer of :class:`~approxtheory.model.Transformer` against a minimal reference of the same
computation written directly with ``F.linear`` and ``F.scaled_dot_product_attention`` (same weights,
same inputs, outputs checked equal), and the number of forward evaluations ``sup_error`` needs to
find a planted worst case within 1 %.
"""

from __future__ import annotations

import json
import math
import sys
import time

import torch
import torch.nn.functional as F

__all__ = [
    "bench_model",
    "bench_planted",
    "bench_search",
    "bench_identifiability",
    "bench_gpt2_curve",
    "gpt2_layer_bytes",
    "WIDTH",
    "CURVE_START",
    "CURVE_STEP",
    "CURVE_HEADS",
]

WIDTH = 64
ELEMS_BUDGET = 2**26  # cap on B·h·T² score entries (float64: 512 MiB) -> smaller batches


def _reference(x, Wq, Wk, Wv, Wo, h):
    B, T, E = x.shape
    n = Wq.shape[0] // h
    q = F.linear(x, Wq).view(B, T, h, n).transpose(1, 2)
    k = F.linear(x, Wk).view(B, T, h, n).transpose(1, 2)
    v = F.linear(x, Wv).view(B, T, h, n).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v)
    return F.linear(y.transpose(1, 2).reshape(B, T, h * n), Wo)


def _time(fn, reps):
    fn()  # warm-up
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_model(Ts=(32, 256, 1024), hs=(1, 4, 8), batch=4096, reps=3, seed=0, progress=None):
    """Forward throughput of the shared model against raw SDPA on identical weights (float64), per
    (T, h); rows with both rates, their ratio and the largest difference of the outputs.
    """
    from ..model import LayerSpec, ModelConfig, Transformer

    rows = []
    g = torch.Generator().manual_seed(seed)
    for T in Ts:
        for h in hs:
            B = int(max(1, min(batch, ELEMS_BUDGET // (h * T * T))))
            cfg = ModelConfig(
                d_in=WIDTH,
                width=WIDTH,
                readout="tokens",
                cls_is_key=True,
                residual=False,
                layers=[LayerSpec(heads=h, head_dim=WIDTH // h)],
                d_out=WIDTH,
            )
            m = Transformer(cfg)
            attn = m.attention(0)
            x = torch.randn(B, T, WIDTH, dtype=torch.float64, generator=g)
            Wq, Wk, Wv, Wo = attn.q.weight, attn.k.weight, attn.v.weight, attn.o.weight
            with torch.no_grad():
                mask = m._mask(T, x.device)
                pos = torch.arange(T)

                # called (and timed) right here; the defaults bind this iteration's values
                def ours(attn=attn, x=x, mask=mask, pos=pos):
                    return attn(x, mask, pos)[0]

                def ref(x=x, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, h=h):
                    return _reference(x, Wq, Wk, Wv, Wo, h)

                diff = float((ours() - ref()).abs().max())
                t_m = _time(ours, reps)
                t_r = _time(ref, reps)
            row = {
                "T": T,
                "h": h,
                "batch": B,
                "model_seq_per_s": B / t_m,
                "reference_seq_per_s": B / t_r,
                "ratio": t_r / t_m,
                "max_abs_diff": diff,
            }
            rows.append(row)
            if progress:
                progress(row)
    return rows


def bench_planted(T: int = 2, beta: float = 20.0, seed: int = 0, max_budget: int = 2**16):
    """Evaluations ``sup_error`` needs to come within 1 % of a planted worst case.

    Planted case: the softmax retrieval head on two scalar tokens, whose error
    ``b/(1 + e^{βb})`` at gap b has a known maximiser (solved with scipy)."""
    from scipy.optimize import minimize_scalar

    from ..constructions import build
    from ..measure import sup_error

    res = minimize_scalar(
        lambda b: -b / (1 + math.exp(beta * b)),
        bounds=(0, 1),
        method="bounded",
        options={"xatol": 1e-12},
    )
    true_sup = -res.fun
    c = build("softmax_retrieval", T=T, beta=beta)
    rows = []
    budget = 1
    while budget <= max_budget:
        for local in (0, 60):
            r = sup_error(
                c.model,
                c.task,
                budget=budget,
                seed=seed,
                local_steps=local,
                include_structured=False,
                families=False,
                discrete_evals=0,
            )
            rows.append(
                {
                    "budget": budget,
                    "local_steps": local,
                    "n_evals": r.n_evals,
                    "found": float(r.value),
                    "true_sup": float(true_sup),
                    "within_1pct": bool(r.value >= 0.99 * true_sup),
                }
            )
        budget *= 4
    first = {
        loc: next(
            (r["n_evals"] for r in rows if r["local_steps"] == loc and r["within_1pct"]), None
        )
        for loc in (0, 60)
    }
    return {
        "true_sup": true_sup,
        "beta": beta,
        "T": T,
        "rows": rows,
        "evals_to_1pct_random_only": first[0],
        "evals_to_1pct_with_local_search": first[60],
    }


_IDENT_CHILD = """
import json, resource, sys, time, torch
torch.set_num_threads({threads})
from approxtheory.identifiability import AttentionConfig, {fn}
t = time.perf_counter()
r = {fn}(AttentionConfig({E}, {H}))
r["seconds"] = time.perf_counter() - t
r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(r))
"""


def bench_identifiability(Es=(8, 16, 32, 64), head_dim=8, dense_max_E=32, threads=2, progress=None):
    """Time and peak memory (each run in a fresh process) of the structured rank certificate
    versus the dense Jacobian + SVD baseline, which must give the same answer."""
    import subprocess

    rows = []
    for E in Es:
        H = max(1, E // head_dim)
        row = {"E": E, "H": H}
        for name, fn in (
            ("structured", "structured_unidentified_dim"),
            ("dense", "dense_unidentified_dim"),
        ):
            if name == "dense" and E > dense_max_E:
                continue
            out = subprocess.run(
                [sys.executable, "-c", _IDENT_CHILD.format(threads=threads, fn=fn, E=E, H=H)],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                msg = (
                    f"exit {out.returncode}"
                    + (" (killed: out of memory?)" if out.returncode in (-9, 137) else "")
                    + (f": {out.stderr.strip()[-300:]}" if out.stderr.strip() else "")
                )
                if name == "structured":
                    raise RuntimeError(f"structured run failed, {msg}")
                row["dense_error"] = msg  # the baseline may not fit: say so, keep going
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            row.update(
                {
                    "params": r["total"],
                    "predicted": r["predicted"],
                    f"{name}_measured": r["measured"],
                    f"{name}_s": r["seconds"],
                    f"{name}_peak_mb": r["peak_rss_mb"],
                }
            )
        if "dense_s" in row:
            row["speedup"] = row["dense_s"] / row["structured_s"]
            row["agree"] = row["dense_measured"] == row["structured_measured"]
        rows.append(row)
        if progress:
            progress(row)
    return rows


def bench_search(
    budget: int = 4096, seed: int = 0, upper: bool = True, only: str | None = None, progress=None
) -> dict:
    """The search panel (:mod:`approxtheory.bench.search`): every case's known worst error, the
    error ``sup_error`` finds at ``budget``, the ratio (goal >= 0.95), evaluations, seconds and,
    for T <= 16 and d <= 2, the certified upper bracket."""
    from .._cliargs import MAX_SEED
    from ..errors import ConfigError
    from .search import panel, run_case, select_cases

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be an integer from 0 to {MAX_SEED} (got {seed!r})")
    rows = []
    for case in select_cases(panel(), only):
        row = run_case(case, budget=budget, seed=seed, upper=upper)
        rows.append(row)
        if progress:
            progress(row)
    worst = min((r["ratio"] for r in rows if r["ratio"] is not None), default=None)
    return {
        "budget": budget,
        "seed": seed,
        "goal_ratio": 0.95,
        "worst_ratio": worst,
        "meets_goal": worst is not None and worst >= 0.95,
        "rows": rows,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }


#: ``bench identifiability --gpt2-until``: the widths E = 64, 96, 128, ... with H = 4 heads
CURVE_START, CURVE_STEP, CURVE_HEADS = 64, 32, 4


def gpt2_layer_bytes(E: int, H: int = CURVE_HEADS) -> int:
    """Memory estimate (bytes) of one GPT-2 layer of the cost curve, from the sizes alone: the
    structured bounds' arrays (:func:`~approxtheory.identifiability_modules.gpt2_structured_bytes`)
    and the layer's P = 4E² + 4E weights in float32 and their float64 copy."""
    from .. import identifiability_modules as im

    return im.gpt2_structured_bytes(E, H) + 12 * (4 * E * E + 4 * E)


def _gpt2_layer(E: int, H: int, seed: int):
    """A random causal Hugging Face ``GPT2Attention`` of width E with H heads (hf extra)."""
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    torch.manual_seed(seed)
    return GPT2Attention(GPT2Config(n_embd=E, n_head=H, n_layer=1), layer_idx=0)


def _reset_peak() -> bool:
    """Reset this process's peak resident memory (Linux: ``/proc/self/clear_refs``); False where
    it cannot, and the peak then is the process's so far."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_bytes() -> int:
    """This process's peak resident memory (bytes) since the last :func:`_reset_peak`."""
    import re
    import resource

    try:
        with open("/proc/self/status") as f:
            m = re.search(r"VmHWM:\s+(\d+)\s*kB", f.read())
        if m:
            return int(m.group(1)) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS
    return rss if sys.platform == "darwin" else rss * 1024


def _curve_row(E: int, H: int, seed: int) -> dict:
    """Build the width-E layer and bound it (:func:`gpt2_structured`); the row of the curve."""
    from .. import identifiability_modules as im

    exact = _reset_peak()
    layer = _gpt2_layer(E, H, seed)
    r = im.gpt2_structured(layer, seed=seed)
    del layer
    return {
        "E": E,
        "H": H,
        "P": r.total,
        "method": "structured",
        "measured": r.measured,
        "predicted": r.predicted,
        "status": r.status,
        "closed": r.status == "certified",
        "gap_ratio": r.gap[2],
        "seconds": round(r.seconds, 2),
        "peak_bytes": _peak_bytes(),
        "peak_is_per_layer": exact,
        # the bracket of an open row: "unidentified >= P - upper, <= P - lower"
        "bracket": next((n for n in reversed(r.notes) if n.startswith("unidentified >=")), None),
        "notes": list(r.notes),
    }


def bench_gpt2_curve(
    max_bytes: float,
    max_seconds: float,
    *,
    start: int = CURVE_START,
    step: int = CURVE_STEP,
    heads: int = CURVE_HEADS,
    seed: int = 0,
    progress=None,
) -> dict:
    """The cost curve of the structured identifiability bounds on random GPT-2 layers: E = start,
    start + step, ... with ``heads`` heads, one row per width (E, H, P, seconds, peak memory, U
    measured and predicted, closed or not), until a layer would need more than ``max_bytes`` (its
    estimate :func:`gpt2_layer_bytes`, checked before it is built; also the memory limit in force,
    :func:`approxtheory.resources.max_bytes`) or one took more than ``max_seconds`` (the next one
    is larger). The clock decides only where the table stops, never a row's result.

    Returns ``{"rows", "stop", "max_bytes", "max_seconds"}``; ``stop`` says which width stopped
    the table and why (``reason``: ``"memory"`` or ``"time"``; ``text``: one line)."""
    from ..errors import ConfigError
    from ..resources import ENV_BYTES, format_bytes
    from ..resources import max_bytes as limit_in_force

    for name, v in (("max_bytes", max_bytes), ("max_seconds", max_seconds)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ConfigError(f"{name} must be a finite number > 0 (got {v!r})")
    for name, v in (("start", start), ("step", step), ("heads", heads)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{name} must be a positive integer (got {v!r})")
    if start % heads or step % heads:
        raise ConfigError(f"start and step must be multiples of heads = {heads}")
    rows: list[dict] = []
    E = start
    while True:
        need = gpt2_layer_bytes(E, heads)
        env = limit_in_force()
        if need > max_bytes or (env is not None and need > env):
            cap = (
                f"the cap of {max_bytes / 2**30:.3g} GiB"
                if need > max_bytes
                else f"the memory limit in force ({format_bytes(env)}; {ENV_BYTES} raises it)"
            )
            stop = {
                "E": E,
                "reason": "memory",
                "need_bytes": need,
                "text": f"E = {E} would need {need / 2**30:.1f} GiB > {cap}: stopped before "
                "building it",
            }
            break
        row = _curve_row(E, heads, seed)
        rows.append(row)
        if progress:
            progress(row)
        if row["seconds"] > max_seconds:
            stop = {
                "E": E,
                "reason": "time",
                "seconds": row["seconds"],
                "text": f"E = {E} took {row['seconds']:.0f} s > the budget of "
                f"{max_seconds:g} s: stopped (the next width is larger; the clock decides only "
                "where the table stops)",
            }
            break
        E += step
    return {"rows": rows, "stop": stop, "max_bytes": max_bytes, "max_seconds": max_seconds}
