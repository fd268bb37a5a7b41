"""Build the report's view model from ``score_run``'s result, the run store and the corpus.

Metrics, intervals, comparisons and decisions are taken from the :class:`ScoreResult` as
they are, and which finding is credited to which defect (the tile map, ``findings.csv``,
SARIF) is read off the per-finding verdicts it carries: nothing is matched again, and the
report is linear in the number of findings.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from .._text import counted
from .._version import __version__
from ..errors import ReviewbenchError, UsageError
from ..evidence.summary import triage_minutes_by_run
from ..records import Defect, Finding, GoldRecord, ValidationStatus
from ..score import eligible_cases, score_run
from ..score.first_review import first_review_note
from ..score.gates import veto_outcome
from ..score.inputs import ScoreOptions
from ..score.levels import describe
from ..score.metrics import CaseInfo
from ..score.registry import RATE_METRICS
from ..score.result import DecisionResult, GateCheck, MetricEvidence, MetricValue, ScoreResult
from ..score.splits import split_difference, split_rows
from ..score.verdicts import Evidence, FindingVerdict
from ..score.versions import version_phrase, version_runs
from ..store.corpus import read_corpus
from ..store.runs import RUNS_DB, RunRow, RunStore, last_errors
from ._model import (
    CaseResult,
    Comparison,
    ConditionView,
    CorpusView,
    Decision,
    DefectRow,
    Metric,
    Outcome,
    ReportData,
    ReportOptions,
    ScoredFinding,
    SplitView,
    Summary,
    Tile,
    Verdict,
)
from .headline import (
    headline_rows,
    inspection_line,
    pair_heading,
    pair_sentences,
    severity_basis_line,
)

__all__ = ["build_report", "classify_findings", "paired_recall"]


def classify_findings(verdicts: Sequence[FindingVerdict]) -> list[tuple[Verdict, str | None]]:
    """Each verdict record in one word, with the defect it is credited to or duplicates."""
    out: list[tuple[Verdict, str | None]] = []
    for v in verdicts:
        if not v.scored:
            out.append((Verdict.NOT_SCORED, None))
        elif v.false_positive:
            out.append((Verdict.FALSE_POSITIVE, None))
        elif v.file_level:
            out.append((Verdict.FILE_LEVEL, None))
        elif v.duplicate_of is not None:
            out.append((Verdict.DUPLICATE, v.defect_id))
        elif v.identified:
            out.append((Verdict.TRUE_POSITIVE, v.defect_id))
        else:
            out.append((Verdict.LOCATED, v.defect_id))
    return out


def _metric(name: str, m: MetricValue, evidence: MetricEvidence | None = None) -> Metric:
    note = ""
    if name == "fp_per_clean_case" and m.distribution is not None:
        d = m.distribution
        note = f"runs with 0/1/2/3+ false positives: {d['0']}/{d['1']}/{d['2']}/{d['3+']}; " \
               f"median {d['median']}, IQR [{d.get('q1')}, {d.get('q3')}], max {d['max']}"  # fmt: skip
    elif name == "completion" and m.states is not None:
        note = ", ".join(f"{k} {v}" for k, v in m.states.items())
    elif name == "latency_s" and m.value is not None:
        note = f"median over {m.den} completed runs; interval column is the IQR; min {m.min}, max {m.max}"
    elif name == "time_to_first_review_s":
        note = first_review_note(m)
    elif name == "tokens" and m.value is not None:
        note = f"in {m.tokens_in}, out {m.tokens_out}, per case {m.per_case}"
    if evidence is None:  # summaries (latency, tokens): measured, not judged
        return Metric(name=name, value=m.value, num=m.num, den=m.den, lo=m.lo, hi=m.hi, note=note)
    return Metric(name=name, value=m.value, num=m.num, den=m.den, lo=m.lo, hi=m.hi, note=note,
                  level=evidence.level.value, evidence=describe(evidence))  # fmt: skip


def _check_line(tier: str, c: GateCheck, veto: bool) -> str:
    observed = "n/a" if c.observed is None else f"{c.observed:.3f}"
    if c.upper is not None:
        observed += f" identified, at most {c.upper:.3f} (located, or what labels can still reach)"
    outcome = "needs labels" if c.passed is None else "pass" if c.passed else "fail"
    if veto:
        outcome = veto_outcome(outcome)
    if c.diff:
        outcome = str(c.status)
        observed += f" for {c.diff[0]} - {c.diff[1]}"
    name = f"veto {tier}" if veto else tier
    return f"{name}: {c.metric} {c.op} {c.threshold:g} — observed {observed} ({outcome})"


def _decision(d: DecisionResult, version: str) -> Decision:
    vetoes = set(d.vetoes)
    checks = [_check_line(tier, c, tier in vetoes) for tier, conditions in d.gates.items() for c in conditions]
    return Decision(authority=d.authority, tier=d.tier, reason=d.reason, permitted=tuple(d.permitted),
                    not_permitted=tuple(d.not_permitted), checks=tuple(checks), status=d.status.value,
                    labels_needed=d.labels_needed, evidence=d.evidence.value, version=version)  # fmt: skip


def _reviewer(experiment: dict, name: str) -> str:
    for condition in experiment.get("condition", []):
        if condition.get("name") == name:
            reviewer = condition.get("reviewer", {})
            parts = [str(reviewer.get("kind", "?"))]
            if reviewer.get("model"):
                parts.append(str(reviewer["model"]))
            if condition.get("context", "diff") != "diff":
                parts.append(f"context {condition['context']}")
            return " · ".join(parts)
    return ""


def _location(defect: Defect) -> tuple[str, ...]:
    out = []
    for loc in defect.locations:
        lines = f"{loc.start_line}" if loc.start_line == loc.end_line else f"{loc.start_line}-{loc.end_line}"
        out.append(f"{loc.path}:{lines}" + (f" ({loc.symbol})" if loc.symbol else ""))
    return tuple(out)


def _summary(outcomes: list[Outcome]) -> Summary:
    done = [o for o in outcomes if o in (Outcome.FOUND, Outcome.LOCATED, Outcome.MISSED)]
    if not done:
        return Summary.NO_RUN
    found = sum(o is Outcome.FOUND for o in done)
    return Summary.EVERY if found == len(done) else Summary.SOME if found else Summary.NEVER


def _corpus_view(corpus, result: ScoreResult) -> CorpusView:
    gold = {g.case_id: g for g in corpus.gold}
    originals = [g for g in gold.values() if g.expect_finding and not g.variant_of]
    observed = sum(1 for g in originals if g.validation and g.validation.status is ValidationStatus.OBSERVED)
    summary = result.corpus
    meta = corpus.meta
    return CorpusView(
        path=str(corpus.path), repo=meta.repo.remote or meta.repo.path, head=meta.repo.head,
        created_at=meta.created_at, cases=summary.cases, by_stratum=dict(meta.counts.by_stratum),
        matched_commits=meta.counts.matched_commits, dropped=dict(sorted(meta.counts.dropped.items())),
        by_validation=summary.by_validation, defect_cases=len(originals), observed=observed,
        eligible_defect_cases=summary.eligible_defect_cases, eligible_controls=summary.eligible_controls,
        eligible_mirrors=summary.eligible_mirrors, eligible_variants=summary.eligible_variants,
        include_unvalidated=summary.include_unvalidated,
    )  # fmt: skip


class _Matched:
    """Per run: the verdicts of its findings and, for completed runs, what each defect got."""

    def __init__(self, run: RunRow, gold: GoldRecord | None, verdicts: Sequence[FindingVerdict]) -> None:
        self.run = run
        self.completed = run.reviewed
        defects = gold.defects if gold else []
        self.verdicts = classify_findings(verdicts)
        index = {d.defect_id: i for i, d in enumerate(defects)}
        self.found = [False] * len(defects)
        self.located = [False] * len(defects)
        self.matched: dict[int, Finding] = {}
        self.judged: dict[int, Evidence] = {}
        """Per defect: who judged its outcome (the identifying comment's, else the lowest there)."""
        for finding, (verdict, _), record in zip(run.findings, self.verdicts, verdicts, strict=True):
            # Where the comment lands, whoever judged it: one people call a false positive
            # stays located (as located_recall counts it), never found.
            i = index.get(record.defect_id) if record.defect_id is not None else None
            if i is None:
                continue
            self.located[i] = True
            if not self.found[i]:
                seen = self.judged.get(i)
                self.judged[i] = record.evidence if seen is None or record.evidence.rank < seen.rank else seen
            if record.identified and not self.found[i]:  # a duplicate may identify it (after a label)
                self.found[i] = True
                self.matched[i] = finding
                self.judged[i] = record.evidence
            elif verdict in (Verdict.LOCATED, Verdict.FALSE_POSITIVE):
                self.matched.setdefault(i, finding)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for v, _ in self.verdicts if v is verdict)


def _tile(m: _Matched | None, condition: str, rep: int, index: int) -> Tile:
    if m is None:
        return Tile(condition=condition, repetition=rep, outcome=Outcome.NOT_RUN, state=None, run_id=None,
                    finding=None)  # fmt: skip
    run = m.run
    if not m.completed:
        return Tile(condition=condition, repetition=rep, outcome=Outcome.INCOMPLETE, state=run.state,
                    run_id=run.run_id, finding=None, error=run.error, try_no=run.try_no)  # fmt: skip
    outcome = Outcome.FOUND if m.found[index] else Outcome.LOCATED if m.located[index] else Outcome.MISSED
    return Tile(condition=condition, repetition=rep, outcome=outcome, state=run.state, run_id=run.run_id,
                finding=m.matched.get(index), findings=tuple(run.findings), try_no=run.try_no,
                evidence=m.judged.get(index, Evidence.AUTOMATIC).value)  # fmt: skip


def _rep_outcome(m: _Matched | None, case: CaseInfo) -> str:
    if m is None:
        return "not_run"
    if not m.completed:
        return m.run.state
    if case.control:
        return "flagged" if m.run.findings else "clean"
    k, n = sum(m.found), len(m.found)
    if k == 0 and any(m.located):
        return "located"
    return "found" if k == n else "missed" if k == 0 else f"found {k}/{n}"


def _case_result(case: CaseInfo, condition: str, reps: int, by_rep: dict[int, _Matched]) -> CaseResult:
    matched = list(by_rep.values())
    completed = [m for m in matched if m.completed]
    scored = completed if not case.control else []
    kind = "control" if case.control else "rename variant" if case.variant else "defect"
    return CaseResult(
        case_id=case.case_id, condition=condition, kind=kind, stratum=case.stratum,
        variant_of=case.cluster if case.variant else None, defects=len(case.defects),
        outcomes=tuple(_rep_outcome(by_rep.get(r), case) for r in range(reps)),
        runs=len(matched), completed=len(completed),
        found_pairs=sum(sum(m.found) for m in scored), defect_pairs=sum(len(m.found) for m in scored),
        true_positives=sum(m.count(Verdict.TRUE_POSITIVE) for m in completed),
        located=sum(m.count(Verdict.LOCATED) for m in completed),
        false_positives=sum(m.count(Verdict.FALSE_POSITIVE) for m in completed),
        duplicates=sum(m.count(Verdict.DUPLICATE) for m in completed),
        findings=sum(len(m.run.findings) for m in completed),
    )  # fmt: skip


def _chosen(result: ScoreResult, wanted: tuple[str, ...], rundir: Path) -> list[str]:
    names = list(result.conditions)
    unknown = [w for w in wanted if w not in names]
    if unknown:
        known = ", ".join(names) or "none"
        raise UsageError(f"{rundir} has no condition named {', '.join(unknown)} (conditions: {known})")
    return [n for n in names if n in wanted] if wanted else names


def build_report(rundir: Path, options: ReportOptions | None = None, scored: ScoreResult | None = None) -> ReportData:
    """Score ``rundir`` and join the result with its runs and corpus.

    ``scored``: a ``score_run`` result already computed with these options (the demo has
    one), so the run directory is not scored twice.

    Raises:
        CorpusError: the run directory or its corpus is missing or damaged.
        UsageError: a condition named in ``options`` does not exist, or scoring refused.
    """
    options = options or ReportOptions()
    result = scored if scored is not None else score_run(
        rundir, ScoreOptions(tolerance=options.tolerance, bootstrap=options.bootstrap,
                             include_unvalidated=options.include_unvalidated, overrides=options.overrides,
                             cutoff=options.cutoff),
    )  # fmt: skip
    names = _chosen(result, options.conditions, rundir)
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = [r for r in store.runs() if r.condition in names]
        experiment = json.loads(store.get_meta("experiment") or "{}")
    finally:
        store.close()
    if result.registration and result.registration.scored_runs:  # the runs its decision rests on
        runs = version_runs(runs, rundir, result.registration.version)
    if result.exclusions:  # left out of every figure: out of the tables too
        left_out = set(result.exclusions.runs)
        runs = [r for r in runs if r.run_id not in left_out and r.case_id not in result.exclusions.cases]
    corpus = read_corpus(Path(result.corpus.path))
    gold = {g.case_id: g for g in corpus.gold}
    include_unvalidated = result.corpus.include_unvalidated
    cases = eligible_cases(corpus, include_unvalidated)
    if result.exclusions:
        cases = {k: c for k, c in cases.items() if k not in result.exclusions.cases}
    by_run: dict[str, list[FindingVerdict]] = defaultdict(list)
    for v in result.verdicts:  # one pass: verdicts are in run order, findings in index order
        by_run[v.run_id].append(v)

    matched: dict[tuple[str, str, int], _Matched] = {}
    findings: list[ScoredFinding] = []
    for run in runs:
        verdicts = by_run.get(run.run_id, [])
        m = _Matched(run, gold.get(run.case_id), verdicts)
        matched[(run.case_id, run.condition, run.repetition)] = m
        for i, (finding, (verdict, defect_id), record) in enumerate(zip(run.findings, m.verdicts, verdicts,
                                                                         strict=True)):  # fmt: skip
            findings.append(ScoredFinding(
                run_id=run.run_id, case_id=run.case_id, condition=run.condition, repetition=run.repetition,
                index=i, finding=finding, verdict=verdict, defect_id=defect_id, in_analysis=run.case_id in cases,
                comment_id=record.comment_id, identified_by=record.identified_by.value if record.identified_by
                else None, evidence=record.evidence.value, unclear=record.unclear,
            ))  # fmt: skip

    recorded = max((r.repetition + 1 for r in runs), default=0)
    reps = max(int(experiment.get("repeats", 0) or 0), recorded, 1)
    by_case: dict[tuple[str, str], dict[int, _Matched]] = defaultdict(dict)
    for (case_id, condition, rep), m in matched.items():
        by_case[(case_id, condition)][rep] = m

    defects: list[DefectRow] = []
    case_results: list[CaseResult] = []
    for case_id in sorted(cases):
        case = cases[case_id]
        for name in names:
            case_results.append(_case_result(case, name, reps, by_case.get((case_id, name), {})))
        if case.control or case.variant:
            continue
        for i, defect in enumerate(case.defects):
            tiles = tuple(_tile(matched.get((case_id, name, r)), name, r, i) for name in names for r in range(reps))
            summaries = {name: _summary([t.outcome for t in tiles if t.condition == name]) for name in names}
            defects.append(DefectRow(
                case_id=case_id, stratum=case.stratum, defect_id=defect.defect_id,
                defect_class=defect.defect_class, severity=defect.severity.value if defect.severity else None,
                locations=_location(defect), tiles=tiles, summaries=summaries,
            ))  # fmt: skip

    conditions = []
    for name in names:
        score = result.conditions[name]
        levels = score.metric_evidence or {}
        shown = (*RATE_METRICS, "latency_s", "tokens", "time_to_first_review_s")  # the last: forge conditions only
        metrics = {m: _metric(m, score.metrics[m], levels.get(m)) for m in shown if m in score.metrics}
        end_to_end = {m: _metric(m, score.end_to_end.metrics[m], levels.get(m)) for m in RATE_METRICS}
        latencies = tuple(r.latency_s for r in runs if r.condition == name and r.case_id in cases
                          and r.latency_s is not None and r.reviewed)  # fmt: skip
        drift = score.model_drift
        conditions.append(ConditionView(
            name=name, reviewer=_reviewer(experiment, name), metrics=metrics, states=score.states,
            valid_defect_cases=score.valid_defect_cases, decision=_decision(score.decision, version_phrase(result.registration)),
            fp_distribution=score.metrics["fp_per_clean_case"].distribution or {}, latencies=latencies,
            end_to_end=end_to_end, evidence=score.evidence.value, unclear=score.unclear,
            judge_secondary=score.judge_secondary,
            splits=tuple(SplitView(label=row.label, kind=row.kind,
                                   metrics={m: _metric(m, v) for m, v in row.metrics.items()})
                         for row in split_rows(score.holdout, score.cutoff)),
            split_difference=split_difference(score.cutoff),
            model_drift=(f"requested {', '.join(drift.requested) or 'none'}; returned {', '.join(drift.returned)}"
                         if drift else None),
        ))  # fmt: skip
    chosen = set(names)
    comparisons = tuple(Comparison(**c.model_dump()) for c in result.comparisons if c.a in chosen and c.b in chosen)

    notes = ["defect_recall and precision count identified findings: by people, else a calibrated judge, else a "
             "finding that names the defect while the same reviewer named nothing of it on the defect's mirror (the "
             "same change, clean); named_recall counts naming alone, located_recall where findings land"]
    audit = result.analysis.audit
    notes.append(audit.line if audit else "matcher audit: not run on this corpus (reviewbench audit CORPUS)")
    if result.registration and not result.registration.pre_registered:
        notes.append("registered after runs: the gates and rules were fixed after results could be seen")
    if result.exclusions:  # the figures are without them: what they would be with them back in
        excluded = result.exclusions
        notes.append(f"exclusions: {counted(len(excluded.runs), 'run')}, {counted(len(excluded.cases), 'case')} left out, each with its "
                     "reason in exclusions.jsonl; the figures are without them")  # fmt: skip
        for name, beside in excluded.without.items():
            d = beside.decision
            state = "changes to" if beside.decision_changes else "stays"
            notes.append(f"{name} without exclusions: defect_recall {beside.defect_recall.num}/"
                         f"{beside.defect_recall.den}, false_alarm_rate {beside.false_alarm_rate.num}/"
                         f"{beside.false_alarm_rate.den}; the decision {state} {d.authority} "
                         f"({d.status.value.replace('_', ' ')})")  # fmt: skip
    notes.extend(_incidental_notes(result, names))
    if result.inspection:
        notes.append(inspection_line(result.inspection))
    if result.severity_basis and result.severity_basis.missing:
        notes.append(severity_basis_line(result.severity_basis))
    scoped = result.registration.scored_runs if result.registration else None
    for number, count in (scoped.other_versions if scoped else {}).items():
        assert scoped is not None
        notes.append(f"{count} runs ran under version {number}: not scored under version {scoped.version}, "
                     f"whose gates and rules came after them (score --version {number})")  # fmt: skip
    if include_unvalidated:
        notes.append("--include-unvalidated: cases whose defect no test observed are scored too")
    if not runs:
        notes.append("no runs recorded for the chosen conditions")
    try:
        errors = {name: " ".join(f"{e.state.value} {e.case_id}: {e.error}".split())[:200]
                  for name, e in last_errors(rundir).items()}  # fmt: skip
    except ReviewbenchError:
        errors = {}
    headline = tuple(row for row in headline_rows(result, errors) if row.condition in chosen)
    pairs = tuple(p for p in pair_sentences(result) if p.a in chosen and p.b in chosen)
    return ReportData(
        headline=headline, pairs=pairs, pair_heading=pair_heading(result),
        rundir=rundir, generated_at=datetime.now(UTC).isoformat(timespec="seconds"), tool_version=__version__,
        options=options, conditions=tuple(conditions), comparisons=comparisons, repetitions=reps,
        defects=tuple(defects), cases=tuple(case_results), findings=tuple(findings), runs=tuple(runs),
        analysed_cases=frozenset(cases), corpus=_corpus_view(corpus, result), analysis=result.analysis,
        registration=result.registration, notes=tuple(notes), triage_by_run=triage_minutes_by_run(rundir),
    )  # fmt: skip


def _incidental_notes(result: ScoreResult, names: Sequence[str]) -> list[str]:
    """Valid incidental findings, apart from the gold, and each condition's clean set without the
    cases they contaminate."""
    report = result.incidental
    if report is None:
        return []
    notes = [f"valid incidental findings: {len(report.defects)} defects none of the gold's, reported apart "
             f"(score --json incidental), in no recall denominator; {len(report.contaminated)} clean cases "
             "contaminated by one"]  # fmt: skip
    for name in names:
        beside = result.conditions[name].contamination
        if beside is not None:
            state = "changes to" if beside.decision_changes else "stays"
            notes.append(f"{name} without contaminated clean cases: false_alarm_rate "
                         f"{beside.false_alarm_rate.num}/{beside.false_alarm_rate.den}, fp_per_clean_case "
                         f"{beside.fp_per_clean_case.num}/{beside.fp_per_clean_case.den}; the decision {state} "
                         f"{beside.decision.authority} ({beside.decision.status.value.replace('_', ' ')})")  # fmt: skip
    return notes


def paired_recall(data: ReportData) -> list[tuple[str, str, list[tuple[str, float, float]]]]:
    """Per pair of conditions, (case, recall under a, recall under b) on shared defect cases."""
    recall: dict[tuple[str, str], float] = {}
    for c in data.cases:
        if c.kind == "defect" and c.recall is not None:
            recall[(c.case_id, c.condition)] = c.recall
    out = []
    for a, b in itertools.combinations([c.name for c in data.conditions], 2):
        shared = sorted({case for case, cond in recall if cond == a} & {case for case, cond in recall if cond == b})
        out.append((a, b, [(case, recall[(case, a)], recall[(case, b)]) for case in shared]))
    return out
