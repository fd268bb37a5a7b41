"""Fixtures that build small, real git repositories in tmp_path."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

# Each xdist worker takes a core: BLAS threads of its own would only contend with the other
# worker's (the bootstrap's matrix products are small). Set before numpy is first imported.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitRepo:
    """A throwaway repository with helpers to write files and commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, input: bytes | None = None) -> str:
        self._tick += 1
        date = f"2024-01-01T00:{self._tick // 60 % 60:02d}:{self._tick % 60:02d}+00:00"
        env = {**os.environ, **_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
               "HOME": str(self.path.parent)}  # fmt: skip
        proc = subprocess.run(["git", "-C", str(self.path), *args], input=input,
                              capture_output=True, env=env, check=True)  # fmt: skip
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def write(self, files: dict[str, str | bytes]) -> None:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)

    def commit(self, message: str, files: dict[str, str | bytes] | None = None,
               remove: tuple[str, ...] = ()) -> str:  # fmt: skip
        """Write ``files``, delete ``remove``, commit everything; return the sha."""
        self.write(files or {})
        for name in remove:
            self.git("rm", "-q", "--", name)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def show(self, rev: str, path: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.path), "show", f"{rev}:{path}"],
                              capture_output=True, check=True).stdout  # fmt: skip


@pytest.fixture
def git_repo(tmp_path: Path):
    """A factory of empty repositories under tmp_path."""
    count = 0

    def make(name: str | None = None) -> GitRepo:
        nonlocal count
        count += 1
        return GitRepo(tmp_path / (name or f"repo{count}"))

    return make


def default_sigint() -> None:
    """``preexec_fn`` for a child that must react to Ctrl-C.

    A shell running a job in the background (``cmd &``) starts it with SIGINT ignored, and
    a Python started that way never installs its KeyboardInterrupt handler. Tests that send
    SIGINT restore the default first, so they test reviewbench and not how CI was started.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass(frozen=True)
class CliResult:
    """What an in-process ``reviewbench`` invocation printed, and its exit code."""

    code: int
    stdout: str
    stderr: str


def _invoke(*args: object, input: str | None = None, env: dict[str, str | None] | None = None,
            cwd: Path | None = None) -> CliResult:  # fmt: skip
    from click.testing import CliRunner

    from reviewbench.cli import main

    previous = signal.getsignal(signal.SIGTERM)
    runner = CliRunner()
    here = os.getcwd()
    env = {"REVIEWBENCH_DEBUG": None, **(env or {})}  # errors as a user sees them
    with runner.isolation(input=input, env=env) as streams:
        if cwd is not None:
            os.chdir(cwd)
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            os.chdir(here)
            signal.signal(signal.SIGTERM, previous)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = streams[0].getvalue(), streams[1].getvalue()
    return CliResult(code, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))


@pytest.fixture
def cli():
    """Run ``reviewbench ARGS`` in this process through the real ``main`` (errors to one line,
    exit codes), with stdout and stderr captured. Use a subprocess instead where signals, a
    separate interpreter or isolation are the point of the test."""
    return _invoke


def run_cli(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            **_: object) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``reviewbench ARGS`` in this process, with a subprocess's result shape (returncode,
    stdout, stderr) for tests written against one. ``env`` adds variables."""
    result = _invoke(*args, cwd=cwd, env=env)
    return subprocess.CompletedProcess([str(a) for a in args], result.code, result.stdout, result.stderr)


@pytest.fixture(autouse=True)
def _project_environment(monkeypatch):
    """Fixture projects run their tests with the interpreter running this suite.

    reviewbench's default test interpreter is the user's active environment
    (``$VIRTUAL_ENV``, else ``python3`` on PATH), never its own; CI runs
    ``.venv/bin/python -m pytest`` without activating the venv, where ``python3`` on PATH
    may lack pytest. So every test runs as if this suite's venv were activated; tests of
    the default itself set or clear ``VIRTUAL_ENV`` on their own.

    The fixture projects need no third-party pytest plugin, and this venv's (hypothesis,
    xdist, anyio) belong to the suite, not to them: loading them cost each cold test run
    0.55 s of its 0.7 s. So their test runs skip plugin autoload; tests of how plugins are
    loaded clear ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` on their own.
    """
    if sys.prefix != sys.base_prefix:
        monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@contextmanager
def host_service(path: Path) -> Iterator[list[bytes]]:
    """A service of the host listening on the unix socket ``path`` while the block runs;
    yields the list of what every connection sent (what a sandboxed run must never add to)."""
    import socket
    import threading

    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(8)
    server.settimeout(0.2)
    reached: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                reached.append(conn.recv(64))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield reached
    finally:
        stop.set()
        thread.join()
        server.close()
