"""Kappa, actionability and triage minutes against tables computed by hand."""

from __future__ import annotations

import pytest

from reviewbench.label import (
    ActionabilityFields,
    actionability_rate,
    cohen_kappa,
    kappa_with_interval,
    triage_minutes,
)


def _pairs(table: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    a, b = [], []
    for (x, y), count in table.items():
        a += [x] * count
        b += [y] * count
    return a, b


def test_kappa_two_by_two_by_hand():
    # po = 35/50 = 0.7; A says yes 25 times, B 30: pe = (25*30 + 25*20) / 2500 = 0.5; kappa = 0.4
    a, b = _pairs({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_three_classes_by_hand():
    # rows (A) T 13, F 10, U 7; columns (B) T 11, F 12, U 7; diagonal 23 of 30.
    # pe = (13*11 + 10*12 + 7*7) / 900 = 312/900; kappa = (690 - 312) / (900 - 312) = 378/588
    table = {("true_finding", "true_finding"): 10, ("true_finding", "false_positive"): 2,
             ("true_finding", "unclear"): 1, ("false_positive", "true_finding"): 1,
             ("false_positive", "false_positive"): 8, ("false_positive", "unclear"): 1,
             ("unclear", "false_positive"): 2, ("unclear", "unclear"): 5}  # fmt: skip
    a, b = _pairs(table)
    k = kappa_with_interval(a, b, resamples=500, seed=1)
    assert k.n == 30
    assert k.kappa == pytest.approx(378 / 588, abs=1e-6)
    assert k.percent_agreement == pytest.approx(23 / 30, abs=1e-6)
    assert k.confusion["true_finding"] == {"false_positive": 2, "true_finding": 10, "unclear": 1}
    assert k.confusion["unclear"]["true_finding"] == 0
    assert k.kappa_lo < k.kappa < k.kappa_hi
    assert k.kappa_lo > 0.2 and k.kappa_hi <= 1.0
    # the same seed gives the same interval
    assert kappa_with_interval(a, b, resamples=500, seed=1) == k


def test_kappa_undefined_when_both_raters_use_one_label():
    assert cohen_kappa(["x"] * 5, ["x"] * 5) is None
    k = kappa_with_interval(["x"] * 5, ["x"] * 5)
    assert k.percent_agreement == 1.0 and k.kappa is None and k.kappa_lo is None
    assert kappa_with_interval([], []).n == 0


def test_perfect_and_chance_level_agreement():
    assert cohen_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == pytest.approx(1.0)
    # po = 0.5, pe = 0.5: chance level
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]) == pytest.approx(0.0)


def test_actionability_rate_by_hand():
    yes = dict.fromkeys(("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)
    findings = [
        ActionabilityFields(**yes),                                   # passes
        ActionabilityFields(**{**yes, "safe_fix": False}),            # assessed, fails
        ActionabilityFields(**{**yes, "evidence": None}),             # not assessed overall
        ActionabilityFields(**{**yes, "location": False, "severity_fit": False}),  # fails
    ]  # fmt: skip
    rate = actionability_rate(findings)
    assert (rate.overall.numerator, rate.overall.denominator, rate.overall.value) == (1, 3, 0.333333)
    assert rate.fields["evidence"].as_dict() == {"value": 1.0, "numerator": 3, "denominator": 3}
    assert rate.fields["location"].as_dict() == {"value": 0.75, "numerator": 3, "denominator": 4}
    assert rate.fields["safe_fix"].value == 0.75
    assert actionability_rate([]).overall.value is None  # not scored, not zero


def test_triage_minutes_by_hand():
    # run r1: 60 + 120 s (two raters) = 3 min; r2: 30 + 30 = 1 min; r3: 300 s = 5 min; r4: 0.5 min
    labels = [("r1", "c1", 60), ("r1", "c1", 120), ("r2", "c1", 30), ("r2", "c1", 30), ("r3", "c2", 300),
              ("r4", "c3", 30)]  # fmt: skip
    t = triage_minutes(labels, adjudication_s=[90, 30])
    assert t.runs == 4
    assert t.median == 2.0  # minutes sorted: 0.5, 1, 3, 5
    assert (t.q1, t.q3) == (0.875, 3.5)  # inclusive quartiles: 0.5 + 0.75*0.5, 3 + 0.25*2
    assert t.iqr == 2.625
    assert t.per_case == {"c1": 4.0, "c2": 5.0, "c3": 0.5}
    assert t.adjudication_minutes == 2.0
    single = triage_minutes([("r", "c", 90)])
    assert (single.median, single.q1, single.q3) == (1.5, 1.5, 1.5)
    assert triage_minutes([]).median is None
