"""Names in code: the function or class enclosing a line, and identifiers in changed lines."""

from __future__ import annotations

import ast
import keyword
import re
import warnings

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


def identifiers(lines: list[str] | tuple[str, ...]) -> set[str]:
    """Identifiers of at least four characters in ``lines``, keywords excluded."""
    found: set[str] = set()
    for line in lines:
        found.update(m for m in _IDENT.findall(line) if m not in KEYWORDS)
    return found


class SymbolIndex:
    """Finds the innermost function or class around a line of one file."""

    def __init__(self, text: str, language: str | None) -> None:
        self.language = language
        self._lines = text.splitlines()
        self._spans: list[tuple[int, int, str]] | None = None
        if language == "python":
            self._spans = _python_spans(text)

    def at(self, line: int) -> str | None:
        """Dotted name of the innermost definition containing ``line``, if any."""
        if self._spans is not None:
            best: tuple[int, int, str] | None = None
            for start, end, name in self._spans:
                if start <= line <= end and (best is None or start >= best[0]):
                    best = (start, end, name)
            return best[2] if best else None
        return self._scan_up(line)

    def _scan_up(self, line: int) -> str | None:
        # Best effort for languages without a parser here: the nearest definition above.
        for number in range(min(line, len(self._lines)), 0, -1):
            m = _DEFINITION.match(self._lines[number - 1])
            if m:
                return next(v for v in m.groupdict().values() if v)
        return None


def _python_spans(text: str) -> list[tuple[int, int, str]] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((start, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    spans.sort()
    return spans

