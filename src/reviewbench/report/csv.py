"""CSV exports: ``runs.csv``, ``findings.csv`` and ``cases.csv`` for spreadsheets and pandas.

Model text (claims, raw lines, paths, errors) is untrusted: a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return would be run as a formula by a spreadsheet,
so such text cells get a leading apostrophe (the usual CSV-injection guard). Numbers are
written as they are.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._model import ReportData

__all__ = ["CASE_COLUMNS", "FINDING_COLUMNS", "RUN_COLUMNS", "defuse", "write_csv"]

RUN_COLUMNS = ("run_id", "case_id", "condition", "repetition", "variant", "state", "in_analysis",
               "started_at", "ended_at", "latency_s", "attempts", "cached", "model_requested",
               "model_returned", "tokens_in", "tokens_out", "findings", "unparsed_lines", "error")  # fmt: skip
FINDING_COLUMNS = ("comment_id", "run_id", "case_id", "condition", "repetition", "index", "path", "line",
                   "severity", "claim", "verdict", "defect_id", "identified_by", "evidence", "in_analysis",
                   "raw")  # fmt: skip
#: Followed by one ``rep<N>`` column per repetition.
CASE_COLUMNS = ("case_id", "condition", "kind", "stratum", "variant_of", "defects", "runs", "completed",
                "found_pairs", "defect_pairs", "recall", "true_positives", "located", "false_positives",
                "duplicates", "findings")  # fmt: skip

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str | None) -> str:
    """Untrusted text, defused for spreadsheets."""
    if value is None:
        return ""
    return "'" + value if value.startswith(_FORMULA) else value


def defuse(value: object) -> object:
    """A CSV cell: text defused for spreadsheets, numbers as they are, None empty."""
    return _text(value) if isinstance(value, str) else _cell(value)


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    return value


def _write(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> int:
    count = 0
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8", errors="replace", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(v) for v in row])
            count += 1
    tmp.replace(path)
    return count


def write_csv(data: ReportData, out: Path) -> dict[str, Path]:
    """Write the three CSV files into directory ``out`` (created); returns them by name."""
    out.mkdir(parents=True, exist_ok=True)
    runs = (
        (r.run_id, r.case_id, r.condition, r.repetition, r.variant, r.state, r.case_id in data.analysed_cases,
         r.started_at, r.ended_at, r.latency_s, r.attempts, r.cached, _text(r.model_requested),
         _text(r.model_returned), r.tokens_in, r.tokens_out, len(r.findings), len(r.unparsed), _text(r.error))
        for r in data.runs
    )  # fmt: skip
    findings = (
        (f.comment_id, f.run_id, f.case_id, f.condition, f.repetition, f.index, _text(f.finding.path),
         f.finding.line, f.finding.severity.value if f.finding.severity else None, _text(f.finding.claim),
         f.verdict.value, f.defect_id, f.identified_by, f.evidence, f.in_analysis, _text(f.finding.raw))
        for f in data.findings
    )  # fmt: skip
    cases = (
        (c.case_id, c.condition, c.kind, c.stratum, c.variant_of, c.defects, c.runs, c.completed, c.found_pairs,
         c.defect_pairs, None if c.recall is None else round(c.recall, 6), c.true_positives, c.located,
         c.false_positives, c.duplicates, c.findings, *c.outcomes)
        for c in data.cases
    )  # fmt: skip
    reps = tuple(f"rep{r}" for r in range(data.repetitions))
    written = {"runs.csv": out / "runs.csv", "findings.csv": out / "findings.csv", "cases.csv": out / "cases.csv"}
    _write(written["runs.csv"], RUN_COLUMNS, runs)
    _write(written["findings.csv"], FINDING_COLUMNS, findings)
    _write(written["cases.csv"], (*CASE_COLUMNS, *reps), cases)
    return written
