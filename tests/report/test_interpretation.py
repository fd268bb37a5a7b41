"""Paired sentences state the interpretation pattern a comparison shows, never a winner."""

from __future__ import annotations

from reviewbench.report.headline import pair_sentences
from reviewbench.score import ScoreOptions, score_run

from ..score.runsets import Reviewer, write_corpus, write_runs

OPTIONS = ScoreOptions(bootstrap=500)


def _sentence(tmp_path, a: Reviewer, b: Reviewer, defects=12, controls=6, repeats=3):
    corpus = write_corpus(tmp_path / "corpus", defects, controls)
    rundir = write_runs(tmp_path / "runs", corpus, {"A": a, "B": b}, defects, controls, repeats=repeats)
    [sentence] = pair_sentences(score_run(rundir, OPTIONS))
    return sentence


def test_higher_recall_with_unstable_repetition(tmp_path):
    """12 defect cases, 3 repetitions. A names nothing. B names d0-d9 in repetition 0 and
    d0-d4 in repetitions 1 and 2: recall 20/36 against 0/36, so the paired interval
    excludes 0 (every resample holds some of d0-d4). By hand, B's hit sequences: d0-d4 '111',
    d5-d9 '100', d10-d11 '000': it found 10 defects, 5 of them missed in another repetition.
    Neither flags a control: false alarms equal, no pattern from them."""
    sentence = _sentence(tmp_path, Reviewer(), Reviewer(finds={0: set(range(10)), 1: set(range(5)),
                                                               2: set(range(5))}))  # fmt: skip
    assert sentence.pattern == ("higher recall for B, with unstable repetition (5 of 10 defects it found were "
                                "missed in another repetition)")
    assert sentence.text.startswith(f"A vs B: {sentence.pattern}. B identifies 20 more of 36 defects than A")
    assert not sentence.inconclusive and "winner" not in sentence.text and "better" not in sentence.text


def test_stable_repetition_and_more_false_alarms(tmp_path):
    """B names d0-d7 every repetition and flags every one of 6 controls; A names nothing and
    flags none. Recall 24/36 against 0/36. Clean runs: 6 controls + 12 (silent) mirrors per
    repetition, 3 x 18 = 54; B flags 3 x 6 = 18 of them, A none: both differences exclude 0.
    Hit sequences: d0-d7 '111', so 8 defects found, none missed in another repetition."""
    sentence = _sentence(tmp_path, Reviewer(), Reviewer(finds=set(range(8)), flags=set(range(6))))
    assert sentence.pattern == ("higher recall for B, at more false alarms, with stable repetition (each of the 8 "
                                "defects it found, in every repetition)")
    assert "false alarms: B on 18 more of 54 clean runs" in sentence.text


def test_inconclusive_on_this_corpus(tmp_path):
    """One defect each (A d0, B d1) of 12, once: a difference of 0 whose interval holds 0."""
    sentence = _sentence(tmp_path, Reviewer(finds={0}), Reviewer(finds={1}), repeats=1)
    assert sentence.pattern == "inconclusive on this corpus" and sentence.inconclusive


def test_detection_inconclusive_but_false_alarms_differ(tmp_path):
    """Neither names a defect; A flags all 6 controls, every repetition: 18/54 false alarms."""
    sentence = _sentence(tmp_path, Reviewer(flags=set(range(6))), Reviewer())
    assert sentence.pattern == "detection inconclusive on this corpus; more false alarms from A"
