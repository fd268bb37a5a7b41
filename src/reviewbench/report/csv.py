"""CSV exports: ``runs.csv``, ``findings.csv`` and ``cases.csv`` for spreadsheets and pandas.

Model text (claims, raw lines, paths, errors) is untrusted: a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return would be run as a formula by a spreadsheet,
so such text cells get a leading apostrophe (the usual CSV-injection guard). Numbers are
written as they are.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..store.runs import RunRow
from ._model import ReportData, Verdict

__all__ = ["CASE_COLUMNS", "FINDING_COLUMNS", "RUN_COLUMNS", "defuse", "write_csv"]

RUN_COLUMNS = ("run_id", "case_id", "condition", "repetition", "variant", "state", "in_analysis",
               "started_at", "ended_at", "latency_s", "attempts", "cached", "model_requested",
               "model_returned", "tokens_in", "tokens_out", "findings", "unparsed_lines", "error",
               "attempt", "first_review_at", "time_to_first_review_s", "completed_at", "true_findings",
               "false_positives", "duplicates", "unclear", "triage_minutes", "usage")  # fmt: skip
"""``attempt`` is the try number (1, or the retry after ``run --retry-failed``); the forge
times come from the pull request (``completed_at``: when the run stopped waiting; a run of
another kind: its end, if it completed); the four counts are the run's verdicts (identified,
false positives, duplicates, labelled unclear); ``triage_minutes`` is rater minutes on its
comments (empty without labels); ``usage`` is the usage proxy as JSON, or ``not_observable``."""
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


def _verdict_counts(data: ReportData) -> dict[str, tuple[int, int, int, int]]:
    """Per run: identified, false-positive, duplicate and unclear findings, as scored."""
    out: dict[str, list[int]] = {}
    for f in data.findings:
        cell = out.setdefault(f.run_id, [0, 0, 0, 0])
        cell[0] += f.verdict is Verdict.TRUE_POSITIVE
        cell[1] += f.verdict is Verdict.FALSE_POSITIVE
        cell[2] += f.verdict is Verdict.DUPLICATE
        cell[3] += f.unclear
    return {run_id: (a, b, c, d) for run_id, (a, b, c, d) in out.items()}


def _run_extras(run: RunRow) -> tuple[object, ...]:
    """Try number, forge first-review time and seconds, and completion time."""
    pull = run.pull_request
    completed_at = pull.completed_at if pull is not None else (run.ended_at if run.state.completed else None)
    return (run.try_no, pull.first_review_at if pull else None, pull.time_to_first_review_s if pull else None,
            completed_at)  # fmt: skip


def _usage(usage: object) -> str | None:
    """The usage proxy as one JSON cell (text from the endpoint: defused)."""
    if usage is None:
        return None
    return _text(usage if isinstance(usage, str) else json.dumps(usage, sort_keys=True))


def write_csv(data: ReportData, out: Path) -> dict[str, Path]:
    """Write the three CSV files into directory ``out`` (created); returns them by name."""
    out.mkdir(parents=True, exist_ok=True)
    counts = _verdict_counts(data)
    runs = (
        (r.run_id, r.case_id, r.condition, r.repetition, r.variant, r.state, r.case_id in data.analysed_cases,
         r.started_at, r.ended_at, r.latency_s, r.attempts, r.cached, _text(r.model_requested),
         _text(r.model_returned), r.tokens_in, r.tokens_out, len(r.findings), len(r.unparsed), _text(r.error),
         *_run_extras(r), *counts.get(r.run_id, (0, 0, 0, 0)), data.triage_by_run.get(r.run_id), _usage(r.usage))
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
