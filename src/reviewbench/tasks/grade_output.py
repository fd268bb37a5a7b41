"""What ``tasks grade`` hands to people and tools: the grades CSV and the JSON document.

The CSV keeps the seed's columns first (``task, applies_clean, tests_pass, overreach``)
and adds condition, repeat, partial, files, lines, then status and the overreaching files.
Paths and reasons come from the solver's patch: text cells starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return get a leading apostrophe so that a spreadsheet
does not run them as formulas.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from .grade_metrics import Scoreboard
from .records import Grade

__all__ = ["CSV_COLUMNS", "grade_rows", "grades_document", "write_grades_csv"]

CSV_COLUMNS = ("task", "applies_clean", "tests_pass", "overreach", "condition", "repeat", "partial", "files",
               "lines", "status", "overreach_files", "reason")  # fmt: skip

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str | None) -> str:
    if value is None:
        return ""
    return "'" + value if value.startswith(_FORMULA) else value


def grade_rows(grades: list[Grade]) -> list[dict[str, object]]:
    """One JSON row per graded run."""
    return [
        {
            "instance_id": g.instance_id,
            "condition": g.condition,
            "repeat": g.repetition,
            "applies_clean": g.applies_clean,
            "tests_pass": g.tests_pass,
            "partial": g.partial,
            "overreach": g.overreach,
            "overreach_files": g.overreach_files,
            "overreach_flag": g.overreach_flag,
            "files": g.files,
            "lines": g.lines,
            "status": g.status.value,
            "run_id": g.run_id,
            "reason": g.reason,
        }
        for g in grades
    ]


def grades_document(grades: list[Grade], board: Scoreboard) -> dict[str, object]:
    """``{"rows": [...], "conditions": {...}, "tasks": {...}}``: what ``--json`` prints."""
    return {"rows": grade_rows(grades), "conditions": board.as_dict(), "tasks": board.task_summary()}


def write_grades_csv(grades: list[Grade], path: Path) -> Path:
    """Write the CSV atomically (parents created); returns the path."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for g in grades:
        writer.writerow([
            _text(g.instance_id), str(g.applies_clean).lower(), str(g.tests_pass).lower(), g.overreach,
            _text(g.condition), g.repetition, str(g.partial).lower(), g.files, g.lines, g.status.value,
            _text(";".join(g.overreach_files)), _text(g.reason),
        ])  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(out.getvalue(), encoding="utf-8", errors="surrogateescape")
    os.replace(tmp, path)
    return path
