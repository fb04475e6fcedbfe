"""The sixth audit's "reads nothing from its claim" list for the head-count paper: the checks of
HC-P6b, HC-P10, HC-L1 and HC-L8 hard-coded their criterion (a direction, a transition, a
constant, a depth), so a false claim swapped in kept the verdict. The catalogue now carries what
each statement asserts and the checks read it:

- HC-L1: lipschitz_min = 1, the Lipschitz constant of u -> min_S u in the sup-norm (the constant
  shifts attain 1, so a constant below 1 is refuted).
- HC-L8: the parts' depths layers_first, layers_middle, layers_last = 2, 3, 2 and merged_layers
  = 5; the check builds parts of the claim's depths, merges them and compares the merged net's
  depth with the claim's (a wrong depth, or parts that make another depth, is refuted).
- HC-P6b: nmse_sign_one_head_in_T = +1 (the one-head NMSE does not fall as T grows; direction
  only: the paper gives no values) and min_ratio_one_head_over_D = 3 (the gap at the largest T).
- HC-P10: h_needed_one_layer = D and heads_times_layers_needed = D (one layer's transition at
  h = D, an L-layer model past it at L·h >= D), read at the task's D = 3.

Each false claim is swapped in with :func:`approxtheory.catalogue.overriding` and run on the quick
profile: ``refuted`` (HC-L1, HC-L8) or ``inconsistent`` (the consistent-empirical HC-P6b,
HC-P10), never an exception.
"""

import functools

import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import run_false as _false
from _helpers import run_quick

from approxtheory import claim
from approxtheory.catalogue.mutate import claim_mutants
from approxtheory.proofs_check import headcount as hcc

#: the quick-profile verdicts recorded before the change (the true claims keep them)
TRUE = {
    "HC-L1": "verified-numeric",
    "HC-L8": "verified-numeric",
    "HC-P6b": "consistent-empirical",
    "HC-P10": "consistent-empirical",
}

#: what each check must print that it read
READ = {
    "HC-L1": ["the claim read: lipschitz_min = 1."],
    "HC-L8": [
        "the claim read: layers_first = 2, layers_middle = 3, layers_last = 2, merged_layers = 5.",
        "its depth 5 is the claim's",
    ],
    "HC-P6b": [
        "the claim read: nmse_sign_one_head_in_T = 1, min_ratio_one_head_over_D = 3.",
        "needs >= 3 for every pair",
    ],
    "HC-P10": [
        "the claim read: h_needed_one_layer = D, heads_times_layers_needed = D (at D = 3: past "
        "the transition 1 layer at h >= 3, 2 layers at h >= 2)",
        "log-drop h = 2 -> 3",
    ],
}


_true = functools.cache(run_quick)


def _D():
    return claim("HC-P10").symbol("D")


@pytest.mark.parametrize("cid", sorted(TRUE))
def test_true_claims_keep_their_verdicts_and_print_what_they_read(cid):
    v = _true(cid)
    assert v.verdict == TRUE[cid], v.evidence
    for text in READ[cid]:
        assert text in v.evidence, (text, v.evidence)


# ------------------------------------------------------------------------------------- HC-L1
def test_l1_constant_below_one_is_refuted():
    v = _false(_with("HC-L1", lipschitz_min=sp.Rational(1, 2)))
    assert v.verdict == "refuted", v.evidence
    assert "lipschitz_min = 1/2" in v.evidence and "<= 0.5 required" in v.evidence
    assert v.measured == pytest.approx(1.0, abs=1e-9)  # the constant shifts attain 1


def test_l1_weaker_constant_stays_verified_and_its_scale_mutant_flips():
    """Lipschitz constant 2 is true (weaker); the generated scale mutant (1/2 at slack 1) is
    false and caught."""
    assert _false(_with("HC-L1", lipschitz_min=sp.Integer(2))).verdict == "verified-numeric"
    v = _true("HC-L1")
    assert v.slack == pytest.approx(1.0)
    (m,) = [m for m in claim_mutants(claim("HC-L1"), slack=v.slack) if m.name.startswith("scale:")]
    assert _false(m.claim).verdict == "refuted"


def test_l1_constant_without_a_value_is_refuted():
    v = _false(_with("HC-L1", lipschitz_min=sp.nan))
    assert v.verdict == "refuted", v.evidence
    assert "no number" in v.evidence


# ------------------------------------------------------------------------------------- HC-L8
@pytest.mark.parametrize("depth", [4, 6])
def test_l8_wrong_merged_depth_is_refuted(depth):
    v = _false(_with("HC-L8", merged_layers=sp.Integer(depth)))
    assert v.verdict == "refuted", v.evidence
    assert f"its depth 5 is not the claim's {depth}" in v.evidence
    assert "the parts' 4 hidden layers make a net of 5 layers" in v.evidence


def test_l8_parts_that_make_another_depth_are_refuted_and_their_true_depth_composes():
    """A 4-layer middle part makes a 6-layer net: claiming 5 is false; claiming 6 composes
    right (the check builds the parts the claim names) but is not the lemma HC-K2's proof uses,
    whose middle part (F2, HC-L9's max network, built) has 3 layers."""
    v = _false(_with("HC-L8", layers_middle=sp.Integer(4)))
    assert v.verdict == "refuted", v.evidence
    assert "4-layer part: (6, 7, 8)" in v.evidence and "its depth 6 is not the claim's 5" in (
        v.evidence
    )
    other = _false(_with("HC-L8", layers_middle=sp.Integer(4), merged_layers=sp.Integer(6)))
    assert other.verdict == "refuted", other.evidence
    assert "hidden widths (5, 6, 7, 8, 9)" in other.evidence
    assert "its depth 6 is the claim's" in other.evidence
    assert "layers_middle = 4 where HC-K2's part is 3-layer" in other.evidence


def test_l8_part_depth_that_is_no_net_is_refuted():
    v = _false(_with("HC-L8", layers_first=sp.Rational(3, 2)))
    assert v.verdict == "refuted" and "no whole number of layers" in v.evidence, v.evidence


def test_l8_scale_mutants_are_caught():
    for m in claim_mutants(claim("HC-L8"), slack=_true("HC-L8").slack):
        if m.kind == "scale":
            assert _false(m.claim).verdict == "refuted", m.what


# ------------------------------------------------------------------------------------ HC-P6b
def test_p6b_scope_is_direction_only():
    assert "direction only" in _true("HC-P6b").scope


@pytest.mark.parametrize("sign", [-1, 0])
def test_p6b_reversed_or_no_direction_is_inconsistent(sign):
    """-1 (the one-head NMSE falls as T grows) and 0 (it does not change): every rank of the
    quick run rises (NMSE(T = 64) / NMSE(T = 32) > 1)."""
    v = _false(_with("HC-P6b", nmse_sign_one_head_in_T=sp.Integer(sign)))
    assert v.verdict == "inconsistent", v.evidence
    assert f"nmse_sign_one_head_in_T = {sign}" in v.evidence
    assert "Failed: (a)" in v.evidence


def test_p6b_sign_mutant_is_caught():
    (m,) = [m for m in claim_mutants(claim("HC-P6b")) if m.kind == "sign"]
    assert _false(m.claim).verdict == "inconsistent"


def test_p6b_gap_no_pair_reaches_is_inconsistent():
    """A 10^4x gap: no pair of seeds at the largest T has it (the largest ratio is ~1.3e3)."""
    v = _false(_with("HC-P6b", min_ratio_one_head_over_D=sp.Integer(10**4)))
    assert v.verdict == "inconsistent", v.evidence
    assert "needs >= 10000 for every pair; refuted" in v.evidence


def test_p6b_criterion_takes_the_claimed_direction_and_margin():
    """On synthetic rows (the quick grid's shape, T = 32 and 64, one seed): the one-head NMSE
    rises 0.2 -> 0.25 and the two-head models sit at 0.005 (gap 50)."""
    rows = tuple(
        {"D": 2, "head_dim": 2, "heads": h, "T": T, "seed": 0, "steps": 1, "val_nmse": v}
        for (h, T), v in {(1, 32): 0.2, (1, 64): 0.25, (2, 32): 0.005, (2, 64): 0.005}.items()
    )

    def outcome(sign, margin):
        return hcc.lower_regime_criterion(rows, D=2, n=2, s=1, claimed=(sign, margin))["outcome"]

    assert outcome(1, 3) == "consistent"
    assert outcome(-1, 3) == "inconsistent"
    assert outcome(1, 60) == "inconsistent"  # 0.25 / 0.005 = 50 < 60
    assert outcome(1, float("nan")) == "inconsistent"


# ------------------------------------------------------------------------------------ HC-P10
@pytest.mark.parametrize(
    "field,new,failed",
    [
        ("h_needed_one_layer", "D - 1", "(i) one layer: log-drop h = 1 -> 2"),
        ("h_needed_one_layer", "D/2", "(i) one layer: log-drop h = 1 -> 2"),  # h >= 1.5
        ("h_needed_one_layer", "2*D", "(ii) h = 3: log(NMSE 1 layer / 2 layers)"),
        ("h_needed_one_layer", "-D", "(i) one layer: every h in [1, 2, 3]"),
        ("heads_times_layers_needed", "2*D", "(iii) 2 layers: log-drop h = 2 -> 3"),
        ("heads_times_layers_needed", "D - 1", "(iii) 2 layers: every h in [1, 2, 3]"),
    ],
)
def test_p10_wrong_transitions_are_inconsistent(field, new, failed):
    v = _false(_with("HC-P10", **{field: sp.sympify(new, locals={"D": _D()})}))
    assert v.verdict == "inconsistent", v.evidence
    assert f"{field} = {new}" in v.evidence
    assert "Failed: " in v.evidence and failed in v.evidence.split("Failed: ")[1], v.evidence


def test_p10_threshold_without_a_value_is_inconsistent():
    v = _false(_with("HC-P10", h_needed_one_layer=sp.nan))
    assert v.verdict == "inconsistent", v.evidence
    assert "the claim's transition is no head count" in v.evidence


def test_p10_criterion_at_given_thresholds():
    """Synthetic rows: one layer drops x20 from h = 2 to 3, two layers are low from h = 2."""
    nmse = {(1, 2): 0.2, (1, 3): 0.01, (2, 2): 0.01, (2, 3): 0.01}
    rows = tuple(
        {"layers": L, "heads": h, "T": 8, "seed": 0, "val_nmse": x} for (L, h), x in nmse.items()
    )
    assert hcc.variants_criterion(rows, 3, {1: 3.0, 2: 2.0})["ok"]
    # one layer past the transition at h = 2: the x20 drop from 2 to 3 contradicts it
    r = hcc.variants_criterion(rows, 3, {1: 2.0, 2: 2.0})
    assert not r["ok"] and r["failed"][0].startswith("(i) one layer: every h"), r
    # two layers only from h = 3: at h = 3 both are past, at h = 2 neither: nothing separates
    # them, and the two-layer drop from 2 to 3 (none) is not a transition
    r = hcc.variants_criterion(rows, 3, {1: 3.0, 2: 3.0})
    assert not r["ok"] and r["failed"][0].startswith("(iii) 2 layers: log-drop h = 2 -> 3"), r
    # a transition above the grid is undecided, not borne out
    r = hcc.variants_criterion(rows, 3, {1: 5.0, 2: 2.0})
    assert not r["ok"] and r["undecided"], r
