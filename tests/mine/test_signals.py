"""Candidate signals beyond the word "fix": issue references, a source edit with its test
edit, the repository's own conventions; each case says which took it."""

from __future__ import annotations

import json

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import DEFAULT_FIX_PATTERN
from reviewbench.errors import NoMatchingCommits
from reviewbench.git.stream import LogEntry
from reviewbench.mine.signals import (
    announces_feature,
    learn_conventions,
    references_issue,
    upkeep_only,
)
from reviewbench.records import SelectionSignal

from ..conftest import run_cli

WORDS = '''\
def split_words(text):
    return text.split(" ")


def shout(text):
    return text.upper()
'''

WORDS_TEST = '''\
from words import split_words


def test_split():
    assert split_words("a b") == ["a", "b"]
'''
#: A source rewrite with an edit of its existing test file: the shape of a co-edit.
_SPLIT_ANY_WHITESPACE = {"words.py": WORDS.replace('text.split(" ")', "text.split()"),
                         "tests/test_words.py": WORDS_TEST + "\n# runs of spaces\n"}  # fmt: skip


@pytest.fixture
def history(git_repo):
    """Fixes that never say "fix", beside features, refactors and a classic fix."""
    repo = git_repo("project")
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST, "README.md": "# w\n"})
    taken = {}
    # A fix in all but name: it rewrites an existing line and adds its regression test to
    # the existing test file.
    taken["coedit"] = repo.commit("Handle runs of spaces in split_words", {
        "words.py": WORDS.replace('text.split(" ")', "text.split()"),
        "tests/test_words.py": WORDS_TEST + '\n\ndef test_runs():\n    assert split_words("a  b") == ["a", "b"]\n',
    })  # fmt: skip
    # A feature: new code, new test file, no existing line rewritten.
    repo.commit("Add whisper", {
        "words.py": WORDS.replace('text.split(" ")', "text.split()") + "\n\ndef whisper(text):\n    return text.lower()\n",
        "tests/test_whisper.py": "from words import whisper\n\n\ndef test_whisper():\n    assert whisper('A') == 'a'\n",
    })  # fmt: skip
    now = (repo.path / "words.py").read_text()
    # A source-only rewrite that references an issue (and a squash-merge number on a feature).
    taken["issue"] = repo.commit("#12: Keep shout from failing on None",
                                 {"words.py": now.replace("return text.upper()", "return (text or '').upper()")})
    now = (repo.path / "words.py").read_text()
    repo.commit("Add a module docstring (#13)", {"words.py": '"""Words."""\n' + now})
    now = (repo.path / "words.py").read_text()
    taken["message"] = repo.commit("Fix whisper on None", {"words.py": now.replace("return text.lower()",
                                                                                  "return (text or '').lower()")})
    return repo, taken


def _gold(repo, out, **options):
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0, **options), out)
    return {g.provenance.commit: g for g in read_corpus(out).gold}


def test_the_default_takes_a_fix_without_the_word_by_its_test_edit(history, tmp_path):
    repo, taken = history
    gold = _gold(repo, tmp_path / "c")
    assert set(gold) == {taken["coedit"], taken["message"]}
    assert gold[taken["coedit"]].provenance.selected_by == [SelectionSignal.TEST_COEDIT]
    assert gold[taken["message"]].provenance.selected_by == [SelectionSignal.MESSAGE]
    meta = read_corpus(tmp_path / "c").meta
    assert meta.counts.matched_commits == 2  # commits no signal took are not "matched"
    assert meta.config["select"] == ["message", "test_coedit"]


def test_select_message_alone_is_the_old_grep(history, tmp_path):
    repo, taken = history
    gold = _gold(repo, tmp_path / "c", select=(SelectionSignal.MESSAGE,))
    assert set(gold) == {taken["message"]}


def test_issue_references_but_not_a_squash_merge_number(history, tmp_path):
    repo, taken = history
    gold = _gold(repo, tmp_path / "c", select=(SelectionSignal.ISSUE_REF,))
    assert set(gold) == {taken["issue"]}
    assert gold[taken["issue"]].provenance.selected_by == [SelectionSignal.ISSUE_REF]


def test_every_signal_a_commit_shows_is_recorded(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    sha = repo.commit("Fix #3: split on any whitespace", {
        "words.py": WORDS.replace('text.split(" ")', "text.split()"),
        "tests/test_words.py": WORDS_TEST + "\n# runs of spaces\n",
    })  # fmt: skip
    gold = _gold(repo, tmp_path / "c", select=tuple(SelectionSignal))
    assert gold[sha].provenance.selected_by == ["message", "issue_ref", "test_coedit"]


@pytest.mark.parametrize(("message", "expected"), [
    ("#415: Prevent double sudo", True),
    ("[#154] Handle comments between decorators", True),
    ("Correct the offset\n\nCloses #77", True),
    ("Make table_exists case insensitive, see https://github.com/o/r/issues/896", True),
    ("gh-1234: keep the order", True),
    ("Support aliases with equal sign (#808)", False),  # a squash merge's pull-request number
    ("Bump version to 1.2.3", False),
    ("Use C# style names", False),
])  # fmt: skip
def test_references_issue(message, expected):
    entry = LogEntry("0" * 40, ("1" * 40,), "", message.splitlines()[0], message)
    assert references_issue(entry) is expected


def _entry(subject: str, merge: bool = False) -> LogEntry:
    parents = ("1" * 40, "2" * 40) if merge else ("1" * 40,)
    return LogEntry("0" * 40, parents, "", subject, subject)


def test_a_tag_is_learnt_when_most_commits_carrying_it_say_fix():
    import re

    pattern = re.compile(DEFAULT_FIX_PATTERN, re.IGNORECASE)
    history = ([_entry(f"BUG: fix case {i}") for i in range(5)] + [_entry("BUG: correct the offset")]
               + [_entry(f"ENH: add option {i}") for i in range(6)] + [_entry("ENH: fix docs")]
               + [_entry(f"#{i}: fix thing") for i in range(3)] + [_entry(f"#{i}: add thing") for i in range(4)])  # fmt: skip
    conventions = learn_conventions(history, pattern)
    assert conventions.tags == {"bug:"}
    assert conventions.match(_entry("BUG: correct the offset"))
    assert not conventions.match(_entry("ENH: correct the offset"))
    # Too few commits carry a tag: nothing is learnt.
    assert learn_conventions([_entry(f"oops: fix {i}") for i in range(4)], pattern).tags == frozenset()


def test_convention_takes_a_tagged_fix_without_the_word(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS})
    for i in range(5):
        repo.commit(f"BUG: fix case {i}", {"words.py": WORDS + f"\nCASE = {i}\n"})
    sha = repo.commit("BUG: shout keeps None", {"words.py": WORDS.replace("return text.upper()",
                                                                          "return (text or '').upper()")})
    gold = _gold(repo, tmp_path / "c", select=(SelectionSignal.CONVENTION,))
    assert gold[sha].provenance.selected_by == [SelectionSignal.CONVENTION]


def test_cli_select_and_a_bad_signal(history, tmp_path):
    repo, taken = history
    out = tmp_path / "c"
    proc = run_cli("mine", repo.path, "--out", out, "--select", "message,issue_ref", "--controls-ratio", "0",
                   "--no-mirrors", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["by_signal"] == {"message": 1, "issue_ref": 1}
    assert {g.provenance.commit for g in read_corpus(out).gold} == {taken["issue"], taken["message"]}
    bad = run_cli("mine", repo.path, "--out", tmp_path / "d", "--select", "message,hunch")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "hunch" in bad.stderr and "test_coedit" in bad.stderr


@pytest.mark.parametrize(("subject", "expected"), [
    ("Add whisper", True),
    ("#209 add support of aliases to `no_command`", True),
    ("#N/A: Move `get_all_executables` to `utils`", True),
    ("#/N/A: Extend pyenv rule to include goenv", True),
    ("[core] Refactor the parser", True),
    ("cli: Support --quiet", True),
    # upkeep first words read on httpie, tqdm, cookiecutter and tornado (docs/MINING.md)
    ("Cleanup (#993)", True),
    ("Clean-up", True),
    ("linting", True),
    ("Replace compat.is_string in favor of future's basestring", True),
    ("Convert the docs to Markdown", True),
    ("Tidy up the CLI", True),
    # leading tags: a changelog's or a conventional commit's kind of change, not a module
    ("Added: Jinja2 Environment extension on files generation stage (#1419)", True),
    ("feat(cli): colour the output", True),
    ("chore(deps): bump black", True),
    ("tests: test_prompt Exception tests refactoring (#1380)", True),
    # a release, and an update of links, docs or dependencies (read on httpie)
    ("v2.3.0", True),
    ("0.3.0", True),
    ("Release 1.2 (#40)", True),
    ("Prepare the 4.3 release", True),
    ("Update links", True),
    ("Update the URLs", True),
    ("Updated requirements", True),
    ("Update default overridden aliases with user's", False),  # a known fix (thefuck)
    ("Update check for table existence to be case insensitive (#2086)", False),  # a known fix (luigi)
    ("Version the cache by its format", False),
    ("Release the lock when the handler fails", False),
    ("Changed: Generated projects can use multiple type hooks at same time", False),
    ("Fixed: Fail with gitolite repositories (#1144)", False),
    ("websocket: Fix set_nodelay", False),
    ("fix(parser): keep None", False),
    ("Handle runs of spaces", False),
    ("#402: Don't invoke bash for getting aliases", False),
    ("Addresses the crash on None", False),
    ("", False),
    # test_coedit's enhancements on jmespath and loguru; no known fix starts so
    ("Perf improvement for parsing subexprs", True),
    ("Adjust some of the raised exceptions", True),
    ("Enhance description of error messages during formatting", True),
    ("Speed up gen.coroutine when yielding done Futures", True),
    ("perf: drop the initial stack copy (#2670)", True),
    ("Improve get_future_imports implementation.", False),  # a known fix (black)
])  # fmt: skip
def test_announces_feature(subject, expected):
    assert announces_feature(subject) is expected


def test_a_feature_with_its_tests_is_no_coedit_candidate(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    change = _SPLIT_ANY_WHITESPACE
    repo.commit("Add splitting on any whitespace", change)
    with pytest.raises(NoMatchingCommits):
        _gold(repo, tmp_path / "c")
    # The same change under a repair's subject is taken.
    sha = repo.commit("Split on any whitespace", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    assert sha in _gold(repo, tmp_path / "d")


def test_a_feature_tag_vetoes_the_coedit_signal(git_repo, tmp_path):
    """A changelog-style ``Added:`` tag says what kind of change it is, where the first word
    after it ("Splitting") says nothing; a module's tag (``words:``) vetoes nothing."""
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    change = _SPLIT_ANY_WHITESPACE
    feature = repo.commit("Added: splitting on any whitespace", change)
    repair = repo.commit("words: split keeps runs of spaces apart", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    gold = _gold(repo, tmp_path / "c")
    assert feature not in gold
    assert gold[repair].provenance.selected_by == [SelectionSignal.TEST_COEDIT]


@pytest.mark.parametrize(("message", "expected"), [
    ("Fix typos in comments", True),
    ("fix pep8", True),
    ("Add git-lfs rule\n\n* add the rule\n* fix flake8\n* Fix more tests", True),
    ("Fix crash on empty input\n\n* fix tests", False),  # one fix of the code is enough
    ("Tests! Also fixed some bytes-string issues", False),  # the test word is another sentence's
    ("Update the changelog", False),  # no fix word at all
    # a fix word naming its issue repairs that issue, whatever words stand near it (sanic)
    ("Add serve_forever to the proxy, to match the example doc, fixes #1754 (#1762)", False),
    ("update docs, fix issue 12", False),
    ("docs: fix gh-40", False),
    ("fix docs (#12)", True),  # a squash merge's pull request number names no issue
    ("#710: Fix the failing unit tests", True),  # a sentence of nothing else, beyond the window
    ("fix", False),  # a bare "fix" says nothing of tests (scrapy)
    ("fix 739", False),
    # "formatting" is what formatters and loggers do: loguru, black, sqlparse fixes (loguru e49d153)
    ("Fix wrong formatting of microsecond timestamp (\"x\" token for time) (#1441)", False),
    ("Fix error while formatting exception within a \"celery\" task (#52)", False),
    ("Fix code formatting typo in documentation of type hints", True),  # its other words still veto
])  # fmt: skip
def test_upkeep_only(message, expected):
    import re

    assert upkeep_only(message, re.compile(DEFAULT_FIX_PATTERN, re.IGNORECASE)) is expected


def test_a_fix_of_upkeep_only_is_no_candidate(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    # "Fix formatting" is no upkeep word's veto any more; a change of layout alone is dropped.
    repo.commit("Fix formatting", {"words.py": WORDS.replace('text.split(" ")', "text.split( \" \")"),
                                   "tests/test_words.py": WORDS_TEST + "\n"})  # fmt: skip
    repo.commit("Fix typos in comments", {"words.py": WORDS.replace('text.split(" ")', "text.split( ' ')"),
                                          "tests/test_words.py": WORDS_TEST + "\n# tpyo\n"})  # fmt: skip
    sha = repo.commit("Fix split on runs of spaces", {"words.py": WORDS.replace('text.split(" ")', "text.split()")})
    assert set(_gold(repo, tmp_path / "c")) == {sha}


def test_a_fix_of_tests_that_rewrites_source_is_a_coedit_candidate(git_repo, tmp_path):
    """A known fix (scrapy), "PY3 fix test cmdline", rewrites source lines with its tests: the
    tests failed because the code was wrong. The message alone cannot tell, so the message
    signal stays vetoed; the co-edit takes it. Lint, typo and docs words still veto."""
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    change = _SPLIT_ANY_WHITESPACE
    sha = repo.commit("PY3 fix test words", change)
    repo.commit("fix lint in words", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    # A subject saying nothing but "fix tests" names no repair, whatever it edits.
    repo.commit("#710: Fix the failing unit tests", change)
    gold = _gold(repo, tmp_path / "c")
    assert set(gold) == {sha}
    assert gold[sha].provenance.selected_by == [SelectionSignal.TEST_COEDIT]
    # A fix of the tests alone rewrites no source line: no candidate.
    repo2 = git_repo()
    repo2.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    repo2.commit("Fix test words", {"tests/test_words.py": WORDS_TEST + "\n# flaky\n"})
    with pytest.raises(NoMatchingCommits):
        _gold(repo2, tmp_path / "d")


def test_a_release_is_no_fix_whatever_its_notes_say(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    repo.commit("v1.2.0\n\n* Fixed split on runs of spaces\n* Fixed shout", {
        "words.py": WORDS.replace('text.split(" ")', "text.split()"),
        "tests/test_words.py": WORDS_TEST + "\n# 1.2.0\n",
    })  # fmt: skip
    now = (repo.path / "words.py").read_text()
    fix = repo.commit("Fix shout on None", {"words.py": now.replace("return text.upper()", "return (text or '').upper()")})
    assert set(_gold(repo, tmp_path / "c")) == {fix}


def test_the_file_list_prefilter_keeps_a_co_edit_whose_test_file_moved(git_repo, tmp_path):
    """Mining diffs only commits whose log lists an existing source file and an existing test
    file modified (docs/MINING.md, "Cost"): a test file renamed with its edit still counts,
    a commit that only adds files never needs its patch."""
    repo = git_repo()
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": WORDS_TEST})
    repo.git("mv", "tests/test_words.py", "tests/test_split.py")
    moved = repo.commit("Split on any whitespace", {"words.py": WORDS.replace('text.split(" ")', "text.split()"),
                                                    "tests/test_split.py": WORDS_TEST + "\n# runs\n"})  # fmt: skip
    repo.commit("Keep the old splitting", {"extra.py": "X = 1\n", "tests/test_extra.py": "def test(): pass\n"})
    assert set(_gold(repo, tmp_path / "c")) == {moved}
