"""``approxtheory schedule prism|check|compare``: per-layer head schedules (Prism, arXiv
2606.27449) from :mod:`approxtheory.schedules`.

* ``schedule prism --d 768 --layers 12 --h-base 12`` (or ``--scale small``): the staircase's heads
  and head dims per layer; the defaults give Table 4's schedule at each of the paper's three
  (d, L, h_base); ``--stage-dims 256,128,96 --block 2`` override the stages.
* ``schedule check --heads 3,3,6,6,8,8,12,12,12,12,12,12 --d 768``: the five rules; a broken one
  is one line naming it, exit 2.
* ``schedule compare A B --d 768 --layers 12 --h-base 12``: parameters (from the built modules),
  matmul FLOPs with attention's QKᵀ and AV counted, softmax work, each checked per layer against
  the catalogue's PR-N1/PR-N2, and the measured forward+backward tokens/s of both with the ratio.
  A and B are ``uniform``, ``prism``, ``decreasing`` or head counts (``3,3,6,6`` or ``3x2,6x2``).

Sizes are refused before anything is built, one line and exit 2: more than
``schedules.MAX_LAYERS`` layers (``--layers``, ``--heads 12x99999999999``), a width above
``schedules.MAX_WIDTH``, tensors torch cannot size (``--T``, ``--batch``, ``--ffn``), timing whose
memory or estimated time exceeds the limits (``--reps``), and ``--threads`` above
``_cliargs.MAX_THREADS`` (256, or four per CPU beyond 64 CPUs).
"""

from __future__ import annotations

import json

__all__ = ["register"]


def _dims(text: str) -> tuple[int, ...]:
    from .._cliargs import _Err

    try:
        out = tuple(int(p) for p in str(text).split(","))
    except ValueError:
        raise _Err(f"must be positive integers separated by commas (got {text!r})") from None
    if not out or any(v < 1 for v in out):
        raise _Err(f"must be positive integers separated by commas (got {text!r})")
    return out


def _shape(args) -> tuple[int, int, int | None]:
    """(d, L, h_base) from --scale and/or --d/--layers/--h-base (explicit values must agree)."""
    from ..errors import ConfigError
    from ..schedules import PAPER_SCALES

    d, L, hb = args.d, args.layers, args.h_base
    if args.scale is not None:
        sd, sL, shb = PAPER_SCALES[args.scale]
        for opt, given, want in (("--d", d, sd), ("--layers", L, sL), ("--h-base", hb, shb)):
            if given is not None and given != want:
                raise ConfigError(
                    f"{opt} {given} contradicts --scale {args.scale} ({opt} {want}); give one"
                )
        return sd, sL, shb
    missing = [o for o, v in (("--d", d), ("--layers", L)) if v is None]
    if missing:
        raise ConfigError(f"needs {' and '.join(missing)} (or --scale {'|'.join(PAPER_SCALES)})")
    return d, L, hb


def _need_hbase(hb: int | None, what: str) -> int:
    from ..errors import ConfigError

    if hb is None:
        raise ConfigError(f"{what} needs --h-base (or --scale)")
    return hb


def _table(s) -> str:
    lines = [f"{'layer':>5}  {'heads':>5}  {'head dim':>8}"]
    lines += [f"{i + 1:>5}  {h:>5}  {dh:>8}" for i, (h, dh) in enumerate(zip(s.heads, s.head_dims))]
    return "\n".join(lines)


def _cmd_prism(args) -> int:
    from .. import schedules as S

    d, L, hb = _shape(args)
    hb = _need_hbase(hb, "schedule prism")
    s = S.prism(d, L, hb, stage_dims=args.stage_dims, block=args.block)
    stages, block = S.default_stages(d, L, hb)
    origin = {
        "stage_dims": list(args.stage_dims or stages),
        "block": args.block or block,
        "defaults": "derived rule (schedules.default_stages)"
        if args.stage_dims is None and args.block is None
        else "given",
    }
    scale = next((k for k, v in S.PAPER_SCALES.items() if v == (d, L, hb)), None)
    if args.json:
        print(json.dumps({**s.to_dict(), **origin, "paper_scale": scale}, indent=2))
        return 0
    print(
        f"Prism schedule, d={d}, L={L}, h_base={hb}: stages {origin['stage_dims']} x "
        f"{origin['block']} layers ({origin['defaults']})"
        + (f"; the paper's {scale} model" if scale else "")
    )
    print("heads:     " + ",".join(map(str, s.heads)))
    print("head dims: " + ",".join(map(str, s.head_dims)))
    print(_table(s))
    return 0


def _cmd_check(args) -> int:
    from .. import schedules as S

    heads = S.parse_heads(args.heads)
    if args.layers is not None and len(heads) != args.layers:
        from ..errors import ConfigError

        raise ConfigError(f"--heads gives {len(heads)} layers but --layers is {args.layers}")
    s = S.custom(heads, args.d, args.h_base)
    if args.json:
        print(json.dumps({**s.to_dict(), "rules": list(S.RULES), "ok": True}, indent=2))
        return 0
    print(
        f"ok: {s.L} layers at d={s.d}, h_base={s.h_base} satisfy every rule ({', '.join(S.RULES)})"
    )
    print("head dims: " + ",".join(map(str, s.head_dims)))
    return 0


def _resolve(spec: str, d: int, L: int, hb: int | None, stages, block):
    from .. import schedules as S
    from ..errors import ConfigError

    if spec in ("uniform", "prism", "decreasing"):
        h = _need_hbase(hb, f"schedule {spec!r}")
        if spec == "uniform":
            return S.uniform(d, L, h)
        return getattr(S, spec)(d, L, h, stage_dims=stages, block=block)
    if spec and spec[0].isdigit():
        heads = S.parse_heads(spec)
        if len(heads) != L:
            raise ConfigError(f"schedule {spec!r} has {len(heads)} layers but --layers is {L}")
        S.validate(heads, d, rules=("divisibility",))
        return S.Schedule(heads, d, hb if hb is not None else heads[-1], "custom")
    raise ConfigError(
        f"unknown schedule {spec!r}: use uniform, prism, decreasing or head counts such as "
        f"3,3,6,6 or 3x2,6x2,12x8"
    )


def _max_threads() -> int:
    """The most torch threads ``--threads`` may ask for (libgomp aborts the process on
    thousands): ``_cliargs.MAX_THREADS`` where it is defined, else the same rule, 256 or four
    per CPU on a machine with more than 64."""
    import os

    from .. import _cliargs

    return int(getattr(_cliargs, "MAX_THREADS", max(256, 4 * (os.cpu_count() or 1))))


def _cmd_compare(args) -> int:
    from .. import schedules as S
    from ..errors import ConfigError

    if args.threads > _max_threads():
        raise ConfigError(f"--threads must be from 1 to {_max_threads()} (got {args.threads})")
    d, L, hb = _shape(args)
    if hb is None:  # a custom schedule gives h_base by its last layer
        custom = [S.parse_heads(x) for x in (args.a, args.b) if x[:1].isdigit()]
        hb = custom[0][-1] if custom else None
    pair = [_resolve(x, d, L, hb, args.stage_dims, args.block) for x in (args.a, args.b)]
    counts = [S.count(s, T=args.T, batch=args.batch, ffn=args.ffn) for s in pair]
    cats = [S.catalogue_counts(s, args.T, args.batch, ffn=args.ffn) for s in pair]
    agree = [_catalogue_agrees(c, k) for c, k in zip(counts, cats)]
    thr = None if args.no_throughput else _compare_throughput(args, pair)
    rules = [[r for r, _ in S.violations(s.heads, d, s.h_base)] for s in pair]
    out = {
        "d": d,
        "layers": L,
        "h_base": hb,
        "ffn": counts[0]["ffn"],
        "T": args.T,
        "batch": args.batch,
        "schedules": [s.to_dict() for s in pair],
        "rules_broken": rules,
        "params": [c["params"]["total"] for c in counts],
        "params_equal": counts[0]["params"]["total"] == counts[1]["params"]["total"],
        "matmul_flops_fwd": [c["fwd_flops"] for c in counts],
        "matmul_flops_fwd_bwd": [c["fwd_bwd_flops"] for c in counts],
        "matmul_flops_equal": counts[0]["fwd_bwd_flops"] == counts[1]["fwd_bwd_flops"]
        and counts[0]["fwd_flops_per_layer"] == counts[1]["fwd_flops_per_layer"],
        "softmax_scores_fwd": [c["softmax_scores"] for c in counts],
        "catalogue_agrees": agree,
        "throughput": thr,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    _print_compare(args, out, pair)
    return 0


def _catalogue_agrees(c: dict, k: dict) -> dict:
    """Whether a schedule's built counts ``c`` agree with the catalogue's ``k`` (PR-N1, PR-N2)."""
    return {
        "N_attn": c["params"]["attn"] == k["attn"],
        "N_mlp": c["params"]["ffn"] == k["ffn"],
        "F_layer": c["fwd_flops_per_layer"] == k["fwd_flops"],
        "F_softmax": c["softmax_scores_per_layer"] == k["softmax"],
    }


def _compare_throughput(args, pair) -> dict:
    """The measured forward+backward throughput of A and B, with an A/A control."""
    import torch

    from .. import schedules as S
    from ..train import resolve_device
    from ._options import forward

    device = str(resolve_device(args.device))
    torch.set_num_threads(args.threads)
    # A, B and a second, identical copy of A in the same interleaved rounds: A'/A is the
    # run-to-run spread of this measurement (its noise floor), the scale B/A is read on
    thr = S.throughput(
        [*pair, pair[0]],
        **forward(args, "T", "batch", "reps", "warmup", "ffn", "seed"),
        device=device,
    )
    aa = thr["ratio_to_first"][2]
    thr["control"] = {
        "what": "a second, identical copy of A timed in the same rounds",
        "tokens_per_s": thr["tokens_per_s"][2],
        "ratio_to_first": aa,
    }
    for key in ("tokens_per_s", "median_step_s", "ratio_to_first"):
        thr[key] = thr[key][:2]
    thr["within_noise"] = abs(thr["ratio_to_first"][1] - 1) <= abs(aa - 1)
    return thr


def _print_compare(args, out: dict, pair) -> None:
    """The table of ``schedule compare`` (without ``--json``)."""
    for n, s, r in zip(("A", "B"), pair, out["rules_broken"], strict=True):
        print(
            f"{n} ({s.kind}): heads {','.join(map(str, s.heads))}"
            + (f"  [breaks: {', '.join(r)}]" if r else "")
        )
    print(
        f"shared model: d={out['d']}, L={out['layers']}, SwiGLU f={out['ffn']}, attention "
        f"biases, RoPE, causal; counted at T={args.T}, batch {args.batch} (meta device, explicit "
        "attention path)"
    )

    def row(label, vals, equal=None):
        tail = "" if equal is None else ("  equal" if equal else "  DIFFER")
        print(f"{label:<36} A {vals[0]:>16,}  B {vals[1]:>16,}{tail}")

    row("parameters", out["params"], out["params_equal"])
    row("matmul FLOPs fwd (QKᵀ, AV counted)", out["matmul_flops_fwd"], out["matmul_flops_equal"])
    row("matmul FLOPs fwd+bwd", out["matmul_flops_fwd_bwd"], out["matmul_flops_equal"])
    sm = out["softmax_scores_fwd"]
    row("softmax scores fwd (h·T² per layer)", sm)
    print(f"{'':<36} B/A {sm[1] / sm[0]:.3f} (the one term that scales with h)")
    agree = out["catalogue_agrees"]
    ok = all(all(a.values()) for a in agree)
    print(
        "catalogue (PR-N1 N_attn, N_mlp; PR-N2 F_layer, F_softmax) per layer: "
        + ("every layer of both agrees" if ok else f"DISAGREES: {agree}")
    )
    if out["throughput"] is not None:
        _print_throughput(out["throughput"])


def _print_throughput(thr: dict) -> None:
    """The measured throughput lines of ``schedule compare``: A, B, the A/A control, the setup."""
    tps = thr["tokens_per_s"]
    print(
        f"{'throughput fwd+bwd (measured)':<36} A {tps[0]:>12,.1f} tok/s  "
        f"B {tps[1]:>12,.1f} tok/s  B/A {thr['ratio_to_first'][1]:.3f}"
    )
    c = thr["control"]
    print(
        f"{'  A/A control (identical copy of A)':<36} A' {c['tokens_per_s']:>11,.1f} tok/s  "
        f"A'/A {c['ratio_to_first']:.3f}: B/A "
        + (
            "is within this spread (not distinguishable here)"
            if thr["within_noise"]
            else "differs from 1 by more than this spread (one A/A pair: a rough floor)"
        )
    )
    print(
        f"  {thr['device']}, {thr['threads']} thread(s), float32, fused SDPA, T={thr['T']}, "
        f"batch {thr['batch']}, median of {thr['reps']} interleaved rounds after "
        f"{thr['warmup']} warm-up; a measurement of this machine, not a property of "
        f"the schedule"
    )


def register(p) -> None:
    from .._cliargs import SEED_HELP, count, nonneg_int, pos_int, seed, threads
    from ..schedules import PAPER_SCALES

    ssub = p.add_subparsers(dest="schedule_command", metavar="ACTION")

    def shape_args(q, layers_help="number of layers L"):
        q.add_argument("--scale", choices=list(PAPER_SCALES), help="the paper's (d, L, h_base)")
        q.add_argument("--d", type=pos_int, help="model width d")
        q.add_argument("--layers", type=pos_int, help=layers_help)
        q.add_argument("--h-base", dest="h_base", type=pos_int, help="baseline head count")

    def stage_args(q):
        q.add_argument(
            "--stage-dims",
            type=_dims,
            help="per-head widths of the pre-baseline stages, "
            "widest first (default: the rule of schedules.default_stages)",
        )
        q.add_argument("--block", type=pos_int, help="layers per stage (default max(2, L // 8))")

    pp = ssub.add_parser("prism", help="the Prism staircase: heads and head dims per layer")
    shape_args(pp)
    stage_args(pp)
    pp.add_argument("--json", action="store_true", help="machine-readable output")
    pp.set_defaults(func=_cmd_prism)

    pc = ssub.add_parser("check", help="check a schedule against the five rules")
    pc.add_argument("--heads", required=True, help="head counts per layer: 3,3,6,6 or 3x2,6x2")
    pc.add_argument("--d", type=pos_int, required=True, help="model width d")
    pc.add_argument("--h-base", dest="h_base", type=pos_int, help="default: the last layer's")
    pc.add_argument("--layers", type=pos_int, help="expected number of layers")
    pc.add_argument("--json", action="store_true", help="machine-readable output")
    pc.set_defaults(func=_cmd_check)

    pm = ssub.add_parser(
        "compare", help="parameters, matmul FLOPs and measured throughput of two schedules"
    )
    pm.add_argument("a", metavar="A", help="uniform, prism, decreasing or head counts")
    pm.add_argument("b", metavar="B", help="uniform, prism, decreasing or head counts")
    shape_args(pm)
    stage_args(pm)
    pm.add_argument("--ffn", type=pos_int, help="SwiGLU hidden width (default int(8d/3))")
    pm.add_argument("--T", type=pos_int, default=32, help="sequence length (default 32)")
    pm.add_argument("--batch", type=pos_int, default=1, help="batch size (default 1)")
    pm.add_argument("--reps", type=count, default=3, help="timed rounds (default 3)")
    pm.add_argument("--warmup", type=nonneg_int, default=1, help="warm-up passes (default 1)")
    pm.add_argument(
        "--threads",
        type=threads,
        default=1,
        help=f"torch threads, from 1 to {_max_threads()} (default 1)",
    )
    pm.add_argument(
        "--seed",
        type=seed,
        default=0,
        help=f"seed of the random weights and inputs timed: {SEED_HELP} (default 0)",
    )
    pm.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    pm.add_argument("--no-throughput", action="store_true", help="counts only, no timing")
    pm.add_argument("--json", action="store_true", help="machine-readable output")
    pm.set_defaults(func=_cmd_compare)
