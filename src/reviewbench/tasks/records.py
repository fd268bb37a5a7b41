"""Records of fix tasks (SPEC 11): what ``tasks mine`` writes and ``tasks grade`` reads.

A task is one historical fix to reproduce. ``TASKS/tasks.jsonl`` holds one :class:`Task`
per line with SWE-bench's field names, so that tools built for SWE-bench read it as is;
``TASKS/tasks.json`` is a :class:`TasksMeta` with what mining saw and dropped.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..records import RepoInfo

__all__ = ["TASKS_FILE", "TASKS_META", "Task", "TaskDropReason", "TasksCounts", "TasksMeta"]

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


class TaskDropReason(StrEnum):
    """Why a matching commit made no task."""

    MERGE = "merge"
    NO_PARENT = "no_parent"
    NO_SOURCE_CHANGE = "no_source_change"
    NO_TEST_CHANGE = "no_test_change"
    TOO_LARGE = "too_large"
    BINARY = "binary"
    LOCKFILE = "lockfile"
    VENDORED_OR_GENERATED = "vendored_or_generated"
    FORMATTING_ONLY = "formatting_only"
    APPLY_FAILED = "apply_failed"
    NO_FAIL_TO_PASS = "no_fail_to_pass"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    ERROR = "error"


class TasksCounts(_Record):
    tasks: int = Field(ge=0)
    matched_commits: int = Field(ge=0, description="Commits whose message matched the fix patterns.")
    candidates: int = Field(ge=0, description="Commits that passed the history filters and were tested.")
    dropped: dict[str, int] = Field(description="Commits dropped, by TaskDropReason.")


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
