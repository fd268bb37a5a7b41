"""The shared reviewer-kind test (as the mutation operators' one): every registered kind, on
its module's examples(), through the same union and preflight an experiment file goes through."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import TypeAdapter

from reviewbench.config.reviewers import CALIBRATION_KINDS, ReviewerConfig, kinds_of
from reviewbench.reviewers.base import examples_of, make_reviewer, registry
from reviewbench.reviewers.preflight import preflight

KINDS = registry()
UNION = TypeAdapter(ReviewerConfig)


def _tables(name: str, refused: bool = False) -> list:
    examples = examples_of(KINDS[name])
    rows = examples.refused if refused else examples.tables
    return [row for row in rows if row[0]["kind"] == name]


def _params(refused: bool = False):
    for name in KINDS:
        for number, row in enumerate(_tables(name, refused)):
            yield pytest.param(name, *row, id=f"{name}-{number}")


def _load(table: dict) -> object:
    return UNION.validate_python(table, strict=True)  # as read_config validates a TOML file


@pytest.fixture(autouse=True)
def _example_env(monkeypatch):
    for kind in KINDS.values():
        for variable, value in examples_of(kind).env.items():
            monkeypatch.setenv(variable, value)
    for variable in ("RB_EXAMPLE_UNSET",):
        monkeypatch.delenv(variable, raising=False)


def test_every_kind_of_the_toml_union_is_registered_and_no_other():
    assert list(kinds_of(ReviewerConfig)) == sorted(KINDS, key=list(kinds_of(ReviewerConfig)).index)
    assert set(kinds_of(ReviewerConfig)) == set(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_declares_its_model_and_examples(name):
    kind = KINDS[name]
    assert kinds_of(ReviewerConfig)[name] is kind.config
    assert _tables(name), "at least one table the kind accepts"


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_does_what_its_capabilities_declare(name):
    kind = KINDS[name]
    caps = kind.capabilities
    assert caps.opens_pull_requests == callable(getattr(kind.adapter, "pull_request", None))
    assert caps.chat == callable(getattr(kind.adapter, "complete", None))
    assert caps.calibration == (name in CALIBRATION_KINDS)
    assert not caps.opens_pull_requests or caps.needs_tree  # a pull request carries the tree
    assert (kind.endpoint is not None) == caps.chat  # the kinds with an HTTP endpoint to check


@pytest.mark.parametrize(("name", "table", "context"), list(_params()))
def test_kind_accepts_its_example(name, table, context):
    config = _load(table)
    assert type(config) is KINDS[name].config
    if KINDS[name].capabilities.needs_tree:
        assert context == "tree"
    assert preflight(config, context) is None
    assert preflight(config, context, keys=False) is None
    reviewer = make_reviewer(config)
    assert isinstance(reviewer, KINDS[name].adapter)
    asyncio.run(reviewer.aclose())


@pytest.mark.parametrize(("name", "table", "context", "problem"), list(_params(refused=True)))
def test_kind_refuses_its_example(name, table, context, problem):
    found = preflight(_load(table), context)
    assert found is not None and problem in found, found
    assert "\n" not in found  # one line, as the CLI prints it
