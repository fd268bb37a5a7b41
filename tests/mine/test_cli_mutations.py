"""``reviewbench mine`` with mutations, controls and variants, and ``show``'s yield per operator."""

from __future__ import annotations

import json
import subprocess

from reviewbench import read_corpus
from reviewbench.validate import validate_corpus

from ..conftest import run_cli
from .conftest import validate_config


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def test_mine_options_and_show_yield_by_operator(project, tmp_path):
    out = tmp_path / "corpus"
    proc = run("mine", str(project.path), "--out", str(out), "--no-fixes", "--mutations", "6",
               "--operators", "boundary_flip, guard_deletion,off_by_one", "--paths", "pkg/*.py",
               "--rename", "--seed", "5", "--no-mirrors", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["by_stratum"] == {"fix_reversal": 0, "mutation": 6 + summary["made_at_head"]["rename_variants"],
                                     "control": 3}  # fmt: skip
    assert summary["made_at_head"]["mutations"] == 6
    config = json.loads((out / "corpus.json").read_text())["config"]
    assert config["operators"] == ["boundary_flip", "guard_deletion", "off_by_one"]
    assert config["paths"] == ["pkg/*.py"] and config["rename"] is True and config["fixes"] is False

    validate_corpus(out, validate_config())
    gold = [g for g in read_corpus(out).gold if g.stratum == "mutation" and not g.variant_of]
    proc = run("show", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["yield_by_operator"]
    assert set(report) <= {"boundary_flip", "guard_deletion", "off_by_one"}
    assert sum(r["attempted"] for r in report.values()) == len(gold) == 6
    for operator, row in report.items():
        mine = [g for g in gold if g.provenance.operator == operator]
        assert row == {"observed": sum(g.validation.status == "observed" for g in mine),
                       "attempted": len(mine), "mined": len(mine)}  # fmt: skip
    table = run("show", str(out)).stdout
    assert "observed / attempted" in table
    for operator, row in report.items():
        assert any(operator in line and f"{row['observed']}/{row['attempted']}" in line for line in table.splitlines())


def test_bad_mutation_options_are_one_line_usage_errors(project, tmp_path):
    proc = run("mine", str(project.path), "--out", str(tmp_path / "c"), "--mutations", "2", "--operators", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown mutation operator 'nope'" in proc.stderr
    proc = run("mine", str(project.path), "--out", str(tmp_path / "c"), "--no-fixes")
    assert proc.returncode == 2 and "nothing to mine" in proc.stderr
    proc = run("mine", str(project.path), "--out", str(tmp_path / "c"), "--controls-ratio", "-1")
    assert proc.returncode == 2


def test_plain_mine_help_lists_the_new_options():
    out = run("mine", "--help").stdout
    for option in ("--mutations", "--controls-ratio", "--operators", "--paths", "--rename", "--no-fixes",
                   "--coverage-cmd"):  # fmt: skip
        assert option in out
