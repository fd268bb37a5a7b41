"""statement_swap: two dependent statements trade places, so one reads a value too early.

Only pairs where the second statement reads a name (or ``obj.prop``) the first writes:
swapping independent statements changes nothing and would make a dud mutant.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["StatementSwap", "examples", "reads", "writes"]

_ASSIGN = frozenset({"assignment_expression", "augmented_assignment_expression"})


def writes(stmt: tree_sitter.Node) -> set[str]:
    """Names and ``obj.prop`` paths a simple statement assigns or declares."""
    if stmt.type in ("lexical_declaration", "variable_declaration"):
        return {text_of(d.child_by_field_name("name")) for d in stmt.named_children if d.type == "variable_declarator"}
    if stmt.type == "expression_statement" and stmt.named_child_count == 1:
        expr = stmt.named_children[0]
        if expr.type in _ASSIGN:
            return {text_of(expr.child_by_field_name("left"))}
        if expr.type == "update_expression":
            return {text_of(expr.child_by_field_name("argument"))}
    return set()


def reads(node: tree_sitter.Node) -> set[str]:
    """Every identifier and ``obj.prop`` path used in ``node``."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "member_expression", "shorthand_property_identifier"):
            found.add(text_of(n))
        stack.extend(n.named_children)
    return found


def _simple(stmt: tree_sitter.Node) -> bool:
    return stmt.type in ("lexical_declaration", "variable_declaration", "expression_statement") and (
        stmt.start_point[0] == stmt.end_point[0])


@register
class StatementSwap(ScriptOperator):
    name = "statement_swap"
    severity = Severity.HIGH
    hint_terms = ("order", "ordering", "before", "stale value", "uninitialized")
    summary = "two dependent statements were swapped"
    effect = "the value is now read before it is assigned, so the code uses a stale or missing value"
    node_types = frozenset({"statement_block"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        body = list(node.named_children)
        for first, second in itertools.pairwise(body):
            if not (_simple(first) and _simple(second)) or second.start_point[0] != first.end_point[0] + 1:
                continue
            written = writes(first) - {""}
            if not written or not written & reads(second):
                continue
            one, two = script.whole_lines(first), script.whole_lines(second)
            if one is None or two is None:
                continue
            a, b = script.data[one[0] : one[1]], script.data[two[0] : two[1]]
            if not b.endswith(b"\n"):
                continue
            yield self.site(one[0], two[1], (b + a).decode("utf-8", "replace"),
                            f"moved `{text_of(second)}` above `{text_of(first)}`", first)  # fmt: skip


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function f(a) {\n  let n = a.length;\n  total += n;\n  return total;\n}\n",
                "function f(a) {\n  total += n;\n  let n = a.length;\n  return total;\n}\n")],
        unchanged=["function f(a) {\n  const x = 1;\n  const y = 2;\n  return x + y;\n}\n",
                   "let n = 1;\ntotal += n;\n"],
    )
