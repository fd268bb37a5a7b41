"""The metrics of SPEC 8, as sums of per-case numerators and denominators.

Every rate is Σnum / Σden over units (runs, defects, findings…) that each belong to one
case cluster (a rename variant belongs to its original's cluster). Keeping the sums per
cluster is what lets the bootstrap resample cases and carry all their runs, and lets one
code path compute the headline, the breakdowns and the intervals.

Only completed runs (``completed_findings``, ``completed_no_findings``) enter the rates;
failed, timed-out, invalid and cancelled runs appear in ``completion`` alone, so a missing
review is never counted as silence or restraint.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..records import Defect
from ..store.runs import RunRow
from .match import RunMatch, match_run, mentions_symbol

__all__ = ["COMPLETED", "RATE_METRICS", "CaseInfo", "ConditionTally", "tally_condition"]

COMPLETED = frozenset({"completed_findings", "completed_no_findings"})

#: Rate metrics, in the order they are reported.
RATE_METRICS = (
    "defect_recall",
    "recall_any",
    "recall_all",
    "file_recall",
    "symbol_recall",
    "localisation",
    "silence_rate",
    "false_alarm_rate",
    "fp_per_clean_case",
    "precision",
    "duplicate_rate",
    "severity_match",
    "rename_stability",
    "flag_coverage",
    "completion",
)


@dataclass(frozen=True)
class CaseInfo:
    """What scoring needs to know of one case."""

    case_id: str
    cluster: str
    """The case id of the original (itself, unless this is a rename variant)."""
    stratum: str
    control: bool
    variant: bool
    defects: tuple[Defect, ...]
    paths: tuple[str, ...]


@dataclass
class ConditionTally:
    """Contributions of one condition's runs, ready to aggregate or resample."""

    rows: list[tuple[str, str, float, float, str, str | None, str | None]] = field(default_factory=list)
    """(metric, cluster, num, den, stratum, defect class, severity)."""
    states: Counter[str] = field(default_factory=Counter)
    control_fps: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    runs_with_usage: int = 0
    cases_with_usage: set[str] = field(default_factory=set)
    found: dict[tuple[str, int, int], bool] = field(default_factory=dict)
    """(case id, defect index, repetition) → found, for completed runs of original cases."""

    def add(self, metric: str, case: CaseInfo, num: float, den: float,
            cls: str | None = None, severity: str | None = None) -> None:  # fmt: skip
        self.rows.append((metric, case.cluster, float(num), float(den), case.stratum, cls, severity))


def _defect_tags(defect: Defect) -> tuple[str, str]:
    return defect.defect_class, defect.severity.value if defect.severity else "unrated"


def tally_condition(runs: Sequence[RunRow], cases: dict[str, CaseInfo], tolerance: int) -> ConditionTally:
    """Match and count every run of one condition on the eligible ``cases``."""
    tally = ConditionTally()
    matches: dict[tuple[str, int], RunMatch] = {}
    for run in runs:
        case = cases.get(run.case_id)
        if case is None:
            continue  # not eligible under the current analysis
        tally.states[run.state] += 1
        completed = run.state in COMPLETED
        tally.add("completion", case, int(completed), 1)
        if run.latency_s is not None and run.state != "cancelled":
            tally.latencies.append(run.latency_s)
        if run.tokens_in is not None or run.tokens_out is not None:
            tally.tokens_in += run.tokens_in or 0
            tally.tokens_out += run.tokens_out or 0
            tally.runs_with_usage += 1
            tally.cases_with_usage.add(case.cluster)
        if not completed:
            continue
        m = match_run(run.findings, case.defects, case.paths, tolerance)
        matches[(run.case_id, run.repetition)] = m
        tally.add("flag_coverage", case, m.flagged_files, len(case.paths))
        if case.control:
            tally.add("false_alarm_rate", case, int(m.findings > 0), 1)
            tally.add("fp_per_clean_case", case, m.false_positives, 1)
            tally.add("precision", case, 0, m.false_positives)
            tally.add("duplicate_rate", case, 0, m.false_positives)
            tally.control_fps.append(m.false_positives)
            continue
        if case.variant:
            continue  # variants count only in rename_stability (below)
        tally.add("silence_rate", case, int(m.findings == 0), 1)
        tally.add("file_recall", case, int(m.names_gold_file), 1)
        symbols = sorted({s for d in case.defects for s in d.symbols})
        if symbols:
            tally.add("symbol_recall", case, int(mentions_symbol(run.raw_output, symbols)), 1)
        tally.add("precision", case, m.true_positives, m.true_positives + m.false_positives)
        substantive = m.true_positives + m.false_positives + m.duplicates
        tally.add("duplicate_rate", case, m.duplicates, substantive)
        for i, defect in enumerate(case.defects):
            cls, severity = _defect_tags(defect)
            tally.add("defect_recall", case, int(m.found[i]), 1, cls, severity)
            if m.file_hit[i]:
                tally.add("localisation", case, int(m.found[i]), 1, cls, severity)
            if m.severity_ok[i] is not None:
                tally.add("severity_match", case, int(m.severity_ok[i]), 1, cls, severity)
            tally.found[(run.case_id, i, run.repetition)] = m.found[i]
    _per_defect(tally, cases)
    _rename_stability(tally, cases, matches)
    return tally


def _per_defect(tally: ConditionTally, cases: dict[str, CaseInfo]) -> None:
    """recall_any / recall_all: a defect found in at least one / every completed repetition."""
    outcomes: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for (case_id, index, _rep), found in tally.found.items():
        outcomes[(case_id, index)].append(found)
    for (case_id, index), seen in sorted(outcomes.items()):
        case = cases[case_id]
        cls, severity = _defect_tags(case.defects[index])
        tally.add("recall_any", case, int(any(seen)), 1, cls, severity)
        tally.add("recall_all", case, int(all(seen)), 1, cls, severity)


def _rename_stability(tally: ConditionTally, cases: dict[str, CaseInfo],
                      matches: dict[tuple[str, int], RunMatch]) -> None:  # fmt: skip
    """Of the defects the original found in repetition r, those its variant also found in r."""
    for (case_id, rep), variant_match in matches.items():
        case = cases[case_id]
        if not case.variant:
            continue
        original = matches.get((case.cluster, rep))
        if original is None:
            continue
        for i, found in enumerate(original.found[: len(variant_match.found)]):
            if found:
                cls, severity = _defect_tags(cases[case.cluster].defects[i])
                tally.add("rename_stability", case, int(variant_match.found[i]), 1, cls, severity)


def latency_summary(values: list[float]) -> dict:
    if not values:
        return {"value": None, "num": None, "den": 0, "lo": None, "hi": None, "max": None}
    ordered = sorted(values)
    q = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 3
    return {"value": round(statistics.median(ordered), 4), "num": None, "den": len(ordered),
            "lo": round(q[0], 4), "hi": round(q[2], 4), "max": round(ordered[-1], 4)}  # fmt: skip


def fp_distribution(fps: list[int]) -> dict:
    buckets = Counter(min(n, 3) for n in fps)
    return {
        "0": buckets[0], "1": buckets[1], "2": buckets[2], "3+": buckets[3],
        "median": statistics.median(fps) if fps else None,
        "max": max(fps) if fps else None,
        "runs": len(fps),
    }  # fmt: skip
