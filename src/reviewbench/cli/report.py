"""``reviewbench report``: the HTML report, CSV exports and SARIF of a run directory."""

from __future__ import annotations

from pathlib import Path

import click

from ._output import console

__all__ = ["report_command"]


@click.command("report")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the self-contained HTML report here [default: RUNDIR/report.html when no output is named].")
@click.option("--csv", "csv_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Write runs.csv, findings.csv and cases.csv into this directory.")
@click.option("--sarif", "sarif_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the findings as SARIF 2.1.0 to this file.")
@click.option("--condition", "conditions", multiple=True, metavar="NAME",
              help="Only this condition (repeatable) [default: all].")
@click.option("--tolerance", type=click.IntRange(min=0),
              help="Lines either side of a gold range that still count as located [default: registered, or 3].")
@click.option("--bootstrap", "resamples", type=click.IntRange(min=100),
              help="Bootstrap resamples for the 95% intervals [default: registered, or 10000].")
@click.option("--include-unvalidated/--validated-only", default=None,
              help="Also score cases whose defect no test observed [default: registered, or validated only].")
@click.option("--cutoff", metavar="DATE",
              help="Contamination cut-off (YYYY-MM-DD): show every condition's figures before and from that date, "
                   "with their difference, beside the holdout strata [default: the registered cutoff, if any].")
def report_command(rundir: Path, html_path: Path | None, csv_dir: Path | None, sarif_path: Path | None,
                   conditions: tuple[str, ...], tolerance: int | None, resamples: int | None,
                   include_unvalidated: bool | None, cutoff: str | None) -> None:  # fmt: skip
    """Report on the runs of RUNDIR: scoreboard with intervals, tile map of every defect ×
    condition × repetition, false positives, paired comparisons, latency, the corpus and the
    decision, in one offline HTML file; optionally CSV and SARIF.

    With no --html, --csv or --sarif, writes RUNDIR/report.html.
    """
    from ..report import (  # keeps --help fast
        ReportOptions,
        build_report,
        write_csv,
        write_html,
        write_sarif,
    )

    if html_path is None and csv_dir is None and sarif_path is None:
        html_path = rundir / "report.html"
    options = ReportOptions(tolerance=tolerance, bootstrap=resamples, include_unvalidated=include_unvalidated,
                            conditions=tuple(dict.fromkeys(conditions)),
                            cutoff=cutoff)  # fmt: skip
    data = build_report(rundir, options)
    for c in data.conditions:
        console.print(f"{c.name}: authority {c.decision.authority} ({c.decision.status}); NOT permitted: "
                      + "; ".join(c.decision.not_permitted), markup=False)  # fmt: skip
    if html_path is not None:
        from ..label.report import labels_section

        sections = labels_section(rundir, [c.name for c in data.conditions], resamples=min(options.bootstrap or 2000, 2000),
                                  unclear={c.name: c.unclear for c in data.conditions})  # fmt: skip
        console.print(f"html report: {write_html(data, html_path, sections)}", markup=False)
    if csv_dir is not None:
        for path in write_csv(data, csv_dir).values():
            console.print(f"csv: {path}", markup=False)
    if sarif_path is not None:
        console.print(f"sarif: {write_sarif(data, sarif_path)}", markup=False)
