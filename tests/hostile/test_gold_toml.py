"""Issue 25 item 10: ``case add`` with a hostile gold TOML.

It gave "internal error" for ``defect = "x"``, ``start_line = "abc"``, ``defect_id`` or
``locations`` given by hand (the tool sets both), an inline-table ``location``; and
silently coerced ``start_line = 1.9``, ``end_line = true``, ``expect_finding = "no"``
(counted as true). The gold file is strictly typed: one line naming the field, exit 2,
nothing written to the corpus.
"""

from __future__ import annotations

import json

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus

BILLING = "def total(lines):\n    acc = 0\n    for price in lines:\n        acc += price\n    return acc\n"
VIOLATION = BILLING.replace("acc += price", "acc += round(price, 2)")
DEFECT = '[[defect]]\nclass = "money_rounding"\n'
LOCATION = '[[defect.location]]\npath = "shop/billing.py"\n'


@pytest.fixture
def setup(git_repo, tmp_path):
    repo = git_repo("shop")
    repo.commit("init", {"shop/__init__.py": "", "shop/billing.py": BILLING.replace("acc = 0", "acc = 1")})
    base = repo.commit("Fix billing", {"shop/billing.py": BILLING})
    repo.git("checkout", "-q", "-b", "violation")
    repo.commit("Round lines", {"shop/billing.py": VIOLATION})
    repo.git("checkout", "-q", "main")
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), corpus)
    return base, corpus, tmp_path


HOSTILE = {
    "defect_is_a_string": ('defect = "x"\n', "defect"),
    "defect_is_a_table": ('[defect]\nclass = "x"\n', "defect"),
    "start_line_is_text": (DEFECT + LOCATION + 'start_line = "abc"\n', "start_line"),
    "defect_id_given": (DEFECT + 'defect_id = "mine"\n' + LOCATION + "start_line = 1\n", "defect_id"),
    "locations_given": (DEFECT + 'locations = [{ path = "shop/billing.py", start_line = 1, end_line = 1 }]\n'
                        + LOCATION + "start_line = 1\n", "locations"),
    "inline_location": (DEFECT + 'location = { path = "shop/billing.py", start_line = 1 }\n', "location"),
    "location_is_a_string": (DEFECT + 'location = ["shop/billing.py"]\n', "location"),
    "start_line_is_a_float": (DEFECT + LOCATION + "start_line = 1.9\n", "start_line"),
    "end_line_is_a_bool": (DEFECT + LOCATION + "start_line = 1\nend_line = true\n", "end_line"),
    "expect_finding_is_text": ('expect_finding = "no"\n' + DEFECT + LOCATION + "start_line = 1\n", "expect_finding"),
    "symbol_is_a_number": (DEFECT + LOCATION + "symbol = 3\n", "symbol"),
    "class_is_a_number": ("[[defect]]\nclass = 5\n" + LOCATION + "start_line = 1\n", "class"),
    "stratum_is_a_number": ("stratum = 3\n" + DEFECT + LOCATION + "start_line = 1\n", "stratum"),
    "description_is_a_date": (DEFECT + "description = 1979-05-27\n" + LOCATION + "start_line = 1\n", "description"),
    "unknown_location_key": (DEFECT + LOCATION + "start_line = 1\nline = 3\n", "line"),
    "end_line_without_start": (DEFECT + LOCATION + 'symbol = "total"\nend_line = 2\n', "end_line"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_gold_file_is_one_line_and_writes_nothing(setup, cli, name):
    base, corpus, tmp = setup
    text, field = HOSTILE[name]
    gold = tmp / "gold.toml"
    gold.write_text(text)
    before = {p.name: p.read_bytes() for p in corpus.rglob("*") if p.is_file()}
    result = cli("case", "add", corpus, "--base", base, "--head", "violation", "--gold", gold)
    line = result.one_line_error(str(gold), field)
    assert result.code == 2, line
    assert {p.name: p.read_bytes() for p in corpus.rglob("*") if p.is_file()} == before


def test_a_well_typed_gold_file_is_still_accepted(setup, cli):
    base, corpus, tmp = setup
    gold = tmp / "gold.toml"
    gold.write_text("expect_finding = true\n" + DEFECT + 'severity = "high"\nacceptable_descriptions = ["a"]\n'
                    + LOCATION + "start_line = 2\nend_line = 4\n")  # fmt: skip
    result = cli("case", "add", corpus, "--base", base, "--head", "violation", "--gold", gold, "--json")
    assert result.code == 0, result.err
    added = json.loads(result.out)
    assert added["locations"] == [{"path": "shop/billing.py", "start_line": 2, "end_line": 4, "symbol": None}]
    record = next(g for g in read_corpus(corpus).gold if g.case_id == added["case_id"])
    assert record.expect_finding is True and record.defects[0].defect_class == "money_rounding"
    assert record.defects[0].severity.value == "high" and record.defects[0].acceptable_descriptions == ["a"]
