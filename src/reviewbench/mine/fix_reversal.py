"""Fix reversal: a merged fix, played backwards, quietly reintroduces its bug.

For each commit whose message matches a fix pattern, the case patch is
``git diff FIX PARENT -- <source files>``: it applies to ``base = FIX`` and leaves the
fix's tests in place so that validation can watch them fail. Gold locations are the
line ranges the patch writes, numbered in the patched (buggy) tree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..config import MineConfig
from ..git.repo import Repository
from ..git.stream import BlobReader, LogEntry, RawSection, iter_diffs, iter_log
from ..records import (
    Case,
    Defect,
    DroppedCommit,
    DropReason,
    GoldRecord,
    Location,
    Provenance,
    SelectionSignal,
    Stratum,
)
from .diff import FileChange
from .naming import case_id, neutral_title
from .paths import FileKind, PathClassifier, language_of
from .signals import (
    Conventions,
    NewApi,
    announces_feature,
    coedits_tests,
    introduced_api,
    learn_conventions,
    message_signals,
)
from .symbols import SymbolIndex, identifiers

__all__ = ["FixReversalMiner", "MinedCase", "change_kind", "changed_locations", "describe_fix_reversal"]


@dataclass(frozen=True)
class MinedCase:
    """A case ready to be written: what the reviewer sees, its labels, its patch bytes."""

    case: Case
    gold: GoldRecord
    patch: bytes
    extra: dict[str, bytes] = field(default_factory=dict)
    """Other corpus files the case needs (``patches/…``): a validation-only test patch."""


@dataclass(frozen=True)
class _Candidate:
    """A commit that passed every filter, waiting for its file contents."""

    entry: LogEntry
    source: list[FileChange]
    tests: list[str]
    test_changes: list[FileChange] = field(default_factory=list)
    selected_by: tuple[SelectionSignal, ...] = ()


#: Candidates per round trip to ``git cat-file``.
_BATCH = 128


@dataclass
class MineStats:
    """What the history walk saw: matched commits and why some made no case."""

    scanned: int = 0
    matched: int = 0
    by_signal: Counter[str] = field(default_factory=Counter)
    """Matched commits per candidate signal (a commit may show several)."""
    dropped_commits: list[DroppedCommit] = field(default_factory=list)
    """The dropped ones, each with its reason, in history order (``dropped.jsonl``)."""
    dropped: Counter[str] = field(default_factory=Counter)


# When a commit has no usable source change, the first kind present names the reason.
_DROP_ORDER = (
    (FileKind.LOCKFILE, DropReason.LOCKFILE),
    (FileKind.VENDORED, DropReason.VENDORED_OR_GENERATED),
)


class FixReversalMiner:
    """Walks history once and yields fix-reversal cases, newest first."""

    #: Diff FIX -> PARENT (a reversal). Fix tasks diff the other way: PARENT -> FIX.
    forward = False

    def __init__(self, config: MineConfig, repo: Repository) -> None:
        self.config = config
        self.repo = repo
        self.stats = MineStats()
        self.classifier = PathClassifier(config.test_patterns, config.include, config.exclude)
        self._pattern = config.message_regex()
        self._shallow_roots: set[str] = set()
        self._position: dict[str, int] = {}  # matching commit → commits scanned up to it
        self._signals: dict[str, set[SelectionSignal]] = {}  # what its message showed
        self._coedit = SelectionSignal.TEST_COEDIT in config.select
        self._conventions = Conventions()
        if SelectionSignal.CONVENTION in config.select:
            # One more pass over messages only (no diffs): cheap beside the diff stream.
            log = iter_log(repo.path, config.since, config.until)
            self._conventions = learn_conventions(log, self._pattern)
        if repo.shallow:
            self._shallow_roots = set(_shallow_boundary(repo))

    def _matching(self) -> Iterator[tuple[LogEntry, tuple[str, str] | None]]:
        """Candidate commits, each with the pair to diff (None: no diff). A commit whose
        message shows no signal is diffed too when ``test_coedit`` may take it; merges
        and roots only when their message matched (they are counted as dropped)."""
        for entry in iter_log(self.repo.path, self.config.since, self.config.until, files=self._coedit):
            self.stats.scanned += 1
            signals = message_signals(entry, self.config.select, self._pattern, self._conventions)
            diffable = len(entry.parents) == 1 and entry.sha not in self._shallow_roots
            if not signals and not (diffable and self._may_coedit(entry)):
                continue
            if not diffable and SelectionSignal.MESSAGE not in signals:
                continue  # a merge's "#123" is its pull request's; counted as dropped only when it says "fix"
            self._position[entry.sha] = self.stats.scanned
            self._signals[entry.sha] = signals
            if not diffable:
                yield entry, None
            elif self.forward:
                yield entry, (entry.parents[0], entry.sha)
            else:
                # old = FIX, new = PARENT: the diff takes the fix away.
                yield entry, (entry.sha, entry.parents[0])

    def _may_coedit(self, entry: LogEntry) -> bool:
        """Whether ``test_coedit`` could take the commit, judged before any patch is made
        (its subject, and the files the log lists): most commits edit no existing source
        and test file together, and diffing them all was most of mining's cost."""
        if not self._coedit or announces_feature(entry.subject, self._pattern):
            return False
        if entry.files is None:
            return True
        existing = [paths_kind(self.classifier, f.old_path, f.new_path) for f in entry.files if f.status not in "AD"]
        return FileKind.SOURCE in existing and FileKind.TEST in existing

    def _admit(self, entry: LogEntry, sections: list[RawSection] | None) -> tuple[SelectionSignal, ...] | None:
        """The signals that take this commit (None: it is no candidate, and not counted).
        Counts it as matched when it is one."""
        signals = self._signals.pop(entry.sha, set())
        # A source edit with its test edit under "Add …" is a feature with its tests: its
        # reversal fails them too, and a feature removed is no bug (docs/MINING.md).
        if sections is not None and self._coedit and not announces_feature(entry.subject, self._pattern):
            changes = [FileChange(s) for s in sections]
            if coedits_tests(changes, {id(c): self._kind(c) for c in changes}, self.forward):
                signals.add(SelectionSignal.TEST_COEDIT)
        if not signals:
            return None
        self.stats.matched += 1
        ordered = tuple(s for s in SelectionSignal if s in signals)
        self.stats.by_signal.update(ordered)
        return ordered

    def cases(self) -> Iterator[MinedCase]:
        """Yield cases newest first, stopping after ``config.limit`` of them.

        Tallies are made here, in history order, so that they stop exactly where the
        cases stop; the log reader may have run ahead. Candidates are built in batches so
        that the file contents their symbols need come from git in one round trip.
        """
        kept = 0
        limit = self.config.limit
        batch: list[_Candidate] = []
        with BlobReader(self.repo.path) as blobs:
            stream = iter_diffs(self.repo.path, self._matching(), keep_lines=self.config.max_lines)
            try:
                for entry, sections in stream:
                    selected_by = self._admit(entry, sections)
                    if selected_by is None:
                        continue
                    if sections is None:
                        merge = len(entry.parents) > 1
                        self._drop(DropReason.MERGE if merge else DropReason.NO_PARENT, entry, selected_by)
                        continue
                    candidate = self._candidate(entry, sections, selected_by)
                    if candidate is None:
                        continue
                    batch.append(candidate)
                    # A batch never holds more candidates than the limit still wants, so
                    # the limit, when reached, is reached at a batch's last candidate.
                    if len(batch) >= (_BATCH if limit is None else min(_BATCH, limit - kept)):
                        for mined in self._build_batch(batch, blobs):
                            kept += 1
                            yield mined
                        batch = []
                    if limit is not None and kept >= limit:
                        self.stats.scanned = self._position[entry.sha]  # not the reader's run-ahead
                        break
                yield from self._build_batch(batch, blobs)
            finally:
                stream.close()

    def _drop(self, reason: DropReason, entry: LogEntry | None = None,
              selected_by: tuple[SelectionSignal, ...] = (), detail: str | None = None) -> None:  # fmt: skip
        """Tally a candidate that makes no case (and, given its commit, record which)."""
        self.stats.dropped[reason] += 1
        if entry is not None:
            self.stats.dropped_commits.append(DroppedCommit(
                commit=entry.sha, subject=entry.subject, reason=reason, selected_by=list(selected_by), detail=detail,
            ))  # fmt: skip

    def _candidate(
        self, entry: LogEntry, sections: list[RawSection], selected_by: tuple[SelectionSignal, ...] = ()
    ) -> _Candidate | None:
        """The commit's source changes if it can make a case; else tally why not."""
        changes = [FileChange(s) for s in sections]
        kinds = {id(c): self._kind(c) for c in changes}
        # A link is never source: its "contents" name a host path, and a case built from a
        # link change would send a reviewer whatever that path holds (docs/HOSTILE.md).
        source = [c for c in changes if kinds[id(c)] is FileKind.SOURCE and not c.binary and not c.symlink
                  and not c.lfs_pointer]  # fmt: skip
        source_changed = [c for c in source if c.section.changed]
        if not source_changed:
            if any(c.lfs_pointer and kinds[id(c)] is FileKind.SOURCE for c in changes):
                self._drop(DropReason.LFS_POINTER, entry, selected_by)
                return None
            present = {kinds[id(c)] for c in changes}
            for kind, reason in _DROP_ORDER:
                if kind in present:
                    self._drop(reason, entry, selected_by)
                    return None
            if any(c.binary and kinds[id(c)] is not FileKind.TEST for c in changes):
                self._drop(DropReason.BINARY, entry, selected_by)
                return None
            self._drop(DropReason.NO_SOURCE_CHANGE, entry, selected_by)
            return None
        if sum(c.section.changed for c in source) > self.config.max_lines:
            self._drop(DropReason.TOO_LARGE, entry, selected_by)
            return None
        if all(c.whitespace_only() for c in source_changed):
            self._drop(DropReason.FORMATTING_ONLY, entry, selected_by)
            return None
        if all(c.whitespace_only() or c.comments_only(language_of(c.path)) for c in source_changed):
            self._drop(DropReason.DOCS_ONLY, entry, selected_by)
            return None
        test_changes = [c for c in changes if kinds[id(c)] is FileKind.TEST]
        return _Candidate(entry, source, sorted(c.path for c in test_changes), test_changes, selected_by)

    def _build_batch(self, batch: list[_Candidate], blobs: BlobReader) -> Iterator[MinedCase]:
        """Build the batch's cases, reading the files they need in one round trip; a
        candidate whose fix adds an API its tests call is dropped here (it needs the
        parent's files, which the symbols need too)."""
        wanted = [c.new_blob for cand in batch for c in cand.source if c.new_blob and c.blocks]
        wanted += [c.old_blob for cand in batch if self._vets_api(cand) for c in cand.test_changes
                   if c.section.body is None and c.old_blob and not c.added_file]  # fmt: skip
        contents = blobs.get_many(list(dict.fromkeys(wanted)))
        for cand in batch:
            api = self._new_api(cand, contents) if self._vets_api(cand) else None
            if api is not None:
                self._drop(DropReason.NEW_API, cand.entry, cand.selected_by, api.describe())
                continue
            yield self._build(cand.entry, cand.source, cand.tests, contents, cand.selected_by)

    def _vets_api(self, cand: _Candidate) -> bool:
        """Whether the new-API veto applies: to reversals (a feature removed is no bug; a
        feature is still a fine task), and not when the subject itself says "fix"."""
        return not self.forward and not self._pattern.search(cand.entry.subject)

    def _new_api(self, cand: _Candidate, contents: dict[str, bytes | None]) -> NewApi | None:
        # The diff runs FIX -> PARENT: what the fix added is what it removes.
        def text(blob: str | None) -> str:
            data = contents.get(blob) if blob else None
            return data.decode("utf-8", "replace") if data else ""

        tests: list[str] = []
        for change in cand.test_changes:
            if change.section.body is None:  # too large to keep: the fix's whole test file
                tests += text(change.old_blob).splitlines()
            else:
                tests += [line for block in change.blocks for line in block.removed]
        by_language: dict[str | None, list[FileChange]] = {}
        for change in cand.source:
            by_language.setdefault(language_of(change.path), []).append(change)
        for language, changes in by_language.items():
            api = introduced_api(
                [line for c in changes for block in c.blocks for line in block.removed],
                [line for c in changes for block in c.blocks for line in block.added],
                "\n".join(text(c.new_blob) for c in changes), tests, language,
            )  # fmt: skip
            if api is not None:
                return api
        return None

    def _kind(self, change: FileChange) -> FileKind:
        return change_kind(self.classifier, change)

    def _build(
        self, entry: LogEntry, source: list[FileChange], tests: list[str], contents: dict[str, bytes | None],
        selected_by: tuple[SelectionSignal, ...] = (),
    ) -> MinedCase:
        seed = self.config.seed
        cid = case_id(seed, entry.sha)
        locations = changed_locations(source, contents)
        restored: set[str] = set()  # identifiers of lines the fix removed, which the patch writes back
        taken: set[str] = set()  # identifiers of lines the fix added, which the patch takes away
        for change in source:
            language = language_of(change.path)
            for block in change.blocks:
                restored |= identifiers(block.added, language)
                taken |= identifiers(block.removed, language)
        enclosing = {loc.symbol.rsplit(".", 1)[-1] for loc in locations if loc.symbol}
        fix_removed = restored - taken
        fix_added = taken - restored
        paths = [c.path for c in source]
        languages = Counter(lang for p in paths if (lang := language_of(p)))
        case = Case(
            case_id=cid,
            base=entry.sha,
            title=neutral_title(seed, entry.sha, paths),
            patch=f"patches/{cid}.diff",
            paths=paths,
            language=languages.most_common(1)[0][0] if languages else None,
        )
        gold = GoldRecord(
            case_id=cid,
            stratum=Stratum.FIX_REVERSAL,
            expect_finding=True,
            defects=[
                Defect(
                    defect_id=f"{cid}-d1",
                    defect_class="fix_reversal",
                    locations=locations,
                    symbols=sorted(enclosing | fix_removed | fix_added),
                    removed_identifiers=sorted(fix_removed),
                    added_identifiers=sorted(fix_added),
                    description=describe_fix_reversal(entry, sorted(enclosing)),
                )
            ],
            provenance=Provenance(
                commit=entry.sha,
                parent=entry.parents[0],
                date=entry.date,
                subject=entry.subject,
                test_paths=tests,
                selected_by=list(selected_by),
            ),
            source_date=entry.committed or entry.date,
        )
        patch = b"".join(c.section.raw() for c in source)
        return MinedCase(case=case, gold=gold, patch=patch)


#: A trailer line (``Signed-off-by: …``): not part of what the fix says.
_TRAILER = re.compile(r"^[A-Za-z][\w-]*-by: |^(?:Change-Id|Cc|Fixes|Closes|Refs?): ", re.IGNORECASE)
#: At most this much of the message's first paragraph goes into the description.
_BODY_CHARS = 400


def change_kind(classifier: PathClassifier, change: FileChange) -> FileKind:
    """The kind of a changed file, from its old and new paths (:func:`paths_kind`)."""
    return paths_kind(classifier, change.old_path, change.new_path)


def paths_kind(classifier: PathClassifier, old: str | None, new: str | None) -> FileKind:
    """The kind of a file from its old and new paths: a file moved into or out of the
    tests counts as a test file (and likewise excluded, lockfile, vendored)."""
    kinds = {classifier.kind(p) for p in (old, new) if p}
    for kind in (FileKind.TEST, FileKind.EXCLUDED, FileKind.LOCKFILE, FileKind.VENDORED):
        if kind in kinds:
            return kind
    return FileKind.SOURCE if FileKind.SOURCE in kinds else kinds.pop()


def describe_fix_reversal(entry: LogEntry, functions: list[str]) -> str:
    """Gold words for a fix reversal: the fix's subject, where, and its message's first paragraph.

    The subject (and the body's first paragraph, trailers left out) is what its author
    said the bug was: the words a matcher needs to recognise a reviewer's paraphrase. It
    is kept in gold only; the case's title, id and patch never carry it.
    """
    where = " in " + ", ".join(f"`{f}`" for f in functions) if functions else ""
    text = f'Undoes {entry.sha[:12]} "{entry.subject}"{where}: the defect that commit fixed is back'
    body = entry.message.split("\n\n", 1)[1] if "\n\n" in entry.message else ""
    paragraph = next((p for p in body.split("\n\n") if p.strip()), "")
    words = " ".join(line.strip() for line in paragraph.splitlines() if line.strip() and not _TRAILER.match(line))
    if words:
        words = words if len(words) <= _BODY_CHARS else words[: _BODY_CHARS - 1].rsplit(" ", 1)[0] + "…"
        text += f". {words}"
    return text


def changed_locations(changes: list[FileChange], contents: dict[str, bytes | None]) -> list[Location]:
    """The line ranges ``changes`` write, numbered in the patched tree, each labelled with its
    enclosing symbol (a deleted file: line 0 of its old path). A fix reversal's gold
    locations, and a mirror's ``changed``: one labeller, so that both read alike.

    Args:
        contents: the patched side's file bytes by blob id (``FileChange.new_blob``).
    """
    locations: list[Location] = []
    for change in changes:
        if change.new_path is None:
            locations.append(Location(path=change.old_path or "", start_line=0, end_line=0))
            continue
        index = _symbols(change, contents)
        for block in change.blocks:
            start, end = block.span()
            symbol = index.at(start) if index else None
            locations.append(Location(path=change.new_path, start_line=start, end_line=end, symbol=symbol))
    return locations


def _symbols(change: FileChange, contents: dict[str, bytes | None]) -> SymbolIndex | None:
    data = contents.get(change.new_blob) if change.new_blob else None
    if data is None or b"\0" in data[:8000]:
        return None
    return SymbolIndex(data.decode("utf-8", "replace"), language_of(change.path))


def _shallow_boundary(repo: Repository) -> list[str]:
    """Commits whose parents a shallow clone lacks; diffing them would be meaningless."""
    from pathlib import Path

    shallow_file = Path(repo.run("rev-parse", "--git-path", "shallow"))
    if not shallow_file.is_absolute():
        shallow_file = repo.path / shallow_file
    try:
        return shallow_file.read_text().split()
    except OSError:
        return []
