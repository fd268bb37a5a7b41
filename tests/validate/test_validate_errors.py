"""Bad input to ``reviewbench validate``: one line on stderr, a non-zero exit."""

from __future__ import annotations

import subprocess

from reviewbench import MineConfig, mine_corpus

from ..conftest import run_cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("validate", *args)


def _one_line(proc, code: int, *needles: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reviewbench: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]


def _corpus(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"pkg/a.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), out)
    return repo, out


def test_missing_corpus(tmp_path):
    _one_line(run(str(tmp_path / "nope")), 1, "not a corpus directory")


def test_corrupt_gold_line_is_named(git_repo, tmp_path):
    _, corpus = _corpus(git_repo, tmp_path)
    gold = corpus / "gold.jsonl"
    gold.write_text(gold.read_text() + '{"case_id": 3}\n')
    _one_line(run(str(corpus)), 1, "gold.jsonl:2")


def test_test_command_not_found(git_repo, tmp_path):
    _, corpus = _corpus(git_repo, tmp_path)
    _one_line(run(str(corpus), "--test-cmd", "surely-not-installed-runner"), 2,
              "test command not found: surely-not-installed-runner")  # fmt: skip


def test_no_detectable_test_command(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"a.go": "package a\n"})
    repo.commit("fix a", {"a.go": "package a\n\nvar X = 1\n"})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    _one_line(run(str(corpus)), 2, "--test-cmd")


def test_a_misspelt_reviewbench_toml_key_says_what_it_means(git_repo, tmp_path):
    # Regression (issue 27): "invalid validation setting tmeout: Extra inputs are not permitted".
    repo, corpus = _corpus(git_repo, tmp_path)
    (repo.path / "reviewbench.toml").write_text("[validate]\ntmeout = 30\n")
    _one_line(run(str(corpus)), 2, "[validate]: unknown key 'tmeout' — did you mean 'timeout'?")


def test_malformed_reviewbench_toml(git_repo, tmp_path):
    repo, corpus = _corpus(git_repo, tmp_path)
    (repo.path / "reviewbench.toml").write_text("[validate\n")
    _one_line(run(str(corpus)), 2, "reviewbench.toml is not valid TOML")


def test_bad_setting_in_reviewbench_toml(git_repo, tmp_path):
    repo, corpus = _corpus(git_repo, tmp_path)
    (repo.path / "reviewbench.toml").write_text("[validate]\nreruns = 0\n")
    _one_line(run(str(corpus)), 2, "reruns")


def test_repository_gone(git_repo, tmp_path):
    repo, corpus = _corpus(git_repo, tmp_path)
    import shutil

    shutil.rmtree(repo.path)
    _one_line(run(str(corpus)), 1, "does not exist")
