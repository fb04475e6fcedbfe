"""A Hypothesis suite for the readers of foreign files: mutated model configs,
results CSVs and safetensors headers. Every draw ends in a result or a typed bad-input error
(:class:`~approxtheory.errors.ApproxTheoryError`), never another exception; CPU-bounded (a few
seconds in all: small files, a few dozen draws per reader, no model built).

Where the optional ``safetensors`` package is installed, a header this reader accepts is also one
the package opens (skipped cleanly without it)."""

from __future__ import annotations

import json
import math
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_foreign_files import GPT2, LLAMA, OWN, safetensors_bytes

from approxtheory import resources
from approxtheory.errors import ApproxTheoryError
from approxtheory.foreign import safetensors_header
from approxtheory.hf_files import model_param_count, read_hf_config

FAST = {
    "deadline": None,
    "database": None,
    "derandomize": True,
    "suppress_health_check": list(HealthCheck),
}

#: hostile JSON values for a field
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 1, 2, 3, 4, 7, 16, 10**11, 2**63]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-2, 2), max_size=2),
)
# JSON text that json.dumps cannot write: the literals a foreign writer may use
LITERALS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "[" * 300, '"\\ud800"'])


def _truncated(draw, data):
    """``data`` whole, or cut at a drawn length."""
    cut = draw(st.one_of(st.none(), st.integers(0, len(data))))
    return data if cut is None else data[:cut]


def _keys(base: dict) -> list[str]:
    return sorted(set(base) | {"n_inner", "n_positions", "head_dim", "attention_bias", "bogus"})


@st.composite
def mutated_config(draw):
    """A valid config with some fields replaced, deleted, or written as a non-JSON literal."""
    base = draw(st.sampled_from([GPT2, LLAMA, OWN]))
    c = json.loads(json.dumps(base))
    target = c["model_config"] if base is OWN and draw(st.booleans()) else c
    keys = _keys(target) + (["layers"] if target is not c else [])
    literal = None
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["set", "drop", "literal"]))
        if action == "drop":
            target.pop(k, None)
        elif action == "literal" and literal is None:
            target[k] = "@@LITERAL@@"
            literal = draw(LITERALS)
        else:
            target[k] = draw(HOSTILE)
    text = json.dumps(c)
    if literal is not None:
        text = text.replace('"@@LITERAL@@"', literal + ("]" * 300 if literal[0] == "[" else ""))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return _truncated(draw, text)


@settings(max_examples=60, **FAST)
@given(mutated_config())
def test_mutated_configs_are_read_or_refused(text):
    with tempfile.TemporaryDirectory() as t:
        d = Path(t)
        (d / "config.json").write_text(text, encoding="utf-8", errors="surrogatepass")
        (d / "model.safetensors").write_bytes(safetensors_bytes())
        try:
            c = read_hf_config(d)
        except ApproxTheoryError:
            return
        n = model_param_count(c)  # what a load would be refused on: computable, positive
        assert isinstance(n, int) and n > 0
        assert 1 <= c["_n_layers"] <= 100_000
        with resources.limits(max_bytes=1 << 20):
            try:
                from approxtheory.hf_files import require_load

                require_load(c, d)
            except ApproxTheoryError:
                pass


COLUMNS = ["D", "heads", "T", "val_nmse", "seed", "hidden", "layers", "steps", "other"]
CELLS = st.one_of(
    st.integers(-(10**25), 10**25).map(str),
    st.sampled_from(["", "nan", "inf", "-0", "1e20", "4.0", " 4 ", "0x10", "1_000", "٣"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
)


@st.composite
def mutated_csv(draw) -> bytes:
    header = draw(st.lists(st.sampled_from(COLUMNS), min_size=0, max_size=7))
    rows = draw(st.lists(st.lists(CELLS, min_size=0, max_size=8), max_size=4))
    sep = draw(st.sampled_from([",", ";", ",\t"]))
    text = sep.join(header) + "\n" + "\n".join(sep.join(r) for r in rows)
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.booleans()):
        data = data.replace(b"\n", draw(st.sampled_from([b"\r\n", b"\r", b"\0", b'"'])))
    return data


@settings(max_examples=80, **FAST)
@given(mutated_csv(), st.sampled_from(["HC-P8", "HC-P9", "HC-P10", "IF-P3"]))
def test_mutated_results_are_read_or_refused(data, claim):
    from approxtheory.proofs_check import CHECKS  # noqa: F401  (registers the schemas)
    from approxtheory.proofs_check._results import INT_RANGES, load_results

    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / "r.csv"
        p.write_bytes(data)
        try:
            groups = load_results(claim, p)
        except ApproxTheoryError:
            return
    for rows in groups.values():
        for r in rows:
            assert math.isfinite(r["val_nmse"]) and r["val_nmse"] >= 0
            for col, (lo, hi) in INT_RANGES.items():
                if col in r:
                    assert lo <= r[col] <= hi


@st.composite
def mutated_safetensors(draw) -> bytes:
    good = safetensors_bytes({"a": ("F32", [2, 2]), "b": ("F64", [3])})
    (n,) = struct.unpack("<Q", good[:8])
    header = json.loads(good[8 : 8 + n])
    entry = header[draw(st.sampled_from(["a", "b", "__metadata__"]))]
    key = draw(st.sampled_from(["dtype", "shape", "data_offsets", "format", "extra"]))
    how = draw(st.sampled_from(["set", "drop", "keep"]))
    if how == "set":
        entry[key] = draw(st.one_of(HOSTILE, st.sampled_from(["F16", "I64", "Q4"])))
    elif how == "drop":
        entry.pop(key, None)
    h = json.dumps(header).encode()
    length = draw(st.one_of(st.just(len(h)), st.integers(0, 2**64 - 1), st.integers(0, 200)))
    data = struct.pack("<Q", length) + h + good[8 + n :]
    return _truncated(draw, data)


@settings(max_examples=80, **FAST)
@given(mutated_safetensors())
def test_mutated_safetensors_headers_are_read_or_refused(data):
    with tempfile.TemporaryDirectory() as t:
        p = Path(t) / "model.safetensors"
        p.write_bytes(data)
        try:
            tensors = safetensors_header(p, where=str(p))
        except ApproxTheoryError:
            return
        _opens_with_the_package(p, tensors)


def _opens_with_the_package(p: Path, tensors: dict) -> None:
    try:
        from safetensors import safe_open
    except ImportError:  # the optional extra is absent: our own checks are the test
        return
    with safe_open(str(p), framework="numpy") as f:
        assert sorted(f.keys()) == sorted(tensors)


def test_valid_safetensors_agrees_with_the_package(tmp_path):
    pytest.importorskip("safetensors")
    import numpy as np
    from safetensors.numpy import save_file

    p = tmp_path / "m.safetensors"
    save_file({"x": np.zeros((3, 2), np.float32), "y": np.ones(5, np.float64)}, str(p))
    got = safetensors_header(p, where=str(p))
    assert got["x"]["shape"] == [3, 2] and got["y"]["dtype"] == "F64"
