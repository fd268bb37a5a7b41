"""A Ctrl-C while the command line is still importing is one line, not a traceback.

Imports take a few hundred milliseconds; a KeyboardInterrupt raised there reaches the
interpreter's top level before :func:`reviewbench.cli.main` can catch anything. Installed
only when the process is the ``reviewbench`` command (or ``python -m reviewbench``), so a
program that merely imports the library keeps its own exception hook.
"""

from __future__ import annotations

import os
import sys

__all__ = ["install"]


def _is_cli() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    return os.path.basename(argv0).removesuffix(".exe") == "reviewbench" or argv0 == "-m"


def _hook(kind: type[BaseException], value: BaseException, tb: object) -> None:
    if issubclass(kind, KeyboardInterrupt):
        try:
            sys.stderr.write("reviewbench: error: interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(130)
    sys.__excepthook__(kind, value, tb)  # type: ignore[arg-type]


def install() -> None:
    if _is_cli() and sys.excepthook is sys.__excepthook__:
        sys.excepthook = _hook
