"""What a solver produced for one run of a task: the contract between ``tasks run`` and
``tasks grade``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import CorpusError
from ..store.runs import RUNS_DB, RunStore
from .records import SolutionState, solution_state

__all__ = ["Solution", "read_solutions"]


@dataclass(frozen=True)
class Solution:
    """One run's answer, ready to grade."""

    run_id: str
    instance_id: str
    condition: str
    repetition: int
    state: SolutionState
    """How the run ended (the run's state in the words of fix tasks)."""
    patch: str | None
    """The unified diff the solver produced ("" for no change); None when there is none
    to grade (the run failed, timed out, or its answer held no parsable diff)."""


def read_solutions(rundir: Path) -> tuple[Path, list[Solution]]:
    """The task directory a ``tasks run`` ran on, and one :class:`Solution` per recorded run.

    Solutions come in a stable order (task, condition, repetition).

    Raises:
        CorpusError: ``rundir`` is not a run directory, or holds review runs.
    """
    store = RunStore(rundir / RUNS_DB)
    try:
        tasks_path = store.get_meta("tasks_path")
        if tasks_path is None:
            raise CorpusError(f"{rundir} holds no fix-task runs (no tasks_path in its meta); "
                              "run 'reviewbench tasks run' into it first")  # fmt: skip
        solutions = [
            Solution(run_id=run.run_id, instance_id=run.case_id, condition=run.condition,
                     repetition=run.repetition, state=solution_state(run.state), patch=run.patch)  # fmt: skip
            for run in store.runs()
        ]
    finally:
        store.close()
    return Path(tasks_path), solutions
