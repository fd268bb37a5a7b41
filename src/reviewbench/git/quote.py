"""Git's quoting of path names in diff headers and ``--name-only`` output."""

from __future__ import annotations

import re

__all__ = ["read_quoted", "unquote_path"]

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_OCTAL = re.compile(r"[0-3][0-7]{2}")


def read_quoted(text: str) -> tuple[str, str]:
    """A C-style quoted git path at the start of ``text``: (path, rest of the text).

    Strict, for untrusted diffs: an unknown escape or a missing closing quote is a
    ``ValueError``. Bytes that are not UTF-8 survive as surrogate escapes, so the name
    round-trips.
    """
    if not text.startswith('"'):
        raise ValueError(f"not a quoted path: {text!r}")
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode("utf-8", "surrogateescape"), text[i + 1 :]
        if char == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if _OCTAL.match(text, i + 1):
                out.append(int(text[i + 1 : i + 4], 8))
                i += 4
                continue
            raise ValueError(f"bad escape in quoted path {text!r}")
        out.extend(char.encode("utf-8", "surrogateescape"))
        i += 1
    raise ValueError(f"unterminated quoted path {text!r}")


def unquote_path(text: str) -> str:
    """Undo git's quoting of a whole path (``"a/caf\\303\\251.py"``); plain paths, and
    anything git would not have written, pass through unchanged."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        try:
            path, rest = read_quoted(text)
        except ValueError:
            return text
        if not rest:
            return path
    return text
