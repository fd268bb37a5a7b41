"""The JavaScript/TypeScript refactors for controls, each on its examples()."""

from __future__ import annotations

import pytest

from reviewbench.mine.languages.ecmascript import parse
from reviewbench.mine.script_mutations import ParsedScript
from reviewbench.mine.script_refactors import SCRIPT_REFACTORS
from reviewbench.mine.script_rename import same_tokens


def _pairs():
    for refactor in SCRIPT_REFACTORS:
        for number, (before, after) in enumerate(refactor.examples().pairs):
            for language in ("javascript", "typescript"):
                yield pytest.param(refactor, before, after, language, id=f"{refactor.name}-{number}-{language}")


def _unchanged():
    for refactor in SCRIPT_REFACTORS:
        for number, source in enumerate(refactor.examples().unchanged):
            yield pytest.param(refactor, source, id=f"{refactor.name}-{number}")


def test_refactor_names_are_distinct_and_not_mutation_names():
    from reviewbench.mine.script_mutations import registry

    names = [r.name for r in SCRIPT_REFACTORS]
    assert len(set(names)) == len(names) and not set(names) & set(registry())


@pytest.mark.parametrize(("refactor", "before", "after", "language"), list(_pairs()))
def test_refactor_makes_its_example(refactor, before, after, language):
    script = ParsedScript(before, language)
    made = [script.apply(site) for site in script.sites([refactor])]
    assert after in made
    assert not parse(after, language).root_node.has_error
    if refactor.same_tokens:
        assert same_tokens(before, after, language)


@pytest.mark.parametrize(("refactor", "source"), list(_unchanged()))
def test_refactor_does_not_fire(refactor, source):
    assert ParsedScript(source, "javascript").sites([refactor]) == []


def test_semicolon_free_style_is_kept():
    source = "function f(a) {\n  return g(a) + 1\n}\n"
    (site,) = ParsedScript(source, "javascript").sites([SCRIPT_REFACTORS[0]])
    assert ParsedScript(source, "javascript").apply(site) == "function f(a) {\n  const result = g(a) + 1\n  return result\n}\n"
