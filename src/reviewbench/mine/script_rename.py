"""Renaming the locals of JavaScript/TypeScript functions, for rename variants and rename controls.

The Python renamer (:mod:`rename`) proves a rename with the compiler; here the proof is
the token stream: the renamed file must parse without error and read token for token
as before, with only the chosen identifiers changed. Which names may be renamed is
conservative, as for Python:

- a parameter (a plain name, not a TypeScript parameter property such as
  ``private size``, which is also a field), a ``var``/``let``/``const`` binding, a
  ``for (… of/in …)`` binding or a ``catch`` parameter of the function itself;
- declared exactly once in the function, nested functions included (no shadowing), and
  every use inside the binding's scope: a ``var`` or parameter's is the function, a
  ``let``/``const``'s its block (a use of ``count`` after ``{ let count }`` is another
  ``count``);
- never when the function says ``arguments``, ``eval`` or ``with``, never a name written
  as a shorthand property (``{ name }`` is also the key ``"name"``) or a JSX tag.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator

import tree_sitter

from .languages.ecmascript import parse
from .rename import Renamed, choose_names
from .script_mutations import FUNCTIONS

__all__ = ["JS_RESERVED", "rename_in_script_functions", "same_tokens", "script_function_spans"]

#: JavaScript's reserved words and globals a new name must never be.
JS_RESERVED = frozenset({
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
    "else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
    "instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try",
    "typeof", "var", "void", "while", "with", "yield", "let", "static", "implements", "interface",
    "package", "private", "protected", "public", "await", "async", "of", "get", "set", "arguments",
    "eval", "undefined", "NaN", "Infinity", "type", "declare", "readonly", "abstract", "as", "any",
    "number", "string", "boolean", "object", "symbol", "never", "unknown", "keyof", "infer", "is",
    "require", "module", "exports", "window", "globalThis", "process", "console",
})  # fmt: skip
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_SCOPES = frozenset({"statement_block", "for_statement", "for_in_statement", "switch_body", "class_body",
                     "program"})  # fmt: skip
_FORBIDDEN = frozenset({"arguments", "eval"})
_SHORTHAND = frozenset({"shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_JSX_NAMES = frozenset({"jsx_opening_element", "jsx_closing_element", "jsx_self_closing_element"})


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def script_function_spans(source: str, language: str) -> list[tuple[int, int]]:
    """(first line, last line) of every function, 1-based, in source order."""
    tree = parse(source, language)
    return sorted((n.start_point[0] + 1, n.end_point[0] + 1) for n in _walk(tree.root_node) if n.type in FUNCTIONS)


def _own(node: tree_sitter.Node, function: tree_sitter.Node) -> bool:
    """Whether ``node`` belongs to ``function`` itself, not to a function nested in it."""
    parent = node.parent
    while parent is not None and parent != function:
        if parent.type in FUNCTIONS:
            return False
        parent = parent.parent
    return parent == function


def _parameters(function: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    params = function.child_by_field_name("parameters")
    if params is None:
        single = function.child_by_field_name("parameter")  # `x => …`
        if single is not None and single.type == "identifier":
            yield single
        return
    for param in params.named_children:
        if param.type == "identifier":
            yield param
        elif param.type == "assignment_pattern":
            left = param.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                yield left
        elif param.type in ("required_parameter", "optional_parameter"):
            if any(c.type in ("accessibility_modifier", "readonly", "override_modifier") for c in param.children):
                continue  # a parameter property: also a field of the class
            pattern = param.child_by_field_name("pattern")
            if pattern is not None and pattern.type == "identifier":
                yield pattern


def _declarations(function: tree_sitter.Node) -> dict[str, list[tuple[tree_sitter.Node, tree_sitter.Node]]]:
    """Every name declared anywhere in ``function`` (nested functions included), with the
    declaring identifier and its scope; only the function's own ones are candidates."""
    found: dict[str, list[tuple[tree_sitter.Node, tree_sitter.Node]]] = {}

    def add(ident: tree_sitter.Node, scope: tree_sitter.Node) -> None:
        found.setdefault(ident.text.decode() if ident.text else "", []).append((ident, scope))

    for node in _walk(function):
        if node.type in FUNCTIONS:
            for param in _parameters(node):
                add(param, node)
            name = node.child_by_field_name("name")
            if name is not None and node != function:
                add(name, node)  # a nested named function binds its name
        elif node.type == "variable_declarator":
            name = node.child_by_field_name("name")
            declaration = node.parent
            if name is None or declaration is None:
                continue
            if name.type != "identifier":
                for inner in _walk(name):  # destructuring: its names exist, but are not renamed
                    if inner.type in ("identifier", "shorthand_property_identifier_pattern"):
                        found.setdefault(inner.text.decode() if inner.text else "", []).extend([(inner, node)] * 2)
                continue
            function_scoped = declaration.type == "variable_declaration"  # `var`
            add(name, _scope(declaration, function, function_scoped))
        elif node.type == "for_in_statement":
            left = node.child_by_field_name("left")
            kind = node.child_by_field_name("kind")
            if left is not None and left.type == "identifier" and kind is not None:
                add(left, function if kind.type == "var" else node)
        elif node.type == "catch_clause":
            caught = node.child_by_field_name("parameter")
            if caught is not None and caught.type == "identifier":
                add(caught, node)
        elif node.type in ("class_declaration", "function_declaration", "import_specifier"):
            name = node.child_by_field_name("name")
            if name is not None:
                add(name, node)
    return found


def _scope(declaration: tree_sitter.Node, function: tree_sitter.Node, function_scoped: bool) -> tree_sitter.Node:
    if function_scoped:
        return function
    parent = declaration.parent
    while parent is not None and parent.type not in _SCOPES and parent != function:
        parent = parent.parent
    if parent is None or parent.type == "statement_block" and parent.parent == function:
        return function
    return parent


def _inside(node: tree_sitter.Node, scope: tree_sitter.Node) -> bool:
    return scope.start_byte <= node.start_byte and node.end_byte <= scope.end_byte


def _locals(function: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
    """The function's renamable locals and every identifier node to rewrite for each."""
    words = [n for n in _walk(function)]
    if any(n.type == "with_statement" or n.type == "identifier" and n.text and n.text.decode() in _FORBIDDEN
           for n in words):  # fmt: skip
        return {}
    shorthand = {n.text.decode() for n in words if n.type in _SHORTHAND and n.text}
    uses: dict[str, list[tree_sitter.Node]] = {}
    for n in words:
        if n.type == "identifier" and n.text:
            uses.setdefault(n.text.decode(), []).append(n)
    found: dict[str, list[tree_sitter.Node]] = {}
    for name, declared in _declarations(function).items():
        if len(declared) != 1 or name in shorthand or not name:
            continue
        ident, scope = declared[0]
        if not (_own(ident, function) or ident.parent is not None and ident.parent.parent == function):
            continue
        if ident.parent is not None and ident.parent.type in ("function_declaration", "class_declaration"):
            continue
        nodes = uses.get(name, [])
        if not nodes or any(not _inside(n, scope) or (n.parent is not None and n.parent.type in _JSX_NAMES)
                            for n in nodes):  # fmt: skip
            continue
        found[name] = nodes
    return found


def _tokens(tree: tree_sitter.Tree, start: int, end: int) -> list[tuple[str, str, int]]:
    """The leaves of ``tree`` overlapping bytes ``start:end`` (subtrees outside are skipped)."""
    found: list[tuple[str, str, int]] = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.end_byte < start or n.start_byte > end:
            continue
        if n.child_count == 0:
            found.append((n.type, n.text.decode("utf-8", "replace") if n.text else "", n.start_byte))
        else:
            stack.extend(reversed(n.children))
    return found


def same_tokens(before: str, after: str, language: str, renamed: dict[int, str] | None = None) -> bool:
    """Whether ``after`` parses cleanly and reads token for token as ``before``, except the
    identifiers starting at the byte offsets of ``renamed`` (offset → new name).

    Only the edited region is compared (the text around it is byte for byte the same), with
    the top-level statements around it, so that a change in how they parse is seen.
    """
    old, new = parse(before, language), parse(after, language)
    if new.root_node.has_error:
        return False
    a, b = before.encode("utf-8", "surrogatepass"), after.encode("utf-8", "surrogatepass")
    head = _common_prefix(a, b)
    tail = _common_prefix(a[head:][::-1], b[head:][::-1])
    if old.root_node.named_child_count != new.root_node.named_child_count:
        return False
    start = _top_level_start(old, head)
    renamed = renamed or {}
    expected = [(kind, renamed.get(at, text)) for kind, text, at in _tokens(old, start, len(a) - tail)]
    return expected == [(kind, text) for kind, text, _ in _tokens(new, start, len(b) - tail)]


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of ``a`` and ``b``, by bisection on slices (C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _top_level_start(tree: tree_sitter.Tree, offset: int) -> int:
    """Where the top-level statement holding ``offset`` starts (0 if none does)."""
    for child in tree.root_node.children:
        if child.start_byte <= offset <= child.end_byte:
            return child.start_byte
    return 0


def _rename_one(source: str, data: bytes, function: tree_sitter.Node, taken: set[str], rng: random.Random,
                limit: int | None, forced: dict[str, str] | None) -> tuple[list[tuple[int, int, bytes]], dict[str, str]] | None:  # fmt: skip
    local = _locals(function)
    names = sorted(local)
    if forced is not None:
        names = [n for n in names if n in forced]
    elif limit is not None and len(names) > limit:
        names = sorted(rng.sample(names, limit))
    if not names:
        return None
    spelled = set(_WORD.findall(data[function.start_byte : function.end_byte].decode("utf-8", "replace")))
    if forced is not None:
        mapping = {n: forced[n] for n in names}
        if set(mapping.values()) & spelled:
            return None
    else:
        mapping = choose_names(names, taken | JS_RESERVED, rng)
    edits = [(n.start_byte, n.end_byte, mapping[name].encode()) for name in names for n in local[name]]
    return edits, mapping


def rename_in_script_functions(source: str, language: str, lines: Iterable[int], key: str, *,
                               limit: int | None = None, mapping: dict[str, str] | None = None,
                               taken: Iterable[str] = ()) -> Renamed | None:  # fmt: skip
    """Rename the locals of the innermost functions containing ``lines`` (an enclosing
    function stands in when the innermost has none); arguments as for
    :func:`reviewbench.mine.rename.rename_in_functions`. None when nothing could be renamed."""
    tree = parse(source, language)
    if tree.root_node.has_error:
        return None
    data = source.encode("utf-8", "surrogatepass")
    functions = [n for n in _walk(tree.root_node) if n.type in FUNCTIONS]
    rng = random.Random(f"rename:{key}")
    taken_names = set(_WORD.findall(source)) | set(taken)
    forced = mapping
    chosen: dict[str, str] = {}
    edits: list[tuple[int, int, bytes]] = []
    done: list[tree_sitter.Node] = []
    for line in sorted(set(lines)):
        around = sorted((f for f in functions if f.start_point[0] + 1 <= line <= f.end_point[0] + 1),
                        key=lambda f: f.end_byte - f.start_byte)  # fmt: skip
        for function in around:
            if any(_inside(function, d) or _inside(d, function) for d in done):
                break
            renamed = _rename_one(source, data, function, taken_names | set(chosen.values()), rng, limit, forced)
            if renamed is None:
                continue
            found, names = renamed
            if any(chosen.get(old, new) != new for old, new in names.items()):
                continue  # the same name renamed two ways in one file would not read as one rename
            edits.extend(found)
            chosen.update(names)
            done.append(function)
            break
    if not edits:
        return None
    out = data
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    result = out.decode("utf-8", "surrogatepass")
    if result == source or not same_tokens(source, result, language, {start: text.decode() for start, _, text in edits}):
        return None
    return Renamed(result, chosen)
