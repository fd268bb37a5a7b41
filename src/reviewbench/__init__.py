"""reviewbench: measure an AI code reviewer on your own repository's history.

The public API: one entry point per stage, and the records they exchange. Everything
else (underscore modules, and names not listed here or in a stage package's ``__all__``)
may change without notice::

    mine_corpus ─▶ validate_corpus ─▶ register ─▶ run_experiment ─▶ score_run ─▶ build_report
    mine_tasks ─▶ (tasks run) ─▶ grade_solutions

Stage entry points are imported on first use, so ``import reviewbench`` stays cheap
(the command line starts in a fraction of a second).
"""

import os as _os
import sys as _sys

#: pydantic-core errors that only name a KeyboardInterrupt raised inside them (building a
#: validator; serialising a record when Ctrl-C lands mid-dump).
_NAMING = ("SchemaError", "PydanticSerializationError")


def _names_interrupt(kind: type, value: BaseException | None) -> bool:
    """``value`` is a Ctrl-C: a ``KeyboardInterrupt``, one in its chain, or a pydantic-core
    error that only names one."""
    seen: set[int] = set()
    current: BaseException | None = value
    named = False
    while current is not None and id(current) not in seen and not isinstance(current, KeyboardInterrupt):
        seen.add(id(current))
        named = named or (type(current).__name__ in _NAMING and "KeyboardInterrupt" in str(current))
        current = current.__cause__ or current.__context__
    return issubclass(kind, KeyboardInterrupt) or isinstance(current, KeyboardInterrupt) or named


def _quiet_interrupt(kind: type, value: BaseException, tb: object) -> None:
    """Ctrl-C while the command line is still importing: one line and exit 130, the same as
    :func:`reviewbench.cli.main` gives once it runs (imports take a few hundred ms). A
    compiled module interrupted while it initialises raises ``ImportError`` over the
    ``KeyboardInterrupt``, and pydantic-core building a record's validator turns it into a
    ``SchemaError`` (a ``PydanticSerializationError`` when serialising) that only names it:
    that is the interruption too."""
    if _names_interrupt(kind, value):
        try:
            _sys.stderr.write("reviewbench: error: interrupted\n")
            _sys.stderr.flush()
        finally:
            _os._exit(130)
    _sys.__excepthook__(kind, value, tb)  # type: ignore[arg-type]


def _redeliver_interrupt(unraisable: "_sys.UnraisableHookArgs") -> None:
    """A Ctrl-C that landed where an exception cannot propagate (pydantic-core compiling a
    field's pattern, a finaliser) is printed as "Exception ignored" and lost: the command
    went on. Deliver it again to the main thread once this hook has returned (raised in the
    hook, it would be swallowed too), where it is the interruption it was."""
    if unraisable.exc_value is not None and _names_interrupt(unraisable.exc_type, unraisable.exc_value):
        import _thread
        import threading

        threading.Timer(0.01, _thread.interrupt_main).start()
        return
    _sys.__unraisablehook__(unraisable)


# First thing, with modules the interpreter has already loaded: only for the command
# (``reviewbench``, or ``python -m reviewbench`` while it is being located), never for a
# program that merely imports the library.
if _sys.excepthook is _sys.__excepthook__ and (
    _os.path.basename(_sys.argv[0] if _sys.argv else "").removesuffix(".exe") == "reviewbench"
    or (_sys.argv[:1] == ["-m"])
):
    _sys.excepthook = _quiet_interrupt
    _sys.unraisablehook = _redeliver_interrupt


from ._lazy import lazy_exports as _lazy_exports  # noqa: E402
from ._version import __version__  # noqa: E402
from .config import MineConfig  # noqa: E402
from .errors import ReviewbenchError  # noqa: E402
from .records import (  # noqa: E402
    Case,
    CorpusMeta,
    Defect,
    Finding,
    GoldRecord,
    Location,
    RunRow,
    RunState,
    Stratum,
)

__all__ = [
    "Case",
    "Corpus",
    "CorpusMeta",
    "Defect",
    "Finding",
    "GoldRecord",
    "Location",
    "MineConfig",
    "MineSummary",
    "ReviewbenchError",
    "RunRow",
    "RunState",
    "Stratum",
    "__version__",
    "build_report",
    "grade_solutions",
    "load_experiment",
    "mine_corpus",
    "mine_tasks",
    "read_corpus",
    "register",
    "run_experiment",
    "score_run",
    "validate_corpus",
]

_LAZY = {
    "Corpus": "reviewbench.store",
    "read_corpus": "reviewbench.store",
    "MineSummary": "reviewbench.mine",
    "mine_corpus": "reviewbench.mine",
    "validate_corpus": "reviewbench.validate",
    "load_experiment": "reviewbench.review",
    "register": "reviewbench.score.registration",
    "run_experiment": "reviewbench.review.runner",
    "score_run": "reviewbench.score",
    "build_report": "reviewbench.report",
    "mine_tasks": "reviewbench.tasks",
    "grade_solutions": "reviewbench.tasks.grade_run",
}


__getattr__, __dir__ = _lazy_exports(globals(), _LAZY)
