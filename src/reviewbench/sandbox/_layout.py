"""What a sandboxed command may see, and the mechanism that enforces it on this machine.

A :class:`Layout` names paths to hide and paths to keep (read-write or read-only); the rest
of the host is shown read-only. Two mechanisms enforce it, tried in order:

- ``bwrap`` (bubblewrap), given the layout as arguments (the faster, when it works);
- ``unshare`` (util-linux) creating user, mount and PID namespaces (and a network one when
  the network is denied), then ``_init.py`` doing the mounts from inside; without user
  namespaces, the same without ``--user`` when the caller may mount (root).

When neither works, :func:`prefix` returns ``None`` and the caller refuses or falls back,
as its policy says (see ``docs/SANDBOX.md``). The probe runs once per process and policy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ._sockets import host_sockets

__all__ = ["SANDBOX_ENV", "Layout", "mechanism", "prefix"]

SANDBOX_ENV = "REVIEWBENCH_SANDBOX"

_INIT = Path(__file__).with_name("_init.py")
_UNSHARE = (
    ("unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child"),
    ("unshare", "--mount", "--pid", "--fork", "--kill-child"),
)


@dataclass(frozen=True)
class Layout:
    """The filesystem of one sandboxed command."""

    cwd: Path
    keep: tuple[tuple[Path, bool], ...] = ()
    """(path, writable): shown at its own path, even inside a hidden one."""
    hide: tuple[Path, ...] = ()
    """Covered by an empty read-only directory (a file: by an empty one)."""
    read_only: bool = True
    """Show the rest of the host read-only (else as it is)."""
    memory_bytes: int | None = None
    network: bool = True
    extra: dict[str, object] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps({
            "cwd": str(self.cwd),
            "keep": [[str(p), w] for p, w in self.keep],
            "hide": [str(p) for p in self.hide],
            "read_only": self.read_only,
            "memory_bytes": self.memory_bytes,
        })  # fmt: skip


def _init_argv(layout: Layout) -> list[str]:
    return [sys.executable, "-I", "-S", str(_INIT), layout.as_json()]


def _bwrap_argv(layout: Layout) -> list[str]:
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--new-session"]
    if not layout.network:
        argv.append("--unshare-net")
    argv += ["--ro-bind" if layout.read_only else "--bind", "/", "/"]
    argv += ["--dev-bind", "/dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
    covers: list[str] = []

    def hide(path: Path) -> None:
        if path.is_symlink() or not path.exists():
            return
        if path.is_dir():
            argv.extend(["--tmpfs", str(path)])
            covers.append(str(path))
        else:
            argv.extend(["--ro-bind", "/dev/null", str(path)])

    steps: list[tuple[Path, bool | None]] = [(p, None) for p in layout.hide] + list(layout.keep)
    steps.sort(key=lambda step: (len(str(step[0])), step[1] is not None))  # outer first, as _init
    for path, writable in steps:
        if writable is None:
            hide(path)
        else:
            argv.extend(["--bind" if writable else "--ro-bind", str(path), str(path)])
    for cover in covers:
        argv += ["--remount-ro", cover]
    return [*argv, "--chdir", str(layout.cwd), "--"]


@dataclass(frozen=True)
class _Mechanism:
    name: str
    base: tuple[str, ...]

    def argv(self, layout: Layout) -> list[str]:
        layout = _sockets_covered(layout)
        if self.name == "bwrap":
            return _bwrap_argv(layout)
        net = [] if layout.network else ["--net"]
        return [*self.base, *net, "--", *_init_argv(layout)]


def _sockets_covered(layout: Layout) -> Layout:
    """``layout`` hiding every socket file of the host (``_sockets.py``) but those inside
    what it keeps writable (the run's own) or already hides."""
    skip = [path for path, writable in layout.keep if writable] + list(layout.hide)
    sockets = host_sockets(skip)
    return replace(layout, hide=(*layout.hide, *sockets)) if sockets else layout


def _works(mech: _Mechanism, network: bool) -> bool:
    layout = Layout(cwd=Path("/"), network=network)
    try:
        done = subprocess.run([*mech.argv(layout), "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def mechanism(network: bool) -> _Mechanism | None:
    """The first mechanism that works here for ``network`` (probed once), or ``None``.

    ``REVIEWBENCH_SANDBOX=unshare`` or ``=bwrap`` tries only that one.
    """
    return _mechanism(network, os.environ.get(SANDBOX_ENV, ""))


@lru_cache(maxsize=8)
def _mechanism(network: bool, only: str) -> _Mechanism | None:
    # bubblewrap first: the same layout costs ~30 ms a command against ~100 ms for
    # unshare + a Python _init (benchmarks/sandbox_overhead.py).
    candidates = [_Mechanism("bwrap", ("bwrap",)), *(_Mechanism("unshare", u) for u in _UNSHARE)]
    for mech in candidates:
        if only and mech.name != only:
            continue
        if shutil.which(mech.base[0]) is None:
            continue
        if _works(mech, network):
            return mech
    return None


def prefix(layout: Layout) -> list[str] | None:
    """The argv prefix that runs a command under ``layout``, or ``None`` if nothing here can."""
    mech = mechanism(layout.network)
    return None if mech is None else mech.argv(layout)
