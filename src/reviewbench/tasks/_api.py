"""Entry point of ``tasks mine``: walk history, prove each candidate with its tests, write."""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .._version import __version__
from ..config import MineConfig, ValidateConfig
from ..errors import NoCases, NoMatchingCommits, UsageError
from ..git.remote import project_name
from ..git.repo import open_repository
from ..mine.naming import case_id
from ..records import TASK_DROP_REASONS, RepoInfo
from ..validate.environment import AUTO, build_environment, cache_home, chosen_python
from ..validate.executors import run_jobs
from ..validate.npm import NODE_MODULES, build_node_modules
from ..validate.testcmd import TestCommand, detect_test_command, is_node_project
from .check import TaskCheck, TaskJob, check_task
from .mine import MinedTask, TaskMiner, problem_statement
from .records import Task, TasksCounts, TasksMeta
from .store import check_output, write_tasks
from .testrun import require_per_test

__all__ = ["TasksSummary", "mine_tasks"]


@dataclass(frozen=True)
class TasksSummary:
    out: Path
    meta: TasksMeta
    scanned_commits: int


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def mine_tasks(
    config: MineConfig,
    out: Path,
    settings: ValidateConfig,
    *,
    force: bool = False,
    warn: Callable[[str], None] = _warn,
    on_task: Callable[[str, TaskCheck, int, int], None] | None = None,
) -> TasksSummary:
    """Mine fix tasks from ``config.repo`` into ``out`` (``tasks.jsonl``, ``tasks.json``, ``logs/``).

    Raises:
        NotAGitRepository, EmptyRepository: the repository cannot be mined.
        OutputExists: ``out`` is not empty and ``force`` is false.
        NoMatchingCommits: no commit message matched.
        NoCases: no candidate survived (``tasks.json`` is still written when tests ran).
        UsageError: no pytest or Node runner command, or the network cannot be denied.
    """
    repo = open_repository(config.repo)
    target = check_output(out, force)
    if target == repo.path.resolve() or target in repo.path.resolve().parents:
        raise UsageError(f"--out {out} would replace the repository being mined; choose another directory")
    if repo.shallow:
        warn(f"{repo.path} is a shallow clone: history is truncated, older fixes are missed")
    project = node_modules = None
    python = chosen_python(settings.python) if settings.python else None
    if settings.setup == AUTO and is_node_project(repo.path):
        node_modules = build_node_modules(cache_home(), repo.path, repo.head).path
    elif settings.setup:
        env = build_environment(cache_home(), repo.path, repo.head, settings.setup, base=python)
        python, project = env.python, env.project
        if project is not None and (project / NODE_MODULES).is_dir():
            node_modules = project / NODE_MODULES
    command = TestCommand(settings.test_cmd or detect_test_command(repo.path, python))
    require_per_test(command)
    miner = TaskMiner(config, repo)
    candidates = list(miner.tasks())
    stats = miner.stats
    if stats.matched == 0:
        raise NoMatchingCommits(
            f"no commit in {repo.path} matches {' or '.join(config.grep)} ({stats.scanned} commits scanned)"
        )
    dropped: Counter[str] = Counter({str(k): v for k, v in stats.dropped.items()})
    if not candidates:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items()))
        raise NoCases(f"{stats.matched} matching commits but none changed both source and tests (dropped: {reasons})")
    slug = project_name(str(repo.path), repo.remote)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".work", dir=target.parent))
    try:
        (work / "patches").mkdir()
        logs = work / "logs"
        logs.mkdir()
        by_id: dict[str, MinedTask] = {}
        jobs: list[TaskJob] = []
        for mined in candidates:
            instance_id = f"{slug}-{case_id(config.seed, mined.entry.sha).removeprefix('case-')}"
            by_id[instance_id] = mined
            gold, tests = work / "patches" / f"{instance_id}.diff", work / "patches" / f"{instance_id}.test.diff"
            gold.write_text(mined.patch, encoding="utf-8")
            tests.write_text(mined.test_patch, encoding="utf-8")
            jobs.append(TaskJob(instance_id, mined.entry.parents[0], gold, tests, tuple(mined.test_files),
                                logs / f"{instance_id}.log", products=project, node_modules=node_modules))  # fmt: skip
        checks: dict[str, TaskCheck] = {}
        lock = threading.Lock()

        def record(job: TaskJob, check: TaskCheck) -> None:
            with lock:
                checks[job.instance_id] = check
                if on_task:
                    on_task(job.instance_id, check, len(checks), len(jobs))

        run_jobs(repo.path, command, settings, jobs, record, handler=check_task)
        tasks: list[Task] = []
        for instance_id, check in checks.items():
            if check.dropped is not None:
                dropped[check.dropped.value] += 1
                continue
            mined = by_id[instance_id]
            tasks.append(Task(
                instance_id=instance_id, repo=repo.remote or str(repo.path),
                base_commit=mined.entry.parents[0], patch=mined.patch, test_patch=mined.test_patch,
                problem_statement=problem_statement(mined.entry.message),
                FAIL_TO_PASS=check.fail_to_pass, PASS_TO_PASS=check.pass_to_pass,
                created_at=mined.entry.date, fix_commit=mined.entry.sha, gold_files=mined.gold_files,
                test_files=mined.test_files, patch_lines=mined.patch_lines, test_cmd=command.command,
            ))  # fmt: skip

        def make_meta(tasks_sha256: str) -> TasksMeta:
            return TasksMeta(
                repo=RepoInfo(path=str(repo.path), remote=repo.remote, head=repo.head, shallow=repo.shallow),
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                tool_version=__version__,
                config={"mine": config.model_dump(mode="json"), "tests": settings.model_dump(mode="json")},
                test_cmd=command.command,
                counts=TasksCounts(
                    tasks=len(tasks), matched_commits=stats.matched, candidates=len(candidates),
                    dropped={r.value: dropped.get(r.value, 0) for r in TASK_DROP_REASONS},
                ),  # fmt: skip
                tasks_sha256=tasks_sha256,
            )

        meta = write_tasks(out, tasks, make_meta, force=force, logs=logs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not tasks:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items()) if v)
        raise NoCases(f"no candidate became a task (dropped: {reasons}); counts and logs are in {out}")
    return TasksSummary(out=out, meta=meta, scanned_commits=stats.scanned)
