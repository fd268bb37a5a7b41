"""Grading one solver run: apply its patch at the task's base, add the hidden tests, run them.

Order of checks, cheapest and safest first:

1. no patch (the run failed, timed out, or its answer held no diff) → not resolved;
2. the patch is parsed by :func:`parse_patch` before anything touches a tree: a diff that
   does not parse, or names a path outside the tree, is rejected and never applied;
3. ``applies_clean`` = strict ``git apply --check`` at the base (an empty patch applies);
4. apply it; put back from the base every test-machinery file it touched (graded test
   files, ``conftest.py``, pytest configuration, ``sitecustomize``/``.pth``: see
   :mod:`.grade_infra`), recording ``touched_test_infra`` (never resolved);
5. apply the task's test patch, and run only the test files that hold the
   task's FAIL_TO_PASS and PASS_TO_PASS tests (a Node runner's ids name no file: the test
   patch's files, which ``tasks mine`` ran): the cheap selection is what keeps grading
   fast. Outcomes are read from pytest's JUnit XML (a Node runner's report), per test id,
   never from printed text: a patch that prints "PASSED" passes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..validate.testcmd import TestCommand, VerdictKind
from ..validate.worker import ScratchTree, note_carried
from .grade_infra import restore_test_infra, test_infra_paths
from .grade_patch import ParsedPatch, PatchRejected, parse_patch
from .records import Grade, GradeStatus, SolutionState, Task, solution_state
from .solutions import Solution
from .testrun import run_tests, task_test_files

__all__ = ["GradeJob", "grade_solution", "pregrade", "rejected", "test_selection"]


@dataclass(frozen=True)
class GradeJob:
    """Everything a worker needs to grade one run (picklable, for Ray)."""

    run_id: str
    instance_id: str
    condition: str
    repetition: int
    solution_state: SolutionState
    patch: str
    base: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    gold_files: tuple[str, ...]
    log: Path
    p2p_suite: bool = False
    """PASS_TO_PASS = every test passing in the whole suite at the base, not
    only the task's own test files: a patch that breaks an unrelated test fails."""
    products: Path | None = None
    """The ``--setup`` environment's copy of the project, whose generated files (a version
    file) each checkout gets (``validate/products.py``)."""
    node_modules: Path | None = None
    """A Node project's installed ``node_modules`` (``validate/npm.py``), linked read-only."""

    @classmethod
    def build(cls, solution: Solution, task: Task, log: Path, p2p_suite: bool = False,
              products: Path | None = None) -> GradeJob:  # fmt: skip
        assert solution.patch is not None
        return cls(
            run_id=solution.run_id, instance_id=solution.instance_id, condition=solution.condition,
            repetition=solution.repetition, solution_state=solution.state, patch=solution.patch,
            base=task.base_commit, test_patch=task.test_patch, fail_to_pass=tuple(task.FAIL_TO_PASS),
            pass_to_pass=tuple(task.PASS_TO_PASS), gold_files=tuple(task.gold_files), log=log, p2p_suite=p2p_suite,
            products=products,
        )  # fmt: skip


#: Whole-suite PASS_TO_PASS per (base, test patch, command): run once per base in a worker.
_SUITE_P2P: dict[tuple[str, str | None, str], frozenset[str]] = {}


def suite_pass_to_pass(tree: ScratchTree, command: TestCommand, job: GradeJob) -> frozenset[str]:
    """Tests passing in the whole suite at the base with the task's test patch, minus the
    FAIL_TO_PASS tests; computed once per base and kept (``--p2p suite``)."""
    key = (job.base, patch_digest(job.test_patch), command.command)
    if key not in _SUITE_P2P:
        tree.use_products(job.products)
        tree.use_node_modules(job.node_modules)
        tree.checkout(job.base)
        note_carried(tree, job.log, set())
        tree.home.mkdir(parents=True, exist_ok=True)
        tree.setup(job.log)
        tests = tree.home / "tests.diff"
        tests.write_text(job.test_patch, encoding="utf-8", errors="surrogateescape")
        if job.test_patch.strip() and not tree.apply(tests):
            _SUITE_P2P[key] = frozenset()
        else:
            outcome = run_tests(tree, command, [], "whole suite at the base (PASS_TO_PASS, once per base)", job.log)
            ran = outcome.kind not in (VerdictKind.TIMEOUT, VerdictKind.ERROR)
            passed = outcome.passed - outcome.failed if ran else frozenset()
            _SUITE_P2P[key] = frozenset(passed - set(job.fail_to_pass))
    return _SUITE_P2P[key]


def patch_digest(patch: str | None) -> str | None:
    return (
        None
        if patch is None
        else hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest()
    )


def test_selection(task_ids: tuple[str, ...] | list[str]) -> list[str]:
    """The test files holding the given node ids: one pytest run covers them all."""
    return sorted({test_id.split("::", 1)[0] for test_id in task_ids})


def _base(solution: Solution | GradeJob, status: GradeStatus, **values: object) -> Grade:
    state = solution.solution_state if isinstance(solution, GradeJob) else solution.state
    fields: dict[str, object] = {
        "run_id": solution.run_id, "instance_id": solution.instance_id, "condition": solution.condition,
        "repetition": solution.repetition, "solution_state": state, "status": status,
        "applies_clean": False, "tests_pass": False, "partial": False, "overreach": 0,
        "overreach_files": [], "files": 0, "lines": 0, "f2p_passed": 0, "f2p_total": 0,
        "p2p_passed": 0, "p2p_total": 0, "not_passed": [],
    }  # fmt: skip
    fields.update(values)
    return Grade.model_validate(fields)


def _size(parsed: ParsedPatch, gold_files: tuple[str, ...] | list[str]) -> dict[str, object]:
    outside = sorted(parsed.paths - set(gold_files))
    return {
        "files": len(parsed.files),
        "lines": parsed.lines,
        "overreach": len(outside),
        "overreach_files": outside,
        "overreach_flag": len(outside) > 1,
    }


def pregrade(solution: Solution, task: Task) -> Grade | None:
    """The grade of a run that needs no tree: no patch, or a patch refused unread.

    None when the patch must be applied and tested.
    """
    totals = {"f2p_total": len(task.FAIL_TO_PASS), "p2p_total": len(task.PASS_TO_PASS),
              "not_passed": sorted({*task.FAIL_TO_PASS, *task.PASS_TO_PASS})}  # fmt: skip
    if solution.patch is None:
        return _base(solution, GradeStatus.NO_PATCH, reason=f"no patch to grade: the run ended {solution_state(solution.state).value}",
                     **totals)  # fmt: skip
    if not solution.patch.strip():
        return None  # the solver changed nothing: that is graded, by the tests
    try:
        parse_patch(solution.patch)
    except PatchRejected as exc:
        return rejected(solution, task, f"patch rejected, not applied: {exc}")
    return None


def rejected(solution: Solution | GradeJob, task: Task, reason: str) -> Grade:
    """The grade of a run whose patch is never applied, and why."""
    return _base(solution, GradeStatus.REJECTED, reason=reason, patch_sha256=patch_digest(solution.patch),
                 f2p_total=len(task.FAIL_TO_PASS), p2p_total=len(task.PASS_TO_PASS),
                 not_passed=sorted({*task.FAIL_TO_PASS, *task.PASS_TO_PASS}))  # fmt: skip


def grade_solution(tree: ScratchTree, command: TestCommand, job: GradeJob) -> Grade:
    """Grade one run in a scratch tree (the handler :func:`run_jobs` calls)."""
    log = job.log
    log.write_text(f"run {job.run_id}: task {job.instance_id}, condition {job.condition}, "
                   f"repetition {job.repetition}, at {job.base}\n", encoding="utf-8")  # fmt: skip
    pass_to_pass = tuple(job.pass_to_pass)
    if job.p2p_suite:
        pass_to_pass = tuple(sorted({*pass_to_pass, *suite_pass_to_pass(tree, command, job)}))
    required = sorted({*job.fail_to_pass, *pass_to_pass})
    common: dict[str, object] = {"f2p_total": len(job.fail_to_pass), "p2p_total": len(pass_to_pass),
                                 "not_passed": required, "patch_sha256": patch_digest(job.patch),
                                 "p2p": "suite" if job.p2p_suite else "task"}  # fmt: skip

    def done(status: GradeStatus, **values: object) -> Grade:
        grade = _base(job, status, **{**common, **values})
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"\n=== grade: {status}" + (f" ({grade.reason})" if grade.reason else "")
                         + f"; tests_pass={grade.tests_pass} partial={grade.partial}\n")  # fmt: skip
        return grade

    empty = not job.patch.strip()
    changed: frozenset[str] = frozenset()
    if empty:
        size: dict[str, object] = {}
    else:
        try:  # checked before scheduling too; a tree never sees an unsafe patch
            parsed = parse_patch(job.patch)
            size, changed = _size(parsed, job.gold_files), parsed.paths
        except PatchRejected as exc:
            return done(GradeStatus.REJECTED, reason=f"patch rejected, not applied: {exc}")
    tree.use_products(job.products)
    tree.use_node_modules(job.node_modules)
    tree.checkout(job.base)
    note_carried(tree, job.log, set())
    tree.home.mkdir(parents=True, exist_ok=True)
    if not empty:
        patch = tree.home / "solution.diff"
        patch.write_text(job.patch, encoding="utf-8", errors="surrogateescape")
        if not tree.applies(patch):
            return done(
                GradeStatus.APPLY_FAILED,
                reason="git apply --check refused the patch at the base",
                **size,
            )
        if not tree.apply(patch):
            return done(
                GradeStatus.APPLY_FAILED, reason="git apply refused the patch at the base", **size
            )
    node = command.runner is not None  # a Node runner's ids name no file: its files are the test patch's
    graded_tests = {*([] if node else test_selection(required)), *_test_patch_paths(job.test_patch)}
    infra = test_infra_paths(tree, job.base, changed, graded_tests)
    if infra:
        restore_test_infra(tree, job.base, infra)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"\n=== the patch touched test machinery, restored from the base: {', '.join(infra)}\n")
        size["touched_test_infra"] = True
    tree.setup(log)
    tests = tree.home / "tests.diff"
    tests.write_text(job.test_patch, encoding="utf-8", errors="surrogateescape")
    if job.test_patch.strip() and not tree.apply(tests):
        return done(GradeStatus.TEST_PATCH_FAILED, applies_clean=True,
                    reason="the task's test patch does not apply on top of the patch", **size)  # fmt: skip
    if job.p2p_suite:
        selection: list[str] = []  # the whole suite
    elif node:
        selection = task_test_files(command, _test_patch_paths(job.test_patch), tree.path)
    else:
        selection = test_selection(required)
    outcome = run_tests(tree, command, selection, "grading tests", log)
    ran = outcome.kind not in (VerdictKind.TIMEOUT, VerdictKind.ERROR)
    passed = outcome.passed - outcome.failed if ran else frozenset()
    f2p = sum(1 for t in job.fail_to_pass if t in passed)
    p2p = sum(1 for t in pass_to_pass if t in passed)
    resolved = bool(required) and f2p == len(job.fail_to_pass) and p2p == len(pass_to_pass) and not infra
    return done(
        GradeStatus.TESTED, applies_clean=True, tests_pass=resolved, partial=not resolved and f2p > 0,
        f2p_passed=f2p, p2p_passed=p2p, not_passed=[t for t in required if t not in passed],
        test_verdict=outcome.kind.value, exit_code=outcome.verdict.exit_code,
        duration_s=round(outcome.verdict.duration_s, 3),
        reason=(f"the patch changed test machinery ({', '.join(infra)}): restored before testing, never resolved"
                if infra else None if ran else f"the test run ended {outcome.kind.value}"), **size,
    )  # fmt: skip


def _test_patch_paths(test_patch: str) -> frozenset[str]:
    """Files the task's own test patch touches (graded like the selection's files)."""
    if not test_patch.strip():
        return frozenset()
    try:
        return parse_patch(test_patch).paths
    except PatchRejected:
        return frozenset()


def _grade_error(command: TestCommand, exc: Exception) -> Grade:
    """The result of a job whose grading raised; the caller fills in the run's identity."""
    return Grade(run_id="", instance_id="", condition="", repetition=0, solution_state=SolutionState.FAILED, status=GradeStatus.ERROR,
                 reason=f"grading failed: {type(exc).__name__}: {exc}", applies_clean=False, tests_pass=False,
                 partial=False, overreach=0, overreach_files=[], files=0, lines=0, f2p_passed=0, f2p_total=0,
                 p2p_passed=0, p2p_total=0, not_passed=[])  # fmt: skip


grade_solution.on_error = _grade_error  # type: ignore[attr-defined]
