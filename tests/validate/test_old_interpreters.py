"""Old interpreters (issue 28): 3.7 runs what reviewbench puts into test runs, older ones
are refused up front with one line. Real interpreters only: a test is skipped when the
machine has none of that version (pyenv's, or ``pythonX.Y`` on PATH)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.validate.environment import describe_interpreter
from reviewbench.validate.probe import install_plugin
from reviewbench.validate.warm import SERVER

from ..conftest import run_cli


def _python(version: str) -> str:
    found = shutil.which(f"python{version}")
    candidates = ([found] if found else []) + sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    for candidate in candidates:
        proc = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, check=False)  # fmt: skip
        if proc.returncode == 0 and proc.stdout.strip() == version:
            return candidate
    pytest.skip(f"no Python {version} on this machine")


def test_python_37_loads_the_probe_plugin_and_lists_its_packages(tmp_path):
    python = _python("3.7")
    plugin = install_plugin(tmp_path / "home")
    # Python 3.7 has no sys.addaudithook: the plugin loaded, and failed every case, there.
    proc = subprocess.run([python, "-c", "import _reviewbench_probe"], env={**os.environ, "PYTHONPATH": str(plugin)},
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    environment = describe_interpreter(python)
    assert environment is not None and environment.python_version.startswith("3.7.")
    assert environment.packages >= 1  # pip at least: listed without importlib.metadata
    compiled = subprocess.run([python, "-m", "py_compile", str(SERVER)], capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr


def test_python_36_is_refused_up_front(git_repo, tmp_path):
    python = _python("3.6")
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    proc = run_cli("validate", corpus, "--test-cmd", f"{python} -m pytest", "--jobs", "1")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert "is Python 3.6." in proc.stderr and "needs Python 3.7 or later" in proc.stderr
    assert not (Path(corpus) / "logs").exists() or not any((Path(corpus) / "logs").iterdir())
