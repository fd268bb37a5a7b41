"""``gate``: each rule decided by hand on its interval, and the CLI's exit codes on real runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from reviewbench.config.gate_rules import GateRule
from reviewbench.errors import UsageError
from reviewbench.score.comparison import MetricDifference, PairedFigure
from reviewbench.score.gate import GateStatus, judge_rule, load_gate_rules

from ..conftest import run_cli
from .runsets import Reviewer, write_corpus, write_runs

DROP = GateRule(metric="defect_recall", max_drop=0.05)
RISE = GateRule(metric="false_alarm_rate", max_rise=0.05)



def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    """``reviewbench ARGS`` through the real ``main``, in this process (a subprocess's result shape)."""
    return run_cli(*args)


def _m(lo: float, hi: float, diff: float | None = None, clusters: int = 20, base=(10, 20)) -> MetricDifference:
    num, den = base
    return MetricDifference(a=PairedFigure(value=num / den, num=num, den=den), b=PairedFigure(value=0.5, num=10, den=20),
                            diff=(lo + hi) / 2 if diff is None else diff, lo=lo, hi=hi, clusters=clusters)  # fmt: skip


@pytest.mark.parametrize(("rule", "lo", "hi", "status"), [
    (DROP, -0.30, -0.10, "fail"),          # the whole interval beyond -0.05
    (DROP, -0.04, +0.10, "pass"),          # the whole interval within
    (DROP, -0.05, +0.00, "pass"),          # the tolerance itself is tolerated
    (DROP, -0.20, +0.00, "inconclusive"),  # straddles -0.05
    (DROP, -0.20, -0.05, "inconclusive"),  # reaches -0.05: not wholly beyond
    (RISE, +0.10, +0.30, "fail"),
    (RISE, -0.10, +0.05, "pass"),
    (RISE, +0.00, +0.20, "inconclusive"),
])  # fmt: skip
def test_a_rule_on_its_interval(rule, lo, hi, status):
    assert judge_rule(rule, _m(lo, hi), min_cases=10)[0] is GateStatus(status)


def test_too_few_cases_or_nothing_measured_is_inconclusive():
    status, reason = judge_rule(DROP, _m(-0.01, 0.01, clusters=4), min_cases=10)
    assert status is GateStatus.INCONCLUSIVE and reason == "4 paired case clusters (< min_cases 10)"
    not_measured = MetricDifference(a=PairedFigure(value=None, num=0, den=0), b=PairedFigure(value=None, num=0, den=0),
                                    diff=None, lo=None, hi=None, clusters=0)  # fmt: skip
    assert judge_rule(DROP, not_measured, 10)[0] is GateStatus.INCONCLUSIVE


def test_no_worse_than_nothing_is_not_a_pass():
    # A baseline that identified nothing cannot drop: its interval [0, 0] proves nothing.
    status, reason = judge_rule(DROP, _m(0.0, 0.0, base=(0, 20)), 10)
    assert status is GateStatus.INCONCLUSIVE and "already at the worst (0/20)" in reason
    # Nor can false alarms rise from every clean run flagged.
    assert judge_rule(RISE, _m(0.0, 0.0, base=(20, 20)), 10)[0] is GateStatus.INCONCLUSIVE
    # A calibration baseline never passes, but may fail.
    assert judge_rule(DROP, _m(-0.01, 0.01), 10, "silent")[0] is GateStatus.INCONCLUSIVE
    assert judge_rule(DROP, _m(-0.5, -0.2), 10, "silent")[0] is GateStatus.FAIL


def _pair(tmp_path: Path, a: Reviewer, b: Reviewer, defects: int = 12, controls: int = 10) -> tuple[Path, Path]:
    corpus = write_corpus(tmp_path / "corpus", defects, controls)
    base = write_runs(tmp_path / "week1", corpus, {"R": a}, defects, controls, day="2026-03-01")
    new = write_runs(tmp_path / "week2", corpus, {"R": b}, defects, controls, day="2026-03-08")
    return base, new


def test_worse_reviewer_fails_naming_the_rule(tmp_path):
    # 80 controls: identical false alarms on 90 clusters are within 0.05 even on the exact
    # bound (1 - 0.025^(1/90) = 0.040).
    base, new = _pair(tmp_path, Reviewer(finds=set(range(12))), Reviewer(finds={0, 1, 2}), controls=80)
    proc = reviewbench("gate", new, "--baseline", base)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fail = next(line for line in proc.stdout.splitlines() if line.startswith("FAIL"))
    # 12/12 -> 3/12 on 12 paired clusters: -0.75, and no resample can show less than a drop of 0.
    assert fail.startswith("FAIL         R defect_recall (max_drop 0.05): baseline 12/12 = 1.000, now 3/12 = 0.250, "
                           "change -0.750 [")  # fmt: skip
    assert "on 12 case clusters; the whole interval lies beyond the tolerated -0.05" in fail
    assert proc.stdout.splitlines()[-1] == "gate: fail (1 passed, 1 failed, 0 inconclusive); exit 1"


def test_identical_behaviour_passes(tmp_path):
    # 80 defect cases: every cluster's difference is 0, and at most 1 - 0.025^(1/80) = 0.045
    # of clusters could differ: [-0.045, +0.045], within the tolerated 0.05.
    same = Reviewer(finds=set(range(8)), flags={0})
    base, new = _pair(tmp_path, same, same, defects=80, controls=10)
    proc = reviewbench("gate", new, "--baseline", base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "gate: pass (2 passed, 0 failed, 0 inconclusive); exit 0"
    assert "change +0.000 [-0.045, +0.045] on 80 case clusters" in proc.stdout


def test_identical_behaviour_on_few_cases_is_inconclusive_not_certain(tmp_path):
    # 12 defect cases alike in both runs: the bootstrap says [0, 0]; the exact bound on 12
    # clusters is 1 - 0.025^(1/12) = 0.265, which straddles -0.05.
    same = Reviewer(finds=set(range(8)), flags={0})
    base, new = _pair(tmp_path, same, same)
    proc = reviewbench("gate", new, "--baseline", base)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "change +0.000 [-0.265, +0.265] on 12 case clusters; the interval straddles" in proc.stdout


def test_tiny_corpus_is_inconclusive(tmp_path):
    same = Reviewer(finds={0, 1}, flags=set())
    base, new = _pair(tmp_path, same, same, defects=3, controls=2)
    proc = reviewbench("gate", new, "--baseline", base, "--json")
    assert proc.returncode == 3, proc.stderr
    result = json.loads(proc.stdout)
    assert [r["status"] for r in result["rules"]] == ["inconclusive", "inconclusive"]
    assert result["rules"][0]["reason"] == "3 paired case clusters (< min_cases 10)"
    assert result["outcome"] == {"status": "inconclusive", "exit_code": 3, "passed": 0, "failed": 0, "inconclusive": 2}
    schema = json.loads(reviewbench("schema", "gate").stdout)
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema).validate(result)


def test_model_change_is_reported_and_can_fail(tmp_path):
    base, new = _pair(tmp_path, Reviewer(finds=set(range(8)), model="m-0301"),
                      Reviewer(finds=set(range(8)), model="m-0308"), defects=80)  # fmt: skip
    reported = reviewbench("gate", new, "--baseline", base)
    assert reported.returncode == 0, reported.stdout
    assert "MODEL CHANGED R: requested m-0301 -> m-0308; returned m-0301 -> m-0308 [reported]" in reported.stdout
    rules = tmp_path / "gate.toml"
    rules.write_text('fail_on_model_change = true\nrules = [{ metric = "defect_recall", max_drop = 0.05 }]\n')
    failed = reviewbench("gate", new, "--baseline", base, "--rules", rules)
    assert failed.returncode == 1
    assert "[FAIL (fail_on_model_change)]" in failed.stdout
    assert failed.stdout.splitlines()[-1] == "gate: fail (1 passed, 0 failed, 0 inconclusive, 1 model change(s)); exit 1"


def test_calibration_baselines_never_pass(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 12, 10)
    silent = {"silent": Reviewer(kind="silent", model="silent")}
    base = write_runs(tmp_path / "week1", corpus, silent, 12, 10)
    new = write_runs(tmp_path / "week2", corpus, silent, 12, 10)
    refused = reviewbench("gate", new, "--baseline", base)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "nothing to gate: every paired condition (silent) is a calibration baseline" in refused.stderr
    named = reviewbench("gate", new, "--baseline", base, "--condition", "silent=silent")
    assert named.returncode == 3, named.stdout
    assert "already at the worst (0/12)" in named.stdout or "calibration baseline (silent)" in named.stdout
    assert "PASS" not in named.stdout


def test_a_reviewer_silent_in_both_runs_does_not_pass_on_recall(tmp_path):
    base, new = _pair(tmp_path, Reviewer(), Reviewer())
    proc = reviewbench("gate", new, "--baseline", base, "--json")
    assert proc.returncode == 3
    recall = json.loads(proc.stdout)["rules"][0]
    assert (recall["status"], recall["baseline"]["num"], recall["baseline"]["den"]) == ("inconclusive", 0, 12)


def test_a_rule_per_stratum_and_per_condition(tmp_path):
    # 40 fix reversals found by both runs (exact bound 1 - 0.025^(1/40) = 0.088, within 0.1);
    # 6 mutations found only by the baseline.
    corpus = write_corpus(tmp_path / "corpus", 46, 10, mutations=set(range(40, 46)))
    base = write_runs(tmp_path / "w1", corpus, {"R": Reviewer(finds=set(range(46))), "S": Reviewer()}, 46, 10)
    new = write_runs(tmp_path / "w2", corpus, {"R": Reviewer(finds=set(range(40))), "S": Reviewer()}, 46, 10)
    rules = tmp_path / "gate.toml"
    rules.write_text('min_cases = 5\n[[rules]]\nmetric = "defect_recall@fix_reversal"\nmax_drop = 0.1\n'
                     'condition = "R"\n[[rules]]\nmetric = "defect_recall@mutation"\nmax_drop = 0.1\ncondition = "R"\n')
    result = json.loads(reviewbench("gate", new, "--baseline", base, "--rules", rules, "--json").stdout)
    assert [(r["condition"], r["metric"], r["status"]) for r in result["rules"]] == [
        ("R", "defect_recall@fix_reversal", "pass"), ("R", "defect_recall@mutation", "fail")]  # fmt: skip
    assert result["rules"][1]["baseline"] == {"value": 1.0, "num": 6, "den": 6}


@pytest.mark.parametrize(("text", "expected"), [
    ("rules = [", "invalid TOML"),
    ('rules = [{ metric = "recal", max_drop = 0.05 }]', "unknown metric 'recal'"),
    ('rules = [{ metric = "defect_recall", max_rise = 0.05 }]', "higher defect_recall is better; tolerate a fall with max_drop"),
    ('rules = [{ metric = "false_alarm_rate", max_drop = 0.05 }]', "lower false_alarm_rate is better"),
    ('rules = [{ metric = "defect_recall", max_drop = 0.05, max_rise = 0.1 }]', "exactly one of max_drop and max_rise"),
    ('rules = [{ metric = "defect_recall" }]', "exactly one of max_drop and max_rise"),
    ('rules = [{ metric = "actionability_rate", max_drop = 0.05 }]', "comes from people's labels"),
    ('rules = [{ metric = "latency_s", max_rise = 1.0 }]', "unknown metric 'latency_s'"),
    ('rules = [{ metric = "defect_recall", max_drop = "0.05" }]', "rules.0.max_drop"),
    ('rules = []', "rules: List should have at least 1 item"),
    ('rule = [{ metric = "defect_recall", max_drop = 0.05 }]', "rule: Extra inputs are not permitted"),
])  # fmt: skip
def test_malformed_rules_are_one_line(tmp_path, text, expected):
    path = tmp_path / "gate.toml"
    path.write_text(text + "\n")
    with pytest.raises(UsageError, match=None) as caught:
        load_gate_rules(path)
    assert expected in str(caught.value)


def test_bad_input_exits_2_in_one_line(tmp_path):
    base, new = _pair(tmp_path, Reviewer(), Reviewer(), defects=3, controls=2)
    (tmp_path / "bad.toml").write_text('rules = [{ metric = "recal", max_drop = 0.05 }]\n')
    for args in (("nowhere", "--baseline", base), (new, "--baseline", base, "--rules", tmp_path / "bad.toml"),
                 (new, "--baseline", base, "--rules", tmp_path / "missing.toml")):  # fmt: skip
        proc = reviewbench("gate", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_reviewer_missing_from_the_new_run_is_not_a_pass(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 80, 10)  # enough cases for identical runs to pass R
    same = Reviewer(finds=set(range(8)))
    base = write_runs(tmp_path / "w1", corpus, {"R": same, "S": same}, 80, 10)
    new = write_runs(tmp_path / "w2", corpus, {"R": same}, 80, 10)
    proc = reviewbench("gate", new, "--baseline", base)
    assert proc.returncode == 3, proc.stdout
    assert "not gated: S: in the baseline only: the new run has no such condition (inconclusive)" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "gate: inconclusive (2 passed, 0 failed, 0 inconclusive, 1 baseline condition(s) not run); exit 3"


def test_a_run_is_not_its_own_baseline(tmp_path):
    base, _ = _pair(tmp_path, Reviewer(), Reviewer(), defects=3, controls=2)
    proc = reviewbench("gate", base, "--baseline", base)
    assert proc.returncode == 2 and "is its own baseline" in proc.stderr and proc.stderr.count("\n") == 1
