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

__all__ = ["bench_model", "bench_planted", "bench_search", "register"]

WIDTH = 64
ELEMS_BUDGET = 2 ** 26   # cap on B·h·T² score entries (float64: 512 MiB) -> smaller batches


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
    from .model import LayerSpec, ModelConfig, Transformer
    rows = []
    g = torch.Generator().manual_seed(seed)
    for T in Ts:
        for h in hs:
            B = int(max(1, min(batch, ELEMS_BUDGET // (h * T * T))))
            cfg = ModelConfig(d_in=WIDTH, width=WIDTH, readout="tokens", cls_is_key=True,
                              residual=False, layers=[LayerSpec(heads=h, head_dim=WIDTH // h)],
                              d_out=WIDTH)
            m = Transformer(cfg)
            attn = m.attention(0)
            x = torch.randn(B, T, WIDTH, dtype=torch.float64, generator=g)
            W = [attn.q.weight, attn.k.weight, attn.v.weight, attn.o.weight]
            with torch.no_grad():
                mask = m._mask(T, x.device)
                pos = torch.arange(T)
                ours = lambda: attn(x, mask, pos)[0]            # noqa: E731
                ref = lambda: _reference(x, *W, h)              # noqa: E731
                diff = float((ours() - ref()).abs().max())
                t_m = _time(ours, reps)
                t_r = _time(ref, reps)
            row = {"T": T, "h": h, "batch": B, "model_seq_per_s": B / t_m,
                   "reference_seq_per_s": B / t_r, "ratio": t_r / t_m, "max_abs_diff": diff}
            rows.append(row)
            if progress:
                progress(row)
    return rows


def bench_planted(T: int = 2, beta: float = 20.0, seed: int = 0, max_budget: int = 2 ** 16):
    """Evaluations ``sup_error`` needs to come within 1 % of a planted worst case.

    Planted case: the softmax retrieval head on two scalar tokens, whose error
    ``b/(1 + e^{βb})`` at gap b has a known maximiser (solved with scipy)."""
    from scipy.optimize import minimize_scalar
    from .constructions import build
    from .measure import sup_error
    res = minimize_scalar(lambda b: -b / (1 + math.exp(beta * b)), bounds=(0, 1),
                          method="bounded", options={"xatol": 1e-12})
    true_sup = -res.fun
    c = build("softmax_retrieval", T=T, beta=beta)
    rows = []
    budget = 1
    while budget <= max_budget:
        for local in (0, 60):
            r = sup_error(c.model, c.task, budget=budget, seed=seed, local_steps=local,
                          include_structured=False, families=False, discrete_evals=0)
            rows.append({"budget": budget, "local_steps": local, "n_evals": r.n_evals,
                         "found": float(r.value), "true_sup": float(true_sup),
                         "within_1pct": bool(r.value >= 0.99 * true_sup)})
        budget *= 4
    first = {loc: next((r["n_evals"] for r in rows if r["local_steps"] == loc and
                        r["within_1pct"]), None) for loc in (0, 60)}
    return {"true_sup": true_sup, "beta": beta, "T": T, "rows": rows,
            "evals_to_1pct_random_only": first[0], "evals_to_1pct_with_local_search": first[60]}


def _cmd(args) -> int:
    from .errors import ConfigError
    if args.threads < 1:
        raise ConfigError(f"--threads must be >= 1 (got {args.threads})")
    torch.set_num_threads(args.threads)
    Ts = (32, 256) if args.quick else (32, 256, 1024)
    say = (lambda r: None) if args.json else (lambda r: print(
        f"T={r['T']:5d} h={r['h']} batch={r['batch']:5d}  model {r['model_seq_per_s']:10.1f} "
        f"seq/s  reference {r['reference_seq_per_s']:10.1f} seq/s  ratio {r['ratio']:.3f}  "
        f"max|diff| {r['max_abs_diff']:.1e}", flush=True))
    if not args.json:
        print(f"# float64, width {WIDTH}, torch {torch.__version__}, {args.threads} thread(s); "
              f"batch 4096 capped at B·h·T² <= 2^26")
    rows = bench_model(Ts=Ts, reps=args.reps, progress=say)
    search = bench_planted()
    if args.json:
        print(json.dumps({"rows": rows, "search": search, "threads": args.threads,
                          "torch": torch.__version__}, indent=2))
    else:
        worst = min(r["ratio"] for r in rows)
        print(f"worst ratio model/reference: {worst:.3f} (target >= 0.8)")
        print(f"sup_error on a planted worst case (softmax head, T=2, β=20, sup "
              f"{search['true_sup']:.6f}): within 1 % after "
              f"{search['evals_to_1pct_with_local_search']} evaluations with local search, "
              f"{search['evals_to_1pct_random_only']} with random sampling only")
    return 0


def _cmd_verify(args) -> int:
    import tempfile
    from .verify import run_verify
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        rc = run_verify(profile=args.profile, out=d, progress=False, use_cache=False)
        wall = time.perf_counter() - t0
    row = {"profile": args.profile, "threads": args.threads, "wall_s": round(wall, 2),
           "exit_code": rc, "target_s": 180 if args.profile == "quick" else None}
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        print(f"verify --profile {args.profile}: {wall:.1f} s wall on {args.threads} thread(s), "
              f"no cache (exit {rc})" + ("; target <= 180 s" if args.profile == "quick" else ""))
    return 0


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


def bench_identifiability(Es=(8, 16, 32, 64), head_dim=8, dense_max_E=32, threads=2,
                          progress=None):
    """Time and peak memory (each run in a fresh process) of the structured rank certificate
    versus the dense Jacobian + SVD baseline, which must give the same answer."""
    import subprocess
    rows = []
    for E in Es:
        H = max(1, E // head_dim)
        row = {"E": E, "H": H}
        for name, fn in (("structured", "structured_unidentified_dim"),
                         ("dense", "dense_unidentified_dim")):
            if name == "dense" and E > dense_max_E:
                continue
            out = subprocess.run([sys.executable, "-c", _IDENT_CHILD.format(
                threads=threads, fn=fn, E=E, H=H)], capture_output=True, text=True)
            if out.returncode != 0:
                msg = (f"exit {out.returncode}" + (" (killed: out of memory?)"
                                                   if out.returncode in (-9, 137) else "")
                       + (f": {out.stderr.strip()[-300:]}" if out.stderr.strip() else ""))
                if name == "structured":
                    raise RuntimeError(f"structured run failed, {msg}")
                row["dense_error"] = msg      # the baseline may not fit: say so, keep going
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            row.update({"params": r["total"], "predicted": r["predicted"],
                        f"{name}_measured": r["measured"], f"{name}_s": r["seconds"],
                        f"{name}_peak_mb": r["peak_rss_mb"]})
        if "dense_s" in row:
            row["speedup"] = row["dense_s"] / row["structured_s"]
            row["agree"] = row["dense_measured"] == row["structured_measured"]
        rows.append(row)
        if progress:
            progress(row)
    return rows


def _cmd_ident(args) -> int:
    from .errors import ConfigError
    if args.threads < 1:
        raise ConfigError(f"--threads must be >= 1 (got {args.threads})")
    say = (lambda r: None) if args.json else (lambda r: print(
        f"E={r['E']:3d} H={r['H']} P={r['params']:6d}  structured {r['structured_s']:7.2f} s "
        f"{r['structured_peak_mb']:7.0f} MB (U={r['structured_measured']}, predicted "
        f"{r['predicted']})" + (f"  dense {r['dense_s']:7.2f} s {r['dense_peak_mb']:7.0f} MB "
                                f"(U={r['dense_measured']})  speed-up {r['speedup']:.1f}x"
                                if "dense_s" in r else f"  dense: {r.get('dense_error', 'skipped (--dense-max-E)')}"),
        flush=True))
    rows = bench_identifiability(dense_max_E=args.dense_max_E, threads=args.threads,
                                 progress=say)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


def bench_search(budget: int = 4096, seed: int = 0, upper: bool = True, only: str | None = None,
                 progress=None) -> dict:
    """The search panel (:mod:`approxtheory.search_bench`): every case's known worst error, the
    error ``sup_error`` finds at ``budget``, the ratio (goal >= 0.95), evaluations, seconds and,
    for T <= 16 and d <= 2, the certified upper bracket."""
    from .search_bench import run_case, panel
    rows = []
    for case in panel():
        if only and only not in case.label and only != case.construction:
            continue
        row = run_case(case, budget=budget, seed=seed, upper=upper)
        rows.append(row)
        if progress:
            progress(row)
    worst = min((r["ratio"] for r in rows if r["ratio"] is not None), default=None)
    return {"budget": budget, "seed": seed, "goal_ratio": 0.95, "worst_ratio": worst,
            "meets_goal": worst is not None and worst >= 0.95, "rows": rows,
            "threads": torch.get_num_threads(), "torch": torch.__version__}


def _cmd_search(args) -> int:
    torch.set_num_threads(args.threads)
    say = None if args.json else (lambda r: print(
        f"{r['case']:<36} known {r['known']:<11.5g} found {r['found']:<11.5g} "
        f"ratio {r['ratio']:.4f}  {r['evals']:6d} evals {r['seconds']:6.2f} s  upper "
        + (f"{r['upper']:.5g} ({r['upper']/r['known']:.2f}x known)" if r["upper"] is not None
           else "-"), flush=True))
    if not args.json:
        print(f"# sup_error at budget {args.budget}, seed {args.seed}, {args.threads} thread(s); "
              "known worst from closed forms or enumeration (approxtheory/search_bench.py)")
    res = bench_search(budget=args.budget, seed=args.seed, upper=not args.no_upper,
                       only=args.only, progress=say)
    if args.json:
        print(json.dumps(res, indent=2, default=str))
    elif res["rows"]:
        print(f"worst ratio found/known: {res['worst_ratio']:.4f} (goal >= 0.95): "
              f"{'met' if res['meets_goal'] else 'NOT met'}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("bench", help="benchmarks that print figures")
    from ._cliargs import count, nonneg_int, threads
    bsub = p.add_subparsers(dest="bench_command", metavar="WHAT")
    pm = bsub.add_parser("model", help="attention layer throughput vs a raw SDPA reference")
    pm.add_argument("--json", action="store_true")
    pm.add_argument("--threads", type=threads, default=2, help="torch threads (default 2)")
    pm.add_argument("--reps", type=count, default=3, help="timed repetitions (best is kept)")
    pm.add_argument("--quick", action="store_true", help="skip T = 1024")
    pm.set_defaults(func=_cmd)
    pv = bsub.add_parser("verify", help="wall time of `verify` from scratch (no cache)")
    pv.add_argument("--profile", default="quick", choices=["quick", "full"])
    pv.add_argument("--threads", type=threads, default=2)
    pv.add_argument("--json", action="store_true")
    pv.set_defaults(func=_cmd_verify)
    ps = bsub.add_parser("search", help="sup_error against cases with exactly known worst "
                                        "errors (ratio found/known, goal >= 0.95)")
    ps.add_argument("--json", action="store_true")
    ps.add_argument("--threads", type=threads, default=2)
    ps.add_argument("--budget", type=count, default=4096, help="sup_error budget (default 4096)")
    ps.add_argument("--seed", type=nonneg_int, default=0)
    ps.add_argument("--only", help="cases whose label contains this text, or a construction")
    ps.add_argument("--no-upper", action="store_true",
                    help="skip the certified upper bracket (it takes up to 10 s per small case)")
    ps.set_defaults(func=_cmd_search)
    pi = bsub.add_parser("identifiability", help="structured rank certificate vs dense "
                                                  "Jacobian + SVD (time, peak memory)")
    pi.add_argument("--json", action="store_true")
    pi.add_argument("--threads", type=threads, default=2)
    pi.add_argument("--dense-max-E", type=nonneg_int, default=32,
                    help="largest width for the dense baseline (E = 64 takes very long)")
    pi.set_defaults(func=_cmd_ident)
