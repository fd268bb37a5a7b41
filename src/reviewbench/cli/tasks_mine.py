"""``reviewbench tasks mine``: fix commits with tests -> tasks.jsonl (SWE-bench fields)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..config import MineConfig, resolve_test_settings
from ._output import console, print_json, printable, progress
from ._testrun import test_run_options
from .mine import history_options, history_values

__all__ = ["tasks_mine_command"]

_NODE_AUTO = "; a package.json project: its node_modules as its lockfile pins them, installed once"


@click.command("mine")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Task directory to create (must not exist or be empty).")
@history_options
@test_run_options(omit={"--network", "--max-file-mb"}, help={
    "--test-cmd": "Command running the tests, with per-test reports: pytest, or a Node runner (node:test, jest, "
                  "vitest, mocha, tape, ava) (default: detected; a package.json project's test script).",
    "--setup": "Build an isolated test environment (cached in ~/.cache/reviewbench/envs): a fresh venv, then this "
               "command inside it; 'auto': the project editable with its test extras or requirements, and pytest"
               f"{_NODE_AUTO}. See validate --help.",
    "--reruns": "Runs before and after the gold patch; any test that changes outcome makes the task flaky "
                "[default: 2].",
})
@click.option("--force", is_flag=True, help="Replace OUT if it already holds a task set.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def tasks_mine_command(repo: Path, out: Path, grep, since, until, max_lines, limit, include, exclude,
                       test_patterns, seed, select, test_cmd, setup, setup_cmd, python, jobs, timeout, reruns,
                       memory_mb, executor, ray_address, force: bool, as_json: bool) -> None:  # fmt: skip
    """Mine REPO's fix commits that changed both source and tests into fix tasks.

    Each task starts at the fix's parent: the gold patch is the fix's non-test part, the
    hidden grading tests its test part, the problem statement its commit message (commit
    ids and issue links removed). The tests run sandboxed before and after the gold patch:
    FAIL_TO_PASS and PASS_TO_PASS come from their JUnit reports. Candidates without a
    FAIL_TO_PASS test, or with a flaky test, are dropped and counted in OUT/tasks.json.
    """
    from ..tasks import mine_tasks  # pulls in the validation stack

    values = history_values(grep, since, until, max_lines, limit, include, exclude, test_patterns, seed, select)
    config = MineConfig.build(repo=repo, **values)
    settings = resolve_test_settings(repo, {
        "test_cmd": test_cmd, "setup": setup, "setup_cmd": setup_cmd, "jobs": jobs, "timeout": timeout, "reruns": reruns,
        "memory_mb": memory_mb, "executor": executor, "ray_address": ray_address, "python": python,
    })  # fmt: skip
    with progress("testing tasks") as update:

        def on_task(instance_id: str, check, done: int, total: int) -> None:  # noqa: ANN001
            outcome = check.dropped or f"{len(check.fail_to_pass)} FAIL_TO_PASS"
            update(done, total, f"{instance_id}: {outcome}")

        summary = mine_tasks(config, out, settings, force=force, on_task=on_task,
                             warn=lambda m: click.echo(f"reviewbench: warning: {printable(m)}", err=True))  # fmt: skip
    counts = summary.meta.counts
    if as_json:
        print_json({"out": str(out), "tasks": counts.tasks, "scanned_commits": summary.scanned_commits,
                    "matched_commits": counts.matched_commits, "candidates": counts.candidates,
                    "dropped": counts.dropped, "test_cmd": summary.meta.test_cmd,
                    "tasks_sha256": summary.meta.tasks_sha256})  # fmt: skip
        return
    console.print(f"Mined [bold]{counts.tasks}[/] tasks into {escape(str(out))} from {counts.matched_commits} matching "
                  f"commits ({summary.scanned_commits} scanned); tests: {escape(summary.meta.test_cmd)}",
                  highlight=False, markup=True)  # fmt: skip
    table = Table(title="Matching commits by outcome", show_edge=False)
    table.add_column("outcome")
    table.add_column("commits", justify="right")
    table.add_column("share", justify="right")
    for label, n in [("task", counts.tasks)] + [(f"dropped: {r}", n) for r, n in counts.dropped.items() if n]:
        table.add_row(label, str(n), f"{n}/{counts.matched_commits}")
    console.print(table)
