"""Which lines the test suite executes, and which test files reach a module.

Mutants on lines no test runs cannot be observed, so sites on covered lines come first
when coverage data can be had: a ``.coverage`` file in the repository, or one run of
``--coverage-cmd`` in a scratch clone, sandboxed like validation (no network, time and
memory limits, nothing left behind). Coverage's per-test contexts, when present, tell
which tests execute a line (pytest node ids, or their files when an id is uncertain);
otherwise test files that import the module stand in.
Everything here is optional: any failure leaves a warning and selection without it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import Network, ValidateConfig
from ..errors import ReviewbenchError
from ..git.repo import Repository
from ..git.scratch import ScratchClone
from ..sandbox import Sandbox
from ..store.scratch import make_scratch

__all__ = ["CoverageMap", "TestLocator", "load_coverage"]

#: Seconds the coverage run may take.
COVERAGE_TIMEOUT = 1800.0
#: More test files importing a module than this: they import the package, not test the module.
_MAX_IMPORTERS = 6
#: More tests than this ran a line: select their files instead of listing every test.
_MAX_NODE_IDS = 40
_RC = "[run]\ndynamic_context = test_function\nrelative_files = True\n"


@dataclass(frozen=True)
class CoverageMap:
    """Executed lines per repository-relative path, and the tests behind each line (pytest
    node ids when per-test contexts name them surely, else test files)."""

    lines: dict[str, frozenset[int]]
    tests: dict[str, dict[int, frozenset[str]]] = field(default_factory=dict)

    def covered(self, path: str, line: int) -> bool:
        return line in self.lines.get(path, ())

    def tests_for(self, path: str, line: int) -> list[str]:
        return sorted(self.tests.get(path, {}).get(line, ()))


def _relative(name: str, roots: list[Path], known: set[str]) -> str | None:
    """A measured file name as a repository path, or None when it is not in the repository."""
    candidate = name.replace("\\", "/")
    for root in roots:
        prefix = str(root).rstrip("/") + "/"
        if candidate.startswith(prefix):
            candidate = candidate[len(prefix):]
            break
    candidate = candidate.removeprefix("./")
    return candidate if candidate in known else None


def _context_file(context: str, by_module: dict[str, str]) -> str | None:
    """The test file a coverage context names (pytest-cov ``path::test`` or ``pkg.mod.Class.test``)."""
    if "::" in context:
        return context.split("::", 1)[0]
    parts = context.split(".")
    for end in range(len(parts), 0, -1):
        found = by_module.get(".".join(parts[:end]))
        if found:
            return found
    return None


class _NodeIds:
    """pytest node ids (``file::Class::test``) of coverage contexts, checked against the
    test file's text and pytest's default naming rules; None when a context cannot be
    turned into one that surely exists (a test inherited from a base class elsewhere, a
    nested function, a generated test)."""

    def __init__(self, root: Path, by_module: dict[str, str]) -> None:
        self.root = root
        self.by_module = by_module
        self._texts: dict[str, str | None] = {}
        self._ids: dict[str, str | None] = {}

    def __call__(self, context: str) -> str | None:
        if context not in self._ids:
            self._ids[context] = self._resolve(context)
        return self._ids[context]

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                self._texts[path] = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def _resolve(self, context: str) -> str | None:
        if "::" in context:  # pytest-cov: the node id itself, then "|setup", "|run"…
            node = context.split("|", 1)[0]
            return node if self._text(node.split("::", 1)[0]) is not None else None
        parts = context.split(".")
        for end in range(len(parts) - 1, 0, -1):
            path = self.by_module.get(".".join(parts[:end]))
            if path:
                break
        else:
            return None
        names = parts[end:]
        text = self._text(path)
        if text is None or not names or any(not n.isidentifier() for n in names):
            return None
        *classes, function = names
        # pytest's default collection rules: ids outside them would select nothing.
        stem = PurePosixPath(path).name
        if not (stem.startswith("test_") or stem.endswith("_test.py")) or not function.startswith("test") \
                or any(not c.startswith("Test") for c in classes):  # fmt: skip
            return None
        for name in classes:
            if not re.search(rf"^\s*class\s+{re.escape(name)}\b", text, re.MULTILINE):
                return None
        if not re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(function)}\b", text, re.MULTILINE):
            return None
        return "::".join([path, *names])


def _module_names(tests: list[str]) -> dict[str, str]:
    """Dotted names a test file may run under (``tests.test_x`` and ``test_x``), unambiguous only."""
    names: dict[str, str | None] = {}
    for path in tests:
        parts = PurePosixPath(path).with_suffix("").parts
        for start in range(len(parts)):
            dotted = ".".join(parts[start:])
            names[dotted] = None if dotted in names and names[dotted] != path else path
    return {k: v for k, v in names.items() if v}


def _read(data_file: Path, roots: list[Path], known: set[str], tests: list[str]) -> CoverageMap | None:
    from coverage import CoverageData  # optional dependency: checked by the caller

    data = CoverageData(basename=str(data_file))
    data.read()
    by_module = _module_names(tests)
    lines: dict[str, frozenset[int]] = {}
    by_line: dict[str, dict[int, frozenset[str]]] = {}
    contexts = any(c for c in data.measured_contexts() if c)
    node_ids = _NodeIds(roots[0], by_module)
    for measured in data.measured_files():
        path = _relative(measured, roots, known)
        if path is None:
            continue
        lines[path] = frozenset(data.lines(measured) or ())
        if contexts:
            per_line = {}
            for number, names in data.contexts_by_lineno(measured).items():
                selection = _selection([c for c in names if c], by_module, node_ids, known)
                if selection:
                    per_line[number] = selection
            by_line[path] = per_line
    return CoverageMap(lines, by_line) if lines else None


def _selection(contexts: list[str], by_module: dict[str, str], node_ids: _NodeIds,
               known: set[str]) -> frozenset[str]:  # fmt: skip
    """The tests that ran a line: their node ids, or their files when any id is uncertain
    or there are more than ``_MAX_NODE_IDS`` of them."""
    files = {f for c in contexts if (f := _context_file(c, by_module)) and f in known}
    ids = {node_ids(c) for c in contexts}
    if None in ids or not ids or len(ids) > _MAX_NODE_IDS:
        return frozenset(files)
    return frozenset(i for i in ids if i)


def load_coverage(
    repo: Repository,
    command: str | None,
    known: set[str],
    tests: list[str],
    warn: Callable[[str], None],
) -> CoverageMap | None:
    """Coverage of the suite at HEAD: from ``command`` run once in a scratch clone, or from
    the repository's own ``.coverage`` file; None (with a warning) when neither works.

    Args:
        known: repository paths at HEAD, to recognise measured files.
        tests: test files at HEAD, to read per-test contexts.
    """
    try:
        import coverage  # noqa: F401
    except ImportError:
        if command or (repo.path / ".coverage").is_file():
            warn("coverage.py is not installed where reviewbench runs (pip install coverage); "
                 "choosing mutation sites without coverage")  # fmt: skip
        return None
    if command is None:
        existing = repo.path / ".coverage"
        if not existing.is_file():
            return None
        try:
            return _read(existing, [repo.path, repo.path.resolve()], known, tests)
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign data file must not stop mining
            warn(f"cannot read {existing}: {exc}; choosing mutation sites without coverage")
            return None
    try:
        return _run(repo, command, known, tests, warn)
    except ReviewbenchError as exc:
        warn(f"coverage run failed: {exc}; choosing mutation sites without coverage")
        return None


def _run(repo: Repository, command: str, known: set[str], tests: list[str],
         warn: Callable[[str], None]) -> CoverageMap | None:  # fmt: skip
    root = make_scratch("reviewbench-coverage-")
    try:
        tree = ScratchClone(repo.path, root / "tree")
        tree.checkout(repo.head)
        # Sandboxed like validation's test runs: no network, only the tree and the data
        # folder writable (not the clone's git directory beside the tree: ``git/scratch.py``).
        data = root / "data"
        data.mkdir()
        sandbox = Sandbox(Network.DENY, ValidateConfig().memory_mb, root / "home", writable=(tree.path, data))
        data_file = data / "coverage.data"
        rcfile = root / "coveragerc"
        rcfile.write_text(_RC + f"data_file = {data_file}\n", encoding="utf-8")
        log = root / "coverage.log"
        shell = f"COVERAGE_RCFILE={_quote(rcfile)} COVERAGE_FILE={_quote(data_file)}; " \
                f"export COVERAGE_RCFILE COVERAGE_FILE; {command}"  # fmt: skip
        outcome = sandbox.run(shell, tree.path, COVERAGE_TIMEOUT, log)
        if outcome.timed_out:
            warn(f"coverage command timed out after {COVERAGE_TIMEOUT:.0f}s; choosing sites without coverage")
            return None
        produced = data_file if data_file.is_file() else tree.path / ".coverage"
        if not produced.is_file():
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.is_file() else []
            warn(f"coverage command wrote no data (exit {outcome.exit_code}"
                 f"{': ' + tail[0] if tail else ''}); choosing sites without coverage")  # fmt: skip
            return None
        if outcome.exit_code:
            warn(f"coverage command exited {outcome.exit_code} (some tests fail at HEAD); using its data")
        return _read(produced, [tree.path, tree.path.resolve()], known, tests)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


class TestLocator:
    """Test files likely to exercise a module, for validation's cheap first selection.

    Without coverage contexts: test files that import the module (``from pkg.mod import``,
    ``import pkg.mod``, ``from pkg import mod``), else those named after it (``test_mod.py``).
    """

    __test__ = False  # not a pytest class

    def __init__(self, tests: list[str], texts: dict[str, str | None]) -> None:
        self.tests = tests
        self.texts = texts
        self._cache: dict[str, list[str]] = {}

    def for_module(self, path: str) -> list[str]:
        if path not in self._cache:
            self._cache[path] = self._find(path)
        return self._cache[path]

    def _find(self, path: str) -> list[str]:
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts and parts[0] in ("src", "lib") and len(parts) > 1:
            parts = parts[1:]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts:
            return []
        dotted = re.escape(".".join(parts))
        stem = re.escape(parts[-1])
        parent = re.escape(".".join(parts[:-1]))
        patterns = [rf"^\s*from\s+{dotted}\s+import\b", rf"^\s*import\s+{dotted}\b",
                    rf"^\s*from\s+\.+{stem}\s+import\b"]  # fmt: skip
        if parent:
            patterns.append(rf"^\s*from\s+{parent}\s+import\s+[^#\n]*\b{stem}\b")
        strong = re.compile("|".join(patterns), re.MULTILINE)
        found = [t for t in self.tests if (text := self.texts.get(t)) and strong.search(text)]
        names = {f"test_{parts[-1]}.py", f"{parts[-1]}_test.py", f"test_{parts[-1]}s.py"}
        named = [t for t in self.tests if PurePosixPath(t).name in names]
        if found and (len(found) <= _MAX_IMPORTERS or not named):
            # A package imported by most tests is better served by the whole suite.
            return found if len(found) <= _MAX_IMPORTERS else []
        return named
