"""Mutation cases: one small, realistic defect in real code at HEAD per case.

Sites are spread out on purpose: files are visited round-robin in a seeded order, each
visit takes one site from the file's next function, and within a function the operator
used least so far wins. When coverage is known, covered sites are exhausted first (a
mutant no test executes cannot be observed). Every mutant is checked before it becomes
a case: it compiles, and it changes one or two lines.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import libcst as cst

from ..config import MineConfig
from ..records import Defect, GoldRecord, Provenance, Stratum
from .coverage import CoverageMap, TestLocator
from .edits import FileEdit, SyntheticCase, compiles, edited_location, make_case
from .head import HeadTree
from .mutations import Operator, ParsedModule, Site, registry
from .naming import case_id
from .paths import language_of
from .script_mutations import ParsedScript, ScriptOperator, ScriptSite
from .script_mutations import registry as script_registry
from .script_tests import ScriptTestLocator
from .symbols import SymbolIndex, identifiers
from .textdiff import changed_size, split_lines

__all__ = ["MutationMiner", "describe_mutation", "selected_operators", "selected_script_operators"]

#: Files that hold no library code worth mutating (unless --paths asks for them).
_NOT_LIBRARY_NAMES = frozenset({"setup.py", "noxfile.py", "fabfile.py", "tasks.py", "conftest.py", "manage.py"})
_NOT_LIBRARY_DIRS = frozenset({"bench", "benchmarks", "examples", "example", "scripts", "tools", "docs", "doc"})
#: Larger files are skipped: parsing them costs more than their sites are worth.
_MAX_BYTES = 1_000_000


def describe_mutation(operator: type[Operator | ScriptOperator], note: str, symbol: str | None) -> str:
    """Gold words for a mutant: the operator, what it changed, where, and what now goes wrong.

    E.g. "a condition was inverted: inverted the condition `x > 0` in `parse_header`: the
    branch now runs when it should not, …". Enough words for a matcher to recognise a
    reviewer's paraphrase; gold only, never shown to a reviewer.
    """
    where = f" in `{symbol}`" if symbol else ""
    text = f"{operator.summary}: {note}{where}"
    return f"{text}: {operator.effect}" if operator.effect else text


def selected_operators(names: tuple[str, ...]) -> list[type[Operator]]:
    """The operators named (all when empty), in registry order."""
    known = registry()
    return [cls for name, cls in known.items() if not names or name in names]


def selected_script_operators(names: tuple[str, ...]) -> list[type[ScriptOperator]]:
    """The JavaScript/TypeScript operators named (all when empty), in registry order."""
    return [cls for name, cls in script_registry().items() if not names or name in names]


@dataclass
class _FileSites:
    """A parsed file's remaining sites, grouped by function, in seeded order."""

    path: str
    text: str
    module: ParsedModule | ParsedScript
    functions: list[list[tuple[float, Site | ScriptSite]]]
    cursor: int = 0
    made: set[str] = field(default_factory=set)


class MutationMiner:
    """Chooses mutation sites at HEAD and turns them into cases."""

    def __init__(self, config: MineConfig, head: HeadTree, coverage: CoverageMap | None,
                 locator: TestLocator | ScriptTestLocator) -> None:  # fmt: skip
        self.config = config
        self.head = head
        self.coverage = coverage
        self.locator = locator
        #: JavaScript/TypeScript rather than Python, for a Node project (docs/LANGUAGES.md).
        self.scripted = head.scripted
        self.operators: dict[str, type[Operator | ScriptOperator]] = (
            {cls.name: cls for cls in selected_script_operators(config.operators)} if self.scripted
            else {cls.name: cls for cls in selected_operators(config.operators)})  # fmt: skip
        self.used: Counter[str] = Counter()
        self._rng = random.Random(f"{config.seed}:mutations")
        self._files: dict[str, _FileSites | None] = {}
        self._keys: set[str] = set()
        self.rejected = 0

    def _candidates(self) -> list[str]:
        paths = self.head.script_sources(self.config.paths) if self.scripted else self.head.sources(self.config.paths)
        if not self.config.paths:
            paths = [p for p in paths if PurePosixPath(p).name not in _NOT_LIBRARY_NAMES
                     and not _NOT_LIBRARY_DIRS.intersection(PurePosixPath(p).parts[:-1])]  # fmt: skip
        self._rng.shuffle(paths)
        return paths

    def _load(self, path: str) -> _FileSites | None:
        if path in self._files:
            return self._files[path]
        text = self.head.text(path)
        loaded = None
        if text is not None and len(text) <= _MAX_BYTES:
            module: ParsedModule | ParsedScript | None
            if self.scripted:
                module = ParsedScript(text, language_of(path) or "javascript")
                module = module if module.valid else None  # a mutant must parse: so must its original
            else:
                try:
                    module = ParsedModule(text)
                except (cst.ParserSyntaxError, RecursionError):
                    module = None
            if module is not None:
                loaded = self._group(path, text, module)
        self._files[path] = loaded
        return loaded

    def _group(self, path: str, text: str, module: ParsedModule | ParsedScript) -> _FileSites | None:
        index = SymbolIndex(text, language_of(path))
        groups: dict[str, list[tuple[float, Site | ScriptSite]]] = {}
        for site in module.sites(list(self.operators.values())):  # type: ignore[arg-type]
            function = index.at(site.line) or ""
            groups.setdefault(function, []).append((self._rng.random(), site))
        if not groups:
            return None
        functions = [groups[name] for name in sorted(groups)]
        self._rng.shuffle(functions)
        return _FileSites(path, text, module, functions)

    def _eligible(self, path: str, site: Site | ScriptSite, covered: bool | None) -> bool:
        return covered is None or self.coverage is None or self.coverage.covered(path, site.line) == covered

    def cases(self, count: int, on_case: Callable[[int], None] | None = None) -> list[SyntheticCase]:
        """Up to ``count`` mutation cases; fewer only when the code has no more sites."""
        chosen: list[SyntheticCase] = []
        files = self._candidates()
        tiers: list[bool | None] = [True, False] if self.coverage else [None]
        for tier in tiers:
            active = list(files)
            while active and len(chosen) < count:
                still: list[str] = []
                for path in active:
                    if len(chosen) >= count:
                        break
                    sites = self._load(path)
                    made = self._take(sites, tier) if sites else None
                    if made is None:
                        continue
                    chosen.append(made)
                    still.append(path)
                    if on_case:
                        on_case(len(chosen))
                active = still
        return chosen

    def _take(self, sites: _FileSites, tier: bool | None) -> SyntheticCase | None:
        """One case from the next function that still has a usable site in ``tier``."""
        total = len(sites.functions)
        for step in range(total):
            position = (sites.cursor + step) % total
            pool = sites.functions[position]
            while True:
                options = [(self.used[s.operator], rank, s) for rank, s in pool if self._eligible(sites.path, s, tier)]
                if not options:
                    break
                _, rank, site = min(options, key=lambda o: (o[0], o[1]))
                pool.remove((rank, site))
                made = self._build(sites, site)
                if made is not None:
                    sites.cursor = position + 1
                    self.used[site.operator] += 1
                    return made
                self.rejected += 1
        return None

    def _build(self, sites: _FileSites, site: Site | ScriptSite) -> SyntheticCase | None:
        text, path = sites.text, sites.path
        try:
            mutated = sites.module.apply(site)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - libcst refusing a replacement is a site skipped
            return None
        if mutated == text or mutated in sites.made or not 1 <= changed_size(text, mutated) <= 2:
            return None
        if not compiles(mutated, path):
            return None
        sites.made.add(mutated)
        operator = self.operators[site.operator]
        key = f"mutation:{path}:{site.line}:{site.operator}"
        suffix = 2
        while key in self._keys:
            key = f"mutation:{path}:{site.line}:{site.operator}:{suffix}"
            suffix += 1
        self._keys.add(key)
        cid = case_id(self.config.seed, key)
        location = edited_location(path, text, mutated)
        start, end, symbol = location.start_line, location.end_line, location.symbol
        old_lines, new_lines = split_lines(text), split_lines(mutated)
        changed = old_lines[site.line - 1 : site.end_line] + new_lines[start - 1 : end]
        names = identifiers(changed, language_of(path)) | ({symbol.rsplit(".", 1)[-1]} if symbol else set())
        tests = self.coverage.tests_for(path, site.line) if self.coverage else []
        gold = GoldRecord(
            case_id=cid,
            stratum=Stratum.MUTATION,
            expect_finding=True,
            defects=[
                Defect(
                    defect_id=f"{cid}-d1",
                    defect_class=operator.name,
                    severity=operator.severity,
                    locations=[location],
                    symbols=sorted(names),
                    hint_terms=list(operator.hint_terms),
                    description=describe_mutation(operator, site.note, symbol),
                )
            ],
            provenance=Provenance(
                date=self.head.date(path),
                operator=operator.name,
                test_paths=tests or self.locator.for_module(path),
            ),
        )
        edit = FileEdit(path, text, mutated, self.head.files[path].mode, self.head.python_funcnames(path))
        return make_case(self.config.seed, key, self.head.repo.head, [edit], gold)
