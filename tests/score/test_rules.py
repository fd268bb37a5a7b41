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


# -- gating on one rule's recall ----------------------------------------------------------------

RULE_GATES = """\
analysis = "end_to_end"
min_defect_cases = 2
min_controls = 0
max_interval_width = 1.0
[[tier]]
name = "rule_keeper"
authority = "points at R-01 violations"
when = [{ metric = "defect_recall@rule:R-01", op = ">=", value = 0.9 }]
permitted = ["flag R-01 violations"]
[fallback]
name = "none"
authority = "none"
"""


def _located_only(path):
    """A finding at the defect's lines that names nothing of it: located, not identified."""
    return [Finding(path=path, line=3, claim="consider a comment here", raw=f"{path}:3 consider a comment here")]


def _rule_store(tmp_path, corpus, said):
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": n} for n in said]})})  # fmt: skip
    scoped = ("c" * 64, {"services/ledger/AGENTS.md": "1" * 40})
    guidance = {"A": {c: (None, None) for c in PATHS}, "B": {c: ("b" * 64, {"AGENTS.md": "2" * 40}) for c in PATHS},
                "C": {"ledger": scoped, "web": ("c" * 64, {})}, "D": {c: ("d" * 64, {"AGENTS.md": "3" * 40}) for c in PATHS}}  # fmt: skip
    for name, findings in said.items():
        for cid, path in PATHS.items():
            store.record(_row(name, cid, findings(cid, path), gold_sha, guidance[name][cid]), None)
            store.record(_row(name, mirror_id(cid), [], gold_sha, guidance[name][cid]), None)
    store.close()
    return out


def test_a_tier_gated_on_one_rule_s_recall_counts_only_the_pairs_the_guidance_reaches(tmp_path, corpus):
    """By hand, the gate defect_recall@rule:R-01 >= 0.9 on end-to-end figures:
    A (no guidance, silent): 0/2 identified, 0/2 located -> fails.
    B (root AGENTS.md, flags both): 2/2 -> passes.
    C (services/ledger/AGENTS.md, flags the ledger case): 1/1 -> passes; the web defect is
      not eligible for C (its guidance does not reach web/), though C's plain defect_recall is 1/2.
    D (root AGENTS.md, comments at both defects naming neither): 0/2 identified, 2/2 located ->
      needs labels, and the label queue names D's two comments."""
    said = {"A": lambda cid, path: [], "B": lambda cid, path: _bypass(path),
            "C": lambda cid, path: _bypass(path) if cid == "ledger" else [],
            "D": lambda cid, path: _located_only(path)}
    out = _rule_store(tmp_path, corpus, said)
    gates = tmp_path / "gates.toml"
    gates.write_text(RULE_GATES)
    result = score_run(out, ScoreOptions(bootstrap=50, gates=gates))
    scored = result.as_json()["conditions"]

    def check(name):
        (c,) = scored[name]["decision"]["gates"]["rule_keeper"]
        return c["observed"], c["upper"], c["passed"]

    assert check("A") == (0.0, 0.0, False)
    assert check("B") == (1.0, 1.0, True)
    assert check("C") == (1.0, 1.0, True)
    assert check("D") == (0.0, 1.0, None)
    assert [scored[n]["decision"]["tier"] for n in "ABC"] == ["none", "rule_keeper", "rule_keeper"]
    assert scored["D"]["decision"]["status"] == "needs_labels"
    c = scored["C"]["metrics"]
    assert (c["defect_recall"]["num"], c["defect_recall"]["den"]) == (1, 2)  # the plain figure counts web
    located = scored["D"]["metrics"]["located_recall@rule:R-01"]
    assert (located["num"], located["den"], located["not_eligible"]) == (2, 2, 0)
    # The comments labels could still turn: D's two, on eligible R-01 pairs.
    from reviewbench.score.bounds import in_metric, open_pairs

    runs = {}
    store = RunStore(out / "runs.sqlite")
    try:
        runs = {r.run_id: r for r in store.runs()}
    finally:
        store.close()
    from reviewbench.score import eligible_cases
    from reviewbench.store.corpus import read_corpus

    pairs = open_pairs(result.verdicts, eligible_cases(read_corpus(corpus), False), runs)
    mine = [p for p in pairs if p.condition == "D" and in_metric(p, "defect_recall@rule:R-01")]
    assert sorted(p.case_id for p in mine) == ["ledger", "web"]
    assert not [p for p in pairs if in_metric(p, "defect_recall@rule:R-02")]


def test_the_web_defect_out_of_c_s_scope_does_not_count_against_its_rule_gate(tmp_path, corpus):
    """C, silent on web (outside its guidance) and right on ledger: 1/1 eligible. A gate on the
    plain defect_recall (1/2 = 0.5) fails where the rule gate passes."""
    out = _rule_store(tmp_path, corpus, {"C": lambda cid, path: _bypass(path) if cid == "ledger" else []})
    gates = tmp_path / "gates.toml"
    gates.write_text(RULE_GATES.replace('when = [{ metric = "defect_recall@rule:R-01"',
                                        'when = [{ metric = "defect_recall"'))
    plain = score_run(out, ScoreOptions(bootstrap=50, gates=gates)).as_json()["conditions"]["C"]
    assert plain["decision"]["gates"]["rule_keeper"][0]["passed"] is False
    gates.write_text(RULE_GATES)
    by_rule = score_run(out, ScoreOptions(bootstrap=50, gates=gates)).as_json()["conditions"]["C"]
    assert by_rule["decision"]["gates"]["rule_keeper"][0]["passed"] is True


def test_rule_gates_are_checked_against_the_corpus_and_refused_where_there_is_no_pair(tmp_path, corpus):
    from reviewbench.errors import UsageError
    from reviewbench.score.gate import load_gate_rules

    out = _rule_store(tmp_path, corpus, {"A": lambda cid, path: []})
    gates = tmp_path / "gates.toml"
    gates.write_text(RULE_GATES.replace("rule:R-01", "rule:R-99"))
    with pytest.raises(UsageError, match=r"unknown rule in 'defect_recall@rule:R-99'; the corpus's rules: R-01"):
        score_run(out, ScoreOptions(bootstrap=50, gates=gates))
    gates.write_text(RULE_GATES.replace("defect_recall@rule", "precision@rule"))
    with pytest.raises(UsageError, match="only defect_recall and located_recall are scored per rule"):
        score_run(out, ScoreOptions(bootstrap=50, gates=gates))
    gates.write_text(RULE_GATES + '[[compare]]\nname = "B over A"\nmetric = "defect_recall@rule:R-01"\n'
                                  'diff = ["B", "A"]\n')
    with pytest.raises(UsageError, match="cannot be compared between conditions"):
        score_run(out, ScoreOptions(bootstrap=50, gates=gates))
    rules = tmp_path / "gate.toml"
    rules.write_text('[[rules]]\nmetric = "defect_recall@rule:R-01"\nmax_drop = 0.05\n')
    with pytest.raises(UsageError, match="cannot be gated between run directories"):
        load_gate_rules(rules)


def test_a_rule_gate_on_a_condition_without_an_eligible_pair_is_insufficient_evidence(tmp_path, corpus):
    """E's guidance sits under docs/: no R-01 defect is eligible (0 pairs, 2 not eligible),
    so the gate has nothing to measure: insufficient evidence, never a pass or a miss."""
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": "E"}]})})  # fmt: skip
    for cid, path in PATHS.items():
        store.record(_row("E", cid, _bypass(path), gold_sha, ("e" * 64, {"docs/AGENTS.md": "4" * 40})), None)
        store.record(_row("E", mirror_id(cid), [], gold_sha, ("e" * 64, {"docs/AGENTS.md": "4" * 40})), None)
    store.close()
    gates = tmp_path / "gates.toml"
    gates.write_text(RULE_GATES)
    scored = score_run(out, ScoreOptions(bootstrap=50, gates=gates)).as_json()["conditions"]["E"]
    figure = scored["metrics"]["defect_recall@rule:R-01"]
    assert (figure["num"], figure["den"], figure["not_eligible"], figure["value"]) == (0, 0, 2, None)
    assert scored["decision"]["status"] == "insufficient"
    assert "defect_recall@rule:R-01 could not be measured" in scored["decision"]["reason"]
