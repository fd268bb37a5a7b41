"""Building review packets, and the read-only post-patch trees some conditions ask for.

A tree is exported from the object store (``read-tree`` + ``checkout-index`` into a private
index, so ``export-ignore`` attributes cannot drop files), the case patch is applied, and
the result is made read-only. It has no ``.git``: history would leak the fix.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT
from ..records import Case, ReviewPacket

__all__ = ["PacketBuilder"]


class PacketBuilder:
    """Packets for the cases of one corpus; exported trees live until :meth:`close`."""

    def __init__(self, corpus_path: Path, repo: Path) -> None:
        self.corpus_path = corpus_path
        self.repo = repo
        self.root = Path(tempfile.mkdtemp(prefix="reviewbench-trees-"))
        self._trees: dict[str, Path] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def diff(self, case: Case) -> str:
        return (self.corpus_path / case.patch).read_bytes().decode("utf-8", "replace")

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
                raise GitError(f"cannot export {case.base} for {case.case_id}: "
                               f"{proc.stderr.decode(errors='replace').strip()}")  # fmt: skip
        index.unlink(missing_ok=True)
        # A base patch (a rename variant's renamed code) is part of the base: applied first.
        for name in (case.base_patch, case.patch):
            if name is None:
                continue
            patch = (self.corpus_path / name).resolve()
            if self.corpus_path.resolve() not in patch.parents:
                raise GitError(f"{case.case_id}: {name} lies outside the corpus")
            proc = subprocess.run([*GIT, "apply", "--whitespace=nowarn", str(patch)], cwd=dest, capture_output=True,
                                  check=False)  # fmt: skip
            if proc.returncode != 0:
                raise GitError(f"the patch {name} of {case.case_id} does not apply to its base: "
                               f"{proc.stderr.decode(errors='replace').strip()}")  # fmt: skip
        _read_only(dest)
        return dest

    def files(self, case: Case) -> dict[str, str]:
        """Post-patch contents of the changed files that exist after the patch."""
        tree = self.tree(case)
        out: dict[str, str] = {}
        for path in case.paths:
            target = tree / path
            if target.is_file():
                out[path] = target.read_bytes().decode("utf-8", "replace")
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
        for path in self.root.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR)
        self.root.chmod(0o700)
        shutil.rmtree(self.root, ignore_errors=True)


def _read_only(root: Path) -> None:
    for path in [*root.rglob("*"), root]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
