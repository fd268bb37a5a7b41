"""Pure figures of human labelling: Cohen's kappa with a bootstrap interval, actionability
rate and triage minutes. No I/O: the store and the CLI feed them.
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .records import ACTIONABILITY_FIELDS, ActionabilityFields

__all__ = [
    "ActionabilityRate",
    "Kappa",
    "Rate",
    "TriageMinutes",
    "actionability_rate",
    "cohen_kappa",
    "confusion",
    "kappa_with_interval",
    "triage_minutes",
]


def confusion(a: Sequence[Hashable], b: Sequence[Hashable]) -> dict[str, dict[str, int]]:
    """Counts of (a's label, b's label) pairs, as nested dicts with every seen label."""
    labels = sorted({str(x) for x in a} | {str(x) for x in b})
    table = {row: dict.fromkeys(labels, 0) for row in labels}
    for x, y in zip(a, b, strict=True):
        table[str(x)][str(y)] += 1
    return table


def _kappa_codes(x: np.ndarray, y: np.ndarray, k: int) -> float:
    n = len(x)
    if n == 0:
        return float("nan")
    po = float(np.count_nonzero(x == y)) / n
    pe = float(np.bincount(x, minlength=k) @ np.bincount(y, minlength=k)) / (n * n)
    if pe >= 1.0:
        return float("nan")  # both raters used one and the same label throughout
    return (po - pe) / (1 - pe)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items; None when undefined.

    ``(po - pe) / (1 - pe)`` with ``po`` the observed agreement and ``pe`` the agreement
    expected from each rater's marginal label frequencies. Undefined with no items, or
    when both raters gave one and the same label to everything (``pe = 1``).
    """
    x, y, k = _codes(a, b)
    value = _kappa_codes(x, y, k)
    return None if np.isnan(value) else value


def _codes(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray, int]:
    pairs = [(str(u), str(v)) for u, v in zip(a, b, strict=True)]  # both raters, the same items
    labels = sorted({u for u, _ in pairs} | {v for _, v in pairs})
    index = {label: i for i, label in enumerate(labels)}
    x = np.array([index[u] for u, _ in pairs], dtype=np.int64)
    y = np.array([index[v] for _, v in pairs], dtype=np.int64)
    return x, y, len(labels)


@dataclass(frozen=True)
class Kappa:
    """Agreement of two raters on one question."""

    n: int
    percent_agreement: float | None
    kappa: float | None
    kappa_lo: float | None
    kappa_hi: float | None
    confusion: dict[str, dict[str, int]]

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "percent_agreement": self.percent_agreement, "kappa": self.kappa,
                "kappa_lo": self.kappa_lo, "kappa_hi": self.kappa_hi, "confusion": self.confusion}  # fmt: skip


def _round(x: float | None) -> float | None:
    return None if x is None or np.isnan(x) else round(float(x), 6)


def kappa_with_interval(a: Sequence[Hashable], b: Sequence[Hashable], *, resamples: int = 2000,
                        seed: int = 0, level: float = 0.95) -> Kappa:  # fmt: skip
    """Kappa, percent agreement and confusion table, with a percentile bootstrap interval.

    The bootstrap resamples items with replacement; resamples where kappa is undefined are
    left out of the interval.
    """
    x, y, k = _codes(a, b)
    n = len(x)
    if n == 0:
        return Kappa(0, None, None, None, None, {})
    value = _kappa_codes(x, y, k)
    lo = hi = float("nan")
    if resamples > 0 and not np.isnan(value):
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(resamples, n))
        samples = np.array([_kappa_codes(x[d], y[d], k) for d in draws])
        samples = samples[~np.isnan(samples)]
        if samples.size:
            tail = (1 - level) / 2 * 100
            lo, hi = np.percentile(samples, [tail, 100 - tail])
    return Kappa(n=n, percent_agreement=_round(float(np.count_nonzero(x == y)) / n), kappa=_round(value),
                 kappa_lo=_round(lo), kappa_hi=_round(hi), confusion=confusion(a, b))  # fmt: skip


@dataclass(frozen=True)
class Rate:
    """A proportion that travels with its numerator and denominator ("not scored": None)."""

    numerator: int
    denominator: int

    @property
    def value(self) -> float | None:
        return round(self.numerator / self.denominator, 6) if self.denominator else None

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "numerator": self.numerator, "denominator": self.denominator}


@dataclass(frozen=True)
class ActionabilityRate:
    """True findings passing all five fields ÷ true findings assessed, and per field."""

    overall: Rate
    fields: dict[str, Rate] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {**self.overall.as_dict(), "fields": {k: v.as_dict() for k, v in self.fields.items()}}


def actionability_rate(true_findings: Sequence[ActionabilityFields]) -> ActionabilityRate:
    """Actionability of true findings.

    Overall, a finding is assessed when all five fields are answered, and passes when all
    five are yes. Per field, the denominator is the findings with that field answered.
    """
    assessed = [f for f in true_findings if f.complete()]
    overall = Rate(sum(f.passes() for f in assessed), len(assessed))
    per_field = {}
    for name in ACTIONABILITY_FIELDS:
        answered = [getattr(f, name) for f in true_findings if getattr(f, name) is not None]
        per_field[name] = Rate(sum(1 for v in answered if v), len(answered))
    return ActionabilityRate(overall=overall, fields=per_field)


@dataclass(frozen=True)
class TriageMinutes:
    """Rater minutes spent per run, summed over raters."""

    runs: int
    median: float | None
    q1: float | None
    q3: float | None
    per_case: dict[str, float]
    adjudication_minutes: float

    @property
    def iqr(self) -> float | None:
        return None if self.q1 is None or self.q3 is None else round(self.q3 - self.q1, 6)

    def as_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "median": self.median, "q1": self.q1, "q3": self.q3, "iqr": self.iqr,
                "per_case": self.per_case, "adjudication_minutes": self.adjudication_minutes}  # fmt: skip


def triage_minutes(per_label: Sequence[tuple[str, str, float]], adjudication_s: Sequence[float] = ()) -> TriageMinutes:
    """Triage minutes from ``(run_id, case_id, seconds)`` of every rater label.

    A run's minutes are the sum over its claims and raters; the distribution is over runs
    (median and quartiles by the inclusive method, so one run gives q1 = q3 = its value);
    ``per_case`` sums the runs of each case. Adjudication minutes are reported beside.
    """
    by_run: dict[str, float] = {}
    by_case: dict[str, float] = {}
    for run_id, case_id, seconds in per_label:
        by_run[run_id] = by_run.get(run_id, 0.0) + seconds
        by_case[case_id] = by_case.get(case_id, 0.0) + seconds
    minutes = sorted(v / 60 for v in by_run.values())
    median = q1 = q3 = None
    if minutes:
        median = round(statistics.median(minutes), 6)
        if len(minutes) == 1:
            q1 = q3 = round(minutes[0], 6)
        else:
            q1, _, q3 = (round(q, 6) for q in statistics.quantiles(minutes, n=4, method="inclusive"))
    return TriageMinutes(runs=len(minutes), median=median, q1=q1, q3=q3,
                         per_case={k: round(v / 60, 6) for k, v in sorted(by_case.items())},
                         adjudication_minutes=round(sum(adjudication_s) / 60, 6))  # fmt: skip
