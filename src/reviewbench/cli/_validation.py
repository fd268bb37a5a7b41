"""Printing what validation found out: the environment, and why cases were not observed."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ..records import TestEnvironment
from ..validate.probe import plain
from ..validate.reasons import has_remedy, remedy
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


def print_reasons(reasons: dict[str, list[tuple[str, int]]] | dict[str, list[list]], setup: str | None = None,
                  pytest: str | None = None) -> None:  # fmt: skip
    """Per status other than observed, its commonest first error lines with counts (with
    a hint that takes ``setup``, the ``--setup`` the tests ran under, and ``pytest``, its
    pytest version, into account)."""
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
    # The commonest kind of failure, when reviewbench knows its cure, comes with what to type:
    # lines with the same remedy are the same problem (six and hypothesis missing, say).
    kinds: dict[str, list[tuple[int, str]]] = {}
    for status in ("error", "base_failing", "not_exercised"):
        for line, count in reasons.get(status, []):
            if has_remedy(line):
                kinds.setdefault(remedy(line, setup, pytest), []).append((count, line))
    if kinds:
        cure, found = max(kinds.items(), key=lambda item: sum(c for c, _ in item[1]))
        total = sum(c for c, _ in found)
        if total >= 3:
            line = max(found)[1]
            err_console.print(f"hint: {total} cases failed like \"{plain(line)}\": {cure}", markup=False)
