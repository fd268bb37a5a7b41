"""``compare``: two real run directories, every figure computed by hand."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from reviewbench.score import ScoreOptions, score_run
from reviewbench.score.compare import CompareOptions, compare_runs

from ..conftest import run_cli
from .runsets import Reviewer, write_corpus, write_runs


def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    """``reviewbench ARGS`` through the real ``main``, in this process (a subprocess's result shape)."""
    return run_cli(*args)


def _dirs(tmp_path: Path, a: Reviewer, b: Reviewer, defects: int = 10, controls: int = 6, repeats: int = 1,
          mutations=(), name: str = "R") -> tuple[Path, Path]:  # fmt: skip
    corpus = write_corpus(tmp_path / "corpus", defects, controls, mutations)
    first = write_runs(tmp_path / "march", corpus, {name: a}, defects, controls, repeats, day="2026-03-01")
    second = write_runs(tmp_path / "june", corpus, {name: b}, defects, controls, repeats, day="2026-06-01")
    return first, second


def test_recall_drop_and_mcnemar_by_hand(tmp_path):
    # a names the defect on d0..d5 (6/10), b on d0..d2 (3/10): b - a = -0.3; the discordant
    # units are d3, d4, d5, all a's: exact two-sided McNemar p = 2 * 0.5**3 = 0.25.
    a, b = _dirs(tmp_path, Reviewer(finds=set(range(6))), Reviewer(finds=set(range(3))))
    result = compare_runs(a, b).as_json()
    c = result["conditions"][0]
    recall = c["metrics"]["defect_recall"]
    assert recall["a"] == {"value": 0.6, "num": 6, "den": 10}
    assert recall["b"] == {"value": 0.3, "num": 3, "den": 10}
    assert recall["diff"] == pytest.approx(-0.3)
    assert recall["clusters"] == 10
    # b never finds what a missed: no resample can show a gain; -1 at worst.
    assert -1 <= recall["lo"] <= -0.3 <= recall["hi"] <= 0
    assert c["mcnemar"] == {"both": 3, "only_a": 3, "only_b": 0, "neither": 4, "p": 0.25}
    assert c["mcnemar_p"] == 0.25
    assert result["shared_cases"] == {"restricted": False, "cases": 26, "only_a": 0, "only_b": 0, "differing": 0,
                                      "analysed": 26}  # fmt: skip
    assert result["analysis"]["difference"] == "b - a"


def test_mcnemar_with_discordance_both_ways(tmp_path):
    # a only on d1..d5, b only on d6: 5 against 1; p = 2 * P(X <= 1 | n=6, 1/2) = 2 * 7/64.
    a, b = _dirs(tmp_path, Reviewer(finds={0, 1, 2, 3, 4, 5}), Reviewer(finds={0, 6}))
    c = compare_runs(a, b).as_json()["conditions"][0]
    assert c["mcnemar"] == {"both": 1, "only_a": 5, "only_b": 1, "neither": 3, "p": pytest.approx(14 / 64)}
    assert c["metrics"]["defect_recall"]["diff"] == pytest.approx(0.2 - 0.6)


def test_every_cluster_shifted_alike_gets_the_exact_bound_not_a_point(tmp_path):
    # Every defect found in March, none in June; every control flagged in June only. Every
    # resample draws the same difference: the bootstrap's interval is the point -1, which would
    # claim certainty on 10 cases. The exact bound: at most 1 - 0.025^(1/10) = 0.3085 of the
    # clusters could behave otherwise, so [-1, -1 + 0.3085].
    u10, u6 = 1 - 0.025 ** (1 / 10), 1 - 0.025 ** (1 / 6)
    a, b = _dirs(tmp_path, Reviewer(finds=set(range(10))), Reviewer(flags=set(range(6))))
    c = compare_runs(a, b).as_json()["conditions"][0]
    assert (c["metrics"]["defect_recall"]["diff"], c["metrics"]["defect_recall"]["lo"],
            c["metrics"]["defect_recall"]["hi"]) == (-1.0, -1.0, round(-1 + u10, 6))  # fmt: skip
    assert c["mcnemar"]["p"] == pytest.approx(2 * 0.5**10)
    # Clean runs are the 6 controls' and the 10 mirrors' (silent on both sides): 0/16 -> 6/16,
    # and every resample draws some control cluster or not: the interval stays above 0.
    alarms = c["metrics"]["false_alarm_rate"]
    assert (alarms["a"]["num"], alarms["a"]["den"], alarms["b"]["num"], alarms["b"]["den"]) == (0, 16, 6, 16)
    assert alarms["diff"] == 0.375 and 0 <= alarms["lo"] < 0.375 < alarms["hi"] <= 1
    control = c["strata"]["control"]["metrics"]["false_alarm_rate"]
    assert (control["diff"], control["lo"], control["hi"]) == (1.0, round(1 - u6, 6), 1.0)


def test_identical_behaviour_differs_by_nothing(tmp_path):
    # The difference is 0 on every cluster; its interval is the exact bound on how many
    # clusters could differ (0 of n seen): 10 defect clusters, 16 clean ones, 16 in all.
    same = Reviewer(finds={0, 2, 4}, flags={1})
    a, b = _dirs(tmp_path, same, same)
    c = compare_runs(a, b).as_json()["conditions"][0]
    for name, n in (("defect_recall", 10), ("false_alarm_rate", 16), ("completion", 16)):
        m = c["metrics"][name]
        u = round(1 - 0.025 ** (1 / n), 6)
        assert (m["diff"], m["lo"], m["hi"]) == (0.0, -u, u), name
    assert c["mcnemar"]["p"] is None
    assert c["metrics"]["precision"]["a"] == {"value": 0.75, "num": 3, "den": 4}  # 3 identified, 1 false alarm
    assert c["differs"] == ["started"]  # the dates, and nothing else


def test_paired_interval_is_scores_within_one_experiment(tmp_path):
    """The same two reviewers, once as two conditions of one run directory (score's paired
    comparison, a - b) and once as one condition in two directories (compare, b - a)."""
    a, b = Reviewer(finds={0, 1, 2, 3, 5, 8}, flags={0}), Reviewer(finds={0, 1, 4}, flags={0, 2, 3})
    corpus = write_corpus(tmp_path / "corpus", 10, 6)
    together = write_runs(tmp_path / "one", corpus, {"A": a, "B": b}, 10, 6, repeats=2)
    first = write_runs(tmp_path / "march", corpus, {"R": a}, 10, 6, repeats=2)
    second = write_runs(tmp_path / "june", corpus, {"R": b}, 10, 6, repeats=2)
    scored = score_run(together, ScoreOptions()).as_json()
    compared = compare_runs(first, second).as_json()["conditions"][0]
    for metric in ("defect_recall", "false_alarm_rate", "precision"):
        within = next(c for c in scored["comparisons"] if c["metric"] == metric and c["analysis"] == "completed")
        across = compared["metrics"][metric]
        assert across["diff"] == pytest.approx(-within["diff"]), metric
        assert across["lo"] == pytest.approx(-within["hi"]), metric
        assert across["hi"] == pytest.approx(-within["lo"]), metric
    assert compared["mcnemar_p"] == next(c["mcnemar_p"] for c in scored["comparisons"]
                                         if c["metric"] == "defect_recall" and c["analysis"] == "completed")  # fmt: skip


def test_per_stratum(tmp_path):
    # d0..d3 fix reversals, d4..d7 mutations; a finds all, b only the fix reversals.
    a, b = _dirs(tmp_path, Reviewer(finds=set(range(8))), Reviewer(finds={0, 1, 2, 3}), defects=8,
                 mutations={4, 5, 6, 7})  # fmt: skip
    strata = compare_runs(a, b).as_json()["conditions"][0]["strata"]
    assert strata["fix_reversal"]["metrics"]["defect_recall"]["diff"] == 0.0
    mutation = strata["mutation"]
    assert mutation["cases"] == 4
    assert mutation["metrics"]["defect_recall"]["a"] == {"value": 1.0, "num": 4, "den": 4}
    assert mutation["metrics"]["defect_recall"]["b"] == {"value": 0.0, "num": 0, "den": 4}
    assert mutation["mcnemar"] == {"both": 0, "only_a": 4, "only_b": 0, "neither": 0, "p": 0.125}
    assert "defect_recall" not in strata["control"]["metrics"]  # no defect there to recall


def test_what_changed(tmp_path):
    a, b = _dirs(tmp_path, Reviewer(model="gpt-x-0301", prompt="v1"), Reviewer(model="gpt-x-0601", prompt="v2"))
    c = compare_runs(a, b).as_json()["conditions"][0]
    assert c["changed"]["model_returned"] == {"a": ["gpt-x-0301"], "b": ["gpt-x-0601"], "same": False}
    assert c["changed"]["reviewer"]["a"] == {"reviewer": {"kind": "command", "model": "gpt-x-0301"}}
    assert set(c["differs"]) == {"model_requested", "model_returned", "prompt_sha256", "reviewer", "started"}
    assert c["changed"]["started"]["b"]["first"].startswith("2026-06-01")


def test_end_to_end_counts_a_missing_review_as_a_miss(tmp_path):
    a, b = _dirs(tmp_path, Reviewer(finds=set(range(10))), Reviewer(finds=set(range(10)), failed={0, 1}))
    completed = compare_runs(a, b).as_json()["conditions"][0]["metrics"]["defect_recall"]
    assert (completed["b"]["num"], completed["b"]["den"], completed["diff"]) == (8, 8, 0.0)  # d0, d1 unpaired
    e2e = compare_runs(a, b, CompareOptions(analysis="end_to_end")).as_json()["conditions"][0]["metrics"]
    assert (e2e["defect_recall"]["b"]["num"], e2e["defect_recall"]["b"]["den"]) == (8, 10)
    assert e2e["defect_recall"]["diff"] == pytest.approx(-0.2)


def test_cli_text_json_and_schema(tmp_path):
    a, b = _dirs(tmp_path, Reviewer(finds=set(range(6))), Reviewer(finds=set(range(3)), model="model-2"))
    text = reviewbench("compare", a, b)
    assert text.returncode == 0, text.stderr
    rows = {line.split()[0]: " ".join(line.split()) for line in text.stdout.splitlines() if line.startswith(" ")
            and line.split()[1][0].isdigit()}
    assert rows["defect_recall"].startswith("defect_recall 6/10 = 0.600 3/10 = 0.300 -0.300 [")
    assert rows["defect_recall"].endswith("] 10")  # ten case clusters paired
    assert "found by both 3, a only 3, b only 0, neither 4: exact McNemar p = 0.25" in text.stdout
    assert "model_returned model-1 -> model-2" in text.stdout
    assert "reviewer.model model-1 -> model-2" in text.stdout
    proc = reviewbench("compare", a, b, "--json")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(reviewbench("schema", "compare").stdout)
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema).validate(json.loads(proc.stdout))


def test_different_corpora_refused_unless_shared_cases(tmp_path):
    small = write_corpus(tmp_path / "small", 10, 6)
    # The same ten defect cases, one control changed, and two more defect cases.
    other = write_corpus(tmp_path / "other", 12, 6)
    a = write_runs(tmp_path / "a", small, {"R": Reviewer(finds={0, 1})}, 10, 6)
    b = write_runs(tmp_path / "b", other, {"R": Reviewer(finds={0, 1, 11})}, 12, 6)
    refused = reviewbench("compare", a, b)
    assert refused.returncode != 0 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert "different corpora" in refused.stderr and "26 cases agree, 4 do not: add --shared-cases" in refused.stderr
    proc = reviewbench("compare", a, b, "--shared-cases", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["shared_cases"] == {"restricted": True, "cases": 26, "only_a": 0, "only_b": 4, "differing": 0,
                                      "analysed": 26}  # fmt: skip
    recall = result["conditions"][0]["metrics"]["defect_recall"]
    assert (recall["a"]["den"], recall["b"]["den"], recall["diff"]) == (10, 10, 0.0)
    text = reviewbench("compare", a, b, "--shared-cases").stdout
    assert "different corpora, shared cases only: 26 cases (left out: 0 only in a, 4 only in b, 0 changed)" in text


def test_changed_cases_are_not_shared(tmp_path):
    a_corpus = write_corpus(tmp_path / "c1", 10, 6)
    b_corpus = write_corpus(tmp_path / "c2", 10, 6, mutations={9})  # d9's gold changed
    a = write_runs(tmp_path / "a", a_corpus, {"R": Reviewer(finds={9})}, 10, 6)
    b = write_runs(tmp_path / "b", b_corpus, {"R": Reviewer(finds={9})}, 10, 6)
    result = compare_runs(a, b, CompareOptions(shared_cases=True)).as_json()
    assert result["shared_cases"]["differing"] == 1 and result["shared_cases"]["cases"] == 25
    assert result["conditions"][0]["metrics"]["defect_recall"]["a"]["den"] == 9


@pytest.mark.parametrize(("args", "expected"), [
    (("nowhere", "nowhere"), "is not a run directory"),
    (("{a}", "{b}", "--condition", "X=R"), "has no condition 'X'"),
    (("{a}", "{b}", "--condition", "=R"), "expected NAME_IN_A=NAME_IN_B"),
])  # fmt: skip
def test_bad_input_is_one_line(tmp_path, args, expected):
    a, b = _dirs(tmp_path, Reviewer(), Reviewer())
    proc = reviewbench("compare", *(x.format(a=a, b=b) for x in args))
    assert proc.returncode != 0
    assert proc.stderr.count("\n") == 1 and expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_conditions_paired_by_name_or_by_option(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 10, 6)
    a = write_runs(tmp_path / "a", corpus, {"old": Reviewer(finds={0})}, 10, 6)
    b = write_runs(tmp_path / "b", corpus, {"new": Reviewer(finds={0, 1})}, 10, 6)
    refused = reviewbench("compare", a, b)
    assert refused.returncode != 0 and "pair them with --condition" in refused.stderr
    result = compare_runs(a, b, CompareOptions(pairs=(("old", "new"),))).as_json()
    assert (result["conditions"][0]["a"], result["conditions"][0]["b"]) == ("old", "new")
    assert result["conditions"][0]["metrics"]["defect_recall"]["diff"] == pytest.approx(0.1)
