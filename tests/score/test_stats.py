"""The statistics: bootstrap coverage by simulation, exact McNemar by hand, paired resamples."""

from __future__ import annotations

import numpy as np
import pytest

from reviewbench.score.stats import mcnemar_exact, percentile_interval, resample_ratios


def test_bootstrap_interval_covers_the_true_recall_90_to_99_percent_of_the_time():
    """200 simulated experiments, 40 cases x 3 runs each, true per-run recall 0.6."""
    rng = np.random.default_rng(1234)
    true_recall, cases, runs, covered = 0.6, 40, 3, 0
    for experiment in range(200):
        # Case-level heterogeneity (some bugs are easier), mean exactly true_recall.
        difficulty = rng.beta(3, 2, size=cases)  # mean 0.6
        found = rng.binomial(runs, difficulty)
        num, den = found.astype(float)[:, None], np.full((cases, 1), float(runs))
        lo, hi = percentile_interval(resample_ratios(num, den, 2000, seed=experiment))
        covered += lo[0] <= true_recall <= hi[0]
    assert 180 <= covered <= 198, covered


def test_resamples_are_case_clustered_sums():
    # Two clusters: one always found (2/2), one never (0/2). Any resample is k/(N) of the first.
    num = np.array([[2.0], [0.0]])
    den = np.array([[2.0], [2.0]])
    samples = resample_ratios(num, den, 500, seed=3)[:, 0]
    assert set(np.round(samples, 6)) <= {0.0, 0.5, 1.0}
    assert 0.3 < samples.mean() < 0.7


def test_same_seed_same_resamples_so_columns_pair():
    num = np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]])
    den = np.ones((3, 2))
    samples = resample_ratios(num, den, 300, seed=9)
    assert np.array_equal(samples[:, 0], samples[:, 1])  # identical columns: zero difference
    again = resample_ratios(num[:, :1], den[:, :1], 300, seed=9)
    assert np.array_equal(samples[:, 0], again[:, 0])


def test_zero_denominator_gives_no_interval():
    lo, hi = percentile_interval(resample_ratios(np.zeros((3, 1)), np.zeros((3, 1)), 100, seed=0))
    assert np.isnan(lo[0]) and np.isnan(hi[0])


@pytest.mark.parametrize("only_a, only_b, expected", [
    (5, 1, 14 / 64),       # 2 * P(X <= 1), X ~ Bin(6, 1/2) = 2 * 7/64
    (3, 0, 0.25),          # 2 * (1/2)^3
    (4, 4, 1.0),
    (10, 0, 2 / 1024),
])  # fmt: skip
def test_exact_mcnemar_by_hand(only_a, only_b, expected):
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected)


def test_mcnemar_without_discordant_pairs_is_not_a_number():
    assert mcnemar_exact(0, 0) is None


def test_no_statistics_at_all_gives_empty_intervals():
    """An empty run store has no columns to resample (a regression: it raised ValueError)."""
    lo, hi = percentile_interval(resample_ratios(np.zeros((0, 0)), np.zeros((0, 0)), 100, seed=0))
    assert lo.shape == (0,) and hi.shape == (0,)
