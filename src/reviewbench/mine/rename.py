"""Scope-aware renaming of local variables, for rename variants and rename controls.

A finding that vanishes when ``total`` becomes ``acc`` was keyed on a name, not on the
logic. The rename must preserve behaviour exactly, so it is conservative:
only names bound in a function's own scope by plain assignment targets, and parameters
only when asked and no call could name them (``*args``/``**kwargs``, or a name no call in
the repository passes by keyword; never ``self``/``cls``) — never imports, nested
definitions, ``global``/``nonlocal`` names — every use a
real name node that libcst's scope analysis resolves to that binding, and never in a
function that calls ``locals()``, ``vars()``, ``eval()`` or ``exec()``. Every rename is
then checked by the compiler: the renamed function must compile to the same bytecode,
with the same global and attribute names, its locals renamed and nothing else.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider
from libcst.metadata.scope_provider import Assignment, FunctionScope

from .textdiff import split_lines

__all__ = ["Renamed", "choose_names", "function_locals", "function_spans", "names_in", "qualified_spans",
           "rename_in_functions", "rename_nodes"]

_INTROSPECTING = frozenset({"locals", "vars", "eval", "exec"})

#: Natural replacements first, then word-by-word abbreviations or expansions, then a pool.
_SYNONYMS = {
    "result": "outcome", "res": "outcome", "ret": "outcome", "value": "val", "val": "current",
    "values": "vals", "item": "elem", "items": "elems", "elem": "entry", "element": "member",
    "total": "acc", "count": "tally", "n": "num", "i": "idx", "j": "jdx", "k": "kdx",
    "idx": "pos", "index": "pos", "key": "k", "keys": "key_list", "data": "payload",
    "text": "content", "line": "row", "lines": "rows", "name": "label", "names": "labels",
    "path": "location", "obj": "target", "x": "xv", "y": "yv", "seq": "sequence",
    "it": "iterator", "iterator": "iter_obj", "func": "fn", "fn": "callback", "out": "output",
    "output": "produced", "start": "begin", "end": "finish", "stop": "end_at", "size": "length",
    "length": "size", "default": "fallback", "pred": "predicate", "tmp": "scratch",
    "temp": "scratch", "user": "acct", "first": "head", "last": "tail", "rest": "remainder",
    "prev": "previous", "curr": "current", "current": "cur", "node": "vertex", "d": "mapping",
    "seen": "visited", "acc": "running", "buf": "buffer", "s": "string", "e": "exc",
    "err": "exc", "exc": "error", "f": "handle", "fh": "handle", "msg": "message",
    "args": "arguments", "kwargs": "options", "cls": "klass", "rv": "retval",
}  # fmt: skip
_WORDS = {
    "number": "num", "num": "number", "count": "cnt", "cnt": "count", "index": "idx",
    "idx": "index", "value": "val", "val": "value", "values": "vals", "vals": "values",
    "keyword": "kw", "kw": "keyword", "argument": "arg", "arg": "argument",
    "arguments": "args", "args": "arguments", "function": "func", "func": "function",
    "result": "res", "res": "result", "temporary": "tmp", "tmp": "temp", "current": "cur",
    "cur": "current", "previous": "prev", "prev": "previous", "message": "msg",
    "msg": "message", "object": "obj", "obj": "object", "sequence": "seq", "seq": "sequence",
    "source": "src", "src": "source", "destination": "dst", "dst": "destination",
    "parameters": "params", "params": "parameters", "position": "pos", "pos": "position",
    "iters": "iterations", "iter": "iterator", "items": "entries", "item": "entry",
    "key": "k", "dict": "mapping", "list": "lst", "string": "str", "str": "text",
    "name": "label", "names": "labels", "length": "len", "len": "length", "size": "sz",
    "only": "only", "total": "sum", "sum": "total", "max": "maximum", "min": "minimum",
    "maximum": "max", "minimum": "min", "start": "begin", "end": "stop", "first": "head",
    "last": "tail", "data": "payload", "info": "details", "config": "cfg", "cfg": "config",
}  # fmt: skip
_POOL = ("acc", "cur", "tmp", "val", "elem", "entry", "part", "chunk", "piece", "obj", "ref",
         "rec", "token", "slot", "cell", "node", "step", "probe")  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


@dataclass(frozen=True)
class Renamed:
    """A source after renaming: the new text and which name became which."""

    source: str
    mapping: dict[str, str]


def _calls_introspection(func: cst.FunctionDef) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if isinstance(node.func, cst.Name) and node.func.value in _INTROSPECTING:
                found = True

        def visit_Global(self, node: cst.Global) -> None:
            nonlocal found
            found = True  # a global or nonlocal declaration anywhere: leave the function alone

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            nonlocal found
            found = True

    func.visit(Finder())
    return found


def function_locals(scope: object, func: cst.FunctionDef,
                    params: Callable[[str, str], bool] | None = None) -> dict[str, list[cst.Name]]:  # fmt: skip
    """Locals of ``func`` that can be renamed safely, each with every name node to rewrite.

    Args:
        scope: libcst's scope of the function's body (``ScopeProvider`` of ``func.body``).
        params: says, given the function's name and a parameter's, whether no caller
            passes that parameter by keyword; those are renamed
            too. ``*args`` and ``**kwargs`` always may be (no caller can name them); ``self``
            and ``cls`` never are.
    """
    star = {p.name.value for p in (func.params.star_arg, func.params.star_kwarg) if isinstance(p, cst.Param)}
    if not isinstance(scope, FunctionScope) or _calls_introspection(func):
        return {}
    by_name: dict[str, list[Assignment]] = {}
    for assignment in scope.assignments:
        by_name.setdefault(assignment.name, []).append(assignment)  # type: ignore[arg-type]
    found: dict[str, list[cst.Name]] = {}
    for name, assignments in sorted(by_name.items()):
        nodes: list[cst.Name] = []
        ok = True
        for assignment in assignments:
            node = assignment.node if isinstance(assignment, Assignment) else None
            if (isinstance(node, cst.Param) and params is not None and name not in ("self", "cls")
                    and (name in star or params(func.name.value, name))):  # fmt: skip
                node = node.name  # a parameter no caller names (reassigned or not: the compiler checks)
            if not isinstance(node, cst.Name):
                ok = False  # a parameter, import, def or class binds it
                break
            nodes.append(node)
            for access in assignment.references:
                if not isinstance(access.node, cst.Name):
                    ok = False  # e.g. a string annotation naming it
                    break
                nodes.append(access.node)
        if ok and nodes and not name.startswith("__"):
            found[name] = nodes
    return found


def names_in(module: cst.CSTNode) -> set[str]:
    """Every identifier spelled in ``module``: a new name must be none of them."""
    names: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    module.visit(Collector())
    return names


def _reworded(name: str) -> str | None:
    """``num_iters`` → ``number_iterations``: each known word swapped for its long or short form."""
    lead = len(name) - len(name.lstrip("_"))
    words = name[lead:].split("_")
    new = [_WORDS.get(w, w) for w in words]
    if new == words:
        if len(words) > 1:
            return name[:lead] + "_".join(reversed(words))  # first_item → item_first
        return None
    return name[:lead] + "_".join(new)


def choose_names(names: Iterable[str], taken: set[str], rng: random.Random) -> dict[str, str]:
    """A fresh, natural-looking name for each of ``names``; never one already in ``taken``."""
    used = set(taken) | _RESERVED
    mapping: dict[str, str] = {}
    for name in names:
        options = [o for o in (_SYNONYMS.get(name), _reworded(name)) if o]
        pool = list(_POOL)
        rng.shuffle(pool)
        options.extend(pool)
        options.extend(f"{name}_{n}" for n in range(2, 100))
        new = next(o for o in options if o not in used and o != name and o.isidentifier())
        mapping[name] = new
        used.add(new)
    return mapping


class _Rewrite(cst.CSTTransformer):
    def __init__(self, targets: dict[int, str]) -> None:
        super().__init__()
        self.targets = targets

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.targets.get(id(original_node))
        return updated_node.with_changes(value=new) if new else updated_node


def rename_nodes(node: cst.CSTNode, targets: dict[int, str]) -> cst.CSTNode:
    """``node`` with the name nodes whose ``id`` is in ``targets`` given their new names."""
    renamed = node.visit(_Rewrite(targets))
    assert isinstance(renamed, cst.CSTNode)  # only names change: nothing is removed or flattened
    return renamed


def _same_program(before: str, after: str, mapping: dict[str, str], depth: int) -> bool:
    """Whether ``after`` compiles to exactly the code of ``before`` with the locals in
    ``mapping`` of the function at nesting ``depth`` renamed (1: a module-level function,
    2: a method of the wrapping class). libcst links a use only to assignments above it,
    so a use that comes first (a loop-carried name, a closure defined earlier, a statement
    swapped by a mutation) would keep its old name and read another variable: the
    compiler sees it."""
    try:
        old = compile(before, "<before>", "exec", dont_inherit=True)
        new = compile(after, "<after>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return _same_code(old, new, mapping, depth)


def _same_code(old: types.CodeType, new: types.CodeType, mapping: dict[str, str], depth: int) -> bool:
    """``depth`` counts down to the renamed function (0): its own locals and cells are
    renamed; functions inside it keep their own locals and see its cells as free
    variables; the code around it names only globals, which never change."""
    if old.co_code != new.co_code or old.co_names != new.co_names or len(old.co_consts) != len(new.co_consts):
        return False
    renamed_fields = {0: ("co_varnames", "co_cellvars", "co_freevars")}.get(depth, ("co_freevars",) if depth < 0 else ())
    for field in ("co_varnames", "co_cellvars", "co_freevars"):
        names = getattr(old, field)
        expected = tuple(mapping.get(n, n) for n in names) if field in renamed_fields else names
        if expected != getattr(new, field):
            return False
    for a, b in zip(old.co_consts, new.co_consts, strict=True):
        if isinstance(a, types.CodeType):
            if not isinstance(b, types.CodeType) or not _same_code(a, b, mapping, depth - 1):
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True


def function_spans(source: str) -> list[tuple[int, int]]:
    """(first, last) lines of every function, decorators included, from Python's own parser."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [
        (min([n.lineno, *(d.lineno for d in n.decorator_list)]), n.end_lineno or n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def qualified_spans(source: str) -> list[tuple[int, int, str]]:
    """(first, last, qualified name) of every function, as :func:`function_spans`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    found.append((first, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _rename_function(lines: list[str], first: int, last: int, taken: set[str], rng: random.Random,
                     limit: int | None, forced: dict[str, str] | None = None,
                     params: Callable[[str, str], bool] | None = None,
                     prefer: dict[str, str] | None = None,
                     ) -> tuple[list[str], dict[str, str]] | None:  # fmt: skip
    """Rename the locals of the function on ``lines[first-1:last]``; its new lines and the mapping.

    Only the function's own text is parsed (as the body of a dummy class when it is
    indented): scope analysis of a whole large module per rename dominated mining time,
    and a function's locals do not depend on the code around it.
    """
    text = "".join(lines[first - 1 : last])
    indented = text[:1] in (" ", "\t")
    wrapped = ("class _:\n" if indented else "") + text
    try:
        wrapper = MetadataWrapper(cst.parse_module(wrapped), unsafe_skip_copy=True)
    except cst.ParserSyntaxError:
        return None
    scopes = wrapper.resolve(ScopeProvider)
    outer = wrapper.module.body[0]
    func: cst.CSTNode = outer
    if indented and isinstance(outer, cst.ClassDef):  # the wrapper around an indented text
        func = outer.body.body[0]
    if not isinstance(func, cst.FunctionDef):
        return None
    local = function_locals(scopes.get(func.body), func, params)
    names = sorted(local)
    if forced is not None:
        names = [n for n in names if n in forced]
    elif limit is not None and len(names) > limit:
        names = sorted(rng.sample(names, limit))
    if not names:
        return None
    if forced is not None:
        mapping = {n: forced[n] for n in names}
        if set(mapping.values()) & names_in(func):
            return None  # a new name is already spelled in this version of the function
    else:
        mapping = choose_names(names, taken, rng)
        spelled = names_in(func)
        # A name another touched function already renamed gets the same new name here: the
        # other side of the edit is renamed from one mapping for the whole file.
        mapping.update({n: prefer[n] for n in names if prefer and n in prefer and prefer[n] not in spelled})

    def renamed(chosen: dict[str, str]) -> str | None:
        targets = {id(node): new for name, new in chosen.items() for node in local[name]}
        code = rename_nodes(wrapper.module, targets).code  # type: ignore[attr-defined]
        return code if _same_program(wrapped, code, chosen, 2 if indented else 1) else None

    code = renamed(mapping)
    if code is None:  # some name has a use libcst did not link to it: leave those alone
        mapping = {name: new for name, new in mapping.items() if renamed({name: new}) is not None}
        code = renamed(mapping) if mapping else None
        if code is None:
            return None
    if indented:
        code = code.split("\n", 1)[1]
    return split_lines(code), mapping


def rename_in_functions(source: str, lines: Iterable[int], key: str, *, limit: int | None = None,
                        mapping: dict[str, str] | None = None,
                        params: Callable[[str, str], bool] | None = None,
                        taken: Iterable[str] = ()) -> Renamed | None:  # fmt: skip
    """Rename the locals of the innermost functions containing ``lines``.

    An enclosing function stands in when the innermost one has no local to rename.

    Args:
        key: seeds the choice of names, so that a corpus is reproducible.
        limit: rename at most this many names per function (all by default).
        mapping: rename with exactly these names (those that are safe locals here) instead
            of choosing: the other side of an edit gets the same rename.
        params: ``(function name, parameter name) -> bool``: whether that parameter may be
            renamed (no caller passes it by keyword); None: no parameter is.
        taken: names a new name must not be besides those of ``source`` (the other side
            of an edit: a name fresh on one side only makes git align the diff differently).

    Returns:
        None when nothing could be renamed (no such function, or no safe local).
    """
    functions = function_spans(source)
    text = split_lines(source)
    rng = random.Random(f"rename:{key}")
    taken = set(_IDENTIFIER.findall(source)) | set(taken)
    forced = mapping
    mapping = {}
    done: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        around = sorted((f for f in functions if f[0] <= line <= f[1]), key=lambda f: f[1] - f[0])
        for first, last in around:
            if any(a <= first and last <= b or first <= a and b <= last for a, b in done):
                break  # this function, or one around or inside it, is renamed already
            renamed = _rename_function(text, first, last, taken | set(mapping.values()), rng, limit, forced, params,
                                       mapping)  # fmt: skip
            if renamed is None:
                continue
            new_lines, names = renamed
            if len(new_lines) != last - first + 1:
                return None  # a rename never adds or removes a line
            text[first - 1 : last] = new_lines
            for old, new in names.items():
                mapping.setdefault(old, new)
            done.append((first, last))
            break
    result = "".join(text)
    return Renamed(result, mapping) if mapping and result != source else None
