"""Entry point of scoring: a run directory in, a frozen :class:`ScoreResult` out.

One pass over the runs turns every finding into a typed verdict (``verdicts.py``), written
to ``RUNDIR/verdicts.jsonl``; every metric of both analyses (completed runs, end-to-end) is
then counted from those verdicts, resampled once, and judged by the gates.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..config.prices import PriceTable
from ..errors import UsageError
from ..records import GoldRecord, Stratum, ValidationStatus
from ..store.corpus import Corpus, read_corpus
from ..store.runs import RUNS_DB, RunRow, RunStore
from .audit import AuditCheck, unsound
from .bounds import open_pairs, reachable
from .calibration import calibration_kind, never_earned
from ..store.exclusions import read_exclusions
from .cost import condition_cost
from .cutoff import case_dates, cutoff_scores, parse_cutoff
from .discriminate import discriminate, mirror_of, pairings
from .drift import per_model_scores
from .exclusions import excluded_ids, exclusion_summary
from .first_review import first_reviews
from .forge_trees import tree_differences
from .gates import Compare, Gates, decide, evaluate_compare, load_gates, wilson
from .levels import metric_evidence
from .metrics import (
    CaseInfo,
    ConditionTally,
    RunOutcome,
    fp_distribution,
    latency_summary,
    run_outcome,
    tally_condition,
    with_mirror,
)
from .paired import difference, mcnemar_table, paired_columns
from .registry import RATE_METRICS
from .secondary import judge_gates, judge_secondary
from .result import LabelFigures, ScoreResult
from .stats import percentile_interval, resample_ratios
from .strata import holdout_scores, split_holdout
from .unclear import decision_summary, variant_tables, with_unclear
from .versions import check_past_version, registered_gates, scoped_runs
from .verdicts import (
    VERDICTS_FILE,
    Evidence,
    FindingVerdict,
    VerdictOverride,
    apply_overrides,
    judge_run,
    write_verdicts,
)

__all__ = ["RunTallies", "ScoreOptions", "cluster_sums", "eligible_cases", "score_run", "tally_runs"]

_DEFAULTS = {"tolerance": 3, "bootstrap": 10_000, "include_unvalidated": False}
_ANALYSES = ("completed", "end_to_end")


@dataclass(frozen=True)
class ScoreOptions:
    tolerance: int | None = None
    """None: the registered tolerance, or 3."""
    bootstrap: int | None = None
    """None: the registered resample count, or 10,000."""
    seed: int | None = None
    """None: the registered bootstrap seed, or 0."""
    gates: Path | None = None
    """None: the registered gates, or the built-in table."""
    include_unvalidated: bool | None = None
    """None: as registered, or False."""
    new_version: bool = False
    """Register changed inputs as a new benchmark version instead of refusing."""
    overrides: Mapping[str, VerdictOverride] = field(default_factory=dict)
    """Judge or human labels by comment_id; they replace automatic verdicts (docs/SCORING.md)."""
    cutoff: str | None = None
    """Contamination cut-off (YYYY-MM-DD); None: the experiment's registered ``cutoff``, if any."""
    labels: Mapping[str, LabelFigures] = field(default_factory=dict)
    """People's figures by condition (``label.report.label_figures``): the gates may read
    them, and each condition carries them; a condition without is "not scored" on them."""
    prices: PriceTable | None = None
    """A price table (``score --prices``): each condition's cost per run and per identified
    defect (``score/cost.py``), apart from the token usage; None: no cost."""
    historical: bool = False
    """Read the runs as history (``compare``, ``gate``): the registration file is verified and
    its rules apply, but today's experiment file, prompts, guidance and gates need not match
    it (a rerun after a prompt edit changed them); the gates are not applied (built-in)."""
    version: int | None = None
    """A registered benchmark version to score (None: the latest); each scores only the runs
    started under it (``score/versions.py``)."""
    exclusions: bool = True
    """Apply ``RUNDIR/exclusions.jsonl`` (and score without it beside); False: leave nothing out."""


def _valid(gold: GoldRecord, include_unvalidated: bool) -> bool:
    if include_unvalidated:
        return True
    status = gold.validation.status if gold.validation else None
    if not gold.expect_finding:
        return status is ValidationStatus.NOT_OBSERVED  # a control is valid when tests pass
    return status is ValidationStatus.OBSERVED


def eligible_cases(corpus: Corpus, include_unvalidated: bool) -> dict[str, CaseInfo]:
    """Cases in the analysis: observed defect cases and passing clean cases (or all, widened).

    A rename variant needs its original in the analysis too: it is scored against it. A
    mirror needs its defect case: unpaired, it is a clean case with a fix's shape (on tomli,
    the valid mirrors of 11 unobserved fix reversals, 2 to 39 changed lines, made diff shape
    tell clean cases from the 1-3-line valid defect cases). A rename variant and a mirror are
    resampled in their original's (defect case's) cluster.
    """
    gold = {g.case_id: g for g in corpus.gold}
    # A mirror is resampled with its defect case: the pair figures read both together.
    paired_with = {}
    for defect_id, mirror in mirror_of(corpus.gold).items():
        if not gold[defect_id].variant_of:
            paired_with.setdefault(mirror.case_id, defect_id)
    partners: dict[str | None, list[GoldRecord]] = {}
    for g in corpus.gold:
        if g.pair_id is not None and g.stratum != Stratum.MIRROR and g.expect_finding and not g.variant_of:
            partners.setdefault(g.pair_id, []).append(g)
    out: dict[str, CaseInfo] = {}
    for case in corpus.cases:
        g = gold.get(case.case_id)
        if g is None or not _valid(g, include_unvalidated):
            continue
        original = g.variant_of
        if original and (original not in gold or not _valid(gold[original], include_unvalidated)):
            continue
        if g.stratum == Stratum.MIRROR and not any(_valid(d, include_unvalidated) for d in partners.get(g.pair_id, ())):
            continue
        out[case.case_id] = CaseInfo(
            case_id=case.case_id,
            cluster=original or paired_with.get(case.case_id) or case.case_id,
            stratum=g.stratum,
            control=not g.expect_finding,
            variant=original is not None,
            defects=tuple(g.defects),
            paths=tuple(case.paths),
        )
    return out


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def _value(num: float, den: float) -> float | None:
    return round(num / den, 6) if den > 0 else None


def cluster_sums(rows, index: dict[str, int], stratum: str | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # type: ignore[no-untyped-def]
    """Per metric, the per-cluster sums of numerators and denominators (one pass)."""
    size = len(index)
    empty = {m: (np.zeros(size), np.zeros(size)) for m in RATE_METRICS}
    rows = [r for r in rows if stratum is None or r[4] == stratum]
    if not rows:
        return empty
    metric_of = {m: i for i, m in enumerate(RATE_METRICS)}
    metrics, clusters, nums, dens = zip(*((metric_of[r[0]], index[r[1]], r[2], r[3]) for r in rows), strict=True)
    flat = np.asarray(metrics) * size + np.asarray(clusters)
    length = len(RATE_METRICS) * size
    num = np.bincount(flat, weights=np.asarray(nums), minlength=length).reshape(len(RATE_METRICS), size)
    den = np.bincount(flat, weights=np.asarray(dens), minlength=length).reshape(len(RATE_METRICS), size)
    return {m: (num[i], den[i]) for m, i in metric_of.items()}


def _breakdown(tally: ConditionTally) -> dict:
    groups: dict[str, dict[str, dict[str, list[float]]]] = {"stratum": {}, "defect_class": {}, "severity": {}}
    for metric, _cluster, num, den, stratum, cls, severity in tally.rows:
        for axis, key in (("stratum", stratum), ("defect_class", cls), ("severity", severity)):
            if key is None:
                continue
            cell = groups[axis].setdefault(key, {}).setdefault(metric, [0.0, 0.0])
            cell[0] += num
            cell[1] += den
    return {
        axis: {key: {m: {"value": _value(n, d), "num": _number(n), "den": _number(d)}
                     for m, (n, d) in sorted(metrics.items())}
               for key, metrics in sorted(by_key.items())}
        for axis, by_key in groups.items()
    }  # fmt: skip


@dataclass(frozen=True)
class _Inputs:
    runs: list[RunRow]
    corpus: Corpus
    experiment: dict
    registration: dict | None
    gates: Gates
    gates_path: Path | None
    gates_sha: str
    seed: int
    tolerance: int
    bootstrap: int
    include_unvalidated: bool
    excluded_cases: frozenset[str] = frozenset()
    """Cases the exclusion log leaves out (their runs are out of ``runs`` already)."""
    history: list[RunRow] = field(default_factory=list)
    """Earlier attempts that ``run --retry-failed`` replaced (they count in completion)."""


def _load(rundir: Path, options: ScoreOptions) -> _Inputs:
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = list(store.runs())
        history = store.history()
        corpus_path = store.get_meta("corpus_path")
        recorded_gold = store.get_meta("gold_sha256")
        experiment = json.loads(store.get_meta("experiment") or "{}")
        experiment_file = store.get_meta("experiment_path")
        sealed = store.get_meta("registration_sha256")  # a registration the runs recorded
    finally:
        store.close()
    if not corpus_path:
        raise UsageError(f"{rundir} records no corpus; was it written by 'reviewbench run'?")
    corpus = read_corpus(Path(corpus_path))
    if recorded_gold and corpus.meta.gold_sha256 != recorded_gold:
        raise UsageError(f"the gold of {corpus_path} changed since these runs; scoring would mix benchmark versions")
    from ..registration import (  # registration reads gates: no cycle
        REGISTRATION_FILE,
        check_registration,
        version_summary,
    )
    from ..review.experiment import load_experiment

    asked = {"tolerance": options.tolerance, "bootstrap": options.bootstrap,
             "include_unvalidated": options.include_unvalidated}  # fmt: skip
    registration = None
    experiment_path = experiment_file and Path(experiment_file)
    if options.historical:
        from ..registration import registered_summary

        registration = registered_summary(rundir)
    elif options.version is not None:  # a version as history: its own gates and rules, its own runs
        check_past_version(options.version, asked, options.seed, options.new_version)
        registration = version_summary(rundir, options.version)
    # Also when the file is gone but the runs recorded one: check_registration refuses that.
    elif experiment_path and ((rundir / REGISTRATION_FILE).exists() or sealed):
        registration = check_registration(load_experiment(experiment_path), rundir, options.gates, options.seed,
                                          new_version=options.new_version, rules=asked)  # fmt: skip
    if registration:
        runs, registration = scoped_runs(runs, rundir, registration)
    rules = {k: (v if v is not None else _DEFAULTS[k]) for k, v in asked.items()}
    gates_path = options.gates
    seed = options.seed if options.seed is not None else 0
    if registration:
        if gates_path is None and registration["gates"]["path"] != "built-in" and not options.historical:
            gates_path = Path(registration["gates"]["path"])
        seed = registration["seeds"]["bootstrap"] if options.seed is None else options.seed
        rules = registration["rules"]
    strata = {g.stratum for g in corpus.gold}
    if registration and registration.get("historical"):
        gates, gates_sha = registered_gates(rundir, registration, options.gates, strata)
    else:
        gates, _, gates_sha = load_gates(gates_path, strata=strata)
    excluded_runs, excluded_cases = excluded_ids(read_exclusions(rundir)) if options.exclusions else ((), ())
    runs = [r for r in runs if r.run_id not in excluded_runs and r.case_id not in excluded_cases]
    return _Inputs(runs, corpus, experiment, registration, gates, gates_path, gates_sha, seed,
                   int(rules["tolerance"]), int(rules["bootstrap"]), bool(rules["include_unvalidated"]),
                   frozenset(excluded_cases), history)  # fmt: skip


def judge_runs(runs: list[RunRow], corpus: Corpus, cases: dict[str, CaseInfo], tolerance: int,
               overrides: Mapping[str, VerdictOverride]) -> dict[str, list[FindingVerdict]]:  # fmt: skip
    """Every run's verdicts, by run id: matched, tested against the mirror
    (``discriminate.py``), then labels applied by comment_id."""
    gold = {g.case_id: g for g in corpus.gold}
    paths = {c.case_id: c.paths for c in corpus.cases}
    automatic: dict[str, list[FindingVerdict]] = {}
    for run in runs:
        g = gold.get(run.case_id)
        automatic[run.run_id] = judge_run(
            run_id=run.run_id, case_id=run.case_id, condition=run.condition, repetition=run.repetition,
            findings=run.findings, defects=g.defects if g else [], paths=paths.get(run.case_id, []),
            tolerance=tolerance, scored=run.case_id in cases and run.state.completed,
        )  # fmt: skip
    judged = discriminate(automatic, runs, gold, cases, tolerance)
    return {run_id: apply_overrides(v, overrides) if overrides else v for run_id, v in judged.items()}


def _drift(tally: ConditionTally, configured: str | None) -> dict | None:
    """Model drift: several returned ids, or one other than the model the experiment asked for.

    Without a configured model (tools, baselines, commands) the runner records the kind as
    "requested"; only a change between runs is drift then.
    """
    returned = sorted(tally.models_returned)
    requested = sorted(tally.models_requested)
    if len(returned) > 1 or (configured and returned and set(returned) != {configured}):
        return {"requested": requested, "returned": returned}
    return None


def _configured_model(experiment: dict, name: str) -> str | None:
    for condition in experiment.get("condition", []):
        if condition.get("name") == name:
            model = (condition.get("reviewer") or {}).get("model")
            return str(model) if model else None
    return None


@dataclass(frozen=True)
class RunTallies:
    """A run directory read and counted as scoring counts it, before any resample: what
    ``score_run`` and the comparison of two run directories (``compare.py``) both start from."""

    inputs: _Inputs
    everything: dict[str, CaseInfo]
    """Every case in the analysis, holdout strata included."""
    cases: dict[str, CaseInfo]
    """The headline's cases (no holdout stratum)."""
    holdout: dict[str, CaseInfo]
    verdicts: dict[str, list[FindingVerdict]]
    outcomes: dict[str, RunOutcome]
    by_condition: dict[str, list[RunRow]]
    names: list[str]
    """Conditions in the experiment's order, then any others by name."""
    tallies: dict[tuple[str, str], ConditionTally]
    """By (condition, analysis): ``completed`` and ``end_to_end``."""


def tally_runs(rundir: Path, options: ScoreOptions = ScoreOptions(), only: set[str] | None = None) -> RunTallies:
    """Judge every run of ``rundir`` and tally each condition in both analyses.

    Args:
        only: case ids to keep in the analysis (None: every eligible case); the runs of the
            others are still judged, so a kept case's mirror still decides discrimination.

    Raises:
        CorpusError, UsageError: as :func:`score_run`.
    """
    inputs = _load(rundir, options)
    corpus, runs = inputs.corpus, inputs.runs
    everything = {k: c for k, c in eligible_cases(corpus, inputs.include_unvalidated).items()
                  if k not in inputs.excluded_cases}  # fmt: skip
    verdicts = judge_runs(runs, corpus, everything, inputs.tolerance, options.overrides)
    paired = pairings(runs, {g.case_id: g for g in corpus.gold}, everything)
    outcomes: dict[str, RunOutcome] = {
        run.run_id: with_mirror(run_outcome(run, everything[run.case_id], verdicts[run.run_id]),
                                paired.get(run.run_id))  # fmt: skip
        for run in runs if run.case_id in everything
    }
    if only is not None:
        everything = {k: c for k, c in everything.items() if k in only}
    cases, holdout = split_holdout(everything)  # natural cases: beside the headline, never in it
    order = [c["name"] for c in inputs.experiment.get("condition", [])]
    by_condition: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_condition[run.condition].append(run)
    names = [n for n in order if n in by_condition] + sorted(set(by_condition) - set(order))
    retired: dict[str, list[RunRow]] = defaultdict(list)
    for old in inputs.history:
        retired[old.condition].append(old)
    tallies = {(name, analysis): tally_condition(by_condition[name], cases, outcomes, analysis == "end_to_end",
                                                 retired[name])
               for name in names for analysis in _ANALYSES}  # fmt: skip
    return RunTallies(inputs, everything, cases, holdout, verdicts, outcomes, dict(by_condition), names, tallies)


def score_run(rundir: Path, options: ScoreOptions = ScoreOptions()) -> ScoreResult:
    """Score every condition of a run directory (see ``docs/SCORING.md``).

    Writes ``RUNDIR/verdicts.jsonl`` (every finding's verdict) as a side effect.

    Raises:
        CorpusError: the run directory or its corpus is missing.
        UsageError: the corpus's gold changed since the runs, registered rules or inputs
            changed, or the gates are invalid.
    """
    log = read_exclusions(rundir) if options.exclusions else []
    # Nothing left out, first: the figures beside (this pass writes verdicts.jsonl last).
    without = score_run(rundir, replace(options, exclusions=False)) if log else None
    tallied = tally_runs(rundir, options)
    inputs, cases, holdout, verdicts = tallied.inputs, tallied.cases, tallied.holdout, tallied.verdicts
    gates, corpus, runs = inputs.gates, inputs.corpus, inputs.runs
    outcomes, by_condition, names, tallies = tallied.outcomes, tallied.by_condition, tallied.names, tallied.tallies
    cutoff_text = options.cutoff or inputs.experiment.get("cutoff")
    cutoff = parse_cutoff(cutoff_text) if cutoff_text else None
    dates = case_dates(corpus) if cutoff else {}
    audit = AuditCheck(corpus.path, corpus.meta.gold_sha256)
    write_verdicts(rundir / VERDICTS_FILE, (v for run in runs for v in verdicts[run.run_id]))

    clusters = sorted({c.cluster for c in cases.values()})
    index = {cluster: i for i, cluster in enumerate(clusters)}
    columns: list[tuple[np.ndarray, np.ndarray]] = []
    slots: dict[tuple, int] = {}
    sums = {(name, analysis, metric): pair for (name, analysis), tally in tallies.items()
            for metric, pair in cluster_sums(tally.rows, index).items()}  # fmt: skip
    for key, pair in sums.items():
        slots[key] = len(columns)
        columns.append(pair)
    pairs = list(itertools.combinations(names, 2))
    for a, b in pairs:
        for analysis in _ANALYSES:
            for metric in RATE_METRICS:
                # paired: only cases both conditions were scored on
                both = paired_columns(sums[(a, analysis, metric)], sums[(b, analysis, metric)])
                for who, column in zip(("a", "b"), both, strict=True):
                    slots[(a, b, analysis, metric, who)] = len(columns)
                    columns.append(column)
    unclear_slots: dict[str, tuple[int, int]] = {}  # the precision variants of the gated analysis
    for name in names:
        rows = tallies[(name, gates.analysis)].unclear
        if not rows:
            continue
        left_out = np.zeros(len(clusters))
        np.add.at(left_out, [index[r[0]] for r in rows], [float(r[2]) for r in rows])
        n, d = sums[(name, gates.analysis, "precision")]
        unclear_slots[name] = (len(columns), len(columns) + 1)
        columns.append(with_unclear(n, d, left_out, as_true=False))
        columns.append(with_unclear(n, d, left_out, as_true=True))
    compares = [*gates.compare, *(c.as_compare(f"{t.name}: {c.metric} {c.diff[0]} - {c.diff[1]}")
                                  for t in (*gates.veto, *gates.tier) for c in t.when if c.diff)]  # fmt: skip
    compare_slots = _compare_columns(compares, tallies, index, names, columns, gates.analysis)
    if columns:
        num = np.column_stack([c[0] for c in columns])
        den = np.column_stack([c[1] for c in columns])
    else:
        num = den = np.zeros((len(clusters), 0))
    samples = resample_ratios(num, den, inputs.bootstrap, inputs.seed)
    lo, hi = percentile_interval(samples)

    def interval(slot: int) -> tuple[float | None, float | None]:
        low, high = lo[slot], hi[slot]
        return (None, None) if np.isnan(low) else (round(float(low), 6), round(float(high), 6))

    def paired(sa: int, sb: int) -> tuple[float | None, float | None, float | None]:
        return difference(columns[sa], columns[sb], samples[:, sa], samples[:, sb])

    def metrics_of(name: str, analysis: str) -> dict[str, dict]:
        tally = tallies[(name, analysis)]
        metrics: dict[str, dict] = {}
        for metric in RATE_METRICS:
            n, d = sums[(name, analysis, metric)]
            total_n, total_d = float(n.sum()), float(d.sum())
            low, high = interval(slots[(name, analysis, metric)]) if total_d > 0 else (None, None)
            metrics[metric] = {"value": _value(total_n, total_d), "num": _number(total_n),
                               "den": _number(total_d), "lo": low, "hi": high}  # fmt: skip
        metrics["fp_per_clean_case"]["distribution"] = fp_distribution(tally.control_fps)
        metrics["completion"]["states"] = dict(sorted(tally.states.items()))
        if tally.retired:
            metrics["completion"]["retired"] = dict(sorted(tally.retired.items()))
        missed, attempts = tally.missing
        metrics["completion"]["missing_reviews"] = {"value": _value(missed, attempts), "num": missed,
                                                    "den": attempts}  # fmt: skip
        metrics["completion"]["failure_codes"] = dict(sorted(tally.failure_codes.items()))
        for rule, (found, eligible, uncovered) in sorted(tally.rules.items()):
            low, high = wilson(found, eligible) if eligible else (None, None)
            metrics[f"defect_recall@rule:{rule}"] = {
                "value": _value(found, eligible), "num": found, "den": eligible,
                "lo": None if low is None else round(low, 6), "hi": None if high is None else round(high, 6),
                "not_eligible": uncovered}  # fmt: skip
        metrics["completion"]["failure_codes_by_stratum"] = {
            stratum: dict(sorted(codes.items())) for stratum, codes in sorted(tally.failure_codes_by_stratum.items())}
        metrics["latency_s"] = latency_summary(tally.latencies)
        forge = first_reviews(r for r in by_condition[name] if r.case_id in cases)
        if forge is not None:  # forge conditions only: absent elsewhere, not zero
            metrics["time_to_first_review_s"] = forge
        total_tokens = tally.tokens_in + tally.tokens_out
        metrics["tokens"] = {
            "value": total_tokens if tally.runs_with_usage else None, "num": None,
            "den": tally.runs_with_usage, "lo": None, "hi": None,
            "in": tally.tokens_in, "out": tally.tokens_out,
            "per_case": round(total_tokens / len(tally.cases_with_usage), 3) if tally.cases_with_usage else None,
        }  # fmt: skip
        return metrics

    evaluated = []
    for i, gate in enumerate(compares):
        if i not in compare_slots:
            known = ", ".join(names) or "none"
            raise UsageError(f"{gate.name}: no condition named {' or '.join(gate.diff)} (conditions: {known})")
        evaluated.append(evaluate_compare(gate, *paired(*compare_slots[i])))
    compared = evaluated[: len(gates.compare)]
    in_tiers = [c for t in (*gates.veto, *gates.tier) for c in t.when if c.diff]
    comparative = dict(zip(in_tiers, evaluated[len(gates.compare):], strict=True))

    valid_controls = sum(1 for c in cases.values() if c.control)
    gated_names = sorted({c.metric for t in (*gates.veto, *gates.tier) for c in t.when if c.diff is None})
    still_open = defaultdict(list)
    for pair in open_pairs((v for run in runs for v in verdicts[run.run_id]), cases):
        still_open[pair.condition].append(pair)
    conditions: dict[str, dict] = {}
    for name in names:
        views = {analysis: (metrics_of(name, analysis), _breakdown(tallies[(name, analysis)]))
                 for analysis in _ANALYSES}  # fmt: skip
        completed = tallies[(name, "completed")]
        gated = tallies[(name, gates.analysis)]
        levels = [Evidence(e) for e in gated.evidence] or [Evidence.AUTOMATIC]
        evidence = min(levels, key=lambda e: e.rank)
        valid_defect_cases = len({k[0] for k in completed.found})
        # The gates count the cases their analysis measured: end to end, a defect case whose
        # review went missing is a measured miss, not a case short of evidence.
        gated_cases = len({k[0] for k in gated.found})
        metrics, breakdown = views[gates.analysis]
        # Never pooled into the headline: beside it, and in each analysis's stratum breakdown,
        # before the decision reads it, so that a gate on `metric@natural` works.
        held = {analysis: holdout_scores(by_condition[name], holdout, outcomes, inputs.bootstrap, inputs.seed,
                                         end_to_end=analysis == "end_to_end")
                for analysis in _ANALYSES} if holdout else {}  # fmt: skip
        for analysis, parts in held.items():
            for stratum, part in parts.items():
                views[analysis][1].setdefault("stratum", {})[stratum] = {
                    m: {k: v[k] for k in ("value", "num", "den")} for m, v in part["metrics"].items() if v["den"]
                }
        common = {"valid_controls": valid_controls, "evidence": evidence, "comparative": comparative,
                  "labels_needed": sum(len(p.comments) for p in still_open[name]),
                  "labels": options.labels.get(name)}  # fmt: skip
        decision = decide(gates, metrics, gated_cases, breakdown=breakdown, **common,
                          attainable=reachable(gated_names, still_open[name], metrics, breakdown))  # fmt: skip
        baseline = calibration_kind(inputs.experiment, name)
        decision = unsound(never_earned(gates, decision, baseline), audit)
        decision["version"] = inputs.registration["version"] if inputs.registration else None
        secondary = None
        if judged_gates := judge_gates(gates, evidence):  # a judge's labels: a secondary analysis only
            again = decide(judged_gates, metrics, gated_cases, breakdown=breakdown, **common,
                           attainable=reachable(gated_names, still_open[name], metrics, breakdown))  # fmt: skip
            secondary = judge_secondary(unsound(never_earned(judged_gates, again, baseline), audit))
        unclear = None
        if name in unclear_slots:  # seed 003's sensitivity: every unclear claim false, then true
            bounds = {}
            for as_true, slot in zip((False, True), unclear_slots[name], strict=True):
                table, cells = variant_tables(metrics, breakdown, gated.unclear, as_true=as_true, interval=interval(slot))
                again = decide(gates, table, gated_cases, breakdown=cells, **common,
                               attainable=reachable(gated_names, still_open[name], table, cells))  # fmt: skip
                again = never_earned(gates, again, baseline)
                bounds[as_true] = (table["precision"], decision_summary(again))
            unclear = {"n": sum(r[2] for r in gated.unclear), "analysis": gates.analysis,
                       "precision_all_false": bounds[False][0], "precision_all_true": bounds[True][0],
                       "decision_all_false": bounds[False][1], "decision_all_true": bounds[True][1],
                       "decision_changes": bounds[False][1] != bounds[True][1]}  # fmt: skip
        conditions[name] = {
            "metrics": views["completed"][0],
            "breakdown": views["completed"][1],
            "end_to_end": {"metrics": views["end_to_end"][0], "breakdown": views["end_to_end"][1]},
            "states": dict(sorted(completed.states.items())),
            "evidence": evidence.value,
            "metric_evidence": metric_evidence(gated.evidence_counts),
            "decision": decision,
            "valid_defect_cases": valid_defect_cases,
            "model_drift": _drift(completed, _configured_model(inputs.experiment, name)),
        }
        drift = conditions[name]["model_drift"]
        if drift and len(drift["returned"]) > 1:  # a change during the run: each model's own figures
            drift["by_model"] = per_model_scores(by_condition[name], cases, outcomes, inputs.bootstrap, inputs.seed)
        if unclear:
            conditions[name]["unclear"] = unclear
        if secondary:
            conditions[name]["judge_secondary"] = secondary
        if name in options.labels:
            conditions[name]["labels"] = options.labels[name]
        if holdout:
            conditions[name]["holdout"] = held["completed"]
        if options.prices is not None:
            conditions[name]["cost"] = condition_cost(by_condition[name], cases, completed, options.prices,
                                                      inputs.bootstrap, inputs.seed)  # fmt: skip
        if cutoff:
            conditions[name]["cutoff"] = cutoff_scores(completed, cases, dates, cutoff, inputs.bootstrap, inputs.seed)

    comparisons = []
    for a, b in pairs:
        for analysis in _ANALYSES:
            for metric in RATE_METRICS:
                diff, low, high = paired(slots[(a, b, analysis, metric, "a")], slots[(a, b, analysis, metric, "b")])
                p = None
                if metric == "defect_recall":
                    p = mcnemar_table(tallies[(a, analysis)].found, tallies[(b, analysis)].found).p
                comparisons.append({"a": a, "b": b, "analysis": analysis, "metric": metric, "diff": diff,
                                    "lo": low, "hi": high, "mcnemar_p": p})  # fmt: skip

    validation = Counter(g.validation.status.value if g.validation else "unvalidated" for g in corpus.gold)
    eligible_defects = sum(1 for c in cases.values() if not c.control and not c.variant)
    result = {
        "conditions": conditions,
        "comparisons": comparisons,
        "compare": compared,
        "corpus": {
            "path": str(corpus.path),
            "gold_sha256": corpus.meta.gold_sha256,
            "cases": len(corpus.cases),
            "eligible_defect_cases": eligible_defects,
            "eligible_controls": valid_controls,
            "eligible_mirrors": sum(1 for c in cases.values() if c.control and c.stratum == "mirror"),
            "eligible_variants": sum(1 for c in cases.values() if c.variant),
            "holdout_cases": sum(1 for c in holdout.values() if not c.variant),
            "by_validation": dict(sorted(validation.items())),
            "include_unvalidated": inputs.include_unvalidated,
        },
        "analysis": {
            "tolerance": inputs.tolerance,
            "bootstrap": {"resamples": inputs.bootstrap, "seed": inputs.seed, "level": 0.95,
                          "unit": "case (rename variants with their original)"},
            "gates_sha256": inputs.gates_sha,
            "gates": str(inputs.gates_path) if inputs.gates_path else "built-in",
            "gated_analysis": gates.analysis,
            "identification": "per comment, the strongest evidence: people, else a calibrated judge, else a claim "
                              "that names the defect while the same condition, in the same repetition, named "
                              "nothing of it on the defect's mirror (a defect case without a reviewed, valid "
                              "mirror gets no automatic identification); naming alone is named_recall",
            "verdicts": str(rundir / VERDICTS_FILE),
            "audit": audit.summary(),
            "cutoff": {"date": cutoff_text, "registered": bool(inputs.experiment.get("cutoff"))
                       and cutoff_text == inputs.experiment.get("cutoff"),
                       "registered_date": inputs.experiment.get("cutoff")} if cutoff_text else None,
            "holdout_strata": sorted({c.stratum for c in holdout.values()}),
            # Forge runs: cases whose pull requests pushed different trees (bar the guidance files).
            "forge_tree_differences": tree_differences(runs),
        },  # fmt: skip
        "registration": inputs.registration,
    }
    if without is not None:
        result["exclusions"] = exclusion_summary(log, conditions, without)
    return ScoreResult.build(result, [v for run in runs for v in verdicts[run.run_id]])


def _compare_columns(compares: list[Compare], tallies: dict, index: dict[str, int], names: list[str],
                     columns: list, analysis: str) -> dict[int, tuple[int, int]]:  # fmt: skip
    """Add the paired columns each comparative gate needs (a stratum restricts the rows)."""
    out: dict[int, tuple[int, int]] = {}
    for i, gate in enumerate(compares):
        a, b = gate.diff
        if a not in names or b not in names:
            continue
        metric, _, stratum = gate.metric.partition("@")
        out[i] = (len(columns), len(columns) + 1)
        columns.extend(paired_columns(cluster_sums(tallies[(a, analysis)].rows, index, stratum or None)[metric],
                                      cluster_sums(tallies[(b, analysis)].rows, index, stratum or None)[metric]))
    return out
