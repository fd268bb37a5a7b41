"""Running a reviewer's shell command so that nothing it starts outlives it.

The command runs in a new session, hence its own process group. When the coroutine is
cancelled (the runner's timeout, Ctrl-C) the whole group is killed and the shell reaped
before the cancellation propagates; after a normal exit, whatever the command left running
in its group is killed too. A grandchild that starts its own session escapes the group;
nothing short of a cgroup can catch that.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from ..records import ReviewPacket

__all__ = ["ShellResult", "command_env", "exit_label", "packet_json", "run_shell", "stderr_tail"]

STDERR_TAIL_CHARS = 500


@dataclass(frozen=True)
class ShellResult:
    returncode: int
    stdout: bytes
    stderr: bytes


def command_env(tree: Path | None) -> dict[str, str]:
    """The inherited environment, with ``REVIEWBENCH_TREE`` naming ``tree`` (or unset)."""
    env = dict(os.environ)
    env.pop("REVIEWBENCH_TREE", None)
    if tree is not None:
        env["REVIEWBENCH_TREE"] = str(tree)
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_shell(
    command: str, *, stdin: bytes | None, cwd: Path | None, env: dict[str, str]
) -> ShellResult:
    """Run ``command`` through ``/bin/sh``, feeding ``stdin``; collect stdout and stderr.

    Raises:
        OSError: the shell itself could not start (e.g. ``cwd`` does not exist).
    """
    proc = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    try:
        stdout, stderr = await proc.communicate(stdin)
    except BaseException:
        _kill_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()  # the shell leads its group, but be sure
        # Reap the shell so no zombie or dangling transport is left behind; if cancelled
        # again meanwhile, the kill has already happened.
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 10)
        raise
    finally:
        _kill_group(proc.pid)
    assert proc.returncode is not None
    return ShellResult(proc.returncode, stdout, stderr)


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


def packet_json(packet: ReviewPacket) -> dict[str, object]:
    """The packet as the command kind sends it on stdin (SPEC 6)."""
    return {
        "case_id": packet.case_id,
        "title": packet.title,
        "diff": packet.diff,
        "paths": list(packet.paths),
        "prompt": packet.prompt,
        "guidance": packet.guidance,
        "files": dict(packet.files),
    }
