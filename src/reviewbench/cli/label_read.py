"""``reviewbench label read`` and ``label sample``: people reading scored runs by hand.

Kept apart from the labelling commands (``cli/label.py``): a reading is no label; it says
that a person read a run, or a defect it missed, before trusting the figures over it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._output import console, print_json, say

__all__ = ["read_command", "sample_command"]

_RUNDIR = click.argument("rundir", type=click.Path(path_type=Path, file_okay=False))


@click.command("read")
@_RUNDIR
@click.option("--run", "run_id", required=True, metavar="ID", help="The run read (label sample RUNDIR names five).")
@click.option("--defect", "defect_id", metavar="ID", help="A defect of the run's case it missed, read against "
              "its output (a miss read).")
@click.option("--by", "by", required=True, metavar="NAME", help="Who read it.")
@click.option("--note", help="What you saw, in your words.")
def read_command(rundir: Path, run_id: str, defect_id: str | None, by: str, note: str | None) -> None:
    """Record that a person read run ID of RUNDIR by hand (its packet, raw output and
    verdicts), or, with --defect, a defect it missed: appended to RUNDIR/readings.jsonl.
    score then says how many scored runs and misses people have read."""
    from ..store.readings import READINGS_FILE, record_reading

    entry = record_reading(rundir, run_id, by, defect_id, note)
    what = f"miss {entry.defect_id} of run {entry.run_id}" if entry.defect_id else f"run {entry.run_id}"
    console.print(f"read {what} (by {entry.by}, {entry.at}); logged in {rundir / READINGS_FILE}", markup=False)


@click.command("sample")
@_RUNDIR
@click.option("--size", default=5, show_default=True, type=click.IntRange(min=1), help="Runs to pick.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds the pick.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def sample_command(rundir: Path, size: int, seed: int, as_json: bool) -> None:
    """Pick scored runs of RUNDIR to read by hand, none read before: a miss, a find, a false
    alarm and a quiet clean run in turn (seeded). Read each (reviewbench runs RUNDIR --json,
    the report), then record it with 'reviewbench label read'."""
    from ..score import tally_runs  # the scoring stack: only here
    from ..score.inspection import pick_sample
    from ..store.readings import read_readings

    tallied = tally_runs(rundir)
    picked = pick_sample(tallied, read_readings(rundir), size, seed)
    by_id = {r.run_id: r for r in tallied.inputs.runs}
    rows = [{"run_id": i, "case_id": by_id[i].case_id, "condition": by_id[i].condition,
             "repetition": by_id[i].repetition, "findings": len(by_id[i].findings)} for i in picked]  # fmt: skip
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("every scored run has been read", markup=False)
        return
    for row in rows:
        say(f"{row['run_id']}  condition {row['condition']}, case {row['case_id']}, repetition {row['repetition']}, "
            f"{row['findings']} findings")  # fmt: skip
    say(f"then, for each: reviewbench label read {rundir} --run ID --by NAME [--defect ID for a miss]")
