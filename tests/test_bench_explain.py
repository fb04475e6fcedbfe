"""``bench train --gated --explain``: the operator groups, the refusals, and one small profile
(plumbing: its figures are not the benchmark's)."""

import pytest

from approxtheory.bench.explain import explain_steps, group_of
from approxtheory.errors import ConfigError


@pytest.mark.parametrize(
    "name, group",
    [
        ("aten::mm", "matmul"),
        ("aten::addmm", "matmul"),
        ("aten::_softmax", "softmax"),
        ("aten::_softmax_backward_data", "softmax"),
        ("aten::_foreach_addcdiv_", "optimizer"),
        ("aten::randn", "data"),
        ("aten::gelu", "elementwise"),
        ("aten::view", "other"),
        ("autograd::engine::evaluate_function: MmBackward0", "other"),
    ],
)
def test_operator_groups(name, group):
    assert group_of(name) == group


@pytest.mark.parametrize("steps", [0, 9, 20_001, 2.5, True, "200"])
def test_steps_out_of_range_are_refused(steps):
    with pytest.raises(ConfigError, match="steps must be an integer from 10 to 20000"):
        explain_steps(steps=steps)


def test_a_small_profile_splits_the_ratio():
    res = explain_steps(Ts=(8,), steps=10)
    (row,) = res["rows"]
    assert row["step_count_factor"] == 2.0
    for arm in ("before", "after"):
        a = row[arm]
        assert a["cpu_ms_per_step"] >= 0 and a["profiled_ms_per_step"] > 0
        assert abs(sum(a["shares"].values()) - 1) < 1e-9
        assert a["calls_per_step"] > 0
    assert row["before"]["engine"] == "reference" and row["after"]["engine"] == "fast"


def test_cli_refuses_explain_without_gated(capsys):
    from approxtheory.cli import main

    assert main(["bench", "train", "--explain"]) == 2
    assert "--explain applies to bench train --gated only" in capsys.readouterr().err
