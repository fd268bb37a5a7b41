"""Model drift inside one run: each returned model id's runs scored apart, by hand."""

from __future__ import annotations

import subprocess
import sys

from reviewbench.score import ScoreOptions, score_run

from .runsets import Reviewer, write_corpus, write_runs


def test_a_mid_run_routing_change_shows_in_the_numbers(tmp_path):
    # d0..d5 (and their mirrors) and k0..k5 answered by m-0301, which names every defect and
    # flags nothing; d6..d11 and k6..k9 by m-0601, which names nothing and flags k6 and k8.
    corpus = write_corpus(tmp_path / "corpus", 12, 10)
    reviewer = Reviewer(finds=set(range(6)), flags={6, 8}, model="m-0301", switch=(6, "m-0601"))
    rundir = write_runs(tmp_path / "runs", corpus, {"R": reviewer}, 12, 10)
    drift = score_run(rundir, ScoreOptions()).as_json()["conditions"]["R"]["model_drift"]
    assert drift["returned"] == ["m-0301", "m-0601"]
    early, late = drift["by_model"]["m-0301"], drift["by_model"]["m-0601"]
    # Runs: 6 defect cases + their 6 mirrors, and 6 controls early, 4 late.
    assert (early["runs"], early["cases"], late["runs"], late["cases"]) == (18, 18, 16, 16)
    assert {k: early["metrics"]["defect_recall"][k] for k in ("num", "den", "value", "lo", "hi")} == {
        "num": 6, "den": 6, "value": 1.0, "lo": round(0.025 ** (1 / 6), 6), "hi": 1.0}  # exact: 6 of 6 cases  # fmt: skip
    assert (late["metrics"]["defect_recall"]["num"], late["metrics"]["defect_recall"]["den"]) == (0, 6)
    # Clean runs: m-0601's 6 mirrors and 4 controls; it flagged 2 of those 10.
    fa = late["metrics"]["false_alarm_rate"]
    assert (fa["num"], fa["den"], fa["value"]) == (2, 10, 0.2)
    assert 0 <= fa["lo"] < fa["value"] < fa["hi"]
    text = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir), "--details"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    assert "answered by m-0301 (18 runs, 18 cases): defect_recall 6/6 = 1.000 [0.541, 1.000] exact" in text
    assert "answered by m-0601 (16 runs, 16 cases): defect_recall 0/6 = 0.000 [0.000, 0.459] exact" in text


def test_one_model_throughout_has_no_per_model_split(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 4, 2)
    rundir = write_runs(tmp_path / "runs", corpus, {"R": Reviewer(finds={0})}, 4, 2)
    assert score_run(rundir, ScoreOptions()).as_json()["conditions"]["R"]["model_drift"] is None
