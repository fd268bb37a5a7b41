"""Checking a patch against a commit without a working tree, and reading the result."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ..errors import GitError
from .repo import GIT, Repository

__all__ = ["patched_files"]


def patched_files(repo: Repository, base: str, patch: bytes, paths: list[str]) -> dict[str, bytes | None]:
    """``paths`` as they read after ``patch`` is applied to ``base`` (None: not in the result).

    The patch is applied to a private index (``git apply --cached``), never to a working tree.

    Raises:
        GitError: the patch does not apply to ``base``.
    """
    with tempfile.TemporaryDirectory(prefix="reviewbench-apply-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        patch_file = Path(tmp) / "case.diff"
        patch_file.write_bytes(patch)

        def git(*args: str) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run([*GIT, "-C", str(repo.path), *args], env=env, capture_output=True, check=False)

        read = git("read-tree", base)
        if read.returncode != 0:
            raise GitError(f"cannot read {base}: {read.stderr.decode(errors='replace').strip()}")
        applied = git("apply", "--cached", "--whitespace=nowarn", str(patch_file))
        if applied.returncode != 0:
            detail = applied.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(f"the patch does not apply to {base[:12]}: {detail[0] if detail else 'git apply failed'}")
        out: dict[str, bytes | None] = {}
        for path in paths:
            shown = git("cat-file", "blob", f":{path}")
            out[path] = shown.stdout if shown.returncode == 0 else None
        return out
