"""Control cases: clean changes to the same files as the defect cases.

A reviewer that flags everything scores full recall; controls are what expose it. They
are drawn from the files the defect cases touch (so a reviewer cannot tell them apart by
file), spread round-robin over those files, and the refactor kind used least so far goes
next. Controls paired with fix reversals are made at the fix commits, on the fixes' own
files (:meth:`ControlMaker.paired`): a reviewer cannot tell them apart by base commit
either, and validation runs them on the same tree as the defect. A control is kept only
if the edited file compiles; a reformat must also leave Python's syntax tree identical,
and a removal of unreachable code its bytecode. Validation then has to find the tests
still passing.

A control may also combine two or three refactors in different functions of one file,
far enough apart to be separate hunks (``combined_2``, ``combined_3``): defect cases
often span several hunks, and clean cases of one hunk each would let a reviewer tell
them apart by shape. :class:`ShapeQuota` then chooses, from more candidates than needed,
the controls whose shapes match the defect cases' (:mod:`shape`).
"""

from __future__ import annotations

import ast
import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import PositionProvider

from ..config import MineConfig
from ..records import GoldRecord, Provenance, Stratum
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .head import HeadTree
from .mutations import ParsedModule, Site
from .naming import case_id
from .refactors import REFACTORS, Refactor, same_bytecode
from .rename import function_spans, rename_in_functions
from .shape import Shape, ShapeBin, patch_shape, shape_bin
from .textdiff import common_ends

__all__ = ["COMBINED_KINDS", "CONTROL_KINDS", "POOL_FACTOR", "ControlMaker", "ShapeQuota"]

_KINDS: dict[str, type[Refactor]] = {cls.name: cls for cls in REFACTORS}
RENAME_LOCAL = "rename_local"
#: Every control kind: a rename of one local, then the tree refactors.
CONTROL_KINDS = (RENAME_LOCAL, *_KINDS)
#: Controls made of several tree refactors in different functions of one file, by count.
COMBINED_KINDS = {"combined_2": 2, "combined_3": 3}
_ROTATION = (*CONTROL_KINDS, *COMBINED_KINDS)
#: Candidate controls made per control wanted, for :class:`ShapeQuota` to choose from.
POOL_FACTOR = 3
#: Lines between two refactors of a combined control: more than git's 3 + 3 lines of
#: context, so that each is its own hunk.
_HUNK_GAP = 7
#: Combinations tried per file and size.
_COMBINATIONS = 4


@dataclass(frozen=True)
class _Option:
    """One possible control edit: a tree refactor's site, or a function whose local to rename."""

    kind: str
    line: int
    site: Site | None = None
    parts: tuple[Site, ...] = ()


@dataclass
class _FileEdits:
    """A file's control options, found per kind only when that kind is wanted."""

    path: str
    text: str
    tree: HeadTree
    options: dict[str, list[tuple[float, _Option]]] = field(default_factory=dict)
    module: ParsedModule | None = None
    made: set[str] = field(default_factory=set)
    _syntax: str | None = None

    def syntax(self) -> str:
        """The file's syntax tree, dumped once: every reformat is compared with it."""
        if self._syntax is None:
            self._syntax = ast.dump(ast.parse(self.text))
        return self._syntax


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
        if kind in COMBINED_KINDS and kind not in edits.options:
            edits.options[kind] = [(self._rng.random(), o) for o in self._combinations(edits, COMBINED_KINDS[kind], kind)]
        return edits.options[kind]

    def _combinations(self, edits: _FileEdits, size: int, kind: str) -> list[_Option]:
        """Up to a few sets of ``size`` tree refactors, each in its own function, apart."""
        for name in _KINDS:
            self._options(edits, name)
        sites = [o.site for name in _KINDS for _, o in edits.options.get(name, []) if o.site is not None]
        if edits.module is None or len(sites) < size:
            return []
        positions = edits.module.wrapper.resolve(PositionProvider)
        spans = sorted(function_spans(edits.text), key=lambda s: s[1] - s[0])

        def function_of(line: int) -> tuple[int, int] | None:
            return next((s for s in spans if s[0] <= line <= s[1]), None)

        found: list[_Option] = []
        seen: set[tuple[int, ...]] = set()
        for _ in range(_COMBINATIONS):
            order = list(sites)
            self._rng.shuffle(order)
            chosen: list[tuple[Site, int, int]] = []
            for site in order:
                where = positions.get(site.node)
                if where is None or function_of(site.line) is None:
                    continue
                first, last = where.start.line, where.end.line
                if any(first - _HUNK_GAP < b and a < last + _HUNK_GAP or function_of(site.line) == function_of(s.line)
                       for s, a, b in chosen):  # fmt: skip
                    continue
                chosen.append((site, first, last))
                if len(chosen) == size:
                    break
            key = tuple(sorted(id(s) for s, _, _ in chosen))
            if len(chosen) == size and key not in seen:
                seen.add(key)
                parts = tuple(sorted((s for s, _, _ in chosen), key=lambda s: s.line))
                found.append(_Option(kind, parts[0].line, None, parts))
        return found

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
        ranks = {kind: self._rng.random() for kind in _ROTATION}
        # A combined kind counts a third of a use: fix reversals often span several hunks,
        # so the candidates need many combined controls to match them.
        for kind in sorted(_ROTATION, key=lambda k: (self.used[k] / (3 if k in COMBINED_KINDS else 1), ranks[k])):
            options = self._options(edits, kind)
            while options:
                best = min(options, key=lambda o: o[0])
                options.remove(best)
                made = self._build(edits, best[1])
                if made is not None:
                    self.used[kind] += 1
                    return made
        return None

    def _refactored(self, edits: _FileEdits, site: Site) -> str | None:
        """The file with one tree refactor applied, if it compiles and keeps what it must."""
        try:
            new = edits.module.apply(site)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - a replacement libcst refuses is a site skipped
            return None
        refactor = _KINDS[site.operator]
        if new == edits.text or not compiles(new, edits.path):
            return None
        if refactor.ast_equal and ast.dump(ast.parse(new)) != edits.syntax():
            return None
        if refactor.bytecode_equal and not same_bytecode(edits.text, new):
            return None
        return new

    def _combined(self, edits: _FileEdits, parts: tuple[Site, ...]) -> str | None:
        """The file with every part applied: each part on its own must pass its checks (the
        parts lie in different functions, so their proofs hold together)."""
        if edits.module is None:
            return None
        texts = [self._refactored(edits, part) for part in parts]
        if any(t is None for t in texts):
            return None
        merged = merge_edits(edits.text, texts)  # type: ignore[arg-type]
        if merged is not None:
            return merged  # what re-printing the module with every part replaced gives, without the walk
        replacements = {id(part.node): part.replacement for part in parts}

        class Replace(cst.CSTTransformer):
            def on_leave(self, original_node, updated_node):
                return replacements.get(id(original_node), updated_node)

        try:
            return edits.module.module.visit(Replace()).code
        except Exception:  # noqa: BLE001 - a replacement libcst refuses is a combination skipped
            return None

    def _build(self, edits: _FileEdits, option: _Option) -> SyntheticCase | None:
        text, path, tree = edits.text, edits.path, edits.tree
        # Controls at HEAD keep the keys (and so the ids) they always had.
        where = path if tree is self.head else f"{tree.commit}:{path}"
        key = f"control:{where}:{option.line}:{option.kind}"
        operator = option.kind
        if option.parts:
            key = f"control:{where}:" + "+".join(f"{p.line}:{p.operator}" for p in option.parts)
            operator = "+".join(p.operator for p in option.parts)
            new = self._combined(edits, option.parts) or text
        elif option.site is None:
            renamed = rename_in_functions(text, [option.line], f"{self.config.seed}:{key}", limit=1)
            new = renamed.source if renamed else text
        else:
            new = self._refactored(edits, option.site) or text
        if new == text or new in edits.made or not compiles(new, path):
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
            provenance=Provenance(date=tree.date(path), operator=operator),
        )
        edit = FileEdit(path, text, new, tree.files[path].mode, tree.python_funcnames(path))
        return make_case(self.config.seed, key, tree.commit, [edit], gold)


def merge_edits(original: str, edited: Sequence[str]) -> str | None:
    """``original`` with the one changed stretch of each text of ``edited`` applied at once;
    None when two stretches touch (then they are not independent edits)."""
    stretches = []
    for new in edited:
        start, tail = common_ends(original, new)
        stretches.append((start, len(original) - tail, new[start:len(new) - tail]))
    stretches.sort()
    if any(a[1] >= b[0] for a, b in itertools.pairwise(stretches)):
        return None
    out, at = [], 0
    for start, end, text in stretches:
        out += [original[at:start], text]
        at = end
    return "".join(out) + original[at:]


class ShapeQuota:
    """Chooses controls whose shape bins follow the defect cases' bin frequencies.

    ``count`` controls are shared out over the defect cases' bins by largest remainder
    (ties in bin order). Each pick goes to the bin furthest below its share and takes,
    among the candidates whose spread key (the fix commit for paired controls, the file
    at HEAD) has been taken least so far, the one nearest that bin
    (:meth:`ShapeBin.distance`), first in the maker's seeded order on ties. So every fix
    still gets a control before any gets a second, and nothing here is random.
    """

    def __init__(self, defects: Sequence[Shape], count: int) -> None:
        bins = Counter(shape_bin(s) for s in defects)
        total = sum(bins.values())
        self.quota: dict[ShapeBin, int] = {}
        if total and count:
            exact = {b: count * n / total for b, n in bins.items()}
            self.quota = {b: int(v) for b, v in exact.items()}
            left = count - sum(self.quota.values())
            for b in sorted(exact, key=lambda b: (-(exact[b] - int(exact[b])), b))[:left]:
                self.quota[b] += 1

    def choose(self, candidates: Sequence[SyntheticCase], count: int,
               spread: Callable[[SyntheticCase], str] = lambda c: ",".join(c.mined.case.paths),
               ) -> tuple[list[SyntheticCase], list[SyntheticCase]]:  # fmt: skip
        """(up to ``count`` chosen, the rest in their order); the quota keeps what is taken."""
        if not self.quota:
            return list(candidates[:count]), list(candidates[count:])
        bins = [shape_bin(patch_shape(c.mined.patch)) for c in candidates]
        keys = [spread(c) for c in candidates]
        left = set(range(len(candidates)))
        used: Counter[str] = Counter()
        taken: list[int] = []
        while len(taken) < count and left:
            want = min(self.quota, key=lambda b: (-self.quota[b], b))
            best = min(left, key=lambda i: (used[keys[i]], bins[i].distance(want), i))
            left.remove(best)
            taken.append(best)
            used[keys[best]] += 1
            self.quota[want] -= 1
        return [candidates[i] for i in sorted(taken)], [c for i, c in enumerate(candidates) if i in left]
