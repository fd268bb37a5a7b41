"""guard_deletion: an early-exit guard clause disappears (``if not user: return``).

The commonest bug a tired reviewer misses: the check is gone and nothing looks wrong.
"""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register, remove_statement, simple_statement

__all__ = ["GuardDeletion", "examples"]

_EXITS = (cst.Return, cst.Raise, cst.Continue)


def _is_guard(stmt: cst.BaseStatement) -> bool:
    """An ``if`` without ``else`` whose whole body is one return, raise or continue."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    body = stmt.body
    if isinstance(body, cst.IndentedBlock):
        return len(body.body) == 1 and isinstance(simple_statement(body.body[0]), _EXITS)
    return len(body.body) == 1 and isinstance(body.body[0], _EXITS)  # a suite on the ``if`` line


@register
class GuardDeletion(Operator):
    name = "guard_deletion"
    severity = Severity.HIGH
    hint_terms = ("guard", "missing check", "early return", "validation")
    summary = "an early-exit guard clause was deleted"
    effect = "the early exit is gone, so the input it rejected now falls through into code that does not expect it"

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        # A guard is early: code must follow it in the same block.
        for index, stmt in enumerate(node.body[:-1]):
            if _is_guard(stmt):
                changed = remove_statement(node, index)
                if changed is not None:
                    test = cst.Module([]).code_for_node(stmt.test)  # type: ignore[attr-defined]
                    self.propose(node, changed, f"deleted the guard `if {test}:`", at=stmt)


def examples() -> Examples:
    return Examples(
        pairs=[
            (
                "def first(items):\n    if not items:\n        return None\n    return items[0]\n",
                "def first(items):\n    return items[0]\n",
            ),
            (
                ("def total(rows):\n    n = 0\n    for r in rows:\n        if r is None: continue\n"
                 "        n += r\n    return n\n"),
                "def total(rows):\n    n = 0\n    for r in rows:\n        n += r\n    return n\n",
            ),
            (
                "def check(x):\n    x = int(x)\n\n    if x < 0:\n        raise ValueError(x)\n    return x\n",
                "def check(x):\n    x = int(x)\n\n    return x\n",
            ),
        ],
        unchanged=[
            # The last statement is no early guard; an if with an else is a branch.
            "def f(x):\n    y = x\n    if x:\n        return 1\n",
            "def f(x):\n    if x:\n        return 1\n    else:\n        x = 2\n    return x\n",
            # A commented guard is left alone; module-level code is never mutated.
            "def f(x):\n    # why\n    if x:\n        return 1\n    return 2\n",
            "if X:\n    raise SystemExit\nY = 1\n",
        ],
    )
