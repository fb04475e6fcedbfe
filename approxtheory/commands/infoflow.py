"""``approxtheory infoflow``: the InfoFlow calculus (:mod:`approxtheory.infoflow`) on the command
line: ``predict`` (the rate an architecture gets on a retrieval task, and the step that costs the
most), ``tasks`` (the retrieval programs and their arguments) and ``draw`` (a figure of the
information sets and blocks per layer, the dominant step marked)."""

from __future__ import annotations

from typing import Any

__all__ = ["register"]

#: the figure formats ``infoflow draw --out`` writes, by file extension (no extension: PNG)
FIGURE_FORMATS = ("png", "pdf", "svg", "eps", "jpg", "jpeg")


def _figure_format(path: str) -> str:
    """The figure format for ``path``: its extension, or PNG when it has none."""
    from pathlib import Path

    suffix = Path(path).suffix
    return suffix[1:].lower() if suffix else "png"


def _figure_file(text) -> str:
    """``--out``: a writable file path whose extension is a figure format (or none: PNG)."""
    import argparse

    from .._cliargs import out_file

    path = out_file(text)
    if _figure_format(path) not in FIGURE_FORMATS:
        allowed = ", ".join(f".{f}" for f in FIGURE_FORMATS)
        raise argparse.ArgumentTypeError(
            f"has an unknown figure extension (got {text!r}); allowed: {allowed}, or no "
            "extension (a PNG file of exactly that name)"
        )
    return path


def _predict(args):
    from ..infoflow import Arch, make_task, parse_heads, parse_task_args, predict_rate

    task = make_task(args.task, **parse_task_args(args.task_arg))
    arch = Arch(parse_heads(args.heads), pos_enc=args.pos_enc)
    return predict_rate(arch, task, decode_law=args.decode_law)


def _cmd_predict(args) -> int:
    import json

    from ..infoflow import info_table

    p = _predict(args)
    at_T = None if args.T is None else p.alpha_at(T=args.T)
    if args.json:
        out = p.to_dict()
        if at_T is not None:
            out["T"] = args.T
            out["alpha_at_T"] = str(at_T)
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    args_txt = ", ".join(f"{k}={v}" for k, v in p.task.args)
    print(f"task {p.task.name}{f'({args_txt})' if args_txt else ''}: {p.task.description}")
    print(f"architecture {p.arch.label()}, decode law {p.decode_law}")
    print(f"  rate:          N(ε) ~ ε^-({p.alpha})")
    if at_T is not None:
        print(f"  at T={args.T}:       ε^-({at_T})")
    print(f"  depends on T:  {'yes' if p.depends_on_T else 'no'}")
    print(f"  dominant step: {p.dominant.describe()}")
    print("  schedule:")
    for pl in p.schedule:
        head = f"head {pl.head}" if pl.head is not None else "shared head"
        print(f"    layer {pl.layer} {head}: {pl.node} ({pl.mode}, query {pl.query})")
    if p.fallbacks:
        print("  fallbacks:")
        for f in p.fallbacks:
            print(f"    {f.node} -> GIA at layer {f.layer}: {f.reason}")
    print("  information sets ([...]xN: a coupled block of N positions):")
    for layer, pos, blocks in info_table(p):
        print(f"    I({pos}, {layer}) = {blocks}")
    print(f"  provenance: {p.provenance['decode_law']}; {p.provenance['calculus']}")
    if "caveat" in p.provenance:
        print(f"  caveat: {p.provenance['caveat']}")
    return 0


def _cmd_tasks(args) -> int:
    import json

    from ..infoflow import TASKS

    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "description": spec.description,
            "args": {
                k: {"min": lo, "max": hi, "default": default}
                for k, (lo, hi, default) in spec.params.items()
            },
            "source": spec.build(**{k: v[2] for k, v in spec.params.items()}).source,
        }
        for name, spec in TASKS.items()
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for r in rows:
        a = ", ".join(
            f"{k}={v['min']}..{v['max'] if v['max'] is not None else ''} (default {v['default']})"
            for k, v in r["args"].items()
        )
        print(f"{r['name']:5} {r['description']}{f'  [{a}]' if a else ''}  ({r['source']})")
    return 0


def _cmd_draw(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = _predict(args)
    positions = list(p.info[0])
    fig, ax = plt.subplots(figsize=(2.8 * len(p.info), 0.9 + 1.1 * len(positions)))
    dom = p.dominant
    first = p.task.node(p.task.readout.inputs[0]).query if p.task.readout.inputs else "cls"
    out_pos = {"cls": "CLS", "tokens": "t", "last": "T"}[first]
    for layer, sets in enumerate(p.info):
        for row, pos in enumerate(positions):
            y = len(positions) - 1 - row
            blocks = sets[pos]
            text = (
                "\n".join(f"[{b.items}]×{b.size}" if b.coupled else b.items for b in blocks) or "∅"
            )
            if dom.kind == "readout":  # the read-out FFN reads its position after the last layer
                hot = layer == len(p.info) - 1 and pos == out_pos
            else:
                hot = dom.layer == layer and any(dom.node in b.source for b in blocks)
            ax.text(
                layer,
                y,
                text,
                ha="center",
                va="center",
                fontsize=8,
                bbox={
                    "boxstyle": "round",
                    "fc": "#fdd" if hot else "#eef",
                    "ec": "red" if hot else "grey",
                    "lw": 2 if hot else 0.5,
                },
            )
    ax.set_xticks(range(len(p.info)), [f"layer {i}" for i in range(len(p.info))])
    ax.set_yticks(range(len(positions)), list(reversed(positions)))
    ax.set_xlim(-0.6, len(p.info) - 0.4)
    ax.set_ylim(-0.7, len(positions) - 0.3)
    ax.set_title(
        f"{p.task.name} on {p.arch.label()}: N ~ ε^-({p.alpha})\n"
        f"dominant: {dom.kind} {dom.node} ({dom.mode}, ε^-({dom.exponent}))",
        fontsize=9,
    )
    fig.tight_layout()
    # rendered in memory, then written atomically (a temporary file in the same folder renamed
    # over the target): a failed write (a full disk) leaves the old file or none, never a
    # truncated figure; the file written is exactly --out (no extension: PNG under that name)
    import io as _io

    from ..io import atomic_write_bytes

    buf = _io.BytesIO()
    try:
        fig.savefig(buf, format=_figure_format(args.out))
    finally:
        plt.close(fig)
    atomic_write_bytes(args.out, buf.getvalue())
    print(f"wrote {args.out}")
    return 0


def register(p) -> None:
    from .._cliargs import pos_int

    acts = p.add_subparsers(dest="action", metavar="ACTION")

    def common(q) -> None:
        q.add_argument("--task", required=True, help="a task of `approxtheory infoflow tasks`")
        q.add_argument(
            "--task-arg",
            action="append",
            default=[],
            metavar="K=V",
            help="a task argument (repeatable), e.g. k=2",
        )
        q.add_argument("--heads", required=True, help="heads per layer, e.g. 1,1")
        q.add_argument("--pos-enc", action="store_true", help="with positional encoding")
        q.add_argument(
            "--decode-law",
            default="dE",
            choices=["dE", "lipschitz"],
            help="cost of decoding a coupled block: IF-T4's |I|d/E (default) or IF-R3's |I|d",
        )

    q = acts.add_parser("predict", help="predicted rate, schedule, fallbacks and dominant step")
    common(q)
    q.add_argument("--T", type=pos_int, default=None, help="also give the exponent at this T")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(func=_cmd_predict)

    q = acts.add_parser("tasks", help="the retrieval programs and their arguments")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(func=_cmd_tasks)

    q = acts.add_parser("draw", help="figure of the information sets per layer")
    common(q)
    q.add_argument(
        "--out",
        type=_figure_file,
        default="infoflow.png",
        help=f"the figure file: .{', .'.join(FIGURE_FORMATS)}, or no extension (PNG)",
    )
    q.set_defaults(func=_cmd_draw)
