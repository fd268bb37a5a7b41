"""report.html: self-contained, escaped, and working in a real (headless) browser.

The browser tests drive Debian's Chromium through Playwright (never ``playwright install``,
which downloads browsers). They skip only when no ``chromium`` is installed, so a developer
without it can still run the suite; ``.ci/run`` installs it, so CI always runs them.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from reviewbench.report import ReportOptions, build_report, render_html, write_html
from reviewbench.report.html import script_json

from .conftest import (
    ANALYSED_DEFECTS,
    CONDITIONS,
    REPS,
    XSS_ERROR,
    XSS_IMG,
    XSS_MODEL,
    XSS_PATH,
    XSS_SCRIPT,
)

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
TILES = ANALYSED_DEFECTS * len(CONDITIONS) * REPS


@pytest.fixture(scope="module")
def report(rundir) -> Path:
    return write_html(build_report(rundir, ReportOptions(bootstrap=200)), rundir / "report.html")


def test_script_json_cannot_close_its_element():
    text = script_json({"claim": "</script><script>alert(1)</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert text == '{"claim":"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}'


def test_model_text_is_escaped_in_the_file(report):
    html = report.read_text(encoding="utf-8")
    for hostile in (XSS_SCRIPT, XSS_IMG, XSS_MODEL, XSS_ERROR, XSS_PATH):
        assert hostile not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;window.__xss=2&#34;&gt;" in html
    # Only the report's own scripts: each carries the CSP nonce, bar the inert JSON block.
    scripts = re.findall(r"<script\b[^>]*>", html)
    nonce = re.search(r"'nonce-([^']+)'", html).group(1)
    assert scripts == ['<script type="application/json" id="chart-specs">',
                       f'<script nonce="{nonce}">', f'<script nonce="{nonce}">']  # fmt: skip


def test_the_file_is_self_contained(report):
    html = report.read_text(encoding="utf-8")
    markup = re.sub(r"(?s)(<script\b[^>]*>).*?</script>", r"\1</script>", html)  # the page outside scripts
    assert not re.search(r"""<(?:link|iframe|img|object|embed|base)\b""", markup)
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", markup)
    assert "<script src" not in html
    assert "connect-src 'none'" in html and "default-src 'none'" in html
    assert "window.vegaEmbed=" in html  # the chart runtime is inlined
    assert len(html.encode()) < 3_000_000


def test_tile_map_has_one_cell_per_defect_condition_repetition(report):
    html = report.read_text(encoding="utf-8")
    assert len(re.findall(r'<td class="tile (?:found|located|missed|incomplete|not_run)"', html)) == TILES


def test_a_run_directory_is_accepted_directly(rundir, tmp_path):
    # What `reviewbench demo` calls: write_html(rundir, target) with the default options.
    out = write_html(rundir, tmp_path / "nested" / "r.html")
    assert out.is_file() and "Tile map" in out.read_text(encoding="utf-8")


def test_an_empty_run_store_still_renders(tmp_path):
    from reviewbench.store.runs import RunStore

    from .conftest import write_corpus, write_runs

    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))
    store = RunStore(rundir / "runs.sqlite", create=True)  # writable: read-only is the default
    store.db.execute("DELETE FROM runs")
    store.close()
    html = render_html(build_report(rundir, ReportOptions(bootstrap=200)))
    assert "No conditions to decide on." in html and "no runs recorded" in html


# -- in the browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it in CI)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def page_log(browser, report):
    """The report opened once, with every console message, page error and request recorded."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log = {"console": [], "errors": [], "requests": []}
    page.on("console", lambda m: log["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("request", lambda r: log["requests"].append(r.url))
    # Anything but the file itself is refused, so a regression cannot reach the network.
    page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
    page.goto(report.as_uri())
    page.wait_for_selector("body[data-ready]", timeout=60_000)
    yield page, log
    page.close()


def test_loads_without_errors_or_network(page_log, report):
    page, log = page_log
    assert page.get_attribute("body", "data-ready") == "1"  # every chart rendered
    assert [m for m in log["console"] if m[0] == "error"] == [] and log["errors"] == []
    assert log["requests"] == [report.as_uri()]


def test_injected_markup_does_not_run(page_log):
    page, _ = page_log
    assert page.evaluate("() => window.__xss") is None
    assert page.evaluate("() => document.querySelectorAll('img, [onerror], [onload]').length") == 0
    assert XSS_MODEL in page.inner_text("#decision")  # shown, as text


def test_tile_map_in_the_browser(page_log):
    page, _ = page_log
    assert page.locator("table.tilemap td.tile").count() == TILES
    # case-a1, condition A, repetition 0: at the gold lines, but the claim does not name the defect.
    first = page.locator("table.tilemap td.tile.located").first
    first.hover()
    detail = page.text_content("#tile-detail")
    assert "case case-a1" in detail and "gold: app/core.py:10-12" in detail
    assert f"LOCATED, not identified (a label would settle it): app/core.py:11 [high] {XSS_SCRIPT}" in detail
    assert page.evaluate("() => window.__xss") is None


def test_charts_render_and_a_screenshot_is_written(page_log, tmp_path_factory):
    page, _ = page_log
    for chart in ("chart-scoreboard", "chart-fp", "chart-paired-0", "chart-latency"):
        assert page.locator(f"#{chart} svg").count() >= 1, chart
    folder = os.environ.get("REVIEWBENCH_TEST_ARTIFACTS")  # CI or a developer may keep it
    target = (Path(folder) if folder else tmp_path_factory.mktemp("artifacts")) / "report.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target), full_page=True)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 50_000
    print(f"screenshot: {target}")


# -- issue 27, item 12 ------------------------------------------------------------------------


def test_the_reproduce_command_writes_the_file_that_is_open(rundir, tmp_path):
    # Regression: the footer said 'reviewbench report RUNDIR', which writes RUNDIR/report.html.
    elsewhere = write_html(build_report(rundir, ReportOptions(bootstrap=200)), tmp_path / "out dir" / "r.html")
    footer = elsewhere.read_text().split("<footer", 1)[1]
    assert f"reviewbench report {rundir} --html &#39;{elsewhere}&#39;" in footer


def test_one_colour_per_condition_in_every_chart(rundir):
    from reviewbench.report.charts import chart_specs, condition_colours

    data = build_report(rundir, ReportOptions(bootstrap=200))
    colours = condition_colours(data)
    assert len(set(colours.values())) == len(CONDITIONS)
    specs = chart_specs(data)

    def scales(node):
        if isinstance(node, dict):
            if "domain" in node and "range" in node:
                yield dict(zip(node["domain"], node["range"], strict=False))
            for value in node.values():
                yield from scales(value)
        elif isinstance(node, list):
            for value in node:
                yield from scales(value)

    seen = [m for spec in specs.values() for m in scales(spec)]
    assert seen, "every condition scale names its colours"
    for mapping in seen:
        for key, colour in mapping.items():
            name = key.removesuffix(" higher")  # the paired charts: the better condition's colour
            if name in colours:
                assert colour == colours[name], (key, colour)


def test_later_sections_are_in_the_navigation(rundir):
    html = render_html(build_report(rundir, ReportOptions(bootstrap=200)),
                       '<section id="labels">\n  <h2>Human labels</h2>\n</section>')  # fmt: skip
    nav = html.split("<nav>", 1)[1].split("</nav>", 1)[0]
    assert '<a href="#labels">Human labels</a>' in nav


def test_a_tile_shows_its_details_on_keyboard_focus(page_log):
    page, _ = page_log
    tile = page.locator("table.tilemap td.tile.located").first
    assert tile.get_attribute("tabindex") == "0"
    page.evaluate("() => { document.getElementById('tile-detail').textContent = ''; }")
    tile.focus()
    assert "case case-a1" in page.text_content("#tile-detail")


# -- issue 27, item 2 -------------------------------------------------------------------------

#: Widths at which the report is read: a laptop and a phone.
DESKTOP, PHONE = 1400, 390


def measure_fit(browser, report: Path, width: int, shots: Path | None = None) -> dict:
    """Open ``report`` at ``width`` px: overflow of the scoreboard's box, and how far each
    paired chart reaches, against the viewport; a screenshot of each part into ``shots``."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(report.as_uri())
        page.wait_for_selector("body[data-ready]", timeout=60_000)
        fit = page.evaluate("""() => {
          const box = document.querySelector('#scoreboard .scroll');
          const charts = [...document.querySelectorAll('#chart-paired svg')];
          return {board: [box.scrollWidth, box.clientWidth],
                  charts: charts.map(svg => Math.ceil(svg.getBoundingClientRect().right)),
                  order: [...document.querySelectorAll('section[id]')].slice(0, 2).map(s => s.id)};
        }""")
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"report-{width}.png"))
            page.locator("#scoreboard .scroll").screenshot(path=str(shots / f"scoreboard-{width}.png"))
            page.locator("#paired").screenshot(path=str(shots / f"paired-{width}.png"))
        return fit
    finally:
        page.close()


def test_the_first_screen_is_the_headline_and_the_board_and_paired_charts_fit(browser, report, tmp_path_factory):
    folder = os.environ.get("REVIEWBENCH_TEST_ARTIFACTS")
    shots = Path(folder) if folder else tmp_path_factory.mktemp("fit")
    wide = measure_fit(browser, report, DESKTOP, shots)
    assert wide["order"] == ["summary", "decision"]  # the headline, then the decision cards
    board, box = wide["board"]
    assert board <= box, f"the scoreboard is {board} px wide in a {box} px box at {DESKTOP} px"
    narrow = measure_fit(browser, report, PHONE, shots)
    assert narrow["charts"] and max(narrow["charts"]) <= PHONE, narrow["charts"]


def test_the_headline_shows_what_score_prints_first(report):
    html = report.read_text(encoding="utf-8")
    head = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    assert "<th>decision</th><th>detection</th><th>false alarms</th><th>precision</th><th>completed</th>" in head
    assert "Paired, case by case" in head and "winner" not in head
