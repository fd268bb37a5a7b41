"""A repository's tests must not reach the host's services through unix sockets.

The sandbox shows the host read-only, and ``connect(2)`` needs no write: a test found a
host tmux server's socket and ran a command outside the sandbox with it (``tmux -S
/tmp/tmux-0/default new-window 'touch /work/x'`` made the file). docker's socket, an ssh or
gpg agent's and D-Bus's are the same door. Here a test of the mined project, run by
``reviewbench validate`` in both of its runs (patched and at the base, warm and cold),
tries a listening socket of the host's, and the service behind it records every
connection.
"""

from __future__ import annotations

import pytest

from reviewbench import MineConfig, mine_corpus

from ..conftest import host_service, run_cli


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_projects_tests_cannot_talk_to_a_host_socket(git_repo, tmp_path, monkeypatch, warm):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)
    service = tmp_path / "service"
    service.mkdir()
    path = service / "agent.sock"
    probe = (
        "import socket\n\nfrom pkg.m import double\n\n\n"
        "def test_double():\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n"
        f"        s.connect({str(path)!r})\n"
        "        s.sendall(b'HOST-REACHED')\n"
        "    except OSError:\n"
        "        pass\n"
        "    assert double(3) == 6\n"
    )
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": "def double(x):\n    return x * x\n",
                         "tests/test_m.py": "def test_nothing():\n    pass\n"})  # fmt: skip
    repo.commit("fix double", {"pkg/m.py": "def double(x):\n    return 2 * x\n", "tests/test_m.py": probe})
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    with host_service(path) as reached:
        proc = run_cli("validate", corpus, "--jobs", "1", "--reruns", "2")
    assert proc.returncode == 0, proc.stderr
    logs = "".join(p.read_text() for p in (corpus / "logs").glob("*.log"))
    assert "status: observed" in logs  # the tests ran, patched and at the base
    assert reached == []
