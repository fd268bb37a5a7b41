"""The labelling app in real headless Chromium (Playwright driving Debian's chromium).

The app runs under uvicorn on a loopback port (``serve``, in conftest), on a real run
directory and label store; every person opens the link with their token, as a rater would.
Skips only when no chromium is installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from reviewbench.label import LabelStore, Role, import_labels
from reviewbench.label.app import AppOptions

from .conftest import CONDITIONS, MODEL, PROMPT_SHA, run_id

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium") or ("/usr/bin/chromium" if shutil.os.path.exists("/usr/bin/chromium") else None)
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it in CI)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.log = {"errors": [], "requests": []}
    page.on("pageerror", lambda e: page.log["errors"].append(str(e)))
    page.on("request", lambda r: page.log["requests"].append(r.url))
    yield page
    context.close()


def claim_count(page) -> int:
    return page.locator("article.claim").count()


def label_packet_with_keys(page, first_keys: list[str]) -> None:
    """The first claim with ``first_keys``, every other as a false positive; then Enter."""
    for key in first_keys:
        page.keyboard.press(key)
    for _ in range(claim_count(page) - 1):
        page.keyboard.press("j")
        page.keyboard.press("f")
    page.keyboard.press("Enter")


def invite(rundir, name: str, role: Role = Role.RATER) -> str:
    with LabelStore(rundir) as store:
        return store.invite(name, role)


def test_a_rater_labels_every_packet_with_the_keyboard_only(rundir, serve, page):
    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={invite(rundir, 'ann')}")  # the link: the cookie is set, then on to her packets
    pages = 0
    while page.locator("#done").count() == 0:
        page.wait_for_selector("article.claim.current")  # the script has run: keys are heard
        assert page.locator("article.claim.current").count() == 1
        # true finding → defect 1 (or valid incidental on the clean case), five answers: y y n y y
        links = ["1"] if page.locator("#defects li").count() else ["i", *"unused import", "Escape"]
        before = page.url
        label_packet_with_keys(page, ["t", *links, "y", "y", "n", "y", "y"])
        page.wait_for_url(lambda url, before=before: url != before)
        page.wait_for_load_state()
        pages += 1
        assert pages <= 5
    assert pages == 5 and page.log["errors"] == []
    assert all(url.startswith(base) for url in page.log["requests"])  # nothing from elsewhere
    with LabelStore(rundir) as store:
        rows = store.rows(role=Role.RATER)
    assert len(rows) == 10 and {r.author for r in rows} == {"ann"} and {r.source for r in rows} == {"app"}
    true = [r.row for r in rows if r.row.label_class.value == "true_finding"]
    assert len(true) == 5
    assert all(r.fields.model_dump() == {"location": True, "consequence": True, "evidence": False,
                                         "safe_fix": True, "severity_fit": True} for r in true)  # fmt: skip
    assert {r.defect_id for r in true} == {"d-1", "d-2", "valid_incidental"}
    assert next(r for r in true if r.defect_id == "valid_incidental").note == "unused import"
    assert all(r.row.triage_s is not None and r.row.triage_s >= 0 for r in rows)


def test_no_page_names_a_condition_a_model_or_a_run(rundir, serve, page):
    base = serve(AppOptions(rundir))
    with LabelStore(rundir) as store:
        packet_ids = sorted({ref.packet_id for ref in store.claims().values()})
    page.goto(f"{base}/?token={invite(rundir, 'ann')}")
    html = ""
    for packet_id in packet_ids:
        page.goto(f"{base}/r/ann/p/{packet_id}")
        html += page.content()
    assert len(packet_ids) == 5 and html.count('class="claim') == 10
    secrets = [*CONDITIONS, MODEL, PROMPT_SHA[:16]] + [run_id(c, k) for c in ("case-1", "case-2", "case-3")
                                                        for k in CONDITIONS]  # fmt: skip
    for secret in secrets:
        assert secret not in html
    assert not re.search(r"\b(condition|model|repetition)\b", html, re.IGNORECASE)
    # model text is shown, escaped, and never runs
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert page.evaluate("window.__xss") is None


def _set_visibility(page, state: str) -> None:
    page.evaluate("""state => {
        Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
        document.dispatchEvent(new Event('visibilitychange'));
    }""", state)  # fmt: skip


def test_the_triage_timer_pauses_while_hidden_or_idle(rundir, serve, page):
    base = serve(AppOptions(rundir))
    page.clock.install()
    page.goto(f"{base}/r/ann?token={invite(rundir, 'ann')}")  # straight to ann's first packet
    page.wait_for_selector("article.claim.current")
    def seconds():
        return page.evaluate("window.reviewbenchTimer.activeSeconds()")

    page.keyboard.press("j")
    page.keyboard.press("k")
    page.clock.run_for(10_000)
    assert seconds() == pytest.approx(10, abs=0.6)
    _set_visibility(page, "hidden")
    page.clock.run_for(30_000)
    assert seconds() == pytest.approx(10, abs=0.6)  # paused while hidden
    _set_visibility(page, "visible")
    page.keyboard.press("j")
    page.clock.run_for(5_000)
    assert seconds() == pytest.approx(15, abs=0.6)
    page.clock.run_for(120_000)  # no input: counts up to 60 s after the last key, then pauses
    assert seconds() == pytest.approx(70, abs=0.6)
    page.keyboard.press("k")
    before = page.url
    label_packet_with_keys(page, ["u"])
    page.wait_for_url(lambda url: url != before)
    with LabelStore(rundir) as store:
        rows = store.rows(role=Role.RATER)
    assert sum(r.row.triage_s for r in rows) == pytest.approx(70, abs=1.0)


def test_two_raters_cannot_see_each_others_labels(rundir, serve, page):
    base = serve(AppOptions(rundir))
    ann, bob = invite(rundir, "ann"), invite(rundir, "bob")
    page.goto(f"{base}/r/ann?token={ann}")
    page.wait_for_selector("article.claim.current")
    packet_url = page.url
    page.keyboard.press("u")
    page.keyboard.press("o")
    page.keyboard.type("ann-private-note")
    page.keyboard.press("Escape")
    for _ in range(claim_count(page) - 1):
        page.keyboard.press("j")
        page.keyboard.press("d")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != packet_url)
    # ann sees her own label again; bob, on the same packet, sees nothing of it
    page.goto(packet_url)
    assert "ann-private-note" in page.content()
    assert page.locator("input[data-role=class]:checked").count() == claim_count(page)
    bob_url = packet_url.replace("/r/ann/", "/r/bob/")
    page.goto(f"{bob_url}?token={bob}")  # bob's link: this browser is bob's now
    html = page.content()
    assert "ann-private-note" not in html and "ann" not in html.replace("annot", "")
    assert page.locator("input:checked").count() == 0
    # and bob's cookie does not open ann's pages
    response = page.goto(packet_url)
    assert response.status == 403 and "belongs to someone else" in page.locator("#error").inner_text()


def test_adjudication_shows_only_disagreements_with_both_labels(rundir, serve, page, tmp_path):
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    target = next(c for c in claims if c.text == "style nit")
    rows = {c: {"comment_id": c.comment_id, "part": c.part, "class": "false_positive", "note": None} for c in claims}
    (tmp_path / "ann.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    rows[target] = {**rows[target], "class": "unclear", "note": "bob thinks it is vague"}
    (tmp_path / "bob.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    import_labels(rundir, tmp_path / "ann.jsonl", rater="ann")
    import_labels(rundir, tmp_path / "bob.jsonl", rater="bob")

    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={invite(rundir, 'ada', Role.ADJUDICATOR)}")
    page.wait_for_selector("article.claim.current")
    assert claim_count(page) == 1 and "style nit" in page.locator("article.claim").inner_text()
    initial = page.locator(".initial-label").all_inner_texts()
    assert any(t.startswith("ann: false_positive") for t in initial)
    assert any(t.startswith("bob: unclear") and "bob thinks it is vague" in t for t in initial)
    page.keyboard.press("f")
    page.keyboard.press("Enter")
    assert "claim 1 is not complete" in page.locator("#status").inner_text()  # a reason is required
    page.keyboard.press("r")
    page.keyboard.type("a style remark, not a defect")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector("#done")
    with LabelStore(rundir) as store:
        (adjudication,) = store.rows(role=Role.ADJUDICATOR)
        assert adjudication.author == "ada" and adjudication.row.reason == "a style remark, not a defect"
        assert adjudication.row.label_class.value == "false_positive" and adjudication.row.triage_s >= 0
        latest = store.latest(Role.RATER)
        key = (target.comment_id, target.part)
        assert latest["ann"][key].row.label_class.value == "false_positive"
        assert latest["bob"][key].row.label_class.value == "unclear"  # initial labels kept


def test_bad_submissions_are_refused_and_store_nothing(rundir, serve):
    import urllib.error
    import urllib.request

    base = serve(AppOptions(rundir))
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    packet = claims[0].packet_id
    other = next(c for c in claims if c.packet_id != packet)
    cookie = f"reviewbench_token={invite(rundir, 'ann')}"

    def post(body: bytes, kind: str = "application/json", host: str | None = None) -> tuple[int, str]:
        request = urllib.request.Request(f"{base}/r/ann/p/{packet}", data=body, method="POST",
                                         headers={"content-type": kind, "cookie": cookie,
                                                  **({"host": host} if host else {})})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    label = {"comment_id": other.comment_id, "part": other.part, "class": "unclear"}
    assert post(b"{not json")[0] == 400
    assert post(b'{"labels": []}')[0] == 400
    assert post(json.dumps({"labels": [{"comment_id": "x", "class": "maybe"}]}).encode())[0] == 400
    assert post(json.dumps({"labels": [label]}).encode()) == (400, '{"error":"a label names a claim of another packet"}')
    assert post(b"labels=1", kind="application/x-www-form-urlencoded")[0] == 415
    assert post(json.dumps({"labels": [label]}).encode(), host="evil.example")[0] == 400  # not loopback
    with LabelStore(rundir) as store:
        assert store.rows(probe=None) == []


def test_a_long_packet_is_labelled_page_by_page(tmp_path, serve, page):
    from reviewbench.label.app import PAGE_SIZE

    from .conftest import write_corpus, write_runs

    findings = {(CONDITIONS[0], "case-3"): [f"remark {i}" for i in range(PAGE_SIZE + 5)]}
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), findings=findings)
    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={invite(rundir, 'ann')}")
    page.wait_for_selector("article.claim.current")
    assert claim_count(page) == PAGE_SIZE and "page 1 of 2" in page.locator("#pages").inner_text()
    before = page.url
    label_packet_with_keys(page, ["f"])
    page.wait_for_url(lambda url: url != before and url.endswith("?page=2"))
    page.wait_for_selector("article.claim.current")
    assert claim_count(page) == 5
    label_packet_with_keys(page, ["f"])
    page.wait_for_selector("#done")
    with LabelStore(rundir) as store:
        assert len(store.rows(role=Role.RATER)) == PAGE_SIZE + 5


# -- issue 27, items 8-10: work kept, saved once, the rubric on screen, adjudication -------------


def _first_packet(page, base, rundir, name="ann"):
    page.goto(f"{base}/r/{name}?token={invite(rundir, name)}")
    page.wait_for_selector("article.claim.current")


def test_a_reload_or_a_closed_tab_keeps_the_choices_and_leaving_asks_first(rundir, serve, page):
    base = serve(AppOptions(rundir))
    _first_packet(page, base, rundir)
    packet_url = page.url
    page.keyboard.press("u")
    page.keyboard.press("o")
    page.keyboard.type("half-way note")
    page.keyboard.press("Escape")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.type), d.accept()))
    page.reload()
    page.wait_for_selector("article.claim.current")
    assert dialogs == ["beforeunload"]  # leaving with unsaved choices asks first
    first = page.locator("article.claim").first
    assert first.locator("input[data-role=class][value=unclear]").is_checked()
    assert first.locator("textarea[data-role=note]").input_value() == "half-way note"
    assert "restored" in page.locator("#status").inner_text()
    # a closed tab: a new page of the same browser finds the draft too
    page.close(run_before_unload=False)
    again = page.context.new_page()
    again.goto(packet_url)
    again.wait_for_selector("article.claim.current")
    assert again.locator("article.claim").first.locator("input[data-role=class][value=unclear]").is_checked()
    # saved: the draft is gone, and leaving no longer asks
    for _ in range(again.locator("article.claim").count() - 1):
        again.keyboard.press("j")
        again.keyboard.press("f")
    again.keyboard.press("Enter")
    again.wait_for_url(lambda url: url != packet_url)
    assert again.evaluate("Object.keys(localStorage).filter(k => k.startsWith('reviewbench-draft'))") == []
    with LabelStore(rundir) as store:
        rows = store.rows(role=Role.RATER)
    assert any(r.row.note == "half-way note" and r.row.label_class.value == "unclear" for r in rows)


def test_three_clicks_on_save_and_a_double_enter_write_each_label_once(rundir, serve, page):
    base = serve(AppOptions(rundir))
    _first_packet(page, base, rundir)
    n = claim_count(page)
    for i in range(n):
        if i:
            page.keyboard.press("j")
        page.keyboard.press("f")
    before = page.url
    disabled = page.evaluate("""() => { const b = document.getElementById('save');
        b.click(); const d = b.disabled; b.click(); b.click(); return d; }""")
    assert disabled is True  # the button is off while the save is under way
    page.wait_for_url(lambda url: url != before)
    page.wait_for_selector("article.claim.current")
    with LabelStore(rundir) as store:
        assert len(store.rows(role=Role.RATER)) == n
    # the next packet: Enter twice in a row
    m = claim_count(page)
    for i in range(m):
        if i:
            page.keyboard.press("j")
        page.keyboard.press("f")
    before = page.url
    page.evaluate("""() => { for (let i = 0; i < 2; i++)
        document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); }""")
    page.wait_for_url(lambda url: url != before)
    with LabelStore(rundir) as store:
        assert len(store.rows(role=Role.RATER)) == n + m


def test_the_server_ignores_an_identical_resubmission(rundir, serve):
    from .conftest import Http

    base = serve(AppOptions(rundir))
    http = Http(base)
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    packet = claims[0].packet_id
    labels = [{"comment_id": c.comment_id, "part": c.part, "class": "false_positive", "triage_s": 2.0}
              for c in claims if c.packet_id == packet]  # fmt: skip
    cookie = {"cookie": f"reviewbench_token={invite(rundir, 'ann')}"}
    answers = [json.loads(http.post_json(f"/r/ann/p/{packet}", {"labels": labels}, cookie)[2]) for _ in range(3)]
    assert [a["saved"] for a in answers] == [len(labels), 0, 0]
    assert answers[1]["unchanged"] == len(labels)
    with LabelStore(rundir) as store:
        assert len(store.rows(role=Role.RATER)) == len(labels)
        store.verify_chain()


def test_the_rubric_line_numbers_and_the_form_are_on_screen(rundir, serve, page):
    base = serve(AppOptions(rundir))
    _first_packet(page, base, rundir)  # 1280 × 900
    first = page.locator("article.claim").first
    box = first.locator("fieldset.fields").bounding_box()
    assert box["y"] + box["height"] <= 900  # the whole first form, class to actionability, above the fold
    assert page.locator("#save").bounding_box()["y"] < 900
    # the rubric: what each class and question asks, on the page and beside each answer
    page.locator("#rubric summary").click()
    rubric = page.locator("#rubric").inner_text()
    for words in ("valid incidental", "duplicate", "cannot tell", "evidence a reader can check", "severity"):
        assert words in rubric
    assert "evidence a reader can check" in first.locator(".field[data-field=evidence]").inner_text()
    # the diff is numbered and the claimed line is marked
    assert page.locator("table.diff td.ln").count() > 0
    where = first.locator(".where code").inner_text()  # app/case-N.py:2
    current = page.locator("tr.current-line")
    assert current.count() == 1 and current.locator("td.ln").nth(1).inner_text() == where.rsplit(":", 1)[1]
    assert "+" in current.locator("td.code").inner_text()[:1]
    # a false positive: "identifies" and the five questions are off; a true finding turns them on
    page.keyboard.press("f")
    assert first.locator("fieldset.link").evaluate("f => f.disabled") is True
    assert first.locator("fieldset.fields").evaluate("f => f.disabled") is True
    assert first.locator("input[data-field=evidence][value=yes]").is_disabled()
    assert first.locator("input[data-role=link]").first.is_disabled()
    page.keyboard.press("y")  # no question to answer for a false positive
    assert first.locator("input[data-role=field]:checked").count() == 0
    assert "wrong, or not a problem" in first.locator("fieldset.cls").inner_text()  # each class says what it means
    page.keyboard.press("t")
    assert first.locator("fieldset.fields").evaluate("f => f.disabled") is False
    assert first.locator("input[data-field=evidence][value=yes]").is_enabled()


def test_adjudication_counts_disputed_claims_clears_fixed_messages_and_asks_the_reason_first(rundir, serve, page,
                                                                                             tmp_path):  # fmt: skip
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    targets = [c for c in claims if c.text in ("style nit", "unused import")]
    rows = {c: {"comment_id": c.comment_id, "part": c.part, "class": "false_positive"} for c in claims}
    (tmp_path / "ann.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    for c in targets:
        rows[c] = {**rows[c], "class": "unclear"}
    (tmp_path / "bob.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    import_labels(rundir, tmp_path / "ann.jsonl", rater="ann")
    import_labels(rundir, tmp_path / "bob.jsonl", rater="bob")
    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={invite(rundir, 'ada', Role.ADJUDICATOR)}")
    page.wait_for_selector("article.claim.current")
    assert "disputed claim 1 of 2" in page.locator("header").inner_text()
    assert "packet" not in page.locator("header").inner_text()
    claim = page.locator("article.claim").first
    reason, note = claim.locator("textarea[data-role=reason]"), claim.locator("textarea[data-role=note]")
    assert reason.bounding_box()["y"] < note.bounding_box()["y"]  # the reason comes first
    page.keyboard.press("f")
    page.keyboard.press("Enter")
    assert page.locator("#status").inner_text() == "claim 1 is not complete: give a reason"
    page.keyboard.press("r")
    page.keyboard.type("not a defect")
    assert page.locator("#status").inner_text() == ""  # fixed: the message goes
    page.keyboard.press("Escape")
    before = page.url
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != before)
    page.wait_for_selector("article.claim.current")
    assert "disputed claim 1 of 1" in page.locator("header").inner_text()
    page.keyboard.press("f")
    page.keyboard.press("r")
    page.keyboard.type("not a defect either")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector("#done")
    # a new rater disagreeing with an adjudicated claim re-opens it for the adjudicator
    first = next(r for r in store_rows(rundir, Role.ADJUDICATOR))
    (tmp_path / "cat.jsonl").write_text(json.dumps({"comment_id": first.row.comment_id, "part": first.row.part,
                                                    "class": "unclear"}) + "\n")  # fmt: skip
    import_labels(rundir, tmp_path / "cat.jsonl", rater="cat")
    page.goto(f"{base}/a/ada")
    page.wait_for_selector("article.claim.current")
    assert "disputed claim 1 of 1" in page.locator("header").inner_text()
    text = page.locator("article.claim").inner_text()
    assert "cat: unclear" in text and "re-opened" in text and "adjudicated before by ada" in text


def store_rows(rundir, role):
    with LabelStore(rundir) as store:
        return store.rows(role=role)
