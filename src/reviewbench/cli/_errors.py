"""One line for an operating-system error that reached the CLI edge.

Paths are user input (an ``--out`` that is a directory, a parent that does not exist, a full
disk); a traceback or "internal error" would blame the tool for the user's file system.
"""

from __future__ import annotations

import errno

__all__ = ["os_error_line"]


def os_error_line(exc: OSError) -> str:
    """``exc`` as one line naming the path and the reason."""
    where = exc.filename if exc.filename is not None else None
    if exc.errno == errno.ENOSPC:
        return f"no space left on device at {where}" if where else "no space left on device"
    if exc.errno == errno.EDQUOT:
        return f"disk quota exceeded at {where}" if where else "disk quota exceeded"
    reason = exc.strerror or type(exc).__name__
    if where is None:
        return f"{reason} ({type(exc).__name__})"
    other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"cannot use {where}{other}: {reason}"
