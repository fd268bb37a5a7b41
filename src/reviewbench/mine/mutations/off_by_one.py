"""off_by_one: an integer constant in a comparison, index, slice or ``range()`` moves by one."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["OffByOne", "examples"]


def _value(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer) and node.value.replace("_", "").isdigit():
        return int(node.value.replace("_", ""))
    return None


@register
class OffByOne(Operator):
    name = "off_by_one"
    severity = Severity.MED
    hint_terms = ("off-by-one", "boundary", "index", "fencepost")
    summary = "an integer constant is off by one"
    effect = "a count, index or limit computed from this constant is now wrong by one"

    def _both(self, node: cst.BaseExpression, *, magnitude: bool = False) -> None:
        """Propose ``n + 1`` and ``n - 1`` (only ``+1`` for a negative constant's magnitude or 0)."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self._both(node.expression, magnitude=True)
        value = _value(node)
        if value is None:
            return
        sign = "-" if magnitude else ""
        for new in (value + 1, value - 1):
            if new < 0 or (magnitude and new == 0):
                continue
            self.propose(node, node.with_changes(value=str(new)), f"`{sign}{value}` became `{sign}{new}`")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._both(node.left)
        for target in node.comparisons:
            self._both(target.comparator)

    def visit_Slice(self, node: cst.Slice) -> None:
        for bound in (node.lower, node.upper):
            if bound is not None:
                self._both(bound)

    def visit_Index(self, node: cst.Index) -> None:
        self._both(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "range":
            for arg in node.args[:2]:
                if not arg.keyword and not arg.star:
                    self._both(arg.value)


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def f(x):\n    return len(x) > 0\n", "def f(x):\n    return len(x) > 1\n"),
            ("def f(x):\n    return x[1:]\n", "def f(x):\n    return x[2:]\n"),
            ("def f(x):\n    return x[:-1]\n", "def f(x):\n    return x[:-2]\n"),
            ("def f(x):\n    return x[3]\n", "def f(x):\n    return x[2]\n"),
            ("def f(n):\n    return list(range(1, n))\n", "def f(n):\n    return list(range(0, n))\n"),
        ],
        unchanged=["def f(x):\n    return x * 2 + g(3)\n", "def f(x):\n    return x[k] < y\n"],
    )
