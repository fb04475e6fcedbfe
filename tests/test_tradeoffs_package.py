"""The trade-off checks as a package: the report order the checks register in, where
each check lives, the shared gate / scale helpers, and the rows readers a test patches."""

import inspect

import pytest

from approxtheory.proofs_check import CHECKS, _trained_verdicts
from approxtheory.proofs_check import tradeoffs as toc

#: the order the TO- checks register in (the report's order), kept from the single module
TO_ORDER = [
    "TO-T1",
    "TO-X1",
    "TO-X3",
    "TO-X4",
    "TO-X2",
    "TO-T2",
    "TO-C1",
    "TO-E5",
    "TO-R1",
    "TO-R2",
    "TO-R3",
    "TO-P2",
]
#: the sub-module of each check (the package docstring's map)
HOME = {
    "derivations": ("TO-T1", "TO-X1", "TO-X3", "TO-X4"),
    "heads": ("TO-X2", "TO-T2", "TO-C1"),
    "logits": ("TO-E5",),
    "trained": ("TO-R1", "TO-R2", "TO-R3", "TO-P2"),
}


def test_the_checks_register_in_the_report_order():
    from test_rows import fresh_registry

    assert [c for c, _ in fresh_registry() if c.startswith("TO-")] == TO_ORDER


@pytest.mark.parametrize("mod", sorted(HOME))
def test_each_check_lives_in_its_sub_module(mod):
    for cid in HOME[mod]:
        fn = CHECKS[cid].source_fn  # type: ignore[attr-defined]
        assert fn.__module__ == f"approxtheory.proofs_check.tradeoffs.{mod}", cid
        assert getattr(toc, fn.__name__) is fn  # the old import path still reaches it


def test_no_sub_module_is_above_1000_lines():
    for mod in (*HOME, "_common"):
        lines = inspect.getsource(getattr(toc, mod)).count("\n")
        assert lines <= 1000, (mod, lines)


def test_the_gate_and_scale_helpers_are_the_shared_ones():
    """proofs_check.tradeoffs re-exports them: the same objects as the shared layer's (other
    papers' checks import the shared module itself: tests/test_layers.py)."""
    for name in ("gated_verdict", "loss_gate", "present_keys", "run_text", "run_figures"):
        assert getattr(toc, name) is getattr(_trained_verdicts, name), name
    for name in ("trained_scale", "ungated_scale", "RUN_KEYS"):
        assert getattr(toc, name) is getattr(_trained_verdicts, name), name


def test_the_rows_readers_are_patched_where_they_are_called():
    """A patch of the package's ``_trained`` / ``_train_heads`` would reach no check: they are
    not re-exported, so such a patch fails loudly instead of silently training or reading."""
    assert not hasattr(toc, "_trained") and not hasattr(toc, "_train_heads")
    for mod in ("heads", "trained"):
        assert getattr(toc, mod)._trained is toc._common._trained
    assert callable(toc.logits._train_heads)
