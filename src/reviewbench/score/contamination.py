"""Valid incidental findings: real defects none of the gold's, reported apart.

A claim people (or a calibrated judge) label ``valid_incidental`` is a true finding of a
defect the gold does not hold. It is never added to a recall denominator (the gold is what
was registered), nor counted as a false positive. Two things follow from it:

- each incidental defect gets an id of its own, ``CASE#incidental-N`` (one per distinct
  description on a case, numbered in the order of the descriptions), listed with the
  comments and conditions that reported it;
- a clean case (a control or mirror) with one is **contaminated**: what was meant to be a
  change with nothing to find has something to find. The clean-set figures (false alarms,
  false positives per clean case, precision) and the decision are shown again without the
  contaminated clean cases, beside the registered ones, which keep them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .metrics import CaseInfo
from .verdicts import Evidence, FindingVerdict

__all__ = ["CONTAMINATION_SHOWN", "contaminated_cases", "incidental_defects"]

#: The figures shown without the contaminated clean cases.
CONTAMINATION_SHOWN = ("false_alarm_rate", "fp_per_clean_case", "precision")


def _incidental(verdicts: Iterable[FindingVerdict], cases: Mapping[str, CaseInfo]) -> Iterable[FindingVerdict]:
    return (v for v in verdicts if v.scored and v.incidental and v.case_id in cases)


def contaminated_cases(verdicts: Iterable[FindingVerdict], cases: Mapping[str, CaseInfo]) -> frozenset[str]:
    """The clean cases of ``cases`` on which some scored comment holds a valid incidental claim."""
    return frozenset(v.case_id for v in _incidental(verdicts, cases) if cases[v.case_id].control)


def _normal(note: str) -> str:
    return " ".join(note.casefold().split())


def incidental_defects(verdicts: Iterable[FindingVerdict], cases: Mapping[str, CaseInfo]) -> list[dict[str, Any]]:
    """Every incidental defect of the analysed ``cases``, by case, with its own id."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for v in _incidental(verdicts, cases):
        notes = (v.claims.incidental_notes if v.claims else []) or [""]
        for note in dict.fromkeys(notes):  # one comment reports each description once
            entry = found.setdefault(v.case_id, {}).setdefault(_normal(note), {
                "note": note, "comments": [], "conditions": {}, "levels": set()})
            entry["comments"].append(v.comment_id)
            entry["conditions"][v.condition] = entry["conditions"].get(v.condition, 0) + 1
            entry["levels"].add(v.evidence)
    out = []
    for case_id, by_note in sorted(found.items()):
        case = cases[case_id]
        for n, (_, entry) in enumerate(sorted(by_note.items()), start=1):
            levels = entry.pop("levels")
            out.append({"id": f"{case_id}#incidental-{n}", "case_id": case_id, "stratum": case.stratum,
                        "clean": case.control, **entry, "conditions": dict(sorted(entry["conditions"].items())),
                        "evidence": min(levels, key=lambda e: Evidence(e).rank)})  # fmt: skip
    return out
