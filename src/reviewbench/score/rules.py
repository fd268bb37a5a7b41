"""Per-rule recall: the figures of ``defect_recall@rule:ID`` and its located bound.

A defect with a ``rule_id`` is an opportunity for a condition only where a guidance file
that applied to the run covers its path (``metrics.rule_eligible``); elsewhere it is the
corpus's or the rules' scoping defect for that condition, counted as ``not_eligible``,
never a miss. Both figures share that denominator, so a gate on either (``score/gates.py``)
is decided on eligible pairs only, identified as the low end and located as the high one,
as ``defect_recall`` and ``located_recall`` are. Intervals are Wilson's over the pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .gates import wilson

__all__ = ["rule_figures"]


def _figure(num: int, den: int, not_eligible: int) -> dict[str, Any]:
    low, high = wilson(num, den) if den else (None, None)
    return {"value": round(num / den, 6) if den else None, "num": num, "den": den,
            "lo": None if low is None else round(low, 6), "hi": None if high is None else round(high, 6),
            "not_eligible": not_eligible}  # fmt: skip


def rule_figures(rules: Mapping[str, Sequence[int]]) -> dict[str, dict[str, Any]]:
    """``defect_recall@rule:ID`` and ``located_recall@rule:ID`` per rule, from a tally's
    ``rules`` cells: [identified, eligible, not eligible, located]."""
    out: dict[str, dict[str, Any]] = {}
    for rule, (found, eligible, uncovered, located) in sorted(rules.items()):
        out[f"defect_recall@rule:{rule}"] = _figure(found, eligible, uncovered)
        out[f"located_recall@rule:{rule}"] = _figure(located, eligible, uncovered)
    return out
