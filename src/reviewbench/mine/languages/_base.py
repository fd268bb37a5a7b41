"""What every language shares: the interface mining reads code through, and its registry.

Mining needs three things from a language: the function or class that encloses a line (a
defect's gold symbol), the words of a few lines that are code rather than prose (a
defect's identifiers: a reviewer quoting a comment has not named it), and those lines
without their comments (a fix of comments only is no case: ``docs_only``). A language is one
module with a registered class and an ``examples()`` that the shared test runs, so a new
language is one module plus its import in ``__init__``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["Language", "LanguageExamples", "SymbolLookup", "register", "registry"]

#: Dotted name of the innermost definition around a 1-based line, or None.
SymbolLookup = Callable[[int], "str | None"]


@dataclass(frozen=True)
class LanguageExamples:
    """What a language must do, for the shared parametrised test.

    ``symbols`` are (source, {line: expected symbol}); ``identifiers`` are (consecutive
    lines, the identifiers of their code); ``uncommented`` are (consecutive lines, the
    same lines without their comments).
    """

    symbols: Sequence[tuple[str, Mapping[int, str | None]]]
    identifiers: Sequence[tuple[Sequence[str], set[str]]]
    uncommented: Sequence[tuple[Sequence[str], Sequence[str]]] = ()


class Language(ABC):
    """Base of the languages: subclasses set ``names`` and implement the methods."""

    #: The names :func:`reviewbench.mine.paths.language_of` gives the files this reads.
    names: ClassVar[tuple[str, ...]]

    @abstractmethod
    def symbols(self, text: str) -> SymbolLookup:
        """A lookup of the enclosing definition for each line of ``text``."""

    @abstractmethod
    def code(self, lines: Sequence[str]) -> list[str]:
        """Each of the consecutive ``lines`` with its comments and string text blanked out."""

    @abstractmethod
    def uncommented(self, lines: Sequence[str]) -> list[str]:
        """Each of the consecutive ``lines`` without its comments, all code kept (strings
        too): a change whose lines read the same this way changed comments only."""


_REGISTRY: dict[str, type[Language]] = {}


def register(cls: type[Language]) -> type[Language]:
    """Class decorator: make a language available under each of its names."""
    for name in cls.names:
        if name in _REGISTRY:
            raise ValueError(f"language {name!r} registered twice")
        _REGISTRY[name] = cls
    return cls


def registry() -> dict[str, type[Language]]:
    """Every registered language class by its first name, in registration order."""
    return {cls.names[0]: cls for cls in dict.fromkeys(_REGISTRY.values())}


def by_name() -> dict[str, type[Language]]:
    """Every registered language class under each of its names."""
    return dict(_REGISTRY)
