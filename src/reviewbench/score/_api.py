"""Entry point of scoring: a run directory in, a frozen :class:`ScoreResult` out.

One pass over the runs turns every finding into a typed verdict (``verdicts.py``), written
to ``RUNDIR/verdicts.jsonl``; every metric of both analyses (completed runs, end-to-end) is
then counted from those verdicts, resampled once, and judged by the gates.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..records import GoldRecord, Stratum
from ..store.corpus import Corpus
from ..store.readings import read_readings
from ..store.runs import RunRow
from .audit import AuditCheck, unsound
from .bounds import open_pairs, reachable
from .calibration import calibration_kind, never_earned
from .completion import completion_by_stratum
from .contamination import CONTAMINATION_SHOWN, contaminated_cases, incidental_defects
from .cost import condition_cost
from .cutoff import case_dates, cutoff_scores, parse_cutoff
from .discriminate import discriminate, mirror_of, pairings
from .drift import per_model_scores
from .exclusions import exclusion_summary
from .first_review import first_reviews
from .forge_trees import tree_differences
from .frame import Frame
from .gates import Compare, Gates, decide, evaluate_compare
from .inputs import ScoreOptions, ScoringInputs, load_inputs
from .inspection import inspection_block
from .levels import metric_evidence
from .metrics import (
    CaseInfo,
    ConditionTally,
    Row,
    RunOutcome,
    fp_distribution,
    hit_sequences,
    latency_summary,
    run_outcome,
    tally_condition,
    with_mirror,
)
from .paired import Column, mcnemar_table, pair_pattern
from .registry import DEPRECATED, RATE_METRICS, spec
from .result import ScoreResult
from .rules import rule_figures
from .secondary import judge_gates, judge_secondary
from .severity import severity_basis_flag
from .strata import EXPLORATORY, HOLDOUT_STRATA, holdout_scores, split_holdout
from .unclear import decision_summary, variant_tables, with_unclear
from .verdicts import (
    VERDICTS_FILE,
    Evidence,
    FindingVerdict,
    VerdictOverride,
    apply_overrides,
    judge_run,
    write_verdicts,
)

__all__ = ["RunTallies", "ScoreOptions", "ScoringInputs", "cluster_sums", "eligible_cases", "load_inputs", "score",
           "score_run", "tally", "tally_runs"]

_ANALYSES = ("completed", "end_to_end")


def _valid(gold: GoldRecord, include_unvalidated: bool) -> bool:
    return include_unvalidated or gold.valid


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
    paired_with: dict[str, str] = {}
    for defect_id, mirror in mirror_of(corpus.gold).items():
        if not gold[defect_id].variant_of:
            paired_with.setdefault(mirror.case_id, defect_id)
    partners: dict[str | None, list[GoldRecord]] = {}
    for record in corpus.gold:
        if record.pair_id is not None and record.stratum != Stratum.MIRROR and record.expect_finding \
                and not record.variant_of:
            partners.setdefault(record.pair_id, []).append(record)
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
        cluster = original or paired_with.get(case.case_id) or case.case_id
        out[case.case_id] = CaseInfo(
            case_id=case.case_id,
            cluster=cluster,
            stratum=g.stratum,
            control=not g.expect_finding,
            variant=original is not None,
            defects=tuple(g.defects),
            paths=tuple(case.paths),
            exploratory=g.exploratory or gold[cluster].exploratory,  # a mirror or variant follows its case
        )
    return out


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def _value(num: float, den: float) -> float | None:
    return round(num / den, 6) if den > 0 else None


def cluster_sums(rows: Iterable[Row], index: dict[str, int],
                 stratum: str | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Per metric, the per-cluster sums of numerators and denominators (one pass, streamed:
    no row is held beyond its three numbers)."""
    size = len(index)
    metric_of = {m: i for i, m in enumerate(RATE_METRICS)}
    flat, nums, dens = array("q"), array("d"), array("d")
    for metric, cluster, num, den, row_stratum, _cls, _severity in rows:
        if stratum is None or row_stratum == stratum:
            flat.append(metric_of[metric] * size + index[cluster])
            nums.append(num)
            dens.append(den)
    if not flat:
        return {m: (np.zeros(size), np.zeros(size)) for m in RATE_METRICS}
    length = len(RATE_METRICS) * size
    at = np.frombuffer(flat, dtype=np.int64)
    top = np.bincount(at, weights=np.frombuffer(nums), minlength=length).reshape(len(RATE_METRICS), size)
    bottom = np.bincount(at, weights=np.frombuffer(dens), minlength=length).reshape(len(RATE_METRICS), size)
    return {m: (top[i], bottom[i]) for m, i in metric_of.items()}


def _breakdown(tally: ConditionTally) -> dict[str, Any]:
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


def judge_runs(runs: list[RunRow], corpus: Corpus, cases: dict[str, CaseInfo], tolerance: int,
               overrides: Mapping[str, VerdictOverride],
               boilerplate: re.Pattern[str] | None = None) -> dict[str, list[FindingVerdict]]:  # fmt: skip
    """Every run's verdicts, by run id: matched, tested against the mirror
    (``discriminate.py``), then labels applied by comment_id; a claim matching the
    registered ``boilerplate`` rule is marked so."""
    gold = {g.case_id: g for g in corpus.gold}
    paths = {c.case_id: c.paths for c in corpus.cases}
    automatic: dict[str, list[FindingVerdict]] = {}
    for run in runs:
        g = gold.get(run.case_id)
        automatic[run.run_id] = judge_run(
            run_id=run.run_id, case_id=run.case_id, condition=run.condition, repetition=run.repetition,
            findings=run.findings, defects=g.defects if g else [], paths=paths.get(run.case_id, []),
            tolerance=tolerance, scored=run.case_id in cases and run.reviewed,
        )  # fmt: skip
    judged = discriminate(automatic, runs, gold, cases, tolerance)
    if boilerplate is not None:
        for run in runs:
            judged[run.run_id] = [v.model_copy(update={"boilerplate": True}) if boilerplate.search(f.claim) else v
                                  for f, v in zip(run.findings, judged[run.run_id], strict=True)]  # fmt: skip
    return {run_id: apply_overrides(v, overrides) if overrides else v for run_id, v in judged.items()}


def _drift(tally: ConditionTally, configured: str | None) -> dict[str, Any] | None:
    """Model drift: several returned ids, or one other than the model the experiment asked for.

    Without a configured model (tools, baselines, commands) the runner records the kind as
    "requested"; only a change between runs is drift then.
    """
    returned = sorted(tally.models_returned)
    requested = sorted(tally.models_requested)
    if len(returned) > 1 or (configured and returned and set(returned) != {configured}):
        return {"requested": requested, "returned": returned}
    return None


@dataclass(frozen=True)
class RunTallies:
    """A run directory read and counted as scoring counts it, before any resample: what
    :func:`score` and the comparison of two run directories (``compare.py``) both start from."""

    inputs: ScoringInputs
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
    contaminated: frozenset[str] = frozenset()
    """Headline clean cases with a valid incidental finding (``contamination.py``)."""
    clean: dict[str, ConditionTally] | None = None
    """With contaminated cases: each condition tallied without them (the gated analysis)."""

    def all_verdicts(self) -> list[FindingVerdict]:
        return [v for run in self.inputs.runs for v in self.verdicts[run.run_id]]


def tally(inputs: ScoringInputs, only: set[str] | None = None) -> RunTallies:
    """Judge every run and tally each condition in both analyses.

    Args:
        only: case ids to keep in the analysis (None: every eligible case); the runs of the
            others are still judged, so a kept case's mirror still decides discrimination.
    """
    corpus, runs = inputs.corpus, inputs.runs
    everything = {k: c for k, c in eligible_cases(corpus, inputs.include_unvalidated).items()
                  if k not in inputs.excluded_cases}  # fmt: skip
    verdicts = judge_runs(runs, corpus, everything, inputs.tolerance, inputs.overrides,
                          inputs.gates.boilerplate.regex())  # fmt: skip
    paired = pairings(runs, {g.case_id: g for g in corpus.gold}, everything)
    outcomes: dict[str, RunOutcome] = {
        run.run_id: with_mirror(run_outcome(run, everything[run.case_id], verdicts[run.run_id]),
                                paired.get(run.run_id))  # fmt: skip
        for run in runs if run.case_id in everything
    }
    if only is not None:
        everything = {k: c for k, c in everything.items() if k in only}
    cases, holdout = split_holdout(everything)  # natural cases: beside the headline, never in it
    order = inputs.condition_order()
    by_condition: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_condition[run.condition].append(run)
    names = [n for n in order if n in by_condition] + sorted(set(by_condition) - set(order))
    retired: dict[str, list[RunRow]] = defaultdict(list)
    for old in inputs.history:
        retired[old.condition].append(old)
    k = inputs.gates.stability.k
    tallies = {(name, analysis): tally_condition(by_condition[name], cases, outcomes, analysis == "end_to_end",
                                                 retired[name], k=k)
               for name in names for analysis in _ANALYSES}  # fmt: skip
    contaminated = contaminated_cases((v for run in runs for v in verdicts[run.run_id]), cases)
    clean = None
    if contaminated:  # the clean-set figures again without them, beside the registered ones
        kept = {key: c for key, c in cases.items() if key not in contaminated}
        clean = {name: tally_condition(by_condition[name], kept, outcomes, inputs.gates.analysis == "end_to_end",
                                       retired[name], k=k) for name in names}  # fmt: skip
    return RunTallies(inputs, everything, cases, holdout, verdicts, outcomes, dict(by_condition), names, tallies,
                      contaminated, clean)  # fmt: skip


def tally_runs(rundir: Path, options: ScoreOptions = ScoreOptions(), only: set[str] | None = None) -> RunTallies:
    """:func:`tally` of ``rundir`` read with ``options`` (see :func:`score_run` for errors)."""
    return tally(load_inputs(rundir, options), only)


def score_run(rundir: Path, options: ScoreOptions = ScoreOptions()) -> ScoreResult:
    """Score every condition of a run directory (see ``docs/SCORING.md``): the labels of
    ``RUNDIR/labels.sqlite`` included unless ``options`` says otherwise, exactly as
    ``reviewbench score`` does.

    Writes ``RUNDIR/verdicts.jsonl`` (every finding's verdict) as a side effect.

    Raises:
        CorpusError: the run directory or its corpus is missing.
        UsageError: the corpus's gold changed since the runs, registered rules or inputs
            changed, or the gates are invalid.
    """
    return score(load_inputs(rundir, options))


@dataclass
class _Slots:
    """Where each statistic sits in the resampling frame."""

    sums: dict[tuple[str, str, str], Column]
    """(condition, analysis, metric) → per-cluster sums."""
    rate: dict[tuple[str, str, str], int]
    pair: dict[tuple[str, str, str, str], tuple[int, int]]
    """(a, b, analysis, metric) → the paired slots of a and b."""
    unclear: dict[str, tuple[int, int]]
    """Per condition, precision with every unclear claim false, then true."""
    compare: dict[int, tuple[int, int]]
    """Per comparative gate (by index in :func:`_compares`), its paired slots."""
    clean: dict[tuple[str, str], tuple[Column, int]] = field(default_factory=dict)
    """(condition, metric) → sums and slot without the contaminated clean cases (gated analysis)."""


def _compares(gates: Gates) -> list[Compare]:
    """The comparisons the gates evaluate: the table's own, then every tier's and veto's."""
    return [*gates.compare, *(c.as_compare(f"{t.name}: {c.metric} {c.diff[0]} - {c.diff[1]}")
                              for t in (*gates.veto, *gates.tier) for c in t.when if c.diff)]  # fmt: skip


def _frame(tallied: RunTallies) -> tuple[Frame, _Slots]:
    """Every column scoring resamples, in one frame, resampled once."""
    gates, names, tallies = tallied.inputs.gates, tallied.names, tallied.tallies
    clusters = sorted({c.cluster for c in tallied.cases.values()})
    index = {cluster: i for i, cluster in enumerate(clusters)}
    frame = Frame(len(clusters))
    sums = {(name, analysis, metric): pair for (name, analysis), t in tallies.items()
            for metric, pair in cluster_sums(t.rows, index).items()}  # fmt: skip
    rate = {key: frame.add(*pair, count=spec(key[2]).count) for key, pair in sums.items()}
    pair_slots = {(a, b, analysis, metric): frame.add_paired(sums[(a, analysis, metric)], sums[(b, analysis, metric)],
                                                              count=spec(metric).count)
                  for a, b in itertools.combinations(names, 2) for analysis in _ANALYSES
                  for metric in RATE_METRICS}  # fmt: skip  # paired: only cases both were scored on
    unclear: dict[str, tuple[int, int]] = {}  # the precision variants of the gated analysis
    for name in names:
        rows = tallies[(name, gates.analysis)].unclear
        if not rows:
            continue
        left_out = np.zeros(len(clusters))
        np.add.at(left_out, [index[r[0]] for r in rows], [float(r[2]) for r in rows])
        n, d = sums[(name, gates.analysis, "precision")]
        unclear[name] = (frame.add(*with_unclear(n, d, left_out, as_true=False)),
                         frame.add(*with_unclear(n, d, left_out, as_true=True)))  # fmt: skip
    compare = _compare_columns(_compares(gates), tallies, index, names, frame, gates.analysis)
    clean = {(name, metric): (pair, frame.add(*pair, count=spec(metric).count))
             for name, t in (tallied.clean or {}).items()
             for metric, pair in cluster_sums(t.rows, index).items()}  # fmt: skip
    frame.resample(tallied.inputs.bootstrap, tallied.inputs.seed)
    return frame, _Slots(sums, rate, pair_slots, unclear, compare, clean)


def score(inputs: ScoringInputs) -> ScoreResult:
    """Score the typed inputs: judge, tally, resample once, decide (see :func:`score_run`)."""
    # Nothing left out, first: the figures beside (this pass writes verdicts.jsonl last). Only
    # its conditions are kept: its verdicts (one per finding) would be held through this pass.
    without = score(inputs.without_exclusions()).conditions if inputs.exclusion_log else None
    tallied = tally(inputs)
    write_verdicts(inputs.rundir / VERDICTS_FILE, tallied.all_verdicts())
    frame, slots = _frame(tallied)
    scoring = _Scoring(tallied, frame, slots, AuditCheck(inputs.corpus.path, inputs.corpus.meta.gold_sha256))
    conditions = {name: scoring.condition(name) for name in tallied.names}
    result = {
        "conditions": conditions,
        "comparisons": scoring.comparisons(),
        "compare": scoring.compared,
        "corpus": _corpus_block(tallied),
        "analysis": _analysis_block(tallied, scoring.audit),
        "registration": inputs.registration,
    }
    if without is not None:
        result["exclusions"] = exclusion_summary(list(inputs.exclusion_log), conditions, without)
    incidental = incidental_defects(tallied.all_verdicts(), tallied.everything)
    if incidental:
        result["incidental"] = {"contaminated": sorted(tallied.contaminated), "defects": incidental}
    result["inspection"] = inspection_block(tallied, read_readings(inputs.rundir))
    result["severity_basis"] = severity_basis_flag(g for g in inputs.corpus.gold if g.case_id in tallied.cases)
    if inputs.raters is not None:
        result["raters"] = dict(inputs.raters)
    return ScoreResult.build(result, tallied.all_verdicts())


def _corpus_block(tallied: RunTallies) -> dict[str, Any]:
    corpus, cases, holdout = tallied.inputs.corpus, tallied.cases, tallied.holdout
    validation = Counter(g.validation.status.value if g.validation else "unvalidated" for g in corpus.gold)
    return {
        "path": str(corpus.path),
        "gold_sha256": corpus.meta.gold_sha256,
        "cases": len(corpus.cases),
        "eligible_defect_cases": sum(1 for c in cases.values() if not c.control and not c.variant),
        "eligible_controls": sum(1 for c in cases.values() if c.control),
        "eligible_mirrors": sum(1 for c in cases.values() if c.control and c.stratum == "mirror"),
        "eligible_variants": sum(1 for c in cases.values() if c.variant),
        "holdout_cases": sum(1 for c in holdout.values() if not c.variant),
        "exploratory_cases": sum(1 for c in holdout.values() if c.exploratory and not c.variant),
        "by_validation": dict(sorted(validation.items())),
        "include_unvalidated": tallied.inputs.include_unvalidated,
    }


def _analysis_block(tallied: RunTallies, audit: AuditCheck) -> dict[str, Any]:
    inputs = tallied.inputs
    registered = inputs.experiment.cutoff
    return {
        "tolerance": inputs.tolerance,
        "bootstrap": {"resamples": inputs.bootstrap, "seed": inputs.seed, "level": 0.95,
                      "unit": "case (rename variants with their original)"},
        "gates_sha256": inputs.gates_sha,
        "gates": str(inputs.gates_path) if inputs.gates_path else "built-in",
        "gated_analysis": inputs.gates.analysis,
        "identification": "per comment, the strongest evidence: people, else a calibrated judge, else a claim "
                          "that names the defect while the same condition, in the same repetition, named "
                          "nothing of it on the defect's mirror (a defect case without a reviewed, valid "
                          "mirror gets no automatic identification); naming alone is named_recall",
        "verdicts": str(inputs.rundir / VERDICTS_FILE),
        "audit": audit.summary(),
        "cutoff": {"date": inputs.cutoff, "registered": bool(registered) and inputs.cutoff == registered,
                   "registered_date": registered} if inputs.cutoff else None,
        "holdout_strata": sorted({c.stratum for c in tallied.holdout.values() if not c.exploratory}),
        # Forge runs: cases whose pull requests pushed different trees (bar the guidance files).
        "forge_tree_differences": tree_differences(inputs.runs),
    }  # fmt: skip


class _Scoring:
    """One score's resampled frame read per condition: metrics, decisions, comparisons."""

    def __init__(self, tallied: RunTallies, frame: Frame, slots: _Slots, audit: AuditCheck) -> None:
        self.t, self.frame, self.slots, self.audit = tallied, frame, slots, audit
        inputs = tallied.inputs
        self.gates = inputs.gates
        self.cutoff = parse_cutoff(inputs.cutoff) if inputs.cutoff else None
        self.dates = case_dates(inputs.corpus) if self.cutoff else {}
        self.gated_names = sorted({c.metric for t in (*self.gates.veto, *self.gates.tier)
                                   for c in t.when if c.diff is None})  # fmt: skip
        self.still_open: dict[str, list[Any]] = defaultdict(list)
        for pair in open_pairs(tallied.all_verdicts(), tallied.cases, {r.run_id: r for r in tallied.inputs.runs}):
            self.still_open[pair.condition].append(pair)
        compares = _compares(self.gates)
        evaluated = []
        for i, gate in enumerate(compares):
            if i not in slots.compare:
                known = ", ".join(tallied.names) or "none"
                raise UsageError(f"{gate.name}: no condition named {' or '.join(gate.diff)} (conditions: {known})")
            evaluated.append(evaluate_compare(gate, *frame.paired(*slots.compare[i])))
        self.compared = evaluated[: len(self.gates.compare)]
        in_tiers = [c for t in (*self.gates.veto, *self.gates.tier) for c in t.when if c.diff]
        self.comparative = dict(zip(in_tiers, evaluated[len(self.gates.compare):], strict=True))

    def metrics(self, name: str, analysis: str) -> dict[str, dict[str, Any]]:
        """Every metric of one condition in one analysis, with counts and intervals."""
        t = self.t.tallies[(name, analysis)]
        metrics = {metric: self._rate(self.slots.sums[(name, analysis, metric)],
                                      self.slots.rate[(name, analysis, metric)]) for metric in RATE_METRICS}  # fmt: skip
        metrics["fp_per_clean_case"]["distribution"] = fp_distribution(t.control_fps)
        metrics["completion"].update(_completion_details(t))
        metrics.update(rule_figures(t.rules))  # defect_recall@rule:ID and its located bound
        for old, new in DEPRECATED.items():  # the old names, one more version
            metrics[old] = {**metrics[new], "deprecated": f"renamed {new}"}
        metrics["latency_s"] = latency_summary(t.latencies)
        forge = first_reviews(r for r in self.t.by_condition[name] if r.case_id in self.t.cases)
        if forge is not None:  # forge conditions only: absent elsewhere, not zero
            metrics["time_to_first_review_s"] = forge
        total_tokens = t.tokens_in + t.tokens_out
        metrics["tokens"] = {
            "value": total_tokens if t.runs_with_usage else None, "num": None,
            "den": t.runs_with_usage, "lo": None, "hi": None,
            "in": t.tokens_in, "out": t.tokens_out,
            "per_case": round(total_tokens / len(t.cases_with_usage), 3) if t.cases_with_usage else None,
        }  # fmt: skip
        return metrics

    def _rate(self, sums: Column, slot: int) -> dict[str, Any]:
        """One rate: Σnum/Σden with its interval from the frame (``exact`` when it is)."""
        n, d = sums
        total_n, total_d = float(n.sum()), float(d.sum())
        low, high = self.frame.interval(slot) if total_d > 0 else (None, None)
        out: dict[str, Any] = {"value": _value(total_n, total_d), "num": _number(total_n), "den": _number(total_d),
                               "lo": low, "hi": high}  # fmt: skip
        if total_d > 0 and self.frame.exact(slot):
            out["exact"] = True
        return out

    def _contamination(self, name: str, breakdown: dict[str, Any], baseline: str | None) -> dict[str, Any]:
        """The clean-set figures and the decision without the contaminated clean cases."""
        clean = (self.t.clean or {})[name]
        table = {metric: self._rate(*self.slots.clean[(name, metric)]) for metric in RATE_METRICS}
        cells = _breakdown(clean)
        cells["stratum"].update({k: v for k, v in breakdown.get("stratum", {}).items() if k in HOLDOUT_STRATA})
        controls = sum(1 for key, c in self.t.cases.items() if c.control and key not in self.t.contaminated)
        again = unsound(never_earned(self.gates, self._decide(name, table, cells, controls=controls), baseline),
                        self.audit)  # fmt: skip
        return {"cases": sorted(self.t.contaminated), "analysis": self.gates.analysis,
                **{m: table[m] for m in CONTAMINATION_SHOWN}, "decision": decision_summary(again)}

    def _decide(self, name: str, metrics: dict[str, Any], breakdown: dict[str, Any], gates: Gates | None = None,
                controls: int | None = None) -> dict[str, Any]:
        """The registered decision (or ``gates``') on these figures, before the baseline rule
        (``controls``: the valid clean cases, when not every headline one counts)."""
        gated = self.t.tallies[(name, self.gates.analysis)]
        levels = [Evidence(e) for e in gated.evidence] or [Evidence.AUTOMATIC]
        # The gates count the cases their analysis measured: end to end, a defect case whose
        # review went missing is a measured miss, not a case short of evidence.
        return decide(gates or self.gates, metrics, len({k[0] for k in gated.found}), breakdown=breakdown,
                      valid_controls=controls if controls is not None else sum(1 for c in self.t.cases.values()
                                                                                 if c.control),
                      evidence=min(levels, key=lambda e: e.rank), comparative=self.comparative,
                      labels_needed=sum(len(p.comments) for p in self.still_open[name]),
                      labels=self.t.inputs.labels.get(name),
                      attainable=reachable(self.gated_names, self.still_open[name], metrics, breakdown))  # fmt: skip

    def _holdout(self, name: str, views: dict[str, Any]) -> dict[str, Any]:
        """Holdout strata per analysis, never pooled into the headline: beside it, and in each
        analysis's stratum breakdown before the decision reads it (a gate on ``metric@natural``)."""
        inputs = self.t.inputs
        held = {analysis: holdout_scores(self.t.by_condition[name], self.t.holdout, self.t.outcomes,
                                         inputs.bootstrap, inputs.seed, end_to_end=analysis == "end_to_end",
                                         k=self.gates.stability.k)
                for analysis in _ANALYSES}  # fmt: skip
        for analysis, parts in held.items():
            for stratum, part in parts.items():
                if stratum == EXPLORATORY:  # not a stratum: beside the headline only
                    continue
                views[analysis][1].setdefault("stratum", {})[stratum] = {
                    m: {k: v[k] for k in ("value", "num", "den")} for m, v in part["metrics"].items() if v["den"]
                }
        return held

    def _unclear(self, name: str, metrics: dict[str, Any], breakdown: dict[str, Any], baseline: str | None) -> dict[str, Any]:
        """The unclear claims' sensitivity: every one false, then true, and the decision at each."""
        gated = self.t.tallies[(name, self.gates.analysis)]
        bounds = {}
        for as_true, slot in zip((False, True), self.slots.unclear[name], strict=True):
            table, cells = variant_tables(metrics, breakdown, gated.unclear, as_true=as_true,
                                          interval=self.frame.interval(slot))  # fmt: skip
            again = never_earned(self.gates, self._decide(name, table, cells), baseline)
            bounds[as_true] = (table["precision"], decision_summary(again))
        return {"n": sum(r[2] for r in gated.unclear), "analysis": self.gates.analysis,
                "precision_all_false": bounds[False][0], "precision_all_true": bounds[True][0],
                "decision_all_false": bounds[False][1], "decision_all_true": bounds[True][1],
                "decision_changes": bounds[False][1] != bounds[True][1]}  # fmt: skip

    def condition(self, name: str) -> dict[str, Any]:
        """One condition's score: both analyses, decision, and what goes beside them."""
        inputs, t = self.t.inputs, self.t
        views = {analysis: (self.metrics(name, analysis), _breakdown(t.tallies[(name, analysis)]))
                 for analysis in _ANALYSES}  # fmt: skip
        completed, gated = t.tallies[(name, "completed")], t.tallies[(name, self.gates.analysis)]
        held = self._holdout(name, views) if t.holdout else {}
        metrics, breakdown = views[self.gates.analysis]
        baseline, configured = calibration_kind(inputs.experiment, name), inputs.experiment.find(name)
        decision = unsound(never_earned(self.gates, self._decide(name, metrics, breakdown), baseline), self.audit)
        decision["version"] = inputs.registration.version if inputs.registration else None
        levels = [Evidence(e) for e in gated.evidence] or [Evidence.AUTOMATIC]
        evidence = min(levels, key=lambda e: e.rank)
        out: dict[str, Any] = {
            "metrics": views["completed"][0],
            "breakdown": views["completed"][1],
            "end_to_end": {"metrics": views["end_to_end"][0], "breakdown": views["end_to_end"][1]},
            "states": dict(sorted(completed.states.items())),
            "evidence": evidence.value,
            "metric_evidence": metric_evidence(gated.evidence_counts),
            "decision": decision,
            "valid_defect_cases": len({k[0] for k in completed.found}),
            "model_drift": _drift(completed, configured.model if configured else None),
            "completion_by_stratum": completion_by_stratum(name, t.by_condition[name], t.everything, inputs.planned,
                                                           inputs.recorded),
        }
        drift = out["model_drift"]
        if drift and len(drift["returned"]) > 1:  # a change during the run: each model's own figures
            drift["by_model"] = per_model_scores(t.by_condition[name], t.cases, t.outcomes, inputs.bootstrap,
                                                 inputs.seed, self.gates.stability.k)  # fmt: skip
        if name in self.slots.unclear:
            out["unclear"] = self._unclear(name, metrics, breakdown, baseline)
        if t.clean:
            beside = self._contamination(name, breakdown, baseline)
            beside["decision_changes"] = beside["decision"] != decision_summary(decision)
            out["contamination"] = beside
        if judged_gates := judge_gates(self.gates, evidence):  # a judge's labels: a secondary analysis only
            again = self._decide(name, metrics, breakdown, judged_gates)
            out["judge_secondary"] = judge_secondary(unsound(never_earned(judged_gates, again, baseline), self.audit))
        if name in inputs.labels:
            out["labels"] = inputs.labels[name]
        if t.holdout:
            out["holdout"] = held["completed"]
        if inputs.prices is not None:
            out["cost"] = condition_cost(name, t.by_condition[name], t.cases, completed, inputs.prices, inputs.bootstrap,
                                         inputs.seed)  # fmt: skip
        if self.cutoff:
            out["cutoff"] = cutoff_scores(completed, t.cases, self.dates, self.cutoff, inputs.bootstrap, inputs.seed)
        out["stability"] = self._stability(name)
        split, extra, excluded, fps = gated.precision_claims
        out["precision_claims"] = {"analysis": self.gates.analysis, "split_comments": split, "extra_claims": extra,
                                   "boilerplate_rule": list(self.gates.boilerplate.patterns),
                                   "boilerplate_excluded": excluded, "false_positives": fps}  # fmt: skip
        return out

    def _stability(self, name: str) -> dict[str, Any]:
        """The registered k, and every defect's hits repetition by repetition (gated analysis)."""
        gated = self.t.tallies[(name, self.gates.analysis)]
        k = self.gates.stability.k
        repetitions = max((r.repetition + 1 for r in self.t.by_condition[name]), default=0)
        return {"k": k, "rule": f"at least {k} of n" if k is not None else "a majority (n // 2 + 1) of n",
                "analysis": self.gates.analysis, "repetitions": repetitions,
                "too_few_repetitions": gated.too_few_repetitions,
                "hits": hit_sequences(gated.found, self.t.cases, repetitions)}  # fmt: skip

    def comparisons(self) -> list[dict[str, Any]]:
        """Every paired difference of every two conditions, per analysis and rate metric."""
        out = []
        for (a, b, analysis, metric), (sa, sb) in self.slots.pair.items():
            diff, low, high = self.frame.paired(sa, sb)
            pairs, a_lacks, b_lacks = pair_pattern(self.slots.sums[(a, analysis, metric)],
                                                   self.slots.sums[(b, analysis, metric)])  # fmt: skip
            row = {"a": a, "b": b, "analysis": analysis, "metric": metric, "diff": diff, "lo": low, "hi": high,
                   "mcnemar_p": None, "exact": self.frame.paired_exact(sa, sb), "pairs": pairs,
                   "missing": {a: a_lacks, b: b_lacks}}  # fmt: skip
            if metric == "defect_recall":
                table = mcnemar_table(self.t.tallies[(a, analysis)].found, self.t.tallies[(b, analysis)].found)
                row.update(mcnemar_p=table.p, mcnemar_pairs=table.pairs)
            out.append(row)
        return out


def _completion_details(t: ConditionTally) -> dict[str, Any]:
    """What ``completion`` carries beside its rate: states, retired attempts, failure codes."""
    missed, attempts = t.missing
    out: dict[str, Any] = {"states": dict(sorted(t.states.items()))}
    if t.retired:
        out["retired"] = dict(sorted(t.retired.items()))
    out["missing_reviews"] = {"value": _value(missed, attempts), "num": missed, "den": attempts}
    out["failure_codes"] = dict(sorted(t.failure_codes.items()))
    out["failure_codes_by_stratum"] = {stratum: dict(sorted(codes.items()))
                                       for stratum, codes in sorted(t.failure_codes_by_stratum.items())}  # fmt: skip
    return out


def _compare_columns(compares: list[Compare], tallies: dict[tuple[str, str], ConditionTally], index: dict[str, int], names: list[str],
                     frame: Frame, analysis: str) -> dict[int, tuple[int, int]]:  # fmt: skip
    """Add the paired columns each comparative gate needs (a stratum restricts the rows)."""
    out: dict[int, tuple[int, int]] = {}
    for i, gate in enumerate(compares):
        a, b = gate.diff
        if a not in names or b not in names:
            continue
        metric, _, stratum = gate.metric.partition("@")
        out[i] = frame.add_paired(cluster_sums(tallies[(a, analysis)].rows, index, stratum or None)[metric],
                                  cluster_sums(tallies[(b, analysis)].rows, index, stratum or None)[metric])
    return out
