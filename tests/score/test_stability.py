"""The stability rule ``recall_k_of_n`` and the per-case hit sequences, worked by hand.

Defect cases d0, d1 (fix reversals) and d2, d3 (mutations), each with its silent mirror, and
five silent controls; condition A, three repetitions, names the defect on:

    rep 0: d0 d1 d2      d0: 1 1 1   (3 of 3)
    rep 1: d0    d2      d1: 1 0 0   (1 of 3)
    rep 2: d0       d3   d2: 1 1 0   (2 of 3)
                         d3: 0 0 1   (1 of 3)
"""

from __future__ import annotations

import json

import pytest

from reviewbench.records import RunState
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.runs import RunStore

from ..conftest import run_cli
from .runsets import Reviewer, write_corpus, write_runs

FINDS = {0: {0, 1, 2}, 1: {0, 2}, 2: {0, 3}}


def _gates(path, k: int | None, value: float = 0.5):
    stability = f"\n[stability]\nk = {k}\n" if k is not None else ""
    path.write_text(f"""\
min_defect_cases = 1
min_controls = 1
max_interval_width = 1.0
{stability}
[[tier]]
name = "stable"
authority = "stable on mutations"
when = [{{ metric = "recall_k_of_n@mutation", op = ">=", value = {value} }}]
permitted = ["rely on it for mutations"]

[fallback]
name = "none"
authority = "none"
""")
    return path


@pytest.fixture
def rundir(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", defects=4, controls=5, mutations={2, 3})
    return write_runs(tmp_path / "runs", corpus, {"A": Reviewer(finds=FINDS)}, defects=4, controls=5, repeats=3)


def _score(rundir, gates=None):
    return score_run(rundir, ScoreOptions(bootstrap=300, gates=gates, overrides={}, labels={})).conditions["A"]


def _frac(m):
    return m.num, m.den


def test_recall_k_of_n_by_the_majority_and_by_a_registered_k(rundir, tmp_path):
    a = _score(rundir)
    assert _frac(a.metrics["recall_any"]) == (4, 4) and _frac(a.metrics["recall_all"]) == (1, 4)
    # A majority of 3 is 2: d0 and d2.
    k_of_n = a.metrics["recall_k_of_n"]
    assert _frac(k_of_n) == (2, 4) and k_of_n.lo is not None and k_of_n.lo <= 0.5 <= k_of_n.hi
    assert a.stability.k is None and a.stability.repetitions == 3
    assert a.stability.hits == {"d0": {"d0-1": "111"}, "d1": {"d1-1": "100"}, "d2": {"d2-1": "110"},
                                "d3": {"d3-1": "001"}}  # fmt: skip
    # Per stratum: fix reversals d0 (found), d1; mutations d2 (found), d3.
    cells = a.breakdown["stratum"]
    assert (cells["fix_reversal"]["recall_k_of_n"].num, cells["fix_reversal"]["recall_k_of_n"].den) == (1, 2)
    assert (cells["mutation"]["recall_k_of_n"].num, cells["mutation"]["recall_k_of_n"].den) == (1, 2)
    for k, expected in ((1, (4, 4)), (2, (2, 4)), (3, (1, 4))):
        scored = _score(rundir, _gates(tmp_path / f"k{k}.toml", k))
        assert _frac(scored.metrics["recall_k_of_n"]) == expected, k
        assert scored.stability.k == k and scored.stability.rule == f"at least {k} of n"


def test_recall_k_of_n_is_gateable_per_stratum(rundir, tmp_path):
    majority = _score(rundir, _gates(tmp_path / "majority.toml", None))
    [check] = majority.decision.gates["stable"]
    assert (check.metric, check.observed, check.passed) == ("recall_k_of_n@mutation", 0.5, True)
    assert (majority.decision.tier, majority.decision.status.value) == ("stable", "granted")
    strict = _score(rundir, _gates(tmp_path / "strict.toml", 3))  # d2 found twice, d3 once: neither 3 of 3
    assert strict.decision.gates["stable"][0].observed == 0.0
    assert (strict.decision.tier, strict.decision.status.value) == ("none", "not_earned")


def test_a_defect_with_fewer_repetitions_than_k_is_left_out_and_counted(rundir, tmp_path):
    store = RunStore(rundir / "runs.sqlite", create=True)
    for run in [r for r in store.runs() if r.case_id == "d3" and r.repetition in (0, 1)]:
        store.record(run.model_copy(update={"state": RunState.FAILED, "findings": [], "raw_output": None,
                                            "error": "boom"}), None)  # fmt: skip
    store.close()
    gates = _gates(tmp_path / "k2.toml", 2)
    a = _score(rundir, gates)
    # Completed runs: d3 counts one repetition (found), fewer than 2: out of the denominator.
    assert _frac(a.metrics["recall_k_of_n"]) == (2, 3)
    # End to end, its failed runs are misses: 0 0 1, not found in 2 of 3.
    assert _frac(a.end_to_end.metrics["recall_k_of_n"]) == (2, 4)
    # The block reads the gated (end-to-end) analysis: nothing short there, every repetition counted.
    assert a.stability.analysis == "end_to_end" and a.stability.too_few_repetitions == 0
    assert a.stability.hits["d3"] == {"d3-1": "001"}
    completed = score_run(rundir, ScoreOptions(bootstrap=300, gates=_write_completed(tmp_path, gates),
                                               overrides={}, labels={})).conditions["A"]  # fmt: skip
    assert completed.stability.too_few_repetitions == 1 and completed.stability.hits["d3"] == {"d3-1": "--1"}
    out = run_cli("score", rundir, "--json", "--bootstrap", "300", "--gates", gates)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["conditions"]["A"]
    assert data["stability"]["hits"]["d1"] == {"d1-1": "100"} and data["metrics"]["recall_k_of_n"]["den"] == 3
    text = run_cli("score", rundir, "--details", "--bootstrap", "300", "--gates", gates)
    assert "stability: recall_k_of_n counts a defect identified in at least 2 of n repetitions" in " ".join(
        text.stdout.split())  # fmt: skip


def _write_completed(tmp_path, gates):
    path = tmp_path / "completed.toml"
    path.write_text('analysis = "completed"\n' + gates.read_text())
    return path


def test_a_stability_k_below_one_is_refused(rundir, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(_gates(tmp_path / "g.toml", 2).read_text().replace("k = 2", "k = 0"))
    out = run_cli("score", rundir, "--gates", bad)
    assert out.returncode == 2 and "stability" in out.stderr and "Traceback" not in out.stderr
