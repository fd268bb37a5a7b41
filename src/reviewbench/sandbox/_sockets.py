"""Unix sockets of the host, covered in every sandbox.

A read-only view of the host does not stop ``connect(2)``: a process that can name a
listening unix socket can talk to the service behind it, and a network namespace does not
separate pathname sockets. A test run that reached a host tmux server's socket ran a
command outside the sandbox (``tmux -S /tmp/tmux-0/default new-window 'touch /work/x'``),
as docker's socket, an ssh or gpg agent's, or D-Bus's would let it. So every socket file
the host has (the pathname sockets this network namespace has bound, from
``/proc/net/unix``, and the socket files in the places services and agents put them) is
covered by an empty file in every sandbox, except those inside a path the sandbox keeps
writable: a run's own sockets, in its scratch area, work as before. Abstract sockets
(``@name``) belong to the network namespace: a sandbox without network has its own.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["host_sockets"]

#: Where services and agents bind their sockets (a socket bound in another network
#: namespace, e.g. a container's bind-mounted docker.sock, is not in /proc/net/unix), and
#: how deep below each to look.
_PLACES = (("/run", 4), ("/var/run", 4), ("/tmp", 2), ("/var/tmp", 2), ("/dev", 2))
_HOME_PLACES = ((".docker", 3), (".ssh", 2), (".gnupg", 2), (".colima", 3), (".lima", 3), (".rd", 3))


def host_sockets(skip: Iterable[Path] = ()) -> tuple[Path, ...]:
    """Every socket file of the host found now, outside the ``skip`` folders."""
    found = dict.fromkeys(_bound())
    home = os.path.expanduser("~")
    scanned: set[str] = set()
    for place, depth in (*_PLACES, *((os.path.join(home, p), d) for p, d in _HOME_PLACES)):
        real = os.path.realpath(place)
        if real in scanned:
            continue  # /var/run is /run on most systems
        scanned.add(real)
        for path in _scan(real, depth):
            found.setdefault(path)
    roots = [os.path.realpath(p) for p in skip]
    return tuple(Path(p) for p in found if _is_socket(p) and not any(_under(p, r) for r in roots))


def _bound() -> list[str]:
    """The pathname sockets bound in this network namespace."""
    try:
        text = Path("/proc/net/unix").read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    paths = []
    for line in text.splitlines()[1:]:
        parts = line.split(None, 7)
        if len(parts) == 8 and parts[7].startswith("/"):
            paths.append(parts[7])
    return paths


def _scan(root: str, depth: int) -> list[str]:
    """Socket files under ``root``, ``depth`` levels down, never through a symbolic link."""
    found: list[str] = []
    stack = [(root, depth)]
    while stack:
        folder, left = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if left > 1:
                                stack.append((entry.path, left - 1))
                        elif stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                            found.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return found


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def _under(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
