"""A bootstrap over cases has no variance when every case says the same (0 of 60, 1 of 1 per
case) or when one case holds every hit: its interval collapses to a point, which reads as
certainty. Such an interval is replaced by an exact one on the clusters (Clopper–Pearson for
proportions, Poisson for counts per case) and marked exact. Figures computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta, chi2

from reviewbench.score.frame import Frame
from reviewbench.score.stats import exact_interval


def test_none_of_twenty_cases_is_zero_to_0_168():
    # Clopper–Pearson upper bound for 0 of n: 1 - (alpha/2)^(1/n) = 1 - 0.025^(1/20) = 0.1684
    lo, hi = exact_interval(np.zeros(20), np.ones(20))
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 20)) and round(hi, 3) == 0.168


def test_all_of_twenty_is_the_mirror_image():
    lo, hi = exact_interval(np.ones(20), np.ones(20))
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 20))


def test_one_case_holding_every_hit_is_nearly_uninformative():
    # precision 2/3, every finding from one case: one cluster, x = 2/3 of 1.
    num, den = np.array([2.0, 0, 0]), np.array([3.0, 0, 0])
    lo, hi = exact_interval(num, den)
    assert lo == pytest.approx(beta.ppf(0.025, 2 / 3, 1 / 3 + 1))
    assert hi == pytest.approx(beta.ppf(0.975, 2 / 3 + 1, 1 / 3))
    assert hi - lo > 0.8


def test_counts_per_case_use_poisson():
    # 0 false positives over 20 clean cases: upper chi2(0.975, 2)/2/20 = 3.689/20
    lo, hi = exact_interval(np.zeros(20), np.ones(20), count=True)
    assert lo == 0.0 and hi == pytest.approx(chi2.ppf(0.975, 2) / 2 / 20)
    # 2 per case on each of 10 cases (20 events): [chi2(0.025, 40)/2, chi2(0.975, 42)/2] / 10
    lo, hi = exact_interval(np.full(10, 2.0), np.ones(10), count=True)
    assert lo == pytest.approx(chi2.ppf(0.025, 40) / 2 / 10) and hi == pytest.approx(chi2.ppf(0.975, 42) / 2 / 10)


def test_the_frame_replaces_only_degenerate_intervals_and_marks_them():
    frame = Frame(20)
    zero = frame.add(np.zeros(20), np.ones(20))
    varied = frame.add(np.array([1.0] * 10 + [0.0] * 10), np.ones(20))
    frame.resample(500, 0)
    assert frame.interval(zero) == (0.0, round(1 - 0.025 ** (1 / 20), 6)) and frame.exact(zero)
    lo, hi = frame.interval(varied)
    assert lo is not None and hi is not None and lo < 0.5 < hi and not frame.exact(varied)


def test_a_degenerate_paired_difference_gets_an_exact_interval():
    # Identical behaviour on 20 clusters (half found by both, half by neither): every
    # cluster's difference is 0, so the bootstrap's is 0 [0, 0]. At most a share
    # u = 1 - 0.025^(1/20) = 0.168 of clusters could differ (0 of 20 seen): [-u, u].
    frame = Frame(20)
    found = np.array([1.0] * 10 + [0.0] * 10)
    a, b = frame.add(found, np.ones(20)), frame.add(found.copy(), np.ones(20))
    # Every cluster found by a, none by b: d = 1, and [1 - u, 1].
    c, d = frame.add(np.ones(20), np.ones(20)), frame.add(np.zeros(20), np.ones(20))
    # Counts per case: Newcombe's from the two Poisson intervals.
    e, f = frame.add(np.zeros(20), np.ones(20), count=True), frame.add(np.zeros(20), np.ones(20), count=True)
    frame.resample(200, 0)
    u = 1 - 0.025 ** (1 / 20)
    assert frame.paired(a, b) == (0.0, round(-u, 6), round(u, 6)) and frame.paired_exact(a, b)
    assert frame.paired(c, d) == (1.0, round(1 - u, 6), 1.0)
    p = chi2.ppf(0.975, 2) / 2 / 20
    assert frame.paired(e, f) == (0.0, round(-p, 6), round(p, 6))


def test_two_groups_of_different_clusters_get_newcombes_interval():
    # Before and after a cut-off: clusters 0-9 in one group, 10-19 in the other, each 0 of
    # 10: no shared cluster, so Newcombe's from the two exact intervals, [-u, u], u for 0 of 10.
    frame = Frame(20)
    before = frame.add(np.r_[np.zeros(10), np.zeros(10)], np.r_[np.ones(10), np.zeros(10)])
    after = frame.add(np.zeros(20), np.r_[np.zeros(10), np.ones(10)])
    frame.resample(200, 0)
    u = round(1 - 0.025 ** (1 / 10), 6)
    assert frame.paired(after, before) == (0.0, -u, u)


def test_tally_rows_come_back_as_given_in_order():
    from reviewbench.score.metrics import Rows

    given = [("defect_recall", "c1", 1.0, 1.0, "fix_reversal", "logic", "high"),
             ("precision", "c2", 0.0, 2.0, "control", None, None), ("defect_recall", "c1", 0.5, 1.0, "mutation", None, "low")]
    rows = Rows()
    for row in given:
        rows.append(row)
    assert list(rows) == given and len(rows) == 3
    assert list(rows) == given  # iterating twice gives the same
