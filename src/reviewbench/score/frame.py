"""One resampling frame: every statistic of a score as a column of per-cluster sums, all
columns resampled together by cluster so that any two are paired.

A caller adds columns (``add(num, den) -> slot``), resamples once, then reads each slot's
rate with its percentile interval, or the paired difference of two slots. Paired columns
(``add_paired``) keep only the clusters both sides were scored on.
"""

from __future__ import annotations

import numpy as np

from .paired import Column, difference, paired_columns
from .stats import percentile_interval, resample_ratios

__all__ = ["Frame"]


class Frame:
    """Columns over ``clusters`` clusters, resampled by :meth:`resample`."""

    def __init__(self, clusters: int) -> None:
        self.clusters = clusters
        self.columns: list[Column] = []
        self._samples: np.ndarray | None = None
        self._lo = self._hi = np.zeros(0)

    def add(self, num: np.ndarray, den: np.ndarray) -> int:
        """A column of per-cluster numerator and denominator sums; its slot."""
        if self._samples is not None:
            raise RuntimeError("the frame was resampled already")  # a programming error, not input
        self.columns.append((num, den))
        return len(self.columns) - 1

    def add_paired(self, a: Column, b: Column) -> tuple[int, int]:
        """Two columns restricted to the clusters both were scored on; their slots."""
        pa, pb = paired_columns(a, b)
        return self.add(*pa), self.add(*pb)

    def resample(self, resamples: int, seed: int) -> None:
        if self.columns:
            num = np.column_stack([c[0] for c in self.columns])
            den = np.column_stack([c[1] for c in self.columns])
        else:
            num = den = np.zeros((self.clusters, 0))
        self._samples = resample_ratios(num, den, resamples, seed)
        self._lo, self._hi = percentile_interval(self._samples)

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
        """Difference b - a of two slots' rates and its interval (``paired.difference``)."""
        samples = self._drawn()
        return difference(self.columns[sa], self.columns[sb], samples[:, sa], samples[:, sb])
