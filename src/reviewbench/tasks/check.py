"""FAIL_TO_PASS and PASS_TO_PASS of a candidate task, from its own tests (sandboxed).

At the base with the test patch applied, the test patch's files run ``reruns`` times;
then with the gold patch applied too, again ``reruns`` times. A test that passes after
but not before is FAIL_TO_PASS; one that passes in both is PASS_TO_PASS. Any test whose
outcome differs between runs of the same tree makes the task flaky: a grader built on it
would reward or punish by chance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..records import DropReason
from ..validate.testcmd import TestCommand, VerdictKind
from ..validate.worker import ScratchTree, note_carried
from .testrun import TestOutcome, run_tests, task_test_files

__all__ = ["TaskCheck", "TaskJob", "check_task"]


@dataclass(frozen=True)
class TaskJob:
    """One candidate to check (picklable, for Ray)."""

    instance_id: str
    base: str
    patch: Path
    test_patch: Path
    test_files: tuple[str, ...]
    log: Path
    products: Path | None = None
    """The ``--setup`` environment's copy of the project, whose generated files (a version
    file) each checkout gets (``validate/products.py``)."""
    node_modules: Path | None = None
    """A Node project's installed ``node_modules`` (``validate/npm.py``), linked read-only."""


@dataclass(frozen=True)
class TaskCheck:
    """The outcome: the test lists, or why the candidate is dropped."""

    dropped: DropReason | None
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    duration_s: float = 0.0


def _note(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n=== {text}\n")


def check_task(tree: ScratchTree, command: TestCommand, job: TaskJob) -> TaskCheck:
    """Run the task's tests before and after its gold patch; see the module docstring."""
    job.log.write_text(f"task {job.instance_id} at {job.base}\n", encoding="utf-8")
    spent = 0.0

    def drop(reason: DropReason) -> TaskCheck:
        _note(job.log, f"dropped: {reason}")
        return TaskCheck(dropped=reason, duration_s=round(spent, 3))

    def runs(label: str, selection: list[str]) -> list[TestOutcome]:
        nonlocal spent
        outcomes = []
        for attempt in range(tree.config.reruns):
            outcome = run_tests(tree, command, selection, f"{label} run {attempt + 1}", job.log)
            spent += outcome.verdict.duration_s
            outcomes.append(outcome)
            if outcome.kind is VerdictKind.TIMEOUT:
                break
        return outcomes

    tree.use_products(job.products)
    tree.use_node_modules(job.node_modules)
    tree.checkout(job.base)
    note_carried(tree, job.log, set())
    if not tree.apply(job.test_patch):
        return drop(DropReason.APPLY_FAILED)
    tree.setup(job.log)
    selection = task_test_files(command, job.test_files, tree.path)
    if not selection:
        return drop(DropReason.NO_TEST_CHANGE)  # only data or deleted test files: nothing to run
    before = runs("before (tests only)", selection)
    if any(o.kind is VerdictKind.TIMEOUT for o in before):
        return drop(DropReason.TIMEOUT)  # the after-runs would hang the same way
    if not tree.apply(job.patch):
        return drop(DropReason.APPLY_FAILED)
    after = runs("after (tests + gold patch)", selection)
    if any(o.kind is VerdictKind.TIMEOUT for o in after):
        return drop(DropReason.TIMEOUT)
    if any(o.kind in (VerdictKind.ERROR, VerdictKind.NO_TESTS) or not (o.passed or o.failed) for o in after):
        # No test outcome at all: pytest itself failed (an old conftest against today's
        # pytest, a missing dependency). That says nothing about the fix.
        return drop(DropReason.ERROR)
    for outcomes in (before, after):
        if len({(o.passed, o.failed) for o in outcomes}) > 1:
            return drop(DropReason.FLAKY)
    fail_to_pass = sorted(after[0].passed - before[0].passed)
    pass_to_pass = sorted(after[0].passed & before[0].passed)
    _note(job.log, f"FAIL_TO_PASS: {len(fail_to_pass)}, PASS_TO_PASS: {len(pass_to_pass)}")
    if not fail_to_pass:
        return drop(DropReason.NO_FAIL_TO_PASS)
    return TaskCheck(dropped=None, fail_to_pass=fail_to_pass, pass_to_pass=pass_to_pass, duration_s=round(spent, 3))


def _check_error(command: TestCommand, exc: Exception) -> TaskCheck:
    return TaskCheck(dropped=DropReason.ERROR)


check_task.on_error = _check_error  # type: ignore[attr-defined]
