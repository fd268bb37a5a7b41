"""The sandbox of command reviewers and solvers: they see the tree, a scratch HOME and the packet.

What the command sees (``docs/SANDBOX.md``):

- of the host, only the system folders (:data:`SYSTEM_VIEW`: ``/usr``, ``/etc``, ``/dev``,
  ``/proc``, ``/sys`` and the ``/bin``/``/lib`` family), read-only, without the system's
  secrets (``/etc/shadow``, ``/etc/ssh``…): every other top-level folder (``/tmp``,
  ``/home``, ``/root``, ``/srv``, ``/mnt``, ``/opt``, ``/var``, ``/run``, project folders)
  is covered, so a sibling run directory or another corpus is out of view wherever it is;
  the caller's home and temporary directory, and every path the caller
  :func:`protect`-ed (the corpus with its gold, the source repository, the run directory,
  the exported trees), are hidden even inside an exposed folder;
- the case's tree at its own path: read-only for reviewers (no run can change it for
  another), writable for solvers (each run gets its own);
- a fresh scratch directory holding HOME and TMPDIR, deleted after the run;
- the ``expose`` paths, read-only (where an agent is installed, for instance), minus the
  ``hide`` paths (other checkouts or corpora the caller knows of);
- a new PID namespace with its own ``/proc`` (the caller's processes and environments are
  not visible);
- no network by default; with a list of ``host:port`` pairs, those only, through a
  filtering proxy (``_net.py``); with ``network = true`` (an explicit opt-out), the host's;
- an environment of PATH, LANG, HOME, TMPDIR, ``REVIEWBENCH_TREE`` and the listed variables
  (and, with a network list, the proxy variables).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from ..errors import PrerequisiteError, UsageError
from ..store.scratch import make_scratch, remove_tree
from ._env import minimal_env
from ._layout import SANDBOX_ENV, Layout, mechanism, prefix
from ._net import EgressProxy, relay_argv
from ._secrets import SYSTEM_SECRETS
from ._shell import ShellResult, run_shell

__all__ = ["SYSTEM_VIEW", "AgentBox", "hidden_paths", "protect"]

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


#: The host's top-level entries an agent sees (read-only): what running programs needs.
#: Everything else at the top (``/tmp``, ``/home``, ``/root``, ``/srv``, ``/mnt``, ``/opt``,
#: ``/var``, ``/run``, project and data folders…) is covered, so corpora and run
#: directories are out of view wherever the caller keeps them.
SYSTEM_VIEW = frozenset({"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys"})


def _outside_system_view() -> list[Path]:
    """Every top-level entry of the host outside :data:`SYSTEM_VIEW` (a link at the top,
    like ``/bin -> usr/bin``, is shown as it is: its target decides what it reaches)."""
    try:
        entries = sorted(os.scandir("/"), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.name not in SYSTEM_VIEW and not e.is_symlink()]


def _resolver(network: bool) -> list[tuple[Path, bool]]:
    """The resolver configuration, kept read-only when it lives outside the system view
    (``/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf``): networked agents
    must still resolve their model's host."""
    target = Path(os.path.realpath("/etc/resolv.conf"))
    if not network or not target.is_file() or (len(target.parts) > 1 and target.parts[1] in SYSTEM_VIEW):
        return []
    return [(target, False)]


def hidden_paths() -> tuple[Path, ...]:
    """What agents never see: the host outside its system folders (homes, shared temporary
    directories, every other top-level folder), the system's secrets, protected paths."""
    defaults = [*_outside_system_view(), *map(Path, SYSTEM_SECRETS), Path.home(), Path(tempfile.gettempdir())]
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


#: Longest unix socket path the kernel binds (``sun_path`` is 108 bytes with its NUL).
_SOCKET_MAX = 107


@lru_cache(maxsize=4)
def _relay_works(only: str) -> bool:
    """Whether the network relay starts inside this machine's sandbox (probed once)."""
    import subprocess

    scratch = make_scratch("reviewbench-agent-")
    try:
        layout = Layout(cwd=Path("/"), keep=((scratch, True),), network=False)
        argv = prefix(layout)
        if argv is None:
            return False
        done = subprocess.run([*argv, *relay_argv(scratch / "net.sock"), "true"], capture_output=True, timeout=20)
        return done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        remove_tree(scratch)


class AgentBox:
    """How one condition's command runs: its variables, network, sandbox and exposed paths."""

    def __init__(self, *, label: str, env: tuple[str, ...] = (), network: bool | Sequence[str] = False,
                 sandbox: bool = True, expose: tuple[str, ...] = (), hide: tuple[str, ...] = (),
                 max_output: int | None = None) -> None:  # fmt: skip
        """``network``: False (or no pairs) for none, ``host:port`` pairs for those only, True
        for the host's network (the opt-out). ``max_output`` bounds the stdout read of each
        run (see :func:`run_shell`).

        Raises:
            UsageError: a listed variable is not set, an exposed or hidden path is not absolute,
                the network is restricted without the sandbox, or a network entry is not host:port.
            PrerequisiteError: the sandbox (or its network proxy) was asked for and nothing here
                can build one.
        """
        self.label = label
        missing = [name for name in env if name not in os.environ]
        if missing:
            raise UsageError(f"{label}: environment variable {', '.join(missing)} named in its env list is not set")
        self.env_names = env
        self.hosts: tuple[str, ...] = () if isinstance(network, bool) else tuple(network)
        try:
            EgressProxy(self.hosts, label)  # each entry checked once, here
        except ValueError as exc:
            raise UsageError(f"{label}: {exc}") from None
        self.network = network is True
        """The host's network, unrestricted (else a namespace of its own: none, or the proxy's hosts)."""
        self.sandbox = sandbox
        self.max_output = max_output
        # The Python reviewbench runs with (its venv and the interpreter it is built on) is
        # kept visible, read-only: analysers and judges run from it (``python -m ruff``), and
        # it holds no secret. A venv inside a hidden folder (a clone in /tmp) stays usable.
        own = tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)))
        self.expose = (*self._absolute(expose, "expose"), *own)
        self.hide = self._absolute(hide, "hide")
        if not sandbox and not self.network:
            raise UsageError(f"{label}: sandbox = false cannot restrict the network: add network = true "
                             "(unrestricted, recorded as such), or keep the sandbox")  # fmt: skip
        if sandbox and mechanism(self.network) is None:
            raise PrerequisiteError(
                f"{label}: cannot sandbox the command: neither 'unshare' (user and mount namespaces) nor "
                "bubblewrap works here (install bubblewrap, or set sandbox = false and network = true in its "
                "reviewer table to run it with your files and the network visible)"
            )
        if sandbox and self.hosts and not _relay_works(os.environ.get(SANDBOX_ENV, "")):
            raise PrerequisiteError(f"{label}: the network list needs a loopback interface inside the sandbox, "
                                    "and none could be brought up here (list no hosts, or set network = true)")

    @property
    def policy(self) -> dict[str, object]:
        """The network policy as recorded: none, allowlist (with its hosts) or unrestricted."""
        if self.network:
            return {"policy": "unrestricted"}
        if self.hosts:
            return {"policy": "allowlist", "hosts": sorted(self.hosts)}
        return {"policy": "none"}

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
        proxy: EgressProxy | None = None
        try:
            home, tmp = scratch / "home", scratch / "tmp"
            home.mkdir()
            tmp.mkdir()
            env = minimal_env(home, tmp, self.env_names)
            if tree is not None:
                env["REVIEWBENCH_TREE"] = str(tree)
            argv_prefix: list[str] | None = None
            if self.sandbox:
                keep = [(scratch, True), *((p, False) for p in self.expose if p.exists()), *_resolver(self.network)]
                if tree is not None:
                    keep.append((tree.resolve(), tree_writable))
                layout = Layout(cwd=tree.resolve() if tree is not None else home, keep=tuple(keep),
                                hide=(*hidden_paths(), *self.hide), network=self.network)  # fmt: skip
                argv_prefix = prefix(layout)
                if argv_prefix is None:  # probed in __init__; only a changed machine gets here
                    raise PrerequisiteError(f"{self.label}: the sandbox stopped working")
                if self.hosts:
                    proxy, relay = await self._proxy(scratch)
                    argv_prefix += relay
            result = await run_shell(command, stdin=stdin, cwd=tree if tree is not None else home, env=env,
                                     prefix=argv_prefix, max_stdout=self.max_output)  # fmt: skip
            return result if proxy is None else dataclasses.replace(result, refused=tuple(proxy.refused))
        finally:
            if proxy is not None:
                await proxy.close()
            remove_tree(scratch)  # also what the command made read-only

    async def _proxy(self, scratch: Path) -> tuple[EgressProxy, list[str]]:
        """The run's filtering proxy, listening on a socket in ``scratch``, and the relay's argv."""
        net = scratch / "net"
        net.mkdir()
        socket_path = net / "proxy.sock"
        if len(os.fsencode(socket_path)) > _SOCKET_MAX:
            raise PrerequisiteError(f"{self.label}: the network proxy's socket path {socket_path} is longer than "
                                    f"{_SOCKET_MAX} bytes (set TMPDIR to a shorter folder)")  # fmt: skip
        proxy = EgressProxy(self.hosts, self.label)
        await proxy.start(socket_path)
        return proxy, relay_argv(socket_path)
