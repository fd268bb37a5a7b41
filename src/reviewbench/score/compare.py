"""Two run directories of one corpus, paired by case: what changed and by how much.

Each side is judged and tallied exactly as ``score`` does (its own registered tolerance and
eligibility, its own labels), then the two are paired by case cluster: a figure counts the
clusters both sides were scored on, and one matrix of bootstrap draw counts resamples both
sides together, so the interval of ``b - a`` is a paired one (``paired.py``). McNemar pairs
(case, defect, repetition) units. Corpora whose gold differs are refused unless the caller
restricts the comparison to the cases both hold unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..records import RunRow
from ..store.corpus import Corpus
from ._api import RunTallies, ScoreOptions, cluster_sums, tally_runs
from .calibration import calibration_kind
from .comparison import (
    Change,
    ConditionComparison,
    McNemarResult,
    MetricDifference,
    PairedFigure,
    RunComparison,
    RunSide,
    SharedCases,
    StratumComparison,
)
from .frame import Frame
from .paired import mcnemar_table
from .recorded import RecordedExperiment
from .registry import RATE_METRICS
from .verdicts import VerdictOverride

__all__ = ["ANALYSES", "CompareOptions", "compare_runs", "parse_pairs"]

ANALYSES = ("completed", "end_to_end")


@dataclass(frozen=True)
class CompareOptions:
    pairs: tuple[tuple[str, str], ...] = ()
    """(condition of a, condition of b); empty: the conditions both name alike."""
    shared_cases: bool = False
    """On corpora whose gold differs, compare the cases both hold unchanged instead of refusing."""
    analysis: str = "completed"
    """``completed`` (only completed runs count) or ``end_to_end`` (a missing review is a miss)."""
    bootstrap: int | None = None
    """None: a's registered resample count, or 10,000."""
    seed: int | None = None
    """None: a's registered bootstrap seed, or 0."""
    overrides_a: Mapping[str, VerdictOverride] | None = None
    """People's (or a calibrated judge's) labels of a's comments, as ``score`` applies them;
    None: those of a's ``labels.sqlite``."""
    overrides_b: Mapping[str, VerdictOverride] | None = None


def parse_pairs(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=NAME`` options as pairs (a bare ``NAME`` pairs it with itself).

    Raises:
        UsageError: an empty name, or a condition of a paired twice.
    """
    out: list[tuple[str, str]] = []
    for value in values:
        a, sep, b = value.partition("=")
        a, b = a.strip(), (b.strip() if sep else a.strip())
        if not a or not b:
            raise UsageError(f"--condition {value!r}: expected NAME_IN_A=NAME_IN_B")
        if a in {p[0] for p in out}:
            raise UsageError(f"--condition: {a!r} is paired twice")
        out.append((a, b))
    return tuple(out)


def _case_key(corpus: Corpus) -> dict[str, str]:
    """A digest of what each case is (its patch and gold, validation aside): equal keys on
    both corpora make a case shared."""
    gold = {g.case_id: g for g in corpus.gold}
    out = {}
    for case in corpus.cases:
        g = gold.get(case.case_id)
        patch = corpus.path / case.patch
        text = patch.read_bytes().hex() if patch.is_file() else ""
        labels = g.model_dump(mode="json", include={"stratum", "expect_finding", "variant_of", "defects"}) if g else {}
        out[case.case_id] = json.dumps([case.base, case.paths, text, labels], sort_keys=True)
    return out


def _shared(ca: Corpus, cb: Corpus) -> tuple[set[str], int, int, int]:
    """(case ids both hold unchanged, only in a, only in b, in both but changed)."""
    ka, kb = _case_key(ca), _case_key(cb)
    both = set(ka) & set(kb)
    same = {c for c in both if ka[c] == kb[c]}
    return same, len(set(ka) - set(kb)), len(set(kb) - set(ka)), len(both - same)


def _pairs(a: RunTallies, b: RunTallies, asked: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    if asked:
        for x, y in asked:
            for name, side, names in ((x, "first", a.names), (y, "second", b.names)):
                if name not in names:
                    raise UsageError(f"--condition {x}={y}: the {side} run directory has no condition {name!r} "
                                     f"(it has: {', '.join(names) or 'none'})")  # fmt: skip
        return list(asked)
    pairs = [(n, n) for n in a.names if n in b.names]
    if not pairs:
        raise UsageError(f"no condition has the same name in both run directories (first: {', '.join(a.names) or 'none'};"
                         f" second: {', '.join(b.names) or 'none'}); pair them with --condition NAME_IN_A=NAME_IN_B")  # fmt: skip
    return pairs


def _values(runs: list[RunRow], attr: str, completed_only: bool = False) -> list[Any]:
    seen = {getattr(r, attr) for r in runs if not completed_only or r.reviewed}
    return sorted(seen, key=lambda v: (v is None, str(v)))


def _reviewer(experiment: RecordedExperiment, name: str) -> dict[str, Any]:
    condition = experiment.find(name)
    return condition.settings() if condition else {}


def _started(runs: list[RunRow]) -> dict[str, str | None]:
    times = sorted(r.started_at for r in runs if r.started_at)
    return {"first": times[0] if times else None, "last": times[-1] if times else None}


def _change(a: Any, b: Any) -> Change:
    return Change(a=a, b=b, same=a == b)


def _distinct_params(runs: list[RunRow]) -> list[dict[str, Any]]:
    seen = {json.dumps(r.params, sort_keys=True) for r in runs}
    return [json.loads(p) for p in sorted(seen)]


def _condition_changes(ta: RunTallies, tb: RunTallies, ca: str, cb: str, analysis: str) -> dict[str, Change]:
    ra, rb = ta.by_condition[ca], tb.by_condition[cb]
    out = {
        "model_requested": _change(_values(ra, "model_requested"), _values(rb, "model_requested")),
        "model_returned": _change(_values(ra, "model_returned", True), _values(rb, "model_returned", True)),
        "prompt_sha256": _change(_values(ra, "prompt_sha256"), _values(rb, "prompt_sha256")),
        "guidance_sha256": _change(_values(ra, "guidance_sha256"), _values(rb, "guidance_sha256")),
        "reviewer": _change(_reviewer(ta.inputs.experiment, ca), _reviewer(tb.inputs.experiment, cb)),
        "params": _change(_distinct_params(ra), _distinct_params(rb)),
        "evidence": _change(sorted(ta.tallies[(ca, analysis)].evidence), sorted(tb.tallies[(cb, analysis)].evidence)),
        "tool_version": _change(_values(ra, "tool_version"), _values(rb, "tool_version")),
        "repetitions": _change(len({r.repetition for r in ra}), len({r.repetition for r in rb})),
        "runs": _change(len(ra), len(rb)),
        "started": _change(_started(ra), _started(rb)),
    }
    return out


def _registration(t: RunTallies) -> str | None:
    r = t.inputs.registration
    if not r:
        return None
    return f"version {r.version} of {r.registered_at}, SHA-256 {r.sha256}"


def _side(rundir: Path, t: RunTallies) -> RunSide:
    return RunSide(rundir=str(rundir), corpus=str(t.inputs.corpus.path), gold_sha256=t.inputs.corpus.meta.gold_sha256,
                   runs=len(t.inputs.runs), conditions=list(t.names), registration=_registration(t),
                   baselines=[n for n in t.names if calibration_kind(t.inputs.experiment, n)])  # fmt: skip


def _run_changes(ta: RunTallies, tb: RunTallies) -> dict[str, Change]:
    def rules(t: RunTallies) -> dict[str, Any]:
        return {"tolerance": t.inputs.tolerance, "bootstrap": t.inputs.bootstrap,
                "include_unvalidated": t.inputs.include_unvalidated}  # fmt: skip

    return {
        "gold_sha256": _change(ta.inputs.corpus.meta.gold_sha256, tb.inputs.corpus.meta.gold_sha256),
        "tool_version": _change(_values(ta.inputs.runs, "tool_version"), _values(tb.inputs.runs, "tool_version")),
        "rules": _change(rules(ta), rules(tb)),
        "registration": _change(_registration(ta), _registration(tb)),
        "started": _change(_started(ta.inputs.runs), _started(tb.inputs.runs)),
    }


def _figure(column: tuple[np.ndarray, np.ndarray]) -> PairedFigure:
    num, den = float(column[0].sum()), float(column[1].sum())

    def as_number(x: float) -> int | float:
        return int(x) if x.is_integer() else round(x, 6)

    return PairedFigure(value=round(num / den, 6) if den > 0 else None, num=as_number(num), den=as_number(den))


def _mcnemar(found_a: dict[tuple[str, int, int], bool], found_b: dict[tuple[str, int, int], bool],
             keep: set[str] | None = None) -> McNemarResult:
    if keep is not None:
        found_a = {k: v for k, v in found_a.items() if k[0] in keep}
    table = mcnemar_table(found_a, found_b)
    return McNemarResult(both=table.both, only_a=table.only_a, only_b=table.only_b, neither=table.neither, p=table.p)


def _tallied(rundir_a: Path, rundir_b: Path, options: CompareOptions
             ) -> tuple[RunTallies, RunTallies, bool, tuple[set[str], int, int, int]]:  # fmt: skip
    """Both sides tallied as history, restricted to their shared cases when the corpora differ
    (``--shared-cases``); also whether restricted, and (shared, only a, only b, differing)."""
    ta = tally_runs(rundir_a, ScoreOptions(overrides=options.overrides_a, historical=True))
    tb = tally_runs(rundir_b, ScoreOptions(overrides=options.overrides_b, historical=True))
    corpus_a, corpus_b = ta.inputs.corpus, tb.inputs.corpus
    if corpus_a.meta.gold_sha256 == corpus_b.meta.gold_sha256:
        return ta, tb, False, ({c.case_id for c in corpus_a.cases}, 0, 0, 0)
    shared, only_a, only_b, differing = _shared(corpus_a, corpus_b)
    if not options.shared_cases:
        same = not (only_a or only_b or differing)
        hint = (f"; their {len(shared)} cases agree in patch and labels (gold.jsonl differs elsewhere, e.g. "
                "validation records), so --shared-cases compares them all" if same
                else f"; {len(shared)} cases agree, {only_a + only_b + differing} do not: add --shared-cases to "
                "compare only those that agree")  # fmt: skip
        raise UsageError(f"{rundir_a} and {rundir_b} were run on different corpora (gold SHA-256 "
                         f"{corpus_a.meta.gold_sha256[:12]}… and {corpus_b.meta.gold_sha256[:12]}…){hint}")  # fmt: skip
    if not shared:
        raise UsageError(f"{rundir_a} and {rundir_b} share no case (same id, patch and gold): nothing to compare")
    ta = tally_runs(rundir_a, ScoreOptions(overrides=options.overrides_a, historical=True), only=shared)
    tb = tally_runs(rundir_b, ScoreOptions(overrides=options.overrides_b, historical=True), only=shared)
    return ta, tb, True, (shared, only_a, only_b, differing)


def compare_runs(rundir_a: Path, rundir_b: Path, options: CompareOptions = CompareOptions()) -> RunComparison:
    """Compare every paired condition of two run directories (see ``docs/COMPARE.md``).

    Raises:
        CorpusError: a path is not a run directory, or its corpus is missing.
        UsageError: the corpora's gold differ (without ``shared_cases``), no case is shared,
            a named condition is missing, or either side cannot be scored (as ``score``).
    """
    if options.analysis not in ANALYSES:
        raise UsageError(f"unknown analysis {options.analysis!r}; analyses: {', '.join(ANALYSES)}")
    ta, tb, restricted, (shared, only_a, only_b, differing) = _tallied(rundir_a, rundir_b, options)
    pairs = _pairs(ta, tb, options.pairs)
    analysis = options.analysis
    resamples = options.bootstrap if options.bootstrap is not None else ta.inputs.bootstrap
    seed = options.seed if options.seed is not None else ta.inputs.seed

    cases = {**tb.cases, **ta.cases}
    clusters = sorted({c.cluster for c in cases.values()})
    index = {c: i for i, c in enumerate(clusters)}
    strata = sorted({c.stratum for c in cases.values()})
    frame = Frame(len(clusters))
    slots: dict[tuple[str, str, str | None, str], tuple[int, int]] = {}
    for ca, cb in pairs:
        rows_a, rows_b = ta.tallies[(ca, analysis)].rows, tb.tallies[(cb, analysis)].rows
        for stratum in (None, *strata):
            sa, sb = cluster_sums(rows_a, index, stratum), cluster_sums(rows_b, index, stratum)
            for name in RATE_METRICS:
                slots[(ca, cb, stratum, name)] = frame.add_paired(sa[name], sb[name])
    frame.resample(resamples, seed)

    def metric(ca: str, cb: str, stratum: str | None, name: str) -> MetricDifference:
        ka, kb = slots[(ca, cb, stratum, name)]
        col_a, col_b = frame.columns[ka], frame.columns[kb]
        diff, lo, hi = frame.paired(kb, ka)
        return MetricDifference(a=_figure(col_a), b=_figure(col_b), diff=diff, lo=lo, hi=hi,
                                clusters=int((col_a[1] > 0).sum()))  # fmt: skip

    compared = []
    for ca, cb in pairs:
        found_a, found_b = ta.tallies[(ca, analysis)].found, tb.tallies[(cb, analysis)].found
        per_stratum = {}
        for stratum in strata:
            keep = {k for k, c in cases.items() if c.stratum == stratum}
            figures = {m: metric(ca, cb, stratum, m) for m in RATE_METRICS}
            per_stratum[stratum] = StratumComparison(
                cases=sum(1 for c in cases.values() if c.stratum == stratum and not c.variant),
                metrics={m: f for m, f in figures.items() if f.clusters},
                mcnemar=_mcnemar(found_a, found_b, keep),
            )  # fmt: skip
        mc = _mcnemar(found_a, found_b)
        changes = _condition_changes(ta, tb, ca, cb, analysis)
        compared.append(ConditionComparison(
            a=ca, b=cb, baseline=calibration_kind(ta.inputs.experiment, ca) or calibration_kind(tb.inputs.experiment, cb),
            metrics={m: metric(ca, cb, None, m) for m in RATE_METRICS}, mcnemar_p=mc.p, mcnemar=mc,
            strata=per_stratum, changed=changes, differs=[k for k, c in changes.items() if not c.same],
        ))  # fmt: skip
    analysed = sum(1 for c in cases.values() if not c.variant)
    return RunComparison(
        a=_side(rundir_a, ta), b=_side(rundir_b, tb),
        shared_cases=SharedCases(restricted=restricted, cases=len(shared), only_a=only_a, only_b=only_b,
                                 differing=differing, analysed=analysed),
        changed=_run_changes(ta, tb), conditions=compared,
        unpaired={"a": [n for n in ta.names if n not in {p[0] for p in pairs}],
                  "b": [n for n in tb.names if n not in {p[1] for p in pairs}]},
        analysis={"analysis": analysis, "difference": "b - a",
                  "bootstrap": {"resamples": resamples, "seed": seed, "level": 0.95,
                                "unit": "case cluster (a rename variant and a mirror with their original)"}},
    )  # fmt: skip

