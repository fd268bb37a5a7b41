"""operator_swap: one operator becomes its counterpart (``+``/``-``, ``and``/``or``, ``==``/``!=``)."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["OperatorSwap", "examples"]

_BINARY = {cst.Add: (cst.Subtract, "+", "-"), cst.Subtract: (cst.Add, "-", "+")}
_AUG = {cst.AddAssign: (cst.SubtractAssign, "+=", "-="), cst.SubtractAssign: (cst.AddAssign, "-=", "+=")}
_BOOL = {cst.And: (cst.Or, "and", "or"), cst.Or: (cst.And, "or", "and")}
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)


def _stringy(node: cst.BaseExpression) -> bool:
    """A string, or a ``+`` chain holding one: concatenation, where ``-`` is no plausible slip."""
    if isinstance(node, _STRINGS):
        return True
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) and (
        _stringy(node.left) or _stringy(node.right)
    )


def _around(op: cst.CSTNode) -> dict[str, cst.BaseParenthesizableWhitespace]:
    return {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}  # type: ignore[attr-defined]


def _compare(op: cst.BaseCompOp) -> tuple[cst.BaseCompOp, str, str] | None:
    before, after = op.whitespace_before, op.whitespace_after  # type: ignore[attr-defined]
    if isinstance(op, cst.Equal):
        return cst.NotEqual(whitespace_before=before, whitespace_after=after), "==", "!="
    if isinstance(op, cst.NotEqual):
        return cst.Equal(whitespace_before=before, whitespace_after=after), "!=", "=="
    if isinstance(op, cst.Is):
        return cst.IsNot(whitespace_before=before, whitespace_after=after), "is", "is not"
    if isinstance(op, cst.IsNot):
        return cst.Is(whitespace_before=before, whitespace_after=after), "is not", "is"
    return None


@register
class OperatorSwap(Operator):
    name = "operator_swap"
    severity = Severity.HIGH
    hint_terms = ("wrong operator", "operator", "sign", "logic")
    summary = "an operator was replaced by its counterpart"
    effect = "the expression now computes a different result with the wrong operator"

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        swap = _BINARY.get(type(node.operator))
        if swap is None or _stringy(node.left) or _stringy(node.right):
            return
        cls, old, new = swap
        self.propose(node, node.with_changes(operator=cls(**_around(node.operator))),
                     f"`{old}` became `{new}`", at=node.operator)  # fmt: skip

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        swap = _AUG.get(type(node.operator))
        if swap is None or isinstance(node.value, _STRINGS):
            return
        cls, old, new = swap
        self.propose(node, node.with_changes(operator=cls(**_around(node.operator))), f"`{old}` became `{new}`")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        cls, old, new = _BOOL[type(node.operator)]
        self.propose(node, node.with_changes(operator=cls(**_around(node.operator))),
                     f"`{old}` became `{new}`", at=node.operator)  # fmt: skip

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        swap = _compare(node.operator)
        if swap is not None:
            op, old, new = swap
            self.propose(node, node.with_changes(operator=op), f"`{old}` became `{new}`")


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def f(a, b):\n    return a + b\n", "def f(a, b):\n    return a - b\n"),
            ("def f(a, b):\n    return a and b\n", "def f(a, b):\n    return a or b\n"),
            ("def f(a, b):\n    return a == b\n", "def f(a, b):\n    return a != b\n"),
            ("def f(a):\n    return a is None\n", "def f(a):\n    return a is not None\n"),
            ("def f(n):\n    n -= 1\n    return n\n", "def f(n):\n    n += 1\n    return n\n"),
        ],
        unchanged=["def f(a):\n    return 'x' + a + a * 2\n", "def f(a):\n    return a < 1\n"],
    )
