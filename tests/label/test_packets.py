"""Packets: de-identified, split into atomic claims, in a fixed random order, with gold defects."""

from __future__ import annotations

import json

from reviewbench.evidence.packets import SPLIT_OVER
from reviewbench.label import LabelStore, export_packets, split_claim

from .conftest import CONDITIONS, LONG, MODEL, PROMPT_SHA, run_id


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_one_packet_per_review_with_findings(rundir, tmp_path):
    out = tmp_path / "packets.jsonl"
    assert export_packets(rundir, out) == 5
    packets = _read(out)
    assert sorted(len(p["claims"]) for p in packets) == [1, 1, 2, 3, 3]
    assert len({p["packet_id"] for p in packets}) == 5
    by_defects = {tuple(d["defect_id"] for d in p["defects"]) for p in packets}
    assert by_defects == {("d-1",), ("d-2", "d-3"), ()}
    case1 = next(p for p in packets if [d["defect_id"] for d in p["defects"]] == ["d-1"])
    assert case1["defects"][0] == {"defect_id": "d-1", "description": "slice drops the last item (off by one)",
                                   "locations": [{"path": "app/case-1.py", "start_line": 2, "end_line": 2}]}
    assert case1["tests"] == {"status": "observed", "test_cmd": "pytest -q", "exit_code": 1,
                              "failing_tests": ["tests/test_parse.py::test_last"],
                              "output": "=== patched (suite) run 1\nFAILED tests/test_parse.py::test_last - "
                                        "assert [1, 2] == [1, 2, 3]\n=== status: observed\n"}
    case2 = next(p for p in packets if [d["defect_id"] for d in p["defects"]] == ["d-2", "d-3"])
    assert case2["tests"]["output"] is None  # no log for it
    assert case1["diff"].startswith("diff --git a/app/case-1.py")


def test_the_log_directory_is_validations_and_a_symlinked_log_is_not_followed(rundir, tmp_path):
    from reviewbench.evidence.packets import LOG_DIR
    from reviewbench.validate._api import LOG_DIR as VALIDATION_LOG_DIR

    assert LOG_DIR == VALIDATION_LOG_DIR
    corpus = rundir.parent / "corpus"
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    (corpus / "logs" / "case-1.log").unlink()
    (corpus / "logs" / "case-1.log").symlink_to(secret)
    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    assert "TOP SECRET" not in out.read_text()


def test_nothing_in_a_packet_names_the_condition_model_prompt_or_run(rundir, tmp_path):
    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    text = out.read_text()
    for secret in (*CONDITIONS, MODEL, PROMPT_SHA[:16], "repetition", "condition", "model"):
        assert secret not in text
    for case_id in ("case-1", "case-2", "case-3"):
        for condition in CONDITIONS:
            assert run_id(case_id, condition) not in text
    # two conditions on one case: the same packet apart from ids and claims
    packets = [p for p in _read(out) if p["defects"] and p["defects"][0]["defect_id"] == "d-1"]
    assert len(packets) == 2
    strip = [{k: v for k, v in p.items() if k not in ("packet_id", "claims")} for p in packets]
    assert strip[0] == strip[1]


def test_long_comments_are_split_keeping_the_comment_id(rundir, tmp_path):
    assert len(LONG) > SPLIT_OVER
    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    long_packet = next(p for p in _read(out) if any(c["parts"] == 3 for c in p["claims"]))
    claims = long_packet["claims"]
    assert len({c["comment_id"] for c in claims}) == 1
    assert [c["part"] for c in claims] == [0, 1, 2]
    assert claims[0]["text"].startswith("The slice now stops one item early")
    assert claims[2]["text"].startswith("Restore the old bound")


def test_split_claim_rules():
    assert split_claim("short claim. Another sentence.") == ["short claim. Another sentence."]
    assert split_claim("- first issue\n- second issue") == ["first issue", "second issue"]
    assert split_claim("1. one thing\n2) other thing") == ["one thing", "other thing"]
    one_long_sentence = "word " * 80
    assert split_claim(one_long_sentence) == [one_long_sentence.strip()]


def test_order_and_ids_are_fixed_across_exports_and_random_across_run_directories(rundir, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    export_packets(rundir, first)
    export_packets(rundir, second)
    assert first.read_bytes() == second.read_bytes()
    # the order follows neither the condition nor the case: it is keyed by the store's secret
    with LabelStore(rundir) as store:
        claims = store.claims()
    assert {ref.source_id for ref in claims.values()} >= {f"{run_id('case-2', CONDITIONS[0])}:{i}" for i in range(3)}
    assert all(ref.comment_id.startswith("c") and len(ref.comment_id) == 13 for ref in claims.values())


def test_a_directory_without_runs_is_one_clear_error(tmp_path):
    import pytest

    from reviewbench.errors import CorpusError

    with pytest.raises(CorpusError, match="not a run directory"):
        export_packets(tmp_path, tmp_path / "p.jsonl")


def test_packets_and_label_rows_satisfy_their_published_schemas(rundir, tmp_path):
    from jsonschema import Draft202012Validator

    from reviewbench.cli.schema import json_schema
    from reviewbench.label import LabelRow

    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    packets = Draft202012Validator(json_schema("packets"))
    for packet in _read(out):
        packets.validate(packet)
    row = LabelRow.model_validate({"comment_id": "c1", "class": "true_finding", "defect_id": "d-1",
                                   "fields": {"location": True}, "triage_s": 3.5})  # fmt: skip
    Draft202012Validator(json_schema("labels")).validate(row.model_dump(mode="json", by_alias=True))
    assert "class" in json_schema("labels")["properties"]


# -- identical claims of repetitions: labelled once, applied to every copy (issue 27, item 7) ----


def _label_everything(rundir, tmp_path, decide=lambda claim: {"class": "false_positive"}):
    from reviewbench.label import import_labels

    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    rows = [{"comment_id": c["comment_id"], "part": c["part"], **decide(c)} for p in _read(out) for c in p["claims"]]
    for rater in ("ann", "bob"):
        path = tmp_path / f"{rater}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        import_labels(rundir, path, rater=rater)
    return rows


def test_a_three_repetition_run_exports_each_distinct_claim_once(tmp_path):
    from .conftest import FINDINGS, write_corpus, write_runs

    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), repeats=3)
    out = tmp_path / "packets.jsonl"
    assert export_packets(rundir, out) == 5  # as with one repetition: 15 reviews, 5 distinct
    packets = _read(out)
    texts = [c["text"] for p in packets for c in p["claims"]]
    assert len(texts) == 10 and len({(c["comment_id"], c["part"]) for p in packets for c in p["claims"]}) == 10
    assert sum(len(claims) for claims in FINDINGS.values()) + 2 == 10  # LONG is split in three
    with LabelStore(rundir) as store:
        copies = store.claim_sources()
    assert len(copies) == 10 and all(len(refs) == 3 for refs in copies.values())
    assert all(len({r.run_id for r in refs}) == 3 and len({r.case_id for r in refs}) == 1 for refs in copies.values())


def test_a_repetition_with_a_new_claim_adds_only_that_claim(tmp_path):
    from .conftest import write_corpus, write_runs

    extra = {(CONDITIONS[0], "case-1", 2): ["a remark only the third repetition makes"],
             (CONDITIONS[0], "case-2", 1): ["  Lookup uses the WRONG   key "]}  # the same claim, spelled otherwise
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), repeats=3, extra=extra)
    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    packets = _read(out)
    texts = [c["text"] for p in packets for c in p["claims"]]
    assert len(texts) == 12 and texts.count("a remark only the third repetition makes") == 1
    # said twice in one review (repetition 1 of case-2): the second copy stays a claim of its own,
    # which a rater may call a duplicate; the first is the claim every repetition makes
    with LabelStore(rundir) as store:
        copies = store.claim_sources()
    wrong_key = [refs for refs in copies.values() if " ".join(refs[0].text.casefold().split()) == "lookup uses the wrong key"]
    assert sorted(len(refs) for refs in wrong_key) == [1, 3]
    # every review's claims stay together: each packet is one review's, in full or what is new in it
    with LabelStore(rundir) as store:
        shown = store.claims()
    for packet in packets:
        assert len({ref.run_id for ref in shown.values() if ref.packet_id == packet["packet_id"]}) == 1


def test_one_label_reaches_every_identical_comment_and_the_score(tmp_path):
    from reviewbench.evidence.overrides import score_overrides
    from reviewbench.label import agreement, human_verdicts

    from .conftest import write_corpus, write_runs

    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), repeats=3)
    rows = _label_everything(rundir, tmp_path)
    assert len(rows) == 10
    verdicts = human_verdicts(rundir)
    comments = {f"{run_id(case, cond, rep)}:{i}" for (cond, case), claims in
                __import__("tests.label.conftest", fromlist=["FINDINGS"]).FINDINGS.items()
                for rep in range(3) for i in range(len(claims))}  # fmt: skip
    assert {v.comment_id for v in verdicts} == comments and len(comments) == 24
    assert set(score_overrides(rundir)) == comments
    with LabelStore(rundir) as store:
        (pair,) = agreement(store, resamples=10).pairs
    assert pair.classes.n == 10  # distinct claims, not copies


def test_a_claim_keeps_its_id_and_labels_when_repetitions_are_added(tmp_path):
    from reviewbench.label import human_verdicts

    from .conftest import write_corpus, write_runs

    corpus = write_corpus(tmp_path / "corpus")
    rundir = write_runs(tmp_path / "runs", corpus)
    _label_everything(rundir, tmp_path)
    with LabelStore(rundir) as store:
        before = set(store.claims())
    write_runs(tmp_path / "runs", corpus, repeats=3)  # two more repetitions recorded later
    out = tmp_path / "again.jsonl"
    assert export_packets(rundir, out) == 5
    assert {(c["comment_id"], c["part"]) for p in _read(out) for c in p["claims"]} == before
    assert len(human_verdicts(rundir)) == 24  # the earlier labels cover the new copies


def test_a_store_written_before_claims_were_merged_keeps_its_labelled_ids(tmp_path):
    """A store whose claims are one per comment (as exported before): re-exported, every group
    of identical comments keeps the id that was labelled, and its labels cover the copies."""
    import hmac

    from reviewbench.label import human_verdicts

    from .conftest import write_corpus, write_runs

    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), repeats=2)
    with LabelStore(rundir) as store:
        store.packets()
        secret = store.secret()
        old = store.db.execute("SELECT s.source_id, s.run_id, s.idx, s.case_id, c.parts, c.part, c.text, c.packet_id "
                               "FROM claim_sources s JOIN claims c USING (comment_id)").fetchall()  # fmt: skip
        store.db.execute("DELETE FROM claim_sources")
        store.db.execute("DELETE FROM claims")
        own = {}
        for source, run, idx, case, parts, part, text, packet in old:  # the old scheme: an id per comment
            own[source] = "c" + hmac.new(secret, f"comment\0{source}".encode(), "sha256").hexdigest()[:12]
            store.db.execute("INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (own[source], part, parts, source, run, idx, case, packet, text))  # fmt: skip
    # only the copies of repetition 1 were labelled
    from reviewbench.label import import_labels

    second = {run_id(case, cond, 1) for case in ("case-1", "case-2", "case-3") for cond in CONDITIONS}
    rows = [{"comment_id": own[source], "part": part, "class": "false_positive"}
            for source, run, _, _, _, part, _, _ in old if run in second]  # fmt: skip
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for rater in ("ann", "bob"):
        import_labels(rundir, path, rater=rater)
    out = tmp_path / "packets.jsonl"
    export_packets(rundir, out)
    shown = {c["comment_id"] for p in _read(out) for c in p["claims"]}
    assert shown == {r["comment_id"] for r in rows}
    assert len(human_verdicts(rundir)) == 16  # 8 comments × 2 repetitions
