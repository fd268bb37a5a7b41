"""``reviewbench schema``: the JSON Schemas of the corpus files."""

from __future__ import annotations

import click

from ._output import print_json

__all__ = ["SCHEMAS", "json_schema", "schema_command"]

#: Each file's record as (module, class), imported only when its schema is asked for: the
#: CLI's start-up stays free of the stages' imports (scoring pulls in numpy and scipy).
SCHEMAS = {
    "cases": ("reviewbench.records", "Case"),
    "gold": ("reviewbench.records", "GoldRecord"),
    "corpus": ("reviewbench.records", "CorpusMeta"),
    "dropped": ("reviewbench.records", "DroppedCommit"),
    "experiment": ("reviewbench.config", "ExperimentConfig"),
    "tasks": ("reviewbench.tasks.records", "Task"),
    "tasks-meta": ("reviewbench.tasks.records", "TasksMeta"),
    "grades": ("reviewbench.tasks.records", "Grade"),
    "tasks-experiment": ("reviewbench.tasks.experiment", "TasksExperimentConfig"),
    "packets": ("reviewbench.evidence.records", "LabelPacket"),
    "labels": ("reviewbench.evidence.records", "LabelRow"),
    "practice": ("reviewbench.evidence.records", "PracticeItem"),
    "profile": ("reviewbench.evidence.records", "RaterProfile"),
    "verdicts": ("reviewbench.score", "FindingVerdict"),
    "score": ("reviewbench.score", "ScoreResult"),
    "audit": ("reviewbench.score.audit", "Audit"),
    "compare": ("reviewbench.score.comparison", "RunComparison"),
    "gate": ("reviewbench.score.gate", "GateResult"),
    "exclusions": ("reviewbench.store.exclusions", "Exclusion"),
    "readings": ("reviewbench.store.readings", "Reading"),
    "manifest": ("reviewbench.report.manifest", "ArtefactManifest"),
}
#: Outputs: their schema is that of what is written (serialization mode).
_WRITTEN = {"verdicts", "score", "audit", "compare", "gate", "exclusions", "readings", "manifest"}


def json_schema(name: str) -> dict:
    """The JSON Schema (draft 2020-12) of one corpus file, generated from its record."""
    import importlib

    module, record = SCHEMAS[name]
    model = getattr(importlib.import_module(module), record)
    schema = model.model_json_schema(by_alias=True, **({"mode": "serialization"} if name in _WRITTEN else {}))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


@click.command("schema")
@click.argument("name", metavar="NAME", type=click.Choice(sorted(SCHEMAS)))
def schema_command(name: str) -> None:
    """Print the JSON Schema of one file, NAME: cases (cases.jsonl), gold (gold.jsonl), corpus (corpus.json),
    dropped (dropped.jsonl: candidate commits that made no case),
    experiment (the experiment TOML file), tasks (tasks.jsonl), tasks-meta (tasks.json),
    grades (a task run's grades.jsonl), tasks-experiment (a fix-task experiment file),
    verdicts (a run directory's verdicts.jsonl), score (score --json), audit (a corpus's
    audit.json), compare (compare --json), gate (gate --json), packets (label export's packets),
    labels (label import/export rows), practice (a practice set's items, 'label practice'),
    profile (a rater's profile, as 'label status' counts it), exclusions (a run directory's
    exclusions.jsonl), readings (its readings.jsonl: runs read by hand) or manifest (export --manifest)."""
    print_json(json_schema(name))
