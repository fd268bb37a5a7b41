"""A base that fails for reasons of its environment: the case is still observed when the
patch makes the fix's own tests fail (issue 28: one locale-dependent test at the base
discarded a real fix that broke 41 tests)."""

from __future__ import annotations

from pathlib import Path

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.records import SelectionSignal
from reviewbench.validate import validate_corpus

#: Fails in any environment where the variable is unset: the sandbox's, always.
ENV_TEST = "import os\n\n\ndef test_env():\n    assert os.environ.get('RB_NEVER_SET') == '1'\n"
VALUE = "def value():\n    return {}\n"
VALUE_TEST = "\n\nfrom pkg.a import value\n\n\ndef test_value():\n    assert value() == 2{}\n"


def _validate(repo, tmp_path: Path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0, select=(SelectionSignal.MESSAGE,)), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=60))
    [gold] = read_corpus(out).gold
    return gold.validation, (out / "logs" / f"{gold.case_id}.log").read_text()


def _project(git_repo):
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": VALUE.format(1), "tests/__init__.py": "",
                         "tests/test_a.py": ENV_TEST})  # fmt: skip
    return repo


def test_observed_beside_a_test_that_fails_at_the_base(git_repo, tmp_path):
    repo = _project(git_repo)
    repo.commit("fix value", {"pkg/a.py": VALUE.format(2), "tests/test_a.py": ENV_TEST + VALUE_TEST.format("")})
    validation, log = _validate(repo, tmp_path)
    assert validation.status == "observed"
    assert validation.selection == "fix_tests"
    assert validation.failing_tests == ["tests/test_a.py::test_value"]
    assert validation.base_failures == ["tests/test_a.py::test_env"]
    assert "fail at the base too" in log


def test_base_failing_when_the_fixs_own_test_fails_at_the_base(git_repo, tmp_path):
    repo = _project(git_repo)
    own = VALUE_TEST.format(" and __import__('os').environ.get('RB_NEVER_SET')")
    repo.commit("fix value", {"pkg/a.py": VALUE.format(2), "tests/test_a.py": ENV_TEST + own})
    validation, _ = _validate(repo, tmp_path)
    assert validation.status == "base_failing"
    assert validation.base_failures == []


def test_a_case_without_test_files_is_observed_by_the_suite(git_repo, tmp_path):
    """No test file of its own (as a mutation): any test that passed at the base and fails
    with the patch is its own."""
    repo = _project(git_repo)
    repo.commit("value test", {"tests/test_v.py": VALUE_TEST.format(" or value() == 1")})
    repo.commit("bump", {"tests/test_v.py": VALUE_TEST.format("")})
    repo.commit("fix value", {"pkg/a.py": VALUE.format(2)})
    validation, _ = _validate(repo, tmp_path)
    assert validation.status == "observed"
    assert validation.selection == "suite"
    assert validation.failing_tests == ["tests/test_v.py::test_value"]
    assert validation.base_failures == ["tests/test_a.py::test_env"]


def test_only_the_environment_failing_stays_base_failing(git_repo, tmp_path):
    """The patch changes nothing the tests see: the same test fails with and without it."""
    repo = _project(git_repo)
    repo.commit("fix a constant", {"pkg/a.py": "UNUSED = 0\n" + VALUE.format(1)})  # a comment alone: docs_only
    validation, _ = _validate(repo, tmp_path)
    assert validation.status == "base_failing"
    assert validation.failing_tests == ["tests/test_a.py::test_env"]
