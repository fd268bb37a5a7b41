"""People's labels decide verdicts in the score: a claim labelled a true finding linked to a
gold defect identifies it (evidence 'human'); one labelled a false positive never does,
whatever automatic matching said."""

from __future__ import annotations

import json

from reviewbench.evidence.overrides import score_overrides
from reviewbench.score import ScoreOptions, score_run

from ..conftest import run_cli
from .conftest import label_all

_label = label_all


def _recall(result, condition):
    metrics = result.conditions[condition].metrics
    return metrics["defect_recall"].num, metrics["located_recall"].num


def test_human_labels_override_automatic_verdicts_exactly_as_planned(rundir, tmp_path):
    automatic = score_run(rundir, ScoreOptions(bootstrap=200, include_unvalidated=True))
    assert score_overrides(rundir) == {}

    # Every claim whose text names the slice or the lookup is a true finding of the case's
    # first defect; everything else is a false positive.
    def decide(packet, claim):
        real = any(word in claim["text"] for word in ("drops the last", "wrong key", "slice"))
        if real and packet["defects"]:
            return {"class": "true_finding", "defect_id": packet["defects"][0]["defect_id"]}
        return {"class": "false_positive"}

    _label(rundir, tmp_path, decide)
    overrides = score_overrides(rundir)
    assert overrides and all(o.evidence == "human" for o in overrides.values())
    labelled = score_run(rundir, ScoreOptions(bootstrap=200, include_unvalidated=True, overrides=overrides))
    for name in labelled.conditions:
        assert labelled.conditions[name].evidence == "human", name
    # condalphasecret named d-1 (case-1) and d-2 (case-2): 2 identified, by people's say.
    assert _recall(labelled, "condalphasecret")[0] == 2
    # Located is the automatic upper bound: labels can take credit away (a located comment
    # people call a false positive), never add it.
    assert 2 <= _recall(labelled, "condalphasecret")[1] <= _recall(automatic, "condalphasecret")[1]

    # The same claims labelled false positives: nothing is identified any more.
    other = tmp_path / "other"
    other.mkdir()
    for rater in ("ann", "bob"):
        rows = [dict(json.loads(line), **{"class": "false_positive"}) for line in (tmp_path / f"{rater}.jsonl").read_text().splitlines()]
        for row in rows:
            row.pop("defect_id", None)
        (other / f"{rater}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert run_cli("label", "import", rundir, other / f"{rater}.jsonl", "--rater", rater).returncode == 0
    overruled = score_run(rundir, ScoreOptions(bootstrap=200, include_unvalidated=True,
                                               overrides=score_overrides(rundir)))  # fmt: skip
    assert _recall(overruled, "condalphasecret")[0] == 0


def test_score_cli_reads_the_labels_of_the_run_directory(rundir, tmp_path):
    _label(rundir, tmp_path, lambda packet, claim: {"class": "false_positive"})
    result = run_cli("score", rundir, "--json", "--bootstrap", "200", "--include-unvalidated")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {c["evidence"] for c in data["conditions"].values()} == {"human"}


def test_score_shows_actionability_and_triage_minutes_per_condition(rundir, tmp_path):
    """Issue 14 item 6's metrics in the score. By hand, on the fixture's claims: condition 0
    has three true findings (the dropped item and the wrong key pass all five fields; the
    None check fails safe_fix): actionability 2/3, safe_fix 2/3, location 3/3. Every claim
    takes each of two raters 30 s, so a run costs one rater-minute per claim: condition 0's
    runs have 2, 3 and 1 claims, median 2.0 minutes over 3 runs."""
    true = {"drops the last": "d-1", "wrong key": "d-2", "None is not checked": "d-3"}

    def decide(packet, claim):
        hit = next((d for text, d in true.items() if text in claim["text"]), None)
        if hit is None:
            return {"class": "false_positive", "triage_s": 30}
        fields = {f: True for f in ("location", "consequence", "evidence", "safe_fix", "severity_fit")}
        if hit == "d-3":
            fields["safe_fix"] = False
        return {"class": "true_finding", "defect_id": hit, "fields": fields, "triage_s": 30}

    _label(rundir, tmp_path, decide)
    result = run_cli("score", rundir, "--json", "--bootstrap", "200", "--include-unvalidated")
    assert result.returncode == 0, result.stderr
    conditions = json.loads(result.stdout)["conditions"]
    labels = conditions["condalphasecret"]["labels"]
    rate = labels["actionability_rate"]
    assert (rate["numerator"], rate["denominator"]) == (2, 3)
    assert (rate["fields"]["safe_fix"]["numerator"], rate["fields"]["safe_fix"]["denominator"]) == (2, 3)
    assert (rate["fields"]["location"]["numerator"], rate["fields"]["location"]["denominator"]) == (3, 3)
    assert labels["triage_minutes"]["median"] == 2.0 and labels["triage_minutes"]["runs"] == 3
    other = conditions["condbetasecret"]["labels"]["actionability_rate"]
    assert other["denominator"] == 0 and other["value"] is None  # no true finding: not scored, never 0
    text = run_cli("score", rundir, "--bootstrap", "200", "--include-unvalidated", "--details").stdout
    flat = " ".join(text.split())
    # Each count says what it counts (issue 27, item 3): comments people called true findings, labelled runs.
    assert "labels: 2 of 3 comments people called true findings pass all five actionability questions" in flat
    assert "triage 2.0 rater-minutes per run, median over the 3 runs with labelled comments" in flat
