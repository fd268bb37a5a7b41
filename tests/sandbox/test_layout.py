"""Both mechanisms enforce the same layout: hidden paths, kept paths inside them, hidden
paths inside kept ones, a read-only host, no network when asked."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reviewbench.sandbox._layout import _UNSHARE, Layout, _Mechanism, _works

from ..conftest import host_service

MECHANISMS = [_Mechanism("unshare", _UNSHARE[0]), _Mechanism("bwrap", ("bwrap",))]


@pytest.fixture(params=MECHANISMS, ids=lambda m: m.name)
def mech(request) -> _Mechanism:
    mech = request.param
    if shutil.which(mech.base[0]) is None or not _works(mech, False):
        pytest.skip(f"{mech.name} cannot isolate on this machine")
    return mech


def test_hide_keep_and_read_only(mech, tmp_path):
    outer = tmp_path / "outer"
    (outer / "kept-ro").mkdir(parents=True)
    (outer / "kept-ro" / "file").write_text("visible")
    (outer / "kept-ro" / "secret").mkdir()
    (outer / "kept-ro" / "secret" / "gold").write_text("GOLD")
    (outer / "kept-rw").mkdir()
    (outer / "hidden-file").write_text("HIDDEN")
    (outer / "sibling").write_text("SIBLING")
    layout = Layout(
        cwd=outer / "kept-rw",
        keep=((outer / "kept-ro", False), (outer / "kept-rw", True)),
        hide=(outer, outer / "kept-ro" / "secret"),
        network=False,
    )
    script = (
        "cat kept-ro-file 2>/dev/null; cat ../kept-ro/file; echo; "
        "cat ../kept-ro/secret/gold 2>/dev/null || echo gold-hidden; "
        "cat ../sibling 2>/dev/null || echo sibling-hidden; "
        "echo new > ../kept-ro/new 2>/dev/null || echo ro-refused; "
        "echo written > out && echo rw-ok; "
        "touch /usr/rb-planted 2>/dev/null || echo host-ro; "
        "cat /proc/net/dev | grep -c : "
    )
    done = subprocess.run([*mech.argv(layout), "sh", "-c", script], capture_output=True, text=True, timeout=30)
    lines = done.stdout.split()
    assert lines[:6] == ["visible", "gold-hidden", "sibling-hidden", "ro-refused", "rw-ok", "host-ro"], done
    assert lines[6] == "1"  # only the loopback interface: no network
    assert (outer / "kept-rw" / "out").read_text() == "written\n"
    assert not (outer / "kept-ro" / "new").exists() and not Path("/usr/rb-planted").exists()


def test_a_kept_file_inside_a_hidden_folder_is_shown_alone_read_only(mech, tmp_path):
    """The resolver's configuration lives in ``/run`` on some hosts (``/etc/resolv.conf ->
    /run/systemd/resolve/stub-resolv.conf``), which agents do not see: the file alone is
    kept, read-only, its neighbours stay hidden."""
    run = tmp_path / "run"
    (run / "resolve").mkdir(parents=True)
    (run / "resolve" / "stub.conf").write_text("nameserver 127.0.0.53\n")
    (run / "resolve" / "neighbour").write_text("NEIGHBOUR")
    kept = run / "resolve" / "stub.conf"
    layout = Layout(cwd=Path("/"), keep=((kept, False),), hide=(run,), network=False)
    script = f"cat {kept}; cat {run}/resolve/neighbour 2>/dev/null || echo hidden; echo x > {kept} 2>/dev/null || echo ro"
    done = subprocess.run([*mech.argv(layout), "sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.stdout.split("\n")[:3] == ["nameserver 127.0.0.53", "hidden", "ro"], done


_CONNECT = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "try:\n"
    "    s.connect(sys.argv[1]); s.sendall(b'from the sandbox'); print('connected')\n"
    "except OSError as e:\n"
    "    print('refused', type(e).__name__)\n"
)


def test_a_host_unix_socket_is_out_of_reach_and_a_runs_own_is_not(mech, tmp_path):
    """A read-only view still lets a process connect to every listening unix socket it can
    name: a host tmux server's socket ran a command outside the sandbox (`tmux -S … new-window
    'touch /work/x'`), as would docker's, an ssh or gpg agent's, D-Bus's. Every pathname
    socket the host has bound (``/proc/net/unix``) is covered, except those under a kept
    writable path; one the run binds itself works as before."""
    import sys

    host = tmp_path / "host-service"
    host.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with host_service(host / "agent.sock") as reached:
        layout = Layout(cwd=scratch, keep=((scratch, True),), network=False)
        done = subprocess.run([*mech.argv(layout), sys.executable, "-c", _CONNECT, str(host / "agent.sock")],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert done.stdout.split()[0] == "refused", done
        own = ("import socket, sys, threading\n"
               "srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(1)\n"
               "t = threading.Thread(target=lambda: print(srv.accept()[0].recv(9).decode())); t.start()\n"
               "c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); c.sendall(b'its own'); t.join()\n")  # fmt: skip
        mine = subprocess.run([*mech.argv(layout), sys.executable, "-c", own], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
        assert mine.stdout.strip() == "its own", mine
    assert reached == []
