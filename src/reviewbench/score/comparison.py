"""The comparison of two run directories as frozen, typed records: ``compare --json`` is
their JSON dump, and ``gate`` judges its rules on them.

Every difference is ``b - a`` (from the first run directory to the second; for ``gate``,
from the baseline to the new run), on the case clusters both sides were scored on.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Change",
    "ConditionComparison",
    "McNemarResult",
    "MetricDifference",
    "PairedFigure",
    "RunComparison",
    "RunSide",
    "SharedCases",
    "StratumComparison",
]

Number = int | float


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PairedFigure(_Record):
    """One side's figure on the paired clusters (the clusters both sides were scored on)."""

    value: float | None = Field(description="num / den; null when den is 0.")
    num: Number = Field(description="Numerator over the paired clusters.")
    den: Number = Field(description="Denominator over the paired clusters.")


class MetricDifference(_Record):
    a: PairedFigure = Field(description="The first run directory (the baseline, for gate).")
    b: PairedFigure = Field(description="The second run directory (the new run, for gate).")
    diff: float | None = Field(description="b - a; null when a side has no denominator.")
    lo: float | None = Field(description="Low end of the 95% case-clustered bootstrap interval of the difference.")
    hi: float | None = Field(description="High end of that interval.")
    clusters: int = Field(description="Case clusters both sides were scored on (what the bootstrap resamples).")


class McNemarResult(_Record):
    """Found/missed on the same (case, defect, repetition) units by both sides (identified, as
    defect_recall counts)."""

    both: int = Field(description="Units identified by both.")
    only_a: int = Field(description="Units identified by a only.")
    only_b: int = Field(description="Units identified by b only.")
    neither: int = Field(description="Units missed by both.")
    p: float | None = Field(description="Exact two-sided McNemar p (binomial on the discordant units); null "
                                        "without discordant units.")  # fmt: skip


class StratumComparison(_Record):
    cases: int = Field(description="Shared cases of the stratum in the analysis (a or b).")
    metrics: dict[str, MetricDifference] = Field(description="Rate metrics both sides measured on some cluster "
                                                "of the stratum.")
    mcnemar: McNemarResult


class Change(_Record):
    """One provenance field on both sides."""

    a: Any = Field(description="Its value(s) in the first run directory.")
    b: Any = Field(description="Its value(s) in the second.")
    same: bool


class ConditionComparison(_Record):
    a: str = Field(description="Condition name in the first run directory.")
    b: str = Field(description="Condition name in the second.")
    baseline: str | None = Field(description="The calibration baseline or probe kind (silent, flag_all, probe) of "
                                             "either side, if any: no reviewer to compare.")  # fmt: skip
    metrics: dict[str, MetricDifference] = Field(description="Every rate metric, by name.")
    mcnemar_p: float | None = Field(description="Exact McNemar p on defect_recall's units (as mcnemar.p).")
    mcnemar: McNemarResult
    strata: dict[str, StratumComparison] = Field(description="The same, per stratum of the shared cases.")
    changed: dict[str, Change] = Field(description="model_requested, model_returned (completed runs), "
                                       "prompt_sha256, guidance_sha256, reviewer (the experiment's table), params "
                                       "(the adapter's settings), evidence (levels the scored comments rest on: "
                                       "automatic, judge, human), tool_version, repetitions, runs, started (first "
                                       "and last start).")  # fmt: skip
    differs: list[str] = Field(description="The names in changed whose values differ (started always does).")


class RunSide(_Record):
    rundir: str
    corpus: str = Field(description="The corpus the runs recorded.")
    gold_sha256: str
    runs: int = Field(description="Runs in the store.")
    conditions: list[str]
    baselines: list[str] = Field(description="Its conditions that are calibration baselines or probes.")
    registration: str | None = Field(description="'version N of DATE, SHA-256 …' when registered.")


class SharedCases(_Record):
    restricted: bool = Field(description="True with --shared-cases on different corpora: only the cases both "
                                         "hold unchanged are compared.")  # fmt: skip
    cases: int = Field(description="Cases compared (both corpora hold them, with the same patch and gold).")
    only_a: int = Field(description="Cases of a's corpus left out (absent from b's).")
    only_b: int = Field(description="Cases of b's corpus left out.")
    differing: int = Field(description="Case ids in both whose patch or gold differ: left out.")
    analysed: int = Field(description="Compared cases in the headline analysis of either side (validated, "
                                      "not holdout).")  # fmt: skip


class RunComparison(_Record):
    """``reviewbench compare A B --json``."""

    a: RunSide
    b: RunSide
    shared_cases: SharedCases
    changed: dict[str, Change] = Field(description="Run-wide: gold_sha256, tool_version, rules (tolerance, "
                                       "bootstrap, eligibility), registration, started.")  # fmt: skip
    conditions: list[ConditionComparison] = Field(description="One per paired condition, a's order.")
    unpaired: dict[str, list[str]] = Field(description="Conditions of a and of b without a counterpart.")
    analysis: dict[str, Any] = Field(description="analysis (completed or end_to_end), bootstrap (resamples, seed, "
                                     "level, unit), difference (b - a).")  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
