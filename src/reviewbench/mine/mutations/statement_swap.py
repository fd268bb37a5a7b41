"""statement_swap: two dependent statements trade places, so one reads a value too early.

Only pairs where the second statement reads a name (or ``obj.attr``) the first writes:
swapping independent statements changes nothing and would make a dud mutant.
"""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register, simple_statement

__all__ = ["StatementSwap", "dotted", "reads", "writes"]

_NOT_SWAPPED = (cst.Return, cst.Raise, cst.Pass, cst.Continue, cst.Break, cst.Global,
                cst.Nonlocal, cst.Import, cst.ImportFrom)  # fmt: skip


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a name or an attribute chain on a name, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _targets(small: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression]
    if isinstance(small, cst.Assign):
        found = [t.target for t in small.targets]
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        found = [small.target] if not isinstance(small, cst.AnnAssign) or small.value else []
    else:
        return []
    flat: list[cst.BaseExpression] = []
    while found:
        target = found.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            found.extend(e.value for e in target.elements)
        else:
            flat.append(target)
    return flat


def writes(small: cst.BaseSmallStatement) -> set[str]:
    """Names and attribute chains a simple statement assigns."""
    return {name for t in _targets(small) if (name := dotted(t))}


class _Reads(cst.CSTVisitor):
    def __init__(self, skip: set[int]) -> None:
        super().__init__()
        self.skip = skip
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.skip:
            self.found.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if id(node) not in self.skip and (name := dotted(node)):
            self.found.add(name)
        node.value.visit(self)
        return False  # ``.attr`` itself is not a name being read


def reads(small: cst.BaseSmallStatement) -> set[str]:
    """Names and attribute chains a simple statement reads (plain assignment targets excluded)."""
    skip = set()
    if not isinstance(small, cst.AugAssign):  # ``x += 1`` reads x
        skip = {id(t) for t in _targets(small)}
    visitor = _Reads(skip)
    small.visit(visitor)
    return visitor.found


@register
class StatementSwap(Operator):
    name = "statement_swap"
    severity = Severity.HIGH
    hint_terms = ("order", "ordering", "before", "stale value", "uninitialized")
    summary = "two dependent statements were swapped"
    effect = "the value is now read before it is assigned, so the code uses a stale or missing value"

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        body = node.body
        for index in range(len(body) - 1):
            first, second = body[index], body[index + 1]
            one, two = simple_statement(first), simple_statement(second)
            if one is None or two is None or isinstance(one, _NOT_SWAPPED) or isinstance(two, _NOT_SWAPPED):
                continue
            if any(line.comment for line in second.leading_lines):  # type: ignore[attr-defined]
                continue  # the comment would end up describing the other statement
            if self.position(first)[0] != self.position(first)[1] or self.position(second)[0] != self.position(second)[1]:
                continue  # one line each, so the diff stays two lines
            shared = writes(one) & reads(two)
            if not shared:
                continue
            swapped = list(body)
            swapped[index] = second.with_changes(leading_lines=first.leading_lines)  # type: ignore[attr-defined]
            swapped[index + 1] = first.with_changes(leading_lines=second.leading_lines)  # type: ignore[attr-defined]
            self.propose(node, node.with_changes(body=swapped),
                         f"moved the use of `{min(shared)}` above its assignment", at=first)  # fmt: skip


def examples() -> Examples:
    return Examples(
        pairs=[
            (
                "def area(w, h):\n    size = w * h\n    half = size / 2\n    return half\n",
                "def area(w, h):\n    half = size / 2\n    size = w * h\n    return half\n",
            ),
            (
                "class C:\n    def reset(self):\n        self.items = []\n        self.count = len(self.items)\n",
                "class C:\n    def reset(self):\n        self.count = len(self.items)\n        self.items = []\n",
            ),
            (
                "def step(a):\n    a += 1\n    b = a * 2\n    return b\n",
                "def step(a):\n    b = a * 2\n    a += 1\n    return b\n",
            ),
        ],
        unchanged=[
            "def f(a, b):\n    x = a + 1\n    y = b + 1\n    return x, y\n",
            "def f(a):\n    x = a + 1\n    return x\n",
            "def f(a):\n    x = a\n    # uses x\n    y = x\n",
        ],
    )
