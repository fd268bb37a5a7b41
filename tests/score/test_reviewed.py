"""A completed run whose failure code says the review did not happen is no clean review:
never restraint on a clean case, never a completed review (``RunRow.reviewed``)."""

from __future__ import annotations

from reviewbench.records import FailureCode, RunState
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.runs import RunStore

from .runsets import Reviewer, control_id, write_corpus, write_runs

OPTIONS = ScoreOptions(bootstrap=200)


def _mark(rundir, run_id, code):
    """Re-record ``run_id`` as it was (a clean, completed answer) with ``code`` beside it."""
    store = RunStore(rundir / "runs.sqlite", create=True)  # opened for writing
    try:
        [run] = [r for r in store.runs() if r.run_id == run_id]
        assert run.state is RunState.COMPLETED_NO_FINDINGS
        store.record(run.model_copy(update={"failure_code": code}), None)
    finally:
        store.close()


def test_a_silent_bot_error_is_not_restraint(tmp_path):
    """2 defect cases (each with a mirror) and 4 controls, condition A silent everywhere: 8 runs,
    6 of them on clean cases (4 controls + 2 mirrors), no finding anywhere.

    Before: false_alarm_rate 0/6 in both analyses, completion 8/8.
    Then control k0's run is recorded completed_no_findings with failure code bot_error (the bot
    said "usage limit reached" and left no review). By hand:
    - completed analysis: k0 leaves the clean denominator: false_alarm_rate 0/5, silence over
      the defect runs unchanged;
    - end to end: a missing review is a false alarm: false_alarm_rate 1/6;
    - completion 7/8, one missing review with code bot_error.
    """
    corpus = write_corpus(tmp_path / "corpus", defects=2, controls=4)
    rundir = write_runs(tmp_path / "runs", corpus, {"A": Reviewer()}, defects=2, controls=4)
    before = score_run(rundir, OPTIONS).conditions["A"]
    assert (before.metrics["false_alarm_rate"].num, before.metrics["false_alarm_rate"].den) == (0, 6)
    assert (before.metrics["completion"].num, before.metrics["completion"].den) == (8, 8)

    _mark(rundir, f"A-{control_id(0)}-0", FailureCode.BOT_ERROR)
    after = score_run(rundir, OPTIONS).conditions["A"]
    completed, e2e = after.metrics, after.end_to_end.metrics
    assert (completed["false_alarm_rate"].num, completed["false_alarm_rate"].den) == (0, 5)
    assert (e2e["false_alarm_rate"].num, e2e["false_alarm_rate"].den) == (1, 6)
    assert (completed["completion"].num, completed["completion"].den) == (7, 8)
    assert completed["completion"].failure_codes == {"bot_error": 1}
    assert after.states["completed_no_findings"] == 8  # the recorded state itself is kept as it was


def test_reviewed_needs_completion_and_no_failure_code():
    from reviewbench.records import RunRow

    base = dict(run_id="r", case_id="c", condition="A", repetition=0, variant="original", attempts=1,
                cached=False, params={}, prompt_sha256="p", gold_sha256="g", tool_version="t", cache_key="k")
    assert RunRow(state="completed_no_findings", **base).reviewed
    assert RunRow(state="completed_findings", **base).reviewed
    assert not RunRow(state="completed_no_findings", failure_code="no_review_in_window", **base).reviewed
    assert not RunRow(state="failed", failure_code="timeout", **base).reviewed
    assert not RunRow(state="timed_out", **base).reviewed
