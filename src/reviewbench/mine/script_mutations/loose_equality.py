"""loose_equality: ``===`` becomes ``==`` (``!==``, ``!=``) where coercion changes the answer:
against ``null``, ``undefined``, ``0``, ``''``, ``true`` or ``false`` (``0 == ''``, ``null ==
undefined``). Against anything else the loose test usually agrees, and the mutant is a dud."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["LooseEquality", "examples"]

_LOOSE = {"===": "==", "!==": "!="}
_COERCIBLE = frozenset({"null", "undefined", "0", "''", '""', "true", "false"})


@register
class LooseEquality(ScriptOperator):
    name = "loose_equality"
    severity = Severity.MED
    hint_terms = ("loose equality", "coercion", "strict equality", "==", "type")
    summary = "a strict comparison became a loose one"
    effect = "the comparison now coerces its operands, so values such as null and undefined, or 0 and '', compare equal"
    node_types = frozenset({"binary_expression"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        op = node.child_by_field_name("operator")
        if op is None or op.type not in _LOOSE:
            return
        sides = {text_of(node.child_by_field_name("left")), text_of(node.child_by_field_name("right"))}
        if sides & _COERCIBLE:
            yield self.site(op.start_byte, op.end_byte, _LOOSE[op.type], f"`{op.type}` became `{_LOOSE[op.type]}`", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function none(x) {\n  return x === null;\n}\n", "function none(x) {\n  return x == null;\n}\n"),
               ("function some(n) {\n  if (n !== 0) return n;\n}\n", "function some(n) {\n  if (n != 0) return n;\n}\n")],
        unchanged=["function f(a, b) {\n  return typeof a === 'string';\n}\n", "const X = y === null;\n"],
    )
