"""Finding fix tasks in history: fix commits that changed both source and tests.

The walk is the fix-reversal miner's (same filters, same single pass over history), run
forwards: PARENT -> FIX. The source part of the diff is the gold patch, the test part the
grading tests, the commit message (cleaned) the problem statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..git.stream import LogEntry, iter_diffs
from ..mine.fix_reversal import FixReversalMiner
from ..records import DropReason

__all__ = ["TEST_PATCH_MAX_LINES", "MinedTask", "TaskMiner", "problem_statement"]

#: Test patches past this many changed lines are dropped (``too_large``).
TEST_PATCH_MAX_LINES = 2000


@dataclass(frozen=True)
class MinedTask:
    """A candidate task before its tests are run."""

    entry: LogEntry
    patch: str
    test_patch: str
    gold_files: list[str]
    test_files: list[str]
    patch_lines: int


class TaskMiner(FixReversalMiner):
    """Yields candidate tasks newest first; ``stats.dropped`` counts the rest."""

    forward = True

    def tasks(self) -> Iterator[MinedTask]:
        kept = 0
        keep = max(self.config.max_lines, TEST_PATCH_MAX_LINES)
        stream = iter_diffs(self.repo.path, self._matching(), keep_lines=keep)
        try:
            for entry, sections in stream:
                if self._admit(entry, sections) is None:
                    continue
                if sections is None:
                    self._drop(DropReason.MERGE if len(entry.parents) > 1 else DropReason.NO_PARENT)
                    continue
                candidate = self._candidate(entry, sections)
                if candidate is None:
                    continue
                task = self._task(candidate.entry, candidate.source, candidate.test_changes)
                if task is None:
                    continue
                yield task
                kept += 1
                if self.config.limit is not None and kept >= self.config.limit:
                    break
        finally:
            stream.close()

    def _task(self, entry: LogEntry, source: list, tests: list) -> MinedTask | None:
        if not tests:
            self._drop(DropReason.NO_TEST_CHANGE)
            return None
        if any(c.binary for c in tests):
            self._drop(DropReason.BINARY)
            return None
        if any(c.section.body is None for c in tests):
            self._drop(DropReason.TOO_LARGE)
            return None
        try:
            patch = b"".join(c.section.raw() for c in source).decode("utf-8")
            test_patch = b"".join(c.section.raw() for c in tests).decode("utf-8")
        except UnicodeDecodeError:
            self._drop(DropReason.BINARY)  # JSON holds text; such bytes cannot round-trip
            return None
        return MinedTask(
            entry=entry,
            patch=patch,
            test_patch=test_patch,
            gold_files=sorted({p for c in source for p in (c.old_path, c.new_path) if p}),
            test_files=sorted({p for c in tests for p in (c.old_path, c.new_path) if p}),
            patch_lines=sum(c.section.changed for c in source),
        )


_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(-[Bb]y|-[Ii]d|-[Tt]o):\s", re.M)
_CHERRY = re.compile(r"^\(cherry picked from commit [0-9a-f]+\)\s*$", re.M)
_URL = re.compile(r"<?https?://\S+/(?:issues|pull|pulls|commit|commits|merge_requests|-/issues)/\S*>?")
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|related(?: to)?)\s*:?\s+"
    r"(?=(?:[\w.-]+/[\w.-]+)?(?:#|gh-|GH-)\d|<?https?://\S+/(?:issues|pulls?|commits?|merge_requests)/)",
    re.I,
)
_ISSUE = re.compile(r"(?<![\w/])(?:[\w.-]+/[\w.-]+)?(?:#|\bgh-|\bGH-)\d+\b")
_SHA = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_EMPTY_BRACKETS = re.compile(r"(?<!\w)(?:\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\])")
_DANGLING = re.compile(r"\b(?:see|in|from|commit|and|by)\s*(?=[.,;:)]|$)", re.I | re.M)
_LOOSE_PUNCT = re.compile(r"[ \t]+(?=[.,;:])")
_REPEATED_PUNCT = re.compile(r"([.,;:])(?:[ \t]*[.,;:])+")


def problem_statement(message: str) -> str:
    """The commit message without commit ids, issue/PR references and trailers.

    What remains is what a developer wrote about the problem; an id would point a solver
    (or a search) straight at the answer.
    """
    lines = [line for line in message.splitlines() if not _TRAILER.match(line)]
    text = "\n".join(lines)
    text = _CHERRY.sub("", text)
    text = _CLOSING.sub("", text)
    text = _URL.sub("", text)
    text = _ISSUE.sub("", text)
    text = _SHA.sub("", text)
    text = _EMPTY_BRACKETS.sub("", text)
    text = _DANGLING.sub("", text)
    text = _LOOSE_PUNCT.sub("", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    cleaned = [re.sub(r"[ \t]{2,}", " ", line).rstrip(" \t,;:") for line in text.splitlines()]
    out = "\n".join(cleaned)
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return out
