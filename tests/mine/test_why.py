"""``show --dropped`` and ``show --why SHA``: why a commit the user expected is not a case."""

from __future__ import annotations

import json

import pytest

from ..conftest import run_cli

WORDS = "def split_words(text):\n    return text.split(' ')\n\n\ndef shout(text):\n    return text.upper()\n"
TEST = "from words import split_words\n\n\ndef test_split():\n    assert split_words('a b') == ['a', 'b']\n"


@pytest.fixture
def mined(git_repo, tmp_path):
    repo = git_repo("project")
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": TEST, "README.md": "# w\n"})
    shas = {}
    shas["case"] = repo.commit("Handle runs of spaces", {"words.py": WORDS.replace("split(' ')", "split()"),
                                                          "tests/test_words.py": TEST + "\n# runs\n"})  # fmt: skip
    shas["dropped"] = repo.commit("Fix the example of split", {"README.md": "# W\n"})
    now = (repo.path / "words.py").read_text()
    shas["feature"] = repo.commit("Add whisper", {"words.py": now.replace("text.upper()", "text.upper() or text"),
                                                  "tests/test_words.py": TEST + "\n# whisper\n"})  # fmt: skip
    now = (repo.path / "words.py").read_text()
    shas["upkeep"] = repo.commit("Fix typos in the docstrings", {"words.py": "# words\n" + now})
    now = (repo.path / "words.py").read_text()
    shas["untested"] = repo.commit("Keep shout on None", {"words.py": now.replace("return text", "return (text or '')")})
    repo.git("checkout", "-q", "-b", "side")
    shas["unmerged"] = repo.commit("Fix on a branch", {"words.py": WORDS})
    repo.git("checkout", "-q", "main")
    out = tmp_path / "corpus"
    proc = run_cli("mine", repo.path, "--out", out, "--controls-ratio", "0", "--no-mirrors")
    assert proc.returncode == 0, proc.stderr
    return repo, out, shas


def _why(out, sha):
    proc = run_cli("show", out, "--why", sha[:10], "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_why_names_the_case_the_drop_or_the_signals_missed(mined):
    repo, out, shas = mined
    case = _why(out, shas["case"])
    assert case["outcome"] == "case" and len(case["cases"]) == 1 and case["reasons"] == ["taken by test_coedit"]
    dropped = _why(out, shas["dropped"])
    assert dropped["outcome"] == "dropped" and dropped["reasons"] == ["taken by message, dropped: no_source_change"]
    feature = _why(out, shas["feature"])
    assert feature["outcome"] == "not_a_candidate"
    assert feature["reasons"][0].startswith("message: no --grep pattern matches")
    assert "announces new work" in feature["reasons"][1]
    untested = _why(out, shas["untested"])
    assert untested["reasons"][1] == "test_coedit: edits no test file that existed before it"
    assert _why(out, shas["upkeep"])["reasons"][0] == (
        "message: it says 'fix' of upkeep only (tests, lint, typos, CI, docs, warnings)")
    unmerged = _why(out, shas["unmerged"])
    assert unmerged["outcome"] == "not_mined" and "not an ancestor of HEAD" in unmerged["reasons"][0]
    text = run_cli("show", out, "--why", shas["feature"])
    assert text.returncode == 0 and "'Add whisper': not a candidate" in text.stdout


def test_why_beyond_the_limit(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS})
    old = repo.commit("Fix split", {"words.py": WORDS.replace("split(' ')", "split()")})
    repo.commit("Fix shout", {"words.py": WORDS.replace("split(' ')", "split()").replace("upper()", "upper() or ''")})
    out = tmp_path / "corpus"
    assert run_cli("mine", repo.path, "--out", out, "--limit", "1", "--controls-ratio", "0").returncode == 0
    why = _why(out, old)
    assert why["outcome"] == "not_mined" and "--limit 1" in why["reasons"][0]


def test_show_dropped_lists_each_drop(mined):
    _repo, out, shas = mined
    proc = run_cli("show", out, "--dropped", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows == [{"commit": shas["dropped"], "subject": "Fix the example of split", "reason": "no_source_change",
                     "selected_by": ["message"], "detail": None}]  # fmt: skip
    text = run_cli("show", out, "--dropped")
    assert "1 candidate commits made no case" in text.stdout and "no_source_change" in text.stdout


def test_why_an_unknown_commit_is_one_line(mined):
    _repo, out, _shas = mined
    proc = run_cli("show", out, "--why", "0123456789abcdef")
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "is not a commit of" in proc.stderr
