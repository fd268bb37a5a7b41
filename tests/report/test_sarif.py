"""SARIF 2.1.0 export, validated against the official schema (shipped under schemas/)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewbench.report import ReportOptions, build_report, build_sarif, write_sarif

from .conftest import RUNS, XSS_IMG, XSS_PATH

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))


def _validate(log: dict) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)


@pytest.fixture(scope="module")
def log(rundir, tmp_path_factory) -> dict:
    path = write_sarif(build_report(rundir, ReportOptions(bootstrap=200)), tmp_path_factory.mktemp("s") / "r.sarif")
    return json.loads(path.read_text(encoding="utf-8"))


def test_validates_against_the_sarif_schema(log):
    _validate(log)
    assert log["version"] == "2.1.0"


def test_one_result_per_finding(log):
    [run] = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["A", "B"]
    results = run["results"]
    assert len(results) == sum(len(findings) for _, findings, _ in RUNS.values())
    by_claim = {r["message"]["text"]: r for r in results}
    img = by_claim[XSS_IMG]
    assert img["ruleId"] == "A" and img["level"] == "note"
    assert img["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "app/c.py"},
                                                       "region": {"startLine": 90}}  # fmt: skip
    assert img["properties"]["verdict"] == "false_positive" and img["properties"]["case_id"] == "case-a2"
    assert by_claim["parse_key reads the wrong key"]["level"] == "warning"
    assert by_claim["path tries markup"]["level"] == "error"
    assert by_claim["path tries markup"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "app/%22%3E%3Csvg%20onload%3Dwindow.__xss%3D5%3E.py")  # fmt: skip
    assert XSS_PATH not in json.dumps(results)
    remark = by_claim["file-level remark"]
    assert "level" not in remark and "region" not in remark["locations"][0]["physicalLocation"]


def test_condition_filter(rundir):
    data = build_report(rundir, ReportOptions(bootstrap=200, conditions=("B",)))
    sarif = build_sarif(data)
    _validate(sarif)
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"B"} and len(results) == 2
    assert {r["ruleIndex"] for r in results} == {0}
