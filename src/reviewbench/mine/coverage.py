"""Which lines the test suite executes, and which test files reach a module.

Mutants on lines no test runs cannot be observed, so sites on covered lines come first
when coverage data can be had: a ``.coverage`` file in the repository, or one run of
``--coverage-cmd`` in a scratch clone, sandboxed like validation (no network, time and
memory limits, nothing left behind). Coverage's per-test contexts, when present, tell
which test files execute a line; otherwise test files that import the module stand in.
Everything here is optional: any failure leaves a warning and selection without it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import Network, ValidateConfig
from ..errors import ReviewbenchError
from ..git.repo import Repository

__all__ = ["CoverageMap", "TestLocator", "load_coverage"]

#: Seconds the coverage run may take.
COVERAGE_TIMEOUT = 1800.0
#: More test files importing a module than this: they import the package, not test the module.
_MAX_IMPORTERS = 6
_RC = "[run]\ndynamic_context = test_function\nrelative_files = True\n"


@dataclass(frozen=True)
class CoverageMap:
    """Executed lines per repository-relative path, and the test files behind each line."""

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
    for measured in data.measured_files():
        path = _relative(measured, roots, known)
        if path is None:
            continue
        lines[path] = frozenset(data.lines(measured) or ())
        if contexts:
            per_line = {}
            for number, names in data.contexts_by_lineno(measured).items():
                files = {f for c in names if c and (f := _context_file(c, by_module)) and f in known}
                if files:
                    per_line[number] = frozenset(files)
            by_line[path] = per_line
    return CoverageMap(lines, by_line) if lines else None


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
    from ..validate.worker import ScratchTree

    root = Path(tempfile.mkdtemp(prefix="reviewbench-coverage-"))
    try:
        config = ValidateConfig(network=Network.DENY, timeout=COVERAGE_TIMEOUT, jobs=1)
        tree = ScratchTree(repo.path, root / "tree", config)
        tree.checkout(repo.head)
        data_file = root / "coverage.data"
        rcfile = root / "coveragerc"
        rcfile.write_text(_RC + f"data_file = {data_file}\n", encoding="utf-8")
        log = root / "coverage.log"
        shell = f"COVERAGE_RCFILE={_quote(rcfile)} COVERAGE_FILE={_quote(data_file)}; " \
                f"export COVERAGE_RCFILE COVERAGE_FILE; {command}"  # fmt: skip
        outcome = tree.sandbox.run(shell, tree.path, COVERAGE_TIMEOUT, log)
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
