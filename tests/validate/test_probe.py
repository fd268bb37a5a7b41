"""The probe sees every module a run executed, even one the tests later drop from
``sys.modules`` (python-humanize's i18n tests do: its mutations came out
``not_exercised`` though every test imported the file)."""

from __future__ import annotations

import shlex
import sys

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.validate import validate_corpus


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_module_the_tests_drop_from_sys_modules_still_counts_as_exercised(git_repo, tmp_path, monkeypatch, warm):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/i18n.py": "def gettext(x):\n    return x\n\n\ndef ngettext(x, y, n):\n    if n == 1:\n        return x\n    return y\n",
        "tests/test_i18n.py": (
            "import sys\n\nimport pytest\n\n\n@pytest.fixture(autouse=True)\ndef fresh():\n    yield\n"
            "    sys.modules.pop('pkg.i18n', None)  # reloaded by the next test\n\n\n"
            "def test_gettext():\n    from pkg.i18n import gettext\n    assert gettext('a') == 'a'\n"
        ),
    })  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, fixes=False, mutations=3, controls_ratio=0, paths=("pkg/i18n.py",)), corpus)
    validate_corpus(corpus, ValidateConfig(jobs=1, timeout=60))
    statuses = {g.validation.status.value for g in read_corpus(corpus).gold}
    assert statuses and "not_exercised" not in statuses
    assert statuses <= {"observed", "not_observed"}
    for case in read_corpus(corpus).gold:  # the log says what a not_observed claim rests on
        log = (corpus / "logs" / f"{case.case_id}.log").read_text()
        assert ("imported from the tree: pkg/i18n.py" in log) == (case.validation.status.value == "not_observed")


def test_a_suite_that_collects_nothing_says_so_and_how_to_name_its_files(git_repo, tmp_path, cli):
    """itsdangerous kept its tests in ``tests.py`` until 2016, a name pytest's default
    ``python_files`` does not match: 39 of 63 cases were ``not_exercised`` with "no test
    imported itsdangerous.py from the tree", which hid that nothing was collected at all."""
    repo = git_repo()
    calc = "def add(a, b):\n    return a - b\n"
    tests = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n" \
            "        self.assertEqual(add(2, 3), 5)\n"  # fmt: skip
    repo.commit("init", {"calc.py": calc, "tests.py": tests.replace("5)", "-1)")})
    repo.commit("Fix add", {"calc.py": calc.replace("a - b", "a + b"), "tests.py": tests})
    repo.commit("Fix docs of add", {"calc.py": "# adds\n" + calc.replace("a - b", "a + b")})
    corpus = tmp_path / "corpus"
    assert cli("mine", repo.path, "--out", corpus, "--controls-ratio", "0", "--no-mirrors").code == 0
    pytest_cmd = f"{shlex.quote(sys.executable)} -m pytest"
    result = cli("validate", corpus, "--jobs", "1", "--reruns", "1", "--timeout", "60", "--test-cmd", pytest_cmd)
    assert result.code == 0, result.stderr
    (gold,) = [g for g in read_corpus(corpus).gold if g.stratum == "fix_reversal"]
    assert gold.validation.status.value == "not_exercised"
    assert gold.validation.reason == ("the whole suite collects no test here (pytest exit 5); tests.py is not "
                                      "a file pytest collects (python_files: test_*.py *_test.py)")  # fmt: skip
    assert "collects no test" in result.stdout
    from reviewbench.validate.reasons import has_remedy, remedy

    assert has_remedy(gold.validation.reason) and "python_files=tests.py" in remedy(gold.validation.reason)
    # Named on the command line, the file runs, and the reversed bug is observed.
    again = cli("validate", corpus, "--jobs", "1", "--reruns", "1", "--timeout", "60", "--force",
                "--test-cmd", f"{pytest_cmd} -o 'python_files=tests.py test_*.py'")  # fmt: skip
    assert again.code == 0, again.stderr
    (gold,) = [g for g in read_corpus(corpus).gold if g.stratum == "fix_reversal"]
    assert gold.validation.status.value == "observed"
    assert gold.validation.selection == "fix_tests"  # the command's python_files names tests.py: run it first
