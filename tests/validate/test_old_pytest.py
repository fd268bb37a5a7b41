"""Old pytest (issue 28): pytest 3.x and 4.x call their assertion rewriter as
``_rewrite_test(config, fn)`` with a ``py.path`` for ``fn``; pytest 5 and later as
``_rewrite_test(fn, config)``. reviewbench's caches of rewritten test modules (cold runs'
``.pyc`` cache and the warm server's) must call it either way: they had assumed the new
order, and every case of a Python 3.7 + ``pytest<4`` project ended ``base_failing`` with
"TypeError: expected str, bytes or os.PathLike object, not Config".

Real interpreters and a real pytest 3.10.1 only: ``scripts/bootstrap`` keeps its wheels in
``.venv/old-pytest-wheels`` when the machine has a Python 3.7 (pyenv's), and the test is
skipped, saying so, when either is missing. Runs are cold: pytest 3 has no
``pytest/__main__.py`` for the warm server to start from (``warm.py``); the server's
wrapper is the same function (``_bytecode_cache.cached_rewriter``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus

from ..conftest import run_cli
from .test_old_interpreters import _python

WHEELS = Path(__file__).resolve().parents[2] / ".venv" / "old-pytest-wheels"


@pytest.fixture(scope="module")
def old_pytest(tmp_path_factory) -> Path:
    python = _python("3.7")
    if not any(WHEELS.glob("pytest-3.10.1-*.whl")):
        pytest.skip(f"no pytest 3.10.1 wheels in {WHEELS} (scripts/bootstrap fetches them)")
    venv = tmp_path_factory.mktemp("old-pytest") / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(WHEELS),
                    "--disable-pip-version-check", "pytest==3.10.1"], check=True, capture_output=True)  # fmt: skip
    return venv / "bin" / "python"


def _double(git_repo):
    """A repository with one fix whose new test (``test_three``) fails without it."""
    repo = git_repo()
    test_two = "from pkg.m import double\n\n\ndef test_two():\n    assert double(2) == 4\n"
    repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": "def double(x):\n    return x * x\n",
                         "tests/test_m.py": test_two})  # fmt: skip
    repo.commit("fix double", {"pkg/m.py": "def double(x):\n    return 2 * x\n",
                               "tests/test_m.py": test_two + "\n\ndef test_three():\n    assert double(3) == 6\n"})  # fmt: skip
    return repo


def _fix_of_double(git_repo, tmp_path: Path) -> Path:
    """A corpus of :func:`_double`'s fix reversal."""
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=_double(git_repo).path, mirrors=False, controls_ratio=0), corpus)
    return corpus


def test_a_fix_is_observed_under_pytest_3(old_pytest, git_repo, tmp_path):
    corpus = _fix_of_double(git_repo, tmp_path)
    proc = run_cli("validate", corpus, "--test-cmd", f"{old_pytest} -m pytest", "--jobs", "1", "--reruns", "1")
    logs = "\n".join(p.read_text() for p in sorted((corpus / "logs").glob("*.log")))
    assert proc.returncode == 0, proc.stderr + logs
    assert "not Config" not in logs
    assert ", warm)" not in logs
    (gold,) = [json.loads(line) for line in (corpus / "gold.jsonl").read_text().splitlines()]
    assert gold["validation"]["status"] == "observed", logs
    assert gold["validation"]["failing_tests"] == ["tests/test_m.py::test_three"]
    assert gold["validation"]["environment"]["pytest"] == "3.10.1"


def test_python_chooses_the_interpreter_setup_builds_on(old_pytest, git_repo, tmp_path):
    """``--python`` names the interpreter old commits need, where it had to be made the
    active one (``PYENV_VERSION=3.7.16``) for ``--setup`` to build on it."""
    python37 = _python("3.7")
    corpus = _fix_of_double(git_repo, tmp_path)
    setup = f"python -m pip install -q --no-index --find-links {WHEELS} --disable-pip-version-check pytest==3.10.1"
    proc = run_cli("validate", corpus, "--python", python37, "--setup", setup, "--jobs", "1", "--reruns", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["by_status"] == {"observed": 1}
    assert summary["environment"]["python_version"].startswith("3.7.")
    assert summary["environment"]["pytest"] == "3.10.1"
    # A --test-cmd saying "python" runs the environment's: its record stays the setup's,
    # though pytest 3 has no pytest/__main__.py (it was "unknown (a test command
    # reviewbench cannot take apart)").
    again = run_cli("validate", corpus, "--python", python37, "--setup", setup, "--test-cmd", "python -m pytest",
                    "--jobs", "1", "--reruns", "1", "--force", "--json")  # fmt: skip
    assert again.returncode == 0, again.stderr
    environment = json.loads(again.stdout)["environment"]
    assert environment is not None and environment["setup"] == setup and environment["pytest"] == "3.10.1"


def test_python_that_does_not_run_is_one_line(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    broken = tmp_path / "python9"
    broken.write_text("#!/bin/sh\necho 'pyenv: python9: command not found' >&2\nexit 127\n")
    broken.chmod(0o755)
    for value, says in ((str(broken), "does not run: pyenv: python9: command not found"),
                        ("python-no-such-version", "no such interpreter"),
                        (str(tmp_path), "no such interpreter")):  # fmt: skip
        proc = run_cli("validate", corpus, "--python", value, "--setup", "auto", "--jobs", "1")
        assert proc.returncode != 0
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert f"--python {value}" in proc.stderr and says in proc.stderr, proc.stderr
    assert not (corpus / "envs").exists() or not any((corpus / "envs").iterdir())
    # fix tasks take the same option (one declaration, cli/_testrun.py)
    proc = run_cli("tasks", "mine", repo.path, "--out", tmp_path / "tasks", "--python", str(broken), "--jobs", "1")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "does not run: pyenv: python9: command not found" in proc.stderr


def test_a_pyenv_shim_of_another_version_names_the_interpreter_pyenv_has(git_repo, tmp_path, monkeypatch):
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    # What pyenv installs: a shim on PATH that refuses a version not made active, and the
    # interpreter itself under PYENV_ROOT/versions/.
    shims, real = tmp_path / "shims", tmp_path / "pyenv" / "versions" / "3.7.16" / "bin" / "python3.7"
    shims.mkdir()
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\nexit 0\n")
    (shims / "python3.7").write_text("#!/bin/sh\necho 'pyenv: python3.7: command not found' >&2\nexit 127\n")
    for made in (real, shims / "python3.7"):
        made.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    proc = run_cli("validate", corpus, "--python", "python3.7", "--setup", "auto", "--jobs", "1")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(f"pyenv: python3.7: command not found; pyenv has {real}: pass that path")


def test_fix_tasks_are_mined_and_graded_on_the_interpreter_python_names(git_repo, tmp_path):
    """``tasks mine --python`` and ``tasks grade --python`` without ``--setup``: the
    default test command is that interpreter's (here the one running this suite), and the
    gold patches resolve their tasks."""
    import sys

    from reviewbench.config import ValidateConfig
    from reviewbench.tasks import mine_tasks
    from reviewbench.tasks.grade_run import grade_solutions
    from reviewbench.tasks.solutions import Solution
    from reviewbench.tasks.store import read_tasks

    config = ValidateConfig(jobs=1, timeout=60, python=sys.executable)
    summary = mine_tasks(MineConfig(repo=_double(git_repo).path), tmp_path / "tasks", config)
    assert summary.meta.counts.tasks == 1, summary.meta.counts
    assert summary.meta.test_cmd.startswith(sys.executable)  # what it says it runs: a venv stays a venv
    taskset = read_tasks(tmp_path / "tasks")
    gold = [Solution(run_id=f"A-{t.instance_id}-0", instance_id=t.instance_id, condition="A", repetition=0,
                     state="patched", patch=t.patch) for t in taskset.tasks]  # fmt: skip
    grades = grade_solutions(tmp_path / "runs", taskset, gold, config).grades
    assert [g.tests_pass for g in grades] == [True], [g.reason for g in grades]
