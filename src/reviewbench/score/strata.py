"""Holdout strata: scored on their own, never pooled into headline figures.

Natural cases (``mine --natural``) are the change as it was reviewed when the bug went in:
a different population from reversed fixes and mutations, older and noisier. They are reported beside the headline, never inside
it, so they cannot move the decision. So are cases gold marks ``exploratory`` (with their
mirrors and rename variants), whatever their stratum: they form one group of their own,
``exploratory``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..store.runs import RunRow
from .metrics import CaseInfo, RunOutcome, tally_condition
from .subsets import group_metrics

__all__ = ["EXPLORATORY", "HOLDOUT_STRATA", "holdout_scores", "split_holdout"]

#: Strata kept out of headline metrics, gates and comparisons.
HOLDOUT_STRATA = frozenset({"natural"})
#: The group of the cases gold marks exploratory, beside the holdout strata.
EXPLORATORY = "exploratory"


def _held(case: CaseInfo) -> bool:
    return case.stratum in HOLDOUT_STRATA or case.exploratory


def split_holdout(cases: Mapping[str, CaseInfo]) -> tuple[dict[str, CaseInfo], dict[str, CaseInfo]]:
    """(headline cases, holdout cases). A rename variant follows its original's stratum."""
    headline = {k: c for k, c in cases.items() if not _held(c)}
    holdout = {k: c for k, c in cases.items() if _held(c)}
    return headline, holdout


def holdout_scores(runs: Sequence[RunRow], holdout: Mapping[str, CaseInfo], outcomes: Mapping[str, RunOutcome],
                   resamples: int, seed: int, end_to_end: bool = False, k: int | None = None) -> dict[str, Any]:  # fmt: skip
    """``{stratum: {"cases", "metrics"}}`` of one condition's runs on the holdout cases
    (``end_to_end``: counted as the end-to-end analysis counts, failed runs included)."""
    if not holdout:
        return {}
    tally = tally_condition(runs, dict(holdout), dict(outcomes), end_to_end, k=k)
    groups: dict[str, set[str]] = {}
    for case in holdout.values():
        groups.setdefault(EXPLORATORY if case.exploratory else case.stratum, set()).add(case.cluster)
    return group_metrics(tally, dict(sorted(groups.items())), resamples, seed)
