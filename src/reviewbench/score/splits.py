"""The figures scored apart from the headline, as rows: holdout strata and the cut-off split.

``score`` prints them and the report renders them from the same rows, so both say the
same thing in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .result import CutoffScore, DifferenceFigure, GroupScore, MetricValue

__all__ = ["SPLIT_METRICS", "SplitRow", "split_difference", "split_rows"]

#: The figures shown for each part: enough to compare a part with the headline.
SPLIT_METRICS = ("defect_recall", "false_alarm_rate", "precision")


@dataclass(frozen=True)
class SplitRow:
    """One part of the cases, scored on its own."""

    label: str
    """What the part is, with its case count ("natural (holdout, 12 cases)")."""
    kind: str
    """``holdout``, ``before`` or ``after``."""
    metrics: Mapping[str, MetricValue]
    """``SPLIT_METRICS`` by name, as ``score`` computed them."""


def split_rows(holdout: Mapping[str, GroupScore] | None, cutoff: CutoffScore | None) -> list[SplitRow]:
    """A condition's holdout strata, then the parts before and from the cut-off date."""
    rows = [SplitRow(f"{stratum} (holdout, {_cases(part.cases)})", "holdout",
                     {m: part.metrics[m] for m in SPLIT_METRICS})
            for stratum, part in (holdout or {}).items()]  # fmt: skip
    if cutoff:
        day = cutoff.date[:10]
        rows.append(SplitRow(f"before {day} ({_cases(cutoff.before.cases)})", "before",
                             {m: cutoff.before.metrics[m] for m in SPLIT_METRICS}))  # fmt: skip
        rows.append(SplitRow(f"from {day} on ({_cases(cutoff.after.cases)})", "after",
                             {m: cutoff.after.metrics[m] for m in SPLIT_METRICS}))  # fmt: skip
    return rows


def split_difference(cutoff: CutoffScore | None) -> dict[str, DifferenceFigure] | None:
    """After − before per metric (diff, lo, hi; None where a side has no denominator)."""
    if not cutoff:
        return None
    return {m: cutoff.difference.metrics[m] for m in SPLIT_METRICS}


def _cases(n: int) -> str:
    return f"{n} case" if n == 1 else f"{n} cases"
