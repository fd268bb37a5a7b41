"""Running a task's tests in a scratch tree and reading the outcome of each test.

Outcomes come from the exit code and pytest's JUnit XML, never from printed text. Test
ids are pytest node ids (``tests/test_x.py::TestK::test_a[1]``), SWE-bench's convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..validate.testcmd import TestCommand, Verdict, VerdictKind, node_id
from ..validate.worker import ScratchTree, run_selection

__all__ = ["TestOutcome", "require_pytest", "run_tests"]


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


def require_pytest(command: TestCommand) -> None:
    """Fix tasks grade test by test, which needs pytest's JUnit report.

    Raises:
        UsageError: the test command is not a pytest command.
    """
    if not command.is_pytest:
        raise UsageError(
            f"fix tasks need a pytest test command (per-test outcomes come from its JUnit report); got {command.command!r}"
        )


def run_tests(tree: ScratchTree, command: TestCommand, selection: list[str], label: str, log: Path) -> TestOutcome:
    """Run ``selection`` (paths or node ids) in the tree as it is now."""
    verdict = run_selection(tree, command, selection, label, log)

    def resolve(ids: frozenset[str]) -> frozenset[str]:
        return frozenset(node_id(test_id, tree.path) or test_id for test_id in ids)

    return TestOutcome(verdict=verdict, passed=resolve(verdict.passed), failed=resolve(verdict.failing))

