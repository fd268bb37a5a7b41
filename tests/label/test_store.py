"""The label store: append-only, imports checked, adjudication beside the initial labels,
and the human verdicts scoring will use."""

from __future__ import annotations

import json
import sqlite3

import pytest

from reviewbench.errors import UsageError
from reviewbench.label import (
    LabelStore,
    Role,
    agreement,
    export_labels,
    human_verdicts,
    import_labels,
    label_metrics,
)

from .conftest import CONDITIONS, run_id

YES = dict.fromkeys(("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)


def keys_by_text(rundir) -> dict[str, tuple[str, int]]:
    with LabelStore(rundir) as store:
        store.packets()
        return {ref.text: key for key, ref in store.claims().items()}


def row(key, cls, defect=None, fields=None, triage=10.0, note=None, reason=None):
    out = {"comment_id": key[0], "part": key[1], "class": cls, "defect_id": defect, "fields": fields or {},
           "triage_s": triage, "note": note}  # fmt: skip
    if reason is not None:
        out["reason"] = reason
    return out


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def keys(rundir):
    return keys_by_text(rundir)


def plan(keys, tweak: dict | None = None):
    """Every claim labelled; ``tweak`` replaces some rows (a second rater's differences)."""
    k = {text.split()[0] + str(i): key for i, (text, key) in enumerate(sorted(keys.items()))}
    rows = {}
    for text, key in keys.items():
        if text.startswith("parse drops the last item"):
            rows[text] = row(key, "true_finding", "d-1", YES, triage=30)
        elif text.startswith("lookup uses the wrong key"):
            rows[text] = row(key, "true_finding", "d-2", {**YES, "safe_fix": False}, triage=20)
        elif text == "None is not checked":
            rows[text] = row(key, "true_finding", "d-3", YES, triage=15)
        elif text == "unused import":
            rows[text] = row(key, "true_finding", "valid_incidental", YES, note="import of os is unused")
        elif text == "maybe a problem here":
            rows[text] = row(key, "unclear")
        elif text.startswith("The slice now stops"):
            rows[text] = row(key, "true_finding", "d-1", YES)
        elif text.startswith(("Callers", "Restore")):
            rows[text] = row(key, "duplicate")
        else:
            rows[text] = row(key, "false_positive", triage=5)
    del k
    rows.update(tweak or {})
    return list(rows.values())


def test_import_export_round_trip_and_append_only(rundir, keys, tmp_path):
    assert import_labels(rundir, write(tmp_path / "a.jsonl", plan(keys)), rater="ann") == 10
    out = tmp_path / "ann.jsonl"
    assert export_labels(rundir, out, rater="ann") == 10
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["class"] for r in exported} == {"true_finding", "false_positive", "duplicate", "unclear"}
    # a correction adds a row; the first one stays
    nit = keys["style nit"]
    import_labels(rundir, write(tmp_path / "fix.jsonl", [row(nit, "unclear")]), rater="ann")
    with LabelStore(rundir) as store:
        rows = [r for r in store.rows(role=Role.RATER) if r.key == nit]
        assert [r.row.label_class.value for r in rows] == ["false_positive", "unclear"]
        assert store.latest(Role.RATER)["ann"][nit].row.label_class.value == "unclear"
        assert all(r.rubric_version == "003-1" and r.created_at.endswith("+00:00") for r in rows)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("UPDATE labels SET class = 'true_finding'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("DELETE FROM labels")
        assert len(store.rows(role=Role.RATER)) == 11


def test_bad_rows_are_refused_with_file_and_line(rundir, keys, tmp_path):
    key = keys["style nit"]
    cases = [
        ([row(key, "true_finding")], "names the gold defect"),
        ([row(key, "false_positive", "d-1")], "only a true_finding"),
        ([row(key, "true_finding", "valid_incidental")], "short description"),
        ([row(key, "nonsense")], "class"),
        ([{**row(key, "unclear"), "extra": 1}], "extra"),
        ([row(("cnope", 0), "unclear")], "no packet has claim"),
    ]
    for rows, message in cases:
        with pytest.raises(UsageError, match=message):
            import_labels(rundir, write(tmp_path / "bad.jsonl", rows), rater="ann")
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    with pytest.raises(UsageError, match=r"broken.jsonl:1: not a label row"):
        import_labels(rundir, tmp_path / "broken.jsonl", rater="ann")
    with pytest.raises(UsageError, match="exactly one"):
        import_labels(rundir, tmp_path / "broken.jsonl")
    with pytest.raises(UsageError, match="needs a 'reason'"):
        import_labels(rundir, write(tmp_path / "adj.jsonl", [row(key, "unclear")]), adjudicator="ada")
    with LabelStore(rundir) as store:
        assert store.rows() == []  # nothing half-imported


def test_adjudication_keeps_both_initial_labels_and_makes_verdicts_human(rundir, keys, tmp_path):
    vague, nit = keys["maybe a problem here"], keys["style nit"]
    import_labels(rundir, write(tmp_path / "a.jsonl", plan(keys)), rater="ann")
    # bob differs on two claims: the vague one (false positive, not unclear) and the nit
    bob = plan(keys, {"maybe a problem here": row(vague, "false_positive"),
                      "style nit": row(nit, "true_finding", "d-1", YES)})  # fmt: skip
    import_labels(rundir, write(tmp_path / "b.jsonl", bob), rater="bob")
    verdicts = {v.comment_id: v for v in human_verdicts(rundir)}
    nit_id = f"{run_id('case-1', CONDITIONS[0])}:1"
    vague_id = f"{run_id('case-2', CONDITIONS[1])}:0"
    assert nit_id not in verdicts and vague_id not in verdicts  # disputed: not final
    assert len(verdicts) == 6
    first = verdicts[f"{run_id('case-1', CONDITIONS[0])}:0"]
    assert (first.label_class.value, first.defect_ids, first.basis.value, first.evidence) == (
        "true_finding", ["d-1"], "agreed", "human")
    split = verdicts[f"{run_id('case-1', CONDITIONS[1])}:0"]
    assert (split.parts, split.label_class.value, split.defect_ids) == (3, "true_finding", ["d-1"])
    incidental = verdicts[f"{run_id('case-3', CONDITIONS[0])}:0"]
    assert incidental.valid_incidental and incidental.defect_ids == []

    adjudication = [row(vague, "unclear", reason="too vague to act on", triage=40),
                    row(nit, "false_positive", reason="style only", triage=20)]  # fmt: skip
    import_labels(rundir, write(tmp_path / "adj.jsonl", adjudication), adjudicator="ada")
    verdicts = {v.comment_id: v for v in human_verdicts(rundir)}
    assert verdicts[nit_id].label_class.value == "false_positive" and verdicts[nit_id].basis.value == "adjudicated"
    assert verdicts[vague_id].label_class.value == "unclear"
    with LabelStore(rundir) as store:
        initial = store.latest(Role.RATER)
        assert initial["ann"][nit].row.label_class.value == "false_positive"
        assert initial["bob"][nit].row.label_class.value == "true_finding"
        assert store.rows(role=Role.ADJUDICATOR)[0].row.reason == "too vague to act on"

    report = agreement(LabelStore(rundir), resamples=200).as_dict()
    assert report["adjudicated"] == 2 and report["adjudication_s"] == 60.0
    (pair,) = report["pairs"]
    assert pair["raters"] == ["ann", "bob"] and pair["n"] == 10
    assert pair["percent_agreement"] == 0.8
    assert pair["confusion"]["false_positive"]["true_finding"] == 1
    assert pair["confusion"]["unclear"]["false_positive"] == 1
    assert set(pair["fields"]) == {"location", "consequence", "evidence", "safe_fix", "severity_fit"}
    # safe_fix was answered by both on the 5 claims both saw as true findings (not the nit)
    assert pair["fields"]["safe_fix"]["n"] == 5

    rate, triage = label_metrics(rundir)
    # true findings: parse (all yes), lookup (safe_fix no), None check, unused import, split one
    assert (rate.overall.numerator, rate.overall.denominator) == (4, 5)
    assert rate.fields["safe_fix"].as_dict() == {"value": 0.8, "numerator": 4, "denominator": 5}
    assert triage.runs == 5 and triage.adjudication_minutes == 1.0
    # case-1 / first condition: ann 30 + 5, bob 30 + 10 seconds
    assert triage.per_case["case-1"] == pytest.approx((30 + 5 + 30 + 10 + 6 * 10) / 60, abs=1e-6)


def test_an_identical_resubmission_writes_nothing_new(rundir, keys):
    """Save clicked three times, Enter twice: one row per claim (issue 27, item 8). A change,
    or a label changed back, is a new row; the time alone changing is not a new label."""
    from reviewbench.label import LabelRow

    nit, vague = keys["style nit"], keys["maybe a problem here"]
    first = [LabelRow.model_validate(row(nit, "false_positive")), LabelRow.model_validate(row(vague, "unclear"))]
    with LabelStore(rundir) as store:
        assert store.add(first, author="ann", role=Role.RATER, source="app", skip_unchanged=True) == 2
        assert store.add(first, author="ann", role=Role.RATER, source="app", skip_unchanged=True) == 0
        again = [r.model_copy(update={"triage_s": 99.0}) for r in first]
        assert store.add(again, author="ANN", role=Role.RATER, source="app", skip_unchanged=True) == 0
        changed = [first[0], LabelRow.model_validate(row(vague, "false_positive"))]
        assert store.add(changed, author="ann", role=Role.RATER, source="app", skip_unchanged=True) == 1
        assert store.add(first, author="ann", role=Role.RATER, source="app", skip_unchanged=True) == 1  # back
        assert store.add(first, author="bob", role=Role.RATER, source="app", skip_unchanged=True) == 2  # another rater
        assert len(store.rows(role=Role.RATER)) == 6
        store.verify_chain()


def test_a_rater_disagreeing_after_adjudication_reopens_the_claim(rundir, keys, tmp_path):
    """A new rater (or a changed label) at odds with the adjudicated label puts the claim back
    before the adjudicator (issue 27, item 10); agreeing with it leaves it settled."""
    from reviewbench.evidence.resolve import ClaimStatus, _adjudications, claim_status, final_labels

    nit = keys["style nit"]
    nit_id = f"{run_id('case-1', CONDITIONS[0])}:1"
    import_labels(rundir, write(tmp_path / "a.jsonl", [row(nit, "false_positive")]), rater="ann")
    import_labels(rundir, write(tmp_path / "b.jsonl", [row(nit, "unclear")]), rater="bob")
    import_labels(rundir, write(tmp_path / "adj.jsonl", [row(nit, "false_positive", reason="style only")]),
                  adjudicator="ada")  # fmt: skip

    def status():
        with LabelStore(rundir) as store:
            return claim_status(store.latest(Role.RATER), _adjudications(store), nit), nit in final_labels(store)

    assert status() == (ClaimStatus.ADJUDICATED, True)
    import_labels(rundir, write(tmp_path / "c.jsonl", [row(nit, "false_positive")]), rater="cat")
    assert status() == (ClaimStatus.ADJUDICATED, True)  # agrees with the final label
    import_labels(rundir, write(tmp_path / "d.jsonl", [row(nit, "true_finding", "d-1", YES)]), rater="dan")
    assert status() == (ClaimStatus.DISPUTED, False)
    assert nit_id not in {v.comment_id for v in human_verdicts(rundir)}
    import_labels(rundir, write(tmp_path / "adj2.jsonl", [row(nit, "false_positive", reason="dan's d-1 is elsewhere")]),
                  adjudicator="ada")  # fmt: skip
    assert status() == (ClaimStatus.ADJUDICATED, True)
