"""Behaviour-preserving edits for control cases: the ordinary work of a review queue.

Controls measure restraint, so they must look like changes a reviewer sees every day and
change nothing a test can see: extract an expression into a named local, reorder
independent statements or imports, reformat a call, add a docstring (renaming a local is
:mod:`rename`'s job). They reuse the mutation machinery (sites on a libcst tree) but are
not mutation operators: they are not registered, and validation must find the tests
still passing.
"""

from __future__ import annotations

import re
from typing import ClassVar

import libcst as cst

from ..records import Severity
from .mutations import Operator, simple_statement
from .mutations.statement_swap import reads, writes
from .rename import names_in

__all__ = ["REFACTORS", "Refactor", "docstring_for"]


#: The last module's identifiers: every refactor walks the same module in one batched visit,
#: and collecting them once instead of once per refactor was most of a control's cost.
_LAST_TAKEN: list[tuple[cst.Module, set[str]]] = []


def _taken(module: cst.Module) -> set[str]:
    if not _LAST_TAKEN or _LAST_TAKEN[0][0] is not module:
        _LAST_TAKEN[:] = [(module, names_in(module))]
    return _LAST_TAKEN[0][1]


class Refactor(Operator):
    """A behaviour-preserving edit; ``ast_equal`` ones must leave the syntax tree unchanged."""

    severity = Severity.LOW
    hint_terms = ()
    ast_equal: ClassVar[bool] = False

    def visit_Module(self, node: cst.Module) -> None:
        self.module_node = node
        self.taken = _taken(node)

    def fresh(self, options: tuple[str, ...]) -> str | None:
        """The first of ``options`` no identifier in the module already spells."""
        return next((o for o in options if o not in self.taken), None)


_EXTRACTABLE = (cst.Call, cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.Subscript,
                cst.ListComp, cst.DictComp, cst.SetComp, cst.IfExp, cst.UnaryOperation)  # fmt: skip


class ExtractLocal(Refactor):
    name = "extract_local"
    summary = "extracted an expression into a named local"

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        for index, stmt in enumerate(node.body):
            small = simple_statement(stmt)
            one_line = self.position(stmt)[0] == self.position(stmt)[1]
            if one_line and isinstance(small, cst.Return) and isinstance(small.value, _EXTRACTABLE):
                name, value = self.fresh(("result", "value", "outcome", "ret")), small.value
                tail: cst.BaseStatement = stmt.with_changes(body=[small.with_changes(value=cst.Name(name or "_"))],  # type: ignore[attr-defined]
                                                            leading_lines=())  # fmt: skip
            elif isinstance(stmt, cst.If) and isinstance(stmt.test, _EXTRACTABLE):
                if self.position(stmt.test)[0] != self.position(stmt.test)[1]:
                    continue
                name, value = self.fresh(("ok", "cond", "flag", "matched")), stmt.test
                tail = stmt.with_changes(test=cst.Name(name or "_"), leading_lines=())
            else:
                continue
            if name is None:
                continue
            target = cst.AssignTarget(cst.Name(name))
            assign = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[target], value=value.with_changes(lpar=[], rpar=[]))],
                leading_lines=stmt.leading_lines,  # type: ignore[attr-defined]
            )
            body = [*node.body[:index], assign, tail, *node.body[index + 1 :]]
            self.propose(node, node.with_changes(body=body), f"extracted `{name}`", at=stmt)


def _pure(small: cst.BaseSmallStatement) -> bool:
    """No calls, awaits, yields or walruses: moving it cannot reorder side effects."""
    found = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if isinstance(node, (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)):
                found = True
            return not found

    small.visit(Finder())
    return not found and isinstance(small, (cst.Assign, cst.AnnAssign))


class ReorderStatements(Refactor):
    name = "reorder_statements"
    summary = "reordered independent statements or imports"
    module_level = True

    def _swap(self, block: cst.IndentedBlock | cst.Module, index: int, note: str) -> None:
        body = list(block.body)
        first, second = body[index], body[index + 1]
        if any(line.comment for line in second.leading_lines):  # type: ignore[attr-defined]
            return
        body[index] = second.with_changes(leading_lines=first.leading_lines)  # type: ignore[attr-defined]
        body[index + 1] = first.with_changes(leading_lines=second.leading_lines)  # type: ignore[attr-defined]
        self.propose(block, block.with_changes(body=body), note, at=first)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        for index in range(len(node.body) - 1):
            one, two = simple_statement(node.body[index]), simple_statement(node.body[index + 1])
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in (one, two)):
                # Star imports shadow each other, and __future__ must come first.
                odd = [s for s in (one, two) if isinstance(s, cst.ImportFrom) and (
                    isinstance(s.names, cst.ImportStar)
                    or isinstance(s.module, cst.Name) and s.module.value == "__future__")]  # fmt: skip
                lines = [self.position(node.body[i]) for i in (index, index + 1)]
                if not odd and not node.body[index + 1].leading_lines and all(a == b for a, b in lines):  # type: ignore[attr-defined]
                    self._swap(node, index, "swapped two imports")

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self._functions <= 0:
            return
        for index in range(len(node.body) - 1):
            one, two = simple_statement(node.body[index]), simple_statement(node.body[index + 1])
            if one is None or two is None or not (_pure(one) and _pure(two)):
                continue
            w1, w2 = writes(one), writes(two)
            if not w1 or not w2 or w1 & (reads(two) | w2) or w2 & reads(one):
                continue
            lines = [self.position(node.body[i]) for i in (index, index + 1)]
            if all(a == b for a, b in lines):
                self._swap(node, index, "swapped two independent assignments")


class ReformatCall(Refactor):
    name = "reformat_call"
    summary = "put a call's arguments one per line"
    ast_equal = True

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        small = simple_statement(node)
        call = small.value if isinstance(small, (cst.Expr, cst.Assign, cst.Return)) else None
        if not isinstance(call, cst.Call) or len(call.args) < 2 or call.lpar:
            return
        line, end = self.position(node)
        if line != end or len(self.module_node.code_for_node(node)) < 60:
            return  # short calls stay on one line, as a formatter would leave them
        indent = self.module_node.default_indent

        def newline(extra: str) -> cst.ParenthesizedWhitespace:
            return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[],
                                               indent=True, last_line=cst.SimpleWhitespace(extra))  # fmt: skip

        args = [arg.with_changes(comma=cst.Comma(whitespace_after=newline(indent if i < len(call.args) - 1 else "")))
                for i, arg in enumerate(call.args)]  # fmt: skip
        exploded = call.with_changes(args=args, whitespace_before_args=newline(indent))
        self.propose(call, exploded, "one argument per line", at=node)


_WORDS = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
#: How a docstring starts for a name's first word; other verbs are used as they are.
_OPENERS = {"get": "Return the {rest}.", "is": "Check whether this is {rest}.",
            "has": "Check whether there are {rest}.", "should": "Decide whether to {rest}.",
            "can": "Check whether it can {rest}.", "to": "Convert to {rest}.",
            "make": "Make the {rest}.", "build": "Build the {rest}.", "iter": "Iterate over {rest}."}  # fmt: skip
_VERBS = frozenset({
    "add", "apply", "build", "check", "clear", "close", "compute", "convert", "copy", "create",
    "decode", "encode", "ensure", "expand", "extract", "fetch", "filter", "find", "format",
    "handle", "join", "load", "merge", "normalize", "open", "parse", "process", "read",
    "register", "remove", "render", "reset", "resolve", "run", "save", "send", "set", "sort",
    "split", "start", "stop", "update", "validate", "wrap", "write",
})  # fmt: skip


def docstring_for(name: str) -> str | None:
    """A one-line docstring a maintainer might write, from a snake_case function name."""
    words = name.strip("_")
    if not _WORDS.match(words):
        return None
    first, *rest = words.split("_")
    tail = " ".join(rest)
    if first in _OPENERS:
        return _OPENERS[first].format(rest=tail)
    if first in _VERBS:
        return f"{first.capitalize()} {tail}."
    return f"Return the {' '.join([first, *rest])}."


class AddDocstring(Refactor):
    name = "add_docstring"
    summary = "added a docstring"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        text = docstring_for(node.name.value)
        body = node.body
        if text is None or not isinstance(body, cst.IndentedBlock) or node.name.value.startswith("__"):
            return
        first = simple_statement(body.body[0])
        if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            return
        doc = cst.SimpleStatementLine(body=[cst.Expr(cst.SimpleString(f'"""{text}"""'))])
        self.propose(body, body.with_changes(body=[doc, *body.body]), f"docstring {text!r}", at=node)


#: Every control refactor, in a fixed order.
REFACTORS: tuple[type[Refactor], ...] = (ExtractLocal, ReorderStatements, ReformatCall, AddDocstring)
