"""The advice of :mod:`approxtheory.advise` as text (:func:`render`) and as a figure
(:func:`plot`): cost against the predicted consequence per candidate, and heads per layer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .advise import Allocation, Candidate

__all__ = ["render", "plot"]

#: the consequences shown in the candidates table, in order
_SHOWN = (
    "parameters",
    "matmul FLOPs fwd",
    "softmax scores",
    "cost vs uniform",
    "InfoFlow rate",
    "head-count law (layer 1)",
    "unidentified fraction",
)


def _layers(a: Allocation) -> list[str]:
    lines = [f"{'layer':>5}  {'heads':>5}  {'head dim':>8}  {'kv heads':>8}"]
    lines += [
        f"{i + 1:>5}  {la.heads:>5}  {la.head_dim:>8}  {la.kv_heads:>8}"
        for i, la in enumerate(a.layers)
    ]
    return lines


def _decisions(a: Allocation) -> list[str]:
    lines = []
    for d in a.decisions:
        lines.append(f"* {d.rule}: {d.decision}")
        for c in d.citations:
            lines.append(f"    - {c.line()}")
        if d.default:
            lines.append(f"    theory silent -> default: {d.default}")
        for f in d.flags:
            lines.append(f"    FLAG: {f}")
    return lines


def _candidates(a: Allocation) -> list[str]:
    lines = []
    for c in a.candidates:
        kv = (
            ""
            if all(x.kv_heads == x.heads for x in c.layers)
            else ("  kv " + ",".join(str(x.kv_heads) for x in c.layers))
        )
        lines.append(f"{c.name}: heads {','.join(map(str, c.heads))}{kv}")
        for what in _SHOWN:
            q = c.consequence(what)
            if q is not None:
                lines.append(f"    {what:<26} {q.value}  [{', '.join(q.claims)}]")
        lines.append(f"    {'KV-cache bytes / sequence':<26} {c.cost['kv_cache_bytes']:,}")
        lines.append(f"    {'Prism rules broken':<26} {'; '.join(c.rules_broken) or 'none'}")
    return lines


def render(a: Allocation) -> str:
    """The advice as plain text."""
    i = a.inputs
    head = (
        f"advice for L={i['layers']}, d_model={i['d_model']}, h_base={i['heads']}, T={i['T']}, "
        f"task {i['task']}"
    )
    out = [
        head,
        "",
        "advised allocation:",
        *_layers(a),
        "",
        "decisions (claim [provenance]: regime status at these sizes; committed verdict):",
        *_decisions(a),
        "",
    ]
    out += ["candidates (exact counts: schedules.count on the shared model, meta device):"]
    out += _candidates(a)
    out += ["", *a.notes, f"findings: {a.findings}"]
    if a.flags:
        out += ["", f"{len(a.flags)} flagged rule(s):", *(f"  {f}" for f in a.flags)]
    if a.validation is None:
        out.append(
            "theory only: nothing was trained; the advice is what the cited statements imply at "
            "these sizes, not a measured improvement"
        )
    else:
        out += ["", *a.validation.lines()]
        out.append(
            "the trained difference is the surrogate's (the head-count task model), measured at "
            "its sizes; the decisions above are still what the cited statements imply at yours"
        )
    return "\n".join(out)


def _y(c: Candidate) -> tuple[float | None, str]:
    for what in ("InfoFlow rate", "head-count law (layer 1)"):
        q = c.consequence(what)
        if q is not None and q.number is not None:
            return q.number, "predicted exponent α of N(ε) ~ ε^-α (InfoFlow; IF-R4)"
    q = c.consequence("unidentified fraction")
    return (None if q is None else q.number), "unidentified fraction (ID-X4.8.1 / ID-GQA4.9)"


def plot(a: Allocation, path: Path | str) -> Path:
    """Two panels: each candidate's softmax work (the cost term that moves with the heads;
    PR-N2) against its predicted consequence, and its heads per layer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots.plan import STYLE

    with plt.style.context(str(STYLE)):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        ylabel = ""
        for c in a.candidates:
            y, ylabel = _y(c)
            if y is not None:
                ax1.plot(c.cost["softmax_scores"], y, "o", label=c.name)
        ax1.set_xlabel("softmax scores per sequence at T (PR-N2 F_softmax)")
        ax1.set_ylabel(ylabel, fontsize=8)
        ax1.legend(fontsize=8)
        n = len(a.candidates)
        w = 0.8 / n
        for j, c in enumerate(a.candidates):
            xs = [i + 1 + (j - (n - 1) / 2) * w for i in range(len(c.heads))]
            ax2.bar(xs, c.heads, width=w, label=c.name)
        ax2.set_xlabel("layer")
        ax2.set_ylabel("heads")
        ax2.legend(fontsize=8)
        how = "theory only" if a.validation is None else "prediction; trained: advice.txt"
        fig.suptitle(f"advice: {a.inputs['task']}, T={a.inputs['T']} ({how})", fontsize=9)
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, metadata={"Software": None})
        plt.close(fig)
    return out
