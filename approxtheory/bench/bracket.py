"""``approxtheory bench bracket [--json]``: the certified upper bracket against the known worst
case and against naive interval propagation, per case, in one run.

Example::

    >>> from approxtheory.bench.bracket import interval_baseline
    >>> from approxtheory.constructions import build
    >>> c = build("softmax_retrieval", T=8, beta=100.0)
    >>> round(interval_baseline(c.model, c.task), 6)     # [0, T] for a range of [0, 1]
    8.0

Per case: ``found`` (the largest error at an evaluated input, a lower bound on the supremum),
``certified`` (:func:`approxtheory.bounds.upper_bracket`, a sound upper bound), their ratio, the
seconds, the ``known`` worst case where one exists (the search panel's closed forms and
enumerations, :mod:`approxtheory.bench.search`, computed independently of the code under test)
and ``interval`` — the naive sound baseline: plain interval bound propagation of the model (each
softmax weight on its own interval, products of intervals) minus the target's interval, the
bound auto_LiRPA's IBP mode gives ([0, T] on softmax retrieval, whose true range is [0, 1]).
For the vertex enumeration of HC-K1 the "known" value is the maximum over {0, 1}^T, itself only
a lower bound on the supremum over the box (so certified/known may exceed 1 without a gap in
the bracket).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "BracketCase",
    "FrontierCase",
    "bracket_panel",
    "frontier_panel",
    "interval_baseline",
    "run_bracket_case",
    "run_frontier_case",
    "bench_bracket",
]

GOAL_RATIO = 2.0  # certified within 2x of the known worst case
GOAL_SECONDS = 60.0  # per case, on the 2-core reference machine


@dataclass
class BracketCase:
    label: str
    construction: str
    knobs: dict
    known: Callable | None  # construction -> known worst error (None: not known)
    how: str = ""


def bracket_panel() -> list[BracketCase]:
    """The cases: softmax retrieval up to T = 1024 and β = 1e4, HC-K1 (gate -1 and the
    HC-K1c gate -2) up to T = 128, the synthetic HC-K1 instance, and HC-L9 (generic path)."""
    from .search import hc_k1_cases, known_hc_l9, softmax_cases, synthetic_cases

    how = "max over the vertices {0,1}^T (a lower bound on the sup)"
    cases = [*softmax_cases(BracketCase), *hc_k1_cases(BracketCase, (8, 32, 128), how)]
    cases.append(
        BracketCase(
            "hc_k1c gate=-2 T=128 β=1e3", "hc_k1", {"T": 128, "beta": 1e3, "gate": -2.0}, None
        )
    )
    cases += synthetic_cases(BracketCase, "closed form on the feature interval")
    cases.append(
        BracketCase(
            "hc_k1_synthetic D=4 d=4 T=128 β=1e2",
            "hc_k1_synthetic",
            {"T": 128, "D": 4, "d": 4, "beta": 100.0},
            None,
        )
    )
    cases.append(
        BracketCase(
            "hc_l9 T=4 ε=0.25",
            "hc_l9",
            {"T": 4, "eps": 0.25},
            lambda c: known_hc_l9(4, 0.25),
            "closed form (1−1/T)/n_g",
        )
    )
    return cases


#: the frontier's budget per (case, T): box evaluations of the branch-and-bound (a work count,
#: never the clock), and the lengths tried, doubling from 2 until one is not certified
FRONTIER_BOXES = 4000
FRONTIER_TS = (2, 4, 8, 16, 32, 64)


@dataclass
class FrontierCase:
    """A verified-numeric construction outside the structured softmax-retrieval class: its
    frontier is the largest T of :data:`FRONTIER_TS` whose branch-and-bound bracket certifies the
    claimed bound within the budget (every smaller T certified too)."""

    label: str
    construction: str
    claim: str
    knobs: dict


def frontier_panel() -> list[FrontierCase]:
    """HC-L9 (ε = 0.25 and 0.1), IF-K1 (N = 8, β = 1e4 as its check), and the
    constructions the bracket does not support at all (IF-K2's sphere domain, IF-K3's one-hot
    tokens, the causal trade-off heads of TO-X2 and TO-C1): their frontier is None with the
    bracket's reason, never a weaker claim."""
    return [
        FrontierCase("hc_l9 ε=0.25", "hc_l9", "HC-L9", {"eps": 0.25}),
        FrontierCase("hc_l9 ε=0.1", "hc_l9", "HC-L9", {"eps": 0.1}),
        FrontierCase("if_second_largest N=8 β=1e4", "if_second_largest", "IF-K1", {"N": 8}),
        FrontierCase("if_pairwise_max D=1 d=4", "if_pairwise_max", "IF-K2", {}),
        FrontierCase("if_induction d=4", "if_induction", "IF-K3", {}),
        FrontierCase("lag_head k=1", "lag_head", "TO-X2", {"k": 1}),
        FrontierCase("svd_truncation k=1", "svd_truncation", "TO-C1", {"k": 1}),
    ]


def run_frontier_case(
    case: FrontierCase, boxes: int = FRONTIER_BOXES, Ts: tuple[int, ...] = FRONTIER_TS
) -> dict:
    """The frontier of ``case``: for T = 2, 4, 8, ... (``Ts``; lengths the construction refuses
    are skipped, with the reason), the bracket (found, certified, claimed), whether it certifies
    the claimed bound and the work spent (``boxes`` box evaluations at most, no clock: two runs
    give the same frontier), stopping at the first T not certified. ``frontier_T`` is the
    largest certified T (None: none, with ``reason``)."""
    from ..bounds import upper_bracket
    from ..constructions import build, tolerance
    from ..errors import ApproxTheoryError

    steps: list[dict] = []
    frontier, reason = None, None
    for T in Ts:
        try:
            c = build(case.construction, T=T, **case.knobs)
        except ApproxTheoryError as e:
            steps.append({"T": T, "skipped": str(e)})
            continue
        t0 = time.perf_counter()
        # the branch-and-bound frontier (structured routes, e.g. hc_l9's, have no T limit)
        b = upper_bracket(c.model, c.task, max_boxes=boxes, max_splits=boxes, method="generic")
        secs = time.perf_counter() - t0
        claimed = float(c.claimed_bound)
        up = b.upper
        if up is None or not math.isfinite(up) or b.unsound_input:
            reason = b.reason or f"no finite sound bound at T={T} ({b.stop})"
            break
        atol, rtol = tolerance(getattr(getattr(c.model, "cfg", None), "dtype", "float64"))
        ok = c.bound_kind in ("upper", "exact") and up <= claimed + atol + rtol * abs(claimed)
        steps.append(
            {
                "T": T,
                "found": b.lower,
                "certified": up,
                "claimed": claimed,
                "certifies": bool(ok),
                "work": b.boxes,
                "splits": b.splits,
                "stop": b.stop,
                "seconds": round(secs, 3),
            }
        )
        if not ok:
            if c.bound_kind not in ("upper", "exact"):
                reason = (
                    f"the claim is a {c.bound_kind} bound: an upper bracket cannot certify it "
                    f"(T={T}: certified {up:.4g}, found {_g(b.lower)}, claimed {claimed:.4g})"
                )
            else:
                reason = (
                    f"T={T}: certified {up:.4g} > claimed {claimed:.4g} within {boxes} boxes "
                    f"(found {_g(b.lower)})"
                )
            break
        frontier = T
    else:
        if frontier is not None:
            reason = f"certified up to the largest length tried (T={Ts[-1]})"
    return {
        "case": case.label,
        "construction": case.construction,
        "claim": case.claim,
        "knobs": case.knobs,
        "budget_boxes": boxes,
        "frontier_T": frontier,
        "reason": reason,
        "steps": steps,
    }


def _g(x) -> str:
    return "-" if x is None else f"{x:.4g}"


# ============================================================================== naive IBP
def _iv_linear(c, r, W, b):
    """Interval (centre c, radius r) through x -> x W^T + b."""
    c2 = c @ W.T + (0 if b is None else b)
    r2 = r @ W.abs().T
    return c2, r2 * (1 + 1e-12) + 1e-300


def _iv_mul(al, au, bl, bu):
    ps = torch.stack([al * bl, al * bu, au * bl, au * bu])
    return ps.amin(0), ps.amax(0)


def _iv_mlp(mlp, c, r):
    for mod in mlp:
        if isinstance(mod, torch.nn.Linear):
            c, r = _iv_linear(c, r, mod.weight.to(torch.float64), _bias(mod))
        elif isinstance(mod, torch.nn.ReLU):
            lo, hi = (c - r).clamp_min(0), (c + r).clamp_min(0)
            c, r = 0.5 * (lo + hi), 0.5 * (hi - lo)
        elif not isinstance(mod, torch.nn.Identity):
            raise ValueError(type(mod).__name__)
    return c, r


def _bias(mod):
    return None if mod.bias is None else mod.bias.detach().to(torch.float64)


def interval_baseline(model, task) -> float | None:
    """Naive interval bound propagation of sup |model − target| over the task's box (None where
    the model has parts this baseline does not handle: normalisation, RoPE, causal masks,
    gated FFNs, per-token read-outs, non-box domains, non-affine or non-retrieval targets)."""
    cfg = getattr(model, "cfg", None)
    if cfg is None or not _iv_handles(cfg, task):
        return None
    with torch.no_grad():
        inp = _iv_input(model, cfg, task)
        if inp is None:
            return None
        c, r = inp
        L = len(model.layers)
        for li, blk in enumerate(model.layers):
            # the CLS read-out needs only the CLS row of the last layer (as the model computes)
            last = model.cls is not None and li == L - 1
            att = _iv_attention(model, cfg, blk.attn, c, r, last)
            if att is None:
                return math.inf
            oc, orr = att
            if last:
                c, r = c[-1:], r[-1:]
            if cfg.residual:
                c, r = c + oc, r + orr
            else:
                c, r = oc, orr
            if blk.ffn is not None:
                if cfg.ffn_kind != "relu":
                    return None
                fc, fr = _iv_mlp(blk.ffn.mlp, c, r)
                c, r = (c + fc, r + fr) if cfg.ffn_residual else (fc, fr)
        c, r = c[-1:], r[-1:]
        try:
            oc, orr = _iv_mlp(model.head, c, r)
        except ValueError:
            return None
        ol, oh = float((oc - orr)[0, 0]), float((oc + orr)[0, 0])
        tl, th = _iv_target(task)
    el, eh = ol - th, oh - tl
    v = max(abs(el), abs(eh))
    return v * (1 + 1e-12) if math.isfinite(v) else math.inf


def _iv_handles(cfg, task) -> bool:
    """Whether the naive baseline handles this model configuration and task (see
    :func:`interval_baseline`)."""
    from ..tasks import GeneralizedRetrieval

    return not (
        not isinstance(task, GeneralizedRetrieval)
        or task.affine is None
        or task.outer_affine is None
        or getattr(task, "domain", "box") != "box"
        or cfg.layernorm
        or getattr(cfg, "rmsnorm", False)
        or cfg.causal
        or cfg.readout != "cls"
        or (cfg.rope is not None and (cfg.rope == "full" or int(cfg.rope) > 0))
        or cfg.d_out != 1
    )


def _iv_input(model, cfg, task):
    """The interval (centre, radius) of the embedded input over the task's box, with positions
    and the CLS row; None where the embedding has parts this baseline does not handle."""
    T, d = task.T, task.d
    lo = torch.full((T, d), float(task.lo), dtype=torch.float64)
    hi = torch.full((T, d), float(task.hi), dtype=torch.float64)
    c, r = 0.5 * (lo + hi), 0.5 * (hi - lo)
    if cfg.positions == "onehot":
        c = torch.cat([c, torch.eye(T, dtype=torch.float64)], -1)
        r = torch.cat([r, torch.zeros(T, T, dtype=torch.float64)], -1)
    try:
        c, r = _iv_mlp(model.embed, c, r)
    except ValueError:
        return None
    if model.pos is not None:
        c = c + model.pos.to(torch.float64)
    if model.cls is not None:
        c = torch.cat([c, model.cls.to(torch.float64)[None]], 0)
        r = torch.cat([r, torch.zeros(1, c.shape[1], dtype=torch.float64)], 0)
    return c, r


def _iv_attention(model, cfg, a, c, r, last: bool):
    """The interval of one attention layer's output (centre, radius) for input interval (c, r);
    only the last row where ``last``; None where a head's logits are not finite."""
    from ..bounds import softmax_bounds

    H, n, cv, G = a.h, a.n, a.c, a.g
    qc, qr = _iv_linear(
        c[-1:] if last else c,
        r[-1:] if last else r,
        a.q.weight.to(torch.float64),
        _bias(a.q),
    )
    kc, kr = _iv_linear(c, r, a.k.weight.to(torch.float64), _bias(a.k))
    vc, vr = _iv_linear(c, r, a.v.weight.to(torch.float64), _bias(a.v))
    Tt = c.shape[0]
    J = Tt - 1 if (model.cls is not None and not cfg.cls_is_key) else Tt
    rep = H // G
    outs_l, outs_h = [], []
    for i in range(H):
        gi = i // rep
        ql = (qc - qr)[:, i * n : (i + 1) * n]
        qh = (qc + qr)[:, i * n : (i + 1) * n]
        kl = (kc - kr)[:J, gi * n : (gi + 1) * n]
        kh = (kc + kr)[:J, gi * n : (gi + 1) * n]
        pl_, ph_ = _iv_mul(ql[:, None, :], qh[:, None, :], kl[None], kh[None])
        lgl = pl_.sum(-1) * a.scale
        lgh = ph_.sum(-1) * a.scale
        lgl, lgh = torch.minimum(lgl, lgh), torch.maximum(lgl, lgh)
        if not (torch.isfinite(lgl).all() and torch.isfinite(lgh).all()):
            return None
        pL, pU = softmax_bounds(lgl, lgh)  # (Tt, J)
        vl = (vc - vr)[:J, gi * cv : (gi + 1) * cv]
        vh = (vc + vr)[:J, gi * cv : (gi + 1) * cv]
        yl, yh = _iv_mul(pL[:, :, None], pU[:, :, None], vl[None], vh[None])
        outs_l.append(yl.sum(1))
        outs_h.append(yh.sum(1))
    yl, yh = torch.cat(outs_l, -1), torch.cat(outs_h, -1)
    return _iv_linear(0.5 * (yl + yh), 0.5 * (yh - yl), a.o.weight.to(torch.float64), _bias(a.o))


def _iv_target(task) -> tuple[float, float]:
    """The target's interval over the box: c0 + Σ_i c_i opt_{t ∈ S_i} f_i(x(t))."""
    W, b = (np.asarray(v, dtype=np.float64) for v in task.affine)
    cc, c0 = task.outer_affine
    tl = th = float(c0)
    for i in range(task.D):
        fl = float(np.minimum(W[i] * task.lo, W[i] * task.hi).sum() + b[i])
        fh = float(np.maximum(W[i] * task.lo, W[i] * task.hi).sum() + b[i])
        # opt over S of per-token intervals (all tokens share the box): [fl, fh]
        ci = float(cc[i])
        tl += min(ci * fl, ci * fh)
        th += max(ci * fl, ci * fh)
    return tl, th


# ============================================================================== the run
def run_bracket_case(case: BracketCase) -> dict:
    from ..bounds import upper_bracket
    from ..constructions import build

    c = build(case.construction, **case.knobs)
    known = None if case.known is None else float(case.known(c))
    t0 = time.perf_counter()
    b = upper_bracket(c.model, c.task)
    secs = time.perf_counter() - t0
    t1 = time.perf_counter()
    ibp = interval_baseline(c.model, c.task)
    ibp_secs = time.perf_counter() - t1
    cert = b.upper
    row = {
        "case": case.label,
        "construction": case.construction,
        "knobs": case.knobs,
        "method": b.method,
        "found": b.lower,
        "certified": cert,
        "found_over_certified": (b.lower / cert) if cert and b.lower is not None else None,
        "seconds": round(secs, 3),
        "work": b.boxes,
        "stop": b.stop,
        "reproducible": b.reproducible,
        "known": known,
        "how_known": case.how if known is not None else None,
        "certified_over_known": (cert / known) if (cert is not None and known) else None,
        "interval": ibp,
        "interval_over_certified": (ibp / cert) if (ibp is not None and cert) else None,
        "interval_seconds": round(ibp_secs, 3),
        "reason": b.reason,
    }
    row["meets_goal"] = bool(
        cert is not None
        and math.isfinite(cert)
        and secs <= GOAL_SECONDS
        and (known is None or cert <= GOAL_RATIO * known)
    )
    return row


def bench_bracket(
    only: str | None = None,
    progress=None,
    frontier: bool = False,
    frontier_progress=None,
    frontier_boxes: int = FRONTIER_BOXES,
) -> dict:
    """One row per panel case (or those whose label contains ``only`` or whose construction is
    ``only``): found, certified, their ratio, seconds, known, interval baseline. With
    ``frontier``, also the frontier of each :func:`frontier_panel` case (same ``only`` filter;
    ``frontier_boxes`` box evaluations per T); ``frontier`` is None in the result otherwise."""
    from .search import select_cases

    cases, fcases = bracket_panel(), frontier_panel()
    panels = [cases, fcases]  # a name of either panel exists (with or without --frontier)
    rows = []
    for case in select_cases(cases, only, panels=panels):
        row = run_bracket_case(case)
        if progress is not None:
            progress(row)
        rows.append(row)
    fronts = None
    if frontier:
        fronts = []
        for fc in select_cases(fcases, only, ("construction", "claim"), panels=panels):
            f = run_frontier_case(fc, boxes=frontier_boxes)
            if frontier_progress is not None:
                frontier_progress(f)
            fronts.append(f)
    return {
        "rows": rows,
        "goal": f"certified <= {GOAL_RATIO:g}x known, <= {GOAL_SECONDS:g} s per case",
        "all_meet_goal": all(r["meets_goal"] for r in rows),
        "frontier": fronts,
    }
