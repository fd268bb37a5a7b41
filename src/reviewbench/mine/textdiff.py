"""Unified diffs of one file in git's own format, and line arithmetic between two texts.

Mutation, control and rename-variant patches have no commit to diff, but they must be
indistinguishable from the fix reversals git writes, or a reviewer could tell a case's
source from the shape of its diff. So git computes the hunks (``git diff --no-index`` on
temporary files: its algorithm decides how a moved line is shown), and the headers are
written here as ``git diff`` writes them for a real path: full blob ids, the file mode, and
hunk-header function names by git's default rule or its Python rule (``diff=python``).
``tests/mine/test_mutations.py`` checks every patch byte for byte against ``git diff``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT

__all__ = [
    "blob_id",
    "changed_size",
    "changed_span",
    "common_ends",
    "file_diff",
    "line_map",
    "split_lines",
]

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
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


def _git_hunks(old: bytes, new: bytes, cwd: Path | None) -> list[bytes]:
    """The hunk lines git writes for ``old`` → ``new``: git's own diff algorithm and heuristics,
    so that a moved line is shown exactly as ``git diff`` would show it."""
    with tempfile.TemporaryDirectory(prefix="reviewbench-diff-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        a.write_bytes(old)
        b.write_bytes(new)
        proc = subprocess.run([*GIT, "diff", "--no-index", "--no-ext-diff", "--no-textconv", "-U3",
                               "--", str(a), str(b)], capture_output=True, cwd=cwd, check=False)  # fmt: skip
    if proc.returncode not in (0, 1):
        raise GitError(f"git diff --no-index failed: {proc.stderr.decode(errors='replace').strip()}")
    lines = proc.stdout.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.startswith(b"@@")), len(lines))
    return lines[first:]


def file_diff(path: str, old: str, new: str, *, mode: str = "100644", python_funcnames: bool = False,
              cwd: Path | None = None) -> bytes:  # fmt: skip
    """A ``git apply``-able diff changing ``path`` from ``old`` to ``new`` (same name, same mode).

    Hunks come from git itself (``git diff --no-index`` on temporary files); the headers
    and the hunk-header function names are written here, for the real path.

    Args:
        mode: the file's mode at the base commit, as ``git ls-tree`` prints it.
        python_funcnames: use git's Python rule for hunk headers (``diff=python``).
        cwd: where to run git (the repository, so that its diff settings apply).
    """
    old_bytes = old.encode("utf-8", "surrogateescape")
    new_bytes = new.encode("utf-8", "surrogateescape")
    tab = "\t" if " " in path else ""
    header = (
        f"diff --git {_quoted('a/', path)} {_quoted('b/', path)}\n"
        f"index {blob_id(old_bytes)}..{blob_id(new_bytes)} {mode}\n"
        f"--- {_quoted('a/', path)}{tab}\n+++ {_quoted('b/', path)}{tab}\n"
    )
    a = split_lines(old)
    out = [header.encode("utf-8", "surrogateescape")]
    for line in _git_hunks(old_bytes, new_bytes, cwd):
        m = _HUNK.match(line)
        if m:
            start, length = int(m.group(1)), int(m.group(2) or 1)
            func = _func_line(a, start - 1 if length else start, python_funcnames)
            line = m.group(0) + (b" " + func.encode("utf-8", "surrogateescape") if func else b"") + b"\n"
        out.append(line)
    return b"".join(out)


def common_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two line lists
    (or of two strings, character by character)."""
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
    prefix, suffix = common_ends(a, b)
    return max(len(a) - prefix - suffix, len(b) - prefix - suffix)


def changed_span(old: str, new: str) -> tuple[int, int]:
    """The edited line range in ``new`` (1-based, inclusive), for gold locations.

    A pure deletion is located at its seam, the lines either side of it, as fix reversals
    are (docs/CORPUS.md).
    """
    a, b = split_lines(old), split_lines(new)
    prefix, suffix = common_ends(a, b)
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
