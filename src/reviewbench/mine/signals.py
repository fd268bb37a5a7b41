"""Candidate signals: why a commit is worth trying as a fix, beyond the word "fix".

Curated bug datasets name fixes whose messages never say "fix" ("#415: Prevent double
sudo", "Handle columns in the fix_file rule"). The validity gate proves every candidate,
so the net may be wider than the message; each case records which signals took it
(``provenance.selected_by``). What each signal means is in docs/MINING.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..git.stream import LogEntry
from ..records import SelectionSignal
from .diff import FileChange
from .paths import FileKind

__all__ = [
    "Conventions",
    "NewApi",
    "coedits_tests",
    "announces_feature",
    "introduced_api",
    "learn_conventions",
    "message_signals",
    "references_issue",
    "upkeep_only",
]

#: An issue reference: ``#123`` (at a word start, or in brackets), ``GH-123``, ``gh-123``,
#: ``bpo-123``, a ``…/issues/123`` link, or a closing keyword with a number.
_ISSUE = re.compile(
    r"(?:^|[\s\[(,])(?:#|gh-|bpo-)\d+\b|/issues/\d+\b|\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|issue)\s+#?\d+\b",
    re.IGNORECASE | re.MULTILINE,
)
#: A pull-request number that a squash merge appends to every subject: ``… (#123)``.
_PR_SUFFIX = re.compile(r"\s*\((?:#\d+[,\s]*)+\)\s*$")


#: Words that make a "fix" near them upkeep, not a repair: "fix flake8", "Test fix",
#: "Fix typo in README", "fix the CI", a squash merge's "* Fix more tests". Not
#: "formatting": formatters, loggers and pretty-printers format for a living, and it vetoed
#: their fixes ("Fix wrong formatting of microsecond timestamp": 8 of loguru's 9, 7 of
#: black's, 2 of sqlparse's); a change of layout alone is dropped as ``formatting_only``.
_UPKEEP = frozenset(
    "test tests testing flake8 lint linter linting pylint mypy isort pep8 typo typos spelling grammar "
    "style whitespace spacing docs doc docstring docstrings documentation readme changelog ci "
    "travis appveyor build warning warnings deprecation conflict conflicts".split()
)
#: The upkeep words that a source edit contradicts: "fix test cmdline" with the code's own
#: lines rewritten repaired the code its tests caught (a co-edit; see :func:`announces_feature`).
_TEST_WORDS = frozenset("test tests testing".split())
#: Words that add nothing to "fix tests": a subject of only these and fix words names no repair.
_TEST_FILLER = _TEST_WORDS | frozenset("unit failing broken case cases the some all more few remaining".split())
#: How many words either side of a fix word may make it upkeep.
_UPKEEP_WINDOW = 3
_WORD = re.compile(r"[\w']+")
#: Where a word's neighbours stop counting: a line's or a sentence's end.
_SENTENCE = re.compile(r"\n|[.!?;](?:\s|$)")
#: An issue named right after a fix word ("fixes #1754", "fix issue 12", "fix gh-40"):
#: the fix repairs that issue, whatever upkeep words stand near it.
_NAMES_ISSUE = re.compile(r"\w*:?\s+(?:(?:issue|bug)\s+#?\d+|(?:#|gh-|bpo-)\d+)\b", re.IGNORECASE)


def upkeep_only(message: str, pattern: re.Pattern[str], words: frozenset[str] = _UPKEEP) -> bool:
    """Whether every match of ``pattern`` in ``message`` has an upkeep word (tests, lint,
    typos, CI, docs, warnings; ``words``) within three words of it in its sentence, or a
    sentence of nothing but "fix the tests", and names no issue: then the message says
    "fix" of housekeeping only. A squash merge's body lists such lines ("* fix flake8")
    under features; a fix of the code under test rarely says nothing else."""
    found = False
    for line in _SENTENCE.split(message):
        for match in pattern.finditer(line):
            found = True
            if _NAMES_ISSUE.match(line, match.end()):
                return False
            said = _WORD.findall(line)
            if any(w.lower() in _TEST_WORDS for w in said) and all(
                w.isdigit() or w.lower() in _TEST_FILLER or pattern.fullmatch(w) for w in said
            ):
                continue  # "#710: Fix the failing unit tests" says nothing else
            before = _WORD.findall(line[: match.start()])[-_UPKEEP_WINDOW:]
            after = _WORD.findall(line[match.end() :])[:_UPKEEP_WINDOW]
            if not any(w.lower() in words for w in before + after):
                return False
    return found


def references_issue(entry: LogEntry) -> bool:
    """Whether the message references an issue. The ``(#123)`` a squash merge appends to
    its subject is the pull request's own number, on features and fixes alike: ignored."""
    subject, _, body = entry.message.partition("\n")
    return bool(_ISSUE.search(_PR_SUFFIX.sub("", subject)) or _ISSUE.search(body))


#: A subject's leading tag: ``BUG:``, ``fix(parser):``, ``[bug]``, ``#123:`` (numbers
#: become ``#n``).
_TAG = re.compile(r"^\s*(\[[^\]\n]{1,24}\]|[A-Za-z][\w.-]{0,23}(?:\([^)\n]{0,40}\))?!?:|#\d+:?)")


def _tag(subject: str) -> str | None:
    m = _TAG.match(subject)
    if m is None:
        return None
    tag = m.group(1).lower()
    if tag.startswith("#"):
        return "#n"
    return re.sub(r"\(.*\)", "", tag).rstrip("!:") + ":" if not tag.startswith("[") else tag


class Conventions:
    """Subject tags that the repository's commits saying "fix" mostly carry.

    A tag is a convention when at least :attr:`MIN_COMMITS` commits carry it and most of
    them (more than :attr:`MIN_SHARE`) match the message pattern: then the same tag on a
    commit that does not say "fix" ("BUG: correct the offset") is the project's way of
    saying it. A tag carried by features as often as by fixes (a ``#123:`` prefix on every
    commit) is no convention.
    """

    MIN_COMMITS = 5
    MIN_SHARE = 0.5

    def __init__(self, tags: Iterable[str] = ()) -> None:
        self.tags = frozenset(tags)

    def match(self, entry: LogEntry) -> bool:
        tag = _tag(entry.subject)
        return tag is not None and tag in self.tags


def learn_conventions(entries: Iterable[LogEntry], pattern: re.Pattern[str]) -> Conventions:
    """The :class:`Conventions` of a history (merges left out: their subjects are git's)."""
    carried: Counter[str] = Counter()
    saying: Counter[str] = Counter()
    for entry in entries:
        if len(entry.parents) > 1:
            continue
        tag = _tag(entry.subject)
        if tag is None:
            continue
        carried[tag] += 1
        if pattern.search(entry.message):
            saying[tag] += 1
    return Conventions(
        t for t, n in carried.items() if n >= Conventions.MIN_COMMITS and saying[t] / n > Conventions.MIN_SHARE
    )


def message_signals(
    entry: LogEntry, select: Iterable[SelectionSignal], pattern: re.Pattern[str], conventions: Conventions
) -> set[SelectionSignal]:
    """The signals, of those in ``select``, that the commit's message alone shows."""
    found: set[SelectionSignal] = set()
    for signal in select:
        if (signal is SelectionSignal.MESSAGE and pattern.search(entry.message)
                and not upkeep_only(entry.message, pattern) and not _is_release(entry.subject)):  # fmt: skip
            found.add(signal)
        elif signal is SelectionSignal.ISSUE_REF and references_issue(entry):
            found.add(signal)
        elif signal is SelectionSignal.CONVENTION and conventions.match(entry):
            found.add(signal)
    return found


#: Leading tags, issue numbers and scopes before a subject's first word: ``#209``,
#: ``#N/A:``, ``[core]``, ``cli:``.
_PREFIX = re.compile(r"^(?:\s*(?:\[[^\]\n]*\]|#/?(?:\d+|N/?A)\b:?|[\w./-]{1,24}:(?=\s)))*\s*", re.IGNORECASE)
#: First words of subjects that announce new work or upkeep, not a repair: a source edit
#: with its test edit under such a subject is most often a feature with its tests.
_FEATURE_WORDS = frozenset(
    "add adds added adding support supports implement implements introduce introduces extend extends "
    "deprecate deprecates refactor refactors refactored simplify simplifies move moves moved rename renames "
    "renamed bump bumps upgrade upgrades document documents docs cleanup cleanups clean clean-up tidy misc "
    "lint linting pep8 flake8 style format reformat replace replaces replaced convert converts converted "
    "enable enables enhance enhances enhanced perf performance adjust adjusts adjusted optimize optimizes "
    "optimized optimise optimises optimised speed speedup".split()
)
#: Leading tags that name new work or upkeep: a changelog's ``Added:``, a conventional
#: commit's ``feat:``, ``chore(deps):``, ``test:``. A tag naming a module (``cli:``,
#: ``websocket:``) says nothing; ``fix:``, ``Fixed:``, ``Changed:`` do not veto.
_FEATURE_TAGS = _FEATURE_WORDS | frozenset("feat feature features chore test tests ci build".split())
#: A release: a bare version number ("v2.3.0"), "Release 1.2", "Prepare the 4.3 release".
_RELEASE = re.compile(r"(?:(?:releas(?:e|ed|ing)|version)\s+)?v?\d+(?:\.\d+)+\b|releases?\s*$|prepare\b.*\breleas",
                      re.IGNORECASE)
#: An update of links, docs or dependencies, not of behaviour. ("Update …" alone stays a
#: candidate: known fixes start so, "Update check for table existence to be case insensitive".)
_UPDATE_UPKEEP = re.compile(
    r"updat(?:e|es|ed|ing)\s+(?:the\s+)?(?:links?|urls?|docs?|documentation|readme|changelog|copyright|"
    r"dependenc(?:y|ies)|deps|requirements|badges?|version|tests?|ci)\b",
    re.IGNORECASE,
)
def _is_release(subject: str) -> bool:
    """Whether the subject, after its tags, names a release ("v2.3.0", "Release 1.2")."""
    return _RELEASE.match(_PREFIX.sub("", subject, count=1)) is not None


_TAG_NAME = re.compile(r"([A-Za-z][\w-]*)(?:\([^)\n]*\))?!?:")


def announces_feature(subject: str, pattern: re.Pattern[str] | None = None) -> bool:
    """Whether the subject's first word (after tags and issue numbers) or its leading tag
    announces new work or upkeep ("Add …", "Support …", "Refactor …", "Added: …",
    "feat(cli): …"), or (given the fix ``pattern``)
    the subject says "fix" of upkeep only ("Fix typos in comments", "fix pep8")."""
    rest = _PREFIX.sub("", subject, count=1)
    words = rest.split(None, 1)
    if bool(words) and words[0].lower().rstrip(":,") in _FEATURE_WORDS:
        return True
    if _is_release(subject) or _UPDATE_UPKEEP.match(rest):
        return True
    tag = _TAG_NAME.match(subject.lstrip())
    if tag is not None and tag.group(1).lower() in _FEATURE_TAGS:
        return True
    # Test words near "fix" do not veto here (a sentence of nothing else still does): the
    # co-edit this guards rewrote source lines too, so "PY3 fix test cmdline" repaired code.
    return pattern is not None and upkeep_only(subject, pattern, _UPKEEP - _TEST_WORDS)


def coedits_tests(changes: list[FileChange], kinds: dict[int, FileKind], forward: bool) -> bool:
    """Whether the fix rewrote existing source lines and edited an existing test file.

    A feature adds code and new tests; a fix changes code that was there and adds its
    regression test beside the old ones. ``forward``: the diff runs parent → fix (fix
    tasks); otherwise fix → parent, so the lines the fix removed are the diff's additions.
    """
    def rewrites(c: FileChange) -> bool:
        return bool(c.section.added if not forward else c.section.removed) and not (c.added_file or c.deleted_file)

    source = any(kinds[id(c)] is FileKind.SOURCE and not c.binary and rewrites(c) for c in changes)
    tests = any(kinds[id(c)] is FileKind.TEST and not (c.added_file or c.deleted_file) and c.section.changed
                for c in changes)  # fmt: skip
    return source and tests


@dataclass(frozen=True)
class NewApi:
    """A name a candidate adds and its own tests call: it is a feature with its tests."""

    name: str

    def describe(self) -> str:
        return f"adds `{self.name}`, which its tests call"


#: A definition's name, per language: Python's ``def``/``class``; JavaScript's and
#: TypeScript's functions, classes and ``const f = (…) =>`` / ``= function``.
_DEFINITION = {
    "python": re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)"),
    "javascript": re.compile(
        r"^\s*(?:export\s+(?:default\s+)?)?(?:(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)|class\s+([A-Za-z_$][\w$]*)"
        r"|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>))"
    ),
}
_DEFINITION["typescript"] = _DEFINITION["javascript"]
#: An exception class (``class Empty(ValueError)``, ``class QuietError``): a fix that
#: raises a clear error instead of crashing names one, and its test expects it.
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning)\b")
#: A command-line option a parser defines: ``add_argument("--quiet")``, ``option("-q", "--quiet")``.
_OPTION = re.compile(r"""\(\s*(?:(?:'-\w'|"-\w")\s*,\s*)?['"](--[A-Za-z][\w-]*)['"]""")
_PY_SIGNATURE = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(([^)]*)")
_PARAMETER = re.compile(r"(?:^|,)\s*\**([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def _parameters(signature: str) -> set[str]:
    return set(_PARAMETER.findall(signature)) - {"self", "cls"}


def introduced_api(
    fix_added: Iterable[str], fix_removed: Iterable[str], parent_source: str, tests_added: Iterable[str],
    language: str | None,
) -> NewApi | None:
    """The first public name the fix adds that its added test lines use, if any.

    A name is new when the parent's version of the files it changed never mentions it: a
    function or class (not private, not an exception), a parser's ``--option``, or a
    parameter added to a signature the fix rewrote. Exceptions are left out because a
    fix that raises a clear error instead of crashing defines one its test expects.

    Args:
        fix_added: the lines the fix added to source files (a reversal's removed lines).
        fix_removed: the lines it removed from them.
        parent_source: the parent's text of those files.
        tests_added: the lines the fix added to test files.
    """
    definition = _DEFINITION.get(language or "")
    if definition is None:
        return None
    known = set(_IDENT.findall(parent_source))
    test_text = "\n".join(tests_added)
    used = set(_IDENT.findall(test_text))
    added = list(fix_added)
    old_signatures = {m.group(1): _parameters(m.group(2)) for line in fix_removed
                      if (m := _PY_SIGNATURE.match(line))} if language == "python" else {}  # fmt: skip
    for line in added:
        match = definition.match(line)
        name = next((g for g in match.groups() if g), None) if match else None
        if (name and name not in known and name in used and not name.startswith("_")
                and not _EXCEPTION.search(line)):  # fmt: skip
            return NewApi(name)
        signature = _PY_SIGNATURE.match(line) if old_signatures else None
        if signature and signature.group(1) in old_signatures:
            for parameter in sorted(_parameters(signature.group(2)) - old_signatures[signature.group(1)]):
                if parameter not in known and parameter in used:
                    return NewApi(parameter)
    # Options over the whole text: a call's arguments often start on the next line.
    for option in _OPTION.findall("\n".join(added)):
        if option not in parent_source and option in test_text:
            return NewApi(option)
    return None
