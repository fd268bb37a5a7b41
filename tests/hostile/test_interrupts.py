"""Attack 14: Ctrl-C as a terminal sends it, to the whole process group, at any moment.

git children die of the same SIGINT; that is an interruption (exit 130, one line), never
"git cat-file … failed: exit code -2". A Ctrl-C while the command is still importing is
one line too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewbench.errors import Terminated

from ..conftest import default_sigint


def _fast_import_history(path, commits: int) -> None:
    """A repository of ``commits`` small fix commits, written by git fast-import."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = []
    for i in range(commits):
        body = "".join(f"def f{j}(x):\n    return x + {(i + j) % 7}\n\n\n" for j in range(30))
        data = body.encode()
        stream.append(f"commit refs/heads/main\nmark :{i + 1}\n"
                      f"author A <a@example.com> {1700000000 + i} +0000\n"
                      f"committer A <a@example.com> {1700000000 + i} +0000\n"
                      f"data {len(f'fix f{i}')}\nfix f{i}\n".encode())  # fmt: skip
        if i:
            stream.append(f"from :{i}\n".encode())
        stream.append(
            f"M 100644 inline pkg/m{i % 40}.py\ndata {len(data)}\n".encode() + data + b"\n"
        )
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)


def _interrupt(
    args: list[str], delay: float, signum: int = signal.SIGINT
) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-m", "reviewbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=default_sigint)  # fmt: skip
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signum)  # what a terminal does: the whole group
        except ProcessLookupError:
            pass
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out.decode(), err.decode())


def _files(corpus: Path) -> dict[str, bytes]:
    return {str(p.relative_to(corpus)): b"" if p.name == "corpus.json" else p.read_bytes()
            for p in sorted(corpus.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.fixture(scope="module")
def mined_history(tmp_path_factory):
    """A 600-commit history and its uninterrupted mine, with how long that took here, now
    (both signals' tests interrupt mines of the same repository)."""
    base = tmp_path_factory.mktemp("interrupts")
    repo = base / "repo"
    _fast_import_history(repo, 600)
    started = time.monotonic()
    full = _interrupt(["mine", str(repo), "--controls-ratio", "0", "--out", str(base / "full")], 600)
    took = time.monotonic() - started
    assert full.returncode == 0, full.stderr
    return repo, base / "full", took


@pytest.mark.parametrize(
    "signum,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_ctrl_c_during_mine_is_an_interruption(tmp_path, mined_history, signum, code, word):
    repo, full, took = mined_history
    # Signals land while git is busy: at fractions of what a whole mine takes here, now.
    # Under load a mine may finish early or the signal land while still importing, so
    # more fractions are tried until two signals landed mid-mine.
    hits = 0
    for attempt, delay in enumerate(took * f for f in (0.5, 0.8, 0.3, 0.65, 0.15, 0.9)):
        if hits >= 2:
            break
        out = tmp_path / f"corpus{attempt}"
        result = _interrupt(
            ["mine", str(repo), "--controls-ratio", "0", "--out", str(out)], delay, signum
        )
        assert "Traceback" not in result.stderr and "failed" not in result.stderr, result.stderr
        if result.returncode == 0:
            continue  # finished before the signal
        if (
            result.returncode == -signum
        ):  # still importing: the default action (the shell shows 128+n)
            assert result.stderr == ""
            continue
        assert result.returncode == code, result.stderr
        assert result.stderr.strip() == f"reviewbench: error: {word}", result.stderr
        # Nothing half-written: no corpus, or (the signal came after the commit's rename) the
        # whole corpus, the same as the uninterrupted one but for its creation time.
        if out.exists():
            assert _files(out) == _files(full)
        hits += 1
    assert hits, "every mine finished before its signal: make the repository larger"


def _seconds(*args: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.monotonic() - started


def test_ctrl_c_during_start_up_is_one_line(tmp_path):
    """Signals between the interpreter's own start (nothing of reviewbench runs yet: that
    window is Python's) and the end of a command's start-up, measured here and now."""
    bare = _seconds("-c", "pass")
    whole = _seconds("-m", "reviewbench", "--version")
    seen = set()
    for fraction in (0.1, 0.25, 0.4, 0.55, 0.7, 0.85):
        delay = 1.5 * bare + fraction * max(whole - 1.5 * bare, 0.05)
        result = _interrupt(["show", str(tmp_path)], delay)
        assert "Traceback" not in result.stderr, (delay, bare, whole, result.stderr)
        if result.returncode == 130:
            assert result.stderr.strip() == "reviewbench: error: interrupted", result.stderr
        seen.add(result.returncode)
    assert 130 in seen, seen


@pytest.mark.parametrize("interrupt,code,word", [(KeyboardInterrupt, 130, "interrupted"),
                                                 (Terminated, 143, "terminated")])  # fmt: skip
def test_a_library_that_fails_while_an_interrupt_unwinds_is_still_an_interruption(
    git_repo, tmp_path, cli, monkeypatch, interrupt, code, word
):
    # Ctrl-C inside libcst's position provider (mine's mutation sites): its clean-up raised
    # KeyError over the KeyboardInterrupt, and mine ended "internal error: KeyError: ..."
    # with 65 kB of syntax tree, exit 1. Reproduced by hand on pallets/itsdangerous.
    def interrupted(*args, **kwargs):
        try:
            raise interrupt
        finally:
            {}["IndentedBlock(...)"]  # what the library's clean-up does

    monkeypatch.setattr("reviewbench.cli.mine.mine_corpus", interrupted)
    repo = git_repo()
    repo.commit("init", {"a.py": "x = 1\n"})
    result = cli("mine", repo.path, "--out", tmp_path / "corpus")
    assert result.code == code
    assert result.err.strip().splitlines() == [f"reviewbench: error: {word}"]


def test_an_internal_error_is_one_short_line(git_repo, tmp_path, cli, monkeypatch):
    def bug(*args, **kwargs):
        raise KeyError("node(\n" + "    whitespace='',\n" * 5000 + ")")

    monkeypatch.setattr("reviewbench.cli.mine.mine_corpus", bug)
    repo = git_repo()
    repo.commit("init", {"a.py": "x = 1\n"})
    result = cli("mine", repo.path, "--out", tmp_path / "corpus")
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reviewbench: error: internal error: KeyError")
    assert "REVIEWBENCH_DEBUG" in lines[0] and len(lines[0]) < 600


def test_an_import_that_fails_under_ctrl_c_is_one_line():
    # Ctrl-C while a compiled module initialises: Python raises "ImportError: initialization
    # failed" over the KeyboardInterrupt, and the start-up hook printed that traceback
    # (test_ctrl_c_during_start_up_is_one_line caught it once in a full-suite run).
    program = (
        "import sys\nsys.argv = ['reviewbench']\nimport reviewbench\n"
        "try:\n    raise KeyboardInterrupt\nfinally:\n    raise ImportError('initialization failed')\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 130, result.stderr
    assert result.stderr.strip() == "reviewbench: error: interrupted"


def test_ctrl_c_inside_pydantic_schema_building_is_one_line():
    """pydantic-core turns a Ctrl-C that lands while it builds a record's validator into a
    ``SchemaError`` naming it (seen once the CLI's start-up got fast enough for that window
    to be most of it): the start-up hook reads that as the interruption too."""
    code = ("import sys; sys.argv = ['reviewbench']; import reviewbench, pydantic_core\n"
            "raise pydantic_core.SchemaError('Error building \"enum\" validator:\\n  KeyboardInterrupt: ')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (130, "reviewbench: error: interrupted\n")
    other = code.replace("KeyboardInterrupt", "ValueError")
    result = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" in result.stderr  # any other schema error stays a bug report


def test_a_ctrl_c_swallowed_where_it_cannot_propagate_still_interrupts():
    """pydantic-core compiling a field's pattern when Ctrl-C lands reports the interrupt as
    "Exception ignored in: '^[A-Za-z0-9_.-]{1,64}$'" with a traceback, and the command went
    on (seen under load: `show` then printed its own error). A finaliser raising one does the
    same: it is delivered again, and the command stops with one line."""
    code = ("import sys, time; sys.argv = ['reviewbench']; import reviewbench\n"
            "class Swallowed:\n    def __del__(self):\n        raise KeyboardInterrupt\n"
            "Swallowed()\n"
            "for _ in range(100):\n    time.sleep(0.01)\n"
            "print('went on')\n")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "reviewbench: error: interrupted\n")
    other = code.replace("raise KeyboardInterrupt", "raise ValueError('a finaliser bug')")
    result = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "went on\n" and "a finaliser bug" in result.stderr
