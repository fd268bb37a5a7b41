"""Authored cases: a rule violation and its safe counterexample round-trip through `case add` (issue 15)."""

from __future__ import annotations

import json

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus

from ..conftest import run_cli

BILLING = "def total(lines):\n    acc = 0\n    for price in lines:\n        acc += price\n    return acc\n"
VIOLATION = "def total(lines):\n    acc = 0\n    for price in lines:\n        acc += round(price, 2)\n    return acc\n"
SAFE = "def total(lines):\n    acc = 0\n    for price in lines:\n        acc += price\n    return round(acc, 2)\n"
GOLD = """\
stratum = "rule_violation"
[[defect]]
class = "money_rounding"
severity = "high"
severity_basis = "P1: wrong totals reach invoices"
trigger = "many lines with fractional cents"
description = "rounds each line instead of the total"
acceptable_descriptions = ["rounding per line", "rounds before summing"]
rule_id = "R-01"
[[defect.location]]
path = "shop/billing.py"
symbol = "total"
"""
SAFE_GOLD = 'expect_finding = false\nstratum = "safe_counterexample"\n'


def rb(*args):
    return run_cli(*args)


@pytest.fixture
def setup(git_repo, tmp_path):
    repo = git_repo("shop")
    repo.commit("init", {"shop/__init__.py": "", "shop/billing.py": BILLING.replace("acc = 0", "acc = 1")})
    base = repo.commit("Fix billing", {"shop/billing.py": BILLING})
    repo.git("checkout", "-q", "-b", "violation")
    repo.commit("Round lines", {"shop/billing.py": VIOLATION})
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "safe")
    repo.commit("Round total", {"shop/billing.py": SAFE})
    repo.git("checkout", "-q", "main")
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    (tmp_path / "gold.toml").write_text(GOLD)
    (tmp_path / "safe.toml").write_text(SAFE_GOLD)
    return repo, base, corpus, tmp_path


def test_an_authored_pair_round_trips(setup):
    repo, base, corpus, tmp = setup
    before = read_corpus(corpus).meta.gold_sha256
    added = rb("case", "add", corpus, "--base", base, "--head", "violation", "--gold", tmp / "gold.toml",
               "--pair-id", "rounding", "--json")  # fmt: skip
    assert added.returncode == 0, added.stderr
    violation = json.loads(added.stdout)
    assert violation["locations"] == [{"path": "shop/billing.py", "start_line": 1, "end_line": 5, "symbol": "total"}]
    patch = tmp / "safe.diff"
    patch.write_text(repo.git("diff", base, "safe") + "\n")
    safe = rb("case", "add", corpus, "--base", base, "--patch", patch, "--gold", tmp / "safe.toml", "--pair-id", "rounding")
    assert safe.returncode == 0, safe.stderr
    data = read_corpus(corpus)
    assert data.meta.gold_sha256 != before and data.meta.counts.cases == len(data.cases) == 3
    assert data.meta.counts.by_stratum["rule_violation"] == data.meta.counts.by_stratum["safe_counterexample"] == 1
    pair = sorted((g for g in data.gold if g.pair_id == "rounding"), key=lambda g: g.stratum)
    assert [g.stratum for g in pair] == ["rule_violation", "safe_counterexample"]
    defect = pair[0].defects[0]
    assert defect.severity_basis.startswith("P1") and defect.acceptable_descriptions[0] == "rounding per line"
    assert defect.rule_id == "R-01"  # scored per rule (defect_recall@rule:R-01)
    assert not pair[1].expect_finding and pair[1].defects == []
    listed = json.loads(rb("case", "list", corpus, "--json").stdout)
    assert {row["stratum"] for row in listed} == {"rule_violation", "safe_counterexample"}
    # Same base and patch twice: refused.
    again = rb("case", "add", corpus, "--base", base, "--head", "violation", "--gold", tmp / "gold.toml")
    assert again.returncode == 2 and "already holds" in again.stderr
    removed = rb("case", "remove", corpus, violation["case_id"])
    assert removed.returncode == 0, removed.stderr
    data = read_corpus(corpus)
    assert violation["case_id"] not in {c.case_id for c in data.cases}
    assert not (corpus / f"patches/{violation['case_id']}.diff").exists()
    assert data.meta.counts.by_stratum["rule_violation"] == 0


@pytest.mark.parametrize("change, message", [
    (("--head", "nowhere"), "--head nowhere is not a commit"),
    (("--gold", "missing.toml"), "cannot read gold file"),
    (("--gold", "badsym.toml"), "no definition 'subtotal'"),
    (("--patch", "junk.diff"), "does not apply"),
    (("--gold", "badrule.toml"), "rule_id"),
])  # fmt: skip
def test_bad_input_is_one_line(setup, change, message):
    _repo, base, corpus, tmp = setup
    (tmp / "badsym.toml").write_text(GOLD.replace('symbol = "total"', 'symbol = "subtotal"'))
    (tmp / "badrule.toml").write_text(GOLD.replace('rule_id = "R-01"', 'rule_id = "R 01 / bad"'))
    (tmp / "junk.diff").write_text("diff --git a/shop/billing.py b/shop/billing.py\n--- a/shop/billing.py\n"
                                   "+++ b/shop/billing.py\n@@ -1 +1 @@\n-nothing like this\n+x\n")  # fmt: skip
    args = {"--head": "violation", "--gold": str(tmp / "gold.toml")}
    flag, value = change
    args.pop("--head" if flag == "--patch" else flag, None)
    args[flag] = value if flag == "--head" else str(tmp / value)
    proc = rb("case", "add", corpus, "--base", base, *[x for kv in args.items() for x in kv])
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    assert proc.stderr.startswith("reviewbench: error:") and proc.stderr.count("\n") == 1


def test_a_structured_severity_basis_round_trips(setup):
    """severity_basis as a table: asset, trigger, consequence, scope, controls; one missing is one line."""
    repo, base, corpus, tmp = setup
    structured = GOLD.replace('severity_basis = "P1: wrong totals reach invoices"',
                              'severity_basis = { asset = "invoices", trigger = "fractional cents", consequence = '
                              '"wrong totals billed", scope = "every multi-line invoice", controls = "no test sums '
                              'fractional lines" }')  # fmt: skip
    (tmp / "structured.toml").write_text(structured)
    added = rb("case", "add", corpus, "--base", base, "--head", "violation", "--gold", tmp / "structured.toml")
    assert added.returncode == 0, added.stderr
    [record] = [g for g in read_corpus(corpus).gold if g.stratum == "rule_violation"]
    basis = record.defects[0].severity_basis
    assert (basis.asset, basis.scope, basis.controls) == ("invoices", "every multi-line invoice",
                                                          "no test sums fractional lines")  # fmt: skip
    assert json.loads(rb("show", corpus, "--json").stdout)["severity_basis"]["structured"] >= 1
