"""Which JavaScript/TypeScript test files load a module: a mutation's first, cheaper selection.

A test file loads a module when one of its ``require('…')``, ``import … from '…'`` or
``import('…')`` specifiers, resolved against the test's folder as Node and bundlers do
(the exact path, then with a ``.js/.ts/…`` extension, then ``…/index.*``), names it. A
module loaded by most tests (a package's entry point) is better served by the whole suite.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["ScriptTestLocator"]

_SPECIFIER = re.compile(r"""(?:require\s*\(\s*|import\s*\(\s*|\bfrom\s+|^\s*import\s+)(['"])(\.{1,2}/[^'"]*)\1""", re.MULTILINE)
_EXTENSIONS = ("", ".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts")
_MAX_IMPORTERS = 10


class ScriptTestLocator:
    """Test files per module, found from the tests' own import specifiers."""

    def __init__(self, tests: list[str], texts: dict[str, str | None]) -> None:
        self._loads: dict[str, set[str]] = {}
        for test in tests:
            text = texts.get(test)
            if not text:
                continue
            folder = posixpath.dirname(test)
            for match in _SPECIFIER.finditer(text):
                target = posixpath.normpath(posixpath.join(folder, match.group(2)))
                for candidate in _candidates(target):
                    self._loads.setdefault(candidate, set()).add(test)

    def for_module(self, path: str) -> list[str]:
        found = sorted(self._loads.get(path, ()))
        return found if len(found) <= _MAX_IMPORTERS else []


def _candidates(target: str) -> list[str]:
    stem = target
    for ext in (".js", ".mjs", ".cjs"):
        if target.endswith(ext):  # TypeScript sources are imported by their compiled name
            stem = target[: -len(ext)]
    found = [target + ext for ext in _EXTENSIONS] + [f"{target}/index{ext}" for ext in _EXTENSIONS[1:]]
    if stem != target:
        found += [stem + ext for ext in _EXTENSIONS[1:]]
    return found
