"""Opening a repository and asking git one-off questions."""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmptyRepository, GitError, NotAGitRepository, Terminated
from ..records import public_remote

__all__ = ["GIT", "Repository", "git_output", "missing_commits", "open_repository", "raise_if_interrupted"]

#: Every git call goes through these options: unicode paths unquoted, no colour, no pager,
#: no user configuration that could change the output format (diff.noprefix and friends).
GIT = (
    "git",
    "-c", "core.quotePath=false",
    "-c", "color.ui=never",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.relative=false",
    "-c", "diff.external=",
    "--no-pager",
)  # fmt: skip


def raise_if_interrupted(returncode: int | None) -> None:
    """Unwind as Ctrl-C (or SIGTERM) would when a child died of that signal.

    A terminal sends Ctrl-C to every process of the foreground group, so git often dies
    before Python raises ``KeyboardInterrupt``: that is an interruption (exit 130, or 143
    for SIGTERM), never a git failure.
    """
    if returncode == -signal.SIGINT:
        raise KeyboardInterrupt
    if returncode == -signal.SIGTERM:
        raise Terminated


def git_output(repo: Path, *args: str, check: bool = True) -> str:
    """Run one git command in ``repo`` and return its stdout (stripped)."""
    try:
        proc = subprocess.run(
            [*GIT, "-C", str(repo), *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        raise_if_interrupted(proc.returncode)
        detail = proc.stderr.strip().splitlines()
        raise GitError(f"git {args[0]} failed in {repo}: {detail[-1] if detail else 'no output'}")
    return proc.stdout.strip()


@dataclass(frozen=True)
class Repository:
    """A git repository that has at least one commit."""

    path: Path
    head: str
    shallow: bool
    remote: str | None

    def run(self, *args: str, check: bool = True) -> str:
        """Run a git command here."""
        return git_output(self.path, *args, check=check)


def open_repository(path: Path) -> Repository:
    """Check that ``path`` is a usable repository and describe it.

    Raises:
        NotAGitRepository: the path does not exist or is not in a repository.
        EmptyRepository: the repository has no commits.
    """
    if not path.exists():
        raise NotAGitRepository(f"{path} does not exist")
    if not path.is_dir():
        raise NotAGitRepository(f"{path} is not a directory")
    try:
        git_output(path, "rev-parse", "--git-dir")
    except GitError:
        raise NotAGitRepository(f"{path} is not a git repository") from None
    head = git_output(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if not head:
        raise EmptyRepository(f"{path} is a git repository with no commits yet")
    shallow = git_output(path, "rev-parse", "--is-shallow-repository") == "true"
    remote = public_remote(git_output(path, "config", "--get", "remote.origin.url", check=False))
    top = git_output(path, "rev-parse", "--show-toplevel", check=False)
    return Repository(path=Path(top) if top else path.resolve(), head=head, shallow=shallow, remote=remote)


def missing_commits(repo: Path, shas: list[str]) -> list[bool]:
    """For each sha, whether ``repo`` lacks it as a commit (one ``cat-file`` for all)."""
    try:
        proc = subprocess.run([*GIT, "-C", str(repo), "cat-file", "--batch-check"],
                              input="".join(f"{sha}^{{commit}}\n" for sha in shas).encode(),
                              capture_output=True, check=False)  # fmt: skip
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != len(shas):
        raise GitError(f"cannot read commits in {repo}: {proc.stderr.decode(errors='replace').strip()[:200]}")
    return [line.endswith(b" missing") for line in lines]
