"""The probe sees every module a run executed, even one the tests later drop from
``sys.modules`` (python-humanize's i18n tests do: its mutations came out
``not_exercised`` though every test imported the file)."""

from __future__ import annotations

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
