"""The fix-task section of the report: what ``tasks grade`` writes to report.html.

Built on the review report's machinery: the same jinja2 environment (autoescaping every
value), the same stylesheet and the same Content-Security-Policy. It needs no script: a
tile's details are its ``title``, so the page runs nothing at all. Patch paths and
reasons come from solvers and are escaped like any model text.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from markupsafe import Markup

from .._version import __version__
from ..report.html import _environment
from .grade_metrics import ConditionBoard, Rate, Scoreboard
from .records import Grade, GradeStatus

__all__ = ["render_tasks_html", "tasks_view", "write_tasks_html"]

_HELP = {
    "resolve_rate": "resolved runs / scored runs (all FAIL_TO_PASS and PASS_TO_PASS pass)",
    "applies_clean_rate": "runs whose patch passed strict git apply --check / scored runs",
    "partial_rate": "not resolved, some FAIL_TO_PASS pass / scored runs",
    "overreach_rate": "patches changing files outside the gold patch / patches read that change a file",
}


@dataclass(frozen=True)
class _Cell:
    value: str
    fraction: str
    interval: str


def _cell(rate: Rate | None) -> _Cell:
    if rate is None:
        return _Cell("–", "", "")
    value = "n/a" if rate.value is None else f"{rate.value:.3f}"
    fraction = f"{rate.num:g}/{rate.den:g}" if rate.den == int(rate.den) and rate.num == int(rate.num) \
        else f"{rate.num:.3f}/{rate.den:g}"  # fmt: skip
    interval = "" if rate.lo is None or rate.hi is None else f"[{rate.lo:.3f}, {rate.hi:.3f}]" + (" exact" if rate.exact else "")
    return _Cell(value, fraction, interval)


def _metric_rows(boards: list[ConditionBoard]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name in ("resolve_rate", "applies_clean_rate", "partial_rate", "overreach_rate"):
        rows.append(
            {"label": name, "help": _HELP[name], "cells": [_cell(getattr(b, name)) for b in boards]}
        )
    most = max((max(b.pass_at, default=0) for b in boards), default=0)
    for k in range(1, most + 1):
        rows.append({"label": f"pass@{k}", "help": "some of k runs resolves the task (unbiased, per task)",
                     "cells": [_cell(b.pass_at.get(k)) for b in boards]})  # fmt: skip
    for k in range(2, most + 1):
        rows.append({"label": f"pass^{k}", "help": "all of k runs resolve the task (unbiased, per task)",
                     "cells": [_cell(b.pass_hat.get(k)) for b in boards]})  # fmt: skip
    return rows


def _css(grade: Grade | None) -> str:
    if grade is None:
        return "not_run"
    if grade.status is GradeStatus.ERROR:
        css = "fix-error"
    elif grade.tests_pass:
        css = "fix-resolved"
    elif grade.partial:
        css = "fix-partial"
    elif grade.status is GradeStatus.TESTED:
        css = "fix-unresolved"
    else:
        css = "fix-nopatch"
    return css + (" overreach" if grade.overreach else "")


def _tip(task: str, condition: str, repetition: int, grade: Grade | None) -> str:
    head = f"task {task} · condition {condition} · repetition {repetition}"
    if grade is None:
        return head + "\nno run recorded"
    verdict = "RESOLVED" if grade.tests_pass else ("PARTIAL" if grade.partial else "NOT RESOLVED")
    if grade.status is GradeStatus.ERROR:
        verdict = "NOT SCORED (grading failed)"
    lines = [head, f"{verdict} · {grade.status.value} · {grade.solution_state.value.replace('_', ' ')}",
             f"applies clean: {'yes' if grade.applies_clean else 'no'} · patch: {grade.files} files, {grade.lines} lines",
             f"FAIL_TO_PASS {grade.f2p_passed}/{grade.f2p_total} · PASS_TO_PASS {grade.p2p_passed}/{grade.p2p_total}"]  # fmt: skip
    if grade.overreach:
        lines.append(
            f"overreach: {grade.overreach} file(s): " + ", ".join(grade.overreach_files[:5])
        )
    if grade.reason:
        lines.append(grade.reason[:300])
    if grade.not_passed and grade.status is GradeStatus.TESTED:
        lines.append("not passed: " + ", ".join(grade.not_passed[:5]))
    return "\n".join(lines)


def tasks_view(
    grades: list[Grade], board: Scoreboard, rundir: Path, tasks_path: Path | None = None
) -> dict:
    """Everything the fix-task templates show, formatted (the template only places it)."""
    names = [b.name for b in board.conditions]
    tasks = sorted({g.instance_id for g in grades})
    repetitions = max((g.repetition + 1 for g in grades), default=1)
    index = {(g.instance_id, g.condition, g.repetition): g for g in grades}
    tile_rows = [
        {"task": task, "tiles": [
            {"css": _css(index.get((task, c, r))), "tip": _tip(task, c, r, index.get((task, c, r)))}
            for c in names for r in range(repetitions)
        ]}
        for task in tasks
    ]  # fmt: skip
    paired = []
    for a, b in ((x, y) for i, x in enumerate(names) for y in names[i + 1 :]):
        p = next(c for c in board.conditions if c.name == a).paired[b]
        d = p.difference
        paired.append({
            "a": a, "b": b, "pairs": p.pairs, "both": p.both, "only_a": p.only_a, "only_b": p.only_b,
            "neither": p.neither, "difference": "n/a" if d.value is None else f"{d.value:+.3f} ({d.num:g}/{d.den:g})",
            "interval": "" if d.lo is None or d.hi is None else f"[{d.lo:+.3f}, {d.hi:+.3f}]",
            "p": "" if p.mcnemar_p is None else f"{p.mcnemar_p:.4g}",
        })  # fmt: skip
    conditions = [
        {"name": b.name, "statuses": ", ".join(f"{k} {v}/{b.runs}" for k, v in b.by_status.items())}
        for b in board.conditions
    ]
    notable = [
        g for g in grades if g.status in (GradeStatus.REJECTED, GradeStatus.ERROR) or g.overreach
    ]
    return {
        "rundir": rundir, "tasks_path": tasks_path or "", "runs": len(grades), "tasks": tasks,
        "conditions": conditions, "resamples": board.resamples, "seed": board.seed,
        "metric_rows": _metric_rows(board.conditions), "paired": paired, "tile_rows": tile_rows,
        "repetitions": repetitions, "notable": notable, "tool_version": __version__,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }  # fmt: skip


def render_tasks_html(
    grades: list[Grade], board: Scoreboard, rundir: Path, tasks_path: Path | None = None
) -> str:
    env = _environment()
    return env.get_template("tasks.html.j2").render(
        view=tasks_view(grades, board, rundir, tasks_path),
        nonce=secrets.token_urlsafe(18),
        styles=Markup(env.loader.get_source(env, "report.css")[0]),  # type: ignore[union-attr]
    )


def write_tasks_html(grades: list[Grade], board: Scoreboard, rundir: Path, path: Path,
                     tasks_path: Path | None = None) -> Path:  # fmt: skip
    """Render and write ``path`` atomically (parents created); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(
        render_tasks_html(grades, board, rundir, tasks_path), encoding="utf-8", errors="replace"
    )
    tmp.replace(path)
    return path
