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


def test_the_gate_and_scale_helpers_are_not_reexported():
    """The shared gate / scale / pipeline helpers are imported from the shared layer itself
    (proofs_check._trained_verdicts, proofs_check._pipeline), never through this package: it
    does not re-export them (other papers' checks import the shared module:
    tests/test_layers.py)."""
    shared = (
        "gated_verdict",
        "loss_gate",
        "present_keys",
        "run_text",
        "run_figures",
        "trained_scale",
        "ungated_scale",
        "RUN_KEYS",
        "trained_verdict",
        "Evidence",
    )
    for name in shared:
        assert not hasattr(toc, name), name
    assert callable(_trained_verdicts.gated_verdict)


def test_the_trained_checks_declare_their_evidence():
    """TO-R1..R3 and TO-P2 decide through the one trained-verdict pipeline: each declares its
    Evidence (one experiment, the shared paper record), its rows read through ``_rows``."""
    from approxtheory.proofs_check._pipeline import Evidence

    for ev, name in (
        (toc.trained.R1_EVIDENCE, "tradeoffs_budget"),
        (toc.trained.R2_EVIDENCE, "tradeoffs_layers"),
        (toc.trained.R3_EVIDENCE, "tradeoffs_cuts"),
        (toc.trained.P2_EVIDENCE, "tradeoffs_saturation"),
    ):
        assert isinstance(ev, Evidence) and ev.experiments == (name,)
        assert ev.paper is toc.TO_PAPER and ev.gate_text and ev.measure_when_gated
    assert toc.trained.R2_EVIDENCE.traces and toc.trained.R2_EVIDENCE.metric == "val_loss"
    assert not hasattr(toc.trained, "_trained") and not hasattr(toc.trained, "_gated")


def test_the_rows_readers_are_patched_where_they_are_called():
    """A patch of the package's ``_trained`` / ``_train_heads`` would reach no check: they are
    not re-exported, so such a patch fails loudly instead of silently training or reading."""
    assert not hasattr(toc, "_trained") and not hasattr(toc, "_train_heads")
    assert toc.heads._trained is toc._common._trained
    assert callable(toc.logits._train_heads)


def test_the_trained_checks_read_through_the_shared_reader(monkeypatch):
    """Patching ``_rows.exp_rows`` (what the pipeline reads) reaches TO-R1..R3 and TO-P2."""
    from approxtheory.proofs_check import Context, _rows, run_check

    class _Read(Exception):
        pass

    def _raise(name, profile):
        raise _Read(name)

    monkeypatch.setattr(_rows, "exp_rows", _raise)
    for cid in ("TO-R1", "TO-R2", "TO-R3", "TO-P2"):
        with pytest.raises(_Read):
            run_check(cid, Context())
