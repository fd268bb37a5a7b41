"""Hand inspection: how many scored runs and misses people have read, and which to read next.

Aggregates hide what a reviewer actually said: at least five scored runs should be read by a
person before any figure is trusted, and every miss once. ``score`` counts the readings of
``RUNDIR/readings.jsonl`` (``reviewbench label read``) against the runs it scored and the
misses among them, and names a sample of five to read when none has been; ``reviewbench
label sample`` picks the same way: seeded, never a run already read, one from each kind of
run in turn (a miss, a find, a false alarm, a quiet clean run) so the five are not all alike.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..records import RunRow
from ..store.readings import READINGS_FILE, Reading, ReadingKind

if TYPE_CHECKING:
    from ._api import RunTallies

__all__ = ["SAMPLE_SIZE", "inspection_block", "misses", "pick_sample", "scored_runs"]

#: Scored runs a person should read before trusting any aggregate.
SAMPLE_SIZE = 5
#: The kinds of run a sample takes in turn.
_KINDS = ("miss", "found", "false alarm", "quiet")


def scored_runs(tallied: RunTallies) -> list[RunRow]:
    """The runs the figures count as reviews: reviewed runs of the analysed headline cases."""
    return [r for r in tallied.inputs.runs if r.case_id in tallied.cases and r.reviewed]


def misses(tallied: RunTallies) -> list[tuple[str, str]]:
    """(run id, defect id) of every defect a scored run did not identify."""
    out = []
    for run in scored_runs(tallied):
        outcome = tallied.outcomes[run.run_id]
        for defect, found in zip(tallied.cases[run.case_id].defects, outcome.identified, strict=True):
            if not found:
                out.append((run.run_id, defect.defect_id))
    return out


def _kind(tallied: RunTallies, run: RunRow) -> str:
    outcome = tallied.outcomes[run.run_id]
    if tallied.cases[run.case_id].defects:
        return "found" if all(outcome.identified) else "miss"
    return "false alarm" if run.findings else "quiet"


def pick_sample(tallied: RunTallies, readings: Sequence[Reading], size: int = SAMPLE_SIZE,
                seed: int = 0) -> list[str]:  # fmt: skip
    """``size`` run ids to read: scored runs no one has read, shuffled with ``seed`` within
    each kind (miss, found, false alarm, quiet) and taken one kind after another."""
    read = {r.run_id for r in readings}
    groups: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    for run in sorted(scored_runs(tallied), key=lambda r: r.run_id):
        if run.run_id not in read:
            groups[_kind(tallied, run)].append(run.run_id)
    rng = random.Random(seed)
    for ids in groups.values():
        rng.shuffle(ids)
    out: list[str] = []
    while len(out) < size and any(groups.values()):
        for kind in _KINDS:
            if groups[kind] and len(out) < size:
                out.append(groups[kind].pop(0))
    return out


def inspection_block(tallied: RunTallies, readings: Sequence[Reading]) -> dict[str, Any]:
    """``score --json``'s ``inspection``: scored runs and misses, how many people read, who,
    and (when no scored run has been read) the sample of five to read first."""
    runs = {r.run_id for r in scored_runs(tallied)}
    missed = set(misses(tallied))
    runs_read = {r.run_id for r in readings if r.run_id in runs}
    misses_read = {(r.run_id, r.defect_id) for r in readings
                   if r.kind is ReadingKind.MISS and (r.run_id, r.defect_id) in missed}  # fmt: skip
    readers = sorted({r.by for r in readings if r.run_id in runs})
    return {
        "runs_scored": len(runs), "runs_read": len(runs_read), "misses": len(missed), "misses_read": len(misses_read),
        "readers": readers, "enough": len(runs_read) >= min(SAMPLE_SIZE, len(runs)),
        "sample": pick_sample(tallied, readings) if not runs_read else [],
        "readings": str(tallied.inputs.rundir / READINGS_FILE),
    }  # fmt: skip
