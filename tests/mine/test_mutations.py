"""Mutation cases on a real pytest project: small diffs git accepts, honest gold, spread sites."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.errors import UsageError
from reviewbench.mine.mutations import registry
from reviewbench.validate import validate_corpus

from .conftest import SHAPES, apply_in_clone, changed_lines, validate_config


def _mine(repo, out: Path, **values) -> Path:
    values.setdefault("fixes", False)
    values.setdefault("controls_ratio", 0)
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, **values), out, warn=lambda _m: None)
    return out


def test_every_mutation_is_one_or_two_lines_and_applies_with_git(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=12))
    assert len(corpus.cases) == 12
    head = project.git("rev-parse", "HEAD")
    for number, case in enumerate(corpus.cases):
        assert case.base == head and case.language == "python" and len(case.paths) == 1
        patch = corpus.path / case.patch
        removed, added = changed_lines(patch.read_text())
        assert 1 <= max(len(removed), len(added)) <= 2
        # git accepts it, and the diff git itself writes for the result is byte-identical.
        clone = apply_in_clone(project.path, case.base, patch, tmp_path / f"clone{number}")
        again = subprocess.run(["git", "-C", str(clone), "diff", "--full-index"], capture_output=True, check=True)
        assert again.stdout == patch.read_bytes()


def test_gold_names_the_operator_and_the_mutated_line(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=10))
    cases = {c.case_id: c for c in corpus.cases}
    operators = registry()
    for gold in corpus.gold:
        assert gold.stratum == "mutation" and gold.expect_finding and gold.variant_of is None
        (defect,) = gold.defects
        operator = operators[defect.defect_class]
        assert gold.provenance.operator == defect.defect_class
        assert defect.severity == operator.severity and defect.hint_terms == list(operator.hint_terms)
        assert gold.provenance.commit is None
        (location,) = defect.locations
        case = cases[gold.case_id]
        clone = apply_in_clone(project.path, case.base, corpus.path / case.patch, corpus.path.parent / gold.case_id)
        patched = (clone / location.path).read_text().splitlines()
        base = project.show("HEAD", location.path).decode().splitlines()
        removed, added = changed_lines((corpus.path / case.patch).read_text())
        span = patched[location.start_line - 1 : location.end_line]
        if added:  # the lines the mutation wrote (a swap writes two, git shows one as moved)
            assert set(added) <= set(span) and len(span) <= 2
            assert span != base[location.start_line - 1 : location.end_line]
        else:  # a deletion sits at its seam: the lines either side of it
            assert len(span) == 2 and base.index(removed[0]) == location.start_line
        assert location.symbol in {"clamp", "window", "total", "join_words", "first_line", "count_words", "read_file"}
        assert location.symbol in defect.symbols
        date = project.git("log", "-1", "--format=%aI", "--", location.path)
        assert gold.provenance.date == date


def test_nothing_a_reviewer_sees_names_the_operator(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus", mutations=14)
    visible = (corpus / "cases.jsonl").read_text().lower()
    visible += "".join(p.read_text().lower() for p in (corpus / "patches").iterdir())
    for name in registry():
        assert name not in visible
    assert "mutation" not in visible and "mutant" not in visible


def test_tests_vendored_code_and_module_level_code_are_never_mutated(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=40))
    paths = Counter(p for c in corpus.cases for p in c.paths)
    assert set(paths) <= {"pkg/shapes.py", "pkg/text.py"}
    for gold in corpus.gold:
        assert gold.defects[0].locations[0].symbol  # inside a function


def test_sites_spread_over_files_then_functions(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=7))
    files = Counter(c.paths[0] for c in corpus.cases)
    assert sorted(files.values()) == [3, 4]  # round-robin over the two files
    symbols = Counter(g.defects[0].locations[0].symbol for g in corpus.gold)
    assert max(symbols.values()) == 1  # seven functions, one mutation each


def test_operators_and_paths_restrict_the_sites(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "a", mutations=5, operators=("boundary_flip",)))
    assert {g.defects[0].defect_class for g in corpus.gold} == {"boundary_flip"}
    corpus = read_corpus(_mine(project, tmp_path / "b", mutations=5, paths=("pkg/text.py",)))
    assert {c.paths[0] for c in corpus.cases} == {"pkg/text.py"}


def test_unknown_operator_and_nothing_to_mine_are_usage_errors(project):
    with pytest.raises(UsageError, match="unknown mutation operator 'flip'"):
        MineConfig.build(repo=project.path, mutations=1, operators=("flip",))
    with pytest.raises(UsageError, match="--no-fixes leaves nothing to mine"):
        MineConfig.build(repo=project.path, fixes=False)


def test_same_seed_same_corpus_other_seed_other_choice(project, tmp_path):
    def files(out: Path) -> dict[str, bytes]:
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                if p.is_file() and p.name != "corpus.json"}  # fmt: skip

    one = files(_mine(project, tmp_path / "one", mutations=6, seed=3, rename=True, controls_ratio=0.5))
    two = files(_mine(project, tmp_path / "two", mutations=6, seed=3, rename=True, controls_ratio=0.5))
    other = files(_mine(project, tmp_path / "other", mutations=6, seed=4, rename=True, controls_ratio=0.5))
    assert one == two
    assert one != other


def test_mutations_beside_fix_reversals_and_the_two_to_one_ratio(project, tmp_path):
    project.commit("Loosen clamp", {"pkg/shapes.py": SHAPES.replace("value > high", "value > high + 1")})
    project.commit("Fix clamp upper bound", {"pkg/shapes.py": SHAPES})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, mutations=3), out, warn=lambda _m: None)
    meta = json.loads((out / "corpus.json").read_text())
    # 1 fix reversal + 3 mutations = 4 defect cases: 2 controls at the default 2:1.
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 1, "mutation": 3, "control": 2}
    assert meta["config"]["mutations"] == 3 and meta["counts"]["matched_commits"] == 1


def test_test_paths_name_the_tests_that_import_the_module(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=6))
    for case, gold in zip(corpus.cases, corpus.gold, strict=True):
        expected = {"pkg/shapes.py": ["tests/test_shapes.py"], "pkg/text.py": ["tests/test_text.py"]}
        assert gold.provenance.test_paths == expected[case.paths[0]]


def test_validation_observes_most_mutants(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus", mutations=8)
    validate_corpus(corpus, validate_config())
    statuses = Counter(g.validation.status.value for g in read_corpus(corpus).gold)
    assert statuses["observed"] >= 6, statuses
    assert set(statuses) <= {"observed", "not_observed"}
    observed = [g for g in read_corpus(corpus).gold if g.validation.status == "observed"]
    assert all(g.validation.selection == "fix_tests" for g in observed)  # the cheap selection sufficed


def test_coverage_steers_sites_to_executed_lines(git_repo, tmp_path):
    pytest.importorskip("coverage")
    repo = git_repo("covered")
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/used.py": "def used(a, b):\n    if a < b:\n        return a + 1\n    return b - 1\n",
        "pkg/unused.py": "def unused(a, b):\n    if a <= b:\n        return a * 2\n    return b + 3\n",
        "tests/test_used.py": "from pkg.used import used\n\ndef test_used():\n    assert used(1, 2) == 2\n    assert used(3, 2) == 1\n",
    })  # fmt: skip
    import sys

    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=3, controls_ratio=0,
                           coverage_cmd=f"{sys.executable} -m coverage run -m pytest -q -p no:cacheprovider"),
                out, warn=lambda m: pytest.fail(m))  # fmt: skip
    corpus = read_corpus(out)
    assert {c.paths[0] for c in corpus.cases} == {"pkg/used.py"}
    # Per-test contexts name the tests that run each mutated line, as pytest node ids.
    assert all(g.provenance.test_paths == ["tests/test_used.py::test_used"] for g in corpus.gold)


def test_coverage_node_ids_only_when_they_surely_exist(git_repo, tmp_path):
    """Methods get ``file::Class::test``; a test inherited from a base class in another
    module would give an id pytest cannot find, so its file is used instead."""
    pytest.importorskip("coverage")
    repo = git_repo("classes")
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/one.py": "def one(a):\n    if a < 1:\n        return 0\n    return a\n",
        "pkg/two.py": "def two(a):\n    if a > 2:\n        return 2\n    return a\n",
        "tests/__init__.py": "",
        "tests/base.py": "from pkg.two import two\n\nclass Shared:\n    def test_two(self):\n        assert two(5) == 2\n",
        "tests/test_one.py": "from pkg.one import one\n\nclass TestOne:\n    def test_one(self):\n        assert one(0) == 0\n",
        "tests/test_two.py": "from tests.base import Shared\n\nclass TestTwo(Shared):\n    pass\n",
    })  # fmt: skip
    import sys

    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=2, controls_ratio=0, paths=("pkg/*.py",),
                           coverage_cmd=f"{sys.executable} -m coverage run -m pytest -q -p no:cacheprovider"),
                out, warn=lambda m: pytest.fail(m))  # fmt: skip
    by_path = {g.defects[0].locations[0].path: g.provenance.test_paths for g in read_corpus(out).gold}
    assert by_path == {"pkg/one.py": ["tests/test_one.py::TestOne::test_one"], "pkg/two.py": ["tests/base.py"]}


def test_odd_files_still_give_patches_git_prints_identically(git_repo, tmp_path):
    repo = git_repo("odd")
    repo.commit("init", {
        ".gitattributes": "*.py diff=python\n",
        "pkg/my file.py": b"class K:\r\n    def f(self, a):\r\n        x = a + 1\r\n        return x < 1\r\n",
        "pkg/\u00fc.py": "def g(a):\n    b = a\n    return b <= '\u00e9'",
        "pkg/tabs.py": "def h(a):\n\tif a > 2:\n\t\treturn 1\n\treturn a - 1\n",
    })  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=8, controls_ratio=1.0, rename=True), out,
                warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    assert {p for c in corpus.cases for p in c.paths} == {"pkg/my file.py", "pkg/\u00fc.py", "pkg/tabs.py"}
    for number, case in enumerate(corpus.cases):
        patch = out / case.patch
        clone = apply_in_clone(repo.path, case.base, None, tmp_path / f"clone{number}",
                               base_patch=case.base_patch and out / case.base_patch)  # fmt: skip
        # A rename variant's base patch is part of its base: staged, so that `git diff`
        # (worktree against index) shows the case patch alone.
        subprocess.run(["git", "-C", str(clone), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(clone), "apply", str(patch)], check=True)
        again = subprocess.run(["git", "-c", "core.quotePath=false", "-C", str(clone), "diff", "--full-index"],
                               capture_output=True, check=True)  # fmt: skip
        assert again.stdout == patch.read_bytes()
