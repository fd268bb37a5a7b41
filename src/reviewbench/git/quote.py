"""Git's quoting of path names in diff headers and ``--name-only`` output."""

from __future__ import annotations

__all__ = ["unquote_path"]

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(text: str) -> str:
    """Undo git's quoting of a path (``"a/caf\\303\\251.py"``); plain paths pass through.

    Bytes that are not UTF-8 survive as surrogate escapes, so the name round-trips.
    """
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        return text
    out = bytearray()
    body = text[1:-1]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567":
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "surrogateescape")
