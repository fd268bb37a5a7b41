"""``export --manifest``: the SHA-256 of every diff, validation log and raw review, checked
against hashes computed here from the files and the run store, and against its schema."""

from __future__ import annotations

import hashlib
import json
import os

from jsonschema import Draft202012Validator

from reviewbench.store.runs import RunStore

from ..conftest import run_cli
from .conftest import CASE_IDS, RUNS, write_corpus, write_runs


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_manifest_hashes_every_diff_log_and_raw_review(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    rundir = write_runs(tmp_path / "runs", corpus)
    (corpus / "logs").mkdir()
    (corpus / "logs" / "case-a1.log").write_bytes(b"=== status: observed\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not the corpus's")
    os.symlink(secret, corpus / "logs" / "case-a2.log")  # listed as a link, never read
    out = tmp_path / "manifest.json"
    done = run_cli("export", rundir, "--manifest", "--out", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(out.read_text())
    schema = json.loads(run_cli("schema", "manifest").stdout)
    Draft202012Validator(schema).validate(manifest)

    by = {(a["kind"], a.get("case_id"), a.get("run_id"), a.get("path")): a for a in manifest["artefacts"]}
    diffs = [a for a in manifest["artefacts"] if a["kind"] == "diff"]
    assert len(diffs) == len(CASE_IDS)  # every case's diff (the fixture's are empty)
    assert {a["sha256"] for a in diffs} == {_sha(b"")}
    log = by[("log", "case-a1", None, "logs/case-a1.log")]
    assert (log["sha256"], log["bytes"]) == (_sha(b"=== status: observed\n"), 21)
    link = by[("link", "case-a2", None, "logs/case-a2.log")]
    assert link["sha256"] is None and link["bytes"] is None
    store = RunStore(rundir / "runs.sqlite")
    runs = {r.run_id: r for r in store.runs()}
    store.close()
    reviews = [a for a in manifest["artefacts"] if a["kind"] == "raw_review"]
    with_output = [r for r in runs.values() if r.raw_output is not None]
    assert len(reviews) == len(with_output) < len(RUNS)  # failed runs have no review to hash
    review = next(a for a in reviews if a["run_id"] == "A-case-a1-0")
    assert review["sha256"] == _sha(runs["A-case-a1-0"].raw_output.encode()) and review["condition"] == "A"
    gold = by[("corpus", None, None, "gold.jsonl")]
    assert gold["sha256"] == _sha((corpus / "gold.jsonl").read_bytes())
    assert by[("rundir", None, None, "runs.sqlite")]["sha256"] == _sha((rundir / "runs.sqlite").read_bytes())
    assert manifest["counts"]["diff"] == len(CASE_IDS) and manifest["counts"]["link"] == 1
    assert manifest["gold_sha256"] == json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    # To stdout as well, the same document.
    printed = run_cli("export", rundir, "--manifest")
    assert printed.returncode == 0 and json.loads(printed.stdout) == manifest


def test_manifest_refuses_a_format_and_a_missing_run_directory(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))
    both = run_cli("export", rundir, "--manifest", "--format", "csv")
    assert both.returncode == 2 and "--manifest writes one JSON document" in both.stderr
    missing = run_cli("export", tmp_path / "nowhere", "--manifest")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
