"""negate_condition: the test of an ``if``/``while``/ternary is inverted (``!ready``, ``x !== y``)."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["NegateCondition", "examples"]

_OPPOSITE = {"===": "!==", "!==": "===", "==": "!=", "!=": "=="}
_ATOMS = frozenset({"identifier", "member_expression", "call_expression", "subscript_expression",
                    "parenthesized_expression", "this", "true", "false"})  # fmt: skip


def negated(test: tree_sitter.Node) -> str | None:
    """The opposite test as a person writes it."""
    if test.type == "unary_expression" and text_of(test.child_by_field_name("operator")) == "!":
        inner = test.child_by_field_name("argument")
        if inner is not None and text_of(inner).startswith("!"):
            return None  # `!!x`: leave double negations alone
        return text_of(inner) if inner is not None else None
    if test.type == "binary_expression":
        op = test.child_by_field_name("operator")
        if op is not None and op.type in _OPPOSITE:
            text = text_of(test)
            cut = op.start_byte - test.start_byte
            return text[:cut] + _OPPOSITE[op.type] + text[cut + len(op.type):]
        return f"!({text_of(test)})"
    if test.type in _ATOMS:
        return f"!{text_of(test)}"
    return None


@register
class NegateCondition(ScriptOperator):
    name = "negate_condition"
    severity = Severity.HIGH
    hint_terms = ("inverted condition", "negated", "condition", "logic")
    summary = "a condition was inverted"
    effect = "the branch now runs when it should not, and is skipped when it should run"
    node_types = frozenset({"if_statement", "while_statement", "ternary_expression"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        test = node.child_by_field_name("condition")
        if test is not None and test.type == "parenthesized_expression" and test.named_child_count == 1:
            test = test.named_children[0]
        if test is None or test.type == "sequence_expression":
            return
        opposite = negated(test)
        if opposite is not None:
            yield self.site(test.start_byte, test.end_byte, opposite,
                            f"inverted the condition `{text_of(test)}`", test)  # fmt: skip


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[
            ("function f(user) {\n  if (!user) {\n    return null;\n  }\n  return user.id;\n}\n",
             "function f(user) {\n  if (user) {\n    return null;\n  }\n  return user.id;\n}\n"),
            ("function f(a, b) {\n  while (a !== b) a++;\n}\n", "function f(a, b) {\n  while (a === b) a++;\n}\n"),
            ("const g = (x) => x.ok ? 1 : 2;\n", "const g = (x) => !x.ok ? 1 : 2;\n"),
        ],
        unchanged=["if (ready) start();\n", "function f(x) {\n  if (!!x) return 1;\n}\n"],
    )
