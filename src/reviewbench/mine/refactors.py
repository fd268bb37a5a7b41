"""Behaviour-preserving edits for control cases: the ordinary work of a review queue.

Controls measure restraint, so they must look like changes a reviewer sees every day and
change nothing a test can see: extract an expression into a named local, reorder
independent statements or imports, reformat a call, add a docstring (renaming a local is
:mod:`rename`'s job); and, so that clean cases are not all small additions while defects
remove code, edits that remove lines: inline a local returned at once, drop an unused
local holding a literal, delete unreachable statements, collapse ``if c: return True`` /
``return False`` into one return. They reuse the mutation machinery (sites on a libcst
tree) but are not mutation operators: they are not registered, and validation must find
the tests still passing. Each removing edit is behaviour-preserving by construction (the
rules are on its class) and the ones marked ``bytecode_equal`` are checked by the
compiler too (:func:`same_bytecode`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from types import CodeType
from typing import ClassVar

import libcst as cst

from ..records import Severity
from .mutations import Examples, Operator, remove_statement, simple_statement
from .mutations.statement_swap import reads, writes

__all__ = ["REFACTORS", "Refactor", "docstring_for", "refactor_examples", "same_bytecode"]


class _Census(cst.CSTVisitor):
    """One walk of a module: every identifier it spells (a new name must be none of them),
    and how often each name appears in each function, nested code included (by the
    function node's id: the module's nodes live as long as the walk that asks)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.in_function: dict[int, Counter[str]] = {}
        self._open: list[Counter[str]] = []
        module.visit(self)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        counts: Counter[str] = Counter()
        self.in_function[id(node)] = counts
        self._open.append(counts)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._open.pop()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)
        for counts in self._open:
            counts[node.value] += 1


class Refactor(Operator):
    """A behaviour-preserving edit; ``ast_equal`` ones must leave the syntax tree unchanged."""

    severity = Severity.LOW
    hint_terms = ()
    ast_equal: ClassVar[bool] = False
    #: Whether the edited module must compile to the same bytecode (line numbers aside).
    bytecode_equal: ClassVar[bool] = False

    def visit_Module(self, node: cst.Module) -> None:
        self.module_node = node
        # Every refactor walks the same module in one batched visit: the census is taken
        # once for all of them (once per refactor, and per function, was most of a control's cost).
        key = ("census", id(node))
        if key not in self.memo:
            self.memo[key] = _Census(node)
        self.census: _Census = self.memo[key]  # type: ignore[assignment]
        self.taken = self.census.names

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
                tail: cst.BaseStatement = stmt.with_changes(body=[small.with_changes(value=cst.Name(name or "_"))],
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
                if not odd and not node.body[index + 1].leading_lines and all(a == b for a, b in lines):
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


# Edits that remove lines. Each works inside one function (never in a class body or at
# module level) and refuses functions that read their own frame (``locals()``, ``eval``…):
# there a local that is never named could still be observed.

_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "globals", "dir"})
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


class _InFunction(Refactor):
    """Keeps the innermost function or class around a node, and its name counts."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[cst.FunctionDef | cst.ClassDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        super().leave_FunctionDef(original_node)
        self.scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def names(self) -> Counter[str] | None:
        """How often each name appears in the innermost function (nested code included),
        or None outside a function or in one that can read its own locals."""
        if not self.scopes or not isinstance(self.scopes[-1], cst.FunctionDef):
            return None
        counts = self.census.in_function[id(self.scopes[-1])]
        return None if any(counts[name] for name in _DYNAMIC) else counts


def _quiet(module: cst.Module, *nodes: cst.CSTNode) -> bool:
    """No comment in or above ``nodes``: removing or merging them loses no one's words."""
    for node in nodes:
        if any(line.comment for line in getattr(node, "leading_lines", ())) or "#" in module.code_for_node(node):
            return False
    return True


class InlineLocal(_InFunction):
    """``name = <expr>`` then ``return name`` → ``return <expr>``, when the function names
    ``name`` nowhere else: the same value is computed at the same point and returned."""

    name = "inline_local"
    summary = "inlined a local returned at once"

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        counts = self.names()
        if counts is None:
            return
        for index in range(len(node.body) - 1):
            first, second = node.body[index], node.body[index + 1]
            if not (isinstance(first, cst.SimpleStatementLine) and isinstance(second, cst.SimpleStatementLine)):
                continue
            assign, ret = simple_statement(first), simple_statement(second)
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(ret, cst.Return)):
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Name) and isinstance(ret.value, cst.Name) and ret.value.value == target.value):
                continue
            if counts[target.value] != 2 or isinstance(assign.value, cst.Yield) or target.value.startswith("__"):
                continue
            if not _quiet(self.module_node, first, second):
                continue
            merged = second.with_changes(body=[ret.with_changes(value=assign.value)], leading_lines=first.leading_lines)
            body = [*node.body[:index], merged, *node.body[index + 2 :]]
            self.propose(node, node.with_changes(body=body), f"inlined `{target.value}`", at=node.body[index])

    @staticmethod
    def examples() -> Examples:
        return Examples(
            pairs=[("def f(x):\n    y = x * 2\n    return y\n", "def f(x):\n    return x * 2\n"),
                   ("def f(x):\n    if x:\n        total = x + 1\n        return total\n    return 0\n",
                    "def f(x):\n    if x:\n        return x + 1\n    return 0\n")],
            unchanged=["def f(x):\n    y = x * 2\n    print(y)\n    return y\n",
                       "def f(x):\n    y = x\n    return y if locals() else 0\n",
                       "def f(x):\n    # why y\n    y = x * 2\n    return y\n",
                       "class K:\n    y = 1\n    z = y\n"],
        )


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value in {"None", "True", "False"}
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, (cst.List, cst.Tuple, cst.Dict)) and not node.elements


class RemoveUnusedLocal(_InFunction):
    """``name = <literal>`` where the function names ``name`` nowhere else: the value is
    never read and making it costs nothing observable."""

    name = "remove_unused_local"
    summary = "removed an unused local"

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        counts = self.names()
        if counts is None:
            return
        for index, stmt in enumerate(node.body):
            small = simple_statement(stmt)
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and _literal(small.value)):
                continue
            target = small.targets[0].target
            if not isinstance(target, cst.Name) or counts[target.value] != 1 or target.value.startswith("__"):
                continue
            if not _quiet(self.module_node, stmt):
                continue
            removed = remove_statement(node, index)
            if removed is not None:
                self.propose(node, removed, f"removed the unused `{target.value}`", at=stmt)

    @staticmethod
    def examples() -> Examples:
        return Examples(
            pairs=[("def f(x):\n    unused = 0\n    return x\n", "def f(x):\n    return x\n")],
            unchanged=["def f(x):\n    y = 0\n    return x + y\n", "def f(x):\n    y = g()\n    return x\n",
                       "def f(x):\n    y = 0\n    return locals()\n", "def f():\n    y = 0\n"],
        )


class RemoveDeadCode(_InFunction):
    """Statements after a ``return``/``raise``/``continue``/``break`` in the same block:
    they never run, and the compiler must agree (:func:`same_bytecode`)."""

    name = "remove_dead_code"
    summary = "removed unreachable statements"
    bytecode_equal = True

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self.names() is None:
            return
        for index, stmt in enumerate(node.body[:-1]):
            line = stmt if isinstance(stmt, cst.SimpleStatementLine) else None
            if line is None or not isinstance(line.body[-1], _EXITS):
                continue
            dead = node.body[index + 1 :]
            if _quiet(self.module_node, *dead):
                self.propose(node, node.with_changes(body=node.body[: index + 1]), "removed unreachable code",
                             at=dead[0])  # fmt: skip
            return

    @staticmethod
    def examples() -> Examples:
        return Examples(
            pairs=[("def f(x):\n    return x\n    print(x)\n", "def f(x):\n    return x\n"),
                   ("def f(x):\n    for i in x:\n        break\n        x = 2\n    return x\n",
                    "def f(x):\n    for i in x:\n        break\n    return x\n")],
            unchanged=["def f(x):\n    if x:\n        return 1\n    return 2\n",
                       "def f(x):\n    return x\n    # kept on purpose\n    print(x)\n"],
        )


#: Tests whose value is always True or False, so ``return <test>`` equals the branch.
_BOOLEAN_OPS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def _boolean(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    return isinstance(test, cst.Comparison) and all(isinstance(c.operator, _BOOLEAN_OPS) for c in test.comparisons)


def _returns(stmt: cst.BaseStatement | cst.BaseSuite) -> str | None:
    """"True"/"False" for a one-statement ``return True``/``return False`` (or a block of it)."""
    if isinstance(stmt, cst.IndentedBlock):
        if len(stmt.body) != 1:
            return None
        stmt = stmt.body[0]
    small = simple_statement(stmt)  # type: ignore[arg-type]
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Name) and small.value.value in {"True", "False"}:
        return small.value.value
    return None


def _binds_bool(module: cst.Module) -> bool:
    """Whether the module may rebind ``bool`` (then ``bool(x)`` might not be the builtin)."""
    tree = ast.parse(module.code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "bool" and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.arg) and node.arg == "bool":
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) in {"bool", "*"}:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "bool":
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and "bool" in node.names:
            return True
        if isinstance(node, ast.ExceptHandler) and node.name == "bool":
            return True
    return False


class CollapseBranch(_InFunction):
    """``if c: return True`` + ``else: return False`` (or a ``return False`` right after)
    → ``return c`` when ``c`` is always a bool (``not``, ``is``, ``in``), else
    ``return bool(c)`` (when the module never rebinds ``bool``); the other way round,
    ``return not c``. ``c``'s truth is asked exactly once either way."""

    name = "collapse_branch"
    summary = "collapsed a branch that returns a bool"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.bool_free: bool | None = None

    def _value(self, test: cst.BaseExpression, truth: str) -> cst.BaseExpression | None:
        if truth == "False":
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, truth = test.expression, "True"
            elif _boolean(test) and isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                # `x is not None`, as a person writes it (and linters ask), not `not x is None`.
                flipped = {cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.In: cst.NotIn, cst.NotIn: cst.In}
                (target,) = test.comparisons
                return test.with_changes(comparisons=[target.with_changes(operator=flipped[type(target.operator)]())])
            else:
                if isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not test.lpar:
                    test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                return cst.UnaryOperation(cst.Not(), test)
        if _boolean(test):
            return test
        if self.bool_free is None:
            self.bool_free = not _binds_bool(self.module_node)
        if not self.bool_free:
            return None
        return cst.Call(cst.Name("bool"), [cst.Arg(test.with_changes(lpar=[], rpar=[]))])

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self.names() is None:
            return
        for index, stmt in enumerate(node.body):
            if not isinstance(stmt, cst.If) or not isinstance(stmt.body, cst.IndentedBlock):
                continue
            truth = _returns(stmt.body)
            if truth is None:
                continue
            opposite = "False" if truth == "True" else "True"
            replaced: list[cst.BaseStatement]
            if isinstance(stmt.orelse, cst.Else) and _returns(stmt.orelse.body) == opposite:
                replaced = [stmt]
            elif stmt.orelse is None and index + 1 < len(node.body) and _returns(node.body[index + 1]) == opposite:
                replaced = [stmt, node.body[index + 1]]
            else:
                continue
            value = self._value(stmt.test, truth)
            if value is None or not _quiet(self.module_node, *replaced):
                continue
            new = cst.SimpleStatementLine([cst.Return(value)], leading_lines=stmt.leading_lines)
            body = [*node.body[:index], new, *node.body[index + len(replaced) :]]
            self.propose(node, node.with_changes(body=body), "collapsed a branch into one return", at=stmt)

    @staticmethod
    def examples() -> Examples:
        return Examples(
            pairs=[("def f(x):\n    if x > 1:\n        return True\n    else:\n        return False\n",
                    "def f(x):\n    return bool(x > 1)\n"),
                   ("def f(x):\n    if x is None:\n        return False\n    return True\n",
                    "def f(x):\n    return x is not None\n"),
                   ("def f(x):\n    if x in (1, 2):\n        return True\n    return False\n",
                    "def f(x):\n    return x in (1, 2)\n"),
                   ("def f(x):\n    if x or x == 0:\n        return False\n    return True\n",
                    "def f(x):\n    return not (x or x == 0)\n")],
            unchanged=["def f(x):\n    if x:\n        return True\n    return x\n",
                       "def f(x, bool=int):\n    if x:\n        return True\n    return False\n",
                       "def f(x):\n    if x:  # odd\n        return True\n    return False\n"],
        )


def refactor_examples(refactor: type[Refactor]) -> Examples | None:
    """A refactor's ``examples()``, for the shared test (the older refactors have none:
    ``tests/mine/test_controls.py`` runs them on a snippet)."""
    examples = getattr(refactor, "examples", None)
    return examples() if examples else None


def _same_code(old: CodeType, new: CodeType) -> bool:
    if (old.co_code, old.co_flags, old.co_argcount, old.co_kwonlyargcount, old.co_posonlyargcount,
            old.co_cellvars, old.co_freevars, old.co_exceptiontable) != (
            new.co_code, new.co_flags, new.co_argcount, new.co_kwonlyargcount, new.co_posonlyargcount,
            new.co_cellvars, new.co_freevars, new.co_exceptiontable):  # fmt: skip
        return False
    # Identical bytecode indexes the same names: only names no instruction reaches may go.
    if old.co_names[: len(new.co_names)] != new.co_names or old.co_varnames[: len(new.co_varnames)] != new.co_varnames:
        return False
    if len(old.co_consts) != len(new.co_consts):
        return False
    for a, b in zip(old.co_consts, new.co_consts, strict=True):
        if isinstance(a, CodeType) or isinstance(b, CodeType):
            if not (isinstance(a, CodeType) and isinstance(b, CodeType) and _same_code(a, b)):
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True


def same_bytecode(old: str, new: str) -> bool:
    """Whether two module sources compile to the same instructions, constants and flags
    (line numbers and names no instruction uses aside): then they behave the same."""
    try:
        return _same_code(compile(old, "<old>", "exec", dont_inherit=True),
                          compile(new, "<new>", "exec", dont_inherit=True))  # fmt: skip
    except (SyntaxError, ValueError):
        return False


#: Every control refactor, in a fixed order.
REFACTORS: tuple[type[Refactor], ...] = (ExtractLocal, ReorderStatements, ReformatCall, AddDocstring, InlineLocal,
                                          RemoveUnusedLocal, RemoveDeadCode, CollapseBranch)
