"""Matching one run's findings to its case's gold defects.

A finding matches a defect when the paths agree (normalised; a unique suffix counts) and
its line lies within a location's range widened by the tolerance. Findings are taken in
the order the reviewer gave them: the first finding on a defect is a true positive, a
later one a duplicate; a finding with a line that matches no defect is a false positive.
On a control every finding, with or without a line, is a false positive. A finding without
a line on a defect case (a file-level remark) is neither: it counts for file recall only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Defect, Finding

__all__ = ["PathMatcher", "RunMatch", "match_run", "mentions_symbol"]

_PREFIXES = ("./", "a/", "b/")


def _normalise(path: str) -> str:
    path = path.strip().strip("`'\"").replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


class PathMatcher:
    """Decides whether a path a reviewer wrote names a given gold path.

    Equal after normalisation, or one is the other's tail at a '/' boundary and that tail
    names exactly one of the case's known paths (``src/x.py`` for ``pkg/src/x.py``, or an
    absolute path ending in the gold path). A diff prefix (``a/``, ``b/``) is also tried.
    """

    def __init__(self, known: Sequence[str]) -> None:
        self.known = sorted({_normalise(p) for p in known})

    def _forms(self, path: str) -> list[str]:
        path = _normalise(path)
        forms = [path]
        for prefix in _PREFIXES[1:]:
            if path.startswith(prefix):
                forms.append(path[len(prefix) :])
        return forms

    def _unique_tail(self, tail: str) -> bool:
        return sum(1 for k in self.known if k == tail or k.endswith("/" + tail)) == 1

    def agrees(self, written: str | None, gold: str) -> bool:
        if not written:
            return False
        gold = _normalise(gold)
        for form in self._forms(written):
            if form == gold:
                return True
            if gold.endswith("/" + form) and self._unique_tail(form):
                return True
            if form.endswith("/" + gold) and self._unique_tail(gold):
                return True
        return False


@dataclass(frozen=True)
class RunMatch:
    """The outcome of matching one run."""

    found: tuple[bool, ...]
    """Per gold defect: some finding matched it."""
    severity_ok: tuple[bool | None, ...]
    """Per defect: the first matching finding's severity equals gold (None: not found or
    no gold severity)."""
    file_hit: tuple[bool, ...]
    """Per defect: some finding (with or without a line) names one of its files."""
    true_positives: int
    false_positives: int
    duplicates: int
    file_level: int
    """Findings without a line on a defect case (counted for file recall only)."""
    names_gold_file: bool
    flagged_files: int
    """Changed files named by at least one finding."""
    findings: int


def _line_ok(line: int, start: int, end: int, tolerance: int) -> bool:
    if start == 0 and end == 0:  # a file the patch deletes: any line in it
        return True
    return start - tolerance <= line <= end + tolerance


def match_run(
    findings: Sequence[Finding],
    defects: Sequence[Defect],
    changed_paths: Sequence[str],
    tolerance: int = 3,
) -> RunMatch:
    """Match ``findings`` to ``defects`` (empty for a control)."""
    gold_paths = [loc.path for d in defects for loc in d.locations]
    paths = PathMatcher([*changed_paths, *gold_paths])
    found = [False] * len(defects)
    severity_ok: list[bool | None] = [None] * len(defects)
    tp = fp = dup = file_level = 0
    for finding in findings:
        if not defects:
            fp += 1
            continue
        if finding.line is None:
            file_level += 1
            continue
        hits = [
            i for i, d in enumerate(defects)
            if any(paths.agrees(finding.path, loc.path) and _line_ok(finding.line, loc.start_line, loc.end_line, tolerance)
                   for loc in d.locations)
        ]  # fmt: skip
        fresh = [i for i in hits if not found[i]]
        if fresh:
            i = fresh[0]
            found[i] = True
            tp += 1
            gold = defects[i].severity
            severity_ok[i] = None if gold is None else finding.severity == gold
        elif hits:
            dup += 1
        else:
            fp += 1
    file_hit = tuple(
        any(paths.agrees(f.path, loc.path) for f in findings for loc in d.locations) for d in defects
    )
    flagged = sum(1 for p in changed_paths if any(paths.agrees(f.path, p) for f in findings))
    return RunMatch(
        found=tuple(found),
        severity_ok=tuple(severity_ok),
        file_hit=file_hit,
        true_positives=tp,
        false_positives=fp,
        duplicates=dup,
        file_level=file_level,
        names_gold_file=any(file_hit),
        flagged_files=flagged,
        findings=len(findings),
    )


def mentions_symbol(text: str | None, symbols: Sequence[str]) -> bool:
    """Whether ``text`` names any of ``symbols`` as a whole word (case-insensitive)."""
    if not text or not symbols:
        return False
    pattern = r"(?<![A-Za-z0-9_])(?:" + "|".join(re.escape(s) for s in symbols) + r")(?![A-Za-z0-9_])"
    return re.search(pattern, text, re.IGNORECASE) is not None
