"""Builders and checks several test files share (a helper module, not a test file)."""

from __future__ import annotations

import dataclasses
import functools
import tracemalloc


def record(claim, paper, verdict, evidence="checked.", scope="full", **kw) -> dict:
    """The verify record of ``claim`` as results.json holds it: the fields given, every other
    field the report reads empty (``kw`` overrides or adds)."""
    return {
        "claim": claim,
        "paper": paper,
        "verdict": verdict,
        "evidence": evidence,
        "scope": scope,
        "statement": f"statement of {claim}",
        "provenance": "stated",
        "falsified_by": [],
        "mutants": [],
        "plots": [],
        "csv": [],
        "slopes": [],
        "witness": None,
        "measured": None,
        "claimed": None,
        "slack": None,
        "slack_note": "",
        "scale": None,
        **kw,
    }


def within_peak(limit: int, call, what: str = ""):
    """``call()``, asserting that its peak of allocated memory stays under ``limit`` bytes (the
    failure says ``WHAT allocated N bytes at its peak``). Memory, not the clock: a loaded machine
    cannot fail it."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        return call()
    finally:
        peak = tracemalloc.get_traced_memory()[1] - base
        if started:
            tracemalloc.stop()
        assert peak < limit, f"{what}allocated {peak} bytes at its peak"


def saturation_rows(E, zmax) -> list[dict]:
    """tradeoffs_saturation-shaped rows (TO-P2): ``E[T][d]`` the NMSE (interval ±2 %),
    ``zmax[T]`` the logit bound."""
    return [
        {
            "T": T,
            "head_dim": d,
            "seed": 0,
            "steps": 10,
            "val_nmse": e,
            "val_nmse_lo": 0.98 * e,
            "val_nmse_hi": 1.02 * e,
            "logit_max": zmax[T],
        }
        for T, row in E.items()
        for d, e in row.items()
    ]


def false_claim(cid, regime=None, **exprs):
    """A copy of catalogue claim ``cid`` with the expressions ``exprs`` replaced (and the regime,
    when given): a false claim to swap in with :func:`approxtheory.catalogue.overriding`."""
    from approxtheory import claim

    c = claim(cid)
    kw = {"expressions": {**dict(c.expressions), **exprs}}
    if regime is not None:
        kw["regime"] = tuple(regime)
    return dataclasses.replace(c, **kw)


def run_quick(cid, false=None):
    """The quick-profile verdict of ``cid``'s check, with the false claim ``false`` (a copy of
    the catalogue's claim, see :func:`false_claim`) swapped in when given."""
    from approxtheory.catalogue import overriding
    from approxtheory.proofs_check import Context, run_check

    if false is None:
        return run_check(cid, Context(profile="quick"))
    with overriding(false):
        return run_check(cid, Context(profile="quick"))


def run_false(false, cid=None):
    """The quick-profile verdict of ``cid``'s check (by default the false claim's own id) with
    the false claim ``false`` swapped in."""
    return run_quick(cid or false.id, false)


#: verdicts that pass a claim, and those that catch a false one
PASSING = ("verified-numeric", "verified-symbolic", "consistent-empirical")
CATCHING = ("refuted", "inconsistent")


@functools.cache
def quick_verdict(cid) -> str:
    """The quick-profile verdict of the catalogue's own claim ``cid`` (computed once)."""
    return run_quick(cid).verdict


def caught_quick(cid, false, base=PASSING):
    """``false`` (a false copy of ``cid``'s claim) swapped in: the true claim's verdict is in
    ``base`` and the false one's is refuted or inconsistent (a crash is a failure, not a
    catch). Returns the false claim's verdict."""
    assert quick_verdict(cid) in base, quick_verdict(cid)
    v = run_quick(cid, false)
    assert v.verdict in CATCHING, (v.verdict, v.evidence)
    return v


def caught_anew(cid, false, said=None, relabel=None):
    """``cid``'s true claim is already refuted or inconsistent on the quick profile. ``false`` is
    caught on its own account when its verdict is refuted or inconsistent too, and its evidence
    shows a failure the true claim's does not: the text ``said`` when given, else a different
    witness (the list of failures; with ``relabel`` = (false text, true text), the false claim's
    own wording, such as its regime quoted in a failure, read as the true claim's first)."""
    import json

    base = run_quick(cid)
    assert base.verdict in CATCHING, base.verdict
    v = run_quick(cid, false)
    assert v.verdict in CATCHING, (v.verdict, v.evidence)
    if said is not None:
        assert said not in base.evidence
        assert said in v.evidence, v.evidence
    else:
        got = v.witness
        if relabel is not None:
            got = json.loads(json.dumps(got, ensure_ascii=False).replace(*relabel))
        assert got != base.witness, v.witness
    return v


def claim_symbols(cid, *names) -> tuple:
    """The catalogue symbols ``names`` of claim ``cid``."""
    from approxtheory import claim

    c = claim(cid)
    return tuple(c.symbol(x) for x in names)


def keeps_quick_verdict(cid, true):
    """The true variant ``true`` of ``cid`` keeps the catalogue's quick verdict (a pass)."""
    base = quick_verdict(cid)
    assert base in PASSING, base
    v = run_quick(cid, true)
    assert v.verdict == base, (v.verdict, v.evidence)


#: the decoder-LM options the tests share (part of the prism_paired model's: without its RoPE,
#: SwiGLU and bias settings): a causal per-token read-out, pre-norm RMSNorm plus a final one,
#: and the read-out tied to the embedding
DECODER_LM = dict(readout="tokens", causal=True, rmsnorm=True, final_norm=True, tie_embeddings=True)
#: no bias anywhere: attention, FFN, encoder and read-out
NO_BIASES = dict(bias=False, ffn_bias=False, embed_bias=False, head_bias=False)


def decoder_lm_config(ffn_hidden, **kw):
    """A two-layer decoder LM over 11 tokens (width 8; 2 heads of 4, then 4 heads of 2, each with
    an FFN of ``ffn_hidden``) with the :data:`DECODER_LM` options and no encoder or read-out
    bias; ``kw`` overrides or adds fields."""
    from approxtheory.model import LayerSpec, ModelConfig

    layers = [LayerSpec(2, 4, ffn_hidden=(ffn_hidden,)), LayerSpec(4, 2, ffn_hidden=(ffn_hidden,))]
    fields = dict(d_in=11, width=8, layers=layers, d_out=11, **DECODER_LM)
    return ModelConfig(**{**fields, "embed_bias": False, "head_bias": False, **kw})


def perturb(model, scale, seed):
    """``model`` with every parameter moved by a uniform draw from [-scale, scale] (seeded), in
    place; returns the model."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(scale * (2 * torch.rand(p.shape, generator=g, dtype=p.dtype) - 1))
    return model


def default_limits(monkeypatch):
    """The default resource limits (a quarter of the machine's memory, 24 h) on a 24 GiB machine
    whatever this one has, and no debug tracebacks: refusals that do not depend on the machine."""
    from approxtheory import resources

    monkeypatch.setattr(resources, "machine_memory", lambda: 24 << 30)
    monkeypatch.delenv(resources.ENV_BYTES, raising=False)
    monkeypatch.delenv(resources.ENV_SECONDS, raising=False)
    monkeypatch.delenv("APPROXTHEORY_DEBUG", raising=False)


def cli_error(argv, capsys, code=2, seconds=10.0):
    """Run the CLI in-process: exit ``code``, exactly one stderr line, no traceback, within
    ``seconds``. Returns the line."""
    import time

    from approxtheory.cli import main

    t0 = time.monotonic()
    rc = main([str(a) for a in argv])
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc == code, (rc, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    prefix = "approxtheory: error: " if code == 2 else "approxtheory: internal error: "
    assert err.startswith(prefix), err
    assert took < seconds, took
    return err


#: the run every synthetic tradeoffs_layers row records (10 steps on pydoc, width 32, 2 heads)
LAYERS_RUN = {"steps": 10, "corpus": "pydoc", "width": 32, "heads": 2, "head_dim": 16}


def layers_row(schedule, seed, val_loss, **kw) -> dict:
    """A tradeoffs_layers row (TO-R2): ``schedule``, ``seed``, the columns ``kw``, the loss and
    :data:`LAYERS_RUN`."""
    return {"schedule": schedule, "seed": seed, **kw, "val_loss": val_loss, **LAYERS_RUN}


def layers_trace(seed, cost) -> list[dict]:
    """The uniform schedule's compression trace of one seed: layer ``li`` (1 to 4) at rank ``r``
    (1, 2, 4, 8) loses ``cost(li) / r``."""
    return [
        {"schedule": "uniform", "seed": seed, "layer": li, "rank": r, "dloss": cost(li) / r}
        for li in (1, 2, 3, 4)
        for r in (1, 2, 4, 8)
    ]


def depth_rows(one, two=(-2.0, -2.0), two_level=1e-3, Ts=(4, 16), hidden=False) -> dict:
    """IF-E3 rows per task (kth, pmax): exact power laws NMSE = c p^slope per (layers, T), the
    one-layer slopes ``one`` and the two-layer ones ``two`` at ``Ts``; the two-layer level
    ``two_level`` (a number, or one per T), the one-layer 0.3, at p = 100. ``hidden`` adds the
    hidden width column."""
    rows = []
    for task in ("kth", "pmax"):
        for L, slopes in ((1, one), (2, two)):
            for T, sl in zip(Ts, slopes):
                lvl = two_level[T] if isinstance(two_level, dict) else two_level
                c = (lvl if L == 2 else 0.3) / 100.0**sl
                for p in (100, 200, 400):
                    rows.append(
                        {
                            "task": task,
                            "layers": L,
                            "T": T,
                            **({"hidden": p} if hidden else {}),
                            "E": 8,
                            "params": p + L,
                            "val_nmse": c * (p + L) ** sl,
                            "seed": 0,
                            "steps": 9,
                        }
                    )
    return {t: [r for r in rows if r["task"] == t] for t in ("kth", "pmax")}


def assert_verdict(v, verdict, *phrases):
    """``v`` (a check's verdict) is ``verdict`` and its evidence contains each of ``phrases`` (a
    failure shows the evidence). Returns ``v``."""
    assert v.verdict == verdict, v.evidence
    for phrase in phrases:
        assert phrase in v.evidence, v.evidence
    return v


def keeps_verdict(v, want):
    """``v``, a true claim's quick verdict, is ``want`` and has no formula note (its check read
    the claim's expressions)."""
    assert v.verdict == want, v.evidence
    assert not v.formula_note, v.formula_note  # each reads its claim's expressions now


def sign_turned_or_zero_is_inconsistent(cid, name, said=""):
    """``cid`` (a direction-only claim) with its sign ``name`` turned, then 0 (no difference):
    each false claim is inconsistent and the evidence prints ``{said}{name} = <the false sign>``."""
    import sympy as sp

    from approxtheory import claim

    e = claim(cid).expr(name)
    for false in (-e, sp.Integer(0)):
        v = run_false(false_claim(cid, **{name: false}))
        assert v.verdict == "inconsistent", (false, v.evidence)
        assert f"{said}{name} = {sp.sstr(false)}" in v.evidence


def small_k1_grid(monkeypatch, memos):
    """Fixture body: IF-K1's quick grid cut to T = 4 (its N fit keeps 3 points), the memoised
    grids ``memos`` cleared before and after."""
    from approxtheory.proofs_check import infoflow as ifc

    monkeypatch.setitem(ifc.K1_AXES, "quick", {"T": [4], "N": [8, 32, 128]})
    for f in memos:
        f.cache_clear()
    yield
    for f in memos:
        f.cache_clear()


def catalogued_with_a_check(provenances):
    """Each ``(claim id, provenance)`` of ``provenances``: the catalogue's claim has that
    provenance and a registered check."""
    import approxtheory as at
    from approxtheory.proofs_check import CHECKS

    for cid, prov in provenances:
        assert at.claim(cid).provenance == prov
        assert cid in CHECKS
