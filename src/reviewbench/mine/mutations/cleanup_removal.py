"""cleanup_removal: a cleanup call goes missing (``f.close()``, a line of a ``finally``).

Leaks rarely fail a test at once, so few of these mutants are observed; they are the
bugs a reviewer is most needed for.
"""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register, remove_statement, simple_statement

__all__ = ["CLEANUP_CALLS", "CleanupRemoval", "examples"]

#: Method or function names that release something.
CLEANUP_CALLS = frozenset({
    "close", "aclose", "release", "unlink", "shutdown", "rmtree", "cleanup", "terminate",
    "disconnect", "unlock",
})  # fmt: skip


def _callee(small: cst.BaseSmallStatement | None) -> str | None:
    """Name of the function a call statement calls (``obj.close()`` → ``close``)."""
    if not isinstance(small, cst.Expr):
        return None
    value = small.value.expression if isinstance(small.value, cst.Await) else small.value
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


@register
class CleanupRemoval(Operator):
    name = "cleanup_removal"
    severity = Severity.MED
    hint_terms = ("leak", "cleanup", "close", "resource", "finally")
    summary = "a cleanup call was removed"
    effect = "the resource is no longer closed or released on this path, so it leaks"

    def __init__(self) -> None:
        super().__init__()
        self._finally_bodies: set[int] = set()

    def visit_Finally(self, node: cst.Finally) -> None:
        self._finally_bodies.add(id(node.body))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        in_finally = id(node) in self._finally_bodies
        for index, stmt in enumerate(node.body):
            name = _callee(simple_statement(stmt))
            if name is None or not (in_finally or name in CLEANUP_CALLS):
                continue
            changed = remove_statement(node, index)
            if changed is not None:
                where = " in `finally`" if in_finally else ""
                self.propose(node, changed, f"removed the call to `{name}()`{where}", at=stmt)


def examples() -> Examples:
    return Examples(
        pairs=[
            (
                "def read(path):\n    f = open(path)\n    data = f.read()\n    f.close()\n    return data\n",
                "def read(path):\n    f = open(path)\n    data = f.read()\n    return data\n",
            ),
            (
                ("def run(lock, job):\n    try:\n        job()\n    finally:\n        log('done')\n"
                 "        lock.release()\n"),
                "def run(lock, job):\n    try:\n        job()\n    finally:\n        lock.release()\n",
            ),
        ],
        unchanged=[
            "def f(x):\n    x.update()\n    return x\n",
            # The only statement of a block stays: removing it would leave no body.
            "def f(x):\n    try:\n        x()\n    finally:\n        x.close()\n",
        ],
    )
