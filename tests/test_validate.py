"""Argument validation lives in one module, approxtheory/_validate.py: its
messages, the modules that use it (each keeping its own message), and the validators that
still stand elsewhere only because their code is fingerprinted or being changed (each gives
the same message as the shared one, so it can be replaced one for one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from approxtheory._validate import SEED_MAX, check_int, check_real, check_seed, pos_int
from approxtheory.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _message(fn, *a, **kw) -> str:
    with pytest.raises(ConfigError) as e:
        fn(*a, **kw)
    return str(e.value)


def test_whole_numbers():
    assert check_int("n", 3, 1) == 3 and type(check_int("n", np.int64(3), 1)) is int
    assert _message(check_int, "n", 0, 1) == "n must be an integer >= 1 (got 0)"
    assert _message(check_int, "n", 9, 0, 8) == "n must be an integer from 0 to 8 (got 9)"
    assert _message(check_int, "n", True, 0) == "n must be an integer >= 0 (got True)"
    assert _message(check_int, "n", 2.0) == "n must be an integer (got 2.0)"
    assert _message(check_int, "n", np.bool_(True), 0).startswith("n must be an integer >= 0")
    assert _message(check_int, "n", np.int64(2), numpy=False) == (
        f"n must be an integer (got {np.int64(2)!r})"
    )
    # a numpy integer out of range: as given, or the plain int
    assert (
        _message(check_int, "n", np.int64(0), 1)
        == f"n must be an integer >= 1 (got {np.int64(0)!r})"
    )
    assert (
        _message(check_int, "n", np.int64(0), 1, plain=True) == "n must be an integer >= 1 (got 0)"
    )
    assert _message(check_int, "n", 9, 1, 8, must="small", above="at most 8") == (
        "n must be at most 8 (got 9)"
    )
    assert _message(pos_int, "h", 0) == "h must be a positive integer (got 0)"
    assert check_seed(SEED_MAX) == SEED_MAX
    assert (
        _message(check_seed, SEED_MAX + 1)
        == f"seed must be an integer from 0 to {SEED_MAX} (got {SEED_MAX + 1})"
    )


def test_real_numbers():
    assert check_real("x", np.float32(0.5), 0, 1) == 0.5
    for bad in (float("nan"), float("inf"), True, "1", 10**400):
        assert _message(check_real, "x", bad) == f"x must be a finite number (got {bad!r})"
    assert _message(check_real, "x", 0, 0, 1, lo_open=True, must="in (0, 1]") == (
        "x must be in (0, 1] (got 0)"
    )
    assert check_real("x", 1, 0, 1) == 1.0
    assert _message(check_real, "x", 1, 0, 1, hi_open=True) == "x must be a finite number (got 1)"


# ------------------------------------------------------------------ the modules that use it
def test_the_users_keep_their_messages():
    from approxtheory import advise, identifiability, measure, resources, schedules, verify

    assert _message(schedules._layers, "L", 0) == "L must be a positive integer (got 0)"
    assert _message(schedules._layers, "L", 10**6) == (
        f"L must be at most {schedules.MAX_LAYERS} layers (schedules.MAX_LAYERS) (got 1000000)"
    )
    assert _message(schedules._width, 2**40) == (
        f"d must be at most {schedules.MAX_WIDTH} (schedules.MAX_WIDTH) (got {2**40})"
    )
    assert _message(schedules._pos_int, "block", np.int64(2)).startswith("block must be a positive")
    assert _message(identifiability._check_seed, -1) == "seed must be an integer >= 0 (got -1)"
    assert _message(identifiability._check_seed, 2**32) == (
        f"seed must be an integer from 0 to {2**32 - 1} (got {2**32})"
    )
    cfg = identifiability.AttentionConfig(E=4, H=1)
    assert _message(identifiability._check_args, cfg, 0, 1.0) == (
        "rtol must be a number in (0, 1): the relative singular-value threshold of the rank "
        "(got 1.0)"
    )
    assert _message(identifiability._check_args, cfg, 0, 0.1, n_seq=0) == (
        "n_seq must be a positive integer or None (got 0)"
    )
    assert _message(identifiability._check_args, cfg, 0, 0.1, seq_len=True) == (
        "seq_len must be a positive integer (got True)"
    )
    assert _message(measure._count, "n_boot", np.int64(0), 1, 10) == (
        "n_boot must be an integer from 1 to 10 (got 0)"
    )
    assert _message(measure._check_sizes, 8, 0, 1, 1, 0) == (
        "batch must be a non-negative integer (got 0)"
    )
    top = resources.max_threads()
    assert _message(resources.check_threads, 0) == (
        f"threads must be a whole number from 1 to {top} (got 0)"
    )
    assert _message(verify.check_jobs, True).startswith("--jobs must be a whole number from 1 to")
    assert _message(advise._check_shape, 0, 8, 2, 4) == (
        f"layers must be an integer from 1 to {schedules.MAX_LAYERS} (got 0)"
    )


# ------------------------------------------------- the validators that stay where they are
#: (module, function): why it is not yet replaced by approxtheory._validate
STANDING = {
    **{
        (m, f): "fingerprinted: the code of every shipped trained cell (approxtheory/shipped.py)"
        for m, f in (
            ("approxtheory.model.config", "_pos_int"),
            ("approxtheory.tasks", "_check_int"),
            ("approxtheory.tasks", "_check_seed"),
            ("approxtheory.tasks", "_finite_real"),
            ("approxtheory.train", "_int"),
            ("approxtheory.train", "_real"),
            ("approxtheory.experiments.infoflow_trained", "whole"),
        )
    },
    # a text parser (like approxtheory._cliargs): the digits of a constraint string
    ("approxtheory.advise", "_int"): "parses text, not a value",
}

#: the names a whole-number or real-number validator goes by
_VALIDATOR_NAME = re.compile(
    r"^_?(pos_int|nonneg_int|int|check_int|check_seed|finite_real|real|check_real|count|"
    r"pos_seconds|whole|integer)$"
)


def validators_outside() -> set[tuple[str, str]]:
    """(module, function) of each function outside approxtheory/_validate.py named like a
    validator that raises a ConfigError itself."""
    found = set()
    for top in ("approxtheory", "proofs_check", "experiments"):
        for p in sorted((ROOT / top).rglob("*.py")):
            rel = p.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[0] != "approxtheory":
                parts.insert(0, "approxtheory")
            if parts[-1] == "__init__":
                parts.pop()
            mod = ".".join(parts)
            if mod in ("approxtheory._validate", "approxtheory._cliargs"):
                continue  # the shared module; the command line's text parsers
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and _VALIDATOR_NAME.match(node.name):
                    raises = [
                        r
                        for r in ast.walk(node)
                        if isinstance(r, ast.Raise) and "ConfigError" in ast.unparse(r)
                    ]
                    if raises:
                        found.add((mod, node.name))
    return found


def test_one_validator_module():
    """A new whole-number or range validator uses approxtheory._validate; the standing ones
    are listed with their reason (and struck from the list when they go)."""
    found = validators_outside()
    assert found - set(STANDING) == set(), (
        f"validators outside approxtheory/_validate.py: {sorted(found - set(STANDING))}"
    )
    assert set(STANDING) - found == set(), f"gone, strike from STANDING: {set(STANDING) - found}"


PARITY = [
    ("approxtheory.model.config", "_pos_int", ("width", 0), lambda: pos_int("width", 0)),
    (
        "approxtheory.model.config",
        "_pos_int",
        ("width", np.int64(-1)),
        lambda: pos_int("width", np.int64(-1)),
    ),
    ("approxtheory.tasks", "_check_int", ("T", True), lambda: check_int("T", True, 1)),
    ("approxtheory.tasks", "_check_int", ("T", 1, 2), lambda: check_int("T", 1, 2)),
    (
        "approxtheory.tasks",
        "_check_seed",
        (2**32,),
        lambda: check_seed(2**32, must=f"an integer in 0..{SEED_MAX}"),
    ),
    (
        "approxtheory.tasks",
        "_finite_real",
        ("beta", float("nan")),
        lambda: check_real("beta", float("nan")),
    ),
    (
        "approxtheory.train",
        "_int",
        ("steps", -1, 0),
        lambda: check_int("steps", -1, 0),
    ),
    (
        "approxtheory.train",
        "_real",
        ("lr", 0.0, 0.0, None, True, False, "a positive number"),
        lambda: check_real("lr", 0.0, 0.0, lo_open=True, must="a positive number"),
    ),
]


@pytest.mark.parametrize("mod, fn, args, shared", PARITY, ids=[f"{m}.{f}" for m, f, *_ in PARITY])
def test_a_standing_validator_says_what_the_shared_one_says(mod, fn, args, shared):
    import importlib

    own = getattr(importlib.import_module(mod), fn)
    assert _message(own, *args) == _message(shared)
