"""``reviewbench tasks run`` and ``tasks init``: solvers on fix tasks at the CLI."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import OutputExists
from ..store.lock import run_lock
from ._output import console
from .run import show_runs

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
    patch and provenance in OUT/runs.sqlite: patched (a non-empty patch), no_change,
    no_diff (no diff in the answer), failed, timed_out, cancelled. Running again resumes;
    an answered run is never requested twice.
    """
    from ..review.runner import check_conditions
    from ..tasks.experiment import load_tasks_experiment
    from ..tasks.records import solution_state
    from ..tasks.run import run_tasks  # pulls in the solver adapters

    if len(paths) > 2:
        raise click.UsageError("expected [TASKS] EXPERIMENT: at most two paths")
    *tasks_dir, experiment = paths
    loaded = load_tasks_experiment(experiment, tasks_dir[0] if tasks_dir else None)
    check_conditions(loaded.path, [(c.name, c.solver, None) for c in loaded.config.condition])
    with run_lock(out):  # one writer per run directory
        show_runs("solving", lambda on_update: run_tasks(loaded, out, retry_failed=retry_failed,
                                                         on_update=on_update), out, as_json,
                  state_name=lambda state: solution_state(state).value)  # fmt: skip


@click.command("init")
@click.argument("path", type=click.Path(path_type=Path), default=Path("tasks-experiment.toml"))
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def tasks_init_command(path: Path, force: bool) -> None:
    """Write a commented fix-task experiment template to PATH (default tasks-experiment.toml)."""
    from ..tasks.experiment import TASKS_TEMPLATE

    if path.exists() and not force:
        raise OutputExists(f"{path} exists (use --force to overwrite it)")
    path.write_text(TASKS_TEMPLATE, encoding="utf-8")
    console.print(f"wrote {path}", markup=False)
