"""The sixth audit's "reads nothing from its claim" list: the checks of ID-CLR, ID-B4.6, ID-L5.1,
ID-S5.2 and ID-E5 hard-coded their criterion (a direction, an ordering, a constant), so a false
version of the claim swapped in with :func:`approxtheory.catalogue.overriding` kept its verdict.

Each catalogue entry now carries what its statement asserts, and the check reads it:

- ID-CLR: beta_closer_sign = -1 (the cleared-moments control's β nearer plain AdamW's than the
  rebalanced run's); +1 or 0 (no preference) is inconsistent;
- ID-B4.6: the action's powers key_power = -1, query_bias_power = 1, key_bias_power = -1 (S^{-T}
  on the key side, each bias with its weight), measured on the logits; others are refuted;
- ID-L5.1: key_gram_coefficient = -1 (the conserved W_Q W_Qᵀ + c W_K W_Kᵀ); others are refuted;
- ID-S5.2: product_ratio = 1, beta_ratio = tau_ratio = 0 (M kept, β = τ = 0 after rebalancing);
  others are refuted;
- ID-E5: the statement's orderings as signs (SGD's ρ below 1/(2H), AdamW's ρ and β drift above
  SGD's, the rebalanced loss equal to AdamW's within 5 %); a reversed one is inconsistent.

TO-R1, TO-R2 and TO-E5 of the same list are not covered here.
"""

import functools

import pytest
import sympy as sp
from _helpers import false_claim as _with
from _helpers import keeps_verdict, run_quick
from _helpers import run_false as _false

TRUE = {
    "ID-CLR": "consistent-empirical",
    "ID-B4.6": "verified-numeric",
    "ID-L5.1": "verified-numeric",
    "ID-S5.2": "verified-numeric",
    "ID-E5": "consistent-empirical",
}

#: what each true claim's evidence must say it read
READ = {
    "ID-CLR": ["beta_closer_sign = -1"],
    "ID-B4.6": ["key_power = -1", "query_bias_power = 1", "key_bias_power = -1"],
    "ID-L5.1": ["key_gram_coefficient = -1"],
    "ID-S5.2": ["product_ratio = 1", "beta_ratio = 0", "tau_ratio = 0"],
    "ID-E5": [
        "rho_sign_sgd_minus_reference = -1",
        "rho_sign_adamw_minus_sgd = 1",
        "drift_sign_adamw_minus_sgd = 1",
        "loss_sign_rebalanced_minus_adamw = 0",
    ],
}

Z, H = sp.Integer, sp.Rational(1, 2)
FALSE = [
    ("ID-CLR", {"beta_closer_sign": Z(1)}, "inconsistent"),
    ("ID-CLR", {"beta_closer_sign": Z(0)}, "inconsistent"),
    ("ID-B4.6", {"key_power": Z(1)}, "refuted"),
    ("ID-B4.6", {"key_power": -H}, "refuted"),
    ("ID-B4.6", {"query_bias_power": Z(0)}, "refuted"),
    ("ID-B4.6", {"key_bias_power": Z(0)}, "refuted"),  # outputs unchanged, logits not
    ("ID-L5.1", {"key_gram_coefficient": Z(1)}, "refuted"),
    ("ID-L5.1", {"key_gram_coefficient": -H}, "refuted"),
    ("ID-S5.2", {"product_ratio": H}, "refuted"),
    ("ID-S5.2", {"beta_ratio": H}, "refuted"),
    ("ID-S5.2", {"tau_ratio": Z(1)}, "refuted"),
    ("ID-E5", {"rho_sign_adamw_minus_sgd": Z(-1)}, "inconsistent"),
    ("ID-E5", {"drift_sign_adamw_minus_sgd": Z(0)}, "inconsistent"),
    ("ID-E5", {"loss_sign_rebalanced_minus_adamw": Z(1)}, "inconsistent"),
    ("ID-E5", {"rho_sign_sgd_minus_reference": Z(1)}, "inconsistent"),
]


_true = functools.cache(run_quick)


@pytest.mark.parametrize("cid", sorted(TRUE))
def test_true_claims_keep_their_verdicts_and_print_what_they_read(cid):
    v = _true(cid)
    keeps_verdict(v, TRUE[cid])
    assert "the claim read:" in v.evidence, v.evidence
    for said in READ[cid]:
        assert said in v.evidence, (said, v.evidence)


@pytest.mark.parametrize(
    "cid,exprs,want", FALSE, ids=[f"{c}-{'-'.join(e)}-{i}" for i, (c, e, _) in enumerate(FALSE)]
)
def test_false_claims_are_caught(cid, exprs, want):
    v = _false(_with(cid, **exprs))
    assert v.verdict == want, v.evidence
    for name, e in exprs.items():
        assert f"{name} = {sp.sstr(e)}" in v.evidence, v.evidence


@pytest.mark.parametrize(
    "cid,name",
    [
        ("ID-CLR", "beta_closer_sign"),
        ("ID-B4.6", "key_power"),
        ("ID-L5.1", "key_gram_coefficient"),
        ("ID-S5.2", "product_ratio"),
        ("ID-E5", "rho_sign_adamw_minus_sgd"),
    ],
)
def test_a_field_without_a_value_fails_with_the_reason(cid, name):
    v = _false(_with(cid, **{name: sp.Symbol("y")}))
    assert v.verdict in ("refuted", "inconsistent"), v.evidence
    assert f"{name} = y is no finite real number" in v.evidence, v.evidence
