"""wrong_argument: two adjacent arguments of the same kind trade places (``copy(src, dst)`` →
``copy(dst, src)``), or a boolean argument is passed the other way."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import tree_sitter

from ...records import Severity
from ._base import ParsedScript, ScriptExamples, ScriptOperator, ScriptSite, register, text_of

__all__ = ["WrongArgument", "examples"]

_SWAPPABLE = frozenset({"identifier", "member_expression", "number", "string"})


@register
class WrongArgument(ScriptOperator):
    name = "wrong_argument"
    severity = Severity.HIGH
    hint_terms = ("argument", "wrong value", "swapped arguments", "parameter order")
    summary = "a call received a wrong argument"
    effect = "the call now receives the wrong value for a parameter, so it does something other than intended"
    node_types = frozenset({"arguments"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        args = [c for c in node.named_children if c.type != "comment"]
        for a, b in itertools.pairwise(args):
            if a.type == b.type and a.type in _SWAPPABLE and text_of(a) != text_of(b):
                between = script.data[a.end_byte : b.start_byte].decode("utf-8", "replace")
                if between.strip() == ",":
                    yield self.site(a.start_byte, b.end_byte, f"{text_of(b)}{between}{text_of(a)}",
                                    f"swapped the arguments `{text_of(a)}` and `{text_of(b)}`", node)  # fmt: skip
        for arg in args:
            if arg.type in ("true", "false"):
                flipped = "false" if arg.type == "true" else "true"
                yield self.site(arg.start_byte, arg.end_byte, flipped, f"passed `{flipped}` for `{arg.type}`", node)


def examples() -> ScriptExamples:
    return ScriptExamples(
        pairs=[("function f(src, dst) {\n  copy(src, dst);\n}\n", "function f(src, dst) {\n  copy(dst, src);\n}\n"),
               ("function f(x) {\n  return g(x, true);\n}\n", "function f(x) {\n  return g(x, false);\n}\n")],
        unchanged=["copy(src, dst);\n", "function f(a) {\n  return g(a, 'x' + a);\n}\n"],
    )
