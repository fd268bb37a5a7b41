"""SARIF 2.1.0 export of the findings, so any SARIF viewer can show them.

One SARIF run (tool ``reviewbench``) with one rule per condition and one result per
finding: ``ruleId`` is the condition, ``level`` comes from the claimed severity (high →
error, med → warning, low → note; no severity → no level, which viewers read as warning),
the message is the claim, and the location is the path plus, when the finding has one,
the line. Paths are relative to each case's patched tree; the case, repetition, run and
the verdict scoring gave sit in each result's ``properties``.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from ._model import ReportData, ScoredFinding

__all__ = ["SARIF_SCHEMA", "build_sarif", "write_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"high": "error", "med": "warning", "low": "note"}


def _result(f: ScoredFinding, rule_index: int) -> dict:
    finding = f.finding
    result: dict = {
        "ruleId": f.condition,
        "ruleIndex": rule_index,
        "message": {"text": finding.claim or "(no claim text)"},
        "properties": {
            "case_id": f.case_id,
            "condition": f.condition,
            "repetition": f.repetition,
            "run_id": f.run_id,
            "finding_index": f.index,
            "verdict": f.verdict.value,
            "comment_id": f.comment_id,
            "evidence": f.evidence,
            "in_analysis": f.in_analysis,
        },
    }
    if finding.severity is not None:
        result["level"] = _LEVELS[finding.severity.value]
        result["properties"]["severity"] = finding.severity.value
    if f.defect_id:
        result["properties"]["defect_id"] = f.defect_id
    if finding.path:
        physical: dict = {"artifactLocation": {"uri": quote(finding.path.strip().replace("\\", "/"), safe="/")}}
        if finding.line is not None and finding.line >= 1:
            physical["region"] = {"startLine": finding.line}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def build_sarif(data: ReportData) -> dict:
    """The SARIF log of every finding of the report's conditions."""
    from .._version import __version__

    names = [c.name for c in data.conditions]
    index = {name: i for i, name in enumerate(names)}
    reviewers = {c.name: c.reviewer for c in data.conditions}
    rules = [{"id": name, "shortDescription": {"text": f"Finding of condition {name}"
                                                + (f" ({reviewers[name]})" if reviewers[name] else "")}}
             for name in names]  # fmt: skip
    results = [_result(f, index[f.condition]) for f in data.findings if f.condition in index]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "reviewbench", "version": __version__, "rules": rules}},
            "automationDetails": {"id": f"reviewbench/{data.rundir.name}/"},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"rundir": str(data.rundir), "corpus": data.corpus.path,
                           "tolerance": data.options.tolerance},
        }],
    }  # fmt: skip


def write_sarif(data: ReportData, path: Path) -> Path:
    """Write the SARIF log to ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(build_sarif(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8",
                   errors="replace")  # fmt: skip
    tmp.replace(path)
    return path
