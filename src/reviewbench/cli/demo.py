"""``reviewbench demo``: the whole pipeline, offline, on the embedded sample project."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ._output import console, err_console, escape, say
from .score import print_scoreboard

__all__ = ["demo_command"]

NEXT_STEPS = """\
Now on your own repository and endpoint:
  reviewbench mine ~/src/yourlib --out corpus
  reviewbench validate corpus
  reviewbench experiment init experiment.toml      # then point a condition at your endpoint
  reviewbench run experiment.toml --out runs/first
  reviewbench score runs/first
  reviewbench label serve runs/first --rater ann --rater bob   # two people label findings, blind"""


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=Path("reviewbench-demo"), show_default=True,
              help="Directory for the sample repository, corpus, runs and report (replaced if it holds "
                   "an earlier demo).")  # fmt: skip
@click.option("--jobs", type=click.IntRange(min=1), help="Parallel validation workers [default: cores].")
def demo_command(out: Path, jobs: int | None) -> None:
    """Run the whole pipeline offline on an embedded sample project: build its history, mine
    it, validate every case with its tests, audit the matcher with the built-in probes, run
    three built-in reviewers (silent, flag_all,
    and ruff through SARIF), score them and write the report."""
    from ..demo import run_demo

    started = time.monotonic()
    with err_console.status("starting", spinner="dots") as status:

        def step(text: str) -> None:
            status.update(text)
            err_console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {escape(text)}", markup=True)

        result = run_demo(out, step=step, jobs=jobs)
    print_scoreboard(result.rundir, result.score)
    if result.audit:
        probes = "; ".join(f"{name} named {p.named.num:g}/{p.named.den:g}, credited {p.discriminating.num:g}/"
                           f"{p.discriminating.den:g}" for name, p in result.audit.probes.items())  # fmt: skip
        say(f"Probes (reviewbench audit {out}/corpus): {probes}")
    console.print()
    say(f"Done in {time.monotonic() - started:.0f}s. Everything is in {out}/: the sample repository "
        f"(shelfkit/), the corpus, the runs (runs/runs.sqlite) and score.json.")  # fmt: skip
    if result.report:
        console.print(f"Report: {result.report.resolve()}", markup=False)
    if result.labels:
        pair = result.labels.agreement["pairs"][0] if result.labels.agreement["pairs"] else None
        judge = result.labels.calibration
        say(
            f"Labels ({result.labels.folder}/): {result.labels.claims} claims rated twice"
            + (f", kappa {pair['kappa']:.2f} [{pair['kappa_lo']:.2f}, {pair['kappa_hi']:.2f}]" if pair and pair["kappa"]
               is not None and pair["kappa_lo"] is not None else "")
            + f", {result.labels.disputed} adjudicated; command judge "
            + ("usable" if judge["usable"] else "refused: " + "; ".join(judge["reasons"]))
            + f" (n={judge['n']}, order flips {judge['order_flips']}, length flips {judge['length_flips']})."
        )  # fmt: skip
    console.print(NEXT_STEPS, markup=False)
