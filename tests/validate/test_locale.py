"""The locale of test runs (issue 28: a locale-dependent bug was not observed under the
sandbox's UTF-8 locale and observed under LC_ALL=C): ``[validate] env`` sets it, and the
test environment records it."""

from __future__ import annotations

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.errors import UsageError
from reviewbench.validate import validate_corpus
from reviewbench.validate.environment import locale_of_runs

#: A fix whose test only passes under the C locale, as a locale-dependent one does.
C_ONLY = "import os\nfrom pkg.a import value\n\n\ndef test_value():\n    assert os.environ.get('LC_ALL') == 'C'\n" \
         "    assert value() == 2\n"  # fmt: skip


def _corpus(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n"})
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n", "tests/test_a.py": C_ONLY})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out)
    return out


@pytest.mark.parametrize(("env", "status", "locale"), [
    ((), "base_failing", "LANG=C.UTF-8"),
    (("LC_ALL=C",), "observed", "LC_ALL=C"),
])  # fmt: skip
def test_validate_env_sets_the_locale_and_the_environment_records_it(git_repo, tmp_path, monkeypatch, env, status,
                                                                      locale):  # fmt: skip
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_CTYPE", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    corpus = _corpus(git_repo, tmp_path)
    validate_corpus(corpus, ValidateConfig(jobs=1, timeout=60, env=env))
    data = read_corpus(corpus)
    [gold] = data.gold
    assert gold.validation.status == status
    assert gold.validation.environment.locale == locale
    assert data.meta.environment.locale == locale


def test_the_locale_is_named_by_its_deciding_variable():
    assert locale_of_runs({}, {"LANG": "en_US.UTF-8", "LC_CTYPE": "de_DE.UTF-8"}) == "LC_CTYPE=de_DE.UTF-8"
    assert locale_of_runs({"LC_ALL": "C"}, {"LANG": "en_US.UTF-8"}) == "LC_ALL=C"
    assert locale_of_runs({}, {}) is None


def test_a_malformed_env_entry_is_refused():
    with pytest.raises(UsageError, match="neither a variable name nor NAME=VALUE"):
        ValidateConfig.build(env=("1BAD=x",))
    assert ValidateConfig(env=("API_KEY", "LC_ALL=C")).env_allow == ("API_KEY", "LC_ALL")
    assert ValidateConfig(env=("API_KEY", "LC_ALL=C")).env_set == {"LC_ALL": "C"}


#: A fix whose test passes only when colour may be used (loguru's tty detection tests).
COLOUR = "import os\nfrom pkg.a import value\n\n\ndef test_value():\n    assert not os.environ.get('NO_COLOR')\n" \
         "    assert os.environ['HOME'] != '/nowhere' and os.environ['PYTHONHASHSEED'] == '0'\n" \
         "    assert value() == 2\n"  # fmt: skip


@pytest.mark.parametrize(("env", "status"), [((), "base_failing"), (("NO_COLOR=",), "observed")])
def test_validate_env_may_lift_no_color(git_repo, tmp_path, env, status):
    """Test runs get ``NO_COLOR=1`` (plain logs); loguru's bases of 2025 failed its tty
    colour test under it. ``[validate] env`` may set it (``NO_COLOR=``: colour allowed),
    never HOME, TMPDIR or the hash seed."""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n"})
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n", "tests/test_a.py": COLOUR})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    validate_corpus(corpus, ValidateConfig(jobs=1, timeout=60, env=(*env, "HOME=/nowhere", "PYTHONHASHSEED=7")))
    [gold] = read_corpus(corpus).gold
    assert gold.validation.status == status
