"""Entry point of ``tasks grade``: grade every run of a run directory, never lose a grade.

Like validation: each finished grade is appended to ``RUNDIR/grades.journal.jsonl`` and
fsync'd at once; at the end ``RUNDIR/grades.jsonl`` is written atomically and the journal
removed. An interrupted run keeps its journal and the next one resumes from it, and from
the grades already in ``grades.jsonl`` whose patch is unchanged (``force`` grades all).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import ValidateConfig, resolve_test_settings
from ..errors import CorpusError
from ..git.repo import missing_commits, open_repository
from ..store.corpus import dump_jsonl, read_jsonl
from ..store.journal import append_line, read_journal, write_atomic
from ..validate.environment import AUTO, build_environment, cache_home, chosen_python
from ..validate.executors import run_jobs
from ..validate.npm import build_node_modules
from ..validate.testcmd import TestCommand, detect_test_command, is_node_project
from .grade import GradeJob, grade_solution, patch_digest, pregrade, rejected
from .records import GRADES_FILE, Grade, Task, solution_state
from .solutions import Solution
from .store import TaskSet, read_tasks
from .testrun import require_per_test

__all__ = [
    "GRADES_JOURNAL",
    "GRADE_LOG_DIR",
    "GradeSummary",
    "grade_rundir",
    "grade_solutions",
    "read_grades",
]  # fmt: skip

GRADES_JOURNAL = "grades.journal.jsonl"
GRADE_LOG_DIR = "grade_logs"


@dataclass(frozen=True)
class GradeSummary:
    """What a grading run did; ``grades`` holds every run of the directory, sorted."""

    rundir: Path
    tasks: Path
    grades: list[Grade]
    graded: int
    """Runs graded by this invocation (the rest came from the journal or grades.jsonl)."""
    reused: int


def read_grades(rundir: Path) -> list[Grade]:
    """``RUNDIR/grades.jsonl`` (empty when absent)."""
    path = rundir / GRADES_FILE
    return read_jsonl(path, Grade) if path.is_file() else []


def _missing_bases(repo: Path, tasks: list[Task]) -> dict[str, str]:
    """Why each task whose base commit the repository lacks cannot be graded, by instance id."""
    gone = missing_commits(repo, [t.base_commit for t in tasks]) if tasks else []
    return {
        task.instance_id: f"base commit {task.base_commit} is not in {repo} (the repository was moved or "
                          "rewritten since mining); re-mine the tasks"
        for task, missing in zip(tasks, gone, strict=True)
        if missing
    }  # fmt: skip


def _sort_key(grade: Grade) -> tuple[str, str, int, str]:
    return grade.instance_id, grade.condition, grade.repetition, grade.run_id


def grade_solutions(
    rundir: Path,
    taskset: TaskSet,
    solutions: list[Solution],
    config: ValidateConfig,
    *,
    force: bool = False,
    on_grade: Callable[[Grade, int, int], None] | None = None,
    p2p_suite: bool = False,
) -> GradeSummary:
    """Grade ``solutions`` against ``taskset`` and write ``RUNDIR/grades.jsonl``.

    Raises:
        CorpusError: a run names a task the task set lacks, or the journal is damaged.
            (A task whose base commit is missing has its runs rejected, not applied.)
        UsageError: the test command is not pytest, or the network cannot be denied.
    """
    rundir = Path(os.path.abspath(rundir))
    tasks = taskset.by_id()
    unknown = sorted({s.instance_id for s in solutions} - set(tasks))
    if unknown:
        raise CorpusError(f"run directory {rundir} has runs of task {unknown[0]} (and {len(unknown) - 1} more) "
                          f"that {taskset.path} does not hold")  # fmt: skip
    journal_path = rundir / GRADES_JOURNAL
    if force:
        journal_path.unlink(missing_ok=True)
    done = {} if force else {g.run_id: g for g in read_grades(rundir)}
    done.update({g.run_id: g for g in read_journal(journal_path, Grade.model_validate_json)})
    pending = [
        s
        for s in solutions
        if s.run_id not in done or done[s.run_id].patch_sha256 != patch_digest(s.patch)
        or (s.patch and done[s.run_id].p2p != ("suite" if p2p_suite else "task"))
    ]
    lock = threading.Lock()
    finished = 0

    def record(grade: Grade) -> None:
        nonlocal finished
        with lock:
            append_line(journal_path, grade.model_dump_json())
            done[grade.run_id] = grade
            finished += 1
            if on_grade:
                on_grade(grade, finished, len(pending))

    logs = rundir / GRADE_LOG_DIR
    jobs: list[GradeJob] = []
    for solution in pending:
        task = tasks[solution.instance_id]
        early = pregrade(solution, task)
        if early is not None:
            record(early)  # no tree needed: nothing is applied
        else:
            jobs.append(
                GradeJob.build(solution, task, (logs / f"{_safe(solution.run_id)}.log").resolve(), p2p_suite)
            )
    if jobs:
        repo = open_repository(Path(taskset.meta.repo.path)).path
        missing = _missing_bases(repo, [tasks[i] for i in sorted({j.instance_id for j in jobs})])
        for job in [j for j in jobs if j.instance_id in missing]:
            record(rejected(job, tasks[job.instance_id], missing[job.instance_id]))
        jobs = [j for j in jobs if j.instance_id not in missing]
        logs.mkdir(parents=True, exist_ok=True)
        test_cmd = config.test_cmd
        if config.setup == AUTO and is_node_project(repo):
            installed = build_node_modules(cache_home(), repo, taskset.meta.repo.head).path
            jobs = [replace(job, node_modules=installed) for job in jobs]
        elif config.setup and not test_cmd:
            base = chosen_python(config.python) if config.python else None
            env = build_environment(cache_home(), repo, taskset.meta.repo.head, config.setup, base=base)
            test_cmd = detect_test_command(repo, env.python)
            jobs = [replace(job, products=env.project) for job in jobs]  # the setup's generated files
        elif config.python and not test_cmd:
            test_cmd = detect_test_command(repo, chosen_python(config.python))
        by_command: dict[str, list[GradeJob]] = {}
        for job in jobs:
            by_command.setdefault(test_cmd or tasks[job.instance_id].test_cmd, []).append(
                job
            )

        def record_job(job: GradeJob, grade: Grade) -> None:
            identity = {"run_id": job.run_id, "instance_id": job.instance_id, "condition": job.condition,
                        "repetition": job.repetition, "solution_state": solution_state(job.solution_state)}  # fmt: skip
            record(grade.model_copy(update=identity))

        for test_cmd, group in by_command.items():
            command = TestCommand(test_cmd)
            require_per_test(command)
            run_jobs(repo, command, config, group, record_job, grade_solution)
    current = {s.run_id for s in solutions}
    grades = sorted((g for run_id, g in done.items() if run_id in current), key=_sort_key)
    write_atomic(rundir / GRADES_FILE, dump_jsonl(grades))
    journal_path.unlink(missing_ok=True)
    return GradeSummary(rundir=rundir, tasks=taskset.path, grades=grades, graded=finished,
                        reused=len(solutions) - len(pending))  # fmt: skip


def _safe(run_id: str) -> str:
    """A run id as a file name (ids are ours, but a log path must never leave its folder)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id).lstrip(".") or "run"


def grade_rundir(
    rundir: Path,
    overrides: dict | None = None,
    *,
    force: bool = False,
    on_grade: Callable[[Grade, int, int], None] | None = None,
    p2p_suite: bool = False,
) -> GradeSummary:
    """Grade every run of a ``tasks run`` directory (settings as :func:`~reviewbench.config.resolve_test_settings`)."""
    from .solutions import read_solutions

    tasks_path, solutions = read_solutions(rundir)
    taskset = read_tasks(tasks_path)
    config = resolve_test_settings(Path(taskset.meta.repo.path), overrides or {})
    return grade_solutions(rundir, taskset, solutions, config, force=force, on_grade=on_grade, p2p_suite=p2p_suite)
