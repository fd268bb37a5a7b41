"""Python mutation operators: one module per operator, each with ``examples()``.

Importing this package registers every operator; :func:`registry` lists them by name.
A new operator is one module here plus its import below; the shared parametrised test
(``tests/mine/test_operators.py``) picks it up through its ``examples()``.
"""

from __future__ import annotations

import importlib

from . import (  # noqa: F401 - imported to register
    boundary_flip,
    broaden_except,
    cleanup_removal,
    drop_return,
    guard_deletion,
    negate_condition,
    off_by_one,
    operator_swap,
    statement_swap,
    wrong_argument,
)
from ._base import (
    Examples,
    Operator,
    ParsedModule,
    Site,
    register,
    registry,
    remove_statement,
    simple_statement,
)

__all__ = ["Examples", "Operator", "ParsedModule", "Site", "examples_of", "register", "registry", "remove_statement",
           "simple_statement"]


def examples_of(operator: type[Operator]) -> Examples:
    """The ``examples()`` of the module defining ``operator``."""
    return importlib.import_module(operator.__module__).examples()
