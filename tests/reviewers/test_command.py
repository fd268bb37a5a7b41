"""The command reviewer runs real scripts: packet on stdin, review on stdout, no orphans."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from reviewbench.config.reviewers import CommandConfig
from reviewbench.reviewers import ReviewerError, make_reviewer
from reviewbench.reviewers.command import CommandReviewer


def script(tmp_path: Path, body: str, name: str = "reviewer.py") -> str:
    """A Python script file; the command line that runs it."""
    path = tmp_path / name
    path.write_text(body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


PYTHON_HOME = os.path.realpath(sys.base_prefix)
"""Where the interpreter lives (under the caller's home here, which the sandbox hides)."""


def exposed(command: str) -> list[str]:
    """What a test command needs to see in the sandbox: Python, and the folders of the
    absolute paths it names (its script)."""
    paths = {PYTHON_HOME}
    for word in shlex.split(command):
        if os.path.isabs(word) and os.path.isfile(word):
            paths.add(os.path.dirname(word))
    return sorted(paths)


def config(command: str, **fields) -> CommandConfig:
    return CommandConfig(kind="command", command=command, **{"expose": exposed(command), **fields})


def run(command: str, packet, tree: Path | None = None, timeout: float | None = None, **fields):
    async def go():
        reviewer = make_reviewer(config(command, **fields))
        try:
            return await asyncio.wait_for(reviewer.review(packet, tree), timeout)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


ECHO = """\
import json, os, sys
packet = json.load(sys.stdin)
print(json.dumps({"packet": packet, "tree": os.environ.get("REVIEWBENCH_TREE"),
                  "cwd": os.getcwd(), "inherited": os.environ.get("RB_TEST_INHERITED"),
                  "listed": os.environ.get("RB_TEST_LISTED")}))
"""


def test_registered_kind_builds_the_command_reviewer():
    assert isinstance(make_reviewer(CommandConfig(kind="command", command="true")), CommandReviewer)


def test_packet_on_stdin_tree_in_env_and_cwd(tmp_path, make_packet, monkeypatch):
    monkeypatch.setenv("RB_TEST_INHERITED", "yes")
    monkeypatch.setenv("RB_TEST_LISTED", "listed-value")
    tree = tmp_path / "tree"
    tree.mkdir()
    packet = make_packet(guidance="Be strict.", files={"src/app.py": "x = 1\n"})
    reply = run(script(tmp_path, ECHO), packet, tree, env=["RB_TEST_LISTED"])
    seen = json.loads(reply.text)
    assert seen["packet"] == {
        "case_id": "c0001",
        "title": "Update app module",
        "diff": packet.diff,
        "paths": ["src/app.py"],
        "prompt": packet.prompt,
        "guidance": "Be strict.",
        "files": {"src/app.py": "x = 1\n"},
    }
    assert seen["tree"] == str(tree)
    assert Path(seen["cwd"]).resolve() == tree.resolve()
    assert seen["inherited"] is None  # only listed variables arrive
    assert seen["listed"] == "listed-value"
    assert reply.model is None and reply.findings is None


def test_without_a_tree_the_variable_is_unset(tmp_path, make_packet, monkeypatch):
    monkeypatch.setenv("REVIEWBENCH_TREE", "/stale/value/from/the/parent")
    seen = json.loads(run(script(tmp_path, ECHO), make_packet()).text)
    assert seen["tree"] is None
    assert seen["packet"]["guidance"] is None and seen["packet"]["files"] == {}


def test_stdout_is_the_review_text_and_bad_bytes_are_replaced(tmp_path, make_packet):
    body = "import sys\nsys.stdout.buffer.write(b'src/app.py:2 high caf\\xe9 bug\\n')\n"
    assert run(script(tmp_path, body), make_packet()).text == "src/app.py:2 high caf\ufffd bug\n"


def test_shell_features_work(tmp_path, make_packet):
    assert run("echo NO_ISSUES | tr A-Z A-Z", make_packet()).text == "NO_ISSUES\n"


def test_nonzero_exit_is_an_error_with_code_and_stderr_tail(tmp_path, make_packet):
    body = (
        "import sys\nsys.stdin.read()\nsys.stderr.write('HEAD-MARK ' + 'x' * 2000 + ' TAIL-MARK')\n"
        "print('partial output')\nsys.exit(3)\n"
    )
    with pytest.raises(ReviewerError) as info:
        run(script(tmp_path, body), make_packet())
    message = str(info.value)
    assert not info.value.transient
    assert "exited with code 3" in message and "c0001" in message
    assert "TAIL-MARK" in message and "HEAD-MARK" not in message
    assert len(message) < 800


def test_missing_program_is_an_error(make_packet):
    with pytest.raises(ReviewerError, match="code 127"):
        run("reviewbench-no-such-program-xyz --flag", make_packet())


def test_missing_tree_directory_is_an_error(tmp_path, make_packet):
    with pytest.raises(ReviewerError, match="could not start"):
        run("true", make_packet(), tmp_path / "absent")


def test_a_command_that_ignores_a_large_stdin_still_works(tmp_path, make_packet):
    packet = make_packet(files={f"f{i}.py": "x = 1\n" * 20000 for i in range(20)})  # ~2.4 MB
    assert run("echo NO_ISSUES", packet).text == "NO_ISSUES\n"


SPAWNER = """\
import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
sys.stdout.flush()
time.sleep(60)
"""


def test_cancellation_kills_the_whole_process_group(tmp_path, make_packet):
    pids_file = tmp_path / "pids"
    command = f"{script(tmp_path, SPAWNER)} {shlex.quote(str(pids_file))}"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        run(command, make_packet(), timeout=1.5, sandbox=False, network=True)  # pids visible to the test
    assert time.monotonic() - started < 10
    pids = [int(p) for p in pids_file.read_text().split()]
    assert len(pids) == 2 and all(p != os.getpid() for p in pids)
    assert wait_gone(pids) == []


def test_processes_left_behind_after_a_normal_exit_are_killed(tmp_path, make_packet):
    pid_file = tmp_path / "pid"
    command = f"sleep 60 >/dev/null 2>&1 & echo $! > {shlex.quote(str(pid_file))}; echo NO_ISSUES"
    assert run(command, make_packet(), sandbox=False, network=True).text == "NO_ISSUES\n"
    assert wait_gone([int(pid_file.read_text())]) == []


def test_cancelled_run_leaves_the_loop_clean(tmp_path, make_packet):
    # Cancelling many concurrent runs must neither hang nor leave processes behind.
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    body = "import os, sys, time\nopen(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\ntime.sleep(60)\n"
    command = f"{script(tmp_path, body)} {shlex.quote(str(pid_dir))}"

    async def go():
        reviewer = make_reviewer(config(command, sandbox=False, network=True))  # pids visible to the test
        tasks = [asyncio.create_task(reviewer.review(make_packet(), None)) for _ in range(8)]
        deadline = time.monotonic() + 10
        while len(list(pid_dir.iterdir())) < 8 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await reviewer.aclose()
        return results

    results = asyncio.run(go())
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    pids = [int(p.name) for p in pid_dir.iterdir()]
    assert len(pids) == 8
    assert wait_gone(pids) == []
