"""Private scratch clones: where reviewbench runs a repository's code without touching it.

A scratch clone borrows the user's object store read-only (``clone --shared``), never
writes to the user's checkout or its ``.git``, and is reused by forced checkouts.
Validation keeps one per worker for a whole run; mining's coverage run and the test
environment's copy of the project use one each.

Code that runs in the tree (a repository's tests, a setup command) may write anything
there, so the clone's **git directory lives beside the tree** (``tree.git`` next to
``tree``), where sandboxed code cannot write, and the tree's ``.git`` is only a pointer
that reviewbench rewrites after every checkout. Every git command reviewbench runs here
names that directory explicitly (``GIT_DIR``/``GIT_WORK_TREE``: whatever the tree's
``.git`` became is never read), reads no system or global configuration, runs no hook, no
fsmonitor and no external diff, and gets an environment without secrets
(:func:`untrusted_git_env`). Attributes the tree holds may still name filters, but a
filter runs only when configuration defines it, and the only configuration read is the
one ``clone`` wrote.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..errors import GitError
from ..store.scratch import remove_tree
from .repo import GIT, raise_if_interrupted

__all__ = ["HARDENED", "ScratchClone", "untrusted_git_env"]

#: Options of every git command run on a tree that untrusted code could write.
HARDENED = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.excludesFile=/dev/null",
)  # fmt: skip

def untrusted_git_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of git on an untrusted tree: the caller's without ``GIT_*`` names (a
    ``GIT_DIR`` or ``GIT_CONFIG_*`` of the caller's) and without secrets (the sandbox's
    rule), with no system or global configuration, no prompts, plus ``extra``."""
    from ..sandbox import scrubbed_env  # the sandbox's secret rule; imported on use

    env = {k: v for k, v in scrubbed_env(base).items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_ATTR_NOSYSTEM="1",
               GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")  # fmt: skip
    env.update(extra)
    return env


class ScratchClone:
    """One private clone of ``repo`` at ``path`` (created here; :meth:`remove` deletes it).

    Its git directory is ``path`` + ``.git`` beside it: give sandboxed code ``path`` to
    write, never its parent.
    """

    def __init__(self, repo: Path, path: Path, *, create: bool = True) -> None:
        self.repo = repo
        self.path = path
        self.git_dir = path.with_name(path.name + ".git")
        if create:
            proc = subprocess.run(
                [*GIT, *HARDENED, "clone", "--quiet", "--shared", "--no-checkout",
                 f"--separate-git-dir={self.git_dir}", str(repo), str(path)],
                cwd=path.parent, env=untrusted_git_env(), capture_output=True, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                raise_if_interrupted(proc.returncode)
                detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise GitError(f"cannot make a scratch clone of {repo}: {detail[-1] if detail else proc.returncode}")
            self._point()

    @classmethod
    def existing(cls, path: Path) -> ScratchClone:
        """The clone made earlier at ``path`` (its git directory beside it)."""
        return cls(path, path, create=False)

    def git(self, *args: str, check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run one hardened git command on this tree (see the module's docstring)."""
        env = untrusted_git_env(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.path))
        proc = subprocess.run([*GIT, *HARDENED, *args], cwd=self.path, env=env, input=stdin,
                              capture_output=True, check=False)  # fmt: skip
        if check and proc.returncode != 0:
            raise_if_interrupted(proc.returncode)
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed in scratch tree: {detail[-1] if detail else proc.returncode}")
        return proc

    def checkout(self, rev: str) -> None:
        """Reset the tree to ``rev`` exactly (untracked files removed, ignored kept)."""
        self.git("clean", "-ffdq")  # untracked attribute files must not shape the checkout
        self.git("checkout", "--quiet", "--force", "--detach", rev)
        self.git("clean", "-ffdq")
        self._point()

    def _point(self) -> None:
        """Make the tree's ``.git`` the pointer to the private git directory again (code that
        ran in the tree may have replaced it), so git run *inside* the tree still works."""
        dot = self.path / ".git"
        if dot.is_dir() and not dot.is_symlink():
            remove_tree(dot)  # also what was made read-only; never through a link
        elif os.path.lexists(dot):
            dot.unlink()
        dot.write_text(f"gitdir: {self.git_dir}\n", encoding="utf-8")

    def remove(self) -> None:
        """Delete the tree and its git directory."""
        for path in (self.path, self.git_dir):
            remove_tree(path)
