"""Bad input to ``mine``, ``show`` and ``schema``: one error line, the exit code, no traceback.

Every test runs the real ``main`` (error handling, exit codes) in-process and reads what a
user would: stderr, stdout and the exit status; one test does the same through ``python -m
reviewbench`` in a separate process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import run_cli

ERROR = "reviewbench: error: "

SOURCE_V1 = "def total(items):\n    return sum(items)\n"
SOURCE_V2 = "def total(items):\n    return sum(items or [])\n"
SOURCE_V3 = "def total(items):\n    return sum(items or ())\n"


def run(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None):
    """Run ``reviewbench ARGS`` through the real ``main``, in-process (``test_as_a_user``
    below checks the same through ``python -m reviewbench``)."""
    return run_cli(*args, cwd=cwd, env=env)


def test_as_a_user_in_a_separate_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "reviewbench", "mine", str(tmp_path), "--out", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("reviewbench: error: ") and proc.stdout == ""


def assert_fails(proc: subprocess.CompletedProcess, code: int, *fragments: str) -> str:
    """Exactly one error line (warnings aside), exit ``code``, no traceback; return the line."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if line.startswith(ERROR)]
    assert len(errors) == 1, proc.stderr
    others = [line for line in lines if not line.startswith((ERROR, "reviewbench: warning: "))]
    assert others == [], proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]


def no_leftovers(parent: Path) -> None:
    """Nothing half-written beside the output: no staging or trash directories."""
    assert [p.name for p in parent.iterdir() if p.name.endswith((".tmp", ".old"))] == []


@pytest.fixture
def fixed(git_repo):
    """A repository with two genuine fixes of a source file."""
    repo = git_repo("fixed")
    repo.commit("Initial import", {"calc.py": SOURCE_V1})
    repo.commit("Fix total of None", {"calc.py": SOURCE_V2})
    repo.commit("Fix total to use a tuple", {"calc.py": SOURCE_V3})
    return repo


@pytest.fixture
def corpus(fixed, tmp_path):
    """A mined corpus of ``fixed``: its two fix reversals, no controls, no mirrors (the
    tests below count its gold lines)."""
    out = tmp_path / "corpus"
    proc = run("mine", fixed.path, "--out", out, "--controls-ratio", "0", "--no-mirrors")
    assert proc.returncode == 0, proc.stderr
    return out


# -- mine: the repository ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["plain directory", "missing path", "file"])
def test_mine_rejects_what_is_not_a_git_repository(tmp_path, kind):
    target = tmp_path / "target"
    if kind == "plain directory":
        target.mkdir()
        (target / "a.py").write_text("x = 1\n")
    elif kind == "file":
        target.write_text("x = 1\n")
    # Keep git from finding a repository above tmp_path.
    proc = run("mine", target, "--out", tmp_path / "out",
               env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})  # fmt: skip
    line = assert_fails(proc, 1, str(target))
    assert {"plain directory": "not a git repository", "missing path": "does not exist",
            "file": "not a directory"}[kind] in line  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_mine_rejects_an_empty_repository(git_repo, tmp_path):
    repo = git_repo("empty")
    assert_fails(run("mine", repo.path, "--out", tmp_path / "out"), 1, "no commits")
    assert not (tmp_path / "out").exists()


def test_shallow_clone_warns_and_counts_the_boundary_commit_as_no_parent(git_repo, tmp_path):
    repo = git_repo("deep")
    repo.commit("Initial import", {"calc.py": SOURCE_V1})
    repo.commit("Fix total of None", {"calc.py": SOURCE_V2})
    boundary = repo.commit("Fix total again", {"calc.py": SOURCE_V3})
    newest = repo.commit("Fix the empty case", {"calc.py": SOURCE_V3.replace("()", "[]")})
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(clone)],
                   check=True, capture_output=True)  # fmt: skip
    out = tmp_path / "out"
    proc = run("mine", clone, "--out", out, "--json", "--controls-ratio", "0", "--no-mirrors")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "shallow clone" in proc.stderr and "truncated" in " ".join(proc.stderr.split())
    summary = json.loads(proc.stdout)
    assert summary["cases"] == 1
    assert summary["matched_commits"] == 2
    assert summary["dropped"]["no_parent"] == 1
    gold = [json.loads(line) for line in (out / "gold.jsonl").read_text().splitlines()]
    assert [g["provenance"]["commit"] for g in gold] == [newest]
    assert boundary not in (out / "cases.jsonl").read_text()
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["repo"]["shallow"] is True


def test_shallow_clone_warning_is_one_line(git_repo, tmp_path):
    repo = git_repo("deep")
    repo.commit("Initial import", {"calc.py": SOURCE_V1})
    repo.commit("Fix total of None", {"calc.py": SOURCE_V2})
    repo.commit("Fix total again", {"calc.py": SOURCE_V3})
    clone = tmp_path / "a-rather-long-directory-name-for-a-shallow-clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(clone)],
                   check=True, capture_output=True)  # fmt: skip
    proc = run("mine", clone, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    [warning] = proc.stderr.splitlines()
    assert warning.startswith("reviewbench: warning: ") and warning.rstrip().endswith("missed")


def test_a_matching_root_commit_is_counted_as_no_parent(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Fix everything at once", {"calc.py": SOURCE_V1})
    repo.commit("Fix total of None", {"calc.py": SOURCE_V2})
    proc = run("mine", repo.path, "--out", tmp_path / "out", "--json", "--controls-ratio", "0", "--no-mirrors")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["cases"] == 1 and summary["dropped"]["no_parent"] == 1


def test_a_missing_object_is_reported_with_gits_reason(fixed, tmp_path):
    # Regression: the error said only "git diff-tree stopped before diffing every commit".
    blob = fixed.git("rev-parse", "HEAD~2:calc.py")
    (fixed.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    out = tmp_path / "out"
    assert_fails(run("mine", fixed.path, "--out", out), 1, str(fixed.path), blob)
    assert not out.exists()
    no_leftovers(tmp_path)


# -- mine: nothing to mine ----------------------------------------------------------------


def test_no_matching_commits(fixed, tmp_path):
    out = tmp_path / "out"
    line = assert_fails(run("mine", fixed.path, "--out", out, "--grep", "nothing-like-this"), 1,
                        "nothing-like-this", "3 commits scanned")  # fmt: skip
    assert "no commit" in line
    assert not out.exists()
    no_leftovers(tmp_path)


def test_commits_match_but_none_makes_a_case(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"calc.py": SOURCE_V1, "README.md": "# calc\n"})
    repo.commit("Fix the project title", {"README.md": "# Calc\n"})
    repo.commit("Fix expectations only", {"tests/test_calc.py": "def test():\n    pass\n"})
    out = tmp_path / "out"
    line = assert_fails(run("mine", repo.path, "--out", out), 1, "2 commits matched")
    assert "no_source_change 2" in line
    assert not out.exists()
    no_leftovers(tmp_path)


def test_no_matching_commits_in_the_date_range(fixed, tmp_path):
    assert_fails(run("mine", fixed.path, "--out", tmp_path / "out", "--since", "2030-01-01"),
                 1, "no commit", "0 commits scanned")  # fmt: skip


# -- mine: the output directory -----------------------------------------------------------


def test_existing_non_empty_out_is_refused(fixed, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    assert_fails(run("mine", fixed.path, "--out", out), 1, "not empty", "--force")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    no_leftovers(tmp_path)


def test_existing_empty_out_is_fine(fixed, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    proc = run("mine", fixed.path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert (out / "corpus.json").is_file()
    no_leftovers(tmp_path)


def test_out_inside_the_repository_is_fine(fixed):
    # The documented "reviewbench mine . --out corpus": staging happens inside the work tree.
    proc = run("mine", ".", "--out", "corpus", cwd=fixed.path)
    assert proc.returncode == 0, proc.stderr
    assert (fixed.path / "corpus" / "corpus.json").is_file()
    no_leftovers(fixed.path)


def test_out_that_is_a_file_is_refused(fixed, tmp_path):
    out = tmp_path / "out"
    out.write_text("keep me\n")
    assert_fails(run("mine", fixed.path, "--out", out), 1, "not a directory")
    assert out.read_text() == "keep me\n"


def test_out_below_a_file_is_refused(fixed, tmp_path):
    # Regression: reported as "internal error: FileExistsError".
    (tmp_path / "afile").write_text("keep me\n")
    assert_fails(run("mine", fixed.path, "--out", tmp_path / "afile" / "out"), 2,
                 "cannot create a corpus", "File exists")  # fmt: skip
    assert (tmp_path / "afile").read_text() == "keep me\n"


def test_force_replaces_an_existing_corpus(fixed, corpus, tmp_path):
    old_ids = (corpus / "cases.jsonl").read_text()
    (corpus / "stale.txt").write_text("from an older run\n")
    proc = run("mine", fixed.path, "--out", corpus, "--force", "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    assert not (corpus / "stale.txt").exists()
    assert (corpus / "cases.jsonl").read_text() != old_ids
    assert json.loads((corpus / "corpus.json").read_text())["config"]["seed"] == 7
    no_leftovers(tmp_path)


def test_force_keeps_the_old_corpus_when_mining_fails(fixed, corpus, tmp_path):
    before = {p.name: p.read_bytes() for p in corpus.iterdir() if p.is_file()}
    assert_fails(run("mine", fixed.path, "--out", corpus, "--force", "--grep", "zzz"), 1)
    assert {p.name: p.read_bytes() for p in corpus.iterdir() if p.is_file()} == before
    no_leftovers(tmp_path)


def test_force_refuses_to_replace_a_directory_that_is_not_a_corpus(fixed, tmp_path):
    # Regression: --force replaced any non-empty directory, e.g. a home or a source tree.
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work\n")
    assert_fails(run("mine", fixed.path, "--out", out, "--force"), 1, "holds no corpus.json")
    assert (out / "thesis.tex").read_text() == "years of work\n"
    no_leftovers(tmp_path)


@pytest.mark.parametrize("where", ["repository", "parent of the repository"])
def test_out_must_not_replace_the_repository_being_mined(fixed, tmp_path, where):
    # Regression: ``mine . --out . --force`` moved the repository aside and deleted it.
    out = fixed.path if where == "repository" else fixed.path.parent
    head = fixed.git("rev-parse", "HEAD")
    assert_fails(run("mine", fixed.path, "--out", out, "--force"), 2, "repository")
    assert fixed.git("rev-parse", "HEAD") == head
    assert (fixed.path / "calc.py").read_text() == SOURCE_V3


def test_out_dot_in_an_empty_working_directory(fixed, tmp_path):
    # Regression: "--out ." has no name and no parent to rename within (OSError, and a
    # stray ".old" directory left behind).
    work = tmp_path / "work"
    work.mkdir()
    proc = run("mine", fixed.path, "--out", ".", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert (work / "corpus.json").is_file()
    no_leftovers(work)
    no_leftovers(tmp_path)


# -- mine: option values ------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["(", "fix[", "*oops"])
def test_invalid_grep_regex(fixed, tmp_path, pattern):
    assert_fails(run("mine", fixed.path, "--out", tmp_path / "out", "--grep", pattern), 2,
                 "--grep", repr(pattern))  # fmt: skip
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", "2024-02-30", ""])
def test_bad_date(fixed, tmp_path, option, value):
    assert_fails(run("mine", fixed.path, "--out", tmp_path / "out", option, value), 2, option)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [
    ["mine"],
    ["mine", "."],
    ["mine", ".", "--out", "x", "--max-lines", "0"],
    ["mine", ".", "--out", "x", "--limit", "many"],
    ["mine", ".", "--out", "x", "--no-such-option"],
    ["frobnicate"],
])  # fmt: skip
def test_usage_errors(tmp_path, args):
    assert_fails(run(*args, cwd=tmp_path), 2, "see --help")
    assert not (tmp_path / "x").exists()


# -- show -----------------------------------------------------------------------------------


def test_show_a_missing_directory(tmp_path):
    assert_fails(run("show", tmp_path / "nope"), 1, str(tmp_path / "nope"), "not a corpus")


def test_show_a_directory_without_corpus_json(tmp_path):
    (tmp_path / "dir").mkdir()
    assert_fails(run("show", tmp_path / "dir"), 1, "corpus.json", "reviewbench mine")


def test_show_names_the_file_and_line_of_a_corrupt_gold_line(corpus):
    gold = corpus / "gold.jsonl"
    lines = gold.read_text().splitlines(keepends=True)
    assert len(lines) == 2
    gold.write_text(lines[0] + '{"case_id": "case-x", oops\n')
    line = assert_fails(run("show", corpus), 1, f"{gold}:2:")
    assert "GoldRecord" in line


def test_show_names_the_field_of_an_invalid_gold_record(corpus):
    gold = corpus / "gold.jsonl"
    lines = gold.read_text().splitlines(keepends=True)
    gold.write_text(lines[0] + lines[1].replace('"fix_reversal"', '"Guess work"', 1))  # strata are open, but named like ids
    assert_fails(run("show", corpus), 1, f"{gold}:2:", "stratum")


def test_show_a_gold_line_that_is_not_utf8(corpus):
    gold = corpus / "gold.jsonl"
    gold.write_bytes(gold.read_bytes() + b"\xff\xfe\n")
    assert_fails(run("show", corpus), 1, f"{gold}:3:")


def test_show_a_corrupt_corpus_json(corpus):
    (corpus / "corpus.json").write_text("{")
    assert_fails(run("show", corpus), 1, str(corpus / "corpus.json"))


def test_show_a_missing_cases_file(corpus):
    (corpus / "cases.jsonl").unlink()
    assert_fails(run("show", corpus), 1, str(corpus / "cases.jsonl"), "missing")


def test_show_reads_a_sound_corpus(corpus):
    proc = run("show", corpus, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cases"] == 2


# -- schema ---------------------------------------------------------------------------------


def test_schema_of_an_unknown_file():
    assert_fails(run("schema", "nonsense"), 2, "nonsense", "cases")


def test_schema_without_a_name():
    # Regression: click lists the choices on lines of their own; stderr had four lines.
    assert_fails(run("schema"), 2, "Missing argument")
