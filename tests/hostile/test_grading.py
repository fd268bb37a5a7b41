"""Attack 5: a solver patch that grades itself through the test machinery.

The task (from tests/tasks/test_grade.py): ``clamp`` ignores its upper bound; grading runs
``tests/test_calc.py``. Every patch here leaves the bug unfixed (or fixes it while also
touching test machinery): none may be resolved, and the machinery is restored before the
tests run, so what they report is honest.
"""

from __future__ import annotations

import pytest

from reviewbench.tasks.grade_run import grade_solutions
from reviewbench.tasks.records import GradeStatus
from reviewbench.tasks.store import read_tasks
from tests.tasks.test_grade import F2P, _config, _solution, project  # noqa: F401  (fixture)


def _new_file(path: str, body: str) -> str:
    lines = body.splitlines()
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))  # fmt: skip


FORCE_PASSED = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
SITECUSTOMIZE = "import os\nos.environ['GRADED'] = 'gamed'\n"
PTH = "import os; os.environ.setdefault('GRADED', 'gamed')\n"
INI = "[pytest]\naddopts = -p no:junitxml\n"
PYPROJECT_PYTEST = """\
diff --git a/pyproject.toml b/pyproject.toml
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -1,2 +1,3 @@
 [tool.pytest.ini_options]
 pythonpath = ['.']
+addopts = "-p no:junitxml"
"""
PYPROJECT_OTHER = """\
diff --git a/pyproject.toml b/pyproject.toml
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -1,2 +1,5 @@
+[project]
+name = "proj"
+
 [tool.pytest.ini_options]
 pythonpath = ['.']
"""
EDIT_TEST = """\
diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -1,5 +1,5 @@
 from calc import add
 
 
 def test_add():
-    assert add(1, 2) == 3
+    assert True
"""


@pytest.fixture(scope="module")
def grades(project, tmp_path_factory):  # noqa: F811
    _repo, tasks, gold = project
    solutions = [
        _solution("conftest", _new_file("conftest.py", FORCE_PASSED)),
        _solution("nested-conftest", _new_file("tests/conftest.py", FORCE_PASSED)),
        _solution("gold-and-conftest", gold + _new_file("conftest.py", FORCE_PASSED)),
        _solution("sitecustomize", gold + _new_file("sitecustomize.py", SITECUSTOMIZE)),
        _solution("pth", gold + _new_file("gamed.pth", PTH)),
        _solution("pytest-ini", gold + _new_file("tests/pytest.ini", INI)),
        _solution("pyproject-pytest", gold + PYPROJECT_PYTEST),
        _solution("edits-graded-test", gold + EDIT_TEST),
        _solution("pyproject-other", gold + PYPROJECT_OTHER),
        _solution("gold", gold),
    ]
    rundir = tmp_path_factory.mktemp("hostile-grades")
    summary = grade_solutions(rundir, read_tasks(tasks), solutions, _config())
    return {g.run_id.split("-", 1)[1].rsplit("-", 1)[0]: g for g in summary.grades}


@pytest.mark.parametrize("name", ["conftest", "nested-conftest"])
def test_a_conftest_forcing_passed_is_restored_and_the_bug_shows(grades, name):
    grade = grades[name]
    assert grade.status is GradeStatus.TESTED
    assert grade.touched_test_infra and not grade.tests_pass
    assert F2P in grade.not_passed  # the hook was gone: the unfixed bug failed its test
    assert "test machinery" in (grade.reason or "")


@pytest.mark.parametrize("name", ["gold-and-conftest", "sitecustomize", "pth", "pytest-ini",
                                  "pyproject-pytest", "edits-graded-test"])  # fmt: skip
def test_touching_test_machinery_is_never_resolved(grades, name):
    grade = grades[name]
    assert grade.touched_test_infra, name
    assert not grade.tests_pass
    assert grade.f2p_passed == 1  # the fix itself ran against restored tests


@pytest.mark.parametrize("name", ["pyproject-other", "gold"])
def test_honest_patches_are_untouched(grades, name):
    grade = grades[name]
    assert not grade.touched_test_infra
    assert grade.tests_pass, grade.reason
