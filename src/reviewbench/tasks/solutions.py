"""What a solver produced for one run of a task: the contract between ``tasks run`` and
``tasks grade``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Solution"]


@dataclass(frozen=True)
class Solution:
    """One run's answer, ready to grade."""

    run_id: str
    instance_id: str
    condition: str
    repetition: int
    state: str
    """The run's terminal state (a :class:`~reviewbench.records.RunState` value)."""
    patch: str | None
    """The unified diff the solver produced ("" for no change); None when there is none
    to grade (the run failed, timed out, or its answer held no parsable diff)."""
