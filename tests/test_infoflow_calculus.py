"""The InfoFlow calculus (:mod:`approxtheory.infoflow`) on the digest's worked examples W1-W11.

Every expected value is copied by hand from ``shared/papers/infoflow.md`` §5.3 (the table) and
§7 item 9 ("W1 False, W2 True, W3 False, W4 True, W5 True, W6 True, W7 False, W8 False, W9 True,
W10 True, W11 False", and "alpha(W7) == 1"); nothing here is computed by the code under test.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp

from approxtheory.errors import ConfigError
from approxtheory.infoflow import (
    Arch,
    E,
    T,
    d,
    info_table,
    make_task,
    parse_heads,
    parse_task_args,
    predict_rate,
)


def _linear_in_T_with_positive_slope(e) -> bool:
    e = sp.sympify(e)
    return e.has(T) and sp.diff(e, T, 2) == 0 and bool(sp.diff(e, T).is_positive)


# ------------------------------------------------------------------- W1, W2 (TASK-GDR)


@pytest.mark.parametrize("D,h", [(1, 1), (2, 2), (3, 3), (2, 5)])
def test_W1_gdr_one_layer_enough_heads_is_T_independent(D, h):
    # W1: "1 layer, h >= D | D MPR heads, D decoupled items at CLS | T-independent (e.g.
    # eps^{-D} for Lipschitz F_0)"
    p = predict_rate(Arch((h,)), make_task("gdr", D=D))
    assert p.depends_on_T is False
    assert p.alpha == D
    assert not p.fallbacks
    assert sorted(pl.mode for pl in p.schedule) == ["MPR"] * D
    cls = p.info[1]["CLS"]
    assert len(cls) == D and not any(b.coupled for b in cls)  # D decoupled items at CLS


@pytest.mark.parametrize("D,h", [(2, 1), (3, 2), (4, 1)])
def test_W2_gdr_one_layer_too_few_heads_falls_back_to_GIA(D, h):
    # W2: "1 layer, h < D | one head must serve >= 2 argmaxes -> GIA | eps^{-cT}"
    p = predict_rate(Arch((h,)), make_task("gdr", D=D))
    assert p.depends_on_T is True
    assert len(p.fallbacks) == D - h
    assert p.dominant.mode == "GIA"
    assert _linear_in_T_with_positive_slope(p.dominant.exponent)
    assert any(b.coupled and b.size == T for b in p.info[1]["CLS"])


# ------------------------------------------------------------------- W3-W5 (TASK-PMAX)


@pytest.mark.parametrize("D,heads", [(1, (1, 1)), (2, (2, 2)), (3, (3, 3)), (2, (3, 4))])
def test_W3_pmax_two_layers_enough_heads_is_T_independent(D, heads):
    # W3: "2 layers, (h1,h2) >= (D,D) | layer 1: D pairwise MPRs per token; layer 2: D MPRs at
    # CLS | T-independent; eps^{-1} for D = 1"
    p = predict_rate(Arch(heads), make_task("pmax", D=D))
    assert p.depends_on_T is False
    assert not p.fallbacks
    assert sorted({pl.layer for pl in p.schedule if pl.query == "tokens"}) == [1]
    assert sorted({pl.layer for pl in p.schedule if pl.query == "cls"}) == [2]
    # eps^{-1} is the digest's (IF-T1) upper bound for D = 1: the prediction may not exceed it
    if D == 1:
        assert sp.simplify(p.alpha - 1).is_nonpositive


@pytest.mark.parametrize("D", [2, 3, 4])
@pytest.mark.parametrize("which", ["first", "second"])
def test_W4_pmax_one_head_short_in_either_layer_is_T_dependent(D, which):
    # W4: "(D-1, D) or (D, D-1) | one term loses its head in one layer -> GIA | T-dependent"
    heads = (D - 1, D) if which == "first" else (D, D - 1)
    p = predict_rate(Arch(heads), make_task("pmax", D=D))
    assert p.depends_on_T is True
    assert len(p.fallbacks) == 1 and p.dominant.mode == "GIA"


def test_W4_an_extra_layer_passes_information_on():
    # the issue: "Extra layers are allowed: they pass information on through the residual";
    # (D-1, D) plus a third layer has the slot the missing head took away
    assert predict_rate(Arch((1, 2, 1)), make_task("pmax", D=2)).depends_on_T is False


@pytest.mark.parametrize("D,h", [(1, 1), (1, 8), (2, 2), (3, 16)])
def test_W5_pmax_one_layer_any_heads_is_T_dependent(D, h):
    # W5: "1 layer, any h | pairwise scores unavailable -> GIA | T-dependent"
    p = predict_rate(Arch((h,)), make_task("pmax", D=D))
    assert p.depends_on_T is True
    assert p.dominant.mode == "GIA"


# ------------------------------------------------------------------- W6, W7 (TASK-KTH(2))


@pytest.mark.parametrize("heads", [1, 2, 5])
@pytest.mark.parametrize("pe", [False, True])
def test_W6_kth2_one_layer_exponent_linear_in_T(heads, pe):
    # W6: "1 layer | IF-T3 | exponent linear in T"
    p = predict_rate(Arch((heads,), pos_enc=pe), make_task("kth", k=2))
    assert p.depends_on_T is True
    assert _linear_in_T_with_positive_slope(p.dominant.exponent)


def test_W7_kth2_two_layers_one_head_each_with_PE_is_eps_minus_one():
    # W7: "2 layers (1,1) + PE | §4.1 | eps^{-1}"; §7 item 9: alpha(W7) == 1
    p = predict_rate(Arch((1, 1), pos_enc=True), make_task("kth", k=2))
    assert p.alpha == 1
    assert p.depends_on_T is False
    assert p.dominant.kind == "readout"
    assert [(pl.node, pl.layer, pl.head, pl.mode) for pl in p.schedule] == [
        ("max_other", 1, 1, "MPR"),
        ("top", 2, 1, "MPR"),
    ]


def test_W7_without_positional_encoding_the_self_exclusion_falls_back():
    # §4.1: "Without positional encoding, self-exclusion is impossible for a content-only score"
    p = predict_rate(Arch((1, 1)), make_task("kth", k=2))
    assert p.depends_on_T is True
    assert [f.node for f in p.fallbacks] == ["max_other"]
    assert "positional encoding" in p.fallbacks[0].reason


# ----------------------------------------------- TASK-KTH(k), k >= 3 (our chain)


@pytest.mark.parametrize("k", [3, 5])
def test_kth_k_at_least_3_needs_k_layers_with_PE(k):
    """Our program (not in the sources): CLS retrieves ranks 1..k one layer each, excluding
    the positions retrieved before (needs PE). Fewer layers or no PE: IF-T3's T-dependent cost;
    k layers of one head + PE: the Lipschitz read-out's ε^-1, like W7."""
    task = make_task("kth", k=k)
    assert "ours" in task.source
    # heads do not help: rank j needs rank j-1's position, so one layer of k heads is too shallow
    wide = (Arch((k,), pos_enc=True), Arch((k,) * (k - 1), pos_enc=True), Arch((4,) * 2))
    for arch in (Arch((1,), pos_enc=True), Arch((1,) * (k - 1), pos_enc=True), *wide):
        p = predict_rate(arch, task)
        assert p.depends_on_T and _linear_in_T_with_positive_slope(p.dominant.exponent), arch
    p = predict_rate(Arch((1,) * k, pos_enc=True), task)
    assert p.alpha == 1 and not p.depends_on_T and not p.fallbacks
    assert [(pl.layer, pl.head, pl.mode) for pl in p.schedule] == [
        (j, 1, "MPR") for j in range(1, k + 1)
    ]
    p = predict_rate(Arch((1,) * k), task)  # no PE: the exclusions fall back
    assert p.depends_on_T and "positional encoding" in p.fallbacks[0].reason
    assert predict_rate(Arch((1,) * (k + 2), pos_enc=True), task).alpha == 1  # extra layers pass


def _exclusion_chain(g, k, beta, M):
    """The k >= 3 program in numpy: CLS retrieves rank j by softmax(β g_s - M Σ_{i<j} w_i(s)),
    w_i the softmax weights (the retrieved one-hot positions, mixed) of the earlier ranks."""
    import numpy as np

    excl, m = np.zeros_like(g), None
    for _ in range(k):
        z = beta * g - M * excl
        w = np.exp(z - z.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        m, excl = (w * g).sum(-1), excl + w
    return m


def test_kth_chain_is_exact_off_ties_and_no_approximation_at_ties():
    """What the k >= 3 prediction may claim: the chain retrieves the k-th largest on inputs
    whose top scores are separated (error 0 at β = 1e4), but a tie leaves an O(1) error at every
    β and exclusion strength M, so the prediction carries the caveat (it claimed ε^-1 without
    one before)."""
    import numpy as np

    rng = np.random.default_rng(0)
    k, g = 3, rng.random((4000, 8))
    kth = -np.sort(-g, -1)[:, k - 1]
    top = -np.sort(-g, -1)[:, : k + 1]
    sep = (np.diff(-top, axis=-1) >= 0.05).all(-1)
    assert sep.sum() > 500
    assert np.abs(_exclusion_chain(g[sep], k, 1e4, 2e4) - kth[sep]).max() < 1e-6
    tied = g.copy()
    tied[:, 1] = tied[:, 0]
    tied_kth = -np.sort(-tied, -1)[:, k - 1]
    for beta in (1e2, 1e3, 1e4):
        for c in (0.5, 2.0, 10.0):
            err = np.abs(_exclusion_chain(tied, k, beta, c * beta) - tied_kth).max()
            assert err > 0.3, (beta, c, err)
    # the §4.1 program (k = 2: self-exclusion by the query's own position, min, max) has none
    m_other = np.stack([np.delete(tied, t, -1).max(-1) for t in range(8)], -1)
    v = np.minimum(tied, m_other)
    z = 1e4 * v
    w = np.exp(z - z.max(-1, keepdims=True))
    out = (w / w.sum(-1, keepdims=True) * v).sum(-1)
    assert np.abs(out - -np.sort(-tied, -1)[:, 1]).max() < 1e-3
    p = predict_rate(Arch((1,) * k, pos_enc=True), make_task("kth", k=k))
    assert not p.depends_on_T and "ties" in p.provenance["caveat"]
    two = predict_rate(Arch((1, 1), pos_enc=True), make_task("kth", k=2))
    assert "caveat" not in two.provenance


# ------------------------------------------------------------------- W8, W9 (TASK-IND)


def test_W8_induction_two_layers_with_PE_is_T_independent():
    # W8: "2 layers + PE | SPA(prev token) then MPR matching | T-independent"
    p = predict_rate(Arch((1, 1), pos_enc=True), make_task("ind"))
    assert p.depends_on_T is False
    assert [(pl.layer, pl.mode) for pl in p.schedule] == [(1, "SPA"), (2, "MPR")]


@pytest.mark.parametrize("heads", [1, 3])
def test_W9_induction_one_layer_is_T_dependent(heads):
    # W9: "1 layer | GIA | T-dependent"
    p = predict_rate(Arch((heads,), pos_enc=True), make_task("ind"))
    assert p.depends_on_T is True
    assert p.dominant.mode == "GIA"


# ------------------------------------------------------------------- W10 (TASK-TRI)


@pytest.mark.parametrize("heads", [(2, 2), (4, 4), (16, 16)])
@pytest.mark.parametrize("width", [24, 48])
def test_W10_triangle_center_is_T_dependent_for_any_fixed_size(heads, width):
    # W10: "2 layers, any fixed (h,E) | order-3, non-separable -> GIA | T-dependent"
    p = predict_rate(Arch(heads, pos_enc=True, E=width), make_task("tri"))
    assert p.depends_on_T is True
    assert p.dominant.mode == "GIA" and p.dominant.node == "inner"


# ------------------------------------------------------------------- W11 (TASK-SPA)


def test_W11_specific_positions_one_head_with_PE_is_cheap():
    # W11: "1 layer, 1 head + PE | SPA({1,2,3}); target linear in the average (x3) | cheap"
    p = predict_rate(Arch((1,), pos_enc=True), make_task("spa"))
    assert p.depends_on_T is False
    assert p.alpha == 0
    assert [(pl.mode, pl.query) for pl in p.schedule] == [("SPA", "cls")]
    (blk,) = p.info[1]["CLS"]
    assert blk.items == "{1,2,3}" and blk.size == 3 and blk.coupled


# ------------------------------------------------------------------- the decode law


def test_decode_law_is_a_parameter_and_recorded():
    # digest §5.2: decode_law='dE' uses |I|*d/E (IF-T4), 'lipschitz' uses |I|*d
    task = make_task("kth", k=2)
    dE = predict_rate(Arch((1,)), task)
    lip = predict_rate(Arch((1,)), task, decode_law="lipschitz")
    assert dE.dominant.exponent == T * d / E
    assert lip.dominant.exponent == T * d
    assert dE.decode_law == "dE" and "IF-T4" in dE.provenance["decode_law"]
    assert "IF-R3" in lip.provenance["decode_law"]
    with pytest.raises(ConfigError, match="allowed: dE, lipschitz"):
        predict_rate(Arch((1,)), task, decode_law="quadratic")


def test_the_record_serialises():
    p = predict_rate(Arch((1, 1), pos_enc=True), make_task("kth", k=2))
    out = json.loads(json.dumps(p.to_dict()))
    assert out["alpha"] == "1" and out["depends_on_T"] is False
    assert out["dominant"]["kind"] == "readout"
    assert (2, "CLS", "s*_top(CLS)") in info_table(p)


# ------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: make_task("kthh"), "unknown task 'kthh'; did you mean kth"),
        (lambda: make_task("kth", k=65), "k must be an integer 1..64"),
        (lambda: make_task("kth", k=0), "k must be an integer 1..64"),
        (lambda: make_task("kth", k="x"), "k must be an integer"),
        (lambda: make_task("pmax", D=0), "D must be an integer 1..256"),
        (lambda: make_task("gdr", D=100_000), "D must be an integer 1..256"),
        (lambda: make_task("spa", p=10**8), "p must be an integer 1..1024"),
        (lambda: make_task("pmax", k=1), "allowed: D"),
        (lambda: parse_heads(""), "comma-separated"),
        (lambda: parse_heads("1,,2"), "comma-separated"),
        (lambda: parse_heads("1,a"), "not an integer"),
        (lambda: parse_heads("1,0"), ">= 1"),
        (lambda: parse_task_args(["k"]), "NAME=VALUE"),
        (lambda: Arch(()), "at least one layer"),
        (lambda: Arch((1, -1)), ">= 1"),
    ],
)
def test_bad_input_is_a_config_error_naming_the_choices(call, match):
    with pytest.raises(ConfigError, match=match):
        call()


# ------------------------------------------------------------------- the command line


def _cli(capsys, *argv):
    from approxtheory.cli import main

    rc = main(["infoflow", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_done_when_kth2(capsys):
    # --heads 1 reports an exponent that depends on T, --heads 1,1
    # --pos-enc one that does not, naming the dominant step in both
    rc, out, _ = _cli(
        capsys, "predict", "--task", "kth", "--task-arg", "k=2", "--heads", "1", "--json"
    )
    one = json.loads(out)
    assert rc == 0 and one["depends_on_T"] is True and "T" in one["alpha"]
    assert one["dominant"]["mode"] == "GIA" and one["dominant"]["describe"]
    rc, out, _ = _cli(
        capsys,
        "predict",
        "--task",
        "kth",
        "--task-arg",
        "k=2",
        "--heads",
        "1,1",
        "--pos-enc",
        "--json",
    )
    two = json.loads(out)
    assert rc == 0 and two["depends_on_T"] is False and two["alpha"] == "1"
    assert two["dominant"]["kind"] == "readout" and two["dominant"]["describe"]


def test_cli_kth3_shows_the_caveat_and_bad_task_args(capsys):
    """KTH(3)'s prediction names what it does not cover, as text and JSON; a repeated task
    argument and a non-ASCII or underscored integer are one line, exit 2 (both were taken
    silently: the last k won, '３' and '1_0' read as 3 and 10)."""
    argv = ["predict", "--task", "kth", "--task-arg", "k=3", "--heads", "1,1,1", "--pos-enc"]
    rc, out, _ = _cli(capsys, *argv)
    assert rc == 0 and "caveat:" in out and "ties" in out
    rc, out, _ = _cli(capsys, *argv, "--json")
    assert rc == 0 and "ties" in json.loads(out)["provenance"]["caveat"]
    for bad, needle in (
        (["--task-arg", "k=3", "--task-arg", "k=4"], "given twice"),
        (["--task-arg", "k=３"], "k must be an integer 1..64"),
        (["--task-arg", "k=1_0"], "k must be an integer 1..64"),
    ):
        rc, out, err = _cli(capsys, "predict", "--task", "kth", *bad, "--heads", "1")
        assert rc == 2 and err.count("\n") == 1 and needle in err, (bad, err)


def test_cli_text_tasks_and_draw(capsys, tmp_path):
    rc, out, _ = _cli(
        capsys, "predict", "--task", "pmax", "--task-arg", "D=2", "--heads", "2,1", "--T", "64"
    )
    assert rc == 0 and "depends on T:  yes" in out and "64*d/E" in out and "fallbacks:" in out
    rc, out, _ = _cli(capsys, "tasks")
    assert rc == 0 and all(t in out for t in ("gdr", "pmax", "kth", "ind", "tri", "spa"))
    fig = tmp_path / "f.png"
    rc, out, _ = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(fig))
    assert rc == 0 and fig.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--task", "foo", "--heads", "1"], "allowed: gdr, pmax, kth, ind, tri, spa"),
        (["--task", "kth", "--heads", ""], "allowed: integers >= 1"),
        (["--task", "kth", "--heads", "1,"], "allowed: integers >= 1"),
        (["--task", "kth", "--heads", "0"], "a head count must be >= 1"),
        (["--task", "kth", "--task-arg", "k=65", "--heads", "1"], "k must be an integer 1..64"),
        (["--task", "kth", "--task-arg", "n=3", "--heads", "1"], "allowed: k"),
    ],
)
def test_cli_bad_input_one_line_exit_2(capsys, argv, needle):
    rc, out, err = _cli(capsys, "predict", *argv)
    assert rc == 2 and out == "" and needle in err and err.count("\n") == 1


# ------------------------------------------------------------------- the scheduler


def _full_schedule_exists(task, heads) -> bool:
    """Brute force, independent of the scheduler: is there an assignment of every node to a
    layer, each input in an earlier layer, at most heads[l] nodes in layer l?"""
    import itertools

    names = [n.name for n in task.nodes]
    for layers in itertools.product(range(1, len(heads) + 1), repeat=len(names)):
        at = dict(zip(names, layers))
        if all(at[i] < at[n.name] for n in task.nodes for i in n.inputs) and all(
            layers.count(l + 1) <= h for l, h in enumerate(heads)
        ):
            return True
    return False


def _archs():
    import itertools

    for L in (1, 2, 3):
        yield from itertools.product((1, 2, 3), repeat=L)


@pytest.mark.parametrize(
    "task",
    [
        make_task("gdr", D=2),
        make_task("gdr", D=3),
        make_task("pmax", D=1),
        make_task("pmax", D=2),
        make_task("pmax", D=3),
        make_task("kth", k=2),
        make_task("ind"),
    ],
    ids=lambda t: f"{t.name}{dict(t.args)}",
)
def test_the_scheduler_finds_a_full_schedule_exactly_when_one_exists(task):
    """With positional encoding every node of these programs is realisable by one head, so a
    T-independent prediction must coincide with the existence of a full schedule."""
    for heads in _archs():
        p = predict_rate(Arch(heads, pos_enc=True), task)
        assert (not p.fallbacks) == _full_schedule_exists(task, heads), heads
        assert p.depends_on_T == bool(p.fallbacks), heads


# ------------------------------------------------------------------- values, files


def test_alpha_at_takes_positive_integers_and_parses_strings():
    p = predict_rate(Arch((1,)), make_task("kth", k=2))
    assert p.alpha_at(T=64) == sp.Max(1, 64 * d / E)
    assert p.alpha_at(T="64", d=sp.Integer(2), E="8") == 16
    assert p.alpha_at() == p.alpha


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"T": -5}, "T must be a positive integer"),
        ({"T": 0}, "T must be a positive integer"),
        ({"T": 2.5}, "T must be a positive integer"),
        ({"T": "-5"}, "T must be a positive integer"),
        ({"d": "1/2"}, "d must be a positive integer"),
        ({"E": float("nan")}, "E must be a number"),
        ({"T": True}, "booleans are not numbers"),
        ({"T": sp.Symbol("x")}, "T must be a positive integer"),
        ({"T": "1+"}, "T must be a real number"),
    ],
)
def test_alpha_at_refuses_values_outside_the_symbols_domain(kw, match):
    from approxtheory.errors import InvalidValueError

    p = predict_rate(Arch((1,)), make_task("kth", k=2))
    with pytest.raises(InvalidValueError, match=match):
        p.alpha_at(**kw)


def test_alpha_at_refuses_an_unknown_symbol_naming_the_allowed_ones():
    from approxtheory.errors import UnknownSymbolError

    p = predict_rate(Arch((1,)), make_task("kth", k=2))
    with pytest.raises(UnknownSymbolError, match=r"no symbol 'Q'; allowed: T, d, E"):
        p.alpha_at(Q=3)
    with pytest.raises(UnknownSymbolError, match="did you mean T"):
        p.alpha_at(t=3)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"E": 0}, "E must be a positive integer"),
        ({"E": -3}, "E must be a positive integer"),
        ({"d": 0.5}, "d must be a positive integer"),
        ({"d": "x"}, "d must be a real number"),
        ({"E": None}, "E must be a number"),
        ({"E": sp.Symbol("E")}, "or the catalogue symbol"),  # not the catalogue's E
        ({"d": 2 * E}, "or the catalogue symbol"),
    ],
)
def test_arch_refuses_widths_that_are_not_positive_integers(kw, match):
    from approxtheory.errors import InvalidValueError

    with pytest.raises(InvalidValueError, match=match):
        Arch((1,), **kw)


def test_arch_keeps_the_catalogue_symbols_and_takes_integer_strings():
    assert Arch((1,)).d is d and Arch((1,)).E is E
    a = Arch((1,), d="3", E=sp.Integer(24))
    assert a.d == 3 and a.E == 24
    assert predict_rate(a, make_task("kth", k=2)).alpha_at(T=8) == 1


def test_a_decode_law_returning_a_string_is_refused():
    from approxtheory.infoflow import DecodeLaw

    law = DecodeLaw("bad", lambda size, d_, E_: "T*d", "none", "none")
    with pytest.raises(ConfigError, match="not a string"):
        predict_rate(Arch((1,)), make_task("kth", k=2), decode_law=law)


@pytest.mark.parametrize("out", ["x.qqq", "fig.png.bak", "a.txt"])
def test_cli_draw_refuses_an_unknown_extension_one_line(capsys, tmp_path, out):
    target = tmp_path / out
    rc, stdout, err = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(target))
    assert rc == 2 and stdout == "" and err.count("\n") == 1, err
    assert "allowed: .png, .pdf, .svg" in err and not target.exists()


def test_cli_draw_writes_exactly_the_file_it_reports(capsys, tmp_path):
    noext = tmp_path / "noext"
    rc, out, _ = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(noext))
    assert rc == 0 and out.strip() == f"wrote {noext}"
    assert noext.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "noext.png").exists()
    pdf = tmp_path / "f.PDF"
    rc, out, _ = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(pdf))
    assert rc == 0 and pdf.read_bytes()[:5] == b"%PDF-"
    svg = tmp_path / "sub" / "f.svg"
    rc, out, _ = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(svg))
    assert rc == 0 and b"<svg" in svg.read_bytes()
    # nothing but the figures: no temporary file left behind
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "f.PDF",
        "f.svg",
        "noext",
    ]


def test_cli_draw_is_atomic_a_failed_write_keeps_the_old_file(capsys, tmp_path, monkeypatch):
    """A write that fails half-way (a full disk) leaves the old figure, never a truncated one,
    and no temporary file; the CLI reports it as one line, exit 2."""
    import errno

    fig = tmp_path / "f.png"
    fig.write_bytes(b"old figure")

    def full_disk(fd):  # the data is flushed to the temporary file, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    # an atomic write syncs its temporary file before renaming it over the target; a direct
    # savefig(path) never calls fsync, so it would not fail here and the test would go red
    monkeypatch.setattr("os.fsync", full_disk)
    rc, out, err = _cli(capsys, "draw", "--task", "kth", "--heads", "1", "--out", str(fig))
    monkeypatch.undo()
    assert rc == 2 and err.count("\n") == 1 and "No space left" in err, err
    assert fig.read_bytes() == b"old figure"
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]
