"""Warm pytest runs: one sandboxed process per scratch tree that forks a child per run.

A cold run pays for the interpreter, pytest, its plugins, and pytest's assertion
rewriting of every test module, on every run; on a small package that is nearly all of
a run's cost. The warm server (``_warm_server.py``) is started once per scratch tree
under the same sandbox prefix as a cold run (no network, memory limit, its own session,
HOME/TMPDIR in the scratch area, ``PYTHONDONTWRITEBYTECODE=1``). It imports pytest and
the third-party plugins only, never the project, and forks a child per run that calls
pytest exactly as ``python -m pytest ARGS`` would, importing conftest, tests and project
fresh. Verdicts still come from the child's exit status and its JUnit XML.

Only commands that plainly are ``[VAR=value ...] PYTHON -m pytest ARGS`` or
``[VAR=value ...] pytest ARGS`` are run warm; anything a shell would interpret (``$``,
globs, ``;``, pipes, redirections…) runs cold, as does every run when the server cannot
start (its parent would have imported project code, pytest is missing…). Set
``REVIEWBENCH_WARM_PYTEST=0`` to run everything cold.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import subprocess
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import Cancelled, RunOutcome, Sandbox, cancelled, probe_output

__all__ = ["Launch", "WarmPytest", "parse_launch", "plain_command", "warm_enabled"]

SERVER = Path(__file__).with_name("_warm_server.py")
#: Seconds the server may take to import pytest and its plugins.
START_TIMEOUT = 120.0
_ASSIGNMENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def warm_enabled() -> bool:
    return os.environ.get("REVIEWBENCH_WARM_PYTEST", "1").strip().lower() not in (
        "0",
        "no",
        "false",
        "off",
    )


@dataclass(frozen=True)
class Launch:
    """How a pytest command line starts, taken apart."""

    env: tuple[tuple[str, str], ...]
    """``VAR=value`` words before the program."""
    python: str
    """The interpreter that runs pytest."""
    argv0: str
    """``sys.argv[0]`` as the cold process would have it."""
    path0: str
    """``sys.path[0]``: the script's folder; empty for ``-m pytest`` (the server's working
    directory, resolved as the interpreter resolves it)."""
    args: tuple[str, ...]
    """pytest's own arguments."""


def plain_command(command: str) -> bool:
    """True when no shell expansion, operator or redirection can occur outside single quotes."""
    quote = None
    for char in command:
        if quote == "'":
            quote = None if char == "'" else quote
        elif quote == '"':
            if char in "$`\\":
                return False
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in "$`\\;&|<>(){}*?[]~!#\n":
            return False
    return quote is None


def _shebang(script: str) -> str | None:
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return words[0] if len(words) == 1 and os.path.isabs(words[0]) else None


def parse_launch(command: str, cwd: Path, path: str | None = None) -> Launch | None:
    """The launch of ``command`` when it can run warm, else None; ``path``: the ``PATH``
    its runs get (default: this process's)."""
    split = split_command(command, cwd, path)
    if split is None:
        return None
    env, program, resolved, args = split
    if args[:2] == ["-m", "pytest"] or args[:2] == ["-m", "py.test"]:
        try:
            argv0 = _pytest_main(resolved)
        except (OSError, subprocess.SubprocessError):
            return None
        if argv0 is None:
            return None
        return Launch(tuple(env), resolved, argv0, "", tuple(args[2:]))
    if os.path.basename(program) in ("pytest", "py.test"):
        python = _shebang(resolved)
        if python is None:
            return None
        return Launch(tuple(env), python, resolved, os.path.dirname(resolved), tuple(args))
    return None


def split_command(command: str, cwd: Path, path: str | None = None) -> tuple[list[tuple[str, str]], str, str, list[str]] | None:
    """A plain command taken apart: (its leading ``NAME=VALUE`` words, the program as
    written, the program found on ``path`` or relative to ``cwd``, its arguments); None
    for a command a shell would interpret, or a program not found."""
    if not plain_command(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env = []
    while words and "=" in words[0] and words[0].split("=", 1)[0] and set(words[0].split("=", 1)[0]) <= _ASSIGNMENT \
            and not words[0][0].isdigit():  # fmt: skip
        name, value = words.pop(0).split("=", 1)
        env.append((name, value))
    if not words:
        return None
    program = words[0]
    resolved = shutil.which(program, path=path) if "/" not in program else program
    if resolved is None:
        return None
    return env, program, os.path.abspath(os.path.join(cwd, resolved)), words[1:]


_MAIN_CACHE: dict[str, str | None] = {}


def _pytest_main(python: str) -> str | None:
    """``pytest/__main__.py`` of ``python`` (``sys.argv[0]`` under ``-m pytest``), found
    without importing pytest (the interpreter may be a different environment)."""
    if python not in _MAIN_CACHE:
        code = "import importlib.util as u; s = u.find_spec('pytest.__main__'); print(s.origin if s else '')"
        # Sandboxed: the interpreter's environment may hold what an untrusted install planted.
        output = probe_output([python, "-I", "-c", code], timeout=60)
        _MAIN_CACHE[python] = (output or "").strip() or None
    return _MAIN_CACHE[python]


class _Gone(Exception):
    """The server closed its end of the pipe."""


class WarmPytest:
    """One warm server for one scratch tree and one test command."""

    def __init__(self, sandbox: Sandbox, cwd: Path, launch: Launch, home: Path) -> None:
        self.sandbox = sandbox
        self.cwd = cwd
        self.launch = launch
        self.home = home
        self.broken: str | None = None
        """Why this server cannot run (then every run is cold)."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._buffer = b""
        self.starts = 0
        self.warmed = False
        """Whether the server ran its warm-up session (see ``_warm_server.py``)."""

    def _start(self, timeout: float) -> None:
        log = self.home / "warm-server.log"
        argv = [self.launch.python, str(SERVER), self.launch.argv0, self.launch.path0,
                json.dumps(list(self.launch.args))]  # fmt: skip
        proc = self.sandbox.start(argv, self.cwd, dict(self.launch.env), log)
        self._proc = proc
        self._buffer = b""
        self._finalizer = weakref.finalize(self, Sandbox.stop, proc)
        self.starts += 1
        try:
            ready = self._receive(min(timeout, START_TIMEOUT))
        except _Gone:
            ready = None
        self.warmed = bool(ready and ready.get("warmed"))
        if not ready or not ready.get("ready"):
            reason = ready.get("reason") if ready else "no answer"
            self.close()
            tail = (
                log.read_text(errors="replace").strip().splitlines()[-1:] if log.is_file() else []
            )
            self.broken = f"{reason}{': ' + tail[0] if tail and not ready else ''}"

    def _receive(self, timeout: float) -> dict | None:
        """One JSON line from the server; None at a timeout.

        Raises:
            _Gone: the server closed its end (it died).
        """
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise _Gone()
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def run(
        self, args: list[str], timeout: float, log: Path, cpu_limit_s: int | None = None
    ) -> RunOutcome | None:
        """Run pytest with ``args`` in a fresh fork, stopped after ``timeout`` seconds or
        ``cpu_limit_s`` CPU seconds (a timeout either way); None when the server cannot run."""
        if cancelled():
            raise Cancelled()
        if self.broken:
            return None
        start = time.monotonic()
        if self._proc is None:
            self._start(timeout)
            if self.broken:
                return None
        assert self._proc is not None and self._proc.stdin is not None
        # The fork writes inside the sandbox's scratch area (the host, the run's logs included,
        # is read-only there); its output is appended to the case log afterwards.
        run_log = self.home / "warm-run.log"
        run_log.write_bytes(b"")
        request = {"argv": args, "log": str(run_log), "cache": str(self.home / "warm-cache.bin"),
                   "cpu_limit_s": cpu_limit_s}  # fmt: skip
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.close()
            self.broken = "the warm server died"
            return None
        try:
            try:
                answer = self._receive(max(0.0, timeout - (time.monotonic() - start)))
            finally:
                _append(run_log, log)
        except _Gone:
            self.close()
            if cancelled():
                raise Cancelled() from None
            self.broken = "the warm server died"
            return None
        duration = time.monotonic() - start
        if cancelled():
            self.close()
            raise Cancelled()
        if answer is None:
            self.close()  # hung: kill the whole session; the next run starts afresh
            return RunOutcome(exit_code=None, timed_out=True, duration_s=duration)
        cpu = answer.get("cpu_s")
        if answer.get("cpu_limited"):
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"\n=== stopped at its CPU limit ({cpu_limit_s} CPU s)\n")
            return RunOutcome(exit_code=None, timed_out=True, duration_s=duration, cpu_s=cpu)
        return RunOutcome(exit_code=int(answer["exit"]), timed_out=False, duration_s=duration, cpu_s=cpu)

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # stops and reaps the server, once
        self._proc = None
        self._finalizer = None


def _append(source: Path, log: Path) -> None:
    """Append what a warm run wrote to the case log."""
    with source.open("rb") as src, log.open("ab") as dst:
        shutil.copyfileobj(src, dst)
