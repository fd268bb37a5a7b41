"""The git questions natural-history mining asks: which lines a fix removed, who wrote them.

``git blame`` is one process per (fix, file); natural-history mining asks it only for the
fix commits already mined, not for every commit of history.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from ..errors import GitError
from .repo import GIT, Repository

__all__ = [
    "BlameLine",
    "CommitInfo",
    "RemovedLines",
    "blame",
    "changed_files",
    "commit_info",
    "diff_bytes",
    "ignore_revs",
    "removed_lines",
    "removed_texts",
    "show_file",
]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SHA = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")


@dataclass(frozen=True)
class RemovedLines:
    """Lines a commit removed from one file, numbered in its parent."""

    old_path: str
    new_path: str | None
    lines: tuple[int, ...]
    texts: tuple[str, ...]
    added: tuple[str, ...]


@dataclass(frozen=True)
class BlameLine:
    """Who wrote one line: the commit, the file's name there and the line's number there."""

    final_line: int
    commit: str
    orig_path: str
    orig_line: int


def _run(repo: Repository, *args: str, check: bool = True) -> bytes:
    try:
        proc = subprocess.run([*GIT, "-C", str(repo.path), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {repo.path}: {detail[-1] if detail else 'no output'}")
    return proc.stdout


def diff_bytes(repo: Repository, old: str, new: str, paths: list[str], *, renames: bool = False) -> bytes:
    """``git diff OLD NEW -- PATHS`` as bytes, in git's own patch format (``--binary``);
    with ``renames``, a moved file is one rename section (``-M``), as ``git apply`` takes it."""
    if not paths:
        return b""
    moves = "-M" if renames else "--no-renames"
    return _run(repo, "diff", "--no-color", "--no-ext-diff", moves, "--binary", "--full-index", old, new, "--", *paths)


def removed_lines(repo: Repository, parent: str, commit: str) -> list[RemovedLines]:
    """Per file: the lines ``commit`` removed or modified, numbered at ``parent`` (renames followed)."""
    out = _run(repo, "diff", "--no-color", "--no-ext-diff", "-U0", "-M", parent, commit)
    files: list[RemovedLines] = []
    old_path = new_path = None
    lines: list[int] = []
    texts: list[str] = []
    added: list[str] = []
    cursor = 0

    def close() -> None:
        if old_path is not None and (lines or added):
            files.append(RemovedLines(old_path, new_path, tuple(lines), tuple(texts), tuple(added)))

    for raw in out.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("diff --git "):
            close()
            old_path = new_path = None
            lines, texts, added = [], [], []
        elif line.startswith("--- "):
            old_path = None if line == "--- /dev/null" else _unprefix(line[4:], "a/")
        elif line.startswith("+++ "):
            new_path = None if line == "+++ /dev/null" else _unprefix(line[4:], "b/")
        elif m := _HUNK.match(line):
            cursor = int(m.group(1))
        elif line.startswith("-") and old_path is not None:
            lines.append(cursor)
            texts.append(line[1:])
            cursor += 1
        elif line.startswith("+"):
            added.append(line[1:])
    close()
    return files


def _unprefix(path: str, prefix: str) -> str:
    if path.startswith('"'):
        from .quote import unquote_path

        path = unquote_path(path)
    return path.removeprefix(prefix)


def ignore_revs(repo: Repository, rev: str) -> list[str]:
    """Commits listed in ``.git-blame-ignore-revs`` at ``rev`` (comments and blanks skipped)."""
    data = _run(repo, "show", f"{rev}:.git-blame-ignore-revs", check=False)
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        word = line.split("#", 1)[0].strip()
        if _SHA.match(word):
            found.append(word)
    return found


def blame(
    repo: Repository, rev: str, path: str, lines: list[int], ignore: list[str], *, follow: bool = True
) -> list[BlameLine]:
    """Blame ``lines`` of ``path`` at ``rev``, whitespace ignored, the ``ignore`` commits passed
    over (``--ignore-rev``); with ``follow``, lines moved or copied within and across files are
    traced to where they were first written (``-M -C``)."""
    if not lines:
        return []
    args = ["blame", "--porcelain", "-w", *(["-M", "-C"] if follow else [])]
    for sha in ignore:
        args += ["--ignore-rev", sha]
    for start, end in _ranges(lines):
        args += ["-L", f"{start},{end}"]
    out = _run(repo, *args, rev, "--", path, check=False)
    found: list[BlameLine] = []
    filenames: dict[str, str] = {}
    current: tuple[str, int, int] | None = None
    for raw in out.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("\t"):
            if current is not None:
                sha, orig, final = current
                found.append(BlameLine(final, sha, filenames.get(sha, path), orig))
            current = None
            continue
        parts = line.split(" ")
        if len(parts) >= 3 and _SHA.match(parts[0]):
            current = (parts[0], int(parts[1]), int(parts[2]))
        elif line.startswith("filename ") and current is not None:
            filenames[current[0]] = line[len("filename ") :]
    return found


def removed_texts(repo: Repository, sha: str) -> frozenset[str]:
    """The lines ``sha`` removed from any file, whitespace squeezed (none for a root commit):
    what tells a move (the old copy deleted) from a copy."""
    out = _run(repo, "diff-tree", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames", sha, check=False)
    return frozenset(" ".join(raw[1:].decode("utf-8", "surrogateescape").split())
                     for raw in out.split(b"\n") if raw.startswith(b"-") and not raw.startswith(b"--- "))  # fmt: skip


def _ranges(lines: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for number in sorted(set(lines)):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    return ranges


@dataclass(frozen=True)
class CommitInfo:
    """What natural-history mining needs to know of an introducing commit."""

    sha: str
    parents: tuple[str, ...]
    author_date: str
    commit_date: str
    subject: str


def commit_info(repo: Repository, sha: str) -> CommitInfo:
    out = _run(repo, "show", "-s", "--format=%H%x1f%P%x1f%aI%x1f%cI%x1f%s", sha).decode("utf-8", "replace")
    full, parents, adate, cdate, subject = out.strip().split("\x1f", 4)
    return CommitInfo(full, tuple(parents.split()), adate, cdate, subject)


def changed_files(repo: Repository, parent: str, commit: str) -> list[tuple[str, str | None, str | None]]:
    """``(status, old path, new path)`` of every file ``commit`` changed against ``parent`` (renames found)."""
    out = _run(repo, "diff", "--name-status", "-z", "-M", parent, commit).decode("utf-8", "surrogateescape")
    fields = out.split("\0")
    result: list[tuple[str, str | None, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[0] in "RC":
            result.append((status[0], fields[i + 1], fields[i + 2]))
            i += 3
        else:
            path = fields[i + 1]
            result.append((status[0], None if status[0] == "A" else path, None if status[0] == "D" else path))
            i += 2
    return result


def show_file(repo: Repository, rev: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``rev``, or None when it is not there."""
    try:
        proc = subprocess.run([*GIT, "-C", str(repo.path), "cat-file", "blob", f"{rev}:{path}"],
                              capture_output=True, check=False)  # fmt: skip
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    return proc.stdout if proc.returncode == 0 else None
