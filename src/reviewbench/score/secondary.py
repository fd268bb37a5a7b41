"""Judge labels as a declared secondary analysis, never primary authority.

A judge may serve a declared secondary analysis or aid triage; people keep final authority
over what is true in the benchmark. The default gates grant nothing above triage
without people's labels (``min_evidence = "human"``); a condition whose figures rest on a
calibrated judge gets, beside its decision, the decision those figures would earn if the
judge's labels counted as people's: reported, granting nothing.
"""

from __future__ import annotations

from typing import Any

from ..config.gates import Gates
from ..records import Evidence

__all__ = ["NO_AUTHORITY", "judge_gates", "judge_secondary"]

#: What a secondary analysis permits, whatever its tier.
NO_AUTHORITY = "none: a secondary analysis on judge labels grants no authority"


def judge_gates(gates: Gates, evidence: Evidence) -> Gates | None:
    """``gates`` with every tier that needs people's labels taking a judge's, when the
    condition's evidence is a judge's; None when there is nothing to add (other evidence,
    or no tier asks for people)."""
    if evidence is not Evidence.JUDGE or not any(t.min_evidence is Evidence.HUMAN for t in gates.tier):
        return None
    tiers = [t.model_copy(update={"min_evidence": Evidence.JUDGE}) if t.min_evidence is Evidence.HUMAN else t
             for t in gates.tier]  # fmt: skip
    return gates.model_copy(update={"tier": tiers})


def judge_secondary(decision: dict[str, Any]) -> dict[str, Any]:
    """The secondary analysis's record (``ConditionScore.judge_secondary``) from the decision
    :func:`judge_gates` gave: its tier and status, what that tier would permit, no authority."""
    return {"analysis": "judge labels counted as people's", "tier": decision["tier"], "status": decision["status"],
            "would_be": decision["authority"], "authority": NO_AUTHORITY, "reason": decision["reason"]}  # fmt: skip
