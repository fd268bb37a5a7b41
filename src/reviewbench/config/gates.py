"""The gates file's contents: tiers of authority, vetoes, comparative gates, and the two
analysis rules registered with them (the stability rule's k, the boilerplate rule).

Loading checks what a model cannot: every metric name against the scoring registry, and
uses no gates file may permit (``score/gates.py``, which also decides).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..records import Evidence

__all__ = ["Boilerplate", "Compare", "Condition", "Gates", "Stability", "Tier"]


class _Model(BaseModel):
    # TOML has nan and inf; a threshold of nan makes every comparison false, silently.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Condition(_Model):
    metric: str = Field(description="A registered metric, optionally '@stratum'.")
    op: Literal[">", ">=", "<", "<="] = ">="
    value: float = Field(default=0.0, allow_inf_nan=False)
    diff: tuple[str, str] | None = Field(default=None,
                                         description="Comparative: the paired difference of two conditions, a - b.")
    margin: float | None = Field(default=None, ge=0, allow_inf_nan=False,
                                 description="Comparative non-inferiority: passes when the low end > -margin.")
    bound: Literal["value", "interval"] = Field(
        default="value", description="'interval': judged on the 95% interval's far end, a floor on its low end and "
        "a ceiling on its high end (inconclusive when the interval straddles the threshold: not passed). "
        "Not for bounded metrics (identified/located), comparative gates or triage minutes.")

    def as_compare(self, name: str) -> Compare:
        assert self.diff is not None
        return Compare(name=name, metric=self.metric, diff=self.diff, op=self.op, value=self.value,
                       margin=self.margin)  # fmt: skip


class Tier(_Model):
    name: str
    authority: str = ""
    when: list[Condition] = Field(default_factory=list)
    permitted: list[str] = Field(default_factory=list)
    not_permitted: list[str] = Field(default_factory=list)
    min_evidence: Evidence = Field(default=Evidence.AUTOMATIC,
                                   description="Lowest verdict evidence this tier may be granted on.")  # fmt: skip


class Compare(_Model):
    """A comparative gate: the paired difference ``diff[0] - diff[1]`` on shared cases."""

    name: str
    metric: str
    diff: tuple[str, str] = Field(description="Two condition names: a - b.")
    op: Literal[">", ">=", "<", "<="] = ">="
    value: float = Field(default=0.0, allow_inf_nan=False)
    margin: float | None = Field(default=None, ge=0, allow_inf_nan=False,
                                 description="Non-inferiority: passes when the interval's low end > -margin.")  # fmt: skip


class Stability(_Model):
    """The stability rule of ``recall_k_of_n``: how many repetitions must find a defect."""

    k: int | None = Field(default=None, ge=1, description="A defect counts as found when identified in at least "
                          "k of its n counted repetitions (defects with fewer than k are left out and counted); "
                          "unset: a majority of each defect's repetitions, n // 2 + 1.")


class Boilerplate(_Model):
    """The registered boilerplate rule: claims that are summary text, not findings."""

    patterns: list[str] = Field(default_factory=list, description="Regular expressions (Python syntax, matched "
                                "case-insensitively anywhere in a claim): a false positive whose claim matches one "
                                "is non-substantive summary text, left out of precision and counted. Empty: no rule.")

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return patterns

    def regex(self) -> re.Pattern[str] | None:
        """Every pattern as one expression; None without a rule."""
        if not self.patterns:
            return None
        return re.compile("|".join(f"(?:{p})" for p in self.patterns), re.IGNORECASE)


class Gates(_Model):
    min_defect_cases: int = Field(default=10, ge=0)
    min_controls: int = Field(default=5, ge=0, description="Below it: insufficient evidence, no valid controls.")
    max_interval_width: float = Field(default=0.5, gt=0, allow_inf_nan=False)
    analysis: Literal["end_to_end", "completed"] = "end_to_end"
    never_permitted: list[str] = Field(default_factory=list)
    veto: list[Tier] = Field(default_factory=list)
    tier: list[Tier] = Field(default_factory=list)
    fallback: Tier
    compare: list[Compare] = Field(default_factory=list)
    stability: Stability = Field(default_factory=Stability, description="The registered k of recall_k_of_n.")
    boilerplate: Boilerplate = Field(default_factory=Boilerplate, description="The registered boilerplate rule "
                                     "of precision.")
