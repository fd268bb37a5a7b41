"""Claims people label ``unclear`` leave precision's denominator and are reported beside it,
with the unclear sensitivity (every unclear claim false, then true) and a flag when the
registered decision changes between the two (issue 14, item 6).

The known case, worked by hand: condalphasecret names d-1 on case-1 (labelled a true
finding) and makes three comments on the clean control case-3: one labelled a false
positive, two unclear. Precision is 1 / (1 + 1) = 0.5 with the unclear pair out;
all unclear false: 1 / 4; all unclear true: 3 / 4.
"""

from __future__ import annotations

import json

from reviewbench.evidence.overrides import score_overrides
from reviewbench.report import ReportOptions, build_report, render_html
from reviewbench.score import ScoreOptions, score_run

from ..conftest import run_cli
from .conftest import CONDITIONS, label_all, write_corpus, write_runs

A, B = CONDITIONS
FINDINGS = {
    (A, "case-1"): ["parse drops the last item"],
    (A, "case-3"): ["unused import", "maybe racy here", "perhaps slow here"],
    (B, "case-1"): ["parse drops the last item"],
}
CLASS = {"parse drops the last item": "true_finding", "unused import": "false_positive",
         "maybe racy here": "unclear", "perhaps slow here": "unclear"}  # fmt: skip


def _gates(path, threshold: float):
    path.write_text(f"""\
analysis = "end_to_end"
min_defect_cases = 1
min_controls = 1
max_interval_width = 1.0
never_permitted = ["approval or merge rights"]

[[tier]]
name = "precise"
authority = "precise enough to read"
min_evidence = "automatic"
when = [{{ metric = "precision", op = ">=", value = {threshold} }}]
permitted = ["read its findings"]
not_permitted = []

[fallback]
name = "none"
authority = "none"
permitted = []
not_permitted = ["read its findings"]
""")
    return path


def _labelled(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), FINDINGS)
    label_all(rundir, tmp_path, lambda packet, claim: _decide(claim, lambda: packet["defects"][0]["defect_id"]))
    return rundir


def _decide(claim: dict, defect_id) -> dict:
    """The planned class of a claim (``CLASS``), a true finding linked to ``defect_id()``."""
    label = {"class": CLASS[claim["text"]]}
    if label["class"] == "true_finding":
        label["defect_id"] = defect_id()
    return label


def _cells(metric) -> tuple:
    return metric.num, metric.den, metric.value


def test_unclear_claims_leave_precision_and_their_sensitivity_flips_the_decision(tmp_path):
    rundir = _labelled(tmp_path)
    gates = _gates(tmp_path / "gates.toml", 0.6)
    before = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates, overrides={}, labels={}))
    a = before.conditions[A]
    # Labels left out on purpose (by default score_run reads labels.sqlite): matching identifies d-1 (the claim names `parse`, and nothing was said on
    # case-1's mirror); three false positives.
    assert _cells(a.end_to_end.metrics["precision"]) == (1, 4, 0.25)
    assert a.unclear is None

    result = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates, overrides=score_overrides(rundir)))
    a = result.conditions[A]
    for analysis in (a.metrics, a.end_to_end.metrics):
        assert _cells(analysis["precision"]) == (1, 2, 0.5)
        assert _cells(analysis["located_precision"]) == (1, 2, 0.5)  # still an upper bound
    unclear = a.unclear
    assert unclear.n == 2 and unclear.analysis == "end_to_end"
    assert _cells(unclear.precision_all_false) == (1, 4, 0.25)
    assert _cells(unclear.precision_all_true) == (3, 4, 0.75)
    lo, hi = unclear.precision_all_true.lo, unclear.precision_all_true.hi
    assert lo is not None and lo <= 0.75 <= hi
    # 0.5 < 0.6 with the unclear pair out; 0.25 fails, 0.75 passes: the unclear claims decide.
    assert (a.decision.tier, a.decision.status) == ("none", "not_earned")
    assert (unclear.decision_all_false.tier, unclear.decision_all_false.status) == ("none", "not_earned")
    assert (unclear.decision_all_true.tier, unclear.decision_all_true.status) == ("precise", "granted")
    assert unclear.decision_changes is True
    # condbetasecret has nothing unclear: no sensitivity block at all.
    assert result.conditions[B].unclear is None
    assert "unclear" not in result.as_json()["conditions"][B]

    # A threshold both bounds clear: reported, not flagged.
    low = score_run(rundir, ScoreOptions(bootstrap=200, gates=_gates(tmp_path / "low.toml", 0.2),
                                         overrides=score_overrides(rundir)))  # fmt: skip
    steady = low.conditions[A].unclear
    assert steady.decision_all_false.tier == steady.decision_all_true.tier == "precise"
    assert steady.decision_changes is False


def test_unclear_credited_comment_yields_its_defect_to_the_one_that_identifies_it(tmp_path):
    """Two comments at d-1: the first (credited by matching) unclear, the second a true
    finding. The defect stays one identified finding over one: nothing is left out."""
    findings = {(A, "case-1"): ["maybe racy here", "parse drops the last item"]}
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), findings)
    label_all(rundir, tmp_path, lambda packet, claim: _decide(claim, lambda: "d-1"))
    a = score_run(rundir, ScoreOptions(bootstrap=200, overrides=score_overrides(rundir))).conditions[A]
    assert _cells(a.metrics["precision"]) == (1, 1, 1.0)
    assert a.unclear is None


def test_score_cli_reports_unclear_claims_in_json_and_text(tmp_path):
    rundir = _labelled(tmp_path)
    gates = _gates(tmp_path / "gates.toml", 0.6)
    out = run_cli("score", rundir, "--json", "--bootstrap", "200", "--gates", gates)
    assert out.returncode == 0, out.stderr
    unclear = json.loads(out.stdout)["conditions"][A]["unclear"]
    assert unclear["n"] == 2 and unclear["decision_changes"] is True
    assert (unclear["precision_all_false"]["num"], unclear["precision_all_false"]["den"]) == (1, 4)
    assert (unclear["precision_all_true"]["num"], unclear["precision_all_true"]["den"]) == (3, 4)
    assert unclear["decision_all_true"] == {"authority": "precise enough to read", "tier": "precise",
                                            "status": "granted"}  # fmt: skip

    text = run_cli("score", rundir, "--bootstrap", "200", "--gates", gates, "--details")
    assert text.returncode == 0, text.stderr
    headline, details = text.stdout.split("\ndetails: ", 1)
    assert "unclear claims: 2 left out" in " ".join(headline.split())  # it decides: said on the headline too
    flat = " ".join(details.split())  # the console wraps long lines at its width
    assert flat.count("unclear claims:") == 1, text.stdout
    line = flat[flat.index("unclear claims:"):].split(" decision:")[0]
    assert "unclear claims: 2 left out of precision (end_to_end 1/2 = 0.500)" in line
    assert "all false 1/4 = 0.250" in line and "all true 3/4 = 0.750" in line
    assert "DECISION CHANGES: none [not earned] if all false, precise enough to read [granted] if all true" in line


def test_report_decision_card_says_when_the_unclear_claims_decide_it(tmp_path):
    rundir = _labelled(tmp_path)
    options = ReportOptions(bootstrap=200, overrides=score_overrides(rundir))
    pages = {}
    for threshold in (0.6, 0.2):
        scored = score_run(rundir, ScoreOptions(bootstrap=200, gates=_gates(tmp_path / f"g{threshold}.toml", threshold),
                                                overrides=options.overrides))  # fmt: skip
        pages[threshold] = " ".join(render_html(build_report(rundir, options, scored=scored)).split())
    decisive = pages[0.6]
    card = decisive[decisive.index('<section id="decision">'):decisive.index("</section>", decisive.index('id="decision"'))]
    assert card.count('data-decision-changes="true"') == 1 and 'data-decision-changes="false"' not in card
    assert ("<b>The unclear claims decide it:</b> 2 left out of precision; with every one false, precision 1/4 "
            "(none, not earned); with every one true, 3/4 (precise enough to read, granted).") in card
    steady = pages[0.2]
    assert 'data-decision-changes="false"' in steady and "The unclear claims decide it" not in steady
