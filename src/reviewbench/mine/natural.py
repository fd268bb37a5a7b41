"""Natural history (SZZ): the change as it was reviewed when the bug went in.

For each mined fix, the lines it removed or modified that carry code (not blank, not
only a comment or a docstring's quotes: ``carries_code``) are blamed at the fix's parent
(``git blame -w -M -C``: whitespace ignored, moves followed; a copy is blamed on the
commit that copied it, see ``_unfollow_copies``). A commit that blame names but that only
re-formats, re-comments or consistently renames within the blamed file (the file's AST
unchanged up to docstrings and a renaming of the names it binds, for Python; its text
unchanged once whitespace and line comments are dropped for other languages), or that
``.git-blame-ignore-revs`` lists, is passed over with ``--ignore-rev`` and the lines are
blamed again, a few rounds at most.

Each introducing commit that has one parent and changes at most ``max_lines`` source
lines becomes a ``natural`` case: its own source diff applied to its parent, exactly as
it was originally reviewed. Gold marks the lines the later fix changed, numbered in the
introducing commit's tree; provenance names the fix. The fix's test files travel with
the case as a validation-only patch (``provenance.test_patch``), so that validation can
watch them fail with the introducing change and pass without it. A reviewer never sees
that patch.

Natural cases are a holdout: scores report them on their own and never pool them into
headline figures (``score/strata.py``).
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..config import MineConfig
from ..git.blame import (
    BlameLine,
    CommitInfo,
    blame,
    changed_files,
    commit_info,
    diff_bytes,
    ignore_revs,
    removed_lines,
    removed_texts,
    show_file,
)
from ..git.repo import Repository
from ..records import Case, Defect, GoldRecord, Location, Provenance, Stratum
from .fix_reversal import MinedCase
from .naming import case_id, neutral_title
from .paths import FileKind, PathClassifier, language_of
from .symbols import SymbolIndex, identifiers

__all__ = ["NaturalMiner", "NaturalSummary", "carries_code", "is_cosmetic"]

#: Rounds of "blame, pass over the cosmetic commits found, blame again" per file.
_ROUNDS = 5

_LINE_COMMENT = re.compile(r"(#|//).*$", re.MULTILINE)


#: Line-comment openers by language (the rest: ``//`` and C-style blocks).
_HASH_COMMENTS = frozenset({"python", "shell", "ruby", "perl", "r", "julia", "elixir", "nim"})
_DASH_COMMENTS = frozenset({"sql", "lua", "haskell"})
_C_COMMENTS = ("//", "/*", "*")
#: A line that only opens or closes a docstring: ``"""``, ``r'''``.
_QUOTES_ONLY = re.compile(r"^[rRuUbBfF]{0,2}(?:\"{3}|'{3})$")


def carries_code(text: str, language: str | None) -> bool:
    """Whether a line holds code: not blank, not only a comment, not only a docstring's
    quotes. SZZ blames only such lines, as PyDriller does: a fix that drops a blank line
    says nothing of the commit that wrote it."""
    line = text.strip()
    if not line:
        return False
    if language in _HASH_COMMENTS:
        return not line.startswith("#") and not (language == "python" and _QUOTES_ONLY.match(line))
    if language in _DASH_COMMENTS:
        return not line.startswith("--")
    if language is not None:
        return not line.startswith(_C_COMMENTS)
    return True


def _squeeze(text: str) -> str:
    return " ".join(text.split())


@dataclass
class NaturalSummary:
    """What natural-history mining found, and why some introducing commits made no case."""

    fixes: int = 0
    traced: int = 0
    introducing: int = 0
    cases: int = 0
    cosmetic_skipped: int = 0
    copies_unfollowed: int = 0
    ignored_by_file: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"fixes": self.fixes, "traced_fixes": self.traced, "introducing_commits": self.introducing,
                "cases": self.cases, "cosmetic_commits_passed_over": self.cosmetic_skipped,
                "copied_lines_unfollowed": self.copies_unfollowed,
                "ignore_revs_listed": self.ignored_by_file, "skipped": dict(sorted(self.skipped.items()))}  # fmt: skip


class _StripDocstrings(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [s for s in body
                    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]  # fmt: skip
            node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
        return node


def _python_shapes(text: str) -> tuple[str, str] | None:
    """The file's AST without docstrings, dumped as it is and with its bound names
    renamed canonically (one parse for both)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    tree = _StripDocstrings().visit(tree)
    plain = ast.dump(tree)
    return plain, ast.dump(_AlphaRename(_bound_names(tree)).visit(tree))


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the file itself binds: assignment and loop targets, parameters, definitions,
    import aliases, exception names. Builtins, imported modules' attributes and attribute
    names are not among them, so renaming one of those is a real change."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias) and node.asname:
            bound.add(node.asname)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


class _AlphaRename(ast.NodeTransformer):
    """Bound names become ``_v0``, ``_v1``… in order of first appearance, so two files that
    differ only by a consistent renaming dump alike."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.names: dict[str, str] = {}

    def _canon(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"_v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._canon(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._canon(node.arg)
        self.generic_visit(node)
        return node

    def _named(self, node):  # noqa: ANN001, ANN202 - a definition or handler
        if getattr(node, "name", None):
            node.name = self._canon(node.name)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_ExceptHandler = _named

    def visit_alias(self, node: ast.alias) -> ast.AST:
        if node.asname:
            node.asname = self._canon(node.asname)
        return node


def is_cosmetic(old: str, new: str, language: str | None) -> bool:
    """Whether ``old`` → ``new`` only re-formats, re-comments or consistently renames names
    the file binds (refactoring-aware SZZ): for Python the same AST up to docstrings and
    such a renaming; otherwise the same text without whitespace and line comments."""
    if language == "python":
        a, b = _python_shapes(old), _python_shapes(new)
        if a is not None and b is not None:
            return a[0] == b[0] or a[1] == b[1]

    def squeeze(text: str) -> str:
        return "".join(_LINE_COMMENT.sub("", text).split())

    return squeeze(old) == squeeze(new)


class NaturalMiner:
    """Traces mined fixes to the commits that introduced the lines they changed."""

    def __init__(self, config: MineConfig, repo: Repository) -> None:
        self.config = config
        self.repo = repo
        self.classifier = PathClassifier(config.test_patterns, config.include, config.exclude)
        self.summary = NaturalSummary()
        self._cosmetic: dict[tuple[str, str], bool] = {}
        self._info: dict[str, CommitInfo] = {}
        self._removed_texts: dict[str, frozenset[str]] = {}
        self._listed = set(ignore_revs(repo, repo.head))

    def _commit(self, sha: str) -> CommitInfo:
        if sha not in self._info:
            self._info[sha] = commit_info(self.repo, sha)
        return self._info[sha]

    def _is_cosmetic(self, sha: str, path: str) -> bool:
        """Whether commit ``sha`` only re-formatted or re-commented ``path``."""
        key = (sha, path)
        if key not in self._cosmetic:
            info = self._commit(sha)
            verdict = False
            if len(info.parents) == 1:
                old_path = path
                for _status, old, new in changed_files(self.repo, info.parents[0], sha):
                    if new == path:
                        old_path = old or path
                before, after = show_file(self.repo, info.parents[0], old_path), show_file(self.repo, sha, path)
                if before is not None and after is not None and b"\0" not in before + after:
                    verdict = is_cosmetic(before.decode("utf-8", "replace"), after.decode("utf-8", "replace"),
                                          language_of(path))  # fmt: skip
            self._cosmetic[key] = verdict
        return self._cosmetic[key]

    def _trace(self, fix: str, parent: str) -> list[tuple[BlameLine, str]]:
        """(blame of a line the fix removed, the line's text) for every such source line."""
        listed = sorted(self._listed | set(ignore_revs(self.repo, parent)))
        traced: list[tuple[BlameLine, str]] = []
        for change in removed_lines(self.repo, parent, fix):
            if not change.lines or self.classifier.kind(change.old_path) is not FileKind.SOURCE:
                continue
            language = language_of(change.old_path)
            texts = {n: t for n, t in zip(change.lines, change.texts, strict=True) if carries_code(t, language)}
            if not texts:
                continue
            passed_over: list[str] = []
            found: list[BlameLine] = []
            for _round in range(_ROUNDS):
                found = blame(self.repo, parent, change.old_path, list(texts), listed + passed_over)
                cosmetic = sorted({b.commit for b in found if b.commit not in passed_over
                                   and self._is_cosmetic(b.commit, b.orig_path)})  # fmt: skip
                if not cosmetic:
                    break
                passed_over += cosmetic
                self.summary.cosmetic_skipped += len(cosmetic)
            found = self._unfollow_copies(parent, change.old_path, found, texts, listed + passed_over)
            traced.extend((b, texts.get(b.final_line, "")) for b in found if b.commit not in passed_over)
        return traced

    def _unfollow_copies(self, parent: str, path: str, found: list[BlameLine], texts: dict[int, str],
                         ignore: list[str]) -> list[BlameLine]:  # fmt: skip
        """Follow moves, not copies: where plain blame names a later commit than ``-M -C``
        did, that commit introduced the line here unless it deleted the same text elsewhere
        (a move) or is one to pass over (cosmetic, or ignored: plain blame can fall back on an
        ignored commit). A
        line copied into new code went in with the commit that copied it."""
        plain = {b.final_line: b for b in blame(self.repo, parent, path, [b.final_line for b in found], ignore,
                                                 follow=False)}  # fmt: skip
        kept: list[BlameLine] = []
        for b in found:
            here = plain.get(b.final_line)
            if (here is None or here.commit == b.commit or here.commit in ignore
                    or _squeeze(texts.get(b.final_line, "")) in self._removed(here.commit)
                    or self._is_cosmetic(here.commit, here.orig_path)):  # fmt: skip
                kept.append(b)
            else:
                self.summary.copies_unfollowed += 1
                kept.append(here)
        return kept

    def _removed(self, sha: str) -> frozenset[str]:
        if sha not in self._removed_texts:
            self._removed_texts[sha] = removed_texts(self.repo, sha)
        return self._removed_texts[sha]

    def cases(self, fixes: list[MinedCase]) -> list[MinedCase]:
        """Natural cases for ``fixes`` (newest first), one per introducing commit."""
        self.summary.ignored_by_file = len(self._listed)
        by_commit: dict[str, list[tuple[MinedCase, list[tuple[BlameLine, str]]]]] = defaultdict(list)
        for fix in fixes:
            provenance = fix.gold.provenance
            if not provenance.commit or not provenance.parent:
                continue
            self.summary.fixes += 1
            traced = self._trace(provenance.commit, provenance.parent)
            if not traced:
                self.summary.skipped["fix_removed_no_source_line"] += 1
                continue
            self.summary.traced += 1
            lines_by_commit: dict[str, list[tuple[BlameLine, str]]] = defaultdict(list)
            for blamed, text in traced:
                lines_by_commit[blamed.commit].append((blamed, text))
            for sha, lines in lines_by_commit.items():
                by_commit[sha].append((fix, lines))
        self.summary.introducing = len(by_commit)
        made = []
        for sha in sorted(by_commit):
            case = self._build(sha, by_commit[sha])
            if case is not None:
                made.append(case)
        self.summary.cases = len(made)
        return made

    def _build(self, sha: str, fixes: list[tuple[MinedCase, list[tuple[BlameLine, str]]]]) -> MinedCase | None:
        info = self._commit(sha)
        if len(info.parents) != 1:
            self.summary.skipped["merge" if info.parents else "root_commit"] += 1
            return None
        parent = info.parents[0]
        source = [(old, new) for _status, old, new in changed_files(self.repo, parent, sha)
                  if new is not None and self.classifier.kind(new) is FileKind.SOURCE]  # fmt: skip
        if not source:
            self.summary.skipped["no_source_change"] += 1
            return None
        pathspec = sorted({p for pair in source for p in pair if p})
        patch = diff_bytes(self.repo, parent, sha, pathspec, renames=True)
        if b"GIT binary patch" in patch:
            self.summary.skipped["binary"] += 1
            return None
        changed = sum(1 for line in patch.split(b"\n")
                      if line[:1] in (b"+", b"-") and not line.startswith((b"+++ ", b"--- ")))  # fmt: skip
        if changed > self.config.max_lines:
            self.summary.skipped["too_large"] += 1
            return None
        paths = [new for _old, new in source if new]
        seed = self.config.seed
        key = f"natural:{sha}"
        cid = case_id(seed, key)
        defects: list[Defect] = []
        tests: list[str] = []
        newest_fix = fixes[0][0]
        texts: dict[str, SymbolIndex] = {}
        for number, (fix, lines) in enumerate(fixes, start=1):
            locations = self._locations(sha, paths, [b for b, _ in lines], texts)
            if not locations:
                continue
            fix_defect = fix.gold.defects[0] if fix.gold.defects else None
            # What the fix took away, on the lines this commit wrote: the patch adds them.
            # Blamed lines need not be consecutive: each is read on its own.
            written = set().union(*(identifiers([t], language_of(b.orig_path)) for b, t in lines))
            restored = written & set(fix_defect.removed_identifiers if fix_defect else ())
            enclosing = {loc.symbol.rsplit(".", 1)[-1] for loc in locations if loc.symbol}
            fix_sha = fix.gold.provenance.commit or ""
            defects.append(Defect(
                defect_id=f"{cid}-d{number}",
                defect_class="natural",
                locations=locations,
                symbols=sorted(enclosing | restored),
                added_identifiers=sorted(restored),
                description=f"Introduced by {sha[:12]} ({info.subject}); fixed by {fix_sha[:12]}: "
                            f"{fix.gold.provenance.subject or ''}",
            ))  # fmt: skip
            if fix is newest_fix:
                tests = list(fix.gold.provenance.test_paths)
        if not defects:
            self.summary.skipped["lines_outside_its_source_diff"] += 1
            return None
        fix_gold = newest_fix.gold
        test_patch = diff_bytes(self.repo, parent, fix_gold.provenance.commit or "", tests) if tests else b""
        languages = Counter(lang for p in paths if (lang := language_of(p)))
        case = Case(case_id=cid, base=parent, title=neutral_title(seed, key, paths), patch=f"patches/{cid}.diff",
                    paths=paths, language=languages.most_common(1)[0][0] if languages else None)  # fmt: skip
        gold = GoldRecord(
            case_id=cid,
            stratum=Stratum.NATURAL,
            expect_finding=True,
            defects=defects,
            provenance=Provenance(
                commit=fix_gold.provenance.commit,
                parent=fix_gold.provenance.parent,
                date=info.author_date,
                subject=fix_gold.provenance.subject,
                test_paths=tests,
                introduced_by=sha,
                test_patch=f"patches/{cid}.tests.diff" if test_patch else None,
            ),
            source_date=info.commit_date,
        )
        extra = {f"patches/{cid}.tests.diff": test_patch} if test_patch else {}
        return MinedCase(case=case, gold=gold, patch=patch, extra=extra)

    def _locations(self, sha: str, paths: list[str], lines: list[BlameLine],
                   indexes: dict[str, SymbolIndex]) -> list[Location]:  # fmt: skip
        """The blamed lines as ranges in ``sha``'s tree, within the case's files."""
        by_path: dict[str, set[int]] = defaultdict(set)
        for b in lines:
            if b.orig_path in paths:
                by_path[b.orig_path].add(b.orig_line)
        locations = []
        for path in sorted(by_path):
            if path not in indexes:
                data = show_file(self.repo, sha, path) or b""
                indexes[path] = SymbolIndex(data.decode("utf-8", "replace"), language_of(path))
            numbers = sorted(by_path[path])
            start = prev = numbers[0]
            for n in [*numbers[1:], None]:
                if n is not None and n == prev + 1:
                    prev = n
                    continue
                locations.append(Location(path=path, start_line=start, end_line=prev, symbol=indexes[path].at(start)))
                if n is not None:
                    start = prev = n
        return locations
