"""Files the setup generates into the project, carried into every scratch tree.

Installing a project can write files into its own tree that git ignores: hatch-vcs and
setuptools-scm write ``src/PKG/_version.py``, which ``PKG/__init__.py`` then imports. A
scratch tree is a fresh clone checked out case after case, so it never has them: every
test run fails importing the package (on python-humanize, 113 of 190 cases ended
``base_failing``). The setup's products are therefore copied into each scratch tree
after every checkout, under three conditions that keep the tree honest:

- the commit does not have the file (a file of the commit is never replaced), and git
  ignores it at that commit (the project itself says it is generated there);
- its folder exists in the commit: nothing is created that the commit lacks, and no
  folder on the way is a symlink (nothing is written outside the tree);
- it is a small regular file, not a cache, a build folder, an environment, package
  metadata or a compiled binary (``.so``): code compiled from HEAD is not the commit's
  code; build extensions per tree with ``--setup-cmd``.

The products of ``--setup`` are the untracked files of the environment's copy of the
project (at HEAD); those of ``--setup-cmd``, the untracked files it added to the scratch
tree, kept aside before the next checkout cleans them.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..git.scratch import ScratchClone

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "SetupProducts"]

#: Larger files are not carried over (a generated version file is a few hundred bytes).
MAX_FILE_BYTES = 1 << 20
#: At most this many files are carried over.
MAX_FILES = 200
_SKIP_DIRS = frozenset({
    ".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox",
    ".venv", "venv", ".eggs", "build", "dist", "node_modules", "htmlcov",
})  # fmt: skip
_SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".dll", ".o", ".a", ".egg-info", ".dist-info")


def _untracked(clone: ScratchClone) -> list[str]:
    """Untracked files of the clone's tree, ignored ones included (POSIX, relative)."""
    proc = clone.git("ls-files", "--others", "-z", check=False)
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _wanted(root: Path, relative: str) -> bool:
    parts = relative.split("/")
    if any(part in _SKIP_DIRS or part.endswith(_SKIP_SUFFIXES) for part in parts) or ".." in parts:
        return False
    try:
        info = os.lstat(root / relative)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES and _real_folder(root, parts[:-1])


def _real_folder(root: Path, parts: list[str]) -> bool:
    """``root/parts...`` exists and every step is a real folder (no symlink)."""
    here = root
    for part in parts:
        here = here / part
        try:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return False
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class SetupProducts:
    """Generated files under ``source``, to copy into scratch trees."""

    source: Path
    files: tuple[str, ...]

    @classmethod
    def of(cls, project: ScratchClone, before: frozenset[str] = frozenset()) -> SetupProducts:
        """The untracked files of ``project``'s tree worth carrying over, except those in
        ``before``."""
        root = project.path
        files = sorted(p for p in _untracked(project) if p not in before and _wanted(root, p))
        return cls(root, tuple(files[:MAX_FILES]))

    def stash(self, folder: Path) -> SetupProducts:
        """A copy of the files in ``folder`` (emptied first), which a checkout cannot clean."""
        shutil.rmtree(folder, ignore_errors=True)
        kept = []
        for relative in self.files:
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if _copy(self.source / relative, target):
                kept.append(relative)
        return SetupProducts(folder, tuple(kept))

    def restore(self, clone: ScratchClone) -> list[str]:
        """Copy into the clone's tree (at a fresh checkout) each file its commit lacks and
        ignores, whose folder the commit has; the files copied."""
        tree = clone.path
        candidates = [r for r in self.files if not os.path.lexists(tree / r) and _real_folder(tree, r.split("/")[:-1])]
        if not candidates:
            return []
        proc = clone.git("check-ignore", "--no-index", "-z", "--stdin", check=False,
                         stdin="\0".join(candidates).encode("utf-8", "surrogateescape") + b"\0")  # fmt: skip
        ignored = set(proc.stdout.decode("utf-8", "surrogateescape").split("\0"))
        return [r for r in candidates if r in ignored and _copy(self.source / r, tree / r)]


    def present(self, tree: Path) -> list[str]:
        """The files in ``tree`` that are copies of these (copied now or at an earlier
        checkout and kept since: git ignores them)."""
        return [r for r in self.files if _read(tree / r) is not None and _read(tree / r) == _read(self.source / r)]


def _read(path: Path) -> bytes | None:
    """A small regular file's bytes, not through a symlink; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        return handle.read(MAX_FILE_BYTES + 1)


def _copy(source: Path, target: Path) -> bool:
    """Copy one regular file without following a symlink at either end; never replace."""
    data = _read(source)
    if data is None:
        return False
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return False
    with os.fdopen(out, "wb") as handle:
        handle.write(data)
    return True
