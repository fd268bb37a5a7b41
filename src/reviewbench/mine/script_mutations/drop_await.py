"""drop_await: ``await`` goes missing, so a promise is used (or ignored) where its value was meant.

A forgotten ``await`` is the asynchronous bug JavaScript reviewers see most: the code
reads the same, the value is a pending promise, and errors escape the ``try``.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["DropAwait", "examples"]


@register
class DropAwait(ScriptOperator):
    name = "drop_await"
    severity = Severity.HIGH
    hint_terms = ("missing await", "await", "promise", "async", "race")
    summary = "an await was dropped"
    effect = "the code now goes on with a pending promise instead of its result, and its errors escape"
    node_types = frozenset({"await_expression"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        value = node.named_children[0] if node.named_child_count == 1 else None
        if value is None or value.type not in ("call_expression", "member_expression", "identifier"):
            return
        yield self.site(node.start_byte, value.start_byte, "", f"`await {text_of(value)}` lost its await", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("async function f(db) {\n  const row = await db.get(1);\n  return row.id;\n}\n",
                "async function f(db) {\n  const row = db.get(1);\n  return row.id;\n}\n")],
        unchanged=["async function f() {\n  return 1;\n}\n"],
    )
