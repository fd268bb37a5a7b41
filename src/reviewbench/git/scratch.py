"""Private scratch clones: where reviewbench runs a repository's code without touching it.

A scratch clone is ``git clone --shared --no-checkout``: it borrows the user's object
store read-only, never writes to the user's checkout or its ``.git`` (no worktree entries
to prune), and is reused by forced checkouts. Validation keeps one per worker for a whole
run; mining's coverage run uses one for a single command.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..errors import GitError
from .repo import GIT, raise_if_interrupted

__all__ = ["ScratchClone"]


class ScratchClone:
    """One private clone of ``repo`` at ``path`` (created here; the caller removes it)."""

    def __init__(self, repo: Path, path: Path) -> None:
        self.repo = repo
        self.path = path
        self._git("clone", "--quiet", "--shared", "--no-checkout", str(repo), str(path), cwd=path.parent)

    def _git(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run([*GIT, *args], cwd=cwd or self.path, capture_output=True, check=False)
        if check and proc.returncode != 0:
            raise_if_interrupted(proc.returncode)
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed in scratch tree: {detail[-1] if detail else proc.returncode}")
        return proc

    def checkout(self, rev: str) -> None:
        """Reset the tree to ``rev`` exactly (untracked files removed, ignored kept)."""
        self._git("checkout", "--quiet", "--force", "--detach", rev)
        self._git("clean", "-ffdq")
