"""The "Human labels" section of the HTML report (issue 14, item 9).

Built from the run store (which condition each run belongs to) and ``labels.sqlite``; the
report shows it only when the run directory has labels. Rendered here, autoescaped, as an
HTML fragment with no script and no style attribute (the report's Content Security Policy
allows neither): the per-case triage dot plot is inline SVG with presentation attributes.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..evidence.figures import LabelledPrecision, labelled_precision
from ..evidence.overrides import judge_verdicts
from ..evidence.records import ACTIONABILITY_FIELDS, LabelClass
from ..evidence.resolve import PairAgreement, agreement, verdicts_from
from ..evidence.stats import ActionabilityRate, actionability_rate
from ..evidence.store import LABELS_DB, LabelStore, Role
from ..store.runs import RUNS_DB, RunStore

__all__ = ["ConditionLabels", "LabelsView", "label_figures", "labels_section", "labels_view", "render_labels_section"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


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
    """Seed 003's precision over the labelled comments (unclear and duplicates beside it)."""
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
    calibration: dict | None
    fields: tuple[str, ...] = field(default=ACTIONABILITY_FIELDS)


def _quartiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return statistics.median(values), q1, q3


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
        claims = store.claims()
        minutes: dict[tuple[str, str], float] = {}  # (condition, run) → minutes
        by_case: dict[str, dict[str, float]] = {}
        for labels in store.latest(Role.RATER).values():
            for key, label in labels.items():
                ref = claims.get(key)
                if ref is None or label.row.triage_s is None:
                    continue
                name = condition_of.get(ref.run_id, "?")
                minutes[(name, ref.run_id)] = minutes.get((name, ref.run_id), 0.0) + label.row.triage_s / 60
                per = by_case.setdefault(ref.case_id, {})
                per[name] = round(per.get(name, 0.0) + label.row.triage_s / 60, 4)
        latest = store.latest_calibration()
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
                      calibration=latest[1] if latest else None)  # fmt: skip


def _dot_plot(view: LabelsView) -> Markup:
    """One row per case, one dot per condition at its triage minutes (inline SVG)."""
    cases = list(view.triage_by_case.items())
    if not cases:
        return Markup("")
    names = [c.name for c in view.conditions]
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    top = max((m for per in view.triage_by_case.values() for m in per.values()), default=1.0) or 1.0
    left, width, row = 150, 420, 16
    height = row * len(cases) + 40
    esc = Markup.escape
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" '
              f'role="img" aria-label="rater minutes per case and condition">')]  # fmt: skip
    for i, (case_id, per) in enumerate(cases):
        y = 20 + i * row
        parts.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end" font-size="10">{esc(case_id)}</text>')
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{y}" y2="{y}" stroke="#eee"/>')
        xs = [(left + width * m / top, name) for name, m in per.items() if name in colour]
        if len(xs) > 1:
            lo, hi = min(x for x, _ in xs), max(x for x, _ in xs)
            parts.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y}" y2="{y}" stroke="#999"/>')
        for x, name in xs:
            parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="4" fill="{colour[name]}">'
                         f'<title>{esc(case_id)} · {esc(name)}: {per[name]:.2f} min</title></circle>')  # fmt: skip
    axis = 20 + len(cases) * row
    parts.append(f'<text x="{left}" y="{axis + 12}" font-size="10">0</text>')
    parts.append(f'<text x="{left + width}" y="{axis + 12}" font-size="10" text-anchor="end">{top:.1f} min</text>')
    parts.append("</svg>")
    legend = " ".join(f'<svg width="10" height="10"><circle cx="5" cy="5" r="4" fill="{colour[n]}"/></svg> {esc(n)}'
                      for n in names)  # fmt: skip
    return Markup("".join(parts)) + Markup(f'<p class="small">{legend}</p>')


def render_labels_section(view: LabelsView | None) -> Markup:
    """The section as an HTML fragment ("" when there are no labels)."""
    if view is None:
        return Markup("")
    env = jinja2.Environment(loader=jinja2.PackageLoader("reviewbench.label", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    return Markup(env.get_template("report_section.html").render(view=view, dots=_dot_plot(view)))


def label_figures(rundir: Path) -> dict[str, dict]:
    """Per condition, the score's ``labels`` block (actionability, triage minutes); empty
    without labels."""
    view = labels_view(rundir, resamples=0)
    if view is None:
        return {}
    return {c.name: {"actionability_rate": c.actionability.as_dict(),
                     "triage_minutes": {"median": c.triage_median, "q1": c.triage_q1, "q3": c.triage_q3,
                                        "runs": c.runs_timed}}
            for c in view.conditions}  # fmt: skip


def labels_section(rundir: Path, conditions: list[str] | None = None, *, resamples: int = 1000,
                   unclear: Mapping[str, Any] | None = None) -> Markup:  # fmt: skip
    """The report's labels section for ``rundir`` ("" without labels): what the report
    command and the demo pass to ``write_html(..., sections=...)``."""
    return render_labels_section(labels_view(rundir, conditions, resamples=resamples, unclear=unclear))
