"""One writer per run directory: an exclusive lock on ``RUNDIR/.lock``.

Two ``run`` processes on one directory would each plan the same pending runs and send
every request twice. The lock is an ``flock`` on a file that stays in place; the kernel
drops it when its holder exits, however it exits (``kill -9`` included), so a stale lock
never blocks a resume.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunDirectoryBusy

__all__ = ["LOCK_FILE", "run_lock"]

LOCK_FILE = ".lock"


@contextmanager
def run_lock(rundir: Path) -> Iterator[None]:
    """Hold the run directory's lock (creating the directory) for the ``with`` block.

    A directory made here that holds nothing but the lock afterwards (the run was refused
    before it began: a configuration mistake) is removed again.

    Raises:
        RunDirectoryBusy: another process holds it.
    """
    created = not rundir.exists()
    rundir.mkdir(parents=True, exist_ok=True)
    path = rundir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            raise RunDirectoryBusy(f"{rundir} is in use by {holder} (another 'run' on the same "
                                   "directory); wait for it to finish or use another --out") from None  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        if created and [p.name for p in rundir.iterdir()] == [LOCK_FILE]:
            path.unlink()  # still locked: no other process can have started in between
            rundir.rmdir()
        os.close(fd)
