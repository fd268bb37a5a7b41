"""``reviewbench mine``: history → corpus."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..config import DEFAULT_TEST_PATTERNS, MineConfig
from ..mine import MineSummary, mine_corpus
from ._output import console, err_console, print_json

__all__ = ["mine_command"]


def _summary_json(summary: MineSummary) -> dict:
    counts = summary.meta.counts
    return {
        "out": str(summary.out),
        "cases": counts.cases,
        "by_stratum": counts.by_stratum,
        "scanned_commits": summary.scanned_commits,
        "matched_commits": counts.matched_commits,
        "dropped": counts.dropped,
        "gold_sha256": summary.meta.gold_sha256,
    }


def _print_summary(summary: MineSummary) -> None:
    counts = summary.meta.counts
    dropped = sum(counts.dropped.values())
    console.print(
        f"Mined [bold]{counts.cases}[/] cases from {counts.matched_commits} matching commits "
        f"({summary.scanned_commits} scanned) into {summary.out}"
    )
    table = Table(title="Matching commits by outcome", show_edge=False)
    table.add_column("outcome")
    table.add_column("commits", justify="right")
    table.add_column("share", justify="right")
    rows = [("case", counts.cases)] + [
        (f"dropped: {reason}", n) for reason, n in counts.dropped.items() if n
    ]
    for label, n in rows:
        table.add_row(label, str(n), f"{n}/{counts.matched_commits}")
    table.add_section()
    table.add_row("total", str(counts.cases + dropped), "")
    console.print(table)


@click.command("mine")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Corpus directory to create (must not exist or be empty).")
@click.option("--grep", "grep", multiple=True, metavar="REGEX",
              help="Fix-commit message pattern (Python regex, case-insensitive; repeatable). "
                   "Default: the words fix, fixes, fixed, bugfix, hotfix.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              help="Only commits after this date (YYYY-MM-DD).")
@click.option("--until", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              help="Only commits before this date (YYYY-MM-DD).")
@click.option("--max-lines", default=60, show_default=True, type=click.IntRange(min=1),
              help="Drop fixes changing more source lines than this.")
@click.option("--limit", type=click.IntRange(min=1), help="Keep only the newest N cases.")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only paths matching count as source (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Paths never counted as source (repeatable).")
@click.option("--test-pattern", "test_patterns", multiple=True, metavar="GLOB",
              help="What counts as a test file (repeatable; replaces the defaults for "
                   "Python, JS/TS, Go, Java and Rust).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the neutral case ids and titles.")
@click.option("--force", is_flag=True, help="Replace OUT if it already holds a corpus.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def mine_command(
    repo: Path, out: Path, grep: tuple[str, ...], since, until, max_lines: int,
    limit: int | None, include: tuple[str, ...], exclude: tuple[str, ...],
    test_patterns: tuple[str, ...], seed: int, force: bool, as_json: bool,
) -> None:  # fmt: skip
    """Mine REPO's fix commits into a corpus of fix-reversal cases.

    Each case is the reverse of a fix's non-test changes, applying to the fix commit: it
    quietly reintroduces the bug while the fix's tests stay in place. Labels (gold) record
    where the bug lies in the patched tree; commits that make no valid case are counted
    by reason in corpus.json.
    """
    values: dict = {"repo": repo, "max_lines": max_lines, "seed": seed, "limit": limit,
                    "include": include, "exclude": exclude}  # fmt: skip
    if grep:
        values["grep"] = grep
    if test_patterns:
        values["test_patterns"] = test_patterns
    else:
        values["test_patterns"] = DEFAULT_TEST_PATTERNS
    if since:
        values["since"] = since.isoformat()
    if until:
        values["until"] = until.isoformat()
    config = MineConfig.build(**values)
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
        console=err_console, transient=True, disable=not err_console.is_terminal,
    ) as progress:  # fmt: skip
        task = progress.add_task("mining history", total=None)

        def on_commit(scanned: int, kept: int) -> None:
            progress.update(task, description=f"mining: {scanned} commits scanned, {kept} cases")

        summary = mine_corpus(config, out, force=force, on_commit=on_commit,
                              warn=lambda m: click.echo(f"reviewbench: warning: {m}", err=True))  # fmt: skip
    if as_json:
        print_json(_summary_json(summary))
    else:
        _print_summary(summary)
