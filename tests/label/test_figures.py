"""Scoring figures from human labels, exactly as planned: recall from true-finding links,
precision without duplicates and unclear, the unclear sensitivity bounds (the decision
flip between them is the score's: tests/label/test_unclear_score.py)."""

from __future__ import annotations

from reviewbench.evidence.figures import labelled_precision, labelled_recall
from reviewbench.evidence.resolve import Basis, LabelVerdict
from reviewbench.label import import_labels, label_verdicts

from .conftest import CASES, CONDITIONS, run_id
from .test_store import keys_by_text, plan, write


def verdict(run, cls, defects=(), incidental=False, n=0):
    return LabelVerdict(comment_id=f"{run}:{n}", run_id=run, index=n, case_id="c", label_class=cls,
                        defect_ids=list(defects), valid_incidental=incidental, fields=None, basis=Basis.AGREED,
                        parts=1)  # fmt: skip


def test_precision_and_recall_by_hand():
    vs = [verdict("r1", "true_finding", ["d1"], n=0), verdict("r1", "true_finding", ["d1"], n=1),
          verdict("r1", "duplicate", n=2), verdict("r1", "false_positive", n=3),
          verdict("r2", "true_finding", [], incidental=True), verdict("r2", "unclear", n=1),
          verdict("r2", "unclear", n=2), verdict("r3", "true_finding", ["d9"])]  # fmt: skip
    p = labelled_precision(vs)
    # true: 3 gold + 1 incidental = 4; false 1; unclear 2; duplicates 1
    assert (p.expanded.numerator, p.expanded.denominator) == (4, 5)
    assert (p.gold.numerator, p.gold.denominator) == (3, 5)
    assert (p.unclear, p.duplicates) == (2, 1)
    assert p.unclear_as_false.as_dict() == {"value": 0.571429, "numerator": 4, "denominator": 7}
    assert p.unclear_as_true.as_dict() == {"value": 0.857143, "numerator": 6, "denominator": 7}
    assert p.duplicate_rate.as_dict() == {"value": 0.166667, "numerator": 1, "denominator": 6}
    # d1 found twice in r1 counts once; r2's incidental finding adds nothing; r4 found nothing
    recall = labelled_recall(vs, {"r1": ["d1", "d2"], "r2": ["d5"], "r4": ["d1"]})
    assert (recall.numerator, recall.denominator) == (1, 4)
    assert labelled_precision([]).expanded.value is None


def test_a_split_comment_counts_claim_by_claim():
    """Issue 32, item 8: a true comment of three parts (true d1, false, unclear) is 1 of 2,
    not 1 of 1, and its unclear part goes to the sensitivity."""
    from reviewbench.evidence.records import ClaimCounts

    split = verdict("r1", "true_finding", ["d1"]).model_copy(update={
        "parts": 3, "claims": ClaimCounts(parts=3, true=1, false_positive=1, unclear=1)})
    p = labelled_precision([split, verdict("r2", "true_finding", ["d2"])])
    assert (p.gold.numerator, p.gold.denominator) == (2, 3)
    assert (p.unclear, p.unclear_as_false.denominator, p.unclear_as_true.numerator) == (1, 4, 3)


def test_scored_with_people_labels_exactly_as_planned(rundir, tmp_path):
    keys = keys_by_text(rundir)
    rows = plan(keys)
    import_labels(rundir, write(tmp_path / "ann.jsonl", rows), rater="ann")
    import_labels(rundir, write(tmp_path / "bob.jsonl", rows), rater="bob")
    verdicts = label_verdicts(rundir)
    assert len(verdicts) == 8 and {v.evidence.value for v in verdicts} == {"human"}
    p = labelled_precision(verdicts)
    # gold true: parse, the split comment, lookup, None check = 4; incidental: unused import;
    # false: style nit, rename variable; unclear: "maybe a problem here"
    assert (p.expanded.numerator, p.expanded.denominator) == (5, 7)
    assert (p.gold.numerator, p.gold.denominator) == (4, 7)
    assert (p.unclear_as_false.value, p.unclear_as_true.value) == (0.625, 0.75)
    defect_runs = {run_id(case, cond): [d for d, _, _ in CASES[case][0]]
                   for case in ("case-1", "case-2") for cond in CONDITIONS}  # fmt: skip
    recall = labelled_recall(verdicts, defect_runs)
    # case-1: d-1 found under both conditions; case-2: d-2 and d-3 under the first only
    assert (recall.numerator, recall.denominator) == (4, 6)
