"""The hand-reading log, ``RUNDIR/readings.jsonl``: which runs and misses a person has read.

An aggregate is trusted only once people have read some of the runs behind it, and every
miss once: ``reviewbench label read`` appends who read which run (or which defect a run
missed) and when; ``score`` counts them against the scored runs and misses, and asks for a
sample of five (``reviewbench label sample``) when none has been read. Append-only, as the
exclusion log: a reading is never edited or removed.
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

__all__ = ["READINGS_FILE", "Reading", "ReadingKind", "read_readings", "record_reading"]

READINGS_FILE = "readings.jsonl"


class ReadingKind(StrEnum):
    RUN = "run"
    """A whole run read: its packet, its raw output and its verdicts."""
    MISS = "miss"
    """One defect the run missed, read against the run's output."""


class Reading(BaseModel):
    """One line of the hand-reading log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ReadingKind = Field(description="run, or miss (a defect the run did not identify).")
    run_id: str = Field(min_length=1, description="The run read.")
    defect_id: str | None = Field(default=None, description="miss: the defect of the run's case it missed.")
    by: str = Field(min_length=1, description="Who read it.")
    note: str | None = Field(default=None, description="What the reader saw, in their words.")
    at: str = Field(description="When it was logged (UTC, ISO 8601).")


def read_readings(rundir: Path) -> list[Reading]:
    """The log of ``rundir``, oldest first (empty when there is none).

    Raises:
        UsageError: a line is not a reading (its number named).
    """
    return read_lines(rundir / READINGS_FILE, Reading, "a reading")


def record_reading(rundir: Path, run_id: str, by: str, defect_id: str | None = None,
                   note: str | None = None) -> Reading:  # fmt: skip
    """Append one reading to the log of ``rundir``, once the run (and the defect, of the
    run's case) is known there.

    Raises:
        CorpusError: ``rundir`` is not a run directory.
        UsageError: an empty name, no such run, or a defect that is not the run's case's.
    """
    by = by.strip()
    if not by:
        raise UsageError("--by is empty: name who read it")
    store = RunStore(rundir / RUNS_DB)
    try:
        row = store.db.execute("SELECT case_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        corpus_path = store.get_meta("corpus_path")
    finally:
        store.close()
    if row is None:
        raise UsageError(f"{rundir} has no run {run_id} (see 'reviewbench runs {rundir}')")
    if defect_id is not None:
        gold = {g.case_id: g for g in read_corpus(Path(corpus_path)).gold} if corpus_path else {}
        record = gold.get(row[0])
        known = [d.defect_id for d in record.defects] if record else []
        if defect_id not in known:
            raise UsageError(f"run {run_id}'s case {row[0]} has no defect {defect_id} (its defects: "
                             f"{', '.join(known) or 'none: a clean case has no miss'})")  # fmt: skip
    entry = Reading(kind=ReadingKind.MISS if defect_id else ReadingKind.RUN, run_id=run_id, defect_id=defect_id,
                    by=by, note=(note or "").strip() or None, at=datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip
    append_line(rundir / READINGS_FILE, entry)
    return entry
