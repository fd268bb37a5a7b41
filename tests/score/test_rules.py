"""Per-rule recall and rule eligibility, by hand on a small store (corpus and runs written for real).

Two R-01 violations, one under services/ledger/ and one under web/, each with its mirror.
A places no guidance (the baseline: every rule defect is an opportunity), B a root AGENTS.md
(covers both), C one under services/ledger/ (covers only the ledger case: the web defect is
a scoping defect of the rules for C, not C's miss).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbench.records import (
    Case,
    CorpusCounts,
    CorpusMeta,
    Defect,
    Finding,
    GoldRecord,
    Location,
    Provenance,
    RepoInfo,
    RunRow,
    Validation,
)
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunStore

from .mirrors import mirror_id, paired

PATHS = {"ledger": "services/ledger/post.py", "web": "web/page.py"}


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "corpus"
    writer = CorpusWriter(out)
    with writer:
        for cid, path in PATHS.items():
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff", paths=[path],
                        language="python")  # fmt: skip
            defect = Defect(defect_id=f"{cid}-d1", defect_class="rule_violation", rule_id="R-01",
                            locations=[Location(path=path, start_line=3, end_line=4)],
                            removed_identifiers=["ledger_helper"])  # fmt: skip
            gold = GoldRecord(case_id=cid, stratum="rule_violation", expect_finding=True, defects=[defect],
                              provenance=Provenance(), validation=Validation(status="observed"))  # fmt: skip
            for record in paired(case, gold):
                writer.add(*record, b"")
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=4, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return out


def _row(condition, case_id, findings, gold_sha, guidance):
    sha, blobs = guidance
    return RunRow(
        run_id=f"{condition}-{case_id}", case_id=case_id, condition=condition, repetition=0, variant="original",
        state="completed_findings" if findings else "completed_no_findings", attempts=1, cached=False,
        params={}, prompt_sha256="p" * 64, guidance_sha256=sha, gold_sha256=gold_sha, tool_version="test",
        raw_output="x", cache_key=f"k-{condition}-{case_id}", findings=findings, guidance_blobs=blobs,
    )  # fmt: skip


def _bypass(path):
    return [Finding(path=path, line=3, claim="bypasses `ledger_helper`", raw=f"{path}:3 bypasses `ledger_helper`")]


def test_per_rule_recall_counts_only_the_rule_defects_a_condition_s_guidance_reaches(tmp_path, corpus):
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": n} for n in "ABC"]})})  # fmt: skip
    scoped = {"services/ledger/AGENTS.md": "1" * 40}
    guidance = {"A": {c: (None, None) for c in PATHS},
                "B": {c: ("b" * 64, {"AGENTS.md": "2" * 40}) for c in PATHS},
                "C": {"ledger": ("c" * 64, scoped), "web": ("c" * 64, {})}}  # fmt: skip
    said = {"A": set(), "B": {"ledger", "web"}, "C": {"ledger"}}
    for name in "ABC":
        for cid, path in PATHS.items():
            store.record(_row(name, cid, _bypass(path) if cid in said[name] else [], gold_sha, guidance[name][cid]),
                         None)  # fmt: skip
            store.record(_row(name, mirror_id(cid), [], gold_sha, guidance[name][cid]), None)
    store.close()
    scored = score_run(out, ScoreOptions(bootstrap=50)).as_json()["conditions"]

    def rule(name):
        m = scored[name]["metrics"]["defect_recall@rule:R-01"]
        return m["num"], m["den"], m["not_eligible"]

    # A: 0 found of 2 opportunities; B: 2 of 2; C: 1 of 1, the web defect out of its scope.
    assert (rule("A"), rule("B"), rule("C")) == ((0, 2, 0), (2, 2, 0), (1, 1, 1))
    # The plain recall still counts every defect: C misses the web one there.
    recall = scored["C"]["metrics"]["defect_recall"]
    assert (recall["num"], recall["den"]) == (1, 2)
    low, high = scored["B"]["metrics"]["defect_recall@rule:R-01"]["lo"], scored["B"]["metrics"]["defect_recall@rule:R-01"]["hi"]
    assert 0 < low < 1 == high  # Wilson: never a point interval at 2/2


def test_the_scoreboard_shows_rule_recall_and_flags_trees_that_differ_across_conditions(tmp_path, corpus):
    from reviewbench.records import PullRequest

    from ..conftest import run_cli

    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": n} for n in "AB"]})})  # fmt: skip
    for name, tree in (("A", "a" * 40), ("B", "b" * 40)):
        for cid, path in PATHS.items():
            pull = PullRequest(kind="github", repo="o/r", number=1, head_sha="0" * 40,
                               case_tree=tree if cid == "web" else "c" * 40)  # fmt: skip
            row = _row(name, cid, _bypass(path), gold_sha, (None, None)).model_copy(update={"pull_request": pull})
            store.record(row, None)
            store.record(_row(name, mirror_id(cid), [], gold_sha, (None, None)), None)
    store.close()
    printed = run_cli("score", out, "--bootstrap", "100", "--details")
    assert printed.returncode == 0, printed.stderr
    assert "TREES DIFFER: 1 case(s)" in printed.stdout and "web" in printed.stdout
    assert "rule:R-01" in printed.stdout and "2/2" in printed.stdout
    differing = score_run(out, ScoreOptions(bootstrap=50)).as_json()["analysis"]["forge_tree_differences"]
    assert differing == {"web": {"A": ["a" * 40], "B": ["b" * 40]}}
