"""Reading a unified diff as a reviewer does: its hunks, and which post-patch lines it adds.

Hunks are read by their line counts, so an added line that itself begins with ``+++`` or
``---`` is not mistaken for a file header.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

__all__ = ["Hunk", "added_lines", "hunks"]

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


def _unquote(path: str) -> str:
    """Undo git's C-style quoting (``"a/caf\\303\\251.py"``); plain paths pass through."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        try:
            raw = codecs.escape_decode(path[1:-1].encode("utf-8", "surrogateescape"))[0]
        except ValueError:
            return path[1:-1]
        return raw.decode("utf-8", "surrogateescape")  # type: ignore[attr-defined]  # typeshed: str; it is bytes
    return path


def _target(value: str) -> str | None:
    """The post-patch path named by a ``+++`` header (without its ``b/`` prefix)."""
    if not value.startswith('"'):
        value = value.split("\t", 1)[0]  # git appends a tab to names with spaces; diff -u a date
    value = _unquote(value.rstrip("\t"))
    if value == "/dev/null":
        return None
    return value.removeprefix("b/")


@dataclass
class Hunk:
    """One hunk of a unified diff, as a reviewer reads it."""

    path: str | None
    """Post-patch path (None for a deleted file)."""
    start: int
    """Post-patch line the hunk's header starts at."""
    section: str
    """What git wrote after the ``@@`` header (the nearest definition above), if anything."""
    first_changed: int = 0
    """Post-patch line of the first added or removed line (a removal: the line after it)."""
    post: list[str] = field(default_factory=list)
    """The hunk's post-patch lines (context and added), from ``start``."""
    changed: list[str] = field(default_factory=list)
    """Added and removed lines without their ``+``/``-``, in diff order."""
    added: int = 0
    removed: int = 0
    added_at: list[int] = field(default_factory=list)
    """Post-patch line numbers of the added lines."""


def _walk(diff: str) -> list[Hunk]:
    """Every hunk of ``diff``, read by its line counts (those of deleted files too)."""
    out: list[Hunk] = []
    path: str | None = None
    old_left = new_left = 0
    line = 0
    for raw in diff.splitlines():
        if old_left > 0 or new_left > 0:
            tag, text = raw[:1], raw[1:]
            hunk = out[-1]
            if tag in ("+", "-") and not hunk.changed:
                hunk.first_changed = max(line, 1)
            if tag == "+":
                hunk.added_at.append(line)
                hunk.post.append(text)
                hunk.changed.append(text)
                hunk.added += 1
                line += 1
                new_left -= 1
                continue
            if tag == "-":
                hunk.changed.append(text)
                hunk.removed += 1
                old_left -= 1
                continue
            if tag in (" ", ""):
                hunk.post.append(text)
                line += 1
                old_left -= 1
                new_left -= 1
                continue
            if tag == "\\":
                continue
            old_left = new_left = 0  # counts were wrong: read it as a header line
        if raw.startswith("diff --git "):
            path = None
        elif raw.startswith("+++ "):
            path = _target(raw[4:])
        elif m := _HUNK.match(raw):
            old_left = int(m.group(1)) if m.group(1) is not None else 1
            line = int(m.group(2))
            new_left = int(m.group(3)) if m.group(3) is not None else 1
            out.append(Hunk(path=path, start=line, section=m.group(4).strip()))
    return out


def hunks(diff: str) -> list[Hunk]:
    """The hunks of ``diff`` that change a file still there after it, as a reviewer reads them."""
    return [h for h in _walk(diff) if h.changed and h.path is not None]


def added_lines(diff: str) -> dict[str, frozenset[int]]:
    """Post-patch line numbers of the lines ``diff`` adds, keyed by post-patch path."""
    found: dict[str, set[int]] = {}
    for hunk in _walk(diff):
        if hunk.path is not None and hunk.added_at:
            found.setdefault(hunk.path, set()).update(hunk.added_at)
    return {name: frozenset(lines) for name, lines in found.items()}


