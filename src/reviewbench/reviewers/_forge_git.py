"""The git side of the forge kinds: a case as two commits, pushed to the sandbox repository.

The base is a commit with no parent (no history of the user's repository travels), the
patched tree a second commit on top; both are built in a private repository from the
exported post-patch tree (the base is that tree with the case's diff applied in reverse),
with a fixed author and date so the same case gives the same commits. Pushing and deleting
branches use the user's own git credentials for ``remote``; no token is put in a URL.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..git.repo import GIT
from .base import ReviewerError

__all__ = ["CaseCommits", "build_commits", "delete_branches", "push_branches"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "reviewbench", "GIT_AUTHOR_EMAIL": "reviewbench@localhost",
    "GIT_COMMITTER_NAME": "reviewbench", "GIT_COMMITTER_EMAIL": "reviewbench@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}  # fmt: skip


@dataclass(frozen=True)
class CaseCommits:
    git_dir: Path
    base: str
    head: str


def _env(git_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **_IDENTITY, "GIT_DIR": str(git_dir), **extra}


def _git(args: list[str], env: dict[str, str], what: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run([*GIT, *args], env=env, input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReviewerError(f"{what}: {detail[-1] if detail else f'git exited with {proc.returncode}'}")
    return proc.stdout.decode().strip()


def build_commits(tree: Path, diff: str, title: str, work: Path) -> CaseCommits:
    """The base (parentless) and head commits of a case, in a private repository in ``work``.

    Raises:
        ReviewerError: the diff does not reverse onto the tree.
    """
    git_dir = work / "case.git"
    _git(["init", "--quiet", "--bare", str(git_dir)], _env(git_dir), "cannot create a scratch repository")
    env = _env(git_dir, GIT_INDEX_FILE=str(work / "index"), GIT_WORK_TREE=str(tree),
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)  # fmt: skip
    _git(["add", "--all", "--force", "."], env, "cannot record the patched tree")
    head_tree = _git(["write-tree"], env, "cannot record the patched tree")
    _git(["apply", "--cached", "--reverse", "--whitespace=nowarn", "-"], env, "the case's diff does not reverse "
         "onto its tree", stdin=diff.encode("utf-8", "surrogateescape"))  # fmt: skip
    base_tree = _git(["write-tree"], env, "cannot record the base tree")
    base = _git(["commit-tree", base_tree, "-m", "Base"], env, "cannot commit the base")
    head = _git(["commit-tree", head_tree, "-p", base, "-m", title], env, "cannot commit the change")
    return CaseCommits(git_dir, base, head)


def push_branches(commits: CaseCommits, remote: str, base_branch: str, head_branch: str) -> None:
    """Push both commits to ``remote`` as two branches (replacing any of the same name)."""
    _git(["push", "--quiet", "--force", remote, f"{commits.base}:refs/heads/{base_branch}",
          f"{commits.head}:refs/heads/{head_branch}"], _env(commits.git_dir), f"cannot push to {remote}")  # fmt: skip


def delete_branches(remote: str, branches: list[str]) -> None:
    """Delete ``branches`` on ``remote``; ones already gone are no error."""
    with tempfile.TemporaryDirectory(prefix="reviewbench-forge-") as work:
        git_dir = Path(work) / "empty.git"
        _git(["init", "--quiet", "--bare", str(git_dir)], _env(git_dir), "cannot create a scratch repository")
        for branch in branches:
            subprocess.run([*GIT, "push", "--quiet", remote, "--delete", branch], env=_env(git_dir),
                           capture_output=True, check=False)  # fmt: skip
