"""What the labels say, per condition: counts by class, people's precision, actionability,
triage minutes, agreement and calibration (the data of the report's labels section, and
the ``labels`` block every condition's score carries)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store.runs import RUNS_DB, RunStore
from .figures import LabelledPrecision, labelled_precision
from .overrides import judge_verdicts
from .people import PeopleTime, ProfileSummary, people_time, profile_summary
from .records import ACTIONABILITY_FIELDS, LabelClass
from .resolve import PairAgreement, agreement, verdicts_from
from .stats import ActionabilityRate, actionability_rate
from .store import LABELS_DB, LabelStore, Role

__all__ = ["ConditionLabels", "LabelsView", "label_figures", "labels_view", "triage_minutes_by_run"]


@dataclass(frozen=True)
class ConditionLabels:
    """What people (and a calibrated judge) said about one condition's comments."""

    name: str
    comments: int
    human: int
    judge: int
    by_class: dict[str, int]
    actionability: ActionabilityRate
    triage_median: float | None
    triage_q1: float | None
    triage_q3: float | None
    runs_timed: int
    precision: LabelledPrecision | None = None
    """Precision over the labelled comments (unclear and duplicates beside it)."""
    scored_unclear: Any = None
    """The score's ``UnclearSensitivity`` of this condition (``score/unclear.py``): its
    precision with every unclear comment false, then true, and the registered decision
    re-run at each bound. None when the score counted no unclear comment."""

    @property
    def automatic(self) -> int:
        return self.comments - self.human - self.judge


@dataclass(frozen=True)
class LabelsView:
    """Everything the report's labels section shows."""

    pairs: list[PairAgreement]
    adjudicated: int
    adjudication_minutes: float
    disputed: int
    conditions: list[ConditionLabels]
    triage_by_case: dict[str, dict[str, float]]
    """case id → condition → rater minutes (summed over the case's runs of that condition)."""
    calibration: dict[str, Any] | None
    fields: tuple[str, ...] = field(default=ACTIONABILITY_FIELDS)
    profiles: ProfileSummary | None = None
    """The raters' declared profiles, counted over people."""
    people: PeopleTime | None = None
    """Minutes per rater and adjudicator, and the adjudicators' extra share."""


def _quartiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return statistics.median(values), q1, q3


def _run_minutes(store: LabelStore) -> dict[tuple[str, str], float]:
    """(run id, case id) → rater minutes on its comments, summed over raters (a label of
    identical comments of several runs counts its time in each run)."""
    claims = store.claim_sources()
    out: dict[tuple[str, str], float] = {}
    for labels in store.latest(Role.RATER).values():
        for key, label in labels.items():
            if label.row.triage_s is None:
                continue
            for ref in {(ref.run_id, ref.case_id) for ref in claims.get(key, [])}:
                out[ref] = out.get(ref, 0.0) + label.row.triage_s / 60
    return out


def triage_minutes_by_run(rundir: Path) -> dict[str, float]:
    """Rater minutes per run (summed over raters and the run's comments); empty without labels.

    Raises:
        LabelChainBroken: a label row was edited, deleted or inserted by hand.
    """
    if not (rundir / LABELS_DB).is_file():
        return {}
    with LabelStore(rundir) as store:
        store.verify_chain()
        return {run_id: round(m, 4) for (run_id, _), m in sorted(_run_minutes(store).items())}


def labels_view(rundir: Path, conditions: list[str] | None = None, *, resamples: int = 1000,
                unclear: Mapping[str, Any] | None = None) -> LabelsView | None:  # fmt: skip
    """The labels section's data, or None when ``rundir`` has no labels.

    ``unclear``: per condition, the score's unclear sensitivity (``ConditionScore.unclear``;
    the report's ``ConditionView.unclear``), whose decision flag the section shows.
    """
    if not (rundir / LABELS_DB).is_file():
        return None
    store_runs = RunStore(rundir / RUNS_DB)
    try:
        condition_of = {r.run_id: r.condition for r in store_runs.runs()}
        comments_of: dict[str, int] = {}
        for run_id, count in store_runs.db.execute("SELECT run_id, COUNT(*) FROM findings GROUP BY run_id"):
            name = condition_of.get(run_id)
            if name is not None:
                comments_of[name] = comments_of.get(name, 0) + count
    finally:
        store_runs.close()
    with LabelStore(rundir) as store:
        if not store.rows(probe=None):
            return None
        store.verify_chain()
        human = verdicts_from(store)
        judged = judge_verdicts(store, {v.comment_id for v in human})
        report = agreement(store, resamples=resamples)
        per_run = _run_minutes(store)
        minutes: dict[tuple[str, str], float] = {}  # (condition, run) → minutes
        by_case: dict[str, dict[str, float]] = {}
        for (run_id, case_id), spent in sorted(per_run.items()):
            name = condition_of.get(run_id, "?")
            minutes[(name, run_id)] = minutes.get((name, run_id), 0.0) + spent
            per = by_case.setdefault(case_id, {})
            per[name] = round(per.get(name, 0.0) + spent, 4)
        latest = store.latest_calibration()
        profiles, people = profile_summary(store), people_time(store)
    names = conditions or sorted(comments_of)
    views = []
    for name in names:
        hv = [v for v in human if condition_of.get(v.run_id) == name]
        jv = [v for v in judged if condition_of.get(v.run_id) == name]
        by_class = {c.value: sum(v.label_class is c for v in hv + jv) for c in LabelClass}
        true = [v.fields for v in hv if v.label_class is LabelClass.TRUE_FINDING and v.fields is not None]
        run_minutes = sorted(m for (cond, _), m in minutes.items() if cond == name)
        median, q1, q3 = _quartiles(run_minutes)
        precision = labelled_precision(hv + jv)
        views.append(ConditionLabels(name=name, comments=comments_of.get(name, 0), human=len(hv), judge=len(jv),
                                     by_class=by_class, actionability=actionability_rate(true), triage_median=median,
                                     triage_q1=q1, triage_q3=q3, runs_timed=len(run_minutes), precision=precision,
                                     scored_unclear=(unclear or {}).get(name)))  # fmt: skip
    return LabelsView(pairs=report.pairs, adjudicated=report.adjudicated,
                      adjudication_minutes=round(report.adjudication_s / 60, 2), disputed=report.disputed,
                      conditions=views, triage_by_case=dict(sorted(by_case.items())),
                      calibration=latest[1] if latest else None, profiles=profiles, people=people)  # fmt: skip


def label_figures(rundir: Path) -> dict[str, dict[str, Any]]:
    """Per condition, the score's ``labels`` block (actionability, triage minutes); empty
    without labels."""
    view = labels_view(rundir, resamples=0)
    if view is None:
        return {}
    return {c.name: {"actionability_rate": c.actionability.as_dict(),
                     "triage_minutes": {"median": c.triage_median, "q1": c.triage_q1, "q3": c.triage_q3,
                                        "runs": c.runs_timed}}
            for c in view.conditions}  # fmt: skip
