"""The shared operator test (cosmic-ray style): every registered operator, on its examples()."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbench.config import MutationOperator
from reviewbench.mine.mutations import ParsedModule, examples_of, registry
from reviewbench.mine.textdiff import changed_size
from reviewbench.records import Severity

OPERATORS = registry()

REQUIRED = {
    "guard_deletion", "boundary_flip", "statement_swap", "cleanup_removal", "wrong_argument",
    "negate_condition", "operator_swap", "off_by_one", "drop_return", "broaden_except",
}  # fmt: skip


def _pairs():
    for name, operator in OPERATORS.items():
        for number, (before, after) in enumerate(examples_of(operator).pairs):
            yield pytest.param(operator, before, after, id=f"{name}-{number}")


def _unchanged():
    for name, operator in OPERATORS.items():
        for number, source in enumerate(examples_of(operator).unchanged):
            yield pytest.param(operator, source, id=f"{name}-{number}")


def test_registry_holds_every_required_operator():
    assert REQUIRED <= set(OPERATORS)


def test_registry_and_the_configs_vocabulary_name_the_same_operators():
    # MineConfig checks names against the enum without importing libcst.
    assert set(OPERATORS) <= {op.value for op in MutationOperator}  # the rest are JS/TS-only (test_script_operators)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_declares_its_labels_and_examples(name):
    operator = OPERATORS[name]
    assert operator.name == name
    assert isinstance(operator.severity, Severity)
    assert operator.hint_terms and all(isinstance(t, str) and t for t in operator.hint_terms)
    examples = examples_of(operator)
    assert examples.pairs, "at least one (before, after) pair"
    assert examples.unchanged, "at least one source the operator must not fire on"


@pytest.mark.parametrize(("operator", "before", "after"), list(_pairs()))
def test_operator_makes_its_example(operator, before, after):
    module = ParsedModule(before)
    mutants = [module.apply(site) for site in module.sites([operator])]
    assert after in mutants
    assert 1 <= changed_size(before, after) <= 2
    compile(after, "example.py", "exec")


@pytest.mark.parametrize(("operator", "source"), list(_unchanged()))
def test_operator_does_not_fire(operator, source):
    assert ParsedModule(source).sites([operator]) == []


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_keeps_formatting_outside_the_change(name):
    # Comments, odd spacing and quotes elsewhere in the file survive byte for byte.
    operator = OPERATORS[name]
    for before, _ in examples_of(operator).pairs:
        source = "# header  comment\nX = {'a':1}  # keep\n\n\n" + before + "\n\nY = ( 1 ,2 )\n"
        module = ParsedModule(source)
        for site in module.sites([operator]):
            mutated = module.apply(site)
            assert mutated.startswith("# header  comment\nX = {'a':1}  # keep\n\n\n")
            assert mutated.endswith("\n\nY = ( 1 ,2 )\n")


_REAL_MODULES = ["textwrap.py", "json/decoder.py", "shlex.py", "fractions.py"]


@pytest.mark.parametrize("name", _REAL_MODULES)
def test_applying_a_site_gives_what_reprinting_the_whole_module_gives(name):
    """Sites are applied by re-printing as little as possible (the replaced node, or the
    top-level statement holding it): on real modules, every site of every operator must
    give exactly what re-printing the whole module with the replacement gives."""
    import sysconfig

    source = (Path(sysconfig.get_paths()["stdlib"]) / name).read_text(encoding="utf-8")
    parsed = ParsedModule(source)
    sites = parsed.sites(list(registry().values()))
    by_operator: dict[str, list] = {}
    for site in sites:
        by_operator.setdefault(site.operator, []).append(site)
    assert len(by_operator) >= 6
    # Re-printing a whole module per site is slow: the first, last and three spread ones.
    chosen = [s for group in by_operator.values() for s in {id(x): x for x in group[:: max(1, len(group) // 3)] + group[-1:]}.values()]
    for site in chosen:
        expected = parsed.module.deep_replace(site.node, site.replacement).code  # type: ignore[union-attr]
        assert parsed.apply(site) == expected, (site.operator, site.line, site.note)
