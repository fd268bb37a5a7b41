"""off_by_one: an integer constant in a comparison, an index or ``± n`` moves by one."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["OffByOne", "examples"]

_COMPARE = frozenset({"<", "<=", ">", ">=", "===", "!==", "==", "!=", "+", "-"})


def _small_integer(node: tree_sitter.Node) -> int | None:
    text = text_of(node)
    return int(text) if node.type == "number" and text.isdigit() and len(text) <= 6 else None


@register
class OffByOne(ScriptOperator):
    name = "off_by_one"
    severity = Severity.MED
    hint_terms = ("off-by-one", "boundary", "index", "fencepost")
    summary = "an integer constant is off by one"
    effect = "a count, index or limit computed from this constant is now wrong by one"
    node_types = frozenset({"number"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        value = _small_integer(node)
        parent = node.parent
        if value is None or parent is None:
            return
        if parent.type == "subscript_expression" and parent.child_by_field_name("index") == node or parent.type == "binary_expression" and text_of(parent.child_by_field_name("operator")) in _COMPARE:
            pass
        else:
            return
        moved = value + 1 if value == 0 or parent.type == "subscript_expression" else value - 1
        yield self.site(node.start_byte, node.end_byte, str(moved), f"`{value}` became `{moved}`", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function last(a) {\n  return a[a.length - 1];\n}\n", "function last(a) {\n  return a[a.length - 0];\n}\n"),
               ("function head(a) {\n  return a[0];\n}\n", "function head(a) {\n  return a[1];\n}\n"),
               ("function few(a) {\n  return a.length < 3;\n}\n", "function few(a) {\n  return a.length < 2;\n}\n")],
        unchanged=["const X = a[0];\n", "function f() {\n  return g(1, 2);\n}\n"],
    )
