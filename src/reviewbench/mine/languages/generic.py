"""Languages without a module of their own: the nearest definition above a line, and
comments of the language's line-comment style stripped (best effort, no parser)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._base import Language, LanguageExamples, SymbolLookup, register

__all__ = ["Generic", "code_only", "examples"]

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

_TRIPLE = re.compile(r'"""|\'\'\'')
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_HASH_COMMENT = re.compile(r"#.*")
_SLASH_COMMENT = re.compile(r"//.*")
#: Languages whose line comments start with ``#`` (elsewhere ``//``; ``//`` is Python's floor division).
_HASH_LANGUAGES = {"python", "ruby", "shell", "perl", "r", "yaml", "toml"}


def code_only(lines: Sequence[str], language: str | None) -> list[str]:
    """``lines`` with quoted strings emptied, triple-quoted text and line comments dropped."""
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


@register
class Generic(Language):
    """Any language without a parser here, read line by line."""

    names = ("generic",)

    def __init__(self, name: str | None = None) -> None:
        self.language = None if name == "generic" else name

    def symbols(self, text: str) -> SymbolLookup:
        lines = text.splitlines()

        def at(line: int) -> str | None:
            for number in range(min(line, len(lines)), 0, -1):
                m = _DEFINITION.match(lines[number - 1])
                if m:
                    return next(v for v in m.groupdict().values() if v)
            return None

        return at

    def code(self, lines: Sequence[str]) -> list[str]:
        return code_only(lines, self.language)


def examples() -> LanguageExamples:
    return LanguageExamples(
        symbols=[
            ("package a\n\nfunc (s *S) Run(x int) int {\n\treturn x\n}\n", {1: None, 4: "Run"}),
            ("pub fn parse(s: &str) -> u32 {\n    s.len() as u32\n}\n", {2: "parse"}),
        ],
        identifiers=[(["count = limit  # counts every item"], {"count", "limit"})],
    )
