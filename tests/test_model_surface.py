"""The typed model-editing surface: every setter writes exactly the parameters it
names (checked against the parameters' registered names, an oracle independent of the surface),
wrong shapes and missing parts raise ConfigError naming what is expected, the residual-layout
helper names coordinate blocks, and no construction or analysis names a weight by its positional
module path or reaches through ``.layers[``."""

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from approxtheory import ConfigError
from approxtheory.model import LayerSpec, ModelConfig, ResidualLayout, Transformer

E, T, D_IN = 6, 4, 2


def _model(**kw) -> Transformer:
    cfg = dict(
        d_in=D_IN,
        width=E,
        seq_len=T,
        positions="learned",
        embed_hidden=(5,),
        head_hidden=(3,),
        d_out=2,
        layers=[LayerSpec(heads=2, head_dim=3, ffn_hidden=(7,)), LayerSpec(heads=3, head_dim=2)],
    )
    cfg.update(kw)
    return Transformer(ModelConfig(**cfg))


def _gated() -> Transformer:
    return Transformer(
        ModelConfig(
            d_in=D_IN,
            width=E,
            ffn_kind="bilinear",
            d_out=1,
            layers=[LayerSpec(heads=1, head_dim=2, ffn_hidden=(4,))],
        )
    )


def _snapshot(m):
    return {n: p.detach().clone() for n, p in m.named_parameters()}


def _val(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape) + 10.0  # never 0 or the init


# (setter, {registered parameter name: (rows/cols it writes or None for all, value)})
def _cases():
    w = _val
    return [
        (
            "set_embedding",
            lambda m: m.set_embedding(w((5, D_IN), 1), w((5,), 2)),
            {"embed.0.weight": (None, w((5, D_IN), 1)), "embed.0.bias": (None, w((5,), 2))},
        ),
        (
            "set_embedding linear=1",
            lambda m: m.set_embedding(w((E, 5), 3), linear=1),
            {"embed.2.weight": (None, w((E, 5), 3))},
        ),
        (
            "set_embedding bias only",
            lambda m: m.set_embedding(bias=w((E,), 4), linear=1),
            {"embed.2.bias": (None, w((E,), 4))},
        ),
        (
            "set_readout",
            lambda m: m.set_readout(w((3, E), 5), w((3,), 6)),
            {"head.0.weight": (None, w((3, E), 5)), "head.0.bias": (None, w((3,), 6))},
        ),
        (
            "set_readout linear=-1",
            lambda m: m.set_readout(w((2, 3), 7), linear=-1),
            {"head.2.weight": (None, w((2, 3), 7))},
        ),
        ("set_cls", lambda m: m.set_cls(w((E,), 8)), {"cls": (None, w((E,), 8))}),
        ("set_positions", lambda m: m.set_positions(w((T, E), 9)), {"pos": (None, w((T, E), 9))}),
        (
            "set_ffn",
            lambda m: m.set_ffn(0, w((7, E), 10), w((7,), 11)),
            {
                "layers.0.ffn.mlp.0.weight": (None, w((7, E), 10)),
                "layers.0.ffn.mlp.0.bias": (None, w((7,), 11)),
            },
        ),
        (
            "set_ffn linear=1",
            lambda m: m.set_ffn(0, w((E, 7), 12), linear=1),
            {"layers.0.ffn.mlp.2.weight": (None, w((E, 7), 12))},
        ),
        (
            "set_head layer 1 head 2",
            lambda m: m.set_head(
                1, 2, q=w((2, E), 13), k=w((2, E), 14), v=w((2, E), 15), o=w((E, 2), 16)
            ),
            {
                "layers.1.attn.q.weight": (np.s_[4:6], w((2, E), 13)),
                "layers.1.attn.k.weight": (np.s_[4:6], w((2, E), 14)),
                "layers.1.attn.v.weight": (np.s_[4:6], w((2, E), 15)),
                "layers.1.attn.o.weight": (np.s_[:, 4:6], w((E, 2), 16)),
            },
        ),
        (
            "set_head layer -2 head 0, q only",
            lambda m: m.set_head(-2, 0, q=w((3, E), 17)),
            {"layers.0.attn.q.weight": (np.s_[0:3], w((3, E), 17))},
        ),
    ]


@pytest.mark.parametrize("name,setter,expected", _cases(), ids=[c[0] for c in _cases()])
def test_setters_write_exactly_the_named_parameters(name, setter, expected):
    m = _model()
    before = _snapshot(m)
    setter(m)
    after = _snapshot(m)
    for pname, p in after.items():
        if pname not in expected:
            assert torch.equal(p, before[pname]), f"{name} changed {pname}"
            continue
        rows, value = expected[pname]
        want = before[pname].clone()
        if rows is None:
            want = torch.as_tensor(value, dtype=want.dtype)
        else:
            want[rows] = torch.as_tensor(value, dtype=want.dtype)
        assert torch.equal(p, want), f"{name} wrote {pname} wrongly"


def test_gated_ffn_setter_writes_w1_w3_w2():
    m = _gated()
    before = _snapshot(m)
    m.set_gated_ffn(0, w1=_val((4, E), 1), w3=_val((4, E), 2), w2=_val((E, 4), 3), b2=_val((E,), 4))
    after = _snapshot(m)
    expected = {
        "layers.0.ffn.w1.weight": _val((4, E), 1),
        "layers.0.ffn.w3.weight": _val((4, E), 2),
        "layers.0.ffn.w2.weight": _val((E, 4), 3),
        "layers.0.ffn.w2.bias": _val((E,), 4),
    }
    for pname, p in after.items():
        if pname in expected:
            assert torch.equal(p, torch.as_tensor(expected[pname])), pname
        else:
            assert torch.equal(p, before[pname]), pname


@pytest.mark.parametrize(
    "call,needle",
    [
        (
            lambda m: m.set_embedding(np.zeros((5, 3))),
            r"the embedding linear 0 weight must have shape "
            r"\(5, 2\) \(got \(5, 3\)\)",
        ),
        (
            lambda m: m.set_embedding(bias=np.zeros(4)),
            r"the embedding linear 0 bias must have shape "
            r"\(5,\) \(got \(4,\)\)",
        ),
        (
            lambda m: m.set_embedding(np.zeros((6, 5)), linear=2),
            r"the embedding has 2 linear maps: "
            r"linear must be in \[0, 2\)",
        ),
        (
            lambda m: m.set_readout(np.zeros((3, 5))),
            r"the read-out linear 0 weight must have shape "
            r"\(3, 6\)",
        ),
        (lambda m: m.set_cls(np.zeros(5)), r"the CLS vector must have shape \(6,\) \(got \(5,\)\)"),
        (
            lambda m: m.set_positions(np.zeros((3, 6))),
            r"the learned positions must have shape "
            r"\(4, 6\)",
        ),
        (
            lambda m: m.set_ffn(0, np.zeros((6, 7))),
            r"layer 0's FFN linear 0 weight must have shape "
            r"\(7, 6\)",
        ),
        (lambda m: m.set_ffn(1, np.zeros((7, 6))), r"layer 1 has no feed-forward block"),
        (lambda m: m.set_gated_ffn(0, w1=np.zeros((7, 6))), r"layer 0's FFN is not gated"),
        (
            lambda m: m.set_head(0, 2, q=np.zeros((3, 6))),
            r"head index must be in \[0, 2\) \(got 2\)",
        ),
        (
            lambda m: m.set_head(1, 0, q=np.zeros((3, 6))),
            r"head 0 q block must have shape \(2, 6\)",
        ),
        (
            lambda m: m.set_head(1, 0, o=np.zeros((2, 6))),
            r"head 0 o block must have shape \(6, 2\)",
        ),
        (lambda m: m.attention(2), r"layer must be in \[0, 2\) for this 2-layer model \(got 2\)"),
        (lambda m: m.attention(-3), r"layer must be in \[0, 2\)"),
        (lambda m: m.attention(True), r"layer must be in"),
        (lambda m: m.head_weights(0, 5), r"head index must be in \[0, 2\) \(got 5\)"),
        (lambda m: m.set_embedding(np.array([["a", "b"]] * 5)), r"weights must be numeric arrays"),
        (lambda m: m.parameter_name(torch.nn.Parameter(torch.zeros(1))), r"not a parameter"),
    ],
)
def test_wrong_shapes_and_missing_parts_raise_config_error(call, needle):
    m = _model()
    before = _snapshot(m)
    with pytest.raises(ConfigError, match=needle):
        call(m)
    assert all(torch.equal(p, before[n]) for n, p in _snapshot(m).items())  # nothing written


@pytest.mark.parametrize(
    "call,needle",
    [
        (lambda m: m.set_cls(np.zeros(6)), r"no CLS token \(readout='tokens'\)"),
        (lambda m: m.set_positions(np.zeros((4, 6))), r"no learned positions \(positions='none'\)"),
        (lambda m: m.set_readout(bias=np.zeros(2)), r"the read-out linear 0 has no bias"),
    ],
)
def test_absent_parts_are_named(call, needle):
    m = Transformer(
        ModelConfig(
            d_in=D_IN,
            width=E,
            readout="tokens",
            head_bias=False,
            d_out=2,
            layers=[LayerSpec(heads=1, head_dim=2)],
        )
    )
    with pytest.raises(ConfigError, match=needle):
        call(m)
    with pytest.raises(ConfigError, match=r"layer 0's FFN is gated \(ffn_kind=bilinear\)"):
        _gated().set_ffn(0, np.zeros((4, E)))


def test_getters_name_the_parts():
    m = _model()
    params = dict(m.named_parameters())
    assert m.attention(1) is m.block(-1).attn
    assert m.attention(0).q.weight is params["layers.0.attn.q.weight"]
    assert m.feed_forward(0).mlp[2].weight is params["layers.0.ffn.mlp.2.weight"]
    assert m.embedding_linear(1).weight is params["embed.2.weight"]
    assert m.readout_linear(0).bias is params["head.0.bias"]
    assert m.parameter_name(m.attention(1).k.weight) == "layers.1.attn.k.weight"
    assert list(m.attention_parameters(1)) == [
        "layers.1.attn.q.weight",
        "layers.1.attn.k.weight",
        "layers.1.attn.v.weight",
        "layers.1.attn.o.weight",
    ]
    assert m.count_params(["attn"], layer=1) == 4 * 6 * 6
    assert m.count_params(["ffn"], layer=0) == 7 * 6 + 7 + 6 * 7 + 6
    assert m.count_params(layer=1) == 4 * 36
    assert m.count_params(["ffn"], layer=1) == 0
    # head_weights: copies of the head's blocks (GQA: the group's KV head)
    g = Transformer(
        ModelConfig(d_in=2, width=4, d_out=1, layers=[LayerSpec(heads=4, head_dim=2, kv_groups=2)])
    )
    g.set_head(0, 3, q=_val((2, 4), 1), k=_val((2, 4), 2), v=_val((2, 4), 3), o=_val((4, 2), 4))
    hw = g.head_weights(0, 3)
    assert torch.equal(hw.q, torch.as_tensor(_val((2, 4), 1)))
    assert torch.equal(hw.k, g.attention(0).k.weight[2:4])  # head 3 is in group 1
    assert torch.equal(hw.o, g.attention(0).o.weight[:, 6:8])
    hw.q.zero_()  # a copy
    assert torch.equal(g.head_weights(0, 3).q, torch.as_tensor(_val((2, 4), 1)))


# ------------------------------------------------------------------------ the residual layout
def test_layout_blocks_in_keyword_order():
    lay = ResidualLayout(value=1, score=1, cls=1, pos=5)
    assert lay.width == 8 and lay.names == ("value", "score", "cls", "pos")
    assert lay["pos"] == slice(3, 8) and lay.index("score") == 1 and lay.index("pos", 4) == 7
    assert lay.size("pos") == 5 and "cls" in lay and "nope" not in lay
    assert lay.vector(score=2.0, pos=[1, 2, 3, 4, 5]).tolist() == [0, 2, 0, 1, 2, 3, 4, 5]
    q = np.zeros((1, lay.width))
    q[0, lay.index("score")] = 7.0
    assert q.tolist() == [[0, 7, 0, 0, 0, 0, 0, 0]]
    sub = ResidualLayout(x=2, r=(3, 2), u=3, one=1)
    assert sub.width == 12 and sub["r"] == slice(2, 8) and sub.block("r", 2) == slice(6, 8)
    assert sub.grid("r").tolist() == [[2, 3], [4, 5], [6, 7]] and sub.count("r") == 3
    assert sub.index("u", 2) == 10 and sub.block("u", 1) == slice(9, 10)
    il = ResidualLayout.interleaved(3, value=1, gate=2)
    assert il.width == 9 and il["value"] == slice(0, 7, 3)
    assert il.indices("gate").tolist() == [1, 2, 4, 5, 7, 8] and il.block("gate", 1) == slice(4, 6)
    assert il.index("gate", 3) == 5
    assert "width=9" in repr(il) and "r=(3, 2)" in repr(sub)


@pytest.mark.parametrize(
    "call,needle",
    [
        (
            lambda: ResidualLayout(score=1)["scor"],
            r"no block 'scor' in this layout; did you mean "
            r"score\? \(blocks: score\)",
        ),
        (
            lambda: ResidualLayout(pos=3).index("pos", 3),
            r"block pos has 3 coordinates: index must be "
            r"in \[0, 3\) \(got 3\)",
        ),
        (lambda: ResidualLayout(score=1).index("score", -1), r"index must be in \[0, 1\)"),
        (lambda: ResidualLayout(r=(2, 3)).block("r", 2), r"block r has 2 sub-blocks"),
        (lambda: ResidualLayout(x=-1), r"block x must have a size >= 0"),
        (lambda: ResidualLayout(x=1.5), r"block x must have a size >= 0"),
        (lambda: ResidualLayout(x=(1, 2, 3)), r"block x must have a size"),
        (
            lambda: ResidualLayout.interleaved(2, x=(1, 2)),
            r"interleaved block x must have a single",
        ),
        (lambda: ResidualLayout.interleaved(-1, x=1), r"count must be an integer >= 0"),
    ],
)
def test_layout_errors(call, needle):
    with pytest.raises(ConfigError, match=needle):
        call()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(st.integers(0, 4), st.tuples(st.integers(0, 3), st.integers(0, 3))),
        min_size=1,
        max_size=5,
    ),
    st.integers(0, 3),
    st.booleans(),
)
def test_layout_blocks_partition_the_coordinates(sizes, count, interleave):
    """Every coordinate 0..width-1 belongs to exactly one block, and a block's slice, indices,
    grid and sub-blocks agree."""
    if interleave:
        sizes = [s if isinstance(s, int) else s[0] for s in sizes]
        lay = ResidualLayout.interleaved(count, **{f"b{i}": s for i, s in enumerate(sizes)})
        assert lay.width == count * sum(sizes)
    else:
        lay = ResidualLayout(**{f"b{i}": s for i, s in enumerate(sizes)})
        assert lay.width == sum(s if isinstance(s, int) else s[0] * s[1] for s in sizes)
    seen = np.concatenate([lay.indices(n) for n in lay.names] + [np.zeros(0, int)])
    assert sorted(seen.tolist()) == list(range(lay.width))
    ar = np.arange(lay.width)
    for n in lay.names:
        assert ar[lay[n]].tolist() == lay.indices(n).tolist()
        grid = lay.grid(n)
        assert grid.reshape(-1).tolist() == lay.indices(n).tolist()
        for i in range(grid.shape[0]):
            assert ar[lay.block(n, i)].tolist() == grid[i].tolist()


# ------------------------------------------------------- no positional weight paths in the code
ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("approxtheory", "proofs_check", "experiments")
FORBIDDEN = [
    (
        re.compile(r"\.layers\["),
        "reaches into model.layers[...]: use model.attention(layer), "
        "model.block(layer), model.feed_forward(layer)",
    ),
    (
        re.compile(r"""[fbr]?["'](?:embed|head|layers|cls|pos)\.(?:\d|\{|[a-z])"""),
        "names a weight by its module path: use the model's named setters/getters",
    ),
    (
        re.compile(r"\.(?:embed|head|mlp)\[-?\d"),
        "indexes an MLP by module position: use embedding_linear / readout_linear / set_ffn",
    ),
    (re.compile(r"\.set_weights\("), "set_weights takes module paths: use the named setters"),
]


#: files that must name module paths of *another* library's models, each with its reason
FOREIGN_LAYOUTS = {
    # the exporter writes state dicts in the target's own key names (TransformerLens / Hugging
    # Face, and the `approxtheory` HF wrapper class whose keys are the saved model's), and reads
    # a config's LayerSpec list; its parity report checks every key it writes
    "approxtheory/interop.py": "writes the export target's state-dict keys",
    # of_module reads attention modules out of Hugging Face GPT-2 (model.h[i].attn) and Llama
    # (model.layers[i].self_attn) models: their layouts, not the project's
    "approxtheory/identifiability_modules.py": "reads Hugging Face models' own layouts",
}


def _sources():
    for top in SCANNED:
        for p in sorted((ROOT / top).rglob("*.py")):
            if ROOT / "approxtheory" / "model" in p.parents or "__pycache__" in p.parts:
                continue
            if str(p.relative_to(ROOT)) in FOREIGN_LAYOUTS:
                continue
            yield p


def test_foreign_layout_exemptions_exist():
    for rel in FOREIGN_LAYOUTS:
        assert (ROOT / rel).is_file(), f"{rel} is exempted but does not exist: drop it"


def scan(text: str) -> list[str]:
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for rx, why in FORBIDDEN:
            if rx.search(line):
                out.append(f"{lineno}: {why}: {line.strip()}")
    return out


def test_scan_catches_each_pattern():
    for bad in [
        "m.layers[0].attn.set_head(0, q=q)",
        'm.set_weights({"embed.0.weight": W})',
        'x = "head.2.bias"',
        "n.startswith(f'layers.{i}.attn.')",
        "m.head[0].weight",
        "c.model.embed[0].weight",
        "ffn.mlp[2].weight",
        "m.set_weights(d)",
    ]:
        assert scan(bad), bad
    for ok in [
        "m.attention(0).q.weight",
        "m.set_embedding(W, b)",
        "for blk in model.layers:",
        "self.head = MLP(...)",
        'res["pos"]',
        'layout.index("head", 1)',
    ]:
        assert not scan(ok), ok


def test_no_module_names_a_weight_by_its_position():
    found = [
        f"{p.relative_to(ROOT)}:{hit}"
        for p in _sources()
        for hit in scan(p.read_text(encoding="utf-8"))
    ]
    assert list(_sources()), "nothing scanned"
    assert not found, "positional model access:\n" + "\n".join(found)
