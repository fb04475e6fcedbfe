"""Files from elsewhere: model directories, results CSVs and
export sources are read by one reader (:mod:`approxtheory.foreign`, :mod:`approxtheory.hf_files`);
every damaged or hostile file, and every conflicting or ignored option around them, ends in one
stderr line and exit 2 naming the file, the field and what is allowed, before anything is built.

Nothing here needs the optional extras: the refusals all come before ``transformers`` or
``safetensors`` is imported (tests that would load a model are in test_interop*.py and
test_identifiability_modules.py, and skip without them). The Hypothesis suite for these readers
is tests/test_foreign_fuzz.py.
"""

from __future__ import annotations

import json
import os
import struct
import time
from pathlib import Path

import _helpers
import pytest
import torch
from _helpers import default_limits

from approxtheory import resources
from approxtheory.cli import main
from approxtheory.errors import ConfigError, ResourceLimitError
from approxtheory.foreign import read_json, safetensors_header
from approxtheory.hf_files import read_hf_config

needs_posix = pytest.mark.skipif(os.name != "posix", reason="FIFOs, symlinks, /dev/zero")


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch):
    """The default limits on a 24 GiB machine whatever this one has (as test_cli_errors.py)."""
    default_limits(monkeypatch)


@pytest.fixture
def no_build(monkeypatch):
    """Building any model, loading one with transformers or running a bench fails the test."""

    def boom(*a, **k):
        raise AssertionError("built or ran before refusing")

    from approxtheory.model import Transformer

    monkeypatch.setattr(Transformer, "__init__", boom)
    monkeypatch.setattr("approxtheory.interop.hf_classes", boom)
    monkeypatch.setattr("approxtheory.bench.model.bench_identifiability", boom)
    monkeypatch.setattr("approxtheory.bench.bracket.run_bracket_case", boom)
    monkeypatch.setattr("approxtheory.bench.search.run_case", boom)


def cli_error(argv, capsys, seconds=20.0):
    """Run the CLI in-process: exit 2, exactly one stderr line, no traceback, fast."""
    return _helpers.cli_error(argv, capsys, seconds=seconds)


# ------------------------------------------------------------------------------- the files
def safetensors_bytes(tensors: dict | None = None, pad: int = 0) -> bytes:
    """A valid safetensors file: ``{name: (dtype, shape)}`` (zeros), 8-byte aligned header."""
    tensors = {"w": ("F32", [2, 3])} if tensors is None else tensors
    sizes = {"F32": 4, "F64": 8, "F16": 2}
    header: dict = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, (dt, shape) in tensors.items():
        n = sizes[dt]
        for s in shape:
            n *= s
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8 + pad)
    return struct.pack("<Q", len(h)) + h + b"\0" * off


GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 16, "n_head": 4, "vocab_size": 50}
LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 16,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 32,
    "vocab_size": 50,
}
OWN = {
    "model_type": "approxtheory",
    "model_config": {"d_in": 2, "width": 8, "layers": [{"heads": 2, "head_dim": 4}], "d_out": 1},
}


def hf_dir(root: Path, config, weights: bytes | None = None, raw: str | None = None) -> Path:
    """A model directory: config.json (``config`` as JSON, or the text ``raw``) and weights."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(raw if raw is not None else json.dumps(config))
    (root / "model.safetensors").write_bytes(safetensors_bytes() if weights is None else weights)
    return root


def _with(base: dict, **kw) -> dict:
    d = dict(base)
    for k, v in kw.items():
        if v is _DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return d


_DROP = object()

# (config, the words the one line must hold)
BAD_CONFIGS = [
    (_with(GPT2, n_layer="12"), ["config.json", "'n_layer'", "integer from 1 to"]),
    (_with(GPT2, n_layer=12.0), ["'n_layer'", "integer"]),
    (_with(GPT2, n_layer=1e11), ["'n_layer'", "integer"]),
    (_with(GPT2, n_layer=10**11), ["'n_layer'", "from 1 to 100000"]),
    (_with(GPT2, n_layer=0), ["'n_layer'", "(got 0)"]),
    (_with(GPT2, n_layer=-3), ["'n_layer'", "(got -3)"]),
    (_with(GPT2, n_layer=True), ["'n_layer'", "(got True)"]),
    (_with(GPT2, n_layer=_DROP), ["'n_layer' is missing"]),
    (_with(GPT2, n_embd=_DROP), ["'n_embd' is missing"]),
    (_with(GPT2, n_embd="16"), ["'n_embd'"]),
    (_with(GPT2, n_head=0), ["'n_head'"]),
    (_with(GPT2, n_head=3), ["'n_head' must divide n_embd = 16"]),
    (_with(GPT2, vocab_size=-1), ["'vocab_size'"]),
    (_with(GPT2, n_positions=[1024]), ["'n_positions'"]),
    (_with(LLAMA, hidden_size=-16), ["'hidden_size'"]),
    (_with(LLAMA, num_key_value_heads=3), ["'num_key_value_heads'"]),
    (_with(LLAMA, attention_bias="yes"), ["'attention_bias'", "true or false"]),
    (_with(LLAMA, num_hidden_layers=_DROP), ["'num_hidden_layers' is missing"]),
    (_with(OWN, model_config={"width": 8}), ["model_config.layers"]),
    (
        _with(OWN, model_config={**OWN["model_config"], "width": "8"}),
        ["config.json", "model_config", "width must be a positive integer"],
    ),
    (
        _with(OWN, model_config={**OWN["model_config"], "layers": [{"heads": 0, "head_dim": 4}]}),
        ["model_config", "heads must be a positive integer"],
    ),
    (
        _with(OWN, model_config={**OWN["model_config"], "bogus": 1}),
        ["model_config", "bogus"],
    ),
    (
        _with(OWN, model_config={**OWN["model_config"], "layers": [{"heads": 2}]}),
        ["model_config", "missing head_dim"],
    ),
    (["not", "an", "object"], ["not a JSON object"]),
    ({"model_type": "bert"}, ["unknown architecture", "'model_type'"]),
]


@pytest.mark.parametrize("config,words", BAD_CONFIGS, ids=[str(i) for i in range(len(BAD_CONFIGS))])
@pytest.mark.parametrize("command", ["identifiability", "export"])
def test_damaged_config_is_bad_input(tmp_path, capsys, no_build, config, words, command):
    d = hf_dir(tmp_path / "m", config)
    argv = (
        ["identifiability", "--from-hf", d]
        if command == "identifiability"
        else ["export", d, "--to", "hf", "--check"]
    )
    err = cli_error(argv, capsys)
    assert all(w in err for w in words), (words, err)


@pytest.mark.parametrize(
    "raw,words",
    [
        ("[" * 100_000 + "]" * 100_000, ["config.json", "nested deeper than 200"]),
        ('{"model_type": "gpt2", "n_layer": NaN}', ["not valid JSON", "NaN is not strict"]),
        ('{"model_type": "gpt2", "n_layer": Infinity}', ["not valid JSON"]),
        ('{"model_type": "gpt2", "n_layer": 2', ["not valid JSON"]),
        ("", ["not valid JSON"]),
    ],
)
def test_unreadable_config_is_bad_input(tmp_path, capsys, no_build, raw, words):
    d = hf_dir(tmp_path / "m", None, raw=raw)
    err = cli_error(["identifiability", "--from-hf", d], capsys)
    assert all(w in err for w in words), err


def test_config_with_bom_reads(tmp_path):
    d = hf_dir(tmp_path / "m", None, raw="\ufeff" + json.dumps(GPT2))
    assert read_hf_config(d)["_n_layers"] == 2


@needs_posix
def test_huge_config_refused_before_reading(tmp_path, capsys, no_build, monkeypatch):
    d = hf_dir(tmp_path / "m", GPT2)
    with open(d / "config.json", "r+b") as f:  # 1 GiB, sparse: refused from its size alone
        f.truncate(2**30)
    calls = []
    import approxtheory.io as aio

    real = aio.read_at_most
    monkeypatch.setattr(aio, "read_at_most", lambda fd, n: calls.append(n) or real(fd, n))
    err = cli_error(["identifiability", "--from-hf", d], capsys)
    assert "config.json: larger than 16.0 MiB (it has 1.0 GiB)" in err
    assert calls == []  # nothing read


@needs_posix
def test_fifo_config_refused_without_blocking(tmp_path, capsys, no_build):
    d = tmp_path / "m"
    d.mkdir()
    os.mkfifo(d / "config.json")
    (d / "model.safetensors").write_bytes(safetensors_bytes())
    err = cli_error(["identifiability", "--from-hf", d], capsys, seconds=10)
    assert "config.json: is a FIFO; a regular file is needed" in err


@pytest.mark.parametrize(
    "weights,words",
    [
        (b"", ["model.safetensors", "0 bytes, too short"]),
        (b"\x10\0\0", ["too short"]),
        (safetensors_bytes()[:-5], ["tensor 'w'", "'data_offsets'", "end <= 19", "got [0, 24]"]),
        (safetensors_bytes()[:40], ["header length", "truncated or not safetensors"]),
        (struct.pack("<Q", 2**40) + b"{}", ["header length 1099511627776"]),
        (struct.pack("<Q", 4) + b"[1] ", ["header must be a JSON object"]),
        (struct.pack("<Q", 2) + b"{x", ["header is not valid JSON"]),
        (safetensors_bytes({"w": ("F32", [2, 3])}) + b"\0", ["the file holds 25"]),
    ],
)
def test_damaged_safetensors_is_bad_input(tmp_path, capsys, no_build, weights, words):
    big = _with(GPT2, n_embd=768, n_head=12, n_layer=2)  # structured method: no dense refusal
    d = hf_dir(tmp_path / "m", big, weights=weights)
    err = cli_error(["identifiability", "--from-hf", d], capsys)
    assert all(w in err for w in words), err


def test_safetensors_header_reader(tmp_path):
    p = tmp_path / "w.safetensors"
    p.write_bytes(safetensors_bytes({"a": ("F64", [3]), "b": ("F16", [2, 2])}))
    got = safetensors_header(p, where=str(p))
    assert got["a"]["data_offsets"] == [0, 24] and got["b"]["shape"] == [2, 2]
    bad = json.dumps({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    p.write_bytes(struct.pack("<Q", len(bad)) + bad + b"\0" * 8)
    with pytest.raises(ConfigError, match="needs 12 bytes, data_offsets give 8"):
        safetensors_header(p, where=str(p))


def test_model_too_big_refused_before_loading(tmp_path, capsys, no_build):
    huge = _with(GPT2, n_embd=768, n_head=12, n_layer=50_000)  # ~ 3 TB in float64
    err = cli_error(["identifiability", "--from-hf", hf_dir(tmp_path / "m", huge)], capsys)
    assert "loading the gpt2 model" in err and "50000 layers" in err
    assert "--max-memory" in err  # identifiability has the option
    err = cli_error(["export", hf_dir(tmp_path / "o", _with(OWN)), "--to", "hf"], capsys)
    assert "give --out DIR" in err  # the options first, as before


@needs_posix
@pytest.mark.parametrize(
    "make,words",
    [
        (lambda p: os.mkfifo(p), ["is a FIFO"]),
        (lambda p: p.write_text("[" * 5000), ["nested deeper than 200"]),
        (lambda p: p.write_text('{"construction": "hc_k1", "knobs": {"T": [1]}}'), ["'knobs'"]),
        (lambda p: p.write_text('{"construction": "nope"}'), ["names no known construction"]),
        (lambda p: p.write_bytes(b"\xff\xfe{}"), ["not UTF-8"]),
    ],
)
def test_export_source_files(tmp_path, capsys, no_build, make, words):
    src = tmp_path / "src.json"
    make(src)
    err = cli_error(["export", src, "--to", "hf", "--check"], capsys, seconds=10)
    assert all(w in err for w in words) and str(src) in err, err


@needs_posix
def test_export_device_and_huge_sources(tmp_path, capsys, no_build):
    if Path("/dev/zero").exists():
        err = cli_error(["export", "/dev/zero", "--to", "hf", "--check"], capsys, seconds=10)
        assert "'/dev/zero': is a character device" in err
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2**30)
    err = cli_error(["export", big, "--to", "hf", "--check"], capsys, seconds=10)
    assert "larger than 64.0 MiB (it has 1.0 GiB)" in err


@needs_posix
@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_out_link_that_leads_nowhere(tmp_path, capsys, no_build, kind):
    out = tmp_path / "out"
    os.symlink(tmp_path / "nowhere" if kind == "dangling" else out, out)
    err = cli_error(["export", "hc_k1", "--to", "hf", "--out", out], capsys)
    assert "--out" in err and "symbolic link that leads nowhere" in err
    assert "File exists" not in err


@needs_posix
def test_new_test_out_dangling_link_needs_force(tmp_path, capsys):
    out = tmp_path / "test_x.py"
    os.symlink(tmp_path / "nowhere.py", out)
    err = cli_error(["new-test", "IF-T2", "--out", out], capsys)
    assert "is a symbolic link (leading nowhere); pass --force" in err
    assert os.path.islink(out)  # untouched


# ------------------------------------------------------------------------ identifiability
@pytest.mark.parametrize(
    "extra,words",
    [
        (["--layer", "3"], ["--layer apply to --from-hf DIR only"]),
        (["--layer", "0"], ["--layer apply to --from-hf DIR only"]),
        (["--all-layers"], ["--all-layers apply to --from-hf DIR only"]),
    ],
)
def test_identifiability_ignored_options(capsys, no_build, extra, words):
    err = cli_error(["identifiability", *extra], capsys)
    assert all(w in err for w in words), err


def test_identifiability_conflicting_options(tmp_path, capsys, no_build):
    d = hf_dir(tmp_path / "m", GPT2)
    err = cli_error(["identifiability", "--from-hf", d, "--layer", "0", "--all-layers"], capsys)
    assert "--all-layers" in err and "not allowed with" in err
    err = cli_error(["identifiability", "--from-hf", d, "--E", "8"], capsys)
    assert "--E cannot be combined with --from-hf" in err
    err = cli_error(["identifiability", "--from-hf", d, "--layer", "5"], capsys)
    assert "--layer must be an integer from 0 to 1" in err
    err = cli_error(["identifiability", "--from-hf", ""], capsys)
    assert "--from-hf needs a local model directory (got '')" in err


def test_cli_messages_use_cli_spelling(tmp_path, capsys, no_build):
    d = hf_dir(tmp_path / "m", LLAMA)
    err = cli_error(["identifiability", "--from-hf", d, "--method", "structured"], capsys)
    assert "--method dense" in err and "method='dense'" not in err
    err = cli_error(
        ["identifiability", "--E", "8", "--rope", "full", "--method", "structured"], capsys
    )
    assert "--method dense" in err and "method='dense'" not in err


# ---------------------------------------------------------------------------------- bench
def test_bench_identifiability_sizes_checked_first(capsys, no_build):
    err = cli_error(["bench", "identifiability", "--dense-max-E", "100000"], capsys)
    assert "--dense-max-E must be from 0 to 64" in err
    err = cli_error(["bench", "identifiability", "--gpt2", "40000"], capsys)
    assert "the GPT-2 layer of --gpt2 40000 needs about" in err
    assert "--max-memory" not in err  # bench has no such option: the environment variable only
    assert resources.ENV_BYTES in err


@pytest.mark.parametrize("bench", ["bracket", "search"])
def test_bench_only_must_match(capsys, no_build, bench):
    err = cli_error(["bench", bench, "--only", "NOMATCH"], capsys)
    assert "--only 'NOMATCH' matches no case" in err and "hc_k1" in err
    err = cli_error(["bench", bench, "--only", ""], capsys)
    assert "--only needs" in err


# ------------------------------------------------------------------------------- of_module
def test_of_module_nan_weights_and_huge_sequences():
    from approxtheory.identifiability_modules import of_module

    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
    with pytest.raises(ResourceLimitError, match="the dense Jacobian"):
        t0 = time.monotonic()
        of_module(m, seq_len=10**9)
    assert time.monotonic() - t0 < 5
    with torch.no_grad():
        m.in_proj_weight[0, 0] = float("nan")
    with pytest.raises(ConfigError, match="'in_proj_weight' holds NaN or infinite values"):
        of_module(m)


# ------------------------------------------------------------------------------- --results
HEADER = "D,heads,T,val_nmse,seed\n"


def _csv(tmp_path, text: str, name="r.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "text,words",
    [
        (HEADER + "4,3,100000000000000000000,0.1,0\n", ["column 'T'", "outside 1 .. 10000000"]),
        (HEADER + "4,3,1e20,0.1,0\n", ["column 'T'", "'1e20' is not an integer"]),
        (HEADER + "100000000000000000000,3,8,0.1,0\n", ["column 'D'", "outside"]),
        (HEADER + "4,0,8,0.1,0\n", ["column 'heads'", "0 is outside 1 .. 4096"]),
        (HEADER + "4,-4,8,0.1,0\n", ["column 'heads'", "-4 is outside"]),
        (HEADER + "4,3,8,0.1,-1\n", ["column 'seed'", "outside"]),
        ("D,heads,T,val_nmse,val_nmse\n4,3,8,0.1,0.2\n", ["val_nmse appear more than once"]),
        ("D,heads,T\n4,3,8\n", ["missing column(s) val_nmse"]),
        (HEADER + "4,3,8,nan,0\n", ["finite number >= 0"]),
        ("", ["empty"]),
    ],
)
def test_results_csv_refused(tmp_path, capsys, no_build, text, words):
    p = _csv(tmp_path, text)
    err = cli_error(
        ["verify", "--only", "HC-P8", "--results", p, "--out", tmp_path / "rep", "--quiet"],
        capsys,
    )
    assert all(w in err for w in words), err


def test_results_bom_is_not_a_missing_column(tmp_path):
    from approxtheory.proofs_check import CHECKS  # noqa: F401  (registers the schemas)
    from approxtheory.proofs_check._results import load_results

    p = tmp_path / "r.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (HEADER + "4,3,8,0.1,0\n").encode())
    groups = load_results("HC-P8", p)
    assert [r["D"] for rows in groups.values() for r in rows] == [4]


@needs_posix
def test_results_fifo_and_directory(tmp_path, capsys, no_build):
    fifo = tmp_path / "r.csv"
    os.mkfifo(fifo)
    base = ["verify", "--only", "HC-P8", "--out", tmp_path / "rep", "--quiet", "--results"]
    assert "is a FIFO" in cli_error([*base, fifo], capsys, seconds=10)
    assert "is a directory" in cli_error([*base, tmp_path], capsys)
    assert "--results '': no such file" in cli_error([*base, ""], capsys)


def test_results_schema_empty_value_is_refused(capsys, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the empty value started the verify run")

    monkeypatch.setattr("approxtheory.verify.run_verify", boom)
    err = cli_error(["verify", "--results-schema", ""], capsys)
    assert "''" in err or "claim" in err


@pytest.mark.parametrize("quiet", [True, False])
def test_results_the_check_cannot_judge(tmp_path, capsys, quiet):
    # the seeds differ per head count: the schema passes, the criterion has no (h, T) to compare
    p = _csv(tmp_path, HEADER + "4,3,8,0.1,0\n4,4,8,0.001,1\n4,3,16,0.1,0\n4,4,16,0.001,1\n")
    argv = ["verify", "--only", "HC-P8", "--results", p, "--out", tmp_path / "rep"]
    rc = main([str(a) for a in argv + (["--quiet"] if quiet else [])])
    err = capsys.readouterr().err
    assert rc == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("approxtheory: error: --results") and "cannot judge these rows" in last
    assert "--results-schema HC-P8" in last
    assert err.count("\n") == 1, err  # no progress lines before it, --quiet or not
    assert not (tmp_path / "rep").exists()  # and no report of a run that judged nothing


def test_results_interval_the_wrong_way_round_is_refused(tmp_path, capsys):
    p = _csv(tmp_path, "D,h1,h2,T,val_nmse,nmse_lo,nmse_hi\n2,2,2,64,0.1,0.5,0.01\n")
    argv = ["verify", "--only", "IF-P3", "--out", tmp_path / "rep", "--quiet", "--results", p]
    assert "nmse_lo = 0.5 is above nmse_hi = 0.01" in cli_error(argv, capsys)


@pytest.mark.parametrize("fraction", ["0.0001", "0", "1.5"])
def test_bench_gated_fraction_below_a_recipe_is_refused_by_its_option(capsys, fraction):
    err = cli_error(["bench", "train", "--gated", "--fraction", fraction], capsys)
    assert err.startswith("approxtheory: error: --fraction must be a number from")
    assert "decay_steps" not in err


# ------------------------------------------------------------------------- the reader itself
@needs_posix
def test_reader_refuses_what_is_not_a_regular_file(tmp_path):
    f = tmp_path / "f"
    os.mkfifo(f)
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="is a FIFO"):
        read_json(f, where=str(f))
    assert time.monotonic() - t0 < 2
    with pytest.raises(ConfigError, match="is a directory"):
        read_json(tmp_path, where=str(tmp_path))
    with pytest.raises(ConfigError, match="no such file"):
        read_json(tmp_path / "missing", where="x")
    link = tmp_path / "link.json"
    (tmp_path / "real.json").write_text('{"a": 1}')
    os.symlink(tmp_path / "real.json", link)  # Hugging Face caches hold symlinks: followed
    assert read_json(link, where=str(link)) == {"a": 1}


# ----------------------------------------------------------- a second independent audit
def test_results_schema_refuses_the_options_of_a_run(tmp_path, capsys, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("started the verify run")

    monkeypatch.setattr("approxtheory.verify.run_verify", boom)
    p = _csv(tmp_path, HEADER + "4,3,8,0.1,0\n")
    err = cli_error(["verify", "--results-schema", "HC-P8", "--only", "HC-K1"], capsys)
    assert "--results-schema only prints the columns" in err and "--only" in err
    err = cli_error(["verify", "--results-schema", "HC-P8", "--results", p], capsys)
    assert "--results would be ignored" in err
    assert main(["verify", "--results-schema", "HC-P8", "--quiet"]) == 0  # harmless


@pytest.mark.parametrize("extra", [["--retrain"], ["--jobs", "2"]])
def test_results_refuses_ignored_run_options(tmp_path, capsys, monkeypatch, extra):
    def boom(*a, **k):
        raise AssertionError("started the verify run")

    monkeypatch.setattr("approxtheory.verify.run_verify", boom)
    monkeypatch.setattr("approxtheory.verify.max_jobs", lambda: 8)
    p = _csv(tmp_path, HEADER + "4,3,8,0.1,0\n")
    argv = ["verify", "--only", "HC-P8", "--results", p, "--out", tmp_path / "rep", "--quiet"]
    err = cli_error([*argv, *extra], capsys)
    assert f"{extra[0]} cannot be combined with --results" in err


@pytest.mark.parametrize(
    "argv,words",
    [
        (["bench", "model", "--reps", "1000000000000"], "--reps must be an integer from 1 to 100"),
        (["bench", "train", "--steps", "10**12"], "--steps must be an integer"),
        (["bench", "train", "--steps", "1000000000000"], "--steps must be an integer from 1"),
        (["bench", "train", "--rounds", "1000000000000"], "--rounds must be an integer from 1"),
        (["bench", "train", "--warmup", "1000000000000"], "--warmup must be an integer from 0"),
    ],
)
def test_bench_counts_are_capped(capsys, no_build, monkeypatch, argv, words):
    monkeypatch.setattr("approxtheory.bench.model.bench_model", lambda *a, **k: 1 / 0)
    assert words in cli_error(argv, capsys)


def test_new_test_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = cli_error(["new-test", "IF-T2", "--out", ""], capsys)
    assert "--out needs a file path (got '')" in err
    assert not (tmp_path / "tests").exists()  # not the default path


@needs_posix
def test_export_empty_or_dangling_source(tmp_path, capsys, no_build, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = cli_error(["export", "", "--to", "hf", "--check"], capsys)
    assert "the export source is empty (got '')" in err and "directory" not in err.split(";")[0]
    os.symlink(tmp_path / "nowhere.json", tmp_path / "src.json")
    err = cli_error(["export", tmp_path / "src.json", "--to", "hf", "--check"], capsys)
    assert "symbolic link that leads nowhere" in err
