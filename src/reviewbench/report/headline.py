"""The headline: one row per condition and one sentence per pair of conditions.

``reviewbench score`` prints it first, the demo prints it, and the report's first screen
shows it, all from the same records built here out of ``score_run``'s result: what a person
reads first cannot differ between the terminal and the page. The figures are those the
gates read (the end-to-end analysis by default: a run that gave no review counts as a
miss on a defect case and a false alarm on a clean one). Paired sentences describe the
difference and its interval after the interpretation pattern it shows ("higher recall for B
with unstable repetition (…)", "inconclusive on this corpus" when the intervals hold 0);
they never name a winner.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..score.result import (
        ConditionScore,
        InspectionSummary,
        MetricValue,
        PairedComparison,
        ScoreResult,
        SeverityBasisFlag,
    )

__all__ = ["LEGEND", "HeadlineRate", "HeadlineRow", "PairSentence", "attempts_line", "headline_rows", "inspection_line", "interpretation",
           "pair_heading", "pair_sentences", "repetition_note", "severity_basis_line"]

#: What the headline's columns count, in words a newcomer can read (terminal and page).
LEGEND = (
    "detection: defects identified (a finding at the defect that says what is wrong: people's labels, else "
    "naming the defect's mirror did not get), of (defect case, run) pairs",
    "false alarms: runs of clean cases (no defect) with any finding",
    "precision: findings credited to a defect, of credited findings and false positives",
    "completed: runs that gave a review, of all attempts",
    "[a–b%]: 95% interval over cases; exact: Clopper–Pearson on the cases (resampling them gave no spread)",
)

_STATUS = {"granted": "granted", "not_earned": "not earned", "vetoed": "vetoed", "insufficient": "insufficient",
           "needs_labels": "needs labels"}  # fmt: skip


def _pct(x: float) -> str:
    """A rate as a whole percentage; a small non-zero rate is never shown as 0."""
    return "<1" if 0 < x < 0.005 else f"{max(x, 0.0) * 100:.0f}"


@dataclass(frozen=True)
class HeadlineRate:
    """One headline figure: num/den, value and its 95% interval (None: not scored)."""

    num: float | None
    den: float | None
    value: float | None
    lo: float | None
    hi: float | None
    exact: bool = False
    """The case bootstrap had no variance: an exact (Clopper–Pearson) interval on the clusters."""

    @classmethod
    def of(cls, m: MetricValue | None) -> HeadlineRate:
        if m is None:
            return cls(num=None, den=None, value=None, lo=None, hi=None)
        return cls(num=m.num, den=m.den, value=m.value, lo=m.lo, hi=m.hi, exact=bool(m.exact))

    @property
    def fraction(self) -> str:
        return "" if self.num is None else f"{self.num:g}/{self.den:g}"

    @property
    def interval(self) -> str:
        """``[0–17%]``, ``[0–17%] exact``, or empty when not scored."""
        if self.lo is None or self.hi is None:
            return ""
        return f"[{_pct(self.lo)}–{_pct(self.hi)}%]" + (" exact" if self.exact else "")

    @property
    def cell(self) -> str:
        """``3/60 [0–17%]``: the count and its interval (``n/a (0/0)`` when not scored)."""
        if self.value is None:
            return f"n/a ({self.fraction})" if self.fraction else "n/a"
        return f"{self.fraction} {self.interval}".strip()


@dataclass(frozen=True)
class HeadlineRow:
    """One condition on the headline."""

    condition: str
    status: str
    """The decision's status in words: granted, not earned, vetoed, insufficient, needs labels."""
    authority: str
    reason: str | None
    permitted: tuple[str, ...]
    not_permitted: tuple[str, ...]
    detection: HeadlineRate
    false_alarms: HeadlineRate
    precision: HeadlineRate
    completion: HeadlineRate
    last_error: str | None = None
    """The last error of a run that gave no review (one line), when some failed."""
    attempts: str | None = None
    """Missing reviews over attempts, retired ones and failure codes (:func:`attempts_line`), when any."""


def attempts_line(completion: MetricValue) -> str | None:
    """``missing reviews 1/4 attempts (1 retired by a retry and still counted); failure codes:
    bot_error 1`` from ``completion``'s details, or None when every attempt gave a review."""
    missing = completion.missing_reviews or {}
    if not missing.get("num"):
        return None
    codes = ", ".join(f"{k} {v}" for k, v in (completion.failure_codes or {}).items())
    retired = sum((completion.retired or {}).values())
    return (f"missing reviews {missing['num']}/{missing['den']} attempts ({retired} retired by a retry and still "
            f"counted); failure codes: {codes}")


def inspection_line(i: InspectionSummary) -> str:
    """How much of what was scored people have read; a sample of five asked for when nothing
    (the terminal and the page say the same)."""
    figures = f"{i.runs_read}/{i.runs_scored} scored runs, {i.misses_read}/{i.misses} misses read"
    if not i.runs_scored:
        return "hand inspection: no run is scored under this version, none to read"
    if not i.runs_read:
        return f"hand inspection: {figures}; read five first (reviewbench label sample)"
    short = "" if i.enough else f" ({min(5, i.runs_scored) - i.runs_read} more to reach five)"
    return f"hand inspection: {figures}{short}; readers: {', '.join(i.readers)}"


def severity_basis_line(flag: SeverityBasisFlag) -> str:
    """The primary defect cases whose severity rests on unstated grounds, flagged."""
    return (f"SEVERITY BASIS missing on {len(flag.missing)}/{flag.primary_cases} primary defect cases (asset, "
            "trigger, consequence…)")


@dataclass(frozen=True)
class PairSentence:
    """One paired comparison in words (a − b on the cases both were scored on): the
    interpretation pattern first, then the differences it rests on."""

    a: str
    b: str
    text: str
    inconclusive: bool
    """The detection difference's interval holds 0."""
    pattern: str = ""
    """The interpretation pattern alone ("higher recall for b with unstable repetition (…)",
    "inconclusive on this corpus"): never a winner."""


def _metrics(data: ConditionScore, analysis: str) -> Mapping[str, MetricValue]:
    return data.end_to_end.metrics if analysis == "end_to_end" else data.metrics


def headline_rows(result: ScoreResult, last_errors: Mapping[str, str] | None = None) -> tuple[HeadlineRow, ...]:
    """One row per condition of ``score_run(...)``, in the gated analysis.

    ``last_errors``: per condition, its last error (``store.runs.last_errors``), shown
    only for conditions with attempts that gave no review.
    """
    analysis = result.analysis.gated_analysis
    rows = []
    for name, data in result.conditions.items():
        metrics = _metrics(data, analysis)
        decision = data.decision
        status = _STATUS.get(decision.status.value, decision.status.value.replace("_", " "))
        if decision.status == "needs_labels":
            status += f" ({decision.labels_needed})"
        completion = data.metrics["completion"]  # every attempt, whatever the analysis
        missing = (completion.missing_reviews or {}).get("num") or 0
        error = (last_errors or {}).get(name) if missing else None
        rows.append(HeadlineRow(
            condition=name, status=status, authority=decision.authority, reason=decision.reason,
            permitted=tuple(decision.permitted), not_permitted=tuple(decision.not_permitted),
            detection=HeadlineRate.of(metrics.get("defect_recall")),
            false_alarms=HeadlineRate.of(metrics.get("false_alarm_rate")),
            precision=HeadlineRate.of(metrics.get("precision")), completion=HeadlineRate.of(completion),
            last_error=error, attempts=attempts_line(completion),
        ))  # fmt: skip
    return tuple(rows)


def _num(x: float) -> str:
    return f"{x + 0.0:.2f}".replace("-0.00", "0.00").replace("-", "−")


def _diff_interval(c: PairedComparison, sign: int) -> str:
    """``+0.05 [0.00, 0.17]``, turned round with the sentence (``sign`` −1: b − a)."""
    assert c.diff is not None
    diff = sign * c.diff
    if c.lo is None or c.hi is None:
        return f"{'+' if diff >= 0 else ''}{_num(diff)}"
    lo, hi = (c.lo, c.hi) if sign > 0 else (-c.hi, -c.lo)
    return f"{'+' if diff >= 0 else ''}{_num(diff)} [{_num(lo)}, {_num(hi)}]" + (" exact" if c.exact else "")


def _spans_zero(c: PairedComparison) -> bool:
    return c.lo is None or c.hi is None or c.lo <= 0 <= c.hi


def _counted(diff: float, den: float | None) -> int | None:
    return None if not den else round(abs(diff) * den)


def _detection(a: str, b: str, c: PairedComparison, den: float | None) -> str:
    """"b finds 3 more of 60 defects than a, +0.05 [0.00, 0.17]"."""
    assert c.diff is not None
    if c.diff == 0:
        of = f" of {den:g}" if den else ""
        return f"{a} and {b} identify as many{of} defects, {_diff_interval(c, 1)}"
    more, less, sign = (a, b, 1) if c.diff > 0 else (b, a, -1)
    n = _counted(c.diff, den)
    said = f"{n} more of {den:g} defects" if n is not None and den else f"{abs(c.diff):.0%} more of the defects"
    return f"{more} identifies {said} than {less}, {_diff_interval(c, sign)}"


def _false_alarms(a: str, b: str, c: PairedComparison | None, den: float | None) -> str:
    if c is None or c.diff is None:
        return "false alarms not compared"
    if c.diff == 0:
        return "false alarms equal" + (f", {_diff_interval(c, 1)}" if c.hi else "")
    more, sign = (a, 1) if c.diff > 0 else (b, -1)
    n = _counted(c.diff, den)
    said = f"{n} more of {den:g} clean runs" if n is not None and den else f"{abs(c.diff):.0%} more of the clean runs"
    return f"false alarms: {more} on {said}, {_diff_interval(c, sign)}"


def repetition_note(data: ConditionScore) -> str | None:
    """How stable a condition's finds are across repetitions, from its hit sequences:
    ``unstable repetition (2 of 5 defects it found were missed in another repetition)``,
    ``stable repetition (…)``, or None with fewer than two repetitions or no defect found."""
    stability = data.stability
    if stability is None or stability.repetitions < 2:
        return None
    counted = [seq.replace("-", "") for defects in stability.hits.values() for seq in defects.values()]
    found = [seq for seq in counted if "1" in seq and len(seq) >= 2]
    if not found:
        return None
    missed = sum("0" in seq for seq in found)
    if missed:
        return (f"unstable repetition ({missed} of {len(found)} defects it found were missed in another "
                "repetition)")
    return f"stable repetition (each of the {len(found)} defects it found, in every repetition)"


def interpretation(a: str, b: str, recall: PairedComparison, alarms: PairedComparison | None,
                   conditions: Mapping[str, ConditionScore]) -> str:  # fmt: skip
    """The pattern a paired comparison shows, in words that never name a winner: a
    difference counts only when its 95% interval excludes 0.

    - detection and false alarms both hold 0: "inconclusive on this corpus";
    - detection holds 0, false alarms do not: "detection inconclusive on this corpus; more
      false alarms from X";
    - detection does not: "higher recall for X" (", at more false alarms" / ", with fewer
      false alarms" when that difference excludes 0 too), then how stable X's finds are
      across repetitions (:func:`repetition_note`).
    """
    louder = None  # the condition with more false alarms, when that difference excludes 0
    if alarms is not None and alarms.diff and not _spans_zero(alarms):
        louder = a if alarms.diff > 0 else b
    assert recall.diff is not None
    if _spans_zero(recall) or recall.diff == 0:
        if louder is None:
            return "inconclusive on this corpus"
        return f"detection inconclusive on this corpus; more false alarms from {louder}"
    higher = a if recall.diff > 0 else b
    said = f"higher recall for {higher}"
    if louder is not None:
        said += ", at more false alarms" if louder == higher else ", with fewer false alarms"
    note = repetition_note(conditions[higher])
    return said + (f", with {note}" if note else "")


def _shared(ma: Mapping[str, MetricValue], mb: Mapping[str, MetricValue], metric: str) -> float | None:
    """The denominator both conditions share (None when they differ: rates only, no counts)."""
    da, db = ma[metric].den, mb[metric].den
    return da if da == db else None


def pair_heading(result: ScoreResult) -> str:
    """What the paired sentences are computed on, with the number of paired cases."""
    analysis = result.analysis.gated_analysis
    dens = {(_metrics(d, analysis)["defect_recall"].den, _metrics(d, analysis)["false_alarm_rate"].den)
            for d in result.conditions.values()}  # fmt: skip
    corpus = result.corpus
    if len(dens) == 1:
        cases = f"the same {corpus.eligible_defect_cases} defect cases and {corpus.eligible_controls} clean cases"
    else:
        cases = "the cases both conditions were scored on"
    return f"Paired, case by case on {cases} (a − b, 95% interval):"


def pair_sentences(result: ScoreResult) -> tuple[PairSentence, ...]:
    """One sentence per pair of conditions: detection, then false alarms, a − b on shared cases.

    Counts ("3 more of 60") are given when both conditions were scored on the same number
    of (case, run) pairs; otherwise the difference of the rates only.
    """
    analysis = result.analysis.gated_analysis
    by_key = {(c.a, c.b, c.metric): c for c in result.comparisons if c.analysis == analysis}
    conditions = result.conditions
    out = []
    for a, b in itertools.combinations(conditions, 2):
        recall = by_key.get((a, b, "defect_recall"))
        if recall is None or recall.diff is None:
            continue
        ma, mb = _metrics(conditions[a], analysis), _metrics(conditions[b], analysis)
        detection = _detection(a, b, recall, _shared(ma, mb, "defect_recall"))
        false_alarms = by_key.get((a, b, "false_alarm_rate"))
        alarms = _false_alarms(a, b, false_alarms, _shared(ma, mb, "false_alarm_rate"))
        pattern = interpretation(a, b, recall, false_alarms, conditions)
        out.append(PairSentence(a=a, b=b, text=f"{a} vs {b}: {pattern}. {detection}; {alarms}",
                                inconclusive=_spans_zero(recall), pattern=pattern))
    return tuple(out)
