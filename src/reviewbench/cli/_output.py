"""Output helpers shared by the commands: JSON to stdout, rich tables, progress.

Both consoles print without markup: paths, titles, case ids and model text are untrusted
(a file named ``lib[/x].py`` must print as itself, not crash). A line that wants bold says
``markup=True`` and passes every interpolated value through :func:`escape`.

Both also escape control, format and bidirectional characters in every string they render,
lines and table cells alike (``reviewbench._text.printable``): a file named with U+202E or
ESC cannot reorder or drive the terminal. Newlines survive there (messages have several
lines); a name that must stay on one line is passed through :func:`printable` itself.
:func:`print_json` writes those characters as JSON escapes: the same data.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.markup import escape as _escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from .._text import UNSAFE_CATEGORIES, printable

__all__ = ["WIDTH", "StatusLine", "console", "count_table", "err_console", "escape", "print_json", "printable",
           "progress", "say"]

#: Seconds between status lines when stderr is not a terminal (CI logs, nohup).
STATUS_EVERY_S = 30.0

# Piped output is not wrapped: rows and lines (long paths, commands) must stay greppable.
_PIPED = not sys.stdout.isatty()


class _SafeConsole(Console):
    """A console whose strings (printed lines, table cells) have their control, format and
    bidirectional characters escaped before rich reads them."""

    def render_str(self, text: str, **kwargs: object) -> Text:
        return super().render_str(printable(text, newlines=True), **kwargs)  # type: ignore[arg-type]


console = _SafeConsole(highlight=False, markup=False, width=200 if _PIPED else None, soft_wrap=_PIPED)
err_console = _SafeConsole(stderr=True, highlight=False, markup=False)


#: Columns a summary fits (``score``'s default view, the demo): prose is wrapped to it.
WIDTH = 100


def say(text: str, indent: str = "  ") -> None:
    """One statement on stdout, wrapped to :data:`WIDTH` with a hanging ``indent``; words,
    paths and commands are never broken, so a long path may still run past it."""
    console.print(textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=False,
                                break_on_hyphens=False), markup=False, soft_wrap=True)  # fmt: skip


def escape(value: object) -> str:
    """``value`` as text safe to put inside a markup string."""
    return _escape(str(value))


def print_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout (characters a terminal would
    act on, bidi overrides included, as ``\\uXXXX`` escapes; other text as it is)."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if not text.isprintable():  # newlines of the indentation, or a character to escape
        text = "".join(c if c in "\n" or unicodedata.category(c) not in UNSAFE_CATEGORIES
                       else json.dumps(c)[1:-1] for c in text)  # fmt: skip
    sys.stdout.write(text + "\n")


def count_table(label: str, unit: str, counts: dict[str, int], total: int | None = None) -> Table:
    """A table of counts with their share written as numerator/denominator."""
    total = sum(counts.values()) if total is None else total
    table = Table(show_edge=False)
    table.add_column(label)
    table.add_column(unit, justify="right")
    table.add_column("share", justify="right")
    for key, n in counts.items():
        table.add_row(key, str(n), f"{n}/{total}")
    return table


class StatusLine:
    """Progress for logs: one plain line (done/total, rate, ETA) per tick, never a redraw."""

    def __init__(self, label: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.first_done: int | None = None
        self.done = 0
        self.total: int | None = None
        self.description = ""
        self.ticks = 0
        self.lock = threading.Lock()

    def update(self, done: int, total: int | None, description: str = "") -> None:
        with self.lock:
            if self.first_done is None:
                self.first_done = max(0, done - 1)  # what was already done before this invocation
            self.done, self.total, self.description = done, total, description

    def line(self) -> str:
        with self.lock:
            done, total, description = self.done, self.total, self.description
            fresh = done - (self.first_done or 0)
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = fresh / elapsed
        parts = [f"{self.label}: {done}/{total}" if total is not None else f"{self.label}: {done}"]
        parts.append(f"{rate * 60:.1f}/min")
        if total is not None and rate > 0:
            parts.append(f"ETA {_duration((total - done) / rate)}")
        elif total is not None and done < total:
            parts.append("ETA unknown")
        if description:
            parts.append(description)
        return ", ".join(parts)

    def tick(self) -> None:
        self.ticks += 1
        stream = self.stream or sys.stderr
        stream.write(self.line() + "\n")
        stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Update(Protocol):
    """What :func:`progress` yields: ``update(done, total, description)``."""

    def __call__(self, done: int, total: int | None, description: str = "") -> None: ...


@contextmanager
def progress(label: str) -> Iterator[Update]:
    """Progress of a long step: ``update(done, total, description)``.

    On a terminal, a rich bar (descriptions are escaped: they carry case ids and model
    text). Elsewhere, a status line on stderr at least every ``REVIEWBENCH_STATUS_EVERY``
    seconds (default 30), so CI logs show the step is alive, and a closing one when any was
    printed (a short step prints nothing: stderr stays for errors).
    """
    if err_console.is_terminal:
        with Progress(
            TextColumn(escape(label)), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
            TimeRemainingColumn(), console=err_console, transient=True,
        ) as bar:  # fmt: skip
            task = bar.add_task("", total=None)

            def update(done: int, total: int | None, description: str = "") -> None:
                bar.update(task, completed=done, total=total, description=escape(description))

            yield update
        return
    try:
        every = float(os.environ.get("REVIEWBENCH_STATUS_EVERY", STATUS_EVERY_S))
    except ValueError:
        every = STATUS_EVERY_S
    status = StatusLine(label)
    stop = threading.Event()

    def ticker() -> None:
        while not stop.wait(max(every, 0.01)):
            status.tick()

    thread = threading.Thread(target=ticker, name="reviewbench-status", daemon=True)
    thread.start()
    try:
        yield status.update
    finally:
        stop.set()
        thread.join()
    if status.ticks:
        status.tick()
