"""The task directory: ``tasks.jsonl`` (one :class:`Task` per line) and ``tasks.json``.

Written like a corpus: into a staging directory, synced, then renamed into place, so a
reader never sees half a task set.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..errors import CorpusError, IntegrityError, OutputExists, UsageError
from ..store.corpus import dump_jsonl, read_jsonl, sha256_file, sync_filesystem
from .records import TASKS_FILE, TASKS_META, Task, TasksMeta

__all__ = ["LOG_DIR", "TaskSet", "check_output", "read_tasks", "write_tasks"]

LOG_DIR = "logs"


@dataclass(frozen=True)
class TaskSet:
    path: Path
    meta: TasksMeta
    tasks: list[Task]

    def by_id(self) -> dict[str, Task]:
        return {t.instance_id: t for t in self.tasks}


def check_output(out: Path, force: bool) -> Path:
    """The absolute output path, if a task set may be written there.

    Raises:
        OutputExists: ``out`` holds files and ``force`` is false, or holds no task set.
    """
    out = Path(os.path.abspath(out))
    if out.exists() and not out.is_dir():
        raise OutputExists(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise OutputExists(f"{out} exists and is not empty (use --force to replace it)")
        if not (out / TASKS_META).is_file():
            raise OutputExists(f"{out} is not empty and holds no {TASKS_META}; refusing to replace it")
    return out


def write_tasks(out: Path, tasks: list[Task], make_meta: Callable[[str], TasksMeta], force: bool = False,
                logs: Path | None = None) -> TasksMeta:  # fmt: skip
    """Write ``tasks`` (sorted by id), the meta built by ``make_meta(tasks_sha256)`` and the
    test logs (moved from ``logs``) to ``out``, all at once.

    Raises:
        OutputExists: see :func:`check_output`.
    """
    out = check_output(out, force)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as exc:
        raise UsageError(f"cannot create a task set at {out}: {exc.strerror} ({exc.filename})") from None
    try:
        ordered = sorted(tasks, key=lambda t: t.instance_id)
        (stage / TASKS_FILE).write_bytes(dump_jsonl(ordered))
        meta = make_meta(sha256_file(stage / TASKS_FILE))
        (stage / TASKS_META).write_bytes(meta.model_dump_json(indent=2).encode() + b"\n")
        if logs is not None and logs.is_dir():
            os.replace(logs, stage / LOG_DIR)
        sync_filesystem(stage)
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return meta


def read_tasks(path: Path) -> TaskSet:
    """Load and check a task directory.

    Raises:
        CorpusError: a file is missing, damaged, or changed since it was written.
    """
    meta_path = path / TASKS_META
    if not meta_path.is_file():
        raise CorpusError(f"{path} has no {TASKS_META}: not a task set (run 'reviewbench tasks mine' first)")
    try:
        meta = TasksMeta.model_validate_json(meta_path.read_bytes())
    except ValidationError as exc:
        raise CorpusError(f"{meta_path}: not a valid {TASKS_META} ({exc.errors()[0]['msg']})") from None
    tasks = read_jsonl(path / TASKS_FILE, Task)
    if sha256_file(path / TASKS_FILE) != meta.tasks_sha256:
        raise IntegrityError(f"{path / TASKS_FILE} changed since it was mined (its SHA-256 differs from {TASKS_META})")
    return TaskSet(path=path, meta=meta, tasks=tasks)
