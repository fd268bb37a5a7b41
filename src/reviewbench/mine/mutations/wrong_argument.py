"""wrong_argument: a call gets a plausible but wrong argument.

Two adjacent positional arguments of the same kind trade places (``copy(src, dst)`` →
``copy(dst, src)``), or a boolean flag is passed the other way. Both type-check and read
naturally, which is what makes them hard to review.
"""

from __future__ import annotations

import libcst as cst

from ...records import Severity
from ._base import Examples, Operator, register

__all__ = ["WrongArgument", "examples"]

# Swapping the arguments of these changes nothing.
_SYMMETRIC = frozenset({"min", "max", "print", "set", "frozenset", "hash", "id", "any", "all"})


def _kind(value: cst.BaseExpression) -> str | None:
    for kind, cls in (("name", cst.Name), ("attribute", cst.Attribute), ("int", cst.Integer),
                      ("float", cst.Float), ("string", cst.SimpleString)):  # fmt: skip
        if isinstance(value, cls):
            if kind == "name" and value.value in ("None", "True", "False"):  # type: ignore[attr-defined]
                return None
            return kind
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


@register
class WrongArgument(Operator):
    name = "wrong_argument"
    severity = Severity.HIGH
    hint_terms = ("argument", "wrong value", "swapped arguments", "parameter order")
    summary = "a call received a wrong argument"
    effect = "the call now receives the wrong value for a parameter, so it does something other than intended"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        args = list(node.args)
        if callee not in _SYMMETRIC:
            for i in range(len(args) - 1):
                a, b = args[i], args[i + 1]
                if a.keyword or b.keyword or a.star or b.star:
                    continue
                kind = _kind(a.value)
                if kind is None or kind != _kind(b.value) or _code(a.value) == _code(b.value):
                    continue
                swapped = list(args)
                swapped[i], swapped[i + 1] = a.with_changes(value=b.value), b.with_changes(value=a.value)
                self.propose(node, node.with_changes(args=swapped),
                             f"swapped `{_code(a.value)}` and `{_code(b.value)}` in the call to `{callee}`")  # fmt: skip
        for i, arg in enumerate(args):
            value = arg.value
            if isinstance(value, cst.Name) and value.value in ("True", "False") and not arg.star:
                flipped = list(args)
                other = "False" if value.value == "True" else "True"
                flipped[i] = arg.with_changes(value=value.with_changes(value=other))
                self.propose(node, node.with_changes(args=flipped),
                             f"passed `{other}` instead of `{value.value}` to `{callee}`")  # fmt: skip


def examples() -> Examples:
    return Examples(
        pairs=[
            ("def move(src, dst):\n    return copy(src, dst)\n", "def move(src, dst):\n    return copy(dst, src)\n"),
            ("def f(x):\n    return sorted(x, reverse=True)\n", "def f(x):\n    return sorted(x, reverse=False)\n"),
            ("def f(s):\n    return s.replace('a', 'b')\n", "def f(s):\n    return s.replace('b', 'a')\n"),
        ],
        unchanged=[
            "def f(a, b):\n    return max(a, b) + g(a) + h(a, 1) + k(a, a)\n",
            "def f(a, b):\n    return g(*a, *b) + h(x=a, y=b)\n",
        ],
    )
