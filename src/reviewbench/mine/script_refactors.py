"""Behaviour-preserving edits of JavaScript/TypeScript for control cases.

The same ordinary review-queue work as the Python refactors (:mod:`refactors`): extract
a returned expression into a named local, inline a local returned at once, reorder two
independent declarations, spread a call's arguments over lines; renaming a local is
:mod:`script_rename`'s job. Each is safe by its rules (on its class), and the ones marked
``same_tokens`` must read token for token as before. They reuse the script mutation
machinery (sites on a tree-sitter tree) but are not mutation operators: they are not
registered there, and validation must find the tests still passing.
"""

from __future__ import annotations

import itertools
import re
from abc import abstractmethod
from collections.abc import Iterator
from typing import ClassVar

import tree_sitter

from ..records import Severity
from .script_mutations import (
    FUNCTIONS,
    ParsedScript,
    ScriptExamples,
    ScriptOperator,
    ScriptSite,
    text_of,
)
from .script_mutations.statement_swap import reads, writes
from .script_rename import JS_RESERVED

__all__ = ["SCRIPT_REFACTORS", "ScriptRefactor", "script_refactor_examples"]

_WORD = re.compile(r"[A-Za-z_$][\w$]*")


class ScriptRefactor(ScriptOperator):
    """A behaviour-preserving edit; ``same_tokens`` ones may change only whitespace."""

    severity = Severity.LOW
    hint_terms = ()
    summary = ""
    same_tokens: ClassVar[bool] = False

    @staticmethod
    @abstractmethod
    def examples() -> ScriptExamples:
        """What the refactor must do, for the shared test."""


def _indent(script: ParsedScript, node: tree_sitter.Node) -> str:
    start = script.line_start(node.start_byte)
    return script.data[start : node.start_byte].decode("utf-8", "replace")


def _semicolon(node: tree_sitter.Node) -> str:
    return ";" if text_of(node).rstrip().endswith(";") else ""


def _fresh(script: ParsedScript, options: tuple[str, ...]) -> str | None:
    spelled = set(_WORD.findall(script.source))
    return next((o for o in options if o not in spelled and o not in JS_RESERVED), None)


def _function_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    parent = node.parent
    while parent is not None and parent.type not in FUNCTIONS:
        parent = parent.parent
    return parent


def _one_line(node: tree_sitter.Node) -> bool:
    return node.start_point[0] == node.end_point[0]


class ExtractLocal(ScriptRefactor):
    """``return f(x);`` → ``const result = f(x);`` then ``return result;``."""

    name = "extract_local"
    node_types = frozenset({"return_statement"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        value = node.named_children[0] if node.named_child_count == 1 else None
        if (value is None or value.type not in ("call_expression", "binary_expression", "new_expression")
                or not _one_line(node) or node.parent is None or node.parent.type != "statement_block"):  # fmt: skip
            return
        span = script.whole_lines(node)
        name = _fresh(script, ("result", "computed", "outcome", "value", "resolved"))
        if span is None or name is None:
            return
        indent, semi = _indent(script, node), _semicolon(node)
        text = f"{indent}const {name} = {text_of(value)}{semi}\n{indent}return {name}{semi}\n"
        yield self.site(*span, text, f"extracted `{text_of(value)}` into `{name}`", node)

    @staticmethod
    def examples() -> ScriptExamples:
        return ScriptExamples(
            pairs=[("function f(a) {\n  return g(a) + 1;\n}\n",
                    "function f(a) {\n  const result = g(a) + 1;\n  return result;\n}\n")],
            unchanged=["function f(a) {\n  return a;\n}\n"],
        )


class InlineLocal(ScriptRefactor):
    """``const x = expr;`` then ``return x;`` → ``return expr;``, when nothing else reads ``x``."""

    name = "inline_local"
    node_types = frozenset({"statement_block"})

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        body = list(node.named_children)
        function = _function_of(node) if node.parent is not None and node.parent.type not in FUNCTIONS else node.parent
        if function is None:
            return
        for first, second in itertools.pairwise(body):
            if first.type != "lexical_declaration" or first.named_child_count != 1 or second.type != "return_statement":
                continue
            declarator = first.named_children[0]
            name, value = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
            returned = second.named_children[0] if second.named_child_count == 1 else None
            if (name is None or value is None or returned is None or name.type != "identifier"
                    or text_of(returned) != text_of(name) or not _one_line(first) or not _one_line(second)):  # fmt: skip
                continue
            uses = [n for n in _identifiers(function) if text_of(n) == text_of(name)]
            one, two = script.whole_lines(first), script.whole_lines(second)
            if len(uses) != 2 or one is None or two is None or second.start_point[0] != first.end_point[0] + 1:
                continue
            text = f"{_indent(script, second)}return {text_of(value)}{_semicolon(second)}\n"
            yield self.site(one[0], two[1], text, f"inlined `{text_of(name)}`", first)

    @staticmethod
    def examples() -> ScriptExamples:
        return ScriptExamples(
            pairs=[("function f(a) {\n  const out = g(a);\n  return out;\n}\n", "function f(a) {\n  return g(a);\n}\n")],
            unchanged=["function f(a) {\n  const out = g(a);\n  h(out);\n  return out;\n}\n"],
        )


def _identifiers(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "shorthand_property_identifier"):
            yield n
        stack.extend(n.named_children)


_PURE = frozenset({"number", "string", "true", "false", "null", "undefined", "identifier", "member_expression",
                   "regex", "array", "object", "template_string"})  # fmt: skip


def _pure(value: tree_sitter.Node | None, module_level: bool) -> bool:
    """An initializer whose evaluation has no effect another declaration could see."""
    if value is None:
        return False
    if value.type == "call_expression":
        function = value.child_by_field_name("function")
        return module_level and text_of(function) == "require"
    if value.type in ("array", "object", "template_string"):
        return all(_pure(c, False) or c.type in ("pair", "template_substitution", "comment")
                   and all(_pure(g, False) or g.type in ("property_identifier", "string") for g in c.named_children)
                   for c in value.named_children)  # fmt: skip
    if value.type == "member_expression":
        return all(c.type in ("identifier", "property_identifier", "member_expression", "this") for c in value.named_children)
    return value.type in _PURE


class ReorderStatements(ScriptRefactor):
    """Two adjacent one-line declarations with side-effect-free initializers trade places
    (``require()`` at module level counts as free of effects, as an import does in Python)."""

    name = "reorder_statements"
    node_types = frozenset({"statement_block", "program"})
    module_level = True

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        top = node.type == "program"
        body = list(node.named_children)
        for first, second in itertools.pairwise(body):
            if not all(s.type in ("lexical_declaration", "variable_declaration") and _one_line(s)
                       and s.named_child_count == 1 for s in (first, second)):  # fmt: skip
                continue
            if second.start_point[0] != first.end_point[0] + 1:
                continue
            values = [s.named_children[0].child_by_field_name("value") for s in (first, second)]
            if not all(_pure(v, top) for v in values):
                continue
            names = [writes(s) for s in (first, second)]
            if names[0] & names[1] or names[0] & reads(second) or names[1] & reads(first):
                continue
            one, two = script.whole_lines(first), script.whole_lines(second)
            if one is None or two is None or not script.data[two[0] : two[1]].endswith(b"\n"):
                continue
            a, b = script.data[one[0] : one[1]], script.data[two[0] : two[1]]
            yield self.site(one[0], two[1], (b + a).decode("utf-8", "replace"),
                            f"moved `{text_of(second)}` above `{text_of(first)}`", first)  # fmt: skip

    @staticmethod
    def examples() -> ScriptExamples:
        return ScriptExamples(
            pairs=[("const a = require('a');\nconst b = require('b');\n", "const b = require('b');\nconst a = require('a');\n"),
                   ("function f() {\n  const x = 1;\n  const y = 'two';\n  return x + y;\n}\n",
                    "function f() {\n  const y = 'two';\n  const x = 1;\n  return x + y;\n}\n")],
            unchanged=["function f() {\n  const x = 1;\n  const y = x + 1;\n}\n",
                       "function f() {\n  const x = g();\n  const y = h();\n}\n"],
        )


_LONG = 60


class ReformatCall(ScriptRefactor):
    """A long one-line call with two or more arguments puts each on its own line."""

    name = "reformat_call"
    node_types = frozenset({"call_expression"})
    same_tokens = True

    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        args = node.child_by_field_name("arguments")
        if args is None or args.type != "arguments" or not _one_line(node):
            return
        items = [c for c in args.named_children]
        start, end = script.line_start(node.start_byte), script.line_end(node.end_byte)
        line = script.data[start:end].decode("utf-8", "replace")
        if len(items) < 2 or len(line.rstrip()) <= _LONG or any(c.type == "comment" for c in items):
            return
        if any(n.type == "call_expression" and n.start_point[0] == node.start_point[0] for n in _ancestors(node)):
            return  # only the outermost call of a line
        indent = re.match(r"[ \t]*", line).group()  # type: ignore[union-attr]
        inner = indent + ("\t" if indent.startswith("\t") else "  ")
        body = ",\n".join(inner + text_of(c) for c in items)
        yield self.site(args.start_byte, args.end_byte, f"(\n{body}\n{indent})", "spread the arguments over lines", node)

    @staticmethod
    def examples() -> ScriptExamples:
        return ScriptExamples(
            pairs=[("function f(a) {\n  return combineEverything(firstArgument, secondArgument, a.thirdOne);\n}\n",
                    ("function f(a) {\n  return combineEverything(\n    firstArgument,\n    secondArgument,\n"
                     "    a.thirdOne\n  );\n}\n"))],
            unchanged=["function f(a) {\n  return g(a, 1);\n}\n"],
        )


def _ancestors(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


SCRIPT_REFACTORS: tuple[type[ScriptRefactor], ...] = (ExtractLocal, InlineLocal, ReorderStatements, ReformatCall)


def script_refactor_examples(refactor: type[ScriptRefactor]) -> ScriptExamples:
    return refactor.examples()
