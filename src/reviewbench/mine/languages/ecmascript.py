"""JavaScript and TypeScript: definitions from a tree-sitter syntax tree, identifiers from a lexer.

JavaScript names most of its functions by binding them (``var parse = function (…)``,
``const parse = (…) =>``, ``exports.parse = function``, ``{ parse: function }``), so a
"line that starts a definition" regex misses them, and "the nearest definition above"
labels module-level constants and JSDoc blocks with the next function. The tree gives each
definition its real span. Identifiers are read by a small lexer instead, because they come
from a few lines of a hunk, which rarely parse on their own (a hunk may start inside a JSDoc).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

from ._base import Language, LanguageExamples, SymbolLookup, register

__all__ = ["JavaScript", "TypeScript", "examples", "parse"]

#: Declarations that name themselves.
_DECLARATIONS = frozenset({
    "function_declaration", "generator_function_declaration", "class_declaration",
    "abstract_class_declaration", "interface_declaration", "enum_declaration", "internal_module",
    "type_alias_declaration",
    "method_definition", "method_signature", "abstract_method_signature", "function_signature",
})  # fmt: skip
#: Values that are a definition when bound to a name.
_FUNCTIONS = frozenset({"function_expression", "function", "arrow_function", "generator_function",
                        "class"})  # fmt: skip
_NAME = re.compile(r"[A-Za-z_$#][\w$]*(?:\.[A-Za-z_$#][\w$]*)*\Z")


@cache
def _parser(grammar: str) -> tree_sitter.Parser:
    capsule = {
        "javascript": tree_sitter_javascript.language,
        "typescript": tree_sitter_typescript.language_typescript,
        "tsx": tree_sitter_typescript.language_tsx,
    }[grammar]()
    return tree_sitter.Parser(tree_sitter.Language(capsule))


@lru_cache(maxsize=64)
def parse(text: str, language: str) -> tree_sitter.Tree:
    """``text`` parsed as ``language`` (TypeScript falls back to TSX when only TSX parses it).

    Cached: mining reads one file's tree for its symbols, its sites and each rename, and
    nothing edits a tree (edits are made on the text).
    """
    data = text.encode("utf-8", "surrogatepass")
    if language != "typescript":
        return _parser("javascript").parse(data)
    tree = _parser("typescript").parse(data)
    if tree.root_node.has_error:
        tsx = _parser("tsx").parse(data)
        if not tsx.root_node.has_error:
            return tsx
    return tree


def _text(node: tree_sitter.Node | None) -> str | None:
    if node is None or node.text is None:
        return None
    return node.text.decode("utf-8", "replace")


def _binding_name(node: tree_sitter.Node | None) -> str | None:
    """A readable name for what ``node`` binds: ``Foo.prototype.bar`` reads ``Foo.bar``,
    ``module.exports.parse`` and ``this.parse`` read ``parse``; a computed key has none."""
    text = _text(node)
    if text is None:
        return None
    if node is not None and node.type == "string":
        text = text[1:-1]
    if text in ("module.exports", "exports"):
        return "module.exports"  # the module's one export: the name its hunk header shows
    parts = [p for p in text.split(".") if p != "prototype"]
    while parts[:1] in (["module"], ["exports"], ["this"]) and len(parts) > 1:
        parts = parts[1:]
    name = ".".join(parts)
    return name if _NAME.match(name) else None


def _definition(node: tree_sitter.Node) -> tuple[str, tuple[int, ...]] | None:
    """(name, ids of the nodes below that it accounts for) when ``node`` defines a named
    function or class. A binding's span is its statement's, so its first line counts."""
    kind = node.type
    if kind in _DECLARATIONS or kind in ("function_expression", "generator_function", "class"):
        name = _binding_name(node.child_by_field_name("name"))
        return (name, ()) if name else None
    if kind == "export_statement" and any(c.type == "default" for c in node.children):
        value = node.child_by_field_name("value") or node.child_by_field_name("declaration")
        if value is not None and value.type in _FUNCTIONS and value.child_by_field_name("name") is None:
            return ("default", (value.id,))  # `export default function () {}`: the module's default export
    inner = node
    if kind in ("lexical_declaration", "variable_declaration", "expression_statement") and node.named_child_count == 1:
        inner = node.named_children[0]
    fields = {
        "variable_declarator": ("name", "value"),
        "assignment_expression": ("left", "right"),
        "pair": ("key", "value"),
        "field_definition": ("property", "value"),
        "public_field_definition": ("name", "value"),
    }.get(inner.type)
    if fields is None:
        return None
    key, value = (inner.child_by_field_name(f) for f in fields)
    value = _invoked(value) if inner.type == "variable_declarator" else value
    if value is None or value.type not in _FUNCTIONS or key is None:
        return None
    if inner.type == "variable_declarator" and key.type != "identifier":
        return None  # a destructuring pattern
    name = _binding_name(key)
    own = value.child_by_field_name("name") if value.type in ("function_expression", "generator_function", "class") else None
    if name == "module.exports" and own is not None:
        name = _binding_name(own)  # `module.exports = function mimeScore (…)`: what callers call it
    return (name, (inner.id, value.id)) if name else None


def _invoked(value: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The function of ``(function () { … }())`` or ``(() => { … })()``: a binding of an
    immediately invoked function is named by the binding; other values as they are."""
    node = value
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node is None or node.type != "call_expression":
        return value
    function = node.child_by_field_name("function")
    while function is not None and function.type == "parenthesized_expression" and function.named_child_count == 1:
        function = function.named_children[0]
    return function if function is not None and function.type in _FUNCTIONS else value


def definitions(tree: tree_sitter.Tree) -> Iterator[tuple[int, int, int, str]]:
    """(first line, last line, depth, dotted name) of every named definition, 1-based."""
    stack: list[tuple[tree_sitter.Node, str, int, frozenset[int]]] = [(tree.root_node, "", 0, frozenset())]
    while stack:
        node, prefix, depth, consumed = stack.pop()
        found = None if node.id in consumed else _definition(node)
        inner_prefix, inner_depth = prefix, depth
        inner_consumed: frozenset[int] = frozenset()
        if found is not None:
            name, below = found
            dotted = f"{prefix}{name}"
            yield node.start_point[0] + 1, node.end_point[0] + 1, depth + 1, dotted
            inner_prefix, inner_depth, inner_consumed = dotted + ".", depth + 1, frozenset(below)
        for child in reversed(node.named_children):
            # A consumed node's own children are still below the definition.
            stack.append((child, inner_prefix, inner_depth, inner_consumed | consumed if node.id in consumed else inner_consumed))


class _Scripts(Language):
    grammar = "javascript"

    def symbols(self, text: str) -> SymbolLookup:
        spans = sorted(definitions(parse(text, self.grammar)))

        def at(line: int) -> str | None:
            inside = [(start, depth, name) for start, end, depth, name in spans if start <= line <= end]
            return max(inside)[2] if inside else None

        return at

    def code(self, lines: Sequence[str]) -> list[str]:
        return _Lexer().code(lines)

    def uncommented(self, lines: Sequence[str]) -> list[str]:
        return _Lexer(keep=True).code(lines)


@register
class JavaScript(_Scripts):
    names = ("javascript",)
    grammar = "javascript"


@register
class TypeScript(_Scripts):
    names = ("typescript",)
    grammar = "typescript"


#: After these a ``/`` starts a regular expression literal, not a division.
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_KEYWORDS = frozenset({"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw",
                             "yield", "await", "else", "do"})  # fmt: skip
_WORD_TAIL = re.compile(r"[\w$]+\Z")


class _Lexer:
    """Blanks comments, string and template text, and regular expression literals (with
    ``keep``, comments only: literals stay as written).

    State carries over lines (block comments, template literals with ``${…}`` nested in
    them); a fragment that starts inside a block comment (a hunk beginning mid-JSDoc) is
    recognised by a ``*/`` before any ``/*``, or by lines that start with ``*``.
    """

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self.in_comment = False
        #: Open templates: for each, -1 while in its text, else the brace depth of its ``${``.
        self.templates: list[int] = []
        self.code_seen = False

    def code(self, lines: Sequence[str]) -> list[str]:
        joined = "\n".join(lines)
        close, opening = joined.find("*/"), joined.find("/*")
        self.in_comment = close >= 0 and (opening < 0 or close < opening)
        return [self._line(line) for line in lines]

    def _line(self, line: str) -> str:
        stripped = line.strip()
        if (not self.code_seen and not self.in_comment and not self.templates and stripped.startswith("*")
                and not stripped.startswith("*/") and (len(stripped) == 1 or stripped[1] in " @*")):
            return ""  # a JSDoc's middle at the top of a fragment
        out: list[str] = []
        i, n = 0, len(line)
        while i < n:
            if self.in_comment:
                end = line.find("*/", i)
                if end < 0:
                    return "".join(out)
                self.in_comment, i = False, end + 2
                continue
            if self.templates and self.templates[-1] < 0:
                i = self._template_text(line, i, out)
                continue
            c = line[i]
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                self.in_comment, i = True, i + 2
                continue
            if c in "'\"":
                end = _skip_quoted(line, i, c)
                out.append(line[i:end] if self.keep else '""')
                i = end
            elif c == "`":
                self.templates.append(-1)
                out.append("`" if self.keep else " ")
                i += 1
            elif c == "{" and self.templates:
                self.templates[-1] += 1
                out.append(c)
                i += 1
            elif c == "}" and self.templates:
                if self.templates[-1] == 0:
                    self.templates[-1] = -1  # back in the template's text
                    out.append("}" if self.keep else " ")
                else:
                    self.templates[-1] -= 1
                    out.append(c)
                i += 1
            elif c == "/" and _regex_can_start("".join(out)):
                end = _skip_regex(line, i)
                out.append(line[i:end] if self.keep else "/x/")
                i = end
            else:
                out.append(c)
                i += 1
            if not c.isspace():
                self.code_seen = True
        return "".join(out)

    def _template_text(self, line: str, i: int, out: list[str]) -> int:
        start = i
        while i < len(line):
            c = line[i]
            if c == "\\":
                i += 2
            elif c == "`":
                self.templates.pop()
                out.append(line[start : i + 1] if self.keep else " ")
                return i + 1
            elif line.startswith("${", i):
                self.templates[-1] = 0
                out.append(line[start : i + 2] if self.keep else " ")
                return i + 2
            else:
                i += 1
        if self.keep:
            out.append(line[start:])
        return i


def _skip_quoted(line: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(line):
        if line[j] == "\\":
            j += 2
        elif line[j] == quote:
            return j + 1
        else:
            j += 1
    return j


def _regex_can_start(before: str) -> bool:
    tail = before.rstrip()
    if not tail:
        return True
    if tail[-1] in _REGEX_AFTER:
        return True
    word = _WORD_TAIL.search(tail)
    return word is not None and word.group() in _REGEX_KEYWORDS


def _skip_regex(line: str, i: int) -> int:
    j, in_class = i + 1, False
    while j < len(line):
        c = line[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            j += 1
            while j < len(line) and line[j].isalpha():
                j += 1
            return j
        j += 1
    return j


def examples() -> LanguageExamples:
    return LanguageExamples(
        symbols=[
            ("var a = 1;\nvar parse = function (s) {\n  return s;\n};\n",
             {1: None, 2: "parse", 3: "parse"}),
            ("const f = (x) => {\n  return x;\n};\nexports.g = function () {};\n",
             {2: "f", 4: "g"}),
        ],
        identifiers=[
            (["/** Created to avoid it. */", "const total = `sum ${count}`; // why"], {"total", "count"}),
        ],
        uncommented=[
            (["/** Created to avoid it. */", "const t = `a // ${n /* x */}`; // why", "const r = /\\/*/g;"],
             ["", "const t = `a // ${n }`; ", "const r = /\\/*/g;"]),
        ],
    )
