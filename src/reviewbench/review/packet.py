"""Building review packets, and the read-only post-patch trees some conditions ask for.

A tree is exported from the object store (``read-tree`` + ``checkout-index`` into a private
index, so ``export-ignore`` attributes cannot drop files), the case patch is applied, and
the result is made read-only. It has no ``.git``: history would leak the fix.

A fix reversal's base is the fix commit, so its tree would hold the tests the fix added or
changed, which name what the change under review breaks (and an agent could run them).
Reviewers get the tree with those test files as in the fix's parent (gold's
``provenance.test_paths`` wherever the case's base is ``provenance.commit``: the defect
case, its mirror and its rename variants); validation, which works in its own clones, keeps
using them. Every exported tree carries ``REVIEW.md`` (:data:`TREE_NOTE`, the same text for
every case, naming no test: a note that differed would give the stratum away), and a tree
packet says the same in ``tree_note``.

Trees and corpora are untrusted (docs/HOSTILE.md): a symbolic link whose target lies
outside the tree (``settings.py -> /proc/self/environ``, ``../../.bashrc``) is removed from
an exported tree, and the changed files a packet carries are read without following any
link, so no host file reaches a reviewer.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT, raise_if_interrupted
from ..records import Case, GoldRecord, ReviewPacket
from ..sandbox import protect
from ..store.corpus import patch_file, read_patch
from ..store.scratch import make_scratch, remove_tree, sweep_stale

__all__ = ["NOTE_FILE", "TREES_PREFIX", "TREE_NOTE", "PacketBuilder", "drop_escaping_links", "read_in_tree"]

#: Exported trees live in ``$TMPDIR/reviewbench-trees-<pid>-*`` (see :mod:`..store.scratch`).
TREES_PREFIX = "reviewbench-trees-"
#: The note at the root of every exported tree (``.reviewbench/REVIEW.md`` when the
#: repository has a ``REVIEW.md`` of its own).
NOTE_FILE = "REVIEW.md"
#: What it says: the same for every case.
TREE_NOTE = """\
# About this tree

This is the repository with the change under review applied, exported read-only and
without its history.

Test files may be older than the rest of the tree: where the commit the change applies to
is a fix, the test files that fix added or changed are shown as they were before it, so
that no test tells what the change breaks. The benchmark's own validation used them; a
review is of the change alone.
"""


class PacketBuilder:
    """Packets for the cases of one corpus; exported trees live until :meth:`close`."""

    def __init__(self, corpus_path: Path, repo: Path, gold: Iterable[GoldRecord] = ()) -> None:
        """``gold``: the corpus's labels, read here only for the fix tests a tree holds back."""
        self.corpus_path = corpus_path
        self.repo = repo
        self._held_back = {g.case_id: g.provenance for g in gold
                           if g.provenance.commit and g.provenance.parent and g.provenance.test_paths}  # fmt: skip
        sweep_stale(TREES_PREFIX)  # what killed runs left, whether or not this one exports
        self._root: Path | None = None  # made on the first export: diff-only runs leave nothing
        self._hidden: AbstractContextManager[None] | None = None  # the protection of the root from sandboxed reviewers, once made
        self._trees: dict[str, Path] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @property
    def root(self) -> Path:
        with self._guard:
            if self._root is None:
                self._root = make_scratch(TREES_PREFIX)  # sweeps those of killed runs first
                self._hidden = protect(self._root)  # a sandboxed reviewer sees its case's tree, no other
                self._hidden.__enter__()
            return self._root

    def diff(self, case: Case) -> str:
        return read_patch(self.corpus_path, case).decode("utf-8", "replace")

    def tree(self, case: Case) -> Path:
        """The post-patch tree of ``case`` (exported once, shared by every run of the case)."""
        with self._guard:
            lock = self._locks.setdefault(case.case_id, threading.Lock())
        with lock:
            if case.case_id not in self._trees:
                self._trees[case.case_id] = self._export(case)
            return self._trees[case.case_id]

    def _export(self, case: Case) -> Path:
        dest = self.root / case.case_id
        dest.mkdir()
        index = self.root / f"{case.case_id}.index"
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        for args in (["read-tree", case.base], ["checkout-index", "--all", f"--prefix={dest}/"]):
            proc = subprocess.run([*GIT, "-C", str(self.repo), *args], env=env, capture_output=True)
            if proc.returncode != 0:
                raise_if_interrupted(proc.returncode)
                raise GitError(f"cannot export {case.base} for {case.case_id}: "
                               f"{proc.stderr.decode(errors='replace').strip()}")  # fmt: skip
        index.unlink(missing_ok=True)
        # A base patch (a rename variant's renamed code) is part of the base: applied first.
        for name in (case.base_patch, case.patch):
            if name is None:
                continue
            patch = patch_file(self.corpus_path, case, name)
            proc = subprocess.run([*GIT, "apply", "--whitespace=nowarn", str(patch)], cwd=dest, capture_output=True,
                                  check=False)  # fmt: skip
            if proc.returncode != 0:
                raise GitError(f"the patch {name} of {case.case_id} does not apply to its base: "
                               f"{proc.stderr.decode(errors='replace').strip()}")  # fmt: skip
        if self._hold_back_tests(case, dest):  # written by path: never through a link out of the tree
            drop_escaping_links(dest)
        _write_note(dest)
        drop_escaping_links(dest)
        _read_only(dest)
        return dest

    def _hold_back_tests(self, case: Case, dest: Path) -> bool:
        """The fix's test files as in its parent: removed, then the parent's copies checked
        out (a test the fix added has none). A path the case's patch writes is left alone.
        Returns whether the case had any to hold back."""
        provenance = self._held_back.get(case.case_id)
        if provenance is None or provenance.parent is None or provenance.commit != case.base:
            return False
        drop_escaping_links(dest)  # before anything is written by path into the tree
        paths = [p for p in provenance.test_paths if p not in case.paths and ".." not in p.split("/")]
        for path in paths:
            target = dest / path
            if os.path.lexists(target) and not target.is_dir():
                target.unlink()
        listed = subprocess.run([*GIT, "-C", str(self.repo), "ls-tree", "-z", "--name-only", provenance.parent,
                                 "--", *paths], capture_output=True)  # fmt: skip
        if listed.returncode != 0:
            raise_if_interrupted(listed.returncode)
            raise GitError(f"cannot list the tests of {provenance.parent} for {case.case_id}: "
                           f"{listed.stderr.decode(errors='replace').strip()}")  # fmt: skip
        present = [p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
        if not present:
            return True
        index = self.root / f"{case.case_id}.tests.index"
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        for args in (["read-tree", provenance.parent], ["checkout-index", "--force", f"--prefix={dest}/", "--",
                                                        *present]):  # fmt: skip
            proc = subprocess.run([*GIT, "-C", str(self.repo), *args], env=env, capture_output=True)
            if proc.returncode != 0:
                raise_if_interrupted(proc.returncode)
                raise GitError(f"cannot check out the tests of {provenance.parent} for {case.case_id}: "
                               f"{proc.stderr.decode(errors='replace').strip()}")  # fmt: skip
        index.unlink(missing_ok=True)
        return True

    def files(self, case: Case) -> dict[str, str]:
        """Post-patch contents of the changed files that are regular files after the patch.

        A changed path that is (or passes through) a symbolic link is left out: its target
        may be any host file, and the diff already shows the link itself.
        """
        tree = self.tree(case)
        out: dict[str, str] = {}
        for path in case.paths:
            data = read_in_tree(tree, path)
            if data is not None:
                out[path] = data.decode("utf-8", "replace")
        return out

    def packet(self, case: Case, prompt: str, guidance: str | None, context: str) -> ReviewPacket:
        return ReviewPacket(
            case_id=case.case_id,
            title=case.title,
            diff=self.diff(case),
            paths=case.paths,
            prompt=prompt,
            guidance=guidance,
            files=self.files(case) if context in ("files", "tree") else {},
            tree_note=TREE_NOTE if context == "tree" else None,
        )

    def close(self) -> None:
        with self._guard:
            root, self._root = self._root, None
            hidden, self._hidden = self._hidden, None
        if hidden is not None:
            hidden.__exit__(None, None, None)
        if root is not None:
            remove_tree(root)


def read_in_tree(root: Path, relative: str) -> bytes | None:
    """The bytes of the regular file ``root/relative``, or None.

    Every component is opened relative to its parent with ``O_NOFOLLOW``, so neither a
    link at the end nor one on the way (``dir -> /etc``) is followed; ``..`` is refused.
    """
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(root, flags | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            except OSError:
                return None
            os.close(fd)
            fd = child
        try:
            leaf = os.open(parts[-1], flags | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(leaf).st_mode):
                return None
            chunks = []
            while chunk := os.read(leaf, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(leaf)
    finally:
        os.close(fd)


def drop_escaping_links(root: Path) -> list[str]:
    """Remove every symbolic link under ``root`` that resolves outside it.

    Resolution is real (``realpath``), not lexical: a link may pass through other links.
    Removing one link can only leave others dangling, whose unresolved rest is then judged
    as written; the walk repeats until nothing changes. Returns the removed paths.
    """
    top = os.path.realpath(root)
    removed: list[str] = []
    while True:
        changed = False
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames]:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    continue
                target = os.path.realpath(path)
                if target != top and not target.startswith(top + os.sep):
                    os.unlink(path)
                    removed.append(os.path.relpath(path, root))
                    changed = True
        if not changed:
            return removed


def _write_note(root: Path) -> None:
    """:data:`TREE_NOTE` at the root, or under ``.reviewbench/`` beside a REVIEW.md of the
    repository's own (never written through a link)."""
    target = root / NOTE_FILE
    if os.path.lexists(target):
        folder = root / ".reviewbench"
        if os.path.lexists(folder):
            return  # the repository's own: left as it is
        folder.mkdir()
        target = folder / NOTE_FILE
    target.write_text(TREE_NOTE, encoding="utf-8")


def _read_only(root: Path) -> None:
    for path in [*root.rglob("*"), root]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
