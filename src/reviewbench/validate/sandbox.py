"""Running untrusted test code: no network, a time and memory limit, nothing left behind.

Isolation uses what Linux offers without a container engine: a new network namespace
(``unshare -n``, or ``unshare -rn`` for an unprivileged user, or bubblewrap) so that no
connection can leave, a new session so that the timeout kills the whole process tree,
``RLIMIT_AS`` for memory, and HOME/TMPDIR pointed into the scratch area so that stray
writes land where they are cleaned up.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..config import Network
from ..errors import Cancelled, PrerequisiteError

__all__ = ["Cancelled", "RunOutcome", "Sandbox", "cancelled", "isolation_prefix", "kill_all", "reset_cancel"]


@dataclass(frozen=True)
class RunOutcome:
    """What one sandboxed command did."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    cpu_s: float | None = None
    """CPU seconds of the run's process (warm runs only: a fork's own accounting)."""


# Tried in order. A PID namespace as well (-p -f --kill-child) means that when the test
# command ends or is killed, every process it started dies with it, even daemons.
_DENY_PREFIXES = (
    ("unshare", "-n", "-p", "-f", "--kill-child", "--"),
    ("unshare", "-rn", "-p", "-f", "--kill-child", "--"),
    ("bwrap", "--dev-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent", "--"),
    ("unshare", "-n", "--"),
    ("unshare", "-rn", "--"),
)
_ALLOW_PREFIXES = (
    ("unshare", "-p", "-f", "--kill-child", "--"),
    ("unshare", "-rp", "-f", "--kill-child", "--"),
    (),
)


@lru_cache(maxsize=2)
def _working_prefix(network: Network) -> tuple[str, ...] | None:
    for prefix in _DENY_PREFIXES if network is Network.DENY else _ALLOW_PREFIXES:
        if not prefix:
            return prefix
        if shutil.which(prefix[0]) is None:
            continue
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return prefix
    return None


def isolation_prefix(network: Network) -> tuple[str, ...]:
    """The command prefix that isolates a test run under ``network``.

    Raises:
        PrerequisiteError: network is denied but no namespace tool works here.
    """
    prefix = _working_prefix(network)
    if prefix is None:
        raise PrerequisiteError(
            "cannot deny network to tests: neither 'unshare -n' nor bubblewrap works here "
            "(install bubblewrap, or pass --network allow to run tests with network)"
        )
    return prefix


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

    def __init__(self, network: Network, memory_mb: int | None, home: Path) -> None:
        self.prefix = isolation_prefix(network)
        self.memory_bytes = memory_mb * 1024 * 1024 if memory_mb else None
        self.home = home

    def _limits(self) -> None:  # runs in the child before exec
        if self.memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def env(self) -> dict[str, str]:
        """The environment of every sandboxed command: HOME and TMPDIR in the scratch area,
        no bytecode written (a stale ``.pyc`` would give a wrong verdict), a fixed hash seed."""
        tmp = self.home / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "HOME": str(self.home),
            "TMPDIR": str(tmp),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "NO_COLOR": "1",
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
                [*self.prefix, *argv],
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
                [*self.prefix, *argv],
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
