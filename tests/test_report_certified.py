"""The report shows found <= sup <= certified per cell: a record with bracketed
grid cells gets a small per-cell table (cell, found, certified, claimed, certified yes/no) at 4
significant digits in the markdown and the HTML report, and its verdict says "certified" where
every cell is; record text is escaped."""

from __future__ import annotations

import pytest
from _helpers import record

from approxtheory.report import (
    certified_counts,
    certified_line,
    certified_note,
    certified_rows,
    render_html,
    render_markdown,
)

META = {"profile": "quick", "seed": 0, "version": "0.1.0", "git": "abc1234", "wall_s": 1.5}
HOSTILE = "T=4 | <script>alert(1)</script>"


def _rec(claim, verdict="verified-numeric", certified=None):
    return record(claim, "1111.0001", verdict, certified=certified)


def _cert(ok2: bool, bracketed2: bool = True):
    table = [
        {
            "cell": "T=4, beta=100",
            "found": 0.0060354573951,
            "certified": 0.00603545739538,
            "claimed": 0.0699146454,
            "ok": True,
        },
        {
            "cell": "T=64, beta=100",
            "found": 0.0230712345,
            "certified": 0.3 if bracketed2 else None,
            "claimed": 0.1234567,
            "ok": ok2,
        },
    ]
    k = 1 + ok2
    gaps = (
        []
        if ok2 or not bracketed2
        else [{k_: table[1][k_] for k_ in ("cell", "found", "certified", "claimed")}]
    )
    return {
        "cells": k,
        "of": 2,
        "bracketed": 1 + bracketed2,
        "all": k == 2,
        "gaps": gaps,
        "table": table,
    }


def test_rows_at_four_digits_and_yes_no():
    rows = certified_rows(_rec("A", certified=_cert(False)))
    assert rows == [
        ("T=4, beta=100", "0.006035", "0.006035", "0.06991", "yes"),
        ("T=64, beta=100", "0.02307", "0.3", "0.1235", "no"),
    ]
    search = certified_rows(_rec("A", certified=_cert(False, bracketed2=False)))
    assert search[1][2] == "search only" and search[1][4] == "no"


def test_the_verdict_says_certified_only_when_every_cell_is():
    assert certified_note(_rec("A", certified=_cert(True))) == "certified"
    part = certified_note(_rec("A", certified=_cert(False)))
    assert part.startswith("certified in 1 of 2 cells") and "search-based only" in part
    # a refuted record is never "certified", whatever its brackets
    assert certified_note(_rec("A", "refuted", certified=_cert(True))) != "certified"
    assert certified_note(_rec("A")) == ""


@pytest.mark.parametrize("ok2", [True, False])
def test_markdown_table(ok2):
    md = render_markdown([_rec("HC-A", certified=_cert(ok2)), _rec("HC-B")], META)
    assert "## Certified brackets" in md
    assert "### HC-A: " in md and "### HC-B" not in md
    assert "| T=4, beta=100 | 0.006035 | 0.006035 | 0.06991 | yes |" in md
    assert f"| T=64, beta=100 | 0.02307 | 0.3 | 0.1235 | {'yes' if ok2 else 'no'} |" in md
    verdict_cell = "**verified-numeric** (certified)"
    assert (verdict_cell in md) == ok2


def test_no_section_without_brackets():
    md = render_markdown([_rec("HC-B")], META)
    assert "Certified brackets" not in md and "(certified)" not in md
    assert "figs cert" not in render_html([_rec("HC-B")], META)


def test_html_table_and_verdict_note_escaped():
    cert = _cert(False)
    cert["table"][0]["cell"] = HOSTILE
    page = render_html([_rec("HC-A", certified=cert)], META)
    assert '<table class="figs cert">' in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "<td class=v>0.02307</td><td class=v>0.3</td><td class=v>0.1235</td>" in page
    assert "<td class=v>no</td>" in page
    assert "<small>certified in 1 of 2 cells" in page
    full = render_html([_rec("HC-A", certified=_cert(True))], META)
    assert "<small>certified</small>" in full and "<td class=v>no</td>" not in full


def test_the_summary_counts_certified_and_search_based_verdicts():
    records = [
        _rec("A", certified=_cert(True)),  # every cell
        _rec("B", certified=_cert(False)),  # one of two
        _rec("C"),  # no sup-error search (an exact count, a fit)
        _rec("D", certified={**_cert(False), "cells": 0, "all": False}),  # bracket, none
        _rec("E", verdict="refuted", certified=_cert(True)),  # not a verified-numeric verdict
        _rec("F", certified={**_cert(False), "cells": 0, "all": False, "bracketed": 0}),  # search
    ]
    assert certified_counts(records) == {"certified": 1, "partly": 1, "search": 2, "other": 1}
    line = certified_line(records)
    assert line.startswith(
        "verified-numeric 5: 4 rest on a searched error over a domain (the sup error of a "
        "construction, or the least error over the heads of a floor), certified in every cell 1, "
        "in some cells 1, search-based only 2"
    )
    assert line.endswith(
        "1 are decided without a sup-error search (exact counts, symbolic comparisons, fits)"
    )
    assert line in render_markdown(records, META)
    assert line in render_html(records, META, {})
    assert certified_line([_rec("E", verdict="refuted")]) == ""
