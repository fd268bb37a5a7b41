"""Patched runs print Python's own tracebacks (``--tb=native``): the verdict is the exit
code and JUnit XML either way, and pytest's rendering of a failure (source statements
found by parsing each module of the traceback) was a fifth of a failing run's CPU on
pytoolz/toolz. Runs at the base keep pytest's style, since their first error line becomes
a case's reason; a command that chooses its own ``--tb`` keeps it."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from reviewbench.config import ValidateConfig
from reviewbench.records import ValidationStatus
from reviewbench.validate.testcmd import TestCommand
from reviewbench.validate.worker import CaseJob, ScratchTree, validate_case

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider"


def test_a_patched_run_asks_for_native_tracebacks_unless_the_command_chose_a_style(tmp_path):
    junit = tmp_path / "r.xml"
    assert shlex.split(TestCommand(PYTEST).shell([], junit, tracebacks="native"))[-1] == "--tb=native"
    assert "--tb=native" not in TestCommand(PYTEST).shell([], junit)
    for own in ("--tb=short", "--tb short", "--tb=long -q"):
        shell = TestCommand(f"{PYTEST} {own}").shell(["tests/t.py"], junit, tracebacks="native")
        assert "--tb=native" not in shell, own
        assert own in shell


def _case(git_repo, tmp_path: Path, module: str, tests: str, patched: str) -> tuple[object, str]:
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": module, "tests/test_m.py": tests})
    repo.write({"pkg/m.py": patched})
    patch = tmp_path / "case.patch"
    patch.write_bytes(subprocess.run(["git", "-C", str(repo.path), "diff"], capture_output=True, check=True).stdout)
    repo.git("checkout", "--", ".")
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=120, reruns=1))
    job = CaseJob("case", base, patch, ("tests/test_m.py",), tmp_path / "case.log")
    try:
        result = validate_case(tree, TestCommand(PYTEST), job)
    finally:
        tree.close()
    return result, job.log.read_text()


def _section(log: str, label: str) -> str:
    start = log.index(f"=== {label}:")
    end = log.find("\n=== ", start + 1)
    return log[start:end if end >= 0 else None]


def test_the_patched_run_shows_a_native_traceback_and_the_case_is_observed(git_repo, tmp_path):
    module = "def double(x):\n    return x * 2\n"
    tests = "from pkg.m import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    result, log = _case(git_repo, tmp_path, module, tests, module.replace("x * 2", "x + 2"))
    assert result.status is ValidationStatus.OBSERVED
    assert result.failing_tests == ["tests/test_m.py::test_double"]
    patched = _section(log, "patched (fix_tests) run 1")
    assert "--tb=native" in patched
    assert "Traceback (most recent call last):" in patched
    assert "AssertionError: assert 5 == 6" in patched  # pytest's explanation of the assert is kept


def test_a_run_at_the_base_keeps_pytests_style_and_gives_the_reason(git_repo, tmp_path):
    # The test fails at the base already (an environment the project does not have):
    # the case is base_failing, its reason read from the reference run's ``E`` lines.
    module = "import os\n\n\ndef home():\n    return os.environ['NO_SUCH_VARIABLE_HERE']\n"
    tests = "from pkg.m import home\n\n\ndef test_home():\n    assert home()\n"
    result, log = _case(git_repo, tmp_path, module, tests, module.replace("NO_SUCH", "NOT_SUCH"))
    assert result.status is ValidationStatus.BASE_FAILING
    reference = _section(log, "reference (fix_tests) whole selection at base")
    assert "--tb=native" not in reference
    assert "\nE   " in reference
    assert result.reason == "KeyError: 'NO_SUCH_VARIABLE_HERE'"


def test_a_fixs_example_script_is_not_handed_to_pytest(git_repo, tmp_path):
    """loguru's fixes change example scripts under ``tests/`` (``tests/exceptions/source/…``)
    that its test modules run as subprocesses: named on pytest's command line, pytest
    imported one, which waited forever (a 120 s timeout). The fix's own tests are the files
    pytest would collect (``python_files``: ``test_*.py``, ``*_test.py``, or the project's)."""
    repo = git_repo()
    module = "def double(x):\n    return x * x\n"
    tests = "from pkg.m import double\n\n\ndef test_two():\n    assert double(2) == 4\n"
    repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": module, "tests/test_m.py": tests,
                         "tests/source/example.py": "import time\n\ntime.sleep(600)\n"})  # fmt: skip
    repo.commit("fix double", {"pkg/m.py": "def double(x):\n    return 2 * x\n",
                               "tests/test_m.py": tests + "\n\ndef test_three():\n    assert double(3) == 6\n",
                               "tests/source/example.py": "import time\n\ntime.sleep(601)\n"})  # fmt: skip
    corpus = tmp_path / "corpus"
    from reviewbench import MineConfig, mine_corpus
    from reviewbench.validate import validate_corpus

    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    summary = validate_corpus(corpus, ValidateConfig(jobs=1, timeout=30, reruns=1))
    log = "".join(p.read_text() for p in (corpus / "logs").glob("*.log"))
    assert summary.by_status == {"observed": 1}, log
    assert "tests/source/example.py" not in log.split("patched (fix_tests) run 1:")[1].split("\n")[0]
