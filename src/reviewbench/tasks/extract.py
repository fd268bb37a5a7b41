"""Finding the unified diff in a chat model's answer, tolerantly, and writing it so git applies it.

Models wrap diffs in prose and fences, split them over several fenced blocks, forget the
``a/`` ``b/`` prefixes, get hunk line counts wrong, and drop the space of blank context
lines. :func:`extract_diff` reads past all of that:

1. fenced blocks (```` ``` ```` or ``~~~``, any info string) that hold a diff are taken,
   all of them, in order; with no such block the whole answer is searched;
2. file sections start at ``diff --git`` or at a ``---`` line followed by ``+++``; hunks
   at ``@@``; a hunk ends at the next header or at the first line that is not diff syntax
   (prose after the diff);
3. each hunk's header is recomputed from its body (line counts are the most common model
   error; starts are kept, since git searches near them), a blank line inside a hunk is
   context, and blank lines closing a hunk are dropped;
4. paths get ``a/`` ``b/`` prefixes when they have none; timestamps after a tab go.

The answer is data: nothing in it is run, and a path it names is only written into the
patch (the grader refuses paths outside the tree before applying anything).

Returns the diff text (ending in a newline), ``""`` when the answer gives an explicitly
empty diff block, and None when no diff can be found (the run is then ``invalid``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

__all__ = ["extract_diff"]

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\n`]*)$")
_HUNK = re.compile(r"^@@+ *(?:-(\d+)(?:,(\d+))? +\+(\d+)(?:,(\d+))?|[^@]*?) *@@+(.*)$")
_GIT_HEADER = re.compile(r"^diff --git (.+)$")
_EXTENDED = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "similarity index ",
             "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "index ")  # fmt: skip
_DIFF_INFOS = {"diff", "patch", "udiff", "git"}


@dataclass
class _Hunk:
    start: int | None
    """Old-side start line from the header; None when the header gave no numbers."""
    tail: str
    lines: list[str] = field(default_factory=list)


@dataclass
class _Section:
    old: str | None = None
    new: str | None = None
    git_paths: str | None = None
    extended: list[str] = field(default_factory=list)
    hunks: list[_Hunk] = field(default_factory=list)


def _fenced_blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(info string, body lines) of every fenced block; an unclosed fence runs to the end."""
    blocks: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        marker, info = m.group(1), m.group(2).strip().lower()
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if close and close.group(1)[0] == marker[0] and len(close.group(1)) >= len(marker) and not close.group(2).strip():
                break
            body.append(lines[i])
            i += 1
        blocks.append((info, body))
        i += 1
    return blocks


def _looks_like_diff(lines: list[str]) -> bool:
    return any(line.startswith(("diff --git ", "@@")) for line in lines) or any(
        a.startswith("--- ") and b.startswith("+++ ") for a, b in itertools.pairwise(lines)
    )


def _header_path(value: str) -> str:
    value = value.rstrip()
    if not value.startswith('"') and "\t" in value:
        value = value.split("\t", 1)[0]  # diff -u appends a timestamp after a tab
    return value.strip()


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _sections(lines: list[str]) -> list[_Section]:
    sections: list[_Section] = []
    current: _Section | None = None
    hunk: _Hunk | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _GIT_HEADER.match(line):
            current, hunk = _Section(git_paths=m.group(1)), None
            sections.append(current)
            i += 1
            while i < len(lines) and lines[i].startswith(_EXTENDED):
                if not lines[i].startswith("index "):
                    current.extended.append(lines[i])
                i += 1
            continue
        if _is_file_header(lines, i):
            if current is None or current.old is not None or current.hunks:
                current = _Section()
                sections.append(current)
            current.old, current.new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            hunk = None
            i += 2
            continue
        if (m := _HUNK.match(line)) and current is not None:
            hunk = _Hunk(start=int(m.group(1)) if m.group(1) else None, tail=m.group(5))
            current.hunks.append(hunk)
            i += 1
            continue
        if hunk is not None:
            if line[:1] in (" ", "+", "-", "\\"):
                hunk.lines.append(line)
                i += 1
                continue
            if line.strip() == "":
                hunk.lines.append(" ")  # a blank context line whose space was stripped
                i += 1
                continue
            hunk = None  # prose after the diff
            current = None if current is not None and current.hunks else current
        i += 1
    return sections


def _split_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    """Paths without their ``a/`` ``b/`` prefixes (kept when only one side has one)."""
    def bare(path: str | None) -> str | None:
        return None if path in (None, "/dev/null") else path

    o, n = bare(old), bare(new)
    prefixed = (o is None or o.startswith("a/")) and (n is None or n.startswith("b/")) and (o or n)
    if prefixed:
        o = o[2:] if o else None
        n = n[2:] if n else None
    return o, n


def _render_hunk(hunk: _Hunk, old_start: int, new_start: int) -> tuple[list[str], int, int]:
    body = list(hunk.lines)
    while body and body[-1] == " ":  # blank lines closing a hunk were separators
        body.pop()
    old_count = sum(1 for line in body if line[:1] in (" ", "-"))
    new_count = sum(1 for line in body if line[:1] in (" ", "+"))
    return [f"@@ -{old_start},{old_count} +{new_start},{new_count} @@{hunk.tail}", *body], old_count, new_count


def _render(section: _Section) -> list[str]:
    old, new = _split_prefixes(section.old, section.new)
    if section.git_paths is not None and old is None and new is None:
        m = re.match(r"^a/(.+) b/(.+)$", section.git_paths) or re.match(r"^(\S+) (\S+)$", section.git_paths)
        if m:
            old, new = m.group(1), m.group(2)
    if old is None and new is None:
        return []
    created = section.old == "/dev/null" or (section.old is None and any(
        e.startswith("new file mode") for e in section.extended))  # fmt: skip
    deleted = section.new == "/dev/null" or (section.new is None and any(
        e.startswith("deleted file mode") for e in section.extended))  # fmt: skip
    old_path = old or new
    new_path = new or old
    out: list[str] = []
    if section.extended:
        out.append(f"diff --git a/{old_path} b/{new_path}")
        out.extend(section.extended)
    hunks = [h for h in section.hunks if any(line[:1] in "+-" for line in h.lines)]
    if not hunks:
        return out if section.extended else []
    out.append("--- /dev/null" if created else f"--- a/{old_path}")
    out.append("+++ /dev/null" if deleted else f"+++ b/{new_path}")
    previous_end = 0
    delta = 0
    for hunk in hunks:
        start = hunk.start if hunk.start is not None else max(2, previous_end + 1)
        if created:
            old_start, new_start = 0, 1
        elif deleted:
            old_start, new_start = 1, 0
        else:
            old_start, new_start = start, max(start + delta, 0)
        lines, old_count, new_count = _render_hunk(hunk, old_start, new_start)
        out.extend(lines)
        previous_end = start + max(old_count - 1, 0)
        delta += new_count - old_count
    return out


def extract_diff(text: str) -> str | None:
    """The unified diff in a model's answer ("" for an explicitly empty one), or None."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = _fenced_blocks(lines)
    diff_blocks = [body for _, body in blocks if _looks_like_diff(body)]
    if diff_blocks:
        candidates = diff_blocks
    elif blocks and all(info in _DIFF_INFOS and not any(line.strip() for line in body) for info, body in blocks):
        return ""  # the model answered with an empty diff block: no change
    else:
        candidates = [lines]
    rendered: list[str] = []
    for candidate in candidates:
        for section in _sections(candidate):
            rendered.extend(_render(section))
    if not rendered:
        return None
    return "\n".join(rendered) + "\n"
