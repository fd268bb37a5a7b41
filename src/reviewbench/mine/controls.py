"""Control cases (SPEC 3.3): clean changes to the same files as the defect cases.

A reviewer that flags everything scores full recall; controls are what expose it. They
are drawn from the files the defect cases touch (so a reviewer cannot tell them apart by
file), spread round-robin over those files, and the refactor kind used least so far goes
next. Controls paired with fix reversals are made at the fix commits, on the fixes' own
files (:meth:`ControlMaker.paired`): a reviewer cannot tell them apart by base commit
either, and validation runs them on the same tree as the defect. A control is kept only
if the edited file compiles; a reformat must also leave Python's syntax tree identical.
Validation then has to find the tests still passing.
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from ..config import MineConfig
from ..records import GoldRecord, Provenance, Stratum
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .head import HeadTree
from .mutations import ParsedModule, Site
from .naming import case_id
from .refactors import REFACTORS, Refactor
from .rename import function_spans, rename_in_functions

__all__ = ["CONTROL_KINDS", "ControlMaker"]

_KINDS: dict[str, type[Refactor]] = {cls.name: cls for cls in REFACTORS}
RENAME_LOCAL = "rename_local"
#: Every control kind: a rename of one local, then the tree refactors.
CONTROL_KINDS = (RENAME_LOCAL, *_KINDS)


@dataclass(frozen=True)
class _Option:
    """One possible control edit: a tree refactor's site, or a function whose local to rename."""

    kind: str
    line: int
    site: Site | None = None


@dataclass
class _FileEdits:
    """A file's control options, found per kind only when that kind is wanted."""

    path: str
    text: str
    tree: HeadTree
    options: dict[str, list[tuple[float, _Option]]] = field(default_factory=dict)
    module: ParsedModule | None = None
    made: set[str] = field(default_factory=set)


class ControlMaker:
    """Chooses and builds control cases at HEAD."""

    def __init__(self, config: MineConfig, head: HeadTree) -> None:
        self.config = config
        self.head = head
        self.used: Counter[str] = Counter()
        self._rng = random.Random(f"{config.seed}:controls")
        self._files: dict[tuple[str, str], _FileEdits | None] = {}
        self._keys: set[str] = set()
        self._trees: dict[str, HeadTree] = {head.commit: head}

    def _load(self, path: str, tree: HeadTree | None = None) -> _FileEdits | None:
        tree = tree or self.head
        if (tree.commit, path) not in self._files:
            text = tree.text(path) if path in tree.files else None
            loaded = _FileEdits(path, text, tree) if text is not None and compiles(text, path) else None
            self._files[tree.commit, path] = loaded
        return self._files[tree.commit, path]

    def _tree(self, commit: str) -> HeadTree:
        if commit not in self._trees:
            self._trees[commit] = HeadTree(self.head.repo, self.head.classifier, self.head.blobs, commit)
        return self._trees[commit]

    def paired(self, fixes: list[tuple[str, list[str]]], count: int) -> list[SyntheticCase]:
        """Up to ``count`` controls at the fix commits, on each fix's own files.

        Args:
            fixes: (fix commit, the Python files its case changes) per fix reversal.
                Fixes are visited round-robin in a seeded order, so that no fix gets a
                second control before every fix that can have one has one.
        """
        chosen: list[SyntheticCase] = []
        order = [(commit, sorted(set(paths))) for commit, paths in fixes if paths]
        self._rng.shuffle(order)
        active = order
        while active and len(chosen) < count:
            still = []
            for commit, paths in active:
                if len(chosen) >= count:
                    break
                tree = self._tree(commit)
                candidates = list(paths)
                self._rng.shuffle(candidates)
                for path in candidates:
                    edits = self._load(path, tree)
                    made = self._take(edits) if edits else None
                    if made is not None:
                        chosen.append(made)
                        still.append((commit, paths))
                        break
            active = still
        return chosen

    def _options(self, edits: _FileEdits, kind: str) -> list[tuple[float, _Option]]:
        if kind not in edits.options:
            found: dict[str, list[_Option]] = {}
            if kind == RENAME_LOCAL:
                found[kind] = [_Option(kind, first) for first, _ in function_spans(edits.text)]
            elif edits.module is None:
                try:
                    edits.module = ParsedModule(edits.text)
                except (cst.ParserSyntaxError, RecursionError):
                    edits.module = None
                for site in edits.module.sites(list(REFACTORS)) if edits.module else []:
                    found.setdefault(site.operator, []).append(_Option(site.operator, site.line, site))
                for name in _KINDS:
                    found.setdefault(name, [])
            for name, options in found.items():
                edits.options[name] = [(self._rng.random(), o) for o in options]
        return edits.options[kind]

    def cases(self, paths: list[str], count: int) -> list[SyntheticCase]:
        """Up to ``count`` controls on ``paths`` first, then on other source files if needed."""
        chosen: list[SyntheticCase] = []
        first = sorted(set(paths))
        self._rng.shuffle(first)
        others = [p for p in self.head.sources(self.config.paths) if p not in set(first)]
        self._rng.shuffle(others)
        for group in (first, others):
            active = list(group)
            while active and len(chosen) < count:
                still = []
                for path in active:
                    if len(chosen) >= count:
                        break
                    edits = self._load(path)
                    made = self._take(edits) if edits else None
                    if made is not None:
                        chosen.append(made)
                        still.append(path)
                active = still
        return chosen

    def _take(self, edits: _FileEdits) -> SyntheticCase | None:
        """A control of the least-used kind this file offers."""
        ranks = {kind: self._rng.random() for kind in CONTROL_KINDS}
        for kind in sorted(CONTROL_KINDS, key=lambda k: (self.used[k], ranks[k])):
            options = self._options(edits, kind)
            while options:
                best = min(options, key=lambda o: o[0])
                options.remove(best)
                made = self._build(edits, best[1])
                if made is not None:
                    self.used[kind] += 1
                    return made
        return None

    def _build(self, edits: _FileEdits, option: _Option) -> SyntheticCase | None:
        text, path, tree = edits.text, edits.path, edits.tree
        # Controls at HEAD keep the keys (and so the ids) they always had.
        where = path if tree is self.head else f"{tree.commit}:{path}"
        key = f"control:{where}:{option.line}:{option.kind}"
        if option.site is None:
            renamed = rename_in_functions(text, [option.line], f"{self.config.seed}:{key}", limit=1)
            new = renamed.source if renamed else text
        else:
            try:
                new = edits.module.apply(option.site)  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001 - a replacement libcst refuses is a site skipped
                return None
        if new == text or new in edits.made or not compiles(new, path):
            return None
        if option.kind in _KINDS and _KINDS[option.kind].ast_equal and ast.dump(ast.parse(new)) != ast.dump(ast.parse(text)):
            return None
        edits.made.add(new)
        suffix = 2
        while key in self._keys:
            key = f"control:{where}:{option.line}:{option.kind}:{suffix}"
            suffix += 1
        self._keys.add(key)
        gold = GoldRecord(
            case_id=case_id(self.config.seed, key),
            stratum=Stratum.CONTROL,
            expect_finding=False,
            defects=[],
            # No test_paths: a control is proven by the whole suite passing.
            provenance=Provenance(date=tree.date(path), operator=option.kind),
        )
        edit = FileEdit(path, text, new, tree.files[path].mode, tree.python_funcnames(path))
        return make_case(self.config.seed, key, tree.commit, [edit], gold)
