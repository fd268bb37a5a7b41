"""A task set over a real fixture repository, shared by the ``tasks run`` tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from reviewbench.records import RepoInfo
from reviewbench.tasks.records import Task, TasksCounts, TasksMeta
from reviewbench.tasks.store import write_tasks

BASE_FILES = {
    "calc.py": "def clamp(v, lo, hi):\n    return max(lo, v)\n\n\ndef add(a, b):\n    return a + b\n",
    "dates.py": "def parse_date(text):\n    return text.split('-')\n",
    "other.py": "X = 1\n",
    "README.md": "A calculator.\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
FIX_CALC = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n\n\ndef add(a, b):\n    return a + b\n"
FIX_TEST = BASE_FILES["tests/test_calc.py"].replace("import add", "import add, clamp") + (
    "\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"
)
STATEMENT = "clamp ignores the upper bound\n\nclamp(5, 0, 3) returns 5 instead of 3."


@dataclass(frozen=True)
class Project:
    repo: Path
    base: str
    fix: str
    tasks: Path
    gold: str
    secret_blob: str
    """Blob id of the fixed calc.py: must never be reachable from a solver's tree."""


def _diff(repo, base: str, fix: str, *paths: str) -> str:
    return repo.git("diff", "--no-color", base, fix, "--", *paths) + "\n"


def make_project(git_repo, tmp_path: Path, n_tasks: int = 1) -> Project:
    repo = git_repo("project")
    base = repo.commit("init", BASE_FILES)
    fix = repo.commit("Fix clamp upper bound (#12)", {"calc.py": FIX_CALC, "tests/test_calc.py": FIX_TEST})
    repo.git("tag", "v1.0", fix)
    gold = _diff(repo, base, fix, "calc.py")
    test_patch = _diff(repo, base, fix, "tests/test_calc.py")
    tasks = [
        Task(instance_id=f"proj-{i:04d}", repo=str(repo.path), base_commit=base, patch=gold, test_patch=test_patch,
             problem_statement=STATEMENT, FAIL_TO_PASS=["tests/test_calc.py::test_clamp"],
             PASS_TO_PASS=["tests/test_calc.py::test_add"], created_at="2024-01-01T00:00:00+00:00",
             fix_commit=fix, gold_files=["calc.py"], test_files=["tests/test_calc.py"], patch_lines=2,
             test_cmd="python -m pytest -q")  # fmt: skip
        for i in range(1, n_tasks + 1)
    ]
    out = tmp_path / "tasks"
    write_tasks(out, tasks, lambda sha: TasksMeta(
        repo=RepoInfo(path=str(repo.path), head=fix), created_at="2024-01-01T00:00:00+00:00", tool_version="test",
        config={}, test_cmd="python -m pytest -q", tasks_sha256=sha,
        counts=TasksCounts(tasks=n_tasks, matched_commits=n_tasks, candidates=n_tasks, dropped={}),
    ))  # fmt: skip
    secret = repo.git("rev-parse", f"{fix}:calc.py")
    return Project(repo=repo.path, base=base, fix=fix, tasks=out, gold=gold, secret_blob=secret)


def experiment_file(tmp_path: Path, tasks: Path, conditions: str, repeats: int = 1, seed: int = 7) -> Path:
    path = tmp_path / "tasks-experiment.toml"
    path.write_text(f'tasks = "{tasks}"\nrepeats = {repeats}\nseed = {seed}\n{conditions}')
    return path


def condition(name: str, solver: str, **extra) -> str:
    lines = ["[[condition]]", f'name = "{name}"', f"solver = {solver}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def command(script: Path, sandbox: bool = True) -> str:
    """A command solver running ``script``; the sandbox shows its folder and the interpreter
    (which lives under the caller's home here). ``sandbox=False`` lets it write outside its tree."""
    expose = json.dumps([str(script.parent), os.path.realpath(sys.base_prefix)])
    return (f'{{ kind = "command", command = {json.dumps(f"{sys.executable} {script}")}, expose = {expose}, '
            f"sandbox = {str(sandbox).lower()}{'' if sandbox else ', network = true'} }}")


def git_in(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=True).stdout
