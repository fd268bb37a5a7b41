"""The one valid-case rule (``GoldRecord.valid``) and the yields ``show`` prints from it."""

from __future__ import annotations

import json

import pytest

from reviewbench.records import GoldRecord, Provenance, Validation
from reviewbench.score import eligible_cases
from reviewbench.score.yields import corpus_yields
from reviewbench.store import read_corpus

from ..conftest import run_cli
from .runsets import write_corpus


@pytest.mark.parametrize("expect_finding, status, valid", [
    (True, "observed", True), (True, "not_observed", False), (True, "base_failing", False), (True, None, False),
    (False, "not_observed", True), (False, "observed", False), (False, "base_failing", False), (False, None, False),
])  # fmt: skip
def test_a_case_is_valid_when_its_tests_say_what_it_claims(expect_finding, status, valid):
    gold = GoldRecord(case_id="c", stratum="fix_reversal" if expect_finding else "control",
                      expect_finding=expect_finding, defects=[], provenance=Provenance(),
                      validation=Validation(status=status) if status else None)  # fmt: skip
    assert gold.valid is valid


def test_yields_count_by_hand_and_show_prints_the_same_record(tmp_path):
    # 3 defect cases (observed) each with its mirror (not_observed), 2 controls (not_observed):
    # by hand, fix_reversal 3/3 observed, mirror 0/3 observed, control 0/2; every clean case
    # valid; all 3 mirrors scored (their defect cases are valid); both controls share the fix
    # reversals' base commit, so both count as made at a fix commit.
    corpus_dir = write_corpus(tmp_path / "corpus", defects=3, controls=2)
    corpus = read_corpus(corpus_dir)
    counted = corpus_yields(corpus)
    assert {k: (v.observed, v.attempted) for k, v in counted.by_stratum_yield.items()} == {
        "control": (0, 2), "fix_reversal": (3, 3), "mirror": (0, 3)}
    assert counted.controls.model_dump() == {"mined": 2, "paired_with_fix_reversals": 2, "validated": 2, "valid": 2}
    assert counted.mirrors.model_dump() == {"mined": 3, "paired_with_defect_cases": 3, "validated": 3, "valid": 3,
                                            "in_analysis": 3}  # fmt: skip
    assert counted.by_outcome == {"defect observed (tests fail)": 3, "valid control (tests pass)": 2,
                                  "valid mirror (tests pass)": 3}  # fmt: skip
    # The same rule as scoring's: every valid case is eligible, none other.
    assert set(eligible_cases(corpus, include_unvalidated=False)) == {g.case_id for g in corpus.gold if g.valid}
    shown = json.loads(run_cli("show", corpus_dir, "--json").stdout)
    assert {k: shown[k] for k in counted.model_dump(by_alias=True)} == counted.model_dump(mode="json", by_alias=True)
