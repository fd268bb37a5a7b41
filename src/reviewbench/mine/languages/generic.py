"""Languages without a module of their own: the nearest definition above a line, and
comments of the language's line-comment style stripped (best effort, no parser)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._base import Language, LanguageExamples, SymbolLookup, register

__all__ = ["Generic", "code_only", "examples", "uncommented"]

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


_QUOTE_START = re.compile(r'"""|\'\'\'|["\']')
#: Languages with ``/* … */`` block comments.
_BLOCK_LANGUAGES = {"c", "cpp", "csharp", "java", "kotlin", "scala", "go", "rust", "swift", "objc", "php",
                    "dart", "groovy", "zig", "css", "javascript", "typescript"}  # fmt: skip


def uncommented(lines: Sequence[str], language: str | None) -> list[str]:
    """``lines`` without their comments (the language's line comments, and ``/* … */``
    where it has them), strings and all other code kept as written. A fragment that starts
    inside a block comment (a ``*/`` before any ``/*``, or leading lines starting with
    ``*``) is read as such; any doubt reads as code, so that a change is never taken for
    comments only when it is not."""
    hashes = language in _HASH_LANGUAGES or language is None
    blocks = language in _BLOCK_LANGUAGES
    line_comment = "#" if hashes else "//"
    joined = "\n".join(lines)
    close, opening = joined.find("*/"), joined.find("/*")
    in_block = blocks and close >= 0 and (opening < 0 or close < opening)
    open_quote: str | None = None
    code_seen = False
    kept: list[str] = []
    for line in lines:
        stripped = line.strip()
        if blocks and not code_seen and not in_block and stripped.startswith("*") and not stripped.startswith("*/"):
            kept.append("")
            continue
        out: list[str] = []
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    break
                in_block, i = False, end + 2
                continue
            if open_quote is not None:
                end = line.find(open_quote, i)
                stop = len(line) if end < 0 else end + len(open_quote)
                out.append(line[i:stop])
                open_quote = None if end >= 0 else open_quote
                i = stop
                continue
            if line.startswith(line_comment, i):
                break
            if blocks and line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            quote = _QUOTE_START.match(line, i)
            if quote is not None:
                if len(quote.group()) == 3:
                    open_quote, i = quote.group(), quote.end()
                    out.append(quote.group())
                    continue
                m = _QUOTED.match(line, i)
                stop = m.end() if m else len(line)
                out.append(line[i:stop])
                i = stop
                continue
            out.append(line[i])
            code_seen = code_seen or not line[i].isspace()
            i += 1
        kept.append("".join(out))
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

    def uncommented(self, lines: Sequence[str]) -> list[str]:
        return uncommented(lines, self.language)


def examples() -> LanguageExamples:
    return LanguageExamples(
        symbols=[
            ("package a\n\nfunc (s *S) Run(x int) int {\n\treturn x\n}\n", {1: None, 4: "Run"}),
            ("pub fn parse(s: &str) -> u32 {\n    s.len() as u32\n}\n", {2: "parse"}),
        ],
        identifiers=[(["count = limit  # counts every item"], {"count", "limit"})],
        uncommented=[(["count = 1  # one", "s = '# kept'"], ["count = 1  ", "s = '# kept'"])],
    )
