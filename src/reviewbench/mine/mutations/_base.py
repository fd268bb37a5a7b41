"""What every mutation operator shares: sites found on a concrete syntax tree, and the registry.

An operator is a libcst visitor that proposes *sites*: a node of the parsed module and
the node that replaces it. Applying a site re-prints the module through libcst, so every
byte outside the replaced node (comments, spacing, quotes) is untouched and the diff is
the one or two lines the mutation changes. Sites are only proposed inside functions:
module-level code runs at import time, where a mutant breaks everything at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    WhitespaceInclusivePositionProvider,
)

from ...records import Severity

__all__ = [
    "Examples",
    "Operator",
    "ParsedModule",
    "Site",
    "register",
    "registry",
    "remove_statement",
]


@dataclass(frozen=True)
class Examples:
    """What an operator must do, for the shared parametrised test.

    ``pairs`` are (before, after) sources: ``after`` must be one of the mutants of
    ``before``. ``unchanged`` are sources on which the operator must not fire at all.
    """

    pairs: Sequence[tuple[str, str]]
    unchanged: Sequence[str] = ()


@dataclass(frozen=True)
class Site:
    """One mutation an operator can make: replace ``node`` by ``replacement``."""

    operator: str
    line: int = field(metadata={"doc": "First line of the changed code, before the mutation."})
    end_line: int
    node: cst.CSTNode = field(repr=False, compare=False)
    replacement: cst.CSTNode = field(repr=False, compare=False)
    note: str = field(default="", metadata={"doc": "What changed, for the gold description."})


class ParsedModule:
    """One parsed source file and its positions, shared by every operator run on it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self._spans: list[tuple[int, int, int, int]] | None = None
        self._ranges: Mapping[cst.CSTNode, CodeRange] | None = None
        self._line_offsets: list[int] | None = None

    def _splice(self, site: Site) -> str | None:
        """Print only the replaced node, when it is one that prints the same wherever it
        stands (not a statement or block, nor a replacement over several lines: those print
        their block's indentation), and its own text is found exactly where the tree puts it."""
        node = site.node
        if isinstance(node, (cst.BaseStatement, cst.BaseSuite, cst.Module)) or isinstance(
            site.replacement, (cst.BaseStatement, cst.BaseSuite, cst.Module)
        ):
            return None
        if self._ranges is None:
            self._ranges = self.wrapper.resolve(WhitespaceInclusivePositionProvider)
            starts, offset = [0], 0
            for line in self.source.split("\n"):
                offset += len(line) + 1
                starts.append(offset)
            self._line_offsets = starts
        found = self._ranges.get(node)
        if found is None or self._line_offsets is None:
            return None
        start = self._line_offsets[found.start.line - 1] + found.start.column
        end = self._line_offsets[found.end.line - 1] + found.end.column
        if self.source[start:end] != self.module.code_for_node(node):
            return None
        replacement = self.module.code_for_node(site.replacement)
        if "\n" in replacement:
            return None  # its continuation lines are indented by the block around it: unknown here
        text = self.source[:start] + replacement + self.source[end:]
        return None if text == self.source else text

    def _statement_spans(self) -> list[tuple[int, int, int, int]]:
        """(first line, last line, start offset, end offset) of each top-level statement's
        text, leading comments and blank lines included; empty when printing them one by
        one does not give back the source exactly (then :meth:`apply` prints it whole)."""
        if self._spans is None:
            spans: list[tuple[int, int, int, int]] = []
            header = "".join(self.module.code_for_node(line) for line in self.module.header)
            offset, line = len(header), header.count("\n") + 1
            for statement in self.module.body:
                text = self.module.code_for_node(statement)
                if self.source[offset : offset + len(text)] != text:
                    spans = []
                    break
                lines = text.count("\n")
                spans.append((line, line + max(lines - 1, 0), offset, offset + len(text)))
                offset, line = offset + len(text), line + lines
            self._spans = spans
        return self._spans

    def _apply_in_statement(self, site: Site) -> str | None:
        """Re-print only the top-level statement holding ``site``: re-printing the whole
        module per mutant was most of mining time."""
        for index, (first, last, start, end) in enumerate(self._statement_spans()):
            if first <= site.line and site.end_line <= last:
                statement = self.module.body[index]
                replaced = statement.deep_replace(site.node, site.replacement)
                text = self.source[:start] + self.module.code_for_node(replaced) + self.source[end:]
                return None if text == self.source else text  # unchanged: the node is elsewhere

        return None

    def sites(self, operators: Sequence[type[Operator]]) -> list[Site]:
        """Every site of ``operators`` in this module, in source order per operator.

        All operators ride one batched walk of the tree: walking it once per operator
        made site search the bulk of mining time.
        """
        visitors = [op_cls() for op_cls in operators]
        memo: dict[tuple[str, int], object] = {}  # the module's nodes outlive the walk: ids stay unique
        for visitor in visitors:
            visitor.memo = memo
        self.wrapper.visit_batched(visitors)
        return [site for visitor in visitors for site in visitor.sites]

    def apply(self, site: Site) -> str:
        """The module's source with ``site`` applied."""
        if site.node is self.module:
            assert isinstance(site.replacement, cst.Module)
            return site.replacement.code
        fast = self._splice(site) or self._apply_in_statement(site)
        if fast is not None:
            return fast
        mutated = self.module.deep_replace(site.node, site.replacement)
        assert isinstance(mutated, cst.Module)  # the site is below the module, which comes back
        return mutated.code


class Operator(cst.BatchableCSTVisitor):
    """Base of the mutation operators: a visitor that collects sites inside functions.

    Subclasses set the class attributes, implement ``visit_*`` methods that call
    :meth:`propose`, and live in a module with an ``examples()`` function.
    """

    METADATA_DEPENDENCIES = (PositionProvider,)

    name: ClassVar[str]
    severity: ClassVar[Severity]
    hint_terms: ClassVar[tuple[str, ...]]
    summary: ClassVar[str]
    #: What the mutated code now does wrong, for the gold description (a matcher compares a
    #: reviewer's claim with it): lower case, no final stop.
    effect: ClassVar[str] = ""
    #: Whether sites outside functions count (only refactors for controls set this).
    module_level: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[Site] = []
        self._functions = 0
        #: What the visitors of one walk compute once for all (the refactors' census of names):
        #: :meth:`ParsedModule.sites` gives them one dict, keyed by what asks and the node's id.
        self.memo: dict[tuple[str, int], object] = {}

    def get_visitors(self) -> dict[str, Callable[[cst.CSTNode], None]]:
        """libcst's own lookup inspects ~600 inherited stubs per instance; names are per class."""
        cls = type(self)
        names = _VISITOR_NAMES.get(cls)
        if names is None:
            names = _VISITOR_NAMES[cls] = tuple(
                name for name in dir(cls)
                if name.startswith(("visit_", "leave_")) and not getattr(getattr(cls, name), "_is_no_op", False)
            )  # fmt: skip
        return {name: getattr(self, name) for name in names}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions -= 1

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.get_metadata(PositionProvider, node)
        return where.start.line, where.end.line

    def propose(self, node: cst.CSTNode, replacement: cst.CSTNode, note: str,
                at: cst.CSTNode | None = None) -> None:  # fmt: skip
        """Offer replacing ``node`` by ``replacement``; ``at`` is what the line numbers name."""
        if self._functions <= 0 and not self.module_level:
            return
        line, end = self.position(at if at is not None else node)
        self.sites.append(Site(self.name, line, end, node, replacement, note))


_REGISTRY: dict[str, type[Operator]] = {}
_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


def register(cls: type[Operator]) -> type[Operator]:
    """Class decorator: make an operator available by its name."""
    if cls.name in _REGISTRY:
        raise ValueError(f"mutation operator {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def registry() -> dict[str, type[Operator]]:
    """Every registered operator by name, in registration order."""
    return dict(_REGISTRY)


def _has_comment(lines: Sequence[cst.EmptyLine]) -> bool:
    return any(line.comment is not None for line in lines)


Body = cst.IndentedBlock | cst.Module


def statements(block: Body) -> Sequence[cst.BaseStatement]:
    return block.body


def remove_statement(block: Body, index: int) -> Body | None:
    """``block`` without its statement at ``index``, or None when that would look wrong.

    The removed statement's blank lines above it pass to the next statement, so that only
    the statement's own lines leave the file. A statement with a comment above it is kept
    (the comment would be left describing code that is gone), as is a block's only
    statement (Python needs one).
    """
    body = list(statements(block))
    if len(body) < 2:
        return None
    removed = body[index]
    leading = getattr(removed, "leading_lines", ())
    if _has_comment(leading):
        return None
    del body[index]
    if index < len(body):
        after = body[index]
        body[index] = after.with_changes(leading_lines=(*leading, *after.leading_lines))  # type: ignore[attr-defined]
    return block.with_changes(body=body)


def simple_statement(stmt: cst.BaseStatement) -> cst.BaseSmallStatement | None:
    """The only small statement of a one-statement line (``x = 1``), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None

