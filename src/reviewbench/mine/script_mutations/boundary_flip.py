"""boundary_flip: an ordering comparison gains or loses its equality (``<=`` ↔ ``<``)."""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register

__all__ = ["BoundaryFlip", "examples"]

_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}


@register
class BoundaryFlip(ScriptOperator):
    name = "boundary_flip"
    severity = Severity.HIGH
    hint_terms = ("off-by-one", "boundary", "comparison", "inclusive")
    summary = "a comparison boundary was flipped"
    effect = "the value at the boundary now falls on the wrong side of the comparison, an off-by-one at the edge"
    node_types = frozenset({"binary_expression"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        op = node.child_by_field_name("operator")
        if op is not None and op.type in _FLIP:
            yield self.site(op.start_byte, op.end_byte, _FLIP[op.type], f"`{op.type}` became `{_FLIP[op.type]}`", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function fits(n, max) {\n  return n <= max;\n}\n", "function fits(n, max) {\n  return n < max;\n}\n"),
               ("const big = (a) => a.length > 3;\n", "const big = (a) => a.length >= 3;\n")],
        unchanged=["const LIMIT = a < b;\n", "function f(a, b) {\n  return a === b;\n}\n"],
    )
