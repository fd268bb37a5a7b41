"""The report's view model: what every output format shows, typed once.

The HTML, CSV and SARIF writers format these records and compute nothing themselves, so
the three outputs cannot disagree with each other or with ``reviewbench score``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..records import Finding
from ..score.result import AnalysisRecord, DifferenceFigure, RegistrationSummary
from ..store.runs import RunRow
from .headline import HeadlineRow, PairSentence

__all__ = [
    "CaseResult",
    "Comparison",
    "ConditionView",
    "CorpusView",
    "Decision",
    "DefectRow",
    "Metric",
    "Outcome",
    "ReportData",
    "ReportOptions",
    "ScoredFinding",
    "Summary",
    "Tile",
    "Verdict",
]


class Outcome(StrEnum):
    """One tile of the tile map: a defect in one run."""

    FOUND = "found"
    """A finding identifies the defect (its claim names it)."""
    LOCATED = "located"
    """A finding sits at the defect's lines but does not name it (a label would settle it)."""
    MISSED = "missed"
    INCOMPLETE = "incomplete"
    """The run ended without a review (failed, timed out, invalid, cancelled)."""
    NOT_RUN = "not_run"
    """No run of this repetition is recorded."""


class Summary(StrEnum):
    """A defect across the completed repetitions of one condition."""

    EVERY = "found every run"
    SOME = "found some runs"
    NEVER = "never found"
    NO_RUN = "no completed run"


class Verdict(StrEnum):
    """How scoring counted one finding (its ``score/verdicts.py`` record, in one word)."""

    TRUE_POSITIVE = "true_positive"
    """Credited to a defect and identifies it."""
    LOCATED = "located"
    """Credited to a defect by location, but its claim does not name it."""
    FALSE_POSITIVE = "false_positive"
    DUPLICATE = "duplicate"
    FILE_LEVEL = "file_level"
    """No line, on a defect case: counts for file recall only."""
    NOT_SCORED = "not_scored"
    """The run did not complete, or its case is not in the corpus."""


@dataclass(frozen=True)
class ReportOptions:
    """What to score and show; the scoring options mirror ``reviewbench score``."""

    tolerance: int | None = None
    """None: as registered, or 3."""
    bootstrap: int | None = None
    """None: as registered, or 10,000."""
    include_unvalidated: bool | None = None
    """None: as registered, or False."""
    conditions: tuple[str, ...] = ()
    """Only these conditions (empty: all, in the experiment's order)."""
    overrides: Mapping[str, Any] | None = None
    """Judge or human labels by comment id; None: those of ``RUNDIR/labels.sqlite``
    (``evidence.overrides.score_overrides``), ``{}``: none."""
    cutoff: str | None = None
    """Contamination cut-off (YYYY-MM-DD); None: the registered one, if any."""


@dataclass(frozen=True)
class Metric:
    """One metric of one condition as ``score_run`` gave it; None means not scored."""

    name: str
    value: float | None
    num: float | None
    den: float | None
    lo: float | None
    hi: float | None
    note: str = ""
    """Extra facts shown beside it (the 0/1/2/3+ distribution, run states, IQR)."""
    level: str = "automatic"
    """The evidence it rests on: human, judge or automatic (``score/levels.py``)."""
    evidence: str = ""
    """That evidence in words, with how far labelling has come ("automatic (people 3 of 5)")."""


@dataclass(frozen=True)
class SplitView:
    """One part of the cases scored on its own, never pooled into the headline."""

    label: str
    kind: str
    """``holdout``, ``before`` or ``after``."""
    metrics: Mapping[str, Metric]


@dataclass(frozen=True)
class Decision:
    """The authority a condition earned and, always, what it is not permitted to do."""

    authority: str
    tier: str
    reason: str | None
    permitted: tuple[str, ...]
    not_permitted: tuple[str, ...]
    checks: tuple[str, ...]
    """Each gate condition with the observed value, e.g. ``defect_recall > 0.6: 0.75 (pass)``."""
    status: str = "granted"
    """granted, insufficient, needs_labels or vetoed."""
    labels_needed: int = 0
    evidence: str = "automatic"
    version: str = "not registered"
    """The benchmark version decided under: "version 2, registered after runs"."""


@dataclass(frozen=True)
class ConditionView:
    """Everything the report shows about one condition."""

    name: str
    reviewer: str
    """Reviewer kind and model, from the recorded experiment."""
    metrics: Mapping[str, Metric]
    states: Mapping[str, int]
    valid_defect_cases: int
    decision: Decision
    fp_distribution: Mapping[str, int | float | None]
    latencies: tuple[float, ...]
    """Latency of every analysed completed run, for the latency chart."""
    end_to_end: Mapping[str, Metric] = field(default_factory=dict)
    """The same metrics when failed, invalid, timed-out and cancelled runs count against."""
    evidence: str = "automatic"
    model_drift: str | None = None
    """"requested X; returned Y, Z" when returned model ids differ."""
    unclear: Any = None
    """The score's ``UnclearSensitivity`` when labels call some comments unclear: precision
    with every one false, then true, and the decision at each (``score/unclear.py``)."""
    judge_secondary: Any = None
    """The score's ``JudgeSecondary`` when the figures rest on a calibrated judge: what they
    would earn were its labels people's, granting nothing (``score/secondary.py``)."""
    splits: tuple[SplitView, ...] = ()
    """Parts scored apart from the headline: holdout strata (natural), then the cases before
    and from the cut-off date (``score/splits.py``)."""
    split_difference: Mapping[str, DifferenceFigure] | None = None
    """After − before per split metric (diff, lo, hi), when a cut-off is set."""

    @property
    def first_review(self) -> Metric | None:
        """Time to first review: forge conditions only (None elsewhere, never zero)."""
        return self.metrics.get("time_to_first_review_s")


@dataclass(frozen=True)
class Comparison:
    """A paired difference a − b on the cases both conditions were scored on."""

    a: str
    b: str
    metric: str
    diff: float | None
    lo: float | None
    hi: float | None
    mcnemar_p: float | None
    analysis: str = "completed"
    exact: bool = False
    """The interval is Newcombe's from the two exact intervals (no variance in the resamples)."""
    pairs: int | None = None
    """Case clusters both conditions were scored on (the complete pairs)."""
    missing: Mapping[str, int] | None = None
    """Per condition, the clusters the other was scored on and it was not."""
    mcnemar_pairs: int | None = None
    """defect_recall: (case, defect, repetition) units both scored."""


@dataclass(frozen=True)
class ScoredFinding:
    """One finding of one run, with the verdict scoring gave it."""

    run_id: str
    case_id: str
    condition: str
    repetition: int
    index: int
    finding: Finding
    verdict: Verdict
    defect_id: str | None
    """The defect it is credited to or duplicates (identified or located findings)."""
    in_analysis: bool
    comment_id: str = ""
    unclear: bool = False
    """Labelled unclear (out of precision's denominator)."""
    """``run_id:index``: the key a judge or human label overrides."""
    identified_by: str | None = None
    evidence: str = "automatic"


@dataclass(frozen=True)
class Tile:
    """One defect × condition × repetition cell of the tile map."""

    condition: str
    repetition: int
    outcome: Outcome
    state: str | None
    run_id: str | None
    finding: Finding | None
    """The finding credited to the defect (FOUND and LOCATED)."""
    findings: tuple[Finding, ...] = ()
    """All of the run's findings, to show what it said instead (MISSED)."""
    error: str | None = None
    try_no: int = 1
    """The attempt the tile shows: above 1, earlier ones were retired by ``run --retry-failed``."""
    evidence: str | None = None
    """Who judged the outcome: human, judge or automatic (None: no review to judge).
    Found: the identifying comment's label; located: the lowest among the comments there;
    missed: automatic matching (no comment sits at the defect)."""


@dataclass(frozen=True)
class DefectRow:
    """One gold defect of an analysed original defect case, with its tiles."""

    case_id: str
    stratum: str
    defect_id: str
    defect_class: str
    severity: str | None
    locations: tuple[str, ...]
    """``path:start-end (symbol)`` for every gold location."""
    tiles: tuple[Tile, ...]
    """Condition by condition, repetition by repetition."""
    summaries: Mapping[str, Summary]


@dataclass(frozen=True)
class CaseResult:
    """One analysed case under one condition (a row of ``cases.csv``)."""

    case_id: str
    condition: str
    kind: str
    """``defect``, ``control`` or ``rename variant``."""
    stratum: str
    variant_of: str | None
    defects: int
    outcomes: tuple[str, ...]
    """Per repetition: found / missed / found k/n / clean / flagged, a run state, or not_run."""
    runs: int
    completed: int
    found_pairs: int
    """(defect, completed run) pairs where the defect was found."""
    defect_pairs: int
    true_positives: int
    """Findings credited to a defect that identify it."""
    located: int
    """Findings credited to a defect by location only."""
    false_positives: int
    duplicates: int
    findings: int

    @property
    def recall(self) -> float | None:
        return self.found_pairs / self.defect_pairs if self.defect_pairs else None


@dataclass(frozen=True)
class CorpusView:
    """What the corpus held and how much of it survived validation."""

    path: str
    repo: str
    head: str
    created_at: str
    cases: int
    by_stratum: Mapping[str, int]
    matched_commits: int
    dropped: Mapping[str, int]
    by_validation: Mapping[str, int]
    defect_cases: int
    """Original (non-variant) cases that expect a finding."""
    observed: int
    """Of those, validated ``observed``: the validation yield's numerator."""
    eligible_defect_cases: int
    eligible_controls: int
    """Clean cases: controls and mirrors."""
    eligible_mirrors: int
    eligible_variants: int
    include_unvalidated: bool


@dataclass(frozen=True)
class ReportData:
    """One run directory, scored and joined with its runs and its corpus."""

    rundir: Path
    generated_at: str
    tool_version: str
    options: ReportOptions
    conditions: tuple[ConditionView, ...]
    comparisons: tuple[Comparison, ...]
    repetitions: int
    defects: tuple[DefectRow, ...]
    cases: tuple[CaseResult, ...]
    findings: tuple[ScoredFinding, ...]
    runs: tuple[RunRow, ...]
    """Every run of the chosen conditions, analysed or not."""
    analysed_cases: frozenset[str]
    corpus: CorpusView
    analysis: AnalysisRecord
    registration: RegistrationSummary | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Caveats worth printing at the top (e.g. unvalidated cases included)."""
    headline: tuple[HeadlineRow, ...] = ()
    """One row per condition, as ``reviewbench score`` prints it first (``report/headline.py``)."""
    pairs: tuple[PairSentence, ...] = ()
    """One sentence per pair of conditions, as ``score`` prints them."""
    pair_heading: str = ""
    """What the sentences are computed on, with the number of paired cases."""
    triage_by_run: Mapping[str, float] = field(default_factory=dict)
    """Run id → rater minutes on its comments (summed over raters); empty without labels."""
