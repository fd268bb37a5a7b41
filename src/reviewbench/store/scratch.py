"""Scratch folders that name their owner, so the next run can sweep what a killed one left.

Every scratch folder is ``<prefix><pid>-<random>``. A ``kill -9`` skips every clean-up;
the next process that makes a folder of the same prefix removes those whose pid no longer
runs. Only folders owned by this user are touched, and a folder made read-only (an
exported tree) is made writable first.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["make_scratch", "remove_tree", "sweep_stale"]


def make_scratch(prefix: str, dir: Path | None = None, suffix: str = "") -> Path:
    """A new private folder ``<dir>/<prefix><pid>-XXXX<suffix>``, after sweeping stale ones."""
    sweep_stale(prefix, dir, suffix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", suffix=suffix, dir=dir))


def remove_tree(root: Path) -> None:
    """Remove ``root`` even where an exported tree was made read-only; never follow a link."""
    if not root.is_dir() or root.is_symlink():
        return
    for path in root.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            try:
                path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
            except OSError:
                pass
    try:
        root.chmod(0o700)
    except OSError:
        pass
    shutil.rmtree(root, ignore_errors=True)


def sweep_stale(prefix: str, dir: Path | None = None, suffix: str = "") -> list[Path]:
    """Remove ``<prefix><pid>-*<suffix>`` folders of processes that no longer run."""
    base = Path(dir or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = list(base.glob(f"{_glob_escape(prefix)}*{_glob_escape(suffix)}"))
    except OSError:
        return removed
    for path in candidates:
        pid_text = path.name[len(prefix) :].split("-", 1)[0]
        try:
            info = path.lstat()
        except OSError:
            continue
        if not pid_text.isdigit() or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if _alive(int(pid_text)):
            continue
        remove_tree(path)
        if not path.exists():
            removed.append(path)
    return removed


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return not isinstance(pid, int) or pid < 2**31
    return True
