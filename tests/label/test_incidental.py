"""Valid incidental findings (issue 32, item 7), worked by hand: a claim labelled
``valid_incidental`` on a clean case contaminates it; the clean-set figures and the decision
are shown again without it; each incidental defect gets its own id, apart from the gold, and
no recall denominator grows.

The corpus (``conftest``): case-1 (d-1, with its mirror), case-2 (d-2, d-3), control case-3.
condalphasecret (A) names d-1 and says "`os` is imported and never used" on the control
(labelled valid_incidental: contaminated) and "`tmp` is never closed" on case-2 (valid
incidental on a defect case: reported, contaminates nothing). condbetasecret (B) names d-1
and d-2 and makes one false positive on the control. Both are silent on the mirror.

    completed runs      false alarms   fp per clean case   precision
    A, as registered    1/2 (case-3)   0/2                 1/1   (the incidental ones are neither)
    A, case-3 out       0/1            0/1                 1/1
    B, as registered    1/2            1/2                 2/3
    B, case-3 out       0/1            0/1                 2/2
"""

from __future__ import annotations

import json

from reviewbench.evidence.overrides import score_overrides
from reviewbench.score import ScoreOptions, score_run

from ..conftest import run_cli
from .conftest import CONDITIONS, label_all, write_corpus, write_runs

A, B = CONDITIONS
FINDINGS = {
    (A, "case-1"): ["parse drops the last item"],
    (A, "case-2"): ["`tmp` is never closed"],
    (A, "case-3"): ["`os` is imported and never used"],
    (B, "case-1"): ["parse drops the last item"],
    (B, "case-2"): ["lookup uses the wrong key"],
    (B, "case-3"): ["this may be slow"],
}
LABELS = {
    "parse drops the last item": {"class": "true_finding", "defect_id": "d-1"},
    "lookup uses the wrong key": {"class": "true_finding", "defect_id": "d-2"},
    "`tmp` is never closed": {"class": "true_finding", "defect_id": "valid_incidental",
                              "note": "a temporary file is never closed"},
    "`os` is imported and never used": {"class": "true_finding", "defect_id": "valid_incidental",
                                        "note": "unused import of os"},
    "this may be slow": {"class": "false_positive"},
}


def _gates(path, ceiling: float):
    path.write_text(f"""\
analysis = "completed"
min_defect_cases = 1
min_controls = 1
max_interval_width = 1.0

[[tier]]
name = "quiet"
authority = "quiet on clean changes"
when = [{{ metric = "false_alarm_rate", op = "<=", value = {ceiling} }}]
permitted = ["read it"]

[fallback]
name = "none"
authority = "none"
""")
    return path


def _labelled(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), FINDINGS)
    label_all(rundir, tmp_path, lambda packet, claim: LABELS[claim["text"]])
    return rundir


def _frac(m):
    return m.num, m.den


def test_an_incidental_finding_on_a_clean_case_contaminates_it(tmp_path):
    rundir = _labelled(tmp_path)
    gates = _gates(tmp_path / "gates.toml", 0.0)
    result = score_run(rundir, ScoreOptions(bootstrap=300, gates=gates, overrides=score_overrides(rundir)))
    a, b = result.conditions[A], result.conditions[B]
    assert _frac(a.metrics["false_alarm_rate"]) == (1, 2) and _frac(a.metrics["fp_per_clean_case"]) == (0, 2)
    assert _frac(a.metrics["precision"]) == (1, 1)
    assert _frac(b.metrics["false_alarm_rate"]) == (1, 2) and _frac(b.metrics["fp_per_clean_case"]) == (1, 2)
    assert _frac(b.metrics["precision"]) == (2, 3)
    # The incidental defects are never gold: recall is over d-1, d-2, d-3 for both.
    assert _frac(a.metrics["defect_recall"]) == (1, 3) and _frac(b.metrics["defect_recall"]) == (2, 3)
    for name, (alarms, fps, precision) in {A: ((0, 1), (0, 1), (1, 1)), B: ((0, 1), (0, 1), (2, 2))}.items():
        beside = result.conditions[name].contamination
        assert beside.cases == ["case-3"] and beside.analysis == "completed"
        assert (_frac(beside.false_alarm_rate), _frac(beside.fp_per_clean_case), _frac(beside.precision)) == (
            alarms, fps, precision), name  # fmt: skip
        assert beside.false_alarm_rate.lo is not None
        # 1/2 fails a ceiling of 0; 0/1 passes it: the contaminated control decides it.
        assert result.conditions[name].decision.tier == "none"
        assert (beside.decision.tier, beside.decision.status.value) == ("quiet", "granted")
        assert beside.decision_changes is True
    report = result.incidental
    assert report.contaminated == ["case-3"]
    by_case = {d.case_id: d for d in report.defects}
    control = by_case["case-3"]
    assert (control.id, control.clean, control.note, control.conditions, control.evidence.value) == (
        "case-3#incidental-1", True, "unused import of os", {A: 1}, "human")  # fmt: skip
    assert len(control.comments) == 1 and control.comments[0].endswith(":0")
    defect_case = by_case["case-2"]
    assert (defect_case.id, defect_case.clean, defect_case.note) == ("case-2#incidental-1", False,
                                                                     "a temporary file is never closed")


def test_contamination_is_in_the_json_and_the_scoreboard(tmp_path):
    rundir = _labelled(tmp_path)
    gates = _gates(tmp_path / "gates.toml", 0.0)
    out = run_cli("score", rundir, "--json", "--bootstrap", "300", "--gates", gates)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["incidental"]["contaminated"] == ["case-3"]
    assert [d["id"] for d in data["incidental"]["defects"]] == ["case-2#incidental-1", "case-3#incidental-1"]
    beside = data["conditions"][B]["contamination"]
    assert (beside["fp_per_clean_case"]["num"], beside["fp_per_clean_case"]["den"]) == (0, 1)
    schema = json.loads(run_cli("schema", "score").stdout)
    from jsonschema import Draft202012Validator

    Draft202012Validator(schema).validate(data)
    board = " ".join(run_cli("score", rundir, "--bootstrap", "300", "--gates", gates).stdout.split())
    assert ("contaminated clean cases: 1 (case-3: a claim on it labelled valid_incidental); 2 incidental "
            "defects reported apart, in no recall denominator") in board
    assert (f"{B} without contaminated clean cases: false_alarm_rate 0/1 = 0.000; fp_per_clean_case 0/1 = 0.000; "
            "precision 2/2 = 1.000; DECISION CHANGES: quiet on clean changes [granted]") in board


def test_without_incidental_labels_nothing_is_contaminated(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), FINDINGS)
    label_all(rundir, tmp_path, lambda packet, claim: {"class": "false_positive"})
    result = score_run(rundir, ScoreOptions(bootstrap=200, overrides=score_overrides(rundir)))
    assert result.incidental is None
    assert all(c.contamination is None for c in result.conditions.values())
    assert "incidental" not in result.as_json()


def test_the_report_notes_the_incidental_defects_and_the_clean_set_without_them(tmp_path):
    from reviewbench.report import ReportOptions, build_report

    rundir = _labelled(tmp_path)
    data = build_report(rundir, ReportOptions(bootstrap=200, overrides=score_overrides(rundir)))
    assert ("valid incidental findings: 2 defects none of the gold's, reported apart (score --json incidental), in "
            "no recall denominator; 1 clean cases contaminated by one") in data.notes
    assert any(n.startswith(f"{B} without contaminated clean cases: false_alarm_rate 0/1, fp_per_clean_case 0/1")
               for n in data.notes)
