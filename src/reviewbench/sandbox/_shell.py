"""Running an agent's shell command (reviewer, solver, analyser) so that nothing outlives it.

The command runs in a new session, hence its own process group, and — when sandboxed — as
the first process of a new PID namespace, so that when it exits the kernel ends everything
it started, ``setsid`` grandchildren included. When the coroutine is cancelled (the runner's
timeout, Ctrl-C) the whole group is killed and reaped before the cancellation propagates.

After the command exits, its group is killed and its output read until end of file, but
for at most :data:`DRAIN_S` seconds: a child that escaped the group (unsandboxed) and kept
the pipe open cannot turn a printed review into a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DRAIN_S", "ShellResult", "exit_label", "run_shell", "stderr_tail"]

STDERR_TAIL_CHARS = 500
DRAIN_S = 2.0
"""How long output is still read after the command exited."""


@dataclass(frozen=True)
class ShellResult:
    returncode: int
    stdout: bytes
    stderr: bytes


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _read_all(stream: asyncio.StreamReader | None, chunks: list[bytes]) -> None:
    """Read ``stream`` to its end into ``chunks`` (kept when the read is cut short)."""
    if stream is None:
        return
    while chunk := await stream.read(1 << 16):
        chunks.append(chunk)


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
    loop.add_reader(fd, lambda: gone.done() or gone.set_result(None))
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
) -> ShellResult:
    """Run ``command`` through ``/bin/sh`` (after ``prefix``, the sandbox's), feeding ``stdin``.

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
    out: tuple[list[bytes], list[bytes]] = ([], [])
    readers = [asyncio.ensure_future(_read_all(proc.stdout, out[0])),
               asyncio.ensure_future(_read_all(proc.stderr, out[1]))]  # fmt: skip
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
    return ShellResult(returncode, b"".join(out[0]), b"".join(out[1]))


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
