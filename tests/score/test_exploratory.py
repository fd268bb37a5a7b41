"""Cases gold marks ``exploratory`` (issue 32, item 7) stay out of the headline, the gates
and the comparisons, like the natural stratum, and are scored beside it as one group.

Defect cases d0-d3 (each with its mirror) and two controls; condition A names the defect on
d0 and d3, and d3 is exploratory: the headline is d0-d2 (1 of 3), the exploratory group d3
and its mirror (1 of 1).
"""

from __future__ import annotations

import hashlib
import json

from reviewbench.records import GoldRecord
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import dump_jsonl, read_corpus

from ..conftest import run_cli
from .runsets import Reviewer, write_corpus, write_runs


def _mark_exploratory(corpus, case_id):
    """Rewrite the gold with ``case_id`` exploratory, and its digest in corpus.json."""
    gold = [GoldRecord.model_validate_json(line) for line in (corpus / "gold.jsonl").read_text().splitlines()]
    gold = [g.model_copy(update={"exploratory": True}) if g.case_id == case_id else g for g in gold]
    data = dump_jsonl(gold)
    (corpus / "gold.jsonl").write_bytes(data)
    meta = json.loads((corpus / "corpus.json").read_text())
    meta["gold_sha256"] = hashlib.sha256(data).hexdigest()
    (corpus / "corpus.json").write_text(json.dumps(meta))
    return data


def test_exploratory_cases_are_scored_apart_from_the_headline(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", defects=4, controls=2)
    before = (corpus / "gold.jsonl").read_bytes()
    data = _mark_exploratory(corpus, "d3")
    # Only the marked line changed: the field is written when true, never as false.
    assert [a for a, b in zip(before.splitlines(), data.splitlines(), strict=True) if a != b] == [
        before.splitlines()[[g.case_id for g in read_corpus(corpus).gold].index("d3")]]
    assert b'"exploratory":true' in data and data.count(b"exploratory") == 1
    rundir = write_runs(tmp_path / "runs", corpus, {"A": Reviewer(finds={0, 3})}, defects=4, controls=2)
    result = score_run(rundir, ScoreOptions(bootstrap=200, overrides={}, labels={}))
    a = result.conditions["A"]
    assert (a.metrics["defect_recall"].num, a.metrics["defect_recall"].den) == (1, 3)
    assert a.valid_defect_cases == 3 and result.corpus.eligible_defect_cases == 3
    # The clean cases of the headline: two controls and the three mirrors of d0-d2.
    assert a.metrics["false_alarm_rate"].den == 5
    group = a.holdout["exploratory"]
    assert group.cases == 1  # d3 and its mirror: one cluster
    assert (group.metrics["defect_recall"].num, group.metrics["defect_recall"].den) == (1, 1)
    assert group.metrics["false_alarm_rate"].den == 1  # d3's mirror
    assert (result.corpus.holdout_cases, result.corpus.exploratory_cases) == (2, 2)
    assert "exploratory" not in a.breakdown["stratum"]  # not a stratum: beside the headline only
    assert result.analysis.holdout_strata == []
    board = run_cli("score", rundir, "--details", "--bootstrap", "200")
    assert board.returncode == 0, board.stderr
    assert "exploratory (holdout, 1 case)" in board.stdout


def test_case_add_marks_a_case_exploratory(git_repo, tmp_path):
    repo = git_repo()
    base = repo.commit("init", {"calc.py": "def add(a, b):\n    return a + b\n"})
    head = repo.commit("change", {"calc.py": "def add(a, b):\n    return a - b\n"})
    corpus = write_corpus(tmp_path / "corpus", defects=1, controls=1)
    gold = tmp_path / "gold.toml"
    gold.write_text('expect_finding = true\n[[defect]]\nclass = "sign"\n[[defect.location]]\npath = "calc.py"\n'
                    'symbol = "add"\n')
    out = run_cli("case", "add", corpus, "--repo", repo.path, "--base", base, "--head", head, "--gold", gold,
                  "--exploratory", "--json")
    assert out.returncode == 0, out.stderr
    added = json.loads(out.stdout)
    assert added["exploratory"] is True
    assert next(g for g in read_corpus(corpus).gold if g.case_id == added["case_id"]).exploratory is True
