"""The ninth audit (13 false claims on claims no earlier audit touched; 4 caught, 9 survived).

Skipped because their quick baseline is not-checkable or vacuous-here: HC-TR1, HC-TR2, HC-TR3,
TO-P2, IF-T3, IF-T4, PR-N3. No false claim was written for HC-P2, HC-P5, HC-N1, IF-P2, HC-P7,
HC-B1, PR-S6 (they have no expression of their own; their checks read HC-K1, HC-L4, HC-T2b,
IF-T1/HC-T2a or the paper's tables). IF-K2p and PR-TPP were skipped because their baselines are
already refuted. HC-K1's baseline is refuted too, but one false claim turns it into a pass.

Caught: HC-T2a with its regime widened to h >= D - 1 (the one-head cells refute it), ID-L4.1 with
its regime widened to D <= 2E (the (3, 2) cell refutes it), ID-B4.7.2 with U_value_bias =
C(H - 1), ID-EQ4.10 with E0 = floor(E sqrt(2 - 1/H)) + 1 (off by one at H = 1).

All nine survivors are caught now:

- HC-T2a reads M_suff at γ > 0 (HC-A3's γ_worst) and, for an M_suff that depends on T, at T
  from 1 to 128: C/ε^(γT/8) falls below the width's exponent at T < 8, C·ε^γ everywhere.
- HC-K1 and HC-K1c build T = 4, whose |S| = 1 cell has no in-set term: the leak is measured
  alone there ((T - |S|) e^{2β(1+c)}, |S| e^{β(1+c)}, T e^{-2β} at gate -2 all fall below it).
- TO-X2 reads its kind: read as an upper bound the floor is exceeded by the uniform head.
- ID-X4.8.1 builds one-head layers at (D, E) = (3, 2), (4, 3) (U = 16, 30 against 2D² = 18,
  32): a regime widened past D <= E admits them and is refuted.
- ID-RG adds E = 16, H = 4, G = 2 (D = 4): D^G = 16 against the measured G·D = 8.
- ID-S5.2n's catalogue entry states norm_over_nuclear = 2, which its check reads.
"""

import dataclasses

import sympy as sp
from _helpers import CATCHING
from _helpers import caught_quick as _caught
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import claim
from approxtheory.catalogue import Condition


# ------------------------------------------------------------------------------------ HC-T2a
def _t2a():
    c = claim("HC-T2a")
    return c, c.symbol("C"), c.symbol("epsilon"), c.symbol("gamma")


def test_hc_t2a_rate_growing_with_t():
    c, C, eps, gam = _t2a()
    T = claim("HC-T2b").symbol("T")
    _caught("HC-T2a", _with("HC-T2a", M_suff=C / eps ** (gam * T / 8)))


def test_hc_t2a_exponent_sign_flipped():
    c, C, eps, gam = _t2a()
    _caught("HC-T2a", _with("HC-T2a", M_suff=C * eps**gam))


def test_hc_t2a_regime_widened_to_one_head_is_refuted():
    c = claim("HC-T2a")
    h, D = c.symbol("h"), c.symbol("D")
    wide = [Condition(sp.Ge(h, D - 1), "h >= D - 1"), c.regime[1]]
    v = _caught("HC-T2a", _with("HC-T2a", regime=wide))
    assert "admits h = 1 < D = 2" in v.evidence


# ------------------------------------------------------------------------------- HC-K1, K1c
def test_hc_k1_gate_minus_2_with_doubled_leak_exponent():
    k = claim("HC-K1")
    S, b, T = k.symbol("S"), k.symbol("beta"), k.symbol("T")
    false = _with("HC-K1", gate=sp.Integer(-2), err_bound=T * sp.exp(-2 * b) + (S - 1) / (sp.E * b))
    _caught("HC-K1", false, base=CATCHING)  # its true form is already refuted (gate -1)


def _k1c_false(oos):
    return _with("HC-K1c", out_of_set=oos, err_bound=oos + claim("HC-K1c").expr("in_set"))


def test_hc_k1c_leak_exponent_doubled():
    k = claim("HC-K1c")
    S, b, T, c = (k.symbol(x) for x in ("S", "beta", "T", "c"))
    _caught("HC-K1c", _k1c_false((T - S) * sp.exp(2 * b * (1 + c))))


def test_hc_k1c_leak_counts_in_set_tokens():
    k = claim("HC-K1c")
    S, b, c = (k.symbol(x) for x in ("S", "beta", "c"))
    _caught("HC-K1c", _k1c_false(S * sp.exp(b * (1 + c))))


# ------------------------------------------------------------------------------------- TO-X2
def test_to_x2_floor_stated_as_upper_bound():
    _caught("TO-X2", dataclasses.replace(claim("TO-X2"), kind="upper"))


# ---------------------------------------------------------------------------- identification
def test_id_l41_regime_widened_to_2e_is_refuted():
    c = claim("ID-L4.1")
    D, E = c.symbol("D"), c.symbol("E")
    v = _caught("ID-L4.1", _with("ID-L4.1", regime=[Condition(sp.Le(D, 2 * E), "D <= 2E")]))
    assert "admits (D,E)=(3,2)" in v.evidence


def test_id_x481_regime_widened_to_2e():
    c = claim("ID-X4.8.1")
    D, E = c.symbol("D"), c.symbol("E")
    _caught("ID-X4.8.1", _with("ID-X4.8.1", regime=[Condition(sp.Le(D, 2 * E), "D <= 2E")]))


def test_id_rg_qk_count_power_of_groups():
    c = claim("ID-RG")
    _caught("ID-RG", _with("ID-RG", U_qk=c.symbol("D") ** c.symbol("G")))


def test_id_b472_value_bias_count_h_minus_1_is_refuted():
    c = claim("ID-B4.7.2")
    C, H = c.symbol("C"), c.symbol("H")
    v = _caught("ID-B4.7.2", _with("ID-B4.7.2", U_value_bias=C * (H - 1)))
    assert "E=8 H=1 bias: 8 vs 0" in v.evidence


def test_id_eq410_width_off_by_one_is_refuted():
    c = claim("ID-EQ4.10")
    E, H = c.symbol("E"), c.symbol("H")
    false = _with("ID-EQ4.10", E0=sp.floor(E * sp.sqrt(2 - 1 / H)) + 1)
    v = _caught("ID-EQ4.10", false)
    assert "(8, 1)" in v.evidence


def test_id_s52n_minimum_norm_without_factor_2():
    c = claim("ID-S5.2n")
    false = dataclasses.replace(
        c,
        statement="The balanced point has the smallest ||W_Q||² + ||W_K||² on its orbit, equal "
        "to ||W_Kᵀ W_Q||_* (the nuclear norm).",
        expressions={"norm_over_nuclear": sp.Integer(1)},
    )
    _caught("ID-S5.2n", false)
    v = _run("ID-S5.2n", false)
    assert "norm_over_nuclear = 1" in v.evidence and "norm = 1||M||_*" in v.evidence
