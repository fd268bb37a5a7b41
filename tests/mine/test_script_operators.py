"""The shared JavaScript/TypeScript operator test: every registered script operator, on its examples()."""

from __future__ import annotations

import pytest

from reviewbench.config import MutationOperator
from reviewbench.mine.languages.ecmascript import parse
from reviewbench.mine.mutations import registry as python_registry
from reviewbench.mine.script_mutations import ParsedScript, examples_of, registry
from reviewbench.mine.textdiff import changed_size
from reviewbench.records import Severity

OPERATORS = registry()

REQUIRED = {
    "guard_deletion", "boundary_flip", "statement_swap", "cleanup_removal", "wrong_argument",
    "negate_condition", "off_by_one", "drop_return", "drop_await", "loose_equality", "operator_swap",
}  # fmt: skip


def _pairs():
    for name, operator in OPERATORS.items():
        for number, (before, after) in enumerate(examples_of(operator).pairs):
            for language in ("javascript", "typescript"):
                yield pytest.param(operator, before, after, language, id=f"{name}-{number}-{language}")


def _unchanged():
    for name, operator in OPERATORS.items():
        for number, source in enumerate(examples_of(operator).unchanged):
            yield pytest.param(operator, source, id=f"{name}-{number}")


def test_registry_holds_every_required_operator():
    assert REQUIRED <= set(OPERATORS)


def test_the_configs_vocabulary_names_every_python_and_script_operator():
    assert set(OPERATORS) | set(python_registry()) == {op.value for op in MutationOperator}


def test_shared_names_share_their_labels():
    """A guard deletion is the same defect in either language: same severity, same summary."""
    python = python_registry()
    for name, operator in OPERATORS.items():
        if name in python:
            assert (operator.severity, operator.summary) == (python[name].severity, python[name].summary)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_declares_its_labels_and_examples(name):
    operator = OPERATORS[name]
    assert operator.name == name
    assert isinstance(operator.severity, Severity)
    assert operator.hint_terms and operator.summary and operator.effect
    examples = examples_of(operator)
    assert examples.pairs and examples.unchanged


@pytest.mark.parametrize(("operator", "before", "after", "language"), list(_pairs()))
def test_operator_makes_its_example(operator, before, after, language):
    script = ParsedScript(before, language)
    mutants = [script.apply(site) for site in script.sites([operator])]
    assert after in mutants
    assert 1 <= changed_size(before, after) <= 2
    assert not parse(after, language).root_node.has_error


@pytest.mark.parametrize(("operator", "source"), list(_unchanged()))
def test_operator_does_not_fire(operator, source):
    assert ParsedScript(source, "javascript").sites([operator]) == []


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_keeps_the_rest_of_the_file_byte_for_byte(name):
    operator = OPERATORS[name]
    head, tail = "// header  comment\nconst X = {'a':1};  // keep\n\n", "\n\nconst Y = [ 1 ,2 ];\n"
    for before, _ in examples_of(operator).pairs:
        script = ParsedScript(head + before + tail, "javascript")
        sites = script.sites([operator])
        assert sites
        for site in sites:
            mutated = script.apply(site)
            assert mutated.startswith(head) and mutated.endswith(tail)


def test_a_file_that_does_not_parse_offers_no_site():
    assert ParsedScript("function f(a) {\n  if (!a) return;\n  return a[0];\n", "javascript").sites(
        list(OPERATORS.values())) == []


def test_a_note_quotes_one_short_line_of_code():
    source = "function f(s) {\n  return s.replace(/a/g, function (m) {\n    return m.toUpperCase();\n  });\n}\n"
    (site,) = [s for s in ParsedScript(source, "javascript").sites([OPERATORS["drop_return"]]) if s.line == 2]
    assert "\n" not in site.note and "`return s.replace(/a/g, function (m) {…`" in site.note
