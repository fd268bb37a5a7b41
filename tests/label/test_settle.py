"""``label queue`` says, gate by gate, whether labels can still change it and how many remain.

Figures planned by hand on the fixture of ``conftest.py`` (tolerance 3: every comment on
case-1 and case-2 sits at line 2, within reach of every defect there):

condalphasecret
  case-1 d-1: comment 0 says its hint term "last item" (identified), comment 1 is its duplicate.
  case-2 d-2: comments 0 and 2 located, not identified; d-3: comment 1, not identified.
  case-3 (control): comment 0, a false positive. case-1's mirror: no comment from either
condition, so alpha's naming of d-1 discriminates (identifies).
  defect_recall 1/3 = 0.333, located 3/3; precision 1/4, located 3/4.
  Open pairs: (case-2, d-2) by comments 0 and 2, (case-2, d-3) by comment 1: 3 comments,
  3 one-part claims, 6 rater labels.
condbetasecret
  case-1 d-1: the long comment (three sentences, so three claims), not identified.
  case-2 d-2: "maybe a problem here", not identified; d-3 not located.
  defect_recall 0/3, located 2/3; precision 0/2, located 2/2.
  Open pairs: both: 2 comments, 4 claims, 8 rater labels.
"""

from __future__ import annotations

import json

from reviewbench.evidence.store import LabelStore

from ..conftest import run_cli
from .conftest import CONDITIONS, run_id

ALPHA, BETA = CONDITIONS

GATES = """\
min_defect_cases = 0
min_controls = 0
max_interval_width = 1.0
[[tier]]
name = "high"
when = [{ metric = "defect_recall", op = ">=", value = 0.6 },
        { metric = "precision", op = ">=", value = 0.7 }]
permitted = ["second pass"]
[[tier]]
name = "low"
when = [{ metric = "defect_recall@fix_reversal", op = ">=", value = 0.3 },
        { metric = "silence_rate", op = "<", value = 0.3 }]
permitted = ["triage"]
[fallback]
name = "none"
"""


def _queue(rundir, gates):
    proc = run_cli("label", "queue", rundir, "--gates", gates, "--json", "--limit", "100")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    table = {(g["condition"], g["gate"]): g for g in data["gates"]}
    return data, table


def _state(gate):
    return (gate["outcome"], gate["comments"], gate["claims"], gate["labels_needed"])


def _checks(gate):
    return [(c["metric"], c["lower"], c["upper"], c["outcome"], c["comments"]) for c in gate["checks"]]


def _opaque(rundir, case_id, condition, index):
    with LabelStore(rundir) as store:
        source = f"{run_id(case_id, condition)}:{index}"
        return sorted(key for key, ref in store.claims().items() if ref.source_id == source)


def test_each_gate_is_settled_or_says_how_many_labels_remain(rundir, tmp_path):
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES)
    data, table = _queue(rundir, gates)
    assert len(table) == 4  # 2 conditions x 2 tiers
    # condalphasecret: recall [1/3, 3/3] straddles 0.6, precision [1/4, 3/4] straddles 0.7;
    # both move only through case-2's three comments.
    assert _checks(table[(ALPHA, "high")]) == [("defect_recall", 0.333333, 1.0, None, 3),
                                               ("precision", 0.25, 0.75, None, 3)]  # fmt: skip
    assert _state(table[(ALPHA, "high")]) == (None, 3, 3, 6)
    # At 0.3 recall already passes, and nobody's silent.
    assert _state(table[(ALPHA, "low")]) == ("pass", 0, 0, 0)
    # condbetasecret: [0, 2/3] straddles both recall gates, [0, 1] the precision one.
    assert _state(table[(BETA, "high")]) == (None, 2, 4, 8)
    assert _state(table[(BETA, "low")]) == (None, 2, 4, 8)
    assert _checks(table[(BETA, "low")])[1] == ("silence_rate", 0.0, None, "pass", 0)
    # Ten claims (alpha 2 + 3 + 1, beta 3 + 1), none labelled; decisive first: alpha's
    # three open comments and beta's four claims, then alpha's case-1 pair and control.
    assert data["remaining"] == {"claims": 10, "labels_needed": 20, "decisive": 7}
    flags = [item["decisive"] for item in data["queue"]]
    assert flags == [True] * 7 + [False] * 3

    text = run_cli("label", "queue", rundir, "--gates", gates).stdout
    assert f"{BETA} tier high: needs labels: 4 claims (8 rater labels) can still change it" in text
    assert f"{ALPHA} tier low: settled (pass)" in text
    assert "precision >= 0.7 at [0.250, 0.750]: open, 3 comments" in text

    # Two raters agree: alpha's "None is not checked" identifies d-3; beta's "maybe a
    # problem here" is a false positive.
    rows = [{"comment_id": c, "part": p, "class": "true_finding", "defect_id": "d-3"}
            for c, p in _opaque(rundir, "case-2", ALPHA, 1)]  # fmt: skip
    rows += [{"comment_id": c, "part": p, "class": "false_positive"} for c, p in _opaque(rundir, "case-2", BETA, 0)]
    assert len(rows) == 2
    for rater in ("ann", "bob"):
        path = tmp_path / f"{rater}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert run_cli("label", "import", rundir, path, "--rater", rater).returncode == 0

    data, table = _queue(rundir, gates)
    # alpha: recall 2/3 passes for good; precision 2/4, at most 3/4 through d-2's two comments.
    assert _checks(table[(ALPHA, "high")]) == [("defect_recall", 0.666667, 1.0, "pass", 0),
                                               ("precision", 0.5, 0.75, None, 2)]  # fmt: skip
    assert _state(table[(ALPHA, "high")]) == (None, 2, 2, 4)
    # beta: the labelled false positive stays located (located recall 2/3) but can never
    # identify d-2, so recall can reach 1/3 at most: the 0.6 tier fails, settled, and the
    # 0.3 tier waits on the long comment alone (3 claims, 6 labels).
    assert _checks(table[(BETA, "high")])[0] == ("defect_recall", 0.0, 0.333333, "fail", 0)
    assert _state(table[(BETA, "high")]) == ("fail", 0, 0, 0)
    assert _state(table[(BETA, "low")]) == (None, 1, 3, 6)
    assert data["remaining"] == {"claims": 8, "labels_needed": 16, "decisive": 5}
    assert [item["decisive"] for item in data["queue"]] == [True] * 5 + [False] * 3

    # The score's own decision reads the same attainable bound: beta's high tier fails
    # although located recall still straddles 0.6.
    score = json.loads(run_cli("score", rundir, "--gates", gates, "--json", "--bootstrap", "200").stdout)
    beta = score["conditions"][BETA]
    assert beta["end_to_end"]["metrics"]["located_recall"]["num"] == 2
    assert beta["decision"]["gates"]["high"][0]["passed"] is False
    assert beta["decision"]["status"] == "needs_labels" and beta["decision"]["labels_needed"] == 1
    assert score["conditions"][ALPHA]["decision"]["labels_needed"] == 2


def test_gates_a_veto_or_too_few_cases_make_moot_are_never_decisive(rundir, tmp_path):
    gates = tmp_path / "gates.toml"
    # Non-gold files: the clean cases' one each. alpha flags case-3's and is silent on
    # case-1's mirror: flag coverage 1/2 > 0.4, vetoed; beta flags neither (0/2).
    gates.write_text(GATES + '[[veto]]\nname = "noisy"\nwhen = [{ metric = "flag_coverage", op = ">", value = 0.4 }]\n')
    data, table = _queue(rundir, gates)
    assert _state(table[(ALPHA, "noisy")]) == ("pass", 0, 0, 0) and table[(ALPHA, "noisy")]["kind"] == "veto"
    assert table[(ALPHA, "high")]["moot"] == "veto noisy holds"
    assert table[(BETA, "noisy")]["outcome"] == "fail" and table[(BETA, "high")]["moot"] is None
    assert data["remaining"]["decisive"] == 4  # beta's claims only
    text = run_cli("label", "queue", rundir, "--gates", gates).stdout  # a veto triggers or stays clear
    assert f"{ALPHA} veto noisy: settled (triggers)" in text and f"{BETA} veto noisy: settled (clear)" in text
    # The built-in gates want ten valid defect cases: with two, no label changes anything.
    proc = run_cli("label", "queue", rundir, "--json")
    data = json.loads(proc.stdout)
    assert data["gates"] and all(g["moot"].startswith("insufficient evidence: 2 valid defect cases")
                                 for g in data["gates"])  # fmt: skip
    assert data["remaining"]["decisive"] == 0
