"""Reading a reviewer's text into findings, tolerantly, without losing anything.

The frozen prompt asks for ``<path>:<line> <low|med|high> <claim>`` lines or ``NO_ISSUES``,
and models answer in many near variants. Accepted, line by line:

- the frozen format, also as ``path:line:col``, ``path:12-14``, ``path#L12``,
  ``path line 12`` / ``path, line 12`` / ``path (line 12)`` / ``path L12``;
- Markdown around it: bullets (``-``, ``*``, ``1.``), headings, quotes, bold and
  backticks around the path or the severity, links, tables (``| path | line | … |``);
- code fences: the fence lines are ignored and their content parsed;
- the ``@line [severity:x] reason`` format and ``Line 12: …``: no path in the line, so the
  path is the one named by a preceding header line (``### src/a.py``), else the packet's
  only changed path when it has exactly one (``paths``), else None;
- ``path: claim``: a file-level finding (line None), when ``path`` looks like a path;
- JSON: the whole text, a fenced block or a single line holding a list of objects (or an
  object with a ``findings``/``issues``/… list) with keys like path/file, line/start_line,
  severity/level, claim/message/description;
- severity words in any case: low/minor/nit/trivial (and info, note) → low,
  med/medium/moderate/major (and warning) → med, high/critical/severe/blocker (and error)
  → high; the words in brackets count only when marked as a severity (``[error]``,
  ``severity: warning``, ``Error:``) because "Error handling is missing" is a claim.

``NO_ISSUES`` (case-sensitive, punctuation, quotes or backticks around allowed) sets
``no_issues``, and so does an explicit clean reply on a line of its own, in any case:
``CLEAN`` (what a prompt may ask for), ``LGTM``, ``Looks good to me`` (with punctuation, markup
or an emoji around). Those are ordinary words, so unlike ``NO_ISSUES`` they count only as
a whole line: "The code is clean" or "LGTM except for the boundary" is prose, not
silence. Neither cancels findings: a text with both keeps its findings, and findings
decide. A line that is neither blank nor understood goes to ``unparsed``, never
away. :func:`parse_review` never raises, whatever bytes a model emits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import Finding, Severity
from ..reviewers.messages import clean_text

__all__ = ["CLEAN_REPLIES", "NO_ISSUES", "ParsedReview", "parse_review", "severity_from_word"]

NO_ISSUES = "NO_ISSUES"
CLEAN_REPLIES = ("CLEAN", "LGTM", "Looks good to me")
"""Explicit clean replies read as silence beside NO_ISSUES, case-insensitively, as a whole line."""
MAX_LINE = 4000
"""Longer lines are kept as unparsed without pattern matching."""
MAX_LINE_NUMBER = 10**9

_LOW, _MED, _HIGH = Severity.LOW, Severity.MED, Severity.HIGH
_STRONG = {
    "low": _LOW,
    "minor": _LOW,
    "nit": _LOW,
    "nitpick": _LOW,
    "trivial": _LOW,
    "med": _MED,
    "medium": _MED,
    "moderate": _MED,
    "major": _MED,
    "high": _HIGH,
    "critical": _HIGH,
    "severe": _HIGH,
    "blocker": _HIGH,
}
_WEAK = {
    "info": _LOW,
    "informational": _LOW,
    "note": _LOW,
    "warning": _MED,
    "warn": _MED,
    "error": _HIGH,
}
"""Words that also start ordinary sentences: a severity only when marked as one."""
_WORDS = {**_STRONG, **_WEAK}

# Decoration that may wrap a path or a severity: backticks, bold/italic stars, brackets.
_DL = r"[`*\[(<\"']*"
_DR = r"[`*\])>\"']*"
_P = r"(?P<path>[^\s`*:\[\]()<>\"']+?)"
_RANGE = r"(?:\s*(?:-|–|to)\s*L?\d{1,9})?"

_HEAD_COLON = re.compile(
    rf"@?{_DL}{_P}{_DR}:{_DL}(?:[Ll](?:ine)?\s*)?(?P<line>\d{{1,9}})(?::\d{{1,9}})?{_RANGE}{_DR}"
    r"(?![\w/])"
)
_HEAD_HASH = re.compile(rf"{_DL}{_P}#L(?P<line>\d{{1,9}}){_RANGE}{_DR}(?![\w/])")
_HEAD_WORD = re.compile(
    rf"{_DL}{_P}{_DR}(?:\s*,\s*|\s*:\s*|\s*\(\s*|\s+)(?i:(?:at|on|in)\s+)?"
    rf"(?:(?i:lines?|ln)\.?\s*|L(?=\d))(?P<line>\d{{1,9}}){_RANGE}\s*\)?{_DR}(?![\w/])"
)
_HEAD_AT = re.compile(rf"{_DL}@\s*L?(?P<line>\d{{1,9}}){_RANGE}{_DR}(?![\w/])")
_HEAD_LINE = re.compile(
    rf"{_DL}(?:(?i:lines?|ln)\.?\s*|L(?=\d))(?P<line>\d{{1,9}}){_RANGE}{_DR}(?=\s*[:\-–—(\[])"
)
_HEAD_FILE = re.compile(rf"{_DL}{_P}{_DR}(?:\s*:\s+|\s*:$|\s+[-–—]\s+)")
_PATH_HEADER = re.compile(
    r"(?:(?i:file|path)\s*:\s*)?" + _DL + r"(?P<path>[^\s`*:\[\]()<>\"']+)" + _DR + r"\s*:?"
)

_BULLET = re.compile(r"(?:>\s*|[-*+•·▪‣]\s+|\d{1,4}[.)]\s+|\(\d{1,4}\)\s+|#{1,6}\s+|\[[ xX]\]\s+)")
_LINK = re.compile(r"\]\([^)\s]*\)")
_SEV = re.compile(
    r"(?P<open>[\[({<]\s*)?(?P<dec>[`*_]{1,3})?"
    r"(?:(?P<label>severity|sev|priority|level)(?:\s*[:=]|\s+-|\s)\s*[`*_]{0,3})?"
    r"(?P<word>[A-Za-z]{2,13})(?P<dec2>[`*_]{1,3})?(?P<close>\s*[\])}>])?(?P<colon>\s*:)?",
    re.IGNORECASE,
)
_TRAILING_SEV = re.compile(
    r"[\[(]\s*(?i:(?:severity|sev|priority)\s*[:=]?\s*)?(?P<word>[A-Za-z]{2,13})\s*[\])]\s*\.?$"
)
_SEP = re.compile(r"(?:\s+|[:,;|>]|[-–—=]+(?=\s|$))+")
_FENCE = re.compile(r"(?P<mark>`{3,}|~{3,})(?P<info>[^`]*)$")
_NO_ISSUES_LINE = re.compile(r"[\W_]*NO_ISSUES[\W_]*")
_CLEAN_LINE = re.compile(
    r"[\W_]*(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in CLEAN_REPLIES) + r")[\W_]*",
    re.IGNORECASE,
)
_NO_ISSUES_WORD = re.compile(r"(?<![A-Za-z0-9_])NO_ISSUES(?![A-Za-z0-9_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_PATHCHARS = re.compile(r"[\w.\-/+@~]+")
_EXTENSION = re.compile(r"[^./]\.[A-Za-z][A-Za-z0-9]{0,9}$")
_LETTER = re.compile(r"[A-Za-z]")
_TABLE_RULE = re.compile(r"[\s|:\-]+")
_RULE = re.compile(r"(?:[-*_=]\s*){3,}")

_JSON_LIST_KEYS = ("findings", "issues", "comments", "results", "problems", "reviews", "items")
_PATH_KEYS = ("path", "file", "filename", "file_path", "filepath", "location")
_LINE_KEYS = (
    "line",
    "start_line",
    "startLine",
    "line_number",
    "lineNumber",
    "lineno",
    "line_start",
    "lines",
)
_SEV_KEYS = ("severity", "level", "priority", "sev")
_CLAIM_KEYS = (
    "claim",
    "message",
    "description",
    "issue",
    "comment",
    "text",
    "title",
    "body",
    "summary",
    "reason",
    "problem",
    "explanation",
)


@dataclass(frozen=True)
class ParsedReview:
    """What a review text says."""

    findings: tuple[Finding, ...]
    no_issues: bool
    """The text contains the NO_ISSUES token or a clean-reply line such as ``CLEAN`` or
    ``LGTM`` (findings, if any, still count)."""
    unparsed: tuple[str, ...]
    """Non-blank lines that said something the parser could not read, in order."""


def severity_from_word(word: str) -> Severity | None:
    """``medium`` → med, ``critical`` → high, ``warning`` → med, …; None if not a severity."""
    m = _SEV.fullmatch(word.strip())
    return _WORDS.get(m.group("word").lower()) if m else None


def parse_review(text: str, paths: Sequence[str] | None = None) -> ParsedReview:
    """Findings, the NO_ISSUES flag and the unread lines of a review text.

    Args:
        text: the reviewer's output, untrusted.
        paths: the packet's changed paths. With exactly one, findings that name only a
            line (``@12 …``) are placed in it; known paths are also recognised where a
            name alone could be a word (``Makefile: …``), and ``a/``/``b/`` prefixes copied
            from diff headers are dropped.
    """
    try:
        return _Parser(paths).parse(text)
    except Exception:  # noqa: BLE001 - last resort: garbage in must never crash a run
        lines = str(text).splitlines() if isinstance(text, str) else [repr(text)[:MAX_LINE]]
        return ParsedReview((), False, tuple(clean_text(line) for line in lines if line.strip()))


def _looks_like_path(path: str, known: frozenset[str]) -> bool:
    if path in known:
        return True
    if not _PATHCHARS.fullmatch(path) or not _LETTER.search(path) or path.endswith("."):
        return False
    return "/" in path.strip("/") or bool(_EXTENSION.search(path))


def _line_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        m = re.match(r"\s*L?(\d{1,9})", value)
        value = int(m.group(1)) if m else None
    elif isinstance(value, list) and value:
        return _line_number(value[0])
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 < value <= MAX_LINE_NUMBER:
        return value
    return None


class _Parser:
    def __init__(self, paths: Sequence[str] | None) -> None:
        self.known = frozenset(p for p in (paths or ()) if isinstance(p, str))
        self.only_path = next(iter(self.known)) if len(self.known) == 1 else None
        self.findings: list[Finding] = []
        self.unparsed: list[str] = []
        self.no_issues = False
        self.section_path: str | None = None
        self.section_index: int | None = None  # where its header waits in unparsed, if unused

    # -- the whole text ------------------------------------------------------------------

    def parse(self, text: Any) -> ParsedReview:
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8", "replace")
        elif not isinstance(text, str):
            text = str(text)
        text = clean_text(text)
        lines = text.splitlines()
        if not self._whole_json(lines):
            self._lines(lines)
        return ParsedReview(tuple(self.findings), self.no_issues, tuple(self.unparsed))

    def _whole_json(self, lines: list[str]) -> bool:
        body = [line for line in lines if line.strip()]
        if (
            body
            and _FENCE.fullmatch(body[0].strip())
            and _FENCE.fullmatch(body[-1].strip())
            and len(body) > 1
        ):
            body = body[1:-1]
        return self._json_block(body)

    def _lines(self, lines: list[str]) -> None:
        fence: str | None = None
        block: list[str] = []
        for line in lines:
            stripped = line.strip()
            m = _FENCE.fullmatch(stripped) if len(stripped) < 200 else None
            if fence is None and m:
                fence, block = m.group("mark"), []
                continue
            if fence is not None:
                if m and stripped.startswith(fence[0] * len(fence)) and not m.group("info").strip():
                    fence = None
                    if not self._json_block(block):
                        for inner in block:
                            self._line(inner)
                else:
                    block.append(line)
                continue
            self._line(line)
        if fence is not None and not self._json_block(block):  # unterminated fence
            for inner in block:
                self._line(inner)

    # -- JSON ----------------------------------------------------------------------------

    def _json_block(self, lines: list[str]) -> bool:
        """Read ``lines`` as one JSON document of findings; False if they are not one."""
        text = "\n".join(lines).strip()
        if not text or text[0] not in "[{" or text[-1] not in "]}":
            return False
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return False
        items = self._json_items(data)
        if items is None:
            return False
        if not items:
            self.no_issues = True
        for item in items:
            self._json_item(item)
        return True

    @staticmethod
    def _json_items(data: Any) -> list[Any] | None:
        if isinstance(data, list):
            return data
        if isinstance(data, dict):
            for key in _JSON_LIST_KEYS:
                if isinstance(data.get(key), list):
                    return data[key]
            if any(key in data for key in (*_PATH_KEYS, *_LINE_KEYS, *_CLAIM_KEYS)):
                return [data]
        return None

    def _json_item(self, item: Any) -> None:
        if isinstance(item, str):
            self._line(item)
            return
        finding = self._from_object(item) if isinstance(item, dict) else None
        if finding is None:
            self.unparsed.append(json.dumps(item, ensure_ascii=False))
        else:
            self.findings.append(finding)

    def _from_object(self, obj: dict[str, Any]) -> Finding | None:
        def first(keys: Iterable[str]) -> Any:
            for key in keys:
                if obj.get(key) is not None:
                    return obj[key]
            return None

        path = first(_PATH_KEYS)
        line = _line_number(first(_LINE_KEYS))
        if isinstance(path, dict):  # {"location": {"path": ..., "line": ...}}
            line = line or _line_number(next((path.get(k) for k in _LINE_KEYS if k in path), None))
            path = next((path.get(k) for k in _PATH_KEYS if isinstance(path.get(k), str)), None)
        if isinstance(path, str) and (m := _HEAD_COLON.fullmatch(path.strip())):
            path, line = m.group("path"), line or int(m.group("line"))
        path = self._normal_path(path) if isinstance(path, str) and path.strip() else None
        word = first(_SEV_KEYS)
        severity = severity_from_word(word) if isinstance(word, str) else None
        claim = first(_CLAIM_KEYS)
        if claim is not None and not isinstance(claim, str):
            claim = json.dumps(claim, ensure_ascii=False)
        if path is None and line is None and claim is None:
            return None
        raw = json.dumps(obj, ensure_ascii=False)
        return Finding(
            path=path, line=line, severity=severity, claim=(claim or "").strip(), raw=raw
        )

    # -- one line ------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        if not line.strip():
            return
        if len(line) > MAX_LINE:
            self._unread(line)
            return
        text = _CONTROL.sub(" ", line).strip()
        if _RULE.fullmatch(text):
            return  # a horizontal rule is layout, like a fence
        while m := _BULLET.match(text):
            text = text[m.end() :].lstrip()
        text = _LINK.sub("]", text)
        if not text or _RULE.fullmatch(text) or (_TABLE_RULE.fullmatch(text) and "|" in text):
            return  # a horizontal or table rule is layout, like a fence
        if _NO_ISSUES_LINE.fullmatch(text) or _CLEAN_LINE.fullmatch(text):
            self.no_issues = True
            return
        if text.startswith("{") and text.endswith("}") and self._json_block([text]):
            return
        finding = self._table_row(text, line) if text.startswith("|") else self._finding(text, line)
        if finding is not None:
            self.findings.append(finding)
            return
        if self._section_header(text, line):
            return
        self._unread(line)

    def _unread(self, line: str) -> None:
        if _NO_ISSUES_WORD.search(line):
            self.no_issues = True
        self.unparsed.append(line)

    def _finding(self, text: str, raw: str) -> Finding | None:
        severity, rest = _take_severity(text)
        if severity is not None:
            rest = _SEP.sub("", rest, count=1) if _SEP.match(rest) else rest
            found = self._head(rest)
            if found is not None:
                path, line, claim = found
                return self._make(path, line, severity, claim, raw)
        found = self._head(text)
        if found is None:
            return None
        path, line, claim = found
        severity, claim = _take_severity(claim)
        return self._make(path, line, severity, claim, raw)

    def _head(self, text: str) -> tuple[str | None, int | None, str] | None:
        """(path, line, rest of the line) when ``text`` starts with a location."""
        for pattern in (_HEAD_COLON, _HEAD_HASH, _HEAD_WORD):
            m = pattern.match(text)
            if m and self._path_ok(m.group("path"), strict=pattern is not _HEAD_COLON):
                return (
                    self._normal_path(m.group("path")),
                    _line_number(m.group("line")),
                    _rest(text, m),
                )
        for pattern in (_HEAD_AT, _HEAD_LINE):
            if m := pattern.match(text):
                return (
                    self._section_path() or self.only_path,
                    _line_number(m.group("line")),
                    _rest(text, m),
                )
        m = _HEAD_FILE.match(text)
        if m and self._path_ok(m.group("path"), strict=True):
            rest = _rest(text, m)
            if rest:
                return self._normal_path(m.group("path")), None, rest
        return None

    def _path_ok(self, path: str, *, strict: bool) -> bool:
        if strict:
            return _looks_like_path(path, self.known) or self._normal_path(path) in self.known
        return bool(_LETTER.search(path)) and path.lower() not in ("http", "https", "file")

    def _normal_path(self, path: str) -> str:
        path = path.strip().strip("\"'`")
        while path.startswith("./"):
            path = path[2:]
        if path not in self.known and path[:2] in ("a/", "b/") and path[2:] in self.known:
            path = path[2:]
        return path

    def _make(
        self, path: str | None, line: int | None, severity: Severity | None, claim: str, raw: str
    ) -> Finding:
        m = _TRAILING_SEV.search(claim) if severity is None else None
        if m and (trailing := _WORDS.get(m.group("word").lower())) is not None:
            severity, claim = trailing, claim[: m.start()]
        claim = _SEP.sub("", claim, count=1) if _SEP.match(claim) else claim
        return Finding(
            path=path, line=line, severity=severity, claim=claim.strip(), raw=raw.strip()
        )

    def _table_row(self, text: str, raw: str) -> Finding | None:
        cells = [c.strip().strip("`*").strip() for c in text.strip().strip("|").split("|")]
        path: str | None = None
        line: int | None = None
        severity: Severity | None = None
        claims: list[str] = []
        for cell in cells:
            if (
                path is None
                and (m := _HEAD_COLON.fullmatch(cell))
                and self._path_ok(m.group("path"), strict=False)
            ):
                path, line = (
                    self._normal_path(m.group("path")),
                    line or _line_number(m.group("line")),
                )
            elif path is None and _looks_like_path(cell, self.known):
                path = self._normal_path(cell)
            elif line is None and re.fullmatch(r"L?\d{1,9}(?:\s*[-–]\s*L?\d{1,9})?", cell):
                line = _line_number(cell)
            elif severity is None and (sev := severity_from_word(cell)) is not None:
                severity = sev
            elif cell:
                claims.append(cell)
        if path is None and line is None:
            return None
        if path is None:
            path = self._section_path() or self.only_path
        return Finding(
            path=path, line=line, severity=severity, claim=" ".join(claims), raw=raw.strip()
        )

    def _section_header(self, text: str, raw: str) -> bool:
        """A line that only names a file (``### src/a.py``, ``**src/a.py**:``, ``File: a.py``)."""
        m = _PATH_HEADER.fullmatch(text)
        if not m or not _looks_like_path(m.group("path"), self.known):
            return False
        self.section_path = self._normal_path(m.group("path"))
        self.section_index = len(self.unparsed)
        self.unparsed.append(raw)  # until a finding takes its path from it
        return True

    def _section_path(self) -> str | None:
        """The current header's path; the header line is then no longer unparsed."""
        if self.section_index is not None:
            self.unparsed.pop(self.section_index)
            self.section_index = None
        return self.section_path


def _rest(text: str, m: re.Match[str]) -> str:
    rest = text[m.end() :]
    return _SEP.sub("", rest, count=1) if _SEP.match(rest) else rest


def _take_severity(text: str) -> tuple[Severity | None, str]:
    """A severity at the start of ``text`` and what follows it; (None, text) if there is none."""
    m = _SEV.match(text)
    if not m:
        return None, text
    word = m.group("word").lower()
    severity = _WORDS.get(word)
    if severity is None:
        return None, text
    marked = any(m.group(g) for g in ("open", "dec", "label", "dec2", "close", "colon"))
    if word in _WEAK and not marked:
        return None, text
    if bool(m.group("open")) != bool(m.group("close")):
        return None, text
    end = m.end()
    following = text[end : end + 1]
    if following and not (following.isspace() or following in "-–—:,|;."):
        return None, text
    if following == "." and text[end + 1 : end + 2].strip():
        return None, text
    return severity, text[end:]
