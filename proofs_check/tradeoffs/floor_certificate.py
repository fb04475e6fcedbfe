"""TO-X2's certified side (arXiv 2510.03784): the retrieval floor as the exact minimum of a
query row's error over its logit box, by coordinatewise monotonicity (checked symbolically) and
interval arithmetic; and the claim held to its kind."""

from __future__ import annotations

import numpy as np
import sympy as sp

#: decimal digits of the interval evaluation of TO-X2's certificate, and the round-off rule of
#: the comparison with the claimed floor (the claim's expression evaluated at the same digits)
_X2_DIGITS, _X2_CERT_RTOL = 40, 1e-12


def _x2_monotone() -> bool:
    """The step that puts the minimum at a vertex, checked symbolically: a row's error with its
    best read-out is E = a / (a + b), a = Σ_{s≠t} e^{2 z_s} > 0 (rising in each z_s), b = e^{2
    z_t} > 0; ∂E/∂a > 0 and ∂E/∂b < 0 for every positive a, b."""
    a, b = sp.symbols("a b", positive=True)
    E = a / (a + b)
    da, db = sp.together(sp.diff(E, a)), sp.together(sp.diff(E, b))
    return bool(da.is_positive) and bool(db.is_negative)


def _x2_certificate(c, e, cells) -> tuple[dict, str]:
    """TO-X2's certified side over every (B, L) of ``cells``: the least error of any query row
    whose logits lie in [-B, B]^L (any head, any head dimension), with its best read-out,
    i.e. min over that box of E(z) = Σ_{s≠t} e^{2 z_s} / Σ_s e^{2 z_s} (i.i.d. unit-variance
    tokens, experiments._tradeoffs.head_errors at c = α_t / Σ α_s²; a fixed read-out errs
    more). E rises in each z_s (s ≠ t) and falls in z_t (:func:`_x2_monotone`), so the minimum
    over the box is at the vertex z_t = B, z_s = -B, exactly; it is evaluated in interval
    arithmetic (mpmath, :data:`_X2_DIGITS` digits) and its lower end compared with the claimed
    floor ``e`` (evaluated at the same digits): certified where the floor is at or below it.
    Returns the record (the shape of :func:`approxtheory.proofs_check._core.certified_summary`)
    and the text."""
    import mpmath

    Bs, Ls = c.symbol("B"), c.symbol("L")
    mono = _x2_monotone()
    table = []
    with mpmath.workprec(int(_X2_DIGITS * 3.33)):
        for B, L, found in cells:
            q = (mpmath.iv.mpf(L) - 1) * mpmath.iv.exp(-4 * mpmath.iv.mpf(B))
            low = float(mpmath.mpf((q / (1 + q)).a))  # the interval's lower end, rounded down
            low = float(np.nextafter(low, -np.inf))
            claimed = float(
                e.subs({Bs: sp.Float(B, _X2_DIGITS), Ls: sp.Integer(L)}).evalf(_X2_DIGITS)
            )
            ok = mono and claimed <= low * (1 + _X2_CERT_RTOL)
            table.append(
                {
                    "cell": f"B={B:g}, L={L}",
                    "found": found,
                    "certified": low,
                    "claimed": claimed,
                    "ok": bool(ok),
                }
            )
    k = sum(t["ok"] for t in table)
    rec = {"cells": k, "of": len(table), "bracketed": len(table), "all": k == len(table) > 0}
    rec.update(gaps=[t for t in table if not t["ok"] and t["claimed"] <= t["found"]], table=table)
    text = (
        f"; certified side (a lower bound): in every (B, L) cell of the free-logit grid the "
        f"least error of any query "
        f"row with logits in [-B, B]^L and its best read-out is min over that box of Σ_{{s≠t}} "
        f"e^{{2 z_s}} / Σ_s e^{{2 z_s}}, which rises in each z_s (s ≠ t) and falls in z_t "
        f"(signs of the partial derivatives of a/(a + b), checked symbolically: "
        f"{'yes' if mono else 'NO'}), so it sits at the vertex z_t = B, z_s = -B; evaluated in "
        f"interval arithmetic ({_X2_DIGITS} digits), it is at or above the claimed floor in "
        f"{k} of {len(table)} cells"
        + ("" if rec["all"] else " (the others: the claimed floor is above the certified minimum)")
    )
    return rec, text


def _x2_attained(cert: dict) -> tuple[str, dict | None]:
    """TO-X2's floor held to its attainment: the claim states the least error E* itself, and
    the vertex row (z_t = B, z_s = -B) attains the certified minimum, so the claimed floor must
    equal it (relative difference at most :data:`_X2_CERT_RTOL`), not only stay at or below it.
    Returns the text and the witness (None: attained in every cell)."""
    table = cert["table"]
    low = [t for t in table if t["claimed"] < t["certified"] * (1 - _X2_CERT_RTOL)]
    if not low:
        return (
            f"; the floor is attained: it equals the certified vertex minimum in every one of "
            f"the {len(table)} cells (relative difference <= {_X2_CERT_RTOL:g})",
            None,
        )
    w = low[0]
    return (
        f"; FAILS attainment: the claimed floor is below the certified minimum error (which the "
        f"vertex row attains) in {len(low)}/{len(table)} cells (first at {w['cell']}: claimed "
        f"{w['claimed']:.6g}, certified minimum {w['certified']:.6g})",
        {
            "cell": w["cell"],
            "claimed": w["claimed"],
            "certified": w["certified"],
            "head": "vertex row",
        },
    )


def _x2_side(kind: str, rows: list, tol: float) -> tuple[str, dict | None]:
    """TO-X2 held to its kind: a floor is a lower bound; read as an upper bound on every head's
    error (any other kind), the uniform head (every logit equal: error (L - 1)/L with its best
    read-out) must stay at or below it. Returns the text and the witness (None: it holds)."""
    if kind == "lower":
        return "", None
    over = [(r["B"], r["L"]) for r in rows if (r["L"] - 1) / r["L"] > r["floor"] * (1 + tol)]
    if not over:
        return "", None
    B0, L0 = over[0]
    return (
        f"; FAILS read as the claim's kind ({kind}): the floor bounds every head's error from "
        f"above, but the uniform head errs by (L - 1)/L above it in {len(over)}/{len(rows)} "
        f"cells (first at B = {B0:g}, L = {L0})",
        {"B": B0, "L": L0, "head": "uniform (every logit 0)", "error": (L0 - 1) / L0},
    )
