"""``reviewbench audit``: can the corpus's automatic matching be fooled?"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ._output import console, print_json

__all__ = ["audit_command"]


@click.command("audit")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the audit as JSON.")
def audit_command(corpus: Path, as_json: bool) -> None:
    """Run the built-in probes (namer, quoter, shape: reviewers that never describe a
    defect) against the validated corpus, offline, and measure how well diff shape alone
    separates defect cases from clean ones (controls and mirrors).

    Sound: no probe's discriminating recall above 5% and a cross-validated shape AUC of at
    most 0.7. The verdict is written to CORPUS/audit.json; score and report print it, and
    on a corpus that is not sound no tier rests on automatic evidence.
    """
    from ..score.audit import MAX_SHAPE_AUC
    from ..score.audit_run import audit_corpus

    audit = audit_corpus(corpus)
    if as_json:
        data = audit.model_dump(mode="json", exclude={"gold_sha256"})
        print_json({"probes": data["probes"], "shape": data["shape"], "sound": data["sound"],
                    "reasons": data["reasons"], "gold_sha256": audit.gold_sha256})  # fmt: skip
        return
    table = Table(title="Probes (one run per case; a sound corpus credits none)")
    for column in ("probe", "named", "discriminating (credited)", "false alarms"):
        table.add_column(column)
    for name, probe in audit.probes.items():
        table.add_row(name, *(f"{f.num:g}/{f.den:g}" for f in (probe.named, probe.discriminating, probe.false_alarms)))
    console.print(table)
    shape = audit.shape
    auc = f"{shape.auc:.3f}" if shape.auc is not None else "not measured (too few cases)"
    best = f"; best single feature {shape.best_feature} {shape.best_feature_auc:.3f}" if shape.best_feature else ""
    console.print(f"shape separability: AUC {auc} over {shape.defect_cases} defect and {shape.clean_cases} clean "
                  f"cases (at most {MAX_SHAPE_AUC} is sound){best}")  # fmt: skip
    for reason in audit.reasons:
        console.print(f"  not sound: {reason}")
    console.print(audit.line())
