"""The command groups' help: commands in the order one uses them, summaries never cut off.

click lists a group's commands alphabetically and cuts each summary at 45 characters
("Inter-rater agreement: per pair, percent agreement,..."). A :class:`HelpGroup` lists them
in its ``order`` (the rest after, alphabetically) and shows each command's whole summary
(its ``short_help``, else its docstring's first sentence), wrapped in the column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

__all__ = ["HelpGroup"]


class HelpGroup(click.Group):
    """A click group whose help lists its commands in ``order`` with whole summaries."""

    def __init__(self, *args: Any, order: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order = tuple(order)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = super().list_commands(ctx)
        first = [n for n in self.order if n in names]
        return first + [n for n in names if n not in first]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, command.get_short_help_str(limit=10_000)))  # never cut: wrapped instead
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
