"""Validation runs the tree's code, in the project's environment (issue 18)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.validate import validate_corpus

from . import envs

ADD_BUG = "VERSION = '2.0'\n\ndef add(a, b):\n    return a - b\n"
ADD_OK = "VERSION = '2.0'\n\ndef add(a, b):\n    return a + b\n"
ADD_TEST = "from tinylib import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _config(**values) -> ValidateConfig:
    values.setdefault("jobs", 2)
    values.setdefault("timeout", 60)
    return ValidateConfig(**values)


def _validations(corpus: Path) -> dict[str, object]:
    return {g.provenance.subject: g.validation for g in read_corpus(corpus).gold}


@pytest.fixture
def src_layout(git_repo):
    """A src-layout package whose fix comes with a test."""
    repo = git_repo("tinylib")
    repo.commit("init", {"src/tinylib/__init__.py": ADD_BUG, "tests/test_version.py": "def test_v():\n    pass\n",
                         "pyproject.toml": "[project]\nname = 'tinylib'\nversion = '2.0'\n"})  # fmt: skip
    repo.commit("Fix add", {"src/tinylib/__init__.py": ADD_OK, "tests/test_add.py": ADD_TEST})
    return repo


@pytest.fixture
def shadowing_env(tmp_path):
    """An environment with pytest and an older, correct tinylib 1.0 installed."""
    wheel = envs.wheel(tmp_path / "wheels", "tinylib", "1.0",
                       {"tinylib/__init__.py": "VERSION = '1.0'\n\ndef add(a, b):\n    return a + b\n"})  # fmt: skip
    return envs.venv(tmp_path / "env", [wheel])


def test_an_installed_copy_shadowing_the_tree_is_an_error_naming_both(src_layout, shadowing_env, tmp_path):
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=src_layout.path), corpus)
    # Without src on PYTHONPATH the tests import the installed 1.0, which has no bug: the
    # old tool said not_observed about code no test ran.
    validate_corpus(corpus, _config(test_cmd=f"{shlex.quote(str(shadowing_env))} -m pytest"))
    validation = _validations(corpus)["Fix add"]
    assert validation.status == "error"
    assert "package 'tinylib' was imported from " + str(shadowing_env.parent.parent) in validation.reason
    assert "not from the tree's src/tinylib" in validation.reason
