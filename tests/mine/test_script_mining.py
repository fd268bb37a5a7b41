"""Mutations of a real JavaScript project through ``reviewbench mine`` (no stubs: real git)."""

from __future__ import annotations

import json
import subprocess

from reviewbench import read_corpus
from reviewbench.mine.languages.ecmascript import parse

from ..conftest import run_cli
from ..js_project import JS_PROJECT
from .conftest import changed_lines


def test_a_javascript_project_gets_mutations_with_symbols(git_repo, tmp_path):
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    out = tmp_path / "corpus"
    proc = run_cli("mine", str(repo.path), "--out", str(out), "--no-fixes", "--mutations", "8",
                   "--no-mirrors", "--controls-ratio", "0", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Python sources" not in proc.stderr
    assert json.loads(proc.stdout)["made_at_head"]["mutations"] == 8
    corpus = read_corpus(out)
    cases = {c.case_id: c for c in corpus.cases}
    operators = set()
    for gold in corpus.gold:
        case = cases[gold.case_id]
        assert case.language == "javascript"
        assert case.paths[0] in ("lib/range.js", "lib/text.js")  # never the eslint config nor a test
        (location,) = gold.defects[0].locations
        assert location.symbol in {"clamp", "windowOf", "total", "Words.count", "Words.first", "Words.join",
                                   "Words.constructor", "describe", "formatMessage"}, location  # fmt: skip
        removed, added = changed_lines((out / case.patch).read_text())
        assert 1 <= max(len(removed), len(added)) <= 2
        assert gold.defects[0].symbols and location.symbol.rsplit(".", 1)[-1] in gold.defects[0].symbols
        operators.add(gold.provenance.operator)
    assert len(operators) >= 4  # the least used operator goes next


def test_mutated_scripts_still_parse(git_repo, tmp_path):
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    out = tmp_path / "corpus"
    proc = run_cli("mine", str(repo.path), "--out", str(out), "--no-fixes", "--mutations", "12",
                   "--no-mirrors", "--controls-ratio", "0", "--operators", "drop_await,loose_equality,guard_deletion")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    corpus = read_corpus(out)
    assert {g.provenance.operator for g in corpus.gold} <= {"loose_equality", "guard_deletion"}
    for case in corpus.cases:
        work = tmp_path / case.case_id
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.patch)], check=True)
        text = (work / case.paths[0]).read_text()
        assert not parse(text, "javascript").root_node.has_error



def test_a_javascript_project_gets_controls_that_its_tests_pass(git_repo, tmp_path):
    """Controls are clean: real node runs the project's tests on each one and they pass."""
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    out = tmp_path / "corpus"
    proc = run_cli("mine", str(repo.path), "--out", str(out), "--no-fixes", "--mutations", "4",
                   "--no-mirrors", "--controls-ratio", "2", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["made_at_head"]["controls"] == 8
    corpus = read_corpus(out)
    controls = [g for g in corpus.gold if g.stratum == "control"]
    assert len({g.provenance.operator for g in controls}) >= 3
    cases = {c.case_id: c for c in corpus.cases}
    for gold in controls:
        case = cases[gold.case_id]
        work = tmp_path / case.case_id
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.patch)], check=True)
        tests = subprocess.run(["node", "--test", "test/"], check=False, cwd=work, capture_output=True, text=True)
        assert tests.returncode == 0, (gold.provenance.operator, (out / case.patch).read_text(), tests.stdout)


def test_javascript_defects_get_rename_variants_that_keep_their_diff(git_repo, tmp_path):
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    out = tmp_path / "corpus"
    proc = run_cli("mine", str(repo.path), "--out", str(out), "--no-fixes", "--mutations", "8", "--rename",
                   "--no-mirrors", "--controls-ratio", "0", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    made = json.loads(proc.stdout)["made_at_head"]
    assert made["rename_variants"] >= 4, made
    corpus = read_corpus(out)
    cases = {c.case_id: c for c in corpus.cases}
    gold = {g.case_id: g for g in corpus.gold}
    for variant in [g for g in corpus.gold if g.variant_of]:
        case, original = cases[variant.case_id], cases[variant.variant_of]
        work = tmp_path / case.case_id
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.base_patch)], check=True)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.patch)], check=True)
        assert not parse((work / case.paths[0]).read_text(), "javascript").root_node.has_error
        removed, added = changed_lines((out / case.patch).read_text())
        removed0, added0 = changed_lines((out / original.patch).read_text())
        assert (len(removed), len(added)) == (len(removed0), len(added0))
        assert removed != removed0 or added != added0  # the renamed code, not the same lines
        assert "renamed:" in variant.defects[0].description
        assert variant.defects[0].locations[0].symbol == gold[variant.variant_of].defects[0].locations[0].symbol
