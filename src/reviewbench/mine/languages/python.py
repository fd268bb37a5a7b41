"""Python, read by indentation rather than parsed.

A whole-file ``ast.parse`` per changed file cost 78% of mining time on a real history
(see docs/ARCHITECTURE.md), and the indentation walk also reads files that no longer
parse (Python 2).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._base import Language, LanguageExamples, SymbolLookup, register
from .generic import code_only, uncommented

__all__ = ["Python", "examples"]

_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")


@register
class Python(Language):
    names = ("python",)

    def symbols(self, text: str) -> SymbolLookup:
        return _Indentation(text.splitlines()).at

    def code(self, lines: Sequence[str]) -> list[str]:
        return code_only(lines, "python")

    def uncommented(self, lines: Sequence[str]) -> list[str]:
        return uncommented(lines, "python")


class _Indentation:
    """Finds the innermost ``def`` or ``class`` around a line by walking indentation up."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines

    def at(self, line: int) -> str | None:
        lines = self._lines
        if not lines:
            return None  # an emptied file (a reversal of a fix that filled it in)
        index = min(max(line, 1), len(lines)) - 1
        # The changed line's own indentation (a blank line takes the next non-blank one's).
        probe = index
        while probe < len(lines) and not lines[probe].strip():
            probe += 1
        if probe == len(lines):
            return None
        names: list[str] = []
        if probe == index and (own := self._definition_at(probe)):
            names.append(own)
        limit = _indent(lines[probe])
        if lines[probe].lstrip().startswith((")", "]", "}")):
            limit += 1  # a closing bracket belongs to the statement that opened it, above
        for number in range(index - 1, -1, -1):
            if limit == 0:
                break
            text = lines[number]
            stripped = text.strip()
            if not stripped or stripped.startswith(("#", ")", "]", "}")):
                continue
            depth = _indent(text)
            if depth >= limit:
                continue
            if stripped.startswith("@"):
                # Inside a decorator's arguments: the symbol is the definition it decorates.
                if own := self._definition_at(number):
                    names.append(own)
                limit = depth
                continue
            limit = depth
            if m := _PY_DEF.match(text):
                names.append(m.group(2))
        return ".".join(reversed(names)) or None

    def _definition_at(self, number: int) -> str | None:
        """Name defined at line ``number`` (0-based), looking past decorators."""
        lines = self._lines
        base = _indent(lines[number])
        below = number
        while below < len(lines):
            text = lines[below]
            stripped = text.strip()
            if stripped and _indent(text) <= base and not stripped.startswith(("@", ")", "]", "}")):
                break
            below += 1
        if below == len(lines) or _indent(lines[below]) != base:
            return None
        m = _PY_DEF.match(lines[below])
        return m.group(2) if m and (below == number or lines[number].lstrip().startswith("@")) else None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def examples() -> LanguageExamples:
    return LanguageExamples(
        symbols=[
            ("class Shape:\n    @property\n    def area(self):\n        return 1\n\nX = 1\n",
             {1: "Shape", 2: "Shape.area", 4: "Shape.area", 6: None}),
        ],
        identifiers=[(['    """Return the stored thing.', '    """', "total = compute(values) // divisor"],
                      {"total", "compute", "values", "divisor"})],
        uncommented=[(["x = '# kept'  # dropped", '"""A docstring # kept', '# too"""'],
                      ["x = '# kept'  ", '"""A docstring # kept', '# too"""'])],
    )
