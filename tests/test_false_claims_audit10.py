"""The tenth audit (16 false claims on 15 claims of the five papers; 7 caught, 9 survived).

Each false claim is swapped in with :func:`approxtheory.catalogue.overriding` and its check run
on the quick profile; a caught one is ``refuted`` or ``inconsistent``.

Caught: TO-X3 with its ρ = 0 regime condition dropped, TO-C1 with logit_change = R·σ_{r+1} (one R
lost), IF-K3 with readout_nonzero = d², ID-S5.1 with ρ = (D² - 1)/(2DE), ID-E5 claiming the
rebalanced run's loss lower than AdamW's, PR-E3 with PIQA at 3000 items, PR-N1 with N_norm = 4d.

Survivors, and how each is caught now:

- HC-C1 with its case condition reversed to D2 < D1: the check enumerates every pair its regime
  admits and requires the proof's HC-T2b step (s = D1 heads against D = D2 features) inside
  HC-T2b's regime s < D.
- HC-T2c with its regime widened from n >= T·d to n >= d: the regime is read against HC-T2b's
  lower bound at widths n < T·d (one head, D = 2): k up to 84 there, above M_suff's exponent.
- HC-R2 with C_T = n·C_{d,D}/(rT)^(αT): the factor free of T and r (C_{d,D}) may read d, D only.
- TO-T1 with the symmetric-group substitution dropped consistently: the template must be M
  times one group's error at H/M heads and dimension D/M.
- TO-X1 with L rounded up to a power of two: L = 3 and 17 are read too.
- IF-T2 with its regime widened to βT >= 1/8: the head is built at βT in {0.1, 0.2, 0.4}, and
  a cell the regime admits is held to the bound (negative at βT = 0.2).
- IF-R1 with I_global = T/2: I_global is held to the positions a global-aggregation head's
  output depends on (T of T).
- PR-E4 with t_end = 10.49e9: t_end is held to the Large runs' tokens (PR-TPP's steps x batch
  tokens). With the plateau at 2e9 it still passes: t_plateau only shapes the gap, and the
  scope says its value is not tested beyond noisy < plateau < end (a plateau after the end is
  caught).
"""

import sympy as sp
from _helpers import caught_quick as _caught
from _helpers import false_claim as _with
from _helpers import run_quick as _run

from approxtheory import claim
from approxtheory.catalogue import Condition


# ----------------------------------------------------------------------------------- headcount
def test_hc_c1_case_condition_reversed():
    # digest HC-C1: the proof's case is D1 < D2 (HC-T2b needs s = D1 < D = D2); with D1 > D2
    # HC-T2a's h >= D upper bound applies instead, so no ε^-k lower bound holds there
    c = claim("HC-C1")
    D1, D2 = c.symbol("D1"), c.symbol("D2")
    rev = [c.regime[0], Condition(sp.Lt(D2, D1), "D2 < D1")]
    _caught("HC-C1", _with("HC-C1", regime=rev))


def test_hc_t2c_regime_widened_to_n_at_least_d():
    # digest HC-T2c needs n >= T·d; at h = 1 < D with n = d, HC-T2b's k grows with T past 1 + γ
    c = claim("HC-T2c")
    n, d = c.symbol("n"), c.symbol("d")
    _caught("HC-T2c", _with("HC-T2c", regime=[Condition(sp.Ge(n, d), "n >= d")]))


def test_hc_r2_constant_depends_on_n():
    # digest §3 (line 181): C_{d,D,T} = C_{d,D}(rT)^(-α_{d,D}T), C_{d,D} depending on d, D only
    c = claim("HC-R2")
    _caught("HC-R2", _with("HC-R2", C_T=c.expr("C_T") * c.symbol("n")))


# ----------------------------------------------------------------------------------- tradeoffs
def test_to_t1_template_without_symmetric_groups():
    # digest TO-T1: E = M(a (H/M)^-α + b (D/H)^-β), H* carries M^α/(α+β); dropping H_m = H/M
    # (consistently in E, H*, d*) gives the wrong optimum for M > 1
    c = claim("TO-T1")
    H, D, a, b, al, be = (c.symbol(x) for x in ("H", "D", "a", "b", "alpha", "beta"))
    Hs = (al * a / (be * b)) ** (1 / (al + be)) * D ** (be / (al + be))
    false = _with("TO-T1", error=a * H**-al + b * (D / H) ** -be, H_star=Hs, d_star=D / Hs)
    _caught("TO-T1", false)


def test_to_x1_count_rounded_to_a_power_of_two():
    # digest X1: cap e^{2B}/(e^{2B} + L - 1), attained; at L = 3 this cap (L read as 4) is lower
    c = claim("TO-X1")
    B, L = c.symbol("B"), c.symbol("L")
    cap = sp.exp(2 * B) / (2 ** sp.ceiling(sp.log(L, 2)) + sp.exp(2 * B) - 1)
    _caught("TO-X1", _with("TO-X1", max_weight=cap))


def test_to_x3_iid_values_condition_dropped():
    # digest X3: values i.i.d. isotropic; with position-dependent means the difference is O(σ²)
    c = claim("TO-X3")
    _caught("TO-X3", _with("TO-X3", regime=[c.regime[0]]))


def test_to_c1_logit_change_one_r_lost():
    # digest C1: |Δz| <= σ_{r+1} R² (both tokens of norm <= R)
    c = claim("TO-C1")
    _caught("TO-C1", _with("TO-C1", logit_change=c.symbol("R") * c.symbol("sigma_r1")))


# ------------------------------------------------------------------------------------ infoflow
def test_if_t2_regime_widened_below_one():
    # digest IF-T2: δ = ln(βT)/β > 0 needs βT >= 1; at βT = 1/8 the bound is negative
    c = claim("IF-T2")
    T, bt = c.symbol("T"), c.symbol("beta")
    wide = [Condition(sp.Ge(T * bt, sp.Rational(1, 8)), "beta*T >= 1/8")]
    _caught("IF-T2", _with("IF-T2", regime=wide))


def test_if_r1_global_information_half_the_sequence():
    # digest §5 (GIA): one head pools information from the whole sequence: I = T
    c = claim("IF-R1")
    _caught("IF-R1", _with("IF-R1", I_global=c.symbol("T") / 2))


def test_if_k3_readout_count_squared():
    c = claim("IF-K3")
    _caught("IF-K3", _with("IF-K3", readout_nonzero=c.symbol("d") ** 2))


# ------------------------------------------------------------------------------ identification
def test_id_s51_orbit_dimension_minus_one():
    # digest: the invariant subspace has dimension D² in 2DE, so ρ = 1/(2H), not (D² - 1)/(2DE)
    c = claim("ID-S5.1")
    E, H = c.symbol("E"), c.symbol("H")
    _caught("ID-S5.1", _with("ID-S5.1", rho_isotropic=1 / (2 * H) - H / (2 * E**2)))


def test_id_e5_rebalancing_claimed_to_lower_the_loss():
    # digest §5 (line 196): "the loss is unchanged relative to AdamW"; line 308: no claim of benefit
    _caught("ID-E5", _with("ID-E5", loss_sign_rebalanced_minus_adamw=sp.Integer(-1)))


# --------------------------------------------------------------------------------------- prism
def test_pr_e3_piqa_item_count_moved():
    # digest §6: PIQA ≈ 1.8k items
    _caught("PR-E3", _with("PR-E3", items_PIQA=sp.Integer(3000)))


def test_pr_n1_norm_count_doubled():
    # digest: RMSNorm, 2 norms of d weights per layer
    c = claim("PR-N1")
    _caught("PR-N1", _with("PR-N1", N_norm=4 * c.symbol("d")))


def test_pr_e4_end_of_training_at_medium_tokens():
    # digest §5 table: 2.88B / 10.49B / 20.97B tokens (Small/Medium/Large); Fig. 3 is Large
    _caught("PR-E4", _with("PR-E4", t_end=sp.Integer(10_490_000_000)))


def test_pr_e4_plateau_position_is_only_held_to_the_phase_order():
    # t_plateau only shapes the gap: the milestone consequence is the same for any noisy <
    # plateau < end, so 2B passes and the scope says the value is not tested beyond that order
    v = _run("PR-E4", _with("PR-E4", t_plateau=sp.Integer(2_000_000_000)))
    assert v.verdict == "consistent-empirical", v.evidence
    assert "t_noisy and t_plateau" in v.scope and "not tested beyond that order" in v.scope
    # a plateau after the end of training breaks the order: caught
    _caught("PR-E4", _with("PR-E4", t_plateau=sp.Integer(30_000_000_000)))
