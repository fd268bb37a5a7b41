"""Calibration baselines never earn a tier, whatever their numbers.

``silent``, ``flag_all`` and the probes (``CALIBRATION_KINDS``) are there to bracket the
metrics and to test the benchmark's own matching: a probe's remarks never describe a
defect, so figures good enough to pass the gates say the corpus or the matching can be
gamed, not that the reviewer can be trusted. Their decision is taken by the gates as for
any condition, then a grant (or "needs labels", which labels could turn into one) becomes
the fallback, ``not_earned``, with the reason; a veto or "insufficient evidence" stands.
"""

from __future__ import annotations

from typing import Any

from ..config.gates import Gates
from ..config.reviewers import CALIBRATION_KINDS
from .recorded import RecordedExperiment

__all__ = ["calibration_kind", "never_earned"]


def calibration_kind(experiment: RecordedExperiment, name: str) -> str | None:
    """The reviewer kind of condition ``name`` when it is a calibration baseline, else None."""
    condition = experiment.find(name)
    kind = condition.kind if condition else None
    return kind if kind in CALIBRATION_KINDS else None


def never_earned(gates: Gates, decision: dict[str, Any], kind: str | None) -> dict[str, Any]:
    """``decision`` unless a calibration baseline (``kind``) was granted a tier or may be; a
    vetoed baseline's authority says why in terms of the baseline (it has no prompt to tighten)."""
    if kind is not None and decision["status"] == "vetoed":
        return {**decision, "authority": f"nothing: {kind} is a calibration baseline, there to bracket the "
                                         f"metrics; veto {decision['tier']} holds"}  # fmt: skip
    if kind is None or decision["status"] not in ("granted", "needs_labels"):
        return decision
    fallback = gates.fallback
    # Every tier's uses are not permitted, as gates.decide lists them for the fallback.
    tiers = [p for t in gates.tier for p in t.permitted]
    not_permitted = [*fallback.not_permitted, *tiers, *gates.never_permitted]
    not_permitted += [p for p in [*tiers, *fallback.permitted] if p not in fallback.permitted]
    gated = "granted " + decision["tier"] if decision["status"] == "granted" else "needs labels"
    return {
        **decision,
        "authority": fallback.authority or fallback.name,
        "tier": fallback.name,
        "status": "not_earned",
        "labels_needed": 0,
        "permitted": list(fallback.permitted),
        "not_permitted": list(dict.fromkeys(not_permitted)),
        "reason": f"a calibration baseline ({kind}) never earns a tier (its gates alone: {gated})",
    }
