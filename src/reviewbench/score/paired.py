"""Paired differences: two conditions on the same case clusters, inside one run directory
(``score``) or across two (``compare``, ``gate``).

A paired figure counts only the clusters both sides were scored on (a case one side never
reviewed would otherwise move one side only), and its interval comes from the same
resamples of those clusters for both sides: one matrix of draw counts, two columns.
McNemar pairs the same units: (case, defect, repetition) found by one side and not the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .stats import mcnemar_exact, percentile_interval

__all__ = ["McNemarTable", "difference", "mcnemar_table", "paired_columns", "pair_pattern"]

Column = tuple[np.ndarray, np.ndarray]


def paired_columns(a: Column, b: Column) -> tuple[Column, Column]:
    """``a`` and ``b`` (per-cluster numerators, denominators) kept to the clusters where
    both have a denominator."""
    (na, da), (nb, db) = a, b
    shared = (da > 0) & (db > 0)
    return (na * shared, da * shared), (nb * shared, db * shared)


def pair_pattern(a: Column, b: Column) -> tuple[int, int, int]:
    """(complete pairs, clusters only ``b`` was scored on, clusters only ``a`` was): the
    clusters a paired figure keeps, and what each side is missing of the other's."""
    da, db = a[1] > 0, b[1] > 0
    return int((da & db).sum()), int((db & ~da).sum()), int((da & ~db).sum())


def difference(a: Column, b: Column, samples_a: np.ndarray, samples_b: np.ndarray,
               level: float = 0.95) -> tuple[float | None, float | None, float | None]:  # fmt: skip
    """``a - b`` on paired columns, and the percentile interval of its resampled values.

    Args:
        samples_a, samples_b: the two columns' bootstrap values from the same draw counts.

    Returns:
        (diff, lo, hi), None where a side has no denominator (lo and hi None too when no
        resample has both).
    """
    (na, da), (nb, db) = a, b
    if da.sum() == 0 or db.sum() == 0:
        return None, None, None
    diff = round(float(na.sum() / da.sum() - nb.sum() / db.sum()), 6)
    lo, hi = percentile_interval((samples_a - samples_b)[:, None], level)
    if np.isnan(lo[0]):
        return diff, None, None
    return diff, round(float(lo[0]), 6), round(float(hi[0]), 6)


@dataclass(frozen=True)
class McNemarTable:
    """The 2×2 table of paired found/missed units and its exact two-sided McNemar p."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def pairs(self) -> int:
        """Units both sides scored."""
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def p(self) -> float | None:
        """None without discordant pairs (nothing to test)."""
        return mcnemar_exact(self.only_a, self.only_b)


def mcnemar_table(found_a: Mapping[tuple[Any, ...], bool], found_b: Mapping[tuple[Any, ...], bool]) -> McNemarTable:
    """Pair the units both sides scored (``ConditionTally.found``: (case, defect index,
    repetition) → identified); a unit only one side has is not a pair."""
    both = only_a = only_b = neither = 0
    for key, a in found_a.items():
        b = found_b.get(key)
        if b is None:
            continue
        both += a and b
        only_a += a and not b
        only_b += b and not a
        neither += not a and not b
    return McNemarTable(both, only_a, only_b, neither)
