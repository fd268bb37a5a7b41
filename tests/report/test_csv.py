"""CSV exports: columns, one row per run / finding / case × condition, spreadsheet-safe text."""

from __future__ import annotations

import csv

import pytest

from reviewbench.report import ReportOptions, build_report, write_csv
from reviewbench.report.csv import CASE_COLUMNS, FINDING_COLUMNS, RUN_COLUMNS

from .conftest import CONDITIONS, FORMULA, REPS, RUNS, XSS_SCRIPT


@pytest.fixture(scope="module")
def tables(rundir, tmp_path_factory):
    out = tmp_path_factory.mktemp("csv")
    written = write_csv(build_report(rundir, ReportOptions(bootstrap=200)), out)
    assert sorted(written) == ["cases.csv", "findings.csv", "runs.csv"]
    tables = {}
    for name, path in written.items():
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            tables[name] = (next(reader), list(reader))
    return tables


def _rows(tables, name):
    header, rows = tables[name]
    return [dict(zip(header, row, strict=True)) for row in rows]


def test_runs_csv(tables):
    header, rows = tables["runs.csv"]
    assert tuple(header) == RUN_COLUMNS
    assert len(rows) == len(RUNS)  # every recorded run, analysed or not
    by_id = {r["run_id"]: r for r in _rows(tables, "runs.csv")}
    assert by_id["A-case-u1-0"]["in_analysis"] == "0" and by_id["A-case-a1-0"]["in_analysis"] == "1"
    assert by_id["A-case-k1-2"]["findings"] == "3" and by_id["A-case-a1-2"]["state"] == "failed"


def test_findings_csv(tables):
    header, rows = tables["findings.csv"]
    assert tuple(header) == FINDING_COLUMNS
    assert len(rows) == sum(len(findings) for _, findings, _ in RUNS.values())
    rows = _rows(tables, "findings.csv")
    [xss] = [r for r in rows if r["claim"] == XSS_SCRIPT]  # kept verbatim: CSV is data, not markup
    assert (xss["verdict"], xss["defect_id"], xss["line"], xss["severity"]) == (
        "located", "case-a1-d1", "11", "high")  # fmt: skip
    [formula] = [r for r in rows if r["run_id"] == "A-case-a2-1"]
    assert formula["claim"] == "'" + FORMULA  # a spreadsheet must not run it
    assert formula["verdict"] == "false_positive"
    assert {r["verdict"] for r in rows if r["run_id"] == "A-case-u1-0"} == {"not_scored"}  # not validated: out of the analysis
    [named] = [r for r in rows if r["run_id"] == "A-case-a1-1"]
    assert (named["verdict"], named["identified_by"], named["comment_id"]) == ("true_positive", "removed_identifier", "A-case-a1-1:0")
    [remark] = [r for r in rows if r["claim"] == "file-level remark"]
    assert remark["line"] == "" and remark["verdict"] == "file_level"


def test_cases_csv(tables):
    header, rows = tables["cases.csv"]
    assert tuple(header) == (*CASE_COLUMNS, *(f"rep{r}" for r in range(REPS)))
    assert len(rows) == 8 * len(CONDITIONS)  # analysed cases (two of them mirrors) × conditions
    rows = {(r["case_id"], r["condition"]): r for r in _rows(tables, "cases.csv")}
    a2 = rows[("case-a2", "A")]
    assert (a2["rep0"], a2["rep1"], a2["rep2"]) == ("found 1/2", "missed", "missed")
    assert (a2["found_pairs"], a2["defect_pairs"], a2["recall"]) == ("1", "6", "0.166667")
    k1 = rows[("case-k1", "A")]
    assert (k1["kind"], k1["false_positives"], k1["recall"], k1["rep1"]) == ("control", "4", "", "clean")
    assert rows[("case-a3", "B")]["rep2"] == "not_run"


def test_runs_csv_has_counts_times_and_attempts_per_run(tables):
    """By hand, from the fixture's runs: A-case-a2-0 names a2-d1 (parse_key, its mirror silent)
    and makes a false positive at c.py:90; B-case-a1-0 names a1-d1 and repeats it; A-case-k1-2
    makes three comments on a control; A-case-a1-2 failed."""
    by_id = {r["run_id"]: r for r in _rows(tables, "runs.csv")}
    counts = ("true_findings", "false_positives", "duplicates", "unclear")
    assert tuple(by_id["A-case-a2-0"][c] for c in counts) == ("1", "1", "0", "0")
    assert tuple(by_id["B-case-a1-0"][c] for c in counts) == ("1", "0", "1", "0")
    assert tuple(by_id["A-case-k1-2"][c] for c in counts) == ("0", "3", "0", "0")
    assert by_id["A-case-a2-0"]["attempt"] == "1"
    assert by_id["A-case-a2-0"]["completed_at"] == "2026-01-01T00:00:01.000+00:00"
    assert by_id["A-case-a1-2"]["completed_at"] == ""  # failed: it never completed
    for column in ("first_review_at", "time_to_first_review_s", "triage_minutes", "usage"):
        assert by_id["A-case-a2-0"][column] == ""  # not a forge run, no labels, no usage proxy


def test_runs_csv_forge_times_usage_retry_and_triage_minutes(tmp_path):
    import json

    from reviewbench.records import PullRequest
    from reviewbench.store.runs import RunStore

    from ..conftest import run_cli
    from .conftest import write_corpus, write_runs

    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))
    store = RunStore(rundir / "runs.sqlite", create=True)
    run = next(r for r in store.runs() if r.run_id == "A-case-a2-0")
    pull = PullRequest(kind="gitea", repo="o/r", number=7, head_sha="a" * 40, triggered_at="2026-01-01T00:00:00Z",
                       first_review_at="2026-01-01T00:00:42Z", completed_at="2026-01-01T00:01:00Z",
                       time_to_first_review_s=42.0)
    store.record(run.model_copy(update={"pull_request": pull, "try_no": 2,
                                        "usage": {"unit": "requests", "before": 100, "after": 98}}), None)
    store.close()
    packets = tmp_path / "packets.jsonl"
    assert run_cli("label", "export", rundir, "--out", packets).returncode == 0
    rows = []
    for line in packets.read_text().splitlines():
        for claim in json.loads(line)["claims"]:
            rows.append({"comment_id": claim["comment_id"], "part": claim["part"], "class": "false_positive",
                         "triage_s": 90})
    for rater in ("ann", "bob"):
        path = tmp_path / f"{rater}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert run_cli("label", "import", rundir, path, "--rater", rater).returncode == 0
    out = tmp_path / "csv"
    write_csv(build_report(rundir, ReportOptions(bootstrap=200)), out)
    with (out / "runs.csv").open(encoding="utf-8", newline="") as handle:
        by_id = {r["run_id"]: r for r in csv.DictReader(handle)}
    a2 = by_id["A-case-a2-0"]
    assert (a2["attempt"], a2["first_review_at"], a2["time_to_first_review_s"], a2["completed_at"]) == (
        "2", "2026-01-01T00:00:42Z", "42.0", "2026-01-01T00:01:00Z")  # fmt: skip
    assert json.loads(a2["usage"]) == {"after": 98, "before": 100, "unit": "requests"}
    # Two comments, two raters, 90 s each: 4 × 1.5 = 6 minutes. A-case-k1-2: three comments, 9.
    assert float(a2["triage_minutes"]) == 6.0 and float(by_id["A-case-k1-2"]["triage_minutes"]) == 9.0
    assert by_id["A-case-a2-2"]["triage_minutes"] == ""  # no comment, nothing to triage
