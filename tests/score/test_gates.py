"""The decision on small known figures, in memory: the default noise ceilings and precision
floor, vetoes before evidence, and gates on people's figures (actionability, triage minutes)."""

from __future__ import annotations

import numpy as np
import pytest

from reviewbench.errors import UsageError
from reviewbench.evidence.records import ActionabilityFields
from reviewbench.evidence.stats import actionability_rate, triage_minutes
from reviewbench.score.gates import decide, load_gates, wilson
from reviewbench.score.result import LabelFigures
from reviewbench.score.stats import percentile_interval, resample_ratios
from reviewbench.score.verdicts import Evidence


def _m(value, lo=None, hi=None, num=1, den=1):
    lo = value if lo is None else lo
    hi = value if hi is None else hi
    return {"value": value, "num": num, "den": den, "lo": lo, "hi": hi}


def _table(**changes) -> dict[str, dict]:
    """Figures that pass every default triage gate; ``changes`` replace some."""
    table = {"defect_recall": _m(0.4, 0.3, 0.5), "located_recall": _m(0.4, 0.3, 0.5),
             "silence_rate": _m(0.6, 0.5, 0.7), "completion": _m(1.0), "flag_coverage": _m(0.1, 0.0, 0.2),
             "false_alarm_rate": _m(0.2, 0.0, 0.4), "precision": _m(0.6, 0.4, 0.8),
             "located_precision": _m(0.6, 0.4, 0.8)}  # fmt: skip
    table.update(changes)
    return table


def _decide(table, gates=None, cases=20, controls=11, evidence=Evidence.AUTOMATIC, labels=None):
    gates = gates or load_gates(None)[0]
    return decide(gates, table, cases, valid_controls=controls, evidence=evidence, labels=labels)


def _check(decision, tier, metric):
    [check] = [c for c in decision["gates"][tier] if c["metric"] == metric]
    return check


def test_the_default_tiers_carry_a_noise_ceiling_and_second_pass_a_precision_floor():
    gates = load_gates(None)[0]
    tiers = {t.name: {c.metric: c for c in t.when} for t in gates.tier}
    for tier, ceiling in (("triage", 0.5), ("second_pass", 0.3)):
        noise = tiers[tier]["false_alarm_rate"]
        assert (noise.op, noise.value, noise.bound) == ("<=", ceiling, "interval")
    floor = tiers["second_pass"]["precision"]
    assert (floor.op, floor.value, floor.bound) == (">=", 0.5, "value")


def test_the_false_alarm_ceiling_reads_the_interval_of_a_known_case():
    # 10 clean cases, one run each, 2 with a finding: 2/10 = 0.2, the bootstrap interval's
    # high end well under triage's 0.5 ceiling but over second pass's 0.3.
    num, den = np.array([[1.0]] * 2 + [[0.0]] * 8), np.ones((10, 1))
    lo, hi = (round(float(x[0]), 6) for x in percentile_interval(resample_ratios(num, den, 2000, 0)))
    assert lo == 0.0 and 0.3 < hi <= 0.5
    table = _table(false_alarm_rate=_m(0.2, lo, hi, num=2, den=10))
    decision = _decide(table)
    check = _check(decision, "triage", "false_alarm_rate")
    assert (check["observed"], check["lo"], check["hi"], check["status"]) == (0.2, lo, hi, "pass")
    assert decision["status"] == "granted" and decision["tier"] == "triage"
    judged = _decide(_table(false_alarm_rate=_m(0.2, lo, hi, num=2, den=10), defect_recall=_m(0.7, 0.6, 0.8),
                            located_recall=_m(0.7, 0.6, 0.8), silence_rate=_m(0.2, 0.1, 0.3)),
                     evidence=Evidence.HUMAN)  # fmt: skip
    # 0.2 itself is under 0.3; its interval is not: second pass is not earned on it.
    assert _check(judged, "second_pass", "false_alarm_rate")["status"] == "inconclusive"
    assert judged["tier"] == "none" and judged["status"] == "not_earned"


@pytest.mark.parametrize("lo, hi, status, tier", [
    (0.1, 0.5, "pass", "triage"),             # the high end on the ceiling: passes
    (0.1, 0.500001, "inconclusive", "none"),  # the point 0.3 passes, the interval does not
    (0.500001, 0.7, "fail", "none"),          # the whole interval above the ceiling
])  # fmt: skip
def test_the_triage_noise_ceiling_at_its_boundary(lo, hi, status, tier):
    decision = _decide(_table(false_alarm_rate=_m(min(max(0.3, lo), hi), lo, hi)))
    check = _check(decision, "triage", "false_alarm_rate")
    assert check["status"] == status and check["passed"] is (status == "pass")
    assert decision["tier"] == tier
    assert decision["status"] == ("granted" if tier == "triage" else "not_earned")


def _second_pass(evidence=Evidence.HUMAN, **changes):
    table = _table(defect_recall=_m(0.7, 0.6, 0.8), located_recall=_m(0.7, 0.6, 0.8),
                   silence_rate=_m(0.2, 0.1, 0.3), false_alarm_rate=_m(0.1, 0.0, 0.3), **changes)  # fmt: skip
    return _decide(table, evidence=evidence)


def test_the_default_table_grants_nothing_above_triage_on_judge_evidence():
    """Seed 003: the judge is a secondary analysis or a triage aid; people keep final authority."""
    gates = load_gates(None)[0]
    assert [t.min_evidence for t in gates.tier if t.name != "triage"] == [Evidence.HUMAN]
    figures = {"precision": _m(0.8, 0.7, 0.9), "located_precision": _m(0.8, 0.7, 0.9)}
    assert _second_pass(**figures)["tier"] == "second_pass"  # people's labels: granted
    judged = _second_pass(Evidence.JUDGE, **figures)
    assert judged["tier"] == "none" and judged["status"] == "not_earned"
    assert "second_pass needs human evidence (have judge)" in judged["reason"]


@pytest.mark.parametrize("identified, located, status, tier", [
    (0.5, 0.8, "granted", "second_pass"),   # the identified bound on the floor
    (0.49, 0.8, "needs_labels", "none"),    # between the bounds: labels would settle it
    (0.3, 0.49, "not_earned", "none"),      # the located bound under it: fails (triage wants silence)
])  # fmt: skip
def test_the_second_pass_precision_floor_at_its_boundary(identified, located, status, tier):
    # 10 of 20 comments identified, 16 located: precision between 0.5 and 0.8.
    decision = _second_pass(precision=_m(identified, identified - 0.1, identified + 0.1),
                            located_precision=_m(located, located - 0.1, located + 0.1))  # fmt: skip
    assert decision["status"] == status and decision["tier"] == tier
    check = _check(decision, "second_pass", "precision")
    assert check["observed"] == identified and check["upper"] == located


def test_a_reviewer_without_findings_fails_the_precision_floor_not_the_evidence():
    # Silent: no comment, so no precision; that is its own doing, not too little evidence.
    silent = _table(defect_recall=_m(0.0), located_recall=_m(0.0), silence_rate=_m(1.0), flag_coverage=_m(0.0),
                    false_alarm_rate=_m(0.0), precision=_m(None, None, None, num=0, den=0),
                    located_precision=_m(None, None, None, num=0, den=0))  # fmt: skip
    decision = _decide(silent, evidence=Evidence.HUMAN)
    assert decision["status"] == "not_earned" and decision["tier"] == "none"
    assert _check(decision, "second_pass", "precision")["passed"] is False


@pytest.mark.parametrize("cases, coverage", [(3, _m(1.0)), (20, _m(1.0, 0.2, 0.9 + 0.1))])
def test_full_flag_coverage_is_vetoed_before_insufficient_evidence(cases, coverage):
    # Regression: a condition flagging every file read "insufficient" when it had fewer
    # than 10 cases or a wide interval, where flag_all with the same coverage was vetoed.
    table = _table(flag_coverage=coverage, defect_recall=_m(0.4, 0.0, 0.9))  # too wide an interval
    decision = _decide(table, cases=cases)
    assert decision["status"] == "vetoed" and decision["tier"] == "flags_everything"
    assert decision["authority"] == "nothing until the prompt is tightened"
    # Without the veto's condition the same figures are short of evidence.
    assert _decide(_table(defect_recall=_m(0.4, 0.0, 0.9)), cases=cases)["status"] == "insufficient"


_LABEL_GATES = """
min_defect_cases = 10
min_controls = 5
[[tier]]
name = "triage"
when = [{ metric = "defect_recall", op = ">=", value = 0.3 }, %s]
permitted = ["triage"]
[fallback]
name = "none"
"""


def _gates(tmp_path, condition):
    path = tmp_path / "gates.toml"
    path.write_text(_LABEL_GATES % condition)
    return load_gates(path)[0]


def _figures(true_findings=(), triage=()):
    rate, minutes = actionability_rate(list(true_findings)), triage_minutes(list(triage))
    return LabelFigures(actionability_rate=rate.as_dict(), triage_minutes={
        "median": minutes.median, "q1": minutes.q1, "q3": minutes.q3, "runs": minutes.runs})


_YES = ActionabilityFields(**dict.fromkeys(ActionabilityFields.model_fields, True))
_NO = _YES.model_copy(update={next(iter(ActionabilityFields.model_fields)): False})


def test_the_wilson_interval_by_hand():
    # 9/10: centre (0.9 + z²/20) / (1 + z²/10), half-width z·sqrt(0.009 + z²/400) / (1 + z²/10).
    assert wilson(9, 10) == (0.59585, 0.982124)
    # 0/4: the high end is z² / (4 + z²) = 3.841459 / 7.841459.
    assert wilson(0, 4) == (0.0, 0.489891)


@pytest.mark.parametrize("floor, status", [(0.59585, "pass"), (0.6, "inconclusive"), (0.99, "fail")])
def test_an_actionability_floor_at_its_boundary(tmp_path, floor, status):
    gates = _gates(tmp_path, f'{{ metric = "actionability_rate", op = ">=", value = {floor}, bound = "interval" }}')
    labels = _figures([_YES] * 9 + [_NO])  # 9 of 10 true findings pass all five fields
    decision = _decide(_table(), gates=gates, labels=labels)
    check = _check(decision, "triage", "actionability_rate")
    assert (check["observed"], check["lo"], check["hi"]) == (0.9, 0.59585, 0.982124)
    assert check["status"] == status
    assert decision["status"] == ("granted" if status == "pass" else "not_earned")


@pytest.mark.parametrize("labels", [None, _figures()], ids=["no labels", "no true finding assessed"])
def test_a_gate_on_peoples_figures_is_not_scored_without_labels(tmp_path, labels):
    for condition in ('{ metric = "actionability_rate", op = ">=", value = 0.5 }',
                      '{ metric = "triage_minutes_q3", op = "<=", value = 60 }'):
        decision = _decide(_table(), gates=_gates(tmp_path, condition), labels=labels)
        [_, check] = decision["gates"]["triage"]
        assert check["passed"] is None and check["status"] == "not_scored" and check["observed"] is None
        assert decision["status"] == "needs_labels" and decision["tier"] == "none"  # never silently granted
        assert "not scored (no labels)" in decision["reason"]


@pytest.mark.parametrize("metric, ceiling, passed", [
    ("triage_minutes", 5.0, True), ("triage_minutes", 4.9, False),
    ("triage_minutes_q3", 7.5, True), ("triage_minutes_q3", 7.4, False),
])  # fmt: skip
def test_a_triage_minutes_ceiling_at_its_boundary(tmp_path, metric, ceiling, passed):
    # Four runs of 2, 4, 6 and 12 rater-minutes: median 5; upper quartile (inclusive) 6 + 0.25 × 6 = 7.5.
    labels = _figures(triage=[(f"r{i}", f"c{i}", m * 60) for i, m in enumerate((2, 4, 6, 12))])
    assert (labels.triage_minutes.median, labels.triage_minutes.q3) == (5.0, 7.5)
    gates = _gates(tmp_path, f'{{ metric = "{metric}", op = "<=", value = {ceiling} }}')
    decision = _decide(_table(), gates=gates, labels=labels)
    assert decision["gates"]["triage"][1]["passed"] is passed
    assert decision["status"] == ("granted" if passed else "not_earned")


@pytest.mark.parametrize("condition, says", [
    ('{ metric = "precision", op = ">=", value = 0.5, bound = "interval" }', "identified and located"),
    ('{ metric = "triage_minutes", op = "<=", value = 5, bound = "interval" }', "quantiles"),
    ('{ metric = "false_alarm_rate@control", op = "<=", value = 0.5, bound = "interval" }', "no interval"),
    ('{ metric = "actionability_rate@control", op = ">=", value = 0.5 }', "not per stratum"),
])  # fmt: skip
def test_gates_that_cannot_be_judged_as_written_are_refused(tmp_path, condition, says):
    with pytest.raises(UsageError, match=says):
        _gates(tmp_path, condition)


def test_a_wide_interval_is_not_short_evidence_when_no_tier_is_within_reach():
    # ruff on the demo: 3 of 60 defects identified ([0, 0.17]: below triage's 0.3 even at its
    # high end) and 3 of 3 precise findings, all on one case (exact [0.025, 1.0], wider
    # than 0.5). No number of cases would lift recall to a tier: not earned, not "insufficient".
    hopeless = _table(defect_recall=_m(0.05, 0.0, 0.17), located_recall=_m(0.05, 0.0, 0.17),
                      precision=_m(1.0, 0.025, 1.0), located_precision=_m(1.0, 0.025, 1.0))
    decision = _decide(hopeless)
    assert (decision["status"], decision["tier"]) == ("not_earned", "none")
    # Recall within reach of triage (0.25 [0.1, 0.4]): the wide precision is short evidence.
    reachable = _table(defect_recall=_m(0.25, 0.1, 0.4), located_recall=_m(0.25, 0.1, 0.4),
                       precision=_m(1.0, 0.025, 1.0), located_precision=_m(1.0, 0.025, 1.0))
    assert _decide(reachable)["status"] == "insufficient"
    # Too few cases stays short evidence whatever the figures.
    assert _decide(hopeless, cases=5)["status"] == "insufficient"
