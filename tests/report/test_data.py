"""The view model agrees with scoring: tiles, verdicts and per-case counts."""

from __future__ import annotations

from collections import Counter

import pytest

from reviewbench.errors import UsageError
from reviewbench.report import Outcome, ReportOptions, Summary, Verdict, build_report
from reviewbench.score import ScoreOptions, score_run

from ..score.mirrors import mirror_id
from .conftest import ANALYSED_DEFECTS, CONDITIONS, REPS


@pytest.fixture(scope="module")
def data(rundir):
    return build_report(rundir, ReportOptions(bootstrap=200))


def _tile(data, case_id, defect_id, condition, rep):
    [row] = [r for r in data.defects if r.case_id == case_id and r.defect_id == defect_id]
    [tile] = [t for t in row.tiles if t.condition == condition and t.repetition == rep]
    return row, tile


def test_one_tile_per_defect_condition_and_repetition(data):
    assert data.repetitions == REPS
    assert len(data.defects) == ANALYSED_DEFECTS  # originals only: no variant, no unvalidated case
    assert sum(len(r.tiles) for r in data.defects) == ANALYSED_DEFECTS * len(CONDITIONS) * REPS
    assert {r.case_id for r in data.defects} == {"case-a1", "case-a2", "case-a3"}


def test_found_tiles_are_scorings_matched_pairs(data, rundir):
    scored = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()
    for name in CONDITIONS:
        found = sum(1 for r in data.defects for t in r.tiles if t.condition == name and t.outcome is Outcome.FOUND)
        located = sum(1 for r in data.defects for t in r.tiles
                      if t.condition == name and t.outcome in (Outcome.FOUND, Outcome.LOCATED))  # fmt: skip
        done = sum(1 for r in data.defects for t in r.tiles
                   if t.condition == name and t.outcome in (Outcome.FOUND, Outcome.LOCATED, Outcome.MISSED))  # fmt: skip
        recall = scored["conditions"][name]["metrics"]["defect_recall"]
        assert (found, done) == (recall["num"], recall["den"])
        upper = scored["conditions"][name]["metrics"]["located_recall"]
        assert (located, done) == (upper["num"], upper["den"])


def test_tile_outcomes_and_summaries(data):
    row, tile = _tile(data, "case-a1", "case-a1-d1", "A", 0)
    assert tile.outcome is Outcome.LOCATED and tile.finding.line == 11  # its claim names nothing of the defect
    assert _tile(data, "case-a1", "case-a1-d1", "A", 1)[1].outcome is Outcome.FOUND  # "off by one in parse_key"
    assert _tile(data, "case-a1", "case-a1-d1", "A", 2)[1].outcome is Outcome.INCOMPLETE
    assert _tile(data, "case-a3", "case-a3-d1", "B", 2)[1].outcome is Outcome.NOT_RUN
    assert _tile(data, "case-a2", "case-a2-d2", "A", 0)[1].outcome is Outcome.MISSED
    assert row.summaries == {"A": Summary.SOME, "B": Summary.SOME}  # A: identified in 1 of 2 completed runs
    [a2] = [r for r in data.defects if r.defect_id == "case-a2-d1"]
    assert a2.summaries == {"A": Summary.SOME, "B": Summary.NEVER}


def test_verdicts_add_up_to_scorings_counts(data, rundir):
    scored = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()
    variants = {"case-v1"}
    for name in CONDITIONS:
        counted = Counter(f.verdict for f in data.findings
                          if f.condition == name and f.in_analysis and f.case_id not in variants)  # fmt: skip
        metrics = scored["conditions"][name]["metrics"]
        assert counted[Verdict.TRUE_POSITIVE] == metrics["precision"]["num"]
        credited = counted[Verdict.TRUE_POSITIVE] + counted[Verdict.LOCATED]
        assert credited + counted[Verdict.FALSE_POSITIVE] == metrics["precision"]["den"]
        assert credited == metrics["located_precision"]["num"]
        assert counted[Verdict.DUPLICATE] == metrics["duplicate_rate"]["num"]
    b_dup = [f for f in data.findings if f.condition == "B" and f.verdict is Verdict.DUPLICATE]
    assert [(f.case_id, f.finding.line) for f in b_dup] == [("case-a1", 12)]
    tp = [f for f in data.findings if f.verdict is Verdict.TRUE_POSITIVE and f.case_id == "case-a2"]
    assert [f.defect_id for f in tp] == ["case-a2-d1"]
    [remark] = [f for f in data.findings if f.finding.claim == "file-level remark"]
    assert remark.verdict is Verdict.FILE_LEVEL


def test_case_results(data):
    rows = {(c.case_id, c.condition): c for c in data.cases}
    assert len(rows) == 8 * len(CONDITIONS)  # a1 a2 a3 k1 k2 v1 and a1's, a2's mirrors; the unvalidated u1 is out
    a2 = rows[("case-a2", "A")]
    assert a2.outcomes == ("found 1/2", "missed", "missed") and (a2.found_pairs, a2.defect_pairs) == (1, 6)
    assert rows[("case-k1", "A")].outcomes == ("flagged", "clean", "flagged")
    assert rows[("case-k1", "A")].false_positives == 4
    assert rows[("case-k2", "A")].outcomes == ("clean", "timed_out", "not_run")
    assert rows[("case-a1", "A")].outcomes == ("located", "found", "failed")
    assert rows[("case-v1", "A")].kind == "rename variant" and rows[("case-v1", "A")].variant_of == "case-a1"
    mirror = rows[(mirror_id("case-a1"), "A")]  # a clean case, reviewed in silence
    assert (mirror.kind, mirror.stratum, mirror.outcomes, mirror.false_positives) == (
        "control", "mirror", ("clean", "clean", "clean"), 0)  # fmt: skip


def test_include_unvalidated_widens_the_map(rundir):
    wide = build_report(rundir, ReportOptions(bootstrap=200, include_unvalidated=True))
    assert len(wide.defects) == ANALYSED_DEFECTS + 1
    assert any("include-unvalidated" in note for note in wide.notes)


def test_condition_filter_and_unknown_condition(rundir):
    only_b = build_report(rundir, ReportOptions(bootstrap=200, conditions=("B",)))
    assert [c.name for c in only_b.conditions] == ["B"]
    assert {r.condition for r in only_b.runs} == {"B"} and not only_b.comparisons
    assert all(len(r.tiles) == REPS for r in only_b.defects)
    with pytest.raises(UsageError, match="no condition named Z .*conditions: A, B"):
        build_report(rundir, ReportOptions(bootstrap=200, conditions=("Z",)))


def test_a_veto_check_reads_as_triggered_or_clear_never_as_a_failed_gate(data):
    """A veto is a condition that must *not* hold: "fail" beside a veto that does not
    trigger read as a failed gate. Tiers keep pass and fail."""
    for condition in data.conditions:
        veto = [c for c in condition.decision.checks if c.startswith("veto flags_everything:")]
        tiers = [c for c in condition.decision.checks if not c.startswith("veto ")]
        assert len(veto) == 1, condition.decision.checks
        assert veto[0].endswith(("(triggers)", "(clear)", "(needs labels)")), veto[0]
        assert (condition.decision.status == "vetoed") == veto[0].endswith("(triggers)")
        assert tiers and all(c.endswith(("(pass)", "(fail)", "(needs labels)")) for c in tiers), tiers
