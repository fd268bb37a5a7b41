"""Names in code: the function or class enclosing a line, and identifiers in changed lines."""

from __future__ import annotations

import keyword
import re

from .languages import language_for

__all__ = ["KEYWORDS", "SymbolIndex", "identifiers"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")

#: Keywords and ubiquitous words of the languages we mine; never useful as gold symbols.
KEYWORDS = frozenset(
    {k for k in (*keyword.kwlist, *keyword.softkwlist) if len(k) >= 4}
    | {
        "self", "cls", "None", "True", "False", "true", "false", "null", "nullptr", "undefined",
        "function", "const", "await", "async", "typeof", "instanceof", "this", "else", "case",
        "switch", "break", "continue", "default", "export", "extends", "implements", "static",
        "public", "private", "protected", "interface", "package", "throw", "throws", "final",
        "void", "struct", "enum", "impl", "match", "where", "crate", "super", "trait", "type",
        "func", "defer", "chan", "select", "range", "goto", "while", "yield", "lambda", "pass",
        "raise", "except", "finally", "assert", "global", "nonlocal", "elif", "with", "return",
        "import", "from", "class", "delete", "volatile", "unsigned", "signed", "short", "long",
        "double", "float", "char", "bool", "boolean", "string", "byte", "sizeof", "template",
        "typename", "namespace", "using", "virtual", "override", "readonly", "declare",
        "module", "require", "println", "print", "Self", "unsafe", "extern",
        "mut", "loop", "then", "elsif", "unless", "begin", "rescue", "ensure", "local", "end",
        "native", "synchronized", "transient", "abstract", "inline", "register", "typedef",
        "union", "auto", "constexpr", "noexcept", "mutable", "friend", "operator", "explicit",
    }
)  # fmt: skip

def identifiers(lines: list[str] | tuple[str, ...], language: str | None = None) -> set[str]:
    """Identifiers of at least four characters in the code of ``lines``, keywords excluded.

    Comments, string literals and docstrings are prose, not code: a reviewer that quotes a
    word of one has not named the defect (``score/identify.py`` takes these as evidence).
    ``lines`` are consecutive, so a docstring opened on one line is followed to its close.
    """
    found: set[str] = set()
    for code in language_for(language).code(lines):
        found.update(m for m in _IDENT.findall(code) if m not in KEYWORDS)
    return found


class SymbolIndex:
    """Finds the innermost function or class around a line of one file.

    Each language reads its own way (:mod:`reviewbench.mine.languages`): Python by
    indentation, JavaScript and TypeScript on a syntax tree, others by the nearest
    definition above the line.
    """

    def __init__(self, text: str, language: str | None) -> None:
        self.language = language
        self._at = language_for(language).symbols(text)

    def at(self, line: int) -> str | None:
        """Dotted name of the innermost definition containing ``line``, if any."""
        return self._at(line)
