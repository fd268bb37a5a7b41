"""Judge calibration refuses a human-labelled subset that lacks a kind of claim, and shows
where the judge and people disagree (a loopback OpenAI-compatible judge, a real store)."""

from __future__ import annotations

import json

import pytest

from reviewbench.errors import UsageError
from reviewbench.label import LabelStore, import_labels
from reviewbench.label.composition import composition
from reviewbench.label.judge import calibrate

from ..conftest import run_cli
from .conftest import write_corpus, write_runs
from .test_judge import FINDINGS, _config, big_rundir, judge_server, planned  # noqa: F401 (fixtures)

VERBOSE = ("c1 22 the slice bound looks odd to me and I would suggest double checking the whole module for "
           "similar patterns, maybe rewriting it with a comprehension, adding type hints and a docstring while "
           "you are at it, since readers may stumble")  # fmt: skip
COMPOSED = {**FINDINGS, ("condbetasecret", "case-3"): ["c3 11 remark on a clean change", "c3 12 another remark"],
            ("condbetasecret", "case-1"): [*FINDINGS[("condbetasecret", "case-1")], VERBOSE, "c1 25 again the slice"]}


def people(text: str) -> dict:
    """planned(), and a repeated remark ("again") is a duplicate."""
    return {"class": "duplicate", "defect_id": None, "fields": {}} if "again" in text else planned(text)


@pytest.fixture
def composed(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), findings=COMPOSED)
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    rows = [{"comment_id": c.comment_id, "part": c.part, **people(c.text), "triage_s": 5} for c in claims
            if not c.text.startswith("c3 ") or c.text.startswith(("c3 11", "c3 12"))]  # fmt: skip
    path = tmp_path / "people.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_labels(rundir, path, rater="ann")
    import_labels(rundir, path, rater="bob")
    return rundir


def test_a_subset_without_every_kind_is_refused_before_the_judge_is_asked(big_rundir, judge_server, tmp_path):
    """big_rundir's labelled claims: cases 1 and 2 only (no clean case), no duplicate, every claim
    under 40 characters: no safe counterexample, no duplicate, no verbose invalid comment.
    By hand: true findings c1 {0,3,6,9,12,15,18} (7) + c2 even (8) = 15, all terse; false
    positives at the defect's line 2: c1 numbers 0-19 neither %3 nor %5 (11) + c2 odd not %5
    {1,3,7,9,11,13} (6) = 17 subtle ones."""
    url, handler = judge_server(biased=False)
    with LabelStore(big_rundir) as store, pytest.raises(UsageError) as refused:
        calibrate(store, _config(tmp_path, url, min_per_kind=1), resamples=100)
    message = str(refused.value)
    assert "too few safe counterexamples, duplicates, verbose invalid comments" in message
    assert "true findings 15, safe counterexamples 0, subtle false positives 17" in message
    assert handler.requests == []
    with LabelStore(big_rundir) as store:
        assert store.latest_calibration() is None
    (tmp_path / "j.toml").write_text((tmp_path / "j.toml").read_text().replace("min_per_kind = 0", "min_per_kind = 1"))
    proc = run_cli("judge", "calibrate", big_rundir, "--config", tmp_path / "j.toml")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "too few safe counterexamples" in proc.stderr


def test_a_composed_subset_is_calibrated_and_its_disagreements_are_shown(composed, judge_server, tmp_path):
    """Kinds by hand: true findings and terse valid 15 (as above); safe counterexamples: c3 11
    and c3 12 (2, clean case-3); subtle false positives: the 17 above + VERBOSE (c1 22, at line
    2) = 18; duplicate: c1 25 (1); verbose invalid: VERBOSE (1). The judge answers planned():
    for "c1 25 again" that is unclear (25 % 5 == 0), not duplicate: the one disagreement."""
    url, _ = judge_server(biased=False)
    with LabelStore(composed) as store:
        from reviewbench.evidence.resolve import final_labels

        finals = {k: row for k, (row, _) in final_labels(store).items()}
        kinds = composition(store.packets(), finals, min_per_kind=1, terse_chars=80, verbose_chars=200)
        result = calibrate(store, _config(tmp_path, url, min_per_kind=1), resamples=100)
    assert kinds.counts == {"true_finding": 15, "safe_counterexample": 2, "subtle_false_positive": 18,
                            "duplicate": 1, "terse_valid": 15, "verbose_invalid": 1}  # fmt: skip
    assert result["composition"]["missing"] == [] and result["composition"]["waived"] is False
    assert result["composition"]["counts"] == kinds.counts
    assert result["disagreement_count"] == 1
    (one,) = result["disagreements"]
    assert one["claim"] == "c1 25 again the slice"
    assert one["human"] == {"class": "duplicate", "defect_id": None}
    assert one["judge"] == {"class": "unclear", "defect_id": None}
    text = run_cli("judge", "calibrate", composed, "--config", tmp_path / "j.toml", "--bootstrap", "50").stdout
    assert "1 claims where the judge and people differ; the first 1:" in text
    assert "'c1 25 again the slice': people duplicate, judge unclear" in text
