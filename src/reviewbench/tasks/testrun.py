"""Running a task's tests in a scratch tree and reading the outcome of each test.

Outcomes come from the exit code and the runner's own report (pytest's JUnit XML; a Node
runner's JUnit, JSON or TAP, ``validate/node.py``), never from printed text. Test ids are
pytest node ids (``tests/test_x.py::TestK::test_a[1]``), SWE-bench's convention, or a Node
runner's name paths (``group > test``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..validate.node_coverage import runs_as_script
from ..validate.testcmd import TestCommand, Verdict, VerdictKind, node_id
from ..validate.worker import ScratchTree, run_selection

__all__ = ["TestOutcome", "require_per_test", "run_tests", "task_test_files"]


@dataclass(frozen=True)
class TestOutcome:
    """One run of a selection: its verdict and, per test, whether it passed."""

    __test__ = False  # not a pytest test class

    verdict: Verdict
    passed: frozenset[str]
    """Node ids of the tests that passed."""
    failed: frozenset[str]
    """Node ids (or raw JUnit ids when unresolvable, e.g. collection errors) that failed."""

    @property
    def kind(self) -> VerdictKind:
        return self.verdict.kind


def require_per_test(command: TestCommand) -> None:
    """Fix tasks grade test by test, which needs a report per test: pytest's JUnit XML, or
    a Node runner's (a one-step node:test, jest, vitest, mocha, tape or ava command).

    Raises:
        UsageError: the test command is neither.
    """
    if not command.is_pytest and command.runner is None:
        raise UsageError(
            "fix tasks need a pytest command or a one-step Node test runner (node --test, jest, vitest, mocha, "
            f"tape, ava), whose reports give per-test outcomes; got {command.command!r}: pass --test-cmd"
        )


def task_test_files(command: TestCommand, paths: Iterable[str], root: Path) -> list[str]:
    """The files among ``paths`` the command runs as tests, present in the tree ``root``:
    Python files under pytest, scripts under a Node runner (declarations and type tests aside)."""
    runs = runs_as_script if command.runner is not None else (lambda path: path.endswith(".py"))
    return sorted(p for p in paths if runs(p) and (root / p).is_file())


def run_tests(tree: ScratchTree, command: TestCommand, selection: list[str], label: str, log: Path) -> TestOutcome:
    """Run ``selection`` (paths or node ids) in the tree as it is now."""
    verdict = run_selection(tree, command, selection, label, log)

    def resolve(ids: frozenset[str]) -> frozenset[str]:
        if not command.is_pytest:
            return ids  # a Node runner's name paths are the ids
        return frozenset(node_id(test_id, tree.path) or test_id for test_id in ids)

    return TestOutcome(verdict=verdict, passed=resolve(verdict.passed), failed=resolve(verdict.failing))

