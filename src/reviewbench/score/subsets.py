"""Metrics of a subset of a condition's cases, with intervals: holdout strata and the
contamination cut-off score part of the cases apart from the headline.

Groups of case clusters (a rename variant belongs to its original's cluster) are scored
from the same tally rows the headline uses, and resampled together by cluster, so the
difference between two groups comes with a bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .frame import Frame
from .metrics import RATE_METRICS, ConditionTally
from .registry import spec

__all__ = ["group_metrics"]


def _round(x: float | None) -> int | float | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else round(float(x), 6)


def group_metrics(tally: ConditionTally, groups: Mapping[str, set[str]], resamples: int, seed: int,
                  difference: tuple[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """``{group: {"metrics": {metric: {value, num, den, lo, hi}}}}`` for each group of
    clusters, plus ``"difference"`` (second minus first group, per metric, with its
    interval) when ``difference`` names two groups."""
    clusters = sorted(set().union(*groups.values())) if groups else []
    index = {c: i for i, c in enumerate(clusters)}
    names = list(groups)
    columns = {(g, m): k for k, (g, m) in enumerate((g, m) for g in names for m in RATE_METRICS)}
    num = np.zeros((len(clusters), len(columns)))
    den = np.zeros((len(clusters), len(columns)))
    member = {c: g for g in names for c in groups[g]}
    for metric, cluster, n, d, *_rest in tally.rows:
        group = member.get(cluster)
        if group is None:
            continue
        k = columns[(group, metric)]
        num[index[cluster], k] += n
        den[index[cluster], k] += d
    frame = Frame(len(clusters))
    for k, (_group, metric) in enumerate(columns):
        frame.add(num[:, k], den[:, k], count=spec(metric).count)
    frame.resample(resamples, seed)
    out: dict[str, Any] = {}
    for group in names:
        metrics = {}
        for metric in RATE_METRICS:
            k = columns[(group, metric)]
            total_n, total_d = float(num[:, k].sum()), float(den[:, k].sum())
            lo, hi = frame.interval(k) if total_d > 0 else (None, None)
            metrics[metric] = {"value": round(total_n / total_d, 6) if total_d > 0 else None,
                               "num": _round(total_n), "den": _round(total_d), "lo": lo, "hi": hi}  # fmt: skip
            if total_d > 0 and frame.exact(k):
                metrics[metric]["exact"] = True
        out[group] = {"cases": len(groups[group]), "metrics": metrics}
    if difference:
        first, second = difference
        diffs: dict[str, dict[str, float | None]] = {}
        for metric in RATE_METRICS:
            a, b = out[first]["metrics"][metric], out[second]["metrics"][metric]
            if a["value"] is None or b["value"] is None:
                diffs[metric] = {"diff": None, "lo": None, "hi": None}
                continue
            diff, dlo, dhi = frame.paired(columns[(second, metric)], columns[(first, metric)])
            diffs[metric] = {"diff": round(b["value"] - a["value"], 6), "lo": dlo, "hi": dhi}
        out["difference"] = {"of": f"{second} - {first}", "metrics": diffs}
    return out
