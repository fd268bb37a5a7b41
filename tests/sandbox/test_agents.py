"""Command reviewers and solvers in the sandbox: what a hostile agent tries, and what it sees."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from reviewbench.config.reviewers import CommandConfig
from reviewbench.errors import PrerequisiteError, UsageError
from reviewbench.reviewers import make_reviewer
from reviewbench.sandbox import protect
from reviewbench.sandbox._layout import _mechanism
from reviewbench.tasks.solvers import CommandSolver, TaskPacket

PYTHON_HOME = os.path.realpath(sys.base_prefix)

SNOOP = """\
import json, os, sys
from pathlib import Path

def read(path):
    try:
        return Path(path).read_text()
    except OSError as exc:
        return f"refused: {exc.strerror}"

def write(path):
    try:
        Path(path).write_text("tampered")
        return "written"
    except OSError as exc:
        return f"refused: {exc.strerror}"

targets = json.loads(sys.argv[1])
environs = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            environs.append(Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace"))
        except OSError:
            pass
print(json.dumps({
    "reads": {name: read(path) for name, path in targets["read"].items()},
    "writes": {name: write(path) for name, path in targets["write"].items()},
    "env": dict(os.environ),
    "proc_environs": environs,
    "home_files": sorted(os.listdir(os.environ["HOME"])),
}))
"""


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A caller's world worth stealing: a home with a secret, a corpus with its gold, a
    secret variable, a tree to review; and the folder holding the agent's script."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "token").write_text("HOME-SECRET")
    monkeypatch.setenv("HOME", str(home))
    corpus = tmp_path / "work" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "gold.jsonl").write_text('{"gold": "GOLD-SECRET"}\n')
    (corpus / "cases.jsonl").write_text('{"case": 1}\n')
    tree = tmp_path / "work" / "trees" / "case-1"
    tree.mkdir(parents=True)
    (tree / "app.py").write_text("x = 1\n")
    other_tree = tmp_path / "work" / "trees" / "case-2"
    other_tree.mkdir()
    (other_tree / "app.py").write_text("OTHER-CASE\n")
    bin_dir = tmp_path / "work" / "bin"
    bin_dir.mkdir()
    (bin_dir / "snoop.py").write_text(SNOOP)
    monkeypatch.setenv("RB_UNLISTED_SECRET", "ENV-SECRET")
    monkeypatch.setenv("RB_LISTED", "listed-value")
    return {"tmp": tmp_path, "home": home, "corpus": corpus, "tree": tree, "other_tree": other_tree,
            "bin": bin_dir, "work": tmp_path / "work"}  # fmt: skip


def snoop_command(world, outside: Path) -> str:
    targets = {
        "read": {"gold": str(world["corpus"] / "gold.jsonl"), "cases": str(world["corpus"] / "cases.jsonl"),
                 "home": str(world["home"] / ".config" / "token"),
                 "other_tree": str(world["other_tree"] / "app.py")},
        "write": {"tree": str(world["tree"] / "app.py"), "outside": str(outside),
                  "home": str(world["home"] / "marker")},
    }  # fmt: skip
    return f"{shlex.quote(sys.executable)} {world['bin'] / 'snoop.py'} {shlex.quote(json.dumps(targets))}"


def review(config: CommandConfig, tree: Path | None, make_packet):
    async def go():
        reviewer = make_reviewer(config)
        try:
            return await reviewer.review(make_packet(), tree)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def test_a_command_reviewer_sees_no_gold_corpus_home_secret_or_other_tree(world, make_packet):
    outside = world["work"] / "planted.txt"
    # The user exposes the whole work folder (where the agent lives); the protected corpus
    # inside it stays hidden all the same.
    config = CommandConfig(kind="command", command=snoop_command(world, outside), env=["RB_LISTED"],
                           expose=[PYTHON_HOME, str(world["work"])])  # fmt: skip
    with protect(world["corpus"], world["tree"].parent):  # as the runner and the packet builder do
        seen = json.loads(review(config, world["tree"], make_packet).text)
    reads = seen["reads"]
    assert all(value.startswith("refused") for value in reads.values()), reads
    assert seen["env"].get("RB_LISTED") == "listed-value"
    assert "RB_UNLISTED_SECRET" not in seen["env"]
    shell_own = {"PWD", "SHLVL", "_"}  # set by /bin/sh itself
    assert set(seen["env"]) - shell_own <= {"PATH", "LANG", "HOME", "TMPDIR", "REVIEWBENCH_TREE", "RB_LISTED"}
    assert not any("ENV-SECRET" in environ for environ in seen["proc_environs"])
    assert seen["home_files"] == []
    # Nothing it writes persists: the shared tree is read-only, the rest of the host too.
    assert all(value.startswith("refused") for value in seen["writes"].values()), seen["writes"]
    assert (world["tree"] / "app.py").read_text() == "x = 1\n"
    assert not outside.exists() and not (world["home"] / "marker").exists()


def test_the_shared_tree_cannot_be_made_writable(world, make_packet):
    command = f"chmod -R u+w {world['tree']}; echo tampered > {world['tree']}/app.py; echo NO_ISSUES"
    config = CommandConfig(kind="command", command=command)
    assert review(config, world["tree"], make_packet).text.strip().endswith("NO_ISSUES")
    assert (world["tree"] / "app.py").read_text() == "x = 1\n"


def test_without_the_sandbox_the_same_reviewer_reads_the_gold(world, make_packet):
    # The attack is real: the same script, unsandboxed, reads what the sandbox hides.
    outside = world["work"] / "planted.txt"
    config = CommandConfig(kind="command", command=snoop_command(world, outside), sandbox=False, network=True)
    seen = json.loads(review(config, world["tree"], make_packet).text)
    assert seen["reads"]["gold"] == '{"gold": "GOLD-SECRET"}\n'
    assert "RB_UNLISTED_SECRET" not in seen["env"]  # the environment is minimal either way
    outside.unlink()


def test_a_listed_variable_that_is_not_set_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("RB_NOT_SET", raising=False)
    with pytest.raises(UsageError, match="RB_NOT_SET"):
        make_reviewer(CommandConfig(kind="command", command="true", env=["RB_NOT_SET"]))


def test_no_sandbox_mechanism_is_a_clear_refusal(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither unshare nor bwrap can be found
    _mechanism.cache_clear()
    try:
        with pytest.raises(PrerequisiteError, match="cannot sandbox the command.*sandbox = false"):
            make_reviewer(CommandConfig(kind="command", command="true"))
    finally:
        _mechanism.cache_clear()


def _listener() -> tuple[socket.socket, list[bytes]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    got: list[bytes] = []

    def accept():
        server.settimeout(10)
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            got.append(conn.recv(100))
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, got


def _connect_command(port: int) -> str:
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3).sendall(b'hi'); print('NO_ISSUES')"
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def test_no_network_by_default_and_network_true_is_the_opt_out(make_packet):
    server, got = _listener()
    try:
        command = _connect_command(server.getsockname()[1])
        for off in ({}, {"network": False}, {"network": []}):
            config = CommandConfig(kind="command", command=command, expose=[PYTHON_HOME], **off)
            with pytest.raises(Exception, match="exited with code 1"):
                review(config, None, make_packet)
        on = CommandConfig(kind="command", command=command, expose=[PYTHON_HOME], network=True)
        assert review(on, None, make_packet).text == "NO_ISSUES\n"
        time.sleep(0.2)
        assert got == [b"hi"]  # only the opted-out run reached it
    finally:
        server.close()


def _alive_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(pid))
            except OSError:
                pass
    return found


@pytest.mark.parametrize("sandbox", [True, False])
def test_a_background_child_and_a_setsid_grandchild_do_not_hold_the_review(make_packet, sandbox):
    # issue 19.12: the review is printed, the command exits, its children linger holding stdout.
    marker = "4711.25" if sandbox else "4712.25"
    command = f"sleep {marker} & setsid sleep {marker} & echo NO_ISSUES"
    started = time.monotonic()
    try:
        reply = review(CommandConfig(kind="command", command=command, sandbox=sandbox, network=not sandbox), None, make_packet)
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 5
        while sandbox and _alive_with(marker) and time.monotonic() < deadline:  # outside, setsid escapes
            time.sleep(0.05)
        survivors = _alive_with(marker)
    finally:
        for pid in _alive_with(marker):  # never leave them behind, even when the test fails
            os.kill(pid, 9)
    assert reply.text == "NO_ISSUES\n"
    assert elapsed < 8
    if sandbox:
        assert survivors == []  # the PID namespace ends with its first process


SOLVER = """\
import json, os, sys
from pathlib import Path
targets = json.loads(sys.argv[1])
out = {}
for name, path in targets.items():
    try:
        out[name] = Path(path).read_text()
    except OSError as exc:
        out[name] = f"refused: {exc.strerror}"
Path("app.py").write_text("x = 2\\n")
try:
    Path(targets["tasks"]).with_name("planted").write_text("x")
    out["planted"] = "written"
except OSError as exc:
    out["planted"] = f"refused: {exc.strerror}"
out["env"] = sorted(os.environ)
print(json.dumps(out))
"""


def test_a_command_solver_edits_its_tree_and_sees_nothing_else(world):
    tasks = world["work"] / "taskdir" / "tasks.jsonl"
    tasks.parent.mkdir()
    tasks.write_text('{"patch": "THE-FIX"}\n')
    (world["bin"] / "solver.py").write_text(SOLVER)
    targets = {"tasks": str(tasks), "home": str(world["home"] / ".config" / "token")}
    command = f"{shlex.quote(sys.executable)} {world['bin'] / 'solver.py'} {shlex.quote(json.dumps(targets))}"
    solver = CommandSolver(CommandConfig(kind="command", command=command, expose=[PYTHON_HOME, str(world["work"])]))
    packet = TaskPacket(instance_id="t-1", problem_statement="Fix it.", prompt="p")
    with protect(tasks.parent):
        seen = json.loads(asyncio.run(solver.solve(packet, world["tree"])).text)
    assert seen["tasks"].startswith("refused") and seen["home"].startswith("refused")
    assert seen["planted"].startswith("refused") and not (tasks.parent / "planted").exists()
    assert "RB_UNLISTED_SECRET" not in seen["env"]
    assert (world["tree"] / "app.py").read_text() == "x = 2\n"  # its own tree is writable


def test_listed_hide_paths_are_hidden_inside_exposed_ones(world, make_packet, tmp_path):
    other = world["work"] / "other-checkout"
    other.mkdir()
    (other / "gold.jsonl").write_text("OTHER-GOLD")
    command = f"cat {other / 'gold.jsonl'} 2>/dev/null || echo NO_ISSUES"
    config = CommandConfig(kind="command", command=command, expose=[str(world["work"])], hide=[str(other)])
    assert review(config, None, make_packet).text == "NO_ISSUES\n"
    with pytest.raises(UsageError, match="must be absolute"):
        make_reviewer(CommandConfig(kind="command", command="true", hide=["relative/path"]))


#: What a sandboxed agent may see of the host's top level (docs/SANDBOX.md); every other
#: folder there is empty to it, and a file there reads as empty.
SYSTEM_VIEW = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys"}

LOOK = """\
import json, os, sys
from pathlib import Path

def read(path):
    try:
        return Path(path).read_text()[:60] or "empty"
    except OSError as exc:
        return f"refused: {exc.strerror}"

top = {}
for name in sorted(os.listdir("/")):
    path = os.path.join("/", name)
    if os.path.islink(path):
        continue
    try:
        top[name] = sorted(os.listdir(path))[:5] if os.path.isdir(path) else read(path)
    except OSError as exc:
        top[name] = f"refused: {exc.strerror}"
print(json.dumps({"top": top, "reads": {name: read(path) for name, path in json.loads(sys.argv[1]).items()}}))
"""


def test_the_agent_view_is_default_deny_not_a_list_of_hidden_folders(world, make_packet):
    """Issue 25.4: a reviewer read a sibling run directory's packets and labels, because only
    the current corpus, repository and output were hidden. Now it sees the system folders,
    its tree, its scratch HOME and what its table exposes — nothing else of the host,
    wherever the caller keeps corpora and run directories (here: this checkout, outside
    /tmp and $HOME when the suite runs from one)."""
    checkout = Path(__file__).resolve().parents[2]
    (world["bin"] / "look.py").write_text(LOOK)
    targets = {"checkout_readme": str(checkout / "README.md"), "shadow": "/etc/shadow",
               "tree": str(world["tree"] / "app.py")}  # fmt: skip
    command = f"{shlex.quote(sys.executable)} {world['bin'] / 'look.py'} {shlex.quote(json.dumps(targets))}"
    config = CommandConfig(kind="command", command=command, expose=[str(world["bin"])])
    seen = json.loads(review(config, world["tree"], make_packet).text)
    reads = seen["reads"]
    assert reads["tree"] == "x = 1\n"  # its own tree
    assert reads["checkout_readme"].startswith("refused") or reads["checkout_readme"] == "empty", reads
    assert reads["shadow"].startswith("refused") or reads["shadow"] == "empty", reads
    kept = {Path(p).parts[1] for p in (world["tree"], world["bin"], sys.prefix, sys.base_prefix)}
    for name, content in seen["top"].items():
        if name in SYSTEM_VIEW or name in kept:
            continue
        assert content in ([], "empty") or str(content).startswith("refused"), (name, content)
