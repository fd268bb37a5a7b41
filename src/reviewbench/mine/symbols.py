"""Names in code: the function or class enclosing a line, and identifiers in changed lines."""

from __future__ import annotations

import keyword
import re

__all__ = ["KEYWORDS", "SymbolIndex", "identifiers"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")

#: Keywords and ubiquitous words of the languages we mine; never useful as gold symbols.
KEYWORDS = frozenset(
    {k for k in keyword.kwlist + keyword.softkwlist if len(k) >= 4}
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
        "module", "require", "println", "print", "string", "self", "Self", "unsafe", "extern",
        "mut", "loop", "then", "elsif", "unless", "begin", "rescue", "ensure", "local", "end",
        "native", "synchronized", "transient", "abstract", "inline", "register", "typedef",
        "union", "auto", "constexpr", "noexcept", "mutable", "friend", "operator", "explicit",
    }
)  # fmt: skip

_DEFINITION = re.compile(
    r"""^\s*(?:
        (?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+(?P<js>[A-Za-z_$][\w$]*)
      | func\s+(?:\([^)]*\)\s*)?(?P<go>\w+)
      | (?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(?P<rs>\w+)
      | (?:(?:public|private|protected|internal|abstract|final|sealed|static|export|open|data)\s+)*
        (?:class|interface|struct|enum|trait|impl|object)\s+(?P<cls>\w+)
      | (?:(?:public|private|protected|static|final|synchronized|abstract|override|async|virtual)\s+)+
        [\w<>\[\],.?\s]*?\s(?P<method>\w+)\s*\(
      | (?:def|sub)\s+(?P<rb>\w+[?!]?)
    )""",
    re.VERBOSE,
)


def identifiers(lines: list[str] | tuple[str, ...], language: str | None = None) -> set[str]:
    """Identifiers of at least four characters in the code of ``lines``, keywords excluded.

    Comments, string literals and docstrings are prose, not code: a reviewer that quotes a
    word of one has not named the defect (``score/identify.py`` takes these as evidence).
    ``lines`` are consecutive, so a docstring opened on one line is followed to its close.
    """
    found: set[str] = set()
    for code in _code_only(lines, language):
        found.update(m for m in _IDENT.findall(code) if m not in KEYWORDS)
    return found


_TRIPLE = re.compile(r'"""|\'\'\'')
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_HASH_COMMENT = re.compile(r"#.*")
_SLASH_COMMENT = re.compile(r"//.*")
#: Languages whose line comments start with ``#`` (elsewhere ``//``; ``//`` is Python's floor division).
_HASH_LANGUAGES = {"python", "ruby", "shell", "perl", "r", "yaml", "toml"}


def _code_only(lines: list[str] | tuple[str, ...], language: str | None) -> list[str]:
    comment = _HASH_COMMENT if language in _HASH_LANGUAGES or language is None else _SLASH_COMMENT
    open_quote: str | None = None  # inside a triple-quoted string that began on an earlier line
    kept: list[str] = []
    for line in lines:
        code = ""
        rest = line
        while rest:
            if open_quote is not None:
                end = rest.find(open_quote)
                if end < 0:
                    rest = ""
                    break
                rest, open_quote = rest[end + 3 :], None
                continue
            m = _TRIPLE.search(rest)
            head = rest if m is None else rest[: m.start()]
            code += head
            if m is None:
                break
            open_quote, rest = m.group(), rest[m.end() :]
        kept.append(comment.sub("", _QUOTED.sub('""', code)))
    return kept


_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")


class SymbolIndex:
    """Finds the innermost function or class around a line of one file.

    Python is read by indentation rather than parsed: a whole-file ``ast.parse`` per
    changed file cost 78% of mining time on a real history (see docs/ARCHITECTURE.md), and
    the indentation walk also reads files that no longer parse (Python 2). Other
    languages take the nearest definition above the line.
    """

    def __init__(self, text: str, language: str | None) -> None:
        self.language = language
        self._lines = text.splitlines()

    def at(self, line: int) -> str | None:
        """Dotted name of the innermost definition containing ``line``, if any."""
        if self.language == "python":
            return self._python(line)
        return self._scan_up(line)

    def _python(self, line: int) -> str | None:
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

    def _scan_up(self, line: int) -> str | None:
        # Best effort for languages without a parser here: the nearest definition above.
        for number in range(min(line, len(self._lines)), 0, -1):
            m = _DEFINITION.match(self._lines[number - 1])
            if m:
                return next(v for v in m.groupdict().values() if v)
        return None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))
