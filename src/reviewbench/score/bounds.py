"""What labels can still change: the open (run, defect) pairs between the identification bounds.

On automatic evidence a bounded metric (``defect_recall``, ``precision``) lies between its
identified value and its located value. Once people (or a calibrated judge) have labelled
some comments the located value is no longer what labels could reach: a located comment
labelled a false positive stays located (``located_recall`` is where comments land) but can
never identify its defect. What labels can still add is one identification per **open
pair**: a (run, defect) pair that some comment is located at, that nothing identifies yet,
and at which at least one comment still has automatic evidence only. Those comments are the
ones whose label can move the metric; nothing else can, as the registered bounds read it
(an automatic identification counts as found, as the gates count it).

The gates test a bounded metric against its *attainable* upper bound, the identified count
plus the open pairs over the same denominator, capped by the located bound
(``score/gates.py``); ``label queue`` names the open comments, gate by gate. Per rule
(``defect_recall@rule:ID``) an open pair counts only where its defect has that rule and is
eligible for its run (the run's guidance covers the defect's path: ``metrics.rule_eligible``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..records import RunRow
from .metrics import CaseInfo, rule_eligible
from .verdicts import Evidence, FindingVerdict

__all__ = ["BOUNDED", "OpenPair", "attainable", "open_pairs"]

#: Bounded metrics: the identified figure named, then where findings land (what labels could reach).
BOUNDED = {"defect_recall": "located_recall", "precision": "located_precision"}


@dataclass(frozen=True)
class OpenPair:
    """A (run, defect) pair a label could still turn into an identification."""

    condition: str
    run_id: str
    case_id: str
    defect_id: str
    stratum: str
    comments: tuple[str, ...]
    """``"<run_id>:<index>"`` of the comments located there with automatic evidence only."""
    rule: str | None = None
    """The defect's ``rule_id`` when the pair counts in that rule's recall (eligible for its run)."""


def _rule_of(case: CaseInfo, defect_id: str, run: RunRow | None) -> str | None:
    defect = next((d for d in case.defects if d.defect_id == defect_id), None)
    if defect is None or not defect.rule_id or run is None or not rule_eligible(run, defect):
        return None
    return defect.rule_id


def open_pairs(verdicts: Iterable[FindingVerdict], cases: Mapping[str, CaseInfo],
               runs: Mapping[str, RunRow] | None = None) -> list[OpenPair]:  # fmt: skip
    """Every open pair among scored verdicts on the original defect cases of ``cases``.

    Mirrors ``metrics.run_outcome``: a pair is identified when a located comment that is not
    a false positive identifies it (a duplicate counts). ``runs`` (by id) tells which pairs
    count in a rule's recall; without it, none does.
    """
    located: dict[tuple[str, str], list[FindingVerdict]] = {}
    for v in verdicts:
        case = cases.get(v.case_id)
        if not v.scored or v.defect_id is None or case is None or case.control or case.variant:
            continue
        located.setdefault((v.run_id, v.defect_id), []).append(v)
    out = []
    for (run_id, defect_id), group in located.items():
        if any(v.identified and not v.false_positive for v in group):
            continue
        waiting = tuple(v.comment_id for v in group if v.evidence is Evidence.AUTOMATIC and not v.false_positive)
        if waiting:
            first = group[0]
            case = cases[first.case_id]
            out.append(OpenPair(condition=first.condition, run_id=run_id, case_id=first.case_id, defect_id=defect_id,
                                stratum=case.stratum, comments=waiting,
                                rule=_rule_of(case, defect_id, (runs or {}).get(run_id))))  # fmt: skip
    out.sort(key=lambda p: (p.condition, p.case_id, p.run_id, p.defect_id))
    return out


def in_metric(pair: OpenPair, metric: str) -> bool:
    """Whether ``pair`` counts in ``metric`` (``name``, ``name@stratum`` or ``name@rule:ID``)."""
    _, _, stratum = metric.partition("@")
    if stratum.startswith("rule:"):
        return pair.rule is not None and pair.rule == stratum[len("rule:"):]
    return not stratum or pair.stratum == stratum


def attainable(num: float | None, den: float | None, upper: float | None, open_count: int) -> float | None:
    """The highest value labels can still give a bounded metric: (identified + open) / den,
    never above the located bound."""
    if num is None or not den:
        return None
    value = round((num + open_count) / den, 6)
    return value if upper is None else min(value, upper)


def reachable(metric_names: Iterable[str], pairs: Iterable[OpenPair], metrics: Mapping[str, Mapping[str, Any]],
              breakdown: Mapping[str, Any]) -> dict[str, float | None]:  # fmt: skip
    """Per bounded metric name among ``metric_names``, its attainable upper bound for one
    condition (``pairs``: that condition's open pairs; ``metrics``/``breakdown``: its gated
    analysis)."""
    pairs = list(pairs)
    out: dict[str, float | None] = {}
    for name in metric_names:
        base, _, stratum = name.partition("@")
        if base not in BOUNDED:
            continue
        if stratum.startswith("rule:"):  # per rule: the figures sit in metrics under their full names
            lower, upper = metrics.get(name, {}), metrics.get(f"{BOUNDED[base]}@{stratum}", {})
        else:
            table = breakdown.get("stratum", {}).get(stratum, {}) if stratum else metrics
            lower, upper = table.get(base, {}), table.get(BOUNDED[base], {})
        out[name] = attainable(lower.get("num"), lower.get("den"), upper.get("value"),
                               sum(in_metric(p, name) for p in pairs))  # fmt: skip
    return out
