"""Running untrusted test code: no network, a read-only host, limits, nothing left behind.

Isolation uses what Linux offers without a container engine (``_layout``): new user, mount,
PID and network namespaces, in which the host is read-only except the scratch tree and its
HOME/TMPDIR, and no connection can leave; a new session and the PID namespace so that the
timeout kills the whole process tree; ``RLIMIT_AS`` for memory; an environment scrubbed of
secrets (``_env``).
"""

from __future__ import annotations

import os
import resource
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..config import Network
from ..errors import Cancelled, PrerequisiteError
from ._env import scrubbed_env
from ._layout import Layout, mechanism, prefix
from ._secrets import secret_paths

__all__ = ["Cancelled", "RunOutcome", "Sandbox", "cancelled", "isolation_prefix", "kill_all", "reset_cancel"]


@dataclass(frozen=True)
class RunOutcome:
    """What one sandboxed command did."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    cpu_s: float | None = None
    """CPU seconds of the run's process (warm runs only: a fork's own accounting)."""


def isolation_prefix(network: Network) -> tuple[str, ...]:
    """Refuse early when test runs cannot be isolated under ``network``.

    Returns the probing layout's prefix (empty when the network is allowed and nothing
    isolates here: test runs then go unisolated, with a scrubbed environment).

    Raises:
        PrerequisiteError: network is denied but no namespace tool works here.
    """
    got = prefix(Layout(cwd=Path("/"), network=network is Network.ALLOW))
    if got is None:
        if network is Network.ALLOW:
            return ()
        raise PrerequisiteError(
            "cannot isolate tests: neither 'unshare' (user, mount and network namespaces) nor "
            "bubblewrap works here (install bubblewrap, or pass --network allow to run tests "
            "without isolation)"
        )
    return tuple(got)


# Process groups of commands still running, so that Ctrl-C can kill them all.
_live: set[int] = set()
_live_lock = threading.Lock()
_stopping = threading.Event()


def reset_cancel() -> None:
    """Allow commands to start again (at the start of a validation run)."""
    _stopping.clear()


def cancelled() -> bool:
    """Whether the run is being stopped."""
    return _stopping.is_set()


def _track(proc: subprocess.Popen[bytes]) -> None:
    """Remember a started process group for :func:`kill_all`; kill it at once if the run
    is already stopping (Ctrl-C landed between the check and the start)."""
    with _live_lock:
        _live.add(proc.pid)
        if _stopping.is_set():
            os.killpg(proc.pid, signal.SIGKILL)


def kill_all() -> None:
    """Stop: refuse new commands and kill every sandboxed process tree still running."""
    with _live_lock:
        _stopping.set()
        groups = list(_live)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Sandbox:
    """Runs commands under one isolation policy."""

    def __init__(self, network: Network, memory_mb: int | None, home: Path,
                 writable: tuple[Path, ...] = (), env_allow: tuple[str, ...] = (),
                 file_mb: int | None = None, data_limit: bool = False,
                 env_set: dict[str, str] | None = None) -> None:  # fmt: skip
        """Args:
            writable: paths tests may change besides ``home`` (the scratch tree); the rest
                of the host is read-only.
            env_allow: variables passed through although they look secret.
            file_mb: largest file the command may write (its log included), or None.
            data_limit: limit ``memory_mb`` as data (``RLIMIT_DATA``: writable memory)
                rather than address space (``RLIMIT_AS``). Node's WebAssembly reserves
                gigabytes of address space it never touches (vitest failed "Cannot allocate
                Wasm memory" under a 4 GiB address-space limit); those reservations are
                not writable, so a data limit still stops a test that fills memory.
            env_set: variables set in every command (``[validate] env`` NAME=VALUE: a locale).
        """
        isolation_prefix(network)
        self.network = network
        self.memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        self.file_bytes = file_mb * 1024 * 1024 if file_mb else None
        self.data_limit = data_limit
        self.home = home
        self.writable = writable
        self.env_allow = env_allow
        self.env_set = dict(env_set or {})

    def _prefix(self, cwd: Path) -> list[str]:
        self.home.mkdir(parents=True, exist_ok=True)
        keep = tuple((p, True) for p in (*self.writable, self.home) if p.exists())
        layout = Layout(cwd=cwd, keep=keep, hide=secret_paths(), network=self.network is Network.ALLOW)
        got = prefix(layout)
        return got if got is not None else []

    @property
    def prefix(self) -> tuple[str, ...]:
        """The isolating prefix (no working directory: the sandbox's home)."""
        return tuple(self._prefix(self.home))

    @property
    def mechanism(self) -> str:
        """What isolates test runs here: ``unshare``, ``bwrap`` or ``none``."""
        mech = mechanism(self.network is Network.ALLOW)
        return mech.name if mech else "none"

    def _limits(self) -> None:  # runs in the child before exec
        if self.memory_bytes:
            kind = resource.RLIMIT_DATA if self.data_limit else resource.RLIMIT_AS
            resource.setrlimit(kind, (self.memory_bytes, self.memory_bytes))
        if self.file_bytes:  # a test printing gigabytes must not fill the disk
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def env(self) -> dict[str, str]:
        """The environment of every sandboxed command: the caller's without secrets, HOME and
        TMPDIR in the scratch area, no bytecode written (a stale ``.pyc`` would give a wrong verdict), a fixed hash seed,
        ``NO_COLOR=1`` unless ``env_set`` says otherwise."""
        tmp = self.home / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return {
            **scrubbed_env(allow=self.env_allow),
            "NO_COLOR": "1",  # plain logs; ``[validate] env = ["NO_COLOR="]`` lets colour tests run
            **self.env_set,
            "HOME": str(self.home),
            "TMPDIR": str(tmp),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }

    def start(self, argv: list[str], cwd: Path, extra_env: dict[str, str], stderr: Path) -> subprocess.Popen[bytes]:
        """Start a long-lived sandboxed process with pipes on stdin and stdout.

        It lives in its own session, is killed by :func:`kill_all`, and must be ended
        with :meth:`stop`.
        """
        if _stopping.is_set():
            raise Cancelled()
        env = {**self.env(), **extra_env}
        with open(stderr, "ab") as sink:
            proc = subprocess.Popen(
                [*self._prefix(cwd), *argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=sink,
                start_new_session=True,
                preexec_fn=self._limits,  # noqa: PLW1509 - no threads touched in the child
            )
        _track(proc)
        return proc

    @staticmethod
    def stop(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
        """End a process from :meth:`start`: close its stdin, wait ``grace`` seconds, then
        kill its session; always reap it (so its CPU time is accounted to us)."""
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        with _live_lock:
            _live.discard(proc.pid)

    def run(
        self, command: list[str] | str, cwd: Path, timeout: float, log: Path | None = None
    ) -> RunOutcome:
        """Run ``command`` (argv, or a shell string) in ``cwd``; output goes to ``log``."""
        if _stopping.is_set():
            raise Cancelled()
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        env = self.env()
        start = time.monotonic()
        with open(log, "ab") if log else open(os.devnull, "wb") as sink:
            proc = subprocess.Popen(
                [*self._prefix(cwd), *argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=self._limits,  # noqa: PLW1509 - no threads touched in the child
            )
            _track(proc)
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                # The whole session goes, including anything the tests left running.
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                with _live_lock:
                    _live.discard(proc.pid)
        duration = time.monotonic() - start
        if _stopping.is_set():
            raise Cancelled()
        return RunOutcome(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            duration_s=duration,
        )


def probe_output(argv: list[str], timeout: float) -> str | None:
    """The standard output of a short command run sandboxed (the host read-only, a
    throwaway home, no network where it can be denied), or None when it fails.

    For asking an interpreter what it is when untrusted code may have written into its
    environment (a ``--setup`` venv: the project's install ran there): run on the host,
    a ``.pth`` file or a replaced ``bin/python`` would run there too.
    """
    try:
        isolation_prefix(Network.DENY)
        network = Network.DENY
    except PrerequisiteError:
        network = Network.ALLOW  # nothing isolates here: as test runs, read-only is all
    with tempfile.TemporaryDirectory(prefix="reviewbench-probe-") as scratch:
        home = Path(scratch) / "home"
        out = home / "out"
        box = Sandbox(network, None, home)
        try:
            outcome = box.run(f"{shlex.join(argv)} > {shlex.quote(str(out))}", Path(scratch), timeout)
        except OSError:
            return None
        if outcome.timed_out or outcome.exit_code != 0 or not out.is_file():
            return None
        return out.read_text(encoding="utf-8", errors="replace")
