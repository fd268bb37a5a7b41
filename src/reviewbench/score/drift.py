"""Model drift inside one run: the figures of each model id the endpoint said answered.

An endpoint may route a model name to another model halfway through a run (a new snapshot
behind an alias). Scoring already flags a condition whose completed runs report several
model ids; this module scores the runs of each id apart, with the same case-clustered
intervals, so that a mid-run routing change shows in the numbers, not only in a flag.
The groups answered different runs, not the same ones: they are not paired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..store.runs import RunRow
from .metrics import CaseInfo, RunOutcome, tally_condition
from .subsets import group_metrics

__all__ = ["per_model_scores"]


def per_model_scores(runs: Sequence[RunRow], cases: Mapping[str, CaseInfo], outcomes: Mapping[str, RunOutcome],
                     resamples: int, seed: int, k: int | None = None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """``{model id: {"runs", "cases", "metrics"}}`` over the completed runs each id answered
    (a run without a returned id is in no group)."""
    by_model: dict[str, list[RunRow]] = {}
    for run in runs:
        if run.reviewed and run.model_returned and run.case_id in cases:
            by_model.setdefault(run.model_returned, []).append(run)
    out = {}
    for model, answered in sorted(by_model.items()):
        tally = tally_condition(answered, dict(cases), dict(outcomes), k=k)
        clusters = {cases[r.case_id].cluster for r in answered}
        scored = group_metrics(tally, {model: clusters}, resamples, seed)[model]
        out[model] = {"runs": len(answered), "cases": len({r.case_id for r in answered}), "metrics": scored["metrics"]}
    return out
