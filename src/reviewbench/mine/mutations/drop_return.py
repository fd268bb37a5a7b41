"""drop_return: ``return f(x)`` becomes a bare ``f(x)``; the caller gets None."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["DropReturn", "examples"]


@register
class DropReturn(Operator):
    name = "drop_return"
    severity = Severity.HIGH
    hint_terms = ("missing return", "return value", "returns None")
    summary = "a return value was dropped"
    effect = "the function no longer returns that value, so its callers get None instead"

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        call = value.expression if isinstance(value, cst.Await) else value
        if not isinstance(call, cst.Call):
            return  # a bare `x` statement would look like what it is: a leftover
        code = cst.Module([]).code_for_node(value)  # type: ignore[arg-type]
        self.propose(node, cst.Expr(value=value, semicolon=node.semicolon), f"dropped `return` before `{code}`")  # type: ignore[arg-type]


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def f(x):\n    return g(x)\n", "def f(x):\n    g(x)\n"),
            ("async def f(x):\n    if x:\n        return await g(x)\n    return 1\n",
             "async def f(x):\n    if x:\n        await g(x)\n    return 1\n"),
        ],
        unchanged=["def f(x):\n    return x + 1\n", "def f(x):\n    return\n"],
    )
