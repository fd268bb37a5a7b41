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
