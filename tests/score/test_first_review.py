"""Time to first review (forge runs), computed by hand on a small known store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbench.records import PullRequest
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.runs import RunStore

from ..conftest import run_cli
from .test_score import _row, corpus  # noqa: F401  (the corpus fixture: known eligible cases)

FORGE = {"kind": "github", "repo": "acme/sandbox", "bot": "review-bot"}

# The forge condition's runs: (case, repetition) -> (state, seconds to the first review, or
# None: no review; "none": no pull request opened). d1, d2, k1 are eligible; k4 is not (a
# control whose tests fail), so its run is out whatever it says.
BOT = {
    ("d1", 0): ("completed_findings", 10.0),
    ("d1", 1): ("completed_no_findings", 40.0),
    ("d2", 0): ("completed_no_findings", 20.0),
    ("d2", 1): ("timed_out", None),  # the bot never answered: in the denominator, not reviewed
    ("k1", 0): ("completed_no_findings", 30.0),
    ("k1", 1): ("failed", "none"),  # the push failed: no pull request, not reviewed either
    ("k4", 0): ("completed_no_findings", 1000.0),  # not eligible: never counted
}


def _pull(number: int, seconds: float | None) -> PullRequest:
    return PullRequest(kind="github", repo="acme/sandbox", number=number, url=f"https://forge/pull/{number}",
                       head_sha="a" * 40, triggered_at="2026-01-01T00:00:00Z",
                       first_review_at=None if seconds is None else "2026-01-01T00:00:10Z",
                       completed_at="2026-01-01T00:30:00Z", time_to_first_review_s=seconds, polls=3)  # fmt: skip


@pytest.fixture
def rundir(tmp_path, corpus) -> Path:  # noqa: F811
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": "bot"}, {"name": "llm"}]})})  # fmt: skip
    rows = []
    for number, ((case_id, rep), (state, seconds)) in enumerate(BOT.items(), 1):
        row = _row("bot", case_id, rep, state, [], "NO_ISSUES" if state.startswith("completed") else None, gold_sha)
        pull = None if seconds == "none" else _pull(number, seconds)
        rows.append(row.model_copy(update={"params": FORGE, "pull_request": pull}))
    for case_id in ("d1", "d2", "k1"):
        rows.append(_row("llm", case_id, 0, "completed_no_findings", [], "NO_ISSUES", gold_sha))
    store.record_many(rows)
    store.close()
    return out


def test_time_to_first_review_by_hand(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=100)).as_json()
    for analysis in (result["conditions"]["bot"], result["conditions"]["bot"]["end_to_end"]):
        m = analysis["metrics"]["time_to_first_review_s"]
        # Reviewed: 10, 40, 20, 30 s (k4 is not eligible) -> sorted 10, 20, 30, 40.
        # median (20 + 30) / 2 = 25; inclusive quartiles 10 + 0.75 * 10 = 17.5 and 30 + 0.25 * 10 = 32.5.
        assert (m["num"], m["den"]) == (4, 6)  # runs with a first review / forge runs
        assert (m["value"], m["lo"], m["hi"], m["min"], m["max"]) == (25.0, 17.5, 32.5, 10.0, 40.0)
        assert m["not_reviewed"] == {"failed": 1, "timed_out": 1}  # never silently dropped
    # A condition without forge runs has no such metric (absent, not zero).
    assert "time_to_first_review_s" not in result["conditions"]["llm"]["metrics"]
    assert "time_to_first_review_s" not in result["conditions"]["llm"]["end_to_end"]["metrics"]


def test_a_forge_condition_never_reviewed_is_not_scored_but_counted(rundir):
    store = RunStore(rundir / "runs.sqlite", create=True)
    rows = [r.model_copy(update={"state": "timed_out", "pull_request": _pull(9, None), "raw_output": None})
            for r in store.runs() if r.condition == "bot"]  # fmt: skip
    store.record_many(rows)
    store.close()
    m = score_run(rundir, ScoreOptions(bootstrap=100)).as_json()["conditions"]["bot"]["metrics"]
    first = m["time_to_first_review_s"]
    assert (first["value"], first["num"], first["den"], first["not_reviewed"]) == (None, 0, 6, {"timed_out": 6})


def test_score_text_json_schema_and_report_show_it_for_forge_conditions_only(rundir, tmp_path):
    cli = run_cli

    data = json.loads(cli("score", str(rundir), "--json", "--bootstrap", "100").stdout)
    assert data["conditions"]["bot"]["metrics"]["time_to_first_review_s"]["den"] == 6
    from jsonschema import Draft202012Validator

    Draft202012Validator(json.loads(cli("schema", "score").stdout)).validate(data)
    board = cli("score", str(rundir), "--bootstrap", "100", "--details").stdout.split("\ndetails: ", 1)[1]
    bot, llm = board.split("\nllm", 1)
    assert "time_to_first_review_s (median)" in bot and "4/6" in bot
    assert "IQR [17.500, 32.500] min 10.000 max 40.000" in bot
    assert "not reviewed: failed 1, timed_out 1" in bot
    assert "time_to_first_review_s" not in llm
    html = tmp_path / "report.html"
    proc = cli("report", str(rundir), "--html", str(html), "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "Time to first review" in page and "not reviewed: failed 1, timed_out 1" in page
    section = page.split('id="first-review"', 1)[1].split("</section>", 1)[0]
    assert ">bot<" in section and ">llm<" not in section
