"""What every JavaScript/TypeScript mutation operator shares: sites on a tree-sitter tree.

The Python operators (:mod:`..mutations`) rewrite a libcst tree; tree-sitter trees are
read-only, so a script site is a byte range of the source and the text that replaces
it. Everything outside the range is untouched by construction, and the diff is the one
or two lines the mutation changes. As for Python, sites are only proposed inside
functions: module-level code runs at import time, where a mutant breaks everything.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import tree_sitter

from ...records import Severity
from ..languages.ecmascript import parse

__all__ = ["FUNCTIONS", "ParsedScript", "ScriptExamples", "ScriptOperator", "ScriptSite", "register", "registry",
           "statement_lines", "text_of"]

#: Nodes that open a function body.
FUNCTIONS = frozenset({
    "function_declaration", "generator_function_declaration", "function_expression", "function",
    "arrow_function", "generator_function", "method_definition",
})  # fmt: skip


@dataclass(frozen=True)
class ScriptExamples:
    """(before, after) sources, ``after`` one of the mutants of ``before``; and sources on which
    the operator must not fire. ``language`` names the grammar they are written in."""

    pairs: Sequence[tuple[str, str]]
    unchanged: Sequence[str] = ()
    language: str = "javascript"


@dataclass(frozen=True)
class ScriptSite:
    """One mutation: replace bytes ``start:end`` of the source by ``replacement``."""

    operator: str
    line: int
    end_line: int
    start: int
    end: int
    replacement: bytes
    note: str = ""


def text_of(node: tree_sitter.Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


class ScriptOperator(ABC):
    """Base of the script operators: :meth:`visit` yields sites for one node inside a function.

    Subclasses set the class attributes (the same vocabulary as the Python operators, so
    gold descriptions and ``--operators`` read alike) and live in a module with ``examples()``.
    """

    name: ClassVar[str]
    severity: ClassVar[Severity]
    hint_terms: ClassVar[tuple[str, ...]]
    summary: ClassVar[str]
    effect: ClassVar[str] = ""
    #: The node types :meth:`visit` is called for.
    node_types: ClassVar[frozenset[str]]
    #: Whether sites outside functions count (only refactors for controls set this).
    module_level: ClassVar[bool] = False

    @abstractmethod
    def visit(self, node: tree_sitter.Node, script: ParsedScript) -> Iterator[ScriptSite]:
        """The sites this operator offers at ``node``."""

    def site(self, start: int, end: int, replacement: str, note: str, at: tree_sitter.Node) -> ScriptSite:
        """A site replacing bytes ``start:end``; the quoted code of ``note`` is cut to one short line."""
        note = _QUOTED_CODE.sub(lambda m: f"`{_brief(m.group(1))}`", note)
        return ScriptSite(self.name, at.start_point[0] + 1, at.end_point[0] + 1, start, end,
                          replacement.encode("utf-8"), note)  # fmt: skip


_QUOTED_CODE = re.compile(r"`([^`]*)`")
_BRIEF = 60


def _brief(code: str) -> str:
    first = code.split("\n", 1)[0].rstrip()
    if first != code or len(first) > _BRIEF:
        return first[:_BRIEF].rstrip() + "…"
    return first


class ParsedScript:
    """One parsed JavaScript or TypeScript file, shared by every operator run on it."""

    def __init__(self, source: str, language: str) -> None:
        self.source = source
        self.data = source.encode("utf-8", "surrogatepass")
        self.language = language
        self.tree = parse(source, language)
        self.valid = not self.tree.root_node.has_error

    def sites(self, operators: Sequence[type[ScriptOperator]]) -> list[ScriptSite]:
        """Every site of ``operators`` inside a function, in source order per operator."""
        if not self.valid:
            return []
        instances = [op() for op in operators]
        found: list[list[ScriptSite]] = [[] for _ in instances]
        stack: list[tuple[tree_sitter.Node, bool]] = [(self.tree.root_node, False)]
        while stack:
            node, inside = stack.pop()
            for index, op in enumerate(instances):
                if node.type in op.node_types and (inside or op.module_level):
                    found[index].extend(op.visit(node, self))
            inner = inside or node.type in FUNCTIONS
            stack.extend((child, inner) for child in reversed(node.named_children))
        return [site for sites in found for site in sites]

    def apply(self, site: ScriptSite) -> str:
        """The source with ``site`` applied."""
        return (self.data[: site.start] + site.replacement + self.data[site.end :]).decode("utf-8", "surrogatepass")

    def line_start(self, offset: int) -> int:
        return self.data.rfind(b"\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """Offset just past the newline ending the line at ``offset`` (or the end)."""
        end = self.data.find(b"\n", offset)
        return len(self.data) if end < 0 else end + 1

    def whole_lines(self, node: tree_sitter.Node) -> tuple[int, int] | None:
        """The byte range of the full lines ``node`` fills alone, or None when other code
        shares its first or last line."""
        start, end = self.line_start(node.start_byte), self.line_end(node.end_byte)
        if self.data[start : node.start_byte].strip() or self.data[node.end_byte : end].strip():
            return None
        return start, end


def statement_lines(script: ParsedScript, block: tree_sitter.Node, index: int) -> tuple[int, int] | None:
    """The byte range that removes statement ``index`` of ``block`` whole, or None when it
    shares a line, has a comment right above it, or is the block's only statement."""
    body = [c for c in block.named_children if c.type != "comment"]
    if len(body) < 2:
        return None
    statement = body[index]
    previous = statement.prev_named_sibling
    if previous is not None and previous.type == "comment" and previous.end_point[0] >= statement.start_point[0] - 1:
        return None
    return script.whole_lines(statement)


_REGISTRY: dict[str, type[ScriptOperator]] = {}


def register(cls: type[ScriptOperator]) -> type[ScriptOperator]:
    """Class decorator: make a script operator available by its name."""
    if cls.name in _REGISTRY:
        raise ValueError(f"script mutation operator {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def registry() -> dict[str, type[ScriptOperator]]:
    """Every registered script operator by name, in registration order."""
    return dict(_REGISTRY)
