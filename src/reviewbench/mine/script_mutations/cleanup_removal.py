"""cleanup_removal: a cleanup call goes missing (``socket.close()``, ``clearTimeout(timer)``,
``el.removeEventListener(…)``). Leaks rarely fail a test at once: a reviewer is needed."""

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

__all__ = ["CleanupRemoval", "examples"]

CLEANUPS = frozenset({
    "close", "removeEventListener", "removeListener", "removeAllListeners", "off", "clearTimeout",
    "clearInterval", "clearImmediate", "cancelAnimationFrame", "unsubscribe", "dispose", "destroy",
    "release", "releaseLock", "disconnect", "abort", "unref", "end", "unlink", "unlinkSync", "closeSync",
    "revokeObjectURL", "terminate", "finalize", "cleanup", "restore", "reset",
})  # fmt: skip


def _callee(stmt: tree_sitter.Node) -> str | None:
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
    if expr is not None and expr.type == "await_expression" and expr.named_child_count:
        expr = expr.named_children[0]
    if expr is None or expr.type != "call_expression":
        return None
    function = expr.child_by_field_name("function")
    if function is not None and function.type == "member_expression":
        function = function.child_by_field_name("property")
    return text_of(function) if function is not None else None


@register
class CleanupRemoval(ScriptOperator):
    name = "cleanup_removal"
    severity = Severity.MED
    hint_terms = ("leak", "cleanup", "close", "resource", "finally", "listener")
    summary = "a cleanup call was removed"
    effect = "the resource is no longer closed or released on this path, so it leaks"
    node_types = frozenset({"statement_block"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        body = [c for c in node.named_children if c.type != "comment"]
        for index, stmt in enumerate(body):
            name = _callee(stmt)
            if name in CLEANUPS and (span := statement_lines(script, node, index)):
                yield self.site(*span, "", f"removed the cleanup call `{text_of(stmt).rstrip(';')}`", stmt)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[
            ("function stop(t) {\n  clearTimeout(t.timer);\n  t.done = true;\n}\n",
             "function stop(t) {\n  t.done = true;\n}\n"),
            ("async function read(f) {\n  const d = await f.read();\n  await f.close();\n  return d;\n}\n",
             "async function read(f) {\n  const d = await f.read();\n  return d;\n}\n"),
        ],
        unchanged=["function f(s) {\n  s.close();\n}\n", "function f(s) {\n  s.open();\n  return s;\n}\n"],
    )
