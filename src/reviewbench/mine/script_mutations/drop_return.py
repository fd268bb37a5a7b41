"""drop_return: ``return f(x);`` becomes a bare ``f(x);``; the caller gets ``undefined``."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["DropReturn", "examples"]

_VALUES = frozenset({"call_expression", "await_expression", "new_expression"})


@register
class DropReturn(ScriptOperator):
    name = "drop_return"
    severity = Severity.HIGH
    hint_terms = ("missing return", "return value", "returns undefined")
    summary = "a return value was dropped"
    effect = "the function no longer returns that value, so its callers get undefined instead"
    node_types = frozenset({"return_statement"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        value = node.named_children[0] if node.named_child_count == 1 else None
        if value is None or value.type not in _VALUES or node.parent is None or node.parent.type != "statement_block":
            return
        keyword = node.children[0]
        after = value.start_byte
        yield self.site(keyword.start_byte, after, "", f"`return {text_of(value)}` no longer returns", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function load(p) {\n  return read(p);\n}\n", "function load(p) {\n  read(p);\n}\n")],
        unchanged=["function f(a) {\n  return a;\n}\n", "const f = (p) => read(p);\n"],
    )
