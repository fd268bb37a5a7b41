"""The shared solver test: every registered solver kind, on the module's examples(), through
the fix-task experiment's own union, as every reviewer kind is in tests/reviewers/test_kinds.py."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import TypeAdapter

from reviewbench.config.reviewers import capabilities_of, kinds_of
from reviewbench.reviewers.preflight import preflight
from reviewbench.tasks.solvers import ChatSolver, SolverConfig, examples, make_solver, solvers

SOLVERS = solvers()
UNION = TypeAdapter(SolverConfig)


def test_every_kind_of_the_solver_union_has_a_solver_and_no_other():
    assert list(SOLVERS) == list(kinds_of(SolverConfig))


def test_chat_solvers_are_exactly_the_chat_kinds():
    assert {k for k, cls in SOLVERS.items() if cls is ChatSolver} == {k for k in SOLVERS if capabilities_of(k).chat}


@pytest.mark.parametrize("kind", list(SOLVERS))
def test_every_solver_kind_has_an_example(kind):
    assert any(table["kind"] == kind for table in examples())


@pytest.mark.parametrize("table", examples(), ids=lambda t: t["kind"])
def test_solver_builds_from_its_example(table):
    config = UNION.validate_python(table, strict=True)
    assert preflight(config, None) is None
    solver = make_solver(config)
    assert isinstance(solver, SOLVERS[table["kind"]])
    assert isinstance(solver.edits_tree, bool)
    asyncio.run(solver.aclose())
