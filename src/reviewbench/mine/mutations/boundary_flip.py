"""boundary_flip: an ordering comparison gains or loses its equality (``<=`` ↔ ``<``)."""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["BoundaryFlip", "examples"]

_FLIP: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
_TEXT = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}


@register
class BoundaryFlip(Operator):
    name = "boundary_flip"
    severity = Severity.HIGH
    hint_terms = ("off-by-one", "boundary", "comparison", "inclusive")
    summary = "a comparison boundary was flipped"
    effect = "the value at the boundary now falls on the wrong side of the comparison, an off-by-one at the edge"

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        op = node.operator
        flipped = _FLIP.get(type(op))
        if flipped is None:
            return
        new_op = flipped(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)  # type: ignore[call-arg,attr-defined]
        self.propose(node, node.with_changes(operator=new_op),
                     f"`{_TEXT[type(op)]}` became `{_TEXT[flipped]}`")  # fmt: skip


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def inside(i, n):\n    return 0 <= i < n\n", "def inside(i, n):\n    return 0 < i < n\n"),
            ("def inside(i, n):\n    return 0 <= i < n\n", "def inside(i, n):\n    return 0 <= i <= n\n"),
            ("def big(x):\n    if x >= 10:\n        return True\n    return False\n",
             "def big(x):\n    if x > 10:\n        return True\n    return False\n"),
        ],
        unchanged=["def same(a, b):\n    return a == b or a in b\n", "LIMIT = 1 if X < 2 else 3\n"],
    )
