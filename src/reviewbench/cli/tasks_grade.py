"""``reviewbench tasks grade``: apply each run's patch, run the hidden tests, score."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ._output import console, print_json, progress
from ._testrun import test_run_options

__all__ = ["tasks_grade_command"]


def _rate(rate) -> str:
    if rate is None:
        return "–"
    if rate.value is None:
        return f"n/a (0/{rate.den:g})"
    num = f"{rate.num:g}" if rate.num == int(rate.num) else f"{rate.num:.2f}"
    interval = "" if rate.lo is None else f" [{rate.lo:.2f}, {rate.hi:.2f}]" + (" exact" if rate.exact else "")
    return f"{rate.value:.3f} {num}/{rate.den:g}{interval}"


def _scoreboard(board) -> Table:
    table = Table(title="Fix tasks: per condition (value num/den [95% interval])", show_edge=False)
    table.add_column("metric")
    for c in board.conditions:
        table.add_column(c.name, justify="right")  # the console prints no markup
    rows = [("resolve rate", [c.resolve_rate for c in board.conditions]),
            ("applies clean", [c.applies_clean_rate for c in board.conditions]),
            ("partial", [c.partial_rate for c in board.conditions]),
            ("overreach", [c.overreach_rate for c in board.conditions])]  # fmt: skip
    most = max((max(c.pass_at, default=0) for c in board.conditions), default=0)
    rows += [
        (f"pass@{k}", [c.pass_at.get(k) for c in board.conditions]) for k in range(1, most + 1)
    ]
    rows += [
        (f"pass^{k}", [c.pass_hat.get(k) for c in board.conditions]) for k in range(2, most + 1)
    ]
    for label, rates in rows:
        table.add_row(label, *(_rate(r) for r in rates))
    table.add_row(
        "runs",
        *(", ".join(f"{k} {v}/{c.runs}" for k, v in c.by_status.items()) for c in board.conditions),
    )
    return table


def _paired_lines(board) -> list[str]:
    lines = []
    names = [c.name for c in board.conditions]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = board.conditions[i].paired[b]
            d = p.difference
            diff = "n/a" if d.value is None else f"{d.value:+.3f} ({d.num:g}/{d.den:g})"
            interval = "" if d.lo is None else f" [{d.lo:+.2f}, {d.hi:+.2f}]" + (" exact" if d.exact else "")
            pval = "n/a (no discordant pairs)" if p.mcnemar_p is None else f"{p.mcnemar_p:.4g}"
            lines.append(f"{a} − {b}: resolve {diff}{interval} on {p.pairs} shared runs; only {a} {p.only_a}, "
                         f"only {b} {p.only_b}, both {p.both}, neither {p.neither}; exact McNemar p = {pval}")  # fmt: skip
    return lines


@click.command("grade")
@click.argument("rundir", type=click.Path(path_type=Path))
@test_run_options(omit={"--reruns", "--network", "--max-file-mb"}, help={
    "--test-cmd": "Command running the tests, pytest or a Node runner [default: the one the tasks were mined with].",
    "--setup": "Build an isolated test environment (cached in ~/.cache/reviewbench/envs): a fresh venv, then this "
               "command inside it; 'auto': the project editable with its test extras or requirements, and pytest; "
               "the tests then run with its interpreter (unless --test-cmd); a package.json project: its "
               "node_modules as its lockfile pins them, installed once.",
    "--jobs": "Parallel workers [default: cores].",
})
@click.option(
    "--force", is_flag=True, help="Grade every run again, not only those without a grade."
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(path_type=Path),
    help="CSV path [default: RUNDIR/grades.csv].",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    help="Report path [default: RUNDIR/report.html].",
)
@click.option("--p2p", type=click.Choice(["task", "suite"]), default="task", show_default=True,
              help="PASS_TO_PASS from the task's own test files, or from the whole suite at the base "
                   "(run once per base): with 'suite' a patch that breaks an unrelated test fails.")
@click.option("--bootstrap", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Task resamples for the 95% intervals.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--json", "as_json", is_flag=True, help='Print {"rows": [...], "conditions": {...}} as JSON.'
)
def tasks_grade_command(rundir: Path, jobs, executor, ray_address, test_cmd, setup, setup_cmd, python, timeout,
                        memory_mb,
                        force: bool, csv_path, html_path, p2p: str, bootstrap: int, seed: int,
                        as_json: bool) -> None:  # fmt: skip
    """Grade every run of RUNDIR (a 'tasks run' directory) with the task's hidden tests.

    In scratch clones, never your checkout: a patch that does not parse or names a path
    outside the tree is rejected unapplied; then strict 'git apply --check'
    (applies_clean), the task's test patch, and its FAIL_TO_PASS and PASS_TO_PASS tests
    (tests_pass: all pass; partial: some FAIL_TO_PASS pass), sandboxed, judged from exit
    codes and JUnit XML only. Overreach = files changed outside the gold patch's files
    (and the overreach flag: more than one). Fewer than 10 tasks is "insufficient evidence";
    tasks no condition ever resolves are listed.
    Writes RUNDIR/grades.jsonl, grades.csv and report.html; resumes an interrupted run.
    """
    from ..tasks.grade_metrics import score_grades
    from ..tasks.grade_output import grades_document, write_grades_csv
    from ..tasks.grade_run import grade_rundir
    from ..tasks.report import write_tasks_html

    overrides = {"jobs": jobs, "executor": executor, "ray_address": ray_address, "test_cmd": test_cmd,
                 "setup": setup, "setup_cmd": setup_cmd, "timeout": timeout, "memory_mb": memory_mb,
                 "python": python}  # fmt: skip
    with progress("grading") as update:

        def on_grade(grade, done: int, total: int) -> None:
            verdict = "resolved" if grade.tests_pass else grade.status.value
            update(done, total, f"{grade.run_id}: {verdict}")

        summary = grade_rundir(rundir, overrides, force=force, on_grade=on_grade, p2p_suite=p2p == "suite")
    board = score_grades(summary.grades, resamples=bootstrap, seed=seed)
    csv_out = write_grades_csv(summary.grades, csv_path or rundir / "grades.csv")
    html_out = write_tasks_html(summary.grades, board, summary.rundir, html_path or rundir / "report.html",
                                summary.tasks)  # fmt: skip
    if as_json:
        print_json(grades_document(summary.grades, board))
        return
    tasks = len({g.instance_id for g in summary.grades})
    console.print(f"Graded {len(summary.grades)} runs of {tasks} tasks ({summary.graded} now, {summary.reused} "
                  f"from an earlier grading)", markup=False)  # fmt: skip
    if board.conditions:
        console.print(_scoreboard(board))
    if board.evidence != "sufficient":
        console.print(f"insufficient evidence: {len(board.tasks)} tasks (fewer than 10); read these figures as "
                      "anecdotes", markup=False)  # fmt: skip
    if board.never_resolved:
        console.print(f"never resolved by any condition ({len(board.never_resolved)}): "
                      + ", ".join(board.never_resolved), markup=False)  # fmt: skip
    for line in _paired_lines(board):
        console.print(line, markup=False)
    console.print(
        f"grades: {summary.rundir / 'grades.jsonl'}\ncsv: {csv_out}\nreport: {html_out}",
        markup=False,
    )
