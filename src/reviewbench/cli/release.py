"""``reviewbench release``: the labels, their pre-run hash, the adjudications and the final hash."""

from __future__ import annotations

from pathlib import Path

import click

from ._output import console, print_json

__all__ = ["release_command"]


@click.command("release")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="A new directory for the release.")
@click.option("--partial", is_flag=True,
              help="Release although runs are missing or claims have no final label (said in release.json).")
@click.option("--json", "as_json", is_flag=True, help="Print release.json.")
def release_command(rundir: Path, out: Path, partial: bool, as_json: bool) -> None:
    """Release the labels of RUNDIR once its runs and labels are done: OUT/gold.jsonl (the
    corpus's labels in plaintext), OUT/labels.jsonl (people's final label of every claim),
    OUT/adjudications.jsonl (every adjudication with the raters' labels it settled and its
    reason) and OUT/release.json (the gold's SHA-256 registered before the first run, the
    final one, the label chain's head, each file's SHA-256). Refused while planned runs are
    missing or claims have no final label, unless --partial."""
    from ..label.release import release_labels

    manifest = release_labels(rundir, out, partial=partial)
    if as_json:
        print_json(manifest.model_dump(mode="json"))
        return
    gold = manifest.gold
    registered = gold.registered_sha256 or "not registered"
    verdict = "unchanged" if gold.unchanged else "CHANGED since registration"
    console.print(f"released {rundir} into {out}: gold {verdict} (registered {registered}, final "
                  f"{gold.final_sha256}); {manifest.claims['final']} final labels, {manifest.adjudications} "
                  "adjudications", markup=False)  # fmt: skip
    if manifest.labels_chain:
        console.print(f"label chain: {manifest.labels_chain['rows']} rows, head {manifest.labels_chain['head']}",
                      markup=False)  # fmt: skip
    if manifest.partial:
        console.print("PARTIAL release: " + "; ".join(manifest.incomplete), markup=False)
