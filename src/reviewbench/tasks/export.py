"""A task's base tree for a solver that edits files, and the patch it leaves behind.

The tree is a **single-commit repository**: the base commit's files, committed once into a
fresh ``git init`` (no templates, hence no hooks), so agents that call ``git diff`` or
``git status`` work, but history, reflog, tags, remotes and every other object of the
source repository are absent — the fix is not one ``git log`` away. Files come from the
object store (``read-tree`` + ``checkout-index`` into a private index), as review trees do,
so ``export-ignore`` attributes cannot drop any.

Whatever the solver changes (modified, added, deleted files, modes) is the patch:
``git add -A`` then ``git diff --cached --binary`` against the recorded single commit, so a
solver that commits its work is still measured against the base. That git runs on the
host, so it never reads the tree's ``.git``, which the solver may rewrite (a filter in its
``config`` assigned by ``info/attributes`` would run here): the same commit is made once
more in a private git directory beside the tree, outside what the solver can write, and
the patch is read through it with the hardened options of ``git/scratch.py``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT
from ..git.scratch import HARDENED, untrusted_git_env

__all__ = ["BaseTree", "export_base"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "reviewbench",
    "GIT_AUTHOR_EMAIL": "reviewbench@localhost",
    "GIT_COMMITTER_NAME": "reviewbench",
    "GIT_COMMITTER_EMAIL": "reviewbench@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}
_DIFF = ("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames",
         "--src-prefix=a/", "--dst-prefix=b/")  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0"}  # fmt: skip


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    proc = subprocess.run([*GIT, *args], cwd=cwd, env=env or _env(), capture_output=True, check=False)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {cwd}: {detail[-1] if detail else 'no output'}")
    return proc.stdout


class BaseTree:
    """An exported base tree in a private temporary directory; :meth:`remove` deletes it."""

    def __init__(self, root: Path, path: Path, commit: str) -> None:
        self.root = root
        self.path = path
        """The tree (``REVIEWBENCH_TREE``): the files plus a one-commit ``.git``."""
        self.commit = commit
        """The single commit's id (not the source repository's base commit id)."""

    @property
    def _private(self) -> dict[str, str]:
        """The private git directory and index of the base commit, for host-side git."""
        return untrusted_git_env(None, **_IDENTITY, GIT_DIR=str(self.root / "base.git"), GIT_WORK_TREE=str(self.path),
                                 GIT_INDEX_FILE=str(self.root / "base.index"))  # fmt: skip

    def patch(self) -> str:
        """Everything changed since the single commit, as a git diff ("" for no change),
        whatever the solver did to the tree's own ``.git``."""
        env = self._private
        _git(self.path, *HARDENED, "read-tree", self.commit, env=env)
        _git(self.path, *HARDENED, "add", "-A", env=env)
        raw = _git(self.path, *HARDENED, *_DIFF, self.commit, "--", env=env)
        return raw.decode("utf-8", "surrogateescape")

    def remove(self) -> None:
        for path in self.root.rglob("*"):  # a solver may have left read-only directories
            if path.is_dir() and not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
        shutil.rmtree(self.root, ignore_errors=True)


def export_base(repo: Path, commit: str, label: str) -> BaseTree:
    """Export ``commit`` of ``repo`` as a fresh single-commit repository.

    Args:
        repo: the source repository.
        commit: the task's base commit.
        label: names the tree's directory (the task id), for people reading process lists.

    Raises:
        GitError: the commit is missing from the repository, or git failed.
    """
    root = Path(tempfile.mkdtemp(prefix="reviewbench-task-"))
    tree = root / label
    tree.mkdir()
    try:
        index = root / "source.index"
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        for args in (["read-tree", f"{commit}^{{tree}}"], ["checkout-index", "--all", f"--prefix={tree}/"]):
            proc = subprocess.run([*GIT, "-C", str(repo), *args], env=env, capture_output=True, check=False)
            if proc.returncode != 0:
                detail = proc.stderr.decode("utf-8", "replace").strip()
                raise GitError(f"cannot export base commit {commit} of task {label} from {repo}: {detail}")
        index.unlink(missing_ok=True)
        _git(tree, "init", "-q", "--template=", "-b", "main")
        _git(tree, "config", "commit.gpgsign", "false")
        _git(tree, "add", "-A", "-f")  # every exported file, even one a .gitignore names
        _git(tree, "commit", "-q", "--no-verify", "--allow-empty", "-m", "base")
        single = _git(tree, "rev-parse", "HEAD").decode().strip()
        shutil.rmtree(tree / ".git" / "logs", ignore_errors=True)  # no reflog, not even of "base"
        base = BaseTree(root, tree, single)
        # The same commit (same files, identity and date) in the private git directory.
        private = base._private
        _git(root, "init", "-q", "--bare", "--template=", str(root / "base.git"), env=untrusted_git_env())
        _git(tree, *HARDENED, "add", "-A", "-f", env=private)
        tree_id = _git(tree, *HARDENED, "write-tree", env=private).decode().strip()
        again = _git(tree, "commit-tree", tree_id, "-m", "base", env=private).decode().strip()
        if again != single:
            raise GitError(f"cannot export base commit {commit} of task {label}: the private copy differs")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return base
