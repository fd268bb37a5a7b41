"""``reviewbench mine``: history (and HEAD) → corpus."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..config import DEFAULT_SELECT, DEFAULT_TEST_PATTERNS, MineConfig
from ..errors import UsageError
from ..mine import MineSummary, mine_corpus
from ..records import SelectionSignal
from ._output import console, err_console, escape, print_json, printable

__all__ = ["history_options", "history_values", "mine_command"]


def _synthetic(summary: MineSummary) -> bool:
    """Whether the corpus holds more than fix reversals (or was asked to)."""
    counts = summary.meta.counts
    return summary.meta.config.get("fixes") is False or bool(counts.by_stratum.keys() - {"fix_reversal"})


def _summary_json(summary: MineSummary) -> dict:
    counts = summary.meta.counts
    result = {
        "out": str(summary.out),
        "cases": counts.cases,
        "by_stratum": counts.by_stratum,
        "scanned_commits": summary.scanned_commits,
        "matched_commits": counts.matched_commits,
        "by_signal": counts.by_signal,
        "dropped": counts.dropped,
        "gold_sha256": summary.meta.gold_sha256,
    }
    if summary.natural is not None:
        result["natural"] = summary.natural.as_dict()
    if summary.meta.config.get("mirrors"):
        result["mirrors"] = {"made": summary.mirrors, "fix_reversals_without": summary.mirrors_missed}
    if _synthetic(summary):
        extra = summary.synthetic
        result["made_at_head"] = {"mutations": extra.mutations, "controls": extra.controls,
                                  "rename_variants": extra.variants, "noisy": extra.noisy,
                                  "variants_skipped": extra.variants_skipped,
                                  "variants_skipped_by": extra.variants_skipped_by,
                                  "coverage_used": extra.coverage,
                                  "controls_paired_with_fixes": extra.paired_controls}  # fmt: skip
    return result


def _print_synthetic(summary: MineSummary) -> None:
    counts = summary.meta.counts
    extra = summary.synthetic
    console.print(f"Mined [bold]{counts.cases}[/] cases into {escape(summary.out)}", markup=True)
    table = Table(title="Cases by stratum", show_edge=False)
    table.add_column("stratum")
    table.add_column("cases", justify="right")
    for stratum, n in counts.by_stratum.items():
        table.add_row(stratum, str(n))
    console.print(table)
    if summary.meta.config.get("rename"):
        _print_variants(extra)
    notes = [f"{extra.variants} rename variants"
             + (f" ({extra.variants_skipped} defect cases had none)" if extra.variants_skipped else "")]  # fmt: skip
    if extra.controls:
        notes.append(f"{extra.controls} controls ({extra.paired_controls} at fix commits, paired with "
                     "fix reversals)")  # fmt: skip
    if extra.mutations:
        notes.append("mutation sites chosen " + ("with" if extra.coverage else "without") + " coverage")
    if summary.mirrors:
        notes.append(_mirrors_note(summary))
    console.print("; ".join(notes))


def _mirrors_note(summary: MineSummary) -> str:
    missed = f", {summary.mirrors_missed} fix reversals had none" if summary.mirrors_missed else ""
    return f"{summary.mirrors} mirrors (clean cases: each defect case's change the other way{missed})"


def _print_variants(extra) -> None:  # noqa: ANN001 - a SyntheticSummary
    """Defect cases by rename-variant outcome: a variant, or the reason it has none."""
    cases = extra.variants + extra.variants_skipped
    table = Table(title="Defect cases by rename-variant outcome", show_edge=False)
    table.add_column("outcome")
    table.add_column("cases", justify="right")
    table.add_column("share", justify="right")
    table.add_row("variant", str(extra.variants), f"{extra.variants}/{cases}")
    for reason, n in sorted(extra.variants_skipped_by.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(f"none: {escape(reason)}", str(n), f"{n}/{cases}")
    table.add_section()
    table.add_row("defect cases", str(cases), "")
    console.print(table)


def _print_natural(summary: MineSummary) -> None:
    natural = summary.natural
    if natural is None:
        return
    untraced = natural.fixes - natural.traced  # the one fix-level reason: it removed no source line
    skipped = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(natural.skipped.items())
                        if k != "fix_removed_no_source_line") or "none"  # fmt: skip
    console.print(
        f"Natural history: {natural.traced} of {natural.fixes} fixes traced ({untraced} removed no source line) to "
        f"{natural.introducing} introducing commits → [bold]{natural.cases}[/] natural cases ({natural.cosmetic_skipped} "
        f"formatting, comment or rename-only commits passed over; {natural.copies_unfollowed} copied lines blamed on "
        f"the commit that copied them; introducing commits skipped: {escape(skipped)}). Natural cases are a holdout: "
        "never pooled into headline figures.",
        markup=True,
    )


def _print_summary(summary: MineSummary) -> None:
    _print_natural(summary)
    counts = summary.meta.counts
    synthetic = _synthetic(summary)
    if synthetic:
        _print_synthetic(summary)
        if summary.meta.config.get("fixes") is False:
            return
    # Commits, not cases: a rename variant repeats its original's commit (counted apart below).
    fixes = summary.fix_commits
    variants = counts.by_stratum.get("fix_reversal", 0) - fixes
    dropped = sum(counts.dropped.values())
    limit = summary.meta.config.get("limit")
    stopped = f"; stopped at --limit {limit}: older history not scanned" if limit and fixes >= limit else ""
    console.print(
        f"{'Fix reversals: ' if synthetic else 'Mined '}[bold]{fixes}[/] cases from "
        f"{counts.matched_commits} matching commits ({summary.scanned_commits} scanned{stopped})"
        + ("" if synthetic else f" into {escape(summary.out)}"),
        markup=True,
    )
    table = Table(title="Matching commits by outcome", show_edge=False)
    table.add_column("outcome")
    table.add_column("commits", justify="right")
    table.add_column("share", justify="right")
    rows = [("case", fixes)] + [(f"dropped: {reason}", n) for reason, n in counts.dropped.items() if n]
    for label, n in rows:
        table.add_row(label, str(n), f"{n}/{counts.matched_commits}")
    table.add_section()
    table.add_row("total", str(fixes + dropped), "")
    console.print(table)
    if variants > 0:
        console.print(f"plus {variants} rename variants of these fix reversals (cases, not commits)")
    if summary.mirrors and not synthetic:
        console.print(f"plus {_mirrors_note(summary)}")


_HISTORY_OPTIONS = [
    click.option("--grep", "grep", multiple=True, metavar="REGEX",
                  help="Fix-commit message pattern (Python regex, case-insensitive; repeatable). "
                       "Default: the words fix, fixes, fixed, bugfix, hotfix. A message whose every match "
                       "is upkeep ('fix typos', 'fix flake8', 'Fix more tests') is not taken by it."),
    click.option("--select", "select", metavar="LIST",
                  help="Candidate signals, comma-separated; a commit matching any is tried as a fix: "
                       "message (a --grep pattern), issue_ref (an issue reference, not a subject's trailing "
                       "'(#123)'), test_coedit (rewrites existing source lines and edits an existing test "
                       "file), convention (a subject tag that the repository's 'fix' commits mostly carry, "
                       f"e.g. 'BUG:'). Default: {','.join(DEFAULT_SELECT)} (see docs/MINING.md)."),
    click.option("--since", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
                  help="Only commits after this date (YYYY-MM-DD)."),
    click.option("--until", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
                  help="Only commits before this date (YYYY-MM-DD)."),
    click.option("--max-lines", default=60, show_default=True, type=click.IntRange(min=1),
                  help="Drop fixes changing more source lines than this."),
    click.option("--limit", type=click.IntRange(min=1), help="Keep only the newest N fix reversals: scanning stops there, so counts cover only the history scanned."),
    click.option("--include", multiple=True, metavar="GLOB",
                  help="Only paths matching count as source (repeatable)."),
    click.option("--exclude", multiple=True, metavar="GLOB",
                  help="Paths never counted as source (repeatable)."),
    click.option("--test-pattern", "test_patterns", multiple=True, metavar="GLOB",
                  help="What counts as a test file (repeatable; replaces the defaults for "
                       "Python, JS/TS, Go, Java and Rust)."),
    click.option("--seed", default=0, show_default=True, type=int,
                  help="Seed of the neutral case ids and titles, and of every choice made at HEAD "
                       "(sites, controls, new names)."),
]


def history_options(command):  # noqa: ANN001, ANN201  (a click decorator)
    """The history filters shared by ``mine`` and ``tasks mine``."""
    for option in reversed(_HISTORY_OPTIONS):
        command = option(command)
    return command


def history_values(grep: tuple[str, ...], since, until, max_lines: int, limit: int | None,
                   include: tuple[str, ...], exclude: tuple[str, ...], test_patterns: tuple[str, ...],
                   seed: int, select: str | None = None) -> dict:  # fmt: skip
    """MineConfig values of the history filters.

    Raises:
        UsageError: ``select`` names an unknown signal.
    """
    values: dict = {"max_lines": max_lines, "seed": seed, "limit": limit, "include": include,
                    "exclude": exclude, "test_patterns": test_patterns or DEFAULT_TEST_PATTERNS}  # fmt: skip
    if grep:
        values["grep"] = grep
    if select is not None:
        names = [n.strip() for n in select.split(",") if n.strip()]
        known = [s.value for s in SelectionSignal]
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            what = f"unknown signal {unknown[0]!r}" if unknown else "no signal given"
            raise UsageError(f"--select: {what} (known: {', '.join(known)})")
        values["select"] = tuple(SelectionSignal(n) for n in names)
    if since:
        values["since"] = since.isoformat()
    if until:
        values["until"] = until.isoformat()
    return values


@click.command("mine")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Corpus directory to create (must not exist or be empty).")
@history_options
@click.option("--no-fixes", "no_fixes", is_flag=True,
              help="Do not mine fix reversals from history (mutations only).")
@click.option("--mutations", default=0, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Make N mutation cases: one small defect in real code at HEAD each.")
@click.option("--operators", metavar="LIST",
              help="Comma-separated mutation operators to use (default: all; see docs/MUTATIONS.md).")
@click.option("--paths", "mutate_paths", multiple=True, metavar="GLOB",
              help="Only mutate Python files matching GLOB (repeatable).")
@click.option("--controls-ratio", type=click.FloatRange(min=0), metavar="R",
              help="Clean control cases per defect case: 0.5 gives 2 defect : 1 control; the fix "
                   "reversals' share is made at their fix commits, on their files. "
                   "--controls-ratio 0 makes none [default: 0.5].")
@click.option("--rename", is_flag=True,
              help="Add a rename variant of every defect case: its locals, parameters and the names it "
                   "touches (with every use in the repository, when provably safe) consistently renamed; "
                   "the cases that get none are counted by reason.")
@click.option("--noisy", default=0, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Make N noisy cases (a mutation buried among refactors of other files; gold marks only "
                   "the defect) and as many noisy clean diffs of refactors only.")
@click.option("--natural", is_flag=True,
              help="Natural history (SZZ): trace each fix to the commit(s) that introduced the lines it "
                   "changed and add each such commit's own diff as a 'natural' case (a holdout stratum).")
@click.option("--no-mirrors", "no_mirrors", is_flag=True,
              help="Make no mirrors. By default every fix reversal and mutation gets one: the same change "
                   "the other way (the fix itself, the un-mutation), a clean case paired with it, so that a "
                   "remark made on both does not count as naming the defect.")
@click.option("--coverage-cmd", metavar="CMD",
              help="Shell command running the tests under coverage.py (e.g. 'python -m coverage "
                   "run -m pytest'), run once at HEAD in a sandbox to prefer covered sites.")
@click.option("--force", is_flag=True, help="Replace OUT if it already holds a corpus.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def mine_command(
    repo: Path, out: Path, grep: tuple[str, ...], since, until, max_lines: int,
    limit: int | None, include: tuple[str, ...], exclude: tuple[str, ...],
    test_patterns: tuple[str, ...], seed: int, select: str | None, no_fixes: bool, mutations: int, operators: str | None,
    mutate_paths: tuple[str, ...], controls_ratio: float | None, rename: bool, noisy: int, natural: bool, no_mirrors: bool,
    coverage_cmd: str | None, force: bool, as_json: bool,
) -> None:  # fmt: skip
    """Mine REPO into a corpus of review cases.

    Fix reversals: each is the reverse of a fix's non-test changes, applying to the fix
    commit: it quietly reintroduces the bug while the fix's tests stay in place. Commits
    that make no valid case are counted by reason in corpus.json.

    Clean controls that only refactor are made too, one per two defect cases unless
    --controls-ratio says otherwise: for fix reversals at their fix commits, on the same
    files. With --mutations or --rename, cases are also made at HEAD: small mutations of
    real code and rename variants of the defect cases. Labels (gold) record where each
    defect lies in the patched tree.

    With --natural, each fix is also traced to the commit(s) that introduced the lines it
    changed (SZZ), whose own diffs become 'natural' cases (a holdout in scoring). With
    --noisy N, N mutations are buried among refactors of other files, beside N diffs of
    refactors only.

    Every fix reversal and mutation also gets its mirror (--no-mirrors: none): the same
    change the other way, whose base is the defect case's patched tree, a clean case
    paired with it.
    """
    values = history_values(grep, since, until, max_lines, limit, include, exclude, test_patterns, seed, select)
    values.update(repo=repo, fixes=not no_fixes, mutations=mutations, paths=mutate_paths, rename=rename, natural=natural, noisy=noisy,
                  controls_ratio=controls_ratio, coverage_cmd=coverage_cmd, mirrors=not no_mirrors)  # fmt: skip
    if operators is not None:
        values["operators"] = tuple(o.strip() for o in operators.split(",") if o.strip())
    config = MineConfig.build(**values)
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
        console=err_console, transient=True, disable=not err_console.is_terminal,
    ) as progress:  # fmt: skip
        task = progress.add_task("mining history", total=None)

        def on_commit(scanned: int, kept: int) -> None:
            progress.update(task, description=f"mining: {scanned} commits scanned, {kept} cases")

        summary = mine_corpus(config, out, force=force, on_commit=on_commit,
                              on_progress=lambda text: progress.update(task, description=text),
                              warn=lambda m: click.echo(f"reviewbench: warning: {printable(m)}", err=True))  # fmt: skip
    if as_json:
        print_json(_summary_json(summary))
    else:
        _print_summary(summary)
