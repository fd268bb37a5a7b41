"""Exclusions in scoring: the figures with the log applied, and without it beside them.

``RUNDIR/exclusions.jsonl`` (``store/exclusions.py``) names runs and cases left out, each
with a reason and a name. Scoring leaves them out of every figure and every count, and
scores the run directory once more with nothing left out: each condition's headline
recall, false-alarm rate and decision without the exclusions, and whether the decision
changes between the two, so that an exclusion can never quietly decide it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..store.exclusions import Exclusion, ExclusionKind
from .unclear import decision_summary

if TYPE_CHECKING:
    from .result import ConditionScore

__all__ = ["SHOWN", "exclusion_summary", "excluded_ids"]

#: The figures shown without the exclusions (completed-run analysis, as the headline).
SHOWN = ("defect_recall", "false_alarm_rate")


def excluded_ids(log: list[Exclusion]) -> tuple[frozenset[str], frozenset[str]]:
    """The run ids and the case ids the log leaves out."""
    runs = frozenset(e.id for e in log if e.kind is ExclusionKind.RUN)
    return runs, frozenset(e.id for e in log if e.kind is ExclusionKind.CASE)


def exclusion_summary(log: list[Exclusion], conditions: dict[str, dict[str, Any]],
                      without: Mapping[str, ConditionScore]) -> dict[str, Any]:  # fmt: skip
    """``ScoreResult.exclusions``: the log, what it leaves out, and per condition of
    ``without`` (the conditions scored with nothing left out) its figures and decision
    beside the decision in ``conditions`` (this result's)."""
    runs, cases = excluded_ids(log)
    beside = {}
    for name, other in without.items():
        summary = decision_summary(other.decision.model_dump(mode="json"))
        here = conditions.get(name)
        changes = here is None or decision_summary(_plain(here["decision"])) != summary
        beside[name] = {**{m: other.metrics[m].model_dump(mode="json", by_alias=True, exclude_unset=True)
                           for m in SHOWN},
                        "decision": summary, "decision_changes": changes}  # fmt: skip
    return {"log": [e.model_dump(mode="json") for e in log], "runs": sorted(runs), "cases": sorted(cases),
            "without": beside}  # fmt: skip


def _plain(decision: dict[str, Any]) -> dict[str, Any]:
    status = decision["status"]
    return {**decision, "status": getattr(status, "value", status)}
