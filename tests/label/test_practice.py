"""The practice set: packets outside the corpus with reference labels, done before the first
real packet, with the rater's agreement shown (loopback app, real store, the real CLI)."""

from __future__ import annotations

import json

from reviewbench.evidence.store import LabelStore, Role
from reviewbench.label.app import AppOptions

from ..conftest import run_cli
from .conftest import Http
from .test_app import browser, page  # noqa: F401 (Chromium fixtures)

DIFF = ("diff --git a/p/calc.py b/p/calc.py\n--- a/p/calc.py\n+++ b/p/calc.py\n@@ -1,2 +1,2 @@\n def total(xs):\n"
        "-    return sum(xs)\n+    return sum(xs[1:])\n")  # fmt: skip


def _item(number: int, claims: list[tuple[str, dict]]) -> dict:
    packet = {"packet_id": f"practice-{number}", "title": "Practice change", "paths": ["p/calc.py"], "diff": DIFF,
              "tests": {"status": None}, "defects": [{"defect_id": "pd-1", "description": "drops the first item",
                                                       "locations": [{"path": "p/calc.py", "start_line": 2,
                                                                      "end_line": 2}]}],
              "claims": [{"comment_id": f"practice-{number}-{i}", "part": 0, "parts": 1, "path": "p/calc.py",
                          "line": 2, "text": text} for i, (text, _) in enumerate(claims)]}  # fmt: skip
    answers = [{"comment_id": f"practice-{number}-{i}", "part": 0, **label} for i, (_, label) in enumerate(claims)]
    return {"packet": packet, "answers": answers}


TRUE = {"class": "true_finding", "defect_id": "pd-1",
        "fields": dict.fromkeys(("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)}  # fmt: skip
FALSE = {"class": "false_positive"}
SET = [_item(1, [("the slice drops the first item", TRUE), ("rename xs", FALSE)]),
       _item(2, [("sum is slow <b>here</b>", FALSE)])]  # fmt: skip


def _write(path, items):
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def _cookie(token):
    return {"cookie": f"reviewbench_token={token}"}


def test_a_practice_set_comes_first_and_its_agreement_before_the_first_packet(rundir, tmp_path, serve):
    """ann labels the three practice claims: the first as the reference, the second a true finding
    (the reference: false positive), the third as the reference: 2 of 3 agree (66.7%)."""
    proc = run_cli("label", "practice", rundir, _write(tmp_path / "practice.jsonl", SET))
    assert proc.returncode == 0 and "(2 packets, 3 claims)" in proc.stderr, proc.stderr
    with LabelStore(rundir) as store:
        ann = store.invite("ann", Role.RATER)
        real = store.claims()
    http = Http(serve(AppOptions(rundir)))
    status, headers, _ = http.get("/r/ann", _cookie(ann))
    assert status == 303 and headers["location"] == "/r/ann/practice/practice-1"
    status, _, page = http.get("/r/ann/practice/practice-1", _cookie(ann))
    assert status == 200 and "practice packet 1 of 2" in page and page.count('<article class="claim') == 2
    assert "pd-1" in page
    # labels of another packet's claims, or of the run's own claims, are refused here
    key = next(iter(real))
    wrong = {"labels": [{"comment_id": key[0], "part": key[1], "class": "false_positive"}]}
    assert http.post_json("/r/ann/practice/practice-1", wrong, _cookie(ann))[0] == 400
    first = {"labels": [{"comment_id": "practice-1-0", "part": 0, **TRUE, "triage_s": 3},
                        {"comment_id": "practice-1-1", "part": 0, **TRUE, "triage_s": 4}]}  # fmt: skip
    status, _, body = http.post_json("/r/ann/practice/practice-1", first, _cookie(ann))
    assert status == 200 and json.loads(body)["next"] == "/r/ann"
    assert http.get("/r/ann", _cookie(ann))[1]["location"] == "/r/ann/practice/practice-2"
    assert http.post_json("/r/ann/practice/practice-2", {"labels": [{"comment_id": "practice-2-0", "part": 0,
                                                                     **FALSE}]}, _cookie(ann))[0] == 200  # fmt: skip
    status, _, page = http.get("/r/ann", _cookie(ann))
    assert status == 200 and 'id="practice-done"' in page
    assert "agree with the reference on 2 of 3 practice claims (66.7%)" in page
    assert "rename xs" in page and "sum is slow" not in page  # the one difference, shown
    # "Start labelling" opens the real packets; practice labels are no labels of the run
    status, headers, _ = http.get("/r/ann?begin=1", _cookie(ann))
    assert status == 303 and headers["location"].startswith("/r/ann/p/")
    with LabelStore(rundir) as store:
        assert store.rows(role=Role.RATER) == [] and len(store.rows(role=Role.RATER, probe=None)) == 3
        assert store.latest(Role.RATER) == {}
        store.verify_chain()
    result = json.loads(run_cli("label", "practice", rundir, "--json").stdout)
    (mine,) = result["raters"]
    assert mine["agreement"] == {"value": 0.666667, "numerator": 2, "denominator": 3} and mine["done"] is True
    assert [d["claim"] for d in mine["differences"]] == ["rename xs"]
    assert "ann: agrees with the reference on 2/3 (66.7%); done" in run_cli("label", "practice", rundir).stdout


def test_a_bad_practice_set_is_one_clear_error(rundir, tmp_path):
    def error(proc, fragment):
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr, proc.stderr

    unanswered = _item(1, [("a claim", TRUE)])
    unanswered["answers"] = []
    error(run_cli("label", "practice", rundir, _write(tmp_path / "a.jsonl", [SET[0], unanswered])),
          "a.jsonl:2: not a practice item")  # fmt: skip
    error(run_cli("label", "practice", rundir, _write(tmp_path / "b.jsonl", [SET[0], SET[0]])), "given twice")
    with LabelStore(rundir) as store:
        key = next(iter(store.packets().claims)).comment_id
    clash = _item(3, [("x", FALSE)])
    clash["packet"]["claims"][0]["comment_id"] = clash["answers"][0]["comment_id"] = key
    error(run_cli("label", "practice", rundir, _write(tmp_path / "c.jsonl", [clash])), "outside the corpus")
    error(run_cli("label", "practice", rundir), "has no practice set")


def test_in_the_browser_the_practice_set_then_its_agreement_then_the_packets(rundir, tmp_path, serve, page):
    """Real Chromium, keyboard only: practice-1's claims as true finding (defect 1, five yes) and
    false positive, practice-2's as a true finding (the reference: false positive): 2 of 3."""
    run_cli("label", "practice", rundir, _write(tmp_path / "practice.jsonl", SET))
    with LabelStore(rundir) as store:
        ann = store.invite("ann", Role.RATER)
    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={ann}")
    page.wait_for_url(lambda url: "/practice/practice-1" in url)
    page.wait_for_selector("article.claim.current")
    assert "practice packet 1 of 2" in page.content()
    order = page.eval_on_selector_all("article.claim", "els => els.map(e => e.textContent)")
    for index, text in enumerate(order):
        if index:
            page.keyboard.press("j")
        keys = ["t", "1", *"yyyyy"] if "drops the first item" in text else ["f"]
        for key in keys:
            page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/practice/practice-2" in url)
    page.wait_for_selector("article.claim.current")
    for key in ["t", "1", *"yyyyy", "Enter"]:
        page.keyboard.press(key)
    page.wait_for_selector("#practice-done")
    assert "2 of 3 practice claims (66.7%)" in page.inner_text("#practice-agreement")
    assert "sum is slow" in page.inner_text("#practice-differences")
    assert page.evaluate("document.querySelector('#practice-differences b')") is None  # escaped
    page.click("#begin")
    page.wait_for_url(lambda url: "/r/ann/p/" in url)
    page.wait_for_selector("article.claim.current")
    assert "practice" not in page.inner_text("header")
    assert page.log["errors"] == []
    with LabelStore(rundir) as store:
        assert store.rows(role=Role.RATER) == [] and len(store.rows(role=Role.RATER, probe=None)) == 3
