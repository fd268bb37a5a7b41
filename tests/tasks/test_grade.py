"""``tasks grade``: real git, real pytest runs in scratch trees, one fixture task.

The task: ``clamp`` ignores its upper bound; the fix changes ``calc.py`` and adds
``test_clamp`` to ``tests/test_calc.py`` (FAIL_TO_PASS), where ``test_add`` passes before
and after (PASS_TO_PASS). Solutions: the gold patch, nothing, gold plus an unrelated edit,
a patch that prints fake "PASSED" lines and exits 0, garbage, a patch that does not apply,
and patches that write outside the tree.
"""

from __future__ import annotations

import json
import sys

import pytest

from reviewbench.config import ValidateConfig
from reviewbench.errors import CorpusError
from reviewbench.records import RepoInfo
from reviewbench.tasks.grade_run import GRADE_LOG_DIR, GRADES_JOURNAL, grade_solutions, read_grades
from reviewbench.tasks.records import (
    GRADES_FILE,
    Grade,
    GradeStatus,
    SolutionState,
    Task,
    TasksCounts,
    TasksMeta,
)
from reviewbench.tasks.solutions import Solution
from reviewbench.tasks.store import read_tasks, write_tasks

TEST_CMD = f"{sys.executable} -m pytest -q"
F2P = "tests/test_calc.py::test_clamp"
P2P = "tests/test_calc.py::test_add"

BASE_FILES = {
    "calc.py": "def clamp(v, lo, hi):\n    return max(lo, v)\n\n\ndef add(a, b):\n    return a + b\n",
    "other.py": "X = 1\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_other.py": "def test_other_fails():\n    assert False, 'never selected by grading'\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
}
FIX_FILES = {
    "calc.py": "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n\n\ndef add(a, b):\n    return a + b\n",
    "tests/test_calc.py": BASE_FILES["tests/test_calc.py"].replace(
        "from calc import add", "from calc import add, clamp"
    )
    + "\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n",
}

OUTSIDE = """\
diff --git a/../outside.txt b/../outside.txt
new file mode 100644
--- /dev/null
+++ b/../outside.txt
@@ -0,0 +1 @@
+written outside the tree
"""
RENAME_OUT = """\
diff --git a/other.py b/other.py
similarity index 100%
rename from other.py
rename to ../outside.py
"""
GARBAGE = "Sure! Here is the fix:\n@@ clamp should use hi @@\n+ return max(lo, min(v, hi))\n"
STALE = """\
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def clamp(value, low, high):
-    return max(low, value)
+    return max(low, min(value, high))
"""
FAKE_PASSED = """\
diff --git a/conftest.py b/conftest.py
new file mode 100644
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,9 @@
+import os
+
+
+def pytest_collection_finish(session):
+    out = session.config.get_terminal_writer()
+    out.line("tests/test_calc.py::test_clamp PASSED")
+    out.line("============ 2 passed in 0.01s ============")
+    out.flush()
+    os._exit(0)
"""
# Exit 0 from inside the code under test, before any test ran: no conftest involved.
EXIT_ZERO = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,3 +1,6 @@
+import os
+
+os._exit(0)
 def clamp(v, lo, hi):
     return max(lo, v)
 
"""
OTHER_EDIT = """\
diff --git a/other.py b/other.py
--- a/other.py
+++ b/other.py
@@ -1 +1 @@
-X = 1
+X = 2  # reformatted while I was here
"""


def _diff(repo, base: str, fix: str, *paths: str) -> str:
    return repo.git("diff", base, fix, "--", *paths) + "\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(repo, task set path, gold patch) for the clamp task."""
    from ..conftest import GitRepo

    root = tmp_path_factory.mktemp("grade")
    repo = GitRepo(root / "proj")
    base = repo.commit("Initial", BASE_FILES)
    fix = repo.commit("Fix clamp ignoring its upper bound", FIX_FILES)
    gold = _diff(repo, base, fix, "calc.py")
    task = Task(
        instance_id="proj-0001", repo=str(repo.path), base_commit=base, patch=gold,
        test_patch=_diff(repo, base, fix, "tests"), problem_statement="clamp ignores hi",
        FAIL_TO_PASS=[F2P], PASS_TO_PASS=[P2P], created_at="2024-01-01T00:00:00+00:00", fix_commit=fix,
        gold_files=["calc.py"], test_files=["tests/test_calc.py"], patch_lines=2, test_cmd=TEST_CMD,
    )  # fmt: skip
    tasks = root / "tasks"
    write_tasks(tasks, [task], lambda sha: TasksMeta(
        repo=RepoInfo(path=str(repo.path), head=fix), created_at="2024-01-01T00:00:00+00:00", tool_version="test",
        config={}, test_cmd=TEST_CMD, tasks_sha256=sha,
        counts=TasksCounts(tasks=1, matched_commits=1, candidates=1, dropped={}),
    ))  # fmt: skip
    return repo, tasks, gold


def _solution(
    name: str, patch: str | None, state: str = "patched", condition: str = "A", rep: int = 0
) -> Solution:
    return Solution(run_id=f"{condition}-{name}-{rep}", instance_id="proj-0001", condition=condition, repetition=rep,
                    state=state, patch=patch)  # fmt: skip


def _config(**values) -> ValidateConfig:
    return ValidateConfig(**{"jobs": 2, "timeout": 120, **values})


@pytest.fixture(scope="module")
def graded(project, tmp_path_factory):
    _repo, tasks, gold = project
    rundir = tmp_path_factory.mktemp("rundir")
    solutions = [
        _solution("gold", gold),
        _solution("nothing", ""),
        _solution("failed", None, state="failed"),
        _solution("overreach", gold + OTHER_EDIT),
        _solution("fake-passed", FAKE_PASSED),
        _solution("exit-zero", EXIT_ZERO),
        _solution("garbage", GARBAGE),
        _solution("stale", STALE),
        _solution("outside", OUTSIDE),
        _solution("rename-out", RENAME_OUT),
    ]
    summary = grade_solutions(rundir, read_tasks(tasks), solutions, _config())
    return rundir, {g.run_id.split("-", 1)[1].rsplit("-", 1)[0]: g for g in summary.grades}, summary


def test_gold_patch_resolves(graded):
    _, grades, _ = graded
    g = grades["gold"]
    assert (g.status, g.applies_clean, g.tests_pass, g.partial) == (
        GradeStatus.TESTED,
        True,
        True,
        False,
    )
    assert (g.overreach, g.overreach_files, g.files, g.lines) == (0, [], 1, 2)
    assert (g.f2p_passed, g.f2p_total, g.p2p_passed, g.p2p_total, g.not_passed) == (1, 1, 1, 1, [])
    assert g.test_verdict == "pass" and g.exit_code == 0


def test_empty_patch_applies_but_does_not_resolve(graded):
    g = graded[1]["nothing"]
    assert (g.status, g.applies_clean, g.tests_pass, g.partial) == (
        GradeStatus.TESTED,
        True,
        False,
        False,
    )
    assert (g.f2p_passed, g.p2p_passed, g.not_passed, g.files, g.lines) == (0, 1, [F2P], 0, 0)


def test_a_run_without_a_patch_is_not_resolved_and_says_so(graded):
    g = graded[1]["failed"]
    assert (g.status, g.applies_clean, g.tests_pass, g.solution_state) == (
        GradeStatus.NO_PATCH,
        False,
        False,
        "failed",
    )
    assert g.reason == "no patch to grade: the run ended failed"


def test_an_unrelated_edit_is_overreach(graded):
    g = graded[1]["overreach"]
    assert g.tests_pass and g.applies_clean
    assert (g.overreach, g.overreach_files, g.files, g.lines) == (1, ["other.py"], 2, 4)


def test_printed_passed_lines_and_exit_zero_do_not_pass(graded):
    rundir, grades, _ = graded
    g = grades["fake-passed"]  # a conftest.py is test machinery: removed before the tests run
    assert g.applies_clean and not g.tests_pass and not g.partial and g.touched_test_infra
    log = (rundir / GRADE_LOG_DIR / "A-fake-passed-0.log").read_text()
    assert "restored from the base: conftest.py" in log
    assert "tests/test_calc.py::test_clamp PASSED" not in log  # the lie never ran
    g = grades["exit-zero"]
    assert g.applies_clean and not g.tests_pass and not g.partial and not g.touched_test_infra
    assert g.exit_code == 0  # the code under test made pytest exit 0 ...
    assert (g.f2p_passed, g.p2p_passed) == (0, 0)  # ... but JUnit XML records no passed test


def test_garbage_is_rejected_unapplied(graded):
    g = graded[1]["garbage"]
    assert (g.status, g.applies_clean, g.tests_pass) == (GradeStatus.REJECTED, False, False)
    assert "patch rejected, not applied" in g.reason


def test_a_patch_that_does_not_apply_is_not_applies_clean(graded):
    g = graded[1]["stale"]
    assert (g.status, g.applies_clean, g.tests_pass, g.files, g.lines) == (
        GradeStatus.APPLY_FAILED,
        False,
        False,
        1,
        2,
    )


@pytest.mark.parametrize("name", ["outside", "rename-out"])
def test_paths_outside_the_tree_are_rejected_and_never_applied(graded, project, name):
    rundir, grades, _ = graded
    g = grades[name]
    assert (g.status, g.applies_clean, g.tests_pass) == (GradeStatus.REJECTED, False, False)
    assert "climbs out of the tree" in g.reason
    repo = project[0]
    for folder in (repo.path.parent, rundir.parent, rundir):
        assert not (folder / "outside.txt").exists() and not (folder / "outside.py").exists()
    assert not (rundir / GRADE_LOG_DIR / f"A-{name}-0.log").exists()  # no tree ever saw it


def test_grades_file_validates_and_the_journal_is_gone(graded):
    rundir, _, summary = graded
    assert not (rundir / GRADES_JOURNAL).exists()
    lines = (rundir / GRADES_FILE).read_text().splitlines()
    assert len(lines) == 10 and read_grades(rundir) == summary.grades
    assert [json.loads(line)["run_id"] for line in lines] == sorted(
        json.loads(line)["run_id"] for line in lines
    )


def test_resume_keeps_grades_and_regrades_a_changed_patch(project, graded, tmp_path):
    _, tasks, gold = project
    rundir = tmp_path / "run"
    rundir.mkdir()
    first = grade_solutions(
        rundir, read_tasks(tasks), [_solution("gold", gold), _solution("nothing", "")], _config()
    )
    assert first.graded == 2
    # An interrupted later run left a journal with one grade and a torn line.
    journal = rundir / GRADES_JOURNAL
    fake = first.grades[0].model_copy(update={"run_id": "A-extra-0", "tests_pass": True})
    journal.write_text(fake.model_dump_json() + "\n" + '{"run_id": "A-torn', encoding="utf-8")
    again = grade_solutions(rundir, read_tasks(tasks), [
        _solution("gold", gold), _solution("nothing", gold), _solution("extra", gold),
    ], _config())  # fmt: skip
    assert (again.graded, again.reused) == (1, 2)  # only the run whose patch changed
    by_id = {g.run_id: g for g in again.grades}
    assert by_id["A-nothing-0"].tests_pass and by_id["A-extra-0"] == fake
    assert not journal.exists()


def test_a_damaged_journal_is_reported_with_its_line(project, tmp_path):
    _, tasks, gold = project
    (tmp_path / GRADES_JOURNAL).write_text("not json\n{}\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"grades\.journal\.jsonl:1: damaged journal line"):
        grade_solutions(tmp_path, read_tasks(tasks), [_solution("gold", gold)], _config())


def test_a_run_of_an_unknown_task_is_refused(project, tmp_path):
    _, tasks, gold = project
    stray = Solution(
        run_id="x", instance_id="nope-1", condition="A", repetition=0, state="patched", patch=gold
    )
    with pytest.raises(CorpusError, match="has runs of task nope-1"):
        grade_solutions(tmp_path, read_tasks(tasks), [stray], _config())


def test_a_missing_base_commit_rejects_that_task_and_grades_the_others(project, tmp_path):
    _repo, tasks, gold = project
    taskset = read_tasks(tasks)
    good = taskset.tasks[0]
    broken = good.model_copy(update={"base_commit": "1" * 40, "instance_id": "broken-1"})
    other = tmp_path / "tasks"
    write_tasks(other, [good, broken], lambda sha: taskset.meta.model_copy(update={"tasks_sha256": sha}))
    ok = _solution("gold", gold)
    lost = Solution(run_id="lost", instance_id="broken-1", condition="A", repetition=0,
                    state=SolutionState.PATCHED, patch=gold)  # fmt: skip
    (tmp_path / "run").mkdir()
    summary = grade_solutions(tmp_path / "run", read_tasks(other), [ok, lost], _config())
    by_run = {g.run_id: g for g in summary.grades}
    assert by_run[ok.run_id].tests_pass
    rejected = by_run["lost"]
    assert rejected.status == "rejected" and not rejected.applies_clean and not rejected.tests_pass
    assert f"base commit {'1' * 40} is not in" in rejected.reason


def test_no_file_outside_the_run_directory_is_written(graded, project):
    rundir, _, _ = graded
    repo = project[0]
    assert repo.git("status", "--porcelain") == ""  # the user's checkout is untouched
    assert sorted(p.name for p in rundir.iterdir()) == [GRADE_LOG_DIR, GRADES_FILE]


def test_every_grade_line_validates_against_the_shipped_schema(graded):
    from jsonschema import Draft202012Validator

    from reviewbench.cli.schema import json_schema

    rundir, _, _ = graded
    schema = json_schema("grades")
    validator = Draft202012Validator(schema)
    for line in (rundir / GRADES_FILE).read_text().splitlines():
        validator.validate(json.loads(line))
    assert schema["properties"]["tests_pass"]["description"].startswith("Resolved")


def test_whole_suite_pass_to_pass_catches_a_regression_elsewhere(tmp_path):
    """Seed 002: with --p2p suite, PASS_TO_PASS is every test passing at the base, so a
    patch that fixes the task but breaks an unrelated module is not resolved."""
    from ..conftest import GitRepo

    repo = GitRepo(tmp_path / "proj")
    files = {**BASE_FILES, "util.py": "def double(x):\n    return 2 * x\n",
             "tests/test_util.py": "from util import double\n\n\ndef test_double():\n    assert double(2) == 4\n"}  # fmt: skip
    base = repo.commit("Initial", files)
    fix = repo.commit("Fix clamp ignoring its upper bound", FIX_FILES)
    gold = _diff(repo, base, fix, "calc.py")
    task = Task(
        instance_id="proj-0001", repo=str(repo.path), base_commit=base, patch=gold,
        test_patch=_diff(repo, base, fix, "tests"), problem_statement="clamp ignores hi",
        FAIL_TO_PASS=[F2P], PASS_TO_PASS=[P2P], created_at="2024-01-01T00:00:00+00:00", fix_commit=fix,
        gold_files=["calc.py"], test_files=["tests/test_calc.py"], patch_lines=2, test_cmd=TEST_CMD,
    )  # fmt: skip
    tasks = tmp_path / "tasks"
    write_tasks(tasks, [task], lambda sha: TasksMeta(
        repo=RepoInfo(path=str(repo.path), head=fix), created_at="2024-01-01T00:00:00+00:00", tool_version="test",
        config={}, test_cmd=TEST_CMD, tasks_sha256=sha,
        counts=TasksCounts(tasks=1, matched_commits=1, candidates=1, dropped={}),
    ))  # fmt: skip
    breaks = gold + ("diff --git a/util.py b/util.py\n--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n"
                     " def double(x):\n-    return 2 * x\n+    return x + 1\n")  # fmt: skip
    solutions = [_solution("gold", gold), _solution("breaks", breaks)]
    by_task = {g.run_id: g for g in grade_solutions(tmp_path / "run", read_tasks(tasks), solutions, _config()).grades}
    assert by_task["A-breaks-0"].tests_pass and by_task["A-breaks-0"].p2p == "task"  # the task's files miss it
    suite = {g.run_id: g for g in grade_solutions(tmp_path / "run", read_tasks(tasks), solutions, _config(),
                                                  p2p_suite=True).grades}  # fmt: skip
    assert suite["A-gold-0"].tests_pass and suite["A-gold-0"].p2p == "suite"
    assert not suite["A-breaks-0"].tests_pass  # regraded in suite mode: the unrelated test now counts
    assert "tests/test_util.py::test_double" in suite["A-breaks-0"].not_passed
    # The always-failing test of the base is not PASS_TO_PASS.
    assert suite["A-gold-0"].p2p_total == 2 and "tests/test_other.py::test_other_fails" not in suite["A-gold-0"].not_passed
    # Seed 002's overreach flag needs more than one file outside the gold files.
    assert suite["A-breaks-0"].overreach == 1 and not suite["A-breaks-0"].overreach_flag


@pytest.mark.parametrize("run_state, said", [("completed_findings", "patched"), ("completed_no_findings", "no_change"),
                                             ("invalid", "no_diff"), ("timed_out", "timed_out")])  # fmt: skip
def test_a_grade_says_how_the_solver_run_ended_in_task_words_and_reads_older_grades(run_state, said):
    old = {"run_id": "r", "instance_id": "t", "condition": "c", "repetition": 0, "run_state": run_state,
           "status": "no_patch", "applies_clean": False, "tests_pass": False, "partial": False, "overreach": 0,
           "overreach_files": [], "files": 0, "lines": 0, "f2p_passed": 0, "f2p_total": 0, "p2p_passed": 0,
           "p2p_total": 0, "not_passed": []}  # fmt: skip
    grade = Grade.model_validate(old)  # a grades.jsonl line written before the field was renamed
    assert grade.solution_state == said
    dumped = grade.model_dump(mode="json")
    assert dumped["solution_state"] == said and "run_state" not in dumped
    assert Grade.model_validate(dumped) == grade
