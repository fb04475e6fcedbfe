"""approxtheory.schedules: the paper's Table 4 schedules, the rules, the
LayerSpecs, and exact parameter/FLOP neutrality against the catalogue's PR-N1/PR-N2.

The expected schedules are written out by hand from the digest (shared/papers/prism.md, Table 4),
never computed by the code under test."""

from __future__ import annotations

import pytest

from approxtheory import schedules as S
from approxtheory.errors import ConfigError
from approxtheory.model import Transformer

# Table 4 of the paper, by hand: (d, L, h_base) -> heads per layer, per-head dims per layer
SMALL = (3, 3, 6, 6, 8, 8, 12, 12, 12, 12, 12, 12)
SMALL_DIMS = (256, 256, 128, 128, 96, 96, 64, 64, 64, 64, 64, 64)
MEDIUM = (4, 4, 4, 8, 8, 8) + (16,) * 18
MEDIUM_DIMS = (256, 256, 256, 128, 128, 128) + (64,) * 18
LARGE = (6, 6, 6, 12, 12, 12) + (16,) * 18
LARGE_DIMS = (256, 256, 256, 128, 128, 128) + (96,) * 18
TABLE4 = [
    ((768, 12, 12), SMALL, SMALL_DIMS),
    ((1024, 24, 16), MEDIUM, MEDIUM_DIMS),
    ((1536, 24, 16), LARGE, LARGE_DIMS),
]


@pytest.mark.parametrize("shape,heads,dims", TABLE4, ids=["small", "medium", "large"])
def test_prism_defaults_reproduce_table4(shape, heads, dims):
    s = S.prism(*shape)
    assert s.heads == heads
    assert s.head_dims == dims
    assert s.kind == "prism" and s.h_base == shape[2] and s.L == shape[1]


@pytest.mark.parametrize(
    "shape,stages,block,heads",
    [
        ((768, 12, 12), (256, 128, 96), 2, SMALL),
        ((1024, 24, 16), (256, 128), 3, MEDIUM),
        ((1536, 24, 16), (256, 128), 3, LARGE),
    ],
    ids=["small", "medium", "large"],
)
def test_prism_with_the_digests_stage_dims(shape, stages, block, heads):
    assert S.prism(*shape, stage_dims=stages, block=block).heads == heads


def test_uniform_decreasing_custom():
    assert S.uniform(768, 12, 12).heads == (12,) * 12
    assert S.decreasing(768, 12, 12).heads == tuple(reversed(SMALL))
    assert S.custom(SMALL, 768).heads == SMALL
    # a control schedule checked for divisibility only
    assert S.custom((4, 4, 2, 1), 64, rules=("divisibility",)).heads == (4, 4, 2, 1)
    assert S.prism(64, 8, 4).heads == (1, 1, 2, 2, 4, 4, 4, 4)  # the digest's toy L = 8


@pytest.mark.parametrize(
    "heads,d,h_base,rule",
    [
        ((3, 3, 5, 5, 12, 12, 12, 12), 768, None, "divisibility"),
        ((6, 6, 3, 3, 12, 12, 12, 12), 768, None, "monotone"),
        ((6, 6, 6, 6, 12, 12), 768, 6, "ends-at-h_base"),
        ((3, 3, 6, 6, 8, 8, 12, 12), 768, None, "baseline-half"),
        ((3, 6, 6, 12, 12, 12), 768, None, "blocks"),
    ],
)
def test_each_rule_is_named(heads, d, h_base, rule):
    with pytest.raises(ConfigError, match=f"rule '{rule}'"):
        S.custom(heads, d, h_base)
    assert [r for r, _ in S.violations(heads, d, h_base)] == [rule]


def test_table4_schedules_satisfy_every_rule():
    for (d, _L, hb), heads, _ in TABLE4:
        assert S.violations(heads, d, hb) == []


def test_bad_generator_inputs():
    with pytest.raises(ConfigError, match="divisibility"):
        S.prism(768, 12, 12, stage_dims=(256, 100))
    with pytest.raises(ConfigError, match="baseline-half"):
        S.prism(768, 12, 12, stage_dims=(256, 192, 128, 96), block=2)
    with pytest.raises(ConfigError, match="h_base=7 must divide d=768"):
        S.prism(768, 12, 7)
    with pytest.raises(ConfigError, match="positive integer"):
        S.uniform(768, 0, 12)
    assert S.parse_heads("3x2,6x2,12x8") == (3, 3, 6, 6) + (12,) * 8
    with pytest.raises(ConfigError, match="integers separated by commas"):
        S.parse_heads("3,a")


def test_layer_specs_build_the_shared_model():
    s = S.prism(768, 12, 12)
    specs = s.layer_specs(ffn_hidden=(16,))
    assert [(x.heads, x.head_dim) for x in specs] == list(zip(SMALL, SMALL_DIMS, strict=True))
    cfg = S.model_config(S.prism(64, 8, 4), ffn=32)
    m = Transformer(cfg)
    assert [m.attention(i).h for i in range(8)] == [1, 1, 2, 2, 4, 4, 4, 4]
    assert [m.attention(i).n for i in range(8)] == [64, 64, 32, 32, 16, 16, 16, 16]


@pytest.mark.parametrize("T,batch", [(16, 2), (24, 1)])
def test_counts_equal_and_match_the_catalogue(T, batch):
    sched = [S.uniform(64, 8, 4), S.prism(64, 8, 4), S.decreasing(64, 8, 4)]
    counts = [S.count(s, T=T, batch=batch, ffn=40) for s in sched]
    assert len({c["params"]["total"] for c in counts}) == 1
    assert len({c["fwd_bwd_flops"] for c in counts}) == 1
    for s, c in zip(sched, counts, strict=True):
        cat = S.catalogue_counts(s, T, batch, ffn=40)
        assert c["params"]["attn"] == cat["attn"]
        assert c["params"]["ffn"] == cat["ffn"]
        assert c["fwd_flops_per_layer"] == cat["fwd_flops"]
        assert c["softmax_scores_per_layer"] == cat["softmax"]
    # the softmax work is the one term that scales with the head count
    assert counts[1]["softmax_scores"] < counts[0]["softmax_scores"]


def test_count_sees_the_attention_matmuls():
    """The per-layer count includes QKᵀ and AV: 4·B·T²·d on top of the projections and MLP."""
    T, B, d, f = 16, 2, 64, 40
    c = S.count(S.uniform(d, 2, 4), T=T, batch=B, ffn=f)
    projections = B * (8 * T * d * d + 6 * T * d * f)  # QKV + O + SwiGLU, written out here
    assert c["fwd_flops_per_layer"] == [projections + 4 * B * T * T * d] * 2


def test_throughput_reports_both_and_the_ratio():
    r = S.throughput([S.uniform(64, 4, 4), S.custom((1, 1, 4, 4), 64)], T=8, reps=1, ffn=16)
    assert len(r["tokens_per_s"]) == 2 and all(v > 0 for v in r["tokens_per_s"])
    assert r["ratio_to_first"][0] == 1.0
    assert r["ratio_to_first"][1] == pytest.approx(
        r["tokens_per_s"][1] / r["tokens_per_s"][0], 1e-2
    )


# ------------------------------------------------------------------------------------- CLI
def _cli(argv, capsys):
    from approxtheory.cli import main

    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("shape,heads,dims", TABLE4, ids=["small", "medium", "large"])
def test_cli_prism_json_gives_table4(shape, heads, dims, capsys):
    import json

    d, L, hb = shape
    rc, out, _ = _cli(
        ["schedule", "prism", "--d", d, "--layers", L, "--h-base", hb, "--json"], capsys
    )
    assert rc == 0
    got = json.loads(out)
    assert tuple(got["heads"]) == heads and tuple(got["head_dims"]) == dims


def test_cli_check_ok(capsys):
    rc, out, _ = _cli(
        ["schedule", "check", "--heads", ",".join(map(str, SMALL)), "--d", 768], capsys
    )
    assert rc == 0 and out.startswith("ok: 12 layers")


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["check", "--heads", "3,6,12,12", "--d", 768], "rule 'blocks'"),
        (["check", "--heads", "5,5,12,12", "--d", 768], "rule 'divisibility'"),
        (["check", "--heads", "6,6,3,3,12,12,12,12", "--d", 768], "rule 'monotone'"),
        (["prism", "--scale", "huge"], "choose from 'small', 'medium', 'large'"),
        (["prism", "--d", 768, "--layers", 12, "--h-base", 7], "h_base=7 must divide d=768"),
        (["prism", "--scale", "small", "--d", 1024], "contradicts --scale small"),
        (["compare", "foo", "prism", "--scale", "small"], "use uniform, prism, decreasing"),
        (
            ["compare", "uniform", "2,2,5,5", "--d", 64, "--layers", 4, "--h-base", 4],
            "layer 3 has h=5",
        ),
        # sizes refused before anything is built, --threads bounded
        (["prism", "--d", 768, "--layers", 100000000, "--h-base", 12], "MAX_LAYERS"),
        (["check", "--heads", "12x99999999999", "--d", 768], "MAX_LAYERS"),
        (["prism", "--d", 768, "--layers", 12, "--h-base", 12, "--block", 10**11], "baseline"),
        (["prism", "--d", 2**21, "--layers", 12, "--h-base", 16], "MAX_WIDTH"),
        (["compare", "uniform", "prism", "--scale", "small", "--threads", 5000], "--threads"),
        (
            ["compare", "uniform", "prism", "--scale", "small", "--T", 10**9, "--no-throughput"],
            "attention scores",
        ),
        (
            ["compare", "uniform", "prism", "--scale", "small", "--ffn", 10**19],
            "FFN weight",
        ),
        (
            ["compare", "uniform", "prism", "--d", 8, "--layers", 2, "--h-base", 2]
            + ["--reps", 10**12],
            "APPROXTHEORY_MAX_SECONDS",
        ),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, needle, capsys):
    rc, out, err = _cli(["schedule", *argv], capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_cli_threads_above_the_cap_are_refused(capsys):
    from approxtheory.commands.schedule import _max_threads

    n = _max_threads() + 1  # refused by the command itself, whatever --threads' type accepts
    rc, out, err = _cli(
        ["schedule", "compare", "uniform", "prism", "--scale", "small", "--threads", n], capsys
    )
    assert rc == 2 and out == "" and err.count("\n") == 1 and "--threads" in err


def test_sizes_are_refused_before_building():
    """Every size is checked before a list, a model or a loop is built."""
    import itertools

    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.prism(768, 10**8, 12)
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.uniform(768, 10**12, 12)
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.parse_heads("12x99999999999")
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.parse_heads(",".join(["12x1000", "12x25"]))
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.custom(range(10**12), 768)  # refused by its length, never materialised
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.violations(itertools.repeat(12), 768)  # an endless iterator: read up to the cap
    with pytest.raises(ConfigError, match="baseline-half"):
        S.prism(768, 12, 12, block=10**12)
    with pytest.raises(ConfigError, match="MAX_WIDTH"):
        S.default_stages(2 * 3**25, 12, 2 * 3**25)  # was: a loop of ~10^12 steps
    assert S.parse_heads(f"12x{S.MAX_LAYERS}") == (12,) * S.MAX_LAYERS
    assert S.uniform(768, S.MAX_LAYERS, 12).L == S.MAX_LAYERS


def test_count_and_throughput_refuse_what_torch_cannot_size():
    s = S.uniform(768, 2, 12)
    with pytest.raises(ConfigError, match="attention scores"):
        S.count(s, T=10**9)
    with pytest.raises(ConfigError, match="FFN weight"):
        S.count(s, ffn=10**19)
    with pytest.raises(ConfigError, match="MAX_LAYERS"):
        S.count(S.Schedule((12,) * (S.MAX_LAYERS + 1), 768, 12))
    with pytest.raises(ConfigError, match="divide"):
        S.count(S.Schedule((5, 5), 768, 5))
    from approxtheory.errors import ResourceLimitError

    with pytest.raises(ResourceLimitError, match="would take at least"):
        S.throughput([S.uniform(8, 2, 2)], T=1, reps=10**12)
    with pytest.raises(ConfigError, match="device"):
        S.throughput([S.uniform(8, 2, 2)], T=1, reps=1, device="bogus")


def test_throughput_leaves_the_global_rng_alone():
    import torch

    torch.manual_seed(4321)
    state = torch.get_rng_state()
    S.throughput([S.uniform(8, 2, 2)], T=2, reps=1, warmup=0, seed=0)
    assert torch.equal(torch.get_rng_state(), state)  # was: reseeded to seed=0


def test_cli_compare_json(capsys):
    import json

    argv = ["schedule", "compare", "uniform", "prism", "--d", 64, "--layers", 8, "--h-base", 4]
    rc, out, _ = _cli([*argv, "--T", 8, "--reps", 1, "--warmup", 0, "--ffn", 16, "--json"], capsys)
    assert rc == 0
    r = json.loads(out)
    assert r["schedules"][1]["heads"] == [1, 1, 2, 2, 4, 4, 4, 4]
    assert r["params_equal"] and r["matmul_flops_equal"]
    assert r["params"][0] == r["params"][1] and r["matmul_flops_fwd_bwd"][0] > 0
    assert all(all(a.values()) for a in r["catalogue_agrees"])
    assert r["softmax_scores_fwd"][1] < r["softmax_scores_fwd"][0]
    assert len(r["throughput"]["tokens_per_s"]) == 2 and r["throughput"]["ratio_to_first"][0] == 1
    c = r["throughput"]["control"]  # the A/A noise floor, measured in the same rounds
    assert c["ratio_to_first"] > 0 and c["tokens_per_s"] > 0
    aa, ba = c["ratio_to_first"], r["throughput"]["ratio_to_first"][1]
    assert r["throughput"]["within_noise"] == (abs(ba - 1) <= abs(aa - 1))


# ---------------------------------------------------------------------- attention distance
def _causal_uniform(B, h, T):
    import torch

    A = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return (A / A.sum(-1, keepdim=True)).expand(B, h, T, T)


def test_distance_of_hand_computed_maps():
    import torch

    T = 8
    # uniform causal rows t = 4..7 (0-indexed): mean |t - s| = t/2 -> (2 + 2.5 + 3 + 3.5) / 4
    assert S.distance_from_maps(_causal_uniform(2, 3, T)) == pytest.approx(2.75, abs=1e-12)
    eye = torch.eye(T, dtype=torch.float64).expand(1, 2, T, T)
    assert S.distance_from_maps(eye) == 0.0
    first = torch.zeros(1, 1, T, T, dtype=torch.float64)
    first[..., 0] = 1.0  # every query on token 0: distances 4, 5, 6, 7
    assert S.distance_from_maps(first) == pytest.approx(5.5, abs=1e-12)
    # heads are averaged: identity and first-token heads -> (0 + 5.5) / 2
    both = torch.cat((eye[:, :1], first), dim=1)
    assert S.distance_from_maps(both) == pytest.approx(2.75, abs=1e-12)
    # odd T = 5: queries 2, 3, 4 (1-indexed 3..5): 1, 1.5, 2
    assert S.distance_from_maps(_causal_uniform(1, 1, 5)) == pytest.approx(1.5, abs=1e-12)
    with pytest.raises(ConfigError, match=r"\(B, h, T, T\)"):
        S.distance_from_maps(torch.zeros(2, 3, 4))


@pytest.mark.parametrize("readout", ["tokens", "cls"])
def test_attention_distance_of_a_model_with_flat_logits(readout):
    """q = k = 0: every logit is 0, so each layer attends uniformly over the causal past."""
    import torch

    from approxtheory.model import LayerSpec, ModelConfig

    cfg = ModelConfig(
        d_in=3,
        width=8,
        layers=[LayerSpec(1, 8), LayerSpec(2, 4), LayerSpec(4, 2)],
        readout=readout,
        causal=True,
        rope="full",
        bias=True,
    )
    m = Transformer(cfg)
    with torch.no_grad():
        for i in range(3):
            for lin in (m.attention(i).q, m.attention(i).k):
                lin.weight.zero_()
                lin.bias.zero_()
    X = torch.randn(4, 8, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert S.attention_distance(m, X) == pytest.approx([2.75] * 3, abs=1e-12)


def test_attention_distance_refuses_cls_as_key():
    import torch

    from approxtheory.model import LayerSpec, ModelConfig

    m = Transformer(ModelConfig(d_in=2, width=4, layers=[LayerSpec(1, 4)], cls_is_key=True))
    with pytest.raises(ConfigError, match="cls_is_key"):
        S.attention_distance(m, torch.zeros(1, 4, 2))


@pytest.mark.parametrize(
    "heads, d, kv, T, ffn, bias",
    [
        ((3, 3, 6, 6, 8, 8, 12, 12), 96, None, 1024, None, True),  # Prism-like staircase
        ((4, 2, 1), 64, (2, 1, 1), 37, 50, False),  # GQA, odd T, no biases
        ((8, 8), 128, (2, 4), 5, None, True),
        ((1,), 8, None, 1, 3, True),  # T = 1: an interpolation node
        ((2, 4), 16, None, 2049, 7, False),
    ],
)
def test_count_small_equals_count(heads, d, kv, T, ffn, bias):
    """The one-layer CPU count interpolated in T (advise's) equals the meta-device count of the
    whole model, figure by figure."""
    s = S.Schedule(heads, d, max(heads), "custom")
    fast = S.count_small(s, T=T, kv_groups=kv, ffn=ffn, bias=bias)
    slow = S.count(s, T=T, kv_groups=kv, ffn=ffn, bias=bias, backward=False)
    assert fast == slow, {k: (fast[k], slow[k]) for k in fast if fast[k] != slow[k]}


def test_count_small_falls_back_when_a_point_is_off_the_quadratic(monkeypatch):
    """A count that is not quadratic in T (planted: a cubic term in the layer's FLOPs) is not
    interpolated: the fourth point disagrees and the meta-device count answers."""
    real = S._one_layer_counts
    calls = []

    def cubic(*a, **k):
        out = real(*a, **k)
        out["fwd"] = [v + T**3 for v, T in zip(out["fwd"], (1, 2, 3, 4))]
        return out

    monkeypatch.setattr(S, "_one_layer_counts", cubic)
    monkeypatch.setattr(S, "count", lambda *a, **k: calls.append(a) or {"fell": "back"})
    assert S.count_small(S.Schedule((2, 2), 16, 2, "custom"), T=9) == {"fell": "back"}
    assert calls


def test_the_flop_counter_without_dynamo_counts_as_torchs():
    """The unwrapped counter gives torch's FlopCounterMode's figures, per module and in all."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    cfg = S.model_config(S.Schedule((2, 4), 16, 4, "custom"), kv_groups=[1, 2])
    m = Transformer(cfg)
    X = torch.zeros(2, 7, cfg.d_in)
    with S._flop_counter() as a:
        m(X, return_attention=True)
    with FlopCounterMode(display=False) as b:
        m(X, return_attention=True)
    assert a.get_total_flops() == b.get_total_flops() > 0
    assert a.get_flop_counts() == b.get_flop_counts()
