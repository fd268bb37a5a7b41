"""Crash-safe small files: an fsync'd append-only journal, and atomic replacement.

Validation and grading record each finished job in a journal before anything else, so an
interrupted run loses at most the job in flight; the final file replaces the old one in
one rename.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import CorpusError

__all__ = ["append_line", "read_journal", "write_atomic"]

T = TypeVar("T")


def append_line(path: Path, line: str) -> None:
    """Append one line and fsync it: once this returns, the entry survives a crash."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_journal(path: Path, parse: Callable[[bytes], T]) -> list[T]:
    """The entries of a journal (none when absent), each read by ``parse``.

    A torn last line is what a crash mid-write leaves, and is skipped; a line ``parse``
    rejects (ValueError, KeyError, TypeError) anywhere earlier is damage.

    Raises:
        CorpusError: a damaged line before the last.
    """
    if not path.is_file():
        return []
    lines = path.read_bytes().splitlines()
    entries: list[T] = []
    for number, raw in enumerate(lines, start=1):
        try:
            entries.append(parse(raw))
        except (ValueError, KeyError, TypeError):
            if number < len(lines):
                raise CorpusError(f"{path}:{number}: damaged journal line; delete the file to start over") from None
    return entries


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, after an fsync."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
