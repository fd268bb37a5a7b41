"""A calibration baseline (silent, flag_all, a probe) earns no tier even when its numbers pass.

The store is test_score's (its fix reversals mirrored, A silent on the mirrors, so that
A's namings identify): condition A's figures pass a second-pass gate at 0.4 (granted
for a command reviewer) and straddle one at 0.6 (needs labels); here A is declared, in the
registered experiment, as each reviewer kind in turn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.runs import RunStore

from .test_score import CASE_IDS, RUNS_A, _gates, _row, corpus  # noqa: F401  (corpus: a fixture)

PROBE = {"kind": "probe", "probe": "namer"}


def _rundir(tmp_path: Path, corpus: Path, reviewer: dict) -> Path:  # noqa: F811
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / f"runs-{reviewer['kind']}"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    experiment = {"condition": [{"name": "A", "reviewer": reviewer}, {"name": "B", "reviewer": {"kind": "silent"}}]}
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha, "experiment": json.dumps(experiment)})
    for (case_id, rep), (state, findings, raw) in RUNS_A.items():
        store.record(_row("A", case_id, rep, state, findings, raw, gold_sha), None)
    for case_id in CASE_IDS:
        for rep in (0, 1):
            store.record(_row("B", case_id, rep, "completed_no_findings", [], "NO_ISSUES", gold_sha), None)
    store.close()
    return out


def _decision(rundir: Path, gates: Path) -> dict:
    return score_run(rundir, ScoreOptions(bootstrap=200, gates=gates)).as_json()["conditions"]["A"]["decision"]


def test_the_same_numbers_earn_a_tier_for_a_reviewer(tmp_path, corpus):  # noqa: F811
    gates = tmp_path / "gates.toml"
    gates.write_text(_gates(0.4))
    decision = _decision(_rundir(tmp_path, corpus, {"kind": "command", "command": "true"}), gates)
    assert (decision["status"], decision["tier"]) == ("granted", "second_pass")


@pytest.mark.parametrize("reviewer", [PROBE, {"kind": "probe", "probe": "shape"}, {"kind": "flag_all"}],
                         ids=["namer", "shape", "flag_all"])  # fmt: skip
def test_a_calibration_baseline_earns_no_tier_even_when_its_gates_pass(tmp_path, corpus, reviewer):  # noqa: F811
    gates = tmp_path / "gates.toml"
    gates.write_text(_gates(0.4))
    decision = _decision(_rundir(tmp_path, corpus, reviewer), gates)
    assert (decision["status"], decision["tier"], decision["authority"]) == ("not_earned", "none", "none")
    assert decision["reason"] == f"a calibration baseline ({reviewer['kind']}) never earns a tier " \
                                 "(its gates alone: granted second_pass)"  # fmt: skip
    assert all(c["passed"] for c in decision["gates"]["second_pass"])  # the numbers did pass
    assert decision["permitted"] == ["opinion"]
    assert decision["not_permitted"] == ["gating", "attention list", "merge rights"]  # as silent's


def test_a_probe_that_would_need_labels_needs_none(tmp_path, corpus):  # noqa: F811
    gates = tmp_path / "gates.toml"
    gates.write_text(_gates(0.6))  # A's recall: 0.5 identified < 0.6 < 0.75 located
    decision = _decision(_rundir(tmp_path, corpus, PROBE), gates)
    assert (decision["status"], decision["labels_needed"]) == ("not_earned", 0)
    assert decision["reason"].endswith("(its gates alone: needs labels)")


def test_a_veto_on_a_probe_stands(tmp_path, corpus):  # noqa: F811
    gates = tmp_path / "gates.toml"
    # A's flag coverage is 2/11 (test_score): above 0.15.
    gates.write_text(_gates(0.4, "[[veto]]\nname = \"noisy\"\nwhen = [{ metric = \"flag_coverage\", op = \">\", "
                     "value = 0.15 }]\nauthority = \"nothing until the prompt is tightened\"\n"))  # fmt: skip
    decision = _decision(_rundir(tmp_path, corpus, PROBE), gates)
    assert (decision["status"], decision["tier"]) == ("vetoed", "noisy")
