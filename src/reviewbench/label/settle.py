"""How many labels remain before each gate is settled (issue 14, item 7).

Scoring with the labels already in (``evidence.overrides.score_overrides``) gives every gate
check of every condition three values: pass, fail, or — a bounded metric whose identified
bound and attainable upper bound straddle the threshold — unsettled (``score/gates.py``,
``score/bounds.py``). A check is **settled** when it passes or fails whatever the comments
still on automatic evidence turn out to be. An unsettled check can move only through the
open comments of its metric (located at a defect nothing identifies yet); the claims of
those comments still waiting for people, and the rater labels they need, are what remain.
Comparative gates (a paired difference of two conditions) are not counted here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..evidence.packets import corpus_of
from ..evidence.store import LabelStore
from ..score import ScoreOptions, eligible_cases, score_run
from ..score.bounds import in_metric, open_pairs
from ..score.gates import load_gates
from ..score.result import ScoreResult
from ..score.strata import split_holdout
from ..store.runs import RUNS_DB, RunStore
from .queue import QueueItem, label_queue

__all__ = ["CheckSettlement", "GateSettlement", "decisive_comments", "gate_priority", "score_with_labels", "settlement"]


@dataclass(frozen=True)
class CheckSettlement:
    """One condition of a gate (``metric op threshold``) for one experiment condition."""

    metric: str
    op: str
    threshold: float
    lower: float | None
    """The observed value (the identified bound of a bounded metric)."""
    upper: float | None
    """The highest value labels can still give it (bounded metrics only)."""
    outcome: str | None
    """``pass`` or ``fail`` once settled; None while labels can still change it."""
    comments: tuple[str, ...]
    """Reviewer comments (``"<run_id>:<index>"``) whose label can change it (empty when settled)."""

    def as_dict(self) -> dict:
        return {"metric": self.metric, "op": self.op, "threshold": self.threshold, "lower": self.lower,
                "upper": self.upper, "outcome": self.outcome, "comments": len(self.comments)}  # fmt: skip


@dataclass(frozen=True)
class GateSettlement:
    """One gate (a tier or a veto) of one condition, and what labelling it still needs.

    A gate fails once any of its checks fails for good, passes once every check passes for
    good, and is open otherwise; an open gate's claims are those of its open checks.
    """

    condition: str
    gate: str
    kind: str
    """``veto`` or ``tier``."""
    outcome: str | None
    """``pass`` or ``fail`` once settled; None while labels can still change it."""
    checks: tuple[CheckSettlement, ...]
    comments: tuple[str, ...]
    """Comments whose label can still change the gate (empty when settled)."""
    claims: int
    """Claims of those comments still waiting for people."""
    labels_needed: int
    """Rater labels (an adjudication counts as one) those claims need."""
    moot: str | None = None
    """Why the gate cannot change the condition's decision whatever it does (a veto holds)."""

    @property
    def settled(self) -> bool:
        return self.outcome is not None

    def as_dict(self) -> dict:
        return {"condition": self.condition, "gate": self.gate, "kind": self.kind, "settled": self.settled,
                "outcome": self.outcome, "moot": self.moot, "comments": len(self.comments), "claims": self.claims,
                "labels_needed": self.labels_needed, "checks": [c.as_dict() for c in self.checks]}  # fmt: skip


def score_with_labels(rundir: Path, gates: Path | None = None, include_unvalidated: bool | None = None) -> ScoreResult:
    """Score ``rundir`` as ``score`` does (registered rules, or these), its labels overriding
    automatic verdicts (``score_run`` reads them)."""
    return score_run(rundir, ScoreOptions(gates=gates, include_unvalidated=include_unvalidated))


def settlement(result: ScoreResult, store: LabelStore, items: list[QueueItem]) -> list[GateSettlement]:
    """Every (condition, non-comparative gate check), settled or with what remains to label.

    Args:
        result: the score with the labels in (:func:`score_with_labels`).
        items: the label queue (claims still waiting for people).
    """
    corpus = corpus_of(store.rundir)
    include = result.corpus.include_unvalidated
    cases, _ = split_holdout(eligible_cases(corpus, include))
    runs = RunStore(store.rundir / RUNS_DB)
    try:  # which open pairs count in a rule's recall depends on each run's guidance
        by_id = {r.run_id: r for r in runs.runs()}
    finally:
        runs.close()
    pairs = open_pairs(result.verdicts, cases, by_id)
    claims = store.claim_sources()
    waiting: dict[str, list[QueueItem]] = {}
    for item in items:
        for ref in claims.get((item.comment_id, item.part), []):  # every identical copy waits for it
            waiting.setdefault(ref.source_id, []).append(item)
    where = result.analysis.gates
    vetoes = {v.name for v in load_gates(None if where == "built-in" else Path(where))[0].veto}
    out = []
    for name, data in result.conditions.items():
        mine = [p for p in pairs if p.condition == name]
        gates = []
        for gate, checks in data.decision.gates.items():
            settled = []
            for check in checks:
                if check.diff is not None:
                    continue  # comparative: not counted here
                outcome = None if check.passed is None else ("pass" if check.passed else "fail")
                comments: tuple[str, ...] = ()
                if outcome is None:
                    comments = tuple(sorted({c for p in mine if in_metric(p, check.metric) for c in p.comments}))
                settled.append(CheckSettlement(metric=check.metric, op=check.op, threshold=check.threshold,
                                               lower=check.observed, upper=check.upper, outcome=outcome,
                                               comments=comments))  # fmt: skip
            outcomes = [c.outcome for c in settled]
            outcome = "fail" if "fail" in outcomes else ("pass" if all(o == "pass" for o in outcomes) else None)
            comments = () if outcome else tuple(sorted({x for c in settled for x in c.comments}))
            gates.append((gate, settled, outcome, comments))
        holding = next((g for g, _, outcome, _ in gates if g in vetoes and outcome == "pass"), None)
        decision = data.decision
        # Too few cases or controls: no gate can change that; a too-wide interval labels may narrow.
        blocked = decision.status == "insufficient" and "interval" not in (decision.reason or "")
        for gate, settled, outcome, comments in gates:
            moot = f"veto {holding} holds" if holding is not None and gate != holding else None
            if blocked:
                moot = f"insufficient evidence: {decision.reason}"
            # One claim counts once, however many identical comments of this gate share it.
            parts = list({(i.comment_id, i.part): i for c in comments for i in waiting.get(c, [])}.values())
            out.append(GateSettlement(condition=name, gate=gate, kind="veto" if gate in vetoes else "tier",
                                      outcome=outcome, checks=tuple(settled), comments=comments, claims=len(parts),
                                      labels_needed=sum(i.labels_needed for i in parts), moot=moot))  # fmt: skip
    return out


def decisive_comments(settled: list[GateSettlement]) -> set[str]:
    """The comments whose label can still change some gate: the queue's first claims."""
    return {c for s in settled if s.moot is None for c in s.comments}


def gate_priority(rundir: Path, store: LabelStore) -> set[str]:
    """The comments whose label can still change a gate of ``rundir`` (registered gates)."""
    items, _ = label_queue(store)
    return decisive_comments(settlement(score_with_labels(rundir), store, items))
