"""Why a commit is, or is not, a case of a corpus (``reviewbench show --why SHA``).

A commit the user knows to be a fix may be missing for reasons ``corpus.json`` only
counts: no candidate signal took it, it was dropped (``dropped.jsonl``), it lies outside
the history mined. This module answers for one commit, from the corpus's own records and
the repository it was mined from, with the mining configuration the corpus recorded.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..config import MineConfig
from ..errors import CorpusError, UsageError
from ..git.repo import GIT, git_output, open_repository
from ..git.stream import LogEntry, iter_diffs
from ..records import SelectionSignal
from ..store.corpus import Corpus, read_dropped
from .diff import FileChange
from .fix_reversal import change_kind
from .paths import FileKind, PathClassifier
from .signals import (
    Conventions,
    announces_feature,
    coedits_tests,
    learn_conventions,
    message_signals,
)

__all__ = ["Why", "explain_commit"]


@dataclass(frozen=True)
class Why:
    """The answer for one commit: what became of it, and the reasons."""

    commit: str
    subject: str
    outcome: str
    """``case``, ``dropped``, ``not_a_candidate`` or ``not_mined`` (outside the history walked)."""
    reasons: list[str] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    """Case ids made from it (a fix reversal, or a natural case it introduced)."""


def explain_commit(corpus: Corpus, sha: str) -> Why:
    """Say what mining ``corpus`` made of commit ``sha`` (any unambiguous prefix).

    Raises:
        UsageError: ``sha`` names no commit of the corpus's repository.
        CorpusError: the corpus's mining configuration cannot be read back.
    """
    repo = open_repository(Path(corpus.meta.repo.path))
    full = repo.run("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}", check=False).strip()
    if not full:
        raise UsageError(f"{sha!r} is not a commit of {repo.path}")
    try:
        config = MineConfig.model_validate(corpus.meta.config)
    except ValueError as exc:
        raise CorpusError(f"{corpus.path}: its mining configuration cannot be read back ({exc})") from None
    entry = _entry(repo.path, full)
    made = sorted(g.case_id for g in corpus.gold if full in (g.provenance.commit, g.provenance.introduced_by)
                  and g.variant_of is None)  # fmt: skip
    if made:
        taken = next((g.provenance.selected_by for g in corpus.gold
                      if g.provenance.commit == full and g.provenance.selected_by), [])  # fmt: skip
        reasons = [f"taken by {', '.join(taken)}"] if taken else []
        return Why(full, entry.subject, "case", reasons, made)
    for dropped in read_dropped(corpus.path):
        if dropped.commit == full:
            detail = f" ({dropped.detail})" if dropped.detail else ""
            return Why(full, entry.subject, "dropped",
                       [f"taken by {', '.join(dropped.selected_by) or 'message'}, dropped: {dropped.reason}{detail}"])  # fmt: skip
    head = corpus.meta.repo.head
    if not _ancestor(repo.path, full, head):
        return Why(full, entry.subject, "not_mined", [f"not in the history mined: not an ancestor of HEAD {head[:12]}"])
    outside = _outside_dates(repo.path, full, config)
    if outside:
        return Why(full, entry.subject, "not_mined", [outside])
    limit = config.limit
    fixes = [g for g in corpus.gold if g.stratum == "fix_reversal" and g.variant_of is None and g.provenance.commit]
    if limit is not None and len(fixes) >= limit:
        oldest = min(fixes, key=lambda g: g.provenance.date or "").provenance.commit
        if oldest and _ancestor(repo.path, full, oldest):
            return Why(full, entry.subject, "not_mined",
                       [f"older than the last of the --limit {limit} cases ({oldest[:12]}): the walk stopped there"])  # fmt: skip
    return Why(full, entry.subject, "not_a_candidate", _signals_missed(repo.path, entry, config))


def _entry(repo: Path, sha: str) -> LogEntry:
    out = git_output(repo, "log", "-1", "--format=%H%x1f%P%x1f%aI%x1f%cI%x1f%B", sha)
    full, parents, date, committed, message = out.split("\x1f", 4)
    message = message.strip()
    return LogEntry(full, tuple(parents.split()), date, message.splitlines()[0] if message else "", message, committed)


def _ancestor(repo: Path, sha: str, of: str) -> bool:
    return subprocess.run([*GIT, "-C", str(repo), "merge-base", "--is-ancestor", sha, of],
                          capture_output=True, check=False).returncode == 0  # fmt: skip


def _outside_dates(repo: Path, sha: str, config: MineConfig) -> str | None:
    if not config.since and not config.until:
        return None
    args = ["rev-list", "-n", "1"] + ([f"--since={config.since}"] if config.since else []) \
        + ([f"--until={config.until}"] if config.until else []) + [sha, "-1"]  # fmt: skip
    if git_output(repo, *args).strip() == sha:
        return None
    return f"outside the dates mined (--since {config.since or '-'} --until {config.until or '-'})"


def _signals_missed(repo: Path, entry: LogEntry, config: MineConfig) -> list[str]:
    """Why each selected signal did not take the commit."""
    pattern = config.message_regex()
    conventions = Conventions()
    if SelectionSignal.CONVENTION in config.select:
        from ..git.stream import iter_log

        conventions = learn_conventions(iter_log(repo, config.since, config.until), pattern)
    reasons: list[str] = []
    if len(entry.parents) != 1:
        reasons.append(f"a merge ({len(entry.parents)} parents)" if entry.parents else "a root commit (no parent)")
    shown = message_signals(entry, config.select, pattern, conventions)
    for signal in config.select:
        if signal is SelectionSignal.MESSAGE and pattern.search(entry.message):
            reasons.append("message: it says 'fix' of upkeep only (tests, lint, typos, CI, docs, warnings)")
        elif signal is SelectionSignal.MESSAGE:
            reasons.append(f"message: no --grep pattern matches ({' or '.join(config.grep)})")
        elif signal is SelectionSignal.ISSUE_REF:
            reasons.append("issue_ref: the message references no issue (a subject's trailing '(#123)' does not count)")
        elif signal is SelectionSignal.CONVENTION:
            tags = ", ".join(sorted(conventions.tags)) or "none learnt"
            reasons.append(f"convention: the subject carries none of the tags learnt ({tags})")
        elif signal is SelectionSignal.TEST_COEDIT and len(entry.parents) == 1:
            reasons.append("test_coedit: " + _coedit_missed(repo, entry, config))
    if shown:  # a message signal matched, yet no case and no drop: a corpus older than its records
        reasons.append(f"its message shows {', '.join(sorted(shown))}, but the corpus has no record of it "
                       "(mined by an older reviewbench?)")  # fmt: skip
    return reasons


def _coedit_missed(repo: Path, entry: LogEntry, config: MineConfig) -> str:
    if announces_feature(entry.subject, config.message_regex()):
        return "the subject announces new work or upkeep (its first word or leading tag) or says 'fix' of upkeep only, which vetoes the signal"
    classifier = PathClassifier(config.test_patterns, config.include, config.exclude)
    [(_, sections)] = list(iter_diffs(repo, [(entry.sha, (entry.sha, entry.parents[0]))], keep_lines=config.max_lines))
    changes = [FileChange(s) for s in sections or []]
    kinds = {id(c): change_kind(classifier, c) for c in changes}
    if coedits_tests(changes, kinds, forward=False):
        return "it qualifies now: mined with other settings?"
    source = [c for c in changes if kinds[id(c)] is FileKind.SOURCE]
    rewrites = any(c.section.added and not (c.added_file or c.deleted_file) for c in source)
    tests = any(kinds[id(c)] is FileKind.TEST and not (c.added_file or c.deleted_file) for c in changes)
    missing = ([] if rewrites else ["rewrites no existing source line"]) + \
        ([] if tests else ["edits no test file that existed before it"])  # fmt: skip
    return " and ".join(missing)

