"""Context files for chat solvers: oracle, BM25 over the base tree, none."""

from __future__ import annotations

import os
import subprocess

import pytest

from reviewbench.errors import GitError
from reviewbench.tasks.context import context_files, rank_bm25, tokens

from .test_run_support import BASE_FILES, make_project


@pytest.fixture
def project(git_repo, tmp_path):
    return make_project(git_repo, tmp_path)


def _task(project, **changes):
    from reviewbench.tasks.store import read_tasks

    task = read_tasks(project.tasks).tasks[0]
    return task.model_copy(update=changes)


def test_tokens_split_identifiers():
    assert tokens("parseDate HTTPServer max_len x") == [
        "parsedate", "parse", "date", "httpserver", "http", "server", "max_len", "max", "len"]  # fmt: skip


def test_none_gives_nothing(project):
    assert context_files(project.repo, _task(project), "none") == {}


def test_oracle_gives_the_gold_files_at_base_and_skips_files_the_fix_creates(project):
    task = _task(project, gold_files=["calc.py", "created_by_fix.py"])
    assert context_files(project.repo, task, "oracle") == {"calc.py": BASE_FILES["calc.py"]}


def test_bm25_ranks_the_file_the_statement_is_about_first(project):
    files = context_files(project.repo, _task(project), "bm25", top_k=2)
    assert list(files)[0] == "calc.py" and len(files) == 2
    dates = context_files(project.repo, _task(project, problem_statement="parse_date splits on the wrong separator"),
                          "bm25", top_k=1)  # fmt: skip
    assert list(dates) == ["dates.py"]


def test_bm25_is_deterministic_on_ties_and_whole_files_fit_the_budget():
    docs = {"b.py": "alpha", "a.py": "alpha", "c.py": "beta " * 50}
    assert rank_bm25("gamma", docs, 3) == ["a.py", "b.py", "c.py"]
    assert rank_bm25("beta", docs, 1) == ["c.py"]


def test_budget_keeps_whole_files_only(project):
    files = context_files(project.repo, _task(project), "bm25", top_k=5, max_chars=len(BASE_FILES["calc.py"]) + 5)
    assert files["calc.py"] == BASE_FILES["calc.py"]
    assert sum(len(v) for v in files.values()) <= len(BASE_FILES["calc.py"]) + 5


def test_binary_files_are_never_shown(project):
    (project.repo / "clamp.bin").write_bytes(b"clamp clamp upper bound\0\x01\x02")
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
    for args in (["add", "clamp.bin"], ["commit", "-qm", "binary"]):
        subprocess.run(["git", "-C", str(project.repo), *args], check=True, env={**os.environ, **env})
    head = subprocess.run(["git", "-C", str(project.repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    files = context_files(project.repo, _task(project, base_commit=head), "bm25", top_k=100)
    assert "calc.py" in files and "clamp.bin" not in files


def test_missing_base_commit_is_a_git_error(project):
    with pytest.raises(GitError):
        context_files(project.repo, _task(project, base_commit="0" * 40), "bm25")
