"""Reading one file's section of a git diff: its paths, blobs and changed line blocks.

Hunks are walked directly (git's output is regular); paths come from git's own header
lines, undoing its C-style quoting of unusual file names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ..git.quote import unquote_path  # git's quoting: one home, in git/
from ..git.stream import RawSection
from .languages import language_for

__all__ = ["Block", "FileChange", "unquote_path"]

_INDEX = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)")
#: First line of every git-LFS pointer file.
LFS_POINTER_HEADER = b"version https://git-lfs.github.com/spec/"
_SYMLINK_MODE = " 120000"
_MODE_LINES = ("index ", "new file mode", "deleted file mode", "old mode", "new mode")
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "surrogateescape").rstrip("\n")


def _strip_prefix(path: str) -> str | None:
    if path == "/dev/null":
        return None
    path = unquote_path(path)
    return path.split("/", 1)[1] if "/" in path else path


def _header_path(value: str) -> str | None:
    # "--- a/name\t" : git appends a tab when the name contains a space.
    return _strip_prefix(value[:-1] if value.endswith("\t") else value)


def _paths_from_diff_line(rest: str) -> tuple[str, str]:
    """Both paths of ``diff --git a/X b/Y`` when no other header names them."""
    if rest.startswith('"'):
        end = rest.index('"', 1)
        while rest[end - 1] == "\\" and rest[end - 2 : end] != "\\\\":
            end = rest.index('"', end + 1)
        first, second = rest[: end + 1], rest[end + 2 :]
    else:
        half = (len(rest) - 1) // 2
        first, second = rest[:half], rest[half + 1 :]
    return _strip_prefix(first) or "", _strip_prefix(second) or ""


@dataclass(frozen=True)
class Block:
    """A run of consecutive changed lines in one hunk.

    ``new_lines`` are the line numbers, in the post-patch file, of the lines the block
    adds; ``anchor`` is the last unchanged post-patch line before the block (0 at the top).
    """

    new_lines: tuple[int, ...]
    anchor: int
    added: tuple[str, ...]
    removed: tuple[str, ...]

    def span(self) -> tuple[int, int]:
        """The block's line range in the post-patch file (a pure deletion spans its seam)."""
        if self.new_lines:
            return min(self.new_lines), max(self.new_lines)
        return max(self.anchor, 1), self.anchor + 1


class FileChange:
    """One file of a diff, parsed lazily."""

    def __init__(self, section: RawSection) -> None:
        self.section = section
        old = new = None
        minus = plus = rename_from = rename_to = None
        self.old_blob: str | None = None
        self.new_blob: str | None = None
        self.added_file = self.deleted_file = False
        self.symlink = False  # either side is a symbolic link (mode 120000)
        for raw in section.header:
            line = _decode(raw)
            if line.startswith("--- "):
                minus = line[4:]
            elif line.startswith("+++ "):
                plus = line[4:]
            elif line.startswith("rename from "):
                rename_from = unquote_path(line[12:])
            elif line.startswith("rename to "):
                rename_to = unquote_path(line[10:])
            elif line.startswith("new file mode"):
                self.added_file = True
            elif line.startswith("deleted file mode"):
                self.deleted_file = True
            elif m := _INDEX.match(raw):
                self.old_blob, self.new_blob = m.group(1).decode(), m.group(2).decode()
            if line.endswith(_SYMLINK_MODE) and line.startswith(_MODE_LINES):
                self.symlink = True
        if rename_from is not None and rename_to is not None:
            old, new = rename_from, rename_to
        elif minus is not None and plus is not None:
            old, new = _header_path(minus), _header_path(plus)
        else:
            old, new = _paths_from_diff_line(_decode(section.header[0])[len("diff --git ") :])
        if self.added_file:
            old = None
        if self.deleted_file:
            new = None
        self.old_path: str | None = old
        self.new_path: str | None = new
        if self.new_blob and set(self.new_blob) == {"0"}:
            self.new_blob = None

    @property
    def path(self) -> str:
        """The path after the patch, or before it for a deletion."""
        return self.new_path or self.old_path or ""

    @property
    def binary(self) -> bool:
        return self.section.binary

    @cached_property
    def lfs_pointer(self) -> bool:
        """The file is a git-LFS pointer on either side: its text names a blob elsewhere,
        so a "change" is a new object id, not code a reviewer could read."""
        return any(raw[1:].startswith(LFS_POINTER_HEADER) for raw in self.section.body or ()
                   if raw[:1] in (b"+", b"-", b" "))  # fmt: skip

    @cached_property
    def blocks(self) -> tuple[Block, ...]:
        """The changed-line blocks of every hunk, in order.

        A direct walk over the hunk lines already in memory: git's output is regular, and
        re-parsing it with a general patch parser cost more than git took to produce it.
        """
        blocks: list[Block] = []
        new_lines: list[int] = []
        added: list[str] = []
        removed: list[str] = []
        target = anchor = 0

        def close() -> None:
            if new_lines or removed:
                blocks.append(Block(tuple(new_lines), anchor, tuple(added), tuple(removed)))
                new_lines.clear()
                added.clear()
                removed.clear()

        for raw in self.section.body or ():
            first = raw[:1]
            if first == b"+":
                new_lines.append(target)
                added.append(raw[1:].decode("utf-8", "surrogateescape"))
                target += 1
            elif first == b"-":
                removed.append(raw[1:].decode("utf-8", "surrogateescape"))
            elif first == b" ":
                close()
                anchor = target
                target += 1
            elif first == b"@":
                close()
                m = _HUNK.match(raw)
                if m is None:
                    continue
                start, length = int(m.group(1)), int(m.group(2) or 1)
                # "+0,0" (the file ends up empty) anchors at 0; otherwise before the start.
                anchor = start if length == 0 else start - 1
                target = start
            # "\ No newline at end of file" changes no numbering.
        close()
        return tuple(blocks)

    def comments_only(self, language: str | None) -> bool:
        """True when every block changes comments (and whitespace) only: its removed and
        added lines read the same once ``language``'s comments are dropped (strings are
        code). A file added, deleted or renamed never is."""
        if self.old_path != self.new_path or not self.blocks:
            return False
        strip = language_for(language).uncommented
        return all(
            "".join("".join(strip(b.added)).split()) == "".join("".join(strip(b.removed)).split())
            for b in self.blocks
        )

    def whitespace_only(self) -> bool:
        """True when every block only re-spaces its lines (``git diff -w`` would be empty)."""
        return all(
            "".join("".join(b.added).split()) == "".join("".join(b.removed).split())
            for b in self.blocks
        )
