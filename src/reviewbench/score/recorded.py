"""The experiment as the runs recorded it (``runs.sqlite`` meta), read as a typed record.

Not today's config model: a run directory outlives the experiment format it was made
under, so the record keeps what scoring reads (the conditions' names, reviewer kind and
model, the registered cut-off) and carries every other table through as recorded.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RecordedCondition", "RecordedExperiment"]


class RecordedCondition(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    reviewer: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind(self) -> str | None:
        kind = self.reviewer.get("kind")
        return str(kind) if kind else None

    @property
    def model(self) -> str | None:
        model = self.reviewer.get("model")
        return str(model) if model else None

    def settings(self) -> dict[str, Any]:
        """Everything recorded for the condition but its name (what ``compare`` sets side by side)."""
        return self.model_dump(exclude={"name"})


class RecordedExperiment(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    condition: tuple[RecordedCondition, ...] = ()
    cutoff: str | None = None

    def names(self) -> list[str]:
        """Condition names in the experiment's order."""
        return [c.name for c in self.condition]

    def find(self, name: str) -> RecordedCondition | None:
        return next((c for c in self.condition if c.name == name), None)
