"""Mirrors (issue 24, item 1): every fix reversal and mutation gets its clean twin, the same
change the other way, paired with it in gold; validation proves it clean."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.records import Location
from reviewbench.validate import validate_corpus

from ..conftest import run_cli
from .conftest import apply_in_clone, validate_config

#: Two hunks apart: line 4 (in clamp) and the body of scale (lines 17-18 buggy, 17-20 fixed).
FIXED = """\
def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def double(x):
    return x * 2


def triple(x):
    return x * 3


def scale(x, factor):
    if factor is None:
        return x
    return x * factor
"""
BUGGY = FIXED.replace("value > high:", "value > high + 1:").replace(
    "    if factor is None:\n        return x\n    return x * factor\n", "    return x + factor\n"
)
TESTS = """\
from pkg.calc import clamp, double, scale, triple


def test_clamp():
    assert clamp(11, 0, 10) == 10


def test_scale():
    assert scale(2, 3) == 6
    assert scale(2, None) == 2


def test_others():
    assert double(2) == 4 and triple(2) == 6
"""
PYPROJECT = "[tool.pytest.ini_options]\naddopts = '-q -p no:randomly'\n"


@pytest.fixture
def fixed(git_repo):
    """A project whose one fix commit changes two places of pkg/calc.py and adds its tests."""
    repo = git_repo("calc")
    repo.commit("Initial layout", {"pkg/__init__.py": "", "pkg/calc.py": BUGGY, "pyproject.toml": PYPROJECT,
                                   "tests/__init__.py": "", "tests/test_other.py": "def test_ok():\n    pass\n"})
    fix = repo.commit("Fix clamp bound and scale", {"pkg/calc.py": FIXED, "tests/test_calc.py": TESTS})
    return repo, fix


def _mine(repo, out: Path, **values) -> Path:
    values.setdefault("controls_ratio", 0)
    mine_corpus(MineConfig(repo=repo.path, **values), out, warn=lambda _m: None)
    return out


def _by_stratum(out: Path):
    corpus = read_corpus(out)
    gold = {g.case_id: g for g in corpus.gold}
    cases: dict[str, list] = {}
    for case in corpus.cases:
        cases.setdefault(gold[case.case_id].stratum, []).append((case, gold[case.case_id]))
    return cases


def test_a_fix_reversals_mirror_is_the_fix_itself(fixed, tmp_path):
    repo, fix = fixed
    out = _mine(repo, tmp_path / "corpus")
    strata = _by_stratum(out)
    ((defect, defect_gold),) = strata["fix_reversal"]
    ((mirror, gold),) = strata["mirror"]
    # Its base is the defect case's patched tree; its patch brings the fix commit's file back.
    assert mirror.base == defect.base == fix
    assert (out / mirror.base_patch).read_bytes() == (out / defect.patch).read_bytes()
    clone = apply_in_clone(repo.path, mirror.base, out / mirror.patch, tmp_path / "clone", out / mirror.base_patch)
    assert (clone / "pkg/calc.py").read_text() == FIXED
    assert subprocess.run(["git", "-C", str(clone), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout == ""  # fmt: skip
    # The patch is git's own diff of the fix (parent -> fix), source files only.
    expected = subprocess.run(["git", "-C", str(repo.path), "diff", "--full-index", f"{fix}~1", fix, "--",
                               "pkg/calc.py"], capture_output=True, check=True).stdout  # fmt: skip
    assert (out / mirror.patch).read_bytes() == expected
    assert mirror.paths == ["pkg/calc.py"] and mirror.language == "python"
    # Gold: clean, the lines the fix writes in the fix's tree (by hand), paired both ways.
    assert gold.expect_finding is False and gold.defects == [] and gold.validation is None
    assert gold.changed == [
        Location(path="pkg/calc.py", start_line=4, end_line=4, symbol="clamp"),
        Location(path="pkg/calc.py", start_line=18, end_line=20, symbol="scale"),
    ]
    assert [(loc.start_line, loc.end_line, loc.symbol) for loc in defect_gold.defects[0].locations] == [
        (4, 4, "clamp"), (18, 18, "scale")]  # fmt: skip
    assert gold.pair_id and gold.pair_id == defect_gold.pair_id
    assert gold.provenance == defect_gold.provenance and gold.source_date == defect_gold.source_date
    assert gold.variant_of is None


def test_mirror_ids_and_titles_are_neutral(fixed, tmp_path):
    repo, fix = fixed
    out = _mine(repo, tmp_path / "corpus")
    strata = _by_stratum(out)
    ((defect, _),) = strata["fix_reversal"]
    ((mirror, gold),) = strata["mirror"]
    assert re.fullmatch(r"case-[0-9a-f]{12}", mirror.case_id) and mirror.case_id != defect.case_id
    assert defect.case_id[5:] not in mirror.case_id and fix[:8] not in mirror.case_id
    assert not re.search(r"mirror|revers|fix|pair|clean", mirror.title, re.IGNORECASE)
    assert mirror.patch == f"patches/{mirror.case_id}.diff"
    assert mirror.base_patch == f"patches/{mirror.case_id}.base.diff"
    assert not re.search(r"mirror|pair", gold.pair_id.removeprefix("pair-"))
    # Nothing a reviewer sees names the pair: the case record holds no pair id.
    case_line = next(line for line in (out / "cases.jsonl").read_text().splitlines() if mirror.case_id in line)
    assert "pair" not in case_line and "mirror" not in case_line


def test_no_mirrors_opts_out(fixed, tmp_path):
    repo, _ = fixed
    out = _mine(repo, tmp_path / "corpus", mirrors=False)
    strata = _by_stratum(out)
    assert "mirror" not in strata
    ((_, defect_gold),) = strata["fix_reversal"]
    assert defect_gold.pair_id is None
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 1}
    assert not list((out / "patches").glob("*.base.diff"))


def test_mine_cli_counts_mirrors_and_no_mirrors_opts_out(fixed, tmp_path):
    repo, _ = fixed
    made = run_cli("mine", repo.path, "--out", tmp_path / "with", "--controls-ratio", "0", "--json")
    assert made.returncode == 0, made.stderr
    summary = json.loads(made.stdout)
    assert summary["by_stratum"] == {"fix_reversal": 1, "mirror": 1}
    assert summary["mirrors"] == {"made": 1, "fix_reversals_without": 0}
    plain = run_cli("mine", repo.path, "--out", tmp_path / "plain", "--controls-ratio", "0")
    assert plain.returncode == 0 and "1 mirrors" in plain.stdout
    none = run_cli("mine", repo.path, "--out", tmp_path / "none", "--controls-ratio", "0", "--no-mirrors", "--json")
    assert json.loads(none.stdout)["by_stratum"] == {"fix_reversal": 1}
    assert "--no-mirrors" in run_cli("mine", "--help").stdout


def test_show_lists_and_counts_mirrors(fixed, tmp_path):
    repo, _ = fixed
    out = _mine(repo, tmp_path / "corpus")
    shown = run_cli("show", out, "--cases", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["by_stratum"]["mirror"] == 1
    assert sorted(row["stratum"] for row in data["case_rows"]) == ["fix_reversal", "mirror"]
    assert data["mirrors"] == {"mined": 1, "paired_with_defect_cases": 1, "validated": 0, "valid": 0, "in_analysis": 0}
    text = run_cli("show", out, "--cases")
    assert "mirrors: 1 (1 paired with defect cases)" in text.stdout


def test_a_mutations_mirror_is_the_un_mutation(project, tmp_path):
    out = _mine(project, tmp_path / "corpus", fixes=False, mutations=3)
    corpus = read_corpus(out)
    gold = {g.case_id: g for g in corpus.gold}
    cases = {c.case_id: c for c in corpus.cases}
    mutations = [g for g in corpus.gold if g.stratum == "mutation"]
    mirrors = {g.pair_id: g for g in corpus.gold if g.stratum == "mirror"}
    assert len(mutations) == len(mirrors) == 3
    for number, mutation in enumerate(mutations):
        mirror = mirrors[mutation.pair_id]
        case, twin = cases[mutation.case_id], cases[mirror.case_id]
        (path,) = twin.paths
        assert twin.base == case.base == project.git("rev-parse", "HEAD").strip()
        assert (out / twin.base_patch).read_bytes() == (out / case.patch).read_bytes()
        # Base + base patch is the mutant; the patch restores HEAD's file.
        clone = apply_in_clone(project.path, twin.base, out / twin.patch, tmp_path / f"m{number}", out / twin.base_patch)
        assert (clone / path).read_bytes() == project.show("HEAD", path)
        # The mirror's lines are the mutant's lines, in HEAD's text (a mutation keeps its
        # line count), labelled by the same function.
        (defect_loc,) = mutation.defects[0].locations
        (changed,) = mirror.changed
        assert (changed.path, changed.symbol) == (defect_loc.path, defect_loc.symbol)
        hunk = re.search(rb"^@@ -\d+(?:,\d+)? \+(\d+)", (out / twin.patch).read_bytes(), re.MULTILINE)
        assert int(hunk.group(1)) <= changed.start_line <= changed.end_line
        assert mirror.provenance == mutation.provenance and gold[mirror.case_id].defects == []


def test_rename_variants_are_not_mirrored_but_their_originals_are(fixed, tmp_path):
    repo, _ = fixed
    out = _mine(repo, tmp_path / "corpus", rename=True)
    strata = _by_stratum(out)
    originals = [g for _, g in strata["fix_reversal"] if g.variant_of is None]
    variants = [g for _, g in strata["fix_reversal"] if g.variant_of is not None]
    assert len(originals) == 1 and len(variants) == 1 and len(strata["mirror"]) == 1
    assert variants[0].pair_id is None and originals[0].pair_id == strata["mirror"][0][1].pair_id


def test_validate_marks_the_mirror_not_observed_and_its_defect_observed(fixed, tmp_path):
    repo, _ = fixed
    out = _mine(repo, tmp_path / "corpus")
    summary = validate_corpus(out, validate_config())
    strata = _by_stratum(out)
    ((_, defect_gold),) = strata["fix_reversal"]
    ((mirror, gold),) = strata["mirror"]
    assert defect_gold.validation.status.value == "observed"
    assert gold.validation.status.value == "not_observed"
    assert summary.by_status == {"not_observed": 1, "observed": 1}
    # The mirror needed no run of its own: the suite at the fix commit ran once, for both.
    log = (out / "logs" / f"{mirror.case_id}.log").read_text()
    assert "the patched tree is" in log and "whole suite passed" in log
    assert "patched (fix_tests) run" not in log
    shown = json.loads(run_cli("show", out, "--json").stdout)["mirrors"]
    assert (shown["valid"], shown["in_analysis"]) == (1, 1)  # valid, and so is its defect case

