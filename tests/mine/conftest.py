"""A small pytest project with real tests, for mutations, controls and rename variants."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewbench.config import ValidateConfig

SHAPES = '''\
def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def window(items, start, size):
    if size <= 0:
        raise ValueError("size must be positive")
    end = start + size
    return items[start:end]


def total(values):
    acc = 0
    for v in values:
        if v is None:
            continue
        acc += v
    return acc
'''

TEXT = '''\
import os
import re


def join_words(words, sep=" "):
    cleaned = [w.strip() for w in words]
    result = sep.join(cleaned)
    return result


def first_line(text):
    lines = text.splitlines()
    if not lines:
        return ""
    return lines[0]


def count_words(text):
    words = re.findall(r"\\w+", text)
    number = len(words)
    return number


def read_file(path, strip=True):
    handle = open(os.fspath(path))
    try:
        data = handle.read()
    finally:
        handle.close()
    if strip:
        data = data.strip()
    return data
'''

TEST_SHAPES = '''\
import pytest

from pkg.shapes import clamp, total, window


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10
    assert clamp(10, 0, 10) == 10
    assert clamp(0, 0, 10) == 0


def test_window():
    assert window([1, 2, 3, 4], 1, 2) == [2, 3]
    assert window([1, 2, 3], 0, 3) == [1, 2, 3]
    with pytest.raises(ValueError):
        window([1], 0, 0)


def test_total():
    assert total([1, 2, None, 3]) == 6
    assert total([]) == 0
'''

TEST_TEXT = '''\
from pkg.text import count_words, first_line, join_words, read_file


def test_join():
    assert join_words([" a", "b "]) == "a b"
    assert join_words(["a", "b"], sep="-") == "a-b"


def test_first_line():
    assert first_line("x\\ny") == "x"
    assert first_line("") == ""


def test_count_words():
    assert count_words("one two three") == 3


def test_read(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("hello\\n")
    assert read_file(path) == "hello"
    assert read_file(path, strip=False) == "hello\\n"
'''

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": SHAPES,
    "pkg/text.py": TEXT,
    "pkg/_vendor/lib.py": "def helper(a, b):\n    if a < b:\n        return a\n    return b\n",
    "tests/__init__.py": "",
    "tests/test_shapes.py": TEST_SHAPES,
    "tests/test_text.py": TEST_TEXT,
    "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q -p no:randomly'\n",
}


@pytest.fixture
def project(git_repo):
    """A pytest project whose suite passes at HEAD and catches most small defects."""
    repo = git_repo("project")
    repo.commit("Initial layout", PROJECT)
    return repo


def validate_config(**values) -> ValidateConfig:
    values.setdefault("jobs", 2)
    values.setdefault("timeout", 120)
    values.setdefault("reruns", 1)
    return ValidateConfig(**values)


def changed_lines(patch: str) -> tuple[list[str], list[str]]:
    """Lines a unified diff removes and adds (headers excluded)."""
    lines = patch.splitlines()
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def apply_in_clone(repo_path: Path, base: str, patch: Path | None, where: Path, base_patch: Path | None = None) -> Path:
    """Clone the repository at ``base`` into ``where``, apply ``base_patch`` (a case's silent
    base patch) if any, then ``patch`` (if any) there with git."""
    subprocess.run(["git", "clone", "-q", str(repo_path), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", base], check=True)
    for each in (base_patch, patch):
        if each is not None:
            subprocess.run(["git", "-C", str(where), "apply", str(each)], check=True)
    return where
