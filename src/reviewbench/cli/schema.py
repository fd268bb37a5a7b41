"""``reviewbench schema``: the JSON Schemas of the corpus files."""

from __future__ import annotations

import click

from ..config import ExperimentConfig
from ..label.records import LabelPacket, LabelRow
from ..records import Case, CorpusMeta, GoldRecord
from ..tasks.experiment import TasksExperimentConfig
from ..tasks.records import Grade, Task, TasksMeta
from ._output import print_json

__all__ = ["SCHEMAS", "json_schema", "schema_command"]

SCHEMAS = {"cases": Case, "gold": GoldRecord, "corpus": CorpusMeta, "experiment": ExperimentConfig,
           "tasks": Task, "tasks-meta": TasksMeta, "grades": Grade, "tasks-experiment": TasksExperimentConfig,
           "packets": LabelPacket, "labels": LabelRow}


#: Records of the scoring stage, imported only when asked for (scoring pulls in numpy).
SCORING_SCHEMAS = {"verdicts": "FindingVerdict", "score": "ScoreResult"}


def json_schema(name: str) -> dict:
    """The JSON Schema (draft 2020-12) of one corpus file, generated from its record."""
    if name in SCORING_SCHEMAS:  # outputs: the schema of what is written
        from .. import score

        schema = getattr(score, SCORING_SCHEMAS[name]).model_json_schema(by_alias=True, mode="serialization")
    else:
        schema = SCHEMAS[name].model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


@click.command("schema")
@click.argument("name", type=click.Choice(sorted([*SCHEMAS, *SCORING_SCHEMAS])))
def schema_command(name: str) -> None:
    """Print a JSON Schema: cases (cases.jsonl), gold (gold.jsonl), corpus (corpus.json),
    experiment (the experiment TOML file), tasks (tasks.jsonl), tasks-meta (tasks.json),
    grades (a task run's grades.jsonl), tasks-experiment (a fix-task experiment file),
    verdicts (a run directory's verdicts.jsonl), score (score --json), packets (label
    export's packets) or labels (label import/export rows)."""
    print_json(json_schema(name))
