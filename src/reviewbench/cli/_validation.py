"""Printing what validation found out: the environment, and why cases were not observed."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ..records import TestEnvironment
from ..validate.probe import plain
from ..validate.reasons import blames_environment, remedy
from ._output import console, err_console

__all__ = ["environment_json", "print_environment", "print_reasons"]


def environment_json(environment: TestEnvironment | None) -> dict | None:
    return environment.model_dump(mode="json") if environment else None


def print_environment(environment: TestEnvironment | None, built: bool | None = None) -> None:
    """One line: which interpreter, which Python, how it came to be."""
    if environment is None:
        console.print("Test environment: unknown (a test command reviewbench cannot take apart)")
        return
    how = (f"built by --setup {environment.setup!r}" + (" (now)" if built else " (cached)" if built is False else "")
           if environment.setup else "your active environment")  # fmt: skip
    console.print(
        f"Test environment: {escape(environment.interpreter)} (Python {escape(environment.python_version)}, "
        f"{environment.packages} packages, freeze {environment.freeze_sha256[:12]}), {escape(how)}"
    )


def print_reasons(reasons: dict[str, list[tuple[str, int]]] | dict[str, list[list]], setup: str | None = None) -> None:
    """Per status other than observed, its commonest first error lines with counts (with
    a hint that takes ``setup``, the ``--setup`` the tests ran under, into account)."""
    if not reasons:
        return
    table = Table(show_edge=False)
    table.add_column("status")
    table.add_column("cases", justify="right")
    table.add_column("first error line")
    for status, lines in reasons.items():
        for line, count in lines:
            table.add_row(status, str(count), escape(plain(line)))
    console.print(table)
    # The commonest failure, when it is about the environment, comes with what to type.
    failing = [(count, line) for status in ("error", "base_failing") for line, count in reasons.get(status, [])]
    if failing:
        count, line = max(failing)
        if count >= 3 and blames_environment(line):
            err_console.print(f"hint: {count} cases failed with \"{plain(line)}\": {remedy(line, setup)}", markup=False)
