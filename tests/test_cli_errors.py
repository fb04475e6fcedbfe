"""The CLI's error boundary, argument validation and refusal of oversized work before allocating;
the resource estimates of :mod:`approxtheory.resources`."""

import errno
import io
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _helpers import NO_BIASES, cli_error, decoder_lm_config, default_limits

from approxtheory import _cliargs, resources
from approxtheory.cli import main
from approxtheory.constructions import build
from approxtheory.errors import ApproxTheoryError, ConfigError, ResourceLimitError
from approxtheory.identifiability import (
    AttentionConfig,
    dense_estimate,
    dense_unidentified_dim,
    unidentified_dim,
)
from approxtheory.model import LayerSpec, ModelConfig, Transformer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch):
    """The default limits (a quarter of the machine's memory, 24 h), on a 24 GiB machine whatever
    this one has, so that the refusals below do not depend on it."""
    default_limits(monkeypatch)


@pytest.fixture
def no_allocation(monkeypatch):
    """Building any model, or starting an experiment run, fails the test: a refusal must come
    first."""

    def boom(*a, **k):
        raise AssertionError("allocated before refusing")

    monkeypatch.setattr(Transformer, "__init__", boom)
    monkeypatch.setattr("approxtheory.experiment.run_experiment", boom)


@pytest.fixture
def afile(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    return f


# ------------------------------------------------------------------------- argument validation
@pytest.mark.parametrize(
    "argv,needle",
    [
        (["verify", "--seed", "-1"], "--seed must be an integer >= 0 (got '-1')"),
        (["verify", "--seed", "1.5"], "--seed must be an integer (got '1.5')"),
        (["bench", "model", "--threads", "0"], "--threads must be a positive integer (got '0')"),
        (["bench", "identifiability", "--threads", "0"], "--threads must be a positive integer"),
        (["bench", "identifiability", "--threads", "-2"], "--threads must be a positive integer"),
        (["bench", "model", "--reps", "0"], "--reps must be an integer from 1 to 100"),
        (
            ["bench", "identifiability", "--dense-max-E", "-1"],
            "--dense-max-E must be an integer >= 0",
        ),
        (["identifiability", "--seed", "-1"], "--seed must be an integer >= 0"),
        (["identifiability", "--G", "0"], "--G must be a positive integer"),
        (
            ["identifiability", "--max-memory", "lots"],
            "--max-memory must be a size such as 8G, 512M, 1.5T or a number of bytes, "
            "or 'unlimited' (got 'lots') (see `approxtheory identifiability --help`)",
        ),
        (["experiment", "run", "softmax_beta_sweep", "--max-memory", "0"], "--max-memory must be"),
        (["construct", "hc_k1", "--budget", "0"], "--budget must be a positive integer (got '0')"),
        (["construct", "hc_k1", "--seed", "-1"], "--seed must be an integer >= 0 (got '-1')"),
        (["construct", "hc_k1", "--max-memory", "8X"], "--max-memory must be a size"),
        (["bench"], "`approxtheory bench` needs an action"),
        ([], "`approxtheory` needs a command"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, needle, capsys, tmp_path):
    if argv[:1] == ["verify"]:
        argv = argv + ["--out", tmp_path / "r"]
    assert needle in cli_error(argv, capsys)


@pytest.mark.parametrize("cmd", [["verify"], ["experiment", "run", "softmax_beta_sweep"]])
def test_out_must_not_be_an_existing_file(cmd, capsys, afile):
    err = cli_error(cmd + ["--out", afile], capsys)
    assert "--out must be a directory" in err and "existing file" in err


@pytest.mark.parametrize("cmd", [["verify"], ["experiment", "run", "softmax_beta_sweep"]])
def test_out_below_a_file_cannot_be_created(cmd, capsys, afile):
    err = cli_error(cmd + ["--out", afile / "deep" / "er"], capsys)
    assert "cannot be created" in err and "is a file" in err


def test_out_in_a_read_only_place(capsys, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(
        _cliargs.os, "access", lambda p, mode: False if Path(p) == ro else real(p, mode)
    )
    for cmd in (["verify"], ["experiment", "run", "softmax_beta_sweep"]):
        err = cli_error(cmd + ["--out", ro / "new" / "place"], capsys)
        assert "is not writable" in err and "read-only" in err
    assert not (ro / "new").exists()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only directories"
)
def test_out_in_a_chmod_read_only_directory(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert "is not writable" in cli_error(["verify", "--out", ro / "x"], capsys)
    finally:
        ro.chmod(0o755)


def test_docs_out_must_not_be_a_directory(capsys, tmp_path):
    assert "must be a file" in cli_error(["docs", "--out", tmp_path], capsys)


# ------------------------------------------------------------------------ experiment overrides
def test_one_character_corpus_is_refused_before_the_run(capsys, tmp_path):
    corpus = tmp_path / "one.txt"
    corpus.write_text("a")
    out = tmp_path / "res"
    err = cli_error(
        [
            "experiment",
            "run",
            "identifiability_training",
            "--corpus",
            corpus,
            "--out",
            out,
            "--quiet",
        ],
        capsys,
    )
    assert "has 1 characters" in err and "T=32" in err and "needs at least" in err
    assert not out.exists()  # refused before the run created anything


def test_corpus_that_is_missing_or_a_directory(capsys, tmp_path):
    base = ["experiment", "run", "identifiability_training", "--out", tmp_path / "r"]
    assert "--corpus no such file" in cli_error(base + ["--corpus", tmp_path / "no"], capsys)
    assert "--corpus must be a regular file" in cli_error(base + ["--corpus", tmp_path], capsys)


def test_short_corpus_is_a_typed_error_in_the_api(tmp_path):
    from approxtheory.experiments.identifiability_training import min_corpus_chars, train_cell

    corpus = tmp_path / "short.txt"
    corpus.write_text("ab" * 100)
    cfg = {
        "optimizer": "sgd",
        "E": 8,
        "H": 2,
        "T": 32,
        "batch": 2,
        "steps": 1,
        "log_every": 1,
        "rebalance_every": 1,
        "lr_sgd": 0.1,
        "corpus": str(corpus),
        "seed": 0,
    }
    with pytest.raises(ConfigError, match="has 200 characters; with T=32 it needs at least"):
        train_cell(cfg)
    # the bound is tight: the shortest accepted corpus trains, one character less does not
    n = min_corpus_chars(32)
    corpus.write_text(("ab" * n)[:n])
    train_cell(cfg)
    corpus.write_text(("ab" * n)[: n - 1])
    with pytest.raises(ConfigError, match="needs at least"):
        train_cell(cfg)


@pytest.mark.parametrize(
    "sets,needle",
    [
        (["foo=1"], "has no parameter 'foo' to override"),
        (["E"], "--set takes NAME=VALUE"),
        (["=3"], "--set takes NAME=VALUE"),
        (["E=abc"], "--set E must be an integer (got 'abc')"),
        (["E=1.5"], "--set E must be an integer"),
        (["T=0"], "--set T must be a positive integer"),
        (["lr_sgd=nan"], "--set lr_sgd must be a finite number"),
        (["lr_sgd=-1"], "--set lr_sgd must be a positive number"),
        (["optimizer=newton"], "optimizer must be sgd, sgd_wd, adamw or adamw_rebalance"),
        (["H=64"], "H must be <= E"),
        (["E=8", "E=16"], "--set E given twice"),
    ],
)
def test_bad_overrides(sets, needle, capsys, tmp_path, no_allocation):
    argv = ["experiment", "run", "identifiability_training", "--out", tmp_path, "--quiet"]
    for s in sets:
        argv += ["--set", s]
    assert needle in cli_error(argv, capsys)


def test_set_only_applies_to_run(capsys, tmp_path):
    err = cli_error(
        ["experiment", "plot", "softmax_beta_sweep", "--set", "T=4", "--out", tmp_path], capsys
    )
    assert "--set applies to `experiment run` only" in err


# ---------------------------------------------------------------- oversized work is refused
def _refusal(err, *needles):
    for n in (
        "needs about",
        "more than the limit of",
        "--max-memory",
        resources.ENV_BYTES,
        *needles,
    ):
        assert n in err, (n, err)


@pytest.mark.parametrize(
    "argv,needles",
    [
        (["construct", "hc_k2", "--T", "100000", "--d", "100"], ("building hc_k2", "PiB")),
        (["construct", "hc_l9", "--eps", "1e-7"], ("building hc_l9", "eps=1e-07")),
        (["construct", "hc_l9", "--eps", "1e-4"], ("GiB",)),
        (["construct", "hc_k1", "--T", "1000000000"], ("building hc_k1",)),
        (["construct", "softmax_retrieval", "--T", "100000000"], ("building softmax_retrieval",)),
        (["construct", "if_second_largest", "--T", "100000"], ("building if_second_largest",)),
        (["construct", "if_pairwise_max", "--D", "100000", "--d", "100"], ("if_pairwise_max",)),
        (["construct", "lag_head", "--T", "100000"], ("building lag_head",)),
        (["identifiability", "--E", "100000", "--H", "1"], ("structured rank certificate",)),
        (
            ["identifiability", "--E", "100000", "--H", "1", "--method", "dense"],
            ("dense Jacobian", "outputs x P=40000000000"),
        ),
        (["identifiability", "--E", "512", "--H", "64", "--method", "dense"], ("dense Jacobian",)),
        (
            ["experiment", "run", "identifiability_training", "--set", "E=100000"],
            ("experiment identifiability_training", "E=100000"),
        ),
        (
            ["experiment", "run", "identifiability_training", "--set", "batch=1000000"],
            ("batch=1000000",),
        ),
    ],
)
def test_oversized_work_is_refused_before_allocating(
    argv, needles, capsys, tmp_path, no_allocation
):
    if argv[0] == "experiment":
        argv = argv + ["--out", tmp_path, "--quiet"]
    _refusal(cli_error(argv, capsys), *needles)


@pytest.mark.parametrize(
    "argv",
    [
        ["construct", "softmax_retrieval", "--T", "1000000"],
        ["construct", "hc_k1", "--budget", "100000000"],
        ["construct", "svd_truncation", "--T", "2000"],
    ],
)
def test_oversized_measurements_are_refused_before_measuring(argv, capsys, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("measured before refusing")

    monkeypatch.setattr("approxtheory.measure.sup_error", boom)
    _refusal(cli_error(argv, capsys), "measuring")


def test_measurement_estimates_of_the_constructions_own_measures(capsys, monkeypatch):
    """svd_truncation's measure also holds the B x T x T logit changes; lag_head's searches at
    most 1024 sequences whatever the budget."""
    from approxtheory.commands.construct import _require_measure

    def boom(*a, **k):
        raise AssertionError("measured before refusing")

    monkeypatch.setattr("approxtheory.measure.sup_error", boom)
    c = build("svd_truncation", T=160)
    with resources.limits(max_bytes="2G"):
        resources.require_sup_error(c.model, c.task, 4096)  # the generic estimate fits ...
    _refusal(
        cli_error(["construct", "svd_truncation", "--T", "160", "--max-memory", "2G"], capsys),
        "measuring svd_truncation",
    )  # ... the construction's not
    c = build("lag_head")
    assert resources.sup_error_bytes(c.model, c.task, 10**9) > resources.max_bytes()
    _require_measure(c, 10**9)  # capped at 1024: fits


def test_every_construction_estimate_covers_its_model():
    from approxtheory.constructions import REGISTRY, names

    for name in names():
        entry = REGISTRY[name]
        assert entry.estimate is not None, name
        defaults = {k: v.default for k, v in entry.knobs.items()}
        c = build(name)
        assert entry.estimate(**defaults) >= c.model.count_params() * 8, name


def test_endless_experiment_is_refused(capsys, tmp_path, no_allocation):
    err = cli_error(
        [
            "experiment",
            "run",
            "identifiability_training",
            "--set",
            f"steps={10**12}",
            "--out",
            tmp_path,
            "--quiet",
        ],
        capsys,
    )
    assert "would take at least" in err and "years" in err
    assert resources.ENV_SECONDS in err and "24.0 h" in err


def test_max_memory_option_and_environment(capsys, monkeypatch, no_allocation):
    # a 1 KiB limit refuses even the default construction ...
    err = cli_error(["construct", "hc_k1", "--max-memory", "1K"], capsys)
    assert "limit of 1.0 KiB (--max-memory)" in err
    for argv in (
        ["identifiability", "--max-memory", "1K"],
        ["experiment", "run", "identifiability_training", "--max-memory", "1M"],
    ):
        assert "(--max-memory)" in cli_error(argv, capsys)
    monkeypatch.setenv(resources.ENV_BYTES, "1K")
    assert f"({resources.ENV_BYTES})" in cli_error(["identifiability"], capsys)
    monkeypatch.setenv(resources.ENV_BYTES, "nonsense")
    assert f"{resources.ENV_BYTES} must be a size" in cli_error(["identifiability"], capsys)
    # ... and the limit is not left behind after the command
    monkeypatch.delenv(resources.ENV_BYTES)
    assert resources.max_bytes() == resources._default_bytes()


def test_construct_subprocess_exit_code_rss_and_time(tmp_path):
    """The real entry point: exit 2, one stderr line, fast, and nothing big was allocated (max RSS
    of the process stays that of the imports)."""
    script = (
        "import json, resource, sys\n"
        "from approxtheory.cli import main\n"
        "rc = [main(a) for a in json.loads(sys.argv[1])]\n"
        "print(json.dumps({'rc': rc, 'maxrss_kb': "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))\n"
    )
    argvs = [
        ["construct", "hc_k2", "--T", "100000", "--d", "100"],
        ["construct", "hc_l9", "--eps", "1e-7"],
        ["identifiability", "--E", "100000", "--H", "1"],
        [
            "experiment",
            "run",
            "identifiability_training",
            "--set",
            "E=100000",
            "--quiet",
            "--out",
            str(tmp_path / "x"),
        ],
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop(resources.ENV_BYTES, None)
    t0 = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argvs)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    took = time.monotonic() - t0
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["rc"] == [2, 2, 2, 2], p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 4 and all(l.startswith("approxtheory: error: ") for l in lines)
    assert all("needs about" in l for l in lines), lines
    assert out["maxrss_kb"] < 1.5 * 2**20, out  # < 1.5 GiB: only the imports
    assert took < 60, took
    # the console entry point itself
    p = subprocess.run(
        [sys.executable, "-m", "approxtheory", "construct", "hc_l9", "--eps", "1e-7"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


# ------------------------------------------------------------------------- the error boundary
def _fail_with(monkeypatch, exc):
    def cmd(args):
        raise exc

    monkeypatch.setattr("approxtheory.docs.write_claims_page", lambda path: cmd(None))


@pytest.mark.parametrize(
    "exc,needle",
    [
        (
            PermissionError(errno.EACCES, "Permission denied", "/x/claims.md"),
            "Permission denied: /x/claims.md",
        ),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory", "/f/claims.md"), "Not a directory"),
        (
            OSError(errno.ENOSPC, "No space left on device", "/full/claims.md"),
            "No space left on device: /full/claims.md",
        ),
        (MemoryError(), "out of memory"),
        (
            RuntimeError(
                "[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate "
                "memory: you tried to allocate 40000000000 bytes."
            ),
            "out of memory",
        ),
        (
            ResourceLimitError("x needs about 1 TiB of memory\nmore than 1 GiB"),
            "x needs about 1 TiB of memory more than 1 GiB",
        ),
    ],
)
def test_filesystem_and_memory_errors_are_one_line_exit_2(
    exc, needle, capsys, monkeypatch, tmp_path
):
    _fail_with(monkeypatch, exc)
    assert needle in cli_error(["docs", "--out", tmp_path / "claims.md"], capsys)


def test_real_filesystem_error(capsys, tmp_path):
    """An OSError from the filesystem itself (a directory where a file must go)."""
    out = tmp_path / "docs"
    (out / "claims.md").mkdir(parents=True)
    err = cli_error(["docs", "--check", "--out", out / "claims.md"], capsys)
    assert "Is a directory" in err


def test_internal_errors_are_one_line_exit_1(capsys, monkeypatch, tmp_path):
    _fail_with(monkeypatch, ZeroDivisionError("division by zero"))
    err = cli_error(["docs", "--out", tmp_path / "c.md"], capsys, code=1)
    assert "ZeroDivisionError: division by zero" in err and "bug" in err
    assert "APPROXTHEORY_DEBUG=1" in err


def test_debug_shows_the_traceback(capsys, monkeypatch, tmp_path):
    _fail_with(monkeypatch, ZeroDivisionError("division by zero"))
    monkeypatch.setenv("APPROXTHEORY_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["docs", "--out", str(tmp_path / "c.md")])
    assert "internal error" in capsys.readouterr().err


# ------------------------------------------------------------------------------- the Python API
@pytest.mark.parametrize(
    "name,knobs,needle",
    [
        ("hc_k1_synthetic", {"seed": -3}, "seed must be >= 0"),
        ("if_pairwise_max", {"seed": -3}, "seed must be >= 0"),
        ("hc_k1", {"T": True}, r"T must be of type int, not a boolean \(got True\)"),
        ("hc_k1", {"beta": False}, "beta must be of type float, not a boolean"),
        ("hc_l9", {"eps": np.True_}, "not a boolean"),
    ],
)
def test_construction_knobs_reject_booleans_and_negative_seeds(name, knobs, needle):
    with pytest.raises(ConfigError, match=needle):
        build(name, **knobs)


def test_build_refuses_before_building(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("allocated before refusing")

    monkeypatch.setattr(Transformer, "__init__", boom)
    with pytest.raises(ResourceLimitError, match="building hc_k2") as e:
        build("hc_k2", T=100000, d=100)
    assert e.value.kind == "memory" and e.value.needed > e.value.limit
    with pytest.raises(ResourceLimitError, match="building hc_l9"):
        build("hc_l9", eps=1e-7)


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"E": True, "H": 1}, "E must be a positive integer"),
        ({"E": 8, "H": True}, "H must be a positive integer"),
        ({"E": 8, "H": 2, "G": True}, "G must be a positive integer or None"),
        ({"E": 8, "H": 2, "bias": 1}, "bias must be True or False"),
        ({"E": 8, "H": 2, "rope": 4}, "rope must be None"),
    ],
)
def test_attention_config_types(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        AttentionConfig(**kw)


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"rtol": -1}, r"rtol must be a number in \(0, 1\)"),
        ({"rtol": 0}, "rtol must be"),
        ({"rtol": 1}, "rtol must be"),
        ({"rtol": float("nan")}, "rtol must be"),
        ({"rtol": True}, "rtol must be"),
        ({"seed": True}, "seed must be an integer >= 0"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"seq_len": 0}, "seq_len must be a positive integer"),
        ({"n_seq": True}, "n_seq must be a positive integer or None"),
    ],
)
def test_identifiability_api_arguments(kw, needle):
    for fn in (unidentified_dim, dense_unidentified_dim):
        with pytest.raises(ConfigError, match=needle):
            fn(AttentionConfig(8, 2), **kw)


def test_identifiability_api_refuses_before_building(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("allocated before refusing")

    monkeypatch.setattr(Transformer, "__init__", boom)
    for method in ("auto", "dense", "structured"):
        with pytest.raises(ResourceLimitError):
            unidentified_dim(AttentionConfig(100000, 1), method=method)


def test_structured_method_on_configs_it_cannot_handle_is_typed():
    from approxtheory.identifiability import structured_unidentified_dim

    for cfg in (
        AttentionConfig(8, 2, bias=True),
        AttentionConfig(8, 2, rope="full"),
        AttentionConfig(8, 4, G=2),
    ):
        with pytest.raises(ConfigError, match="structured certificate needs"):
            structured_unidentified_dim(cfg)


# ---------------------------------------------------------------------- resources: estimates
def test_array_bytes_by_hand():
    assert resources.array_bytes(3, 4) == 96
    assert resources.array_bytes(3, 4, itemsize=4) == 48
    assert resources.array_bytes(10**6, 10**6) == 8 * 10**12  # exact, no overflow
    assert resources.array_bytes() == 8


def test_model_bytes_by_hand():
    # embed 1x4 + 4, cls 4, W_Q W_K W_V W_O 4 x 4x4, read-out 4 + 1: 81 parameters
    cfg = ModelConfig(d_in=1, width=4, layers=[LayerSpec(heads=2, head_dim=2)], d_out=1)
    assert resources.model_param_count(cfg) == 81
    assert resources.model_bytes(cfg) == 648
    cfg32 = ModelConfig(
        d_in=1, width=4, layers=[LayerSpec(heads=2, head_dim=2)], d_out=1, dtype="float32"
    )
    assert resources.model_bytes(cfg32) == 324


@pytest.mark.parametrize(
    "cfg",
    [
        ModelConfig(
            d_in=3,
            width=8,
            layers=[LayerSpec(2, 4, kv_groups=1, ffn_hidden=(16, 5))],
            d_out=2,
            bias=True,
            layernorm=True,
            seq_len=5,
            positions="onehot",
            embed_hidden=(7,),
            head_hidden=(6,),
        ),
        ModelConfig(
            d_in=2,
            width=6,
            layers=[LayerSpec(3, 2, value_dim=4, ffn_hidden=(9,)), LayerSpec(1, 1)],
            d_out=3,
            ffn_kind="swiglu",
            positions="learned",
            seq_len=7,
            readout="tokens",
            ffn_bias=False,
            embed_bias=False,
            head_bias=False,
        ),
        ModelConfig(
            d_in=2,
            width=6,
            layers=[LayerSpec(2, 3, ffn_hidden=(4,))],
            ffn_kind="bilinear",
            layernorm=True,
        ),
        # the decoder LM's options (prism_paired): RMSNorm, final norm, tied embeddings
        decoder_lm_config(12, ffn_kind="swiglu", **NO_BIASES),
        ModelConfig(
            d_in=5,
            width=6,
            layers=[LayerSpec(3, 2, ffn_hidden=(7,))],
            d_out=5,
            layernorm=True,
            final_norm=True,
            tie_embeddings=True,
            readout="tokens",
        ),
        ModelConfig(d_in=3, width=4, layers=[LayerSpec(2, 2)], rmsnorm=True),
    ],
)
def test_model_param_count_matches_the_model(cfg):
    assert resources.model_param_count(cfg) == Transformer(cfg).count_params()


def test_construction_estimates_by_hand():
    from approxtheory.constructions.headcount import hc_k2_bytes, hc_l9_bytes

    # HC-K2, T=4, d=2: E=8; encoder 6x8+8 and 8x8+8, CLS 8, attention 3x8x8 + 8x8, read-out
    # 8x8+8: 464 parameters (3712 B), plus two 8x8 temporaries (1024 B)
    assert hc_k2_bytes(4, 2) == 3712 + 1024
    assert build("hc_k2", T=4, d=2).model.count_params() * 8 == 3712
    # HC-L9, T=2, eps=1/2: n_g=2, widths 4 and 4; 69 parameters (552 B), W1 4x2 and W2 4x4
    assert hc_l9_bytes(2, 0.5) == 552 + 64 + 128
    assert build("hc_l9", T=2, eps=0.5).model.count_params() * 8 == 552
    # grows like T/eps^2: the 2n_g x T n_g layer (n_g = 10^7), in the model and in numpy
    assert hc_l9_bytes(8, 1e-7) > 2 * (2 * 10**7) * (8 * 10**7) * 8


def test_dense_estimate_by_hand_and_against_the_allocated_jacobian(monkeypatch):
    # E=4, H=1: P = 4·(4+4+4) + 4·4 = 64; n_seq = 12 (the minimum); 12·7·4 = 336 outputs
    est = dense_estimate(AttentionConfig(4, 1))
    assert (est["P"], est["outputs"]) == (64, 336)
    # the layer (embed 16 + attention 64 + read-out 16 = 96 parameters), J and one block of J
    assert est["bytes"] == 96 * 8 + 336 * 64 * 8 + 336 * 64 * 8
    seen = []
    real = np.empty
    monkeypatch.setattr(
        np, "empty", lambda shape, *a, **k: seen.append(shape) or real(shape, *a, **k)
    )
    r = dense_unidentified_dim(AttentionConfig(4, 1))
    assert (est["outputs"], est["P"]) in seen and r["total"] == 64


def test_sup_error_bytes_by_hand():
    c = build("softmax_retrieval", T=4, beta=10.0)
    # 10 sequences of 4 scalars (320 B) drawn, copied in errors() (320 B), 10 errors (80 B);
    # forward: the largest activation is the stream 10 x 5 x 2 (100 values), twice: 1600 B
    assert resources.sup_error_bytes(c.model, c.task, budget=10) == 320 + 320 + 80 + 1600
    assert resources.errors_bytes(c.model, c.task, 10) == 320 + 80 + 1600
    with pytest.raises(ResourceLimitError, match="error search with budget"):
        with resources.limits(max_bytes=2000):
            resources.require_sup_error(c.model, c.task, budget=10)


# ------------------------------------------------------------------------ resources: limits
def test_parse_and_format_sizes():
    assert resources.parse_size("8G") == resources.parse_size("8GiB") == 8 << 30
    assert resources.parse_size("512m") == 512 << 20
    assert resources.parse_size("1.5T") == 3 << 39
    assert resources.parse_size("4096") == 4096
    assert resources.parse_size("unlimited") is None
    for bad in ("", "x", "-1", "0", "8ib", "1e9"):
        with pytest.raises(ConfigError):
            resources.parse_size(bad)
    assert resources.format_bytes(1023) == "1023 B"
    assert resources.format_bytes(1536) == "1.5 KiB"
    assert resources.format_bytes(8 << 40) == "8.0 TiB"


def test_require_message_has_estimate_limit_and_override():
    with pytest.raises(ResourceLimitError) as e:
        resources.require(bytes=3 << 30, what="the thing", limit=1 << 30)
    msg = str(e.value)
    assert isinstance(e.value, ApproxTheoryError)
    assert "the thing needs about 3.0 GiB" in msg and "limit of 1.0 GiB" in msg
    assert resources.ENV_BYTES in msg and "--max-memory" in msg
    assert (e.value.needed, e.value.limit, e.value.kind) == (3 << 30, 1 << 30, "memory")
    resources.require(bytes=1 << 30, limit=1 << 30)  # at the limit: fine
    with pytest.raises(ResourceLimitError, match="would take at least") as e:
        resources.require(seconds=7200, seconds_limit=3600)
    assert e.value.kind == "time" and resources.ENV_SECONDS in str(e.value)


def test_limit_precedence(monkeypatch):
    default = resources.max_bytes()
    assert default == max(1 << 30, resources.machine_memory() // 4)
    assert resources.max_seconds() == 24 * 3600
    monkeypatch.setenv(resources.ENV_BYTES, "2G")
    assert resources.max_bytes() == 2 << 30
    with resources.limits(max_bytes="1G"):
        assert resources.max_bytes() == 1 << 30
        with resources.limits(max_bytes="unlimited"):
            assert resources.max_bytes() is None
            resources.require(bytes=10**30)
        with pytest.raises(ResourceLimitError, match=r"\(--max-memory\)"):
            resources.require(bytes=2 << 30)
    assert resources.max_bytes() == 2 << 30
    monkeypatch.setenv(resources.ENV_SECONDS, "unlimited")
    assert resources.max_seconds() is None
    monkeypatch.setenv(resources.ENV_SECONDS, "-5")
    with pytest.raises(ConfigError, match=resources.ENV_SECONDS):
        resources.max_seconds()
    with pytest.raises(ConfigError):
        with resources.limits(max_bytes=True):
            pass


def test_valid_defaults_fit():
    """Nothing that worked before is refused at the defaults (estimates of the stock sizes)."""
    from approxtheory.experiment import check_cells
    from approxtheory.identifiability import structured_estimate

    for profile in ("quick", "full"):
        r = check_cells("identifiability_training", profile)
        assert 0 < r["bytes"] < resources.max_bytes() and r["seconds"] < 3600
    assert dense_estimate(AttentionConfig(64, 8))["bytes"] < 4 << 30  # the README's dense E=64
    assert structured_estimate(AttentionConfig(64, 8))["bytes"] < 1 << 30
    assert math.isfinite(dense_estimate(AttentionConfig(64, 8))["seconds"])


def test_binary_corpus_is_refused(capsys, tmp_path):
    """A file that is not UTF-8 text, or holds NUL bytes, is one line, exit 2 (it used to be read
    with replacement characters and trained on)."""
    base = ["experiment", "run", "identifiability_training", "--out", tmp_path / "o"]
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"ab" * 400 + b"\xff\xfe")
    assert "must be a UTF-8 text file" in cli_error(base + ["--corpus", binary], capsys)
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"ab" * 400 + b"\x00")
    assert "NUL bytes" in cli_error(base + ["--corpus", nul], capsys)


# ------------------------------------------------------- the boundary's missing cases
BIG = "9" * 400  # 400 digits: a float of it is inf, int(inf) used to raise OverflowError


@pytest.mark.parametrize(
    "argv,needle",
    [
        # seeds beyond what numpy/torch seeding accept (torch.manual_seed raised ValueError)
        (
            ["bench", "train", "--seed", str(2**64)],
            "--seed must be an integer from 0 to 4294967295",
        ),
        (["bench", "search", "--seed", str(2**32)], "--seed must be an integer from 0 to"),
        (["identifiability", "--seed", str(2**64)], "--seed must be an integer from 0 to"),
        (["construct", "hc_k1", "--search-seed", str(2**64)], "--search-seed must be an integer"),
        (["construct", "hc_k1_synthetic", "--seed", str(2**64)], "seed"),
        # --threads bounded before libgomp aborts the process
        (["schedule", "compare", "uniform", "prism", "--threads", "5000"], "from 1 to"),
        (["bench", "model", "--threads", "5000"], "--threads must be an integer from 1 to"),
        (["bench", "train", "--threads", str(10**30)], "--threads must be an integer from 1 to"),
        # worker processes and cells bounded before anything starts
        (["bench", "sweep", "--workers", "9" * 23], "--workers must be an integer from 1 to"),
        (["bench", "sweep", "--cells", str(10**9)], "--cells must be an integer from 1 to 100000"),
        # a gate (or beta) whose logits overflow float64 used to report "refuted"
        (["construct", "hc_k1", "--gate", "1e308"], "must be finite in float64"),
        (["construct", "hc_k1", "--gate", "-1e300"], "must be finite in float64"),
        # a 400-digit memory limit: OverflowError, "internal error"
        (["construct", "hc_k1", "--max-memory", BIG], "--max-memory must be at most 16.0 EiB"),
        (["identifiability", "--max-memory", BIG], "--max-memory must be at most 16.0 EiB"),
        (
            ["experiment", "run", "softmax_beta_sweep", "--max-memory", BIG],
            "--max-memory must be at most 16.0 EiB",
        ),
        (["identifiability", "--max-memory", "9" * 5000], "(5000 characters)"),  # int()'s limit
    ],
)
def test_issue25_bad_arguments(argv, needle, capsys, tmp_path, no_allocation):
    if argv[:2] == ["experiment", "run"]:
        argv = argv + ["--out", tmp_path / "r"]
    assert needle in cli_error(argv, capsys, seconds=60)


def test_threads_and_seed_bounds_are_stated():
    assert _cliargs.threads(str(_cliargs.MAX_THREADS)) == _cliargs.MAX_THREADS >= 256
    assert _cliargs.seed(str(_cliargs.MAX_SEED)) == 2**32 - 1
    for bad in (str(_cliargs.MAX_THREADS + 1), "0"):
        with pytest.raises(_cliargs._Err):
            _cliargs.threads(bad)


def test_gate_that_overflows_is_refused_by_the_api():
    with pytest.raises(ConfigError, match="must be finite in float64"):
        build("hc_k1", gate=1e308)
    c = build("hc_k1", T=4, gate=-1e297)  # beta*(1 + |gate|) = 1e299: representable, built
    import torch

    X = torch.from_numpy(np.random.default_rng(0).random((8, 4, 1)))
    assert torch.isfinite(c.model(X)).all()


@pytest.mark.parametrize("kw", [{"seed": 2**64}, {"seed": -1}, {"seed": True}, {"threads": 10**6}])
def test_bench_train_api_bounds(kw):
    from approxtheory.bench.train import bench_train

    with pytest.raises(ConfigError):
        bench_train(steps=1, rounds=1, warmup=0, **kw)


@pytest.mark.parametrize("env", [resources.ENV_BYTES, resources.ENV_SECONDS])
@pytest.mark.parametrize("value", [BIG, "lots", "-5"])
def test_bad_limits_in_the_environment_are_one_line(env, value, capsys, monkeypatch):
    """Checked before any command runs, including those that would not read them."""
    monkeypatch.setenv(env, value)
    assert env in cli_error(["claims", "list"], capsys)


def test_parse_size_exact_and_bounded():
    assert resources.parse_size("16384P") == resources.MAX_SIZE == 2**64
    assert resources.parse_size("1.5k") == 1536 and resources.parse_size(".5k") == 512
    assert resources.parse_size("1" + "0" * 18) == 10**18  # exact, not via float
    for bad in (BIG, "16385P", "9" * 5000, "0." + "0" * 5000 + "1k", ".", ""):
        with pytest.raises(ConfigError):
            resources.parse_size(bad)


# standard output: closed, failing, too narrow an encoding (in-process: the boundary itself)
@pytest.mark.parametrize(
    "argv",
    [
        ["claims", "list"],  # ĉ, ≤ in the statements
        ["claims", "show", "HC-K1"],
        ["construct", "--list"],  # §, F̂
        ["construct", "hc_k1", "--help"],
        ["infoflow", "tasks"],  # Σ
    ],
)
def test_output_the_encoding_cannot_represent(argv, capsys, monkeypatch):
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    err = cli_error(argv, capsys)
    assert "standard output's encoding 'ascii' cannot represent" in err
    assert "PYTHONIOENCODING=utf-8" in err
    assert sys.stdout is out  # restored


def test_closed_stdout_in_process(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)  # what Python does when fd 1 is closed at start
    assert "standard output is closed" in cli_error(["claims", "list"], capsys)


class _Full(io.TextIOBase):
    def write(self, s):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_failing_stdout_in_process(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Full())
    err = cli_error(["claims", "list"], capsys)
    assert "cannot write to standard output: No space left on device" in err


def _proc(argv, env=None, timeout=120, **kw):
    e = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    e.pop("APPROXTHEORY_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "approxtheory", *argv],
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=e,
        **kw,
    )


def _one_error_line(p, needle):
    lines = p.stderr.splitlines()
    errs = [l for l in lines if l.startswith("approxtheory: error: ")]
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(errs) == 1 and needle in errs[0], p.stderr
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    # claims list also reports its count ("114 claims") on stderr; nothing else
    assert all(l in errs or l.endswith(" claims") for l in lines), p.stderr


@pytest.mark.slow  # several fresh interpreters (imports of torch, sympy)
@pytest.mark.skipif(os.name != "posix", reason="sh, /dev/full")
def test_stdout_closed_devnull_full_and_broken_pipe_in_a_real_process(tmp_path):
    """The real streams: stdout closed (``>&-``: exit 2), /dev/null (exit 0), /dev/full (exit 2),
    a reader that went away (quiet, exit 141, no traceback)."""
    closed = subprocess.run(
        ["sh", "-c", 'exec "$0" -m approxtheory claims list >&-', sys.executable],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    _one_error_line(closed, "standard output is closed")
    assert _proc(["claims", "list"], stdout=subprocess.DEVNULL).returncode == 0
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            _one_error_line(
                _proc(["claims", "list"], stdout=full), "cannot write to standard output"
            )
    p = subprocess.Popen(
        [sys.executable, "-m", "approxtheory", "claims", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    p.stdout.close()  # before the child has written anything: its first write is EPIPE
    _, err = p.communicate(timeout=120)
    assert p.returncode == 141, (p.returncode, err)
    assert b"Traceback" not in err and b"Exception ignored" not in err and b"error" not in err


@pytest.mark.slow  # several fresh interpreters (imports of torch, sympy)
def test_environment_failures_in_a_real_process(tmp_path):
    """PYTHONIOENCODING=ascii, MPLBACKEND=bogus, a 400-digit APPROXTHEORY_MAX_BYTES: exit 2, one
    line (they were "internal error", exit 1)."""
    p = _proc(["claims", "list"], env={"PYTHONIOENCODING": "ascii"}, stdout=subprocess.DEVNULL)
    _one_error_line(p, "standard output's encoding 'ascii' cannot represent")
    p = _proc(
        ["infoflow", "draw", "--task", "gdr", "--heads", "1", "--out", str(tmp_path / "f.png")],
        env={"MPLBACKEND": "bogus"},
        stdout=subprocess.DEVNULL,
    )
    _one_error_line(p, "MPLBACKEND='bogus' is not a matplotlib backend")
    assert not (tmp_path / "f.png").exists()
    p = _proc(["claims", "list"], env={resources.ENV_BYTES: BIG}, stdout=subprocess.DEVNULL)
    _one_error_line(p, f"{resources.ENV_BYTES} must be at most 16.0 EiB")


# docs --check on a page that is huge, sparse, not UTF-8, a FIFO or a device
def _docs_check(path, capsys, monkeypatch):
    read = []
    real_read = os.read

    def counting_read(fd, n):
        b = real_read(fd, n)
        read.append(len(b))
        return b

    monkeypatch.setattr(os, "read", counting_read)
    rc = main(["docs", "--check", "--out", str(path)])
    err = capsys.readouterr().err
    assert err.count("\n") == (rc != 0) and "Traceback" not in err, err
    return rc, err, sum(read)


def test_docs_check_on_a_sparse_20_gb_page_is_stale_without_reading_it(
    tmp_path, capsys, monkeypatch
):
    page = tmp_path / "claims.md"
    with open(page, "wb") as f:
        f.truncate(20 << 30)  # sparse: no disk used
    rc, err, nread = _docs_check(page, capsys, monkeypatch)
    assert rc == 1 and " is stale; run " in err
    assert nread == 0


def test_docs_check_on_a_page_larger_than_the_fresh_one(tmp_path, capsys, monkeypatch):
    from approxtheory.docs import render_claims_markdown

    fresh = render_claims_markdown().encode()
    page = tmp_path / "claims.md"
    page.write_bytes(fresh + b"x" * 100)
    rc, err, nread = _docs_check(page, capsys, monkeypatch)
    assert rc == 1 and " is stale; run " in err and nread == 0
    page.write_bytes(fresh[:-1] + b"\xff")  # not UTF-8: stale, not a UnicodeDecodeError
    rc, err, nread = _docs_check(page, capsys, monkeypatch)
    assert rc == 1 and " is stale; run " in err and nread <= len(fresh) + 1
    page.write_bytes(fresh)
    rc, err, nread = _docs_check(page, capsys, monkeypatch)
    assert rc == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_docs_check_on_a_fifo_device_or_link_to_one(tmp_path, capsys):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert "--out must be a regular file" in cli_error(
        ["docs", "--check", "--out", fifo], capsys, seconds=60
    )
    link = tmp_path / "zero.md"
    link.symlink_to("/dev/zero")
    for p in (link, "/dev/zero"):
        assert "a device or socket" in cli_error(["docs", "--check", "--out", p], capsys)
