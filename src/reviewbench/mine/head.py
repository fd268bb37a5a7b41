"""The repository's files at HEAD: what mutations and controls may change, and their tests.

Mutation cases apply to HEAD, and so do controls paired with them; controls paired with a
fix reversal apply to its fix commit, read through the same class (``commit=``). Their files are listed once (``git ls-tree``)
and read through one ``git cat-file --batch``, the same reader fix reversals use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from ..git.repo import Repository
from ..git.stream import BlobReader
from .diff import LFS_POINTER_HEADER
from .paths import SCRIPT_LANGUAGES, FileKind, PathClassifier, glob_regex, language_of

__all__ = ["HeadFile", "HeadTree"]


@dataclass(frozen=True)
class HeadFile:
    """One regular file at HEAD."""

    path: str
    mode: str
    blob: str


class HeadTree:
    """Python sources and tests at HEAD, their contents, dates and diff settings."""

    def __init__(self, repo: Repository, classifier: PathClassifier, blobs: BlobReader,
                 commit: str | None = None) -> None:  # fmt: skip
        self.repo = repo
        #: The commit whose tree this is: HEAD, or a fix commit its controls are paired with.
        self.commit = commit or repo.head
        self.classifier = classifier
        self.blobs = blobs
        self._texts: dict[str, str | None] = {}
        self._dates: dict[str, str | None] = {}
        self._python_diff: dict[str, bool] = {}

    @cached_property
    def files(self) -> dict[str, HeadFile]:
        """Regular files (not links or submodules) at HEAD, by path."""
        listing = self.repo.run("ls-tree", "-r", "-z", "--full-tree", self.commit)
        found: dict[str, HeadFile] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            mode, kind, blob = meta.split()
            if kind == "blob" and mode in ("100644", "100755"):
                found[path] = HeadFile(path, mode, blob)
        return found

    def _python(self, kind: FileKind) -> list[str]:
        return sorted(
            p for p in self.files
            if PurePosixPath(p).suffix == ".py" and self.classifier.kind(p) is kind
        )  # fmt: skip

    def _scripts(self, kind: FileKind) -> list[str]:
        return sorted(p for p in self.files if language_of(p) in SCRIPT_LANGUAGES and self.classifier.kind(p) is kind)

    def script_sources(self, globs: tuple[str, ...] = ()) -> list[str]:
        """JavaScript and TypeScript source files matching ``globs`` (docs/LANGUAGES.md)."""
        paths = self._scripts(FileKind.SOURCE)
        if globs:
            paths = [p for p in paths if any(glob_regex(g).match(p) for g in globs)]
        return paths

    @cached_property
    def script_tests(self) -> list[str]:
        """JavaScript and TypeScript test files."""
        return self._scripts(FileKind.TEST)

    @cached_property
    def scripted(self) -> bool:
        """Whether cases made at HEAD edit JavaScript/TypeScript rather than Python: a
        ``package.json`` at the root and more script sources than Python ones."""
        return "package.json" in self.files and len(self._scripts(FileKind.SOURCE)) > len(self._python(FileKind.SOURCE))

    def sources(self, globs: tuple[str, ...] = ()) -> list[str]:
        """Python source files (no tests, vendored or generated code) matching ``globs``."""
        paths = self._python(FileKind.SOURCE)
        if globs:
            paths = [p for p in paths if any(glob_regex(g).match(p) for g in globs)]
        return paths

    @cached_property
    def tests(self) -> list[str]:
        """Python test files."""
        return self._python(FileKind.TEST)

    def texts(self, paths: list[str]) -> dict[str, str | None]:
        """UTF-8 contents of ``paths`` (None for binary or undecodable files), cached."""
        wanted = [p for p in paths if p not in self._texts and p in self.files]
        data = self.blobs.get_many(list(dict.fromkeys(self.files[p].blob for p in wanted)))
        for path in wanted:
            raw = data.get(self.files[path].blob)
            try:
                lfs = raw is not None and raw.startswith(LFS_POINTER_HEADER)  # a pointer, not code
                self._texts[path] = None if raw is None or lfs or b"\0" in raw else raw.decode("utf-8")
            except UnicodeDecodeError:
                self._texts[path] = None
        return {p: self._texts.get(p) for p in paths}

    def text(self, path: str) -> str | None:
        return self.texts([path])[path]

    def date(self, path: str) -> str | None:
        """Author date of the last commit that touched ``path`` (the code's age, for cut-offs)."""
        if path not in self._dates:
            out = self.repo.run("log", "-1", "--format=%aI", self.commit, "--", path, check=False)
            self._dates[path] = out or None
        return self._dates[path]

    def python_funcnames(self, path: str) -> bool:
        """Whether ``.gitattributes`` gives ``path`` git's Python diff driver (hunk headers)."""
        if path not in self._python_diff:
            out = self.repo.run("check-attr", "-z", "diff", "--", path, check=False)
            parts = out.split("\0")
            self._python_diff[path] = len(parts) >= 3 and parts[2] == "python"
        return self._python_diff[path]
