"""Control cases: clean refactors of the defect cases' files that keep the suite green."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.controls import CONTROL_KINDS
from reviewbench.mine.mutations import ParsedModule
from reviewbench.mine.refactors import REFACTORS, docstring_for, refactor_examples
from reviewbench.mine.synthetic import controls_for
from reviewbench.validate import validate_corpus

from .conftest import apply_in_clone, validate_config


def _mine(repo, out: Path, **values) -> Path:
    values.setdefault("fixes", False)
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, **values), out, warn=lambda _m: None)
    return out


def test_controls_compile_apply_and_keep_the_tests_green(project, tmp_path):
    out = _mine(project, tmp_path / "corpus", mutations=6, controls_ratio=1.0)
    corpus = read_corpus(out)
    controls = {g.case_id: g for g in corpus.gold if g.stratum == "control"}
    assert len(controls) == 6
    for number, case in enumerate(c for c in corpus.cases if c.case_id in controls):
        clone = apply_in_clone(project.path, case.base, out / case.patch, tmp_path / f"clone{number}")
        for path in case.paths:
            compile((clone / path).read_text(), path, "exec")
    validate_corpus(out, validate_config(), )
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    assert {statuses[cid] for cid in controls} == {"not_observed"}  # the tests still pass


def test_control_gold_is_clean_and_names_the_refactor(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=8, controls_ratio=1.0))
    controls = [g for g in corpus.gold if g.stratum == "control"]
    for gold in controls:
        assert gold.expect_finding is False and gold.defects == [] and gold.variant_of is None
        assert set(gold.provenance.operator.split("+")) <= set(CONTROL_KINDS)  # combined: "a+b"
        assert gold.provenance.test_paths == []  # proven by the whole suite
    # The least-used kind goes next among the candidates; the shape quota then keeps those
    # shaped like the mutations (one hunk, as many lines added as removed): still a mix.
    assert len(Counter(g.provenance.operator for g in controls)) >= 2


def test_controls_change_the_files_of_the_defect_cases(project, tmp_path):
    corpus = read_corpus(_mine(project, tmp_path / "corpus", mutations=4, paths=("pkg/shapes.py",)))
    strata = {g.case_id: g.stratum for g in corpus.gold}
    files = {s: {p for c in corpus.cases if strata[c.case_id] == s for p in c.paths} for s in ("mutation", "control")}
    assert files == {"mutation": {"pkg/shapes.py"}, "control": {"pkg/shapes.py"}}


@pytest.mark.parametrize(("ratio", "mutations", "controls"), [(None, 6, 3), (0.5, 5, 3), (1.0, 4, 4), (0.0, 4, 0)])
def test_two_defect_cases_to_one_control(project, tmp_path, ratio, mutations, controls):
    out = _mine(project, tmp_path / "corpus", mutations=mutations, controls_ratio=ratio)
    by_stratum = json.loads((out / "corpus.json").read_text())["counts"]["by_stratum"]
    assert by_stratum == {"fix_reversal": 0, "mutation": mutations, "control": controls}


def test_rounding_is_half_up():
    assert [controls_for(0.5, n) for n in (1, 2, 3, 5, 30)] == [1, 1, 2, 3, 15]


def test_plain_fix_mining_makes_controls_unless_the_ratio_is_zero(project, tmp_path):
    from .conftest import SHAPES

    project.commit("Break clamp", {"pkg/shapes.py": SHAPES.replace("value > high", "value >= high")})
    project.commit("Fix clamp", {"pkg/shapes.py": SHAPES})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False), out)
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 1, "mutation": 0, "control": 1}
    mine_corpus(MineConfig(repo=project.path, mirrors=False, controls_ratio=0), tmp_path / "none")
    meta = json.loads((tmp_path / "none" / "corpus.json").read_text())
    assert meta["counts"]["by_stratum"] == {"fix_reversal": 1}


SNIPPET = '''\
import math
import os


def compute_area(width, height, factor):
    scale = 2
    offset = 3
    if width > height and factor:
        return width * height
    return round(width * height * scale + offset + factor + math.pi + len(os.sep) * 10, 2)


def get_first_name(names):
    cleaned = [n.strip() for n in names]
    return cleaned[0] if cleaned else None
'''


def _run(source: str) -> tuple:
    namespace: dict = {}
    exec(compile(source, "snippet.py", "exec"), namespace)  # noqa: S102 - our own snippet
    return (
        [namespace["compute_area"](w, h, f) for w, h, f in ((3, 2, 1), (2, 3, 0), (5, 5, 2))],
        namespace["get_first_name"]([" ann ", "bo"]), namespace["get_first_name"]([]),
    )


@pytest.mark.parametrize("refactor", [r for r in REFACTORS if refactor_examples(r) is None], ids=lambda r: r.name)
def test_each_refactor_keeps_behaviour(refactor):
    module = ParsedModule(SNIPPET)
    sites = module.sites([refactor])
    assert sites, f"{refactor.name} finds a site in the snippet"
    for site in sites:
        changed = module.apply(site)
        assert changed != SNIPPET
        assert _run(changed) == _run(SNIPPET)


def test_a_call_put_one_argument_per_line_keeps_the_indentation_of_its_block():
    """A formatter's layout: the arguments one level in from the statement, the closing
    parenthesis at the statement's own indentation (printed alone, the call lost its block
    and put them at the file's first level, a layout no one writes: a control's tell)."""
    from reviewbench.mine.refactors import ReformatCall

    source = ("class Checker:\n    def verify(self, key, value, sig):\n        if key:\n"
              "            return hmac.compare_digest(sig, self.get_signature(key, value))\n        return False\n")
    module = ParsedModule(source)
    (site,) = module.sites([ReformatCall])
    assert module.apply(site) == (
        "class Checker:\n    def verify(self, key, value, sig):\n        if key:\n"
        "            return hmac.compare_digest(\n                sig,\n                self.get_signature(key, value),\n"
        "            )\n        return False\n")


def test_docstrings_read_like_a_maintainer_wrote_them():
    assert docstring_for("get_first_name") == "Return the first name."
    assert docstring_for("parse_header_line") == "Parse header line."
    assert docstring_for("_should_retry") == "Decide whether to retry."
    assert docstring_for("random_sample") == "Return the random sample."
    assert docstring_for("f") is None


def test_independent_edits_of_one_file_merge_as_if_printed_together():
    from reviewbench.mine.controls import merge_edits

    original = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    one = original.replace("return 1", "x = 1\n    return x")
    two = original.replace("return 2", "return (2)")
    assert merge_edits(original, [one, two]) == (
        "def a():\n    x = 1\n    return x\n\n\ndef b():\n    return (2)\n")
    assert merge_edits(original, [two, one]) == merge_edits(original, [one, two])
    # Edits that touch are not independent: the caller re-prints the module instead.
    assert merge_edits(original, [one, original.replace("return 1", "return 11")]) is None
