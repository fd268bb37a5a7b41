"""Entry point of scoring: a run directory in, the JSON contract of issue 6 out."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..records import GoldRecord, ValidationStatus
from ..store.corpus import Corpus, read_corpus
from ..store.runs import RUNS_DB, RunRow, RunStore
from .cutoff import case_dates, cutoff_scores, parse_cutoff
from .gates import decide, load_gates
from .metrics import RATE_METRICS, CaseInfo, ConditionTally, fp_distribution, latency_summary, tally_condition
from .stats import mcnemar_exact, percentile_interval, resample_ratios
from .strata import holdout_scores, split_holdout

__all__ = ["ScoreOptions", "eligible_cases", "score_run"]


@dataclass(frozen=True)
class ScoreOptions:
    tolerance: int = 3
    bootstrap: int = 10_000
    seed: int | None = None
    """None: the registered bootstrap seed, or 0."""
    gates: Path | None = None
    """None: the registered gates, or the built-in table."""
    include_unvalidated: bool = False
    new_version: bool = False
    """Register changed inputs as a new benchmark version instead of refusing."""
    cutoff: str | None = None
    """Contamination cut-off (YYYY-MM-DD); None: the experiment's registered ``cutoff``, if any."""


def _valid(gold: GoldRecord, include_unvalidated: bool) -> bool:
    if include_unvalidated:
        return True
    status = gold.validation.status if gold.validation else None
    if not gold.expect_finding:
        return status is ValidationStatus.NOT_OBSERVED  # a control is valid when tests pass
    return status is ValidationStatus.OBSERVED


def eligible_cases(corpus: Corpus, include_unvalidated: bool) -> dict[str, CaseInfo]:
    """Cases in the analysis: observed defect cases and passing controls (or all, widened).

    A rename variant needs its original in the analysis too: it is scored against it.
    """
    gold = {g.case_id: g for g in corpus.gold}
    out: dict[str, CaseInfo] = {}
    for case in corpus.cases:
        g = gold.get(case.case_id)
        if g is None or not _valid(g, include_unvalidated):
            continue
        original = g.variant_of
        if original and (original not in gold or not _valid(gold[original], include_unvalidated)):
            continue
        out[case.case_id] = CaseInfo(
            case_id=case.case_id,
            cluster=original or case.case_id,
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


def _sums(tally: ConditionTally, index: dict[str, int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric, the per-cluster sums of numerators and denominators (one pass)."""
    size = len(index)
    empty = {m: (np.zeros(size), np.zeros(size)) for m in RATE_METRICS}
    if not tally.rows:
        return empty
    metric_of = {m: i for i, m in enumerate(RATE_METRICS)}
    metrics, clusters, nums, dens = zip(*((metric_of[r[0]], index[r[1]], r[2], r[3]) for r in tally.rows), strict=True)
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


def _mcnemar_counts(a: ConditionTally, b: ConditionTally) -> tuple[int, int]:
    only_a = only_b = 0
    for key, found_a in a.found.items():
        found_b = b.found.get(key)
        if found_b is None:
            continue
        only_a += found_a and not found_b
        only_b += found_b and not found_a
    return only_a, only_b


def score_run(rundir: Path, options: ScoreOptions = ScoreOptions()) -> dict:
    """Score every condition of a run directory (see ``docs/SCORING.md``).

    Raises:
        CorpusError: the run directory or its corpus is missing.
        UsageError: the corpus's gold changed since the runs, or the gates are invalid.
    """
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = list(store.runs())
        corpus_path = store.get_meta("corpus_path")
        recorded_gold = store.get_meta("gold_sha256")
        experiment = json.loads(store.get_meta("experiment") or "{}")
        experiment_file = store.get_meta("experiment_path")
    finally:
        store.close()
    if not corpus_path:
        raise UsageError(f"{rundir} records no corpus; was it written by 'reviewbench run'?")
    corpus = read_corpus(Path(corpus_path))
    if recorded_gold and corpus.meta.gold_sha256 != recorded_gold:
        raise UsageError(f"the gold of {corpus_path} changed since these runs; scoring would mix benchmark versions")
    from ..registration import REGISTRATION_FILE, check_registration  # registration reads gates: no cycle
    from ..review.experiment import load_experiment

    registration = None
    experiment_path = experiment_file and Path(experiment_file)
    if experiment_path and (rundir / REGISTRATION_FILE).exists():
        registration = check_registration(load_experiment(experiment_path), rundir, options.gates,
                                          options.seed, new_version=options.new_version)  # fmt: skip
    gates_path = options.gates
    seed = options.seed if options.seed is not None else 0
    if registration:
        if gates_path is None and registration["gates"]["path"] != "built-in":
            gates_path = Path(registration["gates"]["path"])
        seed = registration["seeds"]["bootstrap"] if options.seed is None else options.seed
    gates, _, gates_sha = load_gates(gates_path)
    cases, holdout = split_holdout(eligible_cases(corpus, options.include_unvalidated))
    cutoff_text = options.cutoff or experiment.get("cutoff")
    cutoff = parse_cutoff(cutoff_text) if cutoff_text else None
    dates = case_dates(corpus) if cutoff else {}

    order = [c["name"] for c in experiment.get("condition", [])]
    by_condition: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_condition[run.condition].append(run)
    names = [n for n in order if n in by_condition] + sorted(set(by_condition) - set(order))
    tallies = {name: tally_condition(by_condition[name], cases, options.tolerance) for name in names}

    clusters = sorted({c.cluster for c in cases.values()})
    index = {cluster: i for i, cluster in enumerate(clusters)}
    columns: list[tuple[np.ndarray, np.ndarray]] = []
    slots: dict[tuple, int] = {}
    sums = {(name, metric): pair for name in names for metric, pair in _sums(tallies[name], index).items()}
    for key, pair in sums.items():
        slots[key] = len(columns)
        columns.append(pair)
    pairs = list(itertools.combinations(names, 2))
    for a, b in pairs:
        for metric in RATE_METRICS:
            (na, da), (nb, db) = sums[(a, metric)], sums[(b, metric)]
            shared = (da > 0) & (db > 0)  # paired: only cases both conditions were scored on
            for who, (n, d) in (("a", (na, da)), ("b", (nb, db))):
                slots[(a, b, metric, who)] = len(columns)
                columns.append((n * shared, d * shared))
    if columns:
        num = np.column_stack([c[0] for c in columns])
        den = np.column_stack([c[1] for c in columns])
    else:
        num = den = np.zeros((len(clusters), 0))
    samples = resample_ratios(num, den, options.bootstrap, seed)
    lo, hi = percentile_interval(samples)

    def interval(slot: int) -> tuple[float | None, float | None]:
        low, high = lo[slot], hi[slot]
        return (None, None) if np.isnan(low) else (round(float(low), 6), round(float(high), 6))

    conditions: dict[str, dict] = {}
    for name in names:
        tally = tallies[name]
        metrics: dict[str, dict] = {}
        for metric in RATE_METRICS:
            n, d = sums[(name, metric)]
            total_n, total_d = float(n.sum()), float(d.sum())
            low, high = interval(slots[(name, metric)]) if total_d > 0 else (None, None)
            metrics[metric] = {"value": _value(total_n, total_d), "num": _number(total_n),
                               "den": _number(total_d), "lo": low, "hi": high}  # fmt: skip
        metrics["fp_per_clean_case"]["distribution"] = fp_distribution(tally.control_fps)
        metrics["completion"]["states"] = dict(sorted(tally.states.items()))
        metrics["latency_s"] = latency_summary(tally.latencies)
        total_tokens = tally.tokens_in + tally.tokens_out
        metrics["tokens"] = {
            "value": total_tokens if tally.runs_with_usage else None, "num": None,
            "den": tally.runs_with_usage, "lo": None, "hi": None,
            "in": tally.tokens_in, "out": tally.tokens_out,
            "per_case": round(total_tokens / len(tally.cases_with_usage), 3) if tally.cases_with_usage else None,
        }  # fmt: skip
        valid_defect_cases = len({k[0] for k in tally.found})
        conditions[name] = {
            "metrics": metrics,
            "breakdown": _breakdown(tally),
            "states": dict(sorted(tally.states.items())),
            "decision": decide(gates, metrics, valid_defect_cases),
            "valid_defect_cases": valid_defect_cases,
        }
        if holdout:  # never pooled into the headline: beside it, and in the stratum breakdown
            conditions[name]["holdout"] = holdout_scores(by_condition[name], holdout, options.tolerance,
                                                         options.bootstrap, seed)  # fmt: skip
            for stratum, part in conditions[name]["holdout"].items():
                conditions[name]["breakdown"]["stratum"][stratum] = {
                    m: {k: v[k] for k in ("value", "num", "den")} for m, v in part["metrics"].items() if v["den"]
                }
        if cutoff:
            conditions[name]["cutoff"] = cutoff_scores(tally, cases, dates, cutoff, options.bootstrap, seed)

    comparisons = []
    for a, b in pairs:
        for metric in RATE_METRICS:
            na, da = columns[slots[(a, b, metric, "a")]]
            nb, db = columns[slots[(a, b, metric, "b")]]
            if da.sum() == 0 or db.sum() == 0:
                diff = low = high = None
            else:
                diff = round(na.sum() / da.sum() - nb.sum() / db.sum(), 6)
                d = samples[:, slots[(a, b, metric, "a")]] - samples[:, slots[(a, b, metric, "b")]]
                dlo, dhi = percentile_interval(d[:, None])
                low, high = (None, None) if np.isnan(dlo[0]) else (round(float(dlo[0]), 6), round(float(dhi[0]), 6))
            p = None
            if metric == "defect_recall":
                p = mcnemar_exact(*_mcnemar_counts(tallies[a], tallies[b]))
            comparisons.append({"a": a, "b": b, "metric": metric, "diff": diff, "lo": low, "hi": high,
                                "mcnemar_p": p})  # fmt: skip

    validation = Counter(g.validation.status.value if g.validation else "unvalidated" for g in corpus.gold)
    eligible_defects = sum(1 for c in cases.values() if not c.control and not c.variant)
    return {
        "conditions": conditions,
        "comparisons": comparisons,
        "corpus": {
            "path": str(corpus.path),
            "gold_sha256": corpus.meta.gold_sha256,
            "cases": len(corpus.cases),
            "eligible_defect_cases": eligible_defects,
            "eligible_controls": sum(1 for c in cases.values() if c.control),
            "eligible_variants": sum(1 for c in cases.values() if c.variant),
            "holdout_cases": sum(1 for c in holdout.values() if not c.variant),
            "by_validation": dict(sorted(validation.items())),
            "include_unvalidated": options.include_unvalidated,
        },
        "analysis": {
            "tolerance": options.tolerance,
            "bootstrap": {"resamples": options.bootstrap, "seed": seed, "level": 0.95,
                          "unit": "case (rename variants with their original)"},
            "gates_sha256": gates_sha,
            "gates": str(gates_path) if gates_path else "built-in",
            "cutoff": {"date": cutoff_text, "registered": bool(experiment.get("cutoff"))
                       and cutoff_text == experiment.get("cutoff")} if cutoff_text else None,
            "holdout_strata": sorted({c.stratum for c in holdout.values()}),
        },  # fmt: skip
        "registration": registration,
    }
