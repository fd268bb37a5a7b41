"""Which evidence each figure rests on: people, a calibrated judge, or automatic matching.

A label changes a figure only through the comments it counts: ``defect_recall`` through
the comments on defect cases, ``fp_per_clean_case`` through those on controls, and so on.
A figure rests on the *lowest* evidence among those comments (one comment still on
automatic matching makes it automatic), and the counts say how far labelling has come.
Figures no label can change (where comments land, whether a run said anything, whether it
completed) rest on automatic matching by construction: ``judged`` is false for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .registry import RATE_METRICS
from .verdicts import Evidence

if TYPE_CHECKING:
    from .result import MetricEvidence

__all__ = ["EVIDENCE_WORDS", "POPULATIONS", "case_kind", "describe", "metric_evidence"]

#: How the report and the terminal name each level.
EVIDENCE_WORDS = {Evidence.HUMAN: "people", Evidence.JUDGE: "judge", Evidence.AUTOMATIC: "automatic"}

_DEFECT, _CONTROL, _VARIANT = "defect", "control", "variant"
#: The comments whose labels can change each metric (by the kind of case they are on).
POPULATIONS: dict[str, tuple[str, ...]] = {
    "defect_recall": (_DEFECT,),
    "recall_any": (_DEFECT,),
    "pair_accuracy": (_DEFECT,),
    "recall_all": (_DEFECT,),
    "recall_k_of_n": (_DEFECT,),
    "severity_match": (_DEFECT,),
    "severity_match_all": (_DEFECT,),
    "weighted_points": (_DEFECT,),
    "precision": (_DEFECT, _CONTROL),
    "located_precision": (_DEFECT, _CONTROL),
    "duplicate_rate": (_DEFECT, _CONTROL),
    "fp_per_clean_case": (_CONTROL,),
    "rename_stability": (_DEFECT, _VARIANT),
    "rename_stable_all": (_VARIANT,),
}


def case_kind(control: bool, variant: bool) -> str:
    return _CONTROL if control else _VARIANT if variant else _DEFECT


def metric_evidence(counts: Mapping[str, Counter[str]]) -> dict[str, dict[str, Any]]:
    """Per rate metric: ``{"level", "judged", "human", "judge", "automatic"}``.

    Args:
        counts: per kind of case (defect, control, variant), the evidence level of every
            scored comment on it.
    """
    out = {}
    for metric in RATE_METRICS:
        kinds = POPULATIONS.get(metric, ())
        total: Counter[str] = Counter()
        for kind in kinds:
            total.update(counts.get(kind, Counter()))
        present = [Evidence(level) for level, n in total.items() if n]
        level = min(present, key=lambda e: e.rank) if present else Evidence.AUTOMATIC
        out[metric] = {"level": level.value, "judged": bool(kinds),
                       **{e.value: total.get(e.value, 0) for e in Evidence}}  # fmt: skip
    return out


def describe(evidence: MetricEvidence) -> str:
    """One metric's evidence in words: ``people``, ``judge``, ``automatic``, or, part-way
    through labelling, ``automatic (people 3, judge 1 of 5)``; ``automatic (matching)``
    when no label can change the figure."""
    if not evidence.judged:
        return "automatic (matching)"
    level = evidence.level
    counts = {Evidence.HUMAN: evidence.human, Evidence.JUDGE: evidence.judge, Evidence.AUTOMATIC: evidence.automatic}
    total = sum(counts.values())
    labelled = [f"{EVIDENCE_WORDS[e]} {counts[e]}" for e in (Evidence.HUMAN, Evidence.JUDGE)
                if counts[e] and e is not level]  # fmt: skip
    word = EVIDENCE_WORDS[level]
    return f"{word} ({', '.join(labelled)} of {total})" if labelled else word
