"""The fix-task section of report.html: rendered, escaped, inert in a real (headless) browser.

Patch paths and reasons come from solvers, so the grades here carry hostile ones. The
browser is Debian's Chromium driven by Playwright (never ``playwright install``); without
a ``chromium`` on PATH the browser tests skip, as tests/report's do.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from reviewbench.tasks.grade_metrics import score_grades
from reviewbench.tasks.report import render_tasks_html, write_tasks_html

from .test_grade_metrics import GRADES, G

XSS_PATH = "<img src=x onerror=window.__xss=1>.py"
XSS_REASON = "patch rejected, not applied: line 3 </td></tr><script>window.__xss=2</script>"
XSS_CONDITION = '"><svg onload=window.__xss=3>'
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip

HOSTILE = [
    *GRADES,
    G("A", "t4", 0, resolved=True, overreach=[XSS_PATH]),
    G("A", "t4", 1, "rejected", files=0, reason=XSS_REASON),
    G(XSS_CONDITION, "t4", 0),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tasks-report")
    board = score_grades(HOSTILE, resamples=300)
    return write_tasks_html(HOSTILE, board, folder, folder / "report.html", folder / "tasks")


def test_section_holds_the_scoreboard_paired_table_and_one_tile_per_run(report):
    html = report.read_text(encoding="utf-8")
    assert 'id="fix-tasks"' in html and "<h2>Fix tasks</h2>" in html
    # 4 tasks × 3 conditions × 3 repetitions (absent runs are 'no run' tiles)
    assert len(re.findall(r'<td class="tile [^"]*" title=', html)) == 4 * 3 * 3
    assert len(re.findall(r'<td class="tile fix-resolved', html)) == 4 + 1 + 1  # A: 4 + t4; B: 1
    assert "0.455" in html and "5/11" in html  # A resolves 5 of 11 scored runs
    assert "A − B" in html and "0.25" in html  # McNemar p of A vs B on the shared runs


def test_model_text_is_escaped_and_no_script_is_present(report):
    html = report.read_text(encoding="utf-8")
    for hostile in (XSS_PATH, XSS_REASON, XSS_CONDITION):
        assert hostile not in html
    assert "&lt;img src=x onerror=window.__xss=1&gt;.py" in html
    assert "<script" not in html  # the page runs nothing
    assert "default-src 'none'" in html and "connect-src 'none'" in html
    markup = re.sub(r"(?s)<style>.*?</style>", "", html)
    assert not re.search(r"<(?:link|iframe|img|object|embed|base|svg)\b", markup)


def test_an_empty_grading_still_renders(tmp_path):
    html = render_tasks_html([], score_grades([], resamples=100), tmp_path)
    assert "No graded runs." in html


@pytest.fixture(scope="module")
def page(report):
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip(
            "chromium is not installed (apt-get install -y chromium; .ci/run installs it in CI)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log: dict[str, list] = {"console": [], "errors": [], "requests": []}
            page.on("console", lambda m: log["console"].append((m.type, m.text)))
            page.on("pageerror", lambda e: log["errors"].append(str(e)))
            page.on("request", lambda r: log["requests"].append(r.url))
            page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
            page.goto(report.as_uri())
            page.wait_for_load_state("load")
            yield page, log
        finally:
            browser.close()


def test_section_renders_in_the_browser_without_errors_or_requests(page, report):
    view, log = page
    assert [m for m in log["console"] if m[0] == "error"] == [] and log["errors"] == []
    assert log["requests"] == [report.as_uri()]
    assert view.locator("#fix-tasks table#fix-scoreboard tbody tr").count() >= 4 + 3 + 2
    assert view.locator("#fix-tiles td.tile").count() == 36
    assert view.locator("#fix-paired tbody tr").count() == 3  # three conditions: three pairs


def test_injected_model_text_is_inert_and_shown_as_text(page):
    view, _ = page
    assert view.evaluate("() => window.__xss") is None
    assert (
        view.evaluate(
            "() => document.querySelectorAll('img, svg, script, [onerror], [onload]').length"
        )
        == 0
    )
    notable = view.inner_text("#fix-notable")
    assert XSS_PATH in notable and "<script>window.__xss=2</script>" in notable
    assert XSS_CONDITION in view.inner_text("#fix-scoreboard thead")
    tip = view.locator("#fix-tiles td.tile.overreach").first.get_attribute("title")
    assert "overreach: 1 file(s): " in tip
