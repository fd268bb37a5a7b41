"""Completion by condition × stratum, planned runs included.

``completion`` counts the attempts that were made; a run the plan held and nobody ever
started is in none of them. The plan is ``RUNDIR/allocation.jsonl`` (the seeded order
``run`` writes at its first run), so each condition's table counts, per stratum of the
analysed cases: the runs planned, those scored here (attempted), those of them that
completed, those planned and never recorded at all (never attempted), and those recorded
but not scored here (under another benchmark version, or excluded).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from ..store.runs import RunRow
from .metrics import CaseInfo

__all__ = ["PlannedRun", "completion_by_stratum"]


@dataclass(frozen=True)
class PlannedRun:
    """One run of the allocation: what the plan said would be run."""

    run_id: str
    case_id: str
    condition: str


def completion_by_stratum(name: str, runs: Iterable[RunRow], cases: Mapping[str, CaseInfo],
                          planned: Collection[PlannedRun] | None,
                          recorded: Collection[str]) -> dict[str, dict[str, int | None]]:  # fmt: skip
    """Per stratum of the analysed ``cases``: ``planned``, ``attempted``, ``completed``,
    ``not_attempted`` and ``elsewhere`` for condition ``name``.

    Args:
        runs: the condition's runs scored here.
        planned: the allocation (None: no plan recorded; then planned and never-attempted are null).
        recorded: every run id in the run store, whatever version it ran under.
    """
    table: dict[str, dict[str, int | None]] = {}

    def cell(stratum: str) -> dict[str, int | None]:
        known = planned is not None
        return table.setdefault(stratum, {"planned": 0 if known else None, "attempted": 0, "completed": 0,
                                          "not_attempted": 0 if known else None, "elsewhere": 0 if known else None})

    scored = set()
    for run in runs:
        case = cases.get(run.case_id)
        if case is None:
            continue
        scored.add(run.run_id)
        row = cell(case.stratum)
        row["attempted"] = (row["attempted"] or 0) + 1
        row["completed"] = (row["completed"] or 0) + int(run.reviewed)
    for plan in planned or ():
        case = cases.get(plan.case_id)
        if plan.condition != name or case is None:
            continue
        row = cell(case.stratum)
        row["planned"] = (row["planned"] or 0) + 1
        if plan.run_id not in recorded:
            row["not_attempted"] = (row["not_attempted"] or 0) + 1
        elif plan.run_id not in scored:
            row["elsewhere"] = (row["elsewhere"] or 0) + 1
    return dict(sorted(table.items()))
