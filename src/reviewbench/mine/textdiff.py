"""Unified diffs of one file in git's own format, and line arithmetic between two texts.

Mutation, control and rename-variant patches are computed here rather than by git, but
they must be indistinguishable from the fix reversals git writes: same headers, full blob
ids, three lines of context and git's hunk-header function names (its default rule, or
its built-in Python rule when ``.gitattributes`` says ``diff=python``). A reviewer must not
be able to tell a case's source from the shape of its diff.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Sequence

__all__ = [
    "blob_id",
    "changed_size",
    "changed_span",
    "file_diff",
    "line_map",
    "split_lines",
]

_CONTEXT = 3
_FUNC_LEN = 80  # git keeps at most 80 bytes of a hunk's function line
_PY_FUNC = re.compile(r"^[ \t]*((class|(async[ \t]+)?def)[ \t].*)$")
_NEEDS_QUOTE = re.compile(r'["\\\x00-\x1f\x7f]')
_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
                  "\r": "\\r", '"': '\\"', "\\": "\\\\"}  # fmt: skip


def blob_id(data: bytes) -> str:
    """The id git gives a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _quoted(prefix: str, path: str) -> str:
    """``a/path`` as git writes it: C-quoted when the name holds quotes, backslashes or controls."""
    name = prefix + path
    if not _NEEDS_QUOTE.search(name):
        return name
    body = "".join(_QUOTE_ESCAPES.get(ch, f"\\{ord(ch):03o}" if ord(ch) < 32 or ord(ch) == 127 else ch)
                   for ch in name)  # fmt: skip
    return f'"{body}"'


def _func_line(lines: Sequence[str], before: int, python: bool) -> str:
    """The function name git prints after ``@@``: the nearest matching line above ``before``."""
    for index in range(before - 1, -1, -1):
        text = lines[index].rstrip("\n")
        if python:
            m = _PY_FUNC.match(text)
            if m is None:
                continue
            text = m.group(1)
        elif not (text[:1].isalpha() or text[:1] in ("_", "$")):
            continue
        raw = text.encode("utf-8", "surrogateescape")[:_FUNC_LEN]
        return raw.decode("utf-8", "surrogateescape").rstrip()
    return ""


def split_lines(text: str) -> list[str]:
    """Lines as git sees them: split on "\\n" only (``str.splitlines`` also splits on form feeds)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _range(start: int, length: int) -> str:
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _body_lines(sign: str, lines: Sequence[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(sign + line)
        else:
            out.append(sign + line + "\n\\ No newline at end of file\n")
    return out


def file_diff(path: str, old: str, new: str, *, mode: str = "100644", python_funcnames: bool = False) -> bytes:
    """A ``git apply``-able diff changing ``path`` from ``old`` to ``new`` (same name, same mode).

    Args:
        mode: the file's mode at the base commit, as ``git ls-tree`` prints it.
        python_funcnames: use git's Python rule for hunk headers (``diff=python``).
    """
    a = split_lines(old)
    b = split_lines(new)
    old_bytes = old.encode("utf-8", "surrogateescape")
    new_bytes = new.encode("utf-8", "surrogateescape")
    out = [
        f"diff --git {_quoted('a/', path)} {_quoted('b/', path)}\n",
        f"index {blob_id(old_bytes)}..{blob_id(new_bytes)} {mode}\n",
    ]
    tab = "\t" if " " in path else ""
    out.append(f"--- {_quoted('a/', path)}{tab}\n+++ {_quoted('b/', path)}{tab}\n")
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        func = _func_line(a, i1, python_funcnames)
        out.append(f"@@ -{_range(i1, i2 - i1)} +{_range(j1, j2 - j1)} @@{' ' + func if func else ''}\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(_body_lines(" ", a[x1:x2]))
                continue
            out.extend(_body_lines("-", a[x1:x2]))
            out.extend(_body_lines("+", b[y1:y2]))
    return "".join(out).encode("utf-8", "surrogateescape")


def _trim(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two line lists."""
    limit = min(len(a), len(b))
    prefix = 0
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def changed_size(old: str, new: str) -> int:
    """Lines one contiguous edit touches: the larger of lines removed and lines written."""
    a, b = split_lines(old), split_lines(new)
    prefix, suffix = _trim(a, b)
    return max(len(a) - prefix - suffix, len(b) - prefix - suffix)


def changed_span(old: str, new: str) -> tuple[int, int]:
    """The edited line range in ``new`` (1-based, inclusive), for gold locations.

    A pure deletion is located at its seam, the lines either side of it, as fix reversals
    are (docs/CORPUS.md).
    """
    a, b = split_lines(old), split_lines(new)
    prefix, suffix = _trim(a, b)
    end = len(b) - suffix
    if end > prefix:
        return prefix + 1, end
    return max(prefix, 1), prefix + 1


def line_map(old: str, new: str) -> dict[int, int]:
    """Where each line of ``old`` went in ``new`` (1-based), for lines that survived.

    Lines inside an edited block of equal size map position by position (a rename rewrites
    a line in place); lines of blocks that grew or shrank do not map.
    """
    a, b = split_lines(old), split_lines(new)
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                mapping[i1 + k + 1] = j1 + k + 1
    return mapping
