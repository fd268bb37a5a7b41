"""Exclusions: an append-only log of runs and cases left out, with a reason and a name;
score shows the figures with them applied and without."""

from __future__ import annotations

import json

import pytest

from reviewbench.score import ScoreOptions, score_run

from .test_score import corpus, rundir  # noqa: F401 - the hand-counted store, reused

OPTIONS = ScoreOptions(bootstrap=200)


def _log(rundir):
    path = rundir / "exclusions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _one_error(result):
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1 and lines[0].startswith("reviewbench: error:"), result.stderr
    return lines[0]


def test_an_excluded_run_leaves_the_figures_and_is_shown_beside_them(rundir, cli):
    before = score_run(rundir, OPTIONS).as_json()
    assert "exclusions" not in before
    result = cli("exclude", rundir, "--run", "A-d1-0", "--reason", "the harness lost half the reply", "--by", "ana")
    assert result.code == 0, result.stderr
    [entry] = _log(rundir)
    assert (entry["kind"], entry["id"], entry["reason"], entry["by"]) == ("run", "A-d1-0",
                                                                          "the harness lost half the reply", "ana")
    after = score_run(rundir, OPTIONS).as_json()
    # d1 r0 identified its one defect: 2/4 before (by hand, test_score.py), 1/3 without it.
    recall = after["conditions"]["A"]["metrics"]["defect_recall"]
    assert (recall["num"], recall["den"]) == (1, 3)
    assert (before["conditions"]["A"]["metrics"]["defect_recall"]["num"],
            before["conditions"]["A"]["metrics"]["defect_recall"]["den"]) == (2, 4)  # fmt: skip
    excluded = after["exclusions"]
    assert excluded["runs"] == ["A-d1-0"] and excluded["cases"] == []
    assert excluded["log"] == [entry]
    without = excluded["without"]["A"]
    assert without["defect_recall"] == before["conditions"]["A"]["metrics"]["defect_recall"]
    assert without["decision"]["tier"] == before["conditions"]["A"]["decision"]["tier"]
    assert without["decision_changes"] is False
    text = " ".join(cli("score", rundir, "--bootstrap", "200", "--details").stdout.split())
    assert "exclusions: 1 run, 0 cases left out (exclusions.jsonl)" in text
    assert "without exclusions: defect_recall 2/4 = 0.500" in text


def test_an_excluded_case_leaves_the_corpus_counts_too(rundir, cli):
    before = score_run(rundir, OPTIONS).as_json()
    assert cli("exclude", rundir, "--case", "d2", "--reason", "the fix was a revert of a revert",
               "--by", "ben").code == 0  # fmt: skip
    after = score_run(rundir, OPTIONS).as_json()
    assert after["corpus"]["eligible_defect_cases"] == before["corpus"]["eligible_defect_cases"] - 1
    assert after["exclusions"]["cases"] == ["d2"]
    assert all(v.case_id != "d2" for v in score_run(rundir, OPTIONS).verdicts)


def test_the_log_is_append_only(rundir, cli):
    for run_id, who in (("A-d1-0", "ana"), ("A-k1-1", "ben")):
        assert cli("exclude", rundir, "--run", run_id, "--reason", "r", "--by", who).code == 0
    first = (rundir / "exclusions.jsonl").read_text().splitlines()
    assert cli("exclude", rundir, "--case", "k2", "--reason", "r", "--by", "ana").code == 0
    lines = (rundir / "exclusions.jsonl").read_text().splitlines()
    assert lines[:2] == first and len(lines) == 3
    assert [e["id"] for e in _log(rundir)] == ["A-d1-0", "A-k1-1", "k2"]


@pytest.mark.parametrize("args, says", [
    (["--run", "A-nope-0", "--reason", "r", "--by", "ana"], "no run A-nope-0"),
    (["--case", "nope", "--reason", "r", "--by", "ana"], "no case nope"),
    (["--reason", "r", "--by", "ana"], "--run or --case"),
    (["--run", "A-d1-0", "--case", "d1", "--reason", "r", "--by", "ana"], "--run or --case"),
    (["--run", "A-d1-0", "--reason", "  ", "--by", "ana"], "--reason"),
    (["--run", "A-d1-0", "--reason", "r", "--by", ""], "--by"),
])  # fmt: skip
def test_bad_exclusions_are_refused_in_one_line(rundir, cli, args, says):
    assert says in _one_error(cli("exclude", rundir, *args))
    assert _log(rundir) == []


def test_a_run_directory_that_is_not_one_is_refused(tmp_path, cli):
    line = cli("exclude", tmp_path / "nowhere", "--run", "x", "--reason", "r", "--by", "ana").stderr
    assert line.count("\n") == 1 and "runs.sqlite" in line


def test_the_log_matches_its_schema_and_the_report_says_what_was_left_out(rundir, cli, tmp_path):
    from jsonschema import Draft202012Validator

    assert cli("exclude", rundir, "--case", "k2", "--reason", "a generated file", "--by", "ana").code == 0
    schema = json.loads(cli("schema", "exclusions").stdout)
    for entry in _log(rundir):
        Draft202012Validator(schema).validate(entry)
    assert cli("report", rundir, "--html", tmp_path / "report.html", "--bootstrap", "200").code == 0
    page = " ".join((tmp_path / "report.html").read_text().split())
    assert "exclusions: 0 runs, 1 case left out" in page and "A without exclusions: defect_recall 2/4" in page
