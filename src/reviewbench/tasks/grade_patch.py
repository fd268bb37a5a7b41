"""Reading a solver's unified diff before anything applies it.

A solver's patch is untrusted input. It is parsed here, strictly, and refused when it does
not parse or when any path it names (``diff --git`` names, ``---``/``+++`` lines,
``rename``/``copy`` headers) is absolute, climbs out with ``..``, reaches into ``.git``,
or when it creates a symbolic link (which could point anywhere). Only a patch that passes
is handed to ``git apply``. The parse also gives the patch's size and the files it
touches, which is what overreach is measured on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import PatchRejected
from ..git.quote import read_quoted

__all__ = ["FileChange", "ParsedPatch", "PatchRejected", "parse_patch"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SYMLINK_MODE = "120000"
_NULL = "/dev/null"


@dataclass(frozen=True)
class FileChange:
    """One file section of a diff (paths relative to the tree; None for /dev/null)."""

    old_path: str | None
    new_path: str | None
    added: int = 0
    removed: int = 0


@dataclass(frozen=True)
class ParsedPatch:
    files: tuple[FileChange, ...]

    @property
    def paths(self) -> frozenset[str]:
        """Every path the patch changes, creates, deletes or renames (both names)."""
        return frozenset(p for f in self.files for p in (f.old_path, f.new_path) if p is not None)

    @property
    def lines(self) -> int:
        return sum(f.added + f.removed for f in self.files)


def _unquote(text: str) -> tuple[str, str]:
    try:
        return read_quoted(text)
    except ValueError as exc:
        raise PatchRejected(str(exc)) from None


def _header_path(value: str) -> str:
    """The path of a ``---``/``+++``/``rename``/``copy`` line (quoted or not; a trailing
    tab and timestamp, as traditional diffs write them, is dropped)."""
    if value.startswith('"'):
        path, _ = _unquote(value)
        return path
    return value.split("\t", 1)[0].rstrip("\r")


def _git_names(rest: str) -> tuple[str, str]:
    """The two names of a ``diff --git`` line."""
    if rest.startswith('"'):
        first, rest = _unquote(rest)
        rest = rest.lstrip(" ")
        return first, _header_path(rest)
    if rest.endswith('"'):
        cut = rest.rfind(' "')
        if cut < 0:
            raise PatchRejected(f"cannot read the names of 'diff --git {rest}'")
        return rest[:cut], _header_path(rest[cut + 1 :])
    # Unquoted names may hold spaces; git's own rule: both halves name the same file.
    half = (len(rest) - 1) // 2
    if (
        len(rest) % 2 == 1
        and rest[half] == " "
        and rest[:half].partition("/")[2] == rest[half + 1 :].partition("/")[2]
    ):
        return rest[:half], rest[half + 1 :]
    cut = rest.rfind(" b/")
    if cut < 0:
        raise PatchRejected(f"cannot read the names of 'diff --git {rest}'")
    return rest[:cut], rest[cut + 1 :]


def _check(raw: str) -> None:
    """Refuse a path that could leave the tree or touch the repository itself."""
    if raw == _NULL:
        return
    if not raw or "\0" in raw:
        raise PatchRejected("empty path in the patch")
    if raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        raise PatchRejected(f"absolute path {raw!r}: outside the tree")
    parts = re.split(r"[\\/]+", raw)
    if ".." in parts:
        raise PatchRejected(f"path {raw!r} climbs out of the tree")
    if any(p.lower() == ".git" for p in parts):
        raise PatchRejected(f"path {raw!r} is inside .git")


def _strip(raw: str | None) -> str | None:
    """git apply's default ``-p1``: drop the first component (``a/``, ``b/``)."""
    if raw is None or raw == _NULL:
        return None
    _check(raw)
    head, sep, tail = raw.partition("/")
    path = tail if sep else head
    _check(path)
    return path


def _full(raw: str) -> str:
    """A ``rename``/``copy`` path: already relative to the tree, no prefix to strip."""
    _check(raw)
    if raw == _NULL:
        raise PatchRejected("rename or copy names /dev/null")
    return raw


class _Section:
    def __init__(self) -> None:
        self.old: str | None = None
        self.new: str | None = None
        self.git_old: str | None = None
        self.git_new: str | None = None
        self.added = 0
        self.removed = 0
        self.hunks = 0
        self.extended = False  # a rename, copy, mode or deletion header: valid without hunks

    def done(self) -> FileChange:
        old = self.old if self.old is not None else self.git_old
        new = self.new if self.new is not None else self.git_new
        if not self.hunks and not self.extended:
            raise PatchRejected(f"file section for {new or old!r} has no hunk")
        return FileChange(old, new, self.added, self.removed)


def parse_patch(text: str) -> ParsedPatch:
    """Parse and check a unified diff (git's or a traditional one).

    Text before the first file section (prose, a commit message) is ignored, as
    ``git apply`` ignores it; inside a section every line must belong to a header or
    to a hunk, with the line counts its ``@@`` header promises.

    Raises:
        PatchRejected: the diff does not parse, holds no file, is binary, creates a
            symbolic link, or names a path outside the tree.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files: list[FileChange] = []
    section: _Section | None = None
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        if line.startswith("diff --git "):
            if section is not None:
                files.append(section.done())
            section = _Section()
            raw_old, raw_new = _git_names(line[len("diff --git ") :])
            section.git_old, section.git_new = _strip(raw_old), _strip(raw_new)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if (
                section is None
                or section.hunks
                or section.old is not None
                or section.new is not None
            ):
                if section is not None:
                    files.append(section.done())
                section = _Section()  # a traditional diff: no 'diff --git' line
            section.old = _strip(_header_path(line[4:]))
            section.new = _strip(_header_path(lines[i + 1].rstrip("\r")[4:]))
            if section.old is None and section.new is None:
                raise PatchRejected("a file section names /dev/null on both sides")
            i += 1
        elif section is None:
            pass  # prose before the first file
        elif line.startswith("@@"):
            match = _HUNK.match(line)
            if not match:
                raise PatchRejected(f"bad hunk header {line[:80]!r}")
            if section.old is None and section.new is None and section.git_new is None:
                raise PatchRejected("a hunk comes before any file header")
            old_left = int(match.group(2) if match.group(2) is not None else 1)
            new_left = int(match.group(4) if match.group(4) is not None else 1)
            section.hunks += 1
            while old_left > 0 or new_left > 0:
                i += 1
                if i >= len(lines):
                    raise PatchRejected(f"hunk {line[:60]!r} ends early")
                body = lines[i].rstrip("\r")
                tag = body[:1]
                if tag in (" ", ""):
                    old_left, new_left = old_left - 1, new_left - 1
                elif tag == "-":
                    old_left -= 1
                    section.removed += 1
                elif tag == "+":
                    new_left -= 1
                    section.added += 1
                elif tag == "\\":
                    continue
                else:
                    raise PatchRejected(
                        f"line {i + 1} of the patch is not part of hunk {line[:60]!r}"
                    )
                if old_left < 0 or new_left < 0:
                    raise PatchRejected(f"hunk {line[:60]!r} has more lines than its header says")
            if i + 1 < len(lines) and lines[i + 1].startswith("\\"):
                i += 1  # '\ No newline at end of file' after the last line
        elif line.startswith(("rename from ", "copy from ")):
            section.old = _full(_header_path(line.split(" ", 2)[2]))
            section.extended = True
        elif line.startswith(("rename to ", "copy to ")):
            section.new = _full(_header_path(line.split(" ", 2)[2]))
            section.extended = True
        elif line.startswith(("new file mode ", "new mode ", "deleted file mode ", "old mode ")):
            if line.split()[-1] == _SYMLINK_MODE and not line.startswith("deleted"):
                raise PatchRejected("the patch creates a symbolic link")
            section.extended = True
        elif line.startswith(("index ", "similarity index ", "dissimilarity index ")):
            pass
        elif line.startswith(("GIT binary patch", "Binary files ")):
            raise PatchRejected("binary patches are not graded")
        elif section.hunks:
            # Trailing text after a complete section (a signature, prose): git ignores it.
            files.append(section.done())
            section = None
        else:
            raise PatchRejected(
                f"line {i + 1} of the patch is neither a header nor a hunk: {line[:60]!r}"
            )
        i += 1
    if section is not None:
        files.append(section.done())
    if not files:
        raise PatchRejected("no file changes in the patch (not a unified diff)")
    return ParsedPatch(tuple(files))
