"""The CLI's happy paths: mine, show and their JSON output, through the real ``main`` in-process."""

from __future__ import annotations

import json
import subprocess

import pytest

from ..conftest import run_cli


def run(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def _repo_with_fix(git_repo):
    repo = git_repo()
    repo.commit("init", {"app/core.py": "def f(x):\n    return x + 1\n", "docs/a.md": "a\n"})
    fix = repo.commit("Fix f for zero", {"app/core.py": "def f(x):\n    if not x:\n        return 0\n    return x + 1\n"})
    repo.commit("fix the intro page", {"docs/a.md": "b\n"})  # no source change: dropped
    return repo, fix


def test_version_and_help():
    assert run("--version").stdout.startswith("reviewbench, version ")
    out = run("--help").stdout
    assert "Examples:" in out and "mine" in out
    assert "--max-lines" in run("mine", "--help").stdout


@pytest.mark.parametrize("group", [(), ("label",), ("tasks",), ("case",), ("judge", "--help")])
def test_a_bare_group_prints_its_help_and_exits_0(cli, group):
    # Regression (issue 27): the whole help on one line, prefixed "reviewbench: error:", exit 2.
    result = cli(*group)
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: reviewbench") and "Commands:" in result.stdout
    assert "error" not in result.stdout.splitlines()[0]


def test_commands_are_listed_in_workflow_order_with_whole_summaries(cli):
    out = cli("--help").stdout
    listed = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    stages = ["mine", "validate", "register", "run", "score", "report", "label"]
    assert [n for n in names if n in stages] == stages
    assert "..." not in listed  # click cut summaries at 45 characters
    assert set(names) == set(__import__("reviewbench.cli", fromlist=["cli"]).cli.commands)


def test_schema_help_breaks_no_word():
    out = run("schema", "--help").stdout
    # Regression: the choices were the metavar, wrapped mid-name ("exclus / ions").
    assert "Usage: reviewbench schema [OPTIONS] NAME\n" in out and "exclusions" in " ".join(out.split())


def test_mine_json_summary_and_show(git_repo, tmp_path):
    repo, fix = _repo_with_fix(git_repo)
    out = tmp_path / "corpus"
    proc = run("mine", str(repo.path), "--out", str(out), "--json", "--controls-ratio", "0")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    # Mined by default: the one fix reversal and its mirror (a mirror per fix reversal).
    assert summary["cases"] == 2
    assert summary["by_stratum"] == {"fix_reversal": 1, "mirror": 1}
    assert summary["mirrors"] == {"made": 1, "fix_reversals_without": 0}
    assert summary["matched_commits"] == 2
    assert summary["scanned_commits"] == 3
    assert summary["dropped"]["no_source_change"] == 1
    assert sum(summary["dropped"].values()) == 1

    shown = run("show", str(out), "--json", "--cases")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    # The fix reversal and its mirror, as mined by default.
    assert report["cases"] == 2
    assert report["by_stratum"] == {"fix_reversal": 1, "mirror": 1}
    assert report["by_validation"] == {"unvalidated": 2}
    assert report["mirrors"]["mined"] == 1 and report["mirrors"]["paired_with_defect_cases"] == 1
    rows = {r["stratum"]: r for r in report["case_rows"]}
    assert sorted(rows) == ["fix_reversal", "mirror"]
    row = rows["fix_reversal"]
    assert row["paths"] == ["app/core.py"] and row["language"] == "python"
    assert rows["mirror"]["paths"] == row["paths"] and rows["mirror"]["case_id"] != row["case_id"]

    table = run("show", str(out), "--cases")
    assert table.returncode == 0
    assert row["case_id"] in table.stdout and "1/2" in table.stdout  # drop share num/den
    assert rows["mirror"]["case_id"] in table.stdout


def test_mine_table_shows_numerators_and_denominators(git_repo, tmp_path):
    repo, _ = _repo_with_fix(git_repo)
    proc = run("mine", str(repo.path), "--out", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert "1/2" in proc.stdout  # one case out of two matching commits
    assert "no_source_change" in proc.stdout


def test_force_replaces_an_existing_corpus(git_repo, tmp_path):
    repo, _ = _repo_with_fix(git_repo)
    out = tmp_path / "c"
    assert run("mine", str(repo.path), "--out", str(out)).returncode == 0
    (out / "stale.txt").write_text("old")
    assert run("mine", str(repo.path), "--out", str(out), "--force").returncode == 0
    assert not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "repo1"]  # no staging left
