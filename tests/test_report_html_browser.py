"""report.html in a real headless browser: Debian's Chromium driven by
Playwright's Python package (no browser download: ``executable_path`` is the system one). The
page loads from ``file://`` and from a localhost server with no console error and no request
outside its folder; the summary shows; the refuted claims are the first rows; each filter
(paper, verdict, scope), the search, the sort, the summary's counts and the permalinks change
the visible rows as they should; formulas are laid out as MathML; plots load and link the full
image; no record text runs as script.

Slow (a browser start, a small verify run); skipped with the reason when Chromium or Playwright
is absent. Install: ``apt-get install -y chromium`` and ``pip install playwright`` (never
``playwright install``)."""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import struct
import tempfile
import threading
import zlib
from functools import partial
from pathlib import Path

import pytest
from _helpers import record

import approxtheory as at
from approxtheory.cli import main
from approxtheory.io import read_json_entry
from approxtheory.report import formulas_of, render_html

pytestmark = pytest.mark.slow

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright's Python package is not installed"
)


def _chromium() -> str | None:
    for c in (os.environ.get("APPROXTHEORY_CHROMIUM"), "/usr/bin/chromium"):
        if c and os.access(c, os.X_OK):
            return c
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM = _chromium()
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'</"


def _png(w: int, h: int) -> bytes:
    """A grey ``w`` x ``h`` PNG (the plot a record links; its drawing is not tested here)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + b"\x80" * w for _ in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    """A real verify run of two quick claims, plus synthetic records of every finding kind
    (one with a real plot, one with hostile text) rendered into the same folder."""
    out = tmp_path_factory.mktemp("report_browser")
    assert main(["verify", "--only", "PR-N1", "HC-L8", "--out", str(out), "--quiet"]) == 0
    real = read_json_entry(out / "verdicts.json")
    (out / "data" / "X.csv").write_text("T,err\n4,0.25\n8,0.125\n", encoding="utf-8")
    (out / "plots" / "X.png").write_bytes(_png(400, 300))
    synthetic = [
        record("TO-V1", "2510.03784", "verified-numeric", "fine.", measured=0.5, slack=2.0),
        record(
            "TO-R1",
            "2510.03784",
            "refuted",
            "the bound fails in 3/9 cells; worst 0.75 against 0.000368.",
            scope="partial: a grid",
            measured=0.75,
            claimed=0.00036787944117144236,
            witness=[1.0, 0.0],
            slack=0.0004905059215619231,
            plots=["plots/X.png"],
            csv=["data/X.csv"],
        ),
        record(
            "IF-N1",
            "2605.17930",
            "not-checkable",
            "under-trained: best NMSE 0.31 above the gate.",
            scope="partial: trained",
        ),
        record("IF-I1", "2605.17930", "inconsistent", "slope outside.", scope="surrogate: x"),
        record("IF-R2", "2605.17930", "refuted", "second refutation zebra.", scope="full"),
        record("ID-H1", "2609.01231", "refuted", HOSTILE, statement=HOSTILE, scope=HOSTILE),
    ]
    records = real["verdicts"] + synthetic
    html_text = render_html(records, {**real["meta"], "wall_s": 1.0}, formulas_of(at.claims()))
    (out / "page.html").write_text(html_text, encoding="utf-8")
    return out, records


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS
        )
        try:
            yield ctx
        finally:
            ctx.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(report_dir):
    out, _ = report_dir
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(out)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def _open(browser, url: str):
    """The page loaded, with what it logged, threw, asked and requested; closed afterwards."""
    page = browser.new_page()
    try:
        seen: dict[str, list] = {"console": [], "errors": [], "dialogs": [], "requests": []}
        page.on("console", lambda m: seen["console"].append((m.type, m.text)))
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
        page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        page.on("request", lambda r: seen["requests"].append(r.url))
        page.goto(url, wait_until="load")
        page.wait_for_function("document.querySelector('#shown').textContent.length > 0")
        yield page, seen
    finally:
        page.close()


def _visible(page) -> list[str]:
    """The claims of the rows the browser renders, top to bottom."""
    return page.evaluate(
        """() => Array.from(document.querySelector('#claims').tBodies[0].rows)
            .filter((r) => r.checkVisibility())
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
            .map((r) => r.dataset.claim)"""
    )


def _attr(page, claim: str, name: str) -> str:
    return page.evaluate(
        "([c, n]) => Array.from(document.querySelector('#claims').tBodies[0].rows)"
        ".find((r) => r.dataset.claim === c).dataset[n]",
        [claim, name],
    )


def _quiet(seen, base: str):
    assert seen["errors"] == [], seen["errors"]
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == [], seen["console"]
    assert seen["dialogs"] == [], "record text ran as script"
    assert all(u.startswith(base) for u in seen["requests"]), seen["requests"]


def test_page_loads_quietly_from_a_file_and_shows_the_summary(browser, report_dir):
    out, records = report_dir
    with _open(browser, (out / "page.html").as_uri()) as (page, seen):
        _quiet(seen, out.as_uri())
        assert page.locator("#summary").is_visible() and page.locator("#findings").is_visible()
        papers = {r["paper"] for r in records}
        assert page.locator("#summary tr").count() == 1 + len(papers) + 1
        total = page.locator("#summary tr.all td").last.inner_text()
        assert total == str(len(records))
        assert (
            page.locator("#shown").inner_text() == f"{len(records)} of {len(records)} claims shown"
        )
        # the refuted claims are the first rows, then inconsistent, then not-checkable
        rows = _visible(page)
        nref = sum(r["verdict"] == "refuted" for r in records)
        assert [_attr(page, c, "verdict") for c in rows[:nref]] == ["refuted"] * nref
        assert _attr(page, rows[nref], "verdict") == "inconsistent"
        assert _attr(page, rows[nref + 1], "verdict") == "not-checkable"
        assert len(rows) == len(records)
        # the findings list links the same claims in the same order
        links = page.locator("#findings a").evaluate_all("(as) => as.map((a) => a.hash)")
        assert links == [f"#claim-{c}" for c in rows[: len(links)]]
        # no record text became markup: the hostile statement is shown as text
        assert page.locator("text=<script>alert(1)</script>").count() >= 1
        # the plot loaded, linking the full-size image
        img = page.locator("td.plots img").first
        assert img.evaluate("(i) => i.complete && i.naturalWidth > 300")
        href = page.locator("td.plots a").first.evaluate("(a) => a.href")
        assert href == (out / "plots" / "X.png").as_uri()


def test_filters_search_sort_and_permalinks_change_the_visible_rows(browser, server, report_dir):
    _, records = report_dir
    with _open(browser, f"{server}/page.html") as (page, seen):
        _quiet(seen, server)
        every = _visible(page)

        def expect(**want):
            keep = [
                r["claim"]
                for r in records
                if all(_attr(page, r["claim"], k) == v for k, v in want.items())
            ]
            assert sorted(_visible(page)) == sorted(keep) and keep, want
            assert page.locator("#shown").inner_text().startswith(f"{len(keep)} of ")

        page.select_option("#f-paper", "2605.17930")
        expect(paper="2605.17930")
        page.select_option("#f-verdict", "refuted")
        expect(paper="2605.17930", verdict="refuted")
        page.select_option("#f-paper", "")
        expect(verdict="refuted")
        page.select_option("#f-verdict", "")
        page.select_option("#f-scope", "surrogate")
        expect(scope="surrogate")
        page.select_option("#f-scope", "partial")
        expect(scope="partial")
        page.click("#f-reset")
        assert _visible(page) == every
        # search: a claim id, a word of the evidence, a figure, nothing
        page.fill("#f-q", "to-r1")
        assert _visible(page) == ["TO-R1"]
        page.fill("#f-q", "zebra")
        assert _visible(page) == ["IF-R2"]
        page.fill("#f-q", "0.0003679")  # the claimed bound at four figures
        assert _visible(page) == ["TO-R1"]
        page.fill("#f-q", "no such words anywhere")
        assert _visible(page) == [] and page.locator("#shown").inner_text().startswith("0 of")
        page.fill("#f-q", "")
        assert _visible(page) == every
        # sort
        page.select_option("#f-sort", "claim")
        assert _visible(page) == sorted(every)
        page.select_option("#f-sort", "catalogue")
        assert _visible(page) == [r["claim"] for r in records]
        page.select_option("#f-sort", "slack")
        slacks = [_attr(page, c, "slack") for c in _visible(page)]
        known = [float(x) for x in slacks if x]
        assert known == sorted(known) and len(known) >= 2
        assert slacks == [x for x in slacks if x] + [""] * slacks.count("")  # none: last
        page.select_option("#f-sort", "findings")
        assert _visible(page) == every
        # a count of the summary filters to its cell
        page.click('#summary button.cnt[data-paper="2510.03784"][data-verdict="refuted"]')
        assert _visible(page) == ["TO-R1"]
        # a permalink to a hidden row shows it again
        page.evaluate("() => { location.hash = '#claim-PR-N1'; }")
        page.wait_for_function("location.hash === '#claim-PR-N1'")
        page.wait_for_function(
            "document.getElementById('claim-PR-N1').checkVisibility()", timeout=5000
        )
        assert _visible(page) == every
        _quiet(seen, server)
    # a permalink opened directly lands on its row
    with _open(browser, f"{server}/page.html#claim-IF-N1") as (page, seen):
        assert page.evaluate("document.querySelector(':target').dataset.claim") == "IF-N1"
        _quiet(seen, server)


def test_formulas_are_laid_out_as_mathml(browser, report_dir):
    out, _ = report_dir
    with _open(browser, (out / "page.html").as_uri()) as (page, seen):
        n = page.locator("math").count()
        assert n > 0
        # a fraction is set as one: the numerator above the denominator (native MathML layout,
        # not text in a line)
        stacked = page.evaluate(
            """() => Array.from(document.querySelectorAll('mfrac')).slice(0, 20).map((f) => {
                const [a, b] = f.children;
                return a.getBoundingClientRect().bottom <= b.getBoundingClientRect().top + 1;
            })"""
        )
        assert stacked and all(stacked)
        _quiet(seen, out.as_uri())


def test_the_verify_report_itself_loads(browser, report_dir):
    """The report.html ``verify`` wrote (whatever formulas verify passes) loads quietly."""
    out, _ = report_dir
    assert Path(out / "report.html").exists()
    with _open(browser, (out / "report.html").as_uri()) as (page, seen):
        _quiet(seen, out.as_uri())
        assert page.locator("#claims").is_visible()
        assert sorted(_visible(page)) == ["HC-L8", "PR-N1"]


@pytest.mark.parametrize("width", [1024, 1280])
def test_header_cells_fit_and_formula_cells_do_not_scroll(browser, report_dir, width):
    out, _ = report_dir
    with _open(browser, (out / "page.html").as_uri()) as (page, seen):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)  # the resize handler refits the formulas
        _quiet(seen, out.as_uri())
        # each header's text fits its cell ("provenance" once ran into "verdict"), and the
        # cells sit side by side without overlapping
        heads = page.evaluate(
            """() => Array.from(document.querySelectorAll('#claims > thead th')).map((t) => {
                const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.right, t.scrollWidth, t.clientWidth];
            })"""
        )
        assert [h[0].replace("\xad", "") for h in heads][:4] == [
            "claim",
            "statement",
            "provenance",
            "verdict",
        ]
        for text, _, _, sw, cw in heads:
            assert sw <= cw, (text, sw, cw)
        for a, b in zip(heads, heads[1:]):
            assert a[2] <= b[1] + 0.5, (a, b)
        # no formula is wider than its cell (PR-N1's parameter count is the longest): none
        # scrolls, none is cut
        wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('details.formulas div.f'))
                .filter((d) => d.checkVisibility() && d.scrollWidth > d.clientWidth)
                .map((d) => [d.closest('tr').dataset.claim, d.scrollWidth, d.clientWidth])"""
        )
        assert page.locator("details.formulas div.f").count() > 0
        assert wide == []


def test_a_plot_thumbnail_is_shown_three_times_larger_under_the_pointer(browser, report_dir):
    out, _ = report_dir
    with _open(browser, (out / "page.html").as_uri()) as (page, seen):
        page.set_viewport_size({"width": 1280, "height": 900})
        img = page.locator("td.plots img").first
        img.scroll_into_view_if_needed()
        small = img.bounding_box()
        img.hover()
        page.wait_for_timeout(50)
        big = img.bounding_box()
        # readable: three times the thumbnail (facet panels of a 3x3 plot), still on the page
        assert big["width"] >= 2.9 * small["width"], (small, big)
        assert big["x"] >= 0 and big["x"] + big["width"] <= 1280 + 1, big
        page.mouse.move(0, 0)
        page.wait_for_timeout(50)
        assert img.bounding_box()["width"] == pytest.approx(small["width"], abs=1)
