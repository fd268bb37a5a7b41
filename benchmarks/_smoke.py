"""What the benchmarks' ``--smoke`` mode shares: a tiny real repository and the skip line.

``--smoke`` runs a benchmark end to end at toy sizes, in seconds, so that the test suite
(``tests/benchmarks/test_smoke.py``) notices when a benchmark no longer runs. Its figures
mean nothing; only that they are printed and finite.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

CALC = """\
def add(a, b):
    return a - b


def half(n):
    return n // 2


def clamp(x, lo, hi):
    if x < lo:
        return lo
    return x
"""

TEST_CALC = """\
from pkg.calc import add, clamp, half


def test_half():
    assert half(4) == 2
    assert half(5) == 2


def test_clamp_low():
    assert clamp(-3, 0, 10) == 0
    assert clamp(4, 0, 10) == 4
"""

TEXT = """\
def shout(s):
    if not s:
        return ""
    return s.upper() + "!"


def words(s):
    return [w for w in s.split() if w]
"""

TEST_TEXT = """\
from pkg.text import shout, words


def test_shout():
    assert shout("hi") == "HI!"
    assert shout("") == ""


def test_words():
    assert words(" a  b ") == ["a", "b"]
"""


def smoke_repo(dest: Path) -> Path:
    """A real git repository: a small package with pytest tests and two fix commits.

    Commits: the initial package (``add`` subtracts, ``clamp`` ignores ``hi``), a feature,
    ``Fix add subtracting`` (code + a new test that fails before it), ``Fix clamp upper
    bound`` (likewise), and a docs commit. Each fix is a mining case whose reversal a
    test observes, and a fix task with one FAIL_TO_PASS test.
    """
    dest.mkdir(parents=True)
    tick = 0

    def git(*args: str) -> None:
        nonlocal tick
        tick += 1
        date = f"2024-01-01T00:00:{tick:02d}+00:00"
        env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
               "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_NOSYSTEM": "1",
               "HOME": str(dest.parent)}  # fmt: skip
        subprocess.run(["git", "-C", str(dest), *args], env=env, check=True, capture_output=True)

    def commit(message: str, files: dict[str, str]) -> None:
        for name, text in files.items():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git("add", "-A")
        git("commit", "-q", "-m", message)

    git("init", "-q", "-b", "main")
    git("config", "commit.gpgsign", "false")
    commit("initial package", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/__init__.py": "",
                               "tests/test_calc.py": TEST_CALC})  # fmt: skip
    commit("add text helpers", {"pkg/text.py": TEXT, "tests/test_text.py": TEST_TEXT})
    calc = CALC.replace("return a - b", "return a + b")
    commit("Fix add subtracting\n\nadd() returned a - b.\n",
           {"pkg/calc.py": calc, "tests/test_calc.py": TEST_CALC + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"})  # fmt: skip
    test_calc = (dest / "tests/test_calc.py").read_text()
    commit("Fix clamp upper bound\n\nclamp() ignored hi.\n",
           {"pkg/calc.py": calc.replace("    return x\n", "    if x > hi:\n        return hi\n    return x\n"),
            "tests/test_calc.py": test_calc + "\n\ndef test_clamp_high():\n    assert clamp(12, 0, 10) == 10\n"})  # fmt: skip
    commit("docs: readme", {"README.md": "A tiny package for benchmark smoke runs.\n"})
    return dest


def optional(module: str, what: str) -> bool:
    """Whether ``module`` imports; if not, print the line saying ``what`` is skipped."""
    if importlib.util.find_spec(module) is not None:
        return True
    print(f"smoke: skipped {what}: {module} is not installed (pip install -e '.[bench]')")
    return False
