"""``reviewbench tasks``: fix tasks — mine them, run solvers, grade the patches."""

from __future__ import annotations

import click

from ._group import HelpGroup
from .tasks_grade import tasks_grade_command
from .tasks_mine import tasks_mine_command
from .tasks_run import tasks_init_command, tasks_run_command

__all__ = ["tasks_group"]


@click.group("tasks", cls=HelpGroup, order=("mine", "init", "run", "grade"))
def tasks_group() -> None:
    """Grade coding models on the repository's own history.

    \b
    reviewbench tasks mine REPO --out TASKS          # fixes with tests -> tasks.jsonl
    reviewbench tasks run [TASKS] EXPERIMENT.toml --out RUNDIR   # solvers write patches
    reviewbench tasks grade RUNDIR                   # apply, test, score
    """


tasks_group.add_command(tasks_mine_command)
tasks_group.add_command(tasks_run_command)
tasks_group.add_command(tasks_init_command)
tasks_group.add_command(tasks_grade_command)
