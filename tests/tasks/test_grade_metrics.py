"""The fix-task scoreboard, every figure computed by hand on a small known case.

Condition A, three tasks × three repetitions:
    t1: resolved, resolved, resolved (the last also edits an unrelated file)
    t2: resolved, partial (tested, one FAIL_TO_PASS passes), apply_failed
    t3: no patch, rejected, empty patch (tested, nothing passes)
Condition B: t1 never resolved, t2 resolved once (repetition 0), t3: grading broke on
repetition 0 (error: not scored), the other two not resolved.
"""

from __future__ import annotations

import csv
import itertools
import json
from math import comb

import pytest

from reviewbench.tasks.grade_metrics import pass_at_k, pass_hat_k, score_grades
from reviewbench.tasks.grade_output import CSV_COLUMNS, grades_document, write_grades_csv
from reviewbench.tasks.records import Grade, GradeStatus


def G(condition, task, rep, status="tested", resolved=False, *, applies=None, partial=False, files=1,
      overreach=(), reason=None):  # fmt: skip
    applies = status in ("tested", "test_patch_failed") if applies is None else applies
    return Grade(run_id=f"{condition}-{task}-{rep}", instance_id=task, condition=condition, repetition=rep,
                 solution_state="patched", status=GradeStatus(status), reason=reason, applies_clean=applies,
                 tests_pass=resolved, partial=partial, overreach=len(overreach), overreach_files=list(overreach),
                 files=files + len(overreach), lines=2, f2p_passed=int(resolved or partial), f2p_total=1,
                 p2p_passed=0, p2p_total=0, not_passed=[])  # fmt: skip


GRADES = [
    G("A", "t1", 0, resolved=True), G("A", "t1", 1, resolved=True),
    G("A", "t1", 2, resolved=True, overreach=["other.py"]),
    G("A", "t2", 0, resolved=True), G("A", "t2", 1, partial=True), G("A", "t2", 2, "apply_failed"),
    G("A", "t3", 0, "no_patch", files=0), G("A", "t3", 1, "rejected", files=0), G("A", "t3", 2, files=0),
    G("B", "t1", 0), G("B", "t1", 1), G("B", "t1", 2),
    G("B", "t2", 0, resolved=True), G("B", "t2", 1), G("B", "t2", 2),
    G("B", "t3", 0, "error", applies=False, files=0), G("B", "t3", 1), G("B", "t3", 2),
]  # fmt: skip


@pytest.fixture(scope="module")
def board():
    return {c.name: c for c in score_grades(GRADES, resamples=2000, seed=7).conditions}


def test_resolve_rate_counts_runs_without_a_patch_as_not_resolved(board):
    a, b = board["A"], board["B"]
    assert (a.resolve_rate.num, a.resolve_rate.den, a.resolve_rate.value) == (
        4,
        9,
        pytest.approx(4 / 9),
    )
    # B's broken grading is not scored: out of the denominator, counted apart.
    assert (b.resolve_rate.num, b.resolve_rate.den, b.not_scored) == (1, 8, 1)
    assert a.by_status == {"apply_failed": 1, "no_patch": 1, "rejected": 1, "tested": 6}
    assert a.resolve_rate.lo <= a.resolve_rate.value <= a.resolve_rate.hi


def test_applies_clean_partial_and_overreach_rates(board):
    a = board["A"]
    assert (a.applies_clean_rate.num, a.applies_clean_rate.den) == (
        6,
        9,
    )  # t1 ×3, t2 ×2 tested, t3 empty patch
    assert (a.partial_rate.num, a.partial_rate.den) == (1, 9)
    # Overreach is measured on patches that were read and change a file: t1 ×3, t2 ×3.
    assert (a.overreach_rate.num, a.overreach_rate.den) == (1, 6)


def test_pass_at_k_and_pass_hat_k_by_hand(board):
    a = board["A"]
    # per task (n, c): t1 (3, 3), t2 (3, 1), t3 (3, 0)
    assert a.pass_at[1].value == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert a.pass_at[2].value == pytest.approx(
        (1 + (1 - comb(2, 2) / comb(3, 2)) + 0) / 3
    )  # (1 + 2/3) / 3
    assert a.pass_at[3].value == pytest.approx(2 / 3)
    assert a.pass_hat[1].value == pytest.approx(4 / 9)
    assert a.pass_hat[2].value == pytest.approx(1 / 3) and a.pass_hat[3].value == pytest.approx(
        1 / 3
    )
    assert (a.pass_at[2].num, a.pass_at[2].den) == (pytest.approx(5 / 3), 3)
    # B's t3 has two scored runs: pass@3 averages over t1 and t2 only.
    b = board["B"]
    assert (b.pass_at[3].num, b.pass_at[3].den) == (1, 2) and b.pass_at[2].den == 3


@pytest.mark.parametrize(
    "n, c, k", [(n, c, k) for n in range(1, 6) for c in range(n + 1) for k in range(1, n + 1)]
)
def test_estimators_equal_enumeration_of_k_subsets(n, c, k):
    runs = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(runs, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_estimators_refuse_k_above_n():
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_paired_comparison_on_shared_pairs_with_exact_mcnemar(board):
    p = board["A"].paired["B"]
    # Shared (task, repetition) pairs: 9 minus B's unscored t3/0.
    assert (p.pairs, p.both, p.only_a, p.only_b, p.neither) == (8, 1, 3, 0, 4)
    assert p.mcnemar_p == pytest.approx(0.25)  # 2 × (1/2)^3
    assert (p.difference.num, p.difference.den, p.difference.value) == (3, 8, pytest.approx(3 / 8))
    assert p.difference.lo <= 3 / 8 <= p.difference.hi
    back = board["B"].paired["A"]
    assert (back.only_a, back.only_b, back.difference.value) == (0, 3, pytest.approx(-3 / 8))


def test_a_condition_resolving_everything_gets_an_exact_interval_not_a_point():
    # 4 of 4 tasks resolved: every resample says 1.0; the exact (Clopper–Pearson) interval on
    # the 4 tasks is [0.025^(1/4), 1] = [0.398, 1].
    grades = [G("A", f"t{i}", r, resolved=True) for i in range(4) for r in range(2)]
    [a] = score_grades(grades, resamples=500).conditions
    assert (a.resolve_rate.value, a.resolve_rate.lo, a.resolve_rate.hi) == (1.0, round(0.025 ** 0.25, 6), 1.0)
    assert a.resolve_rate.exact is True
    assert a.paired == {} and a.pass_hat[2].value == 1.0


def test_no_grades_no_figures():
    assert score_grades([], resamples=100).conditions == []


def test_json_document_has_one_row_per_graded_run(board):
    doc = grades_document(GRADES, score_grades(GRADES, resamples=200))
    assert set(doc) == {"rows", "conditions", "tasks"} and len(doc["rows"]) == len(GRADES)
    row = doc["rows"][2]
    assert {k: row[k] for k in ("instance_id", "condition", "repeat", "applies_clean", "tests_pass", "partial",
                                "overreach")} == {"instance_id": "t1", "condition": "A", "repeat": 2,
                                                  "applies_clean": True, "tests_pass": True, "partial": False,
                                                  "overreach": 1}  # fmt: skip
    assert doc["conditions"]["A"]["resolve_rate"]["num"] == 4
    assert doc["conditions"]["A"]["paired"]["B"]["mcnemar_p"] == pytest.approx(0.25)
    json.dumps(doc, allow_nan=False)  # strict JSON: no NaN anywhere


def test_csv_has_the_seed_columns_and_defuses_formulas(tmp_path):
    hostile = G("A", "t9", 0, overreach=["=cmd|' /C calc'!A0"], reason="-1+1")
    path = write_grades_csv([*GRADES[:3], hostile], tmp_path / "out" / "grades.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert tuple(rows[0]) == CSV_COLUMNS and CSV_COLUMNS[:4] == (
        "task",
        "applies_clean",
        "tests_pass",
        "overreach",
    )
    assert rows[0] == {**rows[0], "task": "t1", "applies_clean": "true", "tests_pass": "true", "overreach": "0",
                            "condition": "A", "repeat": "0", "partial": "false", "files": "1", "lines": "2"}  # fmt: skip
    assert rows[3]["overreach_files"] == "'=cmd|' /C calc'!A0" and rows[3]["reason"] == "'-1+1"


def test_tasks_never_resolved_and_too_few_tasks_are_flagged():
    board = score_grades(GRADES, resamples=200, seed=7)
    assert board.tasks == ["t1", "t2", "t3"] and board.never_resolved == ["t3"]
    summary = grades_document(GRADES, board)["tasks"]
    assert summary == {"count": 3, "never_resolved": ["t3"], "evidence": "insufficient evidence", "min_tasks": 10}
    many = [G("A", f"t{i:02d}", 0, resolved=i > 0) for i in range(10)]
    assert score_grades(many, resamples=200, seed=7).evidence == "sufficient"


def test_overreach_flag_is_more_than_one_file_outside_the_gold_files():
    from reviewbench.tasks.grade import _size
    from reviewbench.tasks.grade_patch import parse_patch

    def patch(*paths):
        return "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths)

    one = _size(parse_patch(patch("gold.py", "x.py")), ["gold.py"])
    two = _size(parse_patch(patch("gold.py", "x.py", "y.py")), ["gold.py"])
    assert (one["overreach"], one["overreach_flag"]) == (1, False)
    assert (two["overreach"], two["overreach_flag"]) == (2, True)
