"""False claims that agree with the true one where the checks used to
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

import pytest
import sympy as sp
from _helpers import assert_verdict, claim_symbols, run_quick
from _helpers import false_claim as _with

from approxtheory import claim
from approxtheory.catalogue import overriding
from approxtheory.catalogue._claim import Condition
from approxtheory.catalogue.mutate import claim_mutants
from approxtheory.proofs_check import FAILING, PASSING, Context, run_check
from approxtheory.proofs_check.identification import counts


# ------------------------------------------------------------------------------------ HC-T2a
def test_hc_t2a_regime_mutants_of_the_built_condition_are_required():
    ms = {m.name: m for m in claim_mutants(claim("HC-T2a")) if m.kind == "regime"}
    # h >= D (condition 0) is built on both sides: dropped and widened, both required; n = 2
    # (condition 1) is not, and its drop stays reported only
    assert ms["regime:drop0"].required and ms["regime:widen0"].required
    assert not ms["regime:drop1"].required
    h, D = claim_symbols("HC-T2a", "h", "D")
    assert ms["regime:widen0"].claim.regime[0].expr == sp.Ge(h, D - 1)


def test_hc_t2a_is_refuted_when_its_regime_admits_fewer_heads_than_features():
    c = claim("HC-T2a")
    h, D = c.symbol("h"), c.symbol("D")
    v = run_quick("HC-T2a")
    assert v.verdict == "verified-numeric", v.evidence
    below = v.measured["below_D"]
    assert below and all(r["h"] < r["D"] for r in below)
    assert "other side" in v.evidence
    wide = Condition(sp.Ge(h, D - 1), "h >= D - 1")
    for regime in ((wide, *c.regime[1:]), c.regime[1:]):  # widened; h >= D dropped
        w = run_quick("HC-T2a", _with("HC-T2a", regime=regime))
        assert w.verdict == "refuted", w.evidence
        assert "the claim's regime admits h = 1 < D = 2" in w.evidence
        assert w.witness["h"] < w.witness["D"]


# ------------------------------------------------------------------------- ID counts
def count_points(cid, configs=None) -> dict:
    """{(claim, expression): [{symbol: value}, ...]}: the values of its free symbols at which
    the check's :func:`counts._predicted` and :func:`counts._predicted_qk` read each catalogue
    count (U, P, ratio, ratio_general, the QK counts, ID-L4.1's for ID-L4.6), one point per
    configuration of ``configs`` (``counts.CONFIGS[cid]`` unless given)."""
    seen: dict = {}
    real = counts._ev

    def record(ctx, c, name, **values):
        free = {s.name for s in claim(c).expr(name).free_symbols}
        seen.setdefault((c, name), []).append({k: v for k, v in values.items() if k in free})
        assert free <= set(values), (c, name, free, values)  # every free symbol given a value
        return real(ctx, c, name, **values)

    ctx = Context(profile="quick")
    orig, counts._ev = counts._ev, record
    try:
        for cfg in counts.CONFIGS[cid] if configs is None else configs:
            counts._predicted(ctx, cid, cfg)
            counts._predicted_qk(ctx, cid, cfg)
    finally:
        counts._ev = orig
    return seen


def unvaried(points: dict) -> list:
    """What a set of evaluation points leaves untested: a free symbol that takes one value, or a
    pair of symbols that only move in proportion (every point on one line through the origin,
    e.g. D_r = D/2 alone: a false formula that agrees with the true one on that line passes)."""
    bad = []
    for key, pts in points.items():
        names = sorted(pts[0])
        for a in names:
            if len({p[a] for p in pts}) < 2:
                bad.append((*key, a))
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if all(p[a] * q[b] == q[a] * p[b] for p in pts for q in pts):
                    bad.append((*key, a, b))
    return bad


@pytest.mark.parametrize("cid", sorted(counts.CONFIGS))
def test_every_free_symbol_of_a_count_is_varied(cid):
    points = count_points(cid)
    assert points
    assert not unvaried(points), unvaried(points)


def _old_and_new(monkeypatch, cid, keep, false_claim):
    """The check on the configurations it used to measure alone (``keep``) and on all of them,
    with ``false_claim`` swapped in: (old verdict, new verdict)."""
    with overriding(false_claim):
        with monkeypatch.context() as mp:
            mp.setitem(counts.CONFIGS, cid, [x for x in counts.CONFIGS[cid] if keep(x)])
            old = run_quick(cid)
        new = run_quick(cid)
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
    assert run_quick("ID-T4.5").verdict == "verified-numeric"


def test_id_rg_a_wrong_h_dependence_agreeing_at_h4_is_refuted(monkeypatch):
    c = claim("ID-RG")
    H = c.symbol("H")
    false = _with("ID-RG", **{k: c.expressions[k].subs(H, 4) for k in ("U", "P", "ratio")})
    old, new = _old_and_new(monkeypatch, "ID-RG", lambda x: x.H == 4 and x.E == 8, false)
    assert old in PASSING
    assert new.verdict == "refuted", new.evidence
    assert run_quick("ID-RG").verdict == "verified-numeric"


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
    assert run_quick("ID-X4.8.1").verdict == "verified-numeric"


# ------------------------------------------------------------------------------------ IF-R1
@pytest.mark.parametrize("profile", ["smoke", "quick"])
def test_if_r1_a_t_blind_err_mpr_is_refuted(profile):
    (b,) = claim_symbols("IF-R1", "beta")
    v = run_check("IF-R1", Context(profile=profile))
    assert v.verdict == "verified-numeric", v.evidence
    with overriding(_with("IF-R1", err_mpr=(1 + sp.log(b)) / b)):  # ln(βT) -> ln β
        w = run_check("IF-R1", Context(profile=profile))
    assert w.verdict in FAILING and w.verdict == "refuted", w.evidence
    # the long-sequence cells (T >> β) catch it in every cell, not in one
    long_rows = [r for r in w.rows if r["T"] >= 256 and r["beta"] <= 8]
    assert long_rows and all(r["verdict"] != "within-bound" for r in long_rows)
    # ... and in most cells of the check, not in a few (the rate symbol's range is wide enough)
    failing = [r for r in w.rows if r["verdict"] != "within-bound"]
    assert 2 * len(failing) > len(w.rows), (len(failing), len(w.rows))


# ------------------------------------------------------------------------------------- HC-P2
def test_hc_p2_names_the_statement_it_verified():
    v = run_quick("HC-P2")
    assert v.verdict in PASSING
    assert v.evidence.startswith("Statement checked: P2 at the corrected gate -2 (HC-K1c)")
    assert "corrected gate -2" in v.scope


# ------------------------------------------------------- issue h10: the four audit survivors
# (/tmp/audit/false_claims.py: false claims that passed because the check never read, or never
# varied, the formula they change)
def test_hc_l9_compares_the_built_widths_with_width1_width2_and_width_bound():
    T, eps = claim_symbols("HC-L9", "T", "epsilon")
    ng = sp.ceiling(1 / eps)
    v = assert_verdict(
        run_quick("HC-L9"),
        "verified-numeric",
        "the built hidden widths equal width1 = T*ceiling(1/epsilon)",
    )
    assert all([r["width1"], r["width2"]] == [r["T"] * r["n_g"], 2 * r["n_g"]] for r in v.rows)
    for false in (
        _with("HC-L9", width1=2 * T * ng),  # the audit's false claim
        _with("HC-L9", width2=3 * ng),  # the construction no longer derives n_g from it
        _with("HC-L9", width_bound=T * ng),  # below the built widths' sum
    ):
        w = run_quick("HC-L9", false)
        assert w.verdict == "refuted", w.evidence
        assert "built widths" in w.evidence


def test_hc_l9_construction_takes_n_g_from_epsilon_not_from_width2():
    from approxtheory.constructions import build

    c = claim("HC-L9")
    with overriding(_with("HC-L9", width2=3 * sp.ceiling(1 / c.symbol("epsilon")))):
        built = build("hc_l9", T=4, eps=0.2)
    assert built.extra["n_g"] == 5 and built.extra["widths"] == [20, 10]
    assert [lin.out_features for lin in built.model.head.linears] == [20, 10, 1]


@pytest.mark.parametrize(
    ("cid", "name", "false"),
    [
        ("ID-GQA4.9", "U_qk", lambda c: c.symbol("H") * c.symbol("D") ** 2),  # the audit's
        ("ID-RG", "U_qk", lambda c: c.symbol("G") * c.symbol("D") ** 2),  # RoPE ignored
        ("ID-P4.8", "U_qk_head", lambda c: c.symbol("D") ** 2),  # GL(D) kept under RoPE
    ],
)
def test_id_qk_counts_are_measured_on_the_qk_block_alone(cid, name, false):
    v = assert_verdict(run_quick(cid), "verified-numeric", "QK block's own unidentified dimension")
    assert all(r["U_qk_claimed"] == r["U_qk_measured"] for r in v.rows)
    w = run_quick(cid, _with(cid, **{name: false(claim(cid))}))
    assert w.verdict == "refuted", w.evidence
    # the layer's U, P and ratio are unchanged: the QK block's count alone refutes it
    assert all(r["layer_agrees"] for r in w.rows)


def test_id_l41_regime_is_tested_on_its_other_side():
    c = claim("ID-L4.1")
    D, E = c.symbol("D"), c.symbol("E")
    assert_verdict(
        run_quick("ID-L4.1"),
        "verified-numeric",
        "outside it (reported, not tested) (D,E)=(3,2): U 8 measured vs 9",
    )
    # the audit's widened regime D <= E + 1 admits (3, 2) and (4, 3), where U < D²
    w = run_quick("ID-L4.1", _with("ID-L4.1", regime=[Condition(sp.Le(D, E + 1), "D <= E + 1")]))
    assert w.verdict == "refuted", w.evidence
    assert "the claim's regime admits (D,E)=(3,2)" in w.evidence
    # the generated regime mutants of D <= E are required now, and flip
    ms = {m.name: m for m in claim_mutants(c) if m.kind == "regime"}
    assert ms["regime:drop0"].required and ms["regime:widen0"].required
    for name in ("regime:drop0", "regime:widen0"):
        with overriding(ms[name].claim):
            assert run_quick("ID-L4.1").verdict == "refuted", name


def test_pr_n1_n_model_is_checked_with_biases_and_as_a_composition():
    c = claim("PR-N1")
    Ib, L, d = c.symbol("I_bias"), c.symbol("L"), c.symbol("d")
    assert_verdict(
        run_quick("PR-N1"),
        "verified-symbolic",
        "with biases on Q, K, V, O (I_bias = 1",
        "N_model = V·d + L·N_layer + d and N_layer = N_attn + N_mlp + N_norm",
    )
    n_model, n_layer = c.expressions["N_model"], c.expressions["N_layer"]
    for false in (
        _with("PR-N1", N_model=n_model - Ib * L * d),  # the audit's: 4d I_bias -> 3d I_bias
        # N_layer and N_model changed together: N_layer no longer N_attn + N_mlp + N_norm,
        # and the biased models have 4d bias entries per layer, not 3d
        _with("PR-N1", N_model=n_model - Ib * L * d, N_layer=n_layer - Ib * d),
    ):
        w = run_quick("PR-N1", false)
        assert w.verdict == "refuted", w.evidence
        assert "with biases: " in w.evidence


def test_if_t2_and_hc_l4_evidence_prints_the_formula_read():
    c = claim("HC-L4")
    p, n = c.symbol("p"), c.symbol("n")
    true_text = f"({sp.sstr(c.expressions['lipschitz'])} ||Δv||)"  # sqrt(n)*p
    assert true_text in run_quick("HC-L4").evidence
    w = run_quick("HC-L4", _with("HC-L4", lipschitz=sp.sqrt(p * n)))
    assert w.verdict == "refuted"
    assert sp.sstr(sp.sqrt(p * n)) in w.evidence and "p sqrt(n)" not in w.evidence
    b = claim("IF-T2").symbol("beta")
    w = run_quick("IF-T2", _with("IF-T2", err_attn=1 / b))
    assert w.verdict == "refuted"
    assert "err_attn = 1/beta in" in w.evidence and "ln(βT))/β in" not in w.evidence


# ------------------------------------------------------------------------------------ IF-T2
def test_if_t2_reads_err_split_for_every_delta():
    b, T, d = claim_symbols("IF-T2", "beta", "T", "delta")
    assert_verdict(
        run_check("IF-T2", Context(profile="smoke")), "verified-numeric", "the statement's 'hence'"
    )
    # T-blind: below the measured error on the long-sequence cells (T >> β)
    with overriding(_with("IF-T2", err_split=d + sp.exp(-b * d))):
        w = run_check("IF-T2", Context(profile="smoke"))
    assert w.verdict == "refuted" and w.witness["split_bound"] < w.witness["sup_error"]
    # a split bound whose minimum over δ lies above err_attn: the "hence" does not follow
    with overriding(_with("IF-T2", err_split=2 * d + T * sp.exp(-b * d))):
        w = run_check("IF-T2", Context(profile="smoke"))
    assert w.verdict == "refuted" and w.witness["split_bound"] > w.witness["claimed_bound"]


# --------------------------------------------------------------------------------- ID-EQ4.10
def test_id_eq410_reads_the_whole_width_e0():
    E, H = claim_symbols("ID-EQ4.10", "E", "H")
    assert run_quick("ID-EQ4.10").verdict == "verified-symbolic"
    for false in (
        sp.floor(E * sp.sqrt(2 - 1 / H)),  # rounds down: the width then matches too few
        sp.ceiling(E * sp.sqrt(2)),  # H-blind: right only as H grows
    ):
        assert run_quick("ID-EQ4.10", _with("ID-EQ4.10", E0=false)).verdict == "refuted"


# ----------------------------------------------------------------------------------- ID-T4.5
def test_id_t45_measures_the_general_ratio_at_value_widths_apart_from_the_head_width():
    c = claim("ID-T4.5")
    C, D, E = c.symbol("C"), c.symbol("D"), c.symbol("E")
    assert_verdict(run_quick("ID-T4.5"), "verified-numeric", "ratio_general")
    # both agree with the true ratio at C = D = E/H: only C != D tells them apart
    for false in ((C + D) / (4 * E), D / (2 * E)):
        assert sp.simplify((false - c.expressions["ratio_general"]).subs(C, D)) == 0
        assert run_quick("ID-T4.5", _with("ID-T4.5", ratio_general=false)).verdict == "refuted"


# --------------------------------------------------------------------------------- ID-B4.7.2
def test_id_b472_measures_the_value_biases_own_unidentified_count():
    C, H = claim_symbols("ID-B4.7.2", "C", "H")
    assert_verdict(
        run_quick("ID-B4.7.2"),
        "verified-numeric",
        "the value and output biases alone leave U_value_bias",
    )
    for false in (C, C * H - 1):  # one head's worth; one entry short
        assert run_quick("ID-B4.7.2", _with("ID-B4.7.2", U_value_bias=false)).verdict == "refuted"


# ------------------------------------------------------------------------------------ TO-X2
def test_to_x2_reads_the_unit_readout_floor():
    c = claim("TO-X2")
    L = c.symbol("L")
    e = c.expressions["floor_unit_readout"]
    assert_verdict(run_quick("TO-X2"), "verified-numeric", "floor_unit_readout")
    for false in (e * (L - 1) / L, e / 2):  # the L/(L-1) dropped; a floor below the optimum
        w = run_quick("TO-X2", _with("TO-X2", floor_unit_readout=false))
        assert w.verdict == "refuted" and w.witness["family"] == "extremal"


# ------------------------------------------------------------------------------------ TO-T1
def test_to_t1_reads_the_optimal_head_width():
    c = claim("TO-T1")
    M = c.symbol("M")
    ds = c.expressions["d_star"]
    v = run_quick("TO-T1")
    assert v.verdict == "verified-symbolic" and "is the head width D/H* there" in v.evidence
    for false in (2 * ds, ds * M):
        assert run_quick("TO-T1", _with("TO-T1", d_star=false)).verdict == "refuted"


# ----------------------------------------------------------------------------------- HC-K1c
def test_hc_k1c_reads_its_two_terms():
    c = claim("HC-K1c")
    T, b = c.symbol("T"), c.symbol("beta")
    assert run_quick("HC-K1c").verdict == "verified-numeric"
    for kw in (
        {"out_of_set": 2 * c.expressions["out_of_set"]},
        {"in_set": (T - 1) * sp.exp(-1) / b},
    ):
        assert run_quick("HC-K1c", _with("HC-K1c", **kw)).verdict == "refuted"


# ------------------------------------------------------------------------------------ HC-L4
def test_hc_l4_derives_width_lower_by_division():
    A, B, cm, n = claim_symbols("HC-L4", "A", "B", "c_m", "n")
    v = run_quick("HC-L4")
    assert v.verdict == "verified-numeric" and "equal to the claim's width_lower" in v.evidence
    for false in (B * cm / A, 2 * B * cm / (A * sp.sqrt(n))):
        assert run_quick("HC-L4", _with("HC-L4", width_lower=false)).verdict == "refuted"
