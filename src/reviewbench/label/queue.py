"""What to label first (issue 14, item 7).

A claim needs people until its label is final: disputed claims wait for an adjudicator,
claims with one rater wait for a second, unlabelled claims for two. Claims whose label can
change a registered decision come first: ``label/settle.py`` names them (the comments
between the identification bounds of an unsettled gate) through ``priority``; then
disputed, single-rated and unlabelled claims, claims on defect cases before claims on
controls. Without ``priority``, claims on defect cases count as decisive. Ties keep a
per-queue random order.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from ..evidence.resolve import ClaimStatus, _adjudications, claim_status
from ..evidence.store import LabelStore, Role
from ..store.runs import RUNS_DB, RunStore

__all__ = ["QueueItem", "label_queue", "remaining_by_condition"]

_WAITING = {ClaimStatus.DISPUTED: 0, ClaimStatus.SINGLE: 1, ClaimStatus.UNLABELLED: 2}


@dataclass(frozen=True)
class QueueItem:
    """One claim still waiting for people."""

    comment_id: str
    """Opaque, as in the packet."""
    part: int
    packet_id: str
    status: ClaimStatus
    decisive: bool
    """Its label can change a registered decision."""
    labels_needed: int
    """Rater labels still missing (an adjudication counts as one)."""

    def as_dict(self) -> dict:
        return {"comment_id": self.comment_id, "part": self.part, "packet_id": self.packet_id,
                "status": self.status.value, "decisive": self.decisive, "labels_needed": self.labels_needed}  # fmt: skip


def label_queue(store: LabelStore, priority: Collection[str] | None = None,
                raters_needed: int = 2) -> tuple[list[QueueItem], Counter]:  # fmt: skip
    """Claims waiting for people, most useful first, and how many are in each state.

    Args:
        priority: run-store comment ids (``"<run_id>:<index>"``) whose label can change a
            decision; None to fall back on "defect cases first".
    """
    packet_set = store.packets()
    defect_cases = {g.case_id for g in packet_set.corpus.gold if g.expect_finding}
    raters = store.latest(Role.RATER)
    adjudicated = _adjudications(store)
    secret = store.secret()
    items: list[tuple[tuple[bool, int, bool, str], QueueItem]] = []
    counts: Counter[str] = Counter()
    for key, refs in store.claim_sources().items():
        ref = refs[0]
        status = claim_status(raters, adjudicated, key)
        counts[status.value] += 1
        if status not in _WAITING:
            continue
        have = sum(1 for labels in raters.values() if key in labels)
        decisive = (any(r.source_id in priority for r in refs) if priority is not None
                    else ref.case_id in defect_cases)  # fmt: skip
        needed = 1 if status is ClaimStatus.DISPUTED else max(raters_needed - have, 0)
        tie = hashlib.sha256(secret + f"queue\0{key[0]}\0{key[1]}".encode()).hexdigest()
        items.append(((not decisive, _WAITING[status], ref.case_id not in defect_cases, tie),
                      QueueItem(key[0], key[1], ref.packet_id, status, decisive, needed)))  # fmt: skip
    items.sort(key=lambda item: item[0])
    return [item for _, item in items], counts


def remaining_by_condition(store: LabelStore, items: list[QueueItem]) -> dict[str, dict[str, int]]:
    """Per condition, the claims still waiting and the labels they need (a condition's
    figures rest on people alone once its count is zero)."""
    runs = RunStore(store.rundir / RUNS_DB)
    try:
        condition_of = {r.run_id: r.condition for r in runs.runs()}
    finally:
        runs.close()
    claims = store.claim_sources()
    out: dict[str, dict[str, int]] = {name: {"claims": 0, "labels_needed": 0} for name in sorted(set(condition_of.values()))}
    for item in items:
        # A claim shared by identical comments of several conditions waits for each of them.
        names = {condition_of.get(ref.run_id) for ref in claims.get((item.comment_id, item.part), [])}
        for name in sorted(n for n in names if n is not None):
            out[name]["claims"] += 1
            out[name]["labels_needed"] += item.labels_needed
    return out
