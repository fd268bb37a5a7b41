"""Gold descriptions carry enough words for a matcher to recognise a paraphrase (issue 13).

A mutation's description names the operator, what it changed, the function it is in and
what the code now does wrong; a fix reversal's names the fix commit's subject (and the
first paragraph of its message). Both live in gold.jsonl only: nothing a reviewer sees
carries them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.mutations import registry

from .conftest import SHAPES


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z_]+", text.lower()))


def _visible(out: Path) -> str:
    return (out / "cases.jsonl").read_text() + "".join(p.read_text() for p in (out / "patches").iterdir())


@pytest.mark.parametrize("operator", sorted(registry()))
def test_every_operator_says_what_its_mutant_now_does_wrong(operator):
    effect = registry()[operator].effect
    assert len(effect.split()) >= 6, effect
    assert effect[0].islower() and not effect.endswith(".")  # it continues the description


def test_mutation_description_names_operator_change_function_and_effect(project, tmp_path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, fixes=False, mutations=12, controls_ratio=0), out, warn=lambda _m: None)
    operators = registry()
    golds = read_corpus(out).gold
    assert len(golds) == 12
    for gold in golds:
        (defect,) = gold.defects
        operator = operators[defect.defect_class]
        (location,) = defect.locations
        assert defect.description.startswith(operator.summary + ": ")
        assert f" in `{location.symbol}`" in defect.description
        assert defect.description.endswith(operator.effect)
    # Nothing of it reaches the reviewer: no summary or effect phrase in cases or patches.
    visible = _visible(out).lower()
    for gold in golds:
        operator = operators[gold.defects[0].defect_class]
        assert operator.summary.lower() not in visible and operator.effect.lower() not in visible


def test_negated_condition_reads_like_the_example_in_the_issue(project, tmp_path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, fixes=False, mutations=1, controls_ratio=0, seed=1,
                           operators=("negate_condition",), paths=("pkg/shapes.py",)),
                out, warn=lambda _m: None)  # fmt: skip
    (gold,) = read_corpus(out).gold
    description = gold.defects[0].description
    m = re.fullmatch(r"a condition was inverted: inverted the condition `(.+)` in `(\w+)`: (.+)", description)
    assert m, description
    condition, function, effect = m.groups()
    assert condition in SHAPES and function in {"clamp", "window", "total"}
    assert "branch" in effect and "should not" in effect
    # A reviewer's paraphrase shares the words that matter with it.
    paraphrase = f"In {function}, the check `{condition}` is inverted, so the branch runs when it should not"
    assert {function, "inverted", "branch", "should", "not"} <= _words(description) & _words(paraphrase)


FIXED = '''\
def parse_header(lines):
    if not lines:
        return {}
    key, _, value = lines[0].partition(":")
    return {key.strip(): value.strip()}
'''


def test_fix_reversal_description_carries_the_fix_subject_and_message_in_gold_only(git_repo, tmp_path):
    repo = git_repo("headers")
    repo.commit("Initial import", {"hdr/parse.py": FIXED.replace("    if not lines:\n        return {}\n", "")})
    fix = repo.commit(
        "Fix IndexError on an empty header block\n\n"
        "An empty header list crashed parse_header: it indexed\nthe first line unconditionally.\n\n"
        "Signed-off-by: A Maintainer <a@example.org>",
        {"hdr/parse.py": FIXED},
    )
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out, warn=lambda _m: None)
    (gold,) = read_corpus(out).gold
    description = gold.defects[0].description
    assert "Fix IndexError on an empty header block" in description
    assert "An empty header list crashed parse_header: it indexed the first line unconditionally." in description
    assert "Signed-off-by" not in description and fix[:12] in description
    assert "`parse_header`" in description
    assert gold.provenance.subject == "Fix IndexError on an empty header block"
    visible = _visible(out)
    for telling in ("IndexError", "empty header", "crashed", "unconditionally"):  # the sha is the base
        assert telling not in visible, telling


def test_fix_reversal_description_without_a_message_body(project, tmp_path):
    project.commit("Loosen clamp", {"pkg/shapes.py": SHAPES.replace("value > high", "value > high + 1")})
    project.commit("Fix clamp upper bound", {"pkg/shapes.py": SHAPES})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, controls_ratio=0), out, warn=lambda _m: None)
    (gold,) = read_corpus(out).gold
    description = gold.defects[0].description
    assert '"Fix clamp upper bound"' in description and "`clamp`" in description
    assert not description.endswith(" ")
