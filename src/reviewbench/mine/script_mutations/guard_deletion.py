"""guard_deletion: an early-exit guard disappears (``if (!user) return;``)."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import (
    ParsedScript,
    ScriptExamples,
    ScriptOperator,
    ScriptSite,
    register,
    statement_lines,
    text_of,
)

__all__ = ["GuardDeletion", "examples"]

_EXITS = frozenset({"return_statement", "throw_statement", "continue_statement", "break_statement"})


def _is_guard(stmt: tree_sitter.Node) -> bool:
    """An ``if`` without ``else`` whose whole consequence is one return, throw, continue or break."""
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return False
    body = stmt.child_by_field_name("consequence")
    if body is not None and body.type == "statement_block":
        inner = [c for c in body.named_children if c.type != "comment"]
        body = inner[0] if len(inner) == 1 and len(body.named_children) == 1 else None
    return body is not None and body.type in _EXITS


@register
class GuardDeletion(ScriptOperator):
    name = "guard_deletion"
    severity = Severity.HIGH
    hint_terms = ("guard", "missing check", "early return", "validation")
    summary = "an early-exit guard clause was deleted"
    effect = "the early exit is gone, so the input it rejected now falls through into code that does not expect it"
    node_types = frozenset({"statement_block"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        body = [c for c in node.named_children if c.type != "comment"]
        for index, stmt in enumerate(body[:-1]):  # a guard is early: code must follow it
            if _is_guard(stmt) and (span := statement_lines(script, node, index)):
                test = text_of(stmt.child_by_field_name("condition"))
                yield self.site(*span, "", f"deleted the guard `if {test}`", stmt)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[
            ("function first(items) {\n  if (!items.length) return undefined;\n  return items[0];\n}\n",
             "function first(items) {\n  return items[0];\n}\n"),
            ("const check = (x) => {\n  if (x < 0)\n    throw new RangeError('x');\n  return x;\n};\n",
             "const check = (x) => {\n  return x;\n};\n"),
        ],
        unchanged=[
            "function f(x) {\n  const y = x;\n  if (x) return 1;\n}\n",
            "function f(x) {\n  if (x) return 1;\n  else x = 2;\n  return x;\n}\n",
            "function f(x) {\n  // why\n  if (x) return 1;\n  return 2;\n}\n",
            "if (X) throw new Error('no');\nconst Y = 1;\n",
        ],
    )
