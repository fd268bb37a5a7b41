"""``reviewbench tasks run`` and ``tasks init``: solvers on fix tasks at the CLI."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..errors import OutputExists
from ._output import console, count_table, err_console, print_json

__all__ = ["tasks_init_command", "tasks_run_command"]


@click.command("run")
@click.argument("paths", nargs=-1, required=True, metavar="[TASKS] EXPERIMENT", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Run directory (created; an existing one of the same experiment is resumed).")
@click.option("--retry-failed", is_flag=True, help="Run again the runs that failed or timed out.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def tasks_run_command(paths: tuple[Path, ...], out: Path, retry_failed: bool, as_json: bool) -> None:
    """Run every solver condition of EXPERIMENT (a fix-task TOML file) on its tasks.

    The task directory is the one EXPERIMENT names (``tasks = "DIR"``), or TASKS when given.

    Each run (task x condition x repetition) ends in exactly one state, recorded with its
    patch and provenance in OUT/runs.sqlite: completed_findings (a patch),
    completed_no_findings (no change), invalid (no diff in the answer), failed, timed_out,
    cancelled. Running again resumes; an answered run is never requested twice.
    """
    from ..review.task_experiment import load_tasks_experiment
    from ..tasks.run import run_tasks  # pulls in the solver adapters

    if len(paths) > 2:
        raise click.UsageError("expected [TASKS] EXPERIMENT: at most two paths")
    *tasks_dir, experiment = paths
    loaded = load_tasks_experiment(experiment)
    if tasks_dir:  # recorded in the run directory like any other experiment field
        config = loaded.config.model_copy(update={"tasks": str(tasks_dir[0].resolve())})
        loaded = dataclasses.replace(loaded, config=config)
    with Progress(
        TextColumn("solving"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeRemainingColumn(), console=err_console, transient=True, disable=not err_console.is_terminal,
    ) as progress:  # fmt: skip
        task = progress.add_task("", total=None)

        def on_update(counts: Counter, done: int, total: int) -> None:
            states = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            progress.update(task, completed=done, total=total, description=states)

        summary = run_tasks(loaded, out, retry_failed=retry_failed, on_update=on_update)
    if as_json:
        print_json({"out": str(out), "planned": summary.planned, "already_done": summary.already_done,
                    "requests": summary.requests, "by_state": summary.by_state})  # fmt: skip
        return
    console.print(f"{summary.planned} runs planned, {summary.already_done} already done, "
                  f"{summary.requests} requests sent; results in {out}", markup=False)  # fmt: skip
    console.print(count_table("state", "runs", summary.by_state, sum(summary.by_state.values())))


@click.command("init")
@click.argument("path", type=click.Path(path_type=Path), default=Path("tasks-experiment.toml"))
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def tasks_init_command(path: Path, force: bool) -> None:
    """Write a commented fix-task experiment template to PATH (default tasks-experiment.toml)."""
    from ..review.task_experiment import TASKS_TEMPLATE

    if path.exists() and not force:
        raise OutputExists(f"{path} exists (use --force to overwrite it)")
    path.write_text(TASKS_TEMPLATE, encoding="utf-8")
    console.print(f"wrote {path}", markup=False)
