"""One resampling frame: every statistic of a score as a column of per-cluster sums, all
columns resampled together by cluster so that any two are paired.

A caller adds columns (``add(num, den) -> slot``), resamples once, then reads each slot's
rate with its percentile interval, or the paired difference of two slots. Paired columns
(``add_paired``) keep only the clusters both sides were scored on.

Where the resamples have no variance (every cluster says the same, or one cluster holds
every hit) the percentile interval is a point, which would read as certainty: the frame
gives the exact interval on the clusters instead (``stats.exact_interval``; for a difference,
the exact bound on the share of clusters that could differ, see :meth:`paired`) and says so (:meth:`exact`, :meth:`paired_exact`).
"""

from __future__ import annotations

import numpy as np

from .paired import Column, difference, paired_columns
from .stats import exact_interval, newcombe, percentile_interval, resample_ratios

__all__ = ["Frame"]


class Frame:
    """Columns over ``clusters`` clusters, resampled by :meth:`resample`."""

    def __init__(self, clusters: int) -> None:
        self.clusters = clusters
        self.columns: list[Column] = []
        self._count: list[bool] = []
        self._samples: np.ndarray | None = None
        self._lo = self._hi = np.zeros(0)
        self._exact: set[int] = set()

    def add(self, num: np.ndarray, den: np.ndarray, *, count: bool = False) -> int:
        """A column of per-cluster numerator and denominator sums; its slot. ``count``: the
        rate is a count per case (false positives per clean case), not a proportion."""
        if self._samples is not None:
            raise RuntimeError("the frame was resampled already")  # a programming error, not input
        self.columns.append((num, den))
        self._count.append(count)
        return len(self.columns) - 1

    def add_paired(self, a: Column, b: Column, *, count: bool = False) -> tuple[int, int]:
        """Two columns restricted to the clusters both were scored on; their slots."""
        pa, pb = paired_columns(a, b)
        return self.add(*pa, count=count), self.add(*pb, count=count)

    def resample(self, resamples: int, seed: int) -> None:
        if self.columns:
            num = np.column_stack([c[0] for c in self.columns])
            den = np.column_stack([c[1] for c in self.columns])
        else:
            num = den = np.zeros((self.clusters, 0))
        self._samples = resample_ratios(num, den, resamples, seed)
        self._lo, self._hi = percentile_interval(self._samples)
        for slot, (n, d) in enumerate(self.columns):
            if not np.isnan(self._lo[slot]) and self._lo[slot] == self._hi[slot]:
                self._lo[slot], self._hi[slot] = exact_interval(n, d, count=self._count[slot])
                self._exact.add(slot)

    def exact(self, slot: int) -> bool:
        """The slot's interval is exact on the clusters (the resamples had no variance)."""
        self._drawn()
        return slot in self._exact

    def _drawn(self) -> np.ndarray:
        if self._samples is None:
            raise RuntimeError("resample the frame first")
        return self._samples

    def interval(self, slot: int) -> tuple[float | None, float | None]:
        """The 95% percentile interval of a slot's rate (None, None: no resample had a denominator)."""
        self._drawn()
        low, high = self._lo[slot], self._hi[slot]
        return (None, None) if np.isnan(low) else (round(float(low), 6), round(float(high), 6))

    def paired(self, sa: int, sb: int) -> tuple[float | None, float | None, float | None]:
        """Difference a - b of two slots' rates and its interval (``paired.difference``).

        When the resampled differences do not vary, every paired cluster showed the same
        difference d: the interval is then d ± u, u the exact (Clopper–Pearson) bound on the
        share of clusters that could behave otherwise, 0 of n seen, each moving a proportion
        by at most 1; for a count per case, or two groups of different clusters (unpaired),
        Newcombe's from the two exact intervals.
        """
        samples = self._drawn()
        diff, low, high = difference(self.columns[sa], self.columns[sb], samples[:, sa], samples[:, sb])
        if diff is None or low is None or low != high:
            return diff, low, high
        (na, da), (nb, db) = self.columns[sa], self.columns[sb]
        n = int(((da > 0) & (db > 0)).sum())  # 0: two groups of different clusters, unpaired
        if self._count[sa] or self._count[sb] or n == 0:
            pa, pb = float(na.sum() / da.sum()), float(nb.sum() / db.sum())
            lo, hi = newcombe(pa, exact_interval(na, da, count=self._count[sa]),
                              pb, exact_interval(nb, db, count=self._count[sb]))  # fmt: skip
            return diff, round(lo, 6), round(hi, 6)
        u = exact_interval(np.zeros(n), np.ones(n))[1]
        return diff, round(max(-1.0, diff - u), 6), round(min(1.0, diff + u), 6)

    def paired_exact(self, sa: int, sb: int) -> bool:
        """The difference's interval came from the exact intervals (see :meth:`paired`)."""
        samples = self._drawn()
        _, low, high = difference(self.columns[sa], self.columns[sb], samples[:, sa], samples[:, sb])
        return low is not None and low == high
