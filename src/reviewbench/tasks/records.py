"""Records of fix tasks: what ``tasks mine`` writes and ``tasks grade`` reads.

A task is one historical fix to reproduce. ``TASKS/tasks.jsonl`` holds one :class:`Task`
per line with SWE-bench's field names, so that tools built for SWE-bench read it as is;
``TASKS/tasks.json`` is a :class:`TasksMeta` with what mining saw and dropped.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from ..records import RepoInfo

__all__ = ["TASKS_FILE", "TASKS_META", "Task", "TasksCounts", "TasksMeta"]

TASKS_FILE = "tasks.jsonl"
TASKS_META = "tasks.json"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Task(_Record):
    """One fix task; field names follow SWE-bench where it has one."""

    instance_id: str = Field(description="Neutral, seeded id of the task.")
    repo: str = Field(description="Source repository: its remote URL, else its path.")
    base_commit: str = Field(description="The fix's parent: the tree a solver starts from.")
    patch: str = Field(description="Gold patch: the fix's changes outside the tests.")
    test_patch: str = Field(description="The fix's changes to tests: the hidden grading tests.")
    problem_statement: str = Field(description="The fix's commit message, commit ids and issue links removed.")
    FAIL_TO_PASS: list[str] = Field(description="pytest node ids failing before the gold patch, passing after.")
    PASS_TO_PASS: list[str] = Field(description="pytest node ids of the test patch's files passing before and after.")
    created_at: str = Field(description="Commit date of the fix (ISO 8601).")
    fix_commit: str = Field(description="The historical fix commit (provenance; never shown to solvers).")
    gold_files: list[str] = Field(description="Files the gold patch changes; edits elsewhere are overreach.")
    test_files: list[str] = Field(description="Files the test patch changes.")
    patch_lines: int = Field(ge=0, description="Changed (added + removed) lines of the gold patch.")
    test_cmd: str = Field(description="Test command that computed FAIL_TO_PASS and PASS_TO_PASS.")


class TasksCounts(_Record):
    tasks: int = Field(ge=0)
    matched_commits: int = Field(ge=0, description="Commits whose message matched the fix patterns.")
    candidates: int = Field(ge=0, description="Commits that passed the history filters and were tested.")
    dropped: dict[str, int] = Field(description="Commits dropped, by DropReason (records.TASK_DROP_REASONS).")


class TasksMeta(_Record):
    """``tasks.json``: where the tasks come from and what mining dropped."""

    schema_version: str = "1"
    repo: RepoInfo
    created_at: str
    tool_version: str
    config: dict[str, Any]
    test_cmd: str
    counts: TasksCounts
    tasks_sha256: str = Field(description="SHA-256 of tasks.jsonl.")


GRADES_FILE = "grades.jsonl"


class GradeStatus(StrEnum):
    """How far grading got with one run's answer: whether it was graded, not how it did."""

    TESTED = "tested"
    """Applied cleanly, the task's tests applied on top and ran: ``tests_pass`` says how it did."""
    NO_PATCH = "no_patch"
    """The run produced no patch to grade (it failed, timed out or its answer held no diff)."""
    REJECTED = "rejected"
    """The patch does not parse or names paths outside the tree: never applied."""
    APPLY_FAILED = "apply_failed"
    """Strict ``git apply --check`` refused the patch at the task's base."""
    TEST_PATCH_FAILED = "test_patch_failed"
    """The patch applied, but the task's test patch no longer applies on top of it."""
    ERROR = "error"
    """Grading itself broke (see the log): not scored."""


class SolutionState(StrEnum):
    """How a solver run ended, in the words of fix tasks (the run engine records the shared
    :class:`~reviewbench.records.RunState`; :func:`solution_state` translates)."""

    PATCHED = "patched"
    """A non-empty patch."""
    NO_CHANGE = "no_change"
    """The solver changed nothing (an empty patch, graded by the tests)."""
    NO_DIFF = "no_diff"
    """The answer held no parsable diff."""
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


_FROM_RUN_STATE = {"completed_findings": SolutionState.PATCHED, "completed_no_findings": SolutionState.NO_CHANGE,
                   "invalid": SolutionState.NO_DIFF}  # fmt: skip


def solution_state(run_state: str) -> SolutionState:
    """A run's state (a :class:`~reviewbench.records.RunState` value) as a fix task says it."""
    return _FROM_RUN_STATE.get(run_state) or SolutionState(run_state)


class Grade(_Record):
    """``grades.jsonl``: the grade of one solver run, one per line."""

    run_id: str = Field(description="The solver run graded.")
    instance_id: str = Field(description="The task.")
    condition: str = Field(description="The experiment condition of the run.")
    repetition: int = Field(ge=0, description="The run's repetition (0-based).")
    solution_state: SolutionState = Field(validation_alias=AliasChoices("solution_state", "run_state"),
                                          description="How the solver run ended (grades written before this "
                                          "field was named held the run's state as run_state: read as this).")

    @field_validator("solution_state", mode="before")
    @classmethod
    def _from_run_state(cls, value: object) -> object:
        return solution_state(value) if isinstance(value, str) else value
    status: GradeStatus = Field(description="How far grading got; TESTED when the tests ran.")
    reason: str | None = Field(default=None, description="Why the patch was not tested, when it was not.")
    applies_clean: bool = Field(description="Strict 'git apply --check' accepted the patch at the base (an empty patch applies).")
    tests_pass: bool = Field(description="Resolved: every FAIL_TO_PASS and PASS_TO_PASS test passed (JUnit XML, never printed text).")
    partial: bool = Field(description="Not resolved, but at least one FAIL_TO_PASS test passed.")
    overreach: int = Field(ge=0, description="Files the patch changes outside the gold patch's files.")
    overreach_files: list[str] = Field(description="Those files (untrusted: they come from the patch).")
    p2p: str = Field(
        default="task", pattern="^(task|suite)$",
        description="Where PASS_TO_PASS came from: the task's own test files ('task') or the whole suite at "
        "the base ('suite', tasks grade --p2p suite).",
    )
    overreach_flag: bool = Field(
        default=False, description="Overreach: more than one file changed outside the gold patch's files."
    )
    files: int = Field(ge=0, description="Files the patch changes (0 when it did not parse).")
    lines: int = Field(ge=0, description="Added + removed lines of the patch.")
    f2p_passed: int = Field(ge=0, description="FAIL_TO_PASS tests that passed.")
    f2p_total: int = Field(ge=0, description="FAIL_TO_PASS tests of the task.")
    p2p_passed: int = Field(ge=0, description="PASS_TO_PASS tests that passed.")
    p2p_total: int = Field(ge=0, description="PASS_TO_PASS tests of the task.")
    not_passed: list[str] = Field(description="Required tests (node ids) that did not pass.")
    test_verdict: str | None = Field(default=None, description="Verdict of the test run (pass, fail, no_tests, timeout, error); None when none ran.")
    exit_code: int | None = Field(default=None, description="Exit code of the test run.")
    duration_s: float = Field(default=0.0, ge=0, description="Seconds of test time.")
    patch_sha256: str | None = Field(default=None, description="SHA-256 of the patch graded; a changed patch is graded again.")
    touched_test_infra: bool = Field(default=False, description="The patch changed graded test files, conftest.py, pytest configuration, sitecustomize/usercustomize or .pth files: they were restored from the base before testing, and the run is never resolved.")

__all__ += ["GRADES_FILE", "Grade", "GradeStatus", "SolutionState", "solution_state"]
