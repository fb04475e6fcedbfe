"""Issue 42, items 3 and 4: false claims that agree with the true one where the checks used to
look (one configuration, one side of a regime condition, T far below β) are refuted now.

Each test writes its false claim by hand, swaps it in with
:func:`approxtheory.catalogue.overriding` and runs the check: the false claim must be refuted
(not an error, not a survivor) and the catalogue's claim must still pass.

- HC-T2a: its regime condition h >= D widened to h >= D - 1 (false by HC-T2b) or dropped; the
  check builds one-head networks at D = 2 (the other side), and the generated regime mutants of
  that condition are required.
- ID counts: a wrong E-, H- or D-dependence that coincides at the configuration the check used
  to measure alone (E = 8; H = 4 for ID-RG; fat heads D = E for ID-X4.8.1).
- IF-R1: err_mpr without its T (ln(βT) -> ln β), on the smoke and quick profiles.
- HC-P2: the verdict names the statement it verified (the corrected gate).
"""

import dataclasses

import pytest
import sympy as sp

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.catalogue._claim import Condition
from approxtheory.catalogue.mutate import claim_mutants
from approxtheory.proofs_check import FAILING, PASSING, Context, run_check
from approxtheory.proofs_check.identification import counts


def _with(cid, regime=None, **exprs):
    """A copy of claim ``cid`` with the expressions ``exprs`` replaced (and the regime, when
    given)."""
    c = claim(cid)
    kw = {"expressions": {**dict(c.expressions), **exprs}}
    if regime is not None:
        kw["regime"] = tuple(regime)
    return dataclasses.replace(c, **kw)


# ------------------------------------------------------------------------------------ HC-T2a
def test_hc_t2a_regime_mutants_of_the_built_condition_are_required():
    ms = {m.name: m for m in claim_mutants(claim("HC-T2a")) if m.kind == "regime"}
    # h >= D (condition 0) is built on both sides: dropped and widened, both required; n = 2
    # (condition 1) is not, and its drop stays reported only
    assert ms["regime:drop0"].required and ms["regime:widen0"].required
    assert not ms["regime:drop1"].required
    c = claim("HC-T2a")
    h, D = c.symbol("h"), c.symbol("D")
    assert ms["regime:widen0"].claim.regime[0].expr == sp.Ge(h, D - 1)


def test_hc_t2a_is_refuted_when_its_regime_admits_fewer_heads_than_features():
    c = claim("HC-T2a")
    h, D = c.symbol("h"), c.symbol("D")
    v = run_check("HC-T2a", Context(profile="quick"))
    assert v.verdict == "verified-numeric", v.evidence
    below = v.measured["below_D"]
    assert below and all(r["h"] < r["D"] for r in below)
    assert "other side" in v.evidence
    wide = Condition(sp.Ge(h, D - 1), "h >= D - 1")
    for regime in ((wide, *c.regime[1:]), c.regime[1:]):  # widened; h >= D dropped
        with overriding(_with("HC-T2a", regime=regime)):
            w = run_check("HC-T2a", Context(profile="quick"))
        assert w.verdict == "refuted", w.evidence
        assert "the claim's regime admits h = 1 < D = 2" in w.evidence
        assert w.witness["h"] < w.witness["D"]


# ------------------------------------------------------------------------- ID counts
#: the Jacobian-rank claims and the symbols their U, P and ratio read, per configuration
_SYMBOLS = {"E": "E", "H": "H", "G": "groups", "D": "head_dim", "C": "head_dim"}


@pytest.mark.parametrize("cid", sorted(counts.CONFIGS))
def test_every_free_symbol_of_a_count_is_varied(cid):
    c = claim(cid)
    names = {
        s.name
        for k in ("U", "P", "ratio")
        if k in c.expressions
        for s in c.expressions[k].free_symbols
    }
    for name in names & set(_SYMBOLS):
        vals = {getattr(cfg, _SYMBOLS[name]) for cfg in counts.CONFIGS[cid]}
        assert len(vals) >= 2, (cid, name, vals)


def _old_and_new(monkeypatch, cid, keep, false_claim):
    """The check on the configurations it used to measure alone (``keep``) and on all of them,
    with ``false_claim`` swapped in: (old verdict, new verdict)."""
    with overriding(false_claim):
        with monkeypatch.context() as mp:
            mp.setitem(counts.CONFIGS, cid, [x for x in counts.CONFIGS[cid] if keep(x)])
            old = run_check(cid, Context(profile="quick"))
        new = run_check(cid, Context(profile="quick"))
    return old.verdict, new


def test_id_t45_a_wrong_e_dependence_agreeing_at_e8_is_refuted(monkeypatch):
    c = claim("ID-T4.5")
    E, H = c.symbol("E"), c.symbol("H")
    # 16E/H and 32E: equal to 2E²/H and 4E² at E = 8 only
    false = _with("ID-T4.5", U=16 * E / H, P=32 * E)
    for k in ("U", "P"):
        assert sp.simplify((false.expressions[k] - c.expressions[k]).subs(E, 8)) == 0
    old, new = _old_and_new(monkeypatch, "ID-T4.5", lambda x: x.E == 8, false)
    assert old in PASSING  # what the single-E check let through
    assert new.verdict == "refuted", new.evidence
    assert run_check("ID-T4.5", Context(profile="quick")).verdict == "verified-numeric"


def test_id_rg_a_wrong_h_dependence_agreeing_at_h4_is_refuted(monkeypatch):
    c = claim("ID-RG")
    H = c.symbol("H")
    false = _with("ID-RG", **{k: c.expressions[k].subs(H, 4) for k in ("U", "P", "ratio")})
    old, new = _old_and_new(monkeypatch, "ID-RG", lambda x: x.H == 4 and x.E == 8, false)
    assert old in PASSING
    assert new.verdict == "refuted", new.evidence
    assert run_check("ID-RG", Context(profile="quick")).verdict == "verified-numeric"


def test_id_x481_a_constant_half_agreeing_on_fat_heads_is_refuted(monkeypatch):
    c = claim("ID-X4.8.1")
    D, E, H = c.symbol("D"), c.symbol("E"), c.symbol("H")
    # the fat-head figures (D = E) written for every head width: ratio 1/2, U = 2E²H
    false = _with("ID-X4.8.1", ratio=sp.Rational(1, 2), U=2 * E**2 * H)
    for k in ("ratio", "U"):
        assert sp.simplify((false.expressions[k] - c.expressions[k]).subs(D, E)) == 0
    old, new = _old_and_new(monkeypatch, "ID-X4.8.1", lambda x: x.fat, false)
    assert old in PASSING
    assert new.verdict == "refuted", new.evidence
    assert run_check("ID-X4.8.1", Context(profile="quick")).verdict == "verified-numeric"


# ------------------------------------------------------------------------------------ IF-R1
@pytest.mark.parametrize("profile", ["smoke", "quick"])
def test_if_r1_a_t_blind_err_mpr_is_refuted(profile):
    c = claim("IF-R1")
    b = c.symbol("beta")
    v = run_check("IF-R1", Context(profile=profile))
    assert v.verdict == "verified-numeric", v.evidence
    with overriding(_with("IF-R1", err_mpr=(1 + sp.log(b)) / b)):  # ln(βT) -> ln β
        w = run_check("IF-R1", Context(profile=profile))
    assert w.verdict in FAILING and w.verdict == "refuted", w.evidence
    # the long-sequence cells (T >> β) catch it in every cell, not in one
    long_rows = [r for r in w.rows if r["T"] >= 256 and r["beta"] <= 8]
    assert long_rows and all(r["verdict"] != "within-bound" for r in long_rows)


# ------------------------------------------------------------------------------------- HC-P2
def test_hc_p2_names_the_statement_it_verified():
    v = run_check("HC-P2", Context(profile="quick"))
    assert v.verdict in PASSING
    assert v.evidence.startswith("Statement checked: P2 at the corrected gate -2 (HC-K1c)")
    assert "corrected gate -2" in v.scope
