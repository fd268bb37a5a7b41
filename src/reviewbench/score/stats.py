"""Intervals and tests: case-clustered bootstrap, paired differences, exact McNemar.

The bootstrap resamples case clusters with replacement and carries all their runs: with
per-cluster sums ``num`` and ``den`` (N clusters × K statistics), one resample is a vector
of N draw counts ``c`` and every statistic's value is ``(c @ num) / (c @ den)``. A block of
resamples is one matrix product, so 10,000 resamples of every metric of every condition
cost a few matrix products, not a Python loop per resample.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import beta, binomtest, chi2

__all__ = ["exact_interval", "mcnemar_exact", "newcombe", "percentile_interval", "resample_ratios"]

_BLOCK = 256


def resample_ratios(num: np.ndarray, den: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` × K bootstrap values of Σnum/Σden (NaN where a resample's Σden is 0).

    Args:
        num, den: N × K per-cluster sums (N clusters, K statistics).
        seed: the generator's seed; the same seed and N give the same resamples, which is
            what makes differences between columns paired.
    """
    n, k = num.shape
    out = np.full((resamples, k), np.nan)
    if n == 0 or k == 0:
        return out
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        # Draw n case ids per resample and count them: one bincount for the whole block.
        drawn = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
        top, bottom = counts @ num, counts @ den
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start : start + size] = np.where(bottom > 0, top / bottom, np.nan)
    return out


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the central ``level`` percentile interval, ignoring NaN (NaN if none)."""
    tail = (1 - level) / 2 * 100
    if samples.size == 0:  # no statistic (an empty run store), or no resample
        empty = np.full(samples.shape[1], np.nan)
        return empty, empty.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns stay NaN
        lo, hi = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    return lo, hi


def exact_interval(num: np.ndarray, den: np.ndarray, level: float = 0.95, *, count: bool = False) -> tuple[float, float]:
    """An exact interval of ``Σnum/Σden`` on the clusters, for when resampling them has no
    variance (every cluster says the same, or one cluster holds every hit).

    The n clusters with a denominator are the trials and ``rate · n`` the successes:
    Clopper–Pearson for a proportion (0 of 20 cases: [0, 0.168]); for a count per case
    (``count``), the exact Poisson interval of ``rate · n`` events over n cases.
    """
    n = int((den > 0).sum())
    if n == 0:
        raise ValueError("no cluster has a denominator")  # callers check: a programming error
    rate = float(num.sum() / den.sum())
    x, tail = rate * n, (1 - level) / 2
    if count:
        low = 0.0 if x <= 0 else float(chi2.ppf(tail, 2 * x)) / 2 / n
        return low, float(chi2.ppf(1 - tail, 2 * x + 2)) / 2 / n
    low = 0.0 if x <= 0 else float(beta.ppf(tail, x, n - x + 1))
    high = 1.0 if x >= n else float(beta.ppf(1 - tail, x + 1, n - x))
    return low, high


def newcombe(p_a: float, a: tuple[float, float], p_b: float, b: tuple[float, float]) -> tuple[float, float]:
    """Newcombe's interval of ``p_a - p_b`` from each side's own interval (method 10)."""
    d = p_a - p_b
    return (d - float(np.hypot(p_a - a[0], b[1] - p_b)), d + float(np.hypot(a[1] - p_a, p_b - b[0])))


def mcnemar_exact(only_a: int, only_b: int) -> float | None:
    """Two-sided exact McNemar p-value from the discordant pairs (None when there are none)."""
    total = only_a + only_b
    if total == 0:
        return None
    return float(binomtest(min(only_a, only_b), total, 0.5).pvalue)
