"""Append-only JSONL logs of a run directory (exclusions, hand readings): one record a line,
appended with ``O_APPEND`` and synced, read back line by line as typed records."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import UsageError

__all__ = ["append_line", "read_lines"]

T = TypeVar("T", bound=BaseModel)


def read_lines(path: Path, model: type[T], what: str) -> list[T]:
    """The records of the log at ``path``, oldest first (empty when there is none).

    Raises:
        UsageError: the file cannot be read, or a line is not ``what`` (its number named).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} cannot be read: {exc}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            raise UsageError(f"{path}:{number} is not {what}; the log is append-only: restore it") from None
    return out


def append_line(path: Path, entry: BaseModel) -> None:
    """Append ``entry`` as one line of the log at ``path`` (created if need be), synced."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (entry.model_dump_json() + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
