"""The fix's own tests never reach a reviewer: a fix reversal's base is the fix commit, whose
tree holds the test the fix added (it names what the change under review breaks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.review.experiment import load_experiment
from reviewbench.review.packet import TREE_NOTE, PacketBuilder
from reviewbench.review.runner import run_experiment
from reviewbench.store.runs import RunStore

BUGGY = "def is_weekend(day):\n    return day == 6\n"
FIXED = "def is_weekend(day):\n    return day in (5, 6)\n"
OLD_TESTS = "from app.dates import is_weekend\n\n\ndef test_sunday_is_weekend():\n    assert is_weekend(6)\n"
NEW_TESTS = OLD_TESTS + "\n\ndef test_saturday_is_weekend():\n    assert is_weekend(5)\n"


@pytest.fixture
def mined(git_repo, tmp_path) -> tuple[Path, Path, str]:
    repo = git_repo()
    repo.commit("init", {"app/__init__.py": "", "app/dates.py": BUGGY, "tests/test_dates.py": OLD_TESTS,
                         "tests/test_other.py": "def test_x():\n    pass\n"})  # fmt: skip
    parent = repo.git("rev-parse", "HEAD")
    repo.commit("fix: Saturday is a weekend day too", {"app/dates.py": FIXED, "tests/test_dates.py": NEW_TESTS,
                                                   "tests/test_new.py": "def test_saturday_again():\n    pass\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "corpus")
    return tmp_path / "corpus", repo.path, parent


def _by_stratum(corpus):
    gold = {g.case_id: g for g in corpus.gold}
    return {gold[c.case_id].stratum: c for c in corpus.cases}


def _grep(tree: Path, word: str) -> list[str]:
    return [str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and word in p.read_text()]


def test_the_review_tree_holds_the_parents_tests_not_the_fixs(mined):
    corpus_path, repo, parent = mined
    corpus = read_corpus(corpus_path)
    cases = _by_stratum(corpus)
    builder = PacketBuilder(corpus.path, repo, corpus.gold)
    try:
        for stratum in ("fix_reversal", "mirror"):  # the defect case and the same change the other way
            tree = builder.tree(cases[stratum])
            assert _grep(tree, "test_saturday") == [], stratum
            assert (tree / "tests" / "test_dates.py").read_text() == OLD_TESTS  # as in the fix's parent
            assert not (tree / "tests" / "test_new.py").exists()  # the fix added it: gone
            assert (tree / "tests" / "test_other.py").exists()  # tests the fix did not touch stay
            assert (tree / "REVIEW.md").read_text() == TREE_NOTE
        assert (builder.tree(cases["fix_reversal"]) / "app" / "dates.py").read_text() == BUGGY  # the change
        assert (builder.tree(cases["mirror"]) / "app" / "dates.py").read_text() == FIXED
        packet = builder.packet(cases["fix_reversal"], "Review.", None, "tree")
        assert packet.tree_note == TREE_NOTE and "test_saturday" not in packet.model_dump_json()
        assert builder.packet(cases["fix_reversal"], "Review.", None, "diff").tree_note is None
    finally:
        builder.close()


def test_the_note_names_no_test_and_reads_the_same_for_every_case():
    """A note that differed by case (or named the held-back tests) would itself give the
    stratum away."""
    assert "saturday" not in TREE_NOTE.lower() and "test_" not in TREE_NOTE


def test_a_tree_context_reviewer_that_greps_for_the_failing_test_finds_none(mined, tmp_path):
    corpus_path, _, _ = mined
    command = json.dumps('grep -rq test_saturday_is_weekend . && echo "app/dates.py:2 high test_saturday_is_weekend '
                         'fails" || echo NO_ISSUES')  # fmt: skip
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f'corpus = "{corpus_path}"\nrepeats = 1\n[[condition]]\nname = "grep"\n'
                          f'reviewer = {{ kind = "command", command = {command} }}\ncontext = "tree"\n')  # fmt: skip
    run_experiment(load_experiment(experiment), tmp_path / "runs")
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        states = [r.state for r in store.runs()]
    finally:
        store.close()
    assert states and all(s == "completed_no_findings" for s in states), states


def test_a_repositorys_own_review_md_is_kept_and_the_note_goes_beside_it(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n", "REVIEW.md": "Our own review rules.\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    return x or 0\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), tmp_path / "corpus")
    corpus = read_corpus(tmp_path / "corpus")
    builder = PacketBuilder(corpus.path, repo.path, corpus.gold)
    try:
        tree = builder.tree(corpus.cases[0])
        assert (tree / "REVIEW.md").read_text() == "Our own review rules.\n"
        assert (tree / ".reviewbench" / "REVIEW.md").read_text() == TREE_NOTE
    finally:
        builder.close()


def test_a_command_reviewer_gets_the_note_with_a_tree_only(mined):
    from reviewbench.reviewers.proc import packet_json

    corpus_path, repo, _ = mined
    corpus = read_corpus(corpus_path)
    builder = PacketBuilder(corpus.path, repo, corpus.gold)
    try:
        case = corpus.cases[0]
        assert packet_json(builder.packet(case, "Review.", None, "tree"))["tree_note"] == TREE_NOTE
        assert "tree_note" not in packet_json(builder.packet(case, "Review.", None, "files"))
    finally:
        builder.close()
