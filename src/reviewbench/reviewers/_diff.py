"""Which post-patch lines a unified diff adds, per file.

Hunks are read by their line counts, so an added line that itself begins with ``+++`` or
``---`` is not mistaken for a file header.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["added_lines"]

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _unquote(path: str) -> str:
    """Undo git's C-style quoting (``"a/caf\\303\\251.py"``); plain paths pass through."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        try:
            raw = codecs.escape_decode(path[1:-1].encode("utf-8", "surrogateescape"))[0]
        except ValueError:
            return path[1:-1]
        return raw.decode("utf-8", "surrogateescape")
    return path


def _target(value: str) -> str | None:
    """The post-patch path named by a ``+++`` header (without its ``b/`` prefix)."""
    if not value.startswith('"'):
        value = value.split("\t", 1)[0]  # git appends a tab to names with spaces; diff -u a date
    value = _unquote(value.rstrip("\t"))
    if value == "/dev/null":
        return None
    return value.removeprefix("b/")


def added_lines(diff: str) -> dict[str, frozenset[int]]:
    """Post-patch line numbers of the lines ``diff`` adds, keyed by post-patch path."""
    found: dict[str, set[int]] = {}
    path: str | None = None
    old_left = new_left = 0
    line = 0
    for raw in diff.splitlines():
        if old_left > 0 or new_left > 0:
            tag = raw[:1]
            if tag == "+":
                if path is not None:
                    found.setdefault(path, set()).add(line)
                line += 1
                new_left -= 1
                continue
            if tag == "-":
                old_left -= 1
                continue
            if tag in (" ", ""):  # an empty line is context whose space was stripped
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
    return {name: frozenset(lines) for name, lines in found.items()}
