"""``approxtheory bench model|verify|search|bracket|identifiability|train|sweep|threads``:
benchmarks that print figures (:mod:`approxtheory.bench`; ``bench verify`` times
:func:`approxtheory.verify.run_verify`; ``bench bracket`` is
:func:`approxtheory.bench.bracket.bench_bracket`;
``bench train`` is :func:`approxtheory.bench.train.bench_train`; ``bench sweep`` is
:func:`approxtheory.bench.sweep.bench_sweep`; ``bench threads`` is
:func:`approxtheory.bench.threads.bench_threads`)."""

from __future__ import annotations

import json
import math
import sys
import time

import torch

__all__ = ["register"]


def _progress(args, line):
    """The per-row progress of a bench: None with ``--json``, else print ``line(row)`` at once."""
    return None if args.json else (lambda r: print(line(r), flush=True))


def _start(args, line, header: str):
    """Set the torch threads and print the header (not with ``--json``); the row progress."""
    torch.set_num_threads(args.threads)
    if not args.json:
        print(header)
    return _progress(args, line)


def _print_json(res) -> None:
    print(json.dumps(res, indent=2, default=str))


def _model_line(r) -> str:
    """A row of ``bench model``."""
    return (
        f"T={r['T']:5d} h={r['h']} batch={r['batch']:5d}  "
        f"model {r['model_seq_per_s']:10.1f} seq/s  "
        f"reference {r['reference_seq_per_s']:10.1f} seq/s  ratio {r['ratio']:.3f}  "
        f"max|diff| {r['max_abs_diff']:.1e}"
    )


def _cmd(args) -> int:
    from ..bench.model import WIDTH, bench_model, bench_planted

    say = _start(
        args,
        _model_line,
        f"# float64, width {WIDTH}, torch {torch.__version__}, {args.threads} thread(s); "
        f"batch 4096 capped at B·h·T² <= 2^26",
    )
    Ts = (32, 256) if args.quick else (32, 256, 1024)
    rows = bench_model(Ts=Ts, reps=args.reps, progress=say)
    search = bench_planted()
    if args.json:
        _print_json(
            {"rows": rows, "search": search, "threads": args.threads, "torch": torch.__version__}
        )
    else:
        worst = min(r["ratio"] for r in rows)
        print(f"worst ratio model/reference: {worst:.3f} (target >= 0.8)")
        print(
            f"sup_error on a planted worst case (softmax head, T=2, β=20, sup "
            f"{search['true_sup']:.6f}): within 1 % after "
            f"{search['evals_to_1pct_with_local_search']} evaluations with local search, "
            f"{search['evals_to_1pct_random_only']} with random sampling only"
        )
    return 0


def _cmd_verify(args) -> int:
    import os
    import tempfile

    from ..verify import run_verify

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        t0, c0 = time.perf_counter(), time.process_time()
        rc = run_verify(profile=args.profile, out=d, progress=False, use_cache=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    load1 = os.getloadavg()
    target = {"smoke": 60, "quick": None, "full": None}[args.profile]
    row = {
        "profile": args.profile,
        "threads": 1,  # verify fixes one torch thread (results independent of the core count)
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpus": os.cpu_count(),
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in load1],
        "exit_code": rc,
        "target_s": target,
    }
    if args.json:
        _print_json(row)
    else:
        print(
            f"verify --profile {args.profile}: {wall:.1f} s wall, {cpu:.1f} s CPU (one torch "
            f"thread), no cache, exit {rc}; {os.cpu_count()} CPUs, load average "
            f"{load0[0]:.2f} before, {load1[0]:.2f} after"
            + (f"; target <= {target} s idle" if target else "")
        )
    return 0


def _ident_line(r) -> str:
    """A row of ``bench identifiability``."""
    return (
        f"E={r['E']:3d} H={r['H']} P={r['params']:6d}  "
        f"structured {r['structured_s']:7.2f} s {r['structured_peak_mb']:7.0f} MB "
        f"(U={r['structured_measured']}, predicted {r['predicted']})"
        + (
            f"  dense {r['dense_s']:7.2f} s {r['dense_peak_mb']:7.0f} MB "
            f"(U={r['dense_measured']})  speed-up {r['speedup']:.1f}x"
            if "dense_s" in r
            else f"  dense: {r.get('dense_error', 'skipped (--dense-max-E)')}"
        )
    )


def _gpt2_line(r) -> str:
    """A row of ``bench identifiability --gpt2-until``: the GPT-2 cost curve."""
    return (
        f"GPT2 E={r['E']:4d} H={r['H']} P={r['P']:8d}  {r['seconds']:8.2f} s "
        f"{r['peak_bytes'] / 2**30:6.2f} GiB peak  U={r['measured']} predicted {r['predicted']}  "
        f"{'closed' if r['closed'] else 'open'} ({r['status']}, gap ratio {r['gap_ratio']:.3g})"
        + ("" if r["closed"] or not r.get("bracket") else f": {r['bracket']}")
    )


def _cmd_ident(args) -> int:
    from ..bench.model import bench_identifiability
    from ..errors import ConfigError

    if args.gpt2 and any(E < 4 or E % 4 for E in args.gpt2):
        raise ConfigError(f"--gpt2 widths must be multiples of 4 (H = 4), got {args.gpt2}")
    _require_ident(args)
    say = _progress(args, _ident_line)
    rows = bench_identifiability(dense_max_E=args.dense_max_E, threads=args.threads, progress=say)
    if args.gpt2:  # the structured method on Hugging Face GPT-2 layers (needs the hf extra)
        from ..identifiability_modules import bench_rows

        gpt2 = bench_rows(widths=tuple(args.gpt2), heads=4)
        for r in gpt2:
            if not args.json:
                print(
                    f"GPT2 E={r['E']:3d} H={r['H']} P={r['P']:7d}  {r['method']:10s} "
                    f"{r['seconds']:8.2f} s  U={r['measured']} predicted {r['predicted']} "
                    f"({r['status']}, gap ratio {r['gap_ratio']:.3g})",
                    flush=True,
                )
        rows = [*rows, *({"gpt2": True, **r} for r in gpt2)]
    if args.gpt2_until:
        rows = [*rows, *_gpt2_curve(args)]
    if args.json:
        _print_json(rows)
    return 0


def _gpt2_curve(args) -> list[dict]:
    """``--gpt2-until``: the cost curve E = 64, 96, 128, ... until the per-layer budget; its
    rows, then one record of where and why it stopped (and the machine's load)."""
    import os

    from ..bench.model import CURVE_HEADS, CURVE_START, CURVE_STEP, bench_gpt2_curve

    gb, sec = _budgets(args)
    if not args.json:
        print(
            f"# GPT-2 cost curve: structured bounds on random GPT2Attention layers, E = "
            f"{CURVE_START}, {CURVE_START + CURVE_STEP}, {CURVE_START + 2 * CURVE_STEP}, ... "
            f"(H = {CURVE_HEADS}), until a layer would need > {gb:g} GiB (--max-gb) or took "
            f"> {sec:g} s (--max-seconds)",
            flush=True,
        )
    load0 = _load()
    res = bench_gpt2_curve(gb * 2**30, sec, progress=_progress(args, _gpt2_line))
    load1 = _load()
    if not args.json:
        print(f"stop: {res['stop']['text']}")
        print(
            f"# {args.threads} torch threads, {os.cpu_count()} CPUs, load average (1, 5, 15 min) "
            f"{load0} before, {load1} after"
        )
    end = {"gpt2": True, "stop": res["stop"], "max_gb": gb, "max_seconds": sec}
    return [*({"gpt2": True, **r} for r in res["rows"]), {**end, "load": [load0, load1]}]


#: the per-layer budget of `bench identifiability --gpt2-until` (GiB, seconds)
CURVE_MAX_GB, CURVE_MAX_SECONDS = 8.0, 600.0


def _budgets(args) -> tuple[float, float]:
    """``(--max-gb, --max-seconds)`` with their defaults; either one without ``--gpt2-until``
    (``--max-gb`` also with ``--gpt2``) is refused."""
    from ..errors import ConfigError

    if args.gpt2 and args.gpt2_until:
        raise ConfigError("--gpt2 E ... and --gpt2-until: give one (explicit widths, or the curve)")
    if not args.gpt2_until and args.max_seconds is not None:
        raise ConfigError("--max-seconds goes with --gpt2-until (where the growing table stops)")
    if not (args.gpt2_until or args.gpt2) and args.max_gb is not None:
        raise ConfigError("--max-gb goes with --gpt2-until or --gpt2 (the per-layer memory cap)")
    gb = CURVE_MAX_GB if args.max_gb is None else args.max_gb
    return gb, CURVE_MAX_SECONDS if args.max_seconds is None else args.max_seconds


#: the widths `bench identifiability` times (approxtheory.bench.model.bench_identifiability)
IDENT_WIDTHS = (8, 16, 32, 64)


def _require_ident(args) -> None:
    """Every size of `bench identifiability` checked before any work: --dense-max-E
    within the benched widths, each dense baseline's and each --gpt2 layer's memory (and time)
    against the limits, the hf extra present for --gpt2."""
    from ..errors import ConfigError
    from ..identifiability import AttentionConfig, dense_estimate
    from ..resources import require

    if args.dense_max_E > IDENT_WIDTHS[-1]:
        raise ConfigError(
            f"--dense-max-E must be from 0 to {IDENT_WIDTHS[-1]} (the widths benched are "
            f"{', '.join(map(str, IDENT_WIDTHS))}; got {args.dense_max_E})"
        )
    for E in IDENT_WIDTHS:
        cfg = AttentionConfig(E, max(1, E // 8))
        if E <= args.dense_max_E:
            est = dense_estimate(cfg)
            require(
                bytes=est["bytes"],
                seconds=est["seconds"],
                what=f"the dense baseline at E={E} (--dense-max-E {args.dense_max_E})",
            )
    gb, _ = _budgets(args)
    if not (args.gpt2 or args.gpt2_until):
        return
    from ..bench.model import gpt2_layer_bytes

    for E in args.gpt2 or ():  # the layer (float32 and its float64 copy) and the bounds' arrays
        what = f"the GPT-2 layer of --gpt2 {E}"
        require(bytes=gpt2_layer_bytes(E, 4), what=what)
        if args.max_gb is not None:
            require(bytes=gpt2_layer_bytes(E, 4), what=what, limit=int(gb * 2**30))
    try:
        import transformers  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ConfigError(
            f"{'--gpt2' if args.gpt2 else '--gpt2-until'} needs the hf extra "
            f"(pip install 'approxtheory[hf]'): {e}"
        ) from None


def _search_line(r) -> str:
    """A row of ``bench search``."""
    return (
        f"{r['case']:<36} known {r['known']:<11.5g} found {r['found']:<11.5g} "
        f"ratio {r['ratio']:.4f}  {r['evals']:6d} evals {r['seconds']:6.2f} s  upper "
        + (
            f"{r['upper']:.5g} ({r['upper'] / r['known']:.2f}x known)"
            if r["upper"] is not None
            else "-"
        )
    )


def _cmd_search(args) -> int:
    from ..bench.model import bench_search

    say = _start(
        args,
        _search_line,
        f"# sup_error at budget {args.budget}, seed {args.seed}, {args.threads} thread(s); "
        "known worst from closed forms or enumeration (approxtheory/bench/search.py)",
    )
    res = bench_search(
        budget=args.budget, seed=args.seed, upper=not args.no_upper, only=args.only, progress=say
    )
    if args.json:
        _print_json(res)
    elif res["rows"]:
        print(
            f"worst ratio found/known: {res['worst_ratio']:.4f} (goal >= 0.95): "
            f"{'met' if res['meets_goal'] else 'NOT met'}"
        )
    return 0


def _fmt(v, spec=".4g"):
    return "-" if v is None else format(v, spec)


def _bracket_line(r) -> str:
    """A row of ``bench bracket``."""
    return (
        f"{r['case']:<38} {r['method']:<10} found {_fmt(r['found'])}  certified "
        f"{_fmt(r['certified'])}  found/cert {_fmt(r['found_over_certified'], '.4f')}  "
        f"{r['seconds']:6.2f} s  known {_fmt(r['known'])} (cert/known "
        f"{_fmt(r['certified_over_known'], '.3f')})  interval {_fmt(r['interval'])} "
        f"({_fmt(r['interval_over_certified'], '.3g')}x cert)"
    )


def _cmd_bracket(args) -> int:
    from ..bench.bracket import bench_bracket

    say = _start(
        args,
        _bracket_line,
        f"# certified upper bracket (approxtheory.bounds.upper_bracket, deterministic "
        f"budgets) vs the known worst case and naive interval propagation; "
        f"{args.threads} thread(s)",
    )
    say_frontier = None if args.json else _say_frontier
    if not args.json and args.frontier:
        print(
            "# frontier: the largest T (2, 4, 8, ...) whose branch-and-bound bracket certifies "
            "the claimed bound within the per-T box budget (constructions outside the "
            "structured softmax-retrieval class)"
        )
    res = bench_bracket(
        only=args.only, progress=say, frontier=args.frontier, frontier_progress=say_frontier
    )
    if args.json:
        _print_json(res)
    elif res["rows"]:
        print(f"goal ({res['goal']}): {'met' if res['all_meet_goal'] else 'NOT met'}")
    return 0


def _say_frontier(f: dict) -> None:
    front = "none" if f["frontier_T"] is None else f"T={f['frontier_T']}"
    print(f"frontier {f['case']:<30} ({f['claim']}): {front}; {f['reason']}", flush=True)
    for s in f["steps"]:
        if "skipped" in s:
            print(f"    T={s['T']:<4} skipped: {s['skipped']}", flush=True)
            continue
        print(
            f"    T={s['T']:<4} found {_fmt(s['found'])}  certified {_fmt(s['certified'])}  "
            f"claimed {_fmt(s['claimed'])}  {'certifies' if s['certifies'] else 'does NOT certify'}"
            f"  work {s['work']} boxes  {s['seconds']:6.2f} s  stop: {s['stop']}",
            flush=True,
        )


def _fraction(text: str) -> float:
    """``--fraction``: a number from :data:`~approxtheory.bench.gated.MIN_FRACTION` to 1, else
    argparse's one-line error."""
    import argparse

    from ..bench.gated import MIN_FRACTION

    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (MIN_FRACTION <= v <= 1):
        raise argparse.ArgumentTypeError(
            f"must be a number from {MIN_FRACTION:g} (three steps of the shortest recipe) to 1 "
            f"(got {text!r})"
        )
    return v


def _cmd_train_explain(args) -> int:
    """``bench train --gated --explain``: where a step's CPU goes, per engine (bench.explain)."""
    from ..bench.explain import explain_steps

    if args.fraction != 1.0:
        from ..errors import ApproxTheoryError

        raise ApproxTheoryError(
            "--fraction does not apply with --explain (the profile trains a fixed 200 + 400 "
            "steps per engine and T)"
        )
    res = explain_steps()
    if args.json:
        _print_json(res)
        return 0
    print(
        f"# CPU per training step (process time, one thread) and its split by operator group "
        f"(torch.profiler self time; both the difference between {2 * res['steps_profiled']} "
        f"and {res['steps_profiled']} steps, so the build and the validation pass drop out; "
        "the profiled times include the profiler's own cost per operator and, on a loaded "
        f"machine, waiting; load average {res['load']})"
    )
    for r in res["rows"]:
        for arm in ("before", "after"):
            a = r[arm]
            print(
                f"T={r['T']:<3} {arm:<6} ({a['engine']:<9}) {a['cpu_ms_per_step']:6.3f} CPU-ms/"
                f"step; profiled {a['profiled_ms_per_step']:6.3f} ms/step, "
                f"{a['calls_per_step']:5.0f} operator calls/step (median "
                f"{a['median_us_per_call']:.1f} us): "
                + ", ".join(
                    f"{g} {v:.3f} ms ({a['shares'].get(g, 0):.0%})"
                    for g, v in sorted(a["groups_ms_per_step"].items(), key=lambda x: -x[1])
                )
            )
        print(
            f"T={r['T']:<3} ratio per gated model = steps x{r['step_count_factor']:.2f} "
            f"(16,000 -> 8,000) x per step x{r['per_step_factor']:.2f} (CPU, unprofiled) = "
            f"x{r['step_count_factor'] * r['per_step_factor']:.2f}, times the gate's pass rates "
            "(bench train --gated)"
        )
    return 0


def _cmd_train_gated(args) -> int:
    import math

    from ..bench.gated import bench_gated

    if args.explain:
        return _cmd_train_explain(args)

    def say(r):
        print(
            f"T={r['T']:>3} seed {r['seed']} {r['arm']:<6} ({r['engine']}, {r['steps']} steps): "
            f"{r['cpu_s']:7.1f} CPU-s  NMSE {r['val_nmse']:.3g}  tail {r['tail_ratio']:.2f}  "
            f"gate {'passed' if r['gate'] else 'FAILED: ' + '; '.join(r['gate_failures'])}",
            flush=True,
        )

    if not args.json:
        print(
            "# CPU seconds per head-count model (h = D = 4, N = 32) that passes the training-"
            "adequacy gate: before = reference engine + 16,000-step recipe, after = fast engine "
            "+ decisive recipe; one thread, same process, alternating"
        )
    res = bench_gated(fraction=args.fraction, progress=None if args.json else say)
    if args.json:
        _print_json(res)
        return 0
    for s in res["summaries"]:
        b, a = s["before"], s["after"]

        def per(x):
            return f"{x:.1f}" if math.isfinite(x) else "inf (none passed)"

        print(
            f"T={s['T']}: CPU per model {b['cpu_per_model']:.1f} -> {a['cpu_per_model']:.1f} s "
            f"(x{s['ratio_cpu_per_model']:.2f}); per gated model {per(b['cpu_per_gated_model'])}"
            f" -> {per(a['cpu_per_gated_model'])} (passed {b['passed_gate']}/{b['models']} -> "
            f"{a['passed_gate']}/{a['models']}); min-over-seeds NMSE {b['min_nmse']:.3g} -> "
            f"{a['min_nmse']:.3g} (x{s['nmse_ratio_after_before']:.2f})"
        )
    print(
        f"load average before {res['load_before']}, after {res['load_after']} on "
        f"{res['cpus']} CPUs; goal: >= {res['goal']:g}x less CPU per gated model"
        + (
            f"; fraction {res['fraction']:g} of each recipe's steps (plumbing only)"
            if res["fraction"] < 1
            else ""
        )
    )
    return 0


def _train_line(r) -> str:
    """A round of ``bench train``."""
    return (
        f"round {r['round']}: ours {r['ours_steps_per_s']:8.2f} steps/s  plain "
        f"{r['plain_steps_per_s']:8.2f} steps/s  ratio {r['ratio']:.3f}"
    )


def _cmd_train(args) -> int:
    from ..bench.train import bench_train
    from ._options import forward

    if args.gated:
        return _cmd_train_gated(args)
    if args.explain:
        from ..errors import ApproxTheoryError

        raise ApproxTheoryError("--explain applies to bench train --gated only")
    if args.fraction != 1.0:
        from ..errors import ApproxTheoryError

        raise ApproxTheoryError("--fraction applies to bench train --gated only")

    say = _progress(args, _train_line)
    if not args.json:
        print(
            f"# training steps/s of approxtheory.train (shared Transformer) against a plain "
            f"nanoGPT-style SDPA loop, same shapes and batches; float32, CPU, {args.threads} "
            f"thread(s), {args.rounds} alternating rounds of {args.steps} steps, torch "
            f"{torch.__version__}"
        )
    res = bench_train(**forward(args, "steps", "rounds", "threads", "warmup", "seed"), progress=say)
    if args.json:
        _print_json(res)
    else:
        print(
            f"ours {res['ours_steps_per_s']:.2f} steps/s, plain {res['plain_steps_per_s']:.2f} "
            f"steps/s (medians); ratio ours/plain {res['ratio']:.3f} (rounds "
            f"{res['ratio_min']:.3f}..{res['ratio_max']:.3f}; best rounds "
            f"{res['ratio_of_best']:.3f}); goal >= {res['goal_ratio']}: "
            f"{'met' if res['meets_goal'] else 'NOT met'}"
        )
    return 0


def _cmd_threads(args) -> int:
    import os

    from ..bench.threads import bench_threads

    def say(r):
        print(
            f"  {r['workload']:<10} {r['setting']:<8} rep {r['rep'] + 1}: {r['wall_s']:7.2f} s "
            f"wall {r['cpu_s']:7.2f} s CPU  (load {r['load1']:.2f})",
            file=sys.stderr,
            flush=True,
        )

    workloads = ("construct", "rate-test") if args.workload == "all" else (args.workload,)
    if not args.json:
        print(
            f"# each workload as a subprocess at the default thread policy, 1 thread and all "
            f"{os.cpu_count()} cores (APPROXTHEORY_THREADS), {args.repeat} repetition(s) "
            f"interleaved; medians; load average {_load()} at the start",
            flush=True,
        )
    res = bench_threads(
        workloads=workloads,
        repeat=args.repeat,
        budget=args.budget,
        timeout=args.timeout,
        progress=None if args.json or args.quiet else say,
    )
    if args.json:
        _print_json(res)
        return 0
    head = f"{'workload':<10} {'setting':<8} {'threads':>7} {'wall s':>8} {'CPU s':>8}"
    print(f"{head}  range wall / CPU")
    for r in res["rows"]:
        print(
            f"{r['workload']:<10} {r['setting']:<8} {r['threads']:>7} {r['wall_s']:8.2f} "
            f"{r['cpu_s']:8.2f}  {r['wall_min_max'][0]:.2f}..{r['wall_min_max'][1]:.2f} / "
            f"{r['cpu_min_max'][0]:.2f}..{r['cpu_min_max'][1]:.2f}"
        )
    for s in res["summaries"]:
        w, c = s["wall"], s["cpu"]
        print(
            f"{s['workload']}: default/best wall {w['ratio']:.3f} (best: {w['best']}), CPU "
            f"{c['ratio']:.3f} (best: {c['best']}); goal <= {res['goal']}: "
            f"{'met' if s['meets_goal'] else 'NOT met'}"
        )
    lb, la = res["load_before"], res["load_after"]
    print(
        f"load average (1, 5, 15 min) {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f} before, "
        f"{la[0]:.2f} {la[1]:.2f} {la[2]:.2f} after, on {res['cpus']} CPUs; "
        f"{res['seconds']:.0f} s in all"
        + (f"; rate test at --approxtheory-budget {res['budget']}" if res["budget"] else "")
    )
    return 0


def _load() -> str:
    import os

    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cmd_sweep(args) -> int:
    from ..bench.sweep import bench_sweep

    r = bench_sweep(cells=args.cells, cell_ms=args.cell_ms, workers=args.workers)
    if args.json:
        _print_json(r)
        return 0
    print(f"# {r['cells']} cells of {r['cell_ms']:g} ms; pool and Dask with {r['workers']} workers")
    for row in r["rows"]:
        if "skipped" in row:
            print(f"{row['executor']:<10} skipped: {row['skipped']}")
            continue
        print(
            f"{row['executor']:<10} {row['cells_per_s']:8.1f} cells/s  "
            f"wall {row['wall_s']:6.2f} s  overhead {row['overhead_ms_per_cell']:7.2f} ms/cell"
        )
    return 0


def register(p) -> None:
    """Add one parser per bench to ``bench``'s parser ``p``, in the order ``bench --help`` lists
    them."""
    bsub = p.add_subparsers(dest="bench_command", metavar="WHAT")
    _register_model(bsub)
    _register_sweep(bsub)
    _register_verify(bsub)
    _register_search(bsub)
    _register_bracket(bsub)
    _register_ident(bsub)
    _register_train(bsub)
    _register_threads(bsub)


def _ranged(q, option, lo, hi, default, what, tail=None) -> None:
    """An integer option from ``lo`` to ``hi``, its help "WHAT, LO to HI (default D)"."""
    from .._cliargs import int_between

    tail = tail or f"default {default}"
    q.add_argument(
        option, type=int_between(lo, hi), default=default, help=f"{what}, {lo} to {hi} ({tail})"
    )


def _bench(bsub, name, func, help, threads=None, note=""):
    """The parser of ``bench NAME``: ``--json`` and, where it runs torch, ``--threads``."""
    from ._options import add_json, add_threads

    q = bsub.add_parser(name, help=help)
    q.set_defaults(func=func)
    add_json(q)
    if threads is not None:
        add_threads(q, threads, note)
    return q


def _register_model(bsub) -> None:
    pm = _bench(
        bsub, "model", _cmd, "attention layer throughput vs a raw SDPA reference", threads=2
    )
    _ranged(pm, "--reps", 1, 100, 3, "timed repetitions", "best is kept")
    pm.add_argument("--quick", action="store_true", help="skip T = 1024")


def _register_sweep(bsub) -> None:
    import os

    MAX_WORKERS = max(1, os.cpu_count() or 1) * 2  # worker processes beyond the cores add nothing
    pw = _bench(
        bsub,
        "sweep",
        _cmd_sweep,
        "cells per second of the experiment runner's executors (in-process, pool, Dask)",
    )
    # bounded: every cell is a record in memory and every worker a process (~250 MB)
    _ranged(pw, "--cells", 1, 100_000, 64, "cells in the grid")
    _ranged(pw, "--cell-ms", 1, 60_000, 20, "milliseconds of work per cell")
    _ranged(pw, "--workers", 1, MAX_WORKERS, 2, "pool and Dask worker processes")


def _register_verify(bsub) -> None:
    from ._options import add_json

    pv = bsub.add_parser(
        "verify",
        help="wall and CPU time of `verify` from scratch (no cache), with the machine's load",
    )
    pv.add_argument(
        "--profile",
        default="quick",
        choices=["smoke", "quick", "full"],
        help="verify profile to time: smoke, quick or full (default quick)",
    )
    add_json(pv)
    pv.set_defaults(func=_cmd_verify)


def _register_search(bsub) -> None:
    from .._cliargs import count
    from ._options import add_seed

    ps = _bench(
        bsub,
        "search",
        _cmd_search,
        "sup_error against cases with exactly known worst errors (ratio found/known, goal >= 0.95)",
        threads=2,
    )
    ps.add_argument("--budget", type=count, default=4096, help="sup_error budget (default 4096)")
    add_seed(ps, "the search")
    ps.add_argument("--only", help=_ONLY_HELP)
    ps.add_argument(
        "--no-upper",
        action="store_true",
        help="skip the certified upper bracket (it takes up to 10 s per small case)",
    )


def _register_bracket(bsub) -> None:
    pb = _bench(
        bsub,
        "bracket",
        _cmd_bracket,
        "certified upper bracket vs the known worst case and interval propagation "
        "(found/certified, seconds; goal: within 2x at T = 1024 in <= 60 s)",
        threads=2,
    )
    pb.add_argument("--only", help=_ONLY_HELP)
    from ..bench.bracket import FRONTIER_BOXES

    pb.add_argument(
        "--frontier",
        action="store_true",
        help="also the certified frontier of the constructions with a bracket (HC-L9, IF-K1, "
        "IF-K2, IF-K3, ...): the largest T certified within "
        f"{FRONTIER_BOXES} box evaluations per T (structured routes have no T limit; about 40 "
        "s more on 2 cores)",
    )


def _register_ident(bsub) -> None:
    from .._cliargs import nonneg_int

    pi = _bench(
        bsub,
        "identifiability",
        _cmd_ident,
        "structured rank certificate vs dense Jacobian + SVD (time, peak memory)",
        threads=2,
    )
    pi.add_argument(
        "--dense-max-E",
        type=nonneg_int,
        default=32,
        help="largest width for the dense baseline (E = 64 takes very long)",
    )
    pi.add_argument(
        "--gpt2",
        type=nonneg_int,
        nargs="+",
        metavar="E",
        default=None,
        help="also time the structured method on random Hugging Face GPT-2 attention layers of "
        "these widths, H = 4 (hf extra; E = 64 takes about a minute)",
    )
    pi.add_argument(
        "--gpt2-until",
        action="store_true",
        help="also the cost curve: random GPT-2 layers of widths E = 64, 96, 128, ... (H = 4) "
        "until a layer would need more than --max-gb (estimated before it is built) or took "
        "more than --max-seconds (hf extra; E = 64 and 96 took about 11 minutes on 2 busy CPUs)",
    )
    _budget_option(
        pi,
        "--max-gb",
        "GiB",
        "GB",
        f"per-layer memory cap in GiB (2^30 bytes) of --gpt2-until and --gpt2 (default "
        f"{CURVE_MAX_GB:g})",
    )
    _budget_option(
        pi,
        "--max-seconds",
        "seconds",
        "S",
        f"--gpt2-until stops after a layer that took longer (default {CURVE_MAX_SECONDS:g}); "
        "it decides only where the table stops",
    )


def _budget_option(q, option, unit, metavar, help) -> None:
    """A per-layer budget of ``bench identifiability``: a finite number > 0 of ``unit``, default
    None (the curve's own)."""
    q.add_argument(option, type=_budget(unit), default=None, metavar=metavar, help=help)


def _budget(unit):
    """The parser of a per-layer budget in ``unit``: a finite number > 0, else argparse's error."""
    import argparse

    def parse(text) -> float:
        try:
            v = float(str(text).strip())
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(
                f"must be a finite number > 0 ({unit} per layer; got {text!r})"
            )
        return v

    parse.__name__ = "budget"
    return parse


def _register_train(bsub) -> None:
    from ._options import add_seed

    pt = _bench(
        bsub,
        "train",
        _cmd_train,
        "training steps/s of approxtheory.train vs a plain "
        "nanoGPT-style SDPA loop (ratio, goal >= 0.9)",
        threads=1,
        note=": least disturbed on a shared machine",
    )
    _ranged(pt, "--steps", 1, 10_000, 40, "steps per timed round")
    _ranged(pt, "--rounds", 1, 100, 6, "alternating rounds")
    _ranged(pt, "--warmup", 0, 10_000, 10, "untimed steps of each loop first")
    add_seed(pt, "the data and weights")
    pt.add_argument(
        "--gated",
        action="store_true",
        help="instead: CPU seconds per head-count model (T = 8, 16) that passes the training-"
        "adequacy gate, the reference engine and 16,000-step recipe against the fast engine "
        "and the decisive recipe (about 8 CPU-minutes)",
    )
    pt.add_argument(
        "--explain",
        action="store_true",
        help="with --gated: instead of the benchmark, profile where a training step's CPU goes "
        "for each engine (torch.profiler: matmul, softmax, elementwise, optimizer, data, other; "
        "operator calls per step) and split the gated ratio into steps x per-step cost (about "
        "a CPU-minute)",
    )
    pt.add_argument(
        "--fraction",
        type=_fraction,
        default=1.0,
        metavar="F",
        help="with --gated: run this fraction (0 < F <= 1) of each recipe's steps (to try the "
        "plumbing; the figures are then not the benchmark's)",
    )


def _register_threads(bsub) -> None:
    ph = _bench(
        bsub,
        "threads",
        _cmd_threads,
        "construct hc_k1 and the IF-T2 rate test at the default thread policy, 1 thread "
        "and all cores (wall and CPU seconds, load average, default/best; goal <= 1.1)",
    )
    ph.add_argument(
        "--workload",
        choices=["construct", "rate-test", "all"],
        default="all",
        help="`construct hc_k1 --gate -1 --json`, the written IF-T2 rate test, or both "
        "(default all)",
    )
    _ranged(
        ph,
        "--repeat",
        1,
        100,
        3,
        "runs of each workload at each setting",
        "default 3; medians reported",
    )
    _ranged(
        ph,
        "--budget",
        1,
        1_000_000,
        None,
        "the rate test's --approxtheory-budget",
        "default: the plugin's, 256",
    )
    _ranged(ph, "--timeout", 1, 86_400, 1800, "seconds one run may take")
    ph.add_argument("--quiet", action="store_true", help="no line per run on stderr")


_ONLY_HELP = "cases whose label contains this text, or a construction"
