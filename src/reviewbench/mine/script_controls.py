"""Control cases for JavaScript/TypeScript projects: clean edits of the defect cases' files.

The same policy as Python's :class:`reviewbench.mine.controls.ControlMaker` — controls on
the files the defect cases touch, round-robin over those files, the kind used least so
far next, and a share made at the fix commits on the fixes' own files — with the script
refactors (:mod:`script_refactors`) and local renames (:mod:`script_rename`). Every
control must parse cleanly; validation then has to find the tests still passing.
Combined controls (several refactors in one file) are Python-only for now.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from ..config import MineConfig
from ..records import GoldRecord, Provenance, Stratum
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .head import HeadTree
from .naming import case_id
from .paths import language_of
from .script_mutations import ParsedScript, ScriptSite
from .script_refactors import SCRIPT_REFACTORS, ScriptRefactor
from .script_rename import rename_in_script_functions, same_tokens, script_function_spans

__all__ = ["SCRIPT_CONTROL_KINDS", "ScriptControlMaker"]

_KINDS: dict[str, type[ScriptRefactor]] = {cls.name: cls for cls in SCRIPT_REFACTORS}
RENAME_LOCAL = "rename_local"
SCRIPT_CONTROL_KINDS = (RENAME_LOCAL, *_KINDS)


@dataclass(frozen=True)
class _Option:
    kind: str
    line: int
    site: ScriptSite | None = None


@dataclass
class _FileEdits:
    path: str
    language: str
    text: str
    tree: HeadTree
    options: dict[str, list[tuple[float, _Option]]] = field(default_factory=dict)
    made: set[str] = field(default_factory=set)


class ScriptControlMaker:
    """Chooses and builds JavaScript/TypeScript control cases (the interface of ``ControlMaker``)."""

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
            language = language_of(path)
            ok = text is not None and language is not None and compiles(text, path)
            self._files[tree.commit, path] = _FileEdits(path, language or "", text or "", tree) if ok else None
        return self._files[tree.commit, path]

    def _tree(self, commit: str) -> HeadTree:
        if commit not in self._trees:
            self._trees[commit] = HeadTree(self.head.repo, self.head.classifier, self.head.blobs, commit)
        return self._trees[commit]

    def paired(self, fixes: list[tuple[str, list[str]]], count: int) -> list[SyntheticCase]:
        """Up to ``count`` controls at the fix commits, on each fix's own script files, one
        per fix before any fix gets a second."""
        chosen: list[SyntheticCase] = []
        active = [(commit, sorted(set(paths))) for commit, paths in fixes if paths]
        self._rng.shuffle(active)
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

    def cases(self, paths: list[str], count: int) -> list[SyntheticCase]:
        """Up to ``count`` controls on ``paths`` first, then on other script sources if needed."""
        chosen: list[SyntheticCase] = []
        first = sorted(set(paths))
        self._rng.shuffle(first)
        others = [p for p in self.head.script_sources(self.config.paths) if p not in set(first)]
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

    def _options(self, edits: _FileEdits, kind: str) -> list[tuple[float, _Option]]:
        if not edits.options:
            found: dict[str, list[_Option]] = {k: [] for k in SCRIPT_CONTROL_KINDS}
            found[RENAME_LOCAL] = [_Option(RENAME_LOCAL, first) for first, _ in
                                   script_function_spans(edits.text, edits.language)]  # fmt: skip
            for site in ParsedScript(edits.text, edits.language).sites(list(SCRIPT_REFACTORS)):
                found[site.operator].append(_Option(site.operator, site.line, site))
            edits.options = {k: [(self._rng.random(), o) for o in v] for k, v in found.items()}
        return edits.options[kind]

    def _take(self, edits: _FileEdits) -> SyntheticCase | None:
        ranks = {kind: self._rng.random() for kind in SCRIPT_CONTROL_KINDS}
        for kind in sorted(SCRIPT_CONTROL_KINDS, key=lambda k: (self.used[k], ranks[k])):
            options = self._options(edits, kind)
            while options:
                best = min(options, key=lambda o: o[0])
                options.remove(best)
                made = self._build(edits, best[1])
                if made is not None:
                    self.used[kind] += 1
                    return made
        return None

    def _edited(self, edits: _FileEdits, option: _Option, key: str) -> str | None:
        if option.site is None:
            renamed = rename_in_script_functions(edits.text, edits.language, [option.line],
                                                 f"{self.config.seed}:{key}", limit=1)  # fmt: skip
            return renamed.source if renamed else None
        new = ParsedScript(edits.text, edits.language).apply(option.site)
        if _KINDS[option.kind].same_tokens and not same_tokens(edits.text, new, edits.language):
            return None
        return new

    def _build(self, edits: _FileEdits, option: _Option) -> SyntheticCase | None:
        text, path, tree = edits.text, edits.path, edits.tree
        where = path if tree is self.head else f"{tree.commit}:{path}"
        key = f"control:{where}:{option.line}:{option.kind}"
        new = self._edited(edits, option, key)
        if new is None or new == text or new in edits.made or not compiles(new, path):
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
            provenance=Provenance(date=tree.date(path), operator=option.kind),
        )
        edit = FileEdit(path, text, new, tree.files[path].mode, tree.python_funcnames(path))
        return make_case(self.config.seed, key, tree.commit, [edit], gold)
