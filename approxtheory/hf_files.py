"""Local Hugging Face model directories, read as foreign files: ``config.json``
typed and range-checked field by field, every ``*.safetensors`` header checked against its file,
and the memory of the model that loading would build estimated and refused
(:func:`approxtheory.resources.require`) before ``transformers`` is imported.

Used by ``identifiability --from-hf DIR`` (:func:`approxtheory.identifiability_modules.from_hf_dir`)
and ``export DIR`` (:func:`approxtheory.interop.load_hf`). The architectures: ``gpt2``, ``llama``
and ``approxtheory`` (written by ``approxtheory export --to hf``: its ``model_config`` is the
shared model's :class:`~approxtheory.model.ModelConfig`, checked by that constructor).
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError
from .foreign import files_in, get_bool, get_int, read_json, safetensors_header

__all__ = ["ARCHITECTURES", "MAX_LAYERS", "read_hf_config", "check_weights", "require_load"]

ARCHITECTURES = ("gpt2", "llama", "approxtheory")
#: the most layers, and the widest sizes, a config may name (far above any released model;
#: the memory estimate refuses what does not fit long before)
MAX_LAYERS = 100_000
MAX_WIDTH = 1_000_000
MAX_VOCAB = 10_000_000
MAX_POSITIONS = 10_000_000


def _dir(path, option: str) -> Path:
    p = Path(path)
    if not str(path).strip():
        raise ConfigError(f"{option} needs a local model directory (got '')")
    if not p.is_dir():
        raise ConfigError(f"{option} needs a local model directory; {str(path)!r} is not one")
    if not (p / "config.json").exists():
        raise ConfigError(f"{str(path)!r} is not a Hugging Face model directory (no config.json)")
    return p


def _gpt2_sizes(c: dict, w: str) -> dict:
    E = get_int(c, "n_embd", where=w, hi=MAX_WIDTH)
    H = get_int(c, "n_head", where=w, hi=E)
    if E % H:
        raise ConfigError(f"{w}: field 'n_head' must divide n_embd = {E} (got {H})")
    return {
        "layers": get_int(c, "n_layer", where=w, hi=MAX_LAYERS),
        "E": E,
        "H": H,
        "inner": get_int(c, "n_inner", where=w, hi=MAX_WIDTH, default=4 * E),
        "vocab": get_int(c, "vocab_size", where=w, hi=MAX_VOCAB, default=50257),
        "positions": get_int(c, "n_positions", where=w, hi=MAX_POSITIONS, default=1024),
    }


def _llama_sizes(c: dict, w: str) -> dict:
    E = get_int(c, "hidden_size", where=w, hi=MAX_WIDTH)
    H = get_int(c, "num_attention_heads", where=w, hi=E)
    G = get_int(c, "num_key_value_heads", where=w, hi=H, default=H)
    if H % G:
        raise ConfigError(f"{w}: field 'num_key_value_heads' must divide {H} heads (got {G})")
    D = get_int(c, "head_dim", where=w, hi=MAX_WIDTH, default=E // H)
    if c.get("head_dim") is None and E % H:
        raise ConfigError(f"{w}: field 'num_attention_heads' must divide hidden_size = {E}")
    return {
        "layers": get_int(c, "num_hidden_layers", where=w, hi=MAX_LAYERS),
        "E": E,
        "H": H,
        "G": G,
        "D": D,
        "bias": get_bool(c, "attention_bias", where=w, default=False),
        "inner": get_int(c, "intermediate_size", where=w, hi=MAX_WIDTH, default=4 * E),
        "vocab": get_int(c, "vocab_size", where=w, hi=MAX_VOCAB, default=32000),
        "positions": get_int(c, "max_position_embeddings", where=w, hi=MAX_POSITIONS, default=2048),
    }


def _own_config(c: dict, w: str):
    """The :class:`~approxtheory.model.ModelConfig` of an approxtheory export, built by its own
    constructor (which checks every field) from the typed JSON."""
    from .model import ModelConfig

    mc = c.get("model_config")
    if not isinstance(mc, dict) or not isinstance(mc.get("layers"), list) or not mc["layers"]:
        raise ConfigError(f"{w}: an approxtheory export needs model_config.layers (a list)")
    if len(mc["layers"]) > MAX_LAYERS:
        raise ConfigError(f"{w}: model_config.layers holds more than {MAX_LAYERS} layers")
    d = dict(mc)
    for k in ("embed_hidden", "head_hidden", "rope_freqs"):
        if isinstance(d.get(k), list):
            d[k] = tuple(d[k])
    try:  # the layers as mappings: ModelConfig converts and checks them (its own messages)
        return ModelConfig(**d)
    except ConfigError as e:
        raise ConfigError(f"{w}: model_config: {e}") from None
    except TypeError as e:  # an unknown or missing field of the constructor
        raise ConfigError(f"{w}: model_config: {str(e).split(') ', 1)[-1][:200]}") from None


def read_hf_config(path, option: str = "--from-hf") -> dict:
    """config.json of a local Hugging Face model directory, checked: a directory, a regular
    JSON file under the size and depth caps, a known architecture (gpt2, llama, approxtheory),
    weights present, and every size field an integer in its range (the approxtheory export's
    model_config through :class:`~approxtheory.model.ModelConfig`). Nothing large is read.
    The result has ``_n_layers``, ``_sizes`` (gpt2 / llama) or ``_model_config``."""
    p = _dir(path, option)
    cj = p / "config.json"
    w = str(cj)
    c = read_json(cj, where=w)
    if not isinstance(c, dict):
        raise ConfigError(f"{w}: not a JSON object")
    mt = c.get("model_type")
    if mt not in ARCHITECTURES:
        raise ConfigError(
            f"unknown architecture {str(mt)[:60]!r} in {w} (field 'model_type'); known: "
            f"{', '.join(ARCHITECTURES)}"
        )
    if not files_in(p, "*.safetensors", where=str(p)) and not files_in(
        p, "pytorch_model*.bin", where=str(p)
    ):
        raise ConfigError(f"{str(path)!r} has no weights (*.safetensors or pytorch_model.bin)")
    c = dict(c)
    if mt == "approxtheory":  # written by `approxtheory export --to hf`: the shared model
        cfg = _own_config(c, w)
        c["_model_config"] = cfg
        c["_n_layers"] = c["n_layer_approxtheory"] = len(cfg.layers)
    else:
        sizes = _gpt2_sizes(c, w) if mt == "gpt2" else _llama_sizes(c, w)
        c["_sizes"] = sizes
        c["_n_layers"] = sizes["layers"]
    return c


def check_weights(path) -> None:
    """Every ``*.safetensors`` file of the directory: its header consistent with its size
    (:func:`approxtheory.foreign.safetensors_header`). ``pytorch_model*.bin`` files are pickles
    that ``transformers`` refuses to load without ``weights_only``; they are left to it."""
    for f in files_in(path, "*.safetensors", where=str(path)):
        safetensors_header(f, where=str(f))


def model_param_count(c: dict) -> int:
    """Parameters of the whole model that loading the checked config ``c`` builds."""
    if c["model_type"] == "approxtheory":
        from .resources import model_param_count as own

        return own(c["_model_config"])
    s = c["_sizes"]
    E, L = s["E"], s["layers"]
    if c["model_type"] == "gpt2":
        per = 4 * E * E + 4 * E + 2 * E * s["inner"] + s["inner"] + E + 4 * E
        return (s["vocab"] + s["positions"]) * E + L * per + 2 * E
    qkv = E * s["D"] * (2 * s["H"] + 2 * s["G"]) + s["bias"] * ((s["H"] + 2 * s["G"]) * s["D"] + E)
    return s["vocab"] * E + L * (qkv + 3 * E * s["inner"] + 2 * E) + E


def require_load(c: dict, path, itemsize: int = 8) -> None:
    """Refuse (ResourceLimitError) loading a model whose parameters do not fit the memory limit
    (float64 unless ``itemsize`` says otherwise), before anything is built."""
    from .resources import require

    n = model_param_count(c)
    require(
        bytes=n * itemsize,
        what=f"loading the {c['model_type']} model in {str(path)!r} ({n:,} parameters, "
        f"{c['_n_layers']} layers)",
    )
