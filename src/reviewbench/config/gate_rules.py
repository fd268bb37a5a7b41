"""The rules file of ``reviewbench gate`` (``gate.toml``): how much worse than its baseline a
new run may be, per metric, before CI should stop.

Loading checks what the model cannot (metric names against the scoring registry, the
direction of each tolerance): ``score/gate.py``, which also judges the rules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_GATE_RULES", "GateRule", "GateRules"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class GateRule(_Model):
    metric: str = Field(description="A registered rate metric, optionally '@stratum' (defect_recall@mutation).")
    max_drop: float | None = Field(default=None, ge=0, le=1, description="For a metric where higher is better: "
                                   "the largest tolerated fall, new minus baseline >= -max_drop.")  # fmt: skip
    max_rise: float | None = Field(default=None, ge=0, description="For a metric where lower is better: the largest "
                                   "tolerated rise, new minus baseline <= max_rise.")  # fmt: skip
    condition: str | None = Field(default=None, description="Only this condition of the new run (default: every "
                                  "gated condition).")  # fmt: skip

    @model_validator(mode="after")
    def _one_tolerance(self) -> GateRule:
        if (self.max_drop is None) == (self.max_rise is None):
            raise ValueError("give exactly one of max_drop and max_rise")
        return self

    @property
    def tolerance(self) -> float:
        """The signed bound on new - baseline: -max_drop, or +max_rise."""
        return -self.max_drop if self.max_drop is not None else float(self.max_rise or 0)


class GateRules(_Model):
    rules: list[GateRule] = Field(min_length=1, description="Every rule is judged on every gated condition.")
    fail_on_model_change: bool = Field(default=False, description="A change of the model requested or returned "
                                       "between the runs fails the gate (it is always reported).")  # fmt: skip
    analysis: Literal["completed", "end_to_end"] = Field(default="end_to_end", description="end_to_end: a missing "
                                                         "review is a miss and a false alarm (as the gates); "
                                                         "completed: only completed runs count.")  # fmt: skip
    min_cases: int = Field(default=10, ge=1, description="Paired case clusters a rule needs before it can pass or "
                           "fail: fewer is inconclusive (a few cases alike on both sides prove nothing).")  # fmt: skip


#: The rules without a file: recall may fall and false alarms rise by 0.05 at most.
DEFAULT_GATE_RULES = GateRules(rules=[GateRule(metric="defect_recall", max_drop=0.05),
                                      GateRule(metric="false_alarm_rate", max_rise=0.05)])  # fmt: skip
