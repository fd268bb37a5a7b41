"""Running an agent's shell command (reviewer, solver, analyser) so that nothing outlives it.

The command runs in a new session, hence its own process group, and — when sandboxed — as
the first process of a new PID namespace, so that when it exits the kernel ends everything
it started, ``setsid`` grandchildren included. When the coroutine is cancelled (the runner's
timeout, Ctrl-C) the whole group is killed and reaped before the cancellation propagates.

After the command exits, its group is killed and its output read until end of file, but
for at most :data:`DRAIN_S` seconds: a child that escaped the group (unsandboxed) and kept
the pipe open cannot turn a printed review into a timeout.

Output is bounded while it streams: stdout up to ``max_stdout`` bytes (past it the group is
killed at once and the result says ``stdout_overflow``), stderr to its last
:data:`STDERR_KEEP` bytes. A command printing gigabytes costs neither memory nor disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DRAIN_S", "STDERR_KEEP", "ShellResult", "exit_label", "run_shell", "stderr_tail"]

STDERR_TAIL_CHARS = 500
STDERR_KEEP = 64 * 1024
"""Bytes of stderr kept (its end): enough for any error tail, bounded whatever is printed."""
DRAIN_S = 2.0
"""How long output is still read after the command exited."""


@dataclass(frozen=True)
class ShellResult:
    returncode: int
    stdout: bytes
    stderr: bytes
    stdout_overflow: bool = False
    """stdout went past ``max_stdout``: ``stdout`` holds its first ``max_stdout`` bytes and
    the command was killed there (``returncode`` is then the kill's)."""
    refused: tuple[str, ...] = ()
    """``host:port`` of every connection the sandbox's network proxy refused (a network list
    that did not hold it), in order."""


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Capped:
    """The first ``limit`` bytes of a stream; past them, ``overflow`` and ``on_overflow()``."""

    def __init__(self, limit: int | None, on_overflow: Callable[[], None]) -> None:
        self.limit = limit
        self.on_overflow = on_overflow
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False

    async def read(self, stream: asyncio.StreamReader | None) -> None:
        """Read ``stream`` to its end, or to the limit (then stop reading: the rest is not kept)."""
        if stream is None:
            return
        while chunk := await stream.read(1 << 16):
            if self.limit is not None and self.size + len(chunk) > self.limit:
                self.chunks.append(chunk[: self.limit - self.size])
                self.size = self.limit
                self.overflow = True
                self.on_overflow()
                return
            self.chunks.append(chunk)
            self.size += len(chunk)


async def _read_tail(stream: asyncio.StreamReader | None, tail: deque[bytes]) -> None:
    """Read ``stream`` to its end, keeping about its last :data:`STDERR_KEEP` bytes."""
    if stream is None:
        return
    kept = 0
    while chunk := await stream.read(1 << 16):
        tail.append(chunk)
        kept += len(chunk)
        while kept - len(tail[0]) >= STDERR_KEEP:
            kept -= len(tail.popleft())


async def _feed(proc: asyncio.subprocess.Process, data: bytes | None) -> None:
    if data is None or proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return when the process has exited, open pipes or not (``Process.wait`` in Python
    3.11 also waits for every pipe to close, which a child holding stdout can delay forever)."""
    if proc.returncode is not None:
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd here, or already reaped
        while proc.returncode is None:
            await asyncio.sleep(0.05)
        return
    loop = asyncio.get_running_loop()
    gone = loop.create_future()

    def wake() -> None:
        if not gone.done():
            gone.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await gone
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    # Exited, not yet reaped: asyncio's child watcher does that (closing the transport
    # first would reap it behind the watcher's back).
    while proc.returncode is None:
        await asyncio.sleep(0.005)


def _close_transport(proc: asyncio.subprocess.Process) -> None:
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def run_shell(
    command: str,
    *,
    stdin: bytes | None,
    cwd: Path | None,
    env: dict[str, str],
    prefix: list[str] | None = None,
    max_stdout: int | None = None,
) -> ShellResult:
    """Run ``command`` through ``/bin/sh`` (after ``prefix``, the sandbox's), feeding ``stdin``.

    ``max_stdout`` bounds what is read of stdout: one byte more and the command's group is
    killed, the result marked ``stdout_overflow``.

    Raises:
        OSError: the command could not start (e.g. ``cwd`` does not exist).
    """
    proc = await asyncio.create_subprocess_exec(
        *(prefix or []), "/bin/sh", "-c", command,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )  # fmt: skip
    out = _Capped(max_stdout, lambda: _kill_group(proc.pid))
    err: deque[bytes] = deque()
    readers = [asyncio.ensure_future(out.read(proc.stdout)),
               asyncio.ensure_future(_read_tail(proc.stderr, err))]  # fmt: skip
    try:
        await _feed(proc, stdin)
        await _exited(proc)
        _kill_group(proc.pid)  # whatever it left running in its group
        _, pending = await asyncio.wait(readers, timeout=DRAIN_S)
        for task in pending:  # a child that escaped the group holds the pipe: keep what came
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    except BaseException:
        _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        for task in readers:
            task.cancel()
        # Reap the shell so no zombie or dangling transport is left behind; if cancelled
        # again meanwhile, the kill has already happened.
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 10)
        _close_transport(proc)
        raise
    _close_transport(proc)
    returncode = await asyncio.wait_for(proc.wait(), 30)  # reaped; the pipes are closed now
    return ShellResult(returncode, b"".join(out.chunks), b"".join(err)[-STDERR_KEEP:], out.overflow)


def stderr_tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip()
    if len(text) > STDERR_TAIL_CHARS:
        text = "…" + text[-STDERR_TAIL_CHARS:]
    return text or "(no stderr)"


def exit_label(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"
