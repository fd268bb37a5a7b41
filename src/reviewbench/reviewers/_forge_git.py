"""The git side of the forge kinds: a case as two commits, pushed to the sandbox repository.

The base is a commit with no parent (no history of the user's repository travels), the
patched tree a second commit on top; both are built in a private repository from the
exported post-patch tree (the base is that tree with the case's diff applied in reverse),
with a fixed author and date so the same case gives the same commits. Pushing and deleting
branches use the user's own git credentials for ``remote``; no token is put in a URL.
"""

from __future__ import annotations

import os
import posixpath
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
    case_tree: str = ""
    """The patched tree as the case gives it, without placed guidance files: the same for one
    case under every condition (what tells that conditions differ only by their treatment)."""
    guidance_blobs: dict[str, str] | None = None
    """Guidance files in the pushed head tree, in the changed paths' directories: path -> blob SHA."""


def _env(git_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **_IDENTITY, "GIT_DIR": str(git_dir), **extra}


def _git(args: list[str], env: dict[str, str], what: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run([*GIT, *args], env=env, input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReviewerError(f"{what}: {detail[-1] if detail else f'git exited with {proc.returncode}'}",
                            code="setup_failed")
    return proc.stdout.decode().strip()


def build_commits(tree: Path, diff: str, title: str, work: Path, guidance: dict[str, bytes] | None = None,
                  names: frozenset[str] = frozenset({"AGENTS.md"}), paths: list[str] | None = None) -> CaseCommits:
    """The base (parentless) and head commits of a case, in a private repository in ``work``.

    ``guidance`` (repository path -> bytes) is committed into both trees, replacing a file of
    the case's at the same path: the bot reads it as the repository's guidance.

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
    case_tree = head_tree
    if guidance:
        base_tree, head_tree = (_with_files(t, guidance, env) for t in (base_tree, head_tree))
    base = _git(["commit-tree", base_tree, "-m", "Base"], env, "cannot commit the base")
    head = _git(["commit-tree", head_tree, "-p", base, "-m", title], env, "cannot commit the change")
    blobs = _guidance_in(head, names, paths or [], env) if paths is not None else None
    return CaseCommits(git_dir, base, head, case_tree, blobs)


def _with_files(tree: str, files: dict[str, bytes], env: dict[str, str]) -> str:
    """``tree`` with ``files`` written into it (regular files, replacing any of their paths)."""
    _git(["read-tree", tree], env, "cannot read a scratch tree")
    for path, data in sorted(files.items()):
        blob = _git(["hash-object", "-w", "--stdin"], env, f"cannot store guidance file {path}", stdin=data)
        _git(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], env,
             f"cannot place guidance file {path}")  # fmt: skip
    return _git(["write-tree"], env, "cannot record a tree with its guidance files")


def _guidance_in(commit: str, names: frozenset[str], paths: list[str], env: dict[str, str]) -> dict[str, str]:
    """Path -> blob SHA of the files named ``names`` in the directories of ``paths``, as git holds them."""
    wanted: set[str] = set()
    for changed in paths:
        folder = posixpath.dirname(changed)
        while True:
            wanted.update(posixpath.join(folder, n) if folder else n for n in names)
            if not folder:
                break
            folder = posixpath.dirname(folder)
    if not wanted:
        return {}
    listing = _git(["ls-tree", "-z", "--full-tree", commit, "--", *sorted(wanted)], env, "cannot list the pushed tree")
    found: dict[str, str] = {}
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        _mode, kind, sha = meta.split()
        if kind == "blob" and path in wanted:
            found[path] = sha
    return dict(sorted(found.items()))


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
