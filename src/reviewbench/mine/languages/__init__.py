"""Languages mining reads code in: one module each, each with ``examples()``.

Importing this package registers every language. :func:`language_for` answers for any
name :func:`reviewbench.mine.paths.language_of` gives (or None): a language without a
module of its own is read by the generic one (nearest definition above, ``//`` or ``#``
comments). See docs/LANGUAGES.md.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from . import ecmascript, generic, python  # noqa: F401 - imported to register
from ._base import Language, LanguageExamples, SymbolLookup, by_name, register, registry

__all__ = ["Language", "LanguageExamples", "SymbolLookup", "examples_of", "language_for", "register", "registry"]


@lru_cache(maxsize=64)
def language_for(name: str | None) -> Language:
    """The language reading files of ``name`` (the generic one when none is registered)."""
    cls = by_name().get(name or "generic", generic.Generic)
    return generic.Generic(name) if cls is generic.Generic else cls()


def examples_of(language: type[Language]) -> LanguageExamples:
    """The ``examples()`` of the module defining ``language``."""
    return importlib.import_module(language.__module__).examples()
