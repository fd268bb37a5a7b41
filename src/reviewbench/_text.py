"""Untrusted text made safe to print: control, format and bidirectional characters escaped.

File names come from repositories, titles from file names, claims from models. Printed as
they are, U+202E (RIGHT-TO-LEFT OVERRIDE) makes a terminal or browser show "exe.py" for
"yp.exe", a newline forges a row, ESC drives the terminal. :func:`printable` shows each
such character as an escape (``\\u202e``, ``\\n``, ``\\x1b``) and leaves every other
character, accented or not Latin, as it is. It is for display only: records keep the exact
names.
"""

from __future__ import annotations

import unicodedata

__all__ = ["UNSAFE_CATEGORIES", "counted", "printable"]

#: Unicode categories escaped: controls (C0, DEL, C1), format (bidi embeddings, overrides
#: and isolates, zero-width characters, the BOM), lone surrogates (bytes of a name that is
#: not UTF-8), and the line and paragraph separators.
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(value: object, *, newlines: bool = False) -> str:
    """``value`` as text a terminal or page shows as it is.

    Args:
        newlines: keep ``\\n`` and ``\\t`` (a message of several lines, a code excerpt);
            otherwise they are escaped too, as a name or a cell must stay on one line.
    """
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():  # no "Other" or "Separator" but space: nothing to escape (the usual case)
        return text
    out = []
    for char in text:
        if newlines and char in "\n\t":
            out.append(char)
        elif unicodedata.category(char) in UNSAFE_CATEGORIES:
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


def counted(n: int, noun: str) -> str:
    """``n`` and a regular ``noun`` in the number it takes ("1 run", "0 cases"): the
    terminal and the report say their counts alike."""
    return f"{n} {noun}" + ("" if n == 1 else "s")
