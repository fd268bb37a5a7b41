"""The scoring result as frozen, typed records: ``score --json`` is their JSON dump.

The report, CSV and SARIF read these records (and the verdicts carried with them) instead
of recounting anything. Item access by JSON name (``result["conditions"]["A"]``) reads as
the JSON does; :meth:`ScoreResult.as_json` gives the exact ``score --json`` document.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config.registration import RegistrationPlan, SeverityPolicy
from ..store.exclusions import Exclusion
from .verdicts import Evidence, FindingVerdict

__all__ = [
    "ActionabilityFigure",
    "AnalysisRecord",
    "AnalysisRules",
    "AnalysisScore",
    "AuditSummary",
    "BootstrapSettings",
    "CompareResult",
    "CompletionCell",
    "ConditionScore",
    "ContaminationBeside",
    "CostFigure",
    "CostScore",
    "CutoffScore",
    "CutoffSetting",
    "DecisionResult",
    "DecisionStatus",
    "DifferenceFigure",
    "ExclusionsResult",
    "GateCheck",
    "GroupDifference",
    "GroupScore",
    "IncidentalDefect",
    "IncidentalReport",
    "InspectionSummary",
    "JudgeSecondary",
    "LabelFigures",
    "MetricEvidence",
    "MetricValue",
    "ModelFigures",
    "NetworkPolicy",
    "PairedComparison",
    "PrecisionClaims",
    "RateFigure",
    "RegisteredProtocol",
    "RegisteredSeeds",
    "RegisteredSeverityPolicy",
    "RegisteredTable",
    "RegistrationSummary",
    "ScoreResult",
    "RetryRuleRecord",
    "ScoredRuns",
    "SeverityBasisFlag",
    "StabilityScore",
    "TriageFigure",
    "UnclearDecision",
    "UnclearSensitivity",
]

Number = int | float


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class DecisionStatus(StrEnum):
    GRANTED = "granted"
    """A tier's gates all pass (and its evidence level is met)."""
    NOT_EARNED = "not_earned"
    """Measured, but no tier's gates pass: the fallback ("none") applies."""
    INSUFFICIENT = "insufficient"
    """Too few valid cases or controls, or a gated interval too wide: no verdict."""
    NEEDS_LABELS = "needs_labels"
    """A bounded gate lies between its identified and located bounds: labels would settle it."""
    VETOED = "vetoed"


class MetricValue(_Result):
    """One metric; ``value``, ``lo`` and ``hi`` are null when the denominator is 0."""

    value: Number | None = Field(description="Point value (Σnum/Σden; a median or total for summaries).")
    num: Number | None = Field(description="Numerator.")
    den: Number | None = Field(description="Denominator (runs, pairs, findings…).")
    lo: Number | None = Field(description="Low end of the 95% interval (latencies: first quartile).")
    hi: Number | None = Field(description="High end of the 95% interval (latencies: third quartile).")
    deprecated: str | None = Field(default=None, description="An old name kept one more version: what it was renamed.")
    exact: bool | None = Field(default=None, description="The interval is exact on the case clusters (Clopper–Pearson; "
                               "Poisson for a count per case): resampling the cases had no variance, so a bootstrap "
                               "interval would have been a point.")
    distribution: dict[str, Number | None] | None = Field(default=None, description="fp_per_clean_case: completed "
                                                         "clean-case runs with 0/1/2/3+ false positives, the "
                                                         "median, IQR (q1, q3: inclusive quartiles), max, runs.")
    states: dict[str, int] | None = Field(default=None, description="completion: runs by terminal state.")
    retired: dict[str, int] | None = Field(default=None, description="completion: earlier attempts that "
                                           "'run --retry-failed' replaced, by state; each counts as not completed.")
    missing_reviews: dict[str, Number | None] | None = Field(
        default=None, description="completion: missing-review events (attempts that did not complete, retired "
        "ones included) / attempts, as value, num and den.")  # fmt: skip
    failure_codes: dict[str, int] | None = Field(default=None, description="completion: attempts that did not "
                                                 "complete, by failure_code ('unrecorded' for older runs).")
    failure_codes_by_stratum: dict[str, dict[str, int]] | None = Field(
        default=None, description="completion: the same, by stratum.")
    not_eligible: int | None = Field(default=None, description="defect_recall@rule:ID: (run, defect) pairs of the "
                                     "rule that no applicable guidance file of the condition covers (a scoping "
                                     "defect of the corpus or rules, not a miss); the interval is Wilson's.")
    min: Number | None = Field(default=None, description="latency_s: fastest completed run (time_to_first_review_s: "
                               "fastest first review).")
    max: Number | None = Field(default=None, description="latency_s: slowest completed run (time_to_first_review_s: "
                               "slowest first review).")
    not_reviewed: dict[str, int] | None = Field(default=None, description="time_to_first_review_s: forge runs with no "
                                                "review, by terminal state (timed_out, failed, cancelled; a completed run whose failure "
                                                "code says no review happened: by that code).")
    tokens_in: int | None = Field(default=None, alias="in", description="tokens: prompt tokens.")
    tokens_out: int | None = Field(default=None, alias="out", description="tokens: completion tokens.")
    per_case: float | None = Field(default=None, description="tokens: per case cluster.")


class BreakdownCell(_Result):
    value: Number | None = Field(description="num/den, null when den is 0.")
    num: Number = Field(description="Numerator.")
    den: Number = Field(description="Denominator.")


Breakdown = dict[str, dict[str, dict[str, BreakdownCell]]]


class AnalysisScore(_Result):
    """The metrics of one analysis (end-to-end: missing reviews count against)."""

    metrics: dict[str, MetricValue] = Field(description="Every registered metric by name.")
    breakdown: Breakdown = Field(description="By stratum, defect class and severity.")


class GateCheck(_Result):
    metric: str = Field(description="The gated metric (optionally '@stratum').")
    op: str = Field(description="Comparison operator.")
    threshold: float = Field(description="The gate's value.")
    observed: Number | None = Field(description="The metric's value (the identified bound when bounded).")
    passed: bool | None = Field(description="Null: the bounds straddle the threshold (needs labels).")
    upper: Number | None = Field(default=None, description="Bounded metrics: the upper bound, the located value "
                                 "or, when lower, what labels can still reach (score/bounds.py).")
    status: str | None = Field(default=None, description="Comparative or bound = 'interval': pass, fail or "
                               "inconclusive; a gate on people's figures without labels: not_scored.")
    diff: list[str] | None = Field(default=None, description="Comparative: [a, b], the difference a - b.")
    lo: float | None = Field(default=None, description="Comparative: low end of the paired interval; "
                             "bound = 'interval': of the metric's 95% interval.")
    hi: float | None = Field(default=None, description="Comparative: high end of the paired interval; "
                             "bound = 'interval': of the metric's 95% interval.")


class DecisionResult(_Result):
    authority: str = Field(description="What the condition may be used for.")
    tier: str = Field(description="The tier, veto or fallback decided.")
    status: DecisionStatus = Field(description="granted, not_earned, insufficient, needs_labels or vetoed.")
    labels_needed: int = Field(description="Findings whose label would settle a needs_labels decision.")
    evidence: Evidence = Field(description="Evidence level the decision rests on.")
    permitted: list[str] = Field(description="Uses permitted.")
    not_permitted: list[str] = Field(description="Uses not permitted, always listed.")
    gates: dict[str, list[GateCheck]] = Field(description="Each tier's and veto's checks.")
    vetoes: list[str] = Field(default_factory=list, description="The entries of gates that are vetoes: one "
                              "whose checks all pass (the condition holds) vetoes the condition.")
    reason: str | None = Field(description="Why, when not a plain grant.")
    version: int | None = Field(default=None, description="The registered benchmark version decided under (its "
                                "gates and rules, its runs only); null when the run directory is not registered.")


class MetricEvidence(_Result):
    """The evidence one figure rests on (``score/levels.py``)."""

    level: Evidence = Field(description="Lowest evidence among the comments the figure counts.")
    judged: bool = Field(description="False when no label can change the figure (automatic matching only).")
    human: int = Field(description="Comments it counts with a final human label.")
    judge: int = Field(description="Comments it counts labelled by a calibrated judge.")
    automatic: int = Field(description="Comments it counts on automatic matching only.")


class ModelFigures(_Result):
    """The completed runs one returned model id answered, scored on their own."""

    runs: int = Field(description="Completed runs this model id answered.")
    cases: int = Field(description="Distinct cases among them.")
    metrics: dict[str, MetricValue] = Field(description="Every rate metric over those runs, with its interval.")


class ModelDrift(_Result):
    requested: list[str] = Field(description="Model ids requested.")
    returned: list[str] = Field(description="Distinct model ids the completed runs reported.")
    by_model: dict[str, ModelFigures] | None = Field(default=None, description="With several returned ids (a "
                                                     "change during the run): each id's runs scored apart, "
                                                     "not paired (they answered different runs).")


class UnclearDecision(_Result):
    """The decision re-run at one bound of the unclear sensitivity."""

    authority: str = Field(description="What the condition may be used for at this bound.")
    tier: str = Field(description="The tier, veto or fallback decided.")
    status: DecisionStatus = Field(description="As the decision's status.")


class UnclearSensitivity(_Result):
    """Claims labelled unclear: out of precision's denominator, and the sensitivity of precision to them."""

    n: int = Field(description="Comments labelled unclear that precision left out (gated analysis).")
    analysis: str = Field(description="The analysis they are counted in: the gated one.")
    precision_all_false: MetricValue = Field(description="Precision with every unclear comment counted false.")
    precision_all_true: MetricValue = Field(description="Precision with every unclear comment counted true.")
    decision_all_false: UnclearDecision = Field(description="The registered decision with every unclear one false.")
    decision_all_true: UnclearDecision = Field(description="The registered decision with every unclear one true.")
    decision_changes: bool = Field(description="The two decisions differ: the unclear claims decide it.")


class JudgeSecondary(_Result):
    """A declared secondary analysis (``score/secondary.py``): the decision the
    figures would earn if a calibrated judge's labels counted as people's. No authority."""

    analysis: str = Field(description="What it assumes: judge labels counted as people's.")
    tier: str = Field(description="The tier, veto or fallback it reaches.")
    status: DecisionStatus = Field(description="As a decision's status.")
    would_be: str = Field(description="The authority that tier would carry, were its labels people's.")
    authority: str = Field(description="Always none: a secondary analysis grants nothing.")
    reason: str | None = Field(description="Why, when not a plain grant.")


class RateFigure(_Result):
    """A rate of people's labels: ``numerator / denominator``, null at 0/0."""

    value: float | None = Field(description="numerator / denominator; null when the denominator is 0.")
    numerator: int
    denominator: int


class ActionabilityFigure(RateFigure):
    """True findings passing all five actionability fields / true findings assessed."""

    fields: dict[str, RateFigure] = Field(default_factory=dict, description="Per field: yes / answered.")


class TriageFigure(_Result):
    """Rater minutes per run, summed over raters (inclusive quartiles)."""

    median: float | None
    q1: float | None
    q3: float | None
    runs: int = Field(description="Runs with labelled comments, scored or not.")


class RatersFigure(_Result):
    """Who labelled, counted over people (never per name), and their time: only with labels."""

    raters: int = Field(description="Raters invited or labelling.")
    profiled: int = Field(description="Of them, with a declared profile.")
    languages: dict[str, int] = Field(description="Raters per language they review in.")
    security_review: dict[str, int] = Field(description="Raters per security-review experience.")
    familiarity: dict[str, int] = Field(description="Raters per familiarity with the code.")
    authored_fixture: int = Field(description="Raters who wrote part of the fixture.")
    conflicted: int = Field(description="Raters with a conflict: never a claim's first label.")
    labels_set_aside: int = Field(description="Their labels that wait for an unconflicted first label.")
    rater_minutes: float = Field(description="Active triage minutes of every rater.")
    adjudication_minutes: float = Field(description="The adjudicators' extra minutes.")
    extra_share: float | None = Field(description="adjudication_minutes / rater_minutes; null at 0.")


class LabelFigures(_Result):
    """What people (or a calibrated judge) said about a condition's comments,
    beside the metrics: only with labels in the run directory."""

    actionability_rate: ActionabilityFigure
    triage_minutes: TriageFigure


class GroupScore(_Result):
    """The metrics of a group of case clusters scored apart (a holdout stratum, one side of a cut-off)."""

    cases: int = Field(description="Case clusters in the group.")
    metrics: dict[str, MetricValue] = Field(description="Every rate metric, with its interval.")


class DifferenceFigure(_Result):
    diff: float | None = Field(description="Second group minus first; null when either side has no denominator.")
    lo: float | None
    hi: float | None


class GroupDifference(_Result):
    of: str = Field(description="Which difference: 'after - before'.")
    metrics: dict[str, DifferenceFigure]


class CutoffScore(_Result):
    """The contamination split: the cases before and after a date, and their difference."""

    date: str = Field(description="The cut-off, ISO 8601.")
    before: GroupScore
    after: GroupScore
    difference: GroupDifference
    undated: int = Field(description="Cases with no source date: in neither side.")


class CostFigure(_Result):
    value: float | None = Field(description="num / den; null when den is 0.")
    num: float = Field(description="Total cost of the priced runs.")
    den: int = Field(description="Priced runs, or identified (run, defect) pairs.")
    lo: float | None = Field(description="Low end of the 95% case-clustered bootstrap interval.")
    hi: float | None


class CostScore(_Result):
    """Cost from a price table (``score --prices``), never mixed with the token usage."""

    currency: str | None = Field(description="As the price table says.")
    complete: bool = Field(description="False when some runs reported no usage: the figures leave them out "
                                       "(a lower bound).")  # fmt: skip
    total: float | None = Field(description="Σ cost of the priced runs; null when a model is not priced.")
    per_run: CostFigure | None
    per_identified_defect: CostFigure | None = Field(description="Σ cost / identified (run, defect) pairs.")
    unpriced_models: list[str] = Field(description="Models that answered (or were asked, without an answer) and "
                                       "have no price: no cost is given then.")  # fmt: skip
    runs_without_usage: int
    basis: str = Field(default="list-price estimate", description="What the figures are: a list-price estimate "
                       "(reported tokens at the price table's prices), never an invoice.")
    refused: str | None = Field(default=None, description="Why no cost is estimated for this condition at all: a "
                                "forge bot (its cost is its plan's, no tokens are reported) or a plan-funded "
                                "condition (the price table's plan_funded); the figures are null then.")


class CompletionCell(_Result):
    """One condition's runs of one stratum, against the plan (``score/completion.py``)."""

    planned: int | None = Field(description="Runs the plan (allocation.jsonl) held; null without a plan.")
    attempted: int = Field(description="Runs scored here (one per planned run that was recorded, its latest try).")
    completed: int = Field(description="Of those, the ones that gave a review.")
    not_attempted: int | None = Field(description="Planned runs never recorded at all; null without a plan.")
    elsewhere: int | None = Field(description="Planned runs recorded but not scored here (another benchmark "
                                  "version, or excluded); null without a plan.")


class ContaminationBeside(_Result):
    """One condition's clean-set figures and decision without the contaminated clean cases
    (``score/contamination.py``), beside the registered ones, which keep them."""

    cases: list[str] = Field(description="The contaminated clean cases left out here.")
    analysis: str = Field(description="The analysis the figures are in: the gated one.")
    false_alarm_rate: MetricValue = Field(description="False-alarm rate without them.")
    fp_per_clean_case: MetricValue = Field(description="False positives per clean case without them.")
    precision: MetricValue = Field(description="Precision without their comments.")
    decision: UnclearDecision = Field(description="The registered decision on the figures without them.")
    decision_changes: bool = Field(description="It differs from the decision with them.")


class IncidentalDefect(_Result):
    """A real defect none of the gold's, reported by a claim labelled valid_incidental."""

    id: str = Field(description="Its own id, 'CASE#incidental-N' (one per distinct description on a case).")
    case_id: str
    stratum: str
    clean: bool = Field(description="The case is a clean one (control or mirror): it is contaminated.")
    note: str = Field(description="What it is, as the label says (untrusted: escape when shown).")
    comments: list[str] = Field(description="The comment ids that reported it.")
    conditions: dict[str, int] = Field(description="Comments that reported it, by condition.")
    evidence: Evidence = Field(description="The lowest evidence among those labels (human or judge).")


class IncidentalReport(_Result):
    """Valid incidental findings: reported apart, never in a recall denominator."""

    contaminated: list[str] = Field(description="Headline clean cases with one: shown without them beside the "
                                    "clean-set figures (each condition's contamination).")
    defects: list[IncidentalDefect]


class PrecisionClaims(_Result):
    """What precision counted besides one claim per comment (gated analysis): atomic claims of
    split comments, and the false positives the registered boilerplate rule left out."""

    analysis: str = Field(description="The analysis counted: the gated one.")
    split_comments: int = Field(description="Counted comments split into two or more labelled claims.")
    extra_claims: int = Field(description="Atomic claims beyond one per comment in precision's denominator (a "
                              "false claim in a true comment among them).")
    boilerplate_rule: list[str] = Field(description="The registered boilerplate patterns (empty: no rule).")
    boilerplate_excluded: int = Field(description="False positives whose claim matches the rule: left out of "
                                      "precision.")
    false_positives: int = Field(description="False positives counted, before the rule left any out.")


class StabilityScore(_Result):
    """The stability rule of ``recall_k_of_n`` and each defect's hits, repetition by repetition."""

    k: int | None = Field(description="The registered k (gates' [stability]); null: a majority of each defect's "
                          "repetitions.")
    rule: str = Field(description="The rule in words.")
    analysis: str = Field(description="The analysis the hits are read in: the gated one.")
    repetitions: int = Field(description="Repetitions of the condition (the longest hit sequence).")
    too_few_repetitions: int = Field(description="Defects with fewer counted repetitions than k: out of "
                                     "recall_k_of_n's denominator.")
    hits: dict[str, dict[str, str]] = Field(description="Per defect case, per defect id, one character per "
                                            "repetition: 1 identified, 0 missed, - not counted (no run, or one "
                                            "that did not complete in the completed analysis).")


class ConditionScore(_Result):
    metrics: dict[str, MetricValue] = Field(description="Completed-run analysis, every registered metric.")
    breakdown: Breakdown = Field(description="Completed-run breakdown.")
    end_to_end: AnalysisScore = Field(description="Failed, invalid, timed-out, cancelled runs count against.")
    states: dict[str, int] = Field(description="Runs by terminal state.")
    evidence: Evidence = Field(description="Lowest evidence level among the condition's verdicts.")
    metric_evidence: dict[str, MetricEvidence] | None = Field(
        default=None, description="Per rate metric, the evidence it rests on (gated analysis).")
    decision: DecisionResult = Field(description="The authority earned, from the gated analysis.")
    judge_secondary: JudgeSecondary | None = Field(default=None, description="Set when the figures rest on a "
                                                   "calibrated judge and a tier asks for people's labels: what the "
                                                   "judge's labels would earn, reported beside the decision.")
    unclear: UnclearSensitivity | None = Field(default=None, description="Set when people's (or a calibrated "
                                               "judge's) labels call some counted comments unclear.")
    labels: LabelFigures | None = Field(default=None, description="Actionability and triage minutes from the "
                                        "labels of RUNDIR/labels.sqlite, when there are any.")
    contamination: ContaminationBeside | None = Field(default=None, description="Set when labels find a valid "
                                                      "incidental defect on a headline clean case: the clean-set "
                                                      "figures and decision without such cases.")
    valid_defect_cases: int = Field(description="Analysed defect cases with a completed run (the gates count "
                                                "those of their analysis: end to end, every analysed one).")
    model_drift: ModelDrift | None = Field(description="Set when returned model ids differ.")
    holdout: dict[str, GroupScore] | None = Field(default=None, description="Holdout strata (natural), never "
                                                  "pooled into the headline, by stratum; the cases gold marks "
                                                  "exploratory as one group, 'exploratory'.")
    cost: CostScore | None = Field(default=None, description="With a price table only.")
    cutoff: CutoffScore | None = Field(default=None, description="Contamination split, when a cutoff is given or "
                                       "registered.")
    precision_claims: PrecisionClaims | None = Field(default=None, description="What precision counted: atomic "
                                                     "claims and the boilerplate rule's exclusions.")
    stability: StabilityScore | None = Field(default=None, description="recall_k_of_n's rule and the per-case "
                                             "hit sequences.")
    completion_by_stratum: dict[str, CompletionCell] | None = Field(
        default=None, description="Runs planned, attempted, completed and never attempted, per stratum of the "
        "analysed cases (holdout strata included).")  # fmt: skip


class PairedComparison(_Result):
    a: str
    b: str
    analysis: str = Field(description="completed or end_to_end.")
    metric: str
    diff: float | None = Field(description="a - b on the clusters both were scored on.")
    lo: float | None
    hi: float | None
    mcnemar_p: float | None = Field(description="Exact McNemar p (defect_recall only).")
    exact: bool = Field(default=False, description="The interval is Newcombe's from the two sides' exact intervals: "
                        "the resampled differences had no variance.")
    pairs: int | None = Field(default=None, description="Complete pairs: case clusters both conditions were scored "
                              "on for this metric (a denominator under each); the difference is over these only.")
    missing: dict[str, int] | None = Field(default=None, description="The missingness pattern, per condition: "
                                           "case clusters the other condition was scored on and this one was not "
                                           "(left out of the pairs).")
    mcnemar_pairs: int | None = Field(default=None, description="defect_recall: (case, defect, repetition) units "
                                      "both conditions scored, the pairs McNemar's test counts.")


class CompareResult(_Result):
    name: str
    metric: str
    diff: list[str] = Field(description="[a, b]: the difference a - b.")
    op: str
    value: float
    margin: float | None = Field(description="Non-inferiority margin, if the gate is one.")
    observed: float | None
    lo: float | None
    hi: float | None
    status: str = Field(description="pass, fail or inconclusive (the interval straddles the threshold).")


class CorpusSummary(_Result):
    path: str
    gold_sha256: str
    cases: int
    eligible_defect_cases: int
    eligible_controls: int = Field(description="Clean cases in the analysis: controls and mirrors.")
    eligible_mirrors: int = Field(default=0, description="Of those, mirrors (the other way of a defect case).")
    eligible_variants: int
    holdout_cases: int = Field(default=0, description="Holdout cases (natural, and exploratory ones), scored apart.")
    exploratory_cases: int = Field(default=0, description="Of those, the cases gold marks exploratory.")
    by_validation: dict[str, int]
    include_unvalidated: bool


class ExcludedBeside(_Result):
    """One condition scored with nothing left out, beside the figures with the exclusions."""

    defect_recall: MetricValue = Field(description="Completed-run defect recall, nothing excluded.")
    false_alarm_rate: MetricValue = Field(description="Completed-run false-alarm rate, nothing excluded.")
    decision: UnclearDecision = Field(description="The decision with nothing excluded.")
    decision_changes: bool = Field(description="It differs from the decision with the exclusions applied.")


class BootstrapSettings(_Result):
    resamples: int
    seed: int
    level: float
    unit: str = Field(description="What is resampled.")


class CutoffSetting(_Result):
    date: str = Field(description="The cut-off applied.")
    registered: bool = Field(description="It is the registered cut-off (else an exploratory split).")
    registered_date: str | None = Field(description="The registered cut-off, if any.")


class AuditSummary(_Result):
    """The matcher audit the decisions were checked against (``score/audit.py``)."""

    sound: bool
    line: str = Field(description="One line for people.")
    reasons: list[str]
    source: str = Field(description="Re-run on the corpus, or as recorded in audit.json.")


class AnalysisRecord(_Result):
    """How the figures were made: rules, bootstrap, gates, and what identification means."""

    tolerance: int = Field(description="Lines either side of a gold range that still count as located.")
    bootstrap: BootstrapSettings
    gates_sha256: str
    gates: str = Field(description="The gates file, or 'built-in'.")
    gated_analysis: str = Field(description="The analysis the gates read: end_to_end or completed.")
    identification: str = Field(description="What counts as identifying a defect.")
    verdicts: str = Field(description="Where every finding's verdict was written.")
    audit: AuditSummary | None = Field(description="Null when the corpus has no audit.")
    cutoff: CutoffSetting | None
    holdout_strata: list[str]
    forge_tree_differences: dict[str, dict[str, list[str]]] = Field(
        description="Forge runs: cases whose pull requests pushed different trees (bar the guidance files), "
        "case -> condition -> trees.")  # fmt: skip


class RegisteredTable(_Result):
    path: str = Field(description="The gates file, or 'built-in'.")
    sha256: str
    text: str | None = Field(default=None, description="The table's own copy (left out of a score's summary).")


class RegisteredSeeds(_Result):
    experiment: int = Field(description="The run order's seed.")
    bootstrap: int = Field(description="The bootstrap's seed.")


class AnalysisRules(_Result):
    """The analysis rules a registration freezes (``config/rules.py`` has the defaults)."""

    tolerance: int
    include_unvalidated: bool
    bootstrap: int


class ScoredRuns(_Result):
    """Which runs a benchmark version scores (``score/versions.py``)."""

    version: int
    runs: int = Field(description="Runs started under this version.")
    since: str | None = Field(description="Its window's start (null for the first version).")
    until: str | None = Field(description="The next version's registration, if any.")
    other_versions: dict[str, int] = Field(description="Runs by the version they ran under instead.")


class NetworkPolicy(_Result):
    """What a command kind's table allowed of the network (``config/reviewers.network_policy``)."""

    policy: str = Field(description="none, allowlist or unrestricted (the opt-out, network = true).")
    hosts: list[str] | None = Field(default=None, description="allowlist: the host:port pairs.")


class RegisteredSeverityPolicy(SeverityPolicy):
    """The severity policy as registered, with the SHA-256 of its text or file."""

    sha256: str = Field(description="SHA-256 of the policy's text, or of its file when registered.")


class RetryRuleRecord(_Result):
    """The experiment's retry rule as registered."""

    max_retries: int = Field(description="How many times 'run --retry-failed' may run a failed run again.")
    retry_on: list[str] | None = Field(description="The failure codes a retry is allowed for; null: any.")


class RegisteredProtocol(RegistrationPlan):
    """The experiment's ``[registration]`` table as the registration froze it (every field
    present: null or empty where the table said nothing), with the retry rule."""

    severity_policy: RegisteredSeverityPolicy | None = Field(default=None, description="How severity is judged, "
                                                             "hashed.")
    retry_rule: RetryRuleRecord = Field(description="The experiment's max_retries and retry_on.")


class RegistrationSummary(_Result):
    """The registration a score verified (``score/registration.py``)."""

    file: str
    version: int
    registered_at: str
    verified: bool
    sha256: str | None = Field(description="The registration file's SHA-256.")
    sha256_recorded: bool = Field(description="The run store recorded that digest when the runs began.")
    pre_registered: bool = Field(default=True, description="False: registered after runs had been recorded.")
    gates: RegisteredTable
    seeds: RegisteredSeeds
    rules: AnalysisRules
    owner: str | None = None
    approver: str | None = None
    historical: bool | None = Field(default=None, description="An earlier version read as history (--version).")
    latest: bool | None = Field(default=None, description="With historical: it is also the latest version.")
    inputs_checked: bool | None = Field(default=None, description="False: the file was verified, today's "
                                        "inputs not compared (runs read as history).")
    scored_runs: ScoredRuns | None = None
    protocol: RegisteredProtocol | None = Field(default=None, description="The registered protocol (owner, "
                                                "hypotheses, severity, exclusion and stop rules, retry rule, "
                                                "completion, product surface, approvals, data controls); null for "
                                                "registrations made before reviewbench froze it.")
    network: dict[str, NetworkPolicy] | None = Field(default=None, description="Per condition running a command, "
                                                     "the network it was allowed (registrations before egress by "
                                                     "allowlist did not say).")  # fmt: skip


class ExclusionsResult(_Result):
    """``RUNDIR/exclusions.jsonl`` applied (``score/exclusions.py``): set only when it names any."""

    log: list[Exclusion] = Field(description="Every exclusion, oldest first.")
    runs: list[str] = Field(description="Run ids left out.")
    cases: list[str] = Field(description="Case ids left out, every run of them too.")
    without: dict[str, ExcludedBeside] = Field(description="Per condition, the figures with nothing left out.")


class InspectionSummary(_Result):
    """How much of what was scored people have read (``score/inspection.py``)."""

    runs_scored: int = Field(description="Reviewed runs of the analysed headline cases.")
    runs_read: int = Field(description="Of them, runs a person has read (reviewbench label read).")
    misses: int = Field(description="(run, defect) pairs among the scored runs where the defect was not identified.")
    misses_read: int = Field(description="Of them, misses a person has read.")
    readers: list[str] = Field(description="Who read any of the scored runs.")
    enough: bool = Field(description="At least five scored runs read (every one, when fewer were scored).")
    sample: list[str] = Field(description="When no scored run has been read: five run ids to read first (label "
                              "sample's pick, seed 0); empty otherwise.")
    readings: str = Field(description="The hand-reading log.")


class SeverityBasisFlag(_Result):
    """Primary defect cases whose gold severity rests on no structured basis (``score/severity.py``)."""

    primary_cases: int = Field(description="Analysed primary defect cases (headline defect cases: no holdout, "
                               "exploratory case, mirror or rename variant).")
    structured: int = Field(description="Of them, cases whose every defect has a structured severity basis "
                            "(asset, trigger, consequence, scope, controls).")
    missing: list[str] = Field(description="The others, by case id: flagged.")


class ScoreResult(_Result):
    """``score --json``, typed; the verdicts ride along (excluded from the JSON)."""

    conditions: dict[str, ConditionScore] = Field(description="Per condition, in the experiment's order.")
    comparisons: list[PairedComparison] = Field(description="Paired differences, every pair, both analyses.")
    compare: list[CompareResult] = Field(description="Comparative gates of the gates file.")
    corpus: CorpusSummary
    analysis: AnalysisRecord = Field(description="Tolerance, bootstrap, gates and what the figures mean.")
    registration: RegistrationSummary | None = Field(description="The registration verified, if any.")
    exclusions: ExclusionsResult | None = Field(default=None, description="Set when RUNDIR/exclusions.jsonl "
                                                "leaves runs or cases out: the figures are without them.")
    incidental: IncidentalReport | None = Field(default=None, description="Set when labels call some claims "
                                                "valid incidental findings: each defect with its own id, apart "
                                                "from the gold.")
    inspection: InspectionSummary | None = Field(default=None, description="Hand inspection: scored runs and "
                                                 "misses people have read, and a sample to read when none has.")
    severity_basis: SeverityBasisFlag | None = Field(default=None, description="Primary defect cases without a "
                                                     "structured severity basis, flagged.")
    raters: RatersFigure | None = Field(default=None, description="Set when RUNDIR has labels: the raters' "
                                        "profiles counted over people, and their minutes.")
    verdicts: tuple[FindingVerdict, ...] = Field(default=(), exclude=True, repr=False)

    @classmethod
    def build(cls, data: dict[str, Any], verdicts: list[FindingVerdict]) -> ScoreResult:
        return cls.model_validate({**data, "verdicts": tuple(verdicts)})

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
