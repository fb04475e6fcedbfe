"""``approxtheory advise``: a head and width allocation per layer derived from the five papers,
every decision cited with its claim's regime status and committed verdict
(:mod:`approxtheory.advise`).

``approxtheory advise --layers 12 --d-model 768 --heads 12 --T 1024 --task retrieval:D=4``
prints the advised layers, the decisions with their claims, and the candidates (uniform, Prism,
the advice, the user's schedule files) side by side with their exact cost and the consequences
the catalogue states. ``--json`` prints the same as data; ``--out DIR`` writes ``advice.json``,
``advice.txt`` and ``advice.png``; ``--to hf|tl`` (with ``--out``) writes the advised allocation
as the shared model's configuration through :func:`approxtheory.interop.export` (random
weights), refused with the reason where the target cannot express it. ``--train quick|full``
(retrieval tasks only) also trains the candidates paired on the task's surrogate
(:mod:`approxtheory.advise_train`) and reports the advice's difference with an interval. Bad
input is one line on stderr and exit 2, before anything is counted or trained.
"""

from __future__ import annotations

import json

__all__ = ["register"]


def _export(a, target: str, out) -> str:
    """Write the advised allocation through the existing export; the refusal (ConfigError,
    from the configuration alone) comes before a model is built."""
    from pathlib import Path

    import torch

    from .. import schedules as S
    from ..interop import export
    from ..interop_targets import refuse
    from ..model import Transformer

    heads = tuple(x.heads for x in a.layers)
    sched = S.Schedule(heads, a.inputs["d_model"], a.inputs["heads"], "custom")
    cfg = S.model_config(sched, kv_groups=[x.kv_heads for x in a.layers])
    refuse(target, cfg)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Transformer(cfg)
    dest = Path(out) / f"model-{target}"
    made = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        export(model, to=target, out=dest, check=False)
    except BaseException:
        if made and not any(dest.iterdir()):  # a refusal (the extra not installed) leaves nothing
            dest.rmdir()
        raise
    return str(dest)


def _cmd(args) -> int:
    import sys
    from dataclasses import replace
    from pathlib import Path

    from ..advise import allocate
    from ..advise_train import DEFAULT_OUT, TRAIN_SEEDS, check_train, validate
    from ..errors import ConfigError
    from ..io import atomic_write_json, atomic_write_text

    if args.to is not None and args.out is None:
        raise ConfigError("--to needs --out DIR (the folder the configuration is written to)")
    check_train(args.task, args.train)  # before anything is built
    if args.out is not None:  # a folder that cannot be made is refused before any training
        try:
            Path(args.out).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"--out {args.out!r} cannot be created: {e.strerror}") from None
    a = allocate(
        args.layers,
        args.d_model,
        args.heads,
        args.T,
        task=args.task,
        constraints=args.constrain,
        candidates=[c.strip() for c in args.candidates.split(",") if c.strip()],
    )
    exported = None
    if args.to is not None:  # a refusal comes before any training
        exported = {"target": args.to, "path": _export(a, args.to, Path(args.out))}
    if args.train is not None:
        cache = DEFAULT_OUT if args.out is None else Path(args.out) / "train"
        seeds = ",".join(map(str, TRAIN_SEEDS[args.train]))
        print(
            f"advise: training the candidates paired on the retrieval surrogate (--train "
            f"{args.train}, seeds {seeds}; cells cached in {cache})",
            file=sys.stderr,
        )
        a = replace(a, validation=validate(a, args.train, out=cache))
    data = a.to_dict()
    if exported is not None:
        data["export"] = exported
    if args.out is not None:
        out = Path(args.out)
        from .._advise_text import plot

        atomic_write_json(out / "advice.json", data)
        atomic_write_text(out / "advice.txt", a.table() + "\n")
        plot(a, out / "advice.png")
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(a.table())
        if args.out is not None:
            print(f"wrote {Path(args.out) / 'advice.json'}, advice.txt, advice.png")
        if "export" in data:
            print(f"exported to {args.to}: {data['export']['path']}")
    return 0


def register(p) -> None:
    from .._cliargs import integer, out_dir, pos_int

    p.add_argument("--layers", type=pos_int, required=True, help="number of layers L")
    p.add_argument("--d-model", dest="d_model", type=pos_int, required=True, help="model width")
    p.add_argument(
        "--heads", type=pos_int, required=True, help="baseline head count h_base (divides d-model)"
    )
    p.add_argument("--T", type=integer, required=True, help="sequence length T (> 0)")
    p.add_argument("--task", default="lm", help="retrieval:D=N, kth:k=N or lm (default lm)")
    p.add_argument(
        "--constrain",
        action="append",
        metavar="NAME=VALUE",
        help="head_dims=64|128|256 (per-head widths the kernels support) or kv_heads=G "
        "(shared KV heads per layer); repeatable",
    )
    p.add_argument(
        "--candidates",
        default="uniform,prism",
        help="schedules compared with the advice: uniform, prism and/or schedule JSON files "
        '{"heads": [...], "kv_heads": [...]} (default uniform,prism)',
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", type=out_dir, help="write advice.json, advice.txt and advice.png here")
    p.add_argument(
        "--to",
        choices=["hf", "tl"],
        help="also export the advised configuration (needs --out; refused where the target "
        "cannot express it)",
    )
    p.add_argument(
        "--train",
        choices=["quick", "full"],
        help="also train the candidates paired on the task's surrogate (retrieval:D=N only: the "
        "head-count task model) and report the advice's difference with an interval; quick: "
        "the quick recipe, 6 seeds (under a minute of one CPU thread), full: the decisive "
        "recipe, 8 seeds (minutes); cells cached in DIR/train with --out, else results/advise",
    )
    p.set_defaults(func=_cmd)
