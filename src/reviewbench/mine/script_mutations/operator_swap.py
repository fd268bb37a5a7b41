"""operator_swap: one operator becomes its counterpart (``+``/``-``, ``&&``/``||``, ``*``/``/``).

``+`` next to a string or template literal is concatenation; it is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register

__all__ = ["OperatorSwap", "examples"]

_SWAP = {"+": "-", "-": "+", "&&": "||", "||": "&&", "*": "/", "/": "*"}
_TEXT = frozenset({"string", "template_string"})


@register
class OperatorSwap(ScriptOperator):
    name = "operator_swap"
    severity = Severity.HIGH
    hint_terms = ("wrong operator", "operator", "sign", "logic")
    summary = "an operator was replaced by its counterpart"
    effect = "the expression now computes a different result with the wrong operator"
    node_types = frozenset({"binary_expression"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        op = node.child_by_field_name("operator")
        if op is None or op.type not in _SWAP:
            return
        sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
        if op.type in ("+", "-") and any(s is None or s.type in _TEXT or s.type == "binary_expression" for s in sides):
            return  # concatenation, or a chain whose meaning a swap may not change visibly
        yield self.site(op.start_byte, op.end_byte, _SWAP[op.type], f"`{op.type}` became `{_SWAP[op.type]}`", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function f(a, b) {\n  return a - b;\n}\n", "function f(a, b) {\n  return a + b;\n}\n"),
               ("function ok(a, b) {\n  return a && b;\n}\n", "function ok(a, b) {\n  return a || b;\n}\n")],
        unchanged=["function f(a) {\n  return 'n=' + a;\n}\n", "const X = 1 + 2;\n"],
    )
