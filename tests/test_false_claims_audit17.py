"""The seventeenth audit (15 false claims on 15 claims of the five papers; 13 caught by their own
check, 2 survived it; no check crashed; after the fixes below all 15 are caught).

Targets: (a) claims decided on trained results or on the papers' tables, misread the way a careful
reader could: the neighbouring row or configuration's value (HC-X1's h = 14, HC-X2 given
MS MARCO's h = 12, PR-S's base head width 64 of Small/Medium taken for Large, PR-E3's ARC-Easy
given PIQA's item count, IF-E1 with the CLS token counted as a fourth position), the wrong table
column (HC-P11's α and δ swapped), a threshold moved by one (HC-P10's L·h >= D read as L·h > D).
(b) a count or formula that agrees at the configurations a reader tests first but not at others:
HC-K2's T·d read as T + d, TO-X1's L - 1 on the wrong term (equal at L = 2), TO-X4's weight ratio
e^δ, ID-GQA4.9's QK count per query head (equal at G = H), ID-L4.1w's D² (equal at D <= E),
ID-S5.1's 1/H² (equal at H = 2), PR-N1's SwiGLU read as 8d² (equal at f = 8d/3), HC-P3's β
without ε. None repeats an earlier audit's false claim (each expression and value was grepped
in tests/test_false_claims_*.py and tests/test_claim_mutants.py).

Each false claim is swapped in with :func:`approxtheory.catalogue.overriding` and its check run on
the quick profile (shipped trained results and tables are read; nothing trains). It is caught
when the verdict is ``refuted`` or ``inconsistent``.

Caught (source in /work/shared/papers):

- HC-K2 with width = T + d, e_t ⊗ x(t) read as a direct sum (headcount.md l. 262: ∈ R^{Td},
  n = Td): refuted at every (T, d) read, e.g. 6 claimed vs 8 built at (4, 2).
- HC-P11 with alpha_paper = -1/4, delta_paper = 7/5, the fit's two columns swapped (headcount.md
  l. 347: δ = 0.25, α = -1.40): inconsistent, the refit gives α in [-1.79, -1.09], δ in
  [0.193, 0.362].
- HC-X1 with h_transition = 14, the next tabulated row above (headcount.md l. 348: near h = 12;
  l. 347: the fit drops h = 12, 14, 16): inconsistent, 2 heads from ĥ = 12 on [12, 12].
- HC-P3 with beta_needed = log(T)/g, the digest's "grows like log T / g" read as the whole β
  (headcount.md l. 381-382: error about T e^{-βg}, so β = log(T/ε)/g): refuted, the measured
  ε-slope is -1.0 at every g and the claimed β does not suffice in 36/36 cells.
- TO-X1 with max_weight = e^{2B}/((L - 1)e^{2B} + 1), L - 1 put on the largest logit's term
  (tradeoffs.md l. 127: e^{2B}/(e^{2B} + L - 1); equal at L = 2): refuted, weight/cap 436 at
  B = 4, L = 512.
- TO-X4 with weight_ratio = e^δ, the normaliser's own shift forgotten (tradeoffs.md l. 142: each
  ratio in [e^{-2δ}, e^{2δ}]): refuted, ratio/bound 20.1.
- IF-E1 with weight_per_position = 1/4, the CLS token counted as a fourth position (infoflow.md
  l. 100, 432: positions 1-3 each in [0.30, 0.37]): inconsistent, seed 0 puts 0.3325-0.3350 on each.
- ID-GQA4.9 with U_qk = H·D², the QK symmetries counted per query head (identification.md l. 77,
  111: G·D², "instead of H·D²"; equal at G = H): refuted in 7/7 configurations (8 vs 16 at
  E = 8, H = 4, G = 2).
- ID-L4.1w with U = D² (ratio D²/(2DE)), the D <= E count taken for every D (identification.md
  l. 85: 2DE - E² for D > E): refuted at (D, E) = (5, 3), 21 measured vs 25.
- ID-S5.1 with rho_isotropic = 1/H² (identification.md l. 143: E[ρ] = D²/(2DE) = 1/(2H); equal
  at H = 2): refuted at H = 4 (0.1257 measured vs 0.0625) and H = 1.
- PR-S with d_head = 64·h_base/h_l, Small's and Medium's base head width 64 taken for every
  scale (prism.md l. 45, 53, 56: d_h = d/h_l; Large has 16 heads of 96): refuted, Large's heads
  do not tile d = 1536.
- PR-E3 with items_ARC_Easy = 1800, PIQA's count in ARC-Easy's row (prism.md l. 183: ARC-E
  ≈2.4k items): refuted, 1,800 is not ARC-Easy's 2,376 rounded to 100.
- PR-N1 with N_mlp = 8d² (N_layer, N_model consistent), SwiGLU's 3·d·f read at f = 8d/3
  (prism.md l. 124-125: 3·d·f): refuted, the toy's SwiGLU (f = 170 at d = 64) has 32,640
  weights, not 32,768.

Survived its own check at first, caught after the checks were fixed:

- HC-X2 with h_transition = 12, MS MARCO's transition given to CIFAR-10 (headcount.md l. 359: near
  h = 10; l. 362: Fig. 2d positive for h >= 10). Table 8's saturation point is ĥ = 11 on
  [10, 13], and 12 is within one head, so the saturation reading passed it. HC-P11's check, which
  reads HC-X2 from the catalogue, did flag it (tested below). HC-X2's own check now adds the
  reversal reading its statement names (Fig. 2d): h* must be Table 8's first h with R(h) > 0,
  R as HC-P11 defines it, which is 10: inconsistent.
- HC-P10 with heads_times_layers_needed = D + 1, L·h >= D read as L·h > D (headcount.md l. 203,
  414-416: at D = 4 a 2-layer model with h = 2 already reaches ~1e-6, Table 5). The check trains
  D = 3 only, where ceil((D + 1)/2) = ceil(D/2) = 2. It now also holds the claim's two-layer
  transition at the paper's own Table 5 cell (D = 4, L = 2, h = 2, past the transition; the cell
  HC-Conj1 reads): D + 1 asks h >= 3 there, inconsistent.

Three true controls (an equivalent rewrite), on PR-S (d/h_base · h_base/h_l), HC-P11
(max(0, e1 - e2) as (e1 - e2 + |e1 - e2|)/2) and TO-X4 ((e^δ)² for e^{2δ}): each keeps the
catalogue's quick verdict.
"""

import sympy as sp
from _helpers import caught_quick as _caught
from _helpers import claim_symbols as _sym
from _helpers import false_claim as _with
from _helpers import keeps_quick_verdict as _keeps
from _helpers import run_quick

from approxtheory import claim


# ----------------------------------------------------------------------------------- headcount
def test_hc_k2_width_as_direct_sum():
    # digest §4.2 (l. 262): P_φ(x(t), t) = e_t ⊗ x(t) ∈ R^{Td}, n = E = Td; T + d is ⊕
    T, d = _sym("HC-K2", "T", "d")
    v = _caught("HC-K2", _with("HC-K2", width=T + d))
    assert "(4, 2): 6" in v.evidence and "NOT consistent" in v.evidence, v.evidence


def test_hc_p11_fit_columns_swapped():
    # digest §5.2 (l. 347): δ = 0.25, α = -1.40; the two fitted constants read in each other's
    # column
    v = _caught(
        "HC-P11", _with("HC-P11", alpha_paper=sp.Rational(-1, 4), delta_paper=sp.Rational(7, 5))
    )
    assert "the paper's α = -0.25 is outside and δ = 1.40 outside" in v.evidence, v.evidence


def test_hc_p11_control_reversal_term_without_max():
    e1, e2 = _sym("HC-P11", "e_1", "e_2")
    _keeps("HC-P11", _with("HC-P11", reversal_term=(e1 - e2 + sp.Abs(e1 - e2)) / 2))


def test_hc_x1_transition_at_the_next_row():
    # digest §5.2 (l. 347-348): the transition is near h = 12; 14 is Table 6's next head count
    v = _caught("HC-X1", _with("HC-X1", h_transition=sp.Integer(14)))
    assert "2 head(s) from ĥ = 12 (beyond 1)" in v.evidence, v.evidence


def test_hc_x2_transition_of_ms_marco():
    v = _caught("HC-X2", _with("HC-X2", h_transition=sp.Integer(12)))
    assert "the first h with R > 0 is 10, NOT the claim's h* = 12" in v.evidence, v.evidence


def test_hc_x2_transition_of_ms_marco_flagged_by_hc_p11():
    # HC-P11's check reads HC-X2's transition from the catalogue: Table 8's R turns positive at 10
    v = run_quick("HC-P11", _with("HC-X2", h_transition=sp.Integer(12)))
    assert v.verdict == "inconsistent", v.evidence
    assert "HC-X2's transition h* = 12 (read from the catalogue): not equal" in v.evidence


def test_hc_p10_layers_times_heads_strictly_above_d():
    # digest Conj. 1 (l. 201-203) and P10 (l. 414-416): L·h >= D; at D = 4, 2 layers of h = 2
    (D,) = _sym("HC-P10", "D")
    v = _caught("HC-P10", _with("HC-P10", heads_times_layers_needed=D + 1))
    assert "h >= 3: NOT past it" in v.evidence, v.evidence


def test_hc_p3_beta_needed_without_epsilon():
    # digest P3 (l. 381-382): error about T e^{-βg}, so β needed = log(T/ε)/g; "grows like
    # log T / g" is its T-dependence only
    T, g = _sym("HC-P3", "T", "g")
    v = _caught("HC-P3", _with("HC-P3", beta_needed=sp.log(T) / g))
    assert "Failed: the ε-dependence" in v.evidence, v.evidence


# ----------------------------------------------------------------------------------- tradeoffs
def test_to_x1_l_minus_one_on_the_largest_logit():
    # digest X1 (l. 127): e^{2B}/(e^{2B} + L - 1); the false cap equals it at L = 2 only
    B, L = _sym("TO-X1", "B", "L")
    cap = sp.exp(2 * B) / ((L - 1) * sp.exp(2 * B) + 1)
    v = _caught("TO-X1", _with("TO-X1", max_weight=cap))
    assert "FAILS" in v.evidence and v.witness["L"] > 2, v.witness


def test_to_x4_weight_ratio_of_one_shift():
    # digest X4 (l. 142): each ratio α'_s/α_s lies in [e^{-2δ}, e^{2δ}] (the logit and the
    # normaliser each move by δ)
    (dl,) = _sym("TO-X4", "delta")
    v = _caught("TO-X4", _with("TO-X4", weight_ratio=sp.exp(dl)))
    assert "largest weight ratio / weight_ratio = 20.085537" in v.evidence, v.evidence


def test_to_x4_control_ratio_as_a_square():
    (dl,) = _sym("TO-X4", "delta")
    _keeps("TO-X4", _with("TO-X4", weight_ratio=sp.Pow(sp.exp(dl), 2, evaluate=False)))


# ------------------------------------------------------------------------------------ infoflow
def test_if_e1_cls_counted_as_a_fourth_position():
    # digest §6.4 (l. 100, 432): F = x(1) + x(2) + x(3); CLS attention on positions 1-3 in
    # [0.30, 0.37] each; 1/4 spreads it over four
    v = _caught("IF-E1", _with("IF-E1", weight_per_position=sp.Rational(1, 4)))
    assert "(claimed 0.250 each" in v.evidence and "fails for seeds 0" in v.evidence


# ------------------------------------------------------------------------------ identification
def test_id_gqa49_qk_count_per_query_head():
    # digest (l. 77, 111): QK unidentified G·D² "instead of H·D²"; the two agree at G = H
    D, H = _sym("ID-GQA4.9", "D", "H")
    v = _caught("ID-GQA4.9", _with("ID-GQA4.9", U_qk=H * D**2))
    assert "U_qk = D**2*H in 0/7 configurations" in v.evidence, v.evidence


def test_id_l41w_square_count_for_every_width():
    # digest (l. 85): if D > E the QK count is 2DE - E², not D²
    D, E = _sym("ID-L4.1w", "D", "E")
    v = _caught("ID-L4.1w", _with("ID-L4.1w", U=D**2, ratio=D**2 / (2 * D * E)))
    assert (v.witness["D"], v.witness["E"], v.witness["U_measured"]) == (5, 3, 21), v.witness


def test_id_s51_isotropic_rho_over_h_squared():
    # digest §5 (l. 143): E[ρ] = D²/(2DE) = 1/(2H); 1/H² equals it at H = 2 only
    (H,) = _sym("ID-S5.1", "H")
    v = _caught("ID-S5.1", _with("ID-S5.1", rho_isotropic=1 / H**2))
    assert "vs the catalogue's 0.0625 FAILS" in v.evidence
    assert "vs the catalogue's 0.25;" in v.evidence  # H = 2 agrees


# --------------------------------------------------------------------------------------- prism
def test_pr_s_head_width_from_a_base_of_64():
    # digest §2 (l. 45, 49-56): d_h = d/h_l; Small and Medium have base heads of 64, Large of 96
    hb, h = _sym("PR-S", "h_base", "h_l")
    v = _caught("PR-S", _with("PR-S", d_head=64 * hb / h))
    assert "large: h=16 heads of d_head=64 do not tile d=1536" in v.evidence, v.evidence


def test_pr_s_control_width_through_the_base():
    d, hb, h = _sym("PR-S", "d", "h_base", "h_l")
    _keeps("PR-S", _with("PR-S", d_head=sp.Mul(d / hb, hb / h, evaluate=False)))


def test_pr_e3_arc_easy_given_piqa_count():
    # digest §6 (l. 183): PIQA ≈1.8k, WinoGrande ≈1.3k, ARC-E ≈2.4k items
    v = _caught("PR-E3", _with("PR-E3", items_ARC_Easy=sp.Integer(1800)))
    assert "ARC-Easy 1,800 vs 2,376 FAILS" in v.evidence, v.evidence


def test_pr_n1_swiglu_at_eight_thirds():
    # digest §4 (l. 124-125): SwiGLU 3·d·f; 8d² is it only at f = 8d/3
    d, L, V = _sym("PR-N1", "d", "L", "V")
    c = claim("PR-N1")
    layer = c.expr("N_attn") + 8 * d**2 + c.expr("N_norm")
    false = _with("PR-N1", N_mlp=8 * d**2, N_layer=layer, N_model=L * layer + V * d + d)
    v = _caught("PR-N1", false)
    assert "ffn: 32640 != 32768" in v.evidence, v.evidence
