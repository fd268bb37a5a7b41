"""Building review packets, and the read-only post-patch trees some conditions ask for.

A tree is exported from the object store (``read-tree`` + ``checkout-index`` into a private
index, so ``export-ignore`` attributes cannot drop files), the case patch is applied, and
the result is made read-only. It has no ``.git``: history would leak the fix.

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
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT, raise_if_interrupted
from ..records import Case, ReviewPacket
from ..sandbox import protect
from ..store.corpus import patch_file, read_patch
from ..store.scratch import make_scratch, remove_tree, sweep_stale

__all__ = ["TREES_PREFIX", "PacketBuilder", "drop_escaping_links", "read_in_tree"]

#: Exported trees live in ``$TMPDIR/reviewbench-trees-<pid>-*`` (see :mod:`..store.scratch`).
TREES_PREFIX = "reviewbench-trees-"


class PacketBuilder:
    """Packets for the cases of one corpus; exported trees live until :meth:`close`."""

    def __init__(self, corpus_path: Path, repo: Path) -> None:
        self.corpus_path = corpus_path
        self.repo = repo
        sweep_stale(TREES_PREFIX)  # what killed runs left, whether or not this one exports
        self._root: Path | None = None  # made on the first export: diff-only runs leave nothing
        self._hidden = None  # the protection of the root from sandboxed reviewers, once made
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
        drop_escaping_links(dest)
        _read_only(dest)
        return dest

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


def _read_only(root: Path) -> None:
    for path in [*root.rglob("*"), root]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
