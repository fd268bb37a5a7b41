"""JavaScript and TypeScript mutation operators: one module per operator, each with ``examples()``.

They carry the Python operators' names and labels where the defect is the same
(``guard_deletion``, ``boundary_flip``…) and add the ones JavaScript has its own way:
``drop_await`` and ``loose_equality``. A new operator is one module here plus its import
below; ``tests/mine/test_script_operators.py`` picks it up through its ``examples()``.
"""

from __future__ import annotations

import importlib

from . import (  # noqa: F401 - imported to register
    boundary_flip,
    cleanup_removal,
    drop_await,
    drop_return,
    guard_deletion,
    loose_equality,
    negate_condition,
    off_by_one,
    operator_swap,
    statement_swap,
    wrong_argument,
)
from ._base import (
    FUNCTIONS,
    ParsedScript,
    ScriptExamples,
    ScriptOperator,
    ScriptSite,
    register,
    registry,
    text_of,
)

__all__ = ["FUNCTIONS", "ParsedScript", "ScriptExamples", "ScriptOperator", "ScriptSite", "examples_of", "register",
           "registry", "text_of"]


def examples_of(operator: type[ScriptOperator]) -> ScriptExamples:
    """The ``examples()`` of the module defining ``operator``."""
    return importlib.import_module(operator.__module__).examples()
