"""``label carry OLD NEW``: people's labels of OLD reach NEW's identical claims, marked as
copies with their provenance, used by verdicts and releases, kept out of agreement; other
corpora are refused and OLD is only read. Real run stores, real label stores, the real CLI."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from reviewbench.evidence.packets import ClaimIdentity, review_identities
from reviewbench.records import Finding
from reviewbench.store.runs import RunRow

from ..conftest import run_cli
from . import conftest as fixtures
from .conftest import CONDITIONS, FINDINGS, LONG, label_all, write_corpus, write_runs
from .test_cli import one_error

C0, C1 = CONDITIONS
YES = dict.fromkeys(("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)

# The rerun's reviews. Identical to a claim of OLD: the same case, path, line and normalised
# text, whichever condition wrote it. Not identical: another line, another case, new text.
NEW_FINDINGS = {
    (C0, "case-1"): ["Parse drops  the LAST item <script>window.__xss=1</script>",  # case and spaces only
                     "style nit", "a new remark"],
    (C1, "case-1"): [LONG],  # three atomic parts, each carried
    (C0, "case-2"): ["lookup uses the wrong key", ("None is not checked", 3), "style nit"],  # moved; other case
    (C1, "case-2"): ["maybe a problem here"],
    (C1, "case-3"): ["unused import"],  # OLD had it from the other condition
}
CARRIED, UNMATCHED_NEW, UNMATCHED_OLD = 8, 3, 2  # claims: 11 in NEW, 10 in OLD (see NEW_FINDINGS)


def decide(packet, claim):
    text = claim["text"].casefold()
    if "last item" in text or "stops one item early" in text:
        return {"class": "true_finding", "defect_id": "d-1", "fields": YES, "triage_s": 20.0}
    if "wrong key" in text:
        return {"class": "true_finding", "defect_id": "d-2", "fields": YES, "triage_s": 20.0}
    return {"class": "false_positive", "triage_s": 5.0}


def digest_tree(root: Path) -> dict[str, str]:
    """Every file's SHA-256, but SQLite's WAL index files: a reader of a WAL database leaves an
    empty ``-wal`` and a ``-shm`` beside it (asserted empty: nothing is pending)."""
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    assert all(p.stat().st_size == 0 for p in files if p.name.endswith("-wal"))
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files if not p.name.endswith(("-wal", "-shm"))}  # fmt: skip


@pytest.fixture
def pair(tmp_path):
    """OLD (every claim labelled by two agreeing raters) and NEW (a rerun, nothing labelled)."""
    corpus = write_corpus(tmp_path / "corpus")
    old = write_runs(tmp_path / "old", corpus)
    (tmp_path / "old-labelling").mkdir()
    label_all(old, tmp_path / "old-labelling", decide)
    new = write_runs(tmp_path / "new", corpus, findings=NEW_FINDINGS)
    return old, new


def carried_rows(new: Path) -> list[tuple]:
    db = sqlite3.connect(new / "labels.sqlite")
    try:
        return db.execute("SELECT l.source, l.author, l.role, d.from_row_sha256, c.from_labels_head, "
                          "c.from_gold_sha256 FROM labels l JOIN carried d ON d.seq = l.seq "
                          "JOIN carries c ON c.carry_id = d.carry_id ORDER BY l.seq").fetchall()  # fmt: skip
    finally:
        db.close()


def test_identity_is_case_place_normalised_parts_and_occurrence():
    def run(*claims):
        findings = [Finding(path=path, line=line, claim=text, raw=text) for text, path, line in claims]
        return RunRow.model_construct(run_id="r", case_id="case-1", findings=findings)

    got = review_identities(run(("Off  by ONE", "a.py", 2), ("off by one", "a.py", 2), ("off by one", "a.py", 3),
                                ("Cafe\u0301 is wrong", None, None)))  # fmt: skip
    assert [identity for identity, _, _ in got] == [
        ClaimIdentity("case-1", "a.py", 2, ("off by one",), 1),
        ClaimIdentity("case-1", "a.py", 2, ("off by one",), 2),  # said twice in one review: two claims
        ClaimIdentity("case-1", "a.py", 3, ("off by one",), 1),  # another line: another claim
        ClaimIdentity("case-1", None, None, ("caf\u00e9 is wrong",), 1),  # NFC: the decomposed accent composed
    ]


def test_labels_reach_identical_claims_only_marked_carried(pair, tmp_path):
    old, new = pair
    before = digest_tree(old)
    old_head = json.loads(run_cli("label", "status", old, "--json").stdout)["chain"]["labels"]
    dry = json.loads(run_cli("label", "carry", old, new, "--dry-run", "--json").stdout)
    assert (dry["dry_run"], dry["written"], dry["planned"]) == (True, 0, 2 * CARRIED)
    proc = run_cli("label", "carry", old, new, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["written"], result["by_role"], result["claims"]) == (2 * CARRIED, {"rater": 2 * CARRIED}, CARRIED)
    assert (result["origin_claims"], result["unmatched"], result["skipped"]) == (10, UNMATCHED_OLD, 0)
    assert (result["target_claims"], result["unlabelled"]) == (11, UNMATCHED_NEW)
    assert result["from"]["labels_head"] == old_head["head_sha256"] and result["from"]["labels_rows"] == 20
    assert digest_tree(old) == before  # OLD is only read

    rows = carried_rows(new)
    assert len(rows) == 2 * CARRIED and {r[0] for r in rows} == {"carry"} and {r[1] for r in rows} == {"ann", "bob"}
    db = sqlite3.connect(old / "labels.sqlite")
    old_digests = {r[0] for r in db.execute("SELECT row_sha256 FROM labels")}
    db.close()
    assert {r[3] for r in rows} <= old_digests and len({r[3] for r in rows}) == 2 * CARRIED
    gold = json.loads((tmp_path / "corpus" / "corpus.json").read_text())["gold_sha256"]
    assert {(r[4], r[5]) for r in rows} == {(old_head["head_sha256"], gold)}
    status = json.loads(run_cli("label", "status", new, "--json").stdout)  # the chain holds
    assert [c["labels"] for c in status["carried"]] == [2 * CARRIED]

    verdicts = json.loads(run_cli("label", "verdicts", new, "--json").stdout)["verdicts"]
    assert len(verdicts) == 6 and all(v["carried"] and v["basis"] == "agreed" for v in verdicts)  # 6 of 9 comments
    assert sorted((v["case_id"], v["label_class"], v["defect_ids"]) for v in verdicts) == [
        ("case-1", "false_positive", []), ("case-1", "true_finding", ["d-1"]), ("case-1", "true_finding", ["d-1"]),
        ("case-2", "false_positive", []), ("case-2", "true_finding", ["d-2"]), ("case-3", "false_positive", [])]
    # The new claims (a new remark, a claim moved to another line, one on another case) wait for people.
    queue = json.loads(run_cli("label", "queue", new, "--json").stdout)
    assert queue["by_status"] == {"agreed": CARRIED, "unlabelled": UNMATCHED_NEW}


def test_agreement_counts_labels_given_here_only(pair, tmp_path):
    old, new = pair
    assert run_cli("label", "carry", old, new).returncode == 0
    report = json.loads(run_cli("agreement", new, "--json", "--bootstrap", "50").stdout)
    assert (report["pairs"], report["carried"]) == ([], CARRIED)  # copies are no second judgement
    text = run_cli("agreement", new).stdout
    assert f"{CARRIED} claims carry labels from another run directory" in text

    queue = json.loads(run_cli("label", "queue", new, "--json").stdout)["queue"]
    rows = [{"comment_id": q["comment_id"], "part": q["part"], "class": "false_positive"} for q in queue]
    (tmp_path / "ann.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rows[0]["class"] = "unclear"
    (tmp_path / "bob.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for rater in ("ann", "bob"):
        assert run_cli("label", "import", new, tmp_path / f"{rater}.jsonl", "--rater", rater).returncode == 0
    (pair_report,) = json.loads(run_cli("agreement", new, "--json", "--bootstrap", "50").stdout)["pairs"]
    # ann and bob labelled 11 claims of NEW between them, 3 of them here: kappa is over those 3.
    assert (pair_report["raters"], pair_report["n"]) == (["ann", "bob"], UNMATCHED_NEW)
    assert pair_report["percent_agreement"] == pytest.approx(2 / 3, abs=1e-6)


def test_a_release_says_which_final_labels_were_carried(pair, tmp_path):
    old, new = pair
    assert run_cli("label", "carry", old, new).returncode == 0
    proc = run_cli("release", new, "--out", tmp_path / "release", "--partial")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "release" / "release.json").read_text())
    assert (manifest["claims"]["final"], manifest["claims"]["carried"]) == (CARRIED, CARRIED)
    lines = [json.loads(line) for line in (tmp_path / "release" / "labels.jsonl").read_text().splitlines()]
    assert len(lines) == CARRIED and all(line["carried"] for line in lines)


def test_labels_given_in_new_win_and_a_second_carry_writes_nothing(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    old = write_runs(tmp_path / "old", corpus)
    (tmp_path / "o").mkdir()
    label_all(old, tmp_path / "o", decide)
    # In OLD, ann and bob disagreed on one claim and ada settled it.
    keys = {ref.text: key for key, ref in _claims(old).items()}
    maybe = keys["maybe a problem here"]
    (tmp_path / "bob2.jsonl").write_text(json.dumps({"comment_id": maybe[0], "part": 0, "class": "unclear"}) + "\n")
    assert run_cli("label", "import", old, tmp_path / "bob2.jsonl", "--rater", "bob").returncode == 0
    (tmp_path / "ada.jsonl").write_text(json.dumps({"comment_id": maybe[0], "part": 0, "class": "false_positive",
                                                    "reason": "no problem is named"}) + "\n")  # fmt: skip
    assert run_cli("label", "import", old, tmp_path / "ada.jsonl", "--adjudicator", "ada").returncode == 0

    new = write_runs(tmp_path / "new", corpus)  # the same reviews: every claim identical
    unused = {ref.text: key for key, ref in _claims(new).items()}["unused import"]
    (tmp_path / "cat.jsonl").write_text(json.dumps({"comment_id": unused[0], "part": 0, "class": "unclear"}) + "\n")
    assert run_cli("label", "import", new, tmp_path / "cat.jsonl", "--rater", "cat").returncode == 0

    first = json.loads(run_cli("label", "carry", old, new, "--json").stdout)
    assert (first["claims"], first["skipped"], first["unmatched"]) == (9, 1, 0)
    assert first["by_role"] == {"rater": 18, "adjudicator": 1}
    verdicts = {v["comment_id"]: v for v in json.loads(run_cli("label", "verdicts", new, "--json").stdout)["verdicts"]}
    settled = [v for v in verdicts.values() if v["basis"] == "adjudicated"]
    assert [(v["label_class"], v["carried"]) for v in settled] == [("false_positive", True)]
    assert not any(v["case_id"] == "case-3" for v in verdicts.values())  # cat's label alone: not final, not overtaken
    report = json.loads(run_cli("agreement", new, "--json", "--bootstrap", "50").stdout)
    assert (report["adjudicated"], report["adjudication_s"], report["carried"]) == (0, 0, 9)

    second = json.loads(run_cli("label", "carry", old, new, "--json").stdout)
    assert (second["written"], second["claims"], second["skipped"]) == (0, 0, 10)
    assert len(carried_rows(new)) == 19


def _claims(rundir):
    from reviewbench.evidence.store import LabelStore

    with LabelStore(rundir) as store:
        store.packets()
        return store.claims()


def test_other_corpora_the_same_directory_and_no_labels_are_refused(pair, tmp_path, monkeypatch):
    old, new = pair
    monkeypatch.setitem(fixtures.CASES, "case-3", ([], "observed"))  # the same cases, other gold
    other = write_runs(tmp_path / "other", write_corpus(tmp_path / "corpus-2"), findings=FINDINGS)
    one_error(run_cli("label", "carry", old, other), 2, "the corpora differ")
    assert not (other / "labels.sqlite").exists()
    one_error(run_cli("label", "carry", old, old), 2, "is both the origin and the target")
    one_error(run_cli("label", "carry", new, old), 2, "has no labels (labels.sqlite)")
    one_error(run_cli("label", "carry", tmp_path / "nowhere", new), 1, "not a run directory")
