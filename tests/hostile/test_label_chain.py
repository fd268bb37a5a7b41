"""Tamper evidence for labels (issue 25, item 8, the label half): "append-only" was a
trigger that ``DROP TRIGGER`` removes, after which a label could be edited, deleted or
slipped in and ``score`` used it. Every row now carries the SHA-256 of the row before it:
reading labels for scoring re-computes the chain and refuses a broken one with one line,
and ``label status`` prints the chain's head so it can be published."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from reviewbench.label import LabelStore

from ..label.conftest import write_corpus, write_runs


@pytest.fixture
def labelled(tmp_path, cli):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    rows = [{"comment_id": c.comment_id, "part": c.part, "class": "false_positive"} for c in claims]
    for rater in ("ann", "bob"):
        (tmp_path / f"{rater}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert cli("label", "import", rundir, tmp_path / f"{rater}.jsonl", "--rater", rater).code == 0
    return rundir


def _raw(rundir, *statements: str) -> None:
    db = sqlite3.connect(rundir / "labels.sqlite", isolation_level=None)
    try:
        for statement in statements:
            db.execute(statement)
    finally:
        db.close()


def _head(cli, rundir) -> str:
    result = cli("label", "status", rundir)
    assert result.code == 0, result.err
    return re.search(r"labels chain: 20 rows, head sha256 ([0-9a-f]{64})", result.out).group(1)


TAMPERING = {
    "an edited label": ("DROP TRIGGER labels_no_update",
                        "UPDATE labels SET class = 'true_finding', defect_id = 'd-1' WHERE seq = 3"),
    "a deleted label": ("DROP TRIGGER labels_no_delete", "DELETE FROM labels WHERE seq = 5"),
    "a label slipped in": (("INSERT INTO labels (comment_id, part, author, role, probe, class, source, created_at, "
                            "rubric_version) SELECT comment_id, part, 'cat', 'rater', '', class, 'import', created_at, "
                            "rubric_version FROM labels WHERE seq = 1"),),
    "an edited calibration": (("INSERT INTO calibrations (judge, created_at, result) VALUES ('j', 'now', "
                               "'{\"usable\": true}')"),),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(TAMPERING))
def test_score_refuses_labels_tampered_with_behind_the_triggers(labelled, cli, attack):
    assert cli("score", labelled, "--json").code == 0
    _raw(labelled, *TAMPERING[attack])
    line = cli("score", labelled, "--json").one_line_error("labels.sqlite", "chain is broken")
    assert "row" in line
    cli("label", "verdicts", labelled).one_line_error("chain is broken")
    cli("label", "status", labelled).one_line_error("chain is broken")


def test_the_chain_head_is_printed_stable_and_moves_with_every_row(labelled, cli, tmp_path):
    head = _head(cli, labelled)
    assert _head(cli, labelled) == head
    data = json.loads(cli("label", "status", labelled, "--json").out)
    assert data["chain"]["labels"] == {"rows": 20, "head_sha256": head}
    assert data["rows"]["rater"] == 20
    # Re-computing every digest after an edit gives a consistent chain, and a new head:
    # what a published head exposes.
    with LabelStore(labelled) as store:
        first = store.rows()[0]
    row = {"comment_id": first.row.comment_id, "part": first.row.part, "class": "unclear"}
    (tmp_path / "more.jsonl").write_text(json.dumps(row) + "\n")
    assert cli("label", "import", labelled, tmp_path / "more.jsonl", "--rater", "ann").code == 0
    later = json.loads(cli("label", "status", labelled, "--json").out)["chain"]["labels"]
    assert later["rows"] == 21 and later["head_sha256"] != head


def test_a_store_written_before_chaining_is_chained_when_opened(labelled, cli):
    # The old schema: no chain columns (as every labels.sqlite written before this change).
    _raw(labelled, "DROP TRIGGER labels_no_update", "DROP TRIGGER calibrations_no_update",
         "ALTER TABLE labels DROP COLUMN prev_sha256", "ALTER TABLE labels DROP COLUMN row_sha256",
         "ALTER TABLE calibrations DROP COLUMN prev_sha256", "ALTER TABLE calibrations DROP COLUMN row_sha256")  # fmt: skip
    status = json.loads(cli("label", "status", labelled, "--json").out)
    assert status["chain"]["labels"]["rows"] == 20
    assert cli("score", labelled, "--json").code == 0
    # chained for good: the triggers are back, and a later edit is caught
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        _raw(labelled, "UPDATE labels SET class = 'unclear' WHERE seq = 1")
    _raw(labelled, "DROP TRIGGER labels_no_update", "UPDATE labels SET class = 'unclear' WHERE seq = 1")
    cli("score", labelled, "--json").one_line_error("chain is broken")
