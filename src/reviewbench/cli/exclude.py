"""``reviewbench exclude``: leave a run or a case out of the analysis, with a reason, on record."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from ._output import console

__all__ = ["exclude_command"]


@click.command("exclude")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--run", "run_id", metavar="ID", help="The run to leave out (see 'reviewbench runs RUNDIR').")
@click.option("--case", "case_id", metavar="ID", help="The case to leave out, every run of it.")
@click.option("--reason", required=True, help="Why: the protocol it broke.")
@click.option("--by", "by", required=True, metavar="NAME", help="Who decides it.")
def exclude_command(rundir: Path, run_id: str | None, case_id: str | None, reason: str, by: str) -> None:
    """Leave one run (--run) or case (--case) of RUNDIR out of the analysis: appended to
    RUNDIR/exclusions.jsonl with the reason and the name; nothing is deleted. score and
    report then show every figure with the exclusions applied, and without them beside."""
    from ..store.exclusions import ExclusionKind, exclude

    if (run_id is None) == (case_id is None):
        raise UsageError("name exactly one of --run or --case")
    kind, target = (ExclusionKind.RUN, run_id) if run_id is not None else (ExclusionKind.CASE, case_id)
    entry = exclude(rundir, kind, str(target), reason, by)
    console.print(f"excluded {entry.kind.value} {entry.id} ({entry.reason}; by {entry.by}, {entry.at}); "
                  f"logged in {rundir / 'exclusions.jsonl'}", markup=False)  # fmt: skip
