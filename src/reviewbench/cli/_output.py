"""Output helpers shared by the commands: JSON to stdout, rich tables, progress.

Both consoles print without markup: paths, titles, case ids and model text are untrusted
(a file named ``lib[/x].py`` must print as itself, not crash). A line that wants bold says
``markup=True`` and passes every interpolated value through :func:`escape`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape as _escape
from rich.table import Table

__all__ = ["console", "count_table", "err_console", "escape", "print_json"]

# Piped output is not wrapped at 80 columns: rows must stay greppable.
console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False, markup=False)


def escape(value: object) -> str:
    """``value`` as text safe to put inside a markup string."""
    return _escape(str(value))


def print_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


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
