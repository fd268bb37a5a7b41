"""What kind of file a path is: source, test, docs, lockfile, vendored or other.

The kind decides what a fix reversal may contain: only source files are reversed; test
files stay in the base tree so that validation can observe the reintroduced bug.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from pathlib import PurePosixPath

__all__ = ["SCRIPT_LANGUAGES", "FileKind", "PathClassifier", "glob_regex", "language_of"]


class FileKind(StrEnum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    LOCKFILE = "lockfile"
    VENDORED = "vendored_or_generated"
    EXCLUDED = "excluded"
    OTHER = "other"


LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyx": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".hpp": "cpp", ".hh": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
    ".swift": "swift", ".m": "objc", ".mm": "objc", ".sh": "shell", ".bash": "shell",
    ".lua": "lua", ".pl": "perl", ".pm": "perl", ".r": "r", ".jl": "julia", ".dart": "dart",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
    ".clj": "clojure", ".vue": "vue", ".svelte": "svelte", ".sql": "sql", ".zig": "zig",
    ".nim": "nim", ".groovy": "groovy",
}  # fmt: skip

#: The languages mutations, controls and renames edit through tree-sitter (docs/LANGUAGES.md).
SCRIPT_LANGUAGES = frozenset({"javascript", "typescript"})

LOCKFILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
    "poetry.lock", "Pipfile.lock", "pdm.lock", "uv.lock", "Cargo.lock", "go.sum",
    "Gemfile.lock", "composer.lock", "mix.lock", "pubspec.lock", "Package.resolved",
    "flake.lock", "gradle.lockfile", "conda-lock.yml",
})  # fmt: skip

VENDORED_PATTERNS = (
    "**/vendor/**", "**/vendored/**", "**/_vendor/**", "**/third_party/**",
    "**/third-party/**", "**/node_modules/**", "**/dist/**", "**/build/**",
    "**/generated/**", "**/gen/**", "*_pb2.py", "*_pb2_grpc.py", "*.pb.go", "*.pb.cc",
    "*.pb.h", "*.min.js", "*.min.css", "*.bundle.js", "*_generated.*", "*.generated.*",
    "*.g.dart", "*.designer.cs",
)  # fmt: skip

#: Lint, formatter, bundler and test-runner configuration of Node projects: code, but no
#: one's product (``eslint.config.mjs``, ``vite.config.ts``, ``.eslintrc.js``). A
#: ``*.config.*`` under a ``src/`` folder is the project's own (Angular's ``app.config.ts``).
TOOL_CONFIG_PATTERNS = (
    "*.config.js", "*.config.mjs", "*.config.cjs", "*.config.ts", "*.config.mts", "*.config.cts",
    ".*rc.js", ".*rc.cjs", ".*rc.mjs", ".*rc.ts", ".*rc.cts", ".*rc.mts", ".eslintrc*", ".prettierrc*",
    ".babelrc*", "Gruntfile.js", "Gruntfile.cjs", "gulpfile.js", "gulpfile.mjs", "gulpfile.cjs", "gulpfile.ts",
)  # fmt: skip
_OWN_CONFIG = ("**/src/**",)

DOCS_PATTERNS = (
    "*.md", "*.rst", "*.txt", "*.adoc", "*.asciidoc", "*.org", "*.rdoc", "**/docs/**",
    "**/doc/**", "LICENSE*", "LICENCE*", "COPYING*", "AUTHORS*", "CHANGELOG*", "CHANGES*",
    "HISTORY*", "NEWS*", "CONTRIBUTORS*", "NOTICE*", "*.ipynb",
)  # fmt: skip


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob to a regex over a '/'-separated path.

    ``**/`` matches zero or more directories, ``*`` and ``?`` never cross '/', and a
    pattern without '/' matches the file name anywhere in the tree (as in .gitignore).
    """
    anchored = "/" in pattern.rstrip("/")
    if pattern.startswith("/"):
        pattern = pattern[1:]
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(pattern[i]))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    return re.compile(body + r"\Z" if anchored else r"(?:.*/)?" + body + r"\Z")


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_regex(p).match(path) for p in patterns)


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # surrogate escapes of bytes that are not UTF-8
        return False
    return True


def language_of(path: str) -> str | None:
    """The programming language of a path, from its extension; None if unknown."""
    return LANGUAGES.get(PurePosixPath(path).suffix.lower())


class PathClassifier:
    """Sorts paths into kinds under one mining configuration."""

    def __init__(
        self,
        test_patterns: tuple[str, ...],
        include: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> None:
        self.test_patterns = test_patterns
        self.include = include
        self.exclude = exclude
        self._cache: dict[str, FileKind] = {}

    def kind(self, path: str) -> FileKind:
        found = self._cache.get(path)
        if found is None:
            found = self._cache[path] = self._kind(path)
        return found

    def _kind(self, path: str) -> FileKind:
        if not path.isascii() and not _is_utf8(path):
            # A name git cannot hand us as UTF-8 could not be written to the JSON records.
            return FileKind.OTHER
        if self.exclude and _matches(path, self.exclude):
            return FileKind.EXCLUDED
        if _matches(path, self.test_patterns):
            return FileKind.TEST
        if PurePosixPath(path).name in LOCKFILES or path.endswith(".lock"):
            return FileKind.LOCKFILE
        if _matches(path, VENDORED_PATTERNS):
            return FileKind.VENDORED
        if _matches(path, TOOL_CONFIG_PATTERNS) and not _matches(path, _OWN_CONFIG):
            return FileKind.OTHER
        if self.include:
            return FileKind.SOURCE if _matches(path, self.include) else FileKind.EXCLUDED
        if _matches(path, DOCS_PATTERNS):
            return FileKind.DOCS
        return FileKind.SOURCE if language_of(path) else FileKind.OTHER
