"""The sixteenth audit (15 false claims on 15 claims of the five papers; 12 caught, 2 survived
and 1 crashed its check; after the fixes below all 15 are caught).

Targets: angles that earlier audits, which had changed nearly every claim expression's value, did
not take. (a) A regime widened, shifted or swapped by a misreading: HC-C1's size condition, IF-T2's
βT >= 1, ID-T4.5's H | E, ID-PUB's H >= 8, PR-N1's h_l | d. No false regime repeats the generated
"regime" mutant, which drops one condition or widens one by a unit. (b) An expression made wrong
only away from where it is usually evaluated: a factor in a secondary symbol that is 1 at a common
configuration. These are HC-K1c's in_set (T/(4|S|), 1 at |S| = T/4), HC-L4's √n (1 at n = 1),
TO-X3's 1/B (1 at B = 1), IF-R3's d² (d at d = 1), IF-K2's 2/D (1 at D = 2), ID-F4.7's H (1 at
H = 1), PR-N2's h_l read as d/64 (equal at d_h = 64) and PR-E3's p read as 1/2 (equal at
p = 1/2). (c) A statement-level misreading that moves the number the check should read: HC-X1's
transition set to CIFAR-10's (HC-X2's) value, and TO-X2's unit-readout floor, a lower bound,
with its constant raised.

Each false claim is swapped in with :func:`approxtheory.catalogue.overriding` and its check run
on the quick profile. It is caught when the verdict is ``refuted`` or ``inconsistent``. ID-PUB is
already refuted on the quick profile. There a false claim counts as caught only when its evidence
shows a failure the true claim's does not (:func:`_caught_anew`).

Caught (source in /work/shared/papers):

- HC-C1 with D1 + D2 <= T/50, the squares dropped from the size condition (headcount.md l. 152:
  D1² + D2² <= T/50). Refuted: at D1 = 29, D2 = 30, T = 2950 the proof's k - max(D1, D2) is
  -23.3, not > 0.
- HC-K1c with in_set = (|S| - 1)/(eβ) · T/(4|S|), the in-set term scaled to its value at the least
  set |S| = T/4 (headcount.md l. 243-244: (|S_i| - 1)/(eβ) for every |S_i| >= T/4, l. 95).
  Refuted: the bound fails in 30/144 cells.
- HC-L4 with lipschitz = p and width_lower = B c_m/A, the input dimension's √n dropped (n = 1)
  (headcount.md l. 206-208: |ΔF_j| <= p √n ||Δv||, p_eff >= c_m B/(A√n)). Refuted: all-ones nets
  reach 128 times the bound at n = 16384.
- HC-X1 with h_transition = 10, CIFAR-10's transition given to MS MARCO (headcount.md l. 348:
  MS MARCO near h = 12; l. 359: CIFAR-10 near h = 10). Inconsistent: Table 6 gives ĥ = 12 on
  [12, 12].
- TO-X2 with floor_unit_readout doubled, a lower bound's constant raised (tradeoffs.md l. 134:
  (1 - a*)² L/(L - 1) at c = 1, attained by one logit at B and the rest at -B). Refuted: the
  extremal row errs 0.285 against the claimed 0.570 at B = 0.25, L = 2.
- IF-R3 with N_decode = C4 ε^(-|I| d²), d in the exponent squared (1 at d = 1) (infoflow.md l. 340
  and the catalogue's statement: the plain Lipschitz count |I|·d). Refuted: the matching
  construction's rate at d = 2 is units^-0.54 against the claimed -1/4.
- IF-K2 with err_bound = 4(ln βT + 1)/β, the D = 2 bound taken for every D (factor 2/D)
  (infoflow.md l. 250-261: D terms, each two softmax retrievals, summed linearly). Refuted at
  D = 16 tied heads, T = 8, β = 100.
- ID-F4.7 with U_key_bias = D, one head's inert key bias for the layer (identification.md
  l. 104: each head contributes D). Refuted: 8 measured vs 4 at (H, D) = (2, 4).
- ID-PUB with the regime H >= 2, "published architectures" read as multi-head
  (identification.md l. 283: H >= 8). Refuted on its own account at H = 6 (11/12 > 9/10),
  which the true claim's regime does not admit.
- PR-N1 with the regime h_l <= d, h_l | d read as "at most d heads" (prism.md l. 33:
  divisibility, h_l divides d). Refuted: the regime admits h_l = 3 at d = 64, where heads of width
  21 or 22 do not have N_attn attention weights.
- PR-N2 with F_softmax = c T² d/64, the head count read as d/64, the usual head width 64
  (prism.md l. 136: c·h_l·T², which depends on h_l). Refuted: the uniform toy layer (h = 4)
  computes 8,192 scores per c, not 2,048.
- PR-E3 with se = sqrt(q/(2n)), p read as 1/2 in one factor (prism.md l. 183-184: one standard
  error of an accuracy on n items, sqrt(pq/n)). Refuted: it is not the binomial standard error
  (relative difference up to 2.2 over p in 0.05-0.95).

Crashed the check at first, refuted after the fix:

- IF-T2 with the regime T >= β, βT >= 1 read as the long-sequence condition (infoflow.md l. 163:
  δ = ln(βT)/β needs βT >= 1). The quick grid's cell T = 4, β = 10 lies outside the false regime,
  and building it raised RegimeError (the construction evaluated the bound with the claim's
  regime checked). A construction now takes the formula's value wherever its own requirements
  hold (constructions._base.formula_value), and the check holds only the cells the claim's
  regime admits. The false regime admits T = 2, β = 0.05 (βT = 0.1), where the bound is
  negative: refuted.

Survived the audit, caught after the checks were fixed:

- TO-X3 with mse_difference = 2σ² e^{2B}/(B L), a factor 1/B that is 1 at B = 1 (tradeoffs.md
  l. 138: 2σ² e^{2B}/L). It is false at B = 5, L = 32768: the vertex pair's Σ(Δα)² is 0.329
  against 0.269. The quick sweep stopped at B = 3, L = 2048; it now reaches B = 6, L = 2^17
  (the vertex pairs are exact and cheap there): refuted at B = 6, L = 131072.
- ID-T4.5 with the regime H <= E, "H divides E" read as "at most E heads" (identification.md
  l. 84: the ratio needs D = C = E/H, i.e. H divides E). At E = 8, H = 3 the claimed
  U = 2E²/H = 128/3 is not even an integer (heads of width 3, 3, 2 leave 44 unidentified). The
  check built only H | E; now, where the claim's regime admits an H that does not divide E, U
  must be a whole count of weights: refuted at (8, 3).

Three true controls (a regime written equivalently), on HC-C1, ID-L4.1 and PR-N1: each keeps the
catalogue's quick verdict.
"""

import sympy as sp
from _helpers import caught_anew as _caught_anew
from _helpers import caught_quick as _caught
from _helpers import claim_symbols as _sym
from _helpers import false_claim as _with
from _helpers import keeps_quick_verdict as _keeps

from approxtheory import claim
from approxtheory.catalogue import Condition


# ----------------------------------------------------------------------------------- headcount
def test_hc_c1_size_condition_without_squares():
    # digest Corollary 1 (l. 152): D1² + D2² <= T/50, so that k > γ in the proof
    D1, D2, T = _sym("HC-C1", "D1", "D2", "T")
    case = claim("HC-C1").regime[1]
    false = _with("HC-C1", regime=[Condition(sp.Le(D1 + D2, T / 50), "D1 + D2 <= T/50"), case])
    v = _caught("HC-C1", false)
    assert "> 0 required (FAILED)" in v.evidence, v.evidence


def test_hc_c1_control_size_condition_cleared_of_the_fraction():
    D1, D2, T = _sym("HC-C1", "D1", "D2", "T")
    case = claim("HC-C1").regime[1]
    size = Condition(sp.Le(50 * (D1**2 + D2**2), T), "50(D1² + D2²) <= T")
    _keeps("HC-C1", _with("HC-C1", regime=[size, case]))


def test_hc_k1c_in_set_term_scaled_to_the_least_set():
    # digest §4.1 step 4 (l. 243-244): the in-set term is (|S_i| - 1)/(eβ) for each set
    # |S_i| >= T/4 (l. 95); the factor T/(4|S|) is 1 only at the least set
    S, b, T = _sym("HC-K1c", "S", "beta", "T")
    in_set = (S - 1) / (sp.E * b) * T / (4 * S)
    false = _with("HC-K1c", in_set=in_set, err_bound=claim("HC-K1c").expr("out_of_set") + in_set)
    v = _caught("HC-K1c", false)
    assert "the bound fails in 30/144 cells" in v.evidence, v.evidence


def test_hc_l4_lipschitz_without_the_input_dimension():
    # digest HC-L4 (l. 206-208): |ΔF_j| <= p √n ||Δv||_2, hence p_eff >= c_m B/(A√n); the √n is
    # 1 only at n = 1
    p, A, B, cm = _sym("HC-L4", "p", "A", "B", "c_m")
    v = _caught("HC-L4", _with("HC-L4", lipschitz=p, width_lower=B * cm / A))
    assert v.witness["n"] > 1, v.witness


def test_hc_x1_transition_of_cifar():
    # digest §5.2 (l. 348): MS MARCO's transition is near h = 12; §5.3 (l. 359): h = 10 is
    # CIFAR-10's (HC-X2)
    v = _caught("HC-X1", _with("HC-X1", h_transition=sp.Integer(10)))
    assert "2 head(s) from ĥ = 12 (beyond 1)" in v.evidence, v.evidence


# ----------------------------------------------------------------------------------- tradeoffs
def test_to_x2_unit_readout_floor_raised():
    # digest X2 (l. 134): with read-out c = 1 the floor is (1 - a*)² L/(L - 1), attained by one
    # logit at B and the rest at -B; a lower bound with its constant doubled is not attained
    c = claim("TO-X2")
    v = _caught("TO-X2", _with("TO-X2", floor_unit_readout=2 * c.expr("floor_unit_readout")))
    assert "is attained by the extremal row" in v.evidence and "in 0/45" in v.evidence


def test_to_x3_difference_over_b():
    # digest X3 (l. 138): E||o - o'||² <= 2σ² e^{2B}/L; the factor 1/B is 1 at B = 1 only
    sg, B, L = _sym("TO-X3", "sigma", "B", "L")
    v = _caught("TO-X3", _with("TO-X3", mse_difference=2 * sg**2 * sp.exp(2 * B) / (B * L)))
    assert (v.witness["B"], v.witness["L"]) == (6.0, 131072), v.witness


# ------------------------------------------------------------------------------------ infoflow
def test_if_t2_regime_as_long_sequences():
    # digest §3 (l. 163): err_attn <= (1 + ln βT)/β with δ = ln(βT)/β, which needs βT >= 1;
    # T >= β admits βT = 0.1, where the bound is negative
    b, T = _sym("IF-T2", "beta", "T")
    v = _caught("IF-T2", _with("IF-T2", regime=[Condition(sp.Ge(T, b), "T >= beta")]))
    assert "the claim's regime admits cells below βT = 1 where err_attn fails" in v.evidence
    assert "lie outside the claim's regime (T >= beta), not held" in v.evidence


def test_if_r3_decoding_exponent_in_d_squared():
    # digest §5.2 (l. 340): decode_law='lipschitz' uses |I|·d, the plain Lipschitz count of
    # |I|·d numbers (the catalogue's IF-R3); d² equals d only at d = 1
    C4, eps, I, d = _sym("IF-R3", "C4", "epsilon", "I_size", "d")
    v = _caught("IF-R3", _with("IF-R3", N_decode=C4 / eps ** (I * d**2)))
    assert "|I|=1, d=2 (m = 2): worst error ~ units^-0.539" in v.evidence
    assert "FAILS" in v.evidence


def test_if_k2_bound_of_two_terms_for_every_d():
    # digest §4.2 (l. 250-261): D terms, each two softmax retrievals (one per layer), summed by a
    # linear read-out; the factor 2/D is 1 only at D = 2
    (D,) = _sym("IF-K2", "D")
    v = _caught("IF-K2", _with("IF-K2", err_bound=claim("IF-K2").expr("err_bound") * 2 / D))
    assert v.witness["D"] == 16, v.witness


# ------------------------------------------------------------------------------ identification
def test_id_t45_regime_at_most_e_heads():
    # digest §3 (l. 84): the ratio 1/(2H) needs D = C = E/H, i.e. H divides E
    E, H = _sym("ID-T4.5", "E", "H")
    v = _caught("ID-T4.5", _with("ID-T4.5", regime=[Condition(sp.Le(H, E), "H <= E")]))
    assert "is 128/3 at E = 8, H = 3, not an integer count" in v.evidence, v.evidence


def test_id_f47_key_bias_of_one_head():
    # digest ID-F4.7 (l. 104): each head contributes D unidentified key-bias entries, D·H per
    # layer; D alone equals it only at H = 1
    (D,) = _sym("ID-F4.7", "D")
    v = _caught("ID-F4.7", _with("ID-F4.7", U_key_bias=D))
    assert "8 measured vs 4 claimed at (H, D) = (2, 4) (NOT equal)" in v.evidence


def test_id_l41_control_regime_strict():
    D, E = _sym("ID-L4.1", "D", "E")
    side = claim("ID-L4.1").regime[0].outside
    _keeps("ID-L4.1", _with("ID-L4.1", regime=[Condition(sp.Lt(D, E + 1), "D < E + 1", side)]))


def test_id_pub_regime_read_as_multi_head():
    # digest (l. 283): the published architectures have H >= 8; H >= 2 admits H = 6 and 7, whose
    # fractions 11/12 and 13/14 (above 90 %) the true claim's regime does not speak of
    (H,) = _sym("ID-PUB", "H")
    divides = claim("ID-PUB").regime[0]
    multi = Condition(H >= 2, "published architectures: H >= 2 heads")
    v = _caught_anew("ID-PUB", _with("ID-PUB", regime=[divides, multi]))
    assert "for the regime's H >= 2" in v.evidence, v.evidence
    assert v.witness["H"] < 8, v.witness


# --------------------------------------------------------------------------------------- prism
def test_pr_n1_regime_at_most_d_heads():
    # digest §2 (l. 33): h_l divides d for every l; h_l <= d admits h_l = 3 at d = 64
    d, h = _sym("PR-N1", "d", "h_l")
    v = _caught("PR-N1", _with("PR-N1", regime=[Condition(sp.Le(h, d), "h_l <= d")]))
    assert "the claim's regime ADMITS the cell, where the count fails" in v.evidence


def test_pr_n1_control_divisibility_by_floor():
    d, h = _sym("PR-N1", "d", "h_l")
    side = claim("PR-N1").regime[0].outside
    same = Condition(sp.Eq(d - h * sp.floor(d / h), 0), "d - h_l*floor(d/h_l) = 0", side)
    _keeps("PR-N1", _with("PR-N1", regime=[same]))


def test_pr_n2_softmax_heads_read_as_width_over_64():
    # digest §4 (l. 136): the softmax work is c·h_l·T² and depends on h_l; d/64 is h_l only at
    # head width 64
    T, c, d = _sym("PR-N2", "T", "c", "d")
    v = _caught("PR-N2", _with("PR-N2", F_softmax=T**2 * c * d / 64))
    assert "1 x 8,192 scores = 8192 != B·F_softmax 2048" in v.evidence, v.evidence


def test_pr_e3_standard_error_at_one_half():
    # digest §6 (l. 183-184): one standard error of an accuracy on n items, sqrt(p q / n); the
    # form sqrt(q/(2n)) equals it only at p = 1/2
    q, n = _sym("PR-E3", "q", "n")
    v = _caught("PR-E3", _with("PR-E3", se=sp.sqrt(q / (2 * n))))
    assert "the formula is NOT the binomial standard error" in v.evidence
