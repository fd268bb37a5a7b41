"""Controls are mandatory (issue 13, item 4): plain ``mine`` pairs fix reversals with controls.

A fix reversal applies to its fix commit, so its controls are refactors of the same files
at the same commit: a reviewer cannot tell a defect case from a control by its base or its
files, and validation runs both on the same tree.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.controls import CONTROL_KINDS
from reviewbench.validate import validate_corpus

from ..conftest import run_cli
from .conftest import SHAPES, TEXT, apply_in_clone, validate_config

#: (file, the broken text, the commit subjects): each is broken, then fixed.
BREAKS = [
    ("pkg/shapes.py", SHAPES.replace("value > high:", "value > high + 1:"), "clamp upper bound"),
    ("pkg/text.py", TEXT.replace("    if not lines:\n        return \"\"\n", ""), "first_line on empty text"),
    ("pkg/shapes.py", SHAPES.replace("        if v is None:\n            continue\n", ""), "total of None"),
    ("pkg/text.py", TEXT.replace("number = len(words)", "number = len(words) + 1"), "count_words count"),
]


@pytest.fixture
def fixes(project):
    """The project with four genuine fixes in its history; every fix commit's suite passes."""
    commits = []
    for path, broken, what in BREAKS:
        original = (project.path / path).read_text()
        project.commit(f"Rework {what}", {path: broken})
        commits.append(project.commit(f"Fix {what}", {path: original}))
    project.commit("Add notes", {"NOTES.md": "notes\n"})  # HEAD is no fix commit
    return project, commits


def _mine(repo, out: Path, **values) -> Path:
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, **values), out, warn=lambda _m: None)
    return out


def test_plain_mine_makes_one_control_per_two_fix_reversals(fixes, tmp_path):
    repo, _ = fixes
    out = _mine(repo, tmp_path / "corpus")
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 4, "mutation": 0, "control": 2}
    assert meta["config"]["controls_ratio"] is None  # the default, recorded as asked


def test_controls_ratio_zero_opts_out(fixes, tmp_path):
    repo, _ = fixes
    out = _mine(repo, tmp_path / "corpus", controls_ratio=0)
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 4}


def test_controls_pair_with_fix_reversals_same_commit_same_files(fixes, tmp_path):
    repo, commits = fixes
    out = _mine(repo, tmp_path / "corpus", controls_ratio=1.0)
    corpus = read_corpus(out)
    strata = {g.case_id: g for g in corpus.gold}
    fix_cases = {c.base: c for c in corpus.cases if strata[c.case_id].stratum == "fix_reversal"}
    controls = [c for c in corpus.cases if strata[c.case_id].stratum == "control"]
    assert sorted(fix_cases) == sorted(commits) and len(controls) == 4
    # One control per fix commit, on that fix's own file.
    assert sorted(c.base for c in controls) == sorted(commits)
    for number, case in enumerate(controls):
        gold = strata[case.case_id]
        assert gold.expect_finding is False and gold.defects == [] and set(gold.provenance.operator.split("+")) <= set(CONTROL_KINDS)
        assert case.paths == fix_cases[case.base].paths
        # The patch applies to the fix commit and starts from the file as the fix left it.
        clone = apply_in_clone(repo.path, case.base, out / case.patch, tmp_path / f"clone{number}")
        (path,) = case.paths
        before = repo.show(case.base, path).decode()
        after = (clone / path).read_text()
        assert before != after
        compile(after, path, "exec")


def test_fix_controls_keep_the_tests_green_and_fixes_are_observed(fixes, tmp_path):
    repo, _ = fixes
    out = _mine(repo, tmp_path / "corpus")
    validate_corpus(out, validate_config())
    corpus = read_corpus(out)
    statuses = {(g.stratum, g.validation.status.value) for g in corpus.gold}
    assert statuses == {("fix_reversal", "observed"), ("control", "not_observed")}


def test_fix_reversals_and_mutations_share_the_two_to_one_ratio(fixes, tmp_path):
    repo, commits = fixes
    out = _mine(repo, tmp_path / "corpus", mutations=4)
    corpus = read_corpus(out)
    head = repo.git("rev-parse", "HEAD")
    by_stratum = json.loads((out / "corpus.json").read_text())["counts"]["by_stratum"]
    assert by_stratum == {"fix_reversal": 4, "mutation": 4, "control": 4}
    strata = {g.case_id: g.stratum for g in corpus.gold}
    bases = sorted(c.base for c in corpus.cases if strata[c.case_id] == "control")
    # Half for the fix reversals, at their commits; half for the mutations, at HEAD.
    assert len([b for b in bases if b in commits]) == 2 and bases.count(head) == 2


def test_same_seed_same_controls(fixes, tmp_path):
    repo, _ = fixes

    def files(out: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted((out / "patches").iterdir())}

    one = files(_mine(repo, tmp_path / "one", seed=5))
    two = files(_mine(repo, tmp_path / "two", seed=5))
    assert one == two and len(one) == 6


def test_fix_in_a_file_without_refactor_sites_falls_back_to_head(git_repo, tmp_path):
    repo = git_repo("mixed")
    repo.commit("Initial import", {"app.js": "function f(x) { return x + 1; }\n", "pkg/util.py": SHAPES})
    repo.commit("Break f", {"app.js": "function f(x) { return x + 2; }\n"})
    repo.commit("Fix f", {"app.js": "function f(x) { return x + 1; }\n"})
    warnings: list[str] = []
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), out, warn=warnings.append)
    corpus = read_corpus(out)
    (control,) = [c for c, g in zip(corpus.cases, corpus.gold, strict=True) if g.stratum == "control"]
    assert control.paths == ["pkg/util.py"] and control.base == repo.git("rev-parse", "HEAD")
    assert warnings == []


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def test_cli_mine_and_show_count_the_controls(fixes, tmp_path):
    repo, _ = fixes
    proc = _cli("mine", str(repo.path), "--out", "corpus", "--no-mirrors", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["by_stratum"]["control"] == 2
    assert summary["made_at_head"]["controls"] == 2 and summary["made_at_head"]["controls_paired_with_fixes"] == 2
    shown = json.loads(_cli("show", "corpus", "--json", cwd=tmp_path).stdout)
    assert shown["controls"] == {"mined": 2, "paired_with_fix_reversals": 2, "validated": 0, "valid": 0}
    table = _cli("show", "corpus", cwd=tmp_path)
    assert "controls: 2 (2 at fix commits); 0 of 0 validated keep the tests green" in " ".join(table.stdout.split())

    off = _cli("mine", str(repo.path), "--out", "plain", "--controls-ratio", "0", "--no-mirrors", "--json",
               cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout)["by_stratum"] == {"fix_reversal": 4}
    assert "controls:" not in _cli("show", "plain", cwd=tmp_path).stdout  # no controls line (only its basis note)

    help_text = " ".join(_cli("mine", "--help", cwd=tmp_path).stdout.split())
    assert "--controls-ratio 0 makes none" in help_text
