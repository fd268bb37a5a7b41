"""Precision counts atomic claims (issue 32, item 8), and a registered boilerplate rule leaves
non-substantive summary text out of it, worked by hand.

condalphasecret (A) writes LONG on case-1 (three sentences, split into three claims,
labelled true d-1 / false / true d-1) and a two-bullet comment on the control case-3 (both
bullets false). condbetasecret (B) names d-1 on case-1, writes LONG there too (located at
d-1 after the first: a duplicate, whose false sentence still counts), and opens its review
of the control with "Overall the change looks fine" (a false positive).

    precision, completed runs       per comment    atomic claims
    A  case-1 LONG (T T, F)         1/1            2/3
       case-3 bullets (F, F)        0/1            0/2
       total                        1/2            2/5
    B  case-1 name + LONG (dup)     1/1            1/2   (the duplicate's false part)
       case-3 "Overall ..."         0/1            0/1   (boilerplate rule: left out, 1/2)
       total                        1/2            1/3
"""

from __future__ import annotations

import json

from reviewbench.evidence.overrides import score_overrides
from reviewbench.evidence.packets import split_claim
from reviewbench.score import ScoreOptions, score_run

from ..conftest import run_cli
from .conftest import CONDITIONS, LONG, label_all, write_corpus, write_runs

A, B = CONDITIONS
BULLETS = "- `os` is never used here\n- the loop never ends"
FINDINGS = {
    (A, "case-1"): [LONG],
    (A, "case-3"): [BULLETS],
    (B, "case-1"): ["parse drops the last item", LONG],
    (B, "case-3"): ["Overall the change looks fine"],
}
first, middle, last = split_claim(LONG)
TRUE = {"class": "true_finding", "defect_id": "d-1"}
FALSE = {"class": "false_positive"}
LABELS = {first: TRUE, middle: FALSE, last: TRUE, "parse drops the last item": TRUE,
          "`os` is never used here": FALSE, "the loop never ends": FALSE, "Overall the change looks fine": FALSE}


def _labelled(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), FINDINGS)
    label_all(rundir, tmp_path, lambda packet, claim: LABELS[claim["text"]])
    return rundir


def _gates(path, patterns: list[str]):
    rule = f"\n[boilerplate]\npatterns = {json.dumps(patterns)}\n" if patterns else ""
    path.write_text(f"""\
analysis = "completed"
min_defect_cases = 1
min_controls = 1
max_interval_width = 1.0
{rule}
[[tier]]
name = "precise"
authority = "precise"
when = [{{ metric = "precision", op = ">=", value = 0.45 }}]
permitted = ["read it"]

[fallback]
name = "none"
authority = "none"
""")
    return path


def _frac(m):
    return m.num, m.den


def test_precision_counts_atomic_claims_and_a_false_claim_in_a_true_comment_is_not_hidden(tmp_path):
    rundir = _labelled(tmp_path)
    result = score_run(rundir, ScoreOptions(bootstrap=300, gates=_gates(tmp_path / "g.toml", []),
                                            overrides=score_overrides(rundir)))  # fmt: skip
    a, b = result.conditions[A], result.conditions[B]
    assert _frac(a.metrics["precision"]) == (2, 5)
    assert _frac(a.metrics["located_precision"]) == (2, 5)  # still an upper bound
    assert (a.precision_claims.split_comments, a.precision_claims.extra_claims) == (2, 3)
    assert _frac(b.metrics["precision"]) == (1, 3)
    assert (b.precision_claims.split_comments, b.precision_claims.extra_claims) == (1, 1)
    # Recall is per defect, not per claim: A identifies d-1 once on its one run of case-1.
    assert _frac(a.metrics["defect_recall"]) == (1, 3)
    # The comment keeps its id: both of LONG's true parts and its false one are under A's comment.
    [verdict] = [v for v in result.verdicts if v.condition == A and v.case_id == "case-1"]
    assert verdict.comment_id.endswith(":0") and verdict.claims.parts == 3
    assert (verdict.claims.true, verdict.claims.false_positive) == (2, 1)
    # 2/5 = 0.4 fails a floor of 0.45 that the comment-level 1/2 would have passed.
    assert a.decision.tier == "none"


def test_the_boilerplate_rule_leaves_summary_text_out_of_precision_and_says_how_much(tmp_path):
    rundir = _labelled(tmp_path)
    gates = _gates(tmp_path / "g.toml", [r"^\s*(overall|in summary)\b"])
    result = score_run(rundir, ScoreOptions(bootstrap=300, gates=gates, overrides=score_overrides(rundir)))
    b = result.conditions[B]
    assert _frac(b.metrics["precision"]) == (1, 2)
    claims = b.precision_claims
    assert (claims.boilerplate_excluded, claims.false_positives) == (1, 1)
    assert claims.boilerplate_rule == [r"^\s*(overall|in summary)\b"]
    assert _frac(b.metrics["fp_per_clean_case"]) == (1, 2)  # restraint figures are not the rule's
    assert result.conditions[A].precision_claims.boilerplate_excluded == 0
    marked = [v for v in result.verdicts if v.boilerplate]
    assert [v.case_id for v in marked] == ["case-3"] and marked[0].condition == B
    out = run_cli("score", rundir, "--details", "--bootstrap", "300", "--gates", gates)
    assert out.returncode == 0, out.stderr
    flat = " ".join(out.stdout.split())
    assert ("precision (completed): 1 split comment counted claim by claim (1 claim more than one per "
            "comment); boilerplate rule (1 pattern): 1 of 1 false positives left out") in flat


def test_a_bad_boilerplate_pattern_is_refused_in_one_line(tmp_path):
    rundir = _labelled(tmp_path)
    out = run_cli("score", rundir, "--gates", _gates(tmp_path / "g.toml", ["(unclosed"]))
    assert out.returncode == 2 and "not a regular expression" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
