"""The severity basis: a structured reason for each primary defect's severity; a primary
defect case without one is flagged by score and show (nothing is scored differently)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from reviewbench.records import Defect, GoldRecord, Provenance, SeverityBasis
from reviewbench.score import ScoreOptions, score_run
from reviewbench.score.severity import primary, severity_basis_flag
from reviewbench.store.corpus import sha256_file

from .runsets import Reviewer, write_corpus, write_runs

BASIS = {"asset": "invoices", "trigger": "a discounted order", "consequence": "wrong totals billed",
         "scope": "every discounted order", "controls": "no test sums a discounted order"}  # fmt: skip


def _corpus(tmp_path):
    """d0 with a structured basis, d1 with a one-line basis, d2 with none; their mirrors and
    2 controls are no primary cases. By hand: 3 primary, 1 structured, missing d1 and d2."""
    corpus = write_corpus(tmp_path / "corpus", defects=3, controls=2)
    gold_path = corpus / "gold.jsonl"
    lines = [json.loads(line) for line in gold_path.read_text().splitlines()]
    for record in lines:
        if record["case_id"] == "d0":
            record["defects"][0]["severity_basis"] = BASIS
        if record["case_id"] == "d1":
            record["defects"][0]["severity_basis"] = "P1: wrong totals"
    gold_path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    meta = json.loads((corpus / "corpus.json").read_text())
    meta["gold_sha256"] = sha256_file(gold_path)
    (corpus / "corpus.json").write_text(json.dumps(meta))
    return corpus


def test_score_and_show_flag_primary_cases_without_a_structured_basis(tmp_path, cli):
    corpus = _corpus(tmp_path)
    rundir = write_runs(tmp_path / "runs", corpus, {"A": Reviewer(finds={0})}, defects=3, controls=2)
    result = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()
    assert result["severity_basis"] == {"primary_cases": 3, "structured": 1, "missing": ["d1", "d2"]}
    board = " ".join(cli("score", rundir, "--bootstrap", "200").stdout.split())
    assert "SEVERITY BASIS missing on 2/3 primary defect cases" in board
    shown = json.loads(cli("show", corpus, "--json").stdout)["severity_basis"]
    assert shown == {"primary_cases": 3, "structured": 1, "missing": ["d1", "d2"]}
    assert "SEVERITY BASIS missing on 2 of 3 primary defect cases" in " ".join(cli("show", corpus).stdout.split())


def test_primary_cases_and_a_complete_basis():
    defect = Defect(defect_id="x-1", defect_class="c", locations=[], severity_basis=SeverityBasis(**BASIS))

    def gold(**kw):
        values = {"case_id": "x", "stratum": "fix_reversal", "expect_finding": True, "defects": [defect],
                  "provenance": Provenance(), **kw}  # fmt: skip
        return GoldRecord(**values)

    assert primary(gold())
    for other in (gold(stratum="natural"), gold(exploratory=True), gold(variant_of="y"), gold(stratum="mirror"),
                  gold(expect_finding=False, defects=[])):  # fmt: skip
        assert not primary(other)
    assert severity_basis_flag([gold(), gold(stratum="natural")]) == {"primary_cases": 1, "structured": 1,
                                                                      "missing": []}  # fmt: skip
    with pytest.raises(ValidationError):  # every field, or no structured basis
        SeverityBasis(**{k: v for k, v in BASIS.items() if k != "controls"})
    with pytest.raises(ValidationError):
        SeverityBasis(**{**BASIS, "scope": ""})
