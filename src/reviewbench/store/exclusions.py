"""The exclusion log, ``RUNDIR/exclusions.jsonl``: runs and cases left out of the analysis.

A run whose review was invalid for the protocol (the harness lost the reply, the wrong
model answered) or a case that should never have been in the corpus is excluded by name,
with a reason and who decided it; nothing is deleted. The log is append-only (one JSON line
per exclusion, written with ``O_APPEND`` and synced): the run keeps its record in
``runs.sqlite``, and ``score`` shows the figures with the exclusions applied and without,
so that leaving something out can never quietly change a decision.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError
from .corpus import read_corpus
from .logs import append_line, read_lines
from .runs import RUNS_DB, RunStore

__all__ = ["EXCLUSIONS_FILE", "Exclusion", "ExclusionKind", "exclude", "read_exclusions"]

EXCLUSIONS_FILE = "exclusions.jsonl"


class ExclusionKind(StrEnum):
    RUN = "run"
    """One run: its review is out of every figure."""
    CASE = "case"
    """One case: every run of it, and the case itself out of the corpus counts."""


class Exclusion(BaseModel):
    """One line of the exclusion log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ExclusionKind = Field(description="run or case.")
    id: str = Field(min_length=1, description="The run id or case id left out.")
    reason: str = Field(min_length=1, description="Why: the protocol it broke, in the decider's words.")
    by: str = Field(min_length=1, description="Who decided it.")
    at: str = Field(description="When it was logged (UTC, ISO 8601).")


def read_exclusions(rundir: Path) -> list[Exclusion]:
    """The log of ``rundir``, oldest first (empty when there is none).

    Raises:
        UsageError: a line is not an exclusion (its number named).
    """
    return read_lines(rundir / EXCLUSIONS_FILE, Exclusion, "an exclusion")


def exclude(rundir: Path, kind: ExclusionKind, target: str, reason: str, by: str) -> Exclusion:
    """Append one exclusion to the log of ``rundir``, once ``target`` is known there.

    Raises:
        CorpusError: ``rundir`` is not a run directory.
        UsageError: an empty reason or name, or no such run or case.
    """
    reason, by = reason.strip(), by.strip()
    if not reason:
        raise UsageError("--reason is empty: say why it is left out")
    if not by:
        raise UsageError("--by is empty: name who decides it")
    store = RunStore(rundir / RUNS_DB)
    try:
        if kind is ExclusionKind.RUN:
            known = store.db.execute("SELECT 1 FROM runs WHERE run_id = ?", (target,)).fetchone() is not None
        else:
            corpus_path = store.get_meta("corpus_path")
            known = bool(corpus_path and any(c.case_id == target for c in read_corpus(Path(corpus_path)).cases))
    finally:
        store.close()
    if not known:
        raise UsageError(f"{rundir} has no {kind.value} {target} (see 'reviewbench runs {rundir}')")
    entry = Exclusion(kind=kind, id=target, reason=reason, by=by,
                      at=datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip
    append_line(rundir / EXCLUSIONS_FILE, entry)
    return entry
