"""The sandbox of command reviewers and solvers: they see the tree, a scratch HOME and the packet.

What the command sees (``docs/SANDBOX.md``):

- the host read-only, except what is hidden: the caller's home (``$HOME``, ``/root``,
  ``/home``), the shared temporary directories (``/tmp``, ``/var/tmp``, ``/run/user``, the
  configured temporary directory: other runs' trees and scratch areas live there), and every
  path the caller :func:`protect`-ed (the corpus with its gold, the source repository, the
  run directory, the exported trees);
- the case's tree at its own path: read-only for reviewers (no run can change it for
  another), writable for solvers (each run gets its own);
- a fresh scratch directory holding HOME and TMPDIR, deleted after the run;
- the ``expose`` paths, read-only (where an agent is installed, for instance), minus the
  ``hide`` paths (other checkouts or corpora the caller knows of);
- a new PID namespace with its own ``/proc`` (the caller's processes and environments are
  not visible) and, with ``network = false``, no network;
- an environment of PATH, LANG, HOME, TMPDIR, ``REVIEWBENCH_TREE`` and the listed variables.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import PrerequisiteError, UsageError
from ..store.scratch import make_scratch, remove_tree
from ._env import minimal_env
from ._layout import Layout, mechanism, prefix
from ._shell import ShellResult, run_shell

__all__ = ["AgentBox", "hidden_paths", "protect"]

_protected: dict[Path, int] = {}
_protected_lock = threading.Lock()


@contextlib.contextmanager
def protect(*paths: Path | str) -> Iterator[None]:
    """Hide ``paths`` from every agent sandbox started while the block runs."""
    resolved = [Path(p).resolve() for p in paths]
    with _protected_lock:
        for path in resolved:
            _protected[path] = _protected.get(path, 0) + 1
    try:
        yield
    finally:
        with _protected_lock:
            for path in resolved:
                _protected[path] -= 1
                if not _protected[path]:
                    del _protected[path]


def hidden_paths() -> tuple[Path, ...]:
    """What agents never see: homes, shared temporary directories, protected paths."""
    defaults = [Path.home(), Path("/root"), Path("/home"), Path("/tmp"), Path("/var/tmp"),
                Path("/run/user"), Path(tempfile.gettempdir())]  # fmt: skip
    if os.environ.get("HOME"):
        defaults.append(Path(os.environ["HOME"]))
    with _protected_lock:
        extra = list(_protected)
    seen: dict[Path, None] = {}
    for path in [*defaults, *extra]:
        try:
            seen[path.resolve()] = None
        except OSError:
            continue
    return tuple(p for p in seen if p != Path("/"))


class AgentBox:
    """How one condition's command runs: its variables, network, sandbox and exposed paths."""

    def __init__(self, *, label: str, env: tuple[str, ...] = (), network: bool = True, sandbox: bool = True,
                 expose: tuple[str, ...] = (), hide: tuple[str, ...] = (),
                 max_output: int | None = None) -> None:  # fmt: skip
        """``max_output`` bounds the stdout read of each run (see :func:`run_shell`).

        Raises:
            UsageError: a listed variable is not set, an exposed or hidden path is not absolute, or
                the sandbox was asked for and nothing here can build one.
        """
        self.label = label
        missing = [name for name in env if name not in os.environ]
        if missing:
            raise UsageError(f"{label}: environment variable {', '.join(missing)} named in its env list is not set")
        self.env_names = env
        self.network = network
        self.sandbox = sandbox
        self.max_output = max_output
        # The Python reviewbench runs with (its venv and the interpreter it is built on) is
        # kept visible, read-only: analysers and judges run from it (``python -m ruff``), and
        # it holds no secret. A venv inside a hidden folder (a clone in /tmp) stays usable.
        own = tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)))
        self.expose = (*self._absolute(expose, "expose"), *own)
        self.hide = self._absolute(hide, "hide")
        if sandbox and mechanism(network) is None:
            raise PrerequisiteError(
                f"{label}: cannot sandbox the command: neither 'unshare' (user and mount namespaces) nor "
                "bubblewrap works here (install bubblewrap, or set sandbox = false in its reviewer table "
                "to run it with your files visible)"
            )
        if not sandbox and not network:
            raise UsageError(f"{label}: network = false needs the sandbox (sandbox = true)")

    def _absolute(self, raws: tuple[str, ...], field: str) -> tuple[Path, ...]:
        paths = []
        for raw in raws:
            path = Path(raw).expanduser()
            if not path.is_absolute():
                raise UsageError(f"{self.label}: {field} path {raw!r} must be absolute")
            paths.append(path.resolve())
        return tuple(paths)

    async def run(self, command: str, *, stdin: bytes | None, tree: Path | None,
                  tree_writable: bool = False) -> ShellResult:  # fmt: skip
        """Run ``command`` in ``tree`` (if any) under this box.

        Raises:
            OSError: the command could not start.
        """
        scratch = make_scratch("reviewbench-agent-")  # names its pid: a kill -9's is swept by the next
        try:
            home, tmp = scratch / "home", scratch / "tmp"
            home.mkdir()
            tmp.mkdir()
            env = minimal_env(home, tmp, self.env_names)
            if tree is not None:
                env["REVIEWBENCH_TREE"] = str(tree)
            argv_prefix: list[str] | None = None
            if self.sandbox:
                keep = [(scratch, True), *((p, False) for p in self.expose if p.exists())]
                if tree is not None:
                    keep.append((tree.resolve(), tree_writable))
                layout = Layout(cwd=tree.resolve() if tree is not None else home, keep=tuple(keep),
                                hide=(*hidden_paths(), *self.hide), network=self.network)  # fmt: skip
                argv_prefix = prefix(layout)
                if argv_prefix is None:  # probed in __init__; only a changed machine gets here
                    raise PrerequisiteError(f"{self.label}: the sandbox stopped working")
            return await run_shell(command, stdin=stdin, cwd=tree if tree is not None else home, env=env,
                                   prefix=argv_prefix, max_stdout=self.max_output)  # fmt: skip
        finally:
            remove_tree(scratch)  # also what the command made read-only
