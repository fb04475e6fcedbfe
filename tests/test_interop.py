"""Export to TransformerLens and Hugging Face with a parity report (
:mod:`approxtheory.interop`). Skipped where transformers / transformer_lens are absent."""

import json
import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _helpers import DECODER_LM  # noqa: E402

from approxtheory import interop  # noqa: E402
from approxtheory.cli import main  # noqa: E402
from approxtheory.errors import ConfigError  # noqa: E402
from approxtheory.model import LayerSpec, ModelConfig, Transformer  # noqa: E402


def _tl():
    pytest.importorskip("transformer_lens")


def _hf():
    pytest.importorskip("transformers")


def _random(seed=0, **kw) -> Transformer:
    torch.manual_seed(seed)
    base = dict(d_in=3, width=8, layers=[LayerSpec(heads=2, head_dim=4)], d_out=2)
    base.update(kw)
    m = Transformer(ModelConfig(**base))
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.5)
    return m


# ------------------------------------------------------------------------------- done-when


def test_hc_k1_tl_parity_and_sup_error_after_reload(tmp_path):
    _tl()
    ex = interop.export("hc_k1", to="tl", out=tmp_path / "tl")
    r = ex.report
    assert r.reloaded and r.dtype == "float64" and r.passed
    assert r.max_abs_diff <= 1e-12 and r.n_worst == 1 and r.n_random == 64
    assert abs(r.sup_error_target - r.sup_error) <= 1e-12 and r.sup_error > 0.1
    assert "read-out" in r.outside and any("encoder" in o for o in r.outside)
    assert any("scale 2" in n for n in r.notes)
    bridge, model = interop.load_tl(tmp_path / "tl")
    assert type(bridge).__name__ == "TransformerBridge"


def test_hc_k1_hf_from_pretrained_reproduces_search(tmp_path):
    _hf()
    ex = interop.export("hc_k1", to="hf", out=tmp_path / "hf")
    r = ex.report
    assert r.passed and r.dtype == "float64" and r.max_abs_diff <= 1e-12 and r.outside == []
    assert r.sup_error_reloaded_search == pytest.approx(r.sup_error, abs=1e-12)
    assert (tmp_path / "hf" / "model.safetensors").is_file()
    from transformers import AutoModel

    m = AutoModel.from_pretrained(str(tmp_path / "hf"), dtype=torch.float64)
    X = np.random.default_rng(1).uniform(0, 1, (4, 8, 1))
    with torch.no_grad():
        assert torch.equal(m(torch.tensor(X)), ex.model(X))
    assert not list(tmp_path.glob(".export-*"))  # the temporary folder is gone


_AUTO_LOAD = """
import json, sys

import numpy as np
import torch
from transformers import AutoModel

assert "approxtheory" not in sys.modules  # nothing registered the architecture beforehand
m = AutoModel.from_pretrained(sys.argv[1], trust_remote_code=True)
with torch.no_grad():
    y = m(torch.tensor(np.load(sys.argv[2])))
np.save(sys.argv[3], y.numpy())
from approxtheory import interop  # exporting again after such a load writes the export's module

interop.export(m.transformer, to="hf", out=sys.argv[4], check=False)
print(json.dumps({"class": type(m).__name__, "dtype": str(y.dtype)}))
"""


def test_hf_export_loads_with_automodel_and_trust_remote_code(tmp_path):
    """An exported directory loads, in a fresh process where nothing of approxtheory is imported,
    with ``AutoModel.from_pretrained(dir, trust_remote_code=True)`` (the ``auto_map`` and module
    written beside the weights), and computes the exported model's outputs."""
    _hf()
    import subprocess
    import sys

    out = tmp_path / "hf"
    ex = interop.export("hc_k1", to="hf", out=out, budget=64, n_random=8)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["auto_map"] == interop.HF_AUTO_MAP and cfg["model_type"] == "approxtheory"
    assert (out / f"{interop.HF_REMOTE_MODULE}.py").is_file()
    X = np.random.default_rng(3).uniform(0, 1, (6, 8, 1))
    np.save(tmp_path / "x.npy", X)
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
        "OMP_NUM_THREADS": "1",
    }
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _AUTO_LOAD,
            str(out),
            str(tmp_path / "x.npy"),
            str(tmp_path / "y.npy"),
            str(tmp_path / "again"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info == {"class": "ApproxTheoryModel", "dtype": "torch.float64"}
    with torch.no_grad():
        want = ex.model(X).numpy()
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-12 * max(1.0, float(np.max(np.abs(want))))
    again = sorted(p.name for p in (tmp_path / "again").iterdir())
    assert "interop.py" not in again and f"{interop.HF_REMOTE_MODULE}.py" in again
    assert json.loads((tmp_path / "again" / "config.json").read_text())["auto_map"] == (
        interop.HF_AUTO_MAP
    )


# ------------------------------------------------------------------------------- heterogeneous


def test_tl_zero_padded_heads_ffn_layernorm_float64():
    _tl()
    m = _random(
        layers=[
            LayerSpec(heads=2, head_dim=3, value_dim=4, kv_groups=1, ffn_hidden=(5,)),
            LayerSpec(heads=3, head_dim=2),
            LayerSpec(heads=1, head_dim=4, ffn_hidden=(7,)),
        ],
        layernorm=True,
        final_norm=True,
        bias=True,
        causal=True,
        ffn_kind="gelu",
        positions="learned",
        seq_len=6,
        readout="tokens",
    )
    r = interop.export(m, to="tl").report
    assert r.dtype == "float64" and r.max_abs_diff_worst is None
    assert r.passed and r.max_abs_diff_random <= 1e-12
    assert any("zero-padded to 3 x 4" in n for n in r.notes)
    assert any("per-layer attention scales folded" in n for n in r.notes)


def test_tl_gqa_rope_rmsnorm_swiglu_float32_stated():
    _tl()
    m = _random(
        layers=[LayerSpec(heads=4, head_dim=2, kv_groups=2, ffn_hidden=(6,))] * 2,
        rmsnorm=True,
        final_norm=True,
        rope="full",
        ffn_kind="swiglu",
        ffn_bias=False,
        causal=True,
    )
    r = interop.export(m, to="tl").report
    assert r.dtype == "float32" and r.tolerance == interop.PARITY_TOL["float32"]
    assert any("RMSNorm in float32" in n for n in r.notes)
    assert any("RoPE" in n for n in r.notes)
    assert r.passed and 0 < r.max_abs_diff_random <= 1e-5


def test_parity_fails_on_a_corrupted_export():
    _tl()
    ex = interop.export("hc_k1", to="tl", check=False)
    assert ex.report is None
    assert ex.recheck(budget=64).passed
    native = interop._tl_native(ex.obj)
    with torch.no_grad():
        interop._tl_params(native)["layers.0.attn.v.weight"][0, 0] += 1e-9
    r = ex.recheck(budget=64)
    assert not r.passed and r.max_abs_diff > 1e-12


# ------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "kw, word",
    [
        (dict(residual=False), "residual"),
        (
            dict(layers=[LayerSpec(heads=1, head_dim=2, ffn_hidden=(4,))], ffn_kind="bilinear"),
            "bilinear",
        ),
        (dict(layers=[LayerSpec(heads=1, head_dim=2, ffn_hidden=(4, 4))]), "more than one"),
        (dict(layernorm=True), "final norm"),
        (
            dict(
                layers=[LayerSpec(heads=1, head_dim=2), LayerSpec(heads=1, head_dim=4)],
                rope="full",
                attn_scale=0.5,
            ),
            "per-layer head widths with full RoPE",
        ),
    ],
)
def test_tl_refuses_what_it_cannot_express_before_building(monkeypatch, kw, word):
    m = _random(**kw)

    def boom(*a, **k):
        raise AssertionError("booted a bridge for a refused architecture")

    monkeypatch.setattr(interop, "_tl_boot", boom)
    with pytest.raises(ConfigError, match=word):
        interop.export(m, to="tl")


def test_bad_arguments():
    with pytest.raises(ConfigError, match="targets: tl, hf"):
        interop.export("hc_k1", to="onnx")
    with pytest.raises(ConfigError, match="unknown construction 'hc_k11'; did you mean"):
        interop.export("hc_k11", to="hf")
    with pytest.raises(ConfigError, match="construction name, a Construction"):
        interop.export(3, to="hf")
    with pytest.raises(ConfigError, match="n_random"):
        interop.export("hc_k1", to="hf", n_random=0)


# ------------------------------------------------------------------------------- CLI


def test_cli_check_json(capsys):
    _tl()
    assert main(["export", "hc_k1", "--to", "tl", "--check", "--json", "--budget", "64"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["parity"]["passed"] and rec["parity"]["max_abs_diff"] <= 1e-12


def test_cli_from_construct_json_result(tmp_path, capsys):
    _hf()
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"construction": "hc_k1", "knobs": {"T": 6, "beta": 50.0}}))
    assert main(["export", str(f), "--to", "hf", "--check", "--budget", "64"]) == 0
    out = capsys.readouterr().out
    assert "parity: PASS" in out and "parity (float64" in out


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["nope", "--to", "tl", "--check"], "unknown construction or results path 'nope'"),
        (["/nonexistent/r.json", "--to", "hf", "--check"], "unknown construction or results"),
        (["hc_k1", "--to", "xx"], "invalid choice"),
        (["hc_k1", "--to", "tl"], "give --out DIR"),
        (["if_pairwise_max", "--to", "tl", "--check"], "bilinear FFN"),
    ],
)
def test_cli_bad_input_one_line_exit_2(capsys, argv, msg):
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1


def test_cli_out_not_writable(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["export", "hc_k1", "--to", "hf", "--out", str(f / "sub")]) == 2
    assert "approxtheory: error:" in capsys.readouterr().err


def test_cli_help_names_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    out = capsys.readouterr().out
    for opt in ("--to", "--out", "--check", "--budget", "--random", "--seed", "--json"):
        assert opt in out


def test_hf_round_trip_tied_rope_float32(tmp_path):
    _hf()
    m = _random(
        d_in=4,
        d_out=4,
        layers=[LayerSpec(heads=2, head_dim=4, ffn_hidden=(8,))],
        rope="full",
        ffn_kind="swiglu",
        dtype="float32",
        **DECODER_LM,
    )
    r = interop.export(m, to="hf", out=tmp_path / "m").report
    assert r.dtype == "float32" and r.reloaded and r.max_abs_diff == 0.0 and r.passed
    from transformers import AutoModel

    direct = AutoModel.from_pretrained(str(tmp_path / "m"), dtype=torch.float32)
    X = np.random.default_rng(2).standard_normal((2, 5, 4))
    with torch.no_grad():  # RoPE's tables are rebuilt: they are not in the safetensors file
        assert torch.equal(direct(torch.tensor(X, dtype=torch.float32)), m(X))
    back = interop.resolve(tmp_path / "m")  # an hf export is a source too
    assert isinstance(back, Transformer) and back.cfg.tie_embeddings and back.cfg.dtype == "float32"


def test_worst_inputs_are_checked():
    _hf()
    with pytest.raises(ConfigError, match="worst must be finite inputs"):
        interop.export("hc_k1", to="hf", worst=np.zeros((8, 1)))
    w = np.random.default_rng(0).uniform(0, 1, (3, 8, 1))
    r = interop.export("hc_k1", to="hf", worst=w, budget=64).report
    assert r.n_worst == 4 and r.max_abs_diff_worst == 0.0


def test_missing_optional_package_is_a_typed_error(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("transformers", "transformer_lens") else real(name, *a),
    )
    monkeypatch.setattr(interop, "_HF_CLASSES", None)
    with pytest.raises(ConfigError, match=r"approxtheory\[hf\]"):
        interop.export("hc_k1", to="hf")
    with pytest.raises(ConfigError, match=r"approxtheory\[tl\]"):
        interop.export("hc_k1", to="tl")


@pytest.mark.parametrize(
    "argv",
    [
        ["nosuch", "--to", "tl"],  # no --out / --check either: the name is reported first
        ["nosuch", "--to", "hf", "--json"],
        ["/nonexistent/r.json", "--to", "tl"],
    ],
)
def test_cli_unknown_source_reported_before_missing_options(capsys, argv):
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unknown construction or results path" in err and "give --out" not in err
    assert "approxtheory construct --list" in err and "hc_k1" in err


def test_check_source_builds_nothing(monkeypatch):
    import approxtheory.constructions as cons

    def boom(*a, **k):
        raise AssertionError("built a construction to check a name")

    monkeypatch.setattr(cons, "build", boom)
    interop.check_source("hc_k1")  # known: no error, nothing built
    with pytest.raises(ConfigError, match="did you mean"):
        interop.check_source("hc_k11")
