"""Open strata, the seed-003 gold fields and per-case source dates (issue 15)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from reviewbench.config import MineConfig
from reviewbench.mine import mine_corpus
from reviewbench.records import Defect, GoldRecord, Provenance, Stratum
from reviewbench.store.corpus import read_corpus


def _gold(stratum: object, **extra: object) -> GoldRecord:
    values: dict = {"defects": [], **extra}
    return GoldRecord(case_id="case-1", stratum=stratum, expect_finding=True, provenance=Provenance(), **values)


def test_a_user_defined_stratum_is_accepted_and_kept():
    assert _gold("billing_rules").stratum == "billing_rules"


def test_a_builtin_stratum_member_is_stored_as_its_plain_name():
    gold = _gold(Stratum.RULE_VIOLATION)
    assert gold.stratum == "rule_violation" and type(gold.stratum) is str
    assert '"stratum":"rule_violation"' in gold.model_dump_json()


@pytest.mark.parametrize("bad", ["", "Natural", "has space", "9lives", "x" * 41, "../up"])
def test_a_malformed_stratum_is_refused(bad):
    with pytest.raises(ValidationError, match="stratum"):
        _gold(bad)


def test_pair_and_defect_fields_round_trip_through_json():
    defect = Defect(defect_id="d1", **{"class": "rule"}, locations=[], severity_basis="P1: wrong totals reach invoices",
                    trigger="an empty cart", safe_path="totals are recomputed upstream",
                    acceptable_descriptions=["total is wrong for empty carts", "sum skips the first item"])  # fmt: skip
    gold = _gold("rule_violation", pair_id="pair-7", defects=[defect], source_date="2024-05-01T10:00:00+00:00")
    again = GoldRecord.model_validate_json(gold.model_dump_json(by_alias=True))
    assert again == gold
    assert again.defects[0].acceptable_descriptions[1] == "sum skips the first item"
    assert again.pair_id == "pair-7"


def test_fix_reversals_carry_the_fix_commit_time_and_synthetic_cases_none(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"calc.py": "def total(xs):\n    acc = 0\n    for x in xs:\n        acc += x\n"
                                              "    return acc\n\n\ndef double(v):\n    return v * 2\n"})  # fmt: skip
    fix = repo.commit("Fix double", {"calc.py": "def total(xs):\n    acc = 0\n    for x in xs:\n        acc += x\n"
                                                "    return acc\n\n\ndef double(v):\n    return v + v\n"})  # fmt: skip
    committed = repo.git("show", "-s", "--format=%cI", fix)
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mutations=2, controls_ratio=0), out)
    gold = read_corpus(out).gold
    fixes = [g for g in gold if g.stratum == "fix_reversal"]
    assert [g.source_date for g in fixes] == [committed]
    synthetic = [g for g in gold if g.stratum == "mutation"]
    # Made at mining time: dated by corpus.json's created_at, so gold stays reproducible.
    assert synthetic and all(g.source_date is None for g in synthetic)
