"""The line-removing refactors on their examples(), run as code: the same results before and after."""

from __future__ import annotations

import pytest

from reviewbench.mine.mutations import ParsedModule
from reviewbench.mine.refactors import REFACTORS, refactor_examples, same_bytecode

WITH_EXAMPLES = [r for r in REFACTORS if refactor_examples(r) is not None]
ARGUMENTS = (0, 1, 2, -1, None, "", "a", (), (1, 2), [0, 3])


def _outcomes(source: str) -> list:
    namespace: dict = {}
    exec(compile(source, "example.py", "exec"), namespace)  # noqa: S102 - our own example
    function = namespace.get("f")
    if function is None:
        return []
    results = []
    for argument in ARGUMENTS:
        try:
            results.append(("value", function(argument)))
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            results.append(("raised", type(exc).__name__))
    return results


def test_the_removing_refactors_have_examples():
    assert {r.name for r in WITH_EXAMPLES} >= {"inline_local", "remove_unused_local", "remove_dead_code", "collapse_branch"}


@pytest.mark.parametrize("refactor", WITH_EXAMPLES, ids=lambda r: r.name)
def test_refactor_examples_and_behaviour(refactor):
    examples = refactor_examples(refactor)
    for before, after in examples.pairs:
        module = ParsedModule(before)
        made = [module.apply(site) for site in module.sites([refactor])]
        assert after in made, f"{refactor.name}: {made!r}"
        assert len(after.splitlines()) < len(before.splitlines())  # these edits remove lines
        assert _outcomes(after) == _outcomes(before)
        if refactor.bytecode_equal:
            assert same_bytecode(before, after)
    for source in examples.unchanged:
        assert ParsedModule(source).sites([refactor]) == [], f"{refactor.name} fired on {source!r}"


def test_same_bytecode_tells_dead_code_from_live_code():
    assert same_bytecode("def f(x):\n    return x\n    y = 1\n", "def f(x):\n    return x\n")
    assert not same_bytecode("def f(x):\n    y = 1\n    return x\n", "def f(x):\n    return x\n")
    # Dead code that makes the function a generator is not dead to the compiler.
    assert not same_bytecode("def f(x):\n    return x\n    yield 1\n", "def f(x):\n    return x\n")
