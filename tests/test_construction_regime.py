"""A construction is built wherever its own requirements hold: a claim whose regime is narrower
(a false one swapped in, or a user's) never stops a build; its bound is the formula's value, and
whether the claim applies at that cell is its check's to decide."""

import math

import pytest
import sympy as sp
from _helpers import claim_symbols, false_claim

from approxtheory.catalogue import Condition, overriding
from approxtheory.constructions import build
from approxtheory.errors import ConfigError


def test_a_narrower_claim_regime_keeps_the_construction():
    b, T = claim_symbols("IF-T2", "beta", "T")
    narrow = false_claim("IF-T2", regime=[Condition(sp.Ge(T, b), "T >= beta")])
    with overriding(narrow):
        assert not narrow.in_regime(T=4, beta=10)
        c = build("softmax_retrieval", T=4, beta=10)
    assert c.claimed_bound == pytest.approx((1 + math.log(40)) / 10, rel=1e-12)


def test_the_constructions_own_requirement_still_refuses():
    with pytest.raises(ConfigError, match="beta\\*T >= 1"):
        build("softmax_retrieval", T=4, beta=0.1)
