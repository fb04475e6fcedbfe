"""``approxtheory identifiability``: the unidentified dimension of an attention layer, catalogue
count against Jacobian rank (:mod:`approxtheory.identifiability`)."""

from __future__ import annotations

__all__ = ["register"]


def _cmd(args) -> int:
    import json

    _check_options(args)
    if args.from_hf is not None:  # a local Hugging Face directory
        from ..identifiability_modules import cli_from_hf

        return cli_from_hf(args)

    from ..identifiability import AttentionConfig, unidentified_dim
    from ._options import forward

    cfg = AttentionConfig(
        E=8 if args.E is None else args.E,
        H=2 if args.H is None else args.H,
        **forward(args, "G", "bias", "causal", "rope", "fat", "no_output"),
    )
    r = unidentified_dim(cfg, seed=args.seed, method=args.method)
    r["config"] = {
        "E": cfg.E,
        "H": cfg.H,
        "G": cfg.groups,
        "bias": cfg.bias,
        "causal": cfg.causal,
        "rope": cfg.rope,
        "fat": cfg.fat,
        "no_output": cfg.no_output,
        "head_dim": cfg.head_dim,
    }
    r["predicted_ratio"] = r["predicted"] / r["total"]
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(
        f"attention layer E={cfg.E} H={cfg.H} G={cfg.groups} head_dim={cfg.head_dim}"
        f"{' bias' if cfg.bias else ''}{' causal' if cfg.causal else ''}"
        f"{' rope=' + cfg.rope if cfg.rope else ''}{' fat' if cfg.fat else ''}"
        f"{' no-W_O' if cfg.no_output else ''}"
    )
    print(f"  total parameters:       {r['total']}")
    print(f"  predicted unidentified: {r['predicted']}")
    print(f"  measured unidentified:  {r['measured']}  (P - rank of the Jacobian)")
    print(f"  ratio:                  {r['ratio']:.6f}")
    print(f"  singular-value gap:     {r['singular_value_gap']:.2e}  (method: {r['method']})")
    print(
        "  "
        + (
            "predicted = measured"
            if r["predicted"] == r["measured"]
            else "MISMATCH between prediction and measurement"
        )
    )
    return 0


#: the options that describe the layer to build (ignored by --from-hf, which reads the layers)
_BUILT = ("E", "H", "G", "bias", "rope", "causal", "fat", "no_output")


def _check_options(args) -> None:
    """Refuse options that would be ignored: --layer / --all-layers without --from-hf, and the
    options of a built layer with it."""
    from ..errors import ConfigError

    if args.from_hf is None:
        given = ["--layer"] if args.layer is not None else []
        given += ["--all-layers"] if args.all_layers else []
        if given:
            raise ConfigError(
                f"{' and '.join(given)} apply to --from-hf DIR only (the layers of a model "
                f"directory); without it the command measures one layer built from --E, --H, ..."
            )
        return
    ignored = ["--" + k.replace("_", "-") for k in _BUILT if getattr(args, k) not in (None, False)]
    if ignored:
        raise ConfigError(
            f"{', '.join(ignored)} cannot be combined with --from-hf (the layers are read from "
            f"the directory); give --layer N or --all-layers to choose them"
        )


def register(p) -> None:
    from .._cliargs import SEED_HELP, mem_size, pos_int, seed

    p.add_argument("--E", type=pos_int, default=None, help="model width (default 8)")
    p.add_argument("--H", type=pos_int, default=None, help="heads (default 2)")
    p.add_argument("--G", type=pos_int, default=None, help="KV groups (GQA; default H)")
    p.add_argument("--bias", action="store_true", help="QKV and output projections with biases")
    p.add_argument("--rope", default=None, help="full, partial:N or repeated")
    p.add_argument("--causal", action="store_true", help="a causal attention mask")
    p.add_argument("--fat", action="store_true", help="head width E at any H")
    p.add_argument(
        "--no-output",
        action="store_true",
        help="the paper's single head: square W_V, no W_O (H = 1)",
    )
    p.add_argument(
        "--method",
        default="auto",
        choices=["auto", "dense", "structured"],
        help="dense Jacobian + SVD, or the structured per-head certificate "
        "(auto: structured where it applies)",
    )
    p.add_argument(
        "--seed", type=seed, default=0, help=f"seed of the weights and inputs: {SEED_HELP}"
    )
    p.add_argument(
        "--max-memory",
        type=mem_size,
        default=None,
        metavar="SIZE",
        help="refuse work estimated to need more memory (e.g. 16G, 'unlimited'; "
        "default: APPROXTHEORY_MAX_BYTES or a quarter of this machine's memory)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    # a local Hugging Face model directory (approxtheory.identifiability_modules)
    p.add_argument(
        "--from-hf",
        default=None,
        metavar="DIR",
        help="measure the attention layers of a local Hugging Face model directory (gpt2, llama, "
        "or one written by `approxtheory export --to hf`)",
    )
    hf = p.add_mutually_exclusive_group()
    hf.add_argument("--layer", type=int, default=None, help="with --from-hf: the layer (default 0)")
    hf.add_argument("--all-layers", action="store_true", help="with --from-hf: every layer")
    p.set_defaults(func=_cmd)
