"""negate_condition: the test of an ``if``/``elif``/``while`` is inverted, as a person would
write the opposite test (``x is not None``, ``key not in seen``, ``not ready``)."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["NegateCondition", "examples"]

# These bind looser than ``not`` and need parentheses to be negated whole.
_LOOSE = (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)


def _complement(op: cst.BaseCompOp) -> cst.BaseCompOp | None:
    """The operator a person would write for the opposite test (``is`` → ``is not``)."""
    around = {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}  # type: ignore[attr-defined]
    pairs = ((cst.Is, cst.IsNot), (cst.IsNot, cst.Is), (cst.Equal, cst.NotEqual), (cst.NotEqual, cst.Equal),
             (cst.In, cst.NotIn), (cst.NotIn, cst.In), (cst.LessThan, cst.GreaterThanEqual),
             (cst.GreaterThanEqual, cst.LessThan), (cst.GreaterThan, cst.LessThanEqual),
             (cst.LessThanEqual, cst.GreaterThan))  # fmt: skip
    for old, new in pairs:
        if isinstance(op, old):
            return new(**around)
    return None


def negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """The opposite test as a person would write it: ``x is not None`` for ``x is None``,
    ``ready`` for ``not ready``, otherwise ``not test``."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        complement = _complement(test.comparisons[0].operator)
        if complement is not None:
            return test.with_changes(comparisons=[test.comparisons[0].with_changes(operator=complement)])
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and not test.lpar:
        inner = test.expression
        if inner.lpar and not isinstance(inner, (*_LOOSE, cst.Tuple, cst.GeneratorExp)):
            inner = inner.with_changes(lpar=[], rpar=[])
        return inner
    if isinstance(test, _LOOSE) and not test.lpar:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=test)


@register
class NegateCondition(Operator):
    name = "negate_condition"
    severity = Severity.HIGH
    hint_terms = ("inverted condition", "negated", "condition", "logic")
    summary = "a condition was inverted"
    effect = "the branch now runs when it should not, and is skipped when it should run"

    def _propose(self, node: cst.If | cst.While) -> None:
        code = cst.Module([]).code_for_node(node.test)
        self.propose(node.test, negated(node.test), f"inverted the condition `{code}`")

    def visit_If(self, node: cst.If) -> None:
        self._propose(node)

    def visit_While(self, node: cst.While) -> None:
        if not (isinstance(node.test, cst.Name) and node.test.value == "True"):
            self._propose(node)


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def f(x):\n    if x > 1:\n        g()\n", "def f(x):\n    if x <= 1:\n        g()\n"),
            ("def f(x):\n    if x is None:\n        g()\n", "def f(x):\n    if x is not None:\n        g()\n"),
            ("def f(x):\n    if x < y < z:\n        g()\n", "def f(x):\n    if not x < y < z:\n        g()\n"),
            ("def f(x):\n    if not ready(x):\n        g()\n", "def f(x):\n    if ready(x):\n        g()\n"),
            ("def f(a, b):\n    while a and b:\n        g()\n", "def f(a, b):\n    while not (a and b):\n        g()\n"),
            ("def f(a):\n    if a:\n        g()\n    elif a.b:\n        h()\n",
             "def f(a):\n    if a:\n        g()\n    elif not a.b:\n        h()\n"),
        ],
        unchanged=["def f():\n    while True:\n        g()\n", "if DEBUG:\n    X = 1\n"],
    )
